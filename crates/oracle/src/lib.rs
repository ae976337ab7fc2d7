//! The oracle: expected observation from the scenario, compared with what the subject did.
//!
//! The fourth stage of the data flow. [`expect`] derives, from a scenario and the origins of
//! the events delivered, what a correct accumulator reports; [`judge_case`] compares each
//! stream's [`Observation`] with it and returns [`Violation`]s, each naming one
//! [`Invariant`], its [`Grade`], the call, what was expected and what was observed.
//!
//! **Architecture invariant:** the oracle never consults the reference accumulator, or any
//! accumulator: expectations come from the scenario's own bytes, parsed strictly once.

use serde::{Deserialize, Serialize};
use serde_json::Value;
use toolcert_render::Rendered;
use toolcert_scenario::{Case, EndingKind};
use toolcert_subject::{FailReason, Observation, Outcome, Stamp, Timed};

pub mod corpus;
mod expect;
mod invariant;

pub use expect::{
    expect, judge, parse_document, Expect, Expected, ExpectedCall, FaultExpect, Judged, Profile, MAX_DEPTH,
};
pub use invariant::{Grade, Invariant};

/// One broken rule in one stream of a case.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Violation {
    pub invariant: Invariant,
    pub grade: Grade,
    /// The stream of the case (0 for single-stream cases).
    pub stream: u32,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub call_id: Option<String>,
    pub expected: String,
    pub observed: String,
}

impl std::fmt::Display for Violation {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{} ({})", self.invariant, self.grade.as_str())?;
        if let Some(id) = &self.call_id {
            write!(f, " call {id}")?;
        }
        write!(f, "\n    expected: {}\n    observed: {}", self.expected, self.observed)
    }
}

/// Judges every stream of a case. `rendered[s]` and `observed[s]` belong to `case.streams[s]`.
pub fn judge_case(
    case: &Case,
    rendered: &[Rendered<'_>],
    observed: &[Observation],
    profile: Profile,
) -> Vec<Violation> {
    let expected: Vec<Expected> =
        case.streams.iter().zip(rendered).map(|(t, r)| expect(t, r, profile)).collect();
    let mut out = Vec::new();
    for (s, (exp, obs)) in expected.iter().zip(observed).enumerate() {
        let others: Vec<&Expected> =
            expected.iter().enumerate().filter(|(o, _)| *o != s).map(|(_, e)| e).collect();
        Judge { stream: s as u32, exp, obs, others: &others, out: &mut out }.run();
    }
    out
}

/// Judges one stream alone.
pub fn judge_stream(exp: &Expected, obs: &Observation) -> Vec<Violation> {
    let mut out = Vec::new();
    Judge { stream: 0, exp, obs, others: &[], out: &mut out }.run();
    out
}

struct Judge<'a> {
    stream: u32,
    exp: &'a Expected,
    obs: &'a Observation,
    /// The other streams of the case, to recognise data that leaked across streams.
    others: &'a [&'a Expected],
    out: &'a mut Vec<Violation>,
}

fn show_outcome(o: &Outcome) -> String {
    match o {
        Outcome::Dispatchable { args, .. } => format!("dispatchable {args}"),
        Outcome::SchemaError { args, .. } => format!("schema_error {args}"),
        Outcome::Failed { reason, raw, .. } => format!("failed({}) raw {}", reason.as_str(), quote(raw)),
    }
}

fn show_expect(e: &Expect, raw: &str) -> String {
    let judged = |j: &Judged| match j {
        Judged::Dispatch { args } => format!("dispatchable {args}"),
        Judged::SchemaError { args } => format!("schema_error {args}"),
        Judged::Unparseable => format!("failed(unparseable) raw {}", quote(raw)),
    };
    match e {
        Expect::Finished { judged: j } => judged(j),
        Expect::Failed { reason } => format!("failed({}) raw {}", reason.as_str(), quote(raw)),
        Expect::FinishedOrAbandoned { judged: j } => {
            format!("{} or failed(abandoned) raw {}", judged(j), quote(raw))
        }
        Expect::Faulted { may_dispatch: Some(a) } => format!("no dispatch but possibly {a}"),
        Expect::Faulted { may_dispatch: None } => "no dispatch".into(),
    }
}

