//! Which server profile a recorded stream shows: what `toolcert replay` says of a stream it
//! is given without `--profile`.
//!
//! Where it sits: beside the decoders, never in front of them. The decoders read every
//! profile of their dialect alike (a client cannot know which server it reads, docs/SPEC.md
//! "Server profiles"), so detection decides nothing about how a stream is read: it names the
//! server behaviour the bytes show, for the report and for a subject that declares only some
//! profiles. It reads each message's JSON generically (no dialect's wire types), keeps a few
//! flags and counters, and holds no message.

use std::collections::{HashMap, HashSet};

use serde_json::Value;
use toolcert_scenario::{Dialect, Quirks, ServerProfile};
use toolcert_subject::WireMessage;

/// What a stream showed so far, message by message.
#[derive(Debug, Default)]
pub struct ProfileDetector {
    shown: Quirks,
    /// Chat: the ids seen at each index, the calls' entry counts, the first index seen.
    ids_at: HashMap<i64, HashSet<String>>,
    entries_of: HashMap<String, usize>,
    first_index: Option<i64>,
    finishes: usize,
    /// Responses: the item ids seen at each output index, and whether argument deltas came.
    items_at: HashMap<i64, HashSet<String>>,
    deltas: usize,
    dones: usize,
}

impl ProfileDetector {
    pub fn new() -> ProfileDetector {
        ProfileDetector::default()
    }

    /// Reads one message of `dialect`'s stream (a message that is not JSON shows nothing).
    pub fn feed(&mut self, dialect: Dialect, message: &WireMessage) {
        // A binary frame's payload is the JSON an SSE event's data would be.
        let parsed = match message {
            WireMessage::Sse(event) => serde_json::from_str::<Value>(&event.data),
            WireMessage::Frame(frame) => serde_json::from_slice::<Value>(&frame.payload),
        };
        let Ok(data) = parsed else { return };
        // A hostile upstream's members, or an index no index can be.
        if data.get("__proto__").is_some()
            || data.get("constructor").is_some()
            || ["index", "output_index"].iter().any(|k| data.get(k).is_some_and(|i| i.as_u64().is_none()))
        {
            self.shown.hostile = true;
        }
        match dialect {
            Dialect::OpenAiChat => self.chat(&data),
            Dialect::OpenAiResponses => self.responses(&data),
            Dialect::Anthropic => self.anthropic(&data),
            Dialect::Bedrock => {}
            Dialect::Gemini => self.gemini(&data),
        }
    }

    /// Gemini: a `functionCall` with `partialArgs` or `willContinue` shows Vertex's streamed
    /// arguments.
    fn gemini(&mut self, data: &Value) {
        let Some(parts) = data.pointer("/candidates/0/content/parts").and_then(Value::as_array) else {
            return;
        };
        for part in parts {
            let Some(call) = part.get("functionCall") else { continue };
            if call.get("partialArgs").is_some() || call.get("willContinue").is_some() {
                self.shown.gemini_partial_args = true;
            }
        }
    }

    fn chat(&mut self, data: &Value) {
        // Azure OpenAI's content-filter fields, on the prelude chunk or on a choice.
        if data.get("prompt_filter_results").is_some() {
            self.shown.chat_content_filters = true;
        }
        let Some(choices) = data.get("choices").and_then(Value::as_array) else { return };
        for choice in choices {
            if choice.get("content_filter_results").is_some() {
                self.shown.chat_content_filters = true;
            }
            if choice.get("finish_reason").is_some_and(|r| !r.is_null()) {
                self.finishes += 1;
            }
            let Some(entries) = choice.pointer("/delta/tool_calls").and_then(Value::as_array) else {
                continue;
            };
            let mut indices_here = HashSet::new();
            for e in entries {
                if e.get("index").is_some_and(|i| !i.is_null() && i.as_u64().is_none()) {
                    self.shown.hostile = true;
                    continue;
                }
                let index = e.get("index").and_then(Value::as_i64);
                let id = e.get("id").and_then(Value::as_str);
                let name = e.pointer("/function/name").and_then(Value::as_str);
                match index {
                    None => self.shown.chat_no_index = true,
                    Some(i) => {
                        self.first_index.get_or_insert(i);
                        if !indices_here.insert(i) {
                            self.shown.chat_split_entries = true;
                        }
                    }
                }
                if id == Some("") || name == Some("") {
                    self.shown.chat_empty_continuations = true;
                }
                let Some(id) = id.filter(|id| !id.is_empty()) else { continue };
                let seen = self.entries_of.entry(id.to_owned()).or_default();
                *seen += 1;
                // A call's first entry without its name: the name comes later.
                if *seen == 1 && name.is_none_or(str::is_empty) {
                    self.shown.chat_late_name = true;
                }
                if *seen > 1 && self.finishes == 0 {
                    // A known id again before the finish: repeated fields, with the name or not.
                    match name {
                        Some(n) if !n.is_empty() => self.shown.chat_repeat_fields = true,
                        _ => self.shown.chat_repeat_id = true,
                    }
                }
                if self.finishes > 0 || choice.get("finish_reason").is_some_and(|r| !r.is_null()) {
                    if *seen > 1 {
                        self.shown.chat_repeat_on_finish = true;
                    }
                    continue;
                }
                if let Some(i) = index {
                    let ids = self.ids_at.entry(i).or_default();
                    ids.insert(id.to_owned());
                    if ids.len() > 1 {
                        self.shown.chat_index_zero = true;
                    }
                }
            }
        }
    }

