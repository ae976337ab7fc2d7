//! Named cases of a hostile upstream (docs/SPEC.md, "The hostile upstream"): the values a
//! compromised gateway or a malicious compatible server puts where a client keys, indexes or
//! merges: `__proto__`, `constructor`, `toString` and `prototype` as ids, tool names and
//! argument keys; ids with control characters; an id of 1 MiB; and indices no index can be
//! (`"__proto__"`, `-1`, `0.5`, `"0"`, `true`).
//!
//! Where it sits: beside `named.rs`, whose list it ends (so the other cases keep their
//! positions). They run in the hostile server profiles only (`is_hostile`), whose renderer
//! adds `__proto__` and `constructor` members to every event as well. Their values are
//! the model's: a hostile id or name is one a correct client hands over as written, and only
//! the indices are faults (`malformed`).

use toolcert_scenario::{Block, Ending, HostileIndex, StopReason, Turn};

use crate::named::{call, named, per_call, text, NamedCase};

const KEYING: &str = "000 Keying the argument accumulator";

/// The prefix of the hostile cases' ids.
pub const PREFIX: &str = "hostile/";

fn two_calls() -> Vec<Block> {
    vec![
        text(&["Looking both up."]),
        call(0, "toolu_h1", "lookup_order", &[r#"{"order_id": "#, r#""A-4471"}"#]),
        call(1, "toolu_h2", "lookup_order", &[r#"{"order_id": "#, r#""B-1200"}"#]),
    ]
}

/// Two calls with a hostile index's event once the first call's start and first fragment
/// are complete (its text piece, its start and its fragment: three neutral events).
fn hostile_index(value: &str) -> Turn {
    let mut t = per_call(two_calls(), Ending::Stop(StopReason::ToolUse));
    t.wire.hostile_index = Some(HostileIndex { after: 3, value: value.into() });
    t
}

pub(crate) fn cases() -> Vec<NamedCase> {
    let tool_use = Ending::Stop(StopReason::ToolUse);
    let mut cases = vec![
        named(
            "hostile/prototype-names",
            KEYING,
            "`__proto__`, `constructor`, `toString` and `prototype` as call ids, tool names and argument keys: two calls, dispatched exactly as written (a client that keys a plain object with them writes into a prototype)",
            false,
            per_call(
                vec![
                    call(
                        0,
                        "__proto__",
                        "__proto__",
                        &[r#"{"__proto__": {"polluted": true}, "#, r#""constructor": {"prototype": {"polluted": true}}}"#],
                    ),
                    call(1, "constructor", "toString", &[r#"{"toString": "x", "prototype": 1, "#, r#""hasOwnProperty": false}"#]),
                ],
                tool_use.clone(),
            ),
        ),
        named(
            "hostile/control-characters",
            KEYING,
            "a call id and a tool name with control characters (NUL, ESC, BEL, CR, LF, DEL) and arguments that hold them escaped: dispatched exactly as written",
            false,
            per_call(
                vec![call(
                    0,
                    "call_\u{0}\u{1b}[2J\r\n\u{7f}",
                    "lookup\u{7}_order",
                    &[r#"{"order_id": "A-\u0000\u001b[31m"#, r#"4471\r\n"}"#],
                )],
                tool_use.clone(),
            ),
        ),
        named(
            "hostile/id-of-one-mebibyte",
            KEYING,
            "a call whose id is 1 MiB long: dispatched under that id, or the turn refused cleanly past a documented cap",
            false,
            per_call(
                vec![call(0, &format!("call_{}", "A".repeat(1 << 20)), "lookup_order", &[r#"{"order_id": "A-4471"}"#])],
                tool_use,
            ),
        ),
    ];
    for (id, value, about) in [
        ("hostile/index-proto", r#""__proto__""#, concat!("Chat, Anthropic and Responses: after the first call's first fragment, a copy of it whose index is `\"__proto__\"`", ": the turn fails as malformed, nothing is dispatched, and no prototype gains a property")),
        ("hostile/index-negative", "-1", concat!("Chat, Anthropic and Responses: after the first call's first fragment, a copy of it whose index is `-1`", ": the turn fails as malformed, nothing is dispatched, and no prototype gains a property")),
        ("hostile/index-fraction", "0.5", concat!("Chat, Anthropic and Responses: after the first call's first fragment, a copy of it whose index is `0.5`", ": the turn fails as malformed, nothing is dispatched, and no prototype gains a property")),
        ("hostile/index-string", r#""0""#, concat!("Chat, Anthropic and Responses: after the first call's first fragment, a copy of it whose index is the string `\"0\"`", ": the turn fails as malformed, nothing is dispatched, and no prototype gains a property")),
        ("hostile/index-true", "true", concat!("Chat, Anthropic and Responses: after the first call's first fragment, a copy of it whose index is `true`", ": the turn fails as malformed, nothing is dispatched, and no prototype gains a property")),
    ] {
        cases.push(named(id, KEYING, about, false, hostile_index(value)));
    }
    cases
}
