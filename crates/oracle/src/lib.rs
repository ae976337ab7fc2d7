//! The oracle: expected observation from the scenario, compared with what the subject did.
//!
//! The fourth stage of the data flow. [`expect`] derives, from a scenario and the origins of
//! the events delivered, what a correct accumulator reports; [`judge_case`] compares each
//! stream's [`Observation`] with it and returns [`Violation`]s, each naming one
//! [`Invariant`], its [`Grade`], the call, what was expected and what was observed.
//!
//! **Architecture invariant:** the oracle never consults the reference accumulator, or any
//! accumulator: expectations come from the scenario's own bytes, parsed strictly once.

use std::borrow::Cow;

use serde::{Deserialize, Serialize};
use serde_json::Value;
use toolcert_render::Rendered;
use toolcert_scenario::{Case, EndingKind};
use toolcert_subject::{ErrorClass, FailReason, Observation, Outcome, Stamp, Timed};

pub mod corpus;
mod ending;
mod exercise;
mod expect;
mod invariant;
pub mod number;
mod walk;

pub use exercise::{exercised, Exercised};
pub use expect::depth as nesting_depth;

pub use expect::{
    expect, expect_defect, judge, parse_document, parse_document_serde, Caps, Expect, Expected, ExpectedCall,
    ExpectedForeign, FaultExpect, Judged, Place, Profile, Refusal, MAX_DEPTH,
};
pub use invariant::{Grade, Invariant};
use number::Agreement;

/// The nesting depth a parser may refuse beyond (RFC 8259 allows limits; serde_json's default
/// is 128): a refusal of a deeper valid document is a should-grade note, not a must failure.
pub const PARSER_DEPTH_LIMIT: usize = 128;

/// One broken rule in one stream of a case.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Violation {
    pub invariant: Invariant,
    pub grade: Grade,
    /// The stream of the case (0 for single-stream cases).
    pub stream: u32,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub call_id: Option<String>,
    /// What went wrong, in words that do not depend on the case (no ids, arguments or
    /// positions): with the invariant and grade it is the signature that groups failing cases
    /// into one finding.
    #[serde(default)]
    pub kind: String,
    pub expected: String,
    pub observed: String,
}

impl Violation {
    /// The signature that identifies the bug behind it across cases, seeds and runs.
    pub fn signature(&self) -> (Invariant, Grade, &str) {
        (self.invariant, self.grade, self.kind.as_str())
    }
}

impl std::fmt::Display for Violation {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{} ({})", self.invariant, self.grade.as_str())?;
        if let Some(id) = &self.call_id {
            write!(f, " call {id}")?;
        }
        // A caret line under the observed value lines up under its first line.
        let observed = self.observed.replace('\n', "\n              ");
        write!(f, "\n    expected: {}\n    observed: {observed}", self.expected)
    }
}

/// Judges every stream of a case. `rendered[s]` and `observed[s]` belong to `case.streams[s]`.
pub fn judge_case(
    case: &Case,
    rendered: &[Rendered<'_>],
    observed: &[Observation],
    profile: Profile,
) -> Vec<Violation> {
    judge_case_exercised(case, rendered, observed, profile).0
}

/// [`judge_case`], with the invariants the case exercised (see [`exercised`]).
pub fn judge_case_exercised(
    case: &Case,
    rendered: &[Rendered<'_>],
    observed: &[Observation],
    profile: Profile,
) -> (Vec<Violation>, Exercised) {
    let (out, exercised, _) = judge_case_parsed(case, rendered, observed, profile);
    (out, exercised)
}

/// The strict parses of call documents the oracle made while judging a case (see
/// [`parse_document`]), handed on so that no later stage parses the same document again.
#[derive(Clone, Debug, Default)]
pub struct Parsed {
    /// `(stream, block, parse)`.
    docs: Vec<(u32, u32, Doc)>,
}

/// One document's strict parse, as [`Parsed`] keeps it.
#[derive(Clone, Debug)]
enum Doc {
    /// A value of its own; `None` for a document that does not parse.
    Value(Option<Value>),
    /// Exactly the arguments of outcome `.0` of the stream's observation (the judge walked
    /// the document against them and found the parse equal: see [`Judged`]).
    Dispatched(u32),
}

impl Parsed {
    /// The strict parse of the arguments of call block `block` of stream `stream`, if the
    /// oracle made one: `Some(None)` for a document that does not parse. An empty document
    /// (which means `{}`) is never here. `observed` are the observations the case was judged
    /// on (a parse may be the value one of them dispatched).
    pub fn get<'p>(
        &'p self,
        observed: &'p [Observation],
        stream: usize,
        block: usize,
    ) -> Option<Option<&'p Value>> {
        let (_, _, doc) = self.docs.iter().find(|(s, b, _)| *s as usize == stream && *b as usize == block)?;
        match doc {
            Doc::Value(v) => Some(v.as_ref()),
            Doc::Dispatched(k) => match &observed.get(stream)?.outcomes.get(*k as usize)?.value {
                Outcome::Dispatchable { args, .. } | Outcome::SchemaError { args, .. } => Some(Some(args)),
                Outcome::Failed { .. } => None,
            },
        }
    }
}

