//! genai behind the mock provider: one stream's chunks in, what genai hands its caller out.
//!
//! How genai's hand-over maps onto toolcert's outcomes (docs/PROTOCOL.md):
//!
//! - The dispatch surface is the `End` event's captured content (`capture_tool_calls`), which
//!   is what genai's tool-use example runs. A captured call whose `fn_arguments` is JSON
//!   (genai parsed the buffer) is `dispatchable` with those arguments. One whose
//!   `fn_arguments` is a JSON string is the raw buffer genai could not parse (genai keeps it as
//!   a string then): `failed` with that raw text, `truncated` when the captured stop reason
//!   says the output was cut (`MaxTokens`, `ContentFilter`), else `unparseable`; an empty
//!   string is no argument bytes, `{}` (docs/SPEC.md section 2), as every other adapter reads
//!   an empty argument text. genai attaches no per-call flag. Under the `as-handed-over`
//!   caller policy whether a call is run never depends on the stop reason (genai's example
//!   runs the captured calls without reading it); under `documented` the caller also reads
//!   the captured stop reason and runs nothing when it is missing (`failed(abandoned)`) or says
//!   the output was cut (`failed(truncated)`) (docs/CERTIFICATION.md, "Caller policies").
//! - A stream that ends without an `End` event hands over no calls: no outcomes.
//! - The first `Err` the stream yields is a turn error (genai's example stops at it with
//!   `?`), classed by what genai says went wrong (`error_class`).
//! - Text is every `Chunk` event's content, concatenated; the layout is the captured
//!   content's text and tool-call parts, in genai's order.
//! - Stamps: outcomes come from the end of the stream (`units` = the chunk count,
//!   `at_finish`). An error genai raised on an SSE frame is stamped with the chunk that
//!   completed that frame (`frames.rs`), so text before it is judged as text before an error.

use std::sync::atomic::{AtomicBool, AtomicU32, Ordering};
use std::sync::Arc;
use std::time::Duration;

use base64::Engine as _;
use futures::StreamExt as _;
use genai::adapter::AdapterKind;
use genai::chat::{
    ChatMessage, ChatOptions, ChatRequest, ChatStreamEvent, ContentPart, StopReason, StreamEnd, Tool,
    ToolCall,
};
use genai::resolver::{AuthData, Endpoint as GenaiEndpoint, ServiceTargetResolver};
use genai::{Client, ModelIden, ServiceTarget};
use serde_json::{json, Value};
use toolcert_serve::{Config, End, Endpoint, MockProvider, Reply};

use crate::NoResults;

/// The genai version Cargo.toml pins (`=0.7.2`), reported to the harness.
pub const GENAI_VERSION: &str = "0.7.2";

/// For a stream the client cancels: once the mock has handed over every chunk, the caller
/// waits this long twice without an event from genai, then drops the stream.
const CANCEL_IDLE: Duration = Duration::from_millis(20);

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Dialect {
    Anthropic,
    OpenAiChat,
    OpenAiResponses,
}

impl Dialect {
    pub const ALL: [Dialect; 3] = [Dialect::Anthropic, Dialect::OpenAiChat, Dialect::OpenAiResponses];

    pub fn name(self) -> &'static str {
        self.endpoint().name()
    }

    pub fn from_name(name: &str) -> Option<Dialect> {
        Dialect::ALL.into_iter().find(|d| d.name() == name)
    }

    fn endpoint(self) -> Endpoint {
        match self {
            Dialect::Anthropic => Endpoint::Anthropic,
            Dialect::OpenAiChat => Endpoint::OpenAiChat,
            Dialect::OpenAiResponses => Endpoint::OpenAiResponses,
        }
    }

    /// genai's adapter for the dialect (what its model-name lookup picks for the real models).
    fn adapter_kind(self) -> AdapterKind {
        match self {
            Dialect::Anthropic => AdapterKind::Anthropic,
            Dialect::OpenAiChat => AdapterKind::OpenAI,
            Dialect::OpenAiResponses => AdapterKind::OpenAIResp,
        }
    }

    /// A model name of the provider; genai's resolver below pins the adapter anyway.
    fn model(self) -> &'static str {
        match self {
            Dialect::Anthropic => "claude-sonnet-4-5",
            Dialect::OpenAiChat => "gpt-4o-mini",
            Dialect::OpenAiResponses => "gpt-5-mini",
        }
    }
}

