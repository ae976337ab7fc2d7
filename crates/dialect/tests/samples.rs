//! Recorded-style streams in `tests/data/`, written as the providers document them (real id
//! shapes, usage, envelope events the renderer does not produce): SSE-decode each file,
//! detect its dialect, dialect-decode it, and check the calls that come out. The same bytes
//! cut into 7-byte chunks must give the same events.

mod common;

use std::borrow::Cow;

use toolcert_dialect::{decoder, detect, Dialect, Quirks};
use toolcert_render::Event;
use toolcert_scenario::StopReason;
use toolcert_sse::{Decoder, SseEvent};
use toolcert_subject::WireMessage;

fn sse(bytes: &[u8], chunk: usize) -> Vec<SseEvent> {
    let mut d = Decoder::new();
    let mut out = Vec::new();
    for c in bytes.chunks(chunk) {
        d.feed(c, &mut out).unwrap();
    }
    d.finish(&mut out).unwrap();
    out
}

/// A call as the stream delivered it: index, id, name, arguments joined, whether it stopped.
#[derive(Debug, PartialEq)]
struct Got {
    index: u32,
    id: String,
    name: String,
    args: String,
    done: Option<String>,
    stopped: bool,
}

struct Summary {
    calls: Vec<Got>,
    text: String,
    stop: Option<StopReason>,
    pings: usize,
}

