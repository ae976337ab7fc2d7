//! AWS Bedrock ConverseStream: binary event stream messages (`eventstream`), each with an
//! `:event-type` header and a JSON payload.
//!
//! A turn is `messageStart`, then content blocks by `contentBlockIndex` (a tool use opens
//! with `contentBlockStart` carrying `start.toolUse {toolUseId, name}`; text and reasoning
//! have no start and open with their first `contentBlockDelta`; every block ends with
//! `contentBlockStop`), `messageStop` with the `stopReason`, then `metadata` (usage and
//! latency). Argument fragments are `delta.toolUse.input` strings, reasoning is
//! `delta.reasoningContent.text` ending with its `signature`. An error mid-stream is an
//! exception message (`:message-type exception`, `:exception-type modelStreamErrorException`,
//! `throttlingException`, ...) and the stream closes after it. Every payload carries a `p`
//! field of padding (letters and digits) that hides its length; a decoder ignores it.
//!
//! **Units of unknown types** (docs/SPEC.md WIRE-UNKNOWN, a turn's `wire.unknown`): a
//! `contentBlockDelta` whose `delta` union carries a member the client was not written for
//! (a `citation` on a text block, a member added later on a tool use or reasoning block),
//! or a message whose `:event-type` ConverseStream added later ([`UNKNOWN_EVENT`]); a
//! decoder skips both.
//!
//! **The wire unit** is the message itself, a [`Frame`] (its headers as strings, its
//! payload), as the [`eventstream`] decoder gives it back once its lengths and checksums are
//! checked; [`to_message`] and [`from_message`] map a frame to the codec's message and back.
//!
//! **The bytes level.** [`render_bytes`] encodes each message ([`crate::eventstream`]) and
//! cuts the bytes where the scenario's [`Transport`] aims, read for binary framing: `inside
//! data prefix` is inside a prelude, `between CR and LF` inside a CRC (the prelude's or the
//! message's), `inside char` inside a multi-byte character of a payload, `anywhere` and
//! `every` as for SSE. A [`Tail`] keeps the first bytes of the message the provider would
//! have sent next, never all of them. A [`Corrupt`] damages one message's CRC or length
//! (BYTES-CHECKSUM); [`corrupt_before`] says how many neutral events were complete before it.

use std::borrow::Cow;
use std::collections::HashMap;

use serde::{Deserialize, Serialize};
use toolcert_render::{Event, Origin, Rendered};
use toolcert_scenario::{
    Corrupt, CorruptWhat, Cut, CutAim, ForeignKind, Shape, StopMeaning, StopReason, StreamEnd, Tail, TailAim,
    Transport, Turn, UnknownKind,
};
use toolcert_subject::{ErrorClass, Frame, TurnError, WireMessage};

use crate::eventstream::{self, HeaderValue, Message};
use crate::json::{parse, Ids};
use crate::DialectDef;
use crate::{malformed, BytesStream, Dialect, WireStream};

mod write;

/// The exceptions ConverseStream sends mid-stream, in the order an errored turn picks them.
pub const EXCEPTIONS: [&str; 5] = [
    "modelStreamErrorException",
    "throttlingException",
    "internalServerException",
    "serviceUnavailableException",
    "validationException",
];

/// The event types ConverseStream sends.
pub const EVENTS: [&str; 6] =
    ["messageStart", "contentBlockStart", "contentBlockDelta", "contentBlockStop", "messageStop", "metadata"];

/// The event type the renderer sends for a unit of an unknown event type: not one of
/// [`EVENTS`], as an event added after the client was written.
pub const UNKNOWN_EVENT: &str = "messageMetadata";

/// The members of the `delta` union the decoder reads; any other is skipped.
pub const DELTA_MEMBERS: [&str; 3] = ["text", "toolUse", "reasoningContent"];

const SIGNATURE: &str = "ErcBCkgIBRABGAIiQPaGFwLx0Q0XqgvrS7yRpDbwtr5B";

// The wire types: one set, serialised to render and read leniently to decode (unknown
// fields, such as the padding of a payload the server sends, are ignored).

#[derive(Serialize, Deserialize)]
struct MessageStart<'a> {
    #[serde(borrow, default, skip_serializing_if = "Option::is_none")]
    role: Option<Cow<'a, str>>,
    #[serde(borrow, default, skip_serializing_if = "Option::is_none")]
    p: Option<Cow<'a, str>>,
}

#[derive(Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
struct BlockStart<'a> {
    content_block_index: u32,
    #[serde(borrow)]
    start: StartBody<'a>,
    #[serde(borrow, default, skip_serializing_if = "Option::is_none")]
    p: Option<Cow<'a, str>>,
}

/// A union: `toolUse` is the only member a client's call starts with (others, such as a
/// tool result or an image, are not calls).
#[derive(Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
struct StartBody<'a> {
    #[serde(borrow, default, skip_serializing_if = "Option::is_none")]
    tool_use: Option<ToolUseStart<'a>>,
}

#[derive(Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
struct ToolUseStart<'a> {
    #[serde(borrow)]
    tool_use_id: Cow<'a, str>,
    #[serde(borrow)]
    name: Cow<'a, str>,
}

#[derive(Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
struct BlockDelta<'a> {
    content_block_index: u32,
    #[serde(borrow)]
    delta: DeltaBody<'a>,
    #[serde(borrow, default, skip_serializing_if = "Option::is_none")]
    p: Option<Cow<'a, str>>,
}

/// A union: text, a tool use's input fragment, reasoning; members added later (citations,
/// images, tool results) are skipped.
#[derive(Default, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
struct DeltaBody<'a> {
    #[serde(borrow, default, skip_serializing_if = "Option::is_none")]
    text: Option<Cow<'a, str>>,
    #[serde(borrow, default, skip_serializing_if = "Option::is_none")]
    tool_use: Option<ToolUseDelta<'a>>,
    #[serde(borrow, default, skip_serializing_if = "Option::is_none")]
    reasoning_content: Option<ReasoningDelta<'a>>,
}

#[derive(Serialize, Deserialize)]
struct ToolUseDelta<'a> {
    #[serde(borrow)]
    input: Cow<'a, str>,
}

#[derive(Default, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
struct ReasoningDelta<'a> {
    #[serde(borrow, default, skip_serializing_if = "Option::is_none")]
    text: Option<Cow<'a, str>>,
    #[serde(borrow, default, skip_serializing_if = "Option::is_none")]
    signature: Option<Cow<'a, str>>,
    #[serde(borrow, default, skip_serializing_if = "Option::is_none")]
    redacted_content: Option<Cow<'a, str>>,
}

