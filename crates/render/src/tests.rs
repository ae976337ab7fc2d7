use super::*;
use toolcert_scenario::{Call, Fault, Interleave, StopReason, TextBlock};

fn call(index: u32, id: &str, args: &str, splits: &[usize]) -> Block {
    Block::Call(Call {
        index,
        call_id: id.into(),
        name: "search_orders".into(),
        arguments: args.into(),
        splits: splits.to_vec(),
    })
}

fn turn(blocks: Vec<Block>, shape: Shape, ending: Ending) -> Turn {
    Turn {
        tools: vec![],
        blocks,
        shape,
        ending,
        faults: vec![],
        pings: vec![],
        transport: Default::default(),
        wire: Default::default(),
    }
}

#[test]
fn per_call_shape_closes_each_call_then_stops() {
    let t = turn(
        vec![Block::Text(TextBlock { text: "hi".into(), splits: vec![] }), call(1, "a", "{}", &[1])],
        Shape::PerCall,
        Ending::Stop(StopReason::ToolUse),
    );
    let r = render(&t);
    assert_eq!(
        r.origins,
        [
            Origin::Text { block: 0, start: 0, end: 2 },
            Origin::Announce { block: 1 },
            Origin::Fragment { block: 1, start: 0, end: 1 },
            Origin::Fragment { block: 1, start: 1, end: 2 },
            Origin::CallStop { block: 1 },
            Origin::Stop,
        ]
    );
}

#[test]
fn interleaved_shape_follows_the_order_and_has_no_call_stop() {
    let t = turn(
        vec![call(0, "a", "ab", &[1]), call(1, "b", "cd", &[1])],
        Shape::Interleaved(Interleave { order: vec![0, 1, 1], joins: vec![] }),
        Ending::Stop(StopReason::ToolCalls),
    );
    let r = render(&t);
    let frags: Vec<String> = r
        .events
        .iter()
        .filter_map(|e| match e {
            Event::ArgsDelta { index, fragment } => Some(format!("{index}:{fragment}")),
            _ => None,
        })
        .collect();
    assert_eq!(frags, ["0:a", "1:c", "1:d", "0:b"]);
    assert!(!r.events.iter().any(|e| matches!(e, Event::CallStop { .. })));
    assert_eq!(r.events.last(), Some(&Event::Stop { reason: StopReason::ToolCalls }));
}

#[test]
fn abandoned_turn_is_cut_and_errored_turn_ends_with_the_error() {
    let mut t = turn(
        vec![call(0, "a", "abcd", &[1, 2])],
        Shape::PerCall,
        Ending::Abandoned { after: 2, end: StreamEnd::Disconnect },
    );
    let r = render(&t);
    assert_eq!(r.events.len(), 2);
    assert_eq!(r.end, StreamEnd::Disconnect);
    t.ending = Ending::Errored { after: 1, message: "overloaded".into() };
    let r = render(&t);
    assert_eq!(r.origins, [Origin::Announce { block: 0 }, Origin::Error]);
}

#[test]
fn faults_are_clamped_to_where_they_make_sense() {
    let mut t = turn(vec![call(3, "a", "ab", &[1])], Shape::PerCall, Ending::Stop(StopReason::ToolUse));
    t.faults = vec![
        Fault { kind: FaultKind::ReplayAnnouncement { call: 0 }, at: 0 },
        Fault { kind: FaultKind::FragmentAfterStop { call: 0, fragment: "x".into() }, at: 0 },
        Fault { kind: FaultKind::UnannouncedFragment { missing_index: false, fragment: "y".into() }, at: 0 },
    ];
    let r = render(&t);
    let announce = r.position(Origin::Announce { block: 0 }).unwrap();
    let replay = r.position(Origin::Fault { fault: 0 }).unwrap();
    let stop = r.position(Origin::CallStop { block: 0 }).unwrap();
    let after = r.position(Origin::Fault { fault: 1 }).unwrap();
    assert!(replay > announce);
    assert!(after > stop);
    assert_eq!(r.position(Origin::Fault { fault: 2 }), Some(0));
    assert_eq!(r.events[0], Event::ArgsDelta { index: 4, fragment: "y".into() });
}

#[test]
fn a_fault_with_no_call_to_name_is_not_rendered() {
    let mut t = turn(vec![], Shape::PerCall, Ending::Stop(StopReason::EndTurn));
    t.faults = vec![Fault { kind: FaultKind::ReplayAnnouncement { call: 0 }, at: 0 }];
    assert_eq!(render(&t).events, [Event::Stop { reason: StopReason::EndTurn }]);
}

/// The transcript uses the events level's own names (docs/PROTOCOL.md), whatever dialect the
/// case is sent in, and shows a terminal's repeated arguments beside the fragments joined.
#[test]
fn transcripts_use_the_neutral_names() {
    let mut t = turn(
        vec![
            Block::Text(TextBlock { text: "hi".into(), splits: vec![] }),
            call(1, "call_1", r#"{"a": 1}"#, &[4]),
        ],
        Shape::PerCall,
        Ending::Stop(StopReason::ToolUse),
    );
    t.faults =
        vec![Fault { kind: FaultKind::DoneMismatch { call: 0, arguments: r#"{"a": 2}"#.into() }, at: 0 }];
    let text = crate::transcript(&toolcert_scenario::Case::single("t", t));
    let want = [
        r#"text_delta  {"text":"hi"}"#,
        r#"call_start  {"index":1,"call_id":"call_1","name":"search_orders"}"#,
        r#"args_delta  {"index":1,"fragment":"{\"a\""}"#,
        r#"args_delta  {"index":1,"fragment":": 1}"}"#,
        r#"call_stop   {"index":1,"arguments":"{\"a\": 2}"}  # the fragments joined: "{\"a\": 1}""#,
        r#"stop        {"reason":"tool_use"}"#,
        "(end of stream)",
    ];
    assert_eq!(text.lines().collect::<Vec<_>>(), want, "{text}");
    assert!(!text.contains("partial_json") && !text.contains("stop_reason"), "{text}");
}
