//! Round trip: render a turn's neutral stream in a dialect, decode it back, get the neutral
//! events (up to what the dialect spells its own way), with `upto` matching what the decoder
//! has produced after every wire event. Hand-made turns first, then generated ones, then the
//! full stack through SSE bytes cut anywhere.

mod common;

use common::*;
use proptest::prelude::*;
use toolcert_dialect::{framing, Dialect, Quirks};
use toolcert_render::{render, Event};
use toolcert_scenario::{
    Block, Call, Ending, Fault, FaultKind, Interleave, LineEnd, Shape, StopReason, StreamEnd, TextBlock,
    Transport, Turn,
};
use toolcert_sse::{cut, encode, Decoder};

const PLAIN: Quirks = Quirks::PLAIN;
const ZERO: Quirks = Quirks::INDEX_ZERO;
const REPEAT: Quirks = Quirks::REPEAT_FIELDS;

fn refunded_open(first: u32, a: &str, b: &str) -> Vec<Block> {
    vec![
        call(
            first,
            a,
            "search_orders",
            &[r#"{"status": "refu"#, r#"nded", "from": "2025-03-01", "to": "2025-03-31"}"#],
        ),
        call(
            first + 1,
            b,
            "search_orders",
            &[r#"{"status": "op"#, r#"en", "from": "2025-03-01", "to": "2025-03-31"}"#],
        ),
    ]
}

/// Awkward content: empty fragments, escapes split, non-ASCII split, a call with no
/// argument bytes, text after the calls.
fn awkward(per_call: bool) -> Vec<Block> {
    let i = |pos: u32, ordinal: u32| if per_call { pos } else { ordinal };
    vec![
        text(&["", "Mé", "rida ✈ ", ""]),
        call(
            i(1, 0),
            "call_a",
            "annotate",
            &["", r#"{"note": "line one\"#, r#"nline two", "city": "M\u00"#, r#"e9rida 😀"}"#],
        ),
        call(i(2, 1), "call_b", "ping", &[]),
        call(i(3, 2), "call_c", "empty_fragments", &["", "", "{}", ""]),
        text(&["done."]),
    ]
}

#[test]
fn anthropic_and_responses_round_trip_hand_made_turns() {
    for dialect in [Dialect::Anthropic, Dialect::OpenAiResponses] {
        for reason in StopReason::ALL {
            round_trip(&per_call(lookup_order(1, "toolu_01QxR"), Ending::Stop(reason)), dialect, PLAIN);
        }
        round_trip(
            &per_call(refunded_open(1, "toolu_01Ka", "toolu_01Mb"), Ending::Stop(StopReason::ToolUse)),
            dialect,
            PLAIN,
        );
        round_trip(&per_call(awkward(true), Ending::Stop(StopReason::EndTurn)), dialect, PLAIN);
        round_trip(&per_call(vec![], Ending::Stop(StopReason::EndTurn)), dialect, PLAIN);
    }
}

#[test]
fn chat_round_trips_interleaved_and_joined_chunks() {
    let d = Dialect::OpenAiChat;
    // The keying chapter's chunk: both calls' first entries in one chunk.
    let t = interleaved(
        refunded_open(0, "call_8Hs1", "call_9Jt2"),
        vec![0, 1, 0, 1],
        vec![false, true, false, true],
        Ending::Stop(StopReason::ToolCalls),
    );
    let wire = round_trip(&t, d, PLAIN);
    let first: serde_json::Value = serde_json::from_str(&wire.events[0].data).unwrap();
    assert_eq!(first["choices"][0]["delta"]["tool_calls"].as_array().unwrap().len(), 2);
    assert_eq!(first["choices"][0]["delta"]["tool_calls"][1]["id"], "call_9Jt2");
    // Text and calls sharing chunks, every piece joined where it can be.
    let t = interleaved(
        awkward(false),
        vec![0, 1, 0, 2, 1, 3, 4, 1, 0, 3],
        vec![true; 20],
        Ending::Stop(StopReason::Stop),
    );
    round_trip(&t, d, PLAIN);
    for reason in StopReason::ALL {
        round_trip(&interleaved(lookup_order(0, "call_Qx"), vec![], vec![], Ending::Stop(reason)), d, PLAIN);
    }
}

#[test]
fn every_ending_position_round_trips() {
    let cases: Vec<(Dialect, Turn)> = vec![
        (Dialect::Anthropic, per_call(awkward(true), Ending::Stop(StopReason::ToolUse))),
        (Dialect::OpenAiResponses, per_call(awkward(true), Ending::Stop(StopReason::Completed))),
        (
            Dialect::OpenAiChat,
            interleaved(
                awkward(false),
                vec![1, 0, 3, 1, 4],
                vec![false, true, true],
                Ending::Stop(StopReason::ToolCalls),
            ),
        ),
    ];
    for (dialect, turn) in cases {
        let n = render(&turn).events.len() as u32;
        for after in 0..=n + 1 {
            for end in [StreamEnd::Eof, StreamEnd::Disconnect] {
                let t = Turn { ending: Ending::Abandoned { after, end }, ..turn.clone() };
                let wire = round_trip(&t, dialect, PLAIN);
                // No closing envelope without the stop.
                let last = wire.events.last().map(|e| (e.event.as_deref(), e.data.as_str()));
                assert_ne!(last, Some((None, "[DONE]")));
                assert_ne!(last.and_then(|l| l.0), Some("message_stop"));
            }
            let t = Turn { ending: Ending::Errored { after, message: "Overloaded".into() }, ..turn.clone() };
            round_trip(&t, dialect, PLAIN);
        }
    }
}

#[test]
fn faults_and_pings_round_trip() {
    let faults = |calls: u16| {
        let mut out = Vec::new();
        for at in [0, 2, 5, 40] {
            out.push(vec![Fault { kind: FaultKind::ReplayAnnouncement { call: 1 % calls }, at }]);
            out.push(vec![Fault {
                kind: FaultKind::UnannouncedFragment { missing_index: false, fragment: "{\"x\"".into() },
                at,
            }]);
            out.push(vec![Fault {
                kind: FaultKind::FragmentAfterStop { call: 0, fragment: "}".into() },
                at,
            }]);
        }
        out.push(vec![
            Fault { kind: FaultKind::ReplayAnnouncement { call: 0 }, at: 3 },
            Fault { kind: FaultKind::ReplayAnnouncement { call: 0 }, at: 3 },
        ]);
        out
    };
    let bases = [
        (Dialect::Anthropic, per_call(awkward(true), Ending::Stop(StopReason::ToolUse))),
        (Dialect::OpenAiResponses, per_call(awkward(true), Ending::Stop(StopReason::Completed))),
        (
            Dialect::OpenAiChat,
            interleaved(awkward(false), vec![1, 3, 1, 0], vec![true; 8], Ending::Stop(StopReason::ToolCalls)),
        ),
    ];
    for (dialect, base) in bases {
        for f in faults(3) {
            for pings in [vec![], vec![0, 1, 4, 4, 99]] {
                let t = Turn { faults: f.clone(), pings, ..base.clone() };
                let replay = f.iter().any(|f| matches!(f.kind, FaultKind::ReplayAnnouncement { .. }));
                if dialect == Dialect::OpenAiChat && replay {
                    // Under the one Chat rule no entry replays an announcement.
                    let e = render_wire(&t, &render(&t), dialect, PLAIN).unwrap_err();
                    assert!(e.reason.contains("replayed announcement"), "{e}");
                    continue;
                }
                round_trip(&t, dialect, PLAIN);
            }
        }
    }
}

#[test]
fn done_mismatch_is_responses_only() {
    let mut t = per_call(lookup_order(1, "call_Qx"), Ending::Stop(StopReason::Completed));
    t.faults = vec![Fault {
        kind: FaultKind::DoneMismatch { call: 0, arguments: "{\"order_id\": \"A-4472\"}".into() },
        at: 0,
    }];
    let wire = round_trip(&t, Dialect::OpenAiResponses, PLAIN);
    let done = wire
        .events
        .iter()
        .find(|e| e.event.as_deref() == Some("response.function_call_arguments.done"))
        .unwrap();
    assert!(done.data.contains(r#""arguments":"{\"order_id\": \"A-4472\"}""#), "{}", done.data);
    let e = render_wire(&t, &render(&t), Dialect::Anthropic, PLAIN).unwrap_err();
    assert!(e.reason.contains("repeats arguments"), "{e}");
}

#[test]
fn shapes_each_dialect_cannot_carry_are_unsupported() {
    let per = per_call(lookup_order(1, "x"), Ending::Stop(StopReason::ToolUse));
    let inter = interleaved(lookup_order(0, "x"), vec![], vec![], Ending::Stop(StopReason::ToolCalls));
    for (turn, dialect) in
        [(&per, Dialect::OpenAiChat), (&inter, Dialect::Anthropic), (&inter, Dialect::OpenAiResponses)]
    {
        let e = render_wire(turn, &render(turn), dialect, PLAIN).unwrap_err();
        assert_eq!(e.dialect, dialect);
        assert!(e.to_string().starts_with(&format!("{dialect} cannot express this stream")), "{e}");
    }
    let e = render_wire(&per, &render(&per), Dialect::Anthropic, ZERO).unwrap_err();
    assert!(e.reason.contains("quirk of no anthropic server profile"), "{e}");
}

#[test]
fn index_zero_quirk_round_trips_with_ordinals() {
    // Every call at index 0 on the wire, id on each call's first entry only.
    let t = interleaved(
        vec![
            text(&["Checking "]),
            refunded_open(0, "call_A", "call_B").remove(0),
            text(&["both."]),
            refunded_open(0, "call_A", "call_B").remove(1),
        ],
        vec![],
        vec![false, false, true, true, false, true],
        Ending::Stop(StopReason::ToolCalls),
    );
    // The scenario's indices are 0 and 1 here; the quirk server sends 0 for both.
    let Block::Call(c) = &t.blocks[3] else { unreachable!() };
    assert_eq!(c.index, 1);
    let wire = round_trip(&t, Dialect::OpenAiChat, ZERO);
    let entries: Vec<serde_json::Value> = wire
        .events
        .iter()
        .filter_map(|e| serde_json::from_str::<serde_json::Value>(&e.data).ok())
        .flat_map(|v| v["choices"][0]["delta"]["tool_calls"].as_array().cloned().unwrap_or_default())
        .collect();
    assert!(entries.iter().all(|e| e["index"] == 0), "{entries:?}");
    assert_eq!(entries.iter().filter(|e| e.get("id").is_some()).count(), 2);
    // The same calls with scenario indices 7 and 7: ordinals come back.
    let mut t2 = t.clone();
    for b in &mut t2.blocks {
        if let Block::Call(c) = b {
            c.index = 7;
        }
    }
    let wire = render_wire(&t2, &render(&t2), Dialect::OpenAiChat, ZERO).unwrap();
    let got = decode_checked(Dialect::OpenAiChat, ZERO, &wire);
    let starts: Vec<u32> = got
        .iter()
        .filter_map(|e| if let Event::CallStart { index, .. } = e { Some(*index) } else { None })
        .collect();
    assert_eq!(starts, [0, 1]);
    // After-stop fault for the latest call, and an unannounced fragment before any call.
    let mut t3 = t.clone();
    t3.faults = vec![
        Fault { kind: FaultKind::FragmentAfterStop { call: 1, fragment: "x".into() }, at: 99 },
        Fault { kind: FaultKind::UnannouncedFragment { missing_index: false, fragment: "y".into() }, at: 0 },
    ];
    round_trip(&t3, Dialect::OpenAiChat, ZERO);
}

#[test]
fn index_zero_quirk_limits_are_unsupported() {
    let d = Dialect::OpenAiChat;
    let mixing = interleaved(
        refunded_open(0, "call_A", "call_B"),
        vec![0, 1, 0, 1],
        vec![],
        Ending::Stop(StopReason::ToolCalls),
    );
    let e = render_wire(&mixing, &render(&mixing), d, ZERO).unwrap_err();
    assert!(e.reason.contains("mixes two calls"), "{e}");
    round_trip(&mixing, d, PLAIN);
    let mut replay = interleaved(
        refunded_open(0, "call_A", "call_B"),
        vec![],
        vec![],
        Ending::Stop(StopReason::ToolCalls),
    );
    replay.faults = vec![Fault { kind: FaultKind::ReplayAnnouncement { call: 0 }, at: 2 }];
    let e = render_wire(&replay, &render(&replay), d, ZERO).unwrap_err();
    assert!(e.reason.contains("replayed announcement"), "{e}");
    let mut late = interleaved(
        refunded_open(0, "call_A", "call_B"),
        vec![],
        vec![],
        Ending::Stop(StopReason::ToolCalls),
    );
    late.faults = vec![Fault {
        kind: FaultKind::UnannouncedFragment { missing_index: false, fragment: "y".into() },
        at: 3,
    }];
    // A fragment for no call goes at an index no call holds (the neutral one, 2: every call
    // is at 0), and stays a fault.
    let wire = round_trip(&late, d, ZERO);
    assert!(wire.events.iter().any(|e| e.data.contains(r#"[{"index":2,"function":{"arguments":"y"}}]"#)));
    let same_id = interleaved(
        refunded_open(0, "call_A", "call_A"),
        vec![],
        vec![],
        Ending::Stop(StopReason::ToolCalls),
    );
    assert!(render_wire(&same_id, &render(&same_id), d, ZERO).is_err());
}

/// Under the one Chat rule an entry with a call's id again continues the call and one with a
/// new id starts another: no profile can replay an announcement, and each says so.
#[test]
fn chat_refuses_a_replayed_announcement_in_every_profile() {
    let mut t = interleaved(
        refunded_open(0, "call_A", "call_B"),
        vec![],
        vec![],
        Ending::Stop(StopReason::ToolCalls),
    );
    t.faults = vec![Fault { kind: FaultKind::ReplayAnnouncement { call: 0 }, at: 2 }];
    for p in Dialect::OpenAiChat.profiles() {
        let e = render_wire(&t, &render(&t), Dialect::OpenAiChat, p.quirks).unwrap_err();
        assert!(e.reason.starts_with("a replayed announcement:"), "{}: {e}", p.name);
    }
}

// ---------------------------------------------------------------------------------------
// Generated turns.

fn content() -> impl Strategy<Value = String> {
    proptest::collection::vec(
        prop_oneof![
            4 => proptest::char::range('a', 'e'),
            3 => prop::sample::select(vec![' ', '"', '\\', '{', '}', ':', ',', '\n']),
            1 => prop::sample::select(vec!['é', '€', '😀']),
        ],
        0..16,
    )
    .prop_map(|v| v.into_iter().collect())
}

fn block() -> impl Strategy<Value = (bool, String, Vec<usize>)> {
    (any::<bool>(), content(), proptest::collection::vec(0usize..20, 0..5))
}

fn reason() -> impl Strategy<Value = StopReason> {
    prop::sample::select(StopReason::ALL.to_vec())
}

fn ending() -> impl Strategy<Value = Ending> {
    prop_oneof![
        2 => reason().prop_map(Ending::Stop),
        1 => (0u32..30).prop_map(|after| Ending::Abandoned { after, end: StreamEnd::Disconnect }),
        1 => (0u32..30).prop_map(|after| Ending::Errored { after, message: "upstream \"overloaded\" é".into() }),
    ]
}

fn fault() -> impl Strategy<Value = Fault> {
    let kind = prop_oneof![
        (0u16..4).prop_map(|call| FaultKind::ReplayAnnouncement { call }),
        content().prop_map(|fragment| FaultKind::UnannouncedFragment { missing_index: false, fragment }),
        (0u16..4, content()).prop_map(|(call, fragment)| FaultKind::FragmentAfterStop { call, fragment }),
        (0u16..4, content()).prop_map(|(call, arguments)| FaultKind::DoneMismatch { call, arguments }),
    ];
    (kind, 0u32..30).prop_map(|(kind, at)| Fault { kind, at })
}

/// A turn of the shape the generators make: per-call indices are block positions,
/// interleaved ones are ordinals; call ids are unique.
fn turn(interleave: bool) -> impl Strategy<Value = Turn> {
    (
        proptest::collection::vec(block(), 0..5),
        ending(),
        proptest::collection::vec(fault(), 0..3),
        proptest::collection::vec(0u32..30, 0..3),
        proptest::collection::vec(0u16..5, 0..12),
        proptest::collection::vec(any::<bool>(), 0..16),
    )
        .prop_map(move |(blocks, ending, faults, pings, order, joins)| {
            let mut ordinal = 0;
            let blocks = blocks
                .into_iter()
                .enumerate()
                .map(|(pos, (is_call, s, splits))| {
                    if is_call {
                        let index = if interleave { ordinal } else { pos as u32 };
                        ordinal += 1;
                        Block::Call(Call {
                            index,
                            call_id: format!("call_{pos}"),
                            name: if pos % 2 == 0 { "search_orders".into() } else { "é_tool".into() },
                            arguments: s,
                            splits,
                        })
                    } else if s.len() % 4 == 3 {
                        // Some non-call blocks are foreign, of kinds both dialects of the shape have.
                        use toolcert_scenario::{ForeignBlock, ForeignKind};
                        let kind = match (s.len() % 8 == 7, interleave) {
                            (false, _) => ForeignKind::Thinking,
                            (true, true) => ForeignKind::Refusal,
                            (true, false) => ForeignKind::RedactedThinking,
                        };
                        let splits = if kind.streams() { splits } else { Vec::new() };
                        let index = if interleave { 0 } else { pos as u32 };
                        Block::Foreign(ForeignBlock {
                            kind,
                            index,
                            id: String::new(),
                            name: String::new(),
                            text: s,
                            splits,
                        })
                    } else {
                        Block::Text(TextBlock { text: s, splits })
                    }
                })
                .collect();
            let shape =
                if interleave { Shape::Interleaved(Interleave { order, joins }) } else { Shape::PerCall };
            Turn {
                tools: vec![],
                blocks,
                shape,
                ending,
                faults,
                pings,
                transport: Default::default(),
                wire: Default::default(),
            }
        })
}

fn has_done_mismatch(t: &Turn) -> bool {
    render(t).events.iter().any(|e| matches!(e, Event::CallStop { arguments: Some(_), .. }))
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 400, ..ProptestConfig::default() })]

    #[test]
    fn generated_per_call_turns_round_trip(t in turn(false)) {
        round_trip(&t, Dialect::OpenAiResponses, PLAIN);
        if has_done_mismatch(&t) {
            prop_assert!(render_wire(&t, &render(&t), Dialect::Anthropic, PLAIN).is_err());
        } else {
            round_trip(&t, Dialect::Anthropic, PLAIN);
        }
        // Every server profile of both: the same calls and text, a whole call's fragments
        // as one (docs/SPEC.md, "Server profiles").
        for dialect in [Dialect::OpenAiResponses, Dialect::Anthropic] {
            if dialect == Dialect::Anthropic && has_done_mismatch(&t) {
                continue;
            }
            for p in dialect.profiles().skip(1) {
                profile_round_trip(&t, dialect, p.quirks);
            }
        }
    }

    #[test]
    fn generated_interleaved_turns_round_trip(t in turn(true)) {
        // Sequential pieces without faults are expressible in every profile.
        let mut seq = t.clone();
        seq.shape = Shape::Interleaved(Interleave { order: vec![], joins: match &t.shape {
            Shape::Interleaved(il) => il.joins.clone(),
            Shape::PerCall => vec![],
        }});
        seq.faults.clear();
        for p in Dialect::OpenAiChat.profiles() {
            // Whatever a profile can express round-trips, with ordinals; the plain profile
            // refuses only what no Chat entry can say.
            match render_wire(&t, &render(&t), Dialect::OpenAiChat, p.quirks) {
                Ok(_) => { round_trip(&t, Dialect::OpenAiChat, p.quirks); }
                Err(e) if p.quirks.is_plain() => prop_assert!(
                    e.reason.starts_with("a replayed announcement")
                        || e.reason.starts_with("an empty fragment after the finish reason"),
                    "{}", e
                ),
                Err(_) => {}
            }
            round_trip(&seq, Dialect::OpenAiChat, p.quirks);
        }
    }

    /// The whole stack: neutral → wire → SSE bytes (any line end, comments, multi-line
    /// data) → cut anywhere → SSE decoder → dialect decoder gives the same neutral events as
    /// decoding the wire events directly.
    #[test]
    fn full_stack_through_cut_bytes(
        t in turn(false),
        chat in turn(true),
        line_end in prop::sample::select(vec![LineEnd::Lf, LineEnd::CrLf, LineEnd::Cr]),
        comments in proptest::collection::vec(0u32..40, 0..3),
        multiline in proptest::collection::vec(0u32..40, 0..3),
        cuts in proptest::collection::vec(any::<u32>(), 0..10),
    ) {
        let transport = Transport { line_end, cuts: Vec::new(), comments: comments.clone(), multiline: multiline.clone(), tail: None, corrupt: None };
        // Each per-call profile too, its turn carrying the transport it is sent with (a
        // profile sends no whole call where multi-line data would re-indent it).
        let sent = Turn { transport: transport.clone(), ..t.clone() };
        let profiles = [Dialect::OpenAiResponses, Dialect::Anthropic]
            .into_iter()
            .flat_map(|d| d.profiles().skip(1).map(move |p| (d, p.quirks)));
        let speeches = [(&t, Dialect::OpenAiResponses, PLAIN), (&chat, Dialect::OpenAiChat, PLAIN), (&t, Dialect::Anthropic, PLAIN)]
            .into_iter()
            .chain(profiles.map(|(d, q)| (&sent, d, q)));
        for (turn, dialect, quirks) in speeches {
            let neutral = render(turn);
            let Ok(wire) = render_wire(turn, &neutral, dialect, quirks) else { continue };
            let enc = encode(&wire.events, &framing(&transport));
            let cuts: Vec<u32> = cuts.iter().map(|c| c % (enc.bytes.len() as u32 + 1)).collect();
            let mut sse = Decoder::new();
            let mut events = Vec::new();
            for chunk in cut(&enc.bytes, &cuts) {
                sse.feed(chunk, &mut events).unwrap();
            }
            sse.finish(&mut events).unwrap();
            prop_assert_eq!(events.len(), wire.events.len());
            let direct = decode_events(dialect, quirks, &wire.events).unwrap();
            let through_bytes = decode_events(dialect, quirks, &events).unwrap();
            prop_assert_eq!(&through_bytes, &direct);
            prop_assert_eq!(wire.delivered_by(&enc.ends, enc.bytes.len()) as usize, neutral.events.len());
            // At every byte, what a decoder has dispatched is what `upto` says is delivered
            // (a CRLF blank line dispatches at its CR, one byte before the event's end).
            let mut sse = Decoder::new();
            let mut events = Vec::new();
            let mut dialect_decoder = toolcert_dialect::decoder(dialect, quirks);
            let mut neutral_out = Vec::new();
            for b in 0..enc.bytes.len() {
                let before = events.len();
                sse.feed(&enc.bytes[b..b + 1], &mut events).unwrap();
                for e in &events[before..] {
                    dialect_decoder.decode(&toolcert_subject::WireMessage::Sse(e.clone()), &mut neutral_out).unwrap();
                }
                let lo = wire.delivered_by(&enc.ends, b + 1) as usize;
                let hi = wire.delivered_by(&enc.ends, b + 2) as usize;
                if quirks.is_plain() {
                    prop_assert!((lo..=hi).contains(&neutral_out.len()), "byte {}: {} not in {}..={}", b, neutral_out.len(), lo, hi);
                } else {
                    // A whole call is one fragment: what is out is what some count in
                    // `lo..=hi` delivers, fragments joined.
                    let want = expected(dialect, PLAIN, &neutral);
                    let got = joined(&neutral_out);
                    prop_assert!((lo..=hi).any(|k| joined(&want[..k]) == got), "byte {}: {:?} is not {}..={} events", b, got, lo, hi);
                }
            }
        }
    }
}

/// Servers that repeat id, type and name on every entry: the repeats name the same call, so
/// the turn decodes to the same neutral events, per call and interleaved, with and without
/// the index-zero quirk.
#[test]
fn chat_repeated_fields_round_trip() {
    let both = Quirks { chat_index_zero: true, chat_repeat_fields: true, ..Quirks::PLAIN };
    let per = per_call(refunded_open(0, "call_A", "call_B"), Ending::Stop(StopReason::ToolCalls));
    let il = |joins| {
        interleaved(refunded_open(0, "call_A", "call_B"), vec![], joins, Ending::Stop(StopReason::ToolCalls))
    };
    let (apart, joined) = (il(vec![]), il(vec![false, true, false, true]));
    for quirks in [REPEAT, both] {
        for t in [&apart, &joined] {
            let wire = round_trip(t, Dialect::OpenAiChat, quirks);
            let entries: Vec<serde_json::Value> = wire
                .events
                .iter()
                .filter_map(|e| serde_json::from_str::<serde_json::Value>(&e.data).ok())
                .flat_map(|v| v["choices"][0]["delta"]["tool_calls"].as_array().cloned().unwrap_or_default())
                .collect();
            assert!(entries.len() > 2, "{entries:?}");
            assert!(
                entries.iter().all(|e| e["function"]["name"] == "search_orders" && e["id"].is_string()),
                "{entries:?}"
            );
        }
    }
    let e = render_wire(&per, &render(&per), Dialect::Anthropic, REPEAT).unwrap_err();
    assert!(e.to_string().contains("quirk of no anthropic server profile"), "{e}");
}

/// Foreign blocks round trip in every dialect that has their kinds, at every cut of the
/// stream, and a dialect without a kind refuses the turn instead of dropping it.
#[test]
fn foreign_blocks_round_trip_where_their_dialect_has_them() {
    use toolcert_scenario::{ForeignBlock, ForeignKind};
    let foreign = |kind: ForeignKind, index: u32, id: &str, name: &str, text: &str, splits: Vec<usize>| {
        Block::Foreign(ForeignBlock {
            kind,
            index,
            id: id.into(),
            name: name.into(),
            text: text.into(),
            splits,
        })
    };
    let anthropic = per_call(
        vec![
            foreign(ForeignKind::Thinking, 0, "", "", "Hm, {\"a\": 1} é", vec![3, 3, 8]),
            foreign(ForeignKind::RedactedThinking, 1, "", "", "EmwKAhgB", vec![]),
            text(&["Searching."]),
            foreign(
                ForeignKind::ServerToolUse,
                3,
                "srvtoolu_01",
                "web_search",
                "{\"query\": \"x\"}",
                vec![5],
            ),
            foreign(ForeignKind::ServerToolResult, 4, "srvtoolu_01", "", "Result — title", vec![]),
            call(5, "toolu_01A", "lookup", &["{\"id\": ", "1}"]),
        ],
        Ending::Stop(StopReason::ToolUse),
    );
    let responses = per_call(
        vec![
            foreign(ForeignKind::Thinking, 0, "", "", "Hm, 東京", vec![2]),
            foreign(ForeignKind::RedactedThinking, 1, "", "", "EmwKAhgB", vec![]),
            foreign(ForeignKind::WebSearchCall, 2, "ws_01", "", "refund policy", vec![]),
            text(&["Searching."]),
            foreign(ForeignKind::Refusal, 4, "", "", "I can't", vec![1, 4]),
            foreign(ForeignKind::CustomToolCall, 5, "call_ct1", "apply_patch", "*** Begin\n+x\n", vec![0, 6]),
            call(6, "call_01A", "lookup", &["{\"id\": ", "1}"]),
        ],
        Ending::Stop(StopReason::Completed),
    );
    let chat = interleaved(
        vec![
            foreign(ForeignKind::Thinking, 0, "", "", "Hm, ok", vec![2]),
            foreign(ForeignKind::Thinking, 0, "", "reasoning", "other spelling", vec![]),
            call(0, "call_01A", "lookup", &["{\"id\": ", "1}"]),
            foreign(ForeignKind::Refusal, 0, "", "", "I can't", vec![3]),
            text(&["ok"]),
        ],
        vec![0, 2, 1, 2, 3, 0, 4],
        vec![false, true, false, true, false, true],
        Ending::Stop(StopReason::ToolCalls),
    );
    for (dialect, turn) in
        [(Dialect::Anthropic, anthropic), (Dialect::OpenAiResponses, responses), (Dialect::OpenAiChat, chat)]
    {
        round_trip(&turn, dialect, PLAIN);
        let n = render(&turn).events.len() as u32;
        for after in 0..=n {
            let t = Turn { ending: Ending::Abandoned { after, end: StreamEnd::Disconnect }, ..turn.clone() };
            round_trip(&t, dialect, PLAIN);
        }
        // Each other dialect of the same shape lacks some kind: refused, not dropped.
        for other in Dialect::ALL
            .into_iter()
            .filter(|d| *d != dialect && toolcert_dialect::def(*d).carries(&turn.shape))
        {
            let err = render_wire(&turn, &render(&turn), other, PLAIN).unwrap_err();
            assert!(err.reason.contains("block"), "{err}");
        }
    }
}

// ---------------------------------------------------------------------------------------
// Server profiles.

/// Each chunk's tool-call entries, and whether it carries a finish reason.
fn chat_chunks(wire: &toolcert_dialect::SseStream) -> Vec<(Vec<serde_json::Value>, bool)> {
    wire.events
        .iter()
        .filter_map(|e| serde_json::from_str::<serde_json::Value>(&e.data).ok())
        .filter(|v| v["choices"][0].is_object())
        .map(|v| {
            let entries = v["choices"][0]["delta"]["tool_calls"].as_array().cloned().unwrap_or_default();
            (entries, v["choices"][0]["finish_reason"].is_string())
        })
        .collect()
}

/// Every profile of openai-chat sends the shape its flags name, and reads back (a text block,
/// then two calls of three and two fragments, sent in block order).
#[test]
fn each_chat_profile_sends_its_shape() {
    let t = interleaved(
        vec![
            text(&["Checking."]),
            call(0, "call_A", "search_orders", &[r#"{"status": "#, r#""refunded", "#, r#""limit": 5}"#]),
            call(1, "call_B", "lookup_order", &[r#"{"order_id": "#, r#""A-4471"}"#]),
        ],
        vec![],
        vec![],
        Ending::Stop(StopReason::ToolCalls),
    );
    for p in Dialect::OpenAiChat.profiles() {
        let q = p.quirks;
        let wire = round_trip(&t, Dialect::OpenAiChat, q);
        let chunks = chat_chunks(&wire);
        let finishes: Vec<&Vec<serde_json::Value>> =
            chunks.iter().filter(|(_, f)| *f).map(|(e, _)| e).collect();
        let entries: Vec<&serde_json::Value> =
            chunks.iter().filter(|(_, f)| !*f).flat_map(|(e, _)| e).collect();
        // Each call's first entry: the first with its id.
        let mut seen = Vec::new();
        let firsts: Vec<&&serde_json::Value> = entries
            .iter()
            .filter(|e| match e["id"].as_str().filter(|i| !i.is_empty()) {
                Some(id) if !seen.contains(&id) => {
                    seen.push(id);
                    true
                }
                _ => false,
            })
            .collect();
        let named = |e: &serde_json::Value| e["function"]["name"].as_str().is_some_and(|n| !n.is_empty());
        if q.chat_late_name {
            // A call's first entry without its name (both calls' second pieces follow
            // their first), and its second entry with it.
            assert!(firsts.iter().all(|e| !named(e)), "{}: {firsts:#?}", p.name);
            let after: Vec<bool> = entries
                .iter()
                .enumerate()
                .filter(|(_, e)| firsts.iter().any(|f| std::ptr::eq(**f, **e)))
                .map(|(k, _)| entries.get(k + 1).is_some_and(|n| named(n)))
                .collect();
            assert_eq!(after, [true, true], "{}: {entries:#?}", p.name);
        } else {
            assert!(firsts.iter().all(|e| named(e)));
        }
        let indices: Vec<Option<u64>> =
            entries.iter().map(|e| e.get("index").and_then(|i| i.as_u64())).collect();
        let why = format!("{}: {entries:#?}", p.name);
        // Index 0 for every call; no index at all; block positions; or the scenario's.
        let expected_indices: [Option<u64>; 2] = if q.chat_no_index {
            [None, None]
        } else if q.chat_index_zero {
            [Some(0), Some(0)]
        } else if q.chat_sparse_index {
            [Some(1), Some(2)]
        } else {
            [Some(0), Some(1)]
        };
        assert_eq!(
            firsts.iter().map(|e| e.get("index").and_then(|i| i.as_u64())).collect::<Vec<_>>(),
            expected_indices,
            "{why}"
        );
        assert!(indices.iter().all(|i| expected_indices.contains(i)), "{why}");
        // Whole calls: one entry per call.
        if q.chat_whole_calls {
            assert_eq!(entries.len(), 2, "{why}");
            assert_eq!(entries[0]["function"]["arguments"], r#"{"status": "refunded", "limit": 5}"#, "{why}");
        } else if q.chat_split_entries {
            // Each fragment as two entries of one index in one chunk.
            assert_eq!(entries.len(), 10, "{why}");
            assert!(chunks.iter().all(|(e, f)| *f || e.is_empty() || e.len() == 2), "{why}");
        } else {
            assert_eq!(entries.len(), 5, "{why}");
        }
        let later: Vec<&&serde_json::Value> =
            entries.iter().filter(|e| !firsts.iter().any(|f| std::ptr::eq(**f, **e))).collect();
        for e in &later {
            let (id, name) = (e.get("id"), e["function"].get("name"));
            if q.chat_repeat_fields {
                assert!(id.is_some_and(|i| i.as_str().is_some_and(|i| i.starts_with("call_"))), "{why}");
            } else if q.chat_repeat_id {
                assert!(
                    id.is_some_and(|i| i.as_str().is_some_and(|i| i.starts_with("call_"))) && name.is_none(),
                    "{why}"
                );
            } else if q.chat_empty_continuations {
                assert!(id == Some(&serde_json::json!("")) && name == Some(&serde_json::json!("")), "{why}");
            } else if q.chat_late_name {
                assert!(id.is_none(), "{why}");
            } else {
                assert!(id.is_none() && name.is_none(), "{why}");
            }
        }
        if q.chat_repeat_fields {
            // The first entries are not the only ones naming the call.
            assert!(
                entries.iter().all(|e| e["function"]["name"].as_str().is_some_and(|n| !n.is_empty())),
                "{why}"
            );
        }
        // The finish: repeated calls with empty arguments beside it, and a second one.
        if q.chat_repeat_on_finish {
            assert_eq!(finishes.len(), 2, "{why}");
            let ids: Vec<&str> = finishes[0].iter().map(|e| e["id"].as_str().unwrap()).collect();
            assert_eq!(ids, ["call_A", "call_B"], "{why}");
            assert!(finishes[0].iter().all(|e| e["function"]["arguments"] == ""), "{why}");
            assert!(wire
                .events
                .iter()
                .rev()
                .nth(1)
                .is_some_and(|e| e.data.contains(r#""finish_reason":"tool_calls"}],"usage":{"#)));
        } else {
            assert_eq!(finishes.len(), 1, "{why}");
            assert!(finishes[0].is_empty(), "{why}");
        }
    }
}

/// Every profile round-trips hand-made turns at every cut, with faults and pings, or refuses
/// exactly what it cannot say (a server keying calls by index 0 or by no index never mixes
/// two calls' id-less pieces).
#[test]
fn every_chat_profile_round_trips_hand_made_turns() {
    let d = Dialect::OpenAiChat;
    let joined = interleaved(
        refunded_open(0, "call_8Hs1", "call_9Jt2"),
        vec![0, 1, 0, 1],
        vec![false, true, false, true],
        Ending::Stop(StopReason::ToolCalls),
    );
    let mixed = interleaved(
        awkward(false),
        vec![1, 0, 3, 1, 4],
        vec![false, true, true],
        Ending::Stop(StopReason::ToolCalls),
    );
    let in_order =
        interleaved(awkward(false), vec![], vec![true, false, true, true], Ending::Stop(StopReason::Stop));
    for p in d.profiles() {
        let keyed_by_position = (p.quirks.chat_index_zero || p.quirks.chat_no_index)
            && !(p.quirks.chat_repeat_fields || p.quirks.chat_repeat_id);
        for base in [&joined, &mixed, &in_order] {
            let n = render(base).events.len() as u32;
            let mut turns = vec![base.clone()];
            for after in 0..=n {
                turns.push(Turn {
                    ending: Ending::Abandoned { after, end: StreamEnd::Disconnect },
                    ..base.clone()
                });
                turns.push(Turn {
                    ending: Ending::Errored { after, message: "Overloaded".into() },
                    ..base.clone()
                });
            }
            for at in [0, 3, 99] {
                let faults = vec![
                    Fault {
                        kind: FaultKind::UnannouncedFragment {
                            missing_index: true,
                            fragment: "{\"x\"".into(),
                        },
                        at,
                    },
                    Fault { kind: FaultKind::FragmentAfterStop { call: 0, fragment: "}".into() }, at },
                ];
                turns.push(Turn { faults, pings: vec![0, 2, 99], ..base.clone() });
            }
            for t in &turns {
                match render_wire(t, &render(t), d, p.quirks) {
                    Ok(_) => {
                        round_trip(t, d, p.quirks);
                    }
                    Err(e) => {
                        assert!(keyed_by_position && e.reason.contains("mixes two calls"), "{}: {e}", p.name)
                    }
                }
            }
        }
        // Calls in block order are said by every profile.
        round_trip(&in_order, d, p.quirks);
    }
}
