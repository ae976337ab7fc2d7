//! Anthropic Messages: `message_start`, then content blocks (`content_block_start`, deltas,
//! `content_block_stop`), `message_delta` with the stop reason, `message_stop`. Every event
//! has its `event:` line and its data's `type` is the same name.
//!
//! One dialect module of the wire level (rendered from the neutral stream, decoded back to
//! it). Its server profiles (docs/SPEC.md, "Server profiles of the per-call dialects") send a
//! call's whole `input` in its `content_block_start`, or complete blocks in `message_start`;
//! the one decoder reads both, and the provider's own stream, alike.

use std::collections::HashMap;

use serde::{Deserialize, Serialize};
use serde_json::value::RawValue;
use toolcert_render::{Event, Origin, Rendered};
use toolcert_scenario::{Block, ForeignKind, Quirks, StopMeaning, StopReason, Turn};
use toolcert_sse::SseEvent;
use toolcert_subject::TurnError;

use crate::json::{check_type, event_name, own, parse, tokens, Ids, Out, Str};
use crate::{malformed, whole, Dialect, SseStream as WireStream};

mod deltas;
mod unknown;

pub(crate) use unknown::{Open, Units};
mod write;

const MODEL: &str = "claude-sonnet-4-5-20250929";
const INPUT_TOKENS: u32 = 1187;

// The wire types: one set, serialised to render and read leniently to decode (bedrock.rs
// does the same). A field the decoder does not read is `skip_deserializing`, so whatever a
// server sends there is ignored; the `type` of an event is optional on the way in (when
// present it must be the event's name, `check_type`).

/// Read for its message's `content` alone: the blocks a message can start with (complete
/// `tool_use` blocks under programmatic tool calling, `anthropic_content_in_start`).
#[derive(Serialize, Deserialize)]
struct MessageStart<'a> {
    #[serde(rename = "type", borrow, default, skip_serializing_if = "Option::is_none")]
    kind: Option<Str<'a>>,
    #[serde(borrow, default)]
    message: Message<'a>,
}

#[derive(Serialize, Deserialize, Default)]
struct Message<'a> {
    #[serde(skip_deserializing)]
    id: &'a str,
    #[serde(rename = "type", skip_deserializing)]
    kind: &'static str,
    #[serde(skip_deserializing)]
    role: &'static str,
    #[serde(skip_deserializing)]
    model: &'static str,
    #[serde(borrow, default)]
    content: Content<'a>,
    #[serde(skip_deserializing)]
    stop_reason: Option<&'static str>,
    #[serde(skip_deserializing)]
    stop_sequence: Option<&'static str>,
    #[serde(skip_deserializing)]
    usage: StartUsage,
}

/// A message's `content`: the blocks rendered, or each block read as its JSON text (a block
/// of a type the decoder does not know is skipped whatever its fields hold; a known one is
/// read as a [`ContentBlock`]). `null` or absent: no block.
enum Content<'a> {
    Sent(Vec<ContentBlock<'a>>),
    Read(Vec<&'a RawValue>),
}

impl Default for Content<'_> {
    fn default() -> Self {
        Content::Read(Vec::new())
    }
}

impl Serialize for Content<'_> {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        match self {
            Content::Sent(blocks) => blocks.serialize(s),
            Content::Read(blocks) => blocks.serialize(s),
        }
    }
}

impl<'de: 'a, 'a> Deserialize<'de> for Content<'a> {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        Option::<Vec<&'a RawValue>>::deserialize(d).map(|v| Content::Read(v.unwrap_or_default()))
    }
}

/// A `tool_use` block's `input`: `{}` as the provider's own stream starts a call (its
/// arguments follow as `input_json_delta`s), or the whole arguments as their JSON text
/// (rendered as the model wrote them; read as the server sent them, numbers as written).
#[derive(Clone, Copy)]
enum Input<'a> {
    Empty,
    Whole(&'a RawValue),
}

impl Serialize for Input<'_> {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        match self {
            Input::Empty => Empty {}.serialize(s),
            Input::Whole(raw) => raw.serialize(s),
        }
    }
}

impl<'de: 'a, 'a> Deserialize<'de> for Input<'a> {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        <&'a RawValue>::deserialize(d).map(Input::Whole)
    }
}

impl<'a> Input<'a> {
    /// The argument text it carries: `None` for an empty object (and for the rendered
    /// `{}`), which is no argument bytes.
    fn arguments(self) -> Option<&'a str> {
        match self {
            Input::Empty => None,
            Input::Whole(raw) => Some(raw.get()).filter(|t| !crate::whole::is_empty_object(t)),
        }
    }
}

#[derive(Serialize, Default)]
struct StartUsage {
    input_tokens: u32,
    cache_creation_input_tokens: u32,
    cache_read_input_tokens: u32,
    output_tokens: u32,
}

#[derive(Serialize, Deserialize)]
struct BlockStart<'a> {
    #[serde(rename = "type", borrow, default, skip_serializing_if = "Option::is_none")]
    kind: Option<Str<'a>>,
    index: u32,
    #[serde(borrow)]
    content_block: ContentBlock<'a>,
}

