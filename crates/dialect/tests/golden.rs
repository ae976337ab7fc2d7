//! Golden SSE text of the seed's lookup_order turn in each dialect: a spec check of the
//! renderers against the providers' documented stream shapes, written out by hand. Ids the
//! renderer derives from the turn are masked (`…`) after their shape is checked.

mod common;

use common::*;
use toolcert_dialect::{Dialect, Quirks};
use toolcert_render::render;
use toolcert_scenario::{Ending, StopReason, Turn};
use toolcert_sse::{encode, Framing};

/// The SSE text, with each `prefix` + `len` id characters replaced by `prefix…`.
fn sse(turn: &Turn, dialect: Dialect, ids: &[(&str, usize)]) -> String {
    let wire = render_wire(turn, &render(turn), dialect, Quirks::default()).unwrap();
    let mut text = String::from_utf8(encode(&wire.events, &Framing::default()).bytes).unwrap();
    for &(prefix, len) in ids {
        let mut out = String::new();
        let mut rest = text.as_str();
        while let Some(i) = rest.find(prefix) {
            let id = &rest[i + prefix.len()..i + prefix.len() + len];
            assert!(id.bytes().all(|b| b.is_ascii_alphanumeric()), "{prefix}{id}");
            out.push_str(&rest[..i + prefix.len()]);
            out.push('…');
            rest = &rest[i + prefix.len() + len..];
        }
        out.push_str(rest);
        text = out;
    }
    text
}

#[test]
fn anthropic_lookup_order() {
    let turn = per_call(lookup_order(1, "toolu_01QxR"), Ending::Stop(StopReason::ToolUse));
    let want = r#"event: message_start
data: {"type":"message_start","message":{"id":"msg_01…","type":"message","role":"assistant","model":"claude-sonnet-4-5-20250929","content":[],"stop_reason":null,"stop_sequence":null,"usage":{"input_tokens":1187,"cache_creation_input_tokens":0,"cache_read_input_tokens":0,"output_tokens":1}}}

event: content_block_start
data: {"type":"content_block_start","index":0,"content_block":{"type":"text","text":""}}

event: content_block_delta
data: {"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":"Let me pull"}}

event: content_block_delta
data: {"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":" that up for you."}}

event: content_block_stop
data: {"type":"content_block_stop","index":0}

event: content_block_start
data: {"type":"content_block_start","index":1,"content_block":{"type":"tool_use","id":"toolu_01QxR","name":"lookup_order","input":{}}}

event: content_block_delta
data: {"type":"content_block_delta","index":1,"delta":{"type":"input_json_delta","partial_json":"{\"order_id\": \"A-44"}}

event: content_block_delta
data: {"type":"content_block_delta","index":1,"delta":{"type":"input_json_delta","partial_json":"71\", \"include_line_ite"}}

event: content_block_delta
data: {"type":"content_block_delta","index":1,"delta":{"type":"input_json_delta","partial_json":"ms\": true}"}}

event: content_block_stop
data: {"type":"content_block_stop","index":1}

event: message_delta
data: {"type":"message_delta","delta":{"stop_reason":"tool_use","stop_sequence":null},"usage":{"output_tokens":25}}

event: message_stop
data: {"type":"message_stop"}

"#;
    assert_eq!(sse(&turn, Dialect::Anthropic, &[("msg_01", 22)]), want);
}

