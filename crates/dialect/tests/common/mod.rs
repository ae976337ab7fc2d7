//! Turn builders and the decode side of the round trip, shared by the dialect tests.
#![allow(dead_code)]

use std::borrow::Cow;
use std::collections::HashMap;

use toolcert_dialect::{decoder, ChatDecoder, Dialect, Quirks, SseStream as WireStream, Unsupported};
use toolcert_render::{render, Event, Rendered};
use toolcert_scenario::{Block, Turn};
use toolcert_sse::SseEvent;
use toolcert_subject::{TurnError, WireMessage};

#[allow(unused_imports)] // Each test binary uses some.
pub use toolcert_scenario::build::{call, interleaved, per_call, text};

/// The seed's lookup_order turn (deltas chapter): prose, then the call in three fragments.
pub fn lookup_order(index: u32, call_id: &str) -> Vec<Block> {
    vec![
        text(&["Let me pull", " that up for you."]),
        call(
            index,
            call_id,
            "lookup_order",
            &[r#"{"order_id": "A-44"#, r#"71", "include_line_ite"#, r#"ms": true}"#],
        ),
    ]
}

/// `toolcert_dialect::render_wire` for the SSE dialects these tests read: the SSE events.
pub fn render_wire(
    turn: &Turn,
    neutral: &Rendered<'_>,
    dialect: Dialect,
    quirks: Quirks,
) -> Result<WireStream, Unsupported> {
    toolcert_dialect::render_wire(turn, neutral, dialect, quirks).map(|w| w.to_sse().expect("an SSE dialect"))
}

/// Decodes wire events one by one; after each, checks that exactly `upto[w]` neutral events
/// have come out.
pub fn decode_checked(dialect: Dialect, quirks: Quirks, wire: &WireStream) -> Vec<Event<'static>> {
    let mut d = decoder(dialect, quirks);
    let mut out = Vec::new();
    for (w, e) in wire.events.iter().enumerate() {
        d.decode(&WireMessage::Sse(e.clone()), &mut out)
            .unwrap_or_else(|err| panic!("wire event {w} {e:?}: {err}"));
        assert_eq!(out.len(), wire.upto[w] as usize, "after wire event {w} ({e:?}): {out:?}");
    }
    out
}

pub fn decode_events(
    dialect: Dialect,
    quirks: Quirks,
    events: &[SseEvent],
) -> Result<Vec<Event<'static>>, TurnError> {
    let mut d = decoder(dialect, quirks);
    let mut out = Vec::new();
    for e in events {
        d.decode(&WireMessage::Sse(e.clone()), &mut out)?;
    }
    Ok(out)
}

