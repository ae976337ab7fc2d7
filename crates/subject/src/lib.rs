//! Subjects: the implementations under test, and what they report.
//!
//! The seam every implementation plugs into, and a leaf: it depends on no toolcert crate but
//! the vocabulary of `toolcert-scenario`, so renderers, decoders, the oracle and every
//! subject depend on it, never the other way round. A subject is fed at one of three
//! [`Level`]s: provider-neutral events ([`Accumulator`], [`Event`]), one dialect's decoded
//! wire messages ([`WireAccumulator`], [`WireMessage`]: an SSE event or a binary frame), or
//! the raw bytes in transport chunks ([`BytesAccumulator`]); the levels are independent, and
//! a subject implements only those it declares. A [`Factory`] makes one fresh
//! accumulator per stream, and a [`Subject`] makes one fresh factory per case (so a factory
//! that shares state between its accumulators can be caught, and a case never inherits
//! another case's state). The [`driver`] feeds streams to accumulators and records an
//! [`Observation`] per stream: every [`Outcome`], text piece and [`TurnError`], stamped with
//! how many units (events, SSE events or chunks) had been delivered when it was emitted, so
//! the oracle can judge early dispatch.

use serde::{Deserialize, Serialize};
pub use toolcert_scenario::{Dialect, EndingKind, Quirks, StreamEnd, Tool};

pub mod driver;
mod event;
pub mod wire;

pub use event::Event;
pub use wire::{Chunks, Frame, SseEvent, WireMessage};

/// What an accumulator decides about one announced call.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(tag = "outcome", rename_all = "snake_case")]
pub enum Outcome {
    /// Safe to run: the call finished, its buffer parsed strictly and met the schema.
    Dispatchable { call_id: String, name: String, args: serde_json::Value },
    /// The buffer parsed but violates the tool's schema: answer the call with an error so the
    /// model can correct it.
    SchemaError { call_id: String, name: String, args: serde_json::Value, errors: Vec<String> },
    /// Nothing to run.
    Failed {
        reason: FailReason,
        call_id: Option<String>,
        name: Option<String>,
        /// The argument buffer as received.
        raw: String,
    },
}

impl Outcome {
    pub fn call_id(&self) -> Option<&str> {
        match self {
            Outcome::Dispatchable { call_id, .. } | Outcome::SchemaError { call_id, .. } => Some(call_id),
            Outcome::Failed { call_id, .. } => call_id.as_deref(),
        }
    }

    pub fn name(&self) -> Option<&str> {
        match self {
            Outcome::Dispatchable { name, .. } | Outcome::SchemaError { name, .. } => Some(name),
            Outcome::Failed { name, .. } => name.as_deref(),
        }
    }

    /// A short label: `dispatchable`, `schema_error`, `failed(truncated)`, ...
    pub fn label(&self) -> String {
        match self {
            Outcome::Dispatchable { .. } => "dispatchable".into(),
            Outcome::SchemaError { .. } => "schema_error".into(),
            Outcome::Failed { reason, .. } => format!("failed({})", reason.as_str()),
        }
    }
}

/// Why a call was not dispatched.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum FailReason {
    /// The stream ended (or errored, or was cancelled) before the call's terminal event.
    Abandoned,
    /// The turn stopped on a truncating reason (max_tokens, length, incomplete, ...).
    Truncated,
    /// The finished buffer is not exactly one JSON document.
    Unparseable,
}

impl FailReason {
    pub fn as_str(self) -> &'static str {
        match self {
            FailReason::Abandoned => "abandoned",
            FailReason::Truncated => "truncated",
            FailReason::Unparseable => "unparseable",
        }
    }
}

/// An error that fails the whole turn. Compared by [`ErrorClass`], never by message.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize, thiserror::Error)]
#[error("{class}: {detail}")]
pub struct TurnError {
    pub class: ErrorClass,
    pub detail: String,
}

impl TurnError {
    pub fn new(class: ErrorClass, detail: impl Into<String>) -> TurnError {
        TurnError { class, detail: detail.into() }
    }
}