/// A content block as its start carries it: its `type`, then the fields of that type (text
/// and tool use, thinking, redacted thinking, a server tool use, a server tool's result).
#[derive(Serialize, Deserialize)]
struct ContentBlock<'a> {
    #[serde(rename = "type", borrow)]
    kind: Str<'a>,
    #[serde(borrow, default, skip_serializing_if = "Option::is_none")]
    id: Option<Str<'a>>,
    #[serde(borrow, default, skip_serializing_if = "Option::is_none")]
    name: Option<Str<'a>>,
    #[serde(borrow, default, skip_serializing_if = "Option::is_none")]
    input: Option<Input<'a>>,
    #[serde(borrow, default, skip_serializing_if = "Option::is_none")]
    text: Option<Str<'a>>,
    #[serde(skip_deserializing, skip_serializing_if = "Option::is_none")]
    thinking: Option<&'static str>,
    #[serde(skip_deserializing, skip_serializing_if = "Option::is_none")]
    signature: Option<&'static str>,
    /// `redacted_thinking`'s encrypted reasoning.
    #[serde(borrow, default, skip_serializing_if = "Option::is_none")]
    data: Option<Str<'a>>,
    /// A server tool result's: the use it answers, and its results.
    #[serde(borrow, default, skip_serializing_if = "Option::is_none")]
    tool_use_id: Option<Str<'a>>,
    #[serde(borrow, default, skip_serializing_if = "Option::is_none")]
    content: Option<ResultContent<'a>>,
}

impl<'a> ContentBlock<'a> {
    /// A block of type `kind` with none of its fields yet.
    fn of(kind: &'a str) -> ContentBlock<'a> {
        ContentBlock {
            kind: Str::of(kind),
            id: None,
            name: None,
            input: None,
            text: None,
            thinking: None,
            signature: None,
            data: None,
            tool_use_id: None,
            content: None,
        }
    }
}

/// A server tool result's `content`: rendered as one web search result, read as whatever
/// JSON it is (an error object has no results; the decoder looks for a first title).
#[derive(Serialize)]
#[serde(untagged)]
enum ResultContent<'a> {
    Search([SearchResult<'a>; 1]),
    Read(serde_json::Value),
}

impl<'de, 'a> Deserialize<'de> for ResultContent<'a> {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        serde_json::Value::deserialize(d).map(ResultContent::Read)
    }
}

/// One result of a server web search (the block's text travels as its title).
#[derive(Serialize)]
struct SearchResult<'a> {
    #[serde(rename = "type")]
    kind: &'static str,
    title: &'a str,
    url: &'static str,
    encrypted_content: &'static str,
    page_age: Option<&'static str>,
}

/// The signature a thinking block ends with (opaque to the client).
const SIGNATURE: &str = "EqQBCgIYAhIM1gbcDa9GJwZA2b3hGgxBdjrkzLoky3dl1pkiMOYds";

/// `{}`
#[derive(Serialize, Default)]
struct Empty {}

#[derive(Serialize, Deserialize)]
struct BlockDelta<'a> {
    #[serde(rename = "type", borrow, default, skip_serializing_if = "Option::is_none")]
    kind: Option<Str<'a>>,
    index: u32,
    #[serde(borrow)]
    delta: Delta<'a>,
}

/// A delta: its `type` (`text_delta`, `input_json_delta`, `thinking_delta`,
/// `signature_delta`, ...) and the one field of that type.
#[derive(Serialize, Deserialize)]
struct Delta<'a> {
    #[serde(rename = "type", borrow)]
    kind: Str<'a>,
    #[serde(borrow, default, skip_serializing_if = "Option::is_none")]
    text: Option<Str<'a>>,
    #[serde(borrow, default, skip_serializing_if = "Option::is_none")]
    partial_json: Option<Str<'a>>,
    #[serde(borrow, default, skip_serializing_if = "Option::is_none")]
    thinking: Option<Str<'a>>,
    #[serde(skip_deserializing, skip_serializing_if = "Option::is_none")]
    signature: Option<&'static str>,
}

impl<'a> Delta<'a> {
    /// A delta of type `kind` with none of its fields yet.
    fn of(kind: &'a str) -> Delta<'a> {
        Delta { kind: Str::of(kind), text: None, partial_json: None, thinking: None, signature: None }
    }
}

#[derive(Serialize, Deserialize)]
struct BlockStop<'a> {
    #[serde(rename = "type", borrow, default, skip_serializing_if = "Option::is_none")]
    kind: Option<Str<'a>>,
    index: u32,
}

#[derive(Serialize, Deserialize)]
struct MessageDelta<'a> {
    #[serde(rename = "type", borrow, default, skip_serializing_if = "Option::is_none")]
    kind: Option<Str<'a>>,
    #[serde(borrow)]
    delta: StopDelta<'a>,
    #[serde(skip_deserializing)]
    usage: DeltaUsage,
}

#[derive(Serialize, Deserialize)]
struct StopDelta<'a> {
    #[serde(borrow, default)]
    stop_reason: Option<Str<'a>>,
    #[serde(skip_deserializing)]
    stop_sequence: Option<&'static str>,
}

#[derive(Serialize, Default)]
struct DeltaUsage {
    output_tokens: u32,
}

