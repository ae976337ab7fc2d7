//! The base accumulator every mutant starts from, and the hooks a mutant overrides.
//!
//! [`Base`] is the seeds' own accumulator, written as plainly as their Python: buffers keyed
//! by the positional index with the call id kept beside them (000 "The key the stream
//! already gave you"), fragments appended and nothing else (002 "Concatenate, and do nothing
//! else"), and one `finalize` at the end of the stream that turns every buffer into an
//! outcome (003 "Making absence into an event"). It is written apart from the reference
//! accumulator on purpose: the two agreeing is evidence, one copied from the other is not.
//!
//! Every decision the accumulator makes goes through one method of [`Hooks`], whose default
//! is the correct decision. A mutant is a unit struct that overrides exactly one hook, so its
//! bug is the only code it has.

use std::collections::BTreeMap;
use std::rc::Rc;

use serde_json::Value;
use toolcert_scenario::{StopReason, StreamEnd, Tool};
use toolcert_subject::{
    Accumulator, Emit, EndingKind, ErrorClass, Event, FailReason, Outcome, ReportedEnding, Slot, StreamSpec,
    TurnError,
};

/// One announced call: the seeds' `CallBuffer`.
#[derive(Clone, Debug, Default)]
pub struct CallBuffer {
    pub call_id: String,
    pub name: String,
    /// The fragments, joined.
    pub args: String,
    /// The call's own terminal event arrived (`content_block_stop`).
    pub stopped: bool,
    /// Its outcome was already reported (only a mutant reports before the stream ends).
    pub reported: bool,
}

impl CallBuffer {
    pub fn new(call_id: &str, name: &str) -> CallBuffer {
        CallBuffer { call_id: call_id.into(), name: name.into(), ..CallBuffer::default() }
    }
}

/// Everything one accumulator holds for its stream.
#[derive(Debug, Default)]
pub struct Calls {
    /// Every buffer, in announcement order.
    pub buffers: Vec<CallBuffer>,
    /// The positional key → its buffer in `buffers`.
    pub index: BTreeMap<u32, usize>,
    /// The message-level stop reason, once it arrived.
    pub stop: Option<StopReason>,
    /// The assembled message: text runs and calls, in stream order.
    pub layout: Vec<Slot>,
    /// The provider sent an error event.
    pub errored: bool,
}

/// The tools' compiled schemas for one stream, from the cache the oracle and the reference
/// validate through.
#[derive(Default)]
pub struct Schemas(Vec<(String, Rc<toolcert_schema::Compiled>)>);

impl Schemas {
    pub fn new(tools: &[Tool]) -> Schemas {
        Schemas(
            tools
                .iter()
                .filter_map(|t| Some((t.name.clone(), toolcert_schema::compiled_shared(t.schema.as_ref()?))))
                .collect(),
        )
    }

    /// What is wrong with `args` for the tool `name` (nothing, for a tool without schema).
    pub fn errors(&self, name: &str, args: &Value) -> Vec<String> {
        match self.0.iter().find(|(tool, _)| tool == name) {
            None => Vec::new(),
            Some((_, c)) => c.errors(args),
        }
    }
}

/// A protocol error.
pub fn protocol(class: ErrorClass, detail: impl Into<String>) -> TurnError {
    TurnError::new(class, detail)
}

