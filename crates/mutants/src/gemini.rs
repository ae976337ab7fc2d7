//! Gemini mutants: the correct [`Base`] core behind the project's Gemini decoder, with
//! exactly one defect each, the bugs Gemini clients have shipped (`docs/ZOO.md`)
//! and the dialect's framing slips. Each defect either rewrites a chunk before the decoder
//! reads it (as a client that reads the field wrong would see it) or changes what the
//! decoder hands the core (as a client that acts on it wrong would).

use std::collections::HashMap;

use serde_json::Value;
use toolcert_scenario::Dialect;
use toolcert_subject::{
    Accumulator, Emit, Event, Factory, StreamEnd, StreamSpec, TurnError, WireAccumulator, WireMessage,
};

use crate::{Base, Correct};

/// The one defect.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Defect {
    /// A streamed call forms only at an explicit end (`{"functionCall":{}}`); a last piece
    /// without `willContinue`, or the end of the candidate, leaves it unformed.
    NeedsExplicitEnd,
    /// A call without arguments (`{"functionCall":{"name":...}}`) is dropped, signature and
    /// all.
    NoArgsDropped,
    /// The first piece (name and `willContinue`, no arguments) is taken for a whole call
    /// with no arguments; the pieces after it are never flushed.
    FirstPieceWhole,
    /// `$.items[0]` split on `.` alone: `items[0]` read as a member name.
    IndexAsKey,
    /// At the end of the candidate every call of the turn is handed on again (the final
    /// aggregated response re-executed).
    DuplicatedAtFinish,
    /// Calls keyed by function name: a second call to the same tool continues the first.
    KeyedByName,
}

pub(crate) struct GeminiFactory(pub Defect);

// The wire level only: the bugs live in how the chunks are read.
impl Factory for GeminiFactory {
    fn make_wire(&self, spec: &StreamSpec<'_>) -> Option<Box<dyn WireAccumulator>> {
        Some(Box::new(Stack::new(spec, self.0)))
    }
}

struct Stack {
    defect: Defect,
    decoder: Box<dyn toolcert_dialect::WireDecoder>,
    events: Vec<Event<'static>>,
    core: Base<Correct>,
    /// Calls announced: index → (id, name, arguments so far).
    calls: Vec<(u32, String, String, String)>,
    /// Indices whose events are dropped (`NoArgsDropped`, `FirstPieceWhole`'s later pieces).
    dropped: Vec<u32>,
    /// `KeyedByName`: an index rerouted to the first call of its name.
    rerouted: HashMap<u32, u32>,
    /// `NeedsExplicitEnd`: the streamed call's events, held until an empty functionCall
    /// forms it.
    held: Vec<Event<'static>>,
}

impl Stack {
    fn new(spec: &StreamSpec<'_>, defect: Defect) -> Stack {
        Stack {
            defect,
            decoder: toolcert_dialect::decoder(Dialect::Gemini, Default::default()),
            events: Vec::new(),
            core: Base::new(spec),
            calls: Vec::new(),
            dropped: Vec::new(),
            rerouted: HashMap::new(),
            held: Vec::new(),
        }
    }

    /// The chunk as the defect reads it.
    fn rewrite(&self, message: &WireMessage) -> Option<WireMessage> {
        let sse = message.as_sse()?;
        let mut v: Value = serde_json::from_str(&sse.data).ok()?;
        let parts = v.pointer_mut("/candidates/0/content/parts")?.as_array_mut()?;
        let mut changed = false;
        for part in parts {
            let Some(fc) = part.get_mut("functionCall").and_then(Value::as_object_mut) else { continue };
            if self.defect != Defect::IndexAsKey {
                continue;
            }
            for arg in fc.get_mut("partialArgs").and_then(Value::as_array_mut).into_iter().flatten() {
                if let Some(Value::String(p)) = arg.get_mut("jsonPath") {
                    let dotted = split_on_dots(p);
                    changed |= dotted != *p;
                    *p = dotted;
                }
            }
        }
        let mut out = sse.clone();
        out.data = v.to_string();
        changed.then_some(WireMessage::Sse(out))
    }

    /// What kind of call part the chunk holds: `(has a name, is empty, continues, carries
    /// arguments)`.
    fn part(message: &WireMessage) -> Option<(bool, bool, bool, bool)> {
        let v: Value = serde_json::from_str(&message.as_sse()?.data).ok()?;
        let fc = v.pointer("/candidates/0/content/parts/0/functionCall")?.as_object()?;
        let named = fc.get("name").and_then(Value::as_str).is_some_and(|n| !n.is_empty());
        let args = fc.contains_key("args") || fc.contains_key("partialArgs");
        Some((named, fc.is_empty(), fc.get("willContinue") == Some(&Value::Bool(true)), args))
    }

