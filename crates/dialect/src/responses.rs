//! OpenAI Responses: `response.created`, then output items (`response.output_item.added`,
//! their deltas, `response.function_call_arguments.done` repeating the whole argument string,
//! `response.output_item.done`), then `response.completed`, `response.incomplete` or
//! `response.failed`. Every event has its `event:` line, its `type` and a
//! `sequence_number` that counts up from 0.
//!
//! `output_item.done` carries the whole item, arguments included, and the terminal
//! response's `output` repeats every item. Under [`toolcert_scenario::WireEvents`] a call can
//! be announced only by its `output_item.done`, and a mismatch fault can ride on one of the
//! two `done` events alone.
//!
//! One dialect module of the wire level (rendered from the neutral stream, decoded back to
//! it). Its server profiles (docs/SPEC.md, "Server profiles of the per-call dialects") send a
//! call's arguments only in its `done` (LM Studio), a fresh `item_id` on every event (a
//! Copilot gateway) or hosted-tool items beside the calls; the one decoder, which keys calls
//! by `output_index`, reads them all alike.

use std::collections::HashMap;

use serde::{Deserialize, Serialize};
use toolcert_render::{Event, Origin, Rendered};
use toolcert_scenario::{ForeignKind, MismatchIn, Quirks, StopMeaning, StopReason, Turn};
use toolcert_sse::SseEvent;
use toolcert_subject::TurnError;

use crate::json::{check_type, event_name, own, parse, tokens, Ids, Out, Str};
use crate::{malformed, whole, Dialect, SseStream as WireStream};

mod deltas;
mod write;

const MODEL: &str = "gpt-4.1-2025-04-14";
const CREATED: u64 = 1_754_000_000;
const INPUT_TOKENS: u32 = 1187;

// The wire types: one set, serialised to render and read leniently to decode (bedrock.rs
// does the same). A field the decoder does not read is `skip_deserializing`, so whatever a
// server sends there is ignored. An event's `type` is read (when present it must be the
// event's name, `check_type`) and rendered by the [`Envelope`], with its sequence number.

/// An event with its `type` and `sequence_number` before its own fields.
#[derive(Serialize)]
struct Envelope<'a, T> {
    #[serde(rename = "type")]
    kind: &'a str,
    sequence_number: u64,
    #[serde(flatten)]
    body: T,
}

/// `response.created`, `.in_progress`, `.completed`, `.incomplete` and `.failed` (read for
/// its error).
#[derive(Serialize, Deserialize)]
struct ResponseEvent<'a> {
    #[serde(rename = "type", borrow, default, skip_serializing)]
    kind: Option<Str<'a>>,
    #[serde(borrow)]
    response: ResponseObj<'a>,
}

#[derive(Serialize, Deserialize)]
struct ResponseObj<'a> {
    #[serde(skip_deserializing)]
    id: &'a str,
    #[serde(skip_deserializing)]
    object: &'static str,
    #[serde(skip_deserializing)]
    created_at: u64,
    #[serde(skip_deserializing)]
    status: &'static str,
    #[serde(borrow, default)]
    error: Option<ErrorObj<'a>>,
    #[serde(skip_deserializing)]
    incomplete_details: Option<IncompleteDetails>,
    #[serde(skip_deserializing)]
    model: &'static str,
    #[serde(skip_deserializing)]
    output: &'a [Item],
    #[serde(skip_deserializing)]
    parallel_tool_calls: bool,
    #[serde(skip_deserializing)]
    tool_choice: &'static str,
    #[serde(skip_deserializing)]
    tools: [(); 0],
    #[serde(skip_deserializing)]
    usage: Option<Usage>,
}

#[derive(Serialize, Deserialize)]
struct ErrorObj<'a> {
    #[serde(skip_deserializing)]
    code: &'static str,
    #[serde(borrow)]
    message: Str<'a>,
}

#[derive(Serialize)]
struct IncompleteDetails {
    reason: &'static str,
}

#[derive(Serialize)]
struct Usage {
    input_tokens: u32,
    output_tokens: u32,
    total_tokens: u32,
}

/// An output item, as `output_item.added` / `.done` and the terminal response carry it
/// (read, any item is its [`ItemFields`]).
#[derive(Serialize, Clone)]
#[serde(untagged)]
enum Item {
    Call(ItemFields<'static>),
    Message(MessageItem),
    /// Reasoning, a web search call, a refusal's message, a custom tool call.
    Foreign(serde_json::Value),
}

/// An item's fields: a function call as rendered, and any item as read. The fields only a
/// foreign item has (`id`, `input`, `encrypted_content`, `action`) are read as whatever JSON
/// they are: a function call's are not its business, and a foreign item whose strings are
/// not strings is skipped ([`text`]).
#[derive(Serialize, Deserialize, Clone)]
struct ItemFields<'a> {
    #[serde(rename = "type", borrow)]
    kind: Str<'a>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    id: Option<serde_json::Value>,
    #[serde(borrow, default, skip_serializing_if = "Option::is_none")]
    call_id: Option<Str<'a>>,
    #[serde(borrow, default, skip_serializing_if = "Option::is_none")]
    name: Option<Str<'a>>,
    #[serde(borrow, default, skip_serializing_if = "Option::is_none")]
    arguments: Option<Str<'a>>,
    #[serde(skip_deserializing, skip_serializing_if = "Option::is_none")]
    status: Option<&'static str>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    input: Option<serde_json::Value>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    encrypted_content: Option<serde_json::Value>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    action: Option<serde_json::Value>,
}

impl ItemFields<'static> {
    /// A function call item, in progress, with no arguments yet.
    fn call(id: String, call_id: &str, name: &str) -> ItemFields<'static> {
        ItemFields {
            kind: Str::of("function_call"),
            id: Some(serde_json::Value::String(id)),
            call_id: Some(Str(call_id.to_owned().into())),
            name: Some(Str(name.to_owned().into())),
            arguments: Some(Str::of("")),
            status: Some("in_progress"),
            input: None,
            encrypted_content: None,
            action: None,
        }
    }

    fn item_id(&self) -> &str {
        self.id.as_ref().and_then(serde_json::Value::as_str).unwrap_or_default()
    }

    fn arguments(&self) -> &str {
        self.arguments.as_ref().map_or("", Str::as_str)
    }

    fn name(&self) -> &str {
        self.name.as_ref().map_or("", Str::as_str)
    }
}

