//! OpenAI Chat Completions: `data:` lines of `chat.completion.chunk` objects (no `event:`
//! line). Calls travel as `choices[0].delta.tool_calls[]` entries keyed by `index`; the id,
//! `type` and name ride only on an index's first entry; several entries (of one or several
//! calls) may share a chunk, and text (`delta.content`) may share it with them. There is no
//! per-call terminal: `finish_reason` ends every call at once. A usage chunk with
//! `choices: []` and `data: [DONE]` close the stream.

use std::borrow::Cow;
use std::collections::HashMap;

use serde::{Deserialize, Serialize};
use toolcert_render::{Event, Origin, Rendered};
use toolcert_scenario::{fragments, Block, FaultKind, ForeignKind, Shape, StopMeaning, StopReason, Turn};
use toolcert_sse::SseEvent;
use toolcert_subject::TurnError;

use crate::json::{own, parse, tokens, Ids, Out, Seen, Str};
use crate::{malformed, Dialect, Quirks, SseStream as WireStream};

mod extra;
mod fast;
mod write;

const MODEL: &str = "gpt-4o-2024-08-06";
const CREATED: u64 = 1_754_000_000;
const FINGERPRINT: &str = "fp_07871e2ad8";
const PROMPT_TOKENS: u32 = 1187;

// The wire types: one set, serialised to render and read leniently to decode (bedrock.rs
// does the same). A field the decoder does not read is `skip_deserializing`, so whatever a
// server sends there is ignored.

/// A `chat.completion.chunk`. A chunk may carry bookkeeping instead of choices (a usage-only
/// chunk without `choices`, a prelude of content-filter results), read only for being
/// there; an error event is read through its `error` ([`ErrorEvent`] renders one).
#[derive(Serialize, Deserialize)]
struct Chunk<'a> {
    #[serde(skip_deserializing)]
    id: &'a str,
    #[serde(skip_deserializing)]
    object: &'static str,
    #[serde(skip_deserializing)]
    created: u64,
    #[serde(skip_deserializing)]
    model: &'static str,
    #[serde(skip_deserializing)]
    system_fingerprint: &'static str,
    #[serde(borrow, default)]
    choices: Option<Vec<Choice<'a>>>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    usage: Option<Seen<Usage>>,
    #[serde(borrow, default, skip_serializing)]
    error: Option<ErrorBody<'a>>,
    #[serde(default, skip_serializing)]
    prompt_filter_results: Option<Seen<()>>,
}

#[derive(Serialize, Deserialize)]
struct Choice<'a> {
    #[serde(default)]
    index: Option<u32>,
    #[serde(borrow, default)]
    delta: Option<Delta<'a>>,
    #[serde(skip_deserializing)]
    logprobs: Option<()>,
    #[serde(borrow, default)]
    finish_reason: Option<Str<'a>>,
}

#[derive(Serialize, Deserialize, Default)]
struct Delta<'a> {
    #[serde(skip_deserializing, skip_serializing_if = "Option::is_none")]
    role: Option<&'static str>,
    #[serde(borrow, default, skip_serializing_if = "Option::is_none")]
    content: Option<Str<'a>>,
    /// A refusal, and the reasoning compatible servers send under one of two names: DeepSeek
    /// and vLLM (`reasoning_content`), OpenRouter and Ollama (`reasoning`).
    #[serde(borrow, default, skip_serializing_if = "Option::is_none")]
    refusal: Option<Str<'a>>,
    #[serde(borrow, default, skip_serializing_if = "Option::is_none")]
    reasoning_content: Option<Str<'a>>,
    #[serde(borrow, default, skip_serializing_if = "Option::is_none")]
    reasoning: Option<Str<'a>>,
    #[serde(borrow, default, skip_serializing_if = "Option::is_none")]
    tool_calls: Option<Vec<Entry<'a>>>,
}