/// An event of no fields but its `type` (`ping`, `message_stop`); decoding any event reads
/// at least this much.
#[derive(Serialize, Deserialize)]
struct Bare<'a> {
    #[serde(rename = "type", borrow, default, skip_serializing_if = "Option::is_none")]
    kind: Option<Str<'a>>,
}

#[derive(Serialize, Deserialize)]
struct ErrorEvent<'a> {
    #[serde(rename = "type", borrow, default, skip_serializing_if = "Option::is_none")]
    kind: Option<Str<'a>>,
    #[serde(borrow)]
    error: ErrorBody<'a>,
}

#[derive(Serialize, Deserialize)]
struct ErrorBody<'a> {
    #[serde(rename = "type", skip_deserializing)]
    kind: &'static str,
    #[serde(borrow)]
    message: Str<'a>,
}

/// The `type` an event is rendered with.
fn ty(name: &str) -> Option<Str<'_>> {
    Some(Str::of(name))
}

pub(crate) fn render(turn: &Turn, neutral: &Rendered<'_>, quirks: Quirks, ids: &Ids) -> WireStream {
    render_into(turn, neutral, quirks, ids, Out::with_capacity(neutral.events.len() + 4)).wire
}

/// Under [`Quirks::anthropic_content_in_start`]: the blocks `message_start` carries, and how
/// many neutral events they complete. They are the turn's leading blocks up to its last
/// leading call that is complete (announcement, every fragment, its terminal, one after the
/// other from the stream's first event), each text block whole, each call a `tool_use` with
/// its whole input, at content index = position in `content`, which must be the call's
/// index (the later blocks' indices go on after them). A call whose arguments are no JSON
/// object the `input` can carry as written ([`whole::sendable_as_value`]; no argument bytes
/// is `{}`) ends the leading blocks.
fn leading<'t>(
    turn: &'t Turn,
    neutral: &Rendered<'_>,
    runs: &[whole::Run],
) -> (usize, Vec<ContentBlock<'t>>) {
    let o = &neutral.origins;
    let (mut k, mut blocks) = (0, Vec::new());
    // Events and blocks up to the last complete call.
    let mut kept = (0, 0);
    for (b, block) in (0u32..).zip(&turn.blocks) {
        match block {
            Block::Text(t) => {
                let n = toolcert_scenario::fragments(&t.text, &t.splits).count();
                if !(k..k + n).all(|j| matches!(o.get(j), Some(Origin::Text { block, .. }) if *block == b)) {
                    break;
                }
                blocks.push(ContentBlock { text: Some(Str::of(&t.text)), ..ContentBlock::of("text") });
                k += n;
            }
            Block::Call(c) => {
                let Some(run) = runs.iter().find(|r| r.block == b && r.announce == k) else { break };
                if !(run.all_bytes && run.stopped && c.index == b) {
                    break;
                }
                let input = match c.arguments.as_str() {
                    "" => Input::Empty,
                    a if whole::sendable_as_value(turn, a) => match serde_json::from_str(a) {
                        Ok(raw) => Input::Whole(raw),
                        Err(_) => break,
                    },
                    _ => break,
                };
                blocks.push(ContentBlock {
                    id: Some(Str::of(&c.call_id)),
                    name: Some(Str::of(&c.name)),
                    input: Some(input),
                    ..ContentBlock::of("tool_use")
                });
                k = run.end + 1;
                kept = (k, blocks.len());
            }
            Block::Foreign(_) => break,
        }
    }
    blocks.truncate(kept.1);
    (kept.0, blocks)
}

/// Under [`Quirks::anthropic_input_in_start`]: the calls sent with their whole `input` in
/// `content_block_start` and no delta, as (announcement's neutral position, one past its last
/// fragment, the input): those whose every argument byte follows the announcement with
/// nothing between, and whose arguments are a JSON object the `input` can carry as written
/// ([`whole::sendable_as_value`]). Any other call (no argument bytes, a document that is not
/// an object or not JSON, fragments a ping or a fault comes between, a stream cut before its
/// last byte) is sent as deltas, as the provider's own stream sends it.
fn inputs_in_start<'t>(turn: &'t Turn, runs: &[whole::Run]) -> Vec<(usize, usize, &'t RawValue)> {
    runs.iter()
        .filter(|r| r.all_bytes)
        .filter_map(|r| {
            let args = &whole::call(turn, r).arguments;
            whole::sendable_as_value(turn, args)
                .then(|| serde_json::from_str(args).ok())
                .flatten()
                .map(|raw| (r.announce, r.end, raw))
        })
        .collect()
}