/// The classes of turn error.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ErrorClass {
    /// Protocol: a fragment for an index that was never announced.
    UnannouncedIndex,
    /// Protocol: an announcement for an index already announced in this stream.
    DuplicateAnnouncement,
    /// Protocol: a fragment (or any call event) after the call's terminal event.
    FragmentAfterStop,
    /// Protocol: a terminal event whose repeated arguments differ from the fragments.
    DoneMismatch,
    /// Protocol: an event the subject could not read (wire and bytes levels).
    Malformed,
    /// The provider sent an error event.
    Upstream,
    /// The subject failed the turn because it was truncated (as some SDKs do on `length`).
    Truncated,
    /// The subject failed the turn because the stream ended early (disconnect, cancel).
    Incomplete,
    /// The stream passed a cap the subject documents (its `caps`: calls, argument bytes,
    /// fragments, nesting depth): a choice, not a fault, when the stream truly passed it.
    Limit,
    /// Anything else the subject raised.
    Other,
}

impl ErrorClass {
    /// Every class, in declaration order.
    pub const ALL: [ErrorClass; 10] = [
        ErrorClass::UnannouncedIndex,
        ErrorClass::DuplicateAnnouncement,
        ErrorClass::FragmentAfterStop,
        ErrorClass::DoneMismatch,
        ErrorClass::Malformed,
        ErrorClass::Upstream,
        ErrorClass::Truncated,
        ErrorClass::Incomplete,
        ErrorClass::Limit,
        ErrorClass::Other,
    ];

    pub fn as_str(self) -> &'static str {
        match self {
            ErrorClass::UnannouncedIndex => "unannounced_index",
            ErrorClass::DuplicateAnnouncement => "duplicate_announcement",
            ErrorClass::FragmentAfterStop => "fragment_after_stop",
            ErrorClass::DoneMismatch => "done_mismatch",
            ErrorClass::Malformed => "malformed",
            ErrorClass::Upstream => "upstream",
            ErrorClass::Truncated => "truncated",
            ErrorClass::Incomplete => "incomplete",
            ErrorClass::Limit => "limit",
            ErrorClass::Other => "other",
        }
    }

    /// A defect of the stream that the accumulator must refuse.
    pub fn is_protocol(self) -> bool {
        matches!(
            self,
            ErrorClass::UnannouncedIndex
                | ErrorClass::DuplicateAnnouncement
                | ErrorClass::FragmentAfterStop
                | ErrorClass::DoneMismatch
                | ErrorClass::Malformed
        )
    }
}

impl std::fmt::Display for ErrorClass {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}

/// One slot of the assembled message, in the subject's order.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "slot", rename_all = "snake_case")]
pub enum Slot {
    Text { text: String },
    Call { call_id: String },
}

/// What a stream is for: the request's tools (so a subject can validate schemas) and, at the
/// wire and bytes levels, the dialect it is spoken in.
#[derive(Clone, Copy, Debug)]
pub struct StreamSpec<'a> {
    pub tools: &'a [Tool],
    pub level: Level,
    /// Meaningful at the wire and bytes levels.
    pub dialect: Dialect,
    pub quirks: Quirks,
}

/// What a subject is fed.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Level {
    /// Provider-neutral events ([`Event`]).
    #[default]
    Events,
    /// One dialect's wire messages, decoded from the bytes ([`WireMessage`]: SSE events or
    /// binary frames).
    Wire,
    /// Raw bytes (SSE or a binary framing) in transport chunks cut anywhere.
    Bytes,
}

impl Level {
    pub const ALL: [Level; 3] = [Level::Events, Level::Wire, Level::Bytes];

    pub fn name(self) -> &'static str {
        match self {
            Level::Events => "events",
            Level::Wire => "wire",
            Level::Bytes => "bytes",
        }
    }
}

impl std::fmt::Display for Level {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.name())
    }
}

impl std::str::FromStr for Level {
    type Err = String;
    fn from_str(s: &str) -> Result<Level, String> {
        Level::ALL
            .into_iter()
            .find(|l| l.name() == s)
            .ok_or_else(|| format!("unknown level `{s}` (expected events, wire or bytes)"))
    }
}

