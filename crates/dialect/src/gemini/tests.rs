//! Gemini round trips: every profile's stream decoded gives back the neutral events, by
//! fragment text joined per call.

use super::*;
use crate::DialectDef;
use toolcert_render::render;
use toolcert_scenario::build::{call, per_call, text};
use toolcert_scenario::{Ending, StreamEnd};
use toolcert_subject::WireMessage;

fn decode_all(wire: &WireStream) -> Result<Vec<Event<'static>>, TurnError> {
    let mut d = crate::decoder(Dialect::Gemini, Quirks::PLAIN);
    let mut out = Vec::new();
    for m in &wire.events {
        d.decode(m, &mut out)?;
    }
    Ok(out)
}

/// Each call's id, name, argument text joined and whether it stopped.
type Calls = Vec<(String, String, String, bool)>;

/// Per call id: its name and its argument text joined; the text; the stop.
fn summary(events: &[Event<'_>]) -> (Calls, String, Option<StopReason>) {
    let mut calls: Vec<(u32, String, String, String, bool)> = Vec::new();
    let mut text = String::new();
    let mut stop = None;
    for e in events {
        match e {
            Event::CallStart { index, call_id, name } => {
                calls.push((*index, call_id.to_string(), name.to_string(), String::new(), false))
            }
            Event::ArgsDelta { index, fragment } => {
                calls.iter_mut().find(|c| c.0 == *index).unwrap().3.push_str(fragment)
            }
            Event::CallStop { index, .. } => calls.iter_mut().find(|c| c.0 == *index).unwrap().4 = true,
            Event::TextDelta { text: t } => text.push_str(t),
            Event::Stop { reason } => stop = Some(*reason),
            _ => {}
        }
    }
    (calls.into_iter().map(|c| (c.1, c.2, c.3, c.4)).collect(), text, stop)
}

fn vertex() -> Quirks {
    Quirks { gemini_partial_args: true, ..Quirks::PLAIN }
}

fn round_trip(turn: &Turn, quirks: Quirks) -> WireStream {
    let turn = Gemini.shape_turn(turn, quirks).unwrap_or_else(|| turn.clone());
    let neutral = render(&turn);
    let wire = crate::render_wire(&turn, &neutral, Dialect::Gemini, quirks).unwrap();
    let decoded = decode_all(&wire).unwrap();
    let mut expected: Vec<Event<'static>> = neutral.events.iter().cloned().map(Event::into_owned).collect();
    for e in &mut expected {
        if let Event::Stop { reason } = e {
            *reason = Gemini.stop_reason(*reason);
        }
    }
    // The call indices are announcement ordinals.
    let mut ordinal = 0;
    let mut map = std::collections::HashMap::new();
    for e in &mut expected {
        match e {
            Event::CallStart { index, .. } => {
                map.insert(*index, ordinal);
                *index = ordinal;
                ordinal += 1;
            }
            Event::ArgsDelta { index, .. } | Event::CallStop { index, .. } => *index = map[index],
            _ => {}
        }
    }
    assert_eq!(summary(&decoded), summary(&expected), "{quirks:?}\n{:#?}", wire.events);
    // Every wire event's count is a prefix of the neutral events, ending at all of them.
    assert!(wire.upto.windows(2).all(|w| w[0] <= w[1]));
    assert_eq!(wire.upto.last().copied(), Some(neutral.events.len() as u32));
    wire
}

fn data(wire: &WireStream) -> Vec<String> {
    wire.events.iter().map(|m| m.as_sse().unwrap().data.clone()).collect()
}

#[test]
fn whole_calls_and_pieces_give_back_the_documents() {
    let t = per_call(
        vec![
            text(&["Checking ", "the weather."]),
            call(1, "call_a", "get_weather", &["{\"location\": \"Bos", "ton\", \"days\"", ": 3}"]),
            call(2, "call_1", "read_theme", &[]),
            call(
                3,
                "c3",
                "plan",
                &["{\"recipe\":{\"ingredients\":[{\"amount\":1.50},", "{\"amount\":null,\"a.b\":true}]}}"],
            ),
        ],
        Ending::Stop(StopReason::ToolUse),
    );
    for q in [Quirks::PLAIN, vertex()] {
        round_trip(&t, q);
    }
    let wire = round_trip(&t, vertex());
    let all = data(&wire).join("\n");
    assert!(all.contains(r#""jsonPath":"$.location","stringValue":"Bo","willContinue":true"#), "{all}");
    assert!(all.contains(r#""jsonPath":"$.recipe.ingredients[1]['a.b']","boolValue":true"#), "{all}");
    assert!(all.contains(r#""numberValue":1.50"#), "{all}");
    // The call whose id is the one assigned carries none; the first call is signed.
    assert!(all.contains(r#"{"functionCall":{"name":"read_theme"}}"#), "{all}");
    assert!(all.contains("thoughtSignature"));
}

#[test]
fn every_terminator_form_is_sent_and_read() {
    let mut forms = std::collections::BTreeSet::new();
    for n in 0..12u32 {
        let name = format!("tool_{n}");
        let t = per_call(
            vec![call(0, &format!("id{n}"), &name, &["{\"q\":\"a", "b\"}"])],
            Ending::Stop(StopReason::ToolUse),
        );
        let wire = round_trip(&t, vertex());
        let d = data(&wire);
        let last_call = d.iter().rev().find(|e| e.contains("functionCall")).unwrap();
        let form = if last_call.contains(r#"{"functionCall":{}}"#) {
            "empty"
        } else if !last_call.contains("willContinue") {
            "last piece"
        } else {
            "finish"
        };
        forms.insert(form);
    }
    assert_eq!(forms.len(), 3, "{forms:?}");
}

#[test]
fn a_cut_mid_string_and_keep_alives() {
    let mut t = per_call(
        vec![call(0, "c", "f", &["{\"s\":\"ab", "cd", "ef\"}"])],
        Ending::Abandoned { after: 3, end: StreamEnd::Disconnect },
    );
    t.pings = vec![2];
    let wire = round_trip(&t, vertex());
    assert!(data(&wire).iter().any(|d| d.contains(r#"{"functionCall":{"willContinue":true}}"#)));
    let decoded = decode_all(&wire).unwrap();
    assert!(!decoded.iter().any(|e| matches!(e, Event::CallStop { .. })), "a cut call never ends");
    // MAX_TOKENS mid-string: the call ends with the candidate, the turn is truncated.
    let t = per_call(vec![call(0, "c", "f", &["{\"s\":\"ab", "cd\"}"])], Ending::Stop(StopReason::MaxTokens));
    let wire = round_trip(&t, vertex());
    assert!(data(&wire).last().unwrap().contains("MAX_TOKENS"));
    // The whole-call profile cannot send a call cut mid-way.
    let cut = per_call(
        vec![call(0, "c", "f", &["{\"s\":\"ab", "cd\"}"])],
        Ending::Abandoned { after: 2, end: StreamEnd::Disconnect },
    );
    assert!(crate::render_wire(&cut, &render(&cut), Dialect::Gemini, Quirks::PLAIN).is_err());
}

#[test]
fn real_streams_read() {
    // The issue's Vertex shapes, a surrogate pair split across pieces, and no ids.
    let chunks = [
        r#"{"candidates":[{"content":{"role":"model","parts":[{"functionCall":{"name":"getWeather","willContinue":true},"thoughtSignature":"abc"}]}}]}"#,
        r#"{"candidates":[{"content":{"role":"model","parts":[{"functionCall":{"partialArgs":[{"jsonPath":"$.location","stringValue":"Bos\ud83d","willContinue":true}],"willContinue":true}}]}}]}"#,
        r#"{"candidates":[{"content":{"role":"model","parts":[{"functionCall":{"willContinue":true}}]}}]}"#,
        r#"{"candidates":[{"content":{"role":"model","parts":[{"functionCall":{"partialArgs":[{"jsonPath":"$.location","stringValue":"\ude00","willContinue":true}],"willContinue":true}}]}}]}"#,
        r#"{"candidates":[{"content":{"role":"model","parts":[{"functionCall":{"partialArgs":[{"jsonPath":"$.location","stringValue":""},{"jsonPath":"$['a.b'][0]","numberValue":7}]}}]}}]}"#,
        r#"{"candidates":[{"content":{"role":"model","parts":[{"functionCall":{"name":"read_theme"}}]}}]}"#,
        r#"{"candidates":[{"content":{"role":"model","parts":[{"functionCall":{"name":"f","args":{"x": 1}}}]},"finishReason":"STOP"}]}"#,
    ];
    let wire = WireStream {
        events: chunks.iter().map(|c| WireMessage::Sse(SseEvent::data(*c))).collect(),
        upto: vec![0; chunks.len()],
        next: None,
    };
    let (calls, _, stop) = summary(&decode_all(&wire).unwrap());
    assert_eq!(stop, Some(StopReason::Stop));
    let args: serde_json::Value = serde_json::from_str(&calls[0].2).unwrap();
    assert_eq!(args, serde_json::json!({"location": "Bos😀", "a.b": [7]}));
    assert_eq!((calls[0].0.as_str(), calls[0].3), ("call_0", true));
    assert_eq!((calls[1].0.as_str(), calls[1].2.as_str(), calls[1].3), ("call_1", "", true));
    assert_eq!(calls[2].2, r#"{"x": 1}"#);
    // Bad input is malformed, never a panic.
    let mut d = GeminiDecoder::new();
    let mut out = Decoded::new();
    let bad = SseEvent::data(
        r#"{"candidates":[{"content":{"parts":[{"functionCall":{"name":"f","willContinue":true}},{"functionCall":{"partialArgs":[{"jsonPath":"x","stringValue":"a"}]}}]}}]}"#,
    );
    assert_eq!(d.decode_chunk(&bad, &mut out).unwrap_err().class, ErrorClass::Malformed);
    // The signature stays with the call it sat on.
    let mut d = GeminiDecoder::new();
    let mut out = Decoded::new();
    let signed = SseEvent::data(
        r#"{"candidates":[{"content":{"parts":[{"functionCall":{"name":"a"},"thoughtSignature":"s1"},{"functionCall":{"name":"b"}}]}}]}"#,
    );
    d.decode_chunk(&signed, &mut out).unwrap();
    assert_eq!((d.signature_of(0), d.signature_of(1)), (Some("s1"), None));
    for not_json in [
        "not json",
        "[1]",
        r#"{"candidates":[{"content":{"parts":[{"functionCall":{"name":"f","args":42}}]}}]}"#,
    ] {
        let mut d = GeminiDecoder::new();
        let e = d.decode_chunk(&SseEvent::data(not_json), &mut Decoded::new()).unwrap_err();
        assert_eq!(e.class, ErrorClass::Malformed, "{not_json}");
    }
}

/// Generated turns, shaped as the runner shapes them, render in both profiles or are refused
/// with a reason, and decode back to their documents.
#[test]
fn generated_turns_shape_render_and_read_back() {
    use proptest::strategy::ValueTree;
    let cfg = toolcert_gen::GenConfig {
        shape_mix: toolcert_gen::ShapeMix::PerCall,
        transport: true,
        done_mismatch: false,
        ..toolcert_gen::GenConfig::default()
    };
    let strategy = toolcert_gen::case_strategy(&cfg);
    let mut rendered = [0; 2];
    for (seed, k) in [7u64, 13, 17, 23, 29].into_iter().flat_map(|s| (0..400u64).map(move |k| (s, k))) {
        let case = toolcert_gen::strategy::case_tree(&strategy, seed, k).current();
        for t in &case.streams {
            for (n, q) in [Quirks::PLAIN, vertex()].into_iter().enumerate() {
                let t = Gemini.shape_turn(t, q).unwrap_or_else(|| t.clone());
                let neutral = render(&t);
                let r = crate::render_wire(&t, &neutral, Dialect::Gemini, q);
                if let Err(e) = &r {
                    assert!(!e.reason.contains("not JSON"), "case {seed}/{k}: {e}");
                }
                if let Ok(wire) = r {
                    rendered[n] += 1;
                    assert_eq!(
                        wire.upto.last().copied().unwrap_or(0),
                        neutral.events.len() as u32,
                        "case {k}"
                    );
                    decode_all(&wire).unwrap_or_else(|e| panic!("case {k} {q:?}: {e:?}"));
                }
            }
        }
    }
    assert!(rendered.iter().all(|&r| r > 40), "{rendered:?}");
}