#[derive(Serialize, Deserialize)]
struct Entry<'a> {
    /// Required when read: an entry without its index is never taken as index 0. `None`
    /// only to render a fault: an entry that names no index.
    #[serde(deserialize_with = "required", skip_serializing_if = "Option::is_none")]
    index: Option<u32>,
    #[serde(borrow, default, skip_serializing_if = "Option::is_none")]
    id: Option<Str<'a>>,
    #[serde(rename = "type", skip_deserializing, skip_serializing_if = "Option::is_none")]
    kind: Option<&'static str>,
    #[serde(borrow, default)]
    function: Option<Function<'a>>,
}

/// A field that must be present (and not null) when read, though it may be left out when
/// rendered.
fn required<'de, D: serde::Deserializer<'de>>(d: D) -> Result<Option<u32>, D::Error> {
    u32::deserialize(d).map(Some)
}

#[derive(Serialize, Deserialize)]
struct Function<'a> {
    #[serde(borrow, default, skip_serializing_if = "Option::is_none")]
    name: Option<Str<'a>>,
    #[serde(borrow, default)]
    arguments: Option<Str<'a>>,
}

#[derive(Serialize)]
struct Usage {
    prompt_tokens: u32,
    completion_tokens: u32,
    total_tokens: u32,
}

/// An error event as rendered (read as a [`Chunk`] with its `error`).
#[derive(Serialize)]
struct ErrorEvent<'a> {
    error: ErrorBody<'a>,
}

#[derive(Serialize, Deserialize)]
struct ErrorBody<'a> {
    #[serde(borrow)]
    message: Str<'a>,
    #[serde(rename = "type", skip_deserializing)]
    kind: &'static str,
    #[serde(skip_deserializing)]
    param: Option<()>,
    #[serde(skip_deserializing)]
    code: Option<()>,
}

/// A chunk of this stream with no choices yet.
fn chunk(id: &str) -> Chunk<'_> {
    Chunk {
        id,
        object: EVENT,
        created: CREATED,
        model: MODEL,
        system_fingerprint: FINGERPRINT,
        choices: None,
        usage: None,
        error: None,
        prompt_filter_results: None,
    }
}

/// A chunk being assembled: pieces may still join it.
struct Pending<'a> {
    delta: Delta<'a>,
    finish_reason: Option<&'static str>,
    /// Neutral events delivered once this chunk is.
    delivered: usize,
    /// Later pieces may ride in it (it holds pieces, not a ping, fault or finish).
    joinable: bool,
}

struct Renderer<'a, 'n> {
    out: Out,
    chunk_id: String,
    /// What every chunk of the stream starts with ([`write::head`]).
    head: String,
    role_sent: bool,
    pending: Option<Pending<'n>>,
    quirks: Quirks,
    /// Non-quirk: the id each index was last announced with (as the decoder will see it).
    announced: HashMap<u32, Cow<'n, str>>,
    /// Quirk: the calls announced so far as (block, neutral index, id), in order.
    calls: Vec<(Option<u32>, u32, &'n str)>,
    turn: &'a Turn,
}

impl<'a, 'n> Renderer<'a, 'n> {
    fn flush(&mut self) {
        let Some(p) = self.pending.take() else { return };
        self.emit(p.delta, p.finish_reason, p.delivered);
    }

    fn emit(&mut self, mut delta: Delta<'_>, finish_reason: Option<&'static str>, delivered: usize) {
        // The first chunk of a stream names the role, as the API does.
        if !std::mem::replace(&mut self.role_sent, true) {
            delta.role = Some("assistant");
        }
        let chunk = Chunk {
            choices: Some(vec![Choice {
                index: Some(0),
                delta: Some(delta),
                logprobs: None,
                finish_reason: finish_reason.map(Str::of),
            }]),
            ..chunk(&self.chunk_id)
        };
        let head = &self.head;
        self.out.with(None, 0, |p| write::chunk_into(&chunk, head, p), delivered);
    }

    /// A chunk of its own that nothing joins.
    fn alone(&mut self, delta: Delta<'n>, finish_reason: Option<&'static str>, delivered: usize) {
        self.flush();
        self.pending = Some(Pending { delta, finish_reason, delivered, joinable: false });
        self.flush();
    }