/// A foreign item's string field: `Err` when it is there but not a string.
fn text(v: &Option<serde_json::Value>) -> Result<Option<std::borrow::Cow<'static, str>>, ()> {
    match v {
        None | Some(serde_json::Value::Null) => Ok(None),
        Some(serde_json::Value::String(s)) => Ok(Some(s.clone().into())),
        Some(_) => Err(()),
    }
}

#[derive(Serialize, Clone)]
struct MessageItem {
    #[serde(rename = "type")]
    kind: &'static str,
    id: String,
    status: &'static str,
    role: &'static str,
    content: Vec<TextPart<'static>>,
}

#[derive(Serialize, Deserialize, Clone)]
struct TextPart<'a> {
    #[serde(rename = "type", borrow)]
    kind: Str<'a>,
    #[serde(skip_deserializing)]
    annotations: [(); 0],
    #[serde(skip_deserializing)]
    text: String,
}

/// `response.output_item.added` and `.done`: rendered with an [`Item`], read with its
/// [`ItemFields`].
#[derive(Serialize, Deserialize)]
struct ItemEvent<'a, I = ItemFields<'a>> {
    #[serde(rename = "type", borrow, default, skip_serializing)]
    kind: Option<Str<'a>>,
    output_index: u32,
    item: I,
}

/// `response.content_part.added` and `.done`.
#[derive(Serialize, Deserialize)]
struct PartEvent<'a> {
    #[serde(rename = "type", borrow, default, skip_serializing)]
    kind: Option<Str<'a>>,
    #[serde(skip_deserializing)]
    item_id: &'a str,
    output_index: u32,
    #[serde(skip_deserializing)]
    content_index: u32,
    #[serde(borrow)]
    part: TextPart<'a>,
}

/// `response.output_text.delta`.
#[derive(Serialize, Deserialize)]
struct TextDelta<'a> {
    #[serde(rename = "type", borrow, default, skip_serializing)]
    kind: Option<Str<'a>>,
    #[serde(skip_deserializing)]
    item_id: &'a str,
    #[serde(skip_deserializing)]
    output_index: u32,
    #[serde(skip_deserializing)]
    content_index: u32,
    #[serde(borrow)]
    delta: Str<'a>,
    #[serde(skip_deserializing)]
    logprobs: [(); 0],
}

#[derive(Serialize)]
struct TextDoneBody<'a> {
    item_id: &'a str,
    output_index: u32,
    content_index: u32,
    text: &'a str,
    logprobs: [(); 0],
}

/// `response.function_call_arguments.delta`, and the deltas of foreign items (reasoning
/// summaries, refusals, custom tool input), read the same way.
#[derive(Serialize, Deserialize)]
struct ArgsDelta<'a> {
    #[serde(rename = "type", borrow, default, skip_serializing)]
    kind: Option<Str<'a>>,
    #[serde(skip_deserializing)]
    item_id: &'a str,
    output_index: u32,
    #[serde(borrow)]
    delta: Str<'a>,
}

/// `response.function_call_arguments.done`.
#[derive(Serialize, Deserialize)]
struct ArgsDone<'a> {
    #[serde(rename = "type", borrow, default, skip_serializing)]
    kind: Option<Str<'a>>,
    #[serde(skip_deserializing)]
    item_id: &'a str,
    output_index: u32,
    #[serde(skip_deserializing)]
    name: &'a str,
    #[serde(borrow)]
    arguments: Str<'a>,
}

/// `error`, read only (this harness's server errors are `response.failed`).
#[derive(Deserialize)]
struct ErrorEvent<'a> {
    #[serde(rename = "type", borrow, default)]
    kind: Option<Str<'a>>,
    #[serde(borrow)]
    message: Str<'a>,
}

/// An event of no fields this decoder reads but its `type`.
#[derive(Deserialize)]
struct Bare<'a> {
    #[serde(rename = "type", borrow, default)]
    kind: Option<Str<'a>>,
}

struct Renderer<'i> {
    out: Out,
    seq: u64,
    ids: &'i Ids,
    response_id: String,
    /// Items finished so far, with their output index, for the terminal response.
    done: Vec<(u32, Item)>,
    /// Each index's call as announced, with the arguments its deltas carried so far.
    calls: HashMap<u32, ItemFields<'static>>,
    /// The open message item: its output index and item (the text so far in its one part).
    text: Option<(u32, MessageItem)>,
    /// The blocks of the calls announced only by their `output_item.done`.
    item_only: Vec<u32>,
    /// Under [`Quirks::responses_done_only`]: the blocks of the calls sent with no delta,
    /// their arguments only in their `done` events ([`whole::runs`]: the calls whose
    /// announcement, fragments and terminal the stream delivers one after the other, the
    /// terminal repeating no arguments of its own).
    done_only: Vec<u32>,
    /// Under [`Quirks::responses_rotating_item_id`]: every event of a call names it with a
    /// fresh `item_id` (and its items with a fresh `id`).
    rotate: bool,
    /// Under [`Quirks::responses_hosted_items`]: the output index of the hosted item sent
    /// before the first call, until it is sent.
    hosted: Option<u32>,
    /// Each open foreign item: its kind, item id, start event and the content so far.
    foreign: HashMap<u32, OpenForeign>,
}

struct OpenForeign {
    kind: ForeignKind,
    item_id: String,
    id: String,
    name: String,
    content: String,
}

impl Renderer<'_> {
    fn event<T: Serialize>(&mut self, name: &str, body: T, delivered: usize) {
        let env = Envelope { kind: name, sequence_number: self.seq, body };
        self.seq += 1;
        self.out.json(Some(name), &env, delivered);
    }

    /// [`Renderer::event`] for a body [`write`] writes by hand.
    fn hand<T: Serialize>(
        &mut self,
        name: &str,
        body: T,
        size: usize,
        write: fn(&mut crate::json::Obj<'_>, &T),
        delivered: usize,
    ) {
        write::event(&mut self.out, &mut self.seq, name, body, size, write, delivered);
    }
}

impl<'s> ResponseObj<'s> {
    /// The response `id` in `status`, with `output`.
    fn new(id: &'s str, status: &'static str, output: &'s [Item]) -> ResponseObj<'s> {
        ResponseObj {
            id,
            object: "response",
            created_at: CREATED,
            status,
            error: None,
            incomplete_details: None,
            model: MODEL,
            output,
            parallel_tool_calls: true,
            tool_choice: "auto",
            tools: [],
            usage: None,
        }
    }
}

impl Renderer<'_> {
    /// The `item_id` the next event names a call with: `stable`, or a fresh one under the
    /// rotating profile (derived from it and the event's sequence number).
    fn rotated_id(&self, stable: String) -> String {
        match self.rotate {
            true => self.ids.hex("fc_", &format!("{stable}/{}", self.seq), 48),
            false => stable,
        }
    }

