//! Expectations: what a correct subject reports for one stream, derived from the scenario
//! and the origins of the events that were delivered (never from any accumulator).

use std::borrow::Cow;

use serde::Serialize;
use serde_json::Value;
use toolcert_render::{Origin, Rendered};
use toolcert_scenario::{Block, EndingKind, FaultClass, FaultKind, ForeignKind, Shape, Turn};
use toolcert_subject::{ErrorClass, FailReason, Outcome};

/// What the call's document is worth once finished, as a strict parser and the schema see it.
///
/// The arguments are the strict parse of the document: a value of their own, or, where the
/// judge read the document against the value a subject dispatched and found that the parse
/// gives exactly that value, that value itself (equal to the parse, read from the document).
#[derive(Clone, Debug, PartialEq, Serialize)]
#[serde(tag = "verdict", rename_all = "snake_case")]
pub enum Judged<'a> {
    Dispatch { args: Cow<'a, Value> },
    SchemaError { args: Cow<'a, Value> },
    Unparseable,
}

/// The outcome a correct subject reports for one announced call.
#[derive(Clone, Debug, PartialEq, Serialize)]
#[serde(tag = "expect", rename_all = "snake_case")]
pub enum Expect<'a> {
    /// Exactly this outcome (`Judged`), in a complete turn.
    Finished { judged: Judged<'a> },
    /// `Failed(reason)`.
    Failed { reason: FailReason },
    /// The call's own terminal arrived but the turn ended without its stop reason: either
    /// what the document is worth, or `Failed(abandoned)`.
    FinishedOrAbandoned { judged: Judged<'a> },
    /// The turn carries a protocol fault: no outcome is required; a dispatch is allowed only
    /// of a call whose own terminal arrived before the fault, with exactly `may_dispatch`.
    Faulted { may_dispatch: Option<Cow<'a, Value>> },
}

/// The protocol error a delivered fault requires.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
pub struct FaultExpect {
    pub class: ErrorClass,
    /// A second class that describes the same event as truly (a replay after the stop is
    /// both a duplicate announcement and an event after stop).
    pub also: Option<ErrorClass>,
    /// Events delivered once the fault had arrived.
    pub at: u32,
}

impl FaultExpect {
    pub fn accepts(&self, class: ErrorClass) -> bool {
        class == self.class || Some(class) == self.also
    }
}

/// One announced call as delivered. Its strings borrow from the scenario (or the
/// expectation file) it was derived from: an expectation is built for every case checked,
/// and copying every piece of every turn cost more than judging it.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct ExpectedCall<'a> {
    /// Block position in the turn.
    pub block: u32,
    pub index: u32,
    pub call_id: &'a str,
    pub name: &'a str,
    /// Events delivered once its terminal event had arrived (`None`: never arrived).
    pub terminal_at: Option<u32>,
    /// The buffer as received: the delivered fragments, joined (borrowed where they are a
    /// prefix of the document, as rendering delivers them).
    pub raw: Cow<'a, str>,
    /// The fragments as delivered, for telling a reordering from a mangling.
    #[serde(skip)]
    pub fragments: Vec<&'a str>,
    pub expect: Expect<'a>,
}

/// One slot of the assembled message a correct subject reports, in stream order, as
/// delivered: a text piece or a call (adjacent pieces form one text run).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(tag = "slot", rename_all = "snake_case")]
pub enum Place<'a> {
    Text { text: &'a str },
    Call { call_id: &'a str },
}

/// What a correct subject reports for one stream.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Expected<'a> {
    pub ending: EndingKind,
    /// The message-level stop reason delivered, in the scenario's spelling (`None` for an
    /// abandoned or errored turn, and in a corpus file, which records only the ending).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub stop: Option<toolcert_scenario::StopReason>,
    /// Events delivered once the stop reason or the error event had arrived.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub ended_at: Option<u32>,
    pub calls: Vec<ExpectedCall<'a>>,
    /// The first fault delivered: the protocol error the turn must fail with.
    pub fault: Option<FaultExpect>,
    /// Text pieces as delivered: (events delivered after the piece, text).
    #[serde(skip)]
    pub text_pieces: Vec<(u32, &'a str)>,
    /// The assembled message's layout, where the shape orders blocks (per-call shape only).
    pub layout: Option<Vec<Place<'a>>>,
    pub events: u32,
    /// The foreign blocks delivered (at least their start, or in Chat a delta): none of
    /// them may be dispatched or leak into a call or the text (ACC-FOREIGN).
    #[serde(skip)]
    pub foreign: Vec<ExpectedForeign<'a>>,
    /// Whether a clean refusal of this stream passes though it is well formed.
    #[serde(skip)]
    pub refusal: Refusal,
}

/// One foreign block as delivered.
#[derive(Clone, Debug, PartialEq)]
pub struct ExpectedForeign<'a> {
    pub block: u32,
    pub kind: ForeignKind,
    /// The id it carries, if its kind carries one (what a subject that dispatched it would
    /// name its outcome with).
    pub id: Option<&'a str>,
    /// Its content as delivered, piece by piece.
    pub pieces: Vec<&'a str>,
    /// Events delivered once each of its events had arrived.
    pub at: Vec<u32>,
}

impl ExpectedForeign<'_> {
    /// A piece of its content long enough to be recognised where it leaked.
    pub fn leaked_into(&self, got: &str, own: &str) -> bool {
        let whole: String = self.pieces.concat();
        let telling = |p: &str| p.len() >= 3 && got.contains(p) && !own.contains(p);
        telling(&whole) || self.pieces.iter().any(|p| telling(p))
    }
}

impl<'a> Expected<'a> {
    /// The text delivered within the first `n` events.
    pub fn text_upto(&self, n: u32) -> String {
        self.pieces_upto(n).collect()
    }

    /// The text pieces delivered within the first `n` events, in order.
    pub fn pieces_upto(&self, n: u32) -> impl Iterator<Item = &'a str> + '_ {
        self.text_pieces.iter().filter(move |(at, _)| *at <= n).map(|(_, t)| *t)
    }

    /// Every delivered text piece, joined.
    pub fn text(&self) -> String {
        self.text_upto(u32::MAX)
    }
}

/// Options of the oracle.
#[derive(Clone, Copy, Debug, Default)]
pub struct Profile {
    /// Judge calls against their tool's JSON Schema (ACC-SCHEMA). Off: schemas are ignored.
    pub schema: bool,
    /// The setting is a hostile upstream's (docs/SPEC.md, "The hostile upstream"): a client
    /// may refuse any of its streams. A turn error with no wrong dispatch passes.
    pub hostile: bool,
    /// The caps the subject documents: past one, a turn error of class `limit` passes.
    pub caps: Caps,
}

/// The caps a subject documents (`caps` in its start reply, docs/PROTOCOL.md). A stream that
/// passes one may be refused with a turn error of class `limit`: a cap is a choice, not a
/// fault (docs/SPEC.md, "Caps"). `None`: no cap of that kind.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, serde::Deserialize)]
pub struct Caps {
    /// Calls in one stream.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub calls: Option<u64>,
    /// Bytes of one call's arguments.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub argument_bytes: Option<u64>,
    /// Argument fragments in one stream, over all its calls.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub fragments: Option<u64>,
    /// Nesting depth of one call's arguments (`{}` is 1).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub depth: Option<u64>,
}

impl Caps {
    pub const NONE: Caps = Caps { calls: None, argument_bytes: None, fragments: None, depth: None };

    pub fn is_empty(&self) -> bool {
        *self == Caps::default()
    }

    /// The first cap the delivered calls pass, said as `12000 calls, past the cap of 128`.
    pub fn passed_by(&self, calls: &[ExpectedCall<'_>]) -> Option<String> {
        if self.is_empty() {
            return None;
        }
        let past = |what: &str, n: u64, cap: Option<u64>| {
            cap.filter(|c| n > *c).map(|c| format!("{n} {what}, past the cap of {c}"))
        };
        let fragments: u64 = calls.iter().map(|c| c.fragments.len() as u64).sum();
        let bytes = calls.iter().map(|c| c.raw.len() as u64).max().unwrap_or(0);
        past("calls", calls.len() as u64, self.calls)
            .or_else(|| past("argument bytes in one call", bytes, self.argument_bytes))
            .or_else(|| past("fragments", fragments, self.fragments))
            .or_else(|| match self.depth {
                Some(cap) => {
                    let deepest = calls.iter().map(|c| depth(&c.raw) as u64).max().unwrap_or(0);
                    past("levels of nesting", deepest, Some(cap))
                }
                None => None,
            })
    }
}

/// Whether a well-formed stream may be refused, and why (see [`Profile`]).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Refusal {
    /// A hostile upstream's stream: any clean refusal passes.
    pub hostile: bool,
    /// The cap the stream passes, as [`Caps::passed_by`] says it: a `limit` refusal passes.
    pub cap: Option<String>,
}

impl Refusal {
    /// A turn error of `class` is a `limit` refusal of a stream past a declared cap.
    pub fn capped(&self, class: ErrorClass) -> bool {
        class == ErrorClass::Limit && self.cap.is_some()
    }

    /// A turn error of `class` on this well-formed stream is the client's choice, which the
    /// stream allows: any refusal of a hostile upstream's stream, or a capped one.
    pub fn allows(&self, class: ErrorClass) -> bool {
        self.hostile || self.capped(class)
    }
}

/// Derives the expectation for one stream of a case.
///
/// A turn whose transport carries a [`toolcert_scenario::Corrupt`] message is judged as a
/// defect of class `malformed` once `after` neutral events are complete: the runner keeps
/// it only where it is rendered (the bytes level of a binary-framed dialect), with `after`
/// set to exactly the events complete before the damaged message.
pub fn expect<'a>(turn: &'a Turn, rendered: &Rendered<'_>, profile: Profile) -> Expected<'a> {
    expect_with(turn, rendered, profile, wire_fault(turn, rendered), None)
}

/// The fault of a turn that no neutral event describes: a [`toolcert_scenario::Corrupt`]
/// message, or a second generation spliced in ([`toolcert_scenario::WireEvents::spliced`]),
/// each `malformed` once its neutral events are complete (the earlier of the two). The
/// runner keeps either only where it is rendered.
fn wire_fault(turn: &Turn, rendered: &Rendered<'_>) -> Option<(u32, ErrorClass)> {
    let n = rendered.events.len() as u32;
    let corrupt = turn.transport.corrupt.map(|c| c.after);
    let hostile = turn.wire.hostile_index.as_ref().map(|h| h.after);
    let at = [corrupt, turn.wire.spliced, hostile].into_iter().flatten().min();
    at.map(|after| (after.min(n), ErrorClass::Malformed))
}

/// [`expect`], for judging `observed`: a document whose call the subject dispatched is walked
/// against the dispatched value, and where the strict parse gives exactly that value the
/// expectation holds that value instead of a parse of its own (see [`Judged`]). The same
/// expectation as [`expect`]'s, value for value.
pub(crate) fn expect_observed<'a>(
    turn: &'a Turn,
    rendered: &Rendered<'_>,
    profile: Profile,
    observed: &'a toolcert_subject::Observation,
) -> Expected<'a> {
    expect_with(turn, rendered, profile, wire_fault(turn, rendered), Some(observed))
}