/// A string shown as a JSON string literal, shortened past 200 bytes.
pub fn quote(s: &str) -> String {
    let q = Value::String(s.to_string()).to_string();
    if q.len() <= 200 {
        return q;
    }
    let mut cut = 180;
    while !q.is_char_boundary(cut) {
        cut -= 1;
    }
    format!("{}…({} bytes)", &q[..cut], s.len())
}

impl Judge<'_> {
    fn flag(
        &mut self,
        invariant: Invariant,
        grade: Grade,
        call: Option<&str>,
        expected: String,
        observed: String,
    ) {
        self.out.push(Violation {
            invariant,
            grade,
            stream: self.stream,
            call_id: call.map(str::to_string),
            expected,
            observed,
        });
    }

    fn run(&mut self) {
        if let Some(crash) = &self.obs.crash {
            self.flag(
                Invariant::SubjectCrash,
                Grade::Must,
                None,
                "no crash".into(),
                format!("the subject crashed: {crash}"),
            );
            return;
        }
        let error_ok = self.turn_error();
        // A turn failed for no good reason has no per-call outcomes to judge further.
        if error_ok.is_some_and(|ok| !ok) {
            self.text();
            return;
        }
        let turn_failed = error_ok.is_some();
        for call in &self.exp.calls {
            let mine: Vec<&Timed<Outcome>> = self
                .obs
                .outcomes
                .iter()
                .filter(|o| o.value.call_id() == Some(call.call_id.as_str()))
                .collect();
            self.call(call, &mine, turn_failed);
        }
        self.unmatched();
        self.text();
    }

    /// Judges the turn error. `None`: no error observed; `Some(true)`: an acceptable one;
    /// `Some(false)`: one that should not have been raised (already flagged).
    fn turn_error(&mut self) -> Option<bool> {
        let observed = self.obs.error.as_ref().map(|e| &e.value);
        match (self.exp.fault, observed) {
            (Some(f), None) => {
                self.flag(
                    Invariant::AccProtocol,
                    Grade::Must,
                    None,
                    match f.also {
                        Some(also) => format!("a protocol error ({} or {also})", f.class),
                        None => format!("a protocol error ({})", f.class),
                    },
                    "no error: the faulty stream was accepted".into(),
                );
                None
            }
            (Some(f), Some(e)) => {
                if !f.accepts(e.class) {
                    let also = f.also.map(|a| format!(" or {a}")).unwrap_or_default();
                    self.flag(
                        Invariant::AccProtocol,
                        Grade::Should,
                        None,
                        format!("a protocol error of class {}{also}", f.class),
                        format!("an error of class {}: {}", e.class, e.detail),
                    );
                }
                Some(true)
            }
            (None, None) => None,
            (None, Some(e)) if self.exp.ending != EndingKind::Complete && !e.class.is_protocol() => {
                Some(true)
            }
            (None, Some(e)) => {
                self.flag(
                    Invariant::AccProtocol,
                    Grade::Must,
                    None,
                    format!("no error: the stream is well formed and {}", ending_name(self.exp.ending)),
                    format!("the turn failed with {}: {}", e.class, e.detail),
                );
                Some(false)
            }
        }
    }

    fn call(&mut self, call: &ExpectedCall, mine: &[&Timed<Outcome>], turn_failed: bool) {
        let id = Some(call.call_id.as_str());
        let Some(first) = mine.first() else {
            self.missing(call, turn_failed);
            return;
        };
        if mine.len() > 1 {
            let all: Vec<String> = mine.iter().map(|o| show_outcome(&o.value)).collect();
            self.flag(
                Invariant::AccAccount,
                Grade::Must,
                id,
                "exactly one outcome".into(),
                format!("{} outcomes: {}", mine.len(), all.join("; ")),
            );
        }
        let o = &first.value;
        if o.name() != Some(call.name.as_str()) && !matches!(o, Outcome::Failed { name: None, .. }) {
            self.flag(
                Invariant::AccIdentity,
                Grade::Must,
                id,
                format!("name {}", call.name),
                format!("name {}", o.name().unwrap_or("(none)")),
            );
        }
        let dispatch_like = matches!(o, Outcome::Dispatchable { .. } | Outcome::SchemaError { .. });
        // A dispatch at finish of a call that never finished is judged below as abandonment.
        let early = match call.terminal_at {
            Some(t) => early(first.at, t),
            None => !first.at.at_finish,
        };
        if dispatch_like && early {
            let when = match call.terminal_at {
                Some(t) => format!("its terminal event (event {t})"),
                None => "its terminal event, which never arrived".into(),
            };
            self.flag(
                Invariant::AccCompletion,
                Grade::Must,
                id,
                format!("no outcome before {when}"),
                format!("{} after {} events", show_outcome(o), first.at.delivered),
            );
            return;
        }
        self.against(call, &call.expect, o);
    }

    /// Compares one outcome with what the call should have given.
    fn against(&mut self, call: &ExpectedCall, expect: &Expect, o: &Outcome) {
        let id = Some(call.call_id.as_str());
        let expected = || show_expect(expect, &call.raw);
        // Formatted only for a violation: most outcomes are right.
        let observed = || show_outcome(o);
        let (must, should) = (Grade::Must, Grade::Should);
        match (expect, o) {
            (Expect::Faulted { may_dispatch }, Outcome::Dispatchable { args, .. }) => match may_dispatch {
                Some(a) if a == args => {}
                Some(_) => self.mismatch(call, MismatchOf::Args(args), must),
                None => self.flag(Invariant::AccProtocol, must, id, expected(), observed()),
            },
            (Expect::Faulted { .. }, _) => {}
            (
                Expect::FinishedOrAbandoned { .. },
                Outcome::Failed { reason: FailReason::Abandoned, raw, .. },
            ) => {
                self.raw(call, raw);
            }
            (Expect::FinishedOrAbandoned { judged }, _) => {
                self.against(call, &Expect::Finished { judged: judged.clone() }, o);
            }
            (Expect::Finished { judged }, _) => self.finished(call, judged, o),
            (Expect::Failed { reason }, Outcome::Dispatchable { .. } | Outcome::SchemaError { .. }) => {
                let inv = match reason {
                    FailReason::Truncated => Invariant::AccTruncation,
                    FailReason::Abandoned => Invariant::AccAbandon,
                    FailReason::Unparseable => Invariant::AccStrict,
                };
                self.flag(inv, must, id, expected(), observed());
            }
            (Expect::Failed { reason }, Outcome::Failed { reason: got, raw, .. }) => {
                if got != reason {
                    // Calling a finished call abandoned (or a complete turn truncated) is a
                    // mistake about the ending; otherwise the expected reason's rule was missed.
                    let inv = match (got, reason) {
                        (FailReason::Abandoned, _) => Invariant::AccAbandon,
                        (FailReason::Truncated, _) => Invariant::AccTruncation,
                        (_, FailReason::Truncated) => Invariant::AccTruncation,
                        (_, FailReason::Abandoned) => Invariant::AccAbandon,
                        (_, FailReason::Unparseable) => Invariant::AccStrict,
                    };
                    self.flag(inv, should, id, expected(), observed());
                }
                self.raw(call, raw);
            }
        }
    }

    fn finished(&mut self, call: &ExpectedCall, judged: &Judged, o: &Outcome) {
        let id = Some(call.call_id.as_str());
        let expected = || show_expect(&Expect::Finished { judged: judged.clone() }, &call.raw);
        // Formatted only for a violation: most outcomes are right.
        let observed = || show_outcome(o);
        let (must, should) = (Grade::Must, Grade::Should);
        match (judged, o) {
            (Judged::Dispatch { args: want }, Outcome::Dispatchable { args, .. })
            | (Judged::SchemaError { args: want }, Outcome::SchemaError { args, .. }) => {
                if want != args {
                    self.mismatch(call, MismatchOf::Args(args), must);
                }
            }
            (Judged::Dispatch { args: want }, Outcome::SchemaError { args, .. })
            | (Judged::SchemaError { args: want }, Outcome::Dispatchable { args, .. }) => {
                if want == args {
                    self.flag(Invariant::AccSchema, must, id, expected(), observed());
                } else {
                    self.mismatch(call, MismatchOf::Args(args), must);
                }
            }
            (Judged::Dispatch { .. }, Outcome::Failed { reason, raw, .. }) => {
                if *raw != call.raw {
                    self.mismatch(call, MismatchOf::Raw(raw), must);
                } else {
                    let inv = match reason {
                        FailReason::Truncated => Invariant::AccTruncation,
                        FailReason::Abandoned => Invariant::AccAbandon,
                        // The buffer is right and parses: the subject's parser is wrong.
                        FailReason::Unparseable => Invariant::AccFidelity,
                    };
                    self.flag(inv, must, id, expected(), observed());
                }
            }
            (Judged::SchemaError { .. }, Outcome::Failed { reason, raw, .. }) => {
                if *raw != call.raw {
                    self.mismatch(call, MismatchOf::Raw(raw), should);
                } else {
                    let inv = match reason {
                        FailReason::Truncated => Invariant::AccTruncation,
                        FailReason::Abandoned => Invariant::AccAbandon,
                        // The buffer is right and parses: the subject's parser is wrong.
                        FailReason::Unparseable => Invariant::AccFidelity,
                    };
                    self.flag(inv, should, id, expected(), observed());
                }
            }
            (Judged::Unparseable, Outcome::Dispatchable { .. } | Outcome::SchemaError { .. }) => {
                self.flag(Invariant::AccStrict, must, id, expected(), observed());
            }
            (Judged::Unparseable, Outcome::Failed { reason, raw, .. }) => {
                if *reason != FailReason::Unparseable {
                    self.flag(Invariant::AccStrict, should, id, expected(), observed());
                }
                self.raw(call, raw);
            }
        }
    }

    /// A failure's raw buffer must be the buffer as received.
    fn raw(&mut self, call: &ExpectedCall, raw: &str) {
        if raw != call.raw {
            self.mismatch(call, MismatchOf::Raw(raw), Grade::Should);
        }
    }

    /// Arguments or a buffer that differ from the model's: names the likeliest cause.
    fn mismatch(&mut self, call: &ExpectedCall, got: MismatchOf<'_>, grade: Grade) {
        let id = Some(call.call_id.as_str());
        let (expected, observed) = match got {
            MismatchOf::Args(a) => (show_expect(&call.expect, &call.raw), format!("args {a}")),
            MismatchOf::Raw(r) => (format!("raw {}", quote(&call.raw)), format!("raw {}", quote(r))),
        };
        // Another call's data in this call's outcome, when that call did not get it itself.
        let served = |c: &ExpectedCall, obs: &Observation| {
            obs.outcomes.iter().any(|o| match (&o.value, &c.expect) {
                (
                    Outcome::Dispatchable { call_id, args, .. },
                    Expect::Finished { judged: Judged::Dispatch { args: want } },
                ) => *call_id == c.call_id && args == want,
                _ => false,
            })
        };
        let same_stream = self
            .exp
            .calls
            .iter()
            .any(|c| c.block != call.block && got.carries(call, c) && !served(c, self.obs));
        let foreign_stream = self.others.iter().any(|e| e.calls.iter().any(|c| got.carries(call, c)));
        let invariant = if same_stream {
            Invariant::AccIdentity
        } else if foreign_stream {
            Invariant::AccIsolation
        } else if got.reorders(call) {
            Invariant::AccOrder
        } else {
            Invariant::AccFidelity
        };
        self.flag(invariant, grade, id, expected, observed);
    }

    /// A call with no outcome.
    fn missing(&mut self, call: &ExpectedCall, turn_failed: bool) {
        let id = Some(call.call_id.as_str());
        let expected = show_expect(&call.expect, &call.raw);
        let observed = if turn_failed {
            "no outcome (the turn failed as a whole)".to_string()
        } else {
            "no outcome".to_string()
        };
        let (inv, grade) = match &call.expect {
            Expect::Faulted { .. } => return,
            Expect::Finished { judged: Judged::Dispatch { .. } | Judged::SchemaError { .. } } => {
                (Invariant::AccAccount, Grade::Must)
            }
            Expect::Finished { judged: Judged::Unparseable } => (Invariant::AccAccount, Grade::Should),
            Expect::Failed { reason: FailReason::Truncated } => (Invariant::AccTruncation, Grade::Should),
            Expect::Failed { reason: FailReason::Unparseable } => (Invariant::AccAccount, Grade::Should),
            Expect::Failed { reason: FailReason::Abandoned } | Expect::FinishedOrAbandoned { .. } => {
                (Invariant::AccAbandon, Grade::Should)
            }
        };
        self.flag(inv, grade, id, expected, observed.clone());
        // A call that vanished while a call to the same tool got an outcome was most likely
        // folded into it: same-tool calls did not stay separate.
        let namesake = self.exp.calls.iter().find(|c| {
            c.block != call.block
                && c.name == call.name
                && self.obs.outcomes.iter().any(|o| o.value.call_id() == Some(c.call_id.as_str()))
        });
        if let Some(other) = namesake {
            self.flag(
                Invariant::AccIdentity,
                grade,
                id,
                format!("an outcome of its own, apart from {} (the same tool)", other.call_id),
                observed,
            );
        }
    }

    /// Outcomes for calls that were never announced in this stream.
    fn unmatched(&mut self) {
        for o in &self.obs.outcomes {
            let id = o.value.call_id();
            if id.is_some_and(|id| self.exp.calls.iter().any(|c| c.call_id == id)) {
                continue;
            }
            let from_other_stream =
                id.is_some_and(|id| self.others.iter().any(|e| e.calls.iter().any(|c| c.call_id == id)));
            // An id that embeds an announced one, or the arguments of an announced call under
            // another id: the identity was mangled, not a call made up.
            let mangled = self.exp.calls.iter().any(|c| {
                id.is_some_and(|id| id.contains(c.call_id.as_str()))
                    || matches!(&o.value, Outcome::Dispatchable { args, .. } if MismatchOf::Args(args).carries(c, c))
            });
            let inv = if from_other_stream {
                Invariant::AccIsolation
            } else if mangled {
                Invariant::AccIdentity
            } else {
                Invariant::AccAccount
            };
            let dispatch = matches!(o.value, Outcome::Dispatchable { .. });
            // A fault's phantom call may be failed, never run.
            if self.exp.fault.is_some() && !dispatch {
                continue;
            }
            self.flag(
                inv,
                if dispatch { Grade::Must } else { Grade::Should },
                id,
                "no outcome for a call this stream never announced".into(),
                format!("{} for call {}", show_outcome(&o.value), id.unwrap_or("(no id)")),
            );
        }
    }

    fn text(&mut self) {
        // A subject that failed the turn saw the text up to the unit that failed it, which may
        // have carried several events; one that did not was fed everything.
        let (lo, hi) = match &self.obs.error {
            Some(e) => (self.exp.text_upto(e.at.before), self.exp.text_upto(e.at.delivered)),
            None => {
                let all = self.exp.text();
                (all.clone(), all)
            }
        };
        let got = &self.obs.text;
        let want = hi;
        if !(got.starts_with(lo.as_str()) && want.starts_with(got.as_str())) {
            let leaked = self
                .exp
                .calls
                .iter()
                .flat_map(|c| &c.fragments)
                .any(|f| f.len() >= 2 && got.contains(f.as_str()) && !want.contains(f.as_str()));
            let what = if leaked { "argument bytes in the text: " } else { "" };
            self.flag(
                Invariant::AccText,
                Grade::Must,
                None,
                format!("text {}", quote(&want)),
                format!("{what}text {}", quote(got)),
            );
            return;
        }
        if let (Some(want), Some(got), None) = (&self.exp.layout, &self.obs.layout, &self.obs.error) {
            if !same_layout(want, got) {
                self.flag(
                    Invariant::AccText,
                    Grade::Should,
                    None,
                    format!("blocks in order {}", show_layout(want)),
                    format!("blocks in order {}", show_layout(got)),
                );
            }
        }
    }
}