    /// A call's item as the next event carries it (its `id` fresh under the rotating profile).
    fn rotated(&self, item: &mut ItemFields<'static>) {
        if self.rotate {
            item.id = Some(serde_json::Value::String(self.rotated_id(item.item_id().to_owned())));
        }
    }

    /// The hosted-tool item (`tool_search_call`, run by the server) sent whole before the
    /// first call under [`Quirks::responses_hosted_items`], at output index `index`: its
    /// `arguments` a JSON object, where a function call's are a string. It completes no
    /// neutral event and the terminal response lists it.
    fn hosted_item(&mut self, index: u32, delivered: usize) {
        let item = |status: &str| {
            serde_json::json!({
                "type": "tool_search_call",
                "id": self.ids.hex("tsc_", "hosted", 48),
                "call_id": null,
                "execution": "server",
                "status": status,
                "arguments": { "query": "order lookup", "limit": 5 },
            })
        };
        let (added, done) = (Item::Foreign(item("in_progress")), Item::Foreign(item("completed")));
        self.event(
            "response.output_item.added",
            ItemEvent { kind: None, output_index: index, item: &added },
            delivered,
        );
        self.event(
            "response.output_item.done",
            ItemEvent { kind: None, output_index: index, item: &done },
            delivered,
        );
        self.done.push((index, done));
    }

    fn close_text(&mut self, delivered: usize) {
        let Some((index, mut item)) = self.text.take() else { return };
        let part = item.content[0].clone();
        let part_len = part.text.len();
        let id = item.id.clone();
        let body = TextDoneBody {
            item_id: &id,
            output_index: index,
            content_index: 0,
            text: &part.text,
            logprobs: [],
        };
        self.hand("response.output_text.done", body, part.text.len(), write::text_done, delivered);
        let body = PartEvent { kind: None, item_id: &id, output_index: index, content_index: 0, part };
        self.hand("response.content_part.done", body, part_len, write::part_event, delivered);
        item.status = "completed";
        let item = Item::Message(item);
        self.hand(
            "response.output_item.done",
            ItemEvent { kind: None, output_index: index, item: &item },
            part_len,
            write::item_event,
            delivered,
        );
        self.done.push((index, item));
    }

    fn open_text(&mut self, block: u32, delivered: usize) {
        let item = MessageItem {
            kind: "message",
            id: self.ids.hex("msg_", &format!("text{block}"), 48),
            status: "in_progress",
            role: "assistant",
            content: Vec::new(),
        };
        let added = Item::Message(item.clone());
        self.hand(
            "response.output_item.added",
            ItemEvent { kind: None, output_index: block, item: &added },
            0,
            write::item_event,
            delivered,
        );
        let part = TextPart { kind: Str::of("output_text"), annotations: [], text: String::new() };
        let body = PartEvent {
            kind: None,
            item_id: &item.id,
            output_index: block,
            content_index: 0,
            part: part.clone(),
        };
        self.hand("response.content_part.added", body, 0, write::part_event, delivered);
        let mut item = item;
        item.content.push(part);
        self.text = Some((block, item));
    }
}

pub(crate) fn render(turn: &Turn, neutral: &Rendered<'_>, quirks: Quirks, ids: &Ids) -> WireStream {
    render_into(turn, neutral, quirks, ids, Out::with_capacity(neutral.events.len() + 8)).wire
}

/// The output index of the hosted item a turn is sent with under
/// [`Quirks::responses_hosted_items`]: past every index its blocks use and past the one an
/// unannounced fragment is sent at (`toolcert_render`'s faults take the index after the
/// calls' and foreign blocks'), so it never names one of the client's items.
fn hosted_index(turn: &Turn) -> u32 {
    let blocks = u32::try_from(turn.blocks.len()).unwrap_or(u32::MAX);
    turn.calls()
        .map(|c| c.index)
        .chain(turn.foreign().map(|f| f.index))
        .fold(blocks, u32::max)
        .saturating_add(2)
}

