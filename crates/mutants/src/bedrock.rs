//! Bedrock (binary event stream) mutants: the correct [`Base`] core behind the project's
//! Bedrock decoder, with exactly one defect in the framing or the message mapping that only
//! this dialect can have (`docs/ZOO.md`): checksums not checked, each transport chunk
//! decoded on its own, an exception taken for a clean end, `contentBlockIndex` ignored, a
//! delta member or an event type it does not know taken for a defect, a second
//! `messageStart` skipped.

use toolcert_dialect::eventstream::{self, Message};
use toolcert_dialect::WireDecoder;
use toolcert_subject::{
    Accumulator, BytesAccumulator, Emit, ErrorClass, Event, Factory, StreamEnd, StreamSpec, TurnError,
    WireAccumulator, WireMessage,
};

use crate::{Base, Correct};

/// The one defect.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Defect {
    /// Messages are cut out by their lengths; neither CRC is compared.
    CrcUnchecked,
    /// Each transport chunk is decoded as if it held whole messages; a message split
    /// across chunks is lost.
    PerChunk,
    /// An exception message is read as the end of a finished turn (`end_turn`).
    ExceptionAsEnd,
    /// Tool-use deltas go to the tool use started last, whatever their `contentBlockIndex`.
    IndexIgnored,
    /// A `contentBlockDelta` whose `delta` has a member the client does not know, or an event
    /// message of a type it does not know, fails the turn (it should be skipped).
    UnknownFails,
    /// A second `messageStart` (another generation spliced in) is skipped, and the turn read
    /// on as one.
    SecondStartIgnored,
}

/// What `UnknownFails` refuses in `event`: an event type or a delta member the decoder
/// does not read.
fn unknown(event: &WireMessage) -> Option<String> {
    let f = event.as_frame()?;
    (f.header(":message-type")? == "event").then_some(())?;
    let name = f.header(":event-type")?;
    if !toolcert_dialect::bedrock::EVENTS.contains(&name) {
        return Some(format!("unknown event type {name}"));
    }
    (name == "contentBlockDelta").then_some(())?;
    let v: serde_json::Value = serde_json::from_slice(&f.payload).ok()?;
    let member = v
        .get("delta")?
        .as_object()?
        .keys()
        .find(|k| !toolcert_dialect::bedrock::DELTA_MEMBERS.contains(&k.as_str()))?;
    Some(format!("contentBlockDelta: unknown delta member {member}"))
}

pub(crate) struct BedrockFactory(pub Defect);

// Wire and bytes levels only: the bug lives below the events.
impl Factory for BedrockFactory {
    fn make_wire(&self, spec: &StreamSpec<'_>) -> Option<Box<dyn WireAccumulator>> {
        Some(Box::new(Stack::new(spec, self.0)))
    }
    fn make_bytes(&self, spec: &StreamSpec<'_>) -> Option<Box<dyn BytesAccumulator>> {
        Some(Box::new(Stack::new(spec, self.0)))
    }
}

struct Stack {
    defect: Defect,
    /// Bytes of the message being received (`CrcUnchecked`'s own framer).
    buf: Vec<u8>,
    frames: toolcert_dialect::BedrockFrames,
    decoder: toolcert_dialect::BedrockDecoder,
    events: Vec<Event<'static>>,
    core: Base<Correct>,
    /// `IndexIgnored`: the index of the tool use started last.
    last_call: Option<u32>,
    /// `SecondStartIgnored`: `messageStart` came.
    started: bool,
}

impl Stack {
    fn new(spec: &StreamSpec<'_>, defect: Defect) -> Stack {
        Stack {
            defect,
            buf: Vec::new(),
            frames: toolcert_dialect::BedrockFrames::new(),
            decoder: toolcert_dialect::BedrockDecoder::new(),
            events: Vec::new(),
            core: Base::new(spec),
            last_call: None,
            started: false,
        }
    }

