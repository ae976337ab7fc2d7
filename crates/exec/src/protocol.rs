//! The messages of toolcert's subprocess protocol, as serde types.
//!
//! One JSON document per line, UTF-8, over the subject's stdin (requests, tagged by `cmd`)
//! and stdout (replies, one per request but `stop`). `docs/PROTOCOL.md` is the
//! specification and `docs/schemas/*.schema.json` hold a JSON Schema for every message; the
//! crate's tests check that these types and the schemas agree. Unknown fields are ignored
//! on both sides, so a later minor revision can add fields without a new version.
//!
//! Expectations never travel: a `run` carries each stream's tools, its units at the
//! configured level and how its transport closed, and the order in which the streams'
//! units are delivered. Nothing of the scenario (what the model wrote, where the cuts fall,
//! what a correct subject reports) reaches the subject.

use std::borrow::Cow;

use serde::{Deserialize, Serialize};
use toolcert_render::Event;
use toolcert_scenario::{Block, Case, Dialect, Quirks, StreamEnd, StreamSchedule, Tool, Turn};
use toolcert_subject::driver::{Input, Units};
use toolcert_subject::{ErrorClass, Level, Outcome, ReportedEnding, Slot, TurnError, WireMessage};

/// The protocol version this crate speaks. A subject that answers `start` with another one
/// is refused: the version changes exactly when a message changes meaning.
pub const PROTOCOL_VERSION: u32 = 1;

/// A request, harness → subject.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(tag = "cmd", rename_all = "snake_case")]
pub enum Request<'a> {
    /// The first message; the subject answers with [`StartReply`].
    Start(Start),
    /// Sets the level, dialect and profile of the runs that follow; answered with
    /// [`ConfigureReply`].
    Configure(Configure),
    /// One case; answered with [`RunReply`].
    Run(Run<'a>),
    /// The subject exits (status 0), without a reply.
    Stop,
}

/// `{"cmd": "start", "version": 1, "toolcert": "0.1.0"}`
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Start {
    /// The protocol version the harness speaks.
    pub version: u32,
    /// The harness's own version, for the subject's logs.
    pub toolcert: String,
}

/// `{"cmd": "configure", "level": "bytes", "dialect": "anthropic", ...}`
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Configure {
    pub level: Level,
    /// The dialect the wire and bytes levels speak (sent at the events level too, where it
    /// means nothing).
    pub dialect: Dialect,
    pub quirks: Quirks,
    pub profile: ProfileMsg,
}

/// The oracle options a subject needs to know.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct ProfileMsg {
    /// Validate arguments against their tool's JSON Schema (a `SchemaError` when they
    /// violate it). Only sent true to a subject with the `schema` capability.
    #[serde(default)]
    pub schema: bool,
    /// Report each run's peak heap (`peak_bytes` in the run reply): sent by `toolcert bench
    /// --bounded` only, since measuring it may slow a runtime down (Python's tracemalloc).
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub memory: bool,
}

/// `{"cmd": "run", "seq": 7, "case": {...}}`
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Run<'a> {
    /// Opaque to the subject: echoed back in the reply.
    pub seq: u64,
    pub case: RunCase<'a>,
}

/// A case with its expectations stripped.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct RunCase<'a> {
    /// One entry per stream; each is fed to its own fresh accumulator.
    pub streams: Vec<RunStream<'a>>,
    /// The delivery order: `[s, k]` delivers unit `k` of stream `s`; `[s, n]` where `n` is
    /// the stream's unit count ends it (the subject calls its accumulator's finish). Every
    /// unit and every end appears exactly once, each stream's in increasing `k`.
    pub order: Vec<[u32; 2]>,
}

/// One stream of a run.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct RunStream<'a> {
    /// The request's tools, with their JSON Schemas when the case has them.
    #[serde(default)]
    pub tools: Cow<'a, [Tool]>,
    /// The units at the configured level.
    pub units: Vec<Unit<'a>>,
    /// How the transport closed after the last unit.
    pub end: StreamEnd,
}

