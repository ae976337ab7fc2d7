//! Mutants below the events level: the correct [`Base`] core behind the project's SSE and
//! dialect decoders, with exactly one defect in a layer under the core (`docs/ZOO.md`:
//! UTF-8 decoded per chunk, framing, Chat entries keyed by id, Responses `done` dropped, a
//! usage chunk taken for content).

use toolcert_dialect::WireDecoder;
use toolcert_subject::{
    Accumulator, BytesAccumulator, Emit, ErrorClass, Event, Factory, Outcome, Slot, SseEvent, StreamEnd,
    StreamSpec, TurnError, WireAccumulator, WireMessage,
};

use crate::{Base, Correct};

/// What `FinishRepeatsAsCalls` marks a repeated call's id with while the core holds it.
const AGAIN: &str = "\u{1}again";
/// What `EmptyIdNewCall` names the call an empty id starts while the core holds it (its id
/// and name are reported empty, as the client holds them).
const EMPTY: &str = "\u{1}empty";

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
    /// A Chat entry without an `index` is taken as index 0, and calls are keyed by index
    /// alone: once index 0 holds a call, a new id there is dropped and the entry continues it.
    MissingIndexAsZero,
    /// Every string field of a Chat entry is concatenated onto the call's, as a generic
    /// "merge the deltas" helper does: a server that repeats id and name on every entry
    /// yields `get_weatherget_weather`.
    FieldsConcatenated,
    /// At the end of the stream, an event still waiting for its blank line is dispatched
    /// anyway (a decoder that flushes its buffer at EOF).
    IncompleteEventDispatched,
    /// Chat: the calls a finish chunk repeats (OpenRouter, vLLM) are taken as calls again:
    /// each is reported twice.
    FinishRepeatsAsCalls,
    /// Chat: a call's index is its position in a list of calls: an index past the list's
    /// end (the first call at index 1, as gateways in front of Anthropic send it) raises.
    IndexAsPosition,
    /// Chat: calls keyed by index alone: an entry with a new id at an index that already
    /// holds a call (Ollama's index 0 for every parallel call) continues that call, so the
    /// calls are merged and the later ones lost.
    IndexReusedMerged,
    /// Chat: a chunk's entries read into a map by index: of two entries with one index in
    /// one chunk (vLLM's split entries) only the last is kept, the other's bytes are lost.
    SplitEntriesLastWins,
    /// Chat: an entry's `"id": ""` (DeepSeek's continuations) taken as a new call's id: each
    /// such entry starts a call with an empty id and name, and the fragment leaves its call.
    EmptyIdNewCall,
    /// Chat: a call's first entry must carry its name (the check vercel/ai's tracker made
    /// before vercel/ai#14760): a host that sends the name in a later entry fails the turn.
    LateNameRefused,
    /// Responses: deltas and dones looked up by `item_id` among the announced items: under a
    /// rotating `item_id` (GitHub Copilot's gateway) every one of them is ignored.
    ItemIdKeyed,
    // The dialect events (`wire_events`).
    /// Responses: an announced call's `output_item.done` arguments replace its buffer.
    ItemDoneTrusted,
    /// Responses: an `output_item.done` for a call never announced is ignored.
    ItemDoneOnlyLost,
    /// Anthropic: a delta type the decoder does not know fails the turn.
    UnknownDeltaFails,
    /// Chat: the prelude chunk (no choices, prompt filter results) fails the turn.
    PreludeAsError,
    /// Responses: the calls `response.completed` repeats are reported again.
    CompletedDuplicates,
    /// Chat: `[DONE]` is taken for a finish reason when none came.
    DoneAsFinish,
    /// Chat: a chunk without `choices` (a usage-only chunk some servers send) is malformed.
    UsageWithoutChoicesRefused,
    /// Chat: `[DONE]` with nothing before it is refused as a malformed stream.
    DoneAloneMalformed,
    /// Anthropic, Responses: a second `message_start` or `response.created` (another
    /// generation spliced in) is skipped, and the turn read on as one.
    SecondStartIgnored,
}

