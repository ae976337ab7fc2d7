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

mod finite;

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
        let def = toolcert_dialect::def(spec.dialect);
        // An SSE dialect's deframer (every dialect whose framing is not binary reads SSE, the
        // registry's default) is held as itself, so the hot path makes no virtual call.
        let frames = match def.binary() {
            false => Frames::Sse(toolcert_dialect::registry::SseDeframer::default()),
            true => Frames::Other(def.deframer()),
        };
        Some(Box::new(ReferenceBytes { frames, events: Vec::new(), wire: ReferenceWire::for_spec(spec) }))
    }
}

/// The reference at the wire level: the dialect's decoder into the neutral core.
pub struct ReferenceWire {
    decoder: Box<dyn WireDecoder>,
    core: Reference,
}

impl ReferenceWire {
    pub fn for_spec(spec: &StreamSpec<'_>) -> ReferenceWire {
        ReferenceWire {
            decoder: toolcert_dialect::decoder(spec.dialect, spec.quirks),
            core: Reference::for_spec(spec),
        }
    }
}

impl WireAccumulator for ReferenceWire {
    fn on_wire(&mut self, message: &WireMessage, out: &mut Emit) -> Result<(), TurnError> {
        // The events borrow the message (and the decoder's scratch): each fragment is copied
        // once, into its call's buffer.
        let mut events = toolcert_dialect::Decoded::new();
        let core = &mut self.core;
        self.decoder
            .decode_borrowed(message, &mut events)
            .and_then(|()| events.iter().try_for_each(|e| core.on_event(e, out)))
    }

    fn finish(&mut self, end: StreamEnd, out: &mut Emit) -> Result<(), TurnError> {
        self.core.finish(end, out)
    }
}

/// The most bytes [`ReferenceBytes`] hands its framing's decoder at once.
const FEED_PIECE: usize = 64 << 10;

/// A framing's reader: SSE's as itself, another as the dialect gives it.
// One per stream, inside the boxed accumulator: the size difference costs nothing.
#[allow(clippy::large_enum_variant)]
enum Frames {
    Sse(toolcert_dialect::registry::SseDeframer),
    Other(Box<dyn toolcert_dialect::Deframer>),
}

/// The reference at the bytes level: the dialect framing's incremental decoder (for SSE,
/// with incremental UTF-8) into the wire level.
pub struct ReferenceBytes {
    frames: Frames,
    events: Vec<WireMessage>,
    wire: ReferenceWire,
}

impl BytesAccumulator for ReferenceBytes {
    fn on_bytes(&mut self, chunk: &[u8], out: &mut Emit) -> Result<(), TurnError> {
        // Each message goes to the wire level as the framing completes it (events completed
        // before a framing error are still the stream's). A large chunk (a whole recorded
        // stream) is decoded a piece at a time, so a framing that collects its messages holds
        // those of one piece, not of the stream; the decoder gives the same messages however
        // its input is cut. (An empty chunk is still fed: it reports a failed decoder's error
        // again.)
        let wire = &mut self.wire;
        let mut each = |m: &WireMessage| wire.on_wire(m, out);
        if chunk.len() <= FEED_PIECE {
            return match &mut self.frames {
                Frames::Sse(sse) => sse.feed_with(chunk, &mut each),
                Frames::Other(frames) => frames.feed_each(chunk, &mut each),
            };
        }
        let frames: &mut dyn toolcert_dialect::Deframer = match &mut self.frames {
            Frames::Sse(sse) => sse,
            Frames::Other(frames) => frames.as_mut(),
        };
        for piece in chunk.chunks(FEED_PIECE) {
            frames.feed_each(piece, &mut each)?;
        }
        Ok(())
    }