/// One unit of a stream: what one step delivers.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(untagged)]
pub enum Unit<'a> {
    /// Events level: a provider-neutral event (`{"type": "args_delta", ...}`).
    Event(Event<'a>),
    /// Wire level: one decoded SSE event of the dialect.
    Wire(WireUnit<'a>),
    /// Bytes level: one transport chunk of the byte stream.
    Bytes(Payload<'a>),
    /// Wire level, a dialect with a binary framing: one decoded frame.
    Frame(FrameUnit<'a>),
}

/// A binary framing's message: `{"headers": [[":event-type", "messageStart"], ...],
/// "payload": {"text": "{...}"}}` (the payload as [`Payload`]: text when it is UTF-8).
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct FrameUnit<'a> {
    pub headers: Vec<(Cow<'a, str>, Cow<'a, str>)>,
    pub payload: Payload<'a>,
}

/// An SSE event: `{"event": "content_block_delta", "data": "{...}", "id": null}`.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct WireUnit<'a> {
    /// The `event:` field; null when absent (the type `message`).
    #[serde(default)]
    pub event: Option<Cow<'a, str>>,
    /// The `data` lines joined with `\n`.
    pub data: Cow<'a, str>,
    /// The event's own `id:` field; null when absent.
    #[serde(default)]
    pub id: Option<Cow<'a, str>>,
}

/// Raw bytes: `{"text": ...}` when they are UTF-8, otherwise `{"bytes": base64}` (a chunk
/// cut inside a multi-byte character is not UTF-8, and must arrive byte for byte).
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(untagged)]
pub enum Payload<'a> {
    Text { text: Cow<'a, str> },
    Bytes { bytes: String },
}

impl<'a> Payload<'a> {
    /// `{"text": ...}` when `bytes` are UTF-8, else base64.
    pub fn of(bytes: &'a [u8]) -> Payload<'a> {
        match std::str::from_utf8(bytes) {
            Ok(text) => Payload::Text { text: Cow::Borrowed(text) },
            Err(_) => Payload::Bytes { bytes: crate::base64::encode(bytes) },
        }
    }

    /// The bytes carried; `None` when `bytes` is not base64.
    pub fn to_bytes(&self) -> Option<Vec<u8>> {
        match self {
            Payload::Text { text } => Some(text.as_bytes().to_vec()),
            Payload::Bytes { bytes } => crate::base64::decode(bytes),
        }
    }
}

impl<'a> Run<'a> {
    /// The `run` request of `case` fed as `inputs` (one per stream, all at one level): each
    /// stream's tools and units, and the order [`toolcert_subject::driver::drive`] would
    /// deliver them in.
    pub fn for_case(seq: u64, case: &'a Case, inputs: &'a [Input<'a>]) -> Run<'a> {
        let streams = inputs
            .iter()
            .enumerate()
            .map(|(s, input)| RunStream {
                tools: offered_tools(case.streams.get(s)),
                units: units(input.units),
                end: input.end,
            })
            .collect();
        let lens: Vec<usize> = inputs.iter().map(|i| i.units.len()).collect();
        Run { seq, case: RunCase { streams, order: delivery_order(&case.schedule, &lens) } }
    }
}

/// The tools a stream's request offered: the turn's own, or, for a turn that declares none
/// (most named cases), one tool per name its calls use, without a schema. A real request
/// always offered the tools the model calls, and an agent layer runs only the tools it was
/// given: without them it would refuse every call as an unknown tool.
fn offered_tools(turn: Option<&Turn>) -> Cow<'_, [Tool]> {
    let Some(turn) = turn else { return Cow::Borrowed(&[]) };
    if !turn.tools.is_empty() {
        return Cow::Borrowed(&turn.tools);
    }
    let mut names: Vec<&str> = Vec::new();
    for block in &turn.blocks {
        if let Block::Call(call) = block {
            if !names.contains(&call.name.as_str()) {
                names.push(&call.name);
            }
        }
    }
    Cow::Owned(names.into_iter().map(|name| Tool { name: name.to_string(), schema: None }).collect())
}

fn units<'a>(units: Units<'a>) -> Vec<Unit<'a>> {
    match units {
        Units::Events(events) => events.iter().map(|e| Unit::Event(e.clone())).collect(),
        Units::Wire(events) => events
            .iter()
            .map(|m: &'a WireMessage| match m {
                WireMessage::Sse(e) => Unit::Wire(WireUnit {
                    event: e.event.as_deref().map(Cow::Borrowed),
                    data: Cow::Borrowed(&e.data),
                    id: e.id.as_deref().map(Cow::Borrowed),
                }),
                WireMessage::Frame(f) => Unit::Frame(FrameUnit {
                    headers: f
                        .headers
                        .iter()
                        .map(|(n, v)| (Cow::Borrowed(&n[..]), Cow::Borrowed(&v[..])))
                        .collect(),
                    payload: Payload::of(&f.payload),
                }),
            })
            .collect(),
        Units::Bytes(chunks) => chunks.iter().map(|c| Unit::Bytes(Payload::of(c))).collect(),
    }
}

