//! The scenario model: the ground truth of a case.
//!
//! A [`Case`] says what the model wrote (the [`Turn`]s, their text and [`Call`]s, the exact
//! argument bytes) and how each stream was delivered (where the fragments split, how the
//! calls interleave, how the turn ended, which [`Fault`]s the stream carries). It is the
//! first stage of the data flow: generators and named cases build scenarios, the renderer
//! turns them into events, and the oracle derives the expected observation from them alone.
//!
//! Every field is plain data with no invariants a constructor must enforce: positions are
//! clamped and out-of-range references ignored where they are used, so any value (including
//! one made by `arbitrary` or read from a file) renders to some stream.

use serde::{Deserialize, Serialize};

pub mod build;
mod dialect;
mod wire;
pub use dialect::{Dialect, Quirks, ServerProfile, UnknownDialect, PROFILES};
pub use foreign::{ForeignBlock, ForeignKind};
pub use wire::{GeminiEnd, HostileIndex, MismatchIn, Unknown, UnknownKind, WireEvents};

mod foreign;

/// One certification case: one or more streams, each fed to its own accumulator made by the
/// same factory.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Case {
    /// A stable, human-readable id (`named/split/inside-unicode-escape`, `gen/1/42`).
    pub name: String,
    pub streams: Vec<Turn>,
    /// How the streams are delivered relative to each other.
    #[serde(default)]
    pub schedule: StreamSchedule,
}

impl Case {
    /// A case of one stream.
    pub fn single(name: impl Into<String>, turn: Turn) -> Case {
        Case { name: name.into(), streams: vec![turn], schedule: StreamSchedule::Sequential }
    }

    /// Checks what deserialisation cannot: within one turn, every call has its own
    /// positional index and its own call id. The index is how the stream names a call and
    /// the id how its outcome names it, so two calls sharing either are not a turn a model
    /// can send (and no outcome could say which of them it is for); an index announced twice
    /// is a stream fault, and a scenario says so with a [`FaultKind::ReplayAnnouncement`]
    /// instead. The generators never break this; hand-written or fuzzed scenario values
    /// can, and are refused here.
    pub fn validate(&self) -> Result<(), String> {
        if self.streams.is_empty() {
            return Err("the case has no streams (\"streams\": []): there is nothing to feed".into());
        }
        for (s, turn) in self.streams.iter().enumerate() {
            let mut ids: Vec<&str> = Vec::new();
            for call in turn.calls() {
                if ids.contains(&call.call_id.as_str()) {
                    return Err(format!(
                        "stream {s}: two calls share the call id {} (ids name the calls' outcomes)",
                        call.call_id
                    ));
                }
                ids.push(&call.call_id);
            }
            let mut seen: Vec<u32> = Vec::new();
            for call in turn.calls() {
                if seen.contains(&call.index) {
                    return Err(format!(
                        "stream {s}: two calls share the positional index {} (the second is {}); \
                         a repeated announcement is written as a ReplayAnnouncement fault",
                        call.index, call.call_id
                    ));
                }
                seen.push(call.index);
            }
        }
        Ok(())
    }
}

/// How several streams of one case are delivered.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum StreamSchedule {
    /// Each stream runs to its end before the next one starts (successive turns).
    #[default]
    Sequential,
    /// All streams are open at once. Entry `k` names the stream (modulo the stream count)
    /// that delivers the next event; when the list runs out, the rest go round-robin.
    Concurrent(Vec<u16>),
}

/// One streamed response.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Turn {
    /// The tools offered in the request (their schemas drive the schema profile).
    #[serde(default)]
    pub tools: Vec<Tool>,
    pub blocks: Vec<Block>,
    /// How the blocks' pieces are laid out in the stream.
    #[serde(default)]
    pub shape: Shape,
    pub ending: Ending,
    #[serde(default)]
    pub faults: Vec<Fault>,
    /// Keep-alive events (`ping`) inserted before these body positions.
    #[serde(default)]
    pub pings: Vec<u32>,
    /// How the stream's bytes travel (bytes level only).
    #[serde(default, skip_serializing_if = "Transport::is_plain")]
    pub transport: Transport,
    /// Dialect events the wire rendering sends on purpose (wire and bytes levels only).
    #[serde(default, skip_serializing_if = "WireEvents::is_plain")]
    pub wire: WireEvents,
}