    /// Adds call entries as piece `piece` (`None`: not a piece of the scenario's order).
    fn entries(&mut self, piece: Option<usize>, entries: Vec<Entry<'n>>, delivered: usize) {
        let join = piece.is_some_and(|p| self.joins().get(p) == Some(&true));
        match &mut self.pending {
            Some(p) if join && p.joinable => {
                p.delta.tool_calls.get_or_insert_with(Vec::new).extend(entries);
                p.delivered = delivered;
            }
            _ => {
                self.flush();
                let delta = Delta { tool_calls: Some(entries), ..Delta::default() };
                self.pending =
                    Some(Pending { delta, finish_reason: None, delivered, joinable: piece.is_some() });
            }
        }
    }

    fn joins(&self) -> &'a [bool] {
        match &self.turn.shape {
            Shape::Interleaved(il) => &il.joins,
            Shape::PerCall => &[],
        }
    }

    /// The id the announcement goes out with, and the index its entries carry.
    fn announce(
        &mut self,
        block: Option<u32>,
        index: u32,
        call_id: &'n str,
    ) -> Result<(u32, Cow<'n, str>), String> {
        if self.quirks.chat_index_zero {
            if self.calls.iter().any(|&(_, _, id)| id == call_id) {
                return Err(format!(
                    "under chat_index_zero a call announced again with id {call_id} reads as the same call \
                     (a replayed announcement cannot be expressed)"
                ));
            }
            self.calls.push((block, index, call_id));
            return Ok((0, Cow::Borrowed(call_id)));
        }
        // A second announcement of an index with the id it already holds would read as that
        // id repeated; a Chat-level duplicate is a different id at an occupied index.
        let id = match self.announced.get(&index) {
            Some(held) if held.as_ref() == call_id => Cow::Owned(format!("{call_id}_replay")),
            _ => Cow::Borrowed(call_id),
        };
        self.announced.insert(index, id.clone());
        Ok((index, id))
    }

    /// The id an index's announcement went out with (a call's own id under chat_index_zero).
    fn held_id(&self, index: u32, call_id: &'n str) -> Cow<'n, str> {
        match self.announced.get(&index) {
            Some(id) if !self.quirks.chat_index_zero => id.clone(),
            _ => Cow::Borrowed(call_id),
        }
    }

    /// The index a fragment's entry carries; under the quirk it must belong to the latest call.
    fn fragment_index(&self, block: Option<u32>, index: u32) -> Result<u32, String> {
        if !self.quirks.chat_index_zero {
            return Ok(index);
        }
        match self.calls.last() {
            // Before any announcement an id-less entry is simply unannounced.
            None => Ok(0),
            Some(&(b, i, _)) if (block.is_some() && b == block) || (block.is_none() && i == index) => Ok(0),
            Some(_) => Err(format!(
                "under chat_index_zero an entry without an id belongs to the latest call, but this \
                 fragment (index {index}) belongs to an earlier one: the interleave mixes two calls' pieces"
            )),
        }
    }
}

fn entry<'n>(index: u32, id: Option<Cow<'n, str>>, name: Option<&'n str>, arguments: &'n str) -> Entry<'n> {
    Entry {
        index: Some(index),
        kind: id.as_ref().map(|_| "function"),
        id: id.map(Str),
        function: Some(Function { name: name.map(Str::of), arguments: Some(Str::of(arguments)) }),
    }
}

/// Whether the call at `block` is sent without argument bytes (its announcement alone is a
/// piece of the interleave).
fn is_bare(turn: &Turn, block: u32) -> bool {
    match turn.blocks.get(block as usize) {
        Some(Block::Call(c)) => fragments(&c.arguments, &c.splits).next().is_none(),
        _ => true,
    }
}

pub(crate) fn render(
    turn: &Turn,
    neutral: &Rendered<'_>,
    quirks: Quirks,
    ids: &Ids,
) -> Result<WireStream, String> {
    Ok(render_into(turn, neutral, quirks, ids, Out::with_capacity(neutral.events.len() + 4))?.wire)
}