/// The steps [`toolcert_subject::driver::drive`] takes for streams of these lengths: `[s, k]`
/// delivers unit `k` of stream `s`, `[s, lens[s]]` finishes it (right after its last unit,
/// or when it is made if it has none).
pub fn delivery_order(schedule: &StreamSchedule, lens: &[usize]) -> Vec<[u32; 2]> {
    let mut next = vec![0usize; lens.len()];
    let mut order = Vec::with_capacity(lens.iter().map(|l| l + 1).sum());
    // One step of stream `s`: its next unit, and its end right after the last one.
    let mut step = |s: usize, order: &mut Vec<[u32; 2]>| {
        if next[s] >= lens[s] {
            return false;
        }
        order.push([s as u32, next[s] as u32]);
        next[s] += 1;
        if next[s] == lens[s] {
            order.push([s as u32, lens[s] as u32]);
        }
        true
    };
    match schedule {
        StreamSchedule::Sequential => {
            for (s, &len) in lens.iter().enumerate() {
                if len == 0 {
                    order.push([s as u32, 0]);
                }
                while step(s, &mut order) {}
            }
        }
        StreamSchedule::Concurrent(steps) => {
            // Every accumulator is made first; those with nothing to read finish at once.
            for (s, &len) in lens.iter().enumerate() {
                if len == 0 {
                    order.push([s as u32, 0]);
                }
            }
            let n = lens.len().max(1);
            if !lens.is_empty() {
                for &o in steps {
                    step(o as usize % n, &mut order);
                }
            }
            let mut progressed = true;
            while progressed {
                progressed = false;
                for s in 0..lens.len() {
                    progressed |= step(s, &mut order);
                }
            }
        }
    }
    order
}

/// The answer to `start`: `{"version": 1, "implementation": {...}}`.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct StartReply {
    /// The protocol version the subject speaks; it must equal the harness's.
    pub version: u32,
    pub implementation: Implementation,
}

/// What the subject says about itself; shown in reports.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Implementation {
    pub name: String,
    pub language: String,
    #[serde(default)]
    pub version: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub homepage: Option<String>,
    /// The language runtime's version (`3.11.7`, `v20.20.2`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub language_version: Option<String>,
    /// The levels it can be fed at: `events`, `wire`, `bytes`. Names this harness does not
    /// know are ignored.
    #[serde(default)]
    pub levels: Vec<String>,
    /// The dialects its wire and bytes levels speak: `anthropic`, `openai-chat`,
    /// `openai-responses`.
    #[serde(default)]
    pub dialects: Vec<String>,
    /// The quirk flags it reads (`chat_index_zero`, `chat_no_index`, ... : the fields of
    /// `toolcert_scenario::Quirks`); it is certified in each server profile whose flags it
    /// declares (docs/PROTOCOL.md).
    #[serde(default)]
    pub quirks: Vec<String>,
    /// Optional abilities: `schema` (validates arguments against tool schemas).
    #[serde(default)]
    pub capabilities: Vec<String>,
    /// For an adapter around a real SDK: the caller policy it applies to what the SDK hands
    /// over (`as-handed-over`, `documented`: docs/PROTOCOL.md). Shown in reports, not judged.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub policy: Option<String>,
    /// The SDK documentation the `documented` policy follows.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub policy_doc: Option<String>,
    /// The caps it documents (`{"calls": 128, "argument_bytes": 16777216, "fragments": 65536,
    /// "depth": 128}`): a stream past one may be refused with a turn error of class `limit`.
    #[serde(default, skip_serializing_if = "toolcert_oracle::Caps::is_empty")]
    pub caps: toolcert_oracle::Caps,
}

impl Implementation {
    /// The declared levels this harness knows, in its order.
    pub fn known_levels(&self) -> Vec<Level> {
        Level::ALL.into_iter().filter(|l| self.levels.iter().any(|s| s == l.name())).collect()
    }

    /// The declared dialects this harness knows, in its order.
    pub fn known_dialects(&self) -> Vec<Dialect> {
        Dialect::ALL.into_iter().filter(|d| self.dialects.iter().any(|s| s == d.name())).collect()
    }