/// How a stream's SSE bytes are framed and cut into transport chunks (the bytes level).
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Transport {
    #[serde(default)]
    pub line_end: LineEnd,
    /// Where one transport chunk ends and the next begins, aimed at places of the SSE byte
    /// stream (resolved against the bytes when they are rendered). No cuts: one chunk.
    #[serde(default)]
    pub cuts: Vec<Cut>,
    /// SSE comment lines (`: keep-alive`) inserted before these SSE event positions.
    #[serde(default)]
    pub comments: Vec<u32>,
    /// SSE events (by position) whose JSON data is pretty-printed over several `data:` lines.
    #[serde(default)]
    pub multiline: Vec<u32>,
    /// When the stream is abandoned: the connection drops inside the SSE event the provider
    /// would have sent next (its stop), after some of its bytes. The SSE rules dispatch an
    /// event only at its blank line, so a correct decoder never acts on this one; the tail
    /// is resolved against that event's bytes and never reaches its blank line.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tail: Option<Tail>,
    /// A binary-framed dialect only (`toolcert_dialect::DialectDef::binary`): one message sent with a wrong
    /// checksum or length, which a subject must refuse (docs/SPEC.md, BYTES-CHECKSUM).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub corrupt: Option<Corrupt>,
}

/// One corrupted message of a binary-framed stream: the message that completes neutral
/// event `after + 1` (the last message when there is none), damaged as `what` says.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Corrupt {
    pub after: u32,
    pub what: CorruptWhat,
}

/// How the message is damaged; every kind is a framing error a decoder sees in the
/// message's own bytes.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum CorruptWhat {
    /// A bit of the prelude's CRC flipped (the lengths read as they are).
    PreludeCrc,
    /// A bit of the message CRC flipped (the payload intact and readable).
    MessageCrc,
    /// A byte of the payload changed, the CRCs as the undamaged message had them.
    Payload,
    /// The total length one more than the message has, the prelude CRC recomputed for it.
    Length,
}

impl CorruptWhat {
    pub const ALL: [CorruptWhat; 4] =
        [CorruptWhat::PreludeCrc, CorruptWhat::MessageCrc, CorruptWhat::Payload, CorruptWhat::Length];
}

/// Where a stream cut inside an event stops: `aim` picks the kind of place in the SSE
/// bytes of the undelivered event, `pick` which one (modulo their number).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Tail {
    pub aim: TailAim,
    #[serde(default)]
    pub pick: u32,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum TailAim {
    /// Every line of the event but the blank line that would dispatch it.
    BeforeBlankLine,
    /// Inside a line (the `event:` name or the JSON data), not at a line's start.
    MidLine,
    /// Inside the `data:` field name of the data line, or right after its colon.
    InsideDataPrefix,
    /// Between the `\r` and the `\n` of a CRLF line end (a CRLF stream), the `\n` unsent.
    BetweenCrLf,
}

impl TailAim {
    pub const ALL: [TailAim; 4] =
        [TailAim::BeforeBlankLine, TailAim::MidLine, TailAim::InsideDataPrefix, TailAim::BetweenCrLf];
}

impl Transport {
    pub fn is_plain(&self) -> bool {
        *self == Transport::default()
    }
}