/// The expectation for one stream whose wire stream carries a defect no neutral event
/// describes ([`toolcert_scenario::WireDefect`]), arriving once `before` neutral events are
/// complete: a fault of `class` at that point, judged as any fault is (the turn fails, no
/// call is dispatched unless it finished before the defect).
pub fn expect_defect<'a>(
    turn: &'a Turn,
    rendered: &Rendered<'_>,
    profile: Profile,
    before: u32,
    class: ErrorClass,
) -> Expected<'a> {
    expect_with(turn, rendered, profile, Some((before, class)), None)
}

fn expect_with<'a>(
    turn: &'a Turn,
    rendered: &Rendered<'_>,
    profile: Profile,
    defect: Option<(u32, ErrorClass)>,
    observed: Option<&'a toolcert_subject::Observation>,
) -> Expected<'a> {
    // A defect is an event between neutral events `before` and `before + 1`: it counts as
    // delivered with the next one, so that a call finished by event `before` finished first.
    let defect_fault = |fault: &mut Option<FaultExpect>, delivered: u32| {
        if let Some((before, class)) = defect {
            if delivered > before && fault.is_none() {
                *fault = Some(FaultExpect { class, also: None, at: before + 1 });
            }
        }
    };
    // Room for every piece the blocks can be sent as, so that the lists grow once at most.
    let (mut n_calls, mut n_text) = (0, 0);
    for b in &turn.blocks {
        match b {
            Block::Call(_) => n_calls += 1,
            Block::Text(t) => n_text += t.splits.len() + 1,
            Block::Foreign(_) => {}
        }
    }
    let mut calls: Vec<ExpectedCall<'a>> = Vec::with_capacity(n_calls);
    let mut stop: Option<(toolcert_scenario::StopReason, u32)> = None;
    let mut fault: Option<FaultExpect> = None;
    let mut errored = false;
    let mut error_at: Option<u32> = None;
    let mut text_pieces = Vec::with_capacity(n_text);
    let per_call = matches!(turn.shape, Shape::PerCall);
    let mut layout: Vec<Place<'a>> = Vec::with_capacity(if per_call { n_text + n_calls } else { 0 });
    let call_of = |block: u32| match &turn.blocks[block as usize] {
        Block::Call(c) => c,
        Block::Text(_) | Block::Foreign(_) => unreachable!("origins name calls by their block"),
    };
    let mut foreign: Vec<ExpectedForeign<'a>> = Vec::new();
    let mut foreign_piece = |block: u32, piece: Option<(u32, u32)>, delivered: u32| {
        let Some(Block::Foreign(f)) = turn.blocks.get(block as usize) else { return };
        let k = match foreign.iter().position(|e| e.block == block) {
            Some(k) => k,
            None => {
                foreign.push(ExpectedForeign {
                    block,
                    kind: f.kind,
                    id: (f.kind.carries_id() && !f.id.is_empty()).then_some(f.id.as_str()),
                    pieces: Vec::new(),
                    at: Vec::new(),
                });
                foreign.len() - 1
            }
        };
        let e = &mut foreign[k];
        e.at.push(delivered);
        match piece {
            Some((start, end)) => e.pieces.push(&f.text[start as usize..end as usize]),
            // A kind that does not stream carries its whole content in its start.
            None if !f.kind.streams() && e.at.len() == 1 => e.pieces.push(&f.text),
            None => {}
        }
    };
    for (k, origin) in rendered.origins.iter().enumerate() {
        let delivered = k as u32 + 1;
        defect_fault(&mut fault, delivered);
        match *origin {
            Origin::Text { block, start, end } => {
                let Block::Text(t) = &turn.blocks[block as usize] else { unreachable!() };
                let piece = &t.text[start as usize..end as usize];
                text_pieces.push((delivered, piece));
                if per_call {
                    layout.push(Place::Text { text: piece });
                }
            }
            Origin::Announce { block } => {
                let c = call_of(block);
                if per_call {
                    layout.push(Place::Call { call_id: &c.call_id });
                }
                calls.push(ExpectedCall {
                    block,
                    index: c.index,
                    call_id: &c.call_id,
                    name: &c.name,
                    terminal_at: None,
                    raw: Cow::Borrowed(""),
                    fragments: Vec::with_capacity(c.splits.len() + 1),
                    expect: Expect::Failed { reason: FailReason::Abandoned },
                });
            }
            Origin::Fragment { block, start, end } => {
                let c = call_of(block);
                if let Some(e) = calls.iter_mut().find(|e| e.block == block) {
                    let (start, end) = (start as usize, end as usize);
                    let piece = &c.arguments[start..end];
                    match &mut e.raw {
                        // The fragments so far are the document's first bytes, and this one
                        // follows them: the buffer is still a prefix of the document.
                        Cow::Borrowed(raw) if raw.len() == start => *raw = &c.arguments[..end],
                        raw => raw.to_mut().push_str(piece),
                    }
                    e.fragments.push(piece);
                }
            }
            Origin::CallStop { block } => {
                if let Some(e) = calls.iter_mut().find(|e| e.block == block) {
                    e.terminal_at.get_or_insert(delivered);
                    // A terminal that repeats arguments other than the fragments is a fault.
                    let mismatch = turn.faults.iter().any(|f| match &f.kind {
                        FaultKind::DoneMismatch { call, arguments } => {
                            turn.fault_call_block(*call) == Some(block) && *arguments != *e.raw
                        }
                        _ => false,
                    });
                    if mismatch && fault.is_none() {
                        fault =
                            Some(FaultExpect { class: ErrorClass::DoneMismatch, also: None, at: delivered });
                    }
                }
            }
            Origin::Stop => {
                let toolcert_scenario::Ending::Stop(reason) = turn.ending else { unreachable!() };
                stop = Some((reason, delivered));
                if matches!(turn.shape, Shape::Interleaved(_)) {
                    for e in &mut calls {
                        e.terminal_at.get_or_insert(delivered);
                    }
                }
            }
            Origin::Error => {
                errored = true;
                error_at.get_or_insert(delivered);
            }
            Origin::Ping => {}
            Origin::ForeignStart { block } | Origin::ForeignStop { block } => {
                foreign_piece(block, None, delivered)
            }
            Origin::Foreign { block, start, end } => foreign_piece(block, Some((start, end)), delivered),
            Origin::Fault { fault: f } => {
                if fault.is_none() {
                    let kind = &turn.faults[f as usize].kind;
                    let class = match kind.class() {
                        FaultClass::ReplayAnnouncement => ErrorClass::DuplicateAnnouncement,
                        FaultClass::UnannouncedFragment => ErrorClass::UnannouncedIndex,
                        FaultClass::FragmentAfterStop => ErrorClass::FragmentAfterStop,
                        FaultClass::DoneMismatch => ErrorClass::DoneMismatch,
                    };
                    // After the message stop (or, for a replay, after the call's own stop) the
                    // same event is just as truly "after stop".
                    let replayed_stopped = match kind {
                        FaultKind::ReplayAnnouncement { call } => {
                            let block = turn.fault_call_block(*call);
                            calls.iter().any(|e| Some(e.block) == block && e.terminal_at.is_some())
                        }
                        _ => false,
                    };
                    let mut also = None;
                    if (stop.is_some() || replayed_stopped) && class != ErrorClass::FragmentAfterStop {
                        also = Some(ErrorClass::FragmentAfterStop);
                    }
                    fault = Some(FaultExpect { class, also, at: delivered });
                }
            }
        }
    }
    defect_fault(&mut fault, u32::MAX);
    let ending = match stop {
        Some((reason, _)) if reason.is_truncating() => EndingKind::Truncated,
        Some(_) => EndingKind::Complete,
        None if errored => EndingKind::Errored,
        None => EndingKind::Abandoned,
    };
    if profile.schema {
        // Registers the tools' shared schemas by address, so that `judge` finds them without
        // comparing schemas by value.
        for schema in turn.tools.iter().filter_map(|t| t.schema.as_ref()) {
            toolcert_schema::compiled_shared(schema);
        }
    }
    for e in &mut calls {
        let document = &call_of(e.block).arguments;
        let schema = turn.schema_of(e.name).filter(|_| profile.schema);
        // What the subject dispatched the call with, as the judge reads it (its first outcome).
        let dispatched = || {
            let first = observed?.outcomes.iter().find(|o| o.value.call_id() == Some(e.call_id))?;
            match &first.value {
                Outcome::Dispatchable { args, .. } | Outcome::SchemaError { args, .. } => Some(args),
                Outcome::Failed { .. } => None,
            }
        };
        let judged = || match observed {
            Some(_) => judge_against(document, schema, dispatched()),
            None => judge(document, schema),
        };
        e.expect = match (fault.map(|f| f.at), stop) {
            (Some(fault_at), _) => Expect::Faulted {
                // Dispatch was allowed only if the call had finished before the fault and the
                // turn, as far as it had gone, was not truncated.
                may_dispatch: match (e.terminal_at, stop) {
                    (Some(t), s)
                        if t < fault_at && !s.is_some_and(|(r, at)| at < fault_at && r.is_truncating()) =>
                    {
                        match judged() {
                            Judged::Dispatch { args } => Some(args),
                            _ => None,
                        }
                    }
                    _ => None,
                },
            },
            (None, Some((reason, _))) if reason.is_truncating() => {
                Expect::Failed { reason: FailReason::Truncated }
            }
            (None, Some(_)) => match judged() {
                Judged::Unparseable => Expect::Failed { reason: FailReason::Unparseable },
                judged => Expect::Finished { judged },
            },
            (None, None) if e.terminal_at.is_some() => Expect::FinishedOrAbandoned { judged: judged() },
            (None, None) => Expect::Failed { reason: FailReason::Abandoned },
        };
    }
    let refusal = Refusal { hostile: profile.hostile, cap: profile.caps.passed_by(&calls) };
    Expected {
        ending,
        stop: stop.map(|(r, _)| r),
        ended_at: stop.map(|(_, at)| at).or(error_at),
        calls,
        fault,
        text_pieces,
        layout: per_call.then_some(layout),
        events: rendered.events.len() as u32,
        foreign,
        refusal,
    }
}