/// A wire-level accumulator: takes one dialect's wire messages in order.
pub trait WireAccumulator {
    fn on_wire(&mut self, message: &WireMessage, out: &mut Emit) -> Result<(), TurnError>;
    fn finish(&mut self, end: StreamEnd, out: &mut Emit) -> Result<(), TurnError>;
}

/// A bytes-level accumulator: takes the raw byte stream (SSE, or the dialect's binary
/// framing), in transport chunks cut anywhere (inside a UTF-8 character, inside `data:`,
/// between `\r` and `\n`, inside a frame's prelude, headers, payload or checksum).
pub trait BytesAccumulator {
    fn on_bytes(&mut self, chunk: &[u8], out: &mut Emit) -> Result<(), TurnError>;
    fn finish(&mut self, end: StreamEnd, out: &mut Emit) -> Result<(), TurnError>;
}

/// An events-level accumulator: one per stream.
///
/// It takes the stream's events in order and may emit outcomes at any point (emitting one
/// before the call's terminal event is early dispatch, which the oracle judges). Returning an
/// error fails the turn: the stream is not fed further and `finish` is not called.
pub trait Accumulator {
    fn on_event(&mut self, event: &Event<'_>, out: &mut Emit) -> Result<(), TurnError>;

    /// The stream has ended (cleanly, by disconnect or by cancellation): emit every outcome
    /// not yet emitted, and (optionally, [`Emit::ending`]) how the turn ended.
    fn finish(&mut self, end: StreamEnd, out: &mut Emit) -> Result<(), TurnError>;
}

impl<A: Accumulator + ?Sized> Accumulator for Box<A> {
    fn on_event(&mut self, event: &Event<'_>, out: &mut Emit) -> Result<(), TurnError> {
        (**self).on_event(event, out)
    }
    fn finish(&mut self, end: StreamEnd, out: &mut Emit) -> Result<(), TurnError> {
        (**self).finish(end, out)
    }
}

/// Makes one fresh accumulator per stream, at the level the stream is fed at. Only the
/// levels the [`Subject`] declares are asked for, so a factory implements only those (a
/// bytes-only subject, only [`Factory::make_bytes`]).
pub trait Factory {
    /// An events-level accumulator.
    fn make(&self, _spec: &StreamSpec<'_>) -> Option<Box<dyn Accumulator>> {
        None
    }

    /// A wire-level accumulator for `spec.dialect`.
    fn make_wire(&self, _spec: &StreamSpec<'_>) -> Option<Box<dyn WireAccumulator>> {
        None
    }

