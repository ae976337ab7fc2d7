//! Lowering: a turn written in one shape, as one dialect sends it
//! ([`crate::DialectDef::lower_turn`]).
//!
//! A named case is written once, in the shape its story is told in: most in the per-call
//! shape (Anthropic's: each call closed by its own terminal), a few in the interleaved shape
//! (OpenAI Chat's: the finish reason is every call's terminal). Below the events level it is
//! run, and written to the corpus, in every dialect whose wire can carry its meaning: the
//! certification and the corpus both lower it here, and what is checked, judged, reported and
//! saved for replay is the lowered turn, so the oracle's expectations are the lowered
//! scenario's own.
//!
//! Lowering keeps the case's meaning, or refuses it with a reason that names what the
//! dialect's wire lacks (`openai-chat has no per-call terminal: ...`). Kept:
//!
//! - the blocks, their text and argument bytes and split points, in the same order; call
//!   indices renumbered as the target shape numbers them (Chat counts calls from 0, the
//!   per-call dialects number blocks by position);
//! - the events delivered: the per-call shape's own events (a call's terminal, a foreign
//!   block's start and stop) appear or vanish, and every position the scenario counts in
//!   neutral events (a fault's `at`, a ping, an abandoned or errored turn's `after`, a dialect
//!   event's `unknown[].at`, a damaged message's `corrupt.after`) is moved so that the same
//!   blocks, fragments, faults and pings come before it as in the original rendering;
//! - the first fault delivered (the one that decides the turn).
//!
//! A check at the end renders both turns and refuses a lowering whose delivered stream is not
//! the original's, up to the per-call events. Positions counted in
//! wire units (SSE comment lines, multi-line data, a concurrent schedule's steps) and
//! transport cuts aimed at kinds of places are the dialect's own units already and are kept.

use toolcert_render::{render, Event, Origin, Rendered};
use toolcert_scenario::{Block, Ending, Fault, FaultKind, Interleave, Shape, StreamEnd, Turn, WireEvents};

use crate::registry::DialectDef;

/// [`crate::DialectDef::lower_turn`].
pub(crate) fn lower_turn<D: DialectDef + ?Sized>(def: &D, turn: &Turn) -> Result<Turn, String> {
    let name = def.name();
    let full = render_uncut(turn);
    let cut = cut_of(turn).map_or(full.origins.len(), |after| (after as usize).min(full.origins.len()));
    let delivered = &full.events[..cut];
    if !def.repeats_arguments()
        && delivered.iter().any(|e| matches!(e, Event::CallStop { arguments: Some(_), .. }))
    {
        return Err(format!(
            "{name} has no `done` event repeating the arguments: this case's fault is a call terminal \
             whose arguments contradict the deltas"
        ));
    }
    if let Some(lacks) = dialect_events_lacked(def, &turn.wire) {
        return Err(lacks);
    }
    // A delivered fault the dialect's wire cannot carry (no Chat entry replays an
    // announcement: the same id continues the call, a new id starts another).
    let faults = full.origins[..cut].iter().filter_map(|o| match o {
        Origin::Fault { fault } => turn.faults.get(*fault as usize),
        _ => None,
    });
    if let Some(lacked) = faults.filter_map(|f| def.fault_lacked(&f.kind)).next() {
        return Err(format!("{name} has no {lacked}"));
    }
    if let Some(f) = turn.foreign().find(|f| !def.speaks_foreign(f.kind)) {
        return Err(format!("{name} has no {} block: this case has one", f.kind.name()));
    }
    if def.carries(&turn.shape) {
        return Ok(turn.clone());
    }
    let mut low = turn.clone();
    match &turn.shape {
        Shape::PerCall if def.carries(&Shape::Interleaved(Interleave::default())) => {
            // Chat's indices count calls only, from 0.
            let mut k = 0;
            for b in &mut low.blocks {
                if let Block::Call(c) = b {
                    c.index = k;
                    k += 1;
                }
            }
            low.shape = Shape::Interleaved(Interleave::default());
        }
        Shape::Interleaved(il) if def.carries(&Shape::PerCall) => {
            one_block_at_a_time(name, il, &full)?;
            let calls: Vec<u32> = turn.calls().map(|c| c.index).collect();
            if calls.iter().enumerate().any(|(k, &i)| i as usize != k) {
                let list: Vec<String> = calls.iter().map(u32::to_string).collect();
                return Err(format!(
                    "{name} has no free call indices (a block's index is its position): this case's \
                     calls are at the OpenAI Chat indices {}",
                    list.join(", ")
                ));
            }
            // A block's index is its position among the blocks.
            for (k, b) in low.blocks.iter_mut().enumerate() {
                match b {
                    Block::Call(c) => c.index = k as u32,
                    Block::Foreign(f) => f.index = k as u32,
                    Block::Text(_) => {}
                }
            }
            low.shape = Shape::PerCall;
        }
        _ => return Err(format!("{name} has neither shape of this case")),
    }
    remap(name, turn, &full, cut, low)
}