/// The decisions an accumulator makes. Each default is the correct one; a mutant overrides
/// one of them.
pub trait Hooks: Default + 'static {
    /// A text delta: shown to the user as it arrives, exactly once.
    fn text(&self, text: &str, out: &mut Emit) {
        out.text(text);
    }

    /// An announcement of a new index: the buffer its fragments go to (a new one).
    fn open(&self, buffers: &mut Vec<CallBuffer>, call_id: &str, name: &str) -> usize {
        buffers.push(CallBuffer::new(call_id, name));
        buffers.len() - 1
    }

    /// A second announcement of an index: a replay, never a new call.
    fn duplicate(&self, _calls: &mut Calls, index: u32, call_id: &str, _name: &str) -> Result<(), TurnError> {
        Err(protocol(ErrorClass::DuplicateAnnouncement, format!("index {index} announced twice ({call_id})")))
    }

    /// A fragment for an index never announced: no buffer is made up for it.
    fn unannounced(&self, _calls: &mut Calls, index: u32, _fragment: &str) -> Result<(), TurnError> {
        Err(protocol(ErrorClass::UnannouncedIndex, format!("fragment for unannounced index {index}")))
    }

    /// A fragment for buffer `k` after its terminal event (or after the message stop).
    fn after_stop(&self, calls: &mut Calls, k: usize, _fragment: &str) -> Result<(), TurnError> {
        let id = &calls.buffers[k].call_id;
        Err(protocol(ErrorClass::FragmentAfterStop, format!("fragment for {id} after its stop")))
    }

    /// A terminal event that repeats the arguments (Responses' `function_call_arguments.done`):
    /// the fragments are the arguments, and a terminal that says otherwise is a fault.
    fn done(&self, call: &mut CallBuffer, arguments: &str) -> Result<(), TurnError> {
        if arguments == call.args {
            return Ok(());
        }
        let id = &call.call_id;
        Err(protocol(
            ErrorClass::DoneMismatch,
            format!("{id}: the terminal's arguments differ from the fragments"),
        ))
    }

    /// Appends one fragment to its buffer: no trim, no parse, no decode.
    fn append(&self, args: &mut String, fragment: &str, _out: &mut Emit) {
        args.push_str(fragment);
    }

    /// Whether to report a call now, mid-stream (asked after each of its fragments and its
    /// terminal event). Never: the terminal event says the call has no more fragments, not
    /// that the turn was not cut, so outcomes wait for the end of the stream.
    fn dispatch_now(&self, _call: &CallBuffer) -> bool {
        false
    }

    /// Whether a call finished, when the stream ends: its own terminal event arrived, or the
    /// message stop did (OpenAI Chat has no per-call terminal, so `finish_reason` ends every
    /// call). Otherwise it is abandoned.
    fn finished(&self, calls: &Calls, call: &CallBuffer) -> bool {
        call.stopped || calls.stop.is_some()
    }

    /// Whether a stop reason says the output was cut (nothing of the turn may run).
    fn truncating(&self, reason: StopReason) -> bool {
        reason.is_truncating()
    }

    /// The arguments of a call that sent no argument bytes: `{}`, as providers mean it.
    fn no_arguments(&self) -> Option<Value> {
        Some(Value::Object(Default::default()))
    }

    /// The one parse of a finished buffer: strict, the whole buffer, nothing trailing, no
    /// number that overflows a double (docs/SPEC.md, "What a strict parser refuses").
    fn parse(&self, args: &str) -> Option<Value> {
        toolcert_oracle::parse_document(args)
    }

    /// The buffer a fragment or terminal for `index` goes to: the one its announcement
    /// opened (an index is a key, whatever its value).
    fn lookup(&self, calls: &Calls, index: u32) -> Option<usize> {
        calls.index.get(&index).copied()
    }

    /// What is wrong with parsed arguments, per the tool's schema.
    fn validate(&self, schemas: &Schemas, name: &str, args: &Value) -> Vec<String> {
        schemas.errors(name, args)
    }

    /// Reports a call's outcome, once.
    fn report(&self, _calls: &Calls, _call: &CallBuffer, outcome: Outcome, out: &mut Emit) {
        out.outcome(outcome);
    }

    /// A foreign event (thinking, a server tool, a refusal, a custom tool call): ignored, since
    /// nothing of such a block is a call or text.
    fn foreign(&self, _calls: &mut Calls, _event: &Event<'_>, _out: &mut Emit) {}

    /// The assembled message's layout, as reported at the end.
    fn layout(&self, slots: Vec<Slot>) -> Vec<Slot> {
        slots
    }

    /// Every event, before it is handled (nothing: only a mutant that acts on the stream as
    /// a whole looks).
    fn observe(&self, _event: &Event<'_>, _out: &mut Emit) {}

    /// The stream has ended, before the calls are accounted for (nothing to do).
    fn at_end(&self, _calls: &Calls, _out: &mut Emit) {}

    /// How the turn ended, as the caller is told: what the stream said. A stop reason decides
    /// complete or truncated; without one the turn errored (an error event) or was abandoned,
    /// and no stop reason is made up for it.
    fn ending(&self, calls: &Calls, _end: StreamEnd) -> ReportedEnding {
        let kind = match calls.stop {
            Some(r) if r.is_truncating() => EndingKind::Truncated,
            Some(_) => EndingKind::Complete,
            None if calls.errored => EndingKind::Errored,
            None => EndingKind::Abandoned,
        };
        ReportedEnding::new(kind, calls.stop.map(StopReason::wire_name))
    }
}

/// The unmutated hooks: every decision is the correct one.
#[derive(Clone, Copy, Debug, Default)]
pub struct Correct;

impl Hooks for Correct {}

/// The seed-style accumulator for one stream, its decisions made by `H`.
#[derive(Default)]
pub struct Base<H> {
    hooks: H,
    calls: Calls,
    schemas: Schemas,
}

impl<H: Hooks> Base<H> {
    pub fn new(spec: &StreamSpec<'_>) -> Base<H> {
        Base { hooks: H::default(), calls: Calls::default(), schemas: Schemas::new(spec.tools) }
    }

    /// Takes the tools of the stream about to start (for accumulators shared between streams).
    pub fn set_tools(&mut self, tools: &[Tool]) {
        self.schemas = Schemas::new(tools);
    }

    /// Forgets every call: back to a fresh accumulator.
    pub fn clear(&mut self) {
        self.calls = Calls::default();
    }

    /// The buffer of the call announced at `index`, for a defect below the core that reads
    /// or rewrites what the core holds (the wire-level mutants).
    pub fn buffer_mut(&mut self, index: u32) -> Option<&mut CallBuffer> {
        let k = *self.calls.index.get(&index)?;
        self.calls.buffers.get_mut(k)
    }

    fn failed(call: &CallBuffer, reason: FailReason) -> Outcome {
        Outcome::Failed {
            reason,
            call_id: Some(call.call_id.clone()),
            name: Some(call.name.clone()),
            raw: call.args.clone(),
        }
    }

    /// What a finished call is worth: the seeds' `finalize`, for one buffer.
    fn judge(&self, call: &CallBuffer) -> Outcome {
        if self.calls.stop.is_some_and(|r| self.hooks.truncating(r)) {
            return Self::failed(call, FailReason::Truncated);
        }
        let parsed =
            if call.args.is_empty() { self.hooks.no_arguments() } else { self.hooks.parse(&call.args) };
        let Some(args) = parsed else { return Self::failed(call, FailReason::Unparseable) };
        let errors = self.hooks.validate(&self.schemas, &call.name, &args);
        let (call_id, name) = (call.call_id.clone(), call.name.clone());
        if errors.is_empty() {
            Outcome::Dispatchable { call_id, name, args }
        } else {
            Outcome::SchemaError { call_id, name, args, errors }
        }
    }

    /// Reports buffer `k` now if the hooks say so (only mutants do).
    fn maybe_dispatch(&mut self, k: usize, out: &mut Emit) {
        let call = &self.calls.buffers[k];
        if call.reported || !self.hooks.dispatch_now(call) {
            return;
        }
        self.hooks.report(&self.calls, call, self.judge(call), out);
        self.calls.buffers[k].reported = true;
    }
}

impl<H: Hooks> Accumulator for Base<H> {
    fn on_event(&mut self, event: &Event<'_>, out: &mut Emit) -> Result<(), TurnError> {
        self.hooks.observe(event, out);
        let calls = &mut self.calls;
        match event {
            Event::TextDelta { text } => {
                self.hooks.text(text, out);
                match calls.layout.last_mut() {
                    Some(Slot::Text { text: run }) => run.push_str(text),
                    _ => calls.layout.push(Slot::Text { text: text.to_string() }),
                }
            }
            Event::CallStart { index, call_id, name } => {
                if calls.stop.is_some() {
                    return Err(protocol(ErrorClass::FragmentAfterStop, "a call announced after the stop"));
                }
                if calls.index.contains_key(index) {
                    return self.hooks.duplicate(calls, *index, call_id, name);
                }
                let k = self.hooks.open(&mut calls.buffers, call_id, name);
                calls.index.insert(*index, k);
                calls.layout.push(Slot::Call { call_id: call_id.to_string() });
            }
            Event::ArgsDelta { index, fragment } => {
                let Some(k) = self.hooks.lookup(calls, *index) else {
                    return self.hooks.unannounced(calls, *index, fragment);
                };
                if calls.buffers[k].stopped || calls.stop.is_some() {
                    return self.hooks.after_stop(calls, k, fragment);
                }
                self.hooks.append(&mut calls.buffers[k].args, fragment, out);
                self.maybe_dispatch(k, out);
            }
            Event::CallStop { index, arguments } => {
                let Some(k) = self.hooks.lookup(calls, *index) else {
                    return Err(protocol(
                        ErrorClass::UnannouncedIndex,
                        format!("stop for unannounced index {index}"),
                    ));
                };
                if calls.buffers[k].stopped {
                    return Err(protocol(
                        ErrorClass::FragmentAfterStop,
                        format!("index {index} stopped twice"),
                    ));
                }
                if let Some(arguments) = arguments {
                    self.hooks.done(&mut calls.buffers[k], arguments)?;
                }
                calls.buffers[k].stopped = true;
                self.maybe_dispatch(k, out);
            }
            Event::Stop { reason } => {
                if calls.stop.is_some() {
                    return Err(protocol(ErrorClass::FragmentAfterStop, "a second stop reason"));
                }
                calls.stop = Some(*reason);
            }
            // The stream ends after an error; `finish` accounts for the calls still live.
            Event::Error { .. } => calls.errored = true,
            Event::Ping => {}
            Event::ForeignStart { .. } | Event::ForeignDelta { .. } | Event::ForeignStop { .. } => {
                self.hooks.foreign(calls, event, out);
            }
        }
        Ok(())
    }

    /// The seeds' `finalize`: every buffer not yet reported becomes exactly one outcome.
    fn finish(&mut self, end: StreamEnd, out: &mut Emit) -> Result<(), TurnError> {
        self.hooks.at_end(&self.calls, out);
        for call in self.calls.buffers.iter().filter(|c| !c.reported) {
            let outcome = if self.hooks.finished(&self.calls, call) {
                self.judge(call)
            } else {
                Self::failed(call, FailReason::Abandoned)
            };
            self.hooks.report(&self.calls, call, outcome, out);
        }
        out.layout(self.hooks.layout(self.calls.layout.clone()));
        out.ending(self.hooks.ending(&self.calls, end));
        Ok(())
    }
}
