//! Anthropic's units of types the client does not know (docs/SPEC.md WIRE-UNKNOWN, a turn's
//! `wire.unknown`): inserted into its rendered wire stream ([`unknown`], the wire level), or
//! placed among the events as they are framed ([`Units`], the bytes level, which keeps no
//! wire stream to insert into; the tests check both give the same bytes).

use serde::{Deserialize, Serialize};
use toolcert_scenario::{UnknownKind, WireEvents};
use toolcert_sse::SseEvent;

use crate::extra::insert;
use crate::json::to_json;
use crate::SseStream as WireStream;

/// What the block open at a point of an Anthropic stream is.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub(crate) enum Open {
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

/// The units of a turn placed as its events are framed, where [`unknown`] would have
/// inserted them: before the first event past `message_start` that completes more neutral
/// events than the unit's `at`, but never past the message's stop, error or end (the first
/// `message_delta`, `message_stop` or `error`); units at one place in the turn's order.
pub(crate) struct Units {
    units: Vec<(u32, UnknownKind)>,
    placed: Vec<bool>,
    left: usize,
    /// The block open after the events framed so far (as [`open_block`] reads them).
    open: Option<Open>,
}

impl Units {
    pub fn new(extra: &WireEvents) -> Units {
        let units: Vec<(u32, UnknownKind)> = extra.unknown.iter().map(|u| (u.at, u.kind)).collect();
        Units { placed: vec![false; units.len()], left: units.len(), units, open: None }
    }

    /// A content block `open` has started.
    pub fn started(&mut self, open: Open) {
        self.open = Some(open);
    }

    /// The content block at `index` has stopped.
    pub fn stopped(&mut self, index: u32) {
        if matches!(self.open, Some(Open::Text(i) | Open::Other(i)) if i == index) {
            self.open = None;
        }
    }

    /// The units placed before the `w`-th event, named `name` and completing `delivered`
    /// neutral events (`None`: the stream's end), each given to `put` (name, data).
    pub fn before(&mut self, w: usize, next: Option<(Option<&str>, u32)>, mut put: impl FnMut(&str, &str)) {
        if self.left == 0 {
            return;
        }
        let all = match next {
            None => true,
            Some((Some("message_delta" | "message_stop" | "error"), _)) => true,
            Some(_) if w == 0 => return,
            Some((_, delivered)) => {
                if !self.units.iter().zip(&self.placed).any(|(u, &p)| !p && delivered > u.0) {
                    return;
                }
                false
            }
        };
        for (k, &(at, kind)) in self.units.iter().enumerate() {
            if self.placed[k] || !(all || next.is_some_and(|(_, d)| d > at)) {
                continue;
            }
            self.placed[k] = true;
            self.left -= 1;
            let (name, data) = unit(kind, self.open);
            put(name, &data);
        }
    }
}

/// A unit's event as [`unknown`] renders it, with the block `open` where it goes.
fn unit(kind: UnknownKind, open: Option<Open>) -> (&'static str, String) {
    let delta = |index: u32, rest: &str| {
        let mut p = crate::json::Payload::with_capacity(320);
        p.raw(r#"{"type":"content_block_delta","index":"#);
        p.u64(index.into());
        p.raw(rest);
        ("content_block_delta", p.finish())
    };
    match (kind, open) {
        (UnknownKind::Delta, Some(Open::Text(index))) => delta(
            index,
            r#","delta":{"type":"citations_delta","citation":{"type":"char_location","cited_text":"The order ships within two business days.","document_index":0,"document_title":"Shipping policy","start_char_index":0,"end_char_index":42}}}"#,
        ),
        (UnknownKind::Delta, Some(Open::Other(index))) => {
            delta(index, r#","delta":{"type":"input_status_delta","status":"streaming"}}"#)
        }
        (UnknownKind::Event, _) | (UnknownKind::Delta, None) => (
            "message_metadata",
            r#"{"type":"message_metadata","metadata":{"service_tier":"standard"}}"#.into(),
        ),
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

#[cfg(test)]
mod tests {
    use super::*;

    /// Each unit's hand-written event is the one [`unknown`] serialises, wherever it goes.
    #[test]
    fn units_are_written_as_serde_writes_them() {
        let mut seen = 0;
        for kind in [UnknownKind::Delta, UnknownKind::Event] {
            for open in [
                None,
                Some(Open::Text(0)),
                Some(Open::Text(7)),
                Some(Open::Other(3)),
                Some(Open::Other(u32::MAX)),
            ] {
                let mut wire = WireStream::default();
                wire.events.push(SseEvent::named("message_start", "{}"));
                wire.upto.push(0);
                if let Some(o) = open {
                    let (index, ty) = match o {
                        Open::Text(i) => (i, "text"),
                        Open::Other(i) => (i, "tool_use"),
                    };
                    let data = format!(
                        r#"{{"type":"content_block_start","index":{index},"content_block":{{"type":"{ty}"}}}}"#
                    );
                    // Completing nothing: the unit goes after it, at the end.
                    wire.events.push(SseEvent::named("content_block_start", data));
                    wire.upto.push(0);
                }
                let extra = WireEvents {
                    unknown: vec![toolcert_scenario::Unknown { at: 0, kind }],
                    ..Default::default()
                };
                unknown(&mut wire, &extra);
                let (name, data) = unit(kind, open);
                let inserted = wire.events.last().unwrap();
                assert_eq!(
                    (inserted.event.as_deref(), inserted.data.as_str()),
                    (Some(name), data.as_str()),
                    "{kind:?} {open:?}"
                );
                seen += 1;
            }
        }
        assert_eq!(seen, 10);
    }
}
