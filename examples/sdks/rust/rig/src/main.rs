//! A toolcert adapter for `rig-core` (0.44.0): certifies the tool calls rig folds from a
//! streamed completion, at the bytes level, in the three dialects rig streams (Anthropic
//! Messages, OpenAI Chat Completions, OpenAI Responses).
//!
//! rig's streamed reply (`Model::stream`, a `Streamed<Completion>`) yields events (text,
//! argument fragments, parts that ended) and `finish()` folds the whole reply into the
//! `CompletionResponse` that `Model::call` returns for the same reply: its `choice` holds
//! the finished `ToolCall`s, each with its arguments parsed (`arguments`) or, when they were
//! not a JSON object, kept as sent (`invalid_arguments`). That response is what a caller
//! runs tools from, so it is the dispatch surface:
//!
//! - Every `ToolCall` of the finished response is `dispatchable` with its arguments, unless
//!   rig kept them as `invalid_arguments`: then `failed`, `truncated` when the finish reason
//!   is `Length` or `ContentFilter`, else `unparseable`.
//! - An error the stream yielded (the last item: rig ends the stream after it), or one
//!   `finish()` returns (`ProviderError::Truncated` for a reply the provider did not end), is
//!   the turn error; nothing is run then (the caller's `?`).
//! - `documented` caller policy: the caller also reads `finish_reason()` (rig's
//!   `CompletionResponse::finish_reason`, reconciled with the output) and runs nothing
//!   unless it is `ToolCalls` or `Stop`: `Length`/`ContentFilter` make every call
//!   `failed(truncated)`, a missing or other reason `failed(abandoned)`.
//! - A stream the caller cancels (the body never ends) is dropped once the mock has handed
//!   over every chunk and rig is quiet: no outcomes, no error (the caller gave up).
//! - Text is every `Text` event's fragment; the layout is the response's text and call
//!   parts, in rig's order. Stamps: the stream's chunk count, `at_finish` (rig hands calls
//!   over at the end).
//!
//! `toolcert certify --subject 'exec:examples/sdks/rust/target/release/toolcert-rig' \
//!     --level bytes --dialect anthropic --no-schema`

use futures::StreamExt as _;
use rig_core::completion::{AssistantContent, CompletionRequest, FinishReason, ToolDefinition};
use rig_core::error::ProviderError;
use rig_core::message::ToolName;
use rig_core::providers::anthropic::AnthropicConfig;
use rig_core::providers::openai::OpenAIConfig;
use rig_core::streaming::{CompletionStream, Item, StreamEvent};
use serde_json::{json, Value};
use toolcert_sdk_adapter::{next_item, short, tools, About, Endpoint, Mock, Policy, Sdk, Served};

/// The version Cargo.toml pins, reported to the harness.
const RIG_VERSION: &str = "0.44.0";

struct Rig {
    policy: Policy,
    anthropic: rig_core::providers::anthropic::Anthropic,
    openai: rig_core::providers::openai::OpenAI,
}

impl Rig {
    fn new(mock_base: &str, policy: Policy) -> Rig {
        // rig joins `/v1/messages` onto the Anthropic base and `/chat/completions`,
        // `/responses` onto the OpenAI base (which carries the `/v1`).
        let anthropic = AnthropicConfig::new("sk-toolcert-mock").with_base_url(mock_base).client();
        let openai = OpenAIConfig::new("sk-toolcert-mock").with_base_url(format!("{mock_base}/v1")).client();
        Rig { policy, anthropic, openai }
    }

    fn open(&self, dialect: Endpoint, request: CompletionRequest) -> Result<CompletionStream, ProviderError> {
        match dialect {
            Endpoint::Anthropic => self.anthropic.completion("claude-sonnet-4-5").stream(request),
            Endpoint::OpenAiChat => self.openai.chat("gpt-4o-mini").stream(request),
            _ => self.openai.responses("gpt-5-mini").stream(request),
        }
    }
}

impl Sdk for Rig {
    fn about(&self) -> About {
        About {
            name: "rig-core",
            version: RIG_VERSION,
            homepage: "https://crates.io/crates/rig-core",
            policy_doc: "https://docs.rs/rig-core/0.44.0/rig_core/completion/struct.CompletionResponse.html#method.finish_reason",
            dialects: &[Endpoint::Anthropic, Endpoint::OpenAiChat, Endpoint::OpenAiResponses],
        }
    }