fn ending_name(e: EndingKind) -> &'static str {
    match e {
        EndingKind::Complete => "complete",
        EndingKind::Truncated => "truncated",
        EndingKind::Abandoned => "abandoned",
        EndingKind::Errored => "errored",
    }
}

fn early(at: Stamp, terminal_at: u32) -> bool {
    !at.at_finish && at.delivered < terminal_at
}

/// Layouts compared with adjacent text runs merged and empty runs dropped.
fn same_layout(a: &[toolcert_subject::Slot], b: &[toolcert_subject::Slot]) -> bool {
    normal_layout(a) == normal_layout(b)
}

fn normal_layout(slots: &[toolcert_subject::Slot]) -> Vec<toolcert_subject::Slot> {
    use toolcert_subject::Slot;
    let mut out: Vec<Slot> = Vec::new();
    for s in slots {
        match (out.last_mut(), s) {
            (_, Slot::Text { text }) if text.is_empty() => {}
            (Some(Slot::Text { text: run }), Slot::Text { text }) => run.push_str(text),
            _ => out.push(s.clone()),
        }
    }
    out
}

fn show_layout(slots: &[toolcert_subject::Slot]) -> String {
    use toolcert_subject::Slot;
    let parts: Vec<String> = normal_layout(slots)
        .iter()
        .map(|s| match s {
            Slot::Text { text } => format!("text {}", quote(text)),
            Slot::Call { call_id } => format!("call {call_id}"),
        })
        .collect();
    format!("[{}]", parts.join(", "))
}