    fn responses(&mut self, data: &Value) {
        let kind = data.get("type").and_then(Value::as_str).unwrap_or_default();
        match kind {
            "response.function_call_arguments.delta" => self.deltas += 1,
            "response.function_call_arguments.done" => self.dones += 1,
            "response.output_item.added" | "response.output_item.done" => {
                let item = data.get("item");
                let item_kind = item.and_then(|i| i.get("type")).and_then(Value::as_str).unwrap_or_default();
                let hosted = !matches!(item_kind, "function_call" | "message" | "reasoning" | "")
                    && item.and_then(|i| i.get("arguments")).is_some_and(Value::is_object);
                self.shown.responses_hosted_items |= hosted;
            }
            _ => {}
        }
        let at = data.get("output_index").and_then(Value::as_i64);
        let id = data
            .get("item_id")
            .and_then(Value::as_str)
            .or_else(|| data.pointer("/item/id").and_then(Value::as_str));
        if let (Some(at), Some(id)) = (at, id) {
            let ids = self.items_at.entry(at).or_default();
            ids.insert(id.to_owned());
            if ids.len() > 1 {
                self.shown.responses_rotating_item_id = true;
            }
        }
    }

    fn anthropic(&mut self, data: &Value) {
        match data.get("type").and_then(Value::as_str) {
            Some("message_start") => {
                let content = data.pointer("/message/content").and_then(Value::as_array);
                let calls = content
                    .is_some_and(|c| c.iter().any(|b| b.get("type") == Some(&Value::from("tool_use"))));
                self.shown.anthropic_content_in_start |= calls;
            }
            Some("content_block_start") => {
                let input = data.pointer("/content_block/input").and_then(Value::as_object);
                self.shown.anthropic_input_in_start |= input.is_some_and(|i| !i.is_empty());
            }
            _ => {}
        }
    }

    /// The wire behaviours a whole rendered stream shows (the coverage report counts them per
    /// case: a profile's behaviour counted is one its bytes carry, not one the renderer meant).
    pub fn shown_by(dialect: Dialect, stream: &crate::WireStream) -> Quirks {
        let mut d = ProfileDetector::new();
        for m in &stream.events {
            d.feed(dialect, m);
        }
        d.shown()
    }

    /// The wire behaviours the stream showed.
    pub fn shown(&self) -> Quirks {
        let mut q = self.shown;
        // Several calls, each in one entry: whole calls.
        q.chat_whole_calls = self.entries_of.len() > 1
            && self.entries_of.values().all(|&n| n == 1)
            && !q.chat_repeat_on_finish;
        q.chat_sparse_index = self.first_index.is_some_and(|i| i > 0);
        q.responses_done_only = self.dones > 0 && self.deltas == 0;
        q
    }

    /// The profile of `dialect` the stream shows: the one that sends everything shown with
    /// the fewest behaviours besides; `None` when no profile sends all of it. A stream that
    /// shows nothing particular is its provider's own.
    pub fn profile(&self, dialect: Dialect) -> Option<&'static ServerProfile> {
        let shown = self.shown();
        let shown: Vec<&str> = shown.set().collect();
        dialect
            .profiles()
            .filter(|p| {
                let sends: Vec<&str> = p.quirks.set().collect();
                shown.iter().all(|f| sends.contains(f))
            })
            .min_by_key(|p| p.quirks.set().count())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use toolcert_sse::SseEvent;

