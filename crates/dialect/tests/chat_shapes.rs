//! The OpenAI Chat decoder against chunks written by hand in each shape real servers send
//! (docs/SPEC.md §3 and "Server profiles" in §8; /scenario's `PROFILES` cites the servers).
//! Each expectation is what the server meant by its chunks, written from the shape: the
//! calls it made, numbered by announcement (a call's neutral index is its ordinal), and their
//! argument bytes. The decoder is given each profile's quirks in turn and must read the same
//! every time: it reads one rule, never the profile.

mod common;

use common::decode_events;
use toolcert_dialect::{ChatDecoder, Dialect, Quirks};
use toolcert_render::Event;
use toolcert_scenario::StopReason;
use toolcert_sse::SseEvent;
use toolcert_subject::{ErrorClass, TurnError};

/// A chunk with one choice carrying `delta` (JSON) and `finish` (JSON: `null` or a string).
fn chunk(delta: &str, finish: &str) -> SseEvent {
    SseEvent::data(format!(
        r#"{{"id":"chatcmpl-1","object":"chat.completion.chunk","created":1,"model":"m","choices":[{{"index":0,"delta":{delta},"logprobs":null,"finish_reason":{finish}}}]}}"#
    ))
}

/// A chunk carrying tool-call entries (a JSON array's contents).
fn calls(entries: &str) -> SseEvent {
    chunk(&format!(r#"{{"tool_calls":[{entries}]}}"#), "null")
}

fn finish(reason: &str) -> SseEvent {
    chunk("{}", &format!("\"{reason}\""))
}

fn start(index: u32, id: &str, name: &str) -> Event<'static> {
    Event::CallStart { index, call_id: id.to_owned().into(), name: name.to_owned().into() }
}

fn args(index: u32, fragment: &str) -> Event<'static> {
    Event::ArgsDelta { index, fragment: fragment.to_owned().into() }
}

fn stop() -> Event<'static> {
    Event::Stop { reason: StopReason::ToolCalls }
}

/// What the decoder gives for `events`, the same under every openai-chat profile's quirks.
fn read(events: &[SseEvent]) -> Result<Vec<Event<'static>>, TurnError> {
    let plain = decode_events(Dialect::OpenAiChat, Quirks::PLAIN, events);
    for p in Dialect::OpenAiChat.profiles() {
        let got = decode_events(Dialect::OpenAiChat, p.quirks, events);
        assert_eq!(got, plain, "read differently when told the profile is {}", p.name);
    }
    plain
}

fn decoded(events: &[SseEvent]) -> Vec<Event<'static>> {
    read(events).unwrap_or_else(|e| panic!("{e}"))
}