/// The events of `neutral`, into `out` (kept, or framed into its SSE bytes).
fn render_into(turn: &Turn, neutral: &Rendered<'_>, quirks: Quirks, ids: &Ids, out: Out) -> Out {
    let done_only = match quirks.responses_done_only {
        true => whole::runs(turn, neutral)
            .into_iter()
            .filter(|r| r.all_bytes && r.stopped)
            .map(|r| r.block)
            .collect(),
        false => Vec::new(),
    };
    let mut r = Renderer {
        item_only: toolcert_render::item_done_only(turn, neutral),
        done_only,
        rotate: quirks.responses_rotating_item_id,
        hosted: quirks.responses_hosted_items.then(|| hosted_index(turn)),
        out,
        seq: 0,
        ids,
        response_id: ids.hex("resp_", "response", 48),
        done: Vec::new(),
        calls: HashMap::new(),
        text: None,
        foreign: HashMap::new(),
    };
    let body = ResponseEvent { kind: None, response: ResponseObj::new(&r.response_id, "in_progress", &[]) };
    write::event(&mut r.out, &mut r.seq, "response.created", body, 0, write::response_event, 0);

    for (k, (e, o)) in neutral.events.iter().zip(&neutral.origins).enumerate() {
        match e {
            Event::ForeignStart { index, kind, id, name, content } => {
                r.close_text(k);
                r.foreign_start(*index, *kind, id, name, content, k);
            }
            Event::ForeignDelta { index, kind, fragment } => {
                r.close_text(k);
                r.foreign_delta(*index, *kind, fragment, k);
            }
            Event::ForeignStop { index } => {
                r.close_text(k);
                r.foreign_stop(*index, k);
            }
            Event::TextDelta { text } => {
                let block = match o {
                    Origin::Text { block, .. } => *block,
                    _ => r.text.as_ref().map_or(0, |t| t.0),
                };
                if r.text.as_ref().map(|t| t.0) != Some(block) {
                    r.close_text(k);
                    r.open_text(block, k);
                }
                let (index, item) = r.text.as_mut().expect("opened above");
                item.content[0].text.push_str(text);
                let (index, id) = (*index, item.id.clone());
                let body = TextDelta {
                    kind: None,
                    item_id: &id,
                    output_index: index,
                    content_index: 0,
                    delta: Str::of(text),
                    logprobs: [],
                };
                r.text_delta("response.output_text.delta", body, k + 1);
            }
            // Responses has no keep-alive event of its own; the status event carries nothing.
            Event::Ping => {
                let body = ResponseEvent {
                    kind: None,
                    response: ResponseObj::new(&r.response_id, "in_progress", &[]),
                };
                let name = "response.in_progress";
                write::event(&mut r.out, &mut r.seq, name, body, 0, write::response_event, k + 1);
            }
            Event::CallStart { index, call_id, name } => {
                r.close_text(k);
                if let Some(hosted) = r.hosted.take() {
                    r.hosted_item(hosted, k);
                }
                let item = ItemFields::call(ids.hex("fc_", call_id, 48), call_id, name);
                let mut added = item.clone();
                r.rotated(&mut added);
                let added = Item::Call(added);
                if !matches!(o, Origin::Announce { block } if r.item_only.contains(block)) {
                    r.hand(
                        "response.output_item.added",
                        ItemEvent { kind: None, output_index: *index, item: &added },
                        0,
                        write::item_event,
                        k + 1,
                    );
                }
                // A replayed announcement keeps what the call's deltas already carried.
                let args = r
                    .calls
                    .remove(index)
                    .filter(|c| c.call_id.as_ref().map(Str::as_str) == Some(call_id))
                    .and_then(|c| c.arguments);
                let mut item = item;
                item.arguments = Some(args.unwrap_or(Str::of("")));
                r.calls.insert(*index, item);
            }
            Event::ArgsDelta { index, fragment } => {
                r.close_text(k);
                let item_id = match r.calls.get_mut(index) {
                    Some(c) => {
                        c.arguments.get_or_insert(Str::of("")).0.to_mut().push_str(fragment);
                        c.item_id().to_owned()
                    }
                    None => ids.hex("fc_", &format!("unannounced{index}"), 48),
                };
                let item_id = r.rotated_id(item_id);
                let body = ArgsDelta {
                    kind: None,
                    item_id: &item_id,
                    output_index: *index,
                    delta: Str::of(fragment),
                };
                let whole = |b: &u32| r.item_only.contains(b) || r.done_only.contains(b);
                if !matches!(o, Origin::Fragment { block, .. } if whole(block)) {
                    r.args_delta("response.function_call_arguments.delta", body, k + 1);
                }
            }
            Event::CallStop { index, arguments } => {
                r.close_text(k);
                let mut item = match r.calls.get(index) {
                    Some(c) => c.clone(),
                    None => ItemFields::call(ids.hex("fc_", &format!("unannounced{index}"), 48), "", ""),
                };
                // The terminal repeats the whole argument string: what the deltas carried,
                // unless the stream's fault says otherwise (in the `done` events it names).
                let joined = item.arguments().to_owned();
                let mismatch = turn.wire.mismatch_in;
                let done_args = match arguments {
                    Some(a) if mismatch != MismatchIn::ItemDone => a.to_string(),
                    _ => joined.clone(),
                };
                if let Some(a) = arguments.as_ref().filter(|_| mismatch != MismatchIn::ArgumentsDone) {
                    item.arguments = Some(Str(a.to_string().into()));
                }
                let item_only = matches!(o, Origin::CallStop { block } if r.item_only.contains(block));
                let item_id = r.rotated_id(item.item_id().to_owned());
                let body = ArgsDone {
                    kind: None,
                    item_id: &item_id,
                    output_index: *index,
                    name: item.name(),
                    arguments: Str::of(&done_args),
                };
                if !item_only {
                    let size = body.arguments.as_str().len();
                    r.hand("response.function_call_arguments.done", body, size, write::args_done, k + 1);
                }
                r.rotated(&mut item);
                item.status = Some("completed");
                let item = Item::Call(item);
                let size = match &item {
                    Item::Call(c) => c.arguments().len(),
                    _ => 0,
                };
                r.hand(
                    "response.output_item.done",
                    ItemEvent { kind: None, output_index: *index, item: &item },
                    size,
                    write::item_event,
                    k + 1,
                );
                r.done.push((*index, item));
            }
            Event::Stop { reason } => {
                r.close_text(k);
                let mut output = std::mem::take(&mut r.done);
                output.sort_by_key(|(i, _)| *i);
                let output: Vec<Item> = output.into_iter().map(|(_, i)| i).collect();
                let truncated =
                    crate::DialectDef::stop_reason(&OpenAiResponses, *reason) == StopReason::Incomplete;
                let (name, status) = if truncated {
                    ("response.incomplete", "incomplete")
                } else {
                    ("response.completed", "completed")
                };
                let mut resp = ResponseObj::new(&r.response_id, status, &output);
                if truncated {
                    let why = match reason.meaning() {
                        StopMeaning::Refused | StopMeaning::Filtered => "content_filter",
                        _ => "max_output_tokens",
                    };
                    resp.incomplete_details = Some(IncompleteDetails { reason: why });
                }
                let out_tokens = tokens(&neutral.events);
                resp.usage = Some(Usage {
                    input_tokens: INPUT_TOKENS,
                    output_tokens: out_tokens,
                    total_tokens: INPUT_TOKENS + out_tokens,
                });
                let size = output
                    .iter()
                    .map(|i| match i {
                        Item::Call(c) => c.arguments().len() + 160,
                        Item::Message(m) => m.content.iter().map(|p| p.text.len() + 160).sum(),
                        Item::Foreign(_) => 160,
                    })
                    .sum();
                let body = ResponseEvent { kind: None, response: resp };
                write::event(&mut r.out, &mut r.seq, name, body, size, write::response_event, k + 1);
            }
            Event::Error { message } => {
                let mut resp = ResponseObj::new(&r.response_id, "failed", &[]);
                resp.error = Some(ErrorObj { code: "server_error", message: Str::of(message) });
                let body = ResponseEvent { kind: None, response: resp };
                let size = message.len();
                write::event(
                    &mut r.out,
                    &mut r.seq,
                    "response.failed",
                    body,
                    size,
                    write::response_event,
                    k + 1,
                );
            }
        }
    }
    r.out
}

