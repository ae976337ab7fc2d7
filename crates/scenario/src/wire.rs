//! Dialect events a turn's wire rendering sends on purpose: units that carry no neutral
//! event, or carry a call another way, which some servers send and a client must read right
//! (docs/SPEC.md §8, "Dialect events"). Each option is read only by the dialect it names;
//! the events level and the other dialects ignore it, so every value renders everywhere.

use serde::{Deserialize, Serialize};

/// The dialect events of one turn. The default sends none of them.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct WireEvents {
    /// OpenAI Responses: the calls (numbers among the turn's calls, modulo their count)
    /// announced only by their `response.output_item.done`, which carries the whole item:
    /// no `output_item.added`, no argument deltas, no `function_call_arguments.done`. A call
    /// whose terminal is not delivered, or whose stream has anything else (a ping, a fault)
    /// between its announcement and its terminal, is sent the usual way.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub item_done_only: Vec<u16>,
    /// OpenAI Responses: which `done` event repeats a `DoneMismatch` fault's arguments; the
    /// other repeats the deltas.
    #[serde(default, skip_serializing_if = "MismatchIn::is_both")]
    pub mismatch_in: MismatchIn,
    /// Anthropic and Bedrock: units of a type the client was not written for, inserted once
    /// this many neutral events are delivered (clamped to the body, before the stop).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub unknown: Vec<Unknown>,
    /// OpenAI Chat: the prelude chunk some hosts send first (Azure OpenAI): `choices: []`
    /// and `prompt_filter_results`, no id, model or object.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub chat_prelude: bool,
    /// OpenAI Chat: the closing usage chunk has no `choices` key at all (some
    /// OpenAI-compatible servers), instead of `choices: []`.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub usage_without_choices: bool,
    /// OpenAI Chat: `data: [DONE]` closes the stream even though no finish reason came
    /// (abandoned or errored turns; a server that closes every stream so). With nothing
    /// delivered before it, `[DONE]` is the whole stream.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub done_without_finish: bool,
    /// Gemini (Vertex's streamed arguments): how each call ends, by its number among the
    /// turn's calls (modulo the list's length). A form the call cannot take (no piece left to
    /// carry it, the stop not right after the call) is sent as an empty `functionCall`.
    /// Empty: the renderer varies the form from turn to turn.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub gemini_ends: Vec<GeminiEnd>,
    /// Anthropic, Responses and Bedrock: a second generation spliced into the stream (a proxy
    /// that retried upstream and kept the first attempt's bytes): the stream's start event
    /// (`message_start`, `response.created`, `messageStart`) again, for another message, once this many
    /// neutral events are complete. No server means it: a fault, `malformed` (docs/SPEC.md
    /// §3), whose calls must not be dispatched.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub spliced: Option<u32>,
    /// A hostile upstream's index: once this many neutral events are complete, a copy of the
    /// next event that carries an argument fragment, its call's index (Chat's `index`,
    /// Anthropic's `index`, Responses' `output_index`) replaced by a value no index can be:
    /// `"__proto__"`, `-1`, `0.5`, `null`, `"0"`. A client that indexes a plain object or
    /// array with it pollutes a prototype. No server means it: a fault, `malformed`
    /// (docs/SPEC.md §3).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub hostile_index: Option<HostileIndex>,
}

/// Where a hostile index comes and what it is ([`WireEvents::hostile_index`]).
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct HostileIndex {
    /// Sent once this many neutral events are complete.
    pub after: u32,
    /// The index as written on the wire: a JSON value, verbatim (`"__proto__"`, `-1`).
    pub value: String,
}

/// How a Gemini call streamed in pieces ends (the three forms observed on Vertex).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum GeminiEnd {
    /// `{"functionCall":{}}`.
    Empty,
    /// The call's last piece has no `willContinue` at either level.
    LastPiece,
    /// The candidate's `finishReason` ends it.
    Finish,
}

impl WireEvents {
    pub fn is_plain(&self) -> bool {
        *self == WireEvents::default()
    }
}

/// Which of a Responses call's two `done` events carries a mismatch fault's arguments.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum MismatchIn {
    /// `function_call_arguments.done` and `output_item.done` both.
    #[default]
    Both,
    /// Only `function_call_arguments.done`; `output_item.done` repeats the deltas.
    ArgumentsDone,
    /// Only `output_item.done`'s item; `function_call_arguments.done` repeats the deltas.
    ItemDone,
}

impl MismatchIn {
    pub fn is_both(&self) -> bool {
        *self == MismatchIn::Both
    }
}

/// One unit of a type the client does not know (Anthropic, Bedrock).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Unknown {
    pub kind: UnknownKind,
    /// Inserted once this many neutral events are delivered.
    pub at: u32,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum UnknownKind {
    /// A delta the client does not know, on the block open there: Anthropic's
    /// `content_block_delta` of a `citations_delta` on a text block, a type added later on a
    /// tool block (with no block open it is sent as an unknown event instead); Bedrock's
    /// `contentBlockDelta` with a `citation` member on a text block, a member added later on
    /// another (with no block open, on the next block: crates/dialect/src/bedrock.rs).
    Delta,
    /// An event type the API added after the client was written.
    Event,
}
