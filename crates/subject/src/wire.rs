//! The wire level's unit: one message of a dialect, in the dialect's own framing.
//!
//! Where it sits: scenario → events → **wire** → bytes → subject. A [`WireMessage`] is what
//! a wire-level subject is fed: one server-sent event for the SSE dialects, or one message of
//! a binary framing (a length-prefixed, checksummed [`Frame`] of headers and payload, as the
//! AWS event stream sends). Each dialect says which it speaks; `toolcert-sse` frames and
//! decodes the SSE ones, a dialect with a binary framing its own.

use serde::{Deserialize, Serialize};

/// One server-sent event, as a dialect produces it and as the decoder dispatches it.
#[derive(Clone, Debug, Default, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub struct SseEvent {
    /// The `event:` field (the event type). `None` when absent or empty (the specification
    /// treats both as the default type `message`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub event: Option<String>,
    /// The `data` lines joined with `\n`.
    pub data: String,
    /// The event's own `id:` field. Unlike the specification's last-event-id, which persists
    /// across events for reconnection, this is the field of this event only.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub id: Option<String>,
}

impl SseEvent {
    /// An event with a type line and data.
    pub fn named(event: impl Into<String>, data: impl Into<String>) -> SseEvent {
        SseEvent { event: Some(event.into()), data: data.into(), id: None }
    }

    /// An event with data only (the OpenAI Chat style).
    pub fn data(data: impl Into<String>) -> SseEvent {
        SseEvent { event: None, data: data.into(), id: None }
    }
}

/// One message of a binary framing, decoded from its bytes (lengths and checksums already
/// checked): its headers in order, as name and string value, and its payload.
#[derive(Clone, Debug, Default, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub struct Frame {
    pub headers: Vec<(String, String)>,
    pub payload: Vec<u8>,
}

impl Frame {
    /// The value of the header `name`, if it has one.
    pub fn header(&self, name: &str) -> Option<&str> {
        self.headers.iter().find(|(n, _)| n == name).map(|(_, v)| v.as_str())
    }
}

/// One unit of the wire level, in the framing its dialect speaks.
///
/// Serialised untagged, so an SSE message reads and writes exactly as an [`SseEvent`] (the
/// subprocess protocol, reproducers and reports keep their shape).
#[derive(Clone, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(untagged)]
pub enum WireMessage {
    /// A server-sent event (Anthropic, OpenAI Chat, OpenAI Responses).
    Sse(SseEvent),
    /// A message of a binary framing.
    Frame(Frame),
}

impl WireMessage {
    /// The server-sent event, when this is one.
    pub fn as_sse(&self) -> Option<&SseEvent> {
        match self {
            WireMessage::Sse(e) => Some(e),
            WireMessage::Frame(_) => None,
        }
    }

    /// The binary frame, when this is one.
    pub fn as_frame(&self) -> Option<&Frame> {
        match self {
            WireMessage::Frame(f) => Some(f),
            WireMessage::Sse(_) => None,
        }
    }
}

impl From<SseEvent> for WireMessage {
    fn from(e: SseEvent) -> WireMessage {
        WireMessage::Sse(e)
    }
}

impl From<Frame> for WireMessage {
    fn from(f: Frame) -> WireMessage {
        WireMessage::Frame(f)
    }
}