/// Decodes OpenAI Responses events. A call is keyed by its `output_index` alone: every
/// event of a call names it, while its `item_id` is only the item's name, which some servers
/// change on every event (a Copilot gateway) and which is never read. Per index the decoder
/// keeps whether a call was announced there, whether argument bytes came for it (a delta, or
/// the arguments of its `output_item.added`) and the arguments its
/// `function_call_arguments.done` repeated. With these it reads a call's `done` events:
/// a `done` with no argument bytes before it carries the call's arguments (LM Studio sends no
/// delta), one after them repeats them and must agree; an `output_item.done` is also the
/// announcement of a call the stream sent no other event for, or a second repeat that must
/// agree with the first (docs/SPEC.md, WIRE-DONE and "Server profiles").
#[derive(Debug, Default)]
pub struct ResponsesDecoder {
    calls: Calls,
    /// `response.created` came: a second one is another generation spliced in.
    created: bool,
}

/// What the decoder keeps per output index (see [`ResponsesDecoder`]).
#[derive(Debug, Default)]
pub(crate) struct Calls {
    map: HashMap<u32, CallSeen>,
    /// The index the last delta was for, already marked as having argument bytes: a call's
    /// deltas come in a run, so the hot path marks each call once.
    marked: Option<u32>,
}

#[derive(Debug, Default)]
struct CallSeen {
    /// Argument bytes came for it (a delta, empty or not, or its announcement's arguments).
    bytes: bool,
    /// The arguments its first `done` event carried.
    done: Option<String>,
}

impl Calls {
    /// A delta came for `index`.
    #[inline]
    pub(crate) fn delta(&mut self, index: u32) {
        if self.marked != Some(index) {
            self.marked = Some(index);
            if let Some(c) = self.map.get_mut(&index) {
                c.bytes = true;
            }
        }
    }

    /// A call was announced at `index`. A second announcement (a replay, which the core
    /// reports as a duplicate) keeps the bytes that came: a `done` after it repeats them.
    fn announce(&mut self, index: u32, bytes: bool) {
        let c = self.map.entry(index).or_default();
        c.bytes |= bytes;
        c.done = None;
        // A delta for the index before its announcement marked nothing: the next one marks.
        if self.marked == Some(index) {
            self.marked = None;
        }
    }
}

impl ResponsesDecoder {
    pub fn new() -> ResponsesDecoder {
        ResponsesDecoder::default()
    }

    /// `response.function_call_arguments.done`.
    fn arguments_done<'m>(&mut self, d: ArgsDone<'m>, out: &mut crate::Decoded<'m>) {
        let index = d.output_index;
        let arguments = d.arguments.0;
        match self.calls.map.get_mut(&index) {
            // No argument bytes before it: its arguments are the call's, one fragment.
            Some(c) if !c.bytes => {
                c.bytes = true;
                c.done = Some(arguments.to_string());
                if !arguments.is_empty() {
                    out.push(Event::ArgsDelta { index, fragment: arguments.clone() });
                }
                out.push(Event::CallStop { index, arguments: Some(arguments) });
            }
            // A repeat of the fragments, which the core compares with them.
            Some(c) => {
                c.done = Some(arguments.to_string());
                out.push(Event::CallStop { index, arguments: Some(arguments) });
            }
            // Unannounced: the core reports it.
            None => {
                self.calls.map.insert(index, CallSeen { bytes: true, done: Some(arguments.to_string()) });
                out.push(Event::CallStop { index, arguments: Some(arguments) });
            }
        }
    }

    /// `response.output_item.done` for a function call.
    fn item_done(
        &mut self,
        name: &str,
        a: ItemEvent<'_>,
        out: &mut crate::Decoded<'_>,
    ) -> Result<(), TurnError> {
        let index = a.output_index;
        match self.calls.map.get(&index).map(|c| (c.bytes, c.done.as_deref())) {
            // The call's only event: its announcement, its whole arguments and its terminal.
            None => {
                let need = |f: Option<Str<'_>>, what: &str| {
                    f.map(own).ok_or_else(|| {
                        malformed(format!("{name}: item: a function_call item needs `{what}`"))
                    })
                };
                let call_id = need(a.item.call_id, "call_id")?;
                let call_name = need(a.item.name, "name")?;
                let arguments = need(a.item.arguments, "arguments")?;
                out.push(Event::CallStart { index, call_id, name: call_name });
                self.calls.map.insert(index, CallSeen { bytes: true, done: Some(arguments.to_string()) });
                if !arguments.is_empty() {
                    out.push(Event::ArgsDelta { index, fragment: arguments });
                }
                out.push(Event::CallStop { index, arguments: None });
            }
            // A second repeat of the arguments: it must say what the first said.
            Some((_, Some(done))) => {
                if let Some(args) = a.item.arguments.filter(|x| x.as_str() != done) {
                    return Err(TurnError::new(
                        toolcert_subject::ErrorClass::DoneMismatch,
                        format!(
                            "{name}: item.arguments ({} bytes) differ from what function_call_arguments.done \
                             repeated ({} bytes)",
                            args.as_str().len(),
                            done.len()
                        ),
                    ));
                }
            }
            // No `function_call_arguments.done` before it: this is the terminal, which carries
            // the call's arguments when no argument bytes came (as a done-only `done` does),
            // else repeats them.
            Some((bytes, None)) => {
                let arguments = a.item.arguments.map(own);
                let repeated = arguments.as_deref().unwrap_or_default().to_owned();
                if let Some(seen) = self.calls.map.get_mut(&index) {
                    seen.bytes = true;
                    seen.done = Some(repeated);
                }
                if let Some(a) = arguments.as_ref().filter(|a| !bytes && !a.is_empty()) {
                    out.push(Event::ArgsDelta { index, fragment: a.clone() });
                }
                out.push(Event::CallStop { index, arguments });
            }
        }
        Ok(())
    }
}

