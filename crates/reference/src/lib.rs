//! The reference accumulator: what a correct streaming tool-call accumulator does.
//!
//! It is one subject among others (the oracle never consults it), written to the seeds'
//! rules: buffers keyed by the positional index with the call id kept beside them; fragments
//! appended as opaque text in arrival order, with nothing parsed, decoded or trimmed; a
//! protocol error for a fragment on an unannounced index, a second announcement of an index
//! and a fragment after the call's terminal event; one strict parse of each buffer when the
//! stream is done, then schema validation when the tool has a schema; nothing dispatched from
//! a truncated turn; every announced call accounted for at the end.
//!
//! Outcomes are emitted at `finish`, never earlier: a call's own terminal event only says the
//! provider has no more fragments for it, while the message-level stop reason that follows
//! may still say the turn was cut (max_tokens), so dispatch waits for the whole stream.

use std::collections::HashMap;
use std::rc::Rc;

use toolcert_dialect::WireDecoder;
use toolcert_scenario::{StopReason, StreamEnd, Tool};
use toolcert_schema as schema;
use toolcert_subject::{
    Accumulator, Emit, EndingKind, ErrorClass, Event, Factory, FailReason, Outcome, ReportedEnding, Slot,
    StreamSpec, Subject, TurnError,
};
use toolcert_subject::{BytesAccumulator, Level, WireAccumulator, WireMessage};

/// The subject `builtin:reference`.
#[derive(Clone, Copy, Debug, Default)]
pub struct ReferenceSubject;

impl Subject for ReferenceSubject {
    fn name(&self) -> String {
        "builtin:reference".into()
    }
    fn factory(&self) -> Box<dyn Factory> {
        Box::new(ReferenceFactory)
    }
    fn levels(&self) -> Vec<Level> {
        Level::ALL.to_vec()
    }
}

/// Makes reference accumulators.
#[derive(Clone, Copy, Debug, Default)]
pub struct ReferenceFactory;

impl Factory for ReferenceFactory {
    fn make(&self, spec: &StreamSpec<'_>) -> Option<Box<dyn Accumulator>> {
        Some(Box::new(Reference::for_spec(spec)))
    }
    fn make_wire(&self, spec: &StreamSpec<'_>) -> Option<Box<dyn WireAccumulator>> {
        Some(Box::new(ReferenceWire::for_spec(spec)))
    }
    fn make_bytes(&self, spec: &StreamSpec<'_>) -> Option<Box<dyn BytesAccumulator>> {
        Some(Box::new(ReferenceBytes {
            frames: toolcert_dialect::def(spec.dialect).deframer(),
            events: Vec::new(),
            wire: ReferenceWire::for_spec(spec),
        }))
    }
}

/// The reference at the wire level: the dialect's decoder into the neutral core.
pub struct ReferenceWire {
    decoder: Box<dyn WireDecoder>,
    core: Reference,
    events: Vec<Event<'static>>,
}

impl ReferenceWire {
    pub fn for_spec(spec: &StreamSpec<'_>) -> ReferenceWire {
        ReferenceWire {
            decoder: toolcert_dialect::decoder(spec.dialect, spec.quirks),
            core: Reference::for_spec(spec),
            events: Vec::new(),
        }
    }
}

impl WireAccumulator for ReferenceWire {
    fn on_wire(&mut self, message: &WireMessage, out: &mut Emit) -> Result<(), TurnError> {
        self.events.clear();
        self.decoder.decode(message, &mut self.events)?;
        for e in &self.events {
            self.core.on_event(e, out)?;
        }
        Ok(())
    }

    fn finish(&mut self, end: StreamEnd, out: &mut Emit) -> Result<(), TurnError> {
        self.core.finish(end, out)
    }
}

/// The most bytes [`ReferenceBytes`] hands its framing's decoder at once.
const FEED_PIECE: usize = 64 << 10;

/// The reference at the bytes level: the dialect framing's incremental decoder (for SSE,
/// with incremental UTF-8) into the wire level.
pub struct ReferenceBytes {
    frames: Box<dyn toolcert_dialect::Deframer>,
    events: Vec<WireMessage>,
    wire: ReferenceWire,
}

impl BytesAccumulator for ReferenceBytes {
    fn on_bytes(&mut self, chunk: &[u8], out: &mut Emit) -> Result<(), TurnError> {
        // A large chunk (a whole recorded stream) is decoded a piece at a time, so the events
        // held at once are those of one piece, not of the stream; the decoder gives the same
        // events however its input is cut.
        // (An empty chunk is still fed: it reports a failed decoder's error again.)
        let pieces = chunk.chunks(FEED_PIECE).chain(chunk.is_empty().then_some(chunk));
        for piece in pieces {
            self.events.clear();
            let fed = self.frames.feed(piece, &mut self.events);
            // Events completed before a framing error are still the stream's.
            for e in &self.events {
                self.wire.on_wire(e, out)?;
            }
            fed?;
        }
        Ok(())
    }

