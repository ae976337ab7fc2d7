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
    /// Google Gemini `streamGenerateContent` (`alt=sse`: unnamed `data:` chunks of
    /// `candidates[0].content.parts[]`, a call a `functionCall` part with an `args` object,
    /// or, with Vertex's `streamFunctionCallArguments`, `partialArgs` by JSON path).
    #[serde(rename = "gemini")]
    Gemini,
}

impl Dialect {
    pub const ALL: [Dialect; 5] = [
        Dialect::Anthropic,
        Dialect::OpenAiChat,
        Dialect::OpenAiResponses,
        Dialect::Bedrock,
        Dialect::Gemini,
    ];

    /// The name used on the command line, in reports and in corpus paths.
    pub fn name(self) -> &'static str {
        match self {
            Dialect::Anthropic => "anthropic",
            Dialect::OpenAiChat => "openai-chat",
            Dialect::OpenAiResponses => "openai-responses",
            Dialect::Bedrock => "bedrock",
            Dialect::Gemini => "gemini",
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

/// The wire behaviours of the servers that speak a dialect their own way: what a
/// [`ServerProfile`] sends beyond its provider's own stream. Each flag is one observed shape;
/// a profile is a set of them. The renderers send them; a client cannot know which server it
/// reads, so the decoders read every profile of a dialect alike (docs/SPEC.md, "Server
/// profiles").
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
    /// The call's `id` (not its name) repeated on every entry (LiteLLM's proxy). Chat only.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub chat_repeat_id: bool,
    /// Continuation entries carry `"id": ""` and `"name": ""` (DeepSeek, DashScope, GLM):
    /// an empty id is no id, never a new call. Chat only.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub chat_empty_continuations: bool,
    /// Tool-call entries without `index` (Mistral, Gemini's OpenAI-compatible endpoint):
    /// calls are told apart by id, and an entry without an id continues the latest call.
    /// Chat only.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub chat_no_index: bool,
    /// A call sent whole: its id, name and every argument byte in one entry (Groq,
    /// Mistral, Ollama). Chat only.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub chat_whole_calls: bool,
    /// Call indices that are not list positions: the first call at index 1, and sparse
    /// (gateways in front of Anthropic, where the index is the content block's). Chat only.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub chat_sparse_index: bool,
    /// Two entries with one index in one chunk (vLLM's speculative decoding). Chat only.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub chat_split_entries: bool,
    /// The finish chunk repeats `tool_calls` (each call's id and name, `arguments: ""`)
    /// beside `finish_reason`, and a second `finish_reason` chunk (carrying usage) follows
    /// (OpenRouter, vLLM). Chat only.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub chat_repeat_on_finish: bool,
    /// Azure OpenAI's content-filter fields: a first chunk with `prompt_filter_results` and
    /// no choice, and `content_filter_results` on every choice after it. Chat only.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub chat_content_filters: bool,
    /// A call's first entry carries its id, type and first argument bytes but no
    /// `function.name`; the name comes in its next entry (some OpenAI-compatible hosts). A
    /// reader holds the call until its name arrives. Chat only.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub chat_late_name: bool,
    /// No argument deltas: a call's arguments come only in `function_call_arguments.done`
    /// (LM Studio). Responses only.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub responses_done_only: bool,
    /// `item_id` changes on every event while `output_index` stays (a GitHub Copilot
    /// gateway): calls are keyed by `output_index`. Responses only.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub responses_rotating_item_id: bool,
    /// Hosted-tool items (`tool_search_call`) whose `arguments` is a JSON object, beside the
    /// client's function calls; never the client's to run. Responses only.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub responses_hosted_items: bool,
    /// A `tool_use` whose `input` arrives whole in `content_block_start`, with no deltas.
    /// Anthropic only.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub anthropic_input_in_start: bool,
    /// Complete `tool_use` blocks already in `message_start` (programmatic tool calling).
    /// Anthropic only.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub anthropic_content_in_start: bool,
    /// Vertex AI's `streamFunctionCallArguments`: a call starts with its name and
    /// `willContinue`, its arguments follow as `partialArgs` (typed values at JSON paths,
    /// strings in pieces appended per path), and it ends with an empty `functionCall`, a
    /// piece without `willContinue`, or the end of the candidate. Gemini only.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub gemini_partial_args: bool,
    /// A hostile upstream (a compromised gateway, a man-in-the-middle on a plain-HTTP local
    /// server, someone else's OpenAI-compatible server): beside the fields of every event and
    /// delta, members named `__proto__` and `constructor` whose values look like a call of
    /// the dialect, which a client that merges what it reads into its own objects turns into
    /// a forged call or a polluted prototype (docs/SPEC.md, "The hostile upstream"). An
    /// unknown member changes nothing: a client reads the stream as if it had not come. Every
    /// dialect.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub hostile: bool,
}

impl Quirks {
    /// No quirk: the dialect as its provider speaks it.
    pub const PLAIN: Quirks = Quirks {
        chat_index_zero: false,
        chat_repeat_fields: false,
        chat_repeat_id: false,
        chat_empty_continuations: false,
        chat_no_index: false,
        chat_whole_calls: false,
        chat_sparse_index: false,
        chat_split_entries: false,
        chat_repeat_on_finish: false,
        chat_content_filters: false,
        chat_late_name: false,
        responses_done_only: false,
        responses_rotating_item_id: false,
        responses_hosted_items: false,
        anthropic_input_in_start: false,
        anthropic_content_in_start: false,
        gemini_partial_args: false,
        hostile: false,
    };
    /// The profile that reuses index 0 for every parallel call.
    pub const INDEX_ZERO: Quirks = Quirks { chat_index_zero: true, ..Quirks::PLAIN };
    /// The profile that repeats id, type and name on every entry.
    pub const REPEAT_FIELDS: Quirks = Quirks { chat_repeat_fields: true, ..Quirks::PLAIN };

