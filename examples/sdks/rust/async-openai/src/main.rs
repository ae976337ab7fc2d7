//! A toolcert adapter for the tool-call accumulation pattern that async-openai documents in
//! its `examples/tool-call-stream` (async-openai 0.43.0, OpenAI Chat Completions): async-openai
//! parses each SSE chunk into a `CreateChatCompletionStreamResponse` and accumulates nothing;
//! the example's caller code does, and that code is the subject here, written as the example
//! writes it:
//!
//! - State is a map keyed by `(choice index, tool call index)`. The first chunk of a key
//!   creates its call with that chunk's `id`, `function.name` and `function.arguments`
//!   (missing ones empty); a later chunk of the key only appends its `function.arguments`
//!   (its `id` and `name` are ignored).
//! - The example runs every call of the map when a choice's `finish_reason` is `tool_calls`,
//!   each time one arrives, and parses each call's arguments with `args.parse().unwrap()`:
//!   arguments that are not JSON panic the example. Under `documented` (the example as
//!   written) that is the stream's `crash`; under `as-handed-over` the caller parses strictly
//!   as every adapter does (`failed(unparseable)`). An empty argument text is `{}`, as in every
//!   other adapter.
//! - A stream error is printed and the loop goes on reading (the example's `Err(err)` arm).
//! - Text is every `delta.content`.
//!
//! Caller policies (docs/CERTIFICATION.md): `documented` is the example as written (run on
//! `finish_reason == tool_calls`; calls never run are `failed`: `truncated` after a `length`
//! or `content_filter` finish, else `abandoned`). `as-handed-over` runs what the pattern has
//! accumulated once the stream ends, whatever the finish reason, unless the stream yielded
//! an error. The example iterates a `HashMap`, whose order is arbitrary: outcomes are given
//! in key order, with no layout (the pattern builds no ordered message of its own).
//! Stamps: the stream's chunk count, `at_finish` (SSE events cannot be mapped back onto the
//! chunks that carried them from here).

use std::collections::BTreeMap;

use async_openai::config::OpenAIConfig;
use async_openai::error::OpenAIError;
use async_openai::types::chat::{
    ChatCompletionRequestUserMessageArgs, ChatCompletionTool, ChatCompletionTools,
    CreateChatCompletionRequestArgs, FinishReason, FunctionObject,
};
use async_openai::Client;
use serde_json::{json, Value};
use toolcert_sdk_adapter::{next_item, short, tools, About, End, Endpoint, Mock, Policy, Sdk, Served};

const ASYNC_OPENAI_VERSION: &str = "0.43.0";

struct Pattern {
    policy: Policy,
    client: Client<OpenAIConfig>,
}

/// One accumulated call, as the example keeps it.
struct Call {
    id: String,
    name: String,
    arguments: String,
}

impl Sdk for Pattern {
    fn about(&self) -> About {
        About {
            name: "async-openai-tool-call-stream",
            version: ASYNC_OPENAI_VERSION,
            homepage: "https://github.com/64bit/async-openai/tree/main/examples/tool-call-stream",
            policy_doc:
                "https://github.com/64bit/async-openai/blob/main/examples/tool-call-stream/src/main.rs",
            dialects: &[Endpoint::OpenAiChat],
        }
    }