#[derive(Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
struct BlockStop<'a> {
    content_block_index: u32,
    #[serde(borrow, default, skip_serializing_if = "Option::is_none")]
    p: Option<Cow<'a, str>>,
}

#[derive(Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
struct MessageStop<'a> {
    #[serde(borrow)]
    stop_reason: Cow<'a, str>,
    #[serde(borrow, default, skip_serializing_if = "Option::is_none")]
    p: Option<Cow<'a, str>>,
}

#[derive(Default, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
struct Metadata<'a> {
    #[serde(default)]
    usage: Usage,
    #[serde(default)]
    metrics: Metrics,
    #[serde(borrow, default, skip_serializing_if = "Option::is_none")]
    p: Option<Cow<'a, str>>,
}

#[derive(Default, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
struct Usage {
    #[serde(default)]
    input_tokens: u32,
    #[serde(default)]
    output_tokens: u32,
    #[serde(default)]
    total_tokens: u32,
}

#[derive(Default, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
struct Metrics {
    #[serde(default)]
    latency_ms: u32,
}

#[derive(Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
struct ExceptionBody<'a> {
    #[serde(borrow, default, skip_serializing_if = "Option::is_none")]
    message: Option<Cow<'a, str>>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    original_status_code: Option<u32>,
}

/// A `contentBlockDelta` whose `delta` has one member the client does not know.
#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct UnknownBlockDelta<'a> {
    content_block_index: u32,
    delta: UnknownDelta,
    #[serde(skip_serializing_if = "Option::is_none")]
    p: Option<Cow<'a, str>>,
}

/// Members of the `delta` union this decoder does not read: `citation` (the API reference's
/// `CitationsDelta`: `title`, `sourceContent`, `location`), and a member a later API adds on a
/// tool use.
#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
enum UnknownDelta {
    Citation(CitationsDelta),
    ToolUseStatus { status: &'static str },
}

#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct CitationsDelta {
    title: &'static str,
    source_content: [CitationText; 1],
    location: CitationLocation,
}

#[derive(Serialize)]
struct CitationText {
    text: &'static str,
}

#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct CitationLocation {
    document_char: DocumentChar,
}

#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct DocumentChar {
    document_index: u32,
    start: u32,
    end: u32,
}

/// The payload of [`UNKNOWN_EVENT`].
#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct UnknownEvent<'a> {
    service_tier: ServiceTier,
    #[serde(skip_serializing_if = "Option::is_none")]
    p: Option<Cow<'a, str>>,
}

#[derive(Serialize)]
struct ServiceTier {
    #[serde(rename = "type")]
    kind: &'static str,
}

const INPUT_TOKENS: u32 = 1187;

/// Padding of a provider-looking length for payload number `n` (letters and digits).
fn pad(ids: &Ids, n: usize) -> Option<Cow<'static, str>> {
    let len = 4 + (n * 7) % 29;
    // The salt `p{n}`, written without `format!`.
    let mut salt = [0u8; 21];
    salt[0] = b'p';
    let mut digits = 0;
    let mut m = n;
    loop {
        digits += 1;
        m /= 10;
        if m == 0 {
            break;
        }
    }
    let mut m = n;
    for d in salt[1..=digits].iter_mut().rev() {
        *d = b'0' + (m % 10) as u8;
        m /= 10;
    }
    Some(Cow::Owned(ids.base62_salted("", &salt[..=digits], len)))
}

/// An event message: its `:event-type` and JSON payload.
fn event_frame(name: &str, payload: String) -> Frame {
    Frame {
        headers: vec![
            (":event-type".into(), name.into()),
            (":content-type".into(), "application/json".into()),
            (":message-type".into(), "event".into()),
        ],
        payload: payload.into_bytes(),
    }
}

/// An exception message: its `:exception-type` and JSON payload.
fn exception_frame(name: &str, payload: String) -> Frame {
    Frame {
        headers: vec![
            (":exception-type".into(), name.into()),
            (":content-type".into(), "application/json".into()),
            (":message-type".into(), "exception".into()),
        ],
        payload: payload.into_bytes(),
    }
}

/// The wire stream being built, with how many neutral events each message completes.
#[derive(Default)]
struct Out {
    wire: WireStream,
    /// Set, at the bytes level: each message is encoded into these bytes as it is rendered
    /// (its `upto` still counted in `wire`), not kept as a frame.
    bytes: Option<Encoded>,
}

/// Messages encoded one after another, and where each starts.
#[derive(Default)]
struct Encoded {
    bytes: Vec<u8>,
    starts: Vec<usize>,
}

impl Out {
    /// Appends `payload` as the message `name`, written by `write` (by hand, the bytes
    /// `to_json` writes; in the tests, serde's when [`crate::json::serde_oracle`] says so).
    fn json<T: Serialize>(
        &mut self,
        name: Option<&str>,
        payload: &T,
        write: fn(&T) -> String,
        delivered: usize,
    ) {
        let name = name.unwrap_or_default();
        #[cfg(test)]
        let write = if crate::json::serde_oracle::on() { crate::json::to_json::<T> } else { write };
        let payload = write(payload);
        debug_assert!(self.wire.upto.last().is_none_or(|&u| u <= delivered as u32));
        self.wire.upto.push(delivered as u32);
        if let Some(e) = &mut self.bytes {
            // The headers `event_frame` and `exception_frame` give, in their order.
            let (kind, message) =
                if is_exception(name) { (":exception-type", "exception") } else { (":event-type", "event") };
            let headers = [(kind, name), (":content-type", "application/json"), (":message-type", message)];
            e.starts.push(e.bytes.len());
            eventstream::encode_strings_into(&mut e.bytes, &headers, payload.as_bytes());
            return;
        }
        let frame =
            if is_exception(name) { exception_frame(name, payload) } else { event_frame(name, payload) };
        self.wire.events.push(WireMessage::Frame(frame));
    }
}

pub(crate) fn render(neutral: &Rendered<'_>, ids: &Ids) -> WireStream {
    render_into(neutral, ids, Out::default()).wire
}

