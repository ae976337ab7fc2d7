//! Anthropic's units of types the client does not know (docs/SPEC.md WIRE-UNKNOWN, a turn's
//! `wire.unknown`), inserted into its rendered wire stream.

use serde::{Deserialize, Serialize};
use toolcert_scenario::{UnknownKind, WireEvents};
use toolcert_sse::SseEvent;

use crate::extra::insert;
use crate::json::to_json;
use crate::SseStream as WireStream;

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

pub(super) fn unknown(wire: &mut WireStream, extra: &WireEvents) {
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
