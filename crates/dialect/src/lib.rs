//! Provider dialects: the wire level.
//!
//! Where it sits in the data flow: scenario → render events → **wire (dialect messages)**
//! → bytes (transport chunks) → subject. Each dialect is one module here and one line of the
//! [`mod@registry`] (see [`mod@registry`]'s docs for how a dialect is added); this file holds only
//! what every dialect shares. [`render_wire`] maps a turn's already-rendered neutral
//! stream ([`toolcert_render::Rendered`], faults and cuts applied) to the full event stream
//! one provider sends for it: Anthropic Messages, OpenAI Chat Completions, OpenAI
//! Responses or AWS Bedrock ConverseStream ([`bedrock`], binary framed: [`eventstream`]),
//! with the envelope events, ids, usage and terminal markers those APIs put around the
//! content, so a real SDK client accepts it. [`WireStream::upto`] says how many
//! neutral events each wire event completes, so the oracle's timing stays in neutral units.
//!
//! Going the other way, the [`WireDecoder`]s are the middle layer of the reference stack
//! (SSE decoder → dialect decoder → neutral core): each maps its dialect's events back to
//! neutral events without accumulating anything, and reports input it cannot read as
//! [`ErrorClass::Malformed`] naming the event and the field, never by panicking.
//!
//! Round trip: for every turn a dialect can express, decoding [`render_wire`]'s output gives
//! the neutral events back, up to what the dialect spells its own way (see
//! [`DialectDef::stop_reason`]; Responses' terminal repeats the arguments; Chat's indices are
//! announcement ordinals, and a Chat server profile may send a call's fragments whole or
//! split otherwise).

use serde::{Deserialize, Serialize};
use toolcert_render::{Event, Origin, Rendered};
use toolcert_scenario::{Shape, StopReason, Transport, Turn};
use toolcert_sse::{Framing, SseEvent};
use toolcert_subject::{ErrorClass, TurnError, WireMessage};

mod anthropic;
pub mod bedrock;
mod bytes;
mod canonical;
mod chat;
mod defect;
pub mod eventstream;
mod extra;
pub mod gemini;
mod hostile;
mod json;
mod lower;
pub mod profiles;
pub mod registry;
#[cfg(test)]
mod render_tests;
mod responses;
mod whole;

pub use anthropic::AnthropicDecoder;
pub use bedrock::{BedrockDecoder, BedrockFrames};
pub use bytes::{resolve, tail_len, BytesStream};
pub use chat::ChatDecoder;
pub use defect::defect;
pub use gemini::GeminiDecoder;
pub use json::Ids;
pub use registry::{def, registry, Attribution, Deframer, DialectDef};
pub use responses::ResponsesDecoder;

pub use toolcert_scenario::{Dialect, Quirks, UnknownDialect};

/// A turn as one dialect streams it: its wire messages (`U`, [`WireMessage`] unless a
/// dialect module works in its own framing's unit, as the SSE ones do with [`SseStream`]).
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct WireStream<U = WireMessage> {
    pub events: Vec<U>,
    /// `upto[w]`: how many of the neutral events have been delivered in full once wire events
    /// `0..=w` have (non-decreasing; the last entry is the neutral event count).
    pub upto: Vec<u32>,
    /// For an abandoned stream whose transport has a [`toolcert_scenario::Tail`]: the event
    /// the provider would have sent next had the stream gone on (the one carrying its stop),
    /// of which the bytes level sends a part that never reaches its blank line.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub next: Option<U>,
}

/// A wire stream of SSE events, as the SSE dialects render it.
pub type SseStream = WireStream<SseEvent>;

impl<U> Default for WireStream<U> {
    fn default() -> Self {
        WireStream { events: Vec::new(), upto: Vec::new(), next: None }
    }
}

impl From<SseStream> for WireStream {
    fn from(s: SseStream) -> WireStream {
        WireStream {
            events: s.events.into_iter().map(WireMessage::Sse).collect(),
            upto: s.upto,
            next: s.next.map(WireMessage::Sse),
        }
    }
}

impl WireStream {
    /// The stream as SSE events, when every message is one.
    pub fn to_sse(&self) -> Option<SseStream> {
        Some(SseStream {
            events: self.events.iter().map(|m| m.as_sse().cloned()).collect::<Option<_>>()?,
            upto: self.upto.clone(),
            next: match &self.next {
                Some(m) => Some(m.as_sse()?.clone()),
                None => None,
            },
        })
    }
}

