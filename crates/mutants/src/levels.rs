//! Mutants below the events level: the correct [`Base`] core behind the project's SSE and
//! dialect decoders, with exactly one defect in a layer under the core (DESIGN.md section 6:
//! UTF-8 decoded per chunk, framing, Chat entries keyed by id, Responses `done` dropped, a
//! usage chunk taken for content).

use toolcert_dialect::WireDecoder;
use toolcert_subject::{
    Accumulator, BytesAccumulator, Emit, ErrorClass, Event, Factory, SseEvent, StreamEnd, StreamSpec,
    TurnError, WireAccumulator,
};

use crate::{Base, Correct};

/// The one defect.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Defect {
    /// Each chunk decoded on its own with replacement characters (`from_utf8_lossy`).
    Utf8Lossy,
    /// Each chunk decoded on its own, strictly: a split character is an error.
    Utf8Strict,
    /// Carriage returns are stripped and lines split on LF only: CR line ends vanish.
    CrDropped,
    /// Of several `data:` lines only the last is kept.
    MultilineLastOnly,
    /// Chat entries go to the call whose id came last, not to their index.
    ChatKeyedById,
    /// Responses' `done` is not compared with the deltas.
    DoneDropped,
    /// A chunk with `choices: []` is indexed as if it had one choice.
    UsageChunkCrash,
}

/// A factory of the stack with `defect`, at the wire or the bytes level.
pub(crate) struct StackFactory(pub Defect);

impl Factory for StackFactory {
    fn make(&self, spec: &StreamSpec<'_>) -> Box<dyn Accumulator> {
        Box::new(Base::<Correct>::new(spec))
    }
    fn make_wire(&self, spec: &StreamSpec<'_>) -> Option<Box<dyn WireAccumulator>> {
        Some(Box::new(Stack::new(spec, self.0)))
    }
    fn make_bytes(&self, spec: &StreamSpec<'_>) -> Option<Box<dyn BytesAccumulator>> {
        Some(Box::new(Stack::new(spec, self.0)))
    }
}

struct Stack {
    defect: Defect,
    sse: toolcert_sse::Decoder,
    sse_events: Vec<SseEvent>,
    decoder: Box<dyn WireDecoder>,
    events: Vec<Event<'static>>,
    core: Base<Correct>,
    /// Chat: the index of the call whose id came last.
    last_call: Option<u32>,
}

impl Stack {
    fn new(spec: &StreamSpec<'_>, defect: Defect) -> Stack {
        Stack {
            defect,
            sse: toolcert_sse::Decoder::new(),
            sse_events: Vec::new(),
            decoder: toolcert_dialect::decoder(spec.dialect, spec.quirks),
            events: Vec::new(),
            core: Base::new(spec),
            last_call: None,
        }
    }

    fn wire(&mut self, event: &SseEvent, out: &mut Emit) -> Result<(), TurnError> {
        let mut event = event.clone();
        match self.defect {
            Defect::MultilineLastOnly => {
                if let Some(last) = event.data.rsplit('\n').next() {
                    event.data = last.to_string();
                }
            }
            Defect::UsageChunkCrash if event.data.contains("\"choices\":[]") => {
                panic!("index out of bounds: the len is 0 but the index is 0 (choices[0])");
            }
            _ => {}
        }
        self.events.clear();
        self.decoder.decode(&event, &mut self.events)?;
        for mut e in std::mem::take(&mut self.events) {
            match (&mut e, self.defect) {
                (Event::CallStart { index, .. }, Defect::ChatKeyedById) => self.last_call = Some(*index),
                (Event::ArgsDelta { index, .. }, Defect::ChatKeyedById) => {
                    if let Some(last) = self.last_call {
                        *index = last;
                    }
                }
                (Event::CallStop { arguments, .. }, Defect::DoneDropped) => *arguments = None,
                _ => {}
            }
            self.core.on_event(&e, out)?;
        }
        Ok(())
    }

    fn feed_sse(&mut self, bytes: &[u8], out: &mut Emit) -> Result<(), TurnError> {
        self.sse_events.clear();
        let fed = self.sse.feed(bytes, &mut self.sse_events);
        for e in std::mem::take(&mut self.sse_events) {
            self.wire(&e, out)?;
        }
        fed.map_err(|e| TurnError::new(ErrorClass::Malformed, e.to_string()))
    }
}

impl WireAccumulator for Stack {
    fn on_wire(&mut self, event: &SseEvent, out: &mut Emit) -> Result<(), TurnError> {
        self.wire(event, out)
    }
    fn finish(&mut self, end: StreamEnd, out: &mut Emit) -> Result<(), TurnError> {
        self.core.finish(end, out)
    }
}

impl BytesAccumulator for Stack {
    fn on_bytes(&mut self, chunk: &[u8], out: &mut Emit) -> Result<(), TurnError> {
        match self.defect {
            Defect::Utf8Lossy => {
                let text = String::from_utf8_lossy(chunk).into_owned();
                self.feed_sse(text.as_bytes(), out)
            }
            Defect::Utf8Strict => match std::str::from_utf8(chunk) {
                Ok(text) => self.feed_sse(text.as_bytes(), out),
                Err(e) => Err(TurnError::new(ErrorClass::Malformed, format!("invalid UTF-8 in chunk: {e}"))),
            },
            Defect::CrDropped => {
                let kept: Vec<u8> = chunk.iter().copied().filter(|&b| b != b'\r').collect();
                self.feed_sse(&kept, out)
            }
            _ => self.feed_sse(chunk, out),
        }
    }
    fn finish(&mut self, end: StreamEnd, out: &mut Emit) -> Result<(), TurnError> {
        self.sse_events.clear();
        let _ = self.sse.finish(&mut self.sse_events);
        for e in std::mem::take(&mut self.sse_events) {
            self.wire(&e, out)?;
        }
        self.core.finish(end, out)
    }
}