    fn wire(&mut self, event: &WireMessage, out: &mut Emit) -> Result<(), TurnError> {
        let exception = event.as_frame().and_then(|f| f.header(":exception-type")).is_some();
        if self.defect == Defect::ExceptionAsEnd && exception {
            return self.core.on_event(&Event::Stop { reason: toolcert_scenario::StopReason::EndTurn }, out);
        }
        if self.defect == Defect::SecondStartIgnored
            && event.as_frame().and_then(|f| f.header(":event-type")) == Some("messageStart")
            && std::mem::replace(&mut self.started, true)
        {
            return Ok(());
        }
        if self.defect == Defect::UnknownFails {
            if let Some(why) = unknown(event) {
                return Err(TurnError::new(ErrorClass::Malformed, why));
            }
        }
        self.events.clear();
        self.decoder.decode(event, &mut self.events)?;
        for mut e in std::mem::take(&mut self.events) {
            match (&mut e, self.defect) {
                (Event::CallStart { index, .. }, Defect::IndexIgnored) => self.last_call = Some(*index),
                (Event::ArgsDelta { index, .. } | Event::CallStop { index, .. }, Defect::IndexIgnored) => {
                    if let Some(last) = self.last_call {
                        *index = last;
                    }
                }
                _ => {}
            }
            self.core.on_event(&e, out)?;
        }
        Ok(())
    }

    /// Whole messages by their lengths alone, no CRC compared.
    fn unchecked(&mut self, chunk: &[u8], out: &mut Emit) -> Result<(), TurnError> {
        self.buf.extend_from_slice(chunk);
        let be = |b: &[u8]| u32::from_be_bytes([b[0], b[1], b[2], b[3]]) as usize;
        loop {
            if self.buf.len() < eventstream::PRELUDE {
                return Ok(());
            }
            let (total, headers) = (be(&self.buf[..4]), be(&self.buf[4..8]));
            if !(eventstream::MIN_MESSAGE..=eventstream::MAX_MESSAGE).contains(&total)
                || headers > total - eventstream::MIN_MESSAGE
            {
                return Err(TurnError::new(ErrorClass::Malformed, format!("bad lengths {total}/{headers}")));
            }
            if self.buf.len() < total {
                return Ok(());
            }
            // The checks skipped: re-seal the message so the real parser takes it as it is.
            let mut m = self.buf[..total].to_vec();
            self.buf.drain(..total);
            let crc = eventstream::crc32(&m[..8]);
            m[8..12].copy_from_slice(&crc.to_be_bytes());
            let crc = eventstream::crc32(&m[..total - 4]);
            m[total - 4..].copy_from_slice(&crc.to_be_bytes());
            let mut messages: Vec<Message> = Vec::new();
            eventstream::Decoder::new()
                .feed(&m, &mut messages)
                .map_err(|e| TurnError::new(ErrorClass::Malformed, e.to_string()))?;
            for message in messages {
                let e = WireMessage::Frame(toolcert_dialect::bedrock::from_message(message));
                self.wire(&e, out)?;
            }
        }
    }

    fn framed(&mut self, chunk: &[u8], out: &mut Emit) -> Result<(), TurnError> {
        let mut events = Vec::new();
        let fed = self.frames.feed(chunk, &mut events);
        for e in &events {
            self.wire(e, out)?;
        }
        fed
    }
}

impl WireAccumulator for Stack {
    fn on_wire(&mut self, event: &WireMessage, out: &mut Emit) -> Result<(), TurnError> {
        self.wire(event, out)
    }
    fn finish(&mut self, end: StreamEnd, out: &mut Emit) -> Result<(), TurnError> {
        self.core.finish(end, out)
    }
}

impl BytesAccumulator for Stack {
    fn on_bytes(&mut self, chunk: &[u8], out: &mut Emit) -> Result<(), TurnError> {
        match self.defect {
            Defect::CrcUnchecked => self.unchecked(chunk, out),
            Defect::PerChunk => {
                // A fresh decoder per chunk: whatever a chunk leaves unfinished is gone.
                self.frames = toolcert_dialect::BedrockFrames::new();
                self.framed(chunk, out)
            }
            _ => self.framed(chunk, out),
        }
    }
    fn finish(&mut self, end: StreamEnd, out: &mut Emit) -> Result<(), TurnError> {
        self.core.finish(end, out)
    }
}