/// One transport cut, aimed at a kind of place in the SSE bytes; `pick` chooses among the
/// places of that kind (modulo their number). Where the bytes have no such place, the cut
/// falls at `pick` modulo the length.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Cut {
    pub aim: CutAim,
    pub pick: u32,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum CutAim {
    /// Any byte offset.
    Anywhere,
    /// Inside a multi-byte UTF-8 character.
    InsideChar,
    /// Inside a `data:` field name or right after its colon.
    InsideDataPrefix,
    /// Between the `\r` and the `\n` of a CRLF line end.
    BetweenCrLf,
    /// Every `pick % 16 + 1` bytes from offset `pick / 16`: many small chunks.
    Every,
}

/// SSE line ends (all three are legal).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum LineEnd {
    #[default]
    Lf,
    CrLf,
    Cr,
}

/// A tool offered to the model.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Tool {
    pub name: String,
    /// The JSON Schema of its input, when the case exercises the schema profile. Shared:
    /// every generated case of a run offers the same few tools.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub schema: Option<std::sync::Arc<serde_json::Value>>,
}

/// One block of a turn, in the order the model wrote them.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Block {
    Text(TextBlock),
    Call(Call),
    /// A block the client never dispatches as a tool call and whose content is neither
    /// text nor a call's arguments (see [`ForeignKind`]).
    Foreign(ForeignBlock),
}

/// Prose the user reads as it streams.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct TextBlock {
    pub text: String,
    /// Split points: byte offsets where a text delta ends (see [`fragments`]).
    #[serde(default)]
    pub splits: Vec<usize>,
}

/// A tool call as the model wrote it.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Call {
    /// The positional key every fragment carries.
    pub index: u32,
    /// The stable id the announcement carries once.
    pub call_id: String,
    pub name: String,
    /// The exact argument text the model wrote, which may be invalid JSON on purpose.
    pub arguments: String,
    /// Split points: byte offsets where an argument fragment ends (see [`fragments`]).
    #[serde(default)]
    pub splits: Vec<usize>,
}

/// How a turn's pieces are placed in the stream.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Shape {
    /// Anthropic and Responses: blocks one after another, each call closed by its own
    /// terminal event; the message-level stop reason comes after the blocks.
    #[default]
    PerCall,
    /// OpenAI Chat: pieces of several blocks interleave; no call has a terminal event of its
    /// own, and the finish reason is the only terminal.
    Interleaved(Interleave),
}

/// The order in which an interleaved turn's pieces are sent.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Interleave {
    /// Entry `k` names the block (by position, modulo the block count) whose next piece is
    /// sent; an exhausted block is skipped. Pieces left when the list runs out follow in
    /// block order. Each block's own pieces always keep their order.
    #[serde(default)]
    pub order: Vec<u16>,
    /// `joins[k]`: piece `k` (in sending order) rides in the same chunk as piece `k - 1`.
    /// Only the wire level sees chunks; the events level sends one event per piece.
    #[serde(default)]
    pub joins: Vec<bool>,
}

/// How a turn ends.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Ending {
    /// The provider sends its message-level stop reason. Whether the turn is complete or
    /// truncated follows from the reason ([`StopReason::is_truncating`]).
    Stop(StopReason),
    /// No terminal event: the stream ends after `after` body events.
    Abandoned { after: u32, end: StreamEnd },
    /// An `error` event after `after` body events, then the stream closes.
    Errored { after: u32, message: String },
}

/// The four kinds of ending (docs/SPEC.md §2).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum EndingKind {
    Complete,
    Truncated,
    Abandoned,
    Errored,
}

impl Ending {
    pub fn kind(&self) -> EndingKind {
        match self {
            Ending::Stop(r) if r.is_truncating() => EndingKind::Truncated,
            Ending::Stop(_) => EndingKind::Complete,
            Ending::Abandoned { .. } => EndingKind::Abandoned,
            Ending::Errored { .. } => EndingKind::Errored,
        }
    }
}

/// How the transport under a stream closed, as the accumulator is told at `finish`.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum StreamEnd {
    /// The server closed the stream normally.
    #[default]
    Eof,
    /// The connection dropped.
    Disconnect,
    /// The client cancelled (user pressed stop, request context cancelled).
    Cancel,
}

