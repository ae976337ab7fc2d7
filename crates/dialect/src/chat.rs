//! OpenAI Chat Completions: `data:` lines of `chat.completion.chunk` objects (no `event:`
//! line). Calls travel as `choices[0].delta.tool_calls[]` entries; OpenAI keys them by
//! `index` and puts the id, `type` and name on an index's first entry only; several entries
//! (of one or several calls) may share a chunk, and text (`delta.content`) may share it with
//! them. There is no per-call terminal: `finish_reason` ends every call at once. A usage
//! chunk with `choices: []` and `data: [DONE]` close the stream.
//!
//! Where it sits: the openai-chat module of the wire level. [`Renderer`] turns a turn's
//! neutral events into chunks as one server profile sends them (`scenario::PROFILES`: the
//! [`Quirks`] flags, each one observed shape: index 0 for every call, no index, whole calls,
//! empty-id continuations, repeated fields, split entries, repeats on the finish chunk,
//! indices that are block positions). [`ChatDecoder`] reads every profile with one rule,
//! never told which server it reads (docs/SPEC.md §3 and "Server profiles" in §8): calls are
//! told apart by id where an entry has one and by index otherwise, and a call's neutral index
//! is its announcement ordinal.

use std::borrow::Cow;
use std::collections::HashMap;

use serde::{Deserialize, Serialize};
use toolcert_render::{Event, Origin, Rendered};
use toolcert_scenario::{
    fragments, Block, Call, FaultKind, ForeignKind, Shape, StopMeaning, StopReason, Turn,
};
use toolcert_sse::SseEvent;
use toolcert_subject::TurnError;

use crate::json::{own, parse, tokens, Ids, Out, Seen, Str};
use crate::{malformed, Dialect, Quirks, SseStream as WireStream};

mod deltas;
mod extra;
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
    /// Azure OpenAI's filter results on a choice: read only for being there (a choice that
    /// carries nothing else is the filter's annotation, not a keep-alive).
    #[serde(default, skip_serializing)]
    content_filter_results: Option<Seen<()>>,
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
    /// Absent (or `null`) on some servers' entries (Mistral, Gemini's compatible endpoint):
    /// such an entry is told apart by its id, or continues the latest call.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    index: Option<u32>,
    /// Empty (`""`) on some servers' continuations (DeepSeek): an empty id is no id.
    #[serde(borrow, default, skip_serializing_if = "Option::is_none")]
    id: Option<Str<'a>>,
    #[serde(rename = "type", skip_deserializing, skip_serializing_if = "Option::is_none")]
    kind: Option<&'static str>,
    #[serde(borrow, default)]
    function: Option<Function<'a>>,
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

/// An openai-chat stream being written: the chunks so far, the one still open to pieces that
/// join it, and the wire's keys.
struct Renderer<'a, 'n> {
    out: Out,
    chunk_id: String,
    /// What every chunk of the stream starts with ([`write::head`]).
    head: String,
    role_sent: bool,
    pending: Option<Pending<'n>>,
    keys: Keys<'n>,
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
                content_filter_results: None,
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
}

/// How one stream's calls are keyed on the wire under a profile, and what a reader of the one
/// Chat rule ([`ChatDecoder`]) takes each entry for. The renderer keeps the reader's view so
/// that it never sends an entry that reads as another call's: a stream the profile cannot say
/// is refused (`unsupported`), never sent wrong.
struct Keys<'n> {
    quirks: Quirks,
    /// Which call (its block) each wire index holds: the one announced there last.
    held: HashMap<u32, u32>,
    /// The calls announced so far, in order, with their ids: the latest is what an entry with
    /// neither an index nor an id continues, and all of them are what the finish chunk repeats
    /// under `chat_repeat_on_finish`.
    announced: Vec<(u32, &'n Call)>,
    /// The wire indices the turn's calls are sent at (sorted), so that a fragment for no call
    /// goes where none is.
    used: Vec<u32>,
    /// `chat_late_name`: the call (its block) whose first entry went without its name, which
    /// its next entry carries.
    owes_name: Option<u32>,
}