    async fn run_stream(
        &mut self,
        mock: &Mock,
        dialect: Endpoint,
        stream: &Value,
        served: &Served,
    ) -> Result<Value, String> {
        let mut defs = Vec::new();
        for (name, schema) in tools(stream) {
            let name = ToolName::new(name).map_err(|e| format!("a tool rig cannot name: {e}"))?;
            defs.push(ToolDefinition::new(name, "a toolcert tool", schema));
        }
        let request = CompletionRequest::new("toolcert").tools(defs);
        let mut text = String::new();
        let mut result = json!({"outcomes": [], "text": ""});
        let mut reply = match self.open(dialect, request) {
            Ok(reply) => reply,
            Err(e) => {
                result["error"] = error(&e, served.units);
                return Ok(result);
            }
        };
        let cancel = served.end == toolcert_sdk_adapter::End::Hold;
        let mut failed = None;
        loop {
            match next_item(&mut reply, cancel, || mock.drained(served)).await {
                None if cancel => {
                    // The caller gave up on a body that never ended: nothing to run.
                    result["text"] = json!(text);
                    return Ok(result);
                }
                None => break,
                Some(Err(e)) => {
                    failed = Some(e);
                    break;
                }
                Some(Ok(Item::Event(StreamEvent::Text { text: t, .. }))) => text.push_str(&t),
                Some(Ok(_)) => {}
            }
        }
        result["text"] = json!(text);
        let response = match failed {
            Some(e) => Err(e),
            None => reply.finish().await,
        };
        match response {
            Err(e) => result["error"] = error(&e, served.units),
            Ok(response) => {
                let (outcomes, layout) = hand_over(&response, self.policy, served.units);
                result["outcomes"] = Value::Array(outcomes);
                result["layout"] = Value::Array(layout);
            }
        }
        Ok(result)
    }
}

/// The outcomes and layout of the finished response, in rig's order.
fn hand_over(
    response: &rig_core::completion::CompletionResponse,
    policy: Policy,
    units: u32,
) -> (Vec<Value>, Vec<Value>) {
    let reason = response.finish_reason();
    let truncated = matches!(reason, Some(FinishReason::Length | FinishReason::ContentFilter));
    let withheld = match (policy, &reason) {
        (Policy::AsHandedOver, _) => None,
        (Policy::Documented, Some(FinishReason::ToolCalls | FinishReason::Stop)) => None,
        (Policy::Documented, _) if truncated => Some("truncated"),
        (Policy::Documented, _) => Some("abandoned"),
    };
    let mut outcomes = Vec::new();
    let mut layout = Vec::new();
    for part in &response.choice {
        match part {
            AssistantContent::Text(t) => layout.push(json!({"slot": "text", "text": t.text})),
            AssistantContent::ToolCall(call) => {
                let call_id = call.id.wire().into_owned();
                layout.push(json!({"slot": "call", "call_id": call_id}));
                let name = call.function.name.to_string();
                let o = match (&call.function.invalid_arguments, withheld) {
                    (Some(raw), _) => json!({"outcome": "failed",
                        "reason": withheld.unwrap_or(if truncated { "truncated" } else { "unparseable" }),
                        "call_id": call_id, "name": name, "raw": raw, "units": units, "at_finish": true}),
                    (None, Some(why)) => json!({"outcome": "failed", "reason": why, "call_id": call_id,
                        "name": name, "raw": Value::Object(call.function.arguments.clone()).to_string(),
                        "units": units, "at_finish": true}),
                    (None, None) => json!({"outcome": "dispatchable", "call_id": call_id, "name": name,
                        "args": Value::Object(call.function.arguments.clone()), "units": units, "at_finish": true}),
                };
                outcomes.push(o);
            }
            _ => {}
        }
    }
    (outcomes, layout)
}

/// The turn error: its class (compared, never the message) by what rig says went wrong.
fn error(e: &ProviderError, units: u32) -> Value {
    let class = match e {
        // An error event or envelope the provider sent.
        ProviderError::Provider(_) | ProviderError::ProviderResponse(_) => "upstream",
        // Data rig cannot read, or a reply that does not answer the request.
        ProviderError::Json(_) | ProviderError::Response(_) => "malformed",
        // The body stopped before the provider ended the reply, or the connection failed.
        ProviderError::Truncated | ProviderError::Http(_) => "incomplete",
        _ => "other",
    };
    json!({"class": class, "detail": short(&e.to_string()), "units": units, "at_finish": true})
}

fn main() {
    let policy = Policy::from_args().unwrap_or_else(|e| {
        eprintln!("toolcert-rig: {e}");
        std::process::exit(2)
    });
    toolcert_sdk_adapter::serve("rig", policy, |mock| Ok(Rig::new(&mock.base_url(), policy)))
}