impl<U> WireStream<U> {
    /// How many neutral events are delivered once the first `bytes` bytes of this stream's
    /// SSE encoding are, given the encoding's [`toolcert_sse::Encoded::ends`]: the count of
    /// the last wire event whose terminating blank line is within those bytes.
    pub fn delivered_by(&self, ends: &[usize], bytes: usize) -> u32 {
        self.delivered_by_count(ends.partition_point(|&e| e <= bytes))
    }

    /// How many neutral events are delivered once its first `messages` wire messages are.
    pub fn delivered_by_count(&self, messages: usize) -> u32 {
        match messages.checked_sub(1) {
            Some(w) => self.upto.get(w).or(self.upto.last()).copied().unwrap_or(0),
            None => 0,
        }
    }
}

/// The neutral stream cannot be expressed faithfully in the dialect.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("{dialect} cannot express this stream: {reason}")]
pub struct Unsupported {
    pub dialect: Dialect,
    pub reason: String,
}

/// Renders an already-rendered neutral stream as the events `dialect` sends for it.
///
/// `neutral` must be `toolcert_render::render(turn)` or a stream derived from it (its
/// origins are read for block boundaries and piece numbering; `turn` for the shape, the
/// interleave's chunk joins and which calls have argument bytes). Envelope events that carry
/// no neutral event (`message_start`, a text block's start and stop, a usage chunk,
/// `[DONE]` ...) are added where the provider sends them; the closing ones (`message_stop`,
/// usage and `[DONE]`) only when the neutral stream has its stop.
pub fn render_wire(
    turn: &Turn,
    neutral: &Rendered<'_>,
    dialect: Dialect,
    quirks: Quirks,
) -> Result<WireStream, Unsupported> {
    let def = speakable(turn, neutral, dialect, quirks)?;
    let unsupported = |reason: String| Unsupported { dialect, reason };
    let ids = json::Ids::new(turn);
    let speak = |neutral: &Rendered<'_>| -> Result<WireStream, Unsupported> {
        def.render(turn, neutral, quirks, &ids).map_err(unsupported)
    };
    let mut wire = speak(neutral)?;
    if let Some(after) = turn.wire.spliced {
        splice(&mut wire, def, after).map_err(unsupported)?;
    }
    if let Some(h) = &turn.wire.hostile_index {
        hostile::index(&mut wire, dialect, h).map_err(unsupported)?;
    }
    wire.next = next_message(turn, neutral, def, quirks, &ids).map_err(unsupported)?;
    if quirks.hostile {
        hostile::members(&mut wire, dialect);
    }
    debug_assert_eq!(wire.events.len(), wire.upto.len());
    Ok(wire)
}

/// A second generation spliced into `wire` ([`toolcert_scenario::WireEvents::spliced`]): the
/// dialect's start event again, for another message, after the last event that completes at
/// most `after` neutral events (an event that completes several is never cut in two).
fn splice(wire: &mut WireStream, def: &dyn DialectDef, after: u32) -> Result<(), String> {
    let again = wire
        .events
        .first()
        .and_then(|first| def.second_generation(first))
        .ok_or_else(|| format!("{} has no start event to send again", def.name()))?;
    let k = wire.upto.iter().rposition(|&n| n <= after).unwrap_or(0);
    wire.events.insert(k + 1, again);
    wire.upto.insert(k + 1, wire.upto[k]);
    Ok(())
}

/// For a turn with a tail whose neutral stream has not ended: the event `def` would have sent
/// next had the stream gone on (the one carrying the stop the turn's calls ask for), which
/// the connection dropped inside; else `None`. `Err`: the stream gone on cannot be expressed.
pub(crate) fn next_message(
    turn: &Turn,
    neutral: &Rendered<'_>,
    def: &dyn DialectDef,
    quirks: Quirks,
    ids: &json::Ids,
) -> Result<Option<WireMessage>, String> {
    let ended = neutral.origins.iter().any(|o| matches!(o, Origin::Stop | Origin::Error));
    if turn.transport.tail.is_none() || ended {
        return Ok(None);
    }
    // The stream as it would have gone on: the same events, then the stop the turn's calls
    // ask for. Its event carrying that stop is what the connection dropped inside.
    let has_calls = neutral.events.iter().any(|e| matches!(e, Event::CallStart { .. }));
    let reason = def.stop_reason(if has_calls { StopReason::ToolUse } else { StopReason::EndTurn });
    let mut events = neutral.events.clone();
    events.push(Event::Stop { reason });
    let mut origins = neutral.origins.clone();
    origins.push(Origin::Stop);
    let n = events.len() as u32;
    let full = def.render(turn, &Rendered { events, origins, end: neutral.end }, quirks, ids)?;
    Ok(full.upto.iter().position(|&u| u >= n).map(|w| full.events[w].clone()))
}