impl<'n> Keys<'n> {
    fn new(quirks: Quirks, turn: &Turn) -> Keys<'n> {
        let mut used: Vec<u32> = (0..turn.blocks.len() as u32)
            .filter(|&b| matches!(turn.blocks[b as usize], Block::Call(_)))
            .filter_map(|b| wire_index(quirks, turn, b))
            .collect();
        used.sort_unstable();
        used.dedup();
        Keys { quirks, held: HashMap::new(), announced: Vec::new(), used, owes_name: None }
    }

    /// The index a fragment for no call is sent at: the neutral one (an index no announcement
    /// used), unless the profile sends a call there, then the first index none is sent at.
    fn unheld(&self, neutral: u32) -> u32 {
        if self.used.binary_search(&neutral).is_err() {
            return neutral;
        }
        (0..).find(|i| self.used.binary_search(i).is_err()).unwrap_or(u32::MAX)
    }

    /// Whether an entry at `wire` without an id reads as the call at `block`: the call its
    /// index holds, or with no index the latest call.
    fn reads_as(&self, wire: Option<u32>, block: u32) -> bool {
        match wire {
            Some(i) => self.held.get(&i) == Some(&block),
            None => self.announced.last().map(|&(b, _)| b) == Some(block),
        }
    }

    /// A later entry of `call` (not its first), at `wire`, as the profile spells one: the id
    /// on every entry (`chat_repeat_fields`, `chat_repeat_id`) or empty (`chat_empty_continuations`),
    /// the name repeated or empty likewise, else index and arguments alone.
    fn continuation(&self, wire: Option<u32>, call: &'n Call, arguments: &'n str) -> Entry<'n> {
        let q = self.quirks;
        let (id, name) = if q.chat_repeat_fields {
            (Some(Str::of(&call.call_id)), Some(Str::of(&call.name)))
        } else if q.chat_repeat_id {
            (Some(Str::of(&call.call_id)), None)
        } else if q.chat_empty_continuations {
            (Some(Str::of("")), Some(Str::of("")))
        } else {
            (None, None)
        };
        Entry {
            index: wire,
            kind: q.chat_repeat_fields.then_some("function"),
            id,
            function: Some(Function { name, arguments: Some(Str::of(arguments)) }),
        }
    }

    /// Whether the profile puts the call's own id on its later entries (which then read as
    /// that call wherever they are sent).
    fn continuations_carry_id(&self) -> bool {
        self.quirks.chat_repeat_fields || self.quirks.chat_repeat_id
    }
}

/// The index the entries of the call at `block` carry under `quirks` (`None`: no `index`).
fn wire_index(quirks: Quirks, turn: &Turn, block: u32) -> Option<u32> {
    if quirks.chat_no_index {
        None
    } else if quirks.chat_index_zero {
        Some(0)
    } else if quirks.chat_sparse_index {
        // A gateway in front of a per-block API numbers content blocks, text and thinking
        // included: the first call after a text block is at index 1.
        Some(block)
    } else {
        match turn.blocks.get(block as usize) {
            Some(Block::Call(c)) => Some(c.index),
            _ => Some(block),
        }
    }
}

/// The call at `block`.
fn call_at(turn: &Turn, block: u32) -> Result<&Call, String> {
    match turn.blocks.get(block as usize) {
        Some(Block::Call(c)) => Ok(c),
        _ => Err(format!("block {block} is not a call")),
    }
}

/// `s` cut in two at the character boundary nearest its middle, when it has two characters
/// or more (`chat_split_entries`: one piece sent as two entries of one index in one chunk).
fn halves(s: &str) -> Option<(&str, &str)> {
    let mid = s.char_indices().map(|(i, _)| i).filter(|&i| i > 0).min_by_key(|&i| i.abs_diff(s.len() / 2))?;
    Some(s.split_at(mid))
}