    /// Each flag with its name (the field's), in declaration order: what an adapter declares
    /// it reads (`quirks` in docs/PROTOCOL.md) and what a setting's name lists.
    pub fn flags(self) -> [(&'static str, bool); 18] {
        [
            ("chat_index_zero", self.chat_index_zero),
            ("chat_repeat_fields", self.chat_repeat_fields),
            ("chat_repeat_id", self.chat_repeat_id),
            ("chat_empty_continuations", self.chat_empty_continuations),
            ("chat_no_index", self.chat_no_index),
            ("chat_whole_calls", self.chat_whole_calls),
            ("chat_sparse_index", self.chat_sparse_index),
            ("chat_split_entries", self.chat_split_entries),
            ("chat_repeat_on_finish", self.chat_repeat_on_finish),
            ("chat_content_filters", self.chat_content_filters),
            ("chat_late_name", self.chat_late_name),
            ("responses_done_only", self.responses_done_only),
            ("responses_rotating_item_id", self.responses_rotating_item_id),
            ("responses_hosted_items", self.responses_hosted_items),
            ("anthropic_input_in_start", self.anthropic_input_in_start),
            ("anthropic_content_in_start", self.anthropic_content_in_start),
            ("gemini_partial_args", self.gemini_partial_args),
            ("hostile", self.hostile),
        ]
    }

    /// The names of the flags set.
    pub fn set(self) -> impl Iterator<Item = &'static str> {
        self.flags().into_iter().filter(|&(_, on)| on).map(|(name, _)| name)
    }

