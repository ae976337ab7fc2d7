//! The real shapes of the Anthropic and Responses server profiles (docs/SPEC.md, "Server
//! profiles"), written by hand as the servers send them, read by the one decoder of each
//! dialect. Each expectation is derived from the shape itself (the input or the arguments as
//! written in the event), never from what the decoder gave; then the profiles' rendered
//! streams round trip, up to the fragment boundaries a whole call cannot keep.

mod common;

use std::borrow::Cow;

use common::*;
use toolcert_dialect::{Dialect, Quirks};
use toolcert_render::{render, Event};
use toolcert_scenario::{Ending, Fault, FaultKind, StopReason, StreamEnd, Transport, Turn};
use toolcert_sse::SseEvent;
use toolcert_subject::ErrorClass;

fn sse(name: &str, data: &str) -> SseEvent {
    SseEvent::named(name, data)
}

fn decode(dialect: Dialect, events: &[SseEvent]) -> Result<Vec<Event<'static>>, toolcert_subject::TurnError> {
    decode_events(dialect, Quirks::PLAIN, events)
}

fn start(index: u32, name: &str, id: &str) -> Event<'static> {
    Event::CallStart { index, call_id: Cow::Owned(id.into()), name: Cow::Owned(name.into()) }
}

fn args(index: u32, fragment: &str) -> Event<'static> {
    Event::ArgsDelta { index, fragment: Cow::Owned(fragment.into()) }
}

fn stop(index: u32) -> Event<'static> {
    Event::CallStop { index, arguments: None }
}

fn done(index: u32, arguments: &str) -> Event<'static> {
    Event::CallStop { index, arguments: Some(Cow::Owned(arguments.into())) }
}

// ---------------------------------------------------------------------------------------
// Anthropic.

/// A `tool_use` start with the `input` as the server sent it.
fn tool_use_start(index: u32, id: &str, input: &str) -> SseEvent {
    sse(
        "content_block_start",
        &format!(
            r#"{{"type":"content_block_start","index":{index},"content_block":{{"type":"tool_use","id":"{id}","name":"get_weather","input":{input}}}}}"#
        ),
    )
}

fn json_delta(index: u32, partial: &str) -> SseEvent {
    let delta = serde_json::json!({
        "type": "content_block_delta", "index": index,
        "delta": { "type": "input_json_delta", "partial_json": partial },
    });
    sse("content_block_delta", &delta.to_string())
}