/// The entries of one piece of `call` at `wire` carrying `arguments`: `head` with them, or
/// under `chat_split_entries` `head` with their first half and a continuation with the rest
/// (two entries of one index in one chunk).
fn with_arguments<'n>(
    keys: &Keys<'n>,
    mut head: Entry<'n>,
    arguments: &'n str,
    wire: Option<u32>,
    call: &'n Call,
) -> Vec<Entry<'n>> {
    let (first, rest) = match halves(arguments).filter(|_| keys.quirks.chat_split_entries) {
        Some((a, b)) => (a, Some(b)),
        None => (arguments, None),
    };
    if let Some(f) = &mut head.function {
        f.arguments = Some(Str::of(first));
    }
    let mut entries = vec![head];
    entries.extend(rest.map(|b| keys.continuation(wire, call, b)));
    entries
}

/// What Chat's wire has no way to say: a replayed announcement (under the one rule an entry
/// that repeats a call's id continues that call, and one with a new id announces another).
const REPLAY: &str = "replayed announcement: under the one Chat rule an entry that repeats a call's id \
                      continues that call and one with a new id announces another call, so no entry \
                      replays an announcement (docs/SPEC.md §3)";

/// Nor an empty fragment after the finish reason: an entry without argument bytes there
/// repeats its call (as OpenRouter and vLLM send) and is no fault.
const EMPTY_AFTER_STOP: &str = "empty fragment after the finish reason: an entry that adds no argument \
                                bytes after finish_reason repeats its call, which is no fault \
                                (docs/SPEC.md §3)";

pub(crate) fn render(
    turn: &Turn,
    neutral: &Rendered<'_>,
    quirks: Quirks,
    ids: &Ids,
) -> Result<WireStream, String> {
    Ok(render_into(turn, neutral, quirks, ids, Out::with_capacity(neutral.events.len() + 4))?.wire)
}