/// The chunks of `neutral`, into `out` (kept, or framed into its SSE bytes).
fn render_into(
    turn: &Turn,
    neutral: &Rendered<'_>,
    quirks: Quirks,
    ids: &Ids,
    out: Out,
) -> Result<Out, String> {
    let chunk_id = ids.base62("chatcmpl-", "chunk", 29);
    let mut r = Renderer {
        out,
        head: write::head(&chunk(&chunk_id)),
        chunk_id,
        role_sent: false,
        pending: None,
        quirks,
        announced: HashMap::new(),
        calls: Vec::new(),
        turn,
    };
    let events = &neutral.events;
    let origins = &neutral.origins;
    // The number of the next piece in sending order (`Interleave::joins` is indexed by it):
    // a piece is a text delta, a call fragment, or the announcement of a call that has no
    // argument bytes.
    let mut piece = 0usize;
    let mut has_stop = false;
    let mut k = 0;
    while k < events.len() {
        match (&events[k], origins[k]) {
            (Event::TextDelta { text }, _) => {
                // `delta.content` is read before `delta.tool_calls`, and holds one string: text
                // always starts its own chunk, and call pieces may join it.
                piece += 1;
                r.flush();
                let delta = Delta { content: Some(Str::of(text)), ..Delta::default() };
                r.pending = Some(Pending { delta, finish_reason: None, delivered: k + 1, joinable: true });
            }
            (Event::CallStart { index, call_id, name }, origin) => {
                let block = match origin {
                    Origin::Announce { block } => Some(block),
                    _ => None,
                };
                if quirks.chat_index_zero && block.is_none() {
                    return Err("under chat_index_zero a replayed announcement cannot be expressed".into());
                }
                let (wire_index, id) = r.announce(block, *index, call_id)?;
                let first = match (block, events.get(k + 1), origins.get(k + 1)) {
                    (
                        Some(b),
                        Some(Event::ArgsDelta { fragment, .. }),
                        Some(Origin::Fragment { block: fb, .. }),
                    ) if *fb == b => Some(fragment.as_ref()),
                    _ => None,
                };
                // An announcement rides on its call's first piece: with its first fragment,
                // or alone for a call without argument bytes. One separated from its fragment
                // (by a ping, a fault or the cut of an abandoned stream) rides where that
                // fragment would have, and the fragment follows as a piece of its own. A
                // replayed announcement is no piece of the interleave.
                let this_piece = block.map(|_| piece);
                let completes_piece = block.is_some_and(|b| first.is_some() || is_bare(turn, b));
                let mut entries = vec![entry(wire_index, Some(id), Some(name), first.unwrap_or(""))];
                if first == Some("") {
                    // An announcement's own empty arguments read as no fragment: send the
                    // empty first fragment as an entry of its own so it is not lost.
                    entries.push(entry(wire_index, None, None, ""));
                }
                let consumed = if first.is_some() { 2 } else { 1 };
                r.entries(this_piece, entries, k + consumed);
                piece += usize::from(completes_piece);
                k += consumed;
                continue;
            }
            (Event::ArgsDelta { index, fragment }, origin) => {
                let (block, this_piece) = match origin {
                    Origin::Fragment { block, .. } => (Some(block), Some(piece)),
                    _ => (None, None),
                };
                let wire_index = r.fragment_index(block, *index)?;
                // Under chat_repeat_fields a call's later entries repeat its id and name (its
                // own fragments only: a fault's fragment names no call).
                let repeated = match (quirks.chat_repeat_fields, block.map(|b| &turn.blocks[b as usize])) {
                    (true, Some(Block::Call(c))) => Some((r.held_id(*index, &c.call_id), c.name.as_str())),
                    _ => None,
                };
                let (id, name) = repeated.map_or((None, None), |(id, name)| (Some(id), Some(name)));
                let mut e = entry(wire_index, id, name, fragment);
                if let Origin::Fault { fault } = origin {
                    if let Some(FaultKind::UnannouncedFragment { missing_index: true, .. }) =
                        turn.faults.get(fault as usize).map(|f| &f.kind)
                    {
                        e.index = None;
                    }
                }
                r.entries(this_piece, vec![e], k + 1);
                if this_piece.is_some() {
                    piece += 1;
                }
            }
            (Event::ForeignDelta { kind, fragment, .. }, origin) => {
                // Like text: its own chunk, which call pieces may join.
                piece += 1;
                r.flush();
                let spelled_reasoning = match origin {
                    Origin::Foreign { block, .. } => {
                        matches!(turn.blocks.get(block as usize), Some(Block::Foreign(f)) if f.name == "reasoning")
                    }
                    _ => false,
                };
                let mut delta = Delta::default();
                match kind {
                    ForeignKind::Refusal => delta.refusal = Some(Str::of(fragment)),
                    _ if spelled_reasoning => delta.reasoning = Some(Str::of(fragment)),
                    _ => delta.reasoning_content = Some(Str::of(fragment)),
                }
                r.pending = Some(Pending { delta, finish_reason: None, delivered: k + 1, joinable: true });
            }
            (Event::ForeignStart { .. } | Event::ForeignStop { .. }, _) => {
                return Err("a foreign block's start or stop (Chat's foreign deltas have none)".into());
            }
            (Event::Ping, _) => r.alone(Delta::default(), None, k + 1),
            (Event::Stop { reason }, _) => {
                has_stop = true;
                let reason = crate::DialectDef::stop_reason(&OpenAiChat, *reason).wire_name();
                r.alone(Delta::default(), Some(reason), k + 1);
            }
            (Event::Error { message }, _) => {
                r.flush();
                let error = ErrorEvent {
                    error: ErrorBody {
                        message: Str::of(message),
                        kind: "server_error",
                        param: None,
                        code: None,
                    },
                };
                r.out.json(None, &error, k + 1);
            }
            (Event::CallStop { .. }, _) => {
                return Err("a call terminal (Chat has none: finish_reason ends every call)".into());
            }
        }
        k += 1;
    }
    r.flush();
    if has_stop {
        let completion = tokens(events);
        let usage = Chunk {
            choices: Some(Vec::new()),
            usage: Some(Seen::Sent(Usage {
                prompt_tokens: PROMPT_TOKENS,
                completion_tokens: completion,
                total_tokens: PROMPT_TOKENS + completion,
            })),
            ..chunk(&r.chunk_id)
        };
        let head = &r.head;
        r.out.with(None, 0, |p| write::chunk_into(&usage, head, p), events.len());
        r.out.with(None, 0, |p| p.raw("[DONE]"), events.len());
    }
    Ok(r.out)
}