impl crate::SseDecoder for ResponsesDecoder {
    fn decode<'m>(
        &mut self,
        event: &'m SseEvent,
        scratch: &'m mut Vec<u8>,
        out: &mut crate::Decoded<'m>,
    ) -> Result<(), TurnError> {
        if let Some(done) = deltas::decode(&mut self.calls, scratch, event, out) {
            return done;
        }
        let name = event_name(event)?;
        let name = name.as_ref();
        let data = event.data.as_str();
        match name {
            "response.output_item.added" => {
                let a: ItemEvent<'_> = match parse(name, data) {
                    Ok(a) => a,
                    Err(e) => return unless_a_call(data, e),
                };
                check_type(name, &a.kind)?;
                if a.item.kind.as_str() == "function_call" {
                    let need = |f: Option<Str<'_>>, what: &str| {
                        f.map(own).ok_or_else(|| {
                            malformed(format!("{name}: item: a function_call item needs `{what}`"))
                        })
                    };
                    let index = a.output_index;
                    let call_id = need(a.item.call_id, "call_id")?;
                    let call_name = need(a.item.name, "name")?;
                    out.push(Event::CallStart { index, call_id, name: call_name });
                    let args = a.item.arguments.filter(|s| !s.as_str().is_empty());
                    self.calls.announce(index, args.is_some());
                    if let Some(args) = args {
                        out.push(Event::ArgsDelta { index, fragment: own(args) });
                    }
                } else {
                    decode_foreign(name, data, out).unwrap_or_default();
                }
            }
            "response.function_call_arguments.delta" => {
                let d: ArgsDelta<'_> = parse(name, data)?;
                check_type(name, &d.kind)?;
                self.calls.delta(d.output_index);
                out.push(Event::ArgsDelta { index: d.output_index, fragment: own(d.delta) });
            }
            "response.function_call_arguments.done" => {
                let d: ArgsDone<'_> = parse(name, data)?;
                check_type(name, &d.kind)?;
                self.arguments_done(d, out);
            }
            "response.output_item.done" => {
                let a: ItemEvent<'_> = match parse(name, data) {
                    Ok(a) => a,
                    Err(e) => return unless_a_call(data, e),
                };
                check_type(name, &a.kind)?;
                if a.item.kind.as_str() == "function_call" {
                    self.item_done(name, a, out)?;
                } else {
                    // Reasoning, web search calls, custom tool calls: the foreign item ends.
                    decode_foreign(name, data, out).unwrap_or_default();
                }
            }
            "response.output_text.delta" => {
                let d: TextDelta<'_> = parse(name, data)?;
                check_type(name, &d.kind)?;
                out.push(Event::TextDelta { text: own(d.delta) });
            }
            "response.failed" => {
                let f: ResponseEvent<'_> = parse(name, data)?;
                check_type(name, &f.kind)?;
                let message = f.response.error.map_or("the response failed".into(), |e| own(e.message));
                out.push(Event::Error { message });
            }
            "error" => {
                let e: ErrorEvent<'_> = parse(name, data)?;
                check_type(name, &e.kind)?;
                out.push(Event::Error { message: own(e.message) });
            }
            "response.created" => {
                if std::mem::replace(&mut self.created, true) {
                    return Err(malformed(format!(
                        "{name}: a second response in one stream (another generation spliced in): \
                         none of its calls can be trusted"
                    )));
                }
            }
            "response.completed" | "response.incomplete" | "response.in_progress" => {
                let o: Bare<'_> = parse(name, data)?;
                check_type(name, &o.kind)?;
                out.push(match name {
                    "response.completed" => Event::Stop { reason: StopReason::Completed },
                    "response.incomplete" => Event::Stop { reason: StopReason::Incomplete },
                    // A status event with nothing new: a keep-alive.
                    _ => Event::Ping,
                });
            }
            // Reasoning, web search calls, refusals and custom tool calls; then response.created,
            // content parts, output_item.done, ...
            // A foreign item's event this decoder cannot read is skipped, not a failed turn:
            // nothing of it may reach a call or the text anyway.
            _ => decode_foreign(name, data, out).unwrap_or_default(),
        }
        Ok(())
    }
}

/// An `output_item.added` or `.done` whose item the call path cannot read: the error `e`
/// when it is a function call (or the data is no JSON object with an item), else nothing.
/// An item of another type (a hosted tool's, whose `arguments` is an object; one added after
/// this harness was written) is never the client's call, whatever its fields hold, and
/// never fails the turn.
fn unless_a_call(data: &str, e: TurnError) -> Result<(), TurnError> {
    #[derive(Deserialize)]
    struct Head<'a> {
        #[serde(borrow)]
        item: ItemType<'a>,
    }
    #[derive(Deserialize)]
    struct ItemType<'a> {
        #[serde(rename = "type", borrow)]
        kind: Str<'a>,
    }
    match serde_json::from_str::<Head<'_>>(data) {
        Ok(h) if h.item.kind.as_str() != "function_call" => Ok(()),
        _ => Err(e),
    }
}