/// [`judge_case_exercised`], with the parses it made ([`Parsed`]).
pub fn judge_case_parsed(
    case: &Case,
    rendered: &[Rendered<'_>],
    observed: &[Observation],
    profile: Profile,
) -> (Vec<Violation>, Exercised, Parsed) {
    let expected: Vec<Expected<'_>> = case
        .streams
        .iter()
        .zip(rendered)
        .enumerate()
        .map(|(s, (t, r))| match observed.get(s) {
            Some(o) => expect::expect_observed(t, r, profile, o),
            None => expect(t, r, profile),
        })
        .collect();
    let (out, exercised) = judge_expected(case, &expected, observed, profile);
    let mut parsed = Parsed::default();
    for (s, (exp, turn)) in expected.into_iter().zip(&case.streams).enumerate() {
        for call in exp.calls {
            let empty = matches!(turn.blocks.get(call.block as usize),
                Some(toolcert_scenario::Block::Call(c)) if c.arguments.is_empty());
            let args = match call.expect {
                _ if empty => continue,
                Expect::Finished { judged } | Expect::FinishedOrAbandoned { judged } => match judged {
                    Judged::Dispatch { args } | Judged::SchemaError { args } => Some(args),
                    Judged::Unparseable => None,
                },
                Expect::Failed { reason: FailReason::Unparseable } => None,
                Expect::Faulted { may_dispatch: Some(args) } => Some(args),
                _ => continue,
            };
            let doc = match args {
                None => Doc::Value(None),
                Some(Cow::Owned(v)) => Doc::Value(Some(v)),
                Some(Cow::Borrowed(v)) => {
                    let outcomes = observed.get(s).map_or(&[][..], |o| &o.outcomes[..]);
                    let at = outcomes.iter().position(|o| match &o.value {
                        Outcome::Dispatchable { args, .. } | Outcome::SchemaError { args, .. } => {
                            std::ptr::eq(args, v)
                        }
                        Outcome::Failed { .. } => false,
                    });
                    match at {
                        Some(k) => Doc::Dispatched(k as u32),
                        None => Doc::Value(Some(v.clone())),
                    }
                }
            };
            parsed.docs.push((s as u32, call.block, doc));
        }
    }
    (out, exercised, parsed)
}

/// Judges every stream against its expectation; with the invariants the case exercised.
fn judge_expected(
    case: &Case,
    expected: &[Expected<'_>],
    observed: &[Observation],
    profile: Profile,
) -> (Vec<Violation>, Exercised) {
    let exercised = exercised(case, expected, profile).union(exercise::reported(observed));
    let mut out = Vec::new();
    for (s, (exp, obs)) in expected.iter().zip(observed).enumerate() {
        let others: Vec<&Expected<'_>> =
            expected.iter().enumerate().filter(|(o, _)| *o != s).map(|(_, e)| e).collect();
        Judge { stream: s as u32, exp, obs, others: &others, out: &mut out }.run();
    }
    (out, exercised)
}

/// [`judge_case_exercised`] as it was before the judge walked documents against dispatched
/// values: every document parsed into a value of its own and compared under the number rule.
/// The test oracle of the walk (the verdicts and every word of them must be the same).
#[doc(hidden)]
pub fn judge_case_parsing_all(
    case: &Case,
    rendered: &[Rendered<'_>],
    observed: &[Observation],
    profile: Profile,
) -> (Vec<Violation>, Exercised) {
    let expected: Vec<Expected<'_>> =
        case.streams.iter().zip(rendered).map(|(t, r)| expect(t, r, profile)).collect();
    judge_expected(case, &expected, observed, profile)
}

/// Judges one stream alone.
pub fn judge_stream(exp: &Expected<'_>, obs: &Observation) -> Vec<Violation> {
    let mut out = Vec::new();
    Judge { stream: 0, exp, obs, others: &[], out: &mut out }.run();
    out
}

struct Judge<'a> {
    stream: u32,
    exp: &'a Expected<'a>,
    obs: &'a Observation,
    /// The other streams of the case, to recognise data that leaked across streams.
    others: &'a [&'a Expected<'a>],
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

/// How many characters of a compared value are shown whole; past it, a window.
const WHOLE: usize = 160;
/// Characters of context shown before the first difference in a window.
const BEFORE: usize = 50;
/// Characters a window shows in all.
const WINDOW: usize = 120;

/// Two values shown for comparison, each after `label` (`"raw "`, `"args "`, `"text "`):
/// whole when short, otherwise the same window of both around the first differing byte (an
/// elided part marked `…`), and under the observed one a caret line pointing at that byte.
/// `at` gives the byte offset in the unshown original and what it is ("of the buffer").
pub fn contrast(label: &str, want: &str, got: &str, at: Option<(usize, &str)>) -> (String, String) {
    let d = first_difference(want, got);
    let long = want.chars().count() > WHOLE || got.chars().count() > WHOLE;
    let (start, end_w, end_g) = if long {
        let start = floor_boundary(want, floor_boundary(got, back_chars(got, d, BEFORE)));
        let span = |s: &str| {
            let mut e = start;
            for (n, (k, c)) in s[start..].char_indices().enumerate() {
                if n >= WINDOW {
                    break;
                }
                e = start + k + c.len_utf8();
            }
            e
        };
        (start, span(want), span(got))
    } else {
        (0, want.len(), got.len())
    };
    let show = |s: &str, end: usize| {
        let mut out = String::from(label);
        if start > 0 {
            out.push('…');
        }
        out.push_str(&s[start..end]);
        if end < s.len() {
            out.push('…');
        }
        out
    };
    let expected = show(want, end_w);
    let mut observed = show(got, end_g);
    if d < want.len() || d < got.len() {
        let column = label.chars().count() + usize::from(start > 0) + got[start..d].chars().count();
        let what = match at {
            Some((n, unit)) => format!("first difference: byte {n} {unit}"),
            None => "first difference".to_string(),
        };
        observed.push_str(&format!("\n{}^ {what}", " ".repeat(column)));
    }
    (expected, observed)
}

/// The first byte where `a` and `b` differ, on a character boundary of both (the shorter's
/// length when one is a prefix of the other).
pub fn first_difference(a: &str, b: &str) -> usize {
    let mut d = a.bytes().zip(b.bytes()).take_while(|(x, y)| x == y).count();
    while !(a.is_char_boundary(d) && b.is_char_boundary(d)) {
        d -= 1;
    }
    d
}

/// The byte `n` characters before `at` in `s` (or 0).
fn back_chars(s: &str, at: usize, n: usize) -> usize {
    s[..at].char_indices().rev().nth(n.saturating_sub(1)).map_or(0, |(k, _)| k)
}

fn floor_boundary(s: &str, mut k: usize) -> usize {
    k = k.min(s.len());
    while !s.is_char_boundary(k) {
        k -= 1;
    }
    k
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
        kind: impl Into<String>,
        expected: String,
        observed: String,
    ) {
        self.out.push(Violation {
            invariant,
            grade,
            stream: self.stream,
            call_id: call.map(str::to_string),
            kind: kind.into(),
            expected,
            observed,
        });
    }

    fn run(&mut self) {
        if let Some(gained) = self.obs.pollution.as_ref().filter(|p| !p.is_empty()) {
            self.flag(
                Invariant::HostilePollution,
                Grade::Must,
                None,
                "the stream changed the subject's runtime",
                "no prototype, class or module changed".into(),
                format!("changed while this stream was read: {}", gained.join(", ")),
            );
        }
        if let Some(crash) = &self.obs.crash {
            self.flag(
                Invariant::SubjectCrash,
                Grade::Must,
                None,
                "the subject crashed",
                "no crash".into(),
                format!("the subject crashed: {crash}"),
            );
            return;
        }
        self.ending();
        let error_ok = self.turn_error();
        // A turn failed for no good reason has no per-call outcomes to judge further.
        if error_ok.is_some_and(|ok| !ok) {
            self.text();
            return;
        }
        let turn_failed = error_ok.is_some();
        for call in &self.exp.calls {
            let mut outcomes = self.obs.outcomes.iter().filter(|o| o.value.call_id() == Some(call.call_id));
            // Most calls have one outcome: a list is made only for a call with several.
            let several: Vec<&Timed<Outcome>>;
            let one;
            let mine: &[&Timed<Outcome>] = match (outcomes.next(), outcomes.next()) {
                (None, _) => &[],
                (Some(first), None) => {
                    one = first;
                    std::slice::from_ref(&one)
                }
                (Some(first), Some(second)) => {
                    several = [first, second].into_iter().chain(outcomes).collect();
                    &several
                }
            };
            self.call(call, mine, turn_failed);
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
                    format!("a faulty stream ({}) accepted without an error", f.class),
                    match f.also {
                        Some(also) => format!("a protocol error ({} or {also})", f.class),
                        None => format!("a protocol error ({})", f.class),
                    },
                    "no error: the faulty stream was accepted".into(),
                );
                None
            }
            (Some(f), Some(e)) => {
                if !f.accepts(e.class) && !self.exp.refusal.capped(e.class) {
                    let also = f.also.map(|a| format!(" or {a}")).unwrap_or_default();
                    self.flag(
                        Invariant::AccProtocol,
                        Grade::Should,
                        None,
                        format!("a faulty stream ({}) refused with the class {}", f.class, e.class),
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
            // The client's choice, which the stream allows (a hostile upstream's stream, or one
            // past a declared cap). What it dispatched before is judged call by call below.
            (None, Some(e)) if self.exp.refusal.allows(e.class) => Some(true),
            (None, Some(e)) if e.class == ErrorClass::Limit => {
                self.flag(
                    Invariant::AccProtocol,
                    Grade::Must,
                    None,
                    "a turn refused as past a cap it does not pass",
                    format!(
                        "no error: the stream is well formed and {}, and passes no cap the subject declares",
                        ending_name(self.exp.ending)
                    ),
                    format!("the turn failed with {}: {}", e.class, e.detail),
                );
                Some(false)
            }
            (None, Some(e)) if self.failed_on_foreign().is_some() => {
                let kind = self.failed_on_foreign().map_or("foreign", |f| f.kind.name());
                self.flag(
                    Invariant::AccForeign,
                    Grade::Must,
                    None,
                    format!("a well-formed turn failed on a {kind} block"),
                    format!("no error: a {kind} block is not a call, and is ignored"),
                    format!("the turn failed with {}: {}", e.class, e.detail),
                );
                Some(false)
            }
            (None, Some(e)) => {
                self.flag(
                    Invariant::AccProtocol,
                    Grade::Must,
                    None,
                    format!("a well-formed {} turn failed with {}", ending_name(self.exp.ending), e.class),
                    format!("no error: the stream is well formed and {}", ending_name(self.exp.ending)),
                    format!("the turn failed with {}: {}", e.class, e.detail),
                );
                Some(false)
            }
        }
    }

    fn call(&mut self, call: &ExpectedCall<'_>, mine: &[&Timed<Outcome>], turn_failed: bool) {
        let id = Some(call.call_id);
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
                "a call got several outcomes",
                "exactly one outcome".into(),
                format!("{} outcomes: {}", mine.len(), all.join("; ")),
            );
        }
        let o = &first.value;
        if o.name() != Some(call.name) && !matches!(o, Outcome::Failed { name: None, .. }) {
            self.flag(
                Invariant::AccIdentity,
                Grade::Must,
                id,
                "an outcome carries another name than the call's",
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
                match call.terminal_at {
                    Some(_) => "a call dispatched before its terminal event",
                    None => "a call dispatched mid-stream though its terminal event never came",
                },
                format!("no outcome before {when}"),
                format!(
                    "{} after {} {}",
                    show_outcome(o),
                    first.at.delivered,
                    if first.at.delivered == 1 { "event" } else { "events" }
                ),
            );
            return;
        }
        self.against(call, &call.expect, o);
    }

    /// Compares one outcome with what the call should have given.
    fn against(&mut self, call: &ExpectedCall<'_>, expect: &Expect, o: &Outcome) {
        let id = Some(call.call_id);
        let expected = || show_expect(expect, &call.raw);
        // Formatted only for a violation: most outcomes are right.
        let observed = || show_outcome(o);
        let (must, should) = (Grade::Must, Grade::Should);
        match (expect, o) {
            (Expect::Faulted { may_dispatch }, Outcome::Dispatchable { args, .. }) => match may_dispatch {
                Some(a) => self.args(call, a, args, must),
                None => self.flag(
                    Invariant::AccProtocol,
                    must,
                    id,
                    "a call of a faulty turn dispatched",
                    expected(),
                    observed(),
                ),
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
                let kind = format!("a call that must fail as {} was {}", reason.as_str(), o.label());
                self.flag(inv, must, id, kind, expected(), observed());
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
                    let kind =
                        format!("a call that must fail as {} failed as {}", reason.as_str(), got.as_str());
                    self.flag(inv, should, id, kind, expected(), observed());
                }
                self.raw(call, raw);
            }
        }
    }

    fn finished(&mut self, call: &ExpectedCall<'_>, judged: &Judged, o: &Outcome) {
        let id = Some(call.call_id);
        let expected = || show_expect(&Expect::Finished { judged: judged.clone() }, &call.raw);
        // Formatted only for a violation: most outcomes are right.
        let observed = || show_outcome(o);
        let (must, should) = (Grade::Must, Grade::Should);
        match (judged, o) {
            (Judged::Dispatch { args: want }, Outcome::Dispatchable { args, .. })
            | (Judged::SchemaError { args: want }, Outcome::SchemaError { args, .. }) => {
                self.args(call, want, args, must);
            }
            (Judged::Dispatch { args: want }, Outcome::SchemaError { args, .. })
            | (Judged::SchemaError { args: want }, Outcome::Dispatchable { args, .. }) => {
                if number::same_value(want, args) {
                    let kind = match judged {
                        Judged::Dispatch { .. } => "valid arguments reported as a schema error",
                        _ => "arguments that violate the schema dispatched",
                    };
                    self.flag(Invariant::AccSchema, must, id, kind, expected(), observed());
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
                    // RFC 8259 (section 9) lets a parser limit nesting depth; serde_json's
                    // default stops at 128 levels. Refusing a deeper document is then a
                    // limit, noted at the should grade, not a wrong parse.
                    let limit =
                        *reason == FailReason::Unparseable && expect::depth(&call.raw) > PARSER_DEPTH_LIMIT;
                    let (kind, grade) = if limit {
                        (format!("a valid document nested deeper than {PARSER_DEPTH_LIMIT} levels refused (a parser's depth limit)"), should)
                    } else {
                        (format!("a finished, valid call failed as {}", reason.as_str()), must)
                    };
                    self.flag(inv, grade, id, kind, expected(), observed());
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
                    let kind = format!("a finished call with a schema error failed as {}", reason.as_str());
                    self.flag(inv, should, id, kind, expected(), observed());
                }
            }
            (Judged::Unparseable, Outcome::Dispatchable { .. } | Outcome::SchemaError { .. }) => {
                self.flag(
                    Invariant::AccStrict,
                    must,
                    id,
                    "an unparseable document dispatched",
                    expected(),
                    observed(),
                );
            }
            (Judged::Unparseable, Outcome::Failed { reason, raw, .. }) => {
                if *reason != FailReason::Unparseable {
                    let kind = format!("an unparseable document failed as {}", reason.as_str());
                    self.flag(Invariant::AccStrict, should, id, kind, expected(), observed());
                }
                self.raw(call, raw);
            }
        }
    }

    /// Dispatched arguments against the strict parse of the model's document, under the number
    /// rule: another value is a `grade` mismatch; the same values with a number of another
    /// kind (`2` for `2.0`) a should-grade note; another spelling of the same kind nothing.
    fn args(&mut self, call: &ExpectedCall<'_>, want: &Value, got: &Value, grade: Grade) {
        // The expectation holds the very value dispatched where the walk found it equal to the
        // parse (see `Judged`): the same document, number for number.
        if std::ptr::eq(want, got) {
            return;
        }
        match number::agree(want, got) {
            Agreement::Same | Agreement::Respelled => {}
            Agreement::Retyped => {
                let (expected, observed) = contrast("args ", &want.to_string(), &got.to_string(), None);
                let observed = observed.replace(
                    "^ first difference",
                    "^ the same value, but a number of another kind (integer against fraction or exponent)",
                );
                self.flag(
                    Invariant::AccFidelity,
                    Grade::Should,
                    Some(call.call_id),
                    "a number dispatched with its value but another kind",
                    expected,
                    observed,
                );
            }
            Agreement::Differs => self.mismatch(call, MismatchOf::Args(got), grade),
        }
    }

    /// A failure's raw buffer must be the buffer as received.
    fn raw(&mut self, call: &ExpectedCall<'_>, raw: &str) {
        if raw != call.raw {
            self.mismatch(call, MismatchOf::Raw(raw), Grade::Should);
        }
    }

    /// Arguments or a buffer that differ from the model's: names the likeliest cause.
    fn mismatch(&mut self, call: &ExpectedCall<'_>, got: MismatchOf<'_>, grade: Grade) {
        let id = Some(call.call_id);
        let (expected, observed) = match got {
            MismatchOf::Args(a) => match expect_args(&call.expect) {
                Some(want) => contrast("args ", &want.to_string(), &a.to_string(), None),
                None => (show_expect(&call.expect, &call.raw), format!("args {a}")),
            },
            MismatchOf::Raw(r) => {
                let at = first_difference(&call.raw, r);
                let unit = format!("of the buffer ({} bytes; observed {})", call.raw.len(), r.len());
                contrast("raw ", &json_str(&call.raw), &json_str(r), Some((at, &unit)))
            }
        };
        let kind = match got {
            MismatchOf::Args(a) => {
                format!("dispatched arguments: {}", args_diff(expect_args(&call.expect), a))
            }
            MismatchOf::Raw(r) => format!("a failure's raw buffer: {}", raw_diff(&call.raw, r)),
        };
        if let MismatchOf::Raw(r) = got {
            if let Some(f) = self.exp.foreign.iter().find(|f| f.leaked_into(r, &call.raw)) {
                let kind = format!("{} bytes in a call's buffer", f.kind.name());
                self.flag(Invariant::AccForeign, Grade::Must, id, kind, expected, observed);
                return;
            }
        }
        // Another call's data in this call's outcome, when that call did not get it itself.
        let served = |c: &ExpectedCall<'_>, obs: &Observation| {
            obs.outcomes.iter().any(|o| match (&o.value, &c.expect) {
                (
                    Outcome::Dispatchable { call_id, args, .. },
                    Expect::Finished { judged: Judged::Dispatch { args: want } },
                ) => *call_id == c.call_id && number::same_value(args, want),
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
        self.flag(invariant, grade, id, kind, expected, observed);
    }

    /// The first foreign block with an event in the unit that failed the turn (events
    /// `before + 1 ..= delivered`, 1-based).
    fn failed_on_foreign(&self) -> Option<&ExpectedForeign<'_>> {
        let at = self.obs.error.as_ref()?.at;
        self.exp.foreign.iter().find(|f| f.at.iter().any(|&n| n > at.before && n <= at.delivered))
    }

    /// The turn failed by the client's choice, which the stream allows ([`Refusal::allows`]):
    /// nothing is owed after it.
    fn refused_by_choice(&self) -> bool {
        self.exp.fault.is_none()
            && self.obs.error.as_ref().is_some_and(|e| self.exp.refusal.allows(e.value.class))
    }

    /// A call with no outcome.
    fn missing(&mut self, call: &ExpectedCall<'_>, turn_failed: bool) {
        if turn_failed && self.refused_by_choice() {
            return;
        }
        let id = Some(call.call_id);
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
        // Formatted only for a call that needs an outcome (a faulted one returned above).
        let expected = show_expect(&call.expect, &call.raw);
        let observed = if turn_failed {
            "no outcome (the turn failed as a whole)".to_string()
        } else {
            "no outcome".to_string()
        };
        // The invariant already says which ending the call had: the kind stays coarse, so
        // one bug is one finding whatever the document was worth.
        let kind = if turn_failed {
            "a call with no outcome (the turn failed as a whole)"
        } else {
            "a call with no outcome"
        };
        self.flag(inv, grade, id, kind, expected, observed.clone());
        // A call that vanished while a call to the same tool got an outcome was most likely
        // folded into it: same-tool calls did not stay separate.
        let namesake = self.exp.calls.iter().find(|c| {
            c.block != call.block
                && c.name == call.name
                && self.obs.outcomes.iter().any(|o| o.value.call_id() == Some(c.call_id))
        });
        if let Some(other) = namesake {
            self.flag(
                Invariant::AccIdentity,
                grade,
                id,
                "two calls to the same tool merged into one",
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
                id.is_some_and(|id| id.contains(c.call_id))
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
            if let Some(f) = id.and_then(|id| self.exp.foreign.iter().find(|f| f.id == Some(id))) {
                let kind = f.kind.name();
                self.flag(
                    Invariant::AccForeign,
                    if dispatch { Grade::Must } else { Grade::Should },
                    id,
                    format!(
                        "an outcome ({}) for a {kind} block, which is not the client's call",
                        o.value.label()
                    ),
                    format!("no outcome: a {kind} block is never dispatched by the client"),
                    format!("{} for {kind} {}", show_outcome(&o.value), id.unwrap_or("(no id)")),
                );
                continue;
            }
            // A fault's phantom call may be failed, never run.
            if self.exp.fault.is_some() && !dispatch {
                continue;
            }
            self.flag(
                inv,
                if dispatch { Grade::Must } else { Grade::Should },
                id,
                format!("an outcome ({}) for a call the stream never announced", o.value.label()),
                "no outcome for a call this stream never announced".into(),
                format!("{} for call {}", show_outcome(&o.value), id.unwrap_or("(no id)")),
            );
        }
    }

    fn text(&mut self) {
        // A subject that failed the turn saw the text up to the unit that failed it, which may
        // have carried several events; one that did not was fed everything.
        let (lo, hi) = match &self.obs.error {
            Some(e) => (e.at.before, e.at.delivered),
            None => (u32::MAX, u32::MAX),
        };
        let got = &self.obs.text;
        // Compared piece by piece; the pieces are joined only to show a difference (most
        // texts are right, and joining every turn's text cost more than comparing it).
        if !(starts_with_pieces(got, self.exp.pieces_upto(lo))
            && pieces_start_with(self.exp.pieces_upto(hi), got))
        {
            let want = self.exp.text_upto(hi);
            if let Some(f) = self.exp.foreign.iter().find(|f| f.leaked_into(got, &want)) {
                let at = first_difference(&want, got);
                let unit = format!("of the text ({} bytes; observed {})", want.len(), got.len());
                let (expected, observed) =
                    contrast("text ", &json_str(&want), &json_str(got), Some((at, &unit)));
                let kind = format!("{} bytes in the text", f.kind.name());
                self.flag(Invariant::AccForeign, Grade::Must, None, kind, expected, observed);
                return;
            }
            let leaked = self
                .exp
                .calls
                .iter()
                .flat_map(|c| &c.fragments)
                .any(|f| f.len() >= 2 && got.contains(f) && !want.contains(f));
            let at = first_difference(&want, got);
            let unit = format!("of the text ({} bytes; observed {})", want.len(), got.len());
            let (expected, mut observed) =
                contrast("text ", &json_str(&want), &json_str(got), Some((at, &unit)));
            if leaked {
                let what = "argument bytes in the text: ";
                // The caret line moves right with the value it points into.
                observed =
                    format!("{what}{}", observed.replace('\n', &format!("\n{}", " ".repeat(what.len()))));
            }
            let kind =
                if leaked { "argument bytes in the text" } else { "the text differs from the text blocks" };
            self.flag(Invariant::AccText, Grade::Must, None, kind, expected, observed);
            return;
        }
        if let (Some(want), Some(got), None) = (&self.exp.layout, &self.obs.layout, &self.obs.error) {
            if !same_layout(want, got) {
                self.flag(
                    Invariant::AccText,
                    Grade::Should,
                    None,
                    "blocks out of order in the assembled message",
                    format!("blocks in order {}", show_layout(want)),
                    format!("blocks in order {}", show_layout(got)),
                );
            }
        }
    }
}

/// The arguments a correct subject may dispatch the call with, if any.
fn expect_args<'e>(e: &'e Expect<'_>) -> Option<&'e Value> {
    match e {
        Expect::Finished { judged: Judged::Dispatch { args } | Judged::SchemaError { args } }
        | Expect::FinishedOrAbandoned { judged: Judged::Dispatch { args } | Judged::SchemaError { args } }
        | Expect::Faulted { may_dispatch: Some(args) } => Some(&**args),
        _ => None,
    }
}

/// What differs between the arguments a call should have been dispatched with and those it
/// was, in words that do not depend on the values: the first difference found, depth first.
fn args_diff(want: Option<&Value>, got: &Value) -> String {
    fn first(want: &Value, got: &Value) -> Option<&'static str> {
        match (want, got) {
            (Value::Object(w), Value::Object(g)) => {
                if let Some(k) = w.keys().find(|k| !g.contains_key(*k)) {
                    let _ = k;
                    return Some("a key dropped");
                }
                if g.keys().any(|k| !w.contains_key(k)) {
                    return Some("a key added");
                }
                w.iter().find_map(|(k, v)| first(v, &g[k]))
            }
            (Value::Array(w), Value::Array(g)) if w.len() != g.len() => Some("an array's length changed"),
            (Value::Array(w), Value::Array(g)) => w.iter().zip(g).find_map(|(a, b)| first(a, b)),
            (Value::String(w), Value::String(g)) if w == g => None,
            (Value::String(w), Value::String(g)) => Some(if w.trim() == g.trim() {
                "white space trimmed or added in a string"
            } else if g.len() < w.len() && w.starts_with(g.as_str()) {
                "a string cut short"
            } else {
                "a string value changed"
            }),
            // The number rule (docs/SPEC.md §4): the same value is no change here.
            (Value::Number(_), Value::Number(_)) if number::same_value(want, got) => None,
            (Value::Number(_), Value::Number(_)) => Some("a number changed"),
            (w, g) if std::mem::discriminant(w) != std::mem::discriminant(g) => {
                Some("a value of another type")
            }
            (w, g) if w != g => Some("a value changed"),
            _ => None,
        }
    }
    match want {
        None => "dispatched though nothing may be".into(),
        Some(w) => first(w, got).unwrap_or("a value changed").into(),
    }
}

/// What differs between a failure's raw buffer and the buffer as received.
fn raw_diff(want: &str, got: &str) -> &'static str {
    match got.len().cmp(&want.len()) {
        std::cmp::Ordering::Less => "lost bytes",
        std::cmp::Ordering::Greater => "gained bytes",
        std::cmp::Ordering::Equal => "bytes changed",
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

/// Whether `s` begins with `pieces` joined.
fn starts_with_pieces<'p>(s: &str, pieces: impl Iterator<Item = &'p str>) -> bool {
    let mut rest = s.as_bytes();
    for p in pieces {
        match rest.strip_prefix(p.as_bytes()) {
            Some(r) => rest = r,
            None => return false,
        }
    }
    true
}

/// Whether `pieces` joined begin with `s`.
fn pieces_start_with<'p>(pieces: impl Iterator<Item = &'p str>, s: &str) -> bool {
    let mut rest = s.as_bytes();
    for p in pieces {
        if rest.is_empty() {
            return true;
        }
        let n = p.len().min(rest.len());
        if p.as_bytes()[..n] != rest[..n] {
            return false;
        }
        rest = &rest[n..];
    }
    rest.is_empty()
}