/// The turn rendered without its cut: every event it would send, faults and pings in place,
/// up to its stop (an abandoned or errored turn has none).
fn render_uncut(turn: &Turn) -> Rendered<'static> {
    let mut whole = turn.clone();
    if let Ending::Abandoned { .. } | Ending::Errored { .. } = whole.ending {
        whole.ending = Ending::Abandoned { after: u32::MAX, end: StreamEnd::Eof };
    }
    let r = render(&whole);
    Rendered { events: r.events.into_iter().map(Event::into_owned).collect(), origins: r.origins, end: r.end }
}

/// How many events an abandoned or errored turn delivers before its cut.
fn cut_of(turn: &Turn) -> Option<u32> {
    match turn.ending {
        Ending::Stop(_) => None,
        Ending::Abandoned { after, .. } | Ending::Errored { after, .. } => Some(after),
    }
}

/// The dialect events of `wire` the dialect does not read, as the reason it cannot carry them.
fn dialect_events_lacked<D: DialectDef + ?Sized>(def: &D, wire: &WireEvents) -> Option<String> {
    let plain = WireEvents::default;
    let each: [(bool, WireEvents, &str); 9] = [
        (
            !wire.item_done_only.is_empty(),
            WireEvents { item_done_only: wire.item_done_only.clone(), ..plain() },
            "`response.output_item.done` event that announces a call alone",
        ),
        (
            !wire.mismatch_in.is_both(),
            WireEvents { mismatch_in: wire.mismatch_in, ..plain() },
            "second `done` event (`response.output_item.done`) to hold a mismatch alone",
        ),
        (
            !wire.unknown.is_empty(),
            WireEvents { unknown: wire.unknown.clone(), ..plain() },
            "delta or event of a type added later (`citations_delta`, a new event type)",
        ),
        (
            wire.chat_prelude,
            WireEvents { chat_prelude: true, ..plain() },
            "prelude chunk (`choices: []` with `prompt_filter_results`)",
        ),
        (
            wire.usage_without_choices,
            WireEvents { usage_without_choices: true, ..plain() },
            "usage chunk without `choices`",
        ),
        (
            wire.done_without_finish,
            WireEvents { done_without_finish: true, ..plain() },
            "`data: [DONE]` sentinel",
        ),
        (
            !wire.gemini_ends.is_empty(),
            WireEvents { gemini_ends: wire.gemini_ends.clone(), ..plain() },
            "call streamed in pieces with a terminator of its own (Gemini's `functionCall` forms)",
        ),
        (
            wire.spliced.is_some(),
            WireEvents { spliced: wire.spliced, ..plain() },
            "start event (`message_start`, `response.created`) for a second generation to be spliced in after",
        ),
        (
            wire.hostile_index.is_some(),
            WireEvents { hostile_index: wire.hostile_index.clone(), ..plain() },
            "index on a call's fragments for a hostile upstream to replace",
        ),
    ];
    let (_, only, what) = each.into_iter().find(|(has, only, _)| *has && !def.reads(only))?;
    let readers: Vec<&str> = crate::registry().iter().filter(|d| d.reads(&only)).map(|d| d.name()).collect();
    Some(format!(
        "{} has no {what}: this case's dialect events are read by {} only",
        def.name(),
        readers.join(" and ")
    ))
}