/// The chunks of `neutral`, into `out` (kept, or framed into its SSE bytes), as the server
/// profile `quirks` sends them.
///
/// Whole calls (`chat_whole_calls`): a call whose announcement and every fragment are
/// delivered back to back (nothing of another block, no ping, fault or cut between them) goes
/// out as one entry with all its arguments, in the chunk of its first piece (that piece's
/// join decides; the others' joins are inside the entry), and that chunk completes all those
/// neutral events (`upto`). A call cut by the stream's end, or whose pieces interleave with
/// others', is sent in pieces as the other profiles send it: a whole-call server would have
/// sent nothing of it, but a reader that takes it in pieces is right either way.
///
/// A stream the profile cannot say is refused: a replayed announcement (never, in Chat), an
/// entry without an id that would continue another call than its own (index 0 for every
/// call, or no index, with two calls' pieces mixed), two calls with one id, and an empty
/// fragment after the finish reason (a repeat, no fault).
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
        keys: Keys::new(quirks, turn),
        turn,
    };
    let events = &neutral.events;
    let origins = &neutral.origins;
    // The number of the next piece in sending order (`Interleave::joins` is indexed by it):
    // a piece is a text delta, a call fragment, or the announcement of a call that has no
    // argument bytes.
    let mut piece = 0usize;
    let mut stop_word = None;
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
            (Event::CallStart { .. }, Origin::Announce { block }) => {
                let c = call_at(turn, block)?;
                if r.keys.announced.iter().any(|(_, a)| a.call_id == c.call_id) {
                    return Err(format!(
                        "two calls with the id {}: an entry with a known id continues that call, so the \
                         second cannot be announced",
                        c.call_id
                    ));
                }
                let wire = wire_index(quirks, turn, block);
                // This call's fragments right after its announcement.
                let following = origins[k + 1..]
                    .iter()
                    .take_while(|o| matches!(o, Origin::Fragment { block: b, .. } if *b == block))
                    .count();
                let total = fragments(&c.arguments, &c.splits).count();
                let whole = quirks.chat_whole_calls && total > 1 && following == total;
                // An announcement rides on its call's first piece: with its first fragment,
                // or alone for a call without argument bytes. One separated from its fragment
                // (by a ping, a fault or the cut of an abandoned stream) rides where that
                // fragment would have, and the fragment follows as a piece of its own.
                let taken = if whole { total } else { following.min(1) };
                let arguments: &str = match (&events.get(k + 1), taken) {
                    // Every fragment delivered, in order: the whole document.
                    (_, t) if t > 1 => &c.arguments,
                    (Some(Event::ArgsDelta { fragment, .. }), 1) => fragment,
                    _ => "",
                };
                // `chat_late_name`: the name waits for the call's next entry, when that entry is
                // the very next piece (a call cut, or mixed with another's pieces, before its
                // name came would read as no call: such a stream is sent the usual way).
                let late = quirks.chat_late_name
                    && !whole
                    && taken == 1
                    && !arguments.is_empty()
                    && matches!(origins.get(k + 2), Some(Origin::Fragment { block: b, .. }) if *b == block);
                let head = Entry {
                    index: wire,
                    id: Some(Str::of(&c.call_id)),
                    kind: Some("function"),
                    function: Some(Function { name: (!late).then(|| Str::of(&c.name)), arguments: None }),
                };
                if late {
                    r.keys.owes_name = Some(block);
                }
                let mut entries = with_arguments(&r.keys, head, arguments, wire, c);
                if taken == 1 && arguments.is_empty() {
                    // An announcement's own empty arguments read as no fragment: send the
                    // empty first fragment as an entry of its own so it is not lost.
                    entries.push(r.keys.continuation(wire, c, ""));
                }
                if let Some(w) = wire {
                    r.keys.held.insert(w, block);
                }
                r.keys.announced.push((block, c));
                // A call without its name is not announced yet: its chunk completes only what
                // came before it, and the entry with the name completes the announcement and
                // both fragments.
                r.entries(Some(piece), entries, if late { k } else { k + 1 + taken });
                piece += match (whole, taken, total) {
                    (true, _, _) => total,
                    // With its first fragment, or alone for a call without argument bytes.
                    (false, 1, _) | (false, _, 0) => 1,
                    _ => 0,
                };
                k += 1 + taken;
                continue;
            }
            // A replayed announcement.
            (Event::CallStart { .. }, _) => return Err(format!("a {REPLAY}")),
            (Event::ArgsDelta { fragment, .. }, Origin::Fragment { block, .. }) => {
                let c = call_at(turn, block)?;
                let wire = wire_index(quirks, turn, block);
                if !r.keys.continuations_carry_id() && !r.keys.reads_as(wire, block) {
                    let at = match wire {
                        Some(i) => format!("at index {i} continues the call announced there last"),
                        None => "without an index continues the call announced last".to_string(),
                    };
                    return Err(format!(
                        "an entry without an id {at}, but this fragment is an earlier call's: the \
                         interleave mixes two calls' pieces, which a server that keys calls so never sends"
                    ));
                }
                let mut head = r.keys.continuation(wire, c, "");
                if r.keys.owes_name == Some(block) {
                    r.keys.owes_name = None;
                    if let Some(f) = &mut head.function {
                        f.name = Some(Str::of(&c.name));
                    }
                }
                let entries = with_arguments(&r.keys, head, fragment, wire, c);
                r.entries(Some(piece), entries, k + 1);
                piece += 1;
            }
            (Event::ArgsDelta { index, fragment }, origin) => {
                let after_stop = match origin {
                    Origin::Fault { fault } => match turn.faults.get(fault as usize).map(|f| &f.kind) {
                        Some(FaultKind::FragmentAfterStop { call, .. }) => turn.fault_call_block(*call),
                        _ => None,
                    },
                    _ => None,
                };
                let e = match after_stop {
                    Some(block) => {
                        if fragment.is_empty() {
                            return Err(format!("an {EMPTY_AFTER_STOP}"));
                        }
                        let (wire, c) = (wire_index(quirks, turn, block), call_at(turn, block)?);
                        let mut e = r.keys.continuation(wire, c, fragment);
                        // Argument bytes after the finish whichever call they read as; sent
                        // with the call's id where the profile's id-less entry would read as
                        // another's, so that they read as the call's own.
                        if !r.keys.continuations_carry_id() && !r.keys.reads_as(wire, block) {
                            e.id = Some(Str::of(&c.call_id));
                        }
                        e
                    }
                    // A fragment for no call (also with `missing_index`: an entry without an
                    // index continues the latest call, so it goes at an index no call holds).
                    None => Entry {
                        index: Some(r.keys.unheld(*index)),
                        id: None,
                        kind: None,
                        function: Some(Function { name: None, arguments: Some(Str::of(fragment)) }),
                    },
                };
                r.entries(None, vec![e], k + 1);
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
                let word = crate::DialectDef::stop_reason(&OpenAiChat, *reason).wire_name();
                stop_word = Some(word);
                let mut delta = Delta::default();
                if quirks.chat_repeat_on_finish && !r.keys.announced.is_empty() {
                    // Each call announced so far again, its id and name, no argument bytes.
                    let repeats = r.keys.announced.iter().map(|&(block, c)| Entry {
                        index: wire_index(quirks, turn, block),
                        id: Some(Str::of(&c.call_id)),
                        kind: Some("function"),
                        function: Some(Function {
                            name: Some(Str::of(&c.name)),
                            arguments: Some(Str::of("")),
                        }),
                    });
                    delta.tool_calls = Some(repeats.collect());
                }
                r.alone(delta, Some(word), k + 1);
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
    if let Some(word) = stop_word {
        let completion = tokens(events);
        let usage = Some(Seen::Sent(Usage {
            prompt_tokens: PROMPT_TOKENS,
            completion_tokens: completion,
            total_tokens: PROMPT_TOKENS + completion,
        }));
        // The usage chunk; under `chat_repeat_on_finish` a second finish chunk carries it.
        let choices = match quirks.chat_repeat_on_finish {
            true => vec![Choice {
                index: Some(0),
                delta: Some(Delta::default()),
                logprobs: None,
                finish_reason: Some(Str::of(word)),
                content_filter_results: None,
            }],
            false => Vec::new(),
        };
        let usage = Chunk { choices: Some(choices), usage, ..chunk(&r.chunk_id) };
        let head = &r.head;
        r.out.with(None, 0, |p| write::chunk_into(&usage, head, p), events.len());
        r.out.with(None, 0, |p| p.raw("[DONE]"), events.len());
    }
    Ok(r.out)
}