/// One slot of a layout, as the comparison reads it.
trait LayoutSlot {
    /// `Ok(text)` of a text slot, `Err(call_id)` of a call.
    fn part(&self) -> Result<&str, &str>;
}

impl LayoutSlot for toolcert_subject::Slot {
    fn part(&self) -> Result<&str, &str> {
        match self {
            toolcert_subject::Slot::Text { text } => Ok(text),
            toolcert_subject::Slot::Call { call_id } => Err(call_id),
        }
    }
}

impl LayoutSlot for Place<'_> {
    fn part(&self) -> Result<&str, &str> {
        match *self {
            Place::Text { text } => Ok(text),
            Place::Call { call_id } => Err(call_id),
        }
    }
}

/// A layout's runs with adjacent text merged and empty text dropped: each text run as the
/// range of its slots, each call as its id.
fn runs<S: LayoutSlot>(slots: &[S]) -> impl Iterator<Item = Result<&[S], &str>> + '_ {
    let mut k = 0;
    std::iter::from_fn(move || loop {
        let first = slots.get(k)?;
        match first.part() {
            Err(call_id) => {
                k += 1;
                return Some(Err(call_id));
            }
            Ok(_) => {
                let end = slots[k..].iter().position(|s| s.part().is_err()).map_or(slots.len(), |n| k + n);
                let run = &slots[k..end];
                k = end;
                if run.iter().any(|s| s.part().is_ok_and(|t| !t.is_empty())) {
                    return Some(Ok(run));
                }
            }
        }
    })
}