/// [`next_message`] as an SSE event, for a dialect that frames as it renders: `None` when
/// the stream gone on is refused (the dialect then leaves the turn to [`render_wire`], which
/// refuses it).
pub(crate) fn next_sse(
    turn: &Turn,
    neutral: &Rendered<'_>,
    def: &dyn DialectDef,
    quirks: Quirks,
    ids: &json::Ids,
) -> Option<Option<SseEvent>> {
    match next_message(turn, neutral, def, quirks, ids).ok()? {
        Some(WireMessage::Sse(e)) => Some(Some(e)),
        _ => Some(None),
    }
}

/// [`render_bytes`] of [`render_wire`]'s stream (the same bytes, cuts and counts, and the
/// same refusals), framed as the events are rendered where the dialect can
/// ([`DialectDef::render_bytes_direct`]): the bytes level, which needs no wire stream.
pub fn render_wire_bytes(
    turn: &Turn,
    neutral: &Rendered<'_>,
    dialect: Dialect,
    quirks: Quirks,
) -> Result<BytesStream, Unsupported> {
    let def = speakable(turn, neutral, dialect, quirks)?;
    // A spliced generation, a hostile index and hostile members are edits of the rendered
    // events, never framed directly.
    let direct = || def.render_bytes_direct(turn, neutral, quirks, &json::Ids::new(turn));
    let edited = turn.wire.spliced.is_some() || turn.wire.hostile_index.is_some() || quirks.hostile;
    if let Some(b) = (!edited).then(direct).flatten() {
        return Ok(b);
    }
    let wire = render_wire(turn, neutral, dialect, quirks)?;
    Ok(render_bytes(dialect, &wire, &turn.transport))
}

/// The dialect's definition, if it can express the turn (else why not).
fn speakable(
    turn: &Turn,
    neutral: &Rendered<'_>,
    dialect: Dialect,
    quirks: Quirks,
) -> Result<&'static dyn DialectDef, Unsupported> {
    let unsupported = |reason: String| Unsupported { dialect, reason };
    if neutral.origins.len() != neutral.events.len() {
        return Err(unsupported(format!(
            "the neutral stream has {} events but {} origins",
            neutral.events.len(),
            neutral.origins.len()
        )));
    }
    let def = registry::def(dialect);
    if !def.carries(&turn.shape) {
        let shape = match turn.shape {
            Shape::PerCall => "per-call",
            Shape::Interleaved(_) => "interleaved",
        };
        return Err(unsupported(format!("it has no {shape} shape")));
    }
    // Each flag must be one some server profile of the dialect sends (combinations of them
    // render; a flag whose shape the dialect's renderer does not send yet renders as its
    // provider's own wire).
    if let Some(flag) = quirks.set().find(|f| !dialect.profiles().any(|p| p.quirks.set().any(|g| g == *f))) {
        return Err(unsupported(format!("{flag} is a quirk of no {dialect} server profile")));
    }
    if !def.repeats_arguments() {
        if let Some(i) =
            neutral.events.iter().position(|e| matches!(e, Event::CallStop { arguments: Some(_), .. }))
        {
            return Err(unsupported(format!(
                "event {i} is a call terminal that repeats arguments (only Responses' `done` does)"
            )));
        }
    }
    if let Some(f) = turn.foreign().find(|f| !def.speaks_foreign(f.kind)) {
        return Err(unsupported(format!("it has no {} block", f.kind.name())));
    }
    Ok(def)
}

/// Maps one dialect's wire messages back to neutral events (the reference stack's middle
/// layer).
///
/// It keeps only what routing needs (which block an index holds, which id an index was
/// announced with), never argument bytes: accumulating is the core's job.
pub trait WireDecoder {
    /// Decodes one wire message, appending the neutral events it carries (often none,
    /// sometimes several) to `out`. Input it cannot read is `ErrorClass::Malformed`.
    ///
    /// The events may borrow from `message` and from the decoder (a fragment with escapes is
    /// unescaped into a buffer the decoder reuses), so the hot path copies a fragment once,
    /// into whatever the caller accumulates it in, and allocates nothing.
    fn decode_borrowed<'m>(
        &'m mut self,
        message: &'m WireMessage,
        out: &mut crate::Decoded<'m>,
    ) -> Result<(), TurnError>;

    /// [`WireDecoder::decode_borrowed`], with the events detached from the message and the
    /// decoder (the same events, owned).
    fn decode(&mut self, message: &WireMessage, out: &mut Vec<Event<'static>>) -> Result<(), TurnError> {
        let mut events = Decoded::new();
        let r = self.decode_borrowed(message, &mut events);
        out.extend(events.into_iter().map(Event::into_owned));
        r
    }
}