/// The events of `neutral`, into `out` (kept, or framed into its SSE bytes).
fn render_into(turn: &Turn, neutral: &Rendered<'_>, quirks: Quirks, ids: &Ids, mut out: Out) -> Out {
    let runs = match quirks.anthropic_input_in_start || quirks.anthropic_content_in_start {
        true => whole::runs(turn, neutral),
        false => Vec::new(),
    };
    let (lead, content) = match quirks.anthropic_content_in_start {
        true => leading(turn, neutral, &runs),
        false => (0, Vec::new()),
    };
    let in_start = match quirks.anthropic_input_in_start {
        true => inputs_in_start(turn, &runs),
        false => Vec::new(),
    };
    let msg_id = ids.base62("msg_01", "message", 22);
    let start = MessageStart {
        kind: ty("message_start"),
        message: Message {
            id: &msg_id,
            kind: "message",
            role: "assistant",
            model: MODEL,
            content: Content::Sent(content),
            stop_reason: None,
            stop_sequence: None,
            usage: StartUsage {
                input_tokens: INPUT_TOKENS,
                cache_creation_input_tokens: 0,
                cache_read_input_tokens: 0,
                output_tokens: 1,
            },
        },
    };
    out.written(Some("message_start"), &start, write::message_start, lead);
    // The neutral events already sent: those `message_start` carried, then each call's
    // fragments its whole input carried.
    let mut sent = lead;

    // The open text block's content index. Text blocks have no neutral start or stop: the
    // start goes before a block's first delta, the stop before the next event of another
    // kind, so a stream cut mid-block ends mid-block.
    let mut open_text: Option<u32> = None;
    let close = |out: &mut Out, open: &mut Option<u32>, delivered: usize| {
        if let Some(index) = open.take() {
            out.written(
                Some("content_block_stop"),
                &BlockStop { kind: ty("content_block_stop"), index },
                write::block_stop,
                delivered,
            );
            out.stopped(index);
        }
    };
    let mut has_stop = false;
    // The kind of each foreign block started, for its deltas and its stop.
    let mut foreign: HashMap<u32, ForeignKind> = HashMap::new();
    for (k, (e, o)) in neutral.events.iter().zip(&neutral.origins).enumerate() {
        if k < sent {
            continue;
        }
        match e {
            Event::ForeignStart { index, kind, id, name, content } => {
                close(&mut out, &mut open_text, k);
                foreign.insert(*index, *kind);
                let content_block = match kind {
                    ForeignKind::Thinking => ContentBlock {
                        thinking: Some(""),
                        signature: Some(""),
                        ..ContentBlock::of("thinking")
                    },
                    ForeignKind::RedactedThinking => {
                        ContentBlock { data: Some(Str::of(content)), ..ContentBlock::of("redacted_thinking") }
                    }
                    ForeignKind::ServerToolUse => ContentBlock {
                        id: Some(Str::of(id)),
                        name: Some(Str::of(name)),
                        input: Some(Input::Empty),
                        ..ContentBlock::of("server_tool_use")
                    },
                    // Anthropic has no other kind (render_wire refused the turn): its result.
                    _ => ContentBlock {
                        tool_use_id: Some(Str::of(id)),
                        content: Some(ResultContent::Search([SearchResult {
                            kind: "web_search_result",
                            title: content,
                            url: "https://example.com/result",
                            encrypted_content: "EqgfCioIARgBIiQ3YTAx",
                            page_age: None,
                        }])),
                        ..ContentBlock::of("web_search_tool_result")
                    },
                };
                let start = BlockStart { kind: ty("content_block_start"), index: *index, content_block };
                out.written(Some("content_block_start"), &start, write::block_start, k + 1);
                out.started(Open::Other(*index));
            }
            Event::ForeignDelta { index, kind, fragment } => {
                close(&mut out, &mut open_text, k);
                let delta = match kind {
                    ForeignKind::ServerToolUse => {
                        Delta { partial_json: Some(Str::of(fragment)), ..Delta::of("input_json_delta") }
                    }
                    _ => Delta { thinking: Some(Str::of(fragment)), ..Delta::of("thinking_delta") },
                };
                let delta = BlockDelta { kind: ty("content_block_delta"), index: *index, delta };
                out.written(Some("content_block_delta"), &delta, write::block_delta, k + 1);
            }
            Event::ForeignStop { index } => {
                close(&mut out, &mut open_text, k);
                if foreign.get(index) == Some(&ForeignKind::Thinking) {
                    // A thinking block's signature comes last, just before its stop.
                    let delta = BlockDelta {
                        kind: ty("content_block_delta"),
                        index: *index,
                        delta: Delta { signature: Some(SIGNATURE), ..Delta::of("signature_delta") },
                    };
                    out.written(Some("content_block_delta"), &delta, write::block_delta, k);
                }
                out.written(
                    Some("content_block_stop"),
                    &BlockStop { kind: ty("content_block_stop"), index: *index },
                    write::block_stop,
                    k + 1,
                );
                out.stopped(*index);
            }
            Event::TextDelta { text } => {
                let block = match o {
                    Origin::Text { block, .. } => *block,
                    _ => open_text.unwrap_or(0),
                };
                if open_text != Some(block) {
                    close(&mut out, &mut open_text, k);
                    let start = BlockStart {
                        kind: ty("content_block_start"),
                        index: block,
                        content_block: ContentBlock { text: Some(Str::of("")), ..ContentBlock::of("text") },
                    };
                    out.written(Some("content_block_start"), &start, write::block_start, k);
                    out.started(Open::Text(block));
                    open_text = Some(block);
                }
                let delta = BlockDelta {
                    kind: ty("content_block_delta"),
                    index: block,
                    delta: Delta { text: Some(Str::of(text)), ..Delta::of("text_delta") },
                };
                out.written(Some("content_block_delta"), &delta, write::block_delta, k + 1);
            }
            // Keep-alives and errors arrive whatever block is open.
            Event::Ping => out.written(Some("ping"), &Bare { kind: ty("ping") }, write::bare, k + 1),
            Event::Error { message } => {
                let error = ErrorEvent {
                    kind: ty("error"),
                    error: ErrorBody { kind: "overloaded_error", message: Str::of(message) },
                };
                out.written(Some("error"), &error, write::error, k + 1);
            }
            Event::CallStart { index, call_id, name } => {
                close(&mut out, &mut open_text, k);
                // A call sent whole: its input completes its fragments too.
                let (input, delivered) = match in_start.iter().find(|w| w.0 == k) {
                    Some(&(_, end, raw)) => {
                        sent = end;
                        (Input::Whole(raw), end)
                    }
                    None => (Input::Empty, k + 1),
                };
                let start = BlockStart {
                    kind: ty("content_block_start"),
                    index: *index,
                    content_block: ContentBlock {
                        id: Some(Str::of(call_id)),
                        name: Some(Str::of(name)),
                        input: Some(input),
                        ..ContentBlock::of("tool_use")
                    },
                };
                out.written(Some("content_block_start"), &start, write::block_start, delivered);
                out.started(Open::Other(*index));
            }
            Event::ArgsDelta { index, fragment } => {
                close(&mut out, &mut open_text, k);
                let delta = BlockDelta {
                    kind: ty("content_block_delta"),
                    index: *index,
                    delta: Delta { partial_json: Some(Str::of(fragment)), ..Delta::of("input_json_delta") },
                };
                out.written(Some("content_block_delta"), &delta, write::block_delta, k + 1);
            }
            Event::CallStop { index, .. } => {
                close(&mut out, &mut open_text, k);
                out.written(
                    Some("content_block_stop"),
                    &BlockStop { kind: ty("content_block_stop"), index: *index },
                    write::block_stop,
                    k + 1,
                );
                out.stopped(*index);
            }
            Event::Stop { reason } => {
                close(&mut out, &mut open_text, k);
                has_stop = true;
                let delta = MessageDelta {
                    kind: ty("message_delta"),
                    delta: StopDelta {
                        stop_reason: Some(Str::of(
                            crate::DialectDef::stop_reason(&Anthropic, *reason).wire_name(),
                        )),
                        stop_sequence: None,
                    },
                    usage: DeltaUsage { output_tokens: tokens(&neutral.events) },
                };
                out.written(Some("message_delta"), &delta, write::message_delta, k + 1);
            }
        }
    }
    if has_stop {
        out.written(
            Some("message_stop"),
            &Bare { kind: ty("message_stop") },
            write::bare,
            neutral.events.len(),
        );
    }
    out
}