/// The text of a run of text slots, piece by piece.
fn run_text<S: LayoutSlot>(run: &[S]) -> impl Iterator<Item = &str> {
    run.iter().filter_map(|s| s.part().ok())
}

/// Layouts compared with adjacent text runs merged and empty runs dropped (without building
/// either: most layouts are right).
fn same_layout<A: LayoutSlot, B: LayoutSlot>(a: &[A], b: &[B]) -> bool {
    let (mut a, mut b) = (runs(a), runs(b));
    loop {
        match (a.next(), b.next()) {
            (None, None) => return true,
            (Some(Err(x)), Some(Err(y))) if x == y => {}
            (Some(Ok(x)), Some(Ok(y))) if same_pieces(run_text(x), run_text(y)) => {}
            _ => return false,
        }
    }
}

/// Whether two sequences of pieces join to the same text.
fn same_pieces<'x, 'y>(mut a: impl Iterator<Item = &'x str>, mut b: impl Iterator<Item = &'y str>) -> bool {
    let (mut x, mut y): (&[u8], &[u8]) = (b"", b"");
    loop {
        while x.is_empty() {
            let Some(p) = a.next() else { break };
            x = p.as_bytes();
        }
        while y.is_empty() {
            let Some(p) = b.next() else { break };
            y = p.as_bytes();
        }
        if x.is_empty() || y.is_empty() {
            return x.is_empty() && y.is_empty();
        }
        let n = x.len().min(y.len());
        if x[..n] != y[..n] {
            return false;
        }
        (x, y) = (&x[n..], &y[n..]);
    }
}