pub struct Sdk {
    mock: MockProvider,
    clients: Vec<Client>,
    /// Replies the mock has handed out so far (each is counted as served once over).
    taken: u64,
}

impl Sdk {
    pub fn start() -> Result<Sdk, String> {
        let mock = MockProvider::start(Config::default().close_connections(true))
            .map_err(|e| format!("cannot start the mock: {e}"))?;
        // genai joins the path onto `{base}/v1/` for every dialect: `messages`,
        // `chat/completions`, `responses`.
        let base = format!("{}/v1/", mock.base_url());
        let clients = Dialect::ALL
            .iter()
            .map(|&d| {
                let base = base.clone();
                let resolver = ServiceTargetResolver::from_resolver_fn(
                    move |target: ServiceTarget| -> Result<ServiceTarget, genai::resolver::Error> {
                        Ok(ServiceTarget {
                            endpoint: GenaiEndpoint::from_owned(base.clone()),
                            auth: AuthData::from_single("sk-toolcert-mock"),
                            model: ModelIden::new(d.adapter_kind(), target.model.model_name),
                        })
                    },
                );
                Client::builder()
                    .with_service_target_resolver(resolver)
                    .build()
                    .map_err(|e| format!("cannot build a genai client: {e}"))
            })
            .collect::<Result<Vec<_>, _>>()?;
        Ok(Sdk { mock, clients, taken: 0 })
    }

    /// Feeds one stream of a `run` to a fresh genai stream; its result entry.
    pub async fn run_stream(&mut self, dialect: Dialect, stream: &Value) -> Result<Value, NoResults> {
        let units =
            stream["units"].as_array().ok_or_else(|| NoResults::Errored("a stream without units".into()))?;
        let chunks =
            units.iter().map(chunk_bytes).collect::<Result<Vec<_>, _>>().map_err(NoResults::Errored)?;
        let n = chunks.len() as u32;
        let end = match stream["end"].as_str() {
            Some("eof") | None => End::Close,
            Some("disconnect") => End::Abort,
            Some("cancel") => End::Hold,
            Some(other) => return Err(NoResults::Errored(format!("unknown stream end {other:?}"))),
        };
        let endpoint = dialect.endpoint();
        self.mock.enqueue_reply(endpoint, Reply { chunks: chunks.clone(), end });

        let frames = Arc::new(AtomicU32::new(0));
        let counter = frames.clone();
        let options = ChatOptions::default()
            .with_capture_content(true)
            .with_capture_tool_calls(true)
            // Observes genai's SSE frames (it does not change what genai does): where in
            // the stream an error was raised.
            .with_raw_frame_fn(move |_, _| {
                counter.fetch_add(1, Ordering::SeqCst);
            });
        let request = ChatRequest::new(vec![ChatMessage::user("toolcert")]).with_tools(tools(stream));
        let client =
            &self.clients[Dialect::ALL.iter().position(|&d| d == dialect).expect("a dialect of ALL")];
        let (mock, taken) = (&self.mock, self.taken);
        // The reply is over (every chunk handed to the connection) once the mock has served
        // one more reply than before and none is left in the queue.
        let drained = || mock.queued(endpoint) == 0 && mock.served() > taken;
        let consumed = tokio::time::timeout(
            // 3 s unless TOOLCERT_STREAM_TIMEOUT says otherwise.
            toolcert_sdk_adapter::stream_timeout(),
            consume(client, dialect.model(), request, &options, end == End::Hold, drained),
        )
        .await;

        // The request genai made: exactly one, to this dialect's endpoint, asking to stream.
        let leftover = self.mock.queued(endpoint);
        self.mock.clear();
        let requests = self.mock.take_requests();
        // A reply left in the queue was never handed out, so it will never count as served.
        self.taken += u64::from(leftover == 0);
        match requests.as_slice() {
            [r] if r.endpoint == Some(endpoint) && r.asks_to_stream() && leftover == 0 => {}
            _ => {
                let seen: Vec<String> = requests
                    .iter()
                    .map(|r| format!("{} {} (stream: {})", r.method, r.path, r.asks_to_stream()))
                    .collect();
                let why = match &consumed {
                    Ok(c) => c.error.as_ref().map(|e| format!("; genai: {e}")).unwrap_or_default(),
                    Err(_) => String::new(),
                };
                return Err(NoResults::Errored(format!(
                    "genai did not make exactly one streaming request to {}: {seen:?}{why}",
                    endpoint.path()
                )));
            }
        }

        let Ok(consumed) = consumed else {
            return Ok(json!({"outcomes": [], "text": "", "crash": format!(
                "genai did not finish the stream within {} s (its caller would hang)",
                toolcert_sdk_adapter::stream_timeout().as_secs_f64()
            )}));
        };
        let mut result = json!({"outcomes": [], "text": consumed.text});
        if let Some(end) = consumed.end {
            let (outcomes, layout) = hand_over(end, n);
            result["outcomes"] = Value::Array(outcomes);
            result["layout"] = Value::Array(layout);
        }
        if let Some(e) = consumed.error {
            let (units, at_finish) = error_stamp(&e, &chunks, frames.load(Ordering::SeqCst));
            result["error"] = json!({
                "class": error_class(&e),
                "detail": short(&e.to_string()),
                "units": units,
                "at_finish": at_finish,
            });
        }
        Ok(result)
    }
}