/// What kind of content block an index holds.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Kind {
    Text,
    ToolUse,
    /// A `tool_use` whose start carried its whole `input`, not stopped yet: no delta may add
    /// to it (an empty `input_json_delta` adds nothing; any other is a malformed stream,
    /// docs/SPEC.md, "Server profiles"). Its stop makes it a [`Kind::ToolUse`] again, so a
    /// delta after the stop is a fragment after stop, as for any call.
    ToolUseWhole,
    /// Thinking, a server tool and its result: never the client's calls.
    Foreign(ForeignKind),
    /// Whatever block type comes next: not the client's either.
    Other,
}

/// Decodes Anthropic Messages events.
#[derive(Debug, Default)]
pub struct AnthropicDecoder {
    /// The kind of the block each index last started.
    kinds: HashMap<u32, Kind>,
    /// `message_start` came: a second one is another generation spliced in.
    started: bool,
}

impl AnthropicDecoder {
    pub fn new() -> AnthropicDecoder {
        AnthropicDecoder::default()
    }
}

fn stop_reason(event: &str, s: &str) -> Result<StopReason, TurnError> {
    Ok(match s {
        "tool_use" => StopReason::ToolUse,
        "end_turn" => StopReason::EndTurn,
        "stop_sequence" => StopReason::StopSequence,
        "max_tokens" => StopReason::MaxTokens,
        "refusal" => StopReason::Refusal,
        other => {
            return Err(malformed(format!(
                "{event}: delta.stop_reason: `{other}` is not a stop reason this harness knows \
                 (tool_use, end_turn, stop_sequence, max_tokens, refusal)"
            )))
        }
    })
}

/// The foreign kind of a content block type (`None`: text, a client call, or unknown).
fn foreign_kind(block_type: &str) -> Option<ForeignKind> {
    Some(match block_type {
        "thinking" => ForeignKind::Thinking,
        "redacted_thinking" => ForeignKind::RedactedThinking,
        "server_tool_use" => ForeignKind::ServerToolUse,
        // web_search_tool_result, web_fetch_tool_result, code_execution_tool_result, ...
        t if t.ends_with("_tool_result") => ForeignKind::ServerToolResult,
        _ => return None,
    })
}