fn normal_layout<S: LayoutSlot>(slots: &[S]) -> Vec<toolcert_subject::Slot> {
    use toolcert_subject::Slot;
    runs(slots)
        .map(|r| match r {
            Ok(run) => Slot::Text { text: run_text(run).collect() },
            Err(call_id) => Slot::Call { call_id: call_id.to_string() },
        })
        .collect()
}

fn show_layout<S: LayoutSlot>(slots: &[S]) -> String {
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

/// A string as a JSON string literal, whole.
fn json_str(s: &str) -> String {
    Value::String(s.to_string()).to_string()
}

/// What differed: dispatched arguments, or a failure's raw buffer.
enum MismatchOf<'a> {
    Args(&'a Value),
    Raw(&'a str),
}

impl MismatchOf<'_> {
    /// Carries data of `other` that the call `own` does not: its arguments, or a delivered
    /// piece of its buffer.
    fn carries(&self, own: &ExpectedCall<'_>, other: &ExpectedCall<'_>) -> bool {
        match self {
            MismatchOf::Args(a) => match &other.expect {
                Expect::Finished { judged: Judged::Dispatch { args } | Judged::SchemaError { args } }
                | Expect::FinishedOrAbandoned {
                    judged: Judged::Dispatch { args } | Judged::SchemaError { args },
                } => number::same_value(args, a),
                Expect::Faulted { may_dispatch: Some(args) } => number::same_value(args, a),
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
    fn reorders(&self, call: &ExpectedCall<'_>) -> bool {
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
fn reordered_parse(fragments: &[&str], args: &Value) -> bool {
    let parses_to = |order: &[&str]| {
        let joined: String = order.concat();
        parse_document(&joined).is_some_and(|v| number::same_value(&v, args))
    };
    let refs: Vec<&str> = fragments.iter().copied().filter(|f| !f.trim().is_empty()).collect();
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
fn permutations<'s>(order: &mut Vec<&'s str>, k: usize, f: &dyn Fn(&[&'s str]) -> bool) -> bool {
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