/// The messages of `neutral`, into `out` (kept, or encoded into its bytes).
fn render_into(neutral: &Rendered<'_>, ids: &Ids, mut out: Out) -> Out {
    // Payload `n` is padded by `pad(ids, n)`; a close that sends nothing still takes its
    // number, and its padding is made only when it is sent.
    let n = std::cell::Cell::new(0);
    let next = || {
        n.set(n.get() + 1);
        n.get()
    };
    let p = || pad(ids, next());
    out.json(
        Some("messageStart"),
        &MessageStart { role: Some("assistant".into()), p: p() },
        write::message_start,
        0,
    );
    // The open text block: text has no start; its stop goes before the next event of
    // another block, so a stream cut mid-block ends mid-block.
    let mut open_text: Option<u32> = None;
    let close = |out: &mut Out, open: &mut Option<u32>, n: usize, delivered: usize| {
        if let Some(index) = open.take() {
            let p = pad(ids, n);
            out.json(
                Some("contentBlockStop"),
                &BlockStop { content_block_index: index, p },
                write::block_stop,
                delivered,
            );
        }
    };
    let delta = |out: &mut Out, index: u32, delta: DeltaBody<'_>, p, delivered: usize| {
        out.json(
            Some("contentBlockDelta"),
            &BlockDelta { content_block_index: index, delta, p },
            write::block_delta,
            delivered,
        );
    };
    let mut has_stop = false;
    for (k, (e, o)) in neutral.events.iter().zip(&neutral.origins).enumerate() {
        if !matches!(e, Event::TextDelta { .. } | Event::Error { .. } | Event::Ping) {
            close(&mut out, &mut open_text, next(), k);
        }
        match e {
            Event::TextDelta { text } => {
                let block = match o {
                    Origin::Text { block, .. } => *block,
                    _ => open_text.unwrap_or(0),
                };
                if open_text != Some(block) {
                    close(&mut out, &mut open_text, next(), k);
                    open_text = Some(block);
                }
                let body = DeltaBody { text: Some(Cow::Borrowed(text)), ..DeltaBody::default() };
                delta(&mut out, block, body, p(), k + 1);
            }
            Event::CallStart { index, call_id, name } => {
                let start = StartBody {
                    tool_use: Some(ToolUseStart {
                        tool_use_id: Cow::Borrowed(call_id),
                        name: Cow::Borrowed(name),
                    }),
                };
                out.json(
                    Some("contentBlockStart"),
                    &BlockStart { content_block_index: *index, start, p: p() },
                    write::block_start,
                    k + 1,
                );
            }
            Event::ArgsDelta { index, fragment } => {
                let body = DeltaBody {
                    tool_use: Some(ToolUseDelta { input: Cow::Borrowed(fragment) }),
                    ..DeltaBody::default()
                };
                delta(&mut out, *index, body, p(), k + 1);
            }
            Event::CallStop { index, .. } => {
                out.json(
                    Some("contentBlockStop"),
                    &BlockStop { content_block_index: *index, p: p() },
                    write::block_stop,
                    k + 1,
                );
            }
            // Reasoning has no start on the wire: it is delivered with the block's first delta,
            // unless another block's event comes first (a fault's): then the signature opens it.
            Event::ForeignStart { index, .. } => {
                let next = neutral.events[k + 1..].iter().find(|e| !matches!(e, Event::Ping));
                let own = match next {
                    Some(Event::ForeignDelta { index: i, .. } | Event::ForeignStop { index: i }) => {
                        i == index
                    }
                    Some(_) => false,
                    None => true,
                };
                if !own {
                    let reasoning =
                        ReasoningDelta { signature: Some(SIGNATURE.into()), ..Default::default() };
                    let body = DeltaBody { reasoning_content: Some(reasoning), ..DeltaBody::default() };
                    delta(&mut out, *index, body, p(), k + 1);
                }
            }
            Event::ForeignDelta { index, fragment, .. } => {
                let reasoning = ReasoningDelta { text: Some(Cow::Borrowed(fragment)), ..Default::default() };
                let body = DeltaBody { reasoning_content: Some(reasoning), ..DeltaBody::default() };
                delta(&mut out, *index, body, p(), k + 1);
            }
            Event::ForeignStop { index } => {
                // The signature is the block's last delta (and its first, for an empty one).
                let reasoning = ReasoningDelta { signature: Some(SIGNATURE.into()), ..Default::default() };
                let body = DeltaBody { reasoning_content: Some(reasoning), ..DeltaBody::default() };
                delta(&mut out, *index, body, p(), k);
                out.json(
                    Some("contentBlockStop"),
                    &BlockStop { content_block_index: *index, p: p() },
                    write::block_stop,
                    k + 1,
                );
            }
            Event::Stop { reason } => {
                has_stop = true;
                let stop_reason = Bedrock.spell(Bedrock.stop_reason(*reason)).into();
                out.json(
                    Some("messageStop"),
                    &MessageStop { stop_reason, p: p() },
                    write::message_stop,
                    k + 1,
                );
            }
            Event::Error { message } => {
                let name = EXCEPTIONS[message.len() % EXCEPTIONS.len()];
                let body = ExceptionBody {
                    message: Some(Cow::Borrowed(message)),
                    original_status_code: (name == EXCEPTIONS[0]).then_some(500),
                };
                out.json(Some(name), &body, write::exception, k + 1);
            }
            // Bedrock sends no keep-alive: a ping is delivered with the next message.
            Event::Ping => {}
        }
    }
    if has_stop {
        let output_tokens = crate::json::tokens(&neutral.events);
        let usage =
            Usage { input_tokens: INPUT_TOKENS, output_tokens, total_tokens: INPUT_TOKENS + output_tokens };
        let metadata = Metadata { usage, metrics: Metrics { latency_ms: 312 + output_tokens }, p: p() };
        out.json(Some("metadata"), &metadata, write::metadata, neutral.events.len());
    }
    out
}

/// What is open at a point of a Bedrock stream: a text block, or another (a tool use, a
/// reasoning block).
#[derive(Clone, Copy, PartialEq, Eq)]
enum Open {
    Text(u32),
    Other(u32),
}

/// The block open before each message of `events` and after the last (`len + 1` entries;
/// text and reasoning open with their first delta).
fn open_blocks(events: &[WireMessage]) -> Vec<Option<Open>> {
    let mut open = None;
    let mut out = Vec::with_capacity(events.len() + 1);
    for e in events {
        out.push(open);
        let Some(f) = e.as_frame() else { continue };
        let parsed = || {
            let v: serde_json::Value = serde_json::from_slice(&f.payload).ok()?;
            Some((u32::try_from(v.get("contentBlockIndex")?.as_u64()?).ok()?, v))
        };
        match f.header(":event-type") {
            Some("contentBlockStart") => open = parsed().map(|(i, _)| Open::Other(i)),
            Some("contentBlockDelta") if open.is_none() => {
                if let Some((i, v)) = parsed() {
                    let text = v.pointer("/delta/text").is_some();
                    open = Some(if text { Open::Text(i) } else { Open::Other(i) });
                }
            }
            Some("contentBlockStop") => {
                if let Some((i, _)) = parsed() {
                    if matches!(open, Some(Open::Text(o) | Open::Other(o)) if o == i) {
                        open = None;
                    }
                }
            }
            _ => {}
        }
    }
    out.push(open);
    out
}