/// The neutral start of a foreign block: the fields its kind carries.
fn foreign_start(index: u32, kind: ForeignKind, b: ContentBlock<'_>) -> Event<'static> {
    let none = || std::borrow::Cow::Borrowed("");
    let (id, name, content) = match kind {
        ForeignKind::RedactedThinking => (none(), none(), b.data.map_or_else(none, own)),
        ForeignKind::ServerToolUse => (b.id.map_or_else(none, own), b.name.map_or_else(none, own), none()),
        ForeignKind::ServerToolResult => {
            // The first result's title, when the content is a list of results (an error
            // object has none).
            let title = match &b.content {
                Some(ResultContent::Read(c)) => {
                    c.get(0).and_then(|r| r.get("title")?.as_str().map(str::to_owned))
                }
                _ => None,
            };
            (b.tool_use_id.map_or_else(none, own), none(), title.map_or_else(none, std::borrow::Cow::Owned))
        }
        _ => (none(), none(), none()),
    };
    Event::ForeignStart { index, kind, id, name, content }
}

/// A `tool_use` block's start (in `content_block_start`, or a block of `message_start`'s
/// content): its announcement, then, when its `input` carries the arguments (any JSON but
/// an empty object or `null`), that input's JSON text as sent, as its one fragment. Whether
/// it did (`true`: no delta may follow).
fn tool_use<'m>(
    event: &str,
    index: u32,
    id: Option<Str<'m>>,
    name: Option<Str<'m>>,
    input: Option<Input<'m>>,
    out: &mut crate::Decoded<'m>,
) -> Result<bool, TurnError> {
    let field = |f: Option<Str<'_>>, what: &str| {
        f.map(own)
            .ok_or_else(|| malformed(format!("{event}: content_block: a tool_use block needs `{what}`")))
    };
    let call_id = field(id, "id")?;
    let call_name = field(name, "name")?;
    out.push(Event::CallStart { index, call_id, name: call_name });
    match input.and_then(Input::arguments) {
        Some(arguments) => {
            out.push(Event::ArgsDelta { index, fragment: std::borrow::Cow::Borrowed(arguments) });
            Ok(true)
        }
        None => Ok(false),
    }
}

/// A non-empty `input_json_delta` for a call whose start carried its whole input.
fn after_whole(index: u32) -> TurnError {
    malformed(format!(
        "content_block_delta: index {index}: an input_json_delta for a tool_use whose \
         content_block_start carried its whole input"
    ))
}

/// The block type of a content block read as its JSON text (`None`: no string `type`).
#[derive(Deserialize)]
struct BlockType<'a> {
    #[serde(rename = "type", borrow)]
    kind: Str<'a>,
}

impl AnthropicDecoder {
    /// The block at content `index` of `message_start`'s message (programmatic tool calling
    /// starts a message with complete blocks): a `tool_use` is a whole call (its announcement,
    /// its input as its one fragment, its terminal), a text block its text, a foreign block its
    /// start and stop; a block of another type is skipped whatever it holds. The blocks that
    /// follow in `content_block_*` events are numbered after these.
    fn content_in_start<'m>(
        &mut self,
        index: u32,
        block: &'m str,
        out: &mut crate::Decoded<'m>,
    ) -> Result<(), TurnError> {
        const EVENT: &str = "message_start";
        let Ok(BlockType { kind }) = serde_json::from_str::<BlockType<'_>>(block) else {
            self.kinds.insert(index, Kind::Other);
            return Ok(());
        };
        let known = matches!(kind.as_str(), "tool_use" | "text") || foreign_kind(kind.as_str()).is_some();
        if !known {
            self.kinds.insert(index, Kind::Other);
            return Ok(());
        }
        let b: ContentBlock<'m> = parse(EVENT, block)?;
        let kind = match b.kind.as_str() {
            "tool_use" => {
                tool_use(EVENT, index, b.id, b.name, b.input, out)?;
                out.push(Event::CallStop { index, arguments: None });
                // Stopped: a delta or a stop for it is the core's to judge (after its stop).
                Kind::ToolUse
            }
            "text" => {
                if let Some(t) = b.text.filter(|t| !t.as_str().is_empty()) {
                    out.push(Event::TextDelta { text: own(t) });
                }
                Kind::Text
            }
            other => {
                let kind = foreign_kind(other).unwrap_or(ForeignKind::Thinking);
                out.push(foreign_start(index, kind, b));
                out.push(Event::ForeignStop { index });
                Kind::Foreign(kind)
            }
        };
        self.kinds.insert(index, kind);
        Ok(())
    }
}