/// What differed: dispatched arguments, or a failure's raw buffer.
enum MismatchOf<'a> {
    Args(&'a Value),
    Raw(&'a str),
}

impl MismatchOf<'_> {
    /// Carries data of `other` that the call `own` does not: its arguments, or a delivered
    /// piece of its buffer.
    fn carries(&self, own: &ExpectedCall, other: &ExpectedCall) -> bool {
        match self {
            MismatchOf::Args(a) => match &other.expect {
                Expect::Finished { judged: Judged::Dispatch { args } | Judged::SchemaError { args } }
                | Expect::FinishedOrAbandoned {
                    judged: Judged::Dispatch { args } | Judged::SchemaError { args },
                } => args == *a,
                Expect::Faulted { may_dispatch: Some(args) } => args == *a,
                _ => false,
            },
            // Room for both buffers, and more copies of `other`'s bytes than the call's own
            // buffer holds (whole, or fragment by fragment when the two were shuffled). A
            // buffer that lost bytes (trimmed, unescaped) never qualifies.
            MismatchOf::Raw(r) => {
                if other.raw.is_empty() || r.len() < own.raw.len() + other.raw.len() {
                    return false;
                }
                let more = |piece: &str| r.matches(piece).count() > own.raw.matches(piece).count();
                more(&other.raw) || other.fragments.iter().any(|f| f.len() >= 3 && more(f))
            }
        }
    }

    /// The same bytes as the call's buffer in another order: for a failure's raw buffer, the
    /// same multiset of bytes; for dispatched arguments, the strict parse of the fragments
    /// joined in another order.
    fn reorders(&self, call: &ExpectedCall) -> bool {
        let r = match self {
            MismatchOf::Raw(r) => r,
            MismatchOf::Args(a) => return reordered_parse(&call.fragments, a),
        };
        if r.len() != call.raw.len() || *r == call.raw {
            return false;
        }
        let mut a: Vec<u8> = r.bytes().collect();
        let mut b: Vec<u8> = call.raw.bytes().collect();
        a.sort_unstable();
        b.sort_unstable();
        a == b
    }
}

