//! Wire defects ([`WireDefect`]): one event inserted into a rendered wire stream that no
//! neutral event describes, for the corpus cases a decoder must refuse. The inserted event
//! is derived from the stream's own events (the same event name, the same chunk envelope),
//! so only the defect differs from what the provider sends; each dialect says how its events
//! carry one ([`crate::DialectDef::wrong_typed`], [`crate::DialectDef::nameless_new_id`]).

use serde_json::Value;
use toolcert_scenario::{Dialect, WireDefect};
use toolcert_sse::SseEvent;

use crate::SseStream as WireStream;

/// `wire` with `defect` inserted, and how many neutral events are complete before the
/// inserted event (the defect arrives as the next one would).
pub fn defect(wire: &WireStream, dialect: Dialect, defect: WireDefect) -> Result<(WireStream, u32), String> {
    let parsed = |e: &SseEvent| serde_json::from_str::<Value>(&e.data).ok();
    let def = crate::def(dialect);
    let (k, event) = match defect {
        WireDefect::NotJson | WireDefect::WrongType => {
            let (k, copy) = wire
                .events
                .iter()
                .enumerate()
                .find_map(|(k, e)| def.wrong_typed(&parsed(e)?).map(|c| (k, c)))
                .ok_or("the stream has no argument fragment to put the defect after")?;
            let data = match defect {
                WireDefect::NotJson => "{not json".to_string(),
                _ => copy.to_string(),
            };
            (k, SseEvent { event: wire.events[k].event.clone(), data, id: None })
        }
        WireDefect::NamelessNewId => {
            let Some(nameless_new_id) = def.nameless_new_id() else {
                return Err(format!(
                    "a nameless new id at an occupied index is a Chat defect, not {dialect}'s"
                ));
            };
            let (k, copy) = wire
                .events
                .iter()
                .enumerate()
                .find_map(|(k, e)| nameless_new_id(&parsed(e)?).map(|c| (k, c)))
                .ok_or("the stream announces no call")?;
            (k, SseEvent { event: None, data: copy.to_string(), id: None })
        }
    };
    let mut out = wire.clone();
    let before = wire.upto[k];
    out.events.insert(k + 1, event);
    out.upto.insert(k + 1, before);
    Ok((out, before))
}

/// Whether a JSON value is a non-empty string (an argument fragment worth retyping).
pub(crate) fn nonempty(f: &Value) -> bool {
    f.as_str().is_some_and(|s| !s.is_empty())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{decoder, render_wire};
    use toolcert_render::render;
    use toolcert_scenario::{Block, Call, Ending, Quirks, Shape, StopReason, Turn};
    use toolcert_subject::ErrorClass;

    fn turn(shape: Shape) -> Turn {
        Turn {
            tools: vec![],
            blocks: vec![Block::Call(Call {
                index: 0,
                call_id: "call_1".into(),
                name: "lookup_order".into(),
                arguments: r#"{"order_id": "A-4471"}"#.into(),
                splits: vec![5, 12],
            })],
            shape,
            ending: Ending::Stop(StopReason::ToolUse),
            faults: vec![],
            pings: vec![],
            transport: Default::default(),
            wire: Default::default(),
        }
    }

    /// The class the project's decoder gives the first event it refuses, if any.
    fn refused(dialect: Dialect, wire: &WireStream) -> Option<(usize, ErrorClass)> {
        let mut d = decoder(dialect, Quirks::default());
        let mut sink = Vec::new();
        wire.events.iter().enumerate().find_map(|(k, e)| {
            d.decode(&toolcert_subject::WireMessage::Sse(e.clone()), &mut sink).err().map(|e| (k, e.class))
        })
    }

    #[test]
    fn each_defect_is_refused_by_the_decoder_where_it_was_put() {
        // Wire defects are SSE events: a binary-framed dialect has none.
        for dialect in Dialect::ALL.into_iter().filter(|&d| !crate::def(d).binary()) {
            let shape = match dialect {
                Dialect::OpenAiChat => Shape::Interleaved(Default::default()),
                _ => Shape::PerCall,
            };
            let t = turn(shape);
            let neutral = render(&t);
            let wire = render_wire(&t, &neutral, dialect, Quirks::default()).unwrap().to_sse().unwrap();
            assert_eq!(refused(dialect, &wire), None);
            for d in [WireDefect::NotJson, WireDefect::WrongType] {
                let (w, before) = defect(&wire, dialect, d).unwrap();
                assert_eq!(w.events.len(), wire.events.len() + 1);
                let (k, class) = refused(dialect, &w).unwrap();
                assert_eq!(class, ErrorClass::Malformed, "{dialect} {d:?}");
                assert_eq!(w.upto[k], before);
                // Only after the first fragment: some argument bytes came before it.
                assert!(before >= 2, "{dialect} {d:?}: {before}");
            }
            // A new id starts a new call, at an occupied index too; its name may come late,
            // but this one's never does: malformed at the finish reason.
            match defect(&wire, dialect, WireDefect::NamelessNewId) {
                Ok((w, before)) => {
                    assert_eq!(dialect, Dialect::OpenAiChat);
                    let (k, class) = refused(dialect, &w).unwrap();
                    assert_eq!(class, ErrorClass::Malformed);
                    assert!(w.upto[k] > before && w.events[k].data.contains("\"finish_reason\":\""));
                }
                Err(_) => assert_ne!(dialect, Dialect::OpenAiChat),
            }
        }
    }
}