/// `wire` with the turn's units of unknown types inserted: each once `at` neutral events
/// are delivered, in the body (after `messageStart`, before `messageStop`, an exception or
/// the end). A delta goes on the block open there; with none open, right after the first
/// message of the next block (text has no start: a delta before it would open it), and with
/// no block after it either, it is an unknown event. Each unit completes no neutral event.
fn add_unknown(wire: &mut WireStream, turn: &Turn, ids: &Ids) {
    let end = wire
        .events
        .iter()
        .position(|e| {
            e.as_frame()
                .and_then(|f| f.header(":event-type").or(f.header(":exception-type")))
                .is_some_and(|n| n == "messageStop" || n == "metadata" || is_exception(n))
        })
        .unwrap_or(wire.events.len());
    let open = open_blocks(&wire.events);
    let mut places: Vec<(usize, UnknownKind, Option<Open>)> = turn
        .wire
        .unknown
        .iter()
        .map(|u| {
            let at = wire.upto.iter().position(|&n| n > u.at).unwrap_or(end).clamp(1.min(end), end);
            match u.kind {
                UnknownKind::Delta if open[at].is_none() => {
                    match (at + 1..=end).find(|&k| open[k].is_some()) {
                        Some(k) => (k, u.kind, open[k]),
                        None => (at, UnknownKind::Event, None),
                    }
                }
                kind => (at, kind, open[at]),
            }
        })
        .collect();
    places.sort_by_key(|p| p.0);
    // From the back, so earlier places stay where they were computed.
    for (n, &(at, kind, open)) in places.iter().enumerate().rev() {
        // Padding of its own, apart from the rendered messages' numbers.
        let p = pad(ids, 1000 + n);
        let delta = |index, delta| {
            crate::json::to_json(&UnknownBlockDelta { content_block_index: index, delta, p: p.clone() })
        };
        let (name, payload) = match (kind, open) {
            (UnknownKind::Delta, Some(Open::Text(index))) => {
                let citation = CitationsDelta {
                    title: "Shipping policy",
                    source_content: [CitationText { text: "The order ships within two business days." }],
                    location: CitationLocation {
                        document_char: DocumentChar { document_index: 0, start: 0, end: 42 },
                    },
                };
                ("contentBlockDelta", delta(index, UnknownDelta::Citation(citation)))
            }
            (UnknownKind::Delta, Some(Open::Other(index))) => {
                ("contentBlockDelta", delta(index, UnknownDelta::ToolUseStatus { status: "streaming" }))
            }
            (UnknownKind::Event, _) | (UnknownKind::Delta, None) => {
                let event = UnknownEvent { service_tier: ServiceTier { kind: "default" }, p: p.clone() };
                (UNKNOWN_EVENT, crate::json::to_json(&event))
            }
        };
        let upto = at.checked_sub(1).and_then(|w| wire.upto.get(w)).copied().unwrap_or(0);
        wire.events.insert(at, WireMessage::Frame(event_frame(name, payload)));
        wire.upto.insert(at, upto);
    }
}

/// What kind of content block an index holds.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Kind {
    Text,
    ToolUse,
    Reasoning,
    /// A start of another member (a tool result, an image): not the client's call.
    Other,
}

/// Decodes Bedrock ConverseStream messages ([`Frame`]s).
#[derive(Debug, Default)]
pub struct BedrockDecoder {
    kinds: HashMap<u32, Kind>,
    /// `messageStart` came: a second one is another generation spliced in.
    started: bool,
}

impl BedrockDecoder {
    pub fn new() -> BedrockDecoder {
        BedrockDecoder::default()
    }
}

fn stop_reason(s: &str) -> Result<StopReason, TurnError> {
    Ok(match s {
        "tool_use" => StopReason::ToolUse,
        "end_turn" => StopReason::EndTurn,
        "stop_sequence" => StopReason::StopSequence,
        "max_tokens" => StopReason::MaxTokens,
        "guardrail_intervened" => StopReason::Refusal,
        "content_filtered" => StopReason::ContentFilter,
        other => {
            return Err(malformed(format!(
                "messageStop: stopReason: `{other}` is not a stop reason this harness knows (end_turn, \
                 tool_use, max_tokens, stop_sequence, guardrail_intervened, content_filtered)"
            )))
        }
    })
}

/// Whether a wire event name is an exception's (`:exception-type`) rather than an event's.
pub fn is_exception(name: &str) -> bool {
    name.ends_with("Exception")
}

/// A message's name (its `:event-type`, or an exception's `:exception-type`; a service
/// error's `:error-code`) and its payload as text.
pub fn name_and_data(frame: &Frame) -> Result<(String, Cow<'_, str>), TurnError> {
    let header =
        |name: &str| frame.header(name).ok_or_else(|| malformed(format!("a message without `{name}`")));
    let name = match header(":message-type")? {
        "event" => header(":event-type")?.to_owned(),
        "exception" => header(":exception-type")?.to_owned(),
        // The service's own error (not modelled by ConverseStream): an exception named by its
        // code, its message as the payload's.
        "error" => {
            let code = header(":error-code")?;
            let text = frame.header(":error-message").unwrap_or_default();
            let body = ExceptionBody { message: Some(text.into()), original_status_code: None };
            let name = if is_exception(code) { code.to_owned() } else { format!("{code}Exception") };
            return Ok((name, Cow::Owned(crate::json::to_json(&body))));
        }
        other => {
            return Err(malformed(format!(":message-type `{other}` is none of event, exception, error")))
        }
    };
    let data = std::str::from_utf8(&frame.payload)
        .map_err(|e| malformed(format!("{name}: the payload is not UTF-8 ({e})")))?;
    Ok((name, Cow::Borrowed(data)))
}