    fn finish(&mut self, end: StreamEnd, out: &mut Emit) -> Result<(), TurnError> {
        self.events.clear();
        // A character cut by a dropped connection is the drop's doing, not a malformed stream
        // (the deframer errs only at a clean end).
        let closed = self.frames.finish(end, &mut self.events);
        for e in &self.events {
            self.wire.on_wire(e, out)?;
        }
        closed?;
        self.wire.finish(end, out)
    }
}

/// One call's buffer.
struct CallBuffer {
    index: u32,
    call_id: String,
    name: String,
    args: String,
    /// The call's own terminal event arrived.
    stopped: bool,
}

/// The reference accumulator for one stream.
#[derive(Default)]
pub struct Reference {
    /// The compiled schema of each tool that has one; few per turn, so a list.
    schemas: Vec<(String, Rc<schema::Compiled>)>,
    /// Announced calls in announcement order.
    calls: Vec<CallBuffer>,
    /// Where each announced index sits in `calls`: a turn may announce any number of calls
    /// (a replayed stream of 200,000), and a scan per announcement would make that quadratic.
    by_index: HashMap<u32, usize>,
    /// The message-level stop reason, once it arrived.
    stop: Option<StopReason>,
    /// The provider sent an error event.
    errored: bool,
    /// The layout of the assembled message: text runs and calls in stream order.
    layout: Vec<Slot>,
}

impl Reference {
    /// An accumulator that validates no schema.
    pub fn new() -> Reference {
        Reference::default()
    }

    /// An accumulator that validates the spec's tool schemas.
    pub fn for_spec(spec: &StreamSpec<'_>) -> Reference {
        let schemas = spec
            .tools
            .iter()
            .filter_map(|t: &Tool| Some((t.name.clone(), schema::compiled_shared(t.schema.as_ref()?))))
            .collect();
        Reference { schemas, ..Reference::default() }
    }

    fn call_mut(&mut self, index: u32) -> Option<&mut CallBuffer> {
        let at = *self.by_index.get(&index)?;
        self.calls.get_mut(at)
    }

    fn judge(&self, call: &CallBuffer) -> Outcome {
        let failed = |reason| Outcome::Failed {
            reason,
            call_id: Some(call.call_id.clone()),
            name: Some(call.name.clone()),
            raw: call.args.clone(),
        };
        match self.stop {
            Some(reason) if reason.is_truncating() => return failed(FailReason::Truncated),
            // Interleaved streams have no per-call terminal: the stop reason is every call's.
            Some(_) => {}
            // Without the stop reason the turn may yet have been cut: never dispatch.
            None => return failed(FailReason::Abandoned),
        }
        // A call with no argument bytes takes no arguments, as providers send it.
        let parsed = if call.args.is_empty() {
            Some(serde_json::Value::Object(Default::default()))
        } else {
            parse(&call.args)
        };
        let Some(args) = parsed else { return failed(FailReason::Unparseable) };
        let errors = match self.schemas.iter().find(|(name, _)| *name == call.name) {
            None => Vec::new(),
            Some((_, compiled)) => compiled.errors(&args),
        };
        if errors.is_empty() {
            Outcome::Dispatchable { call_id: call.call_id.clone(), name: call.name.clone(), args }
        } else {
            Outcome::SchemaError { call_id: call.call_id.clone(), name: call.name.clone(), args, errors }
        }
    }
}

/// The one parse of a finished buffer (docs/SPEC.md, "What a strict parser refuses"): the
/// whole buffer is one JSON value with valid strings (serde_json refuses `NaN`, trailing
/// bytes and lone surrogates), and no number overflows a double (`1e400`). Numbers stay as
/// their decimal text (the workspace's `arbitrary_precision`), so the dispatched value is
/// exactly the model's. `Ok(None)`: parsed, but a number overflows.
fn protocol(class: ErrorClass, detail: String) -> Result<(), TurnError> {
    Err(TurnError::new(class, detail))
}

impl Accumulator for Reference {
    // Inlinable into a caller's feeding loop: the fast path is a few compares and an append.
    #[inline]
    fn on_event(&mut self, event: &Event<'_>, out: &mut Emit) -> Result<(), TurnError> {
        // Hot path, most of a turn's events: a fragment for the call announced last, before
        // any stop. Kept small so the common case pays no large frame and no error
        // formatting; everything else (same rules) goes through `on_event_cold`.
        if let Event::ArgsDelta { index, fragment } = event {
            if self.stop.is_none() {
                if let Some(call) = self.calls.last_mut() {
                    if call.index == *index && !call.stopped {
                        // Append only: no trim, no parse, no decode.
                        call.args.push_str(fragment);
                        return Ok(());
                    }
                }
            }
        }
        self.on_event_cold(event, out)
    }

    fn finish(&mut self, end: StreamEnd, out: &mut Emit) -> Result<(), TurnError> {
        self.finish_turn(end, out)
    }
}