/// What a stop reason means for the turn, whatever a dialect calls it: the ground truth the
/// oracle judges by (docs/SPEC.md §2). Each dialect spells a meaning with its own word
/// (`DialectDef::word` in toolcert-dialect).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum StopMeaning {
    /// The model finished its answer.
    Complete,
    /// The model stopped to have its tool calls run.
    ToolUse,
    /// Generation reached one of the caller's stop sequences.
    StopSequence,
    /// The output hit its token limit.
    Truncated,
    /// The model or a guardrail refused to go on.
    Refused,
    /// A content filter cut the output.
    Filtered,
}

impl StopMeaning {
    pub const ALL: [StopMeaning; 6] = [
        StopMeaning::Complete,
        StopMeaning::ToolUse,
        StopMeaning::StopSequence,
        StopMeaning::Truncated,
        StopMeaning::Refused,
        StopMeaning::Filtered,
    ];

    /// Whether the output was cut: nothing of such a turn may be dispatched.
    pub fn is_truncating(self) -> bool {
        matches!(self, StopMeaning::Truncated | StopMeaning::Refused | StopMeaning::Filtered)
    }
}

/// A message-level stop reason: one provider's word for a [`StopMeaning`]. The words are
/// the vocabulary cases, reports and the subprocess protocol carry (`end_turn`, `stop`,
/// `completed`…); what a word means is [`StopReason::meaning`], and which word a dialect
/// sends for a meaning is the dialect's choice.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum StopReason {
    // Anthropic `stop_reason`.
    ToolUse,
    EndTurn,
    StopSequence,
    MaxTokens,
    Refusal,
    // OpenAI Chat `finish_reason`.
    ToolCalls,
    Stop,
    Length,
    ContentFilter,
    // OpenAI Responses terminal events.
    Completed,
    Incomplete,
}

impl StopReason {
    pub const ALL: [StopReason; 11] = [
        StopReason::ToolUse,
        StopReason::EndTurn,
        StopReason::StopSequence,
        StopReason::MaxTokens,
        StopReason::Refusal,
        StopReason::ToolCalls,
        StopReason::Stop,
        StopReason::Length,
        StopReason::ContentFilter,
        StopReason::Completed,
        StopReason::Incomplete,
    ];

    /// What the word means.
    pub fn meaning(self) -> StopMeaning {
        use StopReason::*;
        match self {
            EndTurn | Stop | Completed => StopMeaning::Complete,
            ToolUse | ToolCalls => StopMeaning::ToolUse,
            StopSequence => StopMeaning::StopSequence,
            MaxTokens | Length | Incomplete => StopMeaning::Truncated,
            Refusal => StopMeaning::Refused,
            ContentFilter => StopMeaning::Filtered,
        }
    }

    /// Reasons that say the output was cut: nothing of such a turn may be dispatched.
    pub fn is_truncating(self) -> bool {
        self.meaning().is_truncating()
    }

    /// The word as it is written (in cases, reports, the protocol, and on the wire of the
    /// dialects whose word it is).
    pub fn wire_name(self) -> &'static str {
        match self {
            StopReason::ToolUse => "tool_use",
            StopReason::EndTurn => "end_turn",
            StopReason::StopSequence => "stop_sequence",
            StopReason::MaxTokens => "max_tokens",
            StopReason::Refusal => "refusal",
            StopReason::ToolCalls => "tool_calls",
            StopReason::Stop => "stop",
            StopReason::Length => "length",
            StopReason::ContentFilter => "content_filter",
            StopReason::Completed => "completed",
            StopReason::Incomplete => "incomplete",
        }
    }
}

/// A defect of the stream itself. Any delivered fault fails the turn with a protocol error.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Fault {
    pub kind: FaultKind,
    /// The body position it is inserted before, clamped to where the fault makes sense
    /// (after the announcement it replays, after the terminal event it follows).
    pub at: u32,
}