/// An interleaved turn whose pieces come one block after another (and one piece per chunk):
/// its calls can be sent one after another.
fn one_block_at_a_time(name: &str, il: &Interleave, full: &Rendered<'_>) -> Result<(), String> {
    let mut last: Option<u32> = None;
    for o in &full.origins {
        let block = match *o {
            Origin::Text { block, .. }
            | Origin::Announce { block }
            | Origin::Fragment { block, .. }
            | Origin::Foreign { block, .. } => block,
            _ => continue,
        };
        if let Some(l) = last.filter(|&l| l > block) {
            return Err(format!(
                "{name} has no interleaved blocks (it sends a turn's blocks one after another): this \
                 case interleaves the pieces of blocks {block} and {l}"
            ));
        }
        last = Some(block);
    }
    if il.joins.iter().skip(1).any(|&j| j) {
        return Err(format!(
            "{name} has no chunk carrying several pieces: this case joins pieces into one OpenAI Chat chunk"
        ));
    }
    Ok(())
}

/// Whether an origin is an event of both shapes (not a call's terminal or a foreign block's
/// start or stop, which only the per-call shape sends).
fn shared(o: &Origin) -> bool {
    !matches!(o, Origin::CallStop { .. } | Origin::ForeignStart { .. } | Origin::ForeignStop { .. })
}

/// Where event `i` of `from`, translated by `map`, is in `to`: the same origin at the same
/// occurrence (a string sent as several empty fragments gives several events of one origin).
fn counterpart(
    from: &[Origin],
    i: usize,
    to: &[Origin],
    map: &dyn Fn(Origin) -> Option<Origin>,
) -> Option<usize> {
    let target = map(from[i])?;
    let occurrence = from[..i].iter().filter(|&&o| o == from[i]).count();
    to.iter().enumerate().filter(|(_, &o)| o == target).nth(occurrence).map(|(p, _)| p)
}

/// The position in `to` right after the counterpart of the last event of `from[..before]`
/// that has one (0 when none has): where something that came after those events goes.
fn place(from: &[Origin], before: usize, to: &[Origin], map: &dyn Fn(Origin) -> Option<Origin>) -> u32 {
    (0..before.min(from.len())).rev().find_map(|i| counterpart(from, i, to, map)).map_or(0, |p| p as u32 + 1)
}

