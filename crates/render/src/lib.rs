//! Rendering: scenario → stream.
//!
//! The second stage of the data flow. [`render`] turns one [`Turn`] into the provider-neutral
//! [`Event`]s an events-level subject consumes, each paired with its [`Origin`]: which block,
//! fragment, terminal or fault of the scenario produced it. The oracle reads origins to know
//! what was delivered before a cut; it never reads the events' contents back.
//!
//! The neutral events can express both shapes the providers use: Anthropic's (a call is
//! announced, fragmented and closed by its own terminal event, and the message-level stop
//! reason follows the blocks) and OpenAI Chat's (fragments of several calls interleave, no
//! call has its own terminal, and the finish reason is the only terminal).

use std::borrow::Cow;

use serde::{Deserialize, Serialize};
use toolcert_scenario::{Block, Ending, FaultKind, ForeignBlock, Shape, StreamEnd, Turn};

pub use toolcert_subject::Event;

/// What part of the scenario an event came from.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "origin", rename_all = "snake_case")]
pub enum Origin {
    /// Fragment `fragment` of the text block at `block`, covering bytes `start..end`.
    Text {
        block: u32,
        start: u32,
        end: u32,
    },
    /// The announcement of the call at `block`.
    Announce {
        block: u32,
    },
    /// A fragment of the call at `block`, covering argument bytes `start..end`.
    Fragment {
        block: u32,
        start: u32,
        end: u32,
    },
    /// The call's own terminal event.
    CallStop {
        block: u32,
    },
    /// The message-level stop; in the interleaved shape it is every call's terminal.
    Stop,
    /// The error event of an errored ending.
    Error,
    Ping,
    /// The fault at this position of `Turn::faults`.
    Fault {
        fault: u32,
    },
    /// The start of the foreign block at `block` (with its whole content, for the kinds
    /// that do not stream).
    ForeignStart {
        block: u32,
    },
    /// A delta of the foreign block at `block`, covering content bytes `start..end`.
    Foreign {
        block: u32,
        start: u32,
        end: u32,
    },
    /// The end of the foreign block at `block`.
    ForeignStop {
        block: u32,
    },
}

/// A turn rendered at the events level.
#[derive(Clone, Debug, PartialEq)]
pub struct Rendered<'a> {
    pub events: Vec<Event<'a>>,
    /// `origins[k]` is where `events[k]` came from.
    pub origins: Vec<Origin>,
    /// How the transport closes after the last event.
    pub end: StreamEnd,
}

impl Rendered<'_> {
    /// Position of the first event with this origin.
    pub fn position(&self, origin: Origin) -> Option<usize> {
        self.origins.iter().position(|o| *o == origin)
    }
}

/// Renders one turn as provider-neutral events.
pub fn render(turn: &Turn) -> Rendered<'_> {
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
    let mut body = Body::with_capacity(pieces + turn.faults.len() + turn.pings.len() + 2);
    match &turn.shape {
        Shape::PerCall => {
            for (b, block) in turn.blocks.iter().enumerate() {
                let block_no = b as u32;
                match block {
                    Block::Text(t) => {
                        for (r, f) in fragments(&t.text, &t.splits) {
                            body.push(
                                Event::TextDelta { text: Cow::Borrowed(f) },
                                Origin::Text { block: block_no, start: r.start as u32, end: r.end as u32 },
                            );
                        }
                    }
                    Block::Call(c) => {
                        body.push(announce(c), Origin::Announce { block: block_no });
                        for (r, f) in fragments(&c.arguments, &c.splits) {
                            body.push(
                                Event::ArgsDelta { index: c.index, fragment: Cow::Borrowed(f) },
                                Origin::Fragment {
                                    block: block_no,
                                    start: r.start as u32,
                                    end: r.end as u32,
                                },
                            );
                        }
                        body.push(
                            Event::CallStop { index: c.index, arguments: None },
                            Origin::CallStop { block: block_no },
                        );
                    }
                    Block::Foreign(f) => foreign_per_call(f, block_no, &mut body),
                }
            }
        }
        Shape::Interleaved(il) => interleave(turn, &il.order, &mut body),
    }
    if let Ending::Stop(reason) = turn.ending {
        body.push(Event::Stop { reason }, Origin::Stop);
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
            body.push(Event::Error { message: Cow::Borrowed(message) }, Origin::Error);
            StreamEnd::Eof
        }
    };
    Rendered { events: body.events, origins: body.origins, end }
}