/// What a finished document is worth: the strict parse of exactly the model's bytes (an
/// empty document means `{}`), then the schema.
pub fn judge(document: &str, schema: Option<&Value>) -> Judged<'static> {
    let parsed =
        if document.is_empty() { Some(Value::Object(Default::default())) } else { parse_document(document) };
    let Some(args) = parsed else { return Judged::Unparseable };
    judged(Cow::Owned(args), schema)
}

/// Dispatch or schema error, as the schema takes the arguments.
fn judged<'a>(args: Cow<'a, Value>, schema: Option<&Value>) -> Judged<'a> {
    match schema {
        Some(schema) if !schema_accepts(schema, &args) => Judged::SchemaError { args },
        _ => Judged::Dispatch { args },
    }
}

/// [`judge`], with the value a subject dispatched the call with (if it did): the document is
/// read against it ([`crate::walk::same_as`]), and where the strict parse gives exactly that
/// value the verdict holds it instead of a parse of its own (the schema judges it, equal to
/// the parse); anything else is parsed as [`judge`] parses it. The same verdict as
/// [`judge`]'s, value for value.
pub(crate) fn judge_against<'a>(
    document: &str,
    schema: Option<&Value>,
    dispatched: Option<&'a Value>,
) -> Judged<'a> {
    match dispatched {
        Some(value) if !document.is_empty() && crate::walk::same_as(document, value) => {
            judged(Cow::Borrowed(value), schema)
        }
        // Nothing dispatched: most such documents were cut short, which needs no parse.
        None if !document.is_empty() && crate::walk::cut_short(document) => Judged::Unparseable,
        _ => judge(document, schema),
    }
}