/// Foreign items (docs/SPEC.md, ACC-FOREIGN): reasoning (`reasoning` items, their summary
/// streamed), encrypted reasoning, web search calls, refusals (a message item's `refusal`
/// part) and custom tool calls (freeform `input`, never JSON).
impl Renderer<'_> {
    fn foreign_start(
        &mut self,
        index: u32,
        kind: ForeignKind,
        id: &str,
        name: &str,
        content: &str,
        k: usize,
    ) {
        use serde_json::json;
        let item_id = match kind {
            ForeignKind::Thinking | ForeignKind::RedactedThinking => {
                self.ids.hex("rs_", &format!("rs{index}"), 48)
            }
            ForeignKind::WebSearchCall => id.to_owned(),
            ForeignKind::CustomToolCall => self.ids.hex("ctc_", id, 48),
            _ => self.ids.hex("msg_", &format!("refusal{index}"), 48),
        };
        let open =
            OpenForeign { kind, item_id, id: id.to_owned(), name: name.to_owned(), content: String::new() };
        let at = |item: serde_json::Value| json!({ "output_index": index, "item": item });
        let in_item = json!({ "item_id": open.item_id, "output_index": index });
        match kind {
            ForeignKind::Thinking => {
                let item = json!({ "type": "reasoning", "id": open.item_id, "summary": [] });
                self.event("response.output_item.added", at(item), k + 1);
                let mut part = in_item.clone();
                part["summary_index"] = json!(0);
                part["part"] = json!({ "type": "summary_text", "text": "" });
                self.event("response.reasoning_summary_part.added", part, k + 1);
            }
            ForeignKind::RedactedThinking => {
                let item = json!({
                    "type": "reasoning", "id": open.item_id, "summary": [], "encrypted_content": content,
                });
                self.event("response.output_item.added", at(item), k + 1);
            }
            ForeignKind::WebSearchCall => {
                let item = json!({
                    "type": "web_search_call", "id": open.item_id, "status": "in_progress",
                    "action": { "type": "search", "query": content },
                });
                self.event("response.output_item.added", at(item), k + 1);
                self.event("response.web_search_call.in_progress", in_item.clone(), k + 1);
                self.event("response.web_search_call.searching", in_item, k + 1);
            }
            ForeignKind::CustomToolCall => {
                let item = json!({
                    "type": "custom_tool_call", "id": open.item_id, "call_id": id, "name": name, "input": "",
                });
                self.event("response.output_item.added", at(item), k + 1);
            }
            // A refusal is a message item whose one part is a refusal.
            _ => {
                let item = json!({
                    "type": "message", "id": open.item_id, "status": "in_progress", "role": "assistant",
                    "content": [],
                });
                self.event("response.output_item.added", at(item), k);
                let mut part = in_item;
                part["content_index"] = json!(0);
                part["part"] = json!({ "type": "refusal", "refusal": "" });
                self.event("response.content_part.added", part, k + 1);
            }
        }
        let mut open = open;
        open.content = if kind.streams() { String::new() } else { content.to_owned() };
        self.foreign.insert(index, open);
    }

    fn foreign_delta(&mut self, index: u32, kind: ForeignKind, fragment: &str, k: usize) {
        use serde_json::json;
        let item_id = match self.foreign.get_mut(&index) {
            Some(f) => {
                f.content.push_str(fragment);
                f.item_id.clone()
            }
            None => self.ids.hex("rs_", &format!("unstarted{index}"), 48),
        };
        let mut body = json!({ "item_id": item_id, "output_index": index, "delta": fragment });
        let name = match kind {
            ForeignKind::Refusal => {
                body["content_index"] = json!(0);
                "response.refusal.delta"
            }
            ForeignKind::CustomToolCall => "response.custom_tool_call_input.delta",
            _ => {
                body["summary_index"] = json!(0);
                "response.reasoning_summary_text.delta"
            }
        };
        self.event(name, body, k + 1);
    }

    fn foreign_stop(&mut self, index: u32, k: usize) {
        use serde_json::json;
        let Some(f) = self.foreign.remove(&index) else { return };
        let in_item = json!({ "item_id": f.item_id, "output_index": index });
        let with = |mut v: serde_json::Value, fields: serde_json::Value| {
            if let (Some(v), Some(fields)) = (v.as_object_mut(), fields.as_object()) {
                v.extend(fields.clone());
            }
            v
        };
        let item = match f.kind {
            ForeignKind::Thinking => {
                let part = json!({ "type": "summary_text", "text": f.content });
                let done = with(in_item.clone(), json!({ "summary_index": 0, "text": f.content }));
                self.event("response.reasoning_summary_text.done", done, k);
                let done = with(in_item, json!({ "summary_index": 0, "part": part }));
                self.event("response.reasoning_summary_part.done", done, k);
                json!({ "type": "reasoning", "id": f.item_id, "summary": [part] })
            }
            ForeignKind::RedactedThinking => json!({
                "type": "reasoning", "id": f.item_id, "summary": [], "encrypted_content": f.content,
            }),
            ForeignKind::WebSearchCall => {
                self.event("response.web_search_call.completed", in_item, k);
                json!({
                    "type": "web_search_call", "id": f.item_id, "status": "completed",
                    "action": { "type": "search", "query": f.content },
                })
            }
            ForeignKind::CustomToolCall => {
                self.event(
                    "response.custom_tool_call_input.done",
                    with(in_item, json!({ "input": f.content })),
                    k,
                );
                json!({
                    "type": "custom_tool_call", "id": f.item_id, "call_id": f.id, "name": f.name,
                    "input": f.content,
                })
            }
            _ => {
                let part = json!({ "type": "refusal", "refusal": f.content });
                let done = with(in_item.clone(), json!({ "content_index": 0, "refusal": f.content }));
                self.event("response.refusal.done", done, k);
                let done = with(in_item, json!({ "content_index": 0, "part": part }));
                self.event("response.content_part.done", done, k + 1);
                json!({
                    "type": "message", "id": f.item_id, "status": "completed", "role": "assistant",
                    "content": [part],
                })
            }
        };
        // A refusal's stop is its part's done (sent above); the others' is the item's.
        let item = Item::Foreign(item);
        self.event(
            "response.output_item.done",
            ItemEvent { kind: None, output_index: index, item: &item },
            k + 1,
        );
        self.done.push((index, item));
    }
}

/// The foreign item kind of an item: reasoning (encrypted only when it carries
/// `encrypted_content` and no summary is streamed for it), web search and custom tool calls.
fn foreign_item(item: &ItemFields<'_>) -> Option<ForeignKind> {
    Some(match item.kind.as_str() {
        "reasoning"
            if item.encrypted_content.as_ref().and_then(|c| c.as_str()).is_some_and(|c| !c.is_empty()) =>
        {
            ForeignKind::RedactedThinking
        }
        "reasoning" => ForeignKind::Thinking,
        "web_search_call" => ForeignKind::WebSearchCall,
        "custom_tool_call" => ForeignKind::CustomToolCall,
        _ => return None,
    })
}

/// Decodes the events of foreign items into neutral foreign events; any other event is
/// skipped (bookkeeping, or added after this harness was written).
fn decode_foreign(name: &str, data: &str, out: &mut crate::Decoded<'_>) -> Result<(), TurnError> {
    use std::borrow::Cow;
    let none = || Cow::Borrowed("");
    match name {
        "response.output_item.added" | "response.output_item.done" => {
            // Only reached for items the call path does not read.
            let a: ItemEvent<'_> = parse(name, data)?;
            check_type(name, &a.kind)?;
            let item = a.item;
            // A foreign item's strings that are not strings: an item this decoder cannot read.
            let (Ok(id), Ok(input), Ok(encrypted)) =
                (text(&item.id), text(&item.input), text(&item.encrypted_content))
            else {
                return Ok(());
            };
            let Some(kind) = foreign_item(&item) else { return Ok(()) };
            let index = a.output_index;
            if name == "response.output_item.done" {
                out.push(Event::ForeignStop { index });
                return Ok(());
            }
            let (id, fname, content) = match kind {
                ForeignKind::RedactedThinking => (none(), none(), encrypted.unwrap_or_else(none)),
                ForeignKind::WebSearchCall => {
                    let query =
                        item.action.as_ref().and_then(|a| a.get("query")?.as_str().map(str::to_owned));
                    (id.unwrap_or_else(none), none(), query.map_or_else(none, Cow::Owned))
                }
                ForeignKind::CustomToolCall => {
                    (item.call_id.map_or_else(none, own), item.name.map_or_else(none, own), none())
                }
                _ => (none(), none(), none()),
            };
            out.push(Event::ForeignStart { index, kind, id, name: fname, content });
            if let Some(input) = input.filter(|i| kind == ForeignKind::CustomToolCall && !i.is_empty()) {
                out.push(Event::ForeignDelta { index, kind, fragment: input });
            }
        }
        "response.reasoning_summary_text.delta"
        | "response.refusal.delta"
        | "response.custom_tool_call_input.delta" => {
            let d: ArgsDelta<'_> = parse(name, data)?;
            check_type(name, &d.kind)?;
            let kind = match name {
                "response.refusal.delta" => ForeignKind::Refusal,
                "response.custom_tool_call_input.delta" => ForeignKind::CustomToolCall,
                _ => ForeignKind::Thinking,
            };
            out.push(Event::ForeignDelta { index: d.output_index, kind, fragment: own(d.delta) });
        }
        // A refusal is a message item's part: it starts and ends with the part.
        "response.content_part.added" | "response.content_part.done" => {
            let p: PartEvent<'_> = parse(name, data)?;
            check_type(name, &p.kind)?;
            if p.part.kind.as_str() == "refusal" {
                let index = p.output_index;
                out.push(if name == "response.content_part.added" {
                    Event::ForeignStart {
                        index,
                        kind: ForeignKind::Refusal,
                        id: none(),
                        name: none(),
                        content: none(),
                    }
                } else {
                    Event::ForeignStop { index }
                });
            }
        }
        _ => {}
    }
    Ok(())
}