impl crate::WireDecoder for BedrockDecoder {
    fn decode_borrowed<'m>(
        &'m mut self,
        message: &'m WireMessage,
        out: &mut crate::Decoded<'m>,
    ) -> Result<(), TurnError> {
        let Some(frame) = message.as_frame() else {
            return Err(malformed("an SSE event in a Bedrock event stream".into()));
        };
        let (name, data) = name_and_data(frame)?;
        let (name, data) = (name.as_str(), data.as_ref());
        let own = |c: Cow<'_, str>| Cow::Owned(c.into_owned());
        match name {
            "contentBlockStart" => {
                let s: BlockStart<'_> = parse(name, data)?;
                let index = s.content_block_index;
                let kind = match s.start.tool_use {
                    Some(t) => {
                        out.push(Event::CallStart { index, call_id: own(t.tool_use_id), name: own(t.name) });
                        Kind::ToolUse
                    }
                    None => Kind::Other,
                };
                self.kinds.insert(index, kind);
            }
            "contentBlockDelta" => {
                let d: BlockDelta<'_> = parse(name, data)?;
                let index = d.content_block_index;
                let body = d.delta;
                if let Some(text) = body.text {
                    self.kinds.entry(index).or_insert(Kind::Text);
                    out.push(Event::TextDelta { text: own(text) });
                } else if let Some(t) = body.tool_use {
                    // An index never started, or started as something else, goes to the core
                    // as it is: the core judges an unannounced index.
                    if self.kinds.get(&index) != Some(&Kind::Other) {
                        out.push(Event::ArgsDelta { index, fragment: own(t.input) });
                    }
                } else if let Some(r) = body.reasoning_content {
                    let kind = ForeignKind::Thinking;
                    if let std::collections::hash_map::Entry::Vacant(v) = self.kinds.entry(index) {
                        v.insert(Kind::Reasoning);
                        let none = || Cow::Borrowed("");
                        out.push(Event::ForeignStart {
                            index,
                            kind,
                            id: none(),
                            name: none(),
                            content: none(),
                        });
                    }
                    if let Some(text) = r.text {
                        out.push(Event::ForeignDelta { index, kind, fragment: own(text) });
                    }
                }
                // Members added after this harness was written (citation, image, ...).
            }
            "contentBlockStop" => {
                let s: BlockStop<'_> = parse(name, data)?;
                let index = s.content_block_index;
                match self.kinds.get(&index) {
                    Some(Kind::Text | Kind::Other) => {}
                    Some(Kind::Reasoning) => out.push(Event::ForeignStop { index }),
                    // A stop for an index never started is still a call event for the core.
                    Some(Kind::ToolUse) | None => out.push(Event::CallStop { index, arguments: None }),
                }
            }
            "messageStop" => {
                let m: MessageStop<'_> = parse(name, data)?;
                out.push(Event::Stop { reason: stop_reason(&m.stop_reason)? });
            }
            "messageStart" => {
                let _: MessageStart<'_> = parse(name, data)?;
                if std::mem::replace(&mut self.started, true) {
                    return Err(malformed(format!(
                        "{name}: a second message in one stream (another generation spliced in): none \
                         of its calls can be trusted"
                    )));
                }
            }
            "metadata" => {
                let _: Metadata<'_> = parse(name, data)?;
            }
            _ if is_exception(name) => {
                let e: ExceptionBody<'_> = parse(name, data)?;
                let message = e.message.map(own).unwrap_or(Cow::Borrowed(""));
                out.push(Event::Error { message });
            }
            // Event types added after this harness was written.
            _ => {}
        }
        Ok(())
    }
}

/// Whether one wire message shows Bedrock's dialect: a frame naming one of its events or
/// exceptions.
fn detect_one(message: &WireMessage) -> bool {
    let Some(f) = message.as_frame() else { return false };
    let named = |h: &str, names: &[&str]| f.header(h).is_some_and(|n| names.contains(&n));
    named(":event-type", &EVENTS) || named(":exception-type", &EXCEPTIONS)
}

/// The event stream message of a frame (its headers as string headers).
pub fn to_message(frame: &Frame) -> Message {
    let headers = frame.headers.iter().map(|(n, v)| (n.clone(), HeaderValue::String(v.clone()))).collect();
    Message { headers, payload: frame.payload.clone() }
}

/// The frame of a decoded event stream message: its headers as strings (a header of another
/// type written as its value), its payload.
pub fn from_message(message: Message) -> Frame {
    let headers = message.headers.into_iter().map(|(n, v)| (n, v.to_string())).collect();
    Frame { headers, payload: message.payload }
}

/// The bytes level's first layer for Bedrock: transport chunks to wire events.
#[derive(Debug, Default)]
pub struct BedrockFrames {
    decoder: eventstream::Decoder,
    messages: Vec<Message>,
}

impl BedrockFrames {
    pub fn new() -> BedrockFrames {
        BedrockFrames::default()
    }

    /// Decodes `chunk`, appending the messages it completes; messages completed before a
    /// framing error are appended before the error is returned (`Malformed`).
    pub fn feed(&mut self, chunk: &[u8], out: &mut Vec<WireMessage>) -> Result<(), TurnError> {
        self.messages.clear();
        let fed = self.decoder.feed(chunk, &mut self.messages);
        out.extend(self.messages.drain(..).map(|m| WireMessage::Frame(from_message(m))));
        fed.map_err(|e| TurnError::new(ErrorClass::Malformed, e.to_string()))
    }

    /// Bytes of a message the stream ended inside (it is dropped, as SSE drops an event
    /// whose blank line never came: the turn is judged as the messages before it left it).
    pub fn pending(&self) -> usize {
        self.decoder.in_message()
    }
}

impl crate::Deframer for BedrockFrames {
    fn feed(&mut self, chunk: &[u8], out: &mut Vec<WireMessage>) -> Result<(), TurnError> {
        BedrockFrames::feed(self, chunk, out)
    }

    /// As `feed`, each message handed on as it is converted (no list of them per chunk).
    fn feed_each(
        &mut self,
        chunk: &[u8],
        each: &mut dyn FnMut(&WireMessage) -> Result<(), TurnError>,
    ) -> Result<(), TurnError> {
        self.messages.clear();
        let fed = self.decoder.feed(chunk, &mut self.messages);
        for m in self.messages.drain(..) {
            each(&WireMessage::Frame(from_message(m)))?;
        }
        fed.map_err(|e| TurnError::new(ErrorClass::Malformed, e.to_string()))
    }

    /// A message the stream ended inside is dropped, whatever the end (see `pending`).
    fn finish(&mut self, _end: StreamEnd, _out: &mut Vec<WireMessage>) -> Result<(), TurnError> {
        Ok(())
    }
}