    /// These quirks with the flag named `name` set (`None`: no flag has that name).
    pub fn with(mut self, name: &str) -> Option<Quirks> {
        let flag = match name {
            "chat_index_zero" => &mut self.chat_index_zero,
            "chat_repeat_fields" => &mut self.chat_repeat_fields,
            "chat_repeat_id" => &mut self.chat_repeat_id,
            "chat_empty_continuations" => &mut self.chat_empty_continuations,
            "chat_no_index" => &mut self.chat_no_index,
            "chat_whole_calls" => &mut self.chat_whole_calls,
            "chat_sparse_index" => &mut self.chat_sparse_index,
            "chat_split_entries" => &mut self.chat_split_entries,
            "chat_repeat_on_finish" => &mut self.chat_repeat_on_finish,
            "chat_content_filters" => &mut self.chat_content_filters,
            "chat_late_name" => &mut self.chat_late_name,
            "responses_done_only" => &mut self.responses_done_only,
            "responses_rotating_item_id" => &mut self.responses_rotating_item_id,
            "responses_hosted_items" => &mut self.responses_hosted_items,
            "anthropic_input_in_start" => &mut self.anthropic_input_in_start,
            "anthropic_content_in_start" => &mut self.anthropic_content_in_start,
            "gemini_partial_args" => &mut self.gemini_partial_args,
            "hostile" => &mut self.hostile,
            _ => return None,
        };
        *flag = true;
        Some(self)
    }

    /// Whether no flag is set.
    pub fn is_plain(self) -> bool {
        self == Quirks::PLAIN
    }
}

/// One real server's wire behaviour in a dialect: which fields appear and when, how ids,
/// names and indices behave, the shape of its chunks and endings. Every generated and named
/// case is certified in every profile of its dialect (a setting per profile); a shape a
/// profile sends is never a fault, under that profile or any other of its dialect.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ServerProfile {
    pub dialect: Dialect,
    /// Its name on the command line (`--profile`) and in reports: `openai`, `vllm`, ...
    pub name: &'static str,
    /// What it sends beyond its provider's own stream.
    pub quirks: Quirks,
    /// The servers seen sending it.
    pub servers: &'static str,
    /// What its wire looks like, in a sentence.
    pub shapes: &'static str,
    /// Where the shape is documented or shown: provider docs, public issues, public
    /// recorded streams.
    pub sources: &'static str,
}

impl ServerProfile {
    /// `openai-chat/vllm`.
    pub fn id(&self) -> String {
        format!("{}/{}", self.dialect.name(), self.name)
    }
}

const fn profile(
    dialect: Dialect,
    name: &'static str,
    quirks: Quirks,
    servers: &'static str,
    shapes: &'static str,
    sources: &'static str,
) -> ServerProfile {
    ServerProfile { dialect, name, quirks, servers, shapes, sources }
}

const P: Quirks = Quirks::PLAIN;

/// Who a hostile profile stands for: the same in every dialect.
const HOSTILE_SERVERS: &str =
    "a hostile upstream: a compromised gateway or proxy, a man-in-the-middle on a plain-HTTP local server, someone else's compatible server";

/// What a hostile profile is drawn from: the same in every dialect.
const HOSTILE_SOURCES: &str = "openai/openai-node prototype-pollution fixes (a `__proto__` index or delta key forged a `tool_calls` entry); OWASP prototype pollution";

