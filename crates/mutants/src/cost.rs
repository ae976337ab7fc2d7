//! Cost mutants: accumulators whose outcomes are right and whose cost is not. `certify`
//! cannot catch them (every verdict is true); `toolcert bench` must flag each superlinear,
//! and `toolcert zoo` checks that it does. Each is the [`Base`](crate::Base) accumulator with
//! one [`Hooks::append`] that does more work per fragment than appending.

use crate::base::{Correct, Hooks};
use toolcert_subject::Emit;

/// `rebuilt-buffer`: `buf = buf + fragment` as a new string, the whole buffer copied on
/// every fragment (quadratic in the call's size over the fragment size).
#[derive(Default)]
pub struct RebuiltBuffer;

impl Hooks for RebuiltBuffer {
    fn append(&self, args: &mut String, fragment: &str, _out: &mut Emit) {
        *args = format!("{args}{fragment}");
    }
}

/// `reparse-every-fragment`: after each fragment the whole buffer is parsed to see whether
/// it is complete yet (the partial-JSON previews several SDKs compute on every delta): the
/// result is right, and the cost quadratic.
#[derive(Default)]
pub struct ReparseEveryFragment;

impl Hooks for ReparseEveryFragment {
    fn append(&self, args: &mut String, fragment: &str, out: &mut Emit) {
        Correct.append(args, fragment, out);
        let _complete = serde_json::from_str::<serde::de::IgnoredAny>(args).is_ok();
    }
}

/// `kept-fragments`: every fragment is also kept as a string of its own until the call ends
/// (a list joined at the finish, with no cap): the outcomes are right and the time linear,
/// and a million one-byte fragments hold tens of megabytes for a megabyte of arguments. A
/// bounded mutant: `toolcert bench --bounded` must call the rule broken.
#[derive(Default)]
pub struct KeptFragments {
    kept: std::cell::RefCell<Vec<String>>,
}

impl Hooks for KeptFragments {
    fn append(&self, args: &mut String, fragment: &str, out: &mut Emit) {
        Correct.append(args, fragment, out);
        self.kept.borrow_mut().push(fragment.to_owned());
    }
}