/// The message of `wire` that `corrupt` damages: the one completing neutral event
/// `after + 1`, or the last.
fn corrupted(wire: &WireStream, corrupt: Corrupt) -> Option<usize> {
    corrupted_of(&wire.upto, wire.events.len(), corrupt)
}

/// [`corrupted`] of `messages` messages counted by `upto`.
fn corrupted_of(upto: &[u32], messages: usize, corrupt: Corrupt) -> Option<usize> {
    let last = messages.checked_sub(1)?;
    Some(upto.iter().position(|&u| u > corrupt.after).unwrap_or(last))
}

/// How many neutral events are complete before the message `corrupt` damages (what the
/// oracle takes as the defect's place: `toolcert_oracle::expect_defect`).
pub fn corrupt_before(wire: &WireStream, corrupt: Corrupt) -> u32 {
    match corrupted(wire, corrupt) {
        Some(0) | None => 0,
        Some(k) => wire.upto[k - 1],
    }
}

/// Damages one encoded message as `what` says.
fn damage(m: &mut [u8], what: CorruptWhat) {
    let n = m.len();
    match what {
        CorruptWhat::PreludeCrc => m[11] ^= 0x01,
        CorruptWhat::MessageCrc => m[n - 1] ^= 0x01,
        CorruptWhat::Payload => {
            // A letter of the padding when there is one: the payload still reads as the same
            // JSON, so only the checksum tells.
            let at = m.windows(5).position(|w| w == b"\"p\":\"").map(|at| at + 5);
            match at {
                Some(at) if m[at].is_ascii_alphanumeric() => m[at] = if m[at] == b'x' { b'y' } else { b'x' },
                _ => m[n - 5] ^= 0x01,
            }
        }
        CorruptWhat::Length => {
            let total = u32::from_be_bytes([m[0], m[1], m[2], m[3]]) - 1;
            m[..4].copy_from_slice(&total.to_be_bytes());
            let crc = eventstream::crc32(&m[..8]);
            m[8..12].copy_from_slice(&crc.to_be_bytes());
        }
    }
}

/// Encodes `wire` as event stream messages cut as `transport` says (see the module docs):
/// each message straight into the stream's buffer.
pub fn render_bytes(wire: &WireStream, transport: &Transport) -> BytesStream {
    // A message that is not a frame is not sent: Bedrock renders none.
    let frames = || wire.events.iter().filter_map(WireMessage::as_frame);
    let next = transport.tail.and(wire.next.as_ref().and_then(WireMessage::as_frame));
    let size: usize = frames().chain(next).map(|f| f.payload.len() + 112).sum();
    let bad = transport.corrupt.and_then(|c| Some((corrupted(wire, c)?, c.what)));
    let mut bytes = Vec::with_capacity(size);
    let mut starts = Vec::with_capacity(wire.events.len() + 1);
    let mut ends = Vec::with_capacity(wire.events.len());
    for (w, f) in frames().enumerate() {
        let start = bytes.len();
        starts.push(start);
        eventstream::encode_strings_into(&mut bytes, &f.headers, &f.payload);
        match bad {
            Some((k, what)) if k == w => damage(&mut bytes[start..], what),
            _ => {}
        }
        // A damaged message, and all after it, are never delivered.
        ends.push(if bad.is_some_and(|(k, _)| w >= k) { usize::MAX } else { bytes.len() });
    }
    if let (Some(tail), Some(next)) = (transport.tail, next) {
        let start = bytes.len();
        starts.push(start);
        eventstream::encode_strings_into(&mut bytes, &next.headers, &next.payload);
        let keep = tail_len(&bytes[start..], tail);
        bytes.truncate(start + keep);
    }
    let cuts = resolve(&bytes, &starts, &transport.cuts);
    crate::bytes::chunked(&wire.upto, bytes, &ends, cuts)
}

/// How many bytes of the next message a tail keeps: at least one, never all.
fn tail_len(m: &[u8], tail: Tail) -> usize {
    let n = m.len();
    let headers = u32::from_be_bytes([m[4], m[5], m[6], m[7]]) as usize;
    let places: Vec<usize> = match tail.aim {
        TailAim::BeforeBlankLine => vec![n - 1],
        TailAim::MidLine => (eventstream::PRELUDE + headers + 1..n - 4).collect(),
        TailAim::InsideDataPrefix => (1..eventstream::PRELUDE).collect(),
        TailAim::BetweenCrLf => (n - 3..n).chain(9..12).collect(),
    };
    let places: Vec<usize> = places.into_iter().filter(|&p| p > 0 && p < n).collect();
    match places.len() {
        0 => 1 + tail.pick as usize % (n - 1),
        k => places[tail.pick as usize % k],
    }
}

/// Byte offsets strictly inside `bytes`, sorted, without repeats; `starts` are the offsets
/// where messages begin.
fn resolve(bytes: &[u8], starts: &[usize], cuts: &[Cut]) -> Vec<usize> {
    let len = bytes.len();
    crate::bytes::resolve_by(len, cuts, |aim| {
        let inside = |o: &usize| *o > 0 && *o < len;
        match aim {
            CutAim::InsideChar => crate::bytes::inside_char(bytes),
            CutAim::InsideDataPrefix => {
                starts.iter().flat_map(|&s| s + 1..s + eventstream::PRELUDE).filter(inside).collect()
            }
            // The starts rise: the next message starts at the next start.
            CutAim::BetweenCrLf => starts
                .iter()
                .enumerate()
                .flat_map(|(i, &s)| {
                    let next = starts.get(i + 1).copied().unwrap_or(len);
                    (s + 9..s + 12).chain(next.saturating_sub(3)..next)
                })
                .filter(inside)
                .collect(),
            CutAim::Anywhere | CutAim::Every => Vec::new(),
        }
    })
}

/// The dialect's definition (one line of [`crate::registry::REGISTRY`]).
pub struct Bedrock;

impl crate::DialectDef for Bedrock {
    fn id(&self) -> Dialect {
        Dialect::Bedrock
    }

    /// Every block ends with its own `contentBlockStop`: only the per-call shape.
    fn carries(&self, shape: &Shape) -> bool {
        matches!(shape, Shape::PerCall)
    }

    /// `reasoningContent` text deltas. (Its `redactedContent` is a base64 blob: not rendered
    /// here, so a redacted block is a turn Bedrock cannot express.)
    fn speaks_foreign(&self, kind: ForeignKind) -> bool {
        kind == ForeignKind::Thinking
    }