/// Every server profile, each dialect's provider's own first (the plain profile). The table
/// in docs/SPEC.md ("Server profiles") lists the same, in the same order (a test checks it).
pub const PROFILES: &[ServerProfile] = &[
    profile(
        Dialect::Anthropic,
        "anthropic",
        P,
        "Anthropic",
        "`content_block_start` with `input: {}`, then `input_json_delta` fragments, then `content_block_stop`",
        "Anthropic Messages streaming docs",
    ),
    profile(
        Dialect::Anthropic,
        "input-in-start",
        Quirks { anthropic_input_in_start: true, ..P },
        "Anthropic (some responses), Anthropic-compatible gateways",
        "a `tool_use` whose whole `input` is in `content_block_start`, with no deltas after it",
        "Anthropic Messages streaming docs (the `tool_use` start block); recorded streams",
    ),
    profile(
        Dialect::Anthropic,
        "content-in-start",
        Quirks { anthropic_content_in_start: true, ..P },
        "Anthropic (programmatic tool calling)",
        "complete `tool_use` blocks already in `message_start`'s `content`, with no block events for them",
        "Anthropic programmatic tool calling docs; recorded streams",
    ),
    profile(
        Dialect::Anthropic,
        "hostile",
        Quirks { hostile: true, ..P },
        HOSTILE_SERVERS,
        "`__proto__` and `constructor` members beside the fields of every event, `content_block` and `delta`, holding a look-alike `tool_use`; the hostile named cases (`named/hostile/...`): hostile ids, names, argument keys and indices",
        HOSTILE_SOURCES,
    ),
    profile(
        Dialect::OpenAiChat,
        "openai",
        P,
        "OpenAI",
        "id, type and name on an index's first entry only; indices 0, 1, ... in order; `finish_reason` once, then a usage chunk and `[DONE]`",
        "OpenAI Chat Completions streaming docs",
    ),
    profile(
        Dialect::OpenAiChat,
        "azure",
        Quirks { chat_content_filters: true, ..P },
        "Azure OpenAI",
        "a first chunk with `prompt_filter_results` and `choices: []`; `content_filter_results` on every choice; before the finish, a choice with the filter's offsets and results and no `delta`",
        "Azure OpenAI content filtering docs (streaming); pydantic/pydantic-ai#164; microsoft/autogen#6465",
    ),
    profile(
        Dialect::OpenAiChat,
        "vllm",
        Quirks { chat_repeat_fields: true, chat_split_entries: true, chat_repeat_on_finish: true, ..P },
        "vLLM, MiniMax, some GPT-5 hosts",
        "id, type and name on every entry; two entries with one index in one chunk; the finish chunk repeats `tool_calls` with `arguments: \"\"`",
        "openai/openai-python#3201; spring-projects/spring-ai#6441; vercel/ai#3953",
    ),
    profile(
        Dialect::OpenAiChat,
        "ollama",
        Quirks { chat_index_zero: true, chat_whole_calls: true, ..P },
        "Ollama `/v1`, SGLang, NVIDIA Dynamo",
        "index 0 for every parallel call, each call whole in one chunk, told apart by id",
        "ollama/ollama#7881, #15457; sgl-project/sglang#6310",
    ),
    profile(
        Dialect::OpenAiChat,
        "groq",
        Quirks { chat_whole_calls: true, ..P },
        "Groq",
        "each call whole in one chunk (id, name and all its arguments), at its own index",
        "BerriAI/litellm#7621",
    ),
    profile(
        Dialect::OpenAiChat,
        "deepseek",
        Quirks { chat_empty_continuations: true, ..P },
        "DeepSeek, Alibaba DashScope (Qwen), GLM",
        "continuation entries carry `\"id\": \"\"` and `\"name\": \"\"`",
        "spring-projects/spring-ai#6374; lofcz/LLMTornado#59; vercel/ai#19178",
    ),
    profile(
        Dialect::OpenAiChat,
        "mistral",
        Quirks { chat_no_index: true, chat_whole_calls: true, ..P },
        "Mistral, Gemini's OpenAI-compatible endpoint",
        "tool-call entries without `index`, each call whole in one chunk",
        "microsoft/semantic-kernel#6316; openai/openai-python#2806; vercel/ai#19181",
    ),
    profile(
        Dialect::OpenAiChat,
        "gemini-compat",
        Quirks { chat_no_index: true, ..P },
        "Gemini's OpenAI-compatible endpoint, OpenAI-compatible hosts that omit the index",
        "tool-call entries without `index`; a call's continuations carry no id and continue the latest call",
        "openai/openai-python#2806; langchain-ai/langchain#34654",
    ),
    profile(
        Dialect::OpenAiChat,
        "openrouter",
        Quirks { chat_repeat_on_finish: true, ..P },
        "OpenRouter",
        "two chunks with `finish_reason` (the second carries usage); the finish chunk repeats `tool_calls` with empty arguments",
        "skye-harris/hass_local_openai_llm#92; vercel/ai#3953",
    ),
    profile(
        Dialect::OpenAiChat,
        "litellm-proxy",
        Quirks { chat_repeat_id: true, ..P },
        "LiteLLM proxy",
        "the call's id on every entry (the name on the first only)",
        "BerriAI/litellm#20480",
    ),
    profile(
        Dialect::OpenAiChat,
        "anthropic-gateway",
        Quirks { chat_sparse_index: true, ..P },
        "OpenAI-compatible gateways in front of Anthropic and Bedrock",
        "call indices are content-block positions: the first call at index 1 when text came first, sparse after that",
        "aws-samples/bedrock-access-gateway#134; vercel/ai#18382",
    ),
    profile(
        Dialect::OpenAiChat,
        "late-name",
        Quirks { chat_late_name: true, ..P },
        "some OpenAI-compatible hosts",
        "a call's first entry carries its id and first argument bytes but no `function.name`; the name comes in its next entry",
        "vercel/ai#14722 (fixed by vercel/ai#14760)",
    ),
    profile(
        Dialect::OpenAiChat,
        "hostile",
        Quirks { hostile: true, ..P },
        HOSTILE_SERVERS,
        "`__proto__` and `constructor` members beside the fields of every chunk and `delta`, holding look-alike `tool_calls`; the hostile named cases (`named/hostile/...`): hostile ids, names, argument keys and indices",
        HOSTILE_SOURCES,
    ),
    profile(
        Dialect::OpenAiResponses,
        "openai",
        P,
        "OpenAI, Azure OpenAI",
        "`output_item.added`, `function_call_arguments.delta`s and `.done`, `output_item.done`, keyed by `item_id`",
        "OpenAI Responses streaming docs",
    ),
    profile(
        Dialect::OpenAiResponses,
        "lmstudio",
        Quirks { responses_done_only: true, ..P },
        "LM Studio",
        "no `function_call_arguments.delta`: a call's arguments only in `function_call_arguments.done`",
        "recorded streams of LM Studio's Responses endpoint",
    ),
    profile(
        Dialect::OpenAiResponses,
        "copilot",
        Quirks { responses_rotating_item_id: true, ..P },
        "GitHub Copilot's gateway",
        "`item_id` changes on every event while `output_index` stays the same",
        "vercel/ai#18548",
    ),
    profile(
        Dialect::OpenAiResponses,
        "hosted-tools",
        Quirks { responses_hosted_items: true, ..P },
        "OpenAI (hosted tools: tool search, MCP)",
        "hosted-tool items such as `tool_search_call` whose `arguments` is a JSON object, beside function calls",
        "OpenAI Responses streaming docs (hosted tool items); recorded streams",
    ),
    profile(
        Dialect::OpenAiResponses,
        "hostile",
        Quirks { hostile: true, ..P },
        HOSTILE_SERVERS,
        "`__proto__` and `constructor` members beside the fields of every event, holding a look-alike `function_call` item; the hostile named cases (`named/hostile/...`): hostile ids, names, argument keys and indices",
        HOSTILE_SOURCES,
    ),
    profile(
        Dialect::Bedrock,
        "bedrock",
        P,
        "AWS Bedrock ConverseStream",
        "binary event-stream messages: `contentBlockStart`, `contentBlockDelta`s with `toolUse.input` text, `contentBlockStop`, `messageStop`",
        "AWS Bedrock ConverseStream API reference",
    ),
    profile(
        Dialect::Bedrock,
        "hostile",
        Quirks { hostile: true, ..P },
        HOSTILE_SERVERS,
        "`__proto__` and `constructor` members beside the fields of every message's payload, its `delta` and its `start`, holding a look-alike `toolUse`; the hostile named cases (`named/hostile/...`): hostile ids, names and argument keys",
        HOSTILE_SOURCES,
    ),
    profile(
        Dialect::Gemini,
        "generate",
        P,
        "Google Gemini API, Vertex AI",
        "`data:` chunks of `candidates[0].content.parts[]`; each call one whole `functionCall` part with an `args` object (and its `thoughtSignature`); `finishReason` on the last chunk",
        "Gemini API reference (`models.streamGenerateContent`, `FunctionCall`, `FinishReason`)",
    ),
    profile(
        Dialect::Gemini,
        "vertex-partial-args",
        Quirks { gemini_partial_args: true, ..P },
        "Vertex AI with `toolConfig.functionCallingConfig.streamFunctionCallArguments`",
        "a call's name with `willContinue`, then `partialArgs` (`jsonPath` and a `stringValue` piece or a whole `numberValue`, `boolValue` or `nullValue`), keep-alives, and an empty `functionCall`, a piece without `willContinue` or the end of the candidate as its end",
        "Vertex AI reference (`FunctionCall.partialArgs`, `PartialArg`, `FunctionCallingConfig.streamFunctionCallArguments`); google/adk-python, vercel/ai issues on streamed function-call arguments",
    ),
    profile(
        Dialect::Gemini,
        "hostile",
        Quirks { hostile: true, ..P },
        HOSTILE_SERVERS,
        "`__proto__` and `constructor` members beside the fields of every chunk, holding a look-alike `functionCall`; the hostile named cases (`named/hostile/...`): hostile ids, names and argument keys",
        HOSTILE_SOURCES,
    ),
];