    fn detect(dialect: Dialect, data: &[&str]) -> Option<&'static str> {
        let mut d = ProfileDetector::new();
        for s in data {
            d.feed(dialect, &WireMessage::Sse(SseEvent { data: (*s).to_owned(), ..SseEvent::default() }));
        }
        d.profile(dialect).map(|p| p.name)
    }

    fn chunk(entries: &str) -> String {
        format!(r#"{{"choices":[{{"index":0,"delta":{{"tool_calls":[{entries}]}},"finish_reason":null}}]}}"#)
    }

    #[test]
    fn chat_profiles_are_told_by_what_the_entries_show() {
        let plain = [
            chunk(r#"{"index":0,"id":"call_a","type":"function","function":{"name":"f","arguments":""}}"#),
            chunk(r#"{"index":0,"function":{"arguments":"{}"}}"#),
        ];
        assert_eq!(detect(Dialect::OpenAiChat, &plain.each_ref().map(String::as_str)), Some("openai"));
        let deepseek = [
            chunk(r#"{"index":0,"id":"call_a","type":"function","function":{"name":"f","arguments":""}}"#),
            chunk(r#"{"index":0,"id":"","function":{"name":"","arguments":"{}"}}"#),
        ];
        assert_eq!(detect(Dialect::OpenAiChat, &deepseek.each_ref().map(String::as_str)), Some("deepseek"));
        let mistral = [
            chunk(r#"{"id":"a1","function":{"name":"f","arguments":"{}"}}"#),
            chunk(r#"{"id":"b2","function":{"name":"g","arguments":"{}"}}"#),
        ];
        assert_eq!(detect(Dialect::OpenAiChat, &mistral.each_ref().map(String::as_str)), Some("mistral"));
        let ollama = [
            chunk(r#"{"index":0,"id":"a1","function":{"name":"f","arguments":"{}"}}"#),
            chunk(r#"{"index":0,"id":"b2","function":{"name":"g","arguments":"{}"}}"#),
        ];
        assert_eq!(detect(Dialect::OpenAiChat, &ollama.each_ref().map(String::as_str)), Some("ollama"));
        let gateway = [chunk(r#"{"index":1,"id":"a1","function":{"name":"f","arguments":""}}"#)];
        assert_eq!(
            detect(Dialect::OpenAiChat, &gateway.each_ref().map(String::as_str)),
            Some("anthropic-gateway")
        );
        let litellm = [
            chunk(r#"{"index":0,"id":"a1","type":"function","function":{"name":"f","arguments":""}}"#),
            chunk(r#"{"index":0,"id":"a1","function":{"arguments":"{}"}}"#),
        ];
        assert_eq!(
            detect(Dialect::OpenAiChat, &litellm.each_ref().map(String::as_str)),
            Some("litellm-proxy")
        );
        let azure = [
            r#"{"choices":[],"created":0,"id":"","model":"","object":"","prompt_filter_results":[]}"#
                .to_owned(),
            chunk(r#"{"index":0,"id":"call_a","type":"function","function":{"name":"f","arguments":"{}"}}"#),
        ];
        assert_eq!(detect(Dialect::OpenAiChat, &azure.each_ref().map(String::as_str)), Some("azure"));
        let late_name = [
            chunk(r#"{"index":0,"id":"call_a","type":"function","function":{"arguments":"{\"a\""}}"#),
            chunk(r#"{"index":0,"function":{"name":"f","arguments":":1}"}}"#),
        ];
        assert_eq!(detect(Dialect::OpenAiChat, &late_name.each_ref().map(String::as_str)), Some("late-name"));
    }

    #[test]
    fn responses_and_anthropic_profiles_are_told_too() {
        let lmstudio = [
            r#"{"type":"response.output_item.added","output_index":0,"item":{"type":"function_call","id":"fc_1"}}"#,
            r#"{"type":"response.function_call_arguments.done","output_index":0,"item_id":"fc_1","arguments":"{}"}"#,
        ];
        assert_eq!(detect(Dialect::OpenAiResponses, &lmstudio), Some("lmstudio"));
        let copilot = [
            r#"{"type":"response.output_item.added","output_index":0,"item":{"type":"function_call","id":"fc_1"}}"#,
            r#"{"type":"response.function_call_arguments.delta","output_index":0,"item_id":"fc_2","delta":"{}"}"#,
        ];
        assert_eq!(detect(Dialect::OpenAiResponses, &copilot), Some("copilot"));
        let start = [
            r#"{"type":"content_block_start","index":0,"content_block":{"type":"tool_use","id":"t","name":"f","input":{"a":1}}}"#,
        ];
        assert_eq!(detect(Dialect::Anthropic, &start), Some("input-in-start"));
        let plain = [
            r#"{"type":"content_block_start","index":0,"content_block":{"type":"tool_use","id":"t","name":"f","input":{}}}"#,
        ];
        assert_eq!(detect(Dialect::Anthropic, &plain), Some("anthropic"));
    }
}