/// OpenAI Responses in the [`crate::registry`].
pub struct OpenAiResponses;

impl crate::DialectDef for OpenAiResponses {
    fn id(&self) -> Dialect {
        Dialect::OpenAiResponses
    }

    /// Every call is closed by its own `function_call_arguments.done`: only the per-call shape.
    fn carries(&self, shape: &toolcert_scenario::Shape) -> bool {
        matches!(shape, toolcert_scenario::Shape::PerCall)
    }

    fn speaks_foreign(&self, kind: ForeignKind) -> bool {
        use ForeignKind::*;
        matches!(kind, Thinking | RedactedThinking | WebSearchCall | Refusal | CustomToolCall)
    }

    fn stop_reasons(&self) -> &'static [StopReason] {
        &[StopReason::Completed, StopReason::Incomplete]
    }

    /// Its server profiles ([`toolcert_scenario::PROFILES`]): OpenAI's own stream, arguments
    /// only in the `done` events (LM Studio), a fresh `item_id` on every event (a Copilot
    /// gateway), hosted-tool items beside the calls.
    fn quirk_profiles(&self) -> &'static [Quirks] {
        static PROFILES: std::sync::OnceLock<Vec<Quirks>> = std::sync::OnceLock::new();
        crate::registry::profiles_of(Dialect::OpenAiResponses, &PROFILES)
    }

    /// Two terminal events: `response.incomplete` for every truncating meaning,
    /// `response.completed` for the rest.
    fn word(&self, meaning: StopMeaning) -> StopReason {
        if meaning.is_truncating() {
            StopReason::Incomplete
        } else {
            StopReason::Completed
        }
    }

    fn repeats_arguments(&self) -> bool {
        true
    }

    fn render(
        &self,
        turn: &Turn,
        neutral: &Rendered<'_>,
        quirks: toolcert_scenario::Quirks,
        ids: &Ids,
    ) -> Result<crate::WireStream, String> {
        Ok(render(turn, neutral, quirks, ids).into())
    }

    /// Framed as rendered; with a tail, the stream is rendered again as it would have gone
    /// on for the event the connection dropped inside.
    fn render_bytes_direct(
        &self,
        turn: &Turn,
        neutral: &Rendered<'_>,
        quirks: toolcert_scenario::Quirks,
        ids: &Ids,
    ) -> Option<crate::BytesStream> {
        let next = crate::next_sse(turn, neutral, self, quirks, ids)?;
        render_into(turn, neutral, quirks, ids, Out::framing(turn, neutral, 4, 480))
            .framed(turn, next.as_ref())
    }

    fn decoder(&self, _quirks: toolcert_scenario::Quirks) -> Box<dyn crate::WireDecoder> {
        Box::new(crate::OverSse::new(ResponsesDecoder::new()))
    }

    fn detects(&self, message: &toolcert_subject::WireMessage) -> bool {
        message.as_sse().and_then(crate::json::detect_one) == Some(Dialect::OpenAiResponses)
    }

    fn endpoint(&self) -> &'static str {
        "/v1/responses"
    }

    fn names_event(&self, name: &str) -> bool {
        name.starts_with("response.")
    }

    fn wrong_typed(&self, event: &serde_json::Value) -> Option<serde_json::Value> {
        (event.get("type")? == "response.function_call_arguments.delta"
            && crate::defect::nonempty(event.get("delta")?))
        .then_some(())?;
        let mut copy = event.clone();
        copy["delta"] = serde_json::json!(42);
        Some(copy)
    }

    /// A call's terminal event (`function_call_arguments.done`) repeats its arguments:
    /// exercised once a call's terminal was delivered.
    fn exercised(&self, _: &Turn, neutral: &Rendered<'_>, add: &mut dyn FnMut(&'static str)) {
        if neutral.origins.iter().any(|o| matches!(o, Origin::CallStop { .. })) {
            add("WIRE-DONE");
        }
    }

    fn attribution(&self) -> &'static [crate::Attribution] {
        &[crate::Attribution {
            rule: "WIRE-DONE",
            has: |t| !t.wire.item_done_only.is_empty(),
            strip: |t| t.wire.item_done_only.clear(),
            why: "passes with every call sent with its own announcement and deltas",
        }]
    }

    fn done_mismatch_rule(&self) -> Option<&'static str> {
        Some("WIRE-DONE")
    }

    /// Calls announced by their `output_item.done` alone, a mismatch in one `done` only.
    fn reads(&self, wire: &toolcert_scenario::WireEvents) -> bool {
        !wire.item_done_only.is_empty()
            || !wire.mismatch_in.is_both()
            || wire.spliced.is_some()
            || wire.hostile_index.is_some()
    }

    /// `response.created` for another response: its id marked as a retry's.
    fn second_generation(
        &self,
        first: &toolcert_subject::WireMessage,
    ) -> Option<toolcert_subject::WireMessage> {
        let first = first.as_sse()?;
        (event_name(first).ok()?.as_ref() == "response.created").then_some(())?;
        let mut v: serde_json::Value = serde_json::from_str(&first.data).ok()?;
        let id = v.pointer_mut("/response/id")?;
        *id = format!("{}_retry", id.as_str()?).into();
        Some(SseEvent { data: v.to_string(), ..first.clone() }.into())
    }
}