impl crate::SseDecoder for AnthropicDecoder {
    fn decode<'m>(
        &mut self,
        event: &'m SseEvent,
        scratch: &'m mut Vec<u8>,
        out: &mut crate::Decoded<'m>,
    ) -> Result<(), TurnError> {
        if let Some(done) = deltas::decode(&mut self.kinds, scratch, event, out) {
            return done;
        }
        let name = event_name(event)?;
        let name = name.as_ref();
        let data = event.data.as_str();
        match name {
            "content_block_start" => {
                let s: BlockStart<'_> = parse(name, data)?;
                check_type(name, &s.kind)?;
                if let Some(kind) = foreign_kind(s.content_block.kind.as_str()) {
                    self.kinds.insert(s.index, Kind::Foreign(kind));
                    out.push(foreign_start(s.index, kind, s.content_block));
                    return Ok(());
                }
                let kind = match s.content_block.kind.as_str() {
                    "tool_use" => {
                        let c = s.content_block;
                        let whole = tool_use(name, s.index, c.id, c.name, c.input, out)?;
                        if whole {
                            Kind::ToolUseWhole
                        } else {
                            Kind::ToolUse
                        }
                    }
                    "text" => {
                        // The API starts text blocks empty; a server that does not keeps its text.
                        if let Some(t) = s.content_block.text.filter(|t| !t.as_str().is_empty()) {
                            out.push(Event::TextDelta { text: own(t) });
                        }
                        Kind::Text
                    }
                    _ => Kind::Other,
                };
                self.kinds.insert(s.index, kind);
            }
            "content_block_delta" => {
                let d: BlockDelta<'_> = parse(name, data)?;
                check_type(name, &d.kind)?;
                let need = |f: Option<Str<'_>>, what: &str| {
                    f.map(own).ok_or_else(|| {
                        malformed(format!("{name}: delta: a {} needs `{what}`", d.delta.kind.as_str()))
                    })
                };
                let foreign = match self.kinds.get(&d.index) {
                    Some(Kind::Foreign(kind)) => Some(*kind),
                    _ => None,
                };
                match d.delta.kind.as_str() {
                    // A server tool's input and the model's thinking are never a call's or the
                    // text's; the core is told they are foreign, and ignores them.
                    "input_json_delta" | "thinking_delta" if foreign.is_some() => {
                        let fragment = match d.delta.kind.as_str() {
                            "thinking_delta" => need(d.delta.thinking, "thinking")?,
                            _ => need(d.delta.partial_json, "partial_json")?,
                        };
                        out.push(Event::ForeignDelta {
                            index: d.index,
                            kind: foreign.unwrap_or(ForeignKind::Thinking),
                            fragment,
                        });
                    }
                    "text_delta" => out.push(Event::TextDelta { text: need(d.delta.text, "text")? }),
                    // Anything else (including an index never started) goes to the core,
                    // which judges it.
                    "input_json_delta" if self.kinds.get(&d.index) == Some(&Kind::Other) => {}
                    "input_json_delta" if self.kinds.get(&d.index) == Some(&Kind::ToolUseWhole) => {
                        let fragment = need(d.delta.partial_json, "partial_json")?;
                        if !fragment.is_empty() {
                            return Err(after_whole(d.index));
                        }
                    }
                    "input_json_delta" => out.push(Event::ArgsDelta {
                        index: d.index,
                        fragment: need(d.delta.partial_json, "partial_json")?,
                    }),
                    // thinking_delta, signature_delta, citations_delta, ...
                    _ => {}
                }
            }
            "content_block_stop" => {
                let s: BlockStop<'_> = parse(name, data)?;
                check_type(name, &s.kind)?;
                match self.kinds.get(&s.index) {
                    Some(Kind::Text | Kind::Other) => {}
                    Some(Kind::Foreign(_)) => out.push(Event::ForeignStop { index: s.index }),
                    // A stop for an index never started is still a call event for the core.
                    Some(Kind::ToolUse) | None => {
                        out.push(Event::CallStop { index: s.index, arguments: None })
                    }
                    // Stopped: what comes for it now is the core's to judge (after its stop).
                    Some(Kind::ToolUseWhole) => {
                        self.kinds.insert(s.index, Kind::ToolUse);
                        out.push(Event::CallStop { index: s.index, arguments: None })
                    }
                }
            }
            "message_delta" => {
                let m: MessageDelta<'_> = parse(name, data)?;
                check_type(name, &m.kind)?;
                if let Some(r) = m.delta.stop_reason {
                    out.push(Event::Stop { reason: stop_reason(name, r.as_str())? });
                }
            }
            "error" => {
                let e: ErrorEvent<'_> = parse(name, data)?;
                check_type(name, &e.kind)?;
                out.push(Event::Error { message: own(e.error.message) });
            }
            "message_start" => {
                let m: MessageStart<'_> = parse(name, data)?;
                check_type(name, &m.kind)?;
                if std::mem::replace(&mut self.started, true) {
                    return Err(malformed(format!(
                        "{name}: a second message in one stream (another generation spliced in): none \
                         of its calls can be trusted"
                    )));
                }
                if let Content::Read(blocks) = m.message.content {
                    for (index, block) in (0u32..).zip(blocks) {
                        self.content_in_start(index, block.get(), out)?;
                    }
                }
            }
            "ping" | "message_stop" => {
                let o: Bare<'_> = parse(name, data)?;
                check_type(name, &o.kind)?;
                if name == "ping" {
                    out.push(Event::Ping);
                }
            }
            // Event types added after this harness was written.
            _ => {}
        }
        Ok(())
    }
}

/// Anthropic Messages in the [`crate::registry`].
pub struct Anthropic;

impl crate::DialectDef for Anthropic {
    fn id(&self) -> Dialect {
        Dialect::Anthropic
    }

    /// Every call is closed by its own `content_block_stop`: only the per-call shape.
    fn carries(&self, shape: &toolcert_scenario::Shape) -> bool {
        matches!(shape, toolcert_scenario::Shape::PerCall)
    }