    async fn run_stream(
        &mut self,
        mock: &Mock,
        _: Endpoint,
        stream: &Value,
        served: &Served,
    ) -> Result<Value, String> {
        let tools = tools(stream)
            .into_iter()
            .map(|(name, schema)| {
                ChatCompletionTools::Function(ChatCompletionTool {
                    function: FunctionObject {
                        name,
                        description: None,
                        parameters: Some(schema),
                        strict: None,
                    },
                })
            })
            .collect::<Vec<_>>();
        let user = ChatCompletionRequestUserMessageArgs::default()
            .content("toolcert")
            .build()
            .map_err(|e| format!("cannot build the request: {e}"))?;
        let mut request = CreateChatCompletionRequestArgs::default();
        request.model("gpt-4o-mini").messages([user.into()]);
        if !tools.is_empty() {
            request.tools(tools);
        }
        let request = request.build().map_err(|e| format!("cannot build the request: {e}"))?;

        let mut result = json!({"outcomes": [], "text": ""});
        let mut chunks = match self.client.chat().create_stream(request).await {
            Ok(chunks) => chunks,
            Err(e) => {
                result["error"] = error(&e, served.units);
                return Ok(result);
            }
        };
        let mut states: BTreeMap<(u32, u32), Call> = BTreeMap::new();
        let mut text = String::new();
        let mut outcomes = Vec::new();
        let mut first_error = None;
        let mut finish = None;
        let cancel = served.end == End::Hold;
        while let Some(item) = next_item(&mut chunks, cancel, || mock.drained(served)).await {
            let response = match item {
                Ok(response) => response,
                Err(e) => {
                    // The example prints the error and reads on.
                    first_error.get_or_insert(e);
                    continue;
                }
            };
            for choice in response.choices {
                for chunk in choice.delta.tool_calls.into_iter().flatten() {
                    let arguments = chunk.function.as_ref().and_then(|f| f.arguments.clone());
                    match states.entry((choice.index, chunk.index)) {
                        std::collections::btree_map::Entry::Vacant(v) => {
                            v.insert(Call {
                                id: chunk.id.clone().unwrap_or_default(),
                                name: chunk
                                    .function
                                    .as_ref()
                                    .and_then(|f| f.name.clone())
                                    .unwrap_or_default(),
                                arguments: arguments.unwrap_or_default(),
                            });
                        }
                        std::collections::btree_map::Entry::Occupied(mut o) => {
                            if let Some(a) = arguments {
                                o.get_mut().arguments.push_str(&a);
                            }
                        }
                    }
                }
                if let Some(reason) = &choice.finish_reason {
                    finish = Some(reason.clone());
                    if self.policy == Policy::Documented && *reason == FinishReason::ToolCalls {
                        for call in states.values() {
                            match dispatch(call, served.units, self.policy) {
                                Ok(o) => outcomes.push(o),
                                Err(crash) => return Ok(crashed(result, text, crash)),
                            }
                        }
                    }
                }
                if let Some(content) = &choice.delta.content {
                    text.push_str(content);
                }
            }
        }
        result["text"] = json!(text);
        if cancel {
            // The caller dropped a body that never ended: what it ran before stands.
            result["outcomes"] = Value::Array(outcomes);
            return Ok(result);
        }
        match self.policy {
            Policy::AsHandedOver if first_error.is_none() => {
                for call in states.values() {
                    match dispatch(call, served.units, self.policy) {
                        Ok(o) => outcomes.push(o),
                        Err(crash) => return Ok(crashed(result, text, crash)),
                    }
                }
            }
            Policy::AsHandedOver => {}
            Policy::Documented if outcomes.is_empty() => {
                let reason = match finish {
                    Some(FinishReason::Length | FinishReason::ContentFilter) => "truncated",
                    _ => "abandoned",
                };
                outcomes.extend(states.values().map(|c| {
                    json!({"outcome": "failed", "reason": reason, "call_id": c.id, "name": c.name,
                        "raw": c.arguments, "units": served.units, "at_finish": true})
                }));
            }
            Policy::Documented => {}
        }
        result["outcomes"] = Value::Array(outcomes);
        if let Some(e) = first_error {
            result["error"] = error(&e, served.units);
        }
        Ok(result)
    }
}

/// A call run with its arguments parsed. The example's `call_fn` (`documented`) panics on
/// arguments that are not JSON (`args.parse().unwrap()`): `Err`, the stream's crash. The
/// `as-handed-over` caller parses strictly as every adapter does: `failed(unparseable)`.
fn dispatch(call: &Call, units: u32, policy: Policy) -> Result<Value, String> {
    let args = if call.arguments.is_empty() {
        json!({})
    } else {
        match serde_json::from_str::<Value>(&call.arguments) {
            Ok(args) => args,
            Err(e) if policy == Policy::Documented => {
                return Err(format!(
                "the example's call_fn panics: `args.parse().unwrap()` on arguments that are not JSON ({e})"
            ))
            }
            Err(_) => {
                return Ok(json!({"outcome": "failed", "reason": "unparseable", "call_id": call.id,
                    "name": call.name, "raw": call.arguments, "units": units, "at_finish": true}))
            }
        }
    };
    Ok(json!({"outcome": "dispatchable", "call_id": call.id, "name": call.name, "args": args,
        "units": units, "at_finish": true}))
}

fn crashed(mut result: Value, text: String, crash: String) -> Value {
    result["text"] = json!(text);
    result["outcomes"] = json!([]);
    result["crash"] = json!(crash);
    result
}

/// The turn error: its class (compared, never the message) by what async-openai reports.
fn error(e: &OpenAIError, units: u32) -> Value {
    let class = match e {
        OpenAIError::ApiError(_) => "upstream",
        OpenAIError::JSONDeserialize(..) => "malformed",
        OpenAIError::StreamError(inner) => match inner.as_ref() {
            async_openai::error::StreamError::UnknownEvent(_) => "malformed",
            _ => "incomplete",
        },
        OpenAIError::Reqwest(_) => "incomplete",
        _ => "other",
    };
    json!({"class": class, "detail": short(&e.to_string()), "units": units, "at_finish": true})
}

fn main() {
    let policy = Policy::from_args().unwrap_or_else(|e| {
        eprintln!("toolcert-async-openai: {e}");
        std::process::exit(2)
    });
    toolcert_sdk_adapter::serve("async-openai", policy, |mock| {
        let config = OpenAIConfig::new()
            .with_api_base(format!("{}/v1", mock.base_url()))
            .with_api_key("sk-toolcert-mock");
        Ok(Pattern { policy, client: Client::with_config(config) })
    })
}