/// Decodes OpenAI Chat Completions chunks, of every server profile with one rule (docs/SPEC.md
/// §3): it is never told which server it reads.
///
/// Calls are told apart by id where an entry has one and by index otherwise. An entry whose
/// non-empty id is not a known call's starts a new call (at an index that holds one too: some
/// servers send index 0 for every call); its name may come in a later entry (some hosts send
/// it after the first argument bytes), and the call is announced when it does, or the turn is
/// malformed if the finish reason comes first; an entry with a known call's
/// id continues that call, and one without an id (absent or `""`) continues the call its
/// index holds, or with no index the latest call. A repeated id, name or type is never
/// concatenated: only `arguments` accumulates. An entry with no argument bytes beside or
/// after the finish reason repeats its call and adds nothing, and a second finish reason is
/// no second stop. What the rule leaves no call for (an id-less entry at an index no call
/// holds, or before any call) goes to [`ChatDecoder::NO_CALL`], which the core refuses as
/// unannounced; argument bytes after the finish reason reach the core, which refuses them.
///
/// A call's neutral index is its announcement ordinal, whatever index the wire gave it.
#[derive(Debug, Default)]
pub struct ChatDecoder {
    /// Each call's id, with its ordinal.
    ids: HashMap<String, u32>,
    /// Which call (its ordinal) each wire index holds: the one announced there last.
    held: HashMap<u32, u32>,
    /// How many calls were announced (the latest is the last ordinal).
    calls: u32,
    /// A finish reason came.
    finished: bool,
    /// The calls announced without their name (some hosts send it in a later entry), by
    /// ordinal, with their id and the argument bytes held until the name comes.
    unnamed: Vec<(u32, String, String)>,
}