    /// A bytes-level accumulator for `spec.dialect`.
    fn make_bytes(&self, _spec: &StreamSpec<'_>) -> Option<Box<dyn BytesAccumulator>> {
        None
    }
}

impl<F, A> Factory for F
where
    F: Fn(&StreamSpec<'_>) -> A,
    A: Accumulator + 'static,
{
    fn make(&self, spec: &StreamSpec<'_>) -> Option<Box<dyn Accumulator>> {
        Some(Box::new(self(spec)))
    }
}

/// An implementation under test: makes one fresh factory per case.
pub trait Subject {
    /// A short name for reports (`builtin:reference`, `my-crate`).
    fn name(&self) -> String;
    fn factory(&self) -> Box<dyn Factory>;

    /// The levels it can be fed at.
    fn levels(&self) -> Vec<Level> {
        vec![Level::Events]
    }

    /// Where a run over all its settings certifies it: each declared level; below the events
    /// level each dialect in each of its server profiles (docs/SPEC.md, "Server profiles").
    /// A subject that speaks fewer dialects or profiles says so here.
    fn settings(&self) -> Vec<(Level, driver::Speech)> {
        all_settings(&self.levels(), &Dialect::ALL, &|_| true)
    }

    /// What it says about itself, for the report's header: a subprocess subject's
    /// `implementation` (name, language, version, ...) and `protocol` version. Empty by
    /// default.
    fn metadata(&self) -> serde_json::Map<String, serde_json::Value> {
        serde_json::Map::new()
    }

    /// Runs a whole case at once, for subjects that cannot be fed unit by unit cheaply (a
    /// subprocess answers one request per case). `None`, the default: the runner drives
    /// [`Subject::factory`]'s accumulators with [`driver::drive`]. An implementation must give
    /// what `drive` would: one observation per stream, stamps counting units of the level.
    fn observe(
        &self,
        _case: &toolcert_scenario::Case,
        _inputs: &[driver::Input<'_>],
        _speech: driver::Speech,
    ) -> Option<Vec<Observation>> {
        None
    }

    /// The subject's own time for its last [`Subject::observe`], measured on its side
    /// around the accumulation (a subprocess's `elapsed_ns`), for `toolcert bench`. `None`,
    /// the default: the subject does not say (an in-process subject is timed directly).
    fn last_elapsed(&self) -> Option<std::time::Duration> {
        None
    }

    /// The most heap its last [`Subject::observe`] held at once, over what it held before, as
    /// the subject measures it (a subprocess's `peak_bytes`), for `toolcert bench --bounded`.
    /// `None`, the default: not measured there (an in-process subject is measured directly).
    fn last_peak_bytes(&self) -> Option<u64> {
        None
    }
}

/// A boxed subject (`toolcert::subject_by_name` gives one) is a subject.
impl<S: Subject + ?Sized> Subject for Box<S> {
    fn name(&self) -> String {
        (**self).name()
    }
    fn factory(&self) -> Box<dyn Factory> {
        (**self).factory()
    }
    fn levels(&self) -> Vec<Level> {
        (**self).levels()
    }
    fn settings(&self) -> Vec<(Level, driver::Speech)> {
        (**self).settings()
    }
    fn metadata(&self) -> serde_json::Map<String, serde_json::Value> {
        (**self).metadata()
    }
    fn observe(
        &self,
        case: &toolcert_scenario::Case,
        inputs: &[driver::Input<'_>],
        speech: driver::Speech,
    ) -> Option<Vec<Observation>> {
        (**self).observe(case, inputs, speech)
    }
    fn last_elapsed(&self) -> Option<std::time::Duration> {
        (**self).last_elapsed()
    }
    fn last_peak_bytes(&self) -> Option<u64> {
        (**self).last_peak_bytes()
    }
}

/// The settings of `levels`: the events level once, the wire and bytes levels in each of
/// `dialects`, each in every server profile of the dialect that `reads` accepts (its
/// provider's own profile always).
pub fn all_settings(
    levels: &[Level],
    dialects: &[Dialect],
    reads: &dyn Fn(&toolcert_scenario::ServerProfile) -> bool,
) -> Vec<(Level, driver::Speech)> {
    let mut out = Vec::new();
    for &level in Level::ALL.iter().filter(|l| levels.contains(l)) {
        if level == Level::Events {
            out.push((level, driver::Speech::default()));
            continue;
        }
        for &dialect in Dialect::ALL.iter().filter(|d| dialects.contains(d)) {
            for p in dialect.profiles().filter(|p| p.quirks.is_plain() || reads(p)) {
                out.push((level, driver::Speech { dialect, quirks: p.quirks }));
            }
        }
    }
    out
}

/// A subject whose factories share nothing: each stream gets `make(spec)`.
pub struct FnSubject<F> {
    name: String,
    make: F,
}

/// Wraps an accumulator constructor as a [`Subject`].
///
/// ```
/// # use toolcert_subject::*;
/// struct Nothing;
/// impl Accumulator for Nothing {
///     fn on_event(&mut self, _: &Event<'_>, _: &mut Emit) -> Result<(), TurnError> { Ok(()) }
///     fn finish(&mut self, _: StreamEnd, _: &mut Emit) -> Result<(), TurnError> { Ok(()) }
/// }
/// let subject = subject_fn("nothing", |_spec: &StreamSpec<'_>| Nothing);
/// assert_eq!(subject.name(), "nothing");
/// ```
pub fn subject_fn<F, A>(name: impl Into<String>, make: F) -> FnSubject<F>
where
    F: Fn(&StreamSpec<'_>) -> A + Clone + 'static,
    A: Accumulator + 'static,
{
    FnSubject { name: name.into(), make }
}

impl<F, A> Subject for FnSubject<F>
where
    F: Fn(&StreamSpec<'_>) -> A + Clone + 'static,
    A: Accumulator + 'static,
{
    fn name(&self) -> String {
        self.name.clone()
    }
    fn factory(&self) -> Box<dyn Factory> {
        Box::new(self.make.clone())
    }
}

/// The room the text surface starts with (see [`Emit::text`]).
const TEXT_ROOM: usize = 64;

/// Where an accumulator puts what it decides. The driver stamps each item with the number of
/// events delivered when it was emitted.
#[derive(Debug, Default)]
pub struct Emit {
    pub(crate) delivered: u32,
    pub(crate) at_finish: bool,
    pub(crate) obs: Observation,
}

impl Emit {
    /// What was emitted so far, stamped. For code that feeds an accumulator itself instead
    /// of through the [`driver`] (a bench of the accumulator alone, a hand-written test):
    /// stamps count nothing as delivered then, since only the driver counts units.
    pub fn into_observation(self) -> Observation {
        self.obs
    }

    /// Reports an outcome for a call.
    pub fn outcome(&mut self, outcome: Outcome) {
        let at = self.stamp();
        self.obs.outcomes.push(Timed { at, value: outcome });
    }

    /// Appends prose to the text surface the user reads.
    pub fn text(&mut self, text: &str) {
        // A turn's text comes in pieces: room for a few at the first, where growing from the
        // first piece's exact size reallocated on the next.
        if self.obs.text.capacity() == 0 {
            self.obs.text.reserve(text.len().max(TEXT_ROOM));
        }
        self.obs.text.push_str(text);
    }

    /// Reports the assembled message's slots in order (optional: lets the oracle check that
    /// block order is kept).
    pub fn layout(&mut self, slots: Vec<Slot>) {
        self.obs.layout = Some(slots);
    }

    /// Reports how the turn ended, as the subject would tell its caller (optional: a subject
    /// that reports it is judged by ACC-ENDING; the last report of a stream counts).
    pub fn ending(&mut self, ending: ReportedEnding) {
        let at = self.stamp();
        self.obs.ending = Some(Timed { at, value: ending });
    }

    fn stamp(&self) -> Stamp {
        let before = if self.at_finish { self.delivered } else { self.delivered.saturating_sub(1) };
        Stamp { delivered: self.delivered, before, at_finish: self.at_finish }
    }
}

/// When something was emitted.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Stamp {
    /// Events delivered (including the one being handled) when it was emitted.
    pub delivered: u32,
    /// Events delivered before the unit being handled began: a unit of the wire or bytes
    /// level can carry several events, so what was emitted happened somewhere between.
    #[serde(default)]
    pub before: u32,
    /// Emitted from `finish`.
    pub at_finish: bool,
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Timed<T> {
    pub at: Stamp,
    #[serde(flatten)]
    pub value: T,
}

/// Everything a subject reported for one stream.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct Observation {
    pub outcomes: Vec<Timed<Outcome>>,
    /// The text surface: every text piece the subject emitted, concatenated.
    pub text: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub layout: Option<Vec<Slot>>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub error: Option<Timed<TurnError>>,
    /// The subject panicked (or, out of process, crashed); the message.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub crash: Option<String>,
    /// How the subject says the turn ended; `None` for a subject that cannot say.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub ending: Option<Timed<ReportedEnding>>,
    /// What the subject's runtime gained, lost or changed while this stream was fed
    /// (`Object.prototype.arguments`): an out-of-process subject's adapter package checks
    /// after each stream. Empty: checked, nothing found; `None`: not checked.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub pollution: Option<Vec<String>>,
}

/// How a subject says a turn ended: what its caller is told (a `finish_reason`, a
/// `stop_reason`, an exception for a dropped stream).
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct ReportedEnding {
    /// Complete (a clean stop), truncated (a stop that says the output was cut), abandoned
    /// (no terminal event: the stream simply stopped) or errored (an error event).
    pub ending: EndingKind,
    /// The stop reason as the provider spelled it (`end_turn`, `length`, `completed`), when
    /// the subject reports one. A subject must not report one the stream never carried.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub stop_reason: Option<String>,
}

impl ReportedEnding {
    pub fn new(ending: EndingKind, stop_reason: Option<&str>) -> ReportedEnding {
        ReportedEnding { ending, stop_reason: stop_reason.map(str::to_string) }
    }
}