/// What decoding the wire stream gives for a neutral stream: the same events, except what
/// the dialect spells its own way (Chat: a call's index is its announcement ordinal, and a
/// fragment for no call comes at `ChatDecoder::NO_CALL`).
pub fn expected(dialect: Dialect, _quirks: Quirks, neutral: &Rendered<'_>) -> Vec<Event<'static>> {
    // Responses: each index's (call id, arguments delivered), for the terminal's repeat.
    let mut calls: HashMap<u32, (String, String)> = HashMap::new();
    // Chat: neutral index → announcement ordinal.
    let mut ordinal: HashMap<u32, u32> = HashMap::new();
    let mut count = 0u32;
    let chat = dialect == Dialect::OpenAiChat;
    neutral
        .events
        .iter()
        .map(|e| match e.clone().into_owned() {
            Event::Stop { reason } => {
                Event::Stop { reason: toolcert_dialect::def(dialect).stop_reason(reason) }
            }
            Event::CallStart { index, call_id, name } => {
                let kept = calls.remove(&index).filter(|(id, _)| *id == call_id).map(|(_, a)| a);
                calls.insert(index, (call_id.to_string(), kept.unwrap_or_default()));
                let index = if chat {
                    ordinal.insert(index, count);
                    count += 1;
                    count - 1
                } else {
                    index
                };
                Event::CallStart { index, call_id, name }
            }
            Event::ArgsDelta { index, fragment } => {
                if let Some((_, a)) = calls.get_mut(&index) {
                    a.push_str(&fragment);
                }
                let index =
                    if chat { ordinal.get(&index).copied().unwrap_or(ChatDecoder::NO_CALL) } else { index };
                Event::ArgsDelta { index, fragment }
            }
            Event::CallStop { index, arguments: None } if dialect == Dialect::OpenAiResponses => {
                let args = calls.get(&index).map(|(_, a)| a.clone()).unwrap_or_default();
                Event::CallStop { index, arguments: Some(Cow::Owned(args)) }
            }
            other => other,
        })
        .collect()
}

/// Whether a Chat profile sends a call's argument bytes in other entries than the neutral
/// fragments (whole calls, a fragment split in two entries, calls repeated on the finish
/// chunk): its stream is compared [`coalesced`].
pub fn regroups(quirks: Quirks) -> bool {
    quirks.chat_whole_calls || quirks.chat_split_entries || quirks.chat_repeat_on_finish
}

/// A neutral stream with each run of one call's fragments joined into one and its empty
/// fragments dropped: the same argument bytes however a profile groups them into entries.
/// A fragment for no call is kept as it is (an empty one is still a fault).
pub fn coalesced(events: &[Event<'static>]) -> Vec<Event<'static>> {
    let mut out: Vec<Event<'static>> = Vec::new();
    for e in events {
        match e {
            Event::ArgsDelta { index, fragment } if *index != ChatDecoder::NO_CALL => {
                if fragment.is_empty() {
                    continue;
                }
                match out.last_mut() {
                    Some(Event::ArgsDelta { index: last, fragment: f }) if last == index => {
                        f.to_mut().push_str(fragment)
                    }
                    _ => out.push(e.clone()),
                }
            }
            _ => out.push(e.clone()),
        }
    }
    out
}

/// Renders `turn` in `dialect`, decodes it back and checks the round trip and `upto`: event
/// for event, or for a Chat profile that regroups argument bytes, [`coalesced`] after every
/// wire event.
pub fn round_trip(turn: &Turn, dialect: Dialect, quirks: Quirks) -> WireStream {
    let neutral = render(turn);
    let wire = render_wire(turn, &neutral, dialect, quirks).unwrap_or_else(|e| panic!("{quirks:?}: {e}"));
    assert_eq!(wire.upto.len(), wire.events.len());
    assert!(wire.upto.windows(2).all(|w| w[0] <= w[1]), "upto not monotone: {:?}", wire.upto);
    assert_eq!(wire.upto.last().map_or(0, |&u| u as usize), neutral.events.len(), "upto {:?}", wire.upto);
    let want = expected(dialect, quirks, &neutral);
    if !regroups(quirks) {
        let decoded = decode_checked(dialect, quirks, &wire);
        assert_eq!(decoded, want, "{quirks:?}\nwire: {:#?}", wire.events);
        return wire;
    }
    let mut d = decoder(dialect, quirks);
    let mut out = Vec::new();
    for (w, e) in wire.events.iter().enumerate() {
        d.decode(&WireMessage::Sse(e.clone()), &mut out)
            .unwrap_or_else(|err| panic!("{quirks:?}: wire event {w} {e:?}: {err}"));
        assert_eq!(
            coalesced(&out),
            coalesced(&want[..wire.upto[w] as usize]),
            "{quirks:?}: after wire event {w} ({e:?})\nwire: {:#?}",
            wire.events
        );
    }
    wire
}

/// A stream's neutral events with each run of one call's fragments joined into one and each
/// run of text joined, empty ones dropped: what a call or a text block sent whole keeps of
/// its pieces.
pub fn joined(events: &[Event<'static>]) -> Vec<Event<'static>> {
    let mut out: Vec<Event<'static>> = Vec::new();
    for e in events {
        match (out.last_mut(), e) {
            (Some(Event::ArgsDelta { index: i, fragment: f }), Event::ArgsDelta { index, fragment })
                if i == index =>
            {
                f.to_mut().push_str(fragment);
            }
            (Some(Event::TextDelta { text: t }), Event::TextDelta { text }) => t.to_mut().push_str(text),
            (_, e) => out.push(e.clone()),
        }
    }
    out.retain(
        |e| !matches!(e, Event::ArgsDelta { fragment: s, .. } | Event::TextDelta { text: s } if s.is_empty()),
    );
    out
}

/// Renders `turn` under `quirks`, decodes it, and checks that after every wire event the
/// decoded events are the neutral events that event completes, fragments joined.
pub fn profile_round_trip(turn: &Turn, dialect: Dialect, quirks: Quirks) -> toolcert_dialect::SseStream {
    let neutral = render(turn);
    let wire = render_wire(turn, &neutral, dialect, quirks).unwrap_or_else(|e| panic!("{e}"));
    assert!(wire.upto.windows(2).all(|w| w[0] <= w[1]), "upto {:?}", wire.upto);
    assert_eq!(wire.upto.last().map_or(0, |&u| u as usize), neutral.events.len());
    let want = expected(dialect, Quirks::PLAIN, &neutral);
    let mut d = toolcert_dialect::decoder(dialect, quirks);
    let mut out = Vec::new();
    for (w, e) in wire.events.iter().enumerate() {
        d.decode(&toolcert_subject::WireMessage::Sse(e.clone()), &mut out)
            .unwrap_or_else(|err| panic!("{quirks:?}: wire event {w} {e:?}: {err}"));
        assert_eq!(
            joined(&out),
            joined(&want[..wire.upto[w] as usize]),
            "{quirks:?}: after wire event {w} {e:?}\nwire: {:#?}",
            wire.events
        );
    }
    wire
}
