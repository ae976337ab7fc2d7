//! The neutral renderer against its former self: the renderer as it was before it wrote events
//! and origins side by side and borrowed split points already in order, kept as the oracle
//! the current one is checked against over generated and named cases. (Here, not in
//! `toolcert-render`'s own tests: the generator depends on the renderer, and a dev-dependency
//! back would make the crates unpublishable in order.)

use toolcert::render::{fragments, render};
use toolcert::scenario::{Block, Call, Ending, Interleave, Shape, StopReason, TextBlock, Turn};

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

/// The renderer as it was before it wrote events and origins side by side and borrowed split
/// points already in order: the oracle the current one is checked against.
mod former {
    use std::borrow::Cow;
    use toolcert::scenario::{fragments, Block, Ending, FaultKind, ForeignBlock, Shape, StreamEnd, Turn};

    use toolcert::render::{Event, Origin, Rendered};

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

    fn announce(c: &toolcert::scenario::Call) -> Event<'_> {
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
            let call_of = |call: u16| -> Option<(u32, &'a toolcert::scenario::Call)> {
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
                    // Not an inserted event: the call's own terminal carries the wrong arguments,
                    // after an empty fragment when the call has none (a terminal with no
                    // fragment before it carries the arguments, docs/SPEC.md §3).
                    if let Some((block, c)) = call_of(*call) {
                        if let Some(at) = body.iter().position(|(_, o)| *o == Origin::CallStop { block }) {
                            if let (Event::CallStop { arguments: a, .. }, _) = &mut body[at] {
                                *a = Some(Cow::Borrowed(arguments));
                            }
                            let fragment = |(_, o): &(Event<'_>, Origin)| matches!(*o, Origin::Fragment { block: b, .. } if b == block);
                            if !body[..at].iter().any(fragment) {
                                let e = Event::ArgsDelta { index: c.index, fragment: Cow::Borrowed("") };
                                inserts.push((at, e, Origin::Fragment { block, start: 0, end: 0 }));
                            }
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
    let cfg = toolcert::gen::GenConfig { schema: true, ..Default::default() };
    let strategy = toolcert::gen::strategy::case_strategy(&cfg);
    let mut turns = 0;
    for seed in [1, 2, 3] {
        for k in 0..3000 {
            let case = toolcert::gen::strategy::generated_case(&strategy, seed, k, String::new());
            for t in &case.streams {
                assert_eq!(render(t), former::render(t), "seed {seed} case {k}");
                turns += 1;
            }
        }
    }
    for named in toolcert::gen::named::all() {
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
            // The fragments' rule, stated independently: boundaries 0, the normalized split
            // points and the length (nothing at all for an empty string without splits).
            let mut bounds = vec![0];
            bounds.extend(toolcert::scenario::normalized_splits(text, &splits));
            bounds.push(text.len());
            let expected: Vec<_> = if text.is_empty() && splits.is_empty() {
                Vec::new()
            } else {
                bounds.windows(2).map(|w| (w[0]..w[1], &text[w[0]..w[1]])).collect()
            };
            assert_eq!(fragments(text, &splits).collect::<Vec<_>>(), expected, "{splits:?} {text:?}");
        }
    }
}