    fn wire(&mut self, message: &WireMessage, out: &mut Emit) -> Result<(), TurnError> {
        let rewritten = self.rewrite(message);
        let message = rewritten.as_ref().unwrap_or(message);
        let part = Stack::part(message);
        self.events.clear();
        self.decoder.decode(message, &mut self.events)?;
        for e in std::mem::take(&mut self.events) {
            self.event(e, part, out)?;
        }
        Ok(())
    }

    fn event(
        &mut self,
        mut e: Event<'static>,
        part: Option<(bool, bool, bool, bool)>,
        out: &mut Emit,
    ) -> Result<(), TurnError> {
        let index = match &e {
            Event::CallStart { index, .. }
            | Event::ArgsDelta { index, .. }
            | Event::CallStop { index, .. } => Some(*index),
            _ => None,
        };
        if index.is_some_and(|i| self.dropped.contains(&i)) {
            return Ok(());
        }
        match (self.defect, &mut e) {
            (Defect::NeedsExplicitEnd, Event::CallStart { .. })
                if matches!(part, Some((true, _, true, _))) =>
            {
                self.held.push(e);
                return Ok(());
            }
            (Defect::NeedsExplicitEnd, Event::ArgsDelta { .. }) if !self.held.is_empty() => {
                self.held.push(e);
                return Ok(());
            }
            (Defect::NeedsExplicitEnd, Event::CallStop { .. }) if !self.held.is_empty() => {
                // Only an empty functionCall forms a streamed call; any other end leaves it
                // unformed, and nothing of it reaches the caller.
                let held = std::mem::take(&mut self.held);
                if matches!(part, Some((_, true, _, _))) {
                    for h in held {
                        self.core.on_event(&h, out)?;
                    }
                    return self.core.on_event(&e, out);
                }
                return Ok(());
            }
            (Defect::NoArgsDropped, Event::CallStart { index, .. }) => {
                if matches!(part, Some((true, _, false, false))) {
                    self.dropped.push(*index);
                    return Ok(());
                }
            }
            (Defect::FirstPieceWhole, Event::CallStart { index, .. }) => {
                if matches!(part, Some((true, _, true, false))) {
                    let index = *index;
                    self.core.on_event(&e, out)?;
                    self.dropped.push(index);
                    return self.core.on_event(&Event::CallStop { index, arguments: None }, out);
                }
            }
            (Defect::DuplicatedAtFinish, Event::Stop { .. }) => {
                let again: Vec<_> = self.calls.clone();
                for (k, (_, id, name, args)) in again.into_iter().enumerate() {
                    let index = 1000 + k as u32;
                    self.core
                        .on_event(&Event::CallStart { index, call_id: id.into(), name: name.into() }, out)?;
                    if !args.is_empty() {
                        self.core.on_event(&Event::ArgsDelta { index, fragment: args.into() }, out)?;
                    }
                    self.core.on_event(&Event::CallStop { index, arguments: None }, out)?;
                }
            }
            (Defect::KeyedByName, Event::CallStart { index, name, .. }) => {
                if let Some(first) = self.calls.iter().find(|c| c.2 == *name).map(|c| c.0) {
                    self.rerouted.insert(*index, first);
                    return Ok(());
                }
            }
            (Defect::KeyedByName, Event::ArgsDelta { index, .. } | Event::CallStop { index, .. }) => {
                if let Some(&first) = self.rerouted.get(index) {
                    *index = first;
                }
            }
            _ => {}
        }
        match &e {
            Event::CallStart { index, call_id, name } => {
                self.calls.push((*index, call_id.to_string(), name.to_string(), String::new()))
            }
            Event::ArgsDelta { index, fragment } => {
                if let Some(c) = self.calls.iter_mut().find(|c| c.0 == *index) {
                    c.3.push_str(fragment);
                }
            }
            _ => {}
        }
        self.core.on_event(&e, out)
    }
}

/// A path split on `.` alone: `$.items[0].n` becomes `$['items[0]'].n`, the member name a
/// client that splits on dots reads.
fn split_on_dots(path: &str) -> String {
    let Some(rest) = path.strip_prefix("$.") else { return path.to_owned() };
    if rest.contains('\'') || rest.contains('"') {
        return path.to_owned();
    }
    let mut out = String::from("$");
    for seg in rest.split('.') {
        if seg.contains('[') {
            out.push_str(&format!("['{seg}']"));
        } else {
            out.push('.');
            out.push_str(seg);
        }
    }
    out
}

impl WireAccumulator for Stack {
    fn on_wire(&mut self, message: &WireMessage, out: &mut Emit) -> Result<(), TurnError> {
        self.wire(message, out)
    }

    fn finish(&mut self, end: StreamEnd, out: &mut Emit) -> Result<(), TurnError> {
        self.core.finish(end, out)
    }
}

#[cfg(test)]
mod tests {
    #[test]
    fn dots_split_as_the_bug_reads_them() {
        assert_eq!(super::split_on_dots("$.items[0].n"), "$['items[0]'].n");
        assert_eq!(super::split_on_dots("$.a.b"), "$.a.b");
        assert_eq!(super::split_on_dots("$['a.b']"), "$['a.b']");
    }
}
