//! OpenAI Chat's dialect events (a turn's `wire`): the prelude chunk, the usage chunk without
//! `choices` and `[DONE]` after a stream without a finish reason, added to its rendered wire
//! stream.

use serde::Serialize;
use toolcert_scenario::Turn;
use toolcert_sse::SseEvent;

use crate::extra::insert;
use crate::json::to_json;
use crate::SseStream as WireStream;

/// Azure OpenAI's first chunk: the prompt's content-filter results, no choice.
pub(super) fn prelude() -> String {
    let safe = Filter { filtered: false, severity: "safe" };
    to_json(&Prelude {
        choices: [],
        created: 0,
        id: "",
        model: "",
        object: "",
        prompt_filter_results: [PromptFilter {
            prompt_index: 0,
            content_filter_results: Filters { hate: safe, self_harm: safe, sexual: safe, violence: safe },
        }],
    })
}

#[derive(Serialize)]
struct Prelude {
    choices: [(); 0],
    created: u64,
    id: &'static str,
    model: &'static str,
    object: &'static str,
    prompt_filter_results: [PromptFilter; 1],
}

#[derive(Serialize)]
struct PromptFilter {
    prompt_index: u32,
    content_filter_results: Filters,
}

#[derive(Serialize)]
struct Filters {
    hate: Filter,
    self_harm: Filter,
    sexual: Filter,
    violence: Filter,
}

#[derive(Serialize, Clone, Copy)]
struct Filter {
    filtered: bool,
    severity: &'static str,
}

pub(super) fn add(wire: &mut WireStream, turn: &Turn) {
    let extra = &turn.wire;
    let done = wire.events.iter().any(|e| e.data == "[DONE]");
    if extra.usage_without_choices {
        // The closing usage chunk (`choices: []` and `usage`) loses its `choices` key.
        if let Some(e) = wire.events.iter_mut().rev().find(|e| e.data.contains("\"usage\":{")) {
            e.data = e.data.replacen("\"choices\":[],", "", 1);
        }
    }
    // A stream cut inside its next event never reaches a `[DONE]` of its own.
    if extra.done_without_finish && !done && turn.transport.tail.is_none() {
        let at = wire.events.len();
        insert(wire, at, SseEvent { event: None, data: "[DONE]".into(), id: None });
    }
    if extra.chat_prelude {
        insert(wire, 0, SseEvent { event: None, data: prelude(), id: None });
    }
}

/// The `content_filter_results` Azure OpenAI puts on a choice it passed: every category safe.
const CHOICE_FILTERS: &str = r#""content_filter_results":{"hate":{"filtered":false,"severity":"safe"},"self_harm":{"filtered":false,"severity":"safe"},"sexual":{"filtered":false,"severity":"safe"},"violence":{"filtered":false,"severity":"safe"}}"#;

/// Azure OpenAI's stream (the `azure` profile, `Quirks::chat_content_filters`): the prelude
/// chunk first, `content_filter_results` on every choice, and before the finish chunk a
/// chunk whose choice carries only the filter's offsets and results, with no `delta`
/// (microsoft/autogen#6465 shows one; pydantic/pydantic-ai#164 the prelude).
pub(super) fn content_filters(wire: &mut WireStream) {
    for e in &mut wire.events {
        if e.data.contains("\"choices\":[{") {
            e.data = e.data.replace(",\"finish_reason\":", &format!(",{CHOICE_FILTERS},\"finish_reason\":"));
        }
    }
    if let Some(at) = wire
        .events
        .iter()
        .position(|e| e.data.contains("\"finish_reason\":\"") && e.data.contains("\"choices\":[{"))
    {
        let data = format!(
            r#"{{"choices":[{{"finish_reason":null,"index":0,"content_filter_offsets":{{"check_offset":0,"start_offset":0,"end_offset":0}},{CHOICE_FILTERS}}}],"created":0,"id":"","model":"","object":""}}"#
        );
        insert(wire, at, SseEvent { event: None, data, id: None });
    }
    if !wire.events.first().is_some_and(|e| e.data.contains("prompt_filter_results")) {
        insert(wire, 0, SseEvent { event: None, data: prelude(), id: None });
    }
}