    fn finish(&mut self, end: StreamEnd, out: &mut Emit) -> Result<(), TurnError> {
        self.events.clear();
        // A character cut by a dropped connection is the drop's doing, not a malformed stream
        // (the deframer errs only at a clean end).
        let closed = match &mut self.frames {
            Frames::Sse(sse) => toolcert_dialect::Deframer::finish(sse, end, &mut self.events),
            Frames::Other(frames) => frames.finish(end, &mut self.events),
        };
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

/// The most calls a turn has for an out-of-place index to be found by a scan of the calls
/// rather than in the hash table.
const SCAN: usize = 16;

/// The capacity a call's buffer starts with: room for a small document, so that appending
/// 13-byte fragments does not grow it from 13 bytes by doubling (five reallocations and
/// copies before 610 bytes).
const FIRST_CAPACITY: usize = 512;

/// The room a text run of the layout starts with: a turn's text comes in pieces, and growing
/// from the first piece's exact size reallocated on the next.
const TEXT_ROOM: usize = 64;

/// The reference accumulator for one stream.
#[derive(Default)]
pub struct Reference {
    /// The compiled schema of each tool that has one; few per turn, so a list.
    schemas: Vec<(String, Rc<schema::Compiled>)>,
    /// Announced calls in announcement order.
    calls: Vec<CallBuffer>,
    /// Where each announced index sits in `calls`, for an index announced out of place once
    /// the turn has more than [`SCAN`] calls: a turn may announce any number of calls (a
    /// replayed stream of 200,000), and a scan per announcement would make that quadratic.
    /// Index k announced as the k-th call (as the chat dialect numbers them) sits at k and is
    /// not entered here; a turn of a few calls is scanned (block indexes, as Anthropic numbers
    /// them, put most calls out of place, and hashing each cost more than the scan), so the
    /// common turn builds no hash table.
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

    /// Where the call announced with `index` sits in `calls`.
    fn position(&self, index: u32) -> Option<usize> {
        let at = index as usize;
        match self.calls.get(at) {
            Some(call) if call.index == index => Some(at),
            _ if self.calls.len() <= SCAN => self.calls.iter().position(|c| c.index == index),
            _ => self.by_index.get(&index).copied(),
        }
    }

    fn call_mut(&mut self, index: u32) -> Option<&mut CallBuffer> {
        let at = self.position(index)?;
        self.calls.get_mut(at)
    }

    /// The call's outcome; the call is consumed, its strings move into the outcome.
    fn judge(&self, call: CallBuffer) -> Outcome {
        let failed = |reason, call: CallBuffer| Outcome::Failed {
            reason,
            call_id: Some(call.call_id),
            name: Some(call.name),
            raw: call.args,
        };
        match self.stop {
            Some(reason) if reason.is_truncating() => return failed(FailReason::Truncated, call),
            // Interleaved streams have no per-call terminal: the stop reason is every call's.
            Some(_) => {}
            // Without the stop reason the turn may yet have been cut: never dispatch.
            None => return failed(FailReason::Abandoned, call),
        }
        // A call with no argument bytes takes no arguments, as providers send it.
        let parsed = if call.args.is_empty() {
            Some(serde_json::Value::Object(Default::default()))
        } else {
            parse(&call.args)
        };
        let Some(args) = parsed else { return failed(FailReason::Unparseable, call) };
        let errors = match self.schemas.iter().find(|(name, _)| *name == call.name) {
            None => Vec::new(),
            Some((_, compiled)) => compiled.errors(&args),
        };
        let CallBuffer { call_id, name, .. } = call;
        if errors.is_empty() {
            Outcome::Dispatchable { call_id, name, args }
        } else {
            Outcome::SchemaError { call_id, name, args, errors }
        }
    }
}

/// A protocol error: the stream broke a rule of the protocol.
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
                    // Room for the run's next pieces (see `Emit::text`).
                    _ => {
                        let mut run = String::with_capacity(text.len().max(TEXT_ROOM));
                        run.push_str(text);
                        self.layout.push(Slot::Text { text: run });
                    }
                }
            }
            Event::CallStart { index, call_id, name } => {
                if self.stop.is_some() {
                    return protocol(
                        ErrorClass::FragmentAfterStop,
                        format!("call {index} announced after the stop"),
                    );
                }
                if self.position(*index).is_some() {
                    return protocol(
                        ErrorClass::DuplicateAnnouncement,
                        format!("index {index} announced twice (as {call_id})"),
                    );
                }
                self.layout.push(Slot::Call { call_id: call_id.to_string() });
                let at = self.calls.len();
                if at >= SCAN {
                    // Past the scan: every call out of place is in the table from here on.
                    if at == SCAN {
                        let out_of_place =
                            self.calls.iter().enumerate().filter(|(k, c)| c.index as usize != *k);
                        self.by_index.extend(out_of_place.map(|(k, c)| (c.index, k)));
                    }
                    if *index as usize != at {
                        self.by_index.insert(*index, at);
                    }
                }
                self.calls.push(CallBuffer {
                    index: *index,
                    call_id: call_id.to_string(),
                    name: name.to_string(),
                    args: String::with_capacity(FIRST_CAPACITY),
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
            out.outcome(self.judge(call));
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

/// The one parse of a finished buffer (docs/SPEC.md, "What a strict parser refuses"): the
/// whole buffer is one JSON value with valid strings (serde_json refuses `NaN`, trailing
/// bytes and lone surrogates), a repeated key keeps its last value, nested at most
/// [`toolcert_schema::document::MAX_DEPTH`] levels, and no number overflows a double
/// (`1e400`: no JSON value can carry it on). Numbers stay as their decimal text (the
/// workspace's `arbitrary_precision`), so the dispatched value is exactly the model's.
/// `None`: unparseable.
fn parse(args: &str) -> Option<serde_json::Value> {
    // Read straight into the value, numbers and depth checked as they are read, an object
    // serde_json reads as a number being no container ([`parse_serde`], the former parse
    // through serde_json, is the tests' oracle for it).
    schema::document::parse_finite_containers(args)
}

/// The reference's parse as it was made through serde_json: its grammar, a visitor checking
/// numbers and depth as they are read. The differential tests' oracle of the hand-written
/// parse (tests/strict_parse.rs runs it over generated documents); nothing else calls it.
#[doc(hidden)]
pub fn parse_serde(args: &str) -> Option<serde_json::Value> {
    let checked = finite::parse_checked(args)?;
    (!checked.overflow_read || finite::holds(&checked.value)).then_some(checked.value)
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::borrow::Cow;
    use toolcert_subject::ErrorClass;

    /// The strict parse as its rules say it (docs/SPEC.md): serde_json's grammar at the depth
    /// bound, then no number a double cannot hold, checked over the whole parsed value.
    fn by_the_rules(doc: &str) -> Option<serde_json::Value> {
        fn holds(v: &serde_json::Value) -> bool {
            match v {
                serde_json::Value::Number(n) => n.as_f64().is_some_and(f64::is_finite),
                serde_json::Value::Array(a) => a.iter().all(holds),
                serde_json::Value::Object(o) => o.values().all(holds),
                _ => true,
            }
        }
        toolcert_schema::document::parse_nested(doc).filter(holds)
    }

    #[test]
    fn the_parse_checking_numbers_as_it_reads_answers_as_the_rules() {
        let deep =
            |levels: usize, inner: &str| format!("{}{inner}{}", "[".repeat(levels), "]".repeat(levels));
        let long = format!("{}.5", "9".repeat(400));
        let docs = [
            r#"{"a": [1, -2, 3.25, 1e3, -0.0, {"b": null, "c": true}], "d": "x\u00e9\ud83d\ude00"}"#
                .to_string(),
            r#"{"a": 1e400}"#.into(),
            r#"{"a": [1, 2, {"b": -1E309}]}"#.into(),
            r#"[1.7976931348623157e308, 2.2250738585072014e-308, 1e-400]"#.into(),
            r#"{"a": 18446744073709551616, "b": -9223372036854775809}"#.into(),
            format!(r#"{{"a": {long}}}"#),
            format!(r#"{{"a": {}}}"#, "9".repeat(308)),
            format!(r#"{{"a": {}}}"#, "9".repeat(309)),
            r#"{"a": 1, "a": 2}"#.into(),
            r#"{"a": 1e400, "a": 2}"#.into(),
            r#"{"a": 2, "a": 1e400}"#.into(),
            r#"{"a": {"b": 1e400}, "a": {"b": 1}}"#.into(),
            r#"{"a": 1e400, "b": 1e400, "a": 1}"#.into(),
            r#"{"a": 1e400, "b": [1e400], "a": 1, "b": 2}"#.into(),
            // serde_json's number token as a key in the text: whatever serde_json makes of it.
            r#"{"$serde_json::private::Number": "1.5"}"#.into(),
            r#"{"$serde_json::private::Number": "1e400"}"#.into(),
            r#"{"$serde_json::private::Number": "x"}"#.into(),
            r#"{"$serde_json::private::Number": "1.5", "b": 2}"#.into(),
            r#"{"k": {"$serde_json::private::Number": 2}}"#.into(),
            deep(200, "1e400"),
            deep(200, "1.5"),
            deep(600, "1"),
            deep(127, "1"),
            deep(128, "1"),
            deep(toolcert_schema::document::MAX_DEPTH, "1"),
            deep(toolcert_schema::document::MAX_DEPTH - 1, "{}"),
            deep(toolcert_schema::document::MAX_DEPTH, "{}"),
            deep(toolcert_schema::document::MAX_DEPTH, "[]"),
            deep(toolcert_schema::document::MAX_DEPTH + 1, "1"),
            // An object serde_json reads as a number is no container for the reference: its
            // depth is not checked (`by_the_rules` counts its braces; see below).
            deep(toolcert_schema::document::MAX_DEPTH - 1, r#"{"$serde_json::private::Number": "1"}"#),
            format!("{}1{}", r#"{"a": ["#.repeat(256), "]}".repeat(256)),
            format!("{}1{}", r#"{"a": ["#.repeat(257), "]}".repeat(257)),
            format!("{}1{}", r#"{"a": ["#.repeat(300), "]}".repeat(299)),
            deep(100_000, "1"),
            r#"{"a": 1,}"#.into(),
            r#"{"a": "\ud800"}"#.into(),
            "[1] 2".into(),
            "NaN".into(),
            "".into(),
            "{}".into(),
            "3".into(),
            "1e400".into(),
        ];
        for d in &docs {
            assert_eq!(parse(d), by_the_rules(d), "{d:.80}");
            assert_eq!(parse(d), parse_serde(d), "{d:.80}");
        }
        assert!(parse(r#"{"a": 1e400}"#).is_none() && parse(&deep(200, "1.5")).is_some());
        for token in [
            deep(toolcert_schema::document::MAX_DEPTH, r#"{"$serde_json::private::Number": "1"}"#),
            deep(toolcert_schema::document::MAX_DEPTH - 1, r#"{"a": {"$serde_json::private::Number": "1"}}"#),
        ] {
            assert!(
                parse(&token).is_some() && parse_serde(&token).is_some() && by_the_rules(&token).is_none()
            );
        }
    }

    fn start(index: u32, id: &'static str) -> Event<'static> {
        Event::CallStart { index, call_id: Cow::Borrowed(id), name: Cow::Borrowed("t") }
    }

    fn delta(index: u32, fragment: &'static str) -> Event<'static> {
        Event::ArgsDelta { index, fragment: Cow::Borrowed(fragment) }
    }

    fn class(r: Result<(), TurnError>) -> Option<ErrorClass> {
        r.err().map(|e| e.class)
    }

    /// More calls than a scan finds, announced out of place (and one in place), then fed
    /// interleaved: each fragment reaches its own buffer, a repeat and an unknown index are
    /// refused, wherever the table takes over from the scan.
    #[test]
    fn many_indexes_out_of_place_are_found_past_the_scan() {
        for n in [SCAN - 1, SCAN, SCAN + 1, 3 * SCAN] {
            let mut acc = Reference::new();
            let mut out = Emit::default();
            // Call k at index 3n - 3k: out of place but where 3n - 3k = k (k = 3n/4).
            let index = |k: usize| (3 * n - 3 * k) as u32;
            let ids: Vec<String> = (0..n).map(|k| format!("c{k}")).collect();
            for (k, id) in ids.iter().enumerate() {
                let e = Event::CallStart {
                    index: index(k),
                    call_id: Cow::Borrowed(id.as_str()),
                    name: Cow::Borrowed("t"),
                };
                acc.on_event(&e, &mut out).unwrap();
            }
            for half in ["[", "]"] {
                for k in (0..n).rev() {
                    let piece = if half == "[" { format!("[{k}") } else { "]".to_string() };
                    let e = Event::ArgsDelta { index: index(k), fragment: Cow::Owned(piece) };
                    acc.on_event(&e, &mut out).unwrap();
                }
            }
            for k in 0..n {
                let e = Event::CallStart {
                    index: index(k),
                    call_id: Cow::Borrowed("z"),
                    name: Cow::Borrowed("t"),
                };
                assert_eq!(
                    class(acc.on_event(&e, &mut out)),
                    Some(ErrorClass::DuplicateAnnouncement),
                    "{n} {k}"
                );
            }
            assert_eq!(class(acc.on_event(&delta(1, "x"), &mut out)), Some(ErrorClass::UnannouncedIndex));
            acc.on_event(&Event::Stop { reason: StopReason::ToolUse }, &mut out).unwrap();
            acc.finish(StreamEnd::Eof, &mut out).unwrap();
            let got = dispatched(out);
            let want: Vec<(String, String)> = (0..n).map(|k| (format!("c{k}"), format!("[{k}]"))).collect();
            assert_eq!(got, want, "{n} calls");
        }
    }

    /// Each outcome's call id and arguments; every call must have been dispatchable.
    fn dispatched(out: Emit) -> Vec<(String, String)> {
        out.into_observation()
            .outcomes
            .into_iter()
            .map(|o| match o.value {
                Outcome::Dispatchable { call_id, args, .. } => (call_id, args.to_string()),
                other => panic!("not dispatchable: {}", other.label()),
            })
            .collect()
    }

    #[test]
    fn indexes_out_of_place_are_found_and_still_refused_twice() {
        let mut acc = Reference::new();
        let mut out = Emit::default();
        // Index 5 sits at position 0, index 0 at position 1, index 2 at its own place.
        for e in [start(5, "e"), start(0, "a"), start(2, "c")] {
            acc.on_event(&e, &mut out).unwrap();
        }
        for e in [delta(5, "{\"f\": 5}"), delta(0, "{\"f\": "), delta(2, "[2]"), delta(0, "0}")] {
            acc.on_event(&e, &mut out).unwrap();
        }
        for index in [5, 0, 2] {
            assert_eq!(
                class(acc.on_event(&start(index, "z"), &mut out)),
                Some(ErrorClass::DuplicateAnnouncement)
            );
        }
        for index in [1, 3, 4] {
            assert_eq!(class(acc.on_event(&delta(index, "x"), &mut out)), Some(ErrorClass::UnannouncedIndex));
        }
        acc.on_event(&Event::Stop { reason: StopReason::ToolUse }, &mut out).unwrap();
        acc.finish(StreamEnd::Eof, &mut out).unwrap();
        let got = dispatched(out);
        let want = [("e", r#"{"f":5}"#), ("a", r#"{"f":0}"#), ("c", "[2]")];
        assert_eq!(got, want.map(|(a, b)| (a.to_string(), b.to_string())));
    }
}