#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum FaultKind {
    /// The announcement of call number `call` (among the turn's calls, modulo their count)
    /// is sent again, as a reconnect or a proxy replays it.
    ReplayAnnouncement { call: u16 },
    /// A fragment for a positional index no announcement used. `missing_index` is read from
    /// older files and changes nothing: it once sent the OpenAI Chat entry without `index`,
    /// which some servers do for every entry (docs/SPEC.md, "Server profiles"), so such an
    /// entry continues the latest call and is no fault; every dialect sends the fragment at
    /// an index no announcement used.
    UnannouncedFragment {
        #[serde(default, skip_serializing_if = "std::ops::Not::not")]
        missing_index: bool,
        fragment: String,
    },
    /// A fragment for call number `call` after its terminal event.
    FragmentAfterStop { call: u16, fragment: String },
    /// The terminal event of call number `call` repeats its arguments (as Responses'
    /// `function_call_arguments.done` does) but says `arguments` instead of what the
    /// fragments carried. Only the per-call shape has such a terminal.
    DoneMismatch { call: u16, arguments: String },
}

/// The kinds of fault, for coverage counts and reports.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum FaultClass {
    ReplayAnnouncement,
    UnannouncedFragment,
    FragmentAfterStop,
    DoneMismatch,
}

impl FaultKind {
    pub fn class(&self) -> FaultClass {
        match self {
            FaultKind::ReplayAnnouncement { .. } => FaultClass::ReplayAnnouncement,
            FaultKind::UnannouncedFragment { .. } => FaultClass::UnannouncedFragment,
            FaultKind::FragmentAfterStop { .. } => FaultClass::FragmentAfterStop,
            FaultKind::DoneMismatch { .. } => FaultClass::DoneMismatch,
        }
    }
}

/// The fragments a text or argument string is sent as, given its split points.
///
/// The boundaries are `0`, each split point (sorted, clamped to the length and moved back to
/// a character boundary) and the length. Repeated split points give empty fragments. An empty
/// string with no split points is sent as no fragment at all. Split points already in that
/// form (as generated turns' are) are borrowed, not copied and sorted.
pub fn fragments<'a>(text: &'a str, splits: &'a [usize]) -> Fragments<'a> {
    let normal = splits.windows(2).all(|w| w[0] <= w[1])
        && splits.iter().all(|&s| s <= text.len() && text.is_char_boundary(s));
    let splits = if normal {
        std::borrow::Cow::Borrowed(splits)
    } else {
        std::borrow::Cow::Owned(normalized_splits(text, splits))
    };
    Fragments { text, splits, next: 0, start: 0, done: false }
}

/// Split points sorted, clamped to `text.len()` and moved back to character boundaries.
pub fn normalized_splits(text: &str, splits: &[usize]) -> Vec<usize> {
    let mut out: Vec<usize> = splits
        .iter()
        .map(|&s| {
            let mut s = s.min(text.len());
            while !text.is_char_boundary(s) {
                s -= 1;
            }
            s
        })
        .collect();
    out.sort_unstable();
    out
}

/// Iterator over `(byte_range, fragment)`; see [`fragments`].
pub struct Fragments<'a> {
    text: &'a str,
    splits: std::borrow::Cow<'a, [usize]>,
    next: usize,
    start: usize,
    done: bool,
}

impl<'a> Iterator for Fragments<'a> {
    type Item = (std::ops::Range<usize>, &'a str);

    fn next(&mut self) -> Option<Self::Item> {
        if self.done {
            return None;
        }
        if self.text.is_empty() && self.splits.is_empty() {
            self.done = true;
            return None;
        }
        let end = match self.splits.get(self.next) {
            Some(&s) => {
                self.next += 1;
                s
            }
            None => {
                self.done = true;
                self.text.len()
            }
        };
        let start = self.start;
        self.start = end;
        Some((start..end, &self.text[start..end]))
    }
}

impl Turn {
    /// The block position of call number `call` (among the turn's calls, modulo their
    /// count): the call a fault names. The one placement rule the renderer and the oracle
    /// both follow; `None` for a turn without calls.
    pub fn fault_call_block(&self, call: u16) -> Option<u32> {
        let count = self.calls().count();
        if count == 0 {
            return None;
        }
        let nth = call as usize % count;
        let mut calls = self.blocks.iter().enumerate().filter(|(_, b)| matches!(b, Block::Call(_)));
        calls.nth(nth).map(|(i, _)| i as u32)
    }

