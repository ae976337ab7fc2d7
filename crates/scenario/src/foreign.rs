//! Foreign blocks: what a turn carries besides text and the client's JSON tool calls.
//!
//! Every dialect streams blocks a client must never dispatch, and whose bytes must never join
//! a call's argument buffer or the text the user reads: the model's thinking, a tool the
//! server runs itself and its result, a refusal, and (Responses) a custom tool's freeform
//! input. The scenario says which kind a block is and what it carries; each dialect spells
//! only the kinds it has (its `DialectDef::speaks_foreign` in `toolcert-dialect`), and the oracle holds every subject to
//! ACC-FOREIGN (docs/SPEC.md §6).

use serde::{Deserialize, Serialize};

/// A foreign block as the model (or the server) wrote it.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct ForeignBlock {
    pub kind: ForeignKind,
    /// The positional key its events carry (Anthropic content index, Responses output index).
    /// OpenAI Chat names none: its foreign deltas ride on the choice's delta.
    pub index: u32,
    /// The id it carries where its kind has one: a server tool use's id (its result block
    /// names the same id), a web search call's item id, a custom tool call's call id.
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub id: String,
    /// The tool it names where it has one (`web_search`, the custom tool's name). For
    /// [`ForeignKind::Thinking`] in OpenAI Chat, `reasoning` picks the `delta.reasoning`
    /// field (OpenRouter, Ollama) over `delta.reasoning_content` (DeepSeek, vLLM).
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub name: String,
    /// What it carries: thinking text, a server tool's JSON input, a result's title, a
    /// refusal, a search query, a custom tool's freeform input. Never JSON by necessity.
    pub text: String,
    /// Split points of `text` into deltas, for the kinds that stream
    /// ([`ForeignKind::streams`]); the others carry `text` whole in their first event.
    #[serde(default)]
    pub splits: Vec<usize>,
}

/// The kinds of foreign block, named for what they are, spelled by each dialect its own way.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ForeignKind {
    /// The model's reasoning. Anthropic: a `thinking` block (`thinking_delta`s, then a
    /// `signature_delta`); OpenAI Chat: `delta.reasoning_content` (or `delta.reasoning`);
    /// Responses: a `reasoning` item's summary (`response.reasoning_summary_text.delta`).
    Thinking,
    /// Reasoning the client only gets encrypted. Anthropic: a `redacted_thinking` block
    /// (`data` in its start); Responses: a `reasoning` item with `encrypted_content`.
    RedactedThinking,
    /// A tool the server runs itself. Anthropic: a `server_tool_use` block, which streams
    /// `input_json_delta`s exactly as a client call does.
    ServerToolUse,
    /// The result of a server tool. Anthropic: a `web_search_tool_result` block (its text is
    /// its one result's title).
    ServerToolResult,
    /// Responses: a `web_search_call` item (the server searches; its text is the query).
    WebSearchCall,
    /// The model declines. OpenAI Chat: `delta.refusal`; Responses: a message item's
    /// `refusal` content part (`response.refusal.delta`).
    Refusal,
    /// Responses: a `custom_tool_call` item, whose input is freeform text
    /// (`response.custom_tool_call_input.delta`), not JSON. The client does run custom tools,
    /// but the observation reports JSON calls only: its input must never be parsed as JSON,
    /// join a function call's buffer or the text, so it is held to the foreign rule
    /// (docs/SPEC.md, ACC-FOREIGN).
    CustomToolCall,
}

impl ForeignKind {
    pub const ALL: [ForeignKind; 7] = [
        ForeignKind::Thinking,
        ForeignKind::RedactedThinking,
        ForeignKind::ServerToolUse,
        ForeignKind::ServerToolResult,
        ForeignKind::WebSearchCall,
        ForeignKind::Refusal,
        ForeignKind::CustomToolCall,
    ];

    /// The name reports, coverage and violation kinds use.
    pub fn name(self) -> &'static str {
        match self {
            ForeignKind::Thinking => "thinking",
            ForeignKind::RedactedThinking => "redacted_thinking",
            ForeignKind::ServerToolUse => "server_tool_use",
            ForeignKind::ServerToolResult => "server_tool_result",
            ForeignKind::WebSearchCall => "web_search_call",
            ForeignKind::Refusal => "refusal",
            ForeignKind::CustomToolCall => "custom_tool_call",
        }
    }

    /// Whether its content streams as deltas; the others carry it whole in their start.
    pub fn streams(self) -> bool {
        !matches!(
            self,
            ForeignKind::RedactedThinking | ForeignKind::ServerToolResult | ForeignKind::WebSearchCall
        )
    }

    /// Whether its blocks carry an id (`ForeignBlock::id`); the others' ids are not sent.
    pub fn carries_id(self) -> bool {
        matches!(
            self,
            ForeignKind::ServerToolUse
                | ForeignKind::ServerToolResult
                | ForeignKind::WebSearchCall
                | ForeignKind::CustomToolCall
        )
    }

    /// Whether its blocks name a tool (`ForeignKind::name`); the others' names are not sent.
    pub fn carries_name(self) -> bool {
        matches!(self, ForeignKind::ServerToolUse | ForeignKind::CustomToolCall)
    }
}