fn block_stop(index: u32) -> SseEvent {
    sse("content_block_stop", &format!(r#"{{"type":"content_block_stop","index":{index}}}"#))
}

fn message_start(content: &str) -> SseEvent {
    sse(
        "message_start",
        &format!(
            r#"{{"type":"message_start","message":{{"id":"msg_01","type":"message","role":"assistant","model":"claude","content":{content},"stop_reason":null,"stop_sequence":null,"usage":{{"input_tokens":10,"output_tokens":1}}}}}}"#
        ),
    )
}

fn message_end() -> [SseEvent; 2] {
    [
        sse(
            "message_delta",
            r#"{"type":"message_delta","delta":{"stop_reason":"tool_use","stop_sequence":null},"usage":{"output_tokens":20}}"#,
        ),
        sse("message_stop", r#"{"type":"message_stop"}"#),
    ]
}

/// A `tool_use` whose `input` arrives whole in `content_block_start`, no delta after it: the
/// input's text, exactly as sent (spacing, number spellings, escapes), is the call's one
/// fragment; before this profile, the call was dispatched as `{}`.
#[test]
fn anthropic_input_whole_in_start_is_the_calls_arguments() {
    let input =
        r#"{"city": "Paris",  "days": 1.50, "id": 123456789012345678901234567890, "note": "caf\u00e9"}"#;
    let mut events = vec![message_start("[]"), tool_use_start(0, "toolu_01A", input), block_stop(0)];
    events.extend(message_end());
    let got = decode(Dialect::Anthropic, &events).unwrap();
    let want = [
        start(0, "get_weather", "toolu_01A"),
        args(0, input),
        stop(0),
        Event::Stop { reason: StopReason::ToolUse },
    ];
    assert_eq!(got, want);
}

/// `input: {}` then deltas is the provider's own shape; `{}` with no delta (or `null`, or no
/// `input`) is a call with no argument bytes.
#[test]
fn anthropic_empty_input_is_no_argument_bytes() {
    let events = [
        tool_use_start(0, "toolu_01A", "{}"),
        json_delta(0, r#"{"city": "#),
        json_delta(0, r#""Oslo"}"#),
        block_stop(0),
        tool_use_start(1, "toolu_01B", "{ }"),
        block_stop(1),
        tool_use_start(2, "toolu_01C", "null"),
        block_stop(2),
    ];
    let got = decode(Dialect::Anthropic, &events).unwrap();
    let want = [
        start(0, "get_weather", "toolu_01A"),
        args(0, r#"{"city": "#),
        args(0, r#""Oslo"}"#),
        stop(0),
        start(1, "get_weather", "toolu_01B"),
        stop(1),
        start(2, "get_weather", "toolu_01C"),
        stop(2),
    ];
    assert_eq!(got, want);
}

/// A whole input and then a delta that adds to it: no server does it, and the client cannot
/// know whether the delta continues, repeats or replaces the input. The turn fails as
/// malformed (nothing dispatched); an empty delta adds nothing and is no fault, and a delta
/// after the call's stop is a fragment after stop, the core's to report.
#[test]
fn anthropic_delta_after_a_whole_input_fails_the_turn() {
    let input = r#"{"city":"Paris"}"#;
    let err =
        decode(Dialect::Anthropic, &[tool_use_start(3, "toolu_01A", input), json_delta(3, "}")]).unwrap_err();
    assert_eq!(err.class, ErrorClass::Malformed, "{err}");
    assert!(err.detail.contains("index 3"), "{err}");
    let got = decode(
        Dialect::Anthropic,
        &[tool_use_start(3, "toolu_01A", input), json_delta(3, ""), block_stop(3), json_delta(3, "x")],
    )
    .unwrap();
    assert_eq!(got, [start(3, "get_weather", "toolu_01A"), args(3, input), stop(3), args(3, "x")]);
}

/// Programmatic tool calling: `message_start`'s message already holds complete blocks. Each
/// `tool_use` is a whole call (announced, its input as one fragment, stopped), each text
/// block its text, in order; the `content_block_*` events after them number their blocks
/// on from there, and a delta for a call of `message_start` comes after that call's stop.
#[test]
fn anthropic_blocks_in_message_start_come_first_in_order() {
    let content = r#"[
        {"type": "text", "text": "I'll check both."},
        {"type": "tool_use", "id": "toolu_01A", "name": "get_weather", "input": {"city": "Paris", "n": 1E+2}},
        {"type": "server_tool_use", "id": "srvtoolu_01", "name": "web_search", "input": {"query": "x"}},
        {"type": "tool_use", "id": "toolu_01B", "name": "get_time", "input": {}},
        {"type": "container_upload", "file_id": 42, "input": [1, 2]}
    ]"#;
    let later = sse(
        "content_block_start",
        r#"{"type":"content_block_start","index":5,"content_block":{"type":"tool_use","id":"toolu_01C","name":"get_weather","input":{}}}"#,
    );
    let mut events = vec![
        message_start(content),
        later,
        json_delta(5, r#"{"city": "Rome"}"#),
        block_stop(5),
        json_delta(1, "x"),
    ];
    events.extend(message_end());
    let got = decode(Dialect::Anthropic, &events).unwrap();
    let want = vec![
        Event::TextDelta { text: Cow::Borrowed("I'll check both.") },
        start(1, "get_weather", "toolu_01A"),
        args(1, r#"{"city": "Paris", "n": 1E+2}"#),
        stop(1),
        Event::ForeignStart {
            index: 2,
            kind: toolcert_scenario::ForeignKind::ServerToolUse,
            id: Cow::Borrowed("srvtoolu_01"),
            name: Cow::Borrowed("web_search"),
            content: Cow::Borrowed(""),
        },
        Event::ForeignStop { index: 2 },
        start(3, "get_time", "toolu_01B"),
        stop(3),
        start(5, "get_weather", "toolu_01C"),
        args(5, r#"{"city": "Rome"}"#),
        stop(5),
        args(1, "x"),
        Event::Stop { reason: StopReason::ToolUse },
    ];
    assert_eq!(got, want);
    // A known block that cannot be read fails the turn as malformed, as its own
    // `content_block_start` would.
    let err = decode(Dialect::Anthropic, &[message_start(r#"[{"type":"tool_use","name":"f","input":{}}]"#)]);
    assert_eq!(err.unwrap_err().class, ErrorClass::Malformed);
    let err = decode(Dialect::Anthropic, &[message_start(r#"{"type":"text"}"#)]).unwrap_err();
    assert!(err.detail.contains("message_start"), "{err}");
}

// ---------------------------------------------------------------------------------------
// Responses.

fn item(name: &str, seq: u32, index: u32, item: serde_json::Value) -> SseEvent {
    let body =
        serde_json::json!({ "type": name, "sequence_number": seq, "output_index": index, "item": item });
    sse(name, &body.to_string())
}

fn call_item(item_id: &str, arguments: &str, status: &str) -> serde_json::Value {
    serde_json::json!({
        "type": "function_call", "id": item_id, "call_id": "call_01A", "name": "get_weather",
        "arguments": arguments, "status": status,
    })
}

fn in_call(name: &str, seq: u32, item_id: &str, index: u32, field: &str, value: &str) -> SseEvent {
    let mut body = serde_json::json!({ "type": name, "sequence_number": seq, "item_id": item_id, "output_index": index });
    body[field] = serde_json::json!(value);
    sse(name, &body.to_string())
}

fn completed(seq: u32) -> SseEvent {
    let body = serde_json::json!({
        "type": "response.completed", "sequence_number": seq,
        "response": { "id": "resp_1", "status": "completed", "output": [] },
    });
    sse("response.completed", &body.to_string())
}

/// A hosted tool's item (`tool_search_call`, whose `arguments` is an object) beside the
/// client's function call: never a call and never a failure, whatever its fields hold; the
/// function call is read as ever.
#[test]
fn responses_hosted_item_with_object_arguments_is_skipped() {
    let hosted = serde_json::json!({
        "type": "tool_search_call", "id": "tsc_1", "call_id": null, "execution": "server",
        "status": "completed", "arguments": { "query": "crm", "limit": 5 },
    });
    let odd = serde_json::json!({ "type": "mcp_call", "id": 7, "name": ["x"], "arguments": 42 });
    let a = r#"{"city": "Oslo"}"#;
    let events = [
        item("response.output_item.added", 0, 0, hosted.clone()),
        item("response.output_item.done", 1, 0, hosted),
        item("response.output_item.added", 2, 1, odd.clone()),
        item("response.output_item.done", 3, 1, odd),
        item("response.output_item.added", 4, 2, call_item("fc_1", "", "in_progress")),
        in_call("response.function_call_arguments.delta", 5, "fc_1", 2, "delta", a),
        in_call("response.function_call_arguments.done", 6, "fc_1", 2, "arguments", a),
        item("response.output_item.done", 7, 2, call_item("fc_1", a, "completed")),
        completed(8),
    ];
    let got = decode(Dialect::OpenAiResponses, &events).unwrap();
    let want = [
        start(2, "get_weather", "call_01A"),
        args(2, a),
        done(2, a),
        Event::Stop { reason: StopReason::Completed },
    ];
    assert_eq!(got, want);
    // A function call's own item is still read strictly: object arguments are malformed.
    let bad = serde_json::json!({ "type": "function_call", "id": "fc_1", "call_id": "c", "name": "f", "arguments": {} });
    let err = decode(Dialect::OpenAiResponses, &[item("response.output_item.added", 0, 0, bad)]).unwrap_err();
    assert_eq!(err.class, ErrorClass::Malformed, "{err}");
}

/// LM Studio: no delta, a call's arguments only in `function_call_arguments.done`: the done's
/// arguments are the call's one fragment, and the `output_item.done` that repeats them agrees.
/// A call closed by its `output_item.done` alone, with no delta, reads the same way.
#[test]
fn responses_done_without_deltas_carries_the_arguments() {
    let a = r#"{"city": "Oslo", "days": 3}"#;
    let events = [
        item("response.output_item.added", 0, 0, call_item("fc_1", "", "in_progress")),
        in_call("response.function_call_arguments.done", 1, "fc_1", 0, "arguments", a),
        item("response.output_item.done", 2, 0, call_item("fc_1", a, "completed")),
        item("response.output_item.added", 3, 1, call_item("fc_2", "", "in_progress")),
        item("response.output_item.done", 4, 1, call_item("fc_2", a, "completed")),
        completed(5),
    ];
    let got = decode(Dialect::OpenAiResponses, &events).unwrap();
    let want = [
        start(0, "get_weather", "call_01A"),
        args(0, a),
        done(0, a),
        start(1, "get_weather", "call_01A"),
        args(1, a),
        done(1, a),
        Event::Stop { reason: StopReason::Completed },
    ];
    assert_eq!(got, want);
    // The item's repeat must still agree with the `done`.
    let other = r#"{"city": "Rome"}"#;
    let err = decode(
        Dialect::OpenAiResponses,
        &[
            item("response.output_item.added", 0, 0, call_item("fc_1", "", "in_progress")),
            in_call("response.function_call_arguments.done", 1, "fc_1", 0, "arguments", a),
            item("response.output_item.done", 2, 0, call_item("fc_1", other, "completed")),
        ],
    )
    .unwrap_err();
    assert_eq!(err.class, ErrorClass::DoneMismatch, "{err}");
}

/// With deltas, a `done` repeats them: it goes to the core with its arguments, which the
/// core compares with the fragments (a mismatch stays a fault when deltas came, even an
/// empty one).
#[test]
fn responses_done_after_deltas_is_a_repeat() {
    for (delta, said) in [(r#"{"a": 1}"#, r#"{"a": 2}"#), ("", r#"{"a": 2}"#)] {
        let events = [
            item("response.output_item.added", 0, 0, call_item("fc_1", "", "in_progress")),
            in_call("response.function_call_arguments.delta", 1, "fc_1", 0, "delta", delta),
            in_call("response.function_call_arguments.done", 2, "fc_1", 0, "arguments", said),
        ];
        let got = decode(Dialect::OpenAiResponses, &events).unwrap();
        assert_eq!(got, [start(0, "get_weather", "call_01A"), args(0, delta), done(0, said)]);
    }
}

/// A Copilot gateway names a call with a new `item_id` on every event, its `output_index`
/// stable: read exactly as the same stream with one `item_id`, since calls are keyed by
/// `output_index`; a second announcement at the index is still a replay for the core.
#[test]
fn responses_rotating_item_id_reads_as_a_stable_one() {
    let a = [r#"{"city": "#, r#""Oslo"}"#];
    let stream = |ids: [&str; 5]| {
        vec![
            item("response.output_item.added", 0, 0, call_item(ids[0], "", "in_progress")),
            in_call("response.function_call_arguments.delta", 1, ids[1], 0, "delta", a[0]),
            in_call("response.function_call_arguments.delta", 2, ids[2], 0, "delta", a[1]),
            in_call("response.function_call_arguments.done", 3, ids[3], 0, "arguments", &a.concat()),
            item("response.output_item.done", 4, 0, call_item(ids[4], &a.concat(), "completed")),
            completed(5),
        ]
    };
    let stable = decode(Dialect::OpenAiResponses, &stream(["fc_1"; 5])).unwrap();
    let rotating =
        decode(Dialect::OpenAiResponses, &stream(["fc_a", "fc_b", "fc_c", "fc_d", "fc_e"])).unwrap();
    assert_eq!(rotating, stable);
    assert_eq!(
        stable,
        [
            start(0, "get_weather", "call_01A"),
            args(0, a[0]),
            args(0, a[1]),
            done(0, &a.concat()),
            Event::Stop { reason: StopReason::Completed },
        ]
    );
    let replay = [
        item("response.output_item.added", 0, 0, call_item("fc_a", "", "in_progress")),
        item("response.output_item.added", 1, 0, call_item("fc_b", "", "in_progress")),
    ];
    let got = decode(Dialect::OpenAiResponses, &replay).unwrap();
    assert_eq!(got, [start(0, "get_weather", "call_01A"), start(0, "get_weather", "call_01A")]);
}

// ---------------------------------------------------------------------------------------
// The profiles' rendered streams round trip.

fn profile(dialect: Dialect, name: &str) -> Quirks {
    dialect.profile(name).unwrap_or_else(|| panic!("{dialect} has a profile {name}")).quirks
}

/// Text, calls with object arguments in several fragments, a call with no argument bytes, a
/// call whose arguments are no object, text after: every profile of both dialects, at every
/// cut and with faults and pings.
#[test]
fn every_per_call_profile_round_trips_at_every_cut() {
    let blocks = || {
        vec![
            text(&["Let me ", "check."]),
            call(1, "call_A", "get_weather", &[r#"{"city": "#, r#""Oslo", "n": 1E+2}"#]),
            call(2, "call_B", "ping", &[]),
            call(3, "call_C", "echo", &["[1, ", "2]"]),
            call(4, "call_D", "get_weather", &[r#"{"city":"#, "", r#""Rome"}"#]),
            text(&["Done."]),
        ]
    };
    for (dialect, reason) in
        [(Dialect::Anthropic, StopReason::ToolUse), (Dialect::OpenAiResponses, StopReason::Completed)]
    {
        let base = per_call(blocks(), Ending::Stop(reason));
        let n = render(&base).events.len() as u32;
        for p in dialect.profiles() {
            let wire = profile_round_trip(&base, dialect, p.quirks);
            assert!(!wire.events.is_empty());
            for after in 0..=n {
                let cut =
                    Turn { ending: Ending::Abandoned { after, end: StreamEnd::Disconnect }, ..base.clone() };
                profile_round_trip(&cut, dialect, p.quirks);
                let errored =
                    Turn { ending: Ending::Errored { after, message: "Overloaded".into() }, ..base.clone() };
                profile_round_trip(&errored, dialect, p.quirks);
            }
            for pings in [vec![0], vec![2, 3], vec![5, 9, 40]] {
                profile_round_trip(&Turn { pings, ..base.clone() }, dialect, p.quirks);
            }
            for fault in [
                FaultKind::ReplayAnnouncement { call: 0 },
                FaultKind::FragmentAfterStop { call: 1, fragment: "}".into() },
                FaultKind::UnannouncedFragment { missing_index: false, fragment: "{".into() },
            ] {
                for at in [0, 3, 8] {
                    let t = Turn { faults: vec![Fault { kind: fault.clone(), at }], ..base.clone() };
                    profile_round_trip(&t, dialect, p.quirks);
                }
            }
        }
    }
}

/// What each profile puts where, on that turn.
#[test]
fn each_profile_sends_its_shape() {
    let t = per_call(
        vec![
            call(0, "call_A", "get_weather", &[r#"{"city": "#, r#""Oslo"}"#]),
            text(&["and "]),
            call(2, "call_B", "echo", &["[1]"]),
        ],
        Ending::Stop(StopReason::ToolUse),
    );
    let data = |w: &toolcert_dialect::SseStream, name: &str| -> Vec<serde_json::Value> {
        w.events
            .iter()
            .filter(|e| e.event.as_deref() == Some(name))
            .map(|e| serde_json::from_str(&e.data).unwrap())
            .collect()
    };
    // The whole input in the start, as the model wrote it, and no delta; the array call as
    // deltas.
    let w = profile_round_trip(&t, Dialect::Anthropic, profile(Dialect::Anthropic, "input-in-start"));
    let starts = data(&w, "content_block_start");
    assert!(w.events[1].data.contains(r#""input":{"city": "Oslo"}}"#), "{:?}", w.events[1]);
    assert_eq!(starts.last().unwrap()["content_block"]["input"], serde_json::json!({}));
    let deltas = data(&w, "content_block_delta");
    assert!(deltas.iter().all(|d| d["index"] != 0), "{deltas:?}");
    assert!(deltas.iter().any(|d| d["delta"]["partial_json"] == "[1]"), "{deltas:?}");
    // The leading complete call in `message_start`, the rest after it.
    let w = profile_round_trip(&t, Dialect::Anthropic, profile(Dialect::Anthropic, "content-in-start"));
    let content = &data(&w, "message_start")[0]["message"]["content"];
    assert_eq!(content.as_array().unwrap().len(), 1, "{content}");
    assert_eq!(content[0]["input"], serde_json::json!({"city": "Oslo"}));
    assert_eq!(w.upto[0], 4, "message_start completes the first call's events");
    assert!(data(&w, "content_block_start").iter().all(|s| s["index"] != 0));
    let t = Turn { ending: Ending::Stop(StopReason::Completed), ..t };
    // No delta, the arguments in `done`.
    let w = profile_round_trip(&t, Dialect::OpenAiResponses, profile(Dialect::OpenAiResponses, "lmstudio"));
    assert!(data(&w, "response.function_call_arguments.delta").is_empty());
    let dones = data(&w, "response.function_call_arguments.done");
    assert_eq!(dones[0]["arguments"], r#"{"city": "Oslo"}"#);
    // Every event of a call names it anew.
    let w = profile_round_trip(&t, Dialect::OpenAiResponses, profile(Dialect::OpenAiResponses, "copilot"));
    let mut ids: Vec<String> = w
        .events
        .iter()
        .filter_map(|e| serde_json::from_str::<serde_json::Value>(&e.data).ok())
        .filter(|v| v["output_index"] == 0)
        .filter_map(|v| v["item_id"].as_str().or(v["item"]["id"].as_str()).map(str::to_owned))
        .collect();
    let n = ids.len();
    ids.sort();
    ids.dedup();
    assert!(n >= 4 && ids.len() == n, "{n} events, {} ids", ids.len());
    // A hosted item with object arguments beside the calls, at an index of its own.
    let w =
        profile_round_trip(&t, Dialect::OpenAiResponses, profile(Dialect::OpenAiResponses, "hosted-tools"));
    let added = data(&w, "response.output_item.added");
    let hosted: Vec<_> = added.iter().filter(|a| a["item"]["type"] == "tool_search_call").collect();
    assert_eq!(hosted.len(), 1);
    assert!(hosted[0]["item"]["arguments"].is_object());
    assert!(added.iter().filter(|a| *a != hosted[0]).all(|a| a["output_index"] != hosted[0]["output_index"]));
}

/// A call the profile cannot send whole goes as the provider's own stream sends it: a pretty
/// document (its line breaks would not come back as written), a transport that re-indents
/// multi-line data, an empty object, a done mismatch (it needs deltas to contradict).
#[test]
fn calls_a_profile_cannot_send_whole_go_as_deltas() {
    let input_in_start = profile(Dialect::Anthropic, "input-in-start");
    let whole_starts = |t: &Turn| {
        let w = profile_round_trip(t, Dialect::Anthropic, input_in_start);
        w.events
            .iter()
            .filter(|e| e.event.as_deref() == Some("content_block_start"))
            .filter(|e| !e.data.contains(r#""input":{}"#))
            .count()
    };
    let one = |args: &[&str]| per_call(vec![call(0, "c", "f", args)], Ending::Stop(StopReason::ToolUse));
    assert_eq!(whole_starts(&one(&["{\"a\":", " 1}"])), 1);
    for args in [&["{\n  \"a\": 1\n}"][..], &["{}"], &[" {\"a\": 1}"], &["{\"a\": 1"]] {
        assert_eq!(whole_starts(&one(args)), 0, "{args:?}");
    }
    let multiline =
        Turn { transport: Transport { multiline: vec![3], ..Default::default() }, ..one(&["{\"a\": 1}"]) };
    assert_eq!(whole_starts(&multiline), 0);
    let mut t = per_call(
        vec![call(0, "c", "f", &["{\"a\": 1}"]), call(1, "d", "f", &[])],
        Ending::Stop(StopReason::Completed),
    );
    t.faults = vec![
        Fault { kind: FaultKind::DoneMismatch { call: 0, arguments: "{\"a\": 2}".into() }, at: 0 },
        Fault { kind: FaultKind::DoneMismatch { call: 1, arguments: "{\"b\": 2}".into() }, at: 0 },
    ];
    let w =
        render_wire(&t, &render(&t), Dialect::OpenAiResponses, profile(Dialect::OpenAiResponses, "lmstudio"))
            .unwrap();
    let deltas: Vec<&str> = w
        .events
        .iter()
        .filter(|e| e.event.as_deref() == Some("response.function_call_arguments.delta"))
        .map(|e| e.data.as_str())
        .collect();
    // The first call's delta, and an empty one for the call with no argument bytes.
    assert_eq!(deltas.len(), 2, "{deltas:?}");
    assert!(deltas[1].contains(r#""delta":"""#), "{deltas:?}");
}