    fn stop_reasons(&self) -> &'static [StopReason] {
        use StopReason::*;
        &[ToolUse, EndTurn, StopSequence, MaxTokens, Refusal, ContentFilter]
    }

    /// `guardrail_intervened` and `content_filtered` are its refusal and its filter
    /// ([`DialectDef::spell`]).
    fn word(&self, meaning: StopMeaning) -> StopReason {
        match meaning {
            StopMeaning::Complete => StopReason::EndTurn,
            StopMeaning::ToolUse => StopReason::ToolUse,
            StopMeaning::StopSequence => StopReason::StopSequence,
            StopMeaning::Truncated => StopReason::MaxTokens,
            StopMeaning::Refused => StopReason::Refusal,
            StopMeaning::Filtered => StopReason::ContentFilter,
        }
    }

    fn spell(&self, reason: StopReason) -> &'static str {
        match reason {
            StopReason::Refusal => "guardrail_intervened",
            StopReason::ContentFilter => "content_filtered",
            _ => reason.wire_name(),
        }
    }

    fn render(
        &self,
        turn: &Turn,
        neutral: &Rendered<'_>,
        _quirks: crate::Quirks,
        ids: &Ids,
    ) -> Result<WireStream, String> {
        let mut wire = render(neutral, ids);
        if !turn.wire.unknown.is_empty() {
            add_unknown(&mut wire, turn, ids);
        }
        Ok(wire)
    }

    fn decoder(&self, _quirks: crate::Quirks) -> Box<dyn crate::WireDecoder> {
        Box::new(BedrockDecoder::new())
    }

    fn detects(&self, message: &WireMessage) -> bool {
        detect_one(message)
    }

    fn render_bytes(&self, wire: &WireStream, transport: &Transport) -> BytesStream {
        render_bytes(wire, transport)
    }

    /// Encoded as rendered, unless the turn has messages of unknown types (inserted among
    /// the rendered ones) or a tail (the stream rendered again as it would have gone on).
    fn render_bytes_direct(
        &self,
        turn: &Turn,
        neutral: &Rendered<'_>,
        _quirks: crate::Quirks,
        ids: &Ids,
    ) -> Option<BytesStream> {
        let transport = &turn.transport;
        if !turn.wire.unknown.is_empty() || transport.tail.is_some() {
            return None;
        }
        let text = crate::json::text_len(neutral);
        let messages = neutral.events.len() + 4;
        let encoded = Encoded {
            bytes: Vec::with_capacity(text + text / 4 + messages * 200),
            starts: Vec::with_capacity(messages),
        };
        let mut out = Out { bytes: Some(encoded), ..Out::default() };
        out.wire.upto.reserve(messages);
        let Out { wire, bytes } = render_into(neutral, ids, out);
        let Encoded { mut bytes, starts } = bytes?;
        let upto = wire.upto;
        let n = starts.len();
        let end = |w: usize| starts.get(w + 1).copied().unwrap_or(bytes.len());
        let mut ends: Vec<usize> = (0..n).map(end).collect();
        // As `render_bytes`: the damaged message, and all after it, never delivered.
        if let Some((k, what)) = transport.corrupt.and_then(|c| Some((corrupted_of(&upto, n, c)?, c.what))) {
            damage(&mut bytes[starts[k]..ends[k]], what);
            ends[k..].fill(usize::MAX);
        }
        let cuts = resolve(&bytes, &starts, &transport.cuts);
        Some(crate::bytes::chunked(&upto, bytes, &ends, cuts))
    }

    fn deframer(&self) -> Box<dyn crate::Deframer> {
        Box::new(BedrockFrames::new())
    }

    fn binary(&self) -> bool {
        true
    }

    fn damaged_before(&self, wire: &WireStream, corrupt: Corrupt) -> Option<u32> {
        Some(corrupt_before(wire, corrupt))
    }

    /// One model's path; any model id is served (`serves`).
    fn endpoint(&self) -> &'static str {
        "/model/toolcert.mock-v1%3A0/converse-stream"
    }

    fn message_bytes(&self, message: &WireMessage) -> Option<Vec<u8>> {
        message.as_frame().map(|f| eventstream::encode(&to_message(f)))
    }

    fn content_type(&self) -> &'static str {
        "application/vnd.amazon.eventstream"
    }

    fn sdk_base_url(&self, base: &str) -> String {
        format!("{base}      (AWS SDKs' endpoint URL, any model id)")
    }

    fn wrong_typed(&self, event: &serde_json::Value) -> Option<serde_json::Value> {
        let mut copy = event.clone();
        let delta = copy.pointer_mut("/delta/toolUse")?;
        crate::defect::nonempty(delta.get("input")?).then_some(())?;
        delta["input"] = serde_json::json!(42);
        Some(copy)
    }

    fn serves(&self, path: &str) -> bool {
        let model = path.strip_prefix("/model/").and_then(|p| p.strip_suffix("/converse-stream"));
        model.is_some_and(|m| !m.is_empty() && !m.contains('/'))
    }

    fn exercised(&self, turn: &Turn, _: &Rendered<'_>, add: &mut dyn FnMut(&'static str)) {
        crate::registry::unknown_units_exercised(turn, add)
    }

    fn attribution(&self) -> &'static [crate::Attribution] {
        const RULES: &[crate::Attribution] = &[crate::Attribution::unknown_units(
            "passes without the delta members and event types it does not know",
        )];
        RULES
    }

    /// A second `messageStart`: ConverseStream's start event, sent again as another
    /// generation spliced in would send it.
    fn second_generation(&self, first: &WireMessage) -> Option<WireMessage> {
        (first.as_frame()?.header(":event-type")? == "messageStart").then(|| first.clone())
    }

    /// Units of unknown types, a spliced generation.
    fn reads(&self, wire: &toolcert_scenario::WireEvents) -> bool {
        !wire.unknown.is_empty() || wire.spliced.is_some()
    }
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;

    /// `render_bytes` as it was (the oracle of the tests): each message encoded from its
    /// [`Message`], the cuts resolved by [`resolve_before`].
    pub(crate) fn render_bytes_before(wire: &WireStream, transport: &Transport) -> BytesStream {
        // A message that is not a frame is not sent: Bedrock renders none.
        let mut encoded: Vec<Vec<u8>> = wire
            .events
            .iter()
            .filter_map(WireMessage::as_frame)
            .map(|f| eventstream::encode(&to_message(f)))
            .collect();
        let bad = transport.corrupt.and_then(|c| Some((corrupted(wire, c)?, c.what)));
        if let Some((k, what)) = bad {
            damage(&mut encoded[k], what);
        }
        let mut bytes = Vec::new();
        let mut starts = Vec::with_capacity(encoded.len() + 1);
        let mut ends = Vec::with_capacity(encoded.len());
        for (w, m) in encoded.iter().enumerate() {
            starts.push(bytes.len());
            bytes.extend_from_slice(m);
            // A damaged message, and all after it, are never delivered.
            ends.push(if bad.is_some_and(|(k, _)| w >= k) { usize::MAX } else { bytes.len() });
        }
        if let (Some(tail), Some(next)) = (transport.tail, wire.next.as_ref().and_then(WireMessage::as_frame))
        {
            let next = eventstream::encode(&to_message(next));
            starts.push(bytes.len());
            bytes.extend_from_slice(&next[..tail_len(&next, tail)]);
        }
        let cuts = resolve_before(&bytes, &starts, &transport.cuts);
        crate::bytes::chunked(&wire.upto, bytes, &ends, cuts)
    }

    /// `resolve` as it was (the oracle): every aim's places listed again for each cut, a
    /// byte at a time, and all the offsets sorted.
    fn resolve_before(bytes: &[u8], starts: &[usize], cuts: &[Cut]) -> Vec<usize> {
        let len = bytes.len();
        let mut out = Vec::new();
        if len < 2 {
            return out;
        }
        for cut in cuts {
            let pick = cut.pick as usize;
            let places: Vec<usize> = match cut.aim {
                CutAim::Every => {
                    let step = pick % 16 + 1;
                    out.extend((pick / 16 % len..len).step_by(step));
                    continue;
                }
                CutAim::Anywhere => Vec::new(),
                CutAim::InsideChar => (1..len).filter(|&i| bytes[i] & 0xC0 == 0x80).collect(),
                CutAim::InsideDataPrefix => {
                    starts.iter().flat_map(|&s| s + 1..s + eventstream::PRELUDE).collect()
                }
                CutAim::BetweenCrLf => starts
                    .iter()
                    .flat_map(|&s| {
                        (s + 9..s + 12)
                            .chain(next_start(starts, s, len).saturating_sub(3)..next_start(starts, s, len))
                    })
                    .collect(),
            };
            let places: Vec<usize> = places.into_iter().filter(|&o| o > 0 && o < len).collect();
            out.push(match places.len() {
                0 => pick % len,
                k => places[pick % k],
            });
        }
        out.retain(|&o| o > 0 && o < len);
        out.sort_unstable();
        out.dedup();
        out
    }

    fn next_start(starts: &[usize], s: usize, len: usize) -> usize {
        starts.iter().copied().find(|&x| x > s).unwrap_or(len)
    }

    fn named(name: &str, data: &str) -> WireMessage {
        let frame = if is_exception(name) {
            exception_frame(name, data.into())
        } else {
            event_frame(name, data.into())
        };
        WireMessage::Frame(frame)
    }

    #[test]
    fn a_frame_maps_to_its_message_and_back() {
        for e in
            [named("contentBlockDelta", r#"{"contentBlockIndex":0}"#), named("throttlingException", "{}")]
        {
            let f = e.as_frame().unwrap();
            let m = to_message(f);
            let (name, _) = name_and_data(f).unwrap();
            assert_eq!(
                m.string(":message-type"),
                Some(if is_exception(&name) { "exception" } else { "event" })
            );
            assert_eq!(from_message(m), *f);
        }
        let no_type = Frame { headers: Vec::new(), payload: b"{}".to_vec() };
        assert_eq!(name_and_data(&no_type).unwrap_err().class, ErrorClass::Malformed);
    }

    #[test]
    fn every_corruption_is_refused_by_the_frames_decoder() {
        let wire = WireStream {
            events: vec![
                named("messageStart", r#"{"role":"assistant","p":"abcd"}"#),
                named("metadata", r#"{"p":"xyzw"}"#),
            ],
            upto: vec![0, 1],
            next: None,
        };
        for what in CorruptWhat::ALL {
            let transport = Transport { corrupt: Some(Corrupt { after: 0, what }), ..Transport::default() };
            let b = render_bytes(&wire, &transport);
            let mut frames = BedrockFrames::new();
            let mut out = Vec::new();
            let fed = frames.feed(&b.chunks.concat(), &mut out);
            assert_eq!(fed.unwrap_err().class, ErrorClass::Malformed, "{what:?}");
            // The first message is whole; the damaged second never counts as delivered.
            assert_eq!(out.len(), 1, "{what:?}");
            assert_eq!(b.upto, [0], "{what:?}");
            assert_eq!(corrupt_before(&wire, transport.corrupt.unwrap()), 0);
        }
    }

    #[test]
    fn paddings_are_the_former_ones() {
        let ids = Ids::with_seed(0x9E37_79B9_7F4A_7C15);
        for n in (0..2000).chain([99_999, 1_000_000, 123_456_789_012]) {
            let len = 4 + (n * 7) % 29;
            let want = ids.base62("", &format!("p{n}"), len);
            assert_eq!(pad(&ids, n).as_deref(), Some(want.as_str()), "{n}");
        }
    }

    #[test]
    fn aimed_cuts_land_in_preludes_and_crcs() {
        let m = eventstream::encode(&to_message(named("messageStart", "{}").as_frame().unwrap()));
        let bytes = [m.clone(), m.clone()].concat();
        let starts = [0, m.len()];
        for pick in 0..40 {
            let c = resolve(&bytes, &starts, &[Cut { aim: CutAim::InsideDataPrefix, pick }])[0];
            assert!((1..12).contains(&(c % m.len())), "{c}");
            let c = resolve(&bytes, &starts, &[Cut { aim: CutAim::BetweenCrLf, pick }])[0];
            let at = c % m.len();
            assert!((9..12).contains(&at) || at >= m.len() - 3 || at == 0, "{c}");
        }
        for aim in TailAim::ALL {
            for pick in 0..20 {
                let n = tail_len(&m, Tail { aim, pick });
                assert!(n >= 1 && n < m.len(), "{aim:?} {pick}: {n}");
            }
        }
    }

    #[test]
    fn the_endpoint_takes_any_model_id() {
        use crate::DialectDef;
        assert!(Bedrock.serves(Bedrock.endpoint()));
        assert!(Bedrock.serves("/model/anthropic.claude-3-5-sonnet-20241022-v2%3A0/converse-stream"));
        assert!(!Bedrock.serves("/model//converse-stream"));
        assert!(!Bedrock.serves("/model/a/b/converse-stream"));
        assert!(!Bedrock.serves("/model/a/converse"));
    }
}