/// Decodes OpenAI Chat Completions chunks.
#[derive(Debug, Default)]
pub struct ChatDecoder {
    quirks: Quirks,
    /// The id each index was announced with (without the quirk).
    ids: HashMap<u32, String>,
    /// Under the quirk: the calls' ids in announcement order (ordinal = neutral index).
    calls: Vec<String>,
}

impl ChatDecoder {
    pub fn new(quirks: Quirks) -> ChatDecoder {
        ChatDecoder { quirks, ..ChatDecoder::default() }
    }
}

const EVENT: &str = "chat.completion.chunk";

fn finish_reason(s: &str) -> Result<StopReason, TurnError> {
    Ok(match s {
        "tool_calls" => StopReason::ToolCalls,
        "stop" => StopReason::Stop,
        "length" => StopReason::Length,
        "content_filter" => StopReason::ContentFilter,
        other => {
            return Err(malformed(format!(
                "{EVENT}: choices[0].finish_reason: `{other}` is not a finish reason this harness knows \
                 (tool_calls, stop, length, content_filter)"
            )))
        }
    })
}

impl ChatDecoder {
    fn entry(&mut self, k: usize, e: Entry<'_>, out: &mut crate::Decoded<'_>) -> Result<(), TurnError> {
        // Always there: the entry was read with its index required.
        let Some(at) = e.index else {
            return Err(malformed(format!(
                "{EVENT}: choices[0].delta.tool_calls[{k}]: missing field `index`"
            )));
        };
        let (name, arguments) = match e.function {
            Some(f) => (f.name, f.arguments),
            None => (None, None),
        };
        let name_of = |name: Option<Str<'_>>| {
            name.map(own).ok_or_else(|| {
                malformed(format!(
                    "{EVENT}: choices[0].delta.tool_calls[{k}].function.name: the first entry of a call needs its name"
                ))
            })
        };
        // A fragment, even an empty one, unless it rides on an announcement.
        let fragment = |index: u32, arguments: Option<Str<'_>>, out: &mut crate::Decoded<'_>| {
            out.push(Event::ArgsDelta { index, fragment: arguments.map_or(Cow::Borrowed(""), own) });
        };
        let announce =
            |index: u32, id: &str, name, arguments: Option<Str<'_>>, out: &mut crate::Decoded<'_>| {
                out.push(Event::CallStart { index, call_id: Cow::Owned(id.to_owned()), name });
                if let Some(a) = arguments.filter(|a| !a.as_str().is_empty()) {
                    out.push(Event::ArgsDelta { index, fragment: own(a) });
                }
            };
        let id = e.id.as_ref().map(Str::as_str);
        if self.quirks.chat_index_zero {
            // Calls are told apart by id; the neutral index is the announcement ordinal.
            match id {
                Some(id) => match self.calls.iter().rposition(|c| c == id) {
                    Some(ordinal) => fragment(ordinal as u32, arguments, out),
                    None => {
                        let ordinal = self.calls.len() as u32;
                        announce(ordinal, id, name_of(name)?, arguments, out);
                        self.calls.push(id.to_owned());
                    }
                },
                None => fragment(self.calls.len().saturating_sub(1) as u32, arguments, out),
            }
            return Ok(());
        }
        match (self.ids.get(&at), id) {
            // Some servers repeat the id on every entry: the same id is the same call.
            (Some(held), Some(id)) if held == id => fragment(at, arguments, out),
            // A new id at a free index announces a call; at an occupied index it is a second
            // announcement, which the core refuses as one, name or no name (a nameless
            // entry there is not a malformed first entry: the index's first entry came).
            (Some(_), Some(id)) if name.is_none() => {
                announce(at, id, Cow::Borrowed(""), arguments, out);
                self.ids.insert(at, id.to_owned());
            }
            (_, Some(id)) => {
                announce(at, id, name_of(name)?, arguments, out);
                self.ids.insert(at, id.to_owned());
            }
            (_, None) => fragment(at, arguments, out),
        }
        Ok(())
    }
}