    pub fn has_capability(&self, name: &str) -> bool {
        self.capabilities.iter().any(|c| c == name)
    }

    pub fn has_quirk(&self, name: &str) -> bool {
        self.quirks.iter().any(|c| c == name)
    }
}

/// The answer to `configure`: `{"ok": true}`, or `{"ok": false, "reason": ...}` when the
/// subject cannot run at that setting.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct ConfigureReply {
    pub ok: bool,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reason: Option<String>,
}

/// The answer to `run`: the results, or why the subject skipped the case or failed on it.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(try_from = "RawRunReply", into = "RawRunReply")]
pub struct RunReply {
    /// The `seq` of the run it answers.
    pub seq: u64,
    pub body: RunBody,
    /// `"elapsed_ns"`, optional: the subject's own time for the run, in nanoseconds of its
    /// monotonic clock, measured around the accumulation (from the first unit fed to the
    /// last finish), so process start, decoding the request and the pipes are excluded.
    /// `toolcert bench` needs it from an out-of-process subject; `certify` ignores it.
    pub elapsed_ns: Option<u64>,
    /// `"peak_bytes"`, optional: the most heap the accumulation held at once over what was
    /// held before it, as the adapter measures it (asked for by `profile.memory`).
    pub peak_bytes: Option<u64>,
}

/// What a run gave.
#[derive(Clone, Debug, PartialEq)]
pub enum RunBody {
    /// `"results": [...]`, one per stream in the run's order.
    Results(Vec<StreamResult>),
    /// `"skipped": true, "reason": ...`: the subject cannot run this case.
    Skipped { reason: String },
    /// `"errored": true, "context": {...}`: the subject failed on the case itself (an
    /// exception in the adapter, not in the accumulator).
    Errored { context: ErrorContext },
}

/// Where an `errored` reply says it went wrong.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct ErrorContext {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub message: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub traceback: Option<String>,
}

/// The wire form of [`RunReply`]: exactly one of `results`, `skipped: true` and
/// `errored: true`.
#[derive(Clone, Debug, Default, Serialize, Deserialize)]
struct RawRunReply {
    seq: u64,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    results: Option<Vec<StreamResult>>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    skipped: Option<bool>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    reason: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    errored: Option<bool>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    context: Option<ErrorContext>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    elapsed_ns: Option<u64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    peak_bytes: Option<u64>,
}

impl TryFrom<RawRunReply> for RunReply {
    type Error = String;

    fn try_from(raw: RawRunReply) -> Result<RunReply, String> {
        let body = match (raw.results, raw.skipped == Some(true), raw.errored == Some(true)) {
            (Some(results), false, false) => RunBody::Results(results),
            (None, true, false) => RunBody::Skipped { reason: raw.reason.unwrap_or_default() },
            (None, false, true) => RunBody::Errored { context: raw.context.unwrap_or_default() },
            (None, false, false) => {
                return Err("a run reply needs `results`, `skipped: true` or `errored: true`".into())
            }
            _ => return Err("a run reply has more than one of `results`, `skipped` and `errored`".into()),
        };
        Ok(RunReply { seq: raw.seq, body, elapsed_ns: raw.elapsed_ns, peak_bytes: raw.peak_bytes })
    }
}

impl From<RunReply> for RawRunReply {
    fn from(r: RunReply) -> RawRunReply {
        let mut raw = RawRunReply {
            seq: r.seq,
            elapsed_ns: r.elapsed_ns,
            peak_bytes: r.peak_bytes,
            ..RawRunReply::default()
        };
        match r.body {
            RunBody::Results(results) => raw.results = Some(results),
            RunBody::Skipped { reason } => {
                raw.skipped = Some(true);
                raw.reason = Some(reason);
            }
            RunBody::Errored { context } => {
                raw.errored = Some(true);
                raw.context = Some(context);
            }
        }
        raw
    }
}