pub use toolcert_schema::document::{depth, MAX_DEPTH};

/// The strict parse of one whole document: RFC 8259 JSON, nothing trailing, nested at most
/// [`MAX_DEPTH`] levels; a key written twice keeps its last value (as serde_json,
/// `JSON.parse` and Python's `json` do). `None`: unparseable.
pub fn parse_document(document: &str) -> Option<Value> {
    // `number::parse_strict` without the message: a refused document is not parsed again to
    // say why (a quarter of the documents judged are refused: cut, broken, too deep). Read
    // straight into the value, numbers checked as they are read ([`parse_document_serde`],
    // the same answer through serde_json, is the tests' oracle for it).
    toolcert_schema::document::parse_finite(document)
}

/// [`parse_document`] as serde_json reads it: the depth-bounded parse, then no number that
/// overflows a double. The tests' oracle of the hand-written parse.
#[doc(hidden)]
pub fn parse_document_serde(document: &str) -> Option<Value> {
    crate::expect::parse_nested(document).filter(|v| crate::number::overflowing(v).is_none())
}

// Eager: the oracle parses every judged document, deep ones included (see the function).
pub(crate) use toolcert_schema::document::parse_nested_eager as parse_nested;

/// Whether `args` satisfy `schema`. A schema that does not compile accepts nothing.
fn schema_accepts(schema: &Value, args: &Value) -> bool {
    toolcert_schema::compiled(schema).accepts(args)
}