impl crate::SseDecoder for ChatDecoder {
    fn decode<'m>(
        &mut self,
        event: &'m SseEvent,
        scratch: &'m mut Vec<u8>,
        out: &mut crate::Decoded<'m>,
    ) -> Result<(), TurnError> {
        if let Some(done) = fast::decode(self.quirks, self.calls.len(), scratch, event, out) {
            return done;
        }
        if event.data == "[DONE]" {
            return Ok(());
        }
        let chunk: Chunk<'_> = parse(EVENT, &event.data)?;
        if let Some(e) = chunk.error {
            out.push(Event::Error { message: own(e.message) });
            return Ok(());
        }
        let Some(choices) = chunk.choices else {
            if chunk.usage.is_some() || chunk.prompt_filter_results.is_some() {
                return Ok(());
            }
            return Err(malformed(format!("{EVENT}: has neither `choices` nor `error`")));
        };
        // One choice (n = 1) is what the harness models; other choices are other completions.
        for choice in choices.into_iter().filter(|c| c.index.unwrap_or(0) == 0) {
            let mut said = false;
            if let Some(delta) = choice.delta {
                if let Some(text) = delta.content {
                    out.push(Event::TextDelta { text: own(text) });
                    said = true;
                }
                // Never text, never a call: the core is told they are foreign.
                for (kind, f) in [
                    (ForeignKind::Refusal, delta.refusal),
                    (ForeignKind::Thinking, delta.reasoning_content),
                    (ForeignKind::Thinking, delta.reasoning),
                ] {
                    if let Some(f) = f {
                        out.push(Event::ForeignDelta { index: 0, kind, fragment: own(f) });
                        said = true;
                    }
                }
                for (k, e) in delta.tool_calls.into_iter().flatten().enumerate() {
                    self.entry(k, e, out)?;
                    said = true;
                }
            }
            match choice.finish_reason {
                Some(r) => out.push(Event::Stop { reason: finish_reason(r.as_str())? }),
                // A chunk that carries nothing is a keep-alive.
                None if !said => out.push(Event::Ping),
                None => {}
            }
        }
        Ok(())
    }
}

