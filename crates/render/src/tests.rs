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

/// The renderer as it was before it wrote events and origins side by side and borrowed split
/// points already in order: the oracle the current one is checked against.
mod former {
    use std::borrow::Cow;
    use toolcert_scenario::{fragments, Block, Ending, FaultKind, ForeignBlock, Shape, StreamEnd, Turn};

    use crate::{Event, Origin, Rendered};

    /// Renders one turn as provider-neutral events.
    pub(super) fn render(turn: &Turn) -> Rendered<'_> {
        // About the events the turn renders (a fragment per split and one more per block, a
        // start and a stop per call), so the body grows once at most.
        let pieces: usize = turn
            .blocks
            .iter()
            .map(|b| match b {
                Block::Text(t) => t.splits.len() + 1,
                Block::Call(c) => c.splits.len() + 3,
                Block::Foreign(f) => f.splits.len() + 3,
            })
            .sum();
        let mut body: Vec<(Event<'_>, Origin)> =
            Vec::with_capacity(pieces + turn.faults.len() + turn.pings.len() + 2);
        match &turn.shape {
            Shape::PerCall => {
                for (b, block) in turn.blocks.iter().enumerate() {
                    let block_no = b as u32;
                    match block {
                        Block::Text(t) => {
                            for (r, f) in fragments(&t.text, &t.splits) {
                                body.push((
                                    Event::TextDelta { text: Cow::Borrowed(f) },
                                    Origin::Text {
                                        block: block_no,
                                        start: r.start as u32,
                                        end: r.end as u32,
                                    },
                                ));
                            }
                        }
                        Block::Call(c) => {
                            body.push((announce(c), Origin::Announce { block: block_no }));
                            for (r, f) in fragments(&c.arguments, &c.splits) {
                                body.push((
                                    Event::ArgsDelta { index: c.index, fragment: Cow::Borrowed(f) },
                                    Origin::Fragment {
                                        block: block_no,
                                        start: r.start as u32,
                                        end: r.end as u32,
                                    },
                                ));
                            }
                            body.push((
                                Event::CallStop { index: c.index, arguments: None },
                                Origin::CallStop { block: block_no },
                            ));
                        }
                        Block::Foreign(f) => foreign_per_call(f, block_no, &mut body),
                    }
                }
            }
            Shape::Interleaved(il) => interleave(turn, &il.order, &mut body),
        }
        if let Ending::Stop(reason) = turn.ending {
            body.push((Event::Stop { reason }, Origin::Stop));
        }
        insert_faults(turn, &mut body);
        insert_pings(&turn.pings, &mut body);

        let end = match &turn.ending {
            Ending::Stop(_) => StreamEnd::Eof,
            Ending::Abandoned { after, end } => {
                body.truncate(*after as usize);
                *end
            }
            Ending::Errored { after, message } => {
                body.truncate(*after as usize);
                body.push((Event::Error { message: Cow::Borrowed(message) }, Origin::Error));
                StreamEnd::Eof
            }
        };
        let (events, origins) = body.into_iter().unzip();
        Rendered { events, origins, end }
    }

    /// A foreign block in the per-call shape: its start, its deltas (for the kinds that stream)
    /// and its stop.
    fn foreign_per_call<'a>(f: &'a ForeignBlock, block: u32, body: &mut Vec<(Event<'a>, Origin)>) {
        let streams = f.kind.streams();
        body.push((
            Event::ForeignStart {
                index: f.index,
                kind: f.kind,
                id: Cow::Borrowed(if f.kind.carries_id() { &f.id } else { "" }),
                name: Cow::Borrowed(if f.kind.carries_name() { &f.name } else { "" }),
                content: Cow::Borrowed(if streams { "" } else { &f.text }),
            },
            Origin::ForeignStart { block },
        ));
        if streams {
            for (r, piece) in fragments(&f.text, &f.splits) {
                body.push((
                    Event::ForeignDelta { index: f.index, kind: f.kind, fragment: Cow::Borrowed(piece) },
                    Origin::Foreign { block, start: r.start as u32, end: r.end as u32 },
                ));
            }
        }
        body.push((Event::ForeignStop { index: f.index }, Origin::ForeignStop { block }));
    }