/// What a caller of genai got from one stream.
struct Consumed {
    /// Every `Chunk` event's content.
    text: String,
    end: Option<StreamEnd>,
    /// The first error, which ends the caller's loop.
    error: Option<genai::Error>,
}

/// Consumes `exec_chat_stream` as genai's tool-use example does. With `cancel`, the stream
/// never closes: the caller drops it once `drained` and genai has gone quiet.
async fn consume(
    client: &Client,
    model: &str,
    request: ChatRequest,
    options: &ChatOptions,
    cancel: bool,
    drained: impl Fn() -> bool,
) -> Consumed {
    let mut out = Consumed { text: String::new(), end: None, error: None };
    let mut stream = match client.exec_chat_stream(model, request, Some(options)).await {
        Ok(response) => response.stream,
        Err(e) => {
            out.error = Some(e);
            return out;
        }
    };
    let mut quiet = 0;
    loop {
        let next = if cancel {
            match tokio::time::timeout(CANCEL_IDLE, stream.next()).await {
                Ok(next) => {
                    quiet = 0;
                    next
                }
                Err(_) => {
                    if drained() {
                        quiet += 1;
                        if quiet >= 2 {
                            return out;
                        }
                    }
                    continue;
                }
            }
        } else {
            stream.next().await
        };
        match next {
            None => return out,
            Some(Err(e)) => {
                out.error = Some(e);
                return out;
            }
            Some(Ok(ChatStreamEvent::Chunk(chunk))) => out.text.push_str(&chunk.content),
            Some(Ok(ChatStreamEvent::End(end))) => out.end = Some(end),
            Some(Ok(_)) => {}
        }
    }
}

/// The `documented` caller policy is in force (set once, from the command line, by `main`).
pub static DOCUMENTED: AtomicBool = AtomicBool::new(false);

/// The outcomes and layout of the captured content, in genai's order.
fn hand_over(end: StreamEnd, units: u32) -> (Vec<Value>, Vec<Value>) {
    // Under as-handed-over this only names why a call is not run; under documented a caller
    // that reads it runs nothing unless the turn finished.
    let truncated =
        matches!(end.captured_stop_reason, Some(StopReason::MaxTokens(_) | StopReason::ContentFilter(_)));
    let withheld = match (DOCUMENTED.load(Ordering::Relaxed), &end.captured_stop_reason) {
        (false, _) => None,
        (true, None) => Some("abandoned"),
        (true, Some(_)) if truncated => Some("truncated"),
        (true, Some(_)) => None,
    };
    let mut outcomes = Vec::new();
    let mut layout = Vec::new();
    for part in end.captured_content.map(|c| c.into_parts()).unwrap_or_default() {
        match part {
            ContentPart::Text(text) => layout.push(json!({"slot": "text", "text": text})),
            ContentPart::ToolCall(call) => {
                layout.push(json!({"slot": "call", "call_id": call.call_id}));
                let mut o = outcome(call, units, truncated);
                // The documented caller withholds every call it would have run, and an
                // unparseable one too: its check comes first.
                match (withheld, o["outcome"].as_str()) {
                    (Some(reason), Some("dispatchable")) => {
                        let raw = o["args"].to_string();
                        o = json!({"outcome": "failed", "reason": reason, "call_id": o["call_id"],
                            "name": o["name"], "raw": raw, "units": units, "at_finish": true});
                    }
                    (Some(reason), Some("failed")) => o["reason"] = json!(reason),
                    _ => {}
                }
                outcomes.push(o);
            }
            _ => {}
        }
    }
    (outcomes, layout)
}