/// OpenAI Chat Completions in the [`crate::registry`], with the quirk profiles of the
/// servers that speak it their own way.
pub struct OpenAiChat;

impl crate::DialectDef for OpenAiChat {
    fn id(&self) -> Dialect {
        Dialect::OpenAiChat
    }

    /// No per-call terminal: only the interleaved shape.
    fn carries(&self, shape: &Shape) -> bool {
        matches!(shape, Shape::Interleaved(_))
    }

    fn speaks_foreign(&self, kind: ForeignKind) -> bool {
        matches!(kind, ForeignKind::Thinking | ForeignKind::Refusal)
    }

    fn stop_reasons(&self) -> &'static [StopReason] {
        use StopReason::*;
        &[ToolCalls, Stop, Length, ContentFilter]
    }

    /// `stop` for a finished answer and a stop sequence alike; a refusal is `content_filter`.
    fn word(&self, meaning: StopMeaning) -> StopReason {
        match meaning {
            StopMeaning::Complete | StopMeaning::StopSequence => StopReason::Stop,
            StopMeaning::ToolUse => StopReason::ToolCalls,
            StopMeaning::Truncated => StopReason::Length,
            StopMeaning::Refused | StopMeaning::Filtered => StopReason::ContentFilter,
        }
    }

    fn quirk_profiles(&self) -> &'static [Quirks] {
        &[Quirks::PLAIN, Quirks::INDEX_ZERO, Quirks::REPEAT_FIELDS]
    }

    fn render(
        &self,
        turn: &Turn,
        neutral: &Rendered<'_>,
        quirks: Quirks,
        ids: &Ids,
    ) -> Result<crate::WireStream, String> {
        let mut wire = render(turn, neutral, quirks, ids)?;
        if !turn.wire.is_plain() {
            extra::add(&mut wire, turn);
        }
        Ok(wire.into())
    }

    /// Framed as rendered, unless the turn's wire has extras (inserted among the rendered
    /// chunks); with a tail, the stream is rendered again as it would have gone on for the
    /// chunk the connection dropped inside. A stream Chat cannot express is left to
    /// [`crate::render_wire`], which refuses it.
    fn render_bytes_direct(
        &self,
        turn: &Turn,
        neutral: &Rendered<'_>,
        quirks: Quirks,
        ids: &Ids,
    ) -> Option<crate::BytesStream> {
        if !turn.wire.is_plain() {
            return None;
        }
        let next = crate::next_sse(turn, neutral, self, quirks, ids)?;
        render_into(turn, neutral, quirks, ids, Out::framing(turn, neutral, 2, 300))
            .ok()?
            .framed(turn, next.as_ref())
    }

    fn decoder(&self, quirks: Quirks) -> Box<dyn crate::WireDecoder> {
        Box::new(crate::OverSse::new(ChatDecoder::new(quirks)))
    }

    fn detects(&self, message: &toolcert_subject::WireMessage) -> bool {
        message.as_sse().and_then(crate::json::detect_one) == Some(Dialect::OpenAiChat)
    }

    fn endpoint(&self) -> &'static str {
        "/v1/chat/completions"
    }

    /// `[DONE]`, or a chunk: `choices`, or the `chat.completion.chunk` object.
    fn shows_in_data(&self, event: &SseEvent) -> bool {
        #[derive(Deserialize)]
        struct Shape<'a> {
            // A `type` that is not a string: no dialect's data.
            #[serde(rename = "type", borrow, default)]
            _kind: Option<Str<'a>>,
            #[serde(borrow, default)]
            object: Option<Str<'a>>,
            #[serde(default)]
            choices: Option<serde::de::IgnoredAny>,
        }
        if event.data == "[DONE]" {
            return true;
        }
        let Ok(shape) = serde_json::from_str::<Shape<'_>>(&event.data) else { return false };
        shape.choices.is_some() || shape.object.is_some_and(|o| o.as_str() == "chat.completion.chunk")
    }

    fn wrong_typed(&self, event: &serde_json::Value) -> Option<serde_json::Value> {
        use serde_json::json;
        let nonempty = crate::defect::nonempty;
        let entries = event.pointer("/choices/0/delta/tool_calls")?.as_array()?;
        let entry = entries.iter().find(|e| e.pointer("/function/arguments").is_some_and(nonempty))?;
        // The entry alone, as a later fragment of its call: index and arguments.
        let choice = json!({
            "index": 0,
            "delta": {"tool_calls": [{"index": entry.get("index")?, "function": {"arguments": 42}}]},
            "finish_reason": null,
        });
        let mut copy = event.clone();
        copy["choices"] = json!([choice]);
        Some(copy)
    }

    fn nameless_new_id(&self) -> Option<fn(&serde_json::Value) -> Option<serde_json::Value>> {
        Some(nameless_new_id)
    }

    fn exercised(&self, turn: &Turn, _: &Rendered<'_>, add: &mut dyn FnMut(&'static str)) {
        if turn.calls().next().is_some() {
            add("WIRE-CHAT");
        }
        // The finish chunk, usage chunk and `[DONE]` of a stopped turn, and the dialect
        // events' prelude and bookkeeping units.
        if matches!(turn.ending, toolcert_scenario::Ending::Stop(_)) || bookkeeping(turn) {
            add("WIRE-KEEPALIVE");
        }
    }

    fn attribution(&self) -> &'static [crate::Attribution] {
        &[
            crate::Attribution {
                rule: "WIRE-KEEPALIVE",
                has: bookkeeping,
                strip: |t| {
                    (t.wire.chat_prelude, t.wire.usage_without_choices, t.wire.done_without_finish) =
                        (false, false, false)
                },
                why: "passes without the prelude chunk, the usage chunk's missing choices and the unfinished [DONE]",
            },
            crate::Attribution {
                rule: "WIRE-CHAT",
                has: |t| matches!(&t.shape, Shape::Interleaved(il) if il.joins.contains(&true)),
                strip: |t| {
                    if let Shape::Interleaved(il) = &mut t.shape {
                        *il = toolcert_scenario::Interleave { order: il.order.clone(), joins: Vec::new() };
                    }
                },
                why: "passes with one entry per chunk",
            },
        ]
    }

    /// The prelude chunk, the usage chunk without `choices`, `[DONE]` without a finish.
    fn reads(&self, wire: &toolcert_scenario::WireEvents) -> bool {
        wire.chat_prelude || wire.usage_without_choices || wire.done_without_finish
    }
}

/// Chat's prelude, usage-without-choices and `[DONE]`-without-finish units.
fn bookkeeping(turn: &Turn) -> bool {
    crate::DialectDef::reads(&OpenAiChat, &turn.wire)
}
/// A Chat chunk with one entry at the first announced index: a new id, no name.
fn nameless_new_id(v: &serde_json::Value) -> Option<serde_json::Value> {
    use serde_json::{json, Value};
    let entries = v.pointer("/choices/0/delta/tool_calls")?.as_array()?;
    let entry = entries.iter().find(|e| e.get("id").is_some_and(Value::is_string))?;
    let id = format!("{}_other", entry["id"].as_str()?);
    let mut copy = v.clone();
    copy["choices"] = json!([{
        "index": 0,
        "delta": {"tool_calls": [{"index": entry.get("index")?, "id": id, "type": "function",
            "function": {"arguments": ""}}]},
        "finish_reason": null,
    }]);
    Some(copy)
}