fn summarise(events: &[Event<'static>]) -> Summary {
    let mut s = Summary { calls: Vec::new(), text: String::new(), stop: None, pings: 0 };
    for e in events {
        match e {
            Event::TextDelta { text } => s.text.push_str(text),
            Event::CallStart { index, call_id, name } => s.calls.push(Got {
                index: *index,
                id: call_id.to_string(),
                name: name.to_string(),
                args: String::new(),
                done: None,
                stopped: false,
            }),
            Event::ArgsDelta { index, fragment } => {
                let c = s.calls.iter_mut().rev().find(|c| c.index == *index).expect("announced");
                assert!(!c.stopped, "fragment after stop");
                c.args.push_str(fragment);
            }
            Event::CallStop { index, arguments } => {
                let c = s.calls.iter_mut().rev().find(|c| c.index == *index).expect("announced");
                c.stopped = true;
                c.done = arguments.as_ref().map(Cow::to_string);
            }
            Event::Stop { reason } => s.stop = Some(*reason),
            Event::Ping => s.pings += 1,
            Event::Error { message } => panic!("error event: {message}"),
            // Thinking, server tools, refusals: neither calls nor text.
            Event::ForeignStart { .. } | Event::ForeignDelta { .. } | Event::ForeignStop { .. } => {}
        }
    }
    s
}

fn load(file: &str, dialect: Dialect) -> Summary {
    let path = format!("{}/tests/data/{file}", env!("CARGO_MANIFEST_DIR"));
    let bytes = std::fs::read(&path).unwrap();
    let events = sse(&bytes, bytes.len());
    assert_eq!(sse(&bytes, 7), events, "chunking changed the SSE events of {file}");
    let events: Vec<WireMessage> = events.into_iter().map(WireMessage::Sse).collect();
    assert_eq!(detect(&events), Some(dialect), "{file}");
    let mut d = decoder(dialect, Quirks::default());
    let mut out = Vec::new();
    for e in &events {
        d.decode(e, &mut out).unwrap_or_else(|err| panic!("{file}: {e:?}: {err}"));
    }
    summarise(&out)
}

const REFUNDED: &str = r#"{"status": "refunded", "from": "2025-03-01", "to": "2025-03-31"}"#;
const OPEN: &str = r#"{"status": "open", "from": "2025-03-01", "to": "2025-03-31"}"#;

#[test]
fn anthropic_sample() {
    let s = load("anthropic.sse", Dialect::Anthropic);
    assert_eq!(s.text, "I'll look up both — the refunded and the open orders from March.");
    let calls: Vec<(u32, &str, &str, &str, bool)> =
        s.calls.iter().map(|c| (c.index, &*c.id, &*c.name, &*c.args, c.stopped)).collect();
    assert_eq!(
        calls,
        [
            (1, "toolu_01Ka8fWqKz2TbN4xQ1v7sEuR", "search_orders", REFUNDED, true),
            (2, "toolu_01MbC3yHn6pLd9GvR2wX5tJk", "search_orders", OPEN, true),
        ]
    );
    assert_eq!(s.stop, Some(StopReason::ToolUse));
    assert_eq!(s.pings, 1);
}

#[test]
fn openai_chat_sample() {
    let s = load("openai-chat.sse", Dialect::OpenAiChat);
    assert_eq!(s.text, "");
    let calls: Vec<(u32, &str, &str, &str)> =
        s.calls.iter().map(|c| (c.index, &*c.id, &*c.name, &*c.args)).collect();
    assert_eq!(
        calls,
        [
            (0, "call_8Hs1qkX2Lz0aRt9BcV3mNwYe", "search_orders", REFUNDED),
            (1, "call_9Jt2pLm4Qx7bYc1DfG5hKsUo", "search_orders", OPEN),
        ]
    );
    // No per-call terminal in Chat: the finish reason ends both.
    assert!(s.calls.iter().all(|c| !c.stopped));
    assert_eq!(s.stop, Some(StopReason::ToolCalls));
}

#[test]
fn openai_responses_sample() {
    let s = load("openai-responses.sse", Dialect::OpenAiResponses);
    let compact = |v: &str| v.replace(": ", ":").replace(", ", ",");
    let calls: Vec<(u32, &str, &str, &str, Option<&str>)> =
        s.calls.iter().map(|c| (c.index, &*c.id, &*c.name, &*c.args, c.done.as_deref())).collect();
    let (refunded, open) = (compact(REFUNDED), compact(OPEN));
    assert_eq!(
        calls,
        [
            (0, "call_Kf3sN8vQ2mT6xR1pW9bY4hLc", "search_orders", &*refunded, Some(&*refunded)),
            (1, "call_Vd7gH2jK5nP8rT0wZ3xC6bM1", "search_orders", &*open, Some(&*open)),
        ]
    );
    assert_eq!(s.stop, Some(StopReason::Completed));
    // `response.in_progress` carries nothing new: a keep-alive.
    assert_eq!(s.pings, 1);
}

#[test]
fn detect_needs_a_telling_event() {
    let det = |events: &[SseEvent]| detect(&events.iter().cloned().map(WireMessage::Sse).collect::<Vec<_>>());
    assert_eq!(det(&[]), None);
    assert_eq!(det(&[SseEvent::named("ping", r#"{"type":"ping"}"#)]), None);
    assert_eq!(det(&[SseEvent::data("[DONE]")]), Some(Dialect::OpenAiChat));
    assert_eq!(det(&[SseEvent::data(r#"{"type":"message_start","message":{}}"#)]), Some(Dialect::Anthropic));
    assert_eq!(
        det(&[SseEvent::data(r#"{"type":"response.created","sequence_number":0}"#)]),
        Some(Dialect::OpenAiResponses)
    );
    assert_eq!(
        det(&[SseEvent::data("not json"), SseEvent::data(r#"{"choices":[]}"#)]),
        Some(Dialect::OpenAiChat)
    );
}

#[test]
fn dialect_names() {
    for d in Dialect::ALL {
        assert_eq!(d.to_string().parse::<Dialect>().unwrap(), d);
        assert_eq!(serde_json::to_string(&d).unwrap(), format!("\"{d}\""));
    }
    let e = "openai".parse::<Dialect>().unwrap_err();
    assert_eq!(
        e.to_string(),
        "unknown dialect `openai` (expected anthropic, openai-chat, openai-responses, bedrock or gemini)"
    );
}