#[cfg(test)]
mod tests;

/// Whether some other order of `fragments` parses strictly to `args`: every order for a few
/// fragments, otherwise the reorderings bugs produce (reversed, sorted, one adjacent swap).
/// Fragments of white space only are left out: moving them is not what changed the value
/// (dropping them, as a trimming bug does, is).
fn reordered_parse(fragments: &[String], args: &Value) -> bool {
    let parses_to = |order: &[&String]| {
        let joined: String = order.iter().map(|s| s.as_str()).collect();
        parse_document(&joined).is_some_and(|v| v == *args)
    };
    let refs: Vec<&String> = fragments.iter().filter(|f| !f.trim().is_empty()).collect();
    if parses_to(&refs) {
        // The value is what the fragments give in their own order, white space aside.
        return false;
    }
    if refs.len() <= 6 {
        let mut order = refs.clone();
        return permutations(&mut order, 0, &parses_to);
    }
    let mut reversed = refs.clone();
    reversed.reverse();
    let mut sorted = refs.clone();
    sorted.sort();
    if parses_to(&reversed) || parses_to(&sorted) {
        return true;
    }
    (1..refs.len()).any(|i| {
        let mut swapped = refs.clone();
        swapped.swap(i - 1, i);
        parses_to(&swapped)
    })
}

/// Heap-free recursive permutation search; stops at the first order `f` accepts.
fn permutations<'s>(order: &mut Vec<&'s String>, k: usize, f: &dyn Fn(&[&'s String]) -> bool) -> bool {
    if k == order.len() {
        return f(order);
    }
    for i in k..order.len() {
        order.swap(k, i);
        if permutations(order, k + 1, f) {
            return true;
        }
        order.swap(k, i);
    }
    false
}