fn outcome(call: ToolCall, units: u32, truncated: bool) -> Value {
    let ToolCall { call_id, fn_name, fn_arguments, .. } = call;
    let reason = if truncated { "truncated" } else { "unparseable" };
    match fn_arguments {
        // No argument bytes: no arguments, as every adapter reads an empty argument text.
        Value::String(raw) if raw.is_empty() => json!({"outcome": "dispatchable", "call_id": call_id,
            "name": fn_name, "args": {}, "units": units, "at_finish": true}),
        // genai keeps a buffer it could not parse as the string itself.
        Value::String(raw) => json!({"outcome": "failed", "reason": reason, "call_id": call_id,
            "name": fn_name, "raw": raw, "units": units, "at_finish": true}),
        args => json!({"outcome": "dispatchable", "call_id": call_id, "name": fn_name, "args": args,
            "units": units, "at_finish": true}),
    }
}

/// The turn-error class of what genai reported (classes are compared, never messages).
fn error_class(e: &genai::Error) -> &'static str {
    match e {
        // An `error` event (Anthropic, Responses) or an `error` object in a Chat chunk.
        genai::Error::ChatResponse { .. } => "upstream",
        // genai reports Responses' `response.failed` as a StreamParse error built from the
        // response's message (serde's `custom`, which has no position); a real parse failure
        // of an event's data has a line number.
        genai::Error::StreamParse { serde_error, .. } if serde_error.line() == 0 => "upstream",
        genai::Error::StreamParse { .. } => "malformed",
        // An event without a field genai needs (`/delta/text`, `/content_block/id` ...).
        genai::Error::JsonValueExt(_) => "malformed",
        genai::Error::WebStream { error, .. } if is_utf8_error(error.as_ref()) => "malformed",
        // The body ended early: a dropped connection.
        genai::Error::WebStream { .. } => "incomplete",
        _ => "other",
    }
}

fn is_utf8_error(e: &(dyn std::error::Error + 'static)) -> bool {
    e.is::<std::string::FromUtf8Error>() || e.is::<std::str::Utf8Error>()
}

/// `units` and `at_finish` of an error.
fn error_stamp(e: &genai::Error, chunks: &[Vec<u8>], frames_seen: u32) -> (u32, bool) {
    let n = chunks.len() as u32;
    match e {
        genai::Error::WebStream { error, .. } if is_utf8_error(error.as_ref()) => {
            match crate::frames::invalid_utf8_chunk(chunks) {
                Some(c) => (c as u32 + 1, false),
                None => (n, true),
            }
        }
        // Not raised on a frame: the end of the body, or the request itself.
        genai::Error::WebStream { .. } | genai::Error::HttpError { .. } => (n, true),
        _ => match frames_seen
            .checked_sub(1)
            .and_then(|k| crate::frames::frame_ends(chunks).get(k as usize).copied())
        {
            Some(Some(c)) => (c as u32 + 1, false),
            _ => (n, true),
        },
    }
}

fn short(s: &str) -> String {
    const MAX: usize = 400;
    match s.char_indices().nth(MAX) {
        Some((i, _)) => format!("{}...", &s[..i]),
        None => s.to_string(),
    }
}

fn chunk_bytes(unit: &Value) -> Result<Vec<u8>, String> {
    if let Some(text) = unit.get("text").and_then(Value::as_str) {
        return Ok(text.as_bytes().to_vec());
    }
    if let Some(b64) = unit.get("bytes").and_then(Value::as_str) {
        return base64::engine::general_purpose::STANDARD
            .decode(b64)
            .map_err(|e| format!("bad base64 in a unit: {e}"));
    }
    Err(format!("not a bytes-level unit: {}", short(&unit.to_string())))
}

/// The request's tools, as genai takes them (a tool without a schema gets an empty object
/// schema, as providers require one).
fn tools(stream: &Value) -> Vec<Tool> {
    stream["tools"]
        .as_array()
        .into_iter()
        .flatten()
        .filter_map(|t| {
            let name = t["name"].as_str()?;
            let schema = t
                .get("schema")
                .filter(|s| !s.is_null())
                .cloned()
                .unwrap_or_else(|| json!({"type": "object"}));
            Some(Tool::new(name).with_schema(schema))
        })
        .collect()
}