/// DeepSeek, DashScope, GLM: continuations carry `"id": ""` and `"name": ""`; an empty id is
/// no id, and an empty name no new name.
#[test]
fn empty_id_continues_the_call_at_its_index() {
    let got = decoded(&[
        calls(
            r#"{"index":0,"id":"call_a","type":"function","function":{"name":"get_weather","arguments":""}}"#,
        ),
        calls(r#"{"index":0,"id":"","type":"function","function":{"name":"","arguments":"{\"city\": "}}"#),
        calls(r#"{"index":0,"id":"","function":{"name":"","arguments":"\"Paris\"}"}}"#),
        calls(r#"{"index":1,"id":"call_b","type":"function","function":{"name":"get_time","arguments":""}}"#),
        calls(r#"{"index":1,"id":"","function":{"name":"","arguments":"{}"}}"#),
        finish("tool_calls"),
    ]);
    assert_eq!(
        got,
        [
            start(0, "call_a", "get_weather"),
            args(0, "{\"city\": "),
            args(0, "\"Paris\"}"),
            start(1, "call_b", "get_time"),
            args(1, "{}"),
            stop(),
        ]
    );
}

/// Mistral, Gemini's compatible endpoint: entries without `index` (or with `"index": null`);
/// a new id is a new call, and an entry without an id continues the latest call.
#[test]
fn entries_without_an_index_are_told_apart_by_id() {
    let got = decoded(&[
        calls(r#"{"id":"call_a","type":"function","function":{"name":"f","arguments":"{\"x\""}}"#),
        calls(r#"{"function":{"arguments":": 1}"}}"#),
        calls(
            r#"{"index":null,"id":"call_b","type":"function","function":{"name":"g","arguments":"{\"y\": 2}"}}"#,
        ),
        calls(r#"{"index":null,"function":{"arguments":""}}"#),
        finish("tool_calls"),
    ]);
    assert_eq!(
        got,
        [
            start(0, "call_a", "f"),
            args(0, "{\"x\""),
            args(0, ": 1}"),
            start(1, "call_b", "g"),
            args(1, "{\"y\": 2}"),
            args(1, ""),
            stop(),
        ]
    );
}

/// Groq, Mistral, Ollama: each call whole in one entry (id, name and every argument byte), at
/// its own index, or (Ollama, SGLang) at index 0 for every call.
#[test]
fn whole_calls_at_their_own_index_or_all_at_index_zero() {
    for (first, second) in [(0, 1), (0, 0)] {
        let got = decoded(&[
            calls(&format!(
                r#"{{"index":{first},"id":"call_a","type":"function","function":{{"name":"f","arguments":"{{\"x\": 1}}"}}}}"#
            )),
            calls(&format!(
                r#"{{"index":{second},"id":"call_b","type":"function","function":{{"name":"f","arguments":"{{\"x\": 2}}"}}}}"#
            )),
            finish("tool_calls"),
        ]);
        assert_eq!(
            got,
            [
                start(0, "call_a", "f"),
                args(0, "{\"x\": 1}"),
                start(1, "call_b", "f"),
                args(1, "{\"x\": 2}"),
                stop()
            ],
            "indices {first}, {second}"
        );
    }
}

/// Index 0 for every call with id-less continuations: each continues the call announced at
/// index 0 last.
#[test]
fn index_zero_for_every_call_continues_the_latest_there() {
    let got = decoded(&[
        calls(r#"{"index":0,"id":"call_a","type":"function","function":{"name":"f","arguments":"{\"x\""}}"#),
        calls(r#"{"index":0,"function":{"arguments":": 1}"}}"#),
        calls(r#"{"index":0,"id":"call_b","type":"function","function":{"name":"g","arguments":""}}"#),
        calls(r#"{"index":0,"function":{"arguments":"{}"}}"#),
        finish("tool_calls"),
    ]);
    assert_eq!(
        got,
        [
            start(0, "call_a", "f"),
            args(0, "{\"x\""),
            args(0, ": 1}"),
            start(1, "call_b", "g"),
            args(1, "{}"),
            stop()
        ]
    );
}

/// Gateways in front of Anthropic: call indices are content-block positions, the first call
/// at index 1 after a text block, sparse after that. The index is a key, not a position.
#[test]
fn indices_that_are_block_positions_are_keys() {
    let got = decoded(&[
        chunk(r#"{"role":"assistant","content":"Let me check."}"#, "null"),
        calls(r#"{"index":1,"id":"toolu_a","type":"function","function":{"name":"f","arguments":""}}"#),
        calls(r#"{"index":1,"function":{"arguments":"{}"}}"#),
        calls(r#"{"index":3,"id":"toolu_b","type":"function","function":{"name":"g","arguments":"[1"}}"#),
        calls(r#"{"index":1,"function":{"arguments":""}}"#),
        calls(r#"{"index":3,"function":{"arguments":"]"}}"#),
        finish("tool_calls"),
    ]);
    assert_eq!(
        got,
        [
            Event::TextDelta { text: "Let me check.".into() },
            start(0, "toolu_a", "f"),
            args(0, "{}"),
            start(1, "toolu_b", "g"),
            args(1, "[1"),
            args(0, ""),
            args(1, "]"),
            stop(),
        ]
    );
}

/// vLLM (speculative decoding): two entries with one index in one chunk, each repeating id,
/// type and name; MiniMax and some GPT-5 hosts repeat the name on every entry. A repeated id,
/// name or type is the same call, never concatenated.
#[test]
fn two_entries_of_one_index_in_one_chunk_and_repeated_fields() {
    let e = |a: &str| {
        format!(
            r#"{{"index":0,"id":"call_a","type":"function","function":{{"name":"get_weather","arguments":"{a}"}}}}"#
        )
    };
    let got = decoded(&[
        calls(&format!("{},{}", e(r#"{\"ci"#), e(r#"ty\": "#))),
        calls(&e(r#"\"Paris\"}"#)),
        finish("tool_calls"),
    ]);
    assert_eq!(
        got,
        [
            start(0, "call_a", "get_weather"),
            args(0, "{\"ci"),
            args(0, "ty\": "),
            args(0, "\"Paris\"}"),
            stop(),
        ]
    );
}

/// LiteLLM's proxy: the call's id on every entry, its name on the first only.
#[test]
fn the_id_on_every_entry_continues_its_call() {
    let got = decoded(&[
        calls(r#"{"index":0,"id":"call_a","type":"function","function":{"name":"f","arguments":""}}"#),
        calls(r#"{"index":0,"id":"call_a","function":{"arguments":"{\"x\": "}}"#),
        calls(r#"{"index":1,"id":"call_b","type":"function","function":{"name":"g","arguments":"{}"}}"#),
        calls(r#"{"index":0,"id":"call_a","function":{"arguments":"1}"}}"#),
        finish("tool_calls"),
    ]);
    assert_eq!(
        got,
        [
            start(0, "call_a", "f"),
            args(0, "{\"x\": "),
            start(1, "call_b", "g"),
            args(1, "{}"),
            args(0, "1}"),
            stop()
        ]
    );
}

/// OpenRouter, vLLM: the finish chunk repeats every call (id, name, `arguments: ""`) beside
/// `finish_reason`, and a second finish chunk carrying usage follows. The repeats add
/// nothing, and the turn stops once.
#[test]
fn calls_repeated_on_the_finish_chunk_and_a_second_finish_add_nothing() {
    let entries = r#"{"index":0,"id":"call_a","type":"function","function":{"name":"f","arguments":""}},{"index":1,"id":"call_b","type":"function","function":{"name":"g","arguments":""}}"#;
    let got = decoded(&[
        calls(r#"{"index":0,"id":"call_a","type":"function","function":{"name":"f","arguments":"{}"}}"#),
        calls(r#"{"index":1,"id":"call_b","type":"function","function":{"name":"g","arguments":"[]"}}"#),
        chunk(&format!(r#"{{"tool_calls":[{entries}]}}"#), r#""tool_calls""#),
        SseEvent::data(
            r#"{"id":"chatcmpl-1","object":"chat.completion.chunk","choices":[{"index":0,"delta":{},"finish_reason":"tool_calls"}],"usage":{"prompt_tokens":9,"completion_tokens":4,"total_tokens":13}}"#,
        ),
        // Even repeated after the finish, with no argument bytes: nothing.
        calls(entries),
        SseEvent::data("[DONE]"),
    ]);
    assert_eq!(got, [start(0, "call_a", "f"), args(0, "{}"), start(1, "call_b", "g"), args(1, "[]"), stop()]);
}

/// Some OpenAI-compatible hosts: a call's first entry has its id and first argument bytes but
/// no name, which its next entry brings. The call is announced when its name comes, with the
/// bytes held for it; a call after it at another index is not held up.
#[test]
fn a_name_after_the_first_arguments_announces_the_call_then() {
    let got = decoded(&[
        calls(r#"{"index":0,"id":"call_a","type":"function","function":{"arguments":"{\"x\""}}"#),
        calls(r#"{"index":0,"function":{"arguments":": 1"}}"#),
        calls(r#"{"index":0,"function":{"name":"f","arguments":"}"}}"#),
        calls(r#"{"index":1,"id":"call_b","type":"function","function":{"name":"g","arguments":"{}"}}"#),
        finish("tool_calls"),
    ]);
    assert_eq!(
        got,
        [
            start(0, "call_a", "f"),
            args(0, "{\"x\": 1"),
            args(0, "}"),
            start(1, "call_b", "g"),
            args(1, "{}"),
            stop()
        ]
    );
}

/// What stays a fault under every profile reaches the core as one: argument bytes after the
/// finish reason, and an id-less fragment at an index no call holds (or before any call);
/// a new call whose name never comes, and data that is not JSON or has a wrong type, are
/// malformed.
#[test]
fn what_stays_faulty_under_every_profile() {
    let a = r#"{"index":0,"id":"call_a","type":"function","function":{"name":"f","arguments":"{}"}}"#;
    // Argument bytes after the finish: a fragment after the stop, for the core to refuse.
    let got =
        decoded(&[calls(a), finish("tool_calls"), calls(r#"{"index":0,"function":{"arguments":"x"}}"#)]);
    assert_eq!(got, [start(0, "call_a", "f"), args(0, "{}"), stop(), args(0, "x")]);
    // An index no call holds, and an entry with neither index nor id before any call.
    let got = decoded(&[calls(a), calls(r#"{"index":4,"function":{"arguments":"x"}}"#)]);
    assert_eq!(got[2], args(ChatDecoder::NO_CALL, "x"));
    let got = decoded(&[calls(r#"{"function":{"arguments":""}}"#)]);
    assert_eq!(got, [args(ChatDecoder::NO_CALL, "")]);
    // A new id at an occupied index is a new call; its name may come late, but one that
    // never comes before the finish reason leaves a call no one can run.
    for nameless in [
        r#"{"index":0,"id":"call_b","type":"function","function":{"arguments":""}}"#,
        r#"{"index":0,"id":"call_b","type":"function","function":{"name":"","arguments":"{}"}}"#,
    ] {
        let err = read(&[calls(a), calls(nameless), finish("tool_calls")]).unwrap_err();
        assert_eq!(err.class, ErrorClass::Malformed);
        assert!(err.detail.contains("call_b") && err.detail.contains("function.name"), "{err}");
    }
    for bad in [r#"{"index":0,"function":{"arguments":42}}"#, r#"{"index":"0","function":{"arguments":"x"}}"#]
    {
        assert_eq!(read(&[calls(a), calls(bad)]).unwrap_err().class, ErrorClass::Malformed, "{bad}");
    }
    assert_eq!(read(&[calls(a), SseEvent::data("{not json")]).unwrap_err().class, ErrorClass::Malformed);
}

/// A known id continues its call wherever its entry says it is: calls are told apart by id
/// first, so no two calls ever share one (outcomes are matched by id).
#[test]
fn a_known_id_is_its_call_at_any_index() {
    let got = decoded(&[
        calls(r#"{"index":0,"id":"call_a","type":"function","function":{"name":"f","arguments":"{"}}"#),
        calls(r#"{"index":0,"id":"call_b","type":"function","function":{"name":"g","arguments":"["}}"#),
        calls(r#"{"index":0,"id":"call_a","type":"function","function":{"name":"f","arguments":"}"}}"#),
        // The id-less entry at index 0 still continues the call announced there last.
        calls(r#"{"index":0,"function":{"arguments":"]"}}"#),
    ]);
    assert_eq!(
        got,
        [
            start(0, "call_a", "f"),
            args(0, "{"),
            start(1, "call_b", "g"),
            args(1, "["),
            args(0, "}"),
            args(1, "]")
        ]
    );
}
