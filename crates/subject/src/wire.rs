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

/// The bytes level's units: a stream's transport chunks, kept as one buffer and where each
/// chunk ends (a stream cut every few bytes has thousands of chunks; one allocation each
/// cost more than the rest of rendering them).
#[derive(Clone, Debug, Default, PartialEq, Eq, Hash)]
pub struct Chunks {
    bytes: Vec<u8>,
    /// `ends[k]` is the offset just past chunk `k`: never decreasing, the last one
    /// `bytes.len()`.
    ends: Vec<usize>,
}

impl Chunks {
    /// `bytes` cut at `ends` (each the end of a chunk); offsets not past the previous one
    /// make no chunk, so every chunk is non-empty, and the rest of `bytes` after the last
    /// offset is a chunk of its own.
    pub fn cut(bytes: Vec<u8>, ends: impl IntoIterator<Item = usize>) -> Chunks {
        let ends = ends.into_iter();
        let mut at = Vec::with_capacity(ends.size_hint().0 + 1);
        let mut start = 0;
        for end in ends.into_iter().chain(std::iter::once(bytes.len())) {
            let end = end.min(bytes.len());
            if end > start {
                at.push(end);
                start = end;
            }
        }
        Chunks { bytes, ends: at }
    }

    /// [`Chunks::cut`] at `cuts` that are already strictly inside `bytes`, rising and
    /// without repeats (a resolved cut list): the same chunks, their ends copied at once.
    pub fn cut_inside(bytes: Vec<u8>, cuts: &[usize]) -> Chunks {
        debug_assert!(cuts.windows(2).all(|w| w[0] < w[1]) && cuts.iter().all(|&c| c > 0 && c < bytes.len()));
        let mut ends = Vec::with_capacity(cuts.len() + 1);
        ends.extend_from_slice(cuts);
        if !bytes.is_empty() {
            ends.push(bytes.len());
        }
        Chunks { bytes, ends }
    }

    /// Appends one chunk (even an empty one: a subject fed it may answer it).
    pub fn push(&mut self, chunk: &[u8]) {
        self.bytes.extend_from_slice(chunk);
        self.ends.push(self.bytes.len());
    }

    /// How many chunks.
    pub fn len(&self) -> usize {
        self.ends.len()
    }

    pub fn is_empty(&self) -> bool {
        self.ends.is_empty()
    }

    /// Chunk `k`.
    pub fn get(&self, k: usize) -> Option<&[u8]> {
        let end = *self.ends.get(k)?;
        let start = if k == 0 { 0 } else { self.ends[k - 1] };
        Some(&self.bytes[start..end])
    }

    /// The chunks in order.
    pub fn iter(&self) -> impl ExactSizeIterator<Item = &[u8]> + '_ {
        (0..self.len()).map(|k| &self[k])
    }

    /// The whole stream, every chunk in order.
    pub fn bytes(&self) -> &[u8] {
        &self.bytes
    }

    /// Where each chunk ends in [`Chunks::bytes`].
    pub fn ends(&self) -> &[usize] {
        &self.ends
    }

    /// The whole stream, as one `Vec`.
    pub fn concat(&self) -> Vec<u8> {
        self.bytes.clone()
    }
}

impl std::ops::Index<usize> for Chunks {
    type Output = [u8];

    fn index(&self, k: usize) -> &[u8] {
        self.get(k).expect("a chunk index below Chunks::len")
    }
}

impl<C: AsRef<[u8]>> FromIterator<C> for Chunks {
    fn from_iter<I: IntoIterator<Item = C>>(iter: I) -> Chunks {
        let mut chunks = Chunks::default();
        for c in iter {
            chunks.push(c.as_ref());
        }
        chunks
    }
}
