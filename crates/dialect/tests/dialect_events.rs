//! The dialect events (`WireEvents`) as the wire renders them and the decoders read them:
//! units that carry nothing decode to nothing, a call sent as its `output_item.done` alone
//! decodes to the call, and a `done` that contradicts the deltas is refused.

mod common;

use common::{call, decode_checked, decode_events, expected, interleaved, per_call, render_wire, text};
use toolcert_dialect::{Dialect, Quirks};
use toolcert_render::{render, Event};
use toolcert_scenario::{
    Ending, Fault, FaultKind, MismatchIn, StopReason, StreamEnd, Turn, Unknown, UnknownKind,
};
use toolcert_subject::ErrorClass;

fn two_calls(ending: Ending) -> Turn {
    per_call(
        vec![
            text(&["Checking."]),
            call(1, "call_A", "lookup_order", &[r#"{"order_id": "#, r#""A-1"}"#]),
            call(2, "call_B", "lookup_order", &[r#"{"order_id": "#, r#""A-2"}"#]),
        ],
        ending,
    )
}

fn wire(turn: &Turn, dialect: Dialect) -> toolcert_dialect::SseStream {
    render_wire(turn, &render(turn), dialect, Quirks::default()).unwrap()
}

#[test]
fn a_call_sent_only_as_its_output_item_done_decodes_to_the_call() {
    let mut t = two_calls(Ending::Stop(StopReason::Completed));
    t.wire.item_done_only = vec![1];
    let w = wire(&t, Dialect::OpenAiResponses);
    let names: Vec<&str> = w.events.iter().filter_map(|e| e.event.as_deref()).collect();
    let added = names.iter().filter(|n| **n == "response.output_item.added").count();
    let deltas = names.iter().filter(|n| **n == "response.function_call_arguments.delta").count();
    // The text and the first call are announced; the second call is not, nor its deltas.
    assert_eq!((added, deltas), (2, 2), "{names:?}");
    for (k, e) in w.events.iter().enumerate() {
        let v: serde_json::Value = serde_json::from_str(&e.data).unwrap();
        assert_eq!(v["sequence_number"], k as u64, "sequence numbers count up from 0");
    }
    let out = decode_events(Dialect::OpenAiResponses, Quirks::default(), &w.events).unwrap();
    let of_2 = |e: &&Event<'_>| match e {
        Event::CallStart { index, .. } | Event::ArgsDelta { index, .. } | Event::CallStop { index, .. } => {
            *index == 2
        }
        _ => false,
    };
    let second: Vec<_> = out.iter().filter(of_2).cloned().collect();
    assert_eq!(
        second,
        [
            Event::CallStart { index: 2, call_id: "call_B".into(), name: "lookup_order".into() },
            Event::ArgsDelta { index: 2, fragment: r#"{"order_id": "A-2"}"#.into() },
            Event::CallStop { index: 2, arguments: None },
        ]
    );
    // Nothing else changes; a call cut before its terminal is sent the usual way.
    t.ending = Ending::Abandoned { after: 6, end: StreamEnd::Eof };
    let w = wire(&t, Dialect::OpenAiResponses);
    assert_eq!(decode_checked(Dialect::OpenAiResponses, Quirks::default(), &w).len(), 6);
}

#[test]
fn a_done_that_contradicts_the_deltas_is_refused_whichever_done_says_it() {
    for (at, refused_by) in
        [(MismatchIn::ItemDone, "response.output_item.done"), (MismatchIn::ArgumentsDone, "core")]
    {
        let mut t = two_calls(Ending::Stop(StopReason::Completed));
        t.faults.push(Fault {
            kind: FaultKind::DoneMismatch { call: 0, arguments: r#"{"order_id": "A-9"}"#.into() },
            at: 0,
        });
        t.wire.mismatch_in = at;
        let w = wire(&t, Dialect::OpenAiResponses);
        let done = |name: &str| {
            w.events
                .iter()
                // The first call's: its arguments done names no call id, its item does.
                .find(|e| {
                    e.event.as_deref() == Some(name)
                        && (name.ends_with("arguments.done") || e.data.contains("call_A"))
                })
                .unwrap()
                .data
                .clone()
        };
        let (args_done, item_done) =
            (done("response.function_call_arguments.done"), done("response.output_item.done"));
        assert_eq!(args_done.contains("A-9"), at == MismatchIn::ArgumentsDone, "{args_done}");
        assert_eq!(item_done.contains("A-9"), at == MismatchIn::ItemDone, "{item_done}");
        // The decoder compares the two repeats: they disagree either way.
        let decoded = decode_events(Dialect::OpenAiResponses, Quirks::default(), &w.events);
        assert_eq!(decoded.unwrap_err().class, ErrorClass::DoneMismatch);
        if refused_by == "core" {
            // Before that, the arguments done reaches the core with its other arguments, and
            // the core refuses it first.
            let k = w.events.iter().position(|e| e.data.contains("A-9")).unwrap();
            let before = decode_events(Dialect::OpenAiResponses, Quirks::default(), &w.events[..=k]).unwrap();
            assert!(
                matches!(before.last(), Some(Event::CallStop { index: 1, arguments: Some(a) }) if a.contains("A-9"))
            );
        }
    }
}

#[test]
fn units_that_carry_nothing_decode_to_nothing() {
    let mut anthropic = two_calls(Ending::Stop(StopReason::ToolUse));
    anthropic.wire.unknown = [0, 3, 5, 99]
        .iter()
        .enumerate()
        .map(|(k, &at)| Unknown {
            kind: if k % 2 == 0 { UnknownKind::Delta } else { UnknownKind::Event },
            at,
        })
        .collect();
    let chat = |ending| {
        let mut t = interleaved(
            vec![call(0, "call_C", "get_weather", &[r#"{"city": "#, r#""Oslo"}"#])],
            vec![],
            vec![],
            ending,
        );
        t.wire.chat_prelude = true;
        t.wire.usage_without_choices = true;
        t.wire.done_without_finish = true;
        t
    };
    let cases = [
        (Dialect::Anthropic, anthropic),
        (Dialect::OpenAiChat, chat(Ending::Stop(StopReason::ToolCalls))),
        (Dialect::OpenAiChat, chat(Ending::Abandoned { after: 2, end: StreamEnd::Eof })),
        (Dialect::OpenAiChat, chat(Ending::Abandoned { after: 0, end: StreamEnd::Eof })),
    ];
    for (dialect, t) in cases {
        let plain = Turn { wire: Default::default(), ..t.clone() };
        let (w, p) = (wire(&t, dialect), wire(&plain, dialect));
        assert!(w.events.len() > p.events.len(), "{dialect}: the units are sent");
        let neutral = render(&t);
        assert_eq!(
            decode_checked(dialect, Quirks::default(), &w),
            expected(dialect, Quirks::default(), &neutral)
        );
    }
    // `[DONE]` with nothing before it is the whole stream, after the prelude.
    let w = wire(&chat(Ending::Abandoned { after: 0, end: StreamEnd::Eof }), Dialect::OpenAiChat);
    assert_eq!(w.events.len(), 2);
    assert_eq!(w.events[1].data, "[DONE]");
    // A citations_delta rides in the text block, an unknown delta type in a tool block.
    let w = wire(&cases_anthropic(), Dialect::Anthropic);
    let all: String = w.events.iter().map(|e| e.data.as_str()).collect();
    assert!(all.contains(r#""index":0,"delta":{"type":"citations_delta""#), "{all}");
    assert!(all.contains(r#""index":1,"delta":{"type":"input_status_delta""#), "{all}");
    assert!(all.contains(r#"{"type":"message_metadata""#), "{all}");
}

fn cases_anthropic() -> Turn {
    let mut t = two_calls(Ending::Stop(StopReason::ToolUse));
    t.wire.unknown = vec![
        Unknown { kind: UnknownKind::Delta, at: 0 },
        Unknown { kind: UnknownKind::Delta, at: 3 },
        Unknown { kind: UnknownKind::Event, at: 5 },
    ];
    t
}

#[test]
fn a_known_delta_with_a_defective_field_still_fails_the_turn() {
    let t = two_calls(Ending::Stop(StopReason::ToolUse));
    let mut w = wire(&t, Dialect::Anthropic);
    let k = w.events.iter().position(|e| e.data.contains("text_delta")).unwrap();
    w.events[k].data = w.events[k].data.replace(r#""text":"Checking.""#, r#""txt":"Checking.""#);
    let err = decode_events(Dialect::Anthropic, Quirks::default(), &w.events).unwrap_err();
    assert_eq!(err.class, ErrorClass::Malformed);
}
