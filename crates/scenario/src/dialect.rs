//! Dialects: the providers' streaming APIs a turn can be spoken in, and quirk profiles of
//! servers that speak one their own way. Vocabulary shared by every level: only the ids and
//! names live here; everything a dialect is (what it expresses, how it spells a stop reason,
//! its wire messages and framing) is its module in `toolcert-dialect`, found through that
//! crate's registry.

use std::fmt;
use std::str::FromStr;

use serde::{Deserialize, Serialize};

/// A provider's streaming API.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
pub enum Dialect {
    /// Anthropic Messages (`event: content_block_delta` ...).
    #[default]
    #[serde(rename = "anthropic")]
    Anthropic,
    /// OpenAI Chat Completions (`data:` chunks with `choices[].delta.tool_calls[]`).
    #[serde(rename = "openai-chat")]
    OpenAiChat,
    /// OpenAI Responses (`event: response.function_call_arguments.delta` ...).
    #[serde(rename = "openai-responses")]
    OpenAiResponses,
    /// AWS Bedrock ConverseStream (`application/vnd.amazon.eventstream`: binary messages
    /// with `:event-type` headers and JSON payloads, `contentBlockDelta` ...).
    #[serde(rename = "bedrock")]
    Bedrock,
}

impl Dialect {
    pub const ALL: [Dialect; 4] =
        [Dialect::Anthropic, Dialect::OpenAiChat, Dialect::OpenAiResponses, Dialect::Bedrock];

    /// The name used on the command line, in reports and in corpus paths.
    pub fn name(self) -> &'static str {
        match self {
            Dialect::Anthropic => "anthropic",
            Dialect::OpenAiChat => "openai-chat",
            Dialect::OpenAiResponses => "openai-responses",
            Dialect::Bedrock => "bedrock",
        }
    }
}

impl fmt::Display for Dialect {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// Names as a sentence lists them: `a, b, c or d`.
pub fn or_list<const N: usize>(names: [&str; N]) -> String {
    match names.split_last() {
        Some((last, [])) => (*last).to_owned(),
        Some((last, rest)) => format!("{} or {last}", rest.join(", ")),
        None => String::new(),
    }
}

/// A dialect name that is not one of [`Dialect::ALL`].
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct UnknownDialect(pub String);

impl fmt::Display for UnknownDialect {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "unknown dialect `{}` (expected {})", self.0, or_list(Dialect::ALL.map(Dialect::name)))
    }
}

impl std::error::Error for UnknownDialect {}

impl FromStr for Dialect {
    type Err = UnknownDialect;

    fn from_str(s: &str) -> Result<Dialect, UnknownDialect> {
        Dialect::ALL.into_iter().find(|d| d.name() == s).ok_or_else(|| UnknownDialect(s.to_owned()))
    }
}

/// Quirk profiles of servers that speak a dialect their own way.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub struct Quirks {
    /// OpenAI-compatible servers that put `index: 0` on every tool-call entry and tell
    /// parallel calls apart only by id: a call's first entry carries its id, and an entry
    /// without an id belongs to the call announced most recently. Chat only.
    #[serde(default)]
    pub chat_index_zero: bool,
    /// OpenAI-compatible servers that repeat a call's `id`, `type` and `function.name` on
    /// every tool-call entry of its index, not only on the first. The repeats name the same
    /// call again; an accumulator that concatenates every string field it receives turns
    /// `get_weather` into `get_weatherget_weather`. Chat only.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub chat_repeat_fields: bool,
}

impl Quirks {
    /// No quirk: the dialect as its provider speaks it.
    pub const PLAIN: Quirks = Quirks { chat_index_zero: false, chat_repeat_fields: false };
    /// The profile that reuses index 0 for every parallel call.
    pub const INDEX_ZERO: Quirks = Quirks { chat_index_zero: true, chat_repeat_fields: false };
    /// The profile that repeats id, type and name on every entry.
    pub const REPEAT_FIELDS: Quirks = Quirks { chat_index_zero: false, chat_repeat_fields: true };
}