/// A factory of the stack with `defect`, at the wire or the bytes level.
pub(crate) struct StackFactory(pub Defect);

impl Factory for StackFactory {
    fn make(&self, spec: &StreamSpec<'_>) -> Option<Box<dyn Accumulator>> {
        Some(Box::new(Base::<Correct>::new(spec)))
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
    /// Chat, `MissingIndexAsZero`: index 0 holds a call.
    zero_held: bool,
    /// Chat, `IndexReusedMerged`: the indices that hold a call; `EmptyIdNewCall`: how many
    /// calls empty ids started. Responses, `ItemIdKeyed`: the announced items' ids.
    held: std::collections::BTreeSet<String>,
    /// Chat, `IndexAsPosition`: how many calls the list holds.
    positions: u64,
    /// Chat, `FieldsConcatenated`: per index, the id it was announced with and the id and
    /// name as concatenated from every entry.
    merged: std::collections::BTreeMap<u64, (String, String, String)>,
    /// The dialect-event defects' memory.
    extra: crate::wire_events::State,
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
            zero_held: false,
            held: Default::default(),
            positions: 0,
            merged: Default::default(),
            extra: Default::default(),
        }
    }

    /// The chunk's tool-call entries, when it has any (Chat).
    fn entries(data: &str) -> Option<serde_json::Value> {
        if !data.contains("\"tool_calls\"") {
            return None;
        }
        serde_json::from_str(data).ok()
    }

    /// `MissingIndexAsZero`: the chunk with `index: 0` put on entries that have none, read as
    /// a client keyed by index alone reads it (openai-python#2806, langchain#34654): once
    /// index 0 holds a call, an entry's new id (and name) there is dropped, so the next call's
    /// bytes join the first call's and the next call is lost.
    fn zero_missing_indices(&mut self, data: &str) -> Option<String> {
        let mut v = Self::entries(data)?;
        let mut changed = false;
        for choice in v.get_mut("choices")?.as_array_mut()? {
            let Some(entries) = choice.pointer_mut("/delta/tool_calls").and_then(|e| e.as_array_mut()) else {
                continue;
            };
            for e in entries.iter_mut().filter_map(|e| e.as_object_mut()) {
                if e.get("index").is_none_or(|i| i.is_null()) {
                    e.insert("index".into(), 0.into());
                    if self.zero_held {
                        e.remove("id");
                        if let Some(f) = e.get_mut("function").and_then(|f| f.as_object_mut()) {
                            f.remove("name");
                        }
                    } else if e.get("id").and_then(|i| i.as_str()).is_some_and(|i| !i.is_empty()) {
                        self.zero_held = true;
                    }
                    changed = true;
                }
            }
        }
        changed.then(|| v.to_string())
    }

    /// The chunk's tool-call entries of its first choice, rewritten by `f`, when it has any.
    fn rewrite_entries(
        &mut self,
        data: &str,
        f: impl Fn(&mut Self, &mut Vec<serde_json::Value>) -> bool,
    ) -> Option<String> {
        let mut v = Self::entries(data)?;
        let entries = v.pointer_mut("/choices/0/delta/tool_calls")?.as_array_mut()?;
        f(self, entries).then(|| v.to_string())
    }

    /// `IndexReusedMerged`: an entry with a new id at an index that holds a call loses its id
    /// and name, as a client keyed by index alone reads it (langchain#34807, litellm#33678).
    fn index_reused(&mut self, entries: &mut [serde_json::Value]) -> bool {
        let mut changed = false;
        for e in entries.iter_mut().filter_map(|e| e.as_object_mut()) {
            let Some(index) = e.get("index").and_then(|i| i.as_u64()) else { continue };
            if e.get("id").and_then(|i| i.as_str()).is_none_or(|i| i.is_empty()) {
                continue;
            }
            if !self.held.insert(index.to_string()) {
                e.remove("id");
                e.remove("type");
                if let Some(f) = e.get_mut("function").and_then(|f| f.as_object_mut()) {
                    f.remove("name");
                }
                changed = true;
            }
        }
        changed
    }

    /// `SplitEntriesLastWins`: of the entries with one index only the last stays.
    fn split_last_wins(&mut self, entries: &mut Vec<serde_json::Value>) -> bool {
        let index = |e: &serde_json::Value| e.get("index").and_then(|i| i.as_u64());
        let before = entries.len();
        let mut kept = Vec::new();
        for (i, e) in entries.iter().enumerate() {
            let later = index(e).is_some() && entries[i + 1..].iter().any(|l| index(l) == index(e));
            if !later {
                kept.push(e.clone());
            }
        }
        *entries = kept;
        entries.len() != before
    }

    /// `LateNameRefused`: an entry with an id not seen before and no name fails the turn.
    fn name_required(&mut self, data: &str) -> Result<(), TurnError> {
        let Some(v) = Self::entries(data) else { return Ok(()) };
        let entries = v.pointer("/choices/0/delta/tool_calls").and_then(|e| e.as_array());
        for (k, e) in entries.into_iter().flatten().enumerate() {
            let Some(id) = e.get("id").and_then(|i| i.as_str()).filter(|i| !i.is_empty()) else { continue };
            let named = e.pointer("/function/name").and_then(|n| n.as_str()).is_some_and(|n| !n.is_empty());
            if self.held.insert(id.to_owned()) && !named {
                return Err(TurnError::new(
                    ErrorClass::Malformed,
                    format!("tool_calls[{k}]: a new tool call needs function.name"),
                ));
            }
        }
        Ok(())
    }

    /// `EmptyIdNewCall`: an entry with `"id": ""` given a fresh id and name of its own
    /// (marked with [`EMPTY`], reported empty), so that it starts a new call.
    fn empty_id_new_call(&mut self, entries: &mut [serde_json::Value]) -> bool {
        let mut changed = false;
        for e in entries.iter_mut().filter_map(|e| e.as_object_mut()) {
            if e.get("id").and_then(|i| i.as_str()) != Some("") {
                continue;
            }
            let n = self.held.len();
            self.held.insert(n.to_string());
            e.insert("id".into(), format!("{EMPTY}{n}").into());
            e.insert("type".into(), "function".into());
            let f = e.entry("function").or_insert_with(|| serde_json::json!({}));
            if let Some(f) = f.as_object_mut() {
                f.insert("name".into(), EMPTY.into());
            }
            changed = true;
        }
        changed
    }

    /// `ItemIdKeyed`: whether a Responses event names its call by an `item_id` (or item `id`)
    /// no `output_item.added` announced: the client finds no call and ignores it.
    fn unknown_item(&mut self, data: &str) -> bool {
        let Ok(v) = serde_json::from_str::<serde_json::Value>(data) else { return false };
        let kind = v.get("type").and_then(|t| t.as_str()).unwrap_or_default();
        let item_id =
            |v: &serde_json::Value| v.pointer("/item/id").and_then(|i| i.as_str()).map(str::to_owned);
        match kind {
            "response.output_item.added" => {
                if let Some(id) = item_id(&v) {
                    self.held.insert(id);
                }
                false
            }
            "response.output_item.done" => item_id(&v).is_some_and(|id| {
                v.pointer("/item/type").and_then(|t| t.as_str()) == Some("function_call")
                    && !self.held.contains(&id)
            }),
            "response.function_call_arguments.delta" | "response.function_call_arguments.done" => {
                v.get("item_id").and_then(|i| i.as_str()).is_some_and(|id| !self.held.contains(id))
            }
            _ => false,
        }
    }

    /// `FinishRepeatsAsCalls`: the entries of a finish chunk given ids of their own (marked
    /// with [`AGAIN`], taken off at the end), so that each reads as a new call.
    fn repeats_as_calls(data: &str) -> Option<String> {
        let mut v = Self::entries(data)?;
        let choice = v.pointer_mut("/choices/0")?;
        if !choice.get("finish_reason").is_some_and(|r| r.is_string()) {
            return None;
        }
        for e in choice.pointer_mut("/delta/tool_calls")?.as_array_mut()? {
            if let Some(id) = e.get("id").and_then(|i| i.as_str()).filter(|i| !i.is_empty()) {
                e["id"] = format!("{id}{AGAIN}").into();
            }
        }
        Some(v.to_string())
    }

    /// `IndexAsPosition`: a new call's entry appends to the list at its index, which must be
    /// the list's length; any entry whose index is past the end raises, as `calls[index]` does.
    fn index_as_position(&mut self, data: &str) {
        let Some(v) = Self::entries(data) else { return };
        let entries = v.pointer("/choices/0/delta/tool_calls").and_then(|e| e.as_array());
        for e in entries.into_iter().flatten() {
            let Some(index) = e.get("index").and_then(|i| i.as_u64()) else { continue };
            let new_call = e.get("id").and_then(|i| i.as_str()).is_some_and(|i| !i.is_empty());
            if new_call && index == self.positions {
                self.positions += 1;
            } else if index >= self.positions {
                panic!("IndexError: list index out of range (index {index}, {} calls)", self.positions);
            }
        }
    }

    /// `FieldsConcatenated`: every entry's id and name appended to its index's.
    fn merge_fields(&mut self, data: &str) {
        let Some(v) = Self::entries(data) else { return };
        let entries = v.pointer("/choices/0/delta/tool_calls").and_then(|e| e.as_array());
        for e in entries.into_iter().flatten() {
            let Some(index) = e.get("index").and_then(|i| i.as_u64()) else { continue };
            let id = e.get("id").and_then(|s| s.as_str()).unwrap_or_default();
            let name = e.pointer("/function/name").and_then(|s| s.as_str()).unwrap_or_default();
            let m = self.merged.entry(index).or_insert_with(|| (id.to_owned(), String::new(), String::new()));
            m.1.push_str(id);
            m.2.push_str(name);
        }
    }

    /// The core's finish, with `FieldsConcatenated`'s merged ids and names on what it reports
    /// (and `FinishRepeatsAsCalls`' repeated calls under their own ids again).
    fn finish_core(&mut self, end: StreamEnd, out: &mut Emit) -> Result<(), TurnError> {
        if matches!(self.defect, Defect::FinishRepeatsAsCalls | Defect::EmptyIdNewCall) {
            let mut scratch = Emit::default();
            let result = self.core.finish(end, &mut scratch);
            let unmark = |id: &mut String| {
                if let Some(original) = id.strip_suffix(AGAIN) {
                    *id = original.to_owned();
                } else if id.starts_with(EMPTY) {
                    id.clear();
                }
            };
            let obs = scratch.into_observation();
            for o in obs.outcomes {
                let mut o = o.value;
                match &mut o {
                    Outcome::Dispatchable { call_id, name, .. }
                    | Outcome::SchemaError { call_id, name, .. } => {
                        unmark(call_id);
                        unmark(name);
                    }
                    Outcome::Failed { call_id: Some(call_id), name, .. } => {
                        unmark(call_id);
                        if let Some(name) = name {
                            unmark(name);
                        }
                    }
                    Outcome::Failed { .. } => {}
                }
                out.outcome(o);
            }
            // (FinishRepeatsAsCalls reports no layout, as before.)
            if let Some(mut slots) = obs.layout.filter(|_| self.defect == Defect::EmptyIdNewCall) {
                for s in &mut slots {
                    if let Slot::Call { call_id } = s {
                        unmark(call_id);
                    }
                }
                out.layout(slots);
            }
            return result;
        }
        if self.defect != Defect::FieldsConcatenated {
            return crate::wire_events::finish(self.defect, &self.extra, &mut self.core, end, out);
        }
        let mut scratch = Emit::default();
        let result = self.core.finish(end, &mut scratch);
        let obs = scratch.into_observation();
        let merged = |id: &str| self.merged.values().find(|m| m.0 == id);
        for o in obs.outcomes {
            let mut o = o.value;
            match &mut o {
                Outcome::Dispatchable { call_id, name, .. } | Outcome::SchemaError { call_id, name, .. } => {
                    if let Some(m) = merged(call_id) {
                        (*call_id, *name) = (m.1.clone(), m.2.clone());
                    }
                }
                Outcome::Failed { call_id: Some(call_id), name, .. } => {
                    if let Some(m) = merged(call_id) {
                        (*call_id, *name) = (m.1.clone(), Some(m.2.clone()));
                    }
                }
                Outcome::Failed { .. } => {}
            }
            out.outcome(o);
        }
        if let Some(mut slots) = obs.layout {
            for s in &mut slots {
                if let Slot::Call { call_id } = s {
                    if let Some(m) = merged(call_id) {
                        *call_id = m.1.clone();
                    }
                }
            }
            out.layout(slots);
        }
        result
    }

    fn wire(&mut self, event: &SseEvent, out: &mut Emit) -> Result<(), TurnError> {
        if self.defect == Defect::ItemIdKeyed && self.unknown_item(&event.data) {
            return Ok(());
        }
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
            Defect::MissingIndexAsZero => {
                if let Some(data) = self.zero_missing_indices(&event.data) {
                    event.data = data;
                }
            }
            Defect::FieldsConcatenated => self.merge_fields(&event.data),
            Defect::FinishRepeatsAsCalls => {
                if let Some(data) = Self::repeats_as_calls(&event.data) {
                    event.data = data;
                }
            }
            Defect::IndexAsPosition => self.index_as_position(&event.data),
            Defect::IndexReusedMerged => {
                if let Some(data) = self.rewrite_entries(&event.data, |s, e| s.index_reused(e)) {
                    event.data = data;
                }
            }
            Defect::SplitEntriesLastWins => {
                if let Some(data) = self.rewrite_entries(&event.data, Self::split_last_wins) {
                    event.data = data;
                }
            }
            Defect::EmptyIdNewCall => {
                if let Some(data) = self.rewrite_entries(&event.data, |s, e| s.empty_id_new_call(e)) {
                    event.data = data;
                }
            }
            Defect::LateNameRefused => self.name_required(&event.data)?,
            _ => {}
        }
        if let Some(done) =
            crate::wire_events::before_decode(self.defect, &mut self.extra, &mut self.core, &event, out)
        {
            return done;
        }
        self.events.clear();
        self.decoder.decode(&WireMessage::Sse(event), &mut self.events)?;
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
    fn on_wire(&mut self, message: &WireMessage, out: &mut Emit) -> Result<(), TurnError> {
        match message {
            WireMessage::Sse(event) => self.wire(event, out),
            // The defects are SSE dialects'; another framing's messages go through the
            // correct stack.
            WireMessage::Frame(_) => {
                self.events.clear();
                self.decoder.decode(message, &mut self.events)?;
                for e in std::mem::take(&mut self.events) {
                    self.core.on_event(&e, out)?;
                }
                Ok(())
            }
        }
    }
    fn finish(&mut self, end: StreamEnd, out: &mut Emit) -> Result<(), TurnError> {
        self.finish_core(end, out)
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
        if self.defect == Defect::IncompleteEventDispatched {
            // The blank line the connection never sent, made up.
            let _ = self.sse.feed(b"\n\n", &mut self.sse_events);
        }
        let _ = self.sse.finish(&mut self.sse_events);
        for e in std::mem::take(&mut self.sse_events) {
            self.wire(&e, out)?;
        }
        self.finish_core(end, out)
    }
}