/// What the subject reported for one stream.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct StreamResult {
    /// Every outcome, in the order emitted.
    #[serde(default)]
    pub outcomes: Vec<Emitted<Outcome>>,
    /// Every text piece emitted, concatenated.
    #[serde(default)]
    pub text: String,
    /// The assembled message's slots, when the subject reports them.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub layout: Option<Vec<Slot>>,
    /// The turn error that ended the stream, if any.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub error: Option<Emitted<TurnError>>,
    /// The accumulator itself crashed (an unexpected exception): the message.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub crash: Option<String>,
    /// How the subject says the turn ended (optional: absent for a subject that cannot say).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub ending: Option<Emitted<ReportedEnding>>,
    /// What the runtime gained, lost or changed while the stream was read (the adapter
    /// packages check after each stream); absent when the subject does not check.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub pollution: Option<Vec<String>>,
}

/// Something emitted, with when: `units` of the stream had been delivered (counting the one
/// being handled), and whether it came from the accumulator's finish.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Emitted<T> {
    #[serde(flatten)]
    pub value: T,
    pub units: u32,
    #[serde(default)]
    pub at_finish: bool,
}

impl<T> Emitted<T> {
    /// The driver's stamp for it.
    pub fn stamp(&self) -> toolcert_subject::Stamp {
        let before = if self.at_finish { self.units } else { self.units.saturating_sub(1) };
        toolcert_subject::Stamp { delivered: self.units, before, at_finish: self.at_finish }
    }
}

/// The error classes a reply may name, for documents and schemas.
pub const ERROR_CLASSES: [ErrorClass; 10] = ErrorClass::ALL;

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_run_reply_has_exactly_one_body() {
        let both = r#"{"seq": 1, "results": [], "skipped": true}"#;
        assert!(serde_json::from_str::<RunReply>(both).is_err());
        let none = r#"{"seq": 1}"#;
        let e = serde_json::from_str::<RunReply>(none).unwrap_err().to_string();
        assert!(e.contains("needs `results`"), "{e}");
        let skipped: RunReply =
            serde_json::from_str(r#"{"seq": 2, "skipped": true, "reason": "no"}"#).unwrap();
        assert_eq!(skipped.body, RunBody::Skipped { reason: "no".into() });
    }

    #[test]
    fn unknown_fields_are_ignored() {
        let reply: StartReply = serde_json::from_str(
            r#"{"version": 1, "later": [1], "implementation": {"name": "x", "language": "y", "os": "z"}}"#,
        )
        .unwrap();
        assert_eq!(reply.implementation.name, "x");
        let r: RunReply = serde_json::from_str(
            r#"{"seq": 3, "results": [{"outcomes": [{"outcome": "failed", "reason": "abandoned",
                "call_id": "c", "name": "n", "raw": "{", "units": 2, "extra": true}], "more": 1}]}"#,
        )
        .unwrap();
        let RunBody::Results(results) = r.body else { panic!() };
        assert_eq!(results[0].outcomes[0].units, 2);
        assert!(!results[0].outcomes[0].at_finish);
    }

    #[test]
    fn reply_arguments_keep_every_number_exactly() {
        // docs/SPEC.md, the number rule: the harness compares the values a subject sent, so
        // it must not round them through a double on the way in.
        let r: RunReply = serde_json::from_str(
            r#"{"seq": 4, "results": [{"outcomes": [{"outcome": "dispatchable", "call_id": "c",
                "name": "n", "args": {"a": -0.0, "b": 9007199254740993, "c": 0.1000000000000000000001,
                "d": [1.5e-7, 123456789012345678901234567890]}, "units": 2}]}]}"#,
        )
        .unwrap();
        let RunBody::Results(results) = r.body else { panic!() };
        let Outcome::Dispatchable { args, .. } = &results[0].outcomes[0].value else { panic!() };
        assert_eq!(
            args.to_string(),
            r#"{"a":-0.0,"b":9007199254740993,"c":0.1000000000000000000001,"d":[1.5e-7,123456789012345678901234567890]}"#
        );
    }

    #[test]
    fn payloads_keep_bytes_that_are_not_utf8() {
        let cut = "é".as_bytes();
        let p = Payload::of(&cut[..1]);
        assert!(matches!(p, Payload::Bytes { .. }));
        assert_eq!(p.to_bytes().unwrap(), &cut[..1]);
        assert!(matches!(Payload::of(b"data: x\n"), Payload::Text { .. }));
    }

    #[test]
    fn stamps_match_the_driver() {
        let e = Emitted { value: (), units: 3, at_finish: false };
        assert_eq!((e.stamp().delivered, e.stamp().before), (3, 2));
        let f = Emitted { value: (), units: 3, at_finish: true };
        assert_eq!((f.stamp().delivered, f.stamp().before), (3, 3));
    }
}