impl Reference {
    #[cold]
    #[inline(never)]
    fn on_event_cold(&mut self, event: &Event<'_>, out: &mut Emit) -> Result<(), TurnError> {
        match event {
            Event::TextDelta { text } => {
                out.text(text);
                match self.layout.last_mut() {
                    Some(Slot::Text { text: run }) => run.push_str(text),
                    _ => self.layout.push(Slot::Text { text: text.to_string() }),
                }
            }
            Event::CallStart { index, call_id, name } => {
                if self.stop.is_some() {
                    return protocol(
                        ErrorClass::FragmentAfterStop,
                        format!("call {index} announced after the stop"),
                    );
                }
                if self.by_index.contains_key(index) {
                    return protocol(
                        ErrorClass::DuplicateAnnouncement,
                        format!("index {index} announced twice (as {call_id})"),
                    );
                }
                self.layout.push(Slot::Call { call_id: call_id.to_string() });
                self.by_index.insert(*index, self.calls.len());
                self.calls.push(CallBuffer {
                    index: *index,
                    call_id: call_id.to_string(),
                    name: name.to_string(),
                    args: String::new(),
                    stopped: false,
                });
            }
            Event::ArgsDelta { index, fragment } => {
                let after_stop = self.stop.is_some();
                let Some(call) = self.call_mut(*index) else {
                    return protocol(
                        ErrorClass::UnannouncedIndex,
                        format!("fragment for unannounced index {index}"),
                    );
                };
                if call.stopped || after_stop {
                    return protocol(
                        ErrorClass::FragmentAfterStop,
                        format!("fragment for index {index} after its stop"),
                    );
                }
                // Append only: no trim, no parse, no decode.
                call.args.push_str(fragment);
            }
            Event::CallStop { index, arguments } => {
                let Some(call) = self.call_mut(*index) else {
                    return protocol(
                        ErrorClass::UnannouncedIndex,
                        format!("stop for unannounced index {index}"),
                    );
                };
                if call.stopped {
                    return protocol(ErrorClass::FragmentAfterStop, format!("index {index} stopped twice"));
                }
                // The fragments are the arguments; a terminal that says otherwise is a fault.
                if arguments.as_ref().is_some_and(|a| **a != call.args) {
                    return protocol(
                        ErrorClass::DoneMismatch,
                        format!("index {index}: the terminal's arguments differ from the fragments"),
                    );
                }
                call.stopped = true;
            }
            Event::Stop { reason } => {
                if self.stop.is_some() {
                    return protocol(ErrorClass::FragmentAfterStop, "a second stop reason".into());
                }
                self.stop = Some(*reason);
            }
            // The error ends the stream; `finish` accounts for the calls still live.
            Event::Error { .. } => self.errored = true,
            Event::Ping => {}
            // Thinking, server tools, refusals, custom tools: never a call, never text.
            Event::ForeignStart { .. } | Event::ForeignDelta { .. } | Event::ForeignStop { .. } => {}
        }
        Ok(())
    }

    fn finish_turn(&mut self, _end: StreamEnd, out: &mut Emit) -> Result<(), TurnError> {
        // Each buffer is freed once judged: a turn's arguments are not held twice over, as
        // text and as parsed values.
        for call in std::mem::take(&mut self.calls) {
            out.outcome(self.judge(&call));
        }
        self.by_index.clear();
        out.layout(std::mem::take(&mut self.layout));
        // How the turn ended is what the stream said, never what it probably meant: no stop
        // reason is made up for a stream that simply stopped.
        let ending = match self.stop {
            Some(r) if r.is_truncating() => EndingKind::Truncated,
            Some(_) => EndingKind::Complete,
            None if self.errored => EndingKind::Errored,
            None => EndingKind::Abandoned,
        };
        out.ending(ReportedEnding::new(ending, self.stop.map(StopReason::wire_name)));
        Ok(())
    }
}

use toolcert_schema::document::parse_nested;

/// One strict parse of a whole buffer: nothing trailing, a repeated key keeps its last
/// value, nested at most [`toolcert_schema::document::MAX_DEPTH`] levels. `None`: unparseable.
fn parse(args: &str) -> Option<serde_json::Value> {
    parse_nested(args).filter(finite)
}

/// Refuses what a double cannot hold (`1e400`): no JSON value can carry it on.
fn finite(v: &serde_json::Value) -> bool {
    match v {
        serde_json::Value::Number(n) => fits_a_double(n.as_str()) || n.as_f64().is_some_and(f64::is_finite),
        serde_json::Value::Array(a) => a.iter().all(finite),
        serde_json::Value::Object(o) => o.values().all(finite),
        _ => true,
    }
}

/// Whether a number's text is surely finite as a double without parsing it as one: no
/// exponent and at most 308 digits before the point (below 10^308, under `f64::MAX`). Most
/// numbers are; the others are parsed.
fn fits_a_double(text: &str) -> bool {
    let b = text.as_bytes();
    let int = b.iter().position(|&c| c == b'.').unwrap_or(b.len());
    int <= 308 && !b.iter().any(|&c| c == b'e' || c == b'E')
}