    fn announce(c: &toolcert_scenario::Call) -> Event<'_> {
        Event::CallStart { index: c.index, call_id: Cow::Borrowed(&c.call_id), name: Cow::Borrowed(&c.name) }
    }

    /// The interleaved (OpenAI Chat) shape: a call's announcement rides with its first piece.
    fn interleave<'a>(turn: &'a Turn, order: &[u16], body: &mut Vec<(Event<'a>, Origin)>) {
        // Each block's pieces: fragments, or for a call with no argument bytes one bare piece
        // (the announcement alone).
        type Piece<'a> = Option<(std::ops::Range<usize>, &'a str)>;
        let mut pieces: Vec<std::collections::VecDeque<Piece<'a>>> = turn
            .blocks
            .iter()
            .map(|b| match b {
                Block::Text(t) => fragments(&t.text, &t.splits).map(Some).collect(),
                Block::Foreign(f) => fragments(&f.text, &f.splits).map(Some).collect(),
                Block::Call(c) => {
                    let mut q: std::collections::VecDeque<Piece<'a>> =
                        fragments(&c.arguments, &c.splits).map(Some).collect();
                    if q.is_empty() {
                        q.push_back(None);
                    }
                    q
                }
            })
            .collect();
        let n = turn.blocks.len();
        let mut announced = vec![false; n];
        let mut send = |b: usize| {
            let Some(piece) = pieces[b].pop_front() else { return false };
            let block_no = b as u32;
            match (&turn.blocks[b], piece) {
                (Block::Text(_), Some((r, f))) => body.push((
                    Event::TextDelta { text: Cow::Borrowed(f) },
                    Origin::Text { block: block_no, start: r.start as u32, end: r.end as u32 },
                )),
                (Block::Text(_) | Block::Foreign(_), None) => {}
                // Chat's foreign deltas ride on the choice's delta: no index, no start or stop.
                (Block::Foreign(f), Some((r, piece))) => body.push((
                    Event::ForeignDelta { index: 0, kind: f.kind, fragment: Cow::Borrowed(piece) },
                    Origin::Foreign { block: block_no, start: r.start as u32, end: r.end as u32 },
                )),
                (Block::Call(c), piece) => {
                    if !announced[b] {
                        announced[b] = true;
                        body.push((announce(c), Origin::Announce { block: block_no }));
                    }
                    if let Some((r, f)) = piece {
                        body.push((
                            Event::ArgsDelta { index: c.index, fragment: Cow::Borrowed(f) },
                            Origin::Fragment { block: block_no, start: r.start as u32, end: r.end as u32 },
                        ));
                    }
                }
            }
            true
        };
        if n == 0 {
            return;
        }
        for &o in order {
            send(o as usize % n);
        }
        // What the order left unsent follows in block order.
        for b in 0..n {
            while send(b) {}
        }
    }

    /// Inserts each fault at its position, clamped to where it makes sense; a fault that cannot
    /// be placed (it names a call of a turn with none, or follows a terminal the stream never
    /// sends) is not rendered.
    fn insert_faults<'a>(turn: &'a Turn, body: &mut Vec<(Event<'a>, Origin)>) {
        // Past every call's index and every foreign block's: a foreign block's index is taken, and
        // a fragment there would read as its delta in the dialects that key deltas by index.
        let unused_index = turn
            .calls()
            .map(|c| c.index)
            .chain(turn.foreign().map(|f| f.index))
            .max()
            .map_or(0, |m| m.saturating_add(1));
        let mut inserts: Vec<(usize, Event<'a>, Origin)> = Vec::new();
        for (k, fault) in turn.faults.iter().enumerate() {
            let origin = Origin::Fault { fault: k as u32 };
            let call_of = |call: u16| -> Option<(u32, &'a toolcert_scenario::Call)> {
                let block = turn.fault_call_block(call)?;
                match &turn.blocks[block as usize] {
                    Block::Call(c) => Some((block, c)),
                    Block::Text(_) | Block::Foreign(_) => None,
                }
            };
            let placed = match &fault.kind {
                FaultKind::ReplayAnnouncement { call } => call_of(*call).and_then(|(block, c)| {
                    let lo = body.iter().position(|(_, o)| *o == Origin::Announce { block })? + 1;
                    Some((lo, announce(c)))
                }),
                FaultKind::UnannouncedFragment { fragment, .. } => {
                    Some((0, Event::ArgsDelta { index: unused_index, fragment: Cow::Borrowed(fragment) }))
                }
                FaultKind::DoneMismatch { call, arguments } => {
                    // Not an inserted event: the call's own terminal carries the wrong arguments.
                    if let Some((block, _)) = call_of(*call) {
                        if let Some((Event::CallStop { arguments: a, .. }, _)) =
                            body.iter_mut().find(|(_, o)| *o == Origin::CallStop { block })
                        {
                            *a = Some(Cow::Borrowed(arguments));
                        }
                    }
                    None
                }
                FaultKind::FragmentAfterStop { call, fragment } => call_of(*call).and_then(|(block, c)| {
                    let terminal = match turn.shape {
                        Shape::PerCall => Origin::CallStop { block },
                        Shape::Interleaved(_) => Origin::Stop,
                    };
                    let lo = body.iter().position(|(_, o)| *o == terminal)? + 1;
                    Some((lo, Event::ArgsDelta { index: c.index, fragment: Cow::Borrowed(fragment) }))
                }),
            };
            if let Some((lo, event)) = placed {
                let at = (fault.at as usize).clamp(lo, body.len());
                inserts.push((at, event, origin));
            }
        }
        // Insert from the back so earlier positions stay valid; equal positions keep fault order.
        inserts.sort_by_key(|(at, _, _)| *at);
        for (at, event, origin) in inserts.into_iter().rev() {
            body.insert(at, (event, origin));
        }
    }

    fn insert_pings(pings: &[u32], body: &mut Vec<(Event<'_>, Origin)>) {
        let mut at: Vec<usize> = pings.iter().map(|&p| (p as usize).min(body.len())).collect();
        at.sort_unstable();
        for p in at.into_iter().rev() {
            body.insert(p, (Event::Ping, Origin::Ping));
        }
    }
}

/// The renderer gives what its former self gave, event for event, on generated cases of
/// several seeds (every shape, faults, pings, endings, foreign blocks), on named cases, and
/// on split points out of order, past the end and inside characters.
#[test]
fn rendering_answers_as_the_former_renderer() {
    let cfg = toolcert_gen::GenConfig { schema: true, ..Default::default() };
    let strategy = toolcert_gen::strategy::case_strategy(&cfg);
    let mut turns = 0;
    for seed in [1, 2, 3] {
        for k in 0..3000 {
            let case = toolcert_gen::strategy::generated_case(&strategy, seed, k, String::new());
            for t in &case.streams {
                assert_eq!(render(t), former::render(t), "seed {seed} case {k}");
                turns += 1;
            }
        }
    }
    for named in toolcert_gen::named::all() {
        for t in &named.case.streams {
            assert_eq!(render(t), former::render(t), "{}", named.case.name);
        }
    }
    assert!(turns > 9000);
    // Split points a generator never writes: unsorted, repeated, past the end, inside é.
    for splits in [vec![5, 2], vec![2, 2, 9], vec![40, 1], vec![4, 3], vec![0], vec![]] {
        for (text, args) in [("héllo wörld", r#"{"é": 1}"#), ("", ""), ("ab", "")] {
            let t = turn(
                vec![
                    Block::Text(TextBlock { text: text.into(), splits: splits.clone() }),
                    call(1, "a", args, &splits),
                ],
                Shape::PerCall,
                Ending::Stop(StopReason::ToolUse),
            );
            assert_eq!(render(&t), former::render(&t), "{splits:?} {text:?}");
            let il = Turn {
                shape: Shape::Interleaved(Interleave { order: vec![1, 0, 1, 1, 0], joins: vec![] }),
                ..t.clone()
            };
            assert_eq!(render(&il), former::render(&il), "{splits:?} {text:?}");
            let whole = toolcert_scenario::fragments(text, &splits).collect::<Vec<_>>();
            assert_eq!(fragments(text, &splits).collect::<Vec<_>>(), whole);
        }
    }
}