impl ChatDecoder {
    /// The neutral index of a fragment that continues no call: never a call's ordinal.
    pub const NO_CALL: u32 = u32::MAX;

    pub fn new() -> ChatDecoder {
        ChatDecoder::default()
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
    /// One `tool_calls` entry; `finishing`: its chunk carries the finish reason.
    fn entry<'m>(
        &mut self,
        e: Entry<'m>,
        finishing: bool,
        out: &mut crate::Decoded<'m>,
    ) -> Result<(), TurnError> {
        let (name, arguments) = match e.function {
            Some(f) => (f.name, f.arguments),
            None => (None, None),
        };
        let id = e.id.as_ref().map(Str::as_str).filter(|id| !id.is_empty());
        let call = match id {
            Some(id) => match self.ids.get(id) {
                // The same id again: its call, wherever the entry says it is.
                Some(&ordinal) => Some(ordinal),
                None => {
                    let ordinal = self.calls;
                    self.calls += 1;
                    self.ids.insert(id.to_owned(), ordinal);
                    if let Some(at) = e.index {
                        self.held.insert(at, ordinal);
                    }
                    let Some(name) = name.filter(|n| !n.as_str().is_empty()) else {
                        // The name comes in a later entry: the call is held until then.
                        let held = arguments.map_or_else(String::new, |a| a.as_str().to_owned());
                        self.unnamed.push((ordinal, id.to_owned(), held));
                        return Ok(());
                    };
                    out.push(Event::CallStart {
                        index: ordinal,
                        call_id: Cow::Owned(id.to_owned()),
                        name: own(name),
                    });
                    // An announcement's empty arguments are no fragment.
                    if let Some(a) = arguments.filter(|a| !a.as_str().is_empty()) {
                        out.push(Event::ArgsDelta { index: ordinal, fragment: own(a) });
                    }
                    return Ok(());
                }
            },
            None => self.held_by(e.index),
        };
        if let (Some(ordinal), Some(name)) = (call, name.filter(|n| !n.as_str().is_empty())) {
            self.named(ordinal, name, out);
        }
        self.continuation(call, arguments.map_or(Cow::Borrowed(""), own), finishing, out);
        Ok(())
    }

    /// `name` came for `ordinal`: if the call was held without one, it is announced now,
    /// with the argument bytes held for it (a name on a named call's entry is a repeat).
    #[cold]
    fn named<'m>(&mut self, ordinal: u32, name: Str<'m>, out: &mut crate::Decoded<'m>) {
        let Some(at) = self.unnamed.iter().position(|u| u.0 == ordinal) else { return };
        let (index, id, held) = self.unnamed.remove(at);
        out.push(Event::CallStart { index, call_id: Cow::Owned(id), name: own(name) });
        if !held.is_empty() {
            out.push(Event::ArgsDelta { index, fragment: Cow::Owned(held) });
        }
    }

    /// The call an entry without an id continues: the one its index holds, or with no index
    /// the latest call (`None`: no call).
    #[inline]
    fn held_by(&self, index: Option<u32>) -> Option<u32> {
        match index {
            Some(at) => self.held.get(&at).copied(),
            None => self.calls.checked_sub(1),
        }
    }

    /// A later entry's fragment for `call` (`None`: the entry continues no call).
    #[inline]
    fn continuation<'m>(
        &mut self,
        call: Option<u32>,
        fragment: Cow<'m, str>,
        finishing: bool,
        out: &mut crate::Decoded<'m>,
    ) {
        match call {
            // A call repeated beside or after the finish reason, without argument bytes.
            Some(_) if fragment.is_empty() && (finishing || self.finished) => {}
            // A call whose name has not come yet holds its bytes.
            Some(index) if !self.unnamed.is_empty() && self.unnamed.iter().any(|u| u.0 == index) => {
                if let Some(u) = self.unnamed.iter_mut().find(|u| u.0 == index) {
                    u.2.push_str(&fragment);
                }
            }
            Some(index) => out.push(Event::ArgsDelta { index, fragment }),
            None => out.push(Event::ArgsDelta { index: ChatDecoder::NO_CALL, fragment }),
        }
    }
}