/// The events being rendered with their origins, side by side as [`Rendered`] holds them
/// (built as pairs and split at the end, the copy cost a fifth of rendering).
struct Body<'a> {
    events: Vec<Event<'a>>,
    origins: Vec<Origin>,
}

impl<'a> Body<'a> {
    fn with_capacity(n: usize) -> Body<'a> {
        Body { events: Vec::with_capacity(n), origins: Vec::with_capacity(n) }
    }

    fn push(&mut self, event: Event<'a>, origin: Origin) {
        self.events.push(event);
        self.origins.push(origin);
    }

    fn insert(&mut self, at: usize, event: Event<'a>, origin: Origin) {
        self.events.insert(at, event);
        self.origins.insert(at, origin);
    }

    fn truncate(&mut self, n: usize) {
        self.events.truncate(n);
        self.origins.truncate(n);
    }

    fn len(&self) -> usize {
        self.origins.len()
    }

    fn position(&self, origin: Origin) -> Option<usize> {
        self.origins.iter().position(|o| *o == origin)
    }
}

/// The fragments a text or argument string is sent as (re-exported: the oracle and the
/// adapters read them from here).
pub use toolcert_scenario::{fragments, Fragments};

/// A foreign block in the per-call shape: its start, its deltas (for the kinds that stream)
/// and its stop.
fn foreign_per_call<'a>(f: &'a ForeignBlock, block: u32, body: &mut Body<'a>) {
    let streams = f.kind.streams();
    body.push(
        Event::ForeignStart {
            index: f.index,
            kind: f.kind,
            id: Cow::Borrowed(if f.kind.carries_id() { &f.id } else { "" }),
            name: Cow::Borrowed(if f.kind.carries_name() { &f.name } else { "" }),
            content: Cow::Borrowed(if streams { "" } else { &f.text }),
        },
        Origin::ForeignStart { block },
    );
    if streams {
        for (r, piece) in fragments(&f.text, &f.splits) {
            body.push(
                Event::ForeignDelta { index: f.index, kind: f.kind, fragment: Cow::Borrowed(piece) },
                Origin::Foreign { block, start: r.start as u32, end: r.end as u32 },
            );
        }
    }
    body.push(Event::ForeignStop { index: f.index }, Origin::ForeignStop { block });
}

fn announce(c: &toolcert_scenario::Call) -> Event<'_> {
    Event::CallStart { index: c.index, call_id: Cow::Borrowed(&c.call_id), name: Cow::Borrowed(&c.name) }
}

/// One block's pieces left to send in the interleaved shape.
struct Cursor<'a> {
    pieces: Fragments<'a>,
    /// A call with no argument bytes, not yet sent: one bare piece (the announcement alone).
    bare: bool,
    announced: bool,
}

