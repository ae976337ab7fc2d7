//! Every class of malformed input is `ErrorClass::Malformed` naming the event and the field,
//! never a panic; arbitrary input never panics.

mod common;

use common::decode_events;
use proptest::prelude::*;
use toolcert_dialect::{decoder, Dialect, Quirks};
use toolcert_render::Event;
use toolcert_sse::SseEvent;
use toolcert_subject::ErrorClass;

fn named(name: &str, data: &str) -> SseEvent {
    SseEvent::named(name, data)
}

/// Decoding `events` fails as Malformed, with a detail mentioning every `words`.
fn refused(dialect: Dialect, events: &[SseEvent], words: &[&str]) {
    let err = decode_events(dialect, Quirks::default(), events).expect_err("should be refused");
    assert_eq!(err.class, ErrorClass::Malformed, "{err}");
    for w in words {
        assert!(err.detail.contains(w), "{dialect}: `{}` does not mention `{w}`", err.detail);
    }
}

#[test]
fn anthropic_malformed_inputs() {
    let d = Dialect::Anthropic;
    refused(d, &[named("content_block_delta", "{not json")], &["content_block_delta", "not JSON"]);
    refused(
        d,
        &[named(
            "content_block_delta",
            r#"{"type":"content_block_delta","index":1,"delta":{"type":"input_json_delta"}}"#,
        )],
        &["content_block_delta", "partial_json"],
    );
    refused(
        d,
        &[named(
            "content_block_delta",
            r#"{"type":"content_block_delta","index":1,"delta":{"type":"input_json_delta","partial_json":5}}"#,
        )],
        &["delta.partial_json", "invalid type"],
    );
    refused(
        d,
        &[named(
            "content_block_delta",
            r#"{"type":"content_block_delta","delta":{"type":"text_delta","text":"x"}}"#,
        )],
        &["missing field `index`"],
    );
    refused(
        d,
        &[named(
            "content_block_delta",
            r#"{"type":"content_block_delta","index":-1,"delta":{"type":"text_delta","text":"x"}}"#,
        )],
        &["index"],
    );
    refused(
        d,
        &[named(
            "content_block_delta",
            r#"{"type":"content_block_delta","index":"1","delta":{"type":"text_delta","text":"x"}}"#,
        )],
        &["index", "invalid type"],
    );
    refused(
        d,
        &[named(
            "content_block_start",
            r#"{"type":"content_block_start","index":1,"content_block":{"type":"tool_use","name":"f","input":{}}}"#,
        )],
        &["content_block_start", "`id`"],
    );
    refused(
        d,
        &[named(
            "content_block_start",
            r#"{"type":"content_block_start","index":1,"content_block":{"type":"tool_use","id":7,"name":"f"}}"#,
        )],
        &["content_block.id"],
    );
    refused(d, &[named("content_block_stop", "[]")], &["content_block_stop"]);
    refused(
        d,
        &[named("content_block_stop", r#"{"type":"content_block_stop","index":0} {}"#)],
        &["not one JSON document"],
    );
    refused(
        d,
        &[named("message_delta", r#"{"type":"message_delta","delta":{"stop_reason":"pause"}}"#)],
        &["stop_reason", "pause"],
    );
    refused(
        d,
        &[named("error", r#"{"type":"error","error":{"type":"overloaded_error"}}"#)],
        &["error", "message"],
    );
    refused(d, &[named("ping", r#"{"type":"message_stop"}"#)], &["ping", "message_stop"]);
    refused(d, &[named("ping", "")], &["ping", "not JSON"]);
    // No event line and no type: nothing says what it is.
    refused(d, &[SseEvent::data(r#"{"index":0}"#)], &["type"]);
}

#[test]
fn chat_malformed_inputs() {
    let d = Dialect::OpenAiChat;
    let chunk = |delta: &str| {
        SseEvent::data(format!(
            r#"{{"object":"chat.completion.chunk","choices":[{{"index":0,"delta":{delta},"finish_reason":null}}]}}"#
        ))
    };
    refused(d, &[SseEvent::data("data: {}")], &["chat.completion.chunk", "not JSON"]);
    // A missing or null index is no defect (tests/chat_shapes.rs); a wrong-typed one is.
    refused(
        d,
        &[chunk(r#"{"tool_calls":[{"index":"0","function":{"arguments":"x"}}]}"#)],
        &["tool_calls[0].index", "invalid type"],
    );
    refused(
        d,
        &[chunk(r#"{"tool_calls":[{"index":0,"function":{"arguments":{"a":1}}}]}"#)],
        &["function.arguments"],
    );
    refused(d, &[chunk(r#"{"tool_calls":{"index":0}}"#)], &["delta.tool_calls", "invalid type"]);
    refused(d, &[chunk(r#"{"content":7}"#)], &["delta.content"]);
    // A name may come after a call's first entry, but not after the finish reason.
    let finish = SseEvent::data(
        r#"{"object":"chat.completion.chunk","choices":[{"index":0,"delta":{},"finish_reason":"tool_calls"}]}"#,
    );
    refused(
        d,
        &[chunk(r#"{"tool_calls":[{"index":0,"id":"call_1","function":{"arguments":"{"}}]}"#), finish],
        &["call_1", "function.name"],
    );
    refused(
        d,
        &[SseEvent::data(r#"{"choices":[{"index":0,"delta":{},"finish_reason":"function_call"}]}"#)],
        &["finish_reason", "function_call"],
    );
    refused(
        d,
        &[SseEvent::data(r#"{"id":"chatcmpl-1","object":"chat.completion.chunk"}"#)],
        &["neither `choices` nor `error`"],
    );
    refused(d, &[SseEvent::data(r#"{"error":"boom"}"#)], &["error", "invalid type"]);
    refused(d, &[SseEvent::data("[DONE] ")], &["not JSON"]);
}

#[test]
fn responses_malformed_inputs() {
    let d = Dialect::OpenAiResponses;
    let n = "response.function_call_arguments.delta";
    refused(
        d,
        &[named(
            n,
            r#"{"type":"response.function_call_arguments.delta","sequence_number":3,"item_id":"fc_1","delta":"x"}"#,
        )],
        &[n, "output_index"],
    );
    refused(
        d,
        &[named(n, r#"{"type":"response.function_call_arguments.delta","output_index":1,"delta":null}"#)],
        &[n, "delta"],
    );
    refused(
        d,
        &[named(n, r#"{"type":"response.output_text.delta","output_index":1,"delta":"x"}"#)],
        &[n, "response.output_text.delta"],
    );
    let a = "response.output_item.added";
    refused(
        d,
        &[named(
            a,
            r#"{"type":"response.output_item.added","output_index":0,"item":{"type":"function_call","name":"f","arguments":""}}"#,
        )],
        &[a, "call_id"],
    );
    refused(
        d,
        &[named(
            a,
            r#"{"type":"response.output_item.added","output_index":0,"item":{"type":"function_call","call_id":"c","name":["f"]}}"#,
        )],
        &["item.name"],
    );
    refused(
        d,
        &[named(a, r#"{"type":"response.output_item.added","output_index":0}"#)],
        &["missing field `item`"],
    );
    refused(
        d,
        &[named(
            "response.function_call_arguments.done",
            r#"{"type":"response.function_call_arguments.done","output_index":0}"#,
        )],
        &["arguments"],
    );
    refused(d, &[named("response.completed", "{")], &["response.completed", "not JSON"]);
    refused(
        d,
        &[named("response.failed", r#"{"type":"response.failed","response":{"error":{"code":"x"}}}"#)],
        &["response.error", "message"],
    );
    refused(d, &[named("error", r#"{"type":"error","code":"rate_limit"}"#)], &["error", "message"]);
}

#[test]
fn unknown_events_are_ignored_and_known_noise_is_harmless() {
    let ok = |d: Dialect, events: &[SseEvent]| decode_events(d, Quirks::default(), events).unwrap();
    assert!(ok(
        Dialect::Anthropic,
        &[named("future_event", "not even json"), named("message_stop", r#"{"type":"message_stop"}"#)]
    )
    .is_empty());
    // Thinking blocks and server tools are not client calls.
    let thinking = [
        named(
            "content_block_start",
            r#"{"type":"content_block_start","index":0,"content_block":{"type":"thinking","thinking":""}}"#,
        ),
        named(
            "content_block_delta",
            r#"{"type":"content_block_delta","index":0,"delta":{"type":"thinking_delta","thinking":"hm"}}"#,
        ),
        named(
            "content_block_delta",
            r#"{"type":"content_block_delta","index":0,"delta":{"type":"signature_delta","signature":"EqQB"}}"#,
        ),
        named("content_block_stop", r#"{"type":"content_block_stop","index":0}"#),
        named(
            "content_block_start",
            r#"{"type":"content_block_start","index":1,"content_block":{"type":"server_tool_use","id":"srvtoolu_1","name":"web_search","input":{}}}"#,
        ),
        named(
            "content_block_delta",
            r#"{"type":"content_block_delta","index":1,"delta":{"type":"input_json_delta","partial_json":"{\"query\""}}"#,
        ),
        named("content_block_stop", r#"{"type":"content_block_stop","index":1}"#),
    ];
    // They decode to foreign events only: nothing a call or the text could take.
    let got = ok(Dialect::Anthropic, &thinking);
    assert!(
        !got.is_empty()
            && got.iter().all(|e| matches!(
                e,
                Event::ForeignStart { .. } | Event::ForeignDelta { .. } | Event::ForeignStop { .. }
            )),
        "{got:?}"
    );
    assert!(ok(
        Dialect::OpenAiResponses,
        &[named("response.reasoning_summary_text.delta", "{}"), named("response.created", "???")]
    )
    .is_empty());
    // Chat: [DONE], a usage chunk, other choices.
    let got = ok(
        Dialect::OpenAiChat,
        &[
            SseEvent::data(r#"{"choices":[],"usage":{"prompt_tokens":1}}"#),
            SseEvent::data(r#"{"choices":[{"index":1,"delta":{"content":"other completion"}}]}"#),
            SseEvent::data("[DONE]"),
        ],
    );
    assert!(got.is_empty(), "{got:?}");
}

fn garbage_json() -> impl Strategy<Value = String> {
    let leaf = prop_oneof![
        Just("null".to_string()),
        Just("0".to_string()),
        Just("-1".to_string()),
        Just("4294967296".to_string()),
        Just("1.5".to_string()),
        Just("true".to_string()),
        "\"[a-z_.]{0,8}\"",
        Just("\"tool_use\"".to_string()),
        Just("\"function_call\"".to_string()),
        Just("\"input_json_delta\"".to_string()),
        Just("\"text_delta\"".to_string()),
    ];
    let keys = prop::sample::select(vec![
        "type",
        "index",
        "delta",
        "content_block",
        "id",
        "name",
        "partial_json",
        "text",
        "stop_reason",
        "error",
        "message",
        "choices",
        "tool_calls",
        "function",
        "arguments",
        "content",
        "finish_reason",
        "output_index",
        "item",
        "call_id",
        "response",
    ]);
    leaf.prop_recursive(4, 40, 6, move |inner| {
        prop_oneof![
            proptest::collection::vec(inner.clone(), 0..4).prop_map(|v| format!("[{}]", v.join(","))),
            proptest::collection::vec((keys.clone(), inner), 0..6).prop_map(|kv| {
                let body: Vec<String> = kv.into_iter().map(|(k, v)| format!("\"{k}\":{v}")).collect();
                format!("{{{}}}", body.join(","))
            }),
        ]
    })
}

fn any_event() -> impl Strategy<Value = SseEvent> {
    let name = proptest::option::of(prop::sample::select(vec![
        "message_start",
        "content_block_start",
        "content_block_delta",
        "content_block_stop",
        "message_delta",
        "message_stop",
        "ping",
        "error",
        "response.output_item.added",
        "response.function_call_arguments.delta",
        "response.function_call_arguments.done",
        "response.output_text.delta",
        "response.completed",
        "response.incomplete",
        "response.failed",
        "response.in_progress",
        "other",
    ]));
    let data = prop_oneof![garbage_json(), ".{0,20}", Just("[DONE]".to_string())];
    (name, data).prop_map(|(event, data)| SseEvent { event: event.map(Into::into), data, id: None })
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 2000, ..ProptestConfig::default() })]

    /// Whatever arrives, every decoder returns events or an error; an error is Malformed.
    #[test]
    fn decoders_never_panic(events in proptest::collection::vec(any_event(), 0..12)) {
        for dialect in Dialect::ALL {
            for quirks in [Quirks::default(), Quirks { chat_index_zero: true, ..Default::default() }] {
                let mut d = decoder(dialect, quirks);
                let mut out = Vec::new();
                for e in &events {
                    if let Err(err) = d.decode(&toolcert_subject::WireMessage::Sse(e.clone()), &mut out) {
                        prop_assert_eq!(err.class, ErrorClass::Malformed);
                        prop_assert!(!err.detail.is_empty());
                    }
                }
            }
        }
    }
}