impl Dialect {
    /// Its server profiles, its provider's own first.
    pub fn profiles(self) -> impl Iterator<Item = &'static ServerProfile> {
        PROFILES.iter().filter(move |p| p.dialect == self)
    }

    /// Its profile named `name`.
    pub fn profile(self, name: &str) -> Option<&'static ServerProfile> {
        self.profiles().find(|p| p.name == name)
    }

    /// The profile of `quirks` in this dialect (`None`: no profile sends exactly them).
    pub fn profile_of(self, quirks: Quirks) -> Option<&'static ServerProfile> {
        self.profiles().find(|p| p.quirks == quirks)
    }
}

impl ServerProfile {
    /// The profile `name` names: `NAME` of `dialect`, or `DIALECT/NAME`; without a dialect, a
    /// bare `NAME` only one dialect has (`vllm`; `openai` is both OpenAI dialects'). `Err`
    /// says what was wrong and lists the profiles.
    pub fn find(dialect: Option<Dialect>, name: &str) -> Result<&'static ServerProfile, String> {
        let (dialect, bare) = match name.split_once('/') {
            Some((d, n)) => {
                let d: Dialect = d.parse().map_err(|e: UnknownDialect| e.to_string())?;
                if dialect.is_some_and(|given| given != d) {
                    return Err(format!("profile `{name}` is not one of {}'s", dialect.unwrap_or(d)));
                }
                (Some(d), n)
            }
            None => (dialect, name),
        };
        let matching: Vec<&ServerProfile> =
            PROFILES.iter().filter(|p| p.name == bare && dialect.is_none_or(|d| d == p.dialect)).collect();
        match matching.as_slice() {
            [one] => Ok(one),
            [] => Err(format!(
                "unknown server profile `{name}` (expected {})",
                PROFILES
                    .iter()
                    .filter(|p| dialect.is_none_or(|d| d == p.dialect))
                    .map(ServerProfile::id)
                    .collect::<Vec<_>>()
                    .join(", ")
            )),
            many => Err(format!(
                "profile `{name}` is {}: name the dialect (`--dialect`, or DIALECT/{bare})",
                many.iter().map(|p| p.id()).collect::<Vec<_>>().join(" and ")
            )),
        }
    }

    /// The profiles, one line each by dialect, for `--help`: `openai-chat: openai, vllm, ...`.
    pub fn help_list() -> String {
        Dialect::ALL
            .iter()
            .map(|d| format!("{}: {}", d.name(), d.profiles().map(|p| p.name).collect::<Vec<_>>().join(", ")))
            .collect::<Vec<_>>()
            .join("; ")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn profiles_are_told_apart_and_each_dialect_starts_plain() {
        for d in Dialect::ALL {
            let ps: Vec<_> = d.profiles().collect();
            assert!(ps.first().is_some_and(|p| p.quirks.is_plain()), "{d}: its provider's own first");
            for (i, a) in ps.iter().enumerate() {
                for b in &ps[i + 1..] {
                    assert_ne!(a.name, b.name, "{d}: two profiles named {}", a.name);
                    assert_ne!(a.quirks, b.quirks, "{d}: {} and {} send the same wire", a.name, b.name);
                }
                // A dialect's profiles set only that dialect's flags.
                let prefix = match d {
                    Dialect::OpenAiChat => "chat_",
                    Dialect::OpenAiResponses => "responses_",
                    Dialect::Anthropic => "anthropic_",
                    Dialect::Bedrock => "bedrock_",
                    Dialect::Gemini => "gemini_",
                };
                // `hostile` is every dialect's.
                assert!(a.quirks.set().all(|f| f.starts_with(prefix) || f == "hostile"), "{}", a.id());
            }
        }
    }

    #[test]
    fn a_profile_is_found_by_its_name_or_its_dialect_and_name() {
        assert_eq!(ServerProfile::find(None, "vllm").unwrap().id(), "openai-chat/vllm");
        assert_eq!(
            ServerProfile::find(None, "openai-responses/openai").unwrap().id(),
            "openai-responses/openai"
        );
        assert_eq!(
            ServerProfile::find(Some(Dialect::OpenAiChat), "openai").unwrap().id(),
            "openai-chat/openai"
        );
        let both = ServerProfile::find(None, "openai").unwrap_err();
        assert!(both.contains("openai-chat/openai and openai-responses/openai"), "{both}");
        let unknown = ServerProfile::find(Some(Dialect::Bedrock), "vllm").unwrap_err();
        assert!(
            unknown.contains("unknown server profile `vllm`") && unknown.contains("bedrock/bedrock"),
            "{unknown}"
        );
        let elsewhere = ServerProfile::find(Some(Dialect::Anthropic), "openai-chat/vllm").unwrap_err();
        assert!(elsewhere.contains("not one of anthropic's"), "{elsewhere}");
    }

    #[test]
    fn every_flag_is_named_once_and_old_files_read() {
        let all = Quirks {
            chat_index_zero: true,
            chat_repeat_fields: true,
            chat_repeat_id: true,
            chat_empty_continuations: true,
            chat_no_index: true,
            chat_whole_calls: true,
            chat_sparse_index: true,
            chat_split_entries: true,
            chat_repeat_on_finish: true,
            chat_content_filters: true,
            chat_late_name: true,
            responses_done_only: true,
            responses_rotating_item_id: true,
            responses_hosted_items: true,
            anthropic_input_in_start: true,
            anthropic_content_in_start: true,
            gemini_partial_args: true,
            hostile: true,
        };
        let names: Vec<_> = all.set().collect();
        assert_eq!(names.len(), all.flags().len());
        let rebuilt = names.iter().try_fold(Quirks::PLAIN, |q, n| q.with(n));
        assert_eq!(rebuilt, Some(all), "`with` sets each flag by its name");
        assert_eq!(Quirks::PLAIN.with("no_such_flag"), None);
        let json = serde_json::to_value(all).unwrap();
        assert_eq!(json.as_object().unwrap().len(), names.len());
        for n in &names {
            assert_eq!(json[n], true, "{n}: the flag's name is its field's");
        }
        // What files written before the profiles carry still reads.
        let old: Quirks = serde_json::from_str(r#"{"chat_index_zero":true}"#).unwrap();
        assert_eq!(old, Quirks::INDEX_ZERO);
        assert_eq!(serde_json::to_string(&Quirks::PLAIN).unwrap(), r#"{"chat_index_zero":false}"#);
    }
}