/// Moves every neutral-event position of `turn` (rendered uncut as `full`, delivering its
/// first `cut` events) into `low`, the turn in the target shape; drops the faults and pings
/// never delivered; checks the lowered stream delivers what the original does.
fn remap(name: &str, turn: &Turn, full: &Rendered<'_>, cut: usize, mut low: Turn) -> Result<Turn, String> {
    let to_interleaved = matches!(low.shape, Shape::Interleaved(_));
    let o = &full.origins;
    let base_only = |x: Origin| (!matches!(x, Origin::Fault { .. } | Origin::Ping)).then_some(x);
    let stop_at = o.iter().position(|x| *x == Origin::Stop).filter(|&s| s < cut);

    // The faults, against the lowered base body (blocks and stop, no fault or ping).
    let mut bare = low.clone();
    (bare.faults, bare.pings, bare.ending) = (Vec::new(), Vec::new(), uncut_ending(&low.ending));
    let base = render(&bare).origins;
    // (original index, original position, lowered `at`, moved past the stop)
    let mut kept: Vec<(usize, usize, u32, bool)> = Vec::new();
    for (k, fault) in turn.faults.iter().enumerate() {
        let Some(p) = o.iter().position(|x| *x == (Origin::Fault { fault: k as u32 })) else { continue };
        if p >= cut {
            continue;
        }
        let after_own_terminal = matches!(fault.kind, FaultKind::FragmentAfterStop { .. })
            && to_interleaved
            && stop_at.is_none_or(|s| p < s);
        if after_own_terminal {
            // Chat's only terminal is the finish reason: the fragment follows it there.
            let Some(s) = stop_at else {
                return Err(format!(
                    "{name} has no per-call terminal: this case's fault is a fragment after one call's \
                     own terminal, in a turn whose finish reason never comes"
                ));
            };
            if o[p + 1..s].iter().any(|x| matches!(x, Origin::Fault { .. })) {
                return Err(format!(
                    "{name} has no per-call terminal: this case's fault is a fragment after one call's \
                     own terminal, and another fault comes before the finish reason"
                ));
            }
            kept.push((k, p, base.len() as u32, true));
        } else {
            kept.push((k, p, place(o, p, &base, &base_only), false));
        }
    }
    // Faults at one place keep the order they were delivered in.
    kept.sort_by_key(|&(_, p, at, _)| (at, p));
    let renumbered = |k: usize| kept.iter().position(|&(j, ..)| j == k);
    low.faults = kept.iter().map(|&(k, _, at, _)| Fault { kind: turn.faults[k].kind.clone(), at }).collect();
    let moved: Vec<u32> = kept.iter().filter(|f| f.3).map(|f| f.0 as u32).collect();
    let map = |x: Origin| match x {
        Origin::Fault { fault } if moved.contains(&fault) => None,
        Origin::Fault { fault } => renumbered(fault as usize).map(|n| Origin::Fault { fault: n as u32 }),
        other => Some(other),
    };

    // The pings, against the lowered body with its faults.
    let mut faulted = bare.clone();
    faulted.faults = low.faults.clone();
    let with_faults = render(&faulted).origins;
    let not_ping = |x: Origin| if x == Origin::Ping { None } else { map(x) };
    low.pings =
        (0..cut).filter(|&q| o[q] == Origin::Ping).map(|q| place(o, q, &with_faults, &not_ping)).collect();

    // Everything counted in neutral events delivered, against the whole lowered body.
    faulted.pings = low.pings.clone();
    let whole = render(&faulted).origins;
    let count = |n: u32| place(o, (n as usize).min(cut), &whole, &map);
    low.ending = match &turn.ending {
        Ending::Stop(r) => Ending::Stop(*r),
        Ending::Abandoned { after, end } => Ending::Abandoned { after: count(*after), end: *end },
        Ending::Errored { after, message } => {
            Ending::Errored { after: count(*after), message: message.clone() }
        }
    };
    for u in &mut low.wire.unknown {
        u.at = count(u.at);
    }
    if let Some(c) = &mut low.transport.corrupt {
        c.after = count(c.after);
    }
    let moved_now: Vec<u32> =
        moved.iter().filter_map(|&k| renumbered(k as usize)).map(|n| n as u32).collect();
    let first_now = turn_first_fault(turn).and_then(|k| renumbered(k as usize)).map(|n| n as u32);
    delivered_alike(name, &render(turn), &render(&low), &map, &moved_now, first_now)?;
    Ok(low)
}

fn uncut_ending(ending: &Ending) -> Ending {
    match ending {
        Ending::Stop(r) => Ending::Stop(*r),
        _ => Ending::Abandoned { after: u32::MAX, end: StreamEnd::Eof },
    }
}

/// The first fault `turn` delivers, if any.
fn turn_first_fault(turn: &Turn) -> Option<u32> {
    render(turn).origins.iter().find_map(|x| match x {
        Origin::Fault { fault } => Some(*fault),
        _ => None,
    })
}