impl crate::SseDecoder for ChatDecoder {
    fn decode<'m>(
        &mut self,
        event: &'m SseEvent,
        scratch: &'m mut Vec<u8>,
        out: &mut crate::Decoded<'m>,
    ) -> Result<(), TurnError> {
        match deltas::decode(scratch, event) {
            Some(deltas::Piece::Text(text)) => {
                out.push(Event::TextDelta { text });
                return Ok(());
            }
            // An entry of index and arguments alone: as `entry` reads one.
            Some(deltas::Piece::Fragment { index, fragment }) => {
                let call = self.held_by(index);
                self.continuation(call, fragment, false, out);
                return Ok(());
            }
            None => {}
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
            let finishing = choice.finish_reason.is_some();
            let annotation = choice.delta.is_none() && choice.content_filter_results.is_some();
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
                for e in delta.tool_calls.into_iter().flatten() {
                    self.entry(e, finishing, out)?;
                    said = true;
                }
            }
            match choice.finish_reason {
                Some(r) => {
                    let reason = finish_reason(r.as_str())?;
                    if let Some((_, id, _)) = self.unnamed.first() {
                        return Err(malformed(format!(
                            "{EVENT}: choices[0].finish_reason: the call {id:?} never got its \
                             function.name (a call's name may come after its first entry, never after \
                             the finish)"
                        )));
                    }
                    // Some servers send a second finish chunk (with usage): one stop.
                    if !std::mem::replace(&mut self.finished, true) {
                        out.push(Event::Stop { reason });
                    }
                }
                // A chunk that carries nothing is a keep-alive; Azure's filter annotation
                // (filter results and no delta) is bookkeeping, as its prelude is.
                None if !said && !annotation => out.push(Event::Ping),
                None => {}
            }
        }
        Ok(())
    }
}

/// OpenAI Chat Completions in the [`crate::registry`], with the profiles of the servers that
/// speak it their own way (`scenario::PROFILES`).
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

    /// Every openai-chat profile of `scenario::PROFILES`, the plain one first: a run over all
    /// settings certifies each server's wire.
    fn quirk_profiles(&self) -> &'static [Quirks] {
        static PROFILES: std::sync::LazyLock<Vec<Quirks>> =
            std::sync::LazyLock::new(|| Dialect::OpenAiChat.profiles().map(|p| p.quirks).collect());
        &PROFILES
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
        if quirks.chat_content_filters {
            extra::content_filters(&mut wire);
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
        // Extras and Azure's filter chunks are inserted among the rendered chunks.
        if !turn.wire.is_plain() || quirks.chat_content_filters {
            return None;
        }
        let next = crate::next_sse(turn, neutral, self, quirks, ids)?;
        render_into(turn, neutral, quirks, ids, Out::framing(turn, neutral, 2, 300))
            .ok()?
            .framed(turn, next.as_ref())
    }

    /// One decoder for every profile: a client cannot know which server it reads, so the
    /// profile a stream was rendered in is never the decoder's to know.
    fn decoder(&self, _quirks: Quirks) -> Box<dyn crate::WireDecoder> {
        Box::new(crate::OverSse::new(ChatDecoder::new()))
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

    /// A replayed announcement, and an empty fragment after the finish reason: under the one
    /// rule neither is a fault in Chat.
    fn fault_lacked(&self, kind: &FaultKind) -> Option<&'static str> {
        match kind {
            FaultKind::ReplayAnnouncement { .. } => Some(REPLAY),
            FaultKind::FragmentAfterStop { fragment, .. } if fragment.is_empty() => Some(EMPTY_AFTER_STOP),
            _ => None,
        }
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
        wire.chat_prelude
            || wire.usage_without_choices
            || wire.done_without_finish
            || wire.hostile_index.is_some()
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