/// The seed's trace, payload for payload: each wire event is the seed's JSON plus `type`.
#[test]
fn anthropic_payloads_match_the_seed_trace() {
    let turn = per_call(lookup_order(1, "toolu_01QxR"), Ending::Stop(StopReason::ToolUse));
    let wire = render_wire(&turn, &render(&turn), Dialect::Anthropic, Quirks::default()).unwrap();
    let seed = [
        ("content_block_start", r#"{"index":0,"content_block":{"type":"text","text":""}}"#),
        ("content_block_delta", r#"{"index":0,"delta":{"type":"text_delta","text":"Let me pull"}}"#),
        ("content_block_delta", r#"{"index":0,"delta":{"type":"text_delta","text":" that up for you."}}"#),
        ("content_block_stop", r#"{"index":0}"#),
        (
            "content_block_start",
            r#"{"index":1,"content_block":{"type":"tool_use","id":"toolu_01QxR","name":"lookup_order","input":{}}}"#,
        ),
        (
            "content_block_delta",
            r#"{"index":1,"delta":{"type":"input_json_delta","partial_json":"{\"order_id\": \"A-44"}}"#,
        ),
        (
            "content_block_delta",
            r#"{"index":1,"delta":{"type":"input_json_delta","partial_json":"71\", \"include_line_ite"}}"#,
        ),
        (
            "content_block_delta",
            r#"{"index":1,"delta":{"type":"input_json_delta","partial_json":"ms\": true}"}}"#,
        ),
        ("content_block_stop", r#"{"index":1}"#),
        ("message_delta", r#"{"delta":{"stop_reason":"tool_use"}}"#),
    ];
    let body = &wire.events[1..wire.events.len() - 1];
    assert_eq!(body.len(), seed.len());
    for (e, (name, json)) in body.iter().zip(seed) {
        assert_eq!(e.event.as_deref(), Some(name));
        let got: serde_json::Value = serde_json::from_str(&e.data).unwrap();
        let mut want: serde_json::Value = serde_json::from_str(json).unwrap();
        want["type"] = name.into();
        if name == "message_delta" {
            // The real API adds these; the seed leaves them out.
            want["delta"]["stop_sequence"] = serde_json::Value::Null;
            want["usage"] = got["usage"].clone();
        }
        assert_eq!(got, want);
    }
}

#[test]
fn openai_chat_lookup_order() {
    // Piece 2 (the call's first fragment, with its announcement) joins the chunk of piece 1
    // (text): text and a call share a chunk.
    let turn = interleaved(
        lookup_order(0, "call_Qx4471"),
        vec![],
        vec![false, false, true, false, false],
        Ending::Stop(StopReason::ToolCalls),
    );
    let head = r#"{"id":"chatcmpl-…","object":"chat.completion.chunk","created":1754000000,"model":"gpt-4o-2024-08-06","system_fingerprint":"fp_07871e2ad8","#;
    let want = [
        r#""choices":[{"index":0,"delta":{"role":"assistant","content":"Let me pull"},"logprobs":null,"finish_reason":null}]}"#,
        r#""choices":[{"index":0,"delta":{"content":" that up for you.","tool_calls":[{"index":0,"id":"call_Qx4471","type":"function","function":{"name":"lookup_order","arguments":"{\"order_id\": \"A-44"}}]},"logprobs":null,"finish_reason":null}]}"#,
        r#""choices":[{"index":0,"delta":{"tool_calls":[{"index":0,"function":{"arguments":"71\", \"include_line_ite"}}]},"logprobs":null,"finish_reason":null}]}"#,
        r#""choices":[{"index":0,"delta":{"tool_calls":[{"index":0,"function":{"arguments":"ms\": true}"}}]},"logprobs":null,"finish_reason":null}]}"#,
        r#""choices":[{"index":0,"delta":{},"logprobs":null,"finish_reason":"tool_calls"}]}"#,
        r#""choices":[],"usage":{"prompt_tokens":1187,"completion_tokens":25,"total_tokens":1212}}"#,
    ];
    let mut text: String = want.iter().map(|c| format!("data: {head}{c}\n\n")).collect();
    text.push_str("data: [DONE]\n\n");
    assert_eq!(sse(&turn, Dialect::OpenAiChat, &[("chatcmpl-", 29)]), text);
}

#[test]
fn openai_responses_lookup_order() {
    let turn = per_call(lookup_order(1, "call_Qx4471"), Ending::Stop(StopReason::Completed));
    let args = r#"{\"order_id\": \"A-4471\", \"include_line_items\": true}"#;
    let text_item = r#"{"type":"message","id":"msg_…","status":"completed","role":"assistant","content":[{"type":"output_text","annotations":[],"text":"Let me pull that up for you."}]}"#;
    let call_item = format!(
        r#"{{"type":"function_call","id":"fc_…","call_id":"call_Qx4471","name":"lookup_order","arguments":"{args}","status":"completed"}}"#
    );
    let response = |status: &str, output: &str, usage: &str| {
        format!(
            r#"{{"id":"resp_…","object":"response","created_at":1754000000,"status":"{status}","error":null,"incomplete_details":null,"model":"gpt-4.1-2025-04-14","output":[{output}],"parallel_tool_calls":true,"tool_choice":"auto","tools":[],"usage":{usage}}}"#
        )
    };
    let events = [
        ("response.created", format!(r#""response":{}"#, response("in_progress", "", "null"))),
        (
            "response.output_item.added",
            r#""output_index":0,"item":{"type":"message","id":"msg_…","status":"in_progress","role":"assistant","content":[]}"#.into(),
        ),
        (
            "response.content_part.added",
            r#""item_id":"msg_…","output_index":0,"content_index":0,"part":{"type":"output_text","annotations":[],"text":""}"#.into(),
        ),
        (
            "response.output_text.delta",
            r#""item_id":"msg_…","output_index":0,"content_index":0,"delta":"Let me pull","logprobs":[]"#.into(),
        ),
        (
            "response.output_text.delta",
            r#""item_id":"msg_…","output_index":0,"content_index":0,"delta":" that up for you.","logprobs":[]"#.into(),
        ),
        (
            "response.output_text.done",
            r#""item_id":"msg_…","output_index":0,"content_index":0,"text":"Let me pull that up for you.","logprobs":[]"#.into(),
        ),
        (
            "response.content_part.done",
            r#""item_id":"msg_…","output_index":0,"content_index":0,"part":{"type":"output_text","annotations":[],"text":"Let me pull that up for you."}"#.into(),
        ),
        ("response.output_item.done", format!(r#""output_index":0,"item":{text_item}"#)),
        (
            "response.output_item.added",
            r#""output_index":1,"item":{"type":"function_call","id":"fc_…","call_id":"call_Qx4471","name":"lookup_order","arguments":"","status":"in_progress"}"#.into(),
        ),
        ("response.function_call_arguments.delta", r#""item_id":"fc_…","output_index":1,"delta":"{\"order_id\": \"A-44""#.into()),
        ("response.function_call_arguments.delta", r#""item_id":"fc_…","output_index":1,"delta":"71\", \"include_line_ite""#.into()),
        ("response.function_call_arguments.delta", r#""item_id":"fc_…","output_index":1,"delta":"ms\": true}""#.into()),
        (
            "response.function_call_arguments.done",
            format!(r#""item_id":"fc_…","output_index":1,"name":"lookup_order","arguments":"{args}""#),
        ),
        ("response.output_item.done", format!(r#""output_index":1,"item":{call_item}"#)),
        (
            "response.completed",
            format!(
                r#""response":{}"#,
                response(
                    "completed",
                    &format!("{text_item},{call_item}"),
                    r#"{"input_tokens":1187,"output_tokens":25,"total_tokens":1212}"#
                )
            ),
        ),
    ];
    let want: String = events
        .iter()
        .enumerate()
        .map(|(seq, (name, body))| {
            format!("event: {name}\ndata: {{\"type\":\"{name}\",\"sequence_number\":{seq},{body}}}\n\n")
        })
        .collect();
    assert_eq!(sse(&turn, Dialect::OpenAiResponses, &[("resp_", 48), ("msg_", 48), ("fc_", 48)]), want);
}