/// The check every lowering passes: the lowered turn delivers the original's events in the
/// same order (its text, announcements, fragments, foreign deltas, faults, pings, stop or
/// error), up to the per-call shape's own events and a fragment after a call's own terminal
/// moved past the finish reason (`map` gives `None` for it in the original, `moved` holds it
/// in the lowered turn), and its first fault is `first` (the original's first, renumbered).
fn delivered_alike(
    name: &str,
    original: &Rendered<'_>,
    lowered: &Rendered<'_>,
    map: &dyn Fn(Origin) -> Option<Origin>,
    moved: &[u32],
    first: Option<u32>,
) -> Result<(), String> {
    let mine: Vec<Origin> = original.origins.iter().filter(|x| shared(x)).filter_map(|&x| map(x)).collect();
    let theirs: Vec<Origin> = lowered
        .origins
        .iter()
        .filter(|x| shared(x) && !matches!(x, Origin::Fault { fault } if moved.contains(fault)))
        .copied()
        .collect();
    let first_lowered = lowered.origins.iter().find_map(|x| match x {
        Origin::Fault { fault } => Some(*fault),
        _ => None,
    });
    if mine != theirs || first != first_lowered {
        return Err(format!(
            "{name} cannot carry this case as written: lowered, its stream would not deliver the same \
             blocks, fragments and faults in the same order"
        ));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use toolcert_render::{render, Origin};
    use toolcert_scenario::build::{call, interleaved, per_call, text};
    use toolcert_scenario::{
        Dialect, Ending, Fault, FaultKind, Shape, StopReason, StreamEnd, Turn, Unknown, UnknownKind,
    };

    use crate::def;

    fn chat(turn: &Turn) -> Result<Turn, String> {
        def(Dialect::OpenAiChat).lower_turn(turn)
    }

    fn anthropic(turn: &Turn) -> Result<Turn, String> {
        def(Dialect::Anthropic).lower_turn(turn)
    }

    /// Two calls in the per-call shape: A0 F0a F0b S0 A1 F1a F1b S1, then the stop.
    fn pair(ending: Ending) -> Turn {
        per_call(
            vec![
                call(0, "toolu_A", "lookup", &["{\"a\": ", "1}"]),
                call(1, "toolu_B", "lookup", &["{\"b\": ", "2}"]),
            ],
            ending,
        )
    }

    /// The origins delivered, without the per-call shape's own events.
    fn shared(turn: &Turn) -> Vec<Origin> {
        render(turn).origins.into_iter().filter(super::shared).collect()
    }

    fn frag(block: u32, start: u32, end: u32) -> Origin {
        Origin::Fragment { block, start, end }
    }

    #[test]
    fn a_cut_after_a_call_terminal_delivers_the_same_fragments_in_chat() {
        // Five events: the first call whole with its terminal, the second's announcement.
        for ending in [
            Ending::Abandoned { after: 5, end: StreamEnd::Disconnect },
            Ending::Errored { after: 5, message: "overloaded".into() },
        ] {
            let turn = pair(ending);
            let low = chat(&turn).unwrap();
            assert!(matches!(low.shape, Shape::Interleaved(_)));
            match &low.ending {
                Ending::Abandoned { after, end } => assert_eq!((*after, *end), (4, StreamEnd::Disconnect)),
                Ending::Errored { after, message } => {
                    assert_eq!((*after, message.as_str()), (4, "overloaded"))
                }
                other => panic!("{other:?}"),
            }
            let mut want = vec![
                Origin::Announce { block: 0 },
                frag(0, 0, 6),
                frag(0, 6, 8),
                Origin::Announce { block: 1 },
            ];
            if matches!(turn.ending, Ending::Errored { .. }) {
                want.push(Origin::Error);
            }
            assert_eq!(shared(&low), want);
            assert_eq!(shared(&low), shared(&turn));
        }
    }

    #[test]
    fn pings_and_faults_stay_between_the_same_fragments() {
        let mut turn = pair(Ending::Stop(StopReason::ToolUse));
        // Before the second call's first fragment (base position 5), a fragment for no call;
        // a ping before the second announcement (after S0).
        turn.faults.push(Fault {
            kind: FaultKind::UnannouncedFragment { missing_index: false, fragment: "x".into() },
            at: 5,
        });
        turn.pings = vec![4];
        let low = chat(&turn).unwrap();
        assert_eq!(low.faults[0].at, 4, "after A0 F0a F0b A1 in Chat");
        assert_eq!(low.pings, vec![3], "after A0 F0a F0b in Chat");
        let origins = render(&low).origins;
        assert_eq!(
            origins,
            vec![
                Origin::Announce { block: 0 },
                frag(0, 0, 6),
                frag(0, 6, 8),
                Origin::Ping,
                Origin::Announce { block: 1 },
                Origin::Fault { fault: 0 },
                frag(1, 0, 6),
                frag(1, 6, 8),
                Origin::Stop,
            ]
        );
        assert_eq!(shared(&low), shared(&turn));
    }

    /// Under the one Chat rule a replayed announcement, and an entry without argument bytes
    /// after the finish reason, are no fault: a case delivering one is refused, naming it.
    #[test]
    fn faults_the_chat_rule_reads_as_no_fault_are_refused_in_chat() {
        let mut replay = pair(Ending::Stop(StopReason::ToolUse));
        replay.faults.push(Fault { kind: FaultKind::ReplayAnnouncement { call: 0 }, at: 5 });
        let e = chat(&replay).unwrap_err();
        assert!(e.starts_with("openai-chat has no replayed announcement: "), "{e}");
        assert!(anthropic(&replay).is_ok());
        let mut empty = pair(Ending::Stop(StopReason::ToolUse));
        empty
            .faults
            .push(Fault { kind: FaultKind::FragmentAfterStop { call: 0, fragment: String::new() }, at: 0 });
        let e = chat(&empty).unwrap_err();
        assert!(e.starts_with("openai-chat has no empty fragment after the finish reason: "), "{e}");
        // Not delivered (the cut comes first): nothing to refuse.
        let mut early = pair(Ending::Abandoned { after: 2, end: StreamEnd::Eof });
        early.faults.push(Fault { kind: FaultKind::ReplayAnnouncement { call: 1 }, at: 5 });
        assert!(chat(&early).is_ok());
    }

    #[test]
    fn chat_indices_count_calls_and_per_call_indices_are_positions() {
        let turn = per_call(
            vec![text(&["Checking."]), call(1, "toolu_A", "lookup", &["{}"])],
            Ending::Stop(StopReason::ToolUse),
        );
        assert_eq!(chat(&turn).unwrap().calls().next().unwrap().index, 0);
        let back = anthropic(&chat(&turn).unwrap()).unwrap();
        assert_eq!(back.calls().next().unwrap().index, 1);
        assert_eq!(back.shape, Shape::PerCall);
    }

    #[test]
    fn a_fragment_after_a_call_terminal_follows_the_finish_reason_in_chat() {
        let mut turn = pair(Ending::Stop(StopReason::ToolUse));
        turn.faults
            .push(Fault { kind: FaultKind::FragmentAfterStop { call: 0, fragment: "x".into() }, at: 0 });
        let low = chat(&turn).unwrap();
        let origins = render(&low).origins;
        let stop = origins.iter().position(|o| *o == Origin::Stop).unwrap();
        assert_eq!(origins[stop + 1..], [Origin::Fault { fault: 0 }]);
        // In the per-call shape it came right after the first call's terminal.
        let own = render(&turn).origins;
        let s0 = own.iter().position(|o| *o == Origin::CallStop { block: 0 }).unwrap();
        assert_eq!(own[s0 + 1], Origin::Fault { fault: 0 });
    }

    #[test]
    fn a_fragment_after_a_call_terminal_is_refused_where_chat_cannot_say_it() {
        let fas = || Fault { kind: FaultKind::FragmentAfterStop { call: 0, fragment: "x".into() }, at: 0 };
        // The turn never sends the finish reason: Chat's calls have no terminal at all.
        let mut cut = pair(Ending::Abandoned { after: 7, end: StreamEnd::Eof });
        cut.faults.push(fas());
        let e = chat(&cut).unwrap_err();
        assert!(e.starts_with("openai-chat has no per-call terminal: "), "{e}");
        // Another fault comes between it and the finish reason: moving it would change which
        // fault decides the turn.
        let mut two = pair(Ending::Stop(StopReason::ToolUse));
        two.faults.push(fas());
        two.faults.push(Fault {
            kind: FaultKind::UnannouncedFragment { missing_index: false, fragment: "y".into() },
            at: 6,
        });
        let e = chat(&two).unwrap_err();
        assert!(e.starts_with("openai-chat has no per-call terminal: "), "{e}");
        // Not delivered (the cut comes first): nothing to carry, the fault is dropped.
        let mut early = pair(Ending::Abandoned { after: 2, end: StreamEnd::Eof });
        early.faults.push(fas());
        let low = chat(&early).unwrap();
        assert!(low.faults.is_empty());
        assert_eq!(shared(&low), shared(&early));
    }

    #[test]
    fn a_done_mismatch_goes_only_where_the_terminal_repeats_the_arguments() {
        let mut turn = pair(Ending::Stop(StopReason::ToolUse));
        turn.faults.push(Fault { kind: FaultKind::DoneMismatch { call: 1, arguments: "{}".into() }, at: 0 });
        for d in [Dialect::OpenAiChat, Dialect::Anthropic, Dialect::Bedrock] {
            let e = def(d).lower_turn(&turn).unwrap_err();
            assert!(e.starts_with(&format!("{d} has no `done` event repeating the arguments")), "{e}");
        }
        assert_eq!(def(Dialect::OpenAiResponses).lower_turn(&turn).unwrap(), turn);
    }

    #[test]
    fn an_interleaved_turn_goes_per_call_only_when_its_blocks_come_one_after_another() {
        let calls =
            || vec![call(0, "call_A", "lookup", &["{\"a\": ", "1}"]), call(1, "call_B", "lookup", &["{}"])];
        // Cut after every fragment of the first call: in the per-call shape its terminal
        // comes next and is not delivered (in Chat the call was still open).
        let seq = interleaved(calls(), vec![], vec![], Ending::Abandoned { after: 3, end: StreamEnd::Eof });
        let low = anthropic(&seq).unwrap();
        assert_eq!(low.ending, Ending::Abandoned { after: 3, end: StreamEnd::Eof });
        assert!(!render(&low).origins.contains(&Origin::CallStop { block: 0 }));
        assert_eq!(shared(&low), shared(&seq));
        let mixed = interleaved(calls(), vec![0, 1, 0], vec![], Ending::Stop(StopReason::ToolCalls));
        let e = anthropic(&mixed).unwrap_err();
        assert!(e.starts_with("anthropic has no interleaved blocks"), "{e}");
        let joined = interleaved(calls(), vec![], vec![false, true], Ending::Stop(StopReason::ToolCalls));
        let e = anthropic(&joined).unwrap_err();
        assert!(e.starts_with("anthropic has no chunk carrying several pieces"), "{e}");
        let mut sparse = interleaved(calls(), vec![], vec![], Ending::Stop(StopReason::ToolCalls));
        for (b, i) in sparse.blocks.iter_mut().zip([2, 5]) {
            if let toolcert_scenario::Block::Call(c) = b {
                c.index = i;
            }
        }
        let e = anthropic(&sparse).unwrap_err();
        assert!(e.starts_with("anthropic has no free call indices"), "{e}");
    }

    #[test]
    fn dialect_event_positions_follow_the_per_call_terminals() {
        // A0 F0a F0b A1 F1: an unknown unit once A0 F0a F0b A1 are delivered goes after the
        // first call's terminal too in the per-call shape.
        let calls =
            vec![call(0, "call_A", "lookup", &["{\"a\": ", "1}"]), call(1, "call_B", "lookup", &["{}"])];
        let mut turn = interleaved(calls, vec![], vec![], Ending::Stop(StopReason::ToolCalls));
        turn.wire.unknown = vec![Unknown { kind: UnknownKind::Event, at: 4 }];
        let low = anthropic(&turn).unwrap();
        assert_eq!(low.wire.unknown[0].at, 5);
        // Chat does not read them: the case is not Chat's to lower.
        let mut per = pair(Ending::Stop(StopReason::ToolUse));
        per.wire.unknown = vec![Unknown { kind: UnknownKind::Event, at: 4 }];
        let e = chat(&per).unwrap_err();
        assert!(e.starts_with("openai-chat has no delta or event of a type added later"), "{e}");
        assert!(e.ends_with("read by anthropic and bedrock only"), "{e}");
    }

    /// The final check refuses a stream that would deliver something else: the lowering
    /// before this one kept `after` as it was, which in Chat delivers a fragment more.
    #[test]
    fn the_final_check_refuses_a_cut_left_in_place() {
        let turn = pair(Ending::Abandoned { after: 5, end: StreamEnd::Eof });
        let mut naive = chat(&turn).unwrap();
        naive.ending = turn.ending.clone();
        let same = |x: Origin| Some(x);
        let e = super::delivered_alike("openai-chat", &render(&turn), &render(&naive), &same, &[], None);
        assert!(e.is_err());
        let low = chat(&turn).unwrap();
        assert!(
            super::delivered_alike("openai-chat", &render(&turn), &render(&low), &same, &[], None).is_ok()
        );
    }

    /// Every named case either lowers to a turn the dialect renders, valid and delivering the
    /// same stream, or is refused naming what the dialect's wire lacks.
    #[test]
    fn every_named_case_lowers_or_names_what_the_wire_lacks() {
        for d in crate::registry() {
            for named in toolcert_gen::named::all() {
                for turn in &named.case.streams {
                    match d.lower_turn(turn) {
                        Ok(low) => {
                            assert!(d.carries(&low.shape), "{} in {}", named.id, d.name());
                            let case = toolcert_scenario::Case::single("x", low.clone());
                            case.validate().unwrap();
                            // Rendered in some server profile of the dialect (Gemini's whole
                            // calls cannot send a call cut mid-way; its pieces can).
                            let rendered: Vec<_> = d
                                .quirk_profiles()
                                .iter()
                                .map(|&q| crate::render_wire(&low, &render(&low), d.id(), q))
                                .collect();
                            if rendered.iter().all(Result::is_err) {
                                panic!("{} in {}: {:?}", named.id, d.name(), rendered[0]);
                            }
                            // The same events (a fault may have moved past the finish
                            // reason), and the same fault first.
                            // A dialect that writes documents its own way (Gemini's typed
                            // values) keeps each fragment, not its byte range.
                            let rewritten =
                                low.calls().zip(turn.calls()).any(|(a, b)| a.arguments != b.arguments);
                            let no_faults = |t: &Turn| -> Vec<Origin> {
                                shared(t)
                                    .into_iter()
                                    .filter(|o| !matches!(o, Origin::Fault { .. }))
                                    .map(|o| match o {
                                        Origin::Fragment { block, .. } if rewritten => frag(block, 0, 0),
                                        o => o,
                                    })
                                    .collect()
                            };
                            assert_eq!(no_faults(&low), no_faults(turn), "{} in {}", named.id, d.name());
                            let first = |t: &Turn| {
                                render(t).origins.iter().find_map(|o| match o {
                                    Origin::Fault { fault } => Some(t.faults[*fault as usize].kind.class()),
                                    _ => None,
                                })
                            };
                            assert_eq!(first(&low), first(turn), "{} in {}", named.id, d.name());
                        }
                        Err(e) => {
                            assert!(e.starts_with(&format!("{} has no ", d.name())), "{}: {e}", named.id)
                        }
                    }
                }
            }
        }
    }
}