    fn speaks_foreign(&self, kind: ForeignKind) -> bool {
        use ForeignKind::*;
        matches!(kind, Thinking | RedactedThinking | ServerToolUse | ServerToolResult)
    }

    fn stop_reasons(&self) -> &'static [StopReason] {
        use StopReason::*;
        &[ToolUse, EndTurn, StopSequence, MaxTokens, Refusal]
    }

    /// Its server profiles ([`toolcert_scenario::PROFILES`]): Anthropic's own stream, a
    /// call's whole input in its `content_block_start`, complete calls in `message_start`.
    fn quirk_profiles(&self) -> &'static [Quirks] {
        static PROFILES: std::sync::OnceLock<Vec<Quirks>> = std::sync::OnceLock::new();
        crate::registry::profiles_of(Dialect::Anthropic, &PROFILES)
    }

    /// A filtered output is a `refusal` (Anthropic has no word of its own for it).
    fn word(&self, meaning: StopMeaning) -> StopReason {
        match meaning {
            StopMeaning::Complete => StopReason::EndTurn,
            StopMeaning::ToolUse => StopReason::ToolUse,
            StopMeaning::StopSequence => StopReason::StopSequence,
            StopMeaning::Truncated => StopReason::MaxTokens,
            StopMeaning::Refused | StopMeaning::Filtered => StopReason::Refusal,
        }
    }

    fn render(
        &self,
        turn: &toolcert_scenario::Turn,
        neutral: &Rendered<'_>,
        quirks: crate::Quirks,
        ids: &Ids,
    ) -> Result<crate::WireStream, String> {
        let mut wire = render(turn, neutral, quirks, ids);
        if !turn.wire.is_plain() {
            unknown::unknown(&mut wire, &turn.wire);
        }
        Ok(wire.into())
    }

    /// Framed as rendered, units of unknown types placed among the events as they are
    /// framed; with a tail, the stream is rendered again as it would have gone on
    /// for the event the connection dropped inside.
    fn render_bytes_direct(
        &self,
        turn: &toolcert_scenario::Turn,
        neutral: &Rendered<'_>,
        quirks: crate::Quirks,
        ids: &Ids,
    ) -> Option<crate::BytesStream> {
        let next = crate::next_sse(turn, neutral, self, quirks, ids)?;
        let mut out = Out::framing(turn, neutral, 1, 160);
        if !turn.wire.unknown.is_empty() {
            out.units = Some(Units::new(&turn.wire));
        }
        render_into(turn, neutral, quirks, ids, out).framed(turn, next.as_ref())
    }

    fn decoder(&self, _quirks: crate::Quirks) -> Box<dyn crate::WireDecoder> {
        Box::new(crate::OverSse::new(AnthropicDecoder::new()))
    }

    fn detects(&self, message: &toolcert_subject::WireMessage) -> bool {
        message.as_sse().and_then(crate::json::detect_one) == Some(Dialect::Anthropic)
    }

    fn endpoint(&self) -> &'static str {
        "/v1/messages"
    }

    fn sdk_base_url(&self, base: &str) -> String {
        format!("{base}      (Anthropic SDKs, ANTHROPIC_BASE_URL)")
    }

    fn names_event(&self, name: &str) -> bool {
        const EVENTS: [&str; 6] = [
            "message_start",
            "content_block_start",
            "content_block_delta",
            "content_block_stop",
            "message_delta",
            "message_stop",
        ];
        EVENTS.contains(&name)
    }

    fn wrong_typed(&self, event: &serde_json::Value) -> Option<serde_json::Value> {
        let mut copy = event.clone();
        let delta = copy.get_mut("delta")?;
        (delta.get("type")? == "input_json_delta" && crate::defect::nonempty(delta.get("partial_json")?))
            .then_some(())?;
        delta["partial_json"] = serde_json::json!(42);
        Some(copy)
    }

    fn exercised(&self, turn: &toolcert_scenario::Turn, _: &Rendered<'_>, add: &mut dyn FnMut(&'static str)) {
        crate::registry::unknown_units_exercised(turn, add)
    }

    fn attribution(&self) -> &'static [crate::Attribution] {
        const RULES: &[crate::Attribution] =
            &[crate::Attribution::unknown_units("passes without the events and deltas of unknown types")];
        RULES
    }

    /// Units of unknown types.
    fn reads(&self, wire: &toolcert_scenario::WireEvents) -> bool {
        !wire.unknown.is_empty() || wire.spliced.is_some() || wire.hostile_index.is_some()
    }

    /// `message_start` for another message: its id marked as a retry's, no content yet.
    fn second_generation(
        &self,
        first: &toolcert_subject::WireMessage,
    ) -> Option<toolcert_subject::WireMessage> {
        let first = first.as_sse()?;
        (event_name(first).ok()?.as_ref() == "message_start").then_some(())?;
        let mut v: serde_json::Value = serde_json::from_str(&first.data).ok()?;
        let message = v.get_mut("message")?;
        let id = message.get_mut("id")?;
        *id = format!("{}_retry", id.as_str()?).into();
        message["content"] = serde_json::json!([]);
        Some(SseEvent { data: v.to_string(), ..first.clone() }.into())
    }
}
