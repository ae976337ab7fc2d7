//! Bedrock ConverseStream: the round trip through the wire (messages as wire events) and
//! through the bytes (event stream messages cut anywhere), the shapes of the messages as the
//! API reference gives them, and the damaged messages the bytes decoder must refuse.

mod common;

use common::*;
use proptest::strategy::ValueTree;
use toolcert_dialect::bedrock::{corrupt_before, from_message, name_and_data, to_message, EXCEPTIONS};
use toolcert_dialect::eventstream::{self, Message};
use toolcert_dialect::{decoder, render_bytes, render_wire, BedrockFrames, Dialect, Quirks, WireStream};
use toolcert_render::{render, Event, Rendered};
use toolcert_scenario::{
    Block, Corrupt, CorruptWhat, Cut, CutAim, Ending, Fault, FaultKind, ForeignBlock, ForeignKind,
    StopReason, StreamEnd, Transport, Turn,
};
use toolcert_subject::{ErrorClass, Frame, WireMessage};

const B: Dialect = Dialect::Bedrock;
const PLAIN: Quirks = Quirks::PLAIN;

/// What decoding gives for a neutral stream: the same events, with Bedrock's stop reasons,
/// no pings (Bedrock sends none), and only what some message carried.
fn expected(neutral: &Rendered<'_>, wire: &WireStream) -> Vec<Event<'static>> {
    let carried = wire.upto.last().copied().unwrap_or(0) as usize;
    neutral.events[..carried]
        .iter()
        .filter(|e| !matches!(e, Event::Ping))
        .map(|e| match e.clone().into_owned() {
            Event::Stop { reason } => Event::Stop { reason: toolcert_dialect::def(B).stop_reason(reason) },
            e => e,
        })
        .collect()
}

fn non_pings(neutral: &Rendered<'_>, upto: u32) -> usize {
    neutral.events[..upto as usize].iter().filter(|e| !matches!(e, Event::Ping)).count()
}

/// Renders, decodes message by message (checking `upto` after each) and compares.
fn round_trip(turn: &Turn) -> WireStream {
    let neutral = render(turn);
    let wire = render_wire(turn, &neutral, B, PLAIN).unwrap_or_else(|e| panic!("{e}"));
    assert!(wire.events.iter().all(|m| m.as_frame().is_some()));
    assert!(wire.upto.windows(2).all(|w| w[0] <= w[1]), "{:?}", wire.upto);
    // Only pings, or a reasoning start no message has carried yet, may be left over.
    let last = wire.upto.last().copied().unwrap_or(0) as usize;
    assert!(
        neutral.events[last..].iter().all(|e| matches!(e, Event::Ping | Event::ForeignStart { .. })),
        "upto {:?} of {} events",
        wire.upto,
        neutral.events.len()
    );
    let mut d = decoder(B, PLAIN);
    let mut out = Vec::new();
    for (w, e) in wire.events.iter().enumerate() {
        d.decode(e, &mut out).unwrap_or_else(|err| panic!("message {w} {e:?}: {err}"));
        assert_eq!(
            out.len(),
            non_pings(&neutral, wire.upto[w]),
            "after message {w} ({e:?}): {out:?}\nneutral: {:?}",
            neutral.events
        );
    }
    assert_eq!(out, expected(&neutral, &wire), "\nwire: {:#?}", wire.events);
    wire
}

fn thinking(index: u32, deltas: &[&str]) -> Block {
    let Block::Call(c) = call(index, "", "", deltas) else { unreachable!() };
    Block::Foreign(ForeignBlock {
        kind: ForeignKind::Thinking,
        index,
        id: String::new(),
        name: String::new(),
        text: c.arguments,
        splits: c.splits,
    })
}

fn turns() -> Vec<Turn> {
    let two = || {
        vec![
            thinking(0, &["The user wants ", r#"{"plan": 1}"#]),
            text(&["Let me ", "look é up."]),
            call(2, "tooluse_a1", "lookup_order", &[r#"{"order_id": "#, r#""A-4471"}"#]),
            call(3, "tooluse_b2", "lookup_order", &[r#"{"order_id": "B"}"#]),
        ]
    };
    let mut pinged = per_call(two(), Ending::Stop(StopReason::ToolUse));
    pinged.pings = vec![0, 3, 9];
    let mut faulty = per_call(two(), Ending::Stop(StopReason::ToolUse));
    faulty.faults = vec![
        Fault { kind: FaultKind::UnannouncedFragment { missing_index: false, fragment: "{}".into() }, at: 4 },
        Fault { kind: FaultKind::ReplayAnnouncement { call: 0 }, at: 8 },
        Fault { kind: FaultKind::FragmentAfterStop { call: 1, fragment: "x".into() }, at: 99 },
    ];
    vec![
        per_call(two(), Ending::Stop(StopReason::ToolUse)),
        per_call(two(), Ending::Stop(StopReason::MaxTokens)),
        per_call(two(), Ending::Stop(StopReason::Refusal)),
        per_call(vec![text(&["filtered"])], Ending::Stop(StopReason::ContentFilter)),
        per_call(two(), Ending::Stop(StopReason::Completed)),
        per_call(two(), Ending::Abandoned { after: 6, end: StreamEnd::Disconnect }),
        per_call(vec![thinking(0, &[])], Ending::Abandoned { after: 1, end: StreamEnd::Eof }),
        per_call(two(), Ending::Errored { after: 5, message: "Model is getting throttled.".into() }),
        per_call(vec![], Ending::Stop(StopReason::EndTurn)),
        pinged,
        faulty,
    ]
}

#[test]
fn turns_round_trip_through_the_wire() {
    for t in turns() {
        round_trip(&t);
    }
}

#[test]
fn the_messages_have_the_api_reference_shapes() {
    let t = &turns()[0];
    let wire = round_trip(t);
    let named = |m: &WireMessage| name_and_data(m.as_frame().unwrap()).unwrap().0;
    let data = |m: &WireMessage| name_and_data(m.as_frame().unwrap()).unwrap().1.into_owned();
    let json = |name: &str| -> Vec<serde_json::Value> {
        wire.events
            .iter()
            .filter(|e| named(e) == name)
            .map(|e| serde_json::from_str(&data(e)).unwrap())
            .collect()
    };
    assert_eq!(named(&wire.events[0]), "messageStart");
    assert_eq!(json("messageStart")[0]["role"], "assistant");
    let start = &json("contentBlockStart")[0];
    assert_eq!(start["contentBlockIndex"], 2);
    assert_eq!(start["start"]["toolUse"]["toolUseId"], "tooluse_a1");
    assert_eq!(start["start"]["toolUse"]["name"], "lookup_order");
    let deltas = json("contentBlockDelta");
    assert_eq!(deltas[0]["delta"]["reasoningContent"]["text"], "The user wants ");
    assert!(deltas.iter().any(|d| d["delta"]["reasoningContent"]["signature"].is_string()));
    assert!(deltas.iter().any(|d| d["contentBlockIndex"] == 1 && d["delta"]["text"] == "Let me "));
    assert!(deltas
        .iter()
        .any(|d| d["contentBlockIndex"] == 2 && d["delta"]["toolUse"]["input"] == r#"{"order_id": "#));
    // Every block ends with its stop: reasoning, text and both calls.
    let stops: Vec<_> =
        json("contentBlockStop").iter().map(|s| s["contentBlockIndex"].as_u64().unwrap()).collect();
    assert_eq!(stops, [0, 1, 2, 3]);
    assert_eq!(json("messageStop")[0]["stopReason"], "tool_use");
    let meta = &json("metadata")[0];
    assert!(meta["usage"]["inputTokens"].is_u64() && meta["usage"]["totalTokens"].is_u64());
    assert!(meta["metrics"]["latencyMs"].is_u64());
    // Every payload is padded.
    assert!(wire.events.iter().all(|e| data(e).contains("\"p\":\"")));

    let refused = round_trip(&turns()[2]);
    assert!(refused.events.iter().any(|e| data(e).contains("\"stopReason\":\"guardrail_intervened\"")));
    let filtered = round_trip(&turns()[3]);
    assert!(filtered.events.iter().any(|e| data(e).contains("\"stopReason\":\"content_filtered\"")));
    let errored = round_trip(&turns()[7]);
    let last = errored.events.last().unwrap();
    assert!(EXCEPTIONS.contains(&named(last).as_str()), "{last:?}");
    let m = to_message(last.as_frame().unwrap());
    assert_eq!(m.string(":message-type"), Some("exception"));
    assert_eq!(m.string(":exception-type"), Some(named(last).as_str()));
    assert_eq!(m.string(":content-type"), Some("application/json"));
}

/// The bytes of `turn`, whole and cut at `cut`, through the frames decoder and the dialect
/// decoder: the same neutral events as the wire round trip.
fn through_bytes<C: AsRef<[u8]>>(
    chunks: impl IntoIterator<Item = C>,
) -> Result<Vec<WireMessage>, ErrorClass> {
    let mut frames = BedrockFrames::new();
    let mut out = Vec::new();
    for c in chunks {
        frames.feed(c.as_ref(), &mut out).map_err(|e| e.class)?;
    }
    Ok(out)
}

#[test]
fn bytes_cut_at_every_position_give_the_same_messages() {
    for t in turns() {
        let neutral = render(&t);
        let wire = render_wire(&t, &neutral, B, PLAIN).unwrap();
        let whole = render_bytes(B, &wire, &Transport::default()).chunks.concat();
        assert_eq!(through_bytes([whole.as_slice()]).unwrap(), wire.events);
        for at in 1..whole.len() {
            let chunks = [whole[..at].to_vec(), whole[at..].to_vec()];
            assert_eq!(through_bytes(&chunks).unwrap(), wire.events, "cut at {at}");
        }
        // And the aimed cuts, resolved by the renderer itself, with their `upto`.
        for aim in [
            CutAim::Anywhere,
            CutAim::InsideChar,
            CutAim::InsideDataPrefix,
            CutAim::BetweenCrLf,
            CutAim::Every,
        ] {
            for pick in [0, 5, 17, 200] {
                let transport = Transport { cuts: vec![Cut { aim, pick }; 3], ..Transport::default() };
                let b = render_bytes(B, &wire, &transport);
                assert_eq!(b.chunks.concat(), whole);
                assert_eq!(through_bytes(b.chunks.iter()).unwrap(), wire.events);
                let mut frames = BedrockFrames::new();
                let mut seen = Vec::new();
                for (c, chunk) in b.chunks.iter().enumerate() {
                    frames.feed(chunk, &mut seen).unwrap();
                    // Chunk `c` completes exactly the messages whose `upto` it reports.
                    let want = seen.len().checked_sub(1).map_or(0, |w| wire.upto[w]);
                    assert_eq!(b.upto[c], want, "{aim:?} {pick} chunk {c}");
                }
            }
        }
    }
}

#[test]
fn every_damaged_message_is_refused_and_nothing_after_it_taken() {
    for t in turns() {
        let neutral = render(&t);
        let wire = render_wire(&t, &neutral, B, PLAIN).unwrap();
        for after in 0..=neutral.events.len() as u32 + 1 {
            for what in CorruptWhat::ALL {
                let corrupt = Corrupt { after, what };
                let transport = Transport { corrupt: Some(corrupt), ..Transport::default() };
                let b = render_bytes(B, &wire, &transport);
                let mut frames = BedrockFrames::new();
                let mut seen = Vec::new();
                let err = frames.feed(&b.chunks.concat(), &mut seen).unwrap_err();
                assert_eq!(err.class, ErrorClass::Malformed);
                // What came before the damaged message is exactly what the oracle is told.
                let before = corrupt_before(&wire, corrupt);
                let whole_before = seen.len().checked_sub(1).map_or(0, |w| wire.upto[w]);
                assert_eq!(whole_before, before, "{what:?} after {after}: {err}");
                assert!(b.upto.iter().all(|&u| u <= before), "{what:?}: {:?}", b.upto);
            }
        }
    }
}

#[test]
fn a_message_maps_back_and_a_headerless_one_is_malformed() {
    let f = Frame {
        headers: vec![
            (":event-type".into(), "contentBlockStop".into()),
            (":content-type".into(), "application/json".into()),
            (":message-type".into(), "event".into()),
        ],
        payload: br#"{"contentBlockIndex":0}"#.to_vec(),
    };
    let bytes = eventstream::encode(&to_message(&f));
    let mut out: Vec<Message> = Vec::new();
    eventstream::Decoder::new().feed(&bytes, &mut out).unwrap();
    assert_eq!(from_message(out.pop().unwrap()), f);
    let bad = Frame { headers: vec![], payload: b"{}".to_vec() };
    assert_eq!(name_and_data(&bad).unwrap_err().class, ErrorClass::Malformed);
}

#[test]
fn generated_cases_round_trip_at_the_wire_and_bytes_levels() {
    let cfg = toolcert_gen::GenConfig {
        shape_mix: toolcert_gen::ShapeMix::PerCall,
        transport: true,
        corrupt: true,
        done_mismatch: false,
        ..toolcert_gen::GenConfig::default()
    };
    let strategy = toolcert_gen::case_strategy(&cfg);
    let (mut tried, mut corrupt) = (0, 0);
    for k in 0..300 {
        let case = toolcert_gen::strategy::case_tree(&strategy, 7, k).current();
        for t in &case.streams {
            let neutral = render(t);
            // Foreign kinds Bedrock has no block for are refused, not mangled.
            let Ok(wire) = render_wire(t, &neutral, B, PLAIN) else { continue };
            tried += 1;
            round_trip(t);
            let b = render_bytes(B, &wire, &t.transport);
            match (through_bytes(b.chunks.iter()), t.transport.corrupt) {
                (Ok(events), None) => assert_eq!(events, wire.events),
                (Err(class), Some(_)) => {
                    corrupt += 1;
                    assert_eq!(class, ErrorClass::Malformed);
                }
                (got, c) => panic!("case {k}: {got:?} with corrupt {c:?}"),
            }
        }
    }
    assert!(tried > 200 && corrupt > 20, "{tried} turns, {corrupt} damaged");
}