/// The interleaved (OpenAI Chat) shape: a call's announcement rides with its first piece.
fn interleave<'a>(turn: &'a Turn, order: &[u16], body: &mut Body<'a>) {
    let mut cursors: Vec<Cursor<'a>> = turn
        .blocks
        .iter()
        .map(|b| {
            let (text, splits, call) = match b {
                Block::Text(t) => (&t.text, &t.splits, false),
                Block::Foreign(f) => (&f.text, &f.splits, false),
                Block::Call(c) => (&c.arguments, &c.splits, true),
            };
            // `fragments` gives nothing exactly for an empty string with no split points.
            let bare = call && text.is_empty() && splits.is_empty();
            Cursor { pieces: fragments(text, splits), bare, announced: false }
        })
        .collect();
    let n = turn.blocks.len();
    let mut send = |b: usize| {
        let cursor = &mut cursors[b];
        let piece = if std::mem::take(&mut cursor.bare) {
            None
        } else {
            match cursor.pieces.next() {
                Some(p) => Some(p),
                None => return false,
            }
        };
        let block_no = b as u32;
        match (&turn.blocks[b], piece) {
            (Block::Text(_), Some((r, f))) => body.push(
                Event::TextDelta { text: Cow::Borrowed(f) },
                Origin::Text { block: block_no, start: r.start as u32, end: r.end as u32 },
            ),
            (Block::Text(_) | Block::Foreign(_), None) => {}
            // Chat's foreign deltas ride on the choice's delta: no index, no start or stop.
            (Block::Foreign(f), Some((r, piece))) => body.push(
                Event::ForeignDelta { index: 0, kind: f.kind, fragment: Cow::Borrowed(piece) },
                Origin::Foreign { block: block_no, start: r.start as u32, end: r.end as u32 },
            ),
            (Block::Call(c), piece) => {
                if !cursor.announced {
                    cursor.announced = true;
                    body.push(announce(c), Origin::Announce { block: block_no });
                }
                if let Some((r, f)) = piece {
                    body.push(
                        Event::ArgsDelta { index: c.index, fragment: Cow::Borrowed(f) },
                        Origin::Fragment { block: block_no, start: r.start as u32, end: r.end as u32 },
                    );
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
fn insert_faults<'a>(turn: &'a Turn, body: &mut Body<'a>) {
    if turn.faults.is_empty() {
        return;
    }
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
                let lo = body.position(Origin::Announce { block })? + 1;
                Some((lo, announce(c)))
            }),
            FaultKind::UnannouncedFragment { fragment, .. } => {
                Some((0, Event::ArgsDelta { index: unused_index, fragment: Cow::Borrowed(fragment) }))
            }
            FaultKind::DoneMismatch { call, arguments } => {
                // Not an inserted event: the call's own terminal carries the wrong arguments.
                if let Some((block, c)) = call_of(*call) {
                    if let Some(at) = body.position(Origin::CallStop { block }) {
                        if let Event::CallStop { arguments: a, .. } = &mut body.events[at] {
                            *a = Some(Cow::Borrowed(arguments));
                        }
                        // A terminal with no fragment before it carries the call's arguments
                        // (servers that send no delta, docs/SPEC.md "Server profiles"): a
                        // terminal contradicts fragments only when some came, so a call with
                        // none gets an empty one.
                        let fragment =
                            |o: &Origin| matches!(*o, Origin::Fragment { block: b, .. } if b == block);
                        if !body.origins[..at].iter().any(fragment) {
                            let empty = Event::ArgsDelta { index: c.index, fragment: Cow::Borrowed("") };
                            inserts.push((at, empty, Origin::Fragment { block, start: 0, end: 0 }));
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
                let lo = body.position(terminal)? + 1;
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
        body.insert(at, event, origin);
    }
}

fn insert_pings(pings: &[u32], body: &mut Body<'_>) {
    if pings.is_empty() {
        return;
    }
    let mut at: Vec<usize> = pings.iter().map(|&p| (p as usize).min(body.len())).collect();
    at.sort_unstable();
    for p in at.into_iter().rev() {
        body.insert(p, Event::Ping, Origin::Ping);
    }
}

#[cfg(test)]
mod tests;

mod transcript;
pub use transcript::transcript;

/// The blocks of the calls `turn` asks to be announced only by a whole-item event
/// ([`toolcert_scenario::WireEvents::item_done_only`]) that `rendered` can send so: the
/// call's announcement, fragments and terminal are all delivered with nothing else between
/// them, and the terminal repeats no arguments of its own (a mismatch needs deltas to
/// disagree with). The wire renderer and the coverage count read the same answer.
pub fn item_done_only(turn: &Turn, rendered: &Rendered<'_>) -> Vec<u32> {
    let calls: Vec<u32> = (0..turn.blocks.len() as u32)
        .filter(|&b| matches!(turn.blocks[b as usize], toolcert_scenario::Block::Call(_)))
        .collect();
    let o = &rendered.origins;
    let mut out = Vec::new();
    for &c in &turn.wire.item_done_only {
        let Some(&block) = calls.get(c as usize % calls.len().max(1)) else { continue };
        let (Some(a), Some(s)) = (
            o.iter().position(|x| *x == Origin::Announce { block }),
            o.iter().position(|x| *x == Origin::CallStop { block }),
        ) else {
            continue;
        };
        let own = |x: &Origin| match *x {
            Origin::Announce { block: b }
            | Origin::Fragment { block: b, .. }
            | Origin::CallStop { block: b } => b == block,
            _ => false,
        };
        let plain = matches!(rendered.events.get(s), Some(Event::CallStop { arguments: None, .. }));
        if a < s && o[a..=s].iter().all(own) && plain && !out.contains(&block) {
            out.push(block);
        }
    }
    out
}