    /// The turn's calls in block order.
    pub fn calls(&self) -> impl Iterator<Item = &Call> {
        self.blocks.iter().filter_map(|b| match b {
            Block::Call(c) => Some(c),
            Block::Text(_) | Block::Foreign(_) => None,
        })
    }

    /// The turn's foreign blocks in block order.
    pub fn foreign(&self) -> impl Iterator<Item = &ForeignBlock> {
        self.blocks.iter().filter_map(|b| match b {
            Block::Foreign(f) => Some(f),
            _ => None,
        })
    }

    /// The schema of the named tool, if the request offered one.
    pub fn schema_of(&self, name: &str) -> Option<&serde_json::Value> {
        self.tools.iter().find(|t| t.name == name).and_then(|t| t.schema.as_deref())
    }
}

/// A defect that exists only below the events level: one wire event that no neutral event
/// describes. Corpus cases carry it (`toolcert_gen::named::defects`), so that a replay shows
/// a subject the streams a decoder must refuse; `toolcert_dialect::defect` writes it.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum WireDefect {
    /// After the first event that carries an argument fragment, an event of the same name
    /// whose data is not JSON (`{not json`): a `malformed` turn.
    NotJson,
    /// After the first event that carries an argument fragment, a copy of it with the
    /// fragment a number (`"partial_json": 42`, `"arguments": 42`, `"delta": 42`): a known
    /// event with a field of the wrong type, a `malformed` turn.
    WrongType,
    /// OpenAI Chat only: after the first call's announcement, an entry at its index with a
    /// new id and no name. A new id starts a new call, at an occupied index too (some
    /// servers send index 0 for every call), and the entries after it at that index are its;
    /// its name may come late (some hosts send it in a later entry), but this one's never
    /// comes before the finish reason: a `malformed` turn.
    NamelessNewId,
}

#[cfg(test)]
mod tests {
    use super::*;

    fn frags(text: &str, splits: &[usize]) -> Vec<&'static str> {
        fragments(text, splits).map(|(_, f)| &*Box::leak(f.to_owned().into_boxed_str())).collect()
    }

    #[test]
    fn fragments_cover_the_text_in_order() {
        assert_eq!(frags("abcdef", &[2, 4]), ["ab", "cd", "ef"]);
        assert_eq!(frags("abcdef", &[4, 2]), ["ab", "cd", "ef"]);
        assert_eq!(frags("abc", &[]), ["abc"]);
    }

    #[test]
    fn repeated_and_edge_splits_give_empty_fragments() {
        assert_eq!(frags("ab", &[0, 1, 1, 2]), ["", "a", "", "b", ""]);
        assert_eq!(frags("", &[0]), ["", ""]);
        assert!(frags("", &[]).is_empty());
    }

    #[test]
    fn splits_move_back_to_char_boundaries() {
        // é is two bytes; a split at 2 lands inside it and moves back to 1.
        assert_eq!(frags("Mé", &[2]), ["M", "é"]);
        assert_eq!(frags("ab", &[99]), ["ab", ""]);
    }

    #[test]
    fn truncating_reasons_are_the_cut_ones() {
        let cut: Vec<_> = StopReason::ALL.iter().filter(|r| r.is_truncating()).collect();
        assert_eq!(cut.len(), 5);
        assert_eq!(Ending::Stop(StopReason::Length).kind(), EndingKind::Truncated);
        assert_eq!(Ending::Stop(StopReason::ToolCalls).kind(), EndingKind::Complete);
    }
}
