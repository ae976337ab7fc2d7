//! Dialect events that carry no neutral event ([`WireEvents`]), added to a rendered wire
//! stream: Anthropic units of types the client does not know, and OpenAI Chat's prelude
//! chunk, usage chunk without `choices` and `[DONE]` after a stream without a finish reason.
//! (Responses' `output_item.done`-only calls and one-sided mismatches change how a call is
//! sent, so `responses.rs` renders them.) Each inserted event completes no neutral event:
//! it carries the count of the event before it.

use serde::{Deserialize, Serialize};
use toolcert_scenario::{Dialect, Turn, UnknownKind, WireEvents};
use toolcert_sse::SseEvent;

use crate::json::to_json;
use crate::SseStream as WireStream;

/// `wire` (of `turn`, in `dialect`) with the turn's dialect events added.
pub(crate) fn add(wire: &mut WireStream, turn: &Turn, dialect: Dialect) {
    let extra = &turn.wire;
    if extra.is_plain() {
        return;
    }
    match dialect {
        Dialect::Anthropic => unknown(wire, extra),
        Dialect::OpenAiChat => chat(wire, turn),
        Dialect::OpenAiResponses | Dialect::Bedrock => {}
    }
}

fn insert(wire: &mut WireStream, at: usize, event: SseEvent) {
    let upto = at.checked_sub(1).and_then(|w| wire.upto.get(w)).copied().unwrap_or(0);
    wire.events.insert(at, event);
    wire.upto.insert(at, upto);
}

/// What the block open at a point of an Anthropic stream is.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Open {
    Text(u32),
    Other(u32),
}

#[derive(Deserialize)]
struct BlockEvent {
    index: u32,
    #[serde(default)]
    content_block: Option<BlockType>,
}

#[derive(Deserialize)]
struct BlockType {
    #[serde(rename = "type")]
    kind: String,
}

fn unknown(wire: &mut WireStream, extra: &WireEvents) {
    // The body: after `message_start`, before the message's stop, error or end.
    let end = wire
        .events
        .iter()
        .position(|e| matches!(e.event.as_deref(), Some("message_delta" | "message_stop" | "error")))
        .unwrap_or(wire.events.len());
    let mut places: Vec<(usize, UnknownKind)> = extra
        .unknown
        .iter()
        .map(|u| {
            let w = wire.upto.iter().position(|&n| n > u.at).unwrap_or(end);
            (w.clamp(1.min(end), end), u.kind)
        })
        .collect();
    places.sort_by_key(|p| p.0);
    // From the back, so earlier places stay where they were computed.
    for &(at, kind) in places.iter().rev() {
        let open = open_block(&wire.events[..at]);
        let (name, data) = match (kind, open) {
            (UnknownKind::Delta, Some(Open::Text(index))) => {
                let citation = Citation {
                    kind: "char_location",
                    cited_text: "The order ships within two business days.",
                    document_index: 0,
                    document_title: "Shipping policy",
                    start_char_index: 0,
                    end_char_index: 42,
                };
                let delta = UnknownDelta::CitationsDelta { citation };
                ("content_block_delta", to_json(&DeltaEvent { kind: "content_block_delta", index, delta }))
            }
            // A delta type added after the client was written, on a tool block.
            (UnknownKind::Delta, Some(Open::Other(index))) => {
                let delta = UnknownDelta::InputStatusDelta { status: "streaming" };
                ("content_block_delta", to_json(&DeltaEvent { kind: "content_block_delta", index, delta }))
            }
            (UnknownKind::Event, _) | (UnknownKind::Delta, None) => {
                let metadata = Metadata { service_tier: "standard" };
                ("message_metadata", to_json(&MetadataEvent { kind: "message_metadata", metadata }))
            }
        };
        insert(wire, at, SseEvent { event: Some(name.into()), data, id: None });
    }
}

#[derive(Serialize)]
struct DeltaEvent {
    #[serde(rename = "type")]
    kind: &'static str,
    index: u32,
    delta: UnknownDelta,
}

#[derive(Serialize)]
#[serde(tag = "type", rename_all = "snake_case")]
enum UnknownDelta {
    CitationsDelta { citation: Citation },
    InputStatusDelta { status: &'static str },
}

#[derive(Serialize)]
struct Citation {
    #[serde(rename = "type")]
    kind: &'static str,
    cited_text: &'static str,
    document_index: u32,
    document_title: &'static str,
    start_char_index: u32,
    end_char_index: u32,
}

#[derive(Serialize)]
struct MetadataEvent {
    #[serde(rename = "type")]
    kind: &'static str,
    metadata: Metadata,
}

#[derive(Serialize)]
struct Metadata {
    service_tier: &'static str,
}

fn open_block(events: &[SseEvent]) -> Option<Open> {
    let mut open = None;
    for e in events {
        match e.event.as_deref() {
            Some("content_block_start") => {
                if let Ok(b) = serde_json::from_str::<BlockEvent>(&e.data) {
                    let text = b.content_block.is_some_and(|c| c.kind == "text");
                    open = Some(if text { Open::Text(b.index) } else { Open::Other(b.index) });
                }
            }
            Some("content_block_stop") => {
                if let Ok(b) = serde_json::from_str::<BlockEvent>(&e.data) {
                    if matches!(open, Some(Open::Text(i) | Open::Other(i)) if i == b.index) {
                        open = None;
                    }
                }
            }
            _ => {}
        }
    }
    open
}

/// Azure OpenAI's first chunk: the prompt's content-filter results, no choice.
fn prelude() -> String {
    let safe = Filter { filtered: false, severity: "safe" };
    to_json(&Prelude {
        choices: [],
        created: 0,
        id: "",
        model: "",
        object: "",
        prompt_filter_results: [PromptFilter {
            prompt_index: 0,
            content_filter_results: Filters { hate: safe, self_harm: safe, sexual: safe, violence: safe },
        }],
    })
}

#[derive(Serialize)]
struct Prelude {
    choices: [(); 0],
    created: u64,
    id: &'static str,
    model: &'static str,
    object: &'static str,
    prompt_filter_results: [PromptFilter; 1],
}

#[derive(Serialize)]
struct PromptFilter {
    prompt_index: u32,
    content_filter_results: Filters,
}

#[derive(Serialize)]
struct Filters {
    hate: Filter,
    self_harm: Filter,
    sexual: Filter,
    violence: Filter,
}

#[derive(Serialize, Clone, Copy)]
struct Filter {
    filtered: bool,
    severity: &'static str,
}

fn chat(wire: &mut WireStream, turn: &Turn) {
    let extra = &turn.wire;
    let done = wire.events.iter().any(|e| e.data == "[DONE]");
    if extra.usage_without_choices {
        // The closing usage chunk (`choices: []` and `usage`) loses its `choices` key.
        if let Some(e) = wire.events.iter_mut().rev().find(|e| e.data.contains("\"usage\":{")) {
            e.data = e.data.replacen("\"choices\":[],", "", 1);
        }
    }
    // A stream cut inside its next event never reaches a `[DONE]` of its own.
    if extra.done_without_finish && !done && turn.transport.tail.is_none() {
        let at = wire.events.len();
        insert(wire, at, SseEvent { event: None, data: "[DONE]".into(), id: None });
    }
    if extra.chat_prelude {
        insert(wire, 0, SseEvent { event: None, data: prelude(), id: None });
    }
}