/// A [`WireDecoder`] of an SSE dialect: one SSE event at a time.
pub trait SseDecoder {
    /// Decodes one SSE event, as [`WireDecoder::decode_borrowed`]; a fragment with escapes
    /// is unescaped into `scratch` (the caller's, kept from one event to the next), which the
    /// event then borrows.
    fn decode<'m>(
        &mut self,
        event: &'m SseEvent,
        scratch: &'m mut Vec<u8>,
        out: &mut crate::Decoded<'m>,
    ) -> Result<(), TurnError>;
}

/// An [`SseDecoder`] as a [`WireDecoder`]: a message that is not an SSE event is malformed.
pub struct OverSse<D> {
    decoder: D,
    /// The decoder's unescaping buffer.
    scratch: Vec<u8>,
}

impl<D> OverSse<D> {
    pub fn new(decoder: D) -> OverSse<D> {
        OverSse { decoder, scratch: Vec::new() }
    }
}

impl<D: SseDecoder> WireDecoder for OverSse<D> {
    fn decode_borrowed<'m>(
        &'m mut self,
        message: &'m WireMessage,
        out: &mut crate::Decoded<'m>,
    ) -> Result<(), TurnError> {
        match message {
            WireMessage::Sse(event) => self.decoder.decode(event, &mut self.scratch, out),
            WireMessage::Frame(_) => Err(malformed("a binary frame in an SSE dialect's stream".into())),
        }
    }
}

/// Where a decoder puts the neutral events of one message, in order: the first in place
/// (nearly every message carries at most one, so decoding one allocates nothing), any further
/// ones in a vector.
#[derive(Debug, Default)]
pub struct Decoded<'m> {
    first: Option<Event<'m>>,
    more: Vec<Event<'m>>,
}

impl<'m> Decoded<'m> {
    pub fn new() -> Decoded<'m> {
        Decoded { first: None, more: Vec::new() }
    }

    /// Appends an event.
    #[inline]
    pub fn push(&mut self, event: Event<'m>) {
        match self.first {
            None => self.first = Some(event),
            Some(_) => self.more.push(event),
        }
    }

    /// The events in order.
    pub fn iter(&self) -> impl Iterator<Item = &Event<'m>> + '_ {
        self.first.iter().chain(&self.more)
    }

    pub fn len(&self) -> usize {
        usize::from(self.first.is_some()) + self.more.len()
    }

    pub fn is_empty(&self) -> bool {
        self.first.is_none()
    }
}

impl<'m> IntoIterator for Decoded<'m> {
    type Item = Event<'m>;
    type IntoIter = std::iter::Chain<std::option::IntoIter<Event<'m>>, std::vec::IntoIter<Event<'m>>>;

    fn into_iter(self) -> Self::IntoIter {
        self.first.into_iter().chain(self.more)
    }
}

/// A fresh decoder for one stream of `dialect`.
pub fn decoder(dialect: Dialect, quirks: Quirks) -> Box<dyn WireDecoder> {
    registry::def(dialect).decoder(quirks)
}

/// Which dialect a recorded stream speaks, from its messages' names or shape; `None` when no
/// message says (for instance only `ping`s or `error`s).
pub fn detect(messages: &[WireMessage]) -> Option<Dialect> {
    messages.iter().find_map(|m| registry().iter().find(|d| d.detects(m)).map(|d| d.id()))
}

/// Encodes `wire` as `dialect` frames it, cut into transport chunks as `transport` says.
pub fn render_bytes(dialect: Dialect, wire: &WireStream, transport: &Transport) -> BytesStream {
    registry::def(dialect).render_bytes(wire, transport)
}

/// The SSE framing a scenario's transport asks for.
pub fn framing(transport: &Transport) -> Framing<'_> {
    Framing {
        line_end: line_end(transport.line_end),
        comments: &transport.comments,
        multiline: &transport.multiline,
    }
}

/// The scenario's line end as the SSE encoder's.
pub fn line_end(l: toolcert_scenario::LineEnd) -> toolcert_sse::LineEnd {
    match l {
        toolcert_scenario::LineEnd::Lf => toolcert_sse::LineEnd::Lf,
        toolcert_scenario::LineEnd::CrLf => toolcert_sse::LineEnd::CrLf,
        toolcert_scenario::LineEnd::Cr => toolcert_sse::LineEnd::Cr,
    }
}

/// A `Malformed` turn error.
fn malformed(detail: String) -> TurnError {
    TurnError::new(ErrorClass::Malformed, detail)
}
