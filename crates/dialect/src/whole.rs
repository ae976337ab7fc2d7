//! Which calls a server profile can send in one piece: the Anthropic profiles that carry a
//! call's whole `input` in its `content_block_start` or in `message_start`, and the
//! Responses profile that sends a call's arguments only in its `done`.
//!
//! Where it sits: read by those dialects' renderers (`anthropic.rs`, `responses.rs`) before
//! they walk a turn's neutral stream. A wire event that carries a call whole completes all
//! the neutral events it stands for at once (its `upto`), so the calls it can carry are those
//! whose events the neutral stream delivers together, with nothing of another block, no
//! ping and no fault between them; any other call is sent as the provider's own stream sends
//! it. The rule is the same at the wire and the bytes levels (both render from here).

use toolcert_render::{Event, Origin, Rendered};
use toolcert_scenario::{Block, Call, Turn};

/// A call whose announcement and argument fragments the neutral stream delivers one after
/// the other, with nothing between them.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Run {
    /// The call's block in the turn.
    pub block: u32,
    /// The neutral position of its announcement.
    pub announce: usize,
    /// One past its last fragment delivered right after the announcement.
    pub end: usize,
    /// Every argument byte is in the fragments `announce + 1..end`.
    pub all_bytes: bool,
    /// The call's own terminal is at `end`, and repeats no arguments of its own (a terminal
    /// that does is a fault, which needs fragments to contradict).
    pub stopped: bool,
}

/// The runs of `neutral`'s calls, in announcement order (a replayed announcement is a fault,
/// not a run).
pub(crate) fn runs(turn: &Turn, neutral: &Rendered<'_>) -> Vec<Run> {
    let o = &neutral.origins;
    let mut out = Vec::new();
    for (k, origin) in o.iter().enumerate() {
        let Origin::Announce { block } = *origin else { continue };
        let Some(Block::Call(call)) = turn.blocks.get(block as usize) else { continue };
        let mut end = k + 1;
        // Bytes covered so far: the fragments come in order, each starting where the one
        // before ended.
        let mut covered = 0;
        while let Some(&Origin::Fragment { block: b, end: e, .. }) = o.get(end) {
            if b != block {
                break;
            }
            covered = e as usize;
            end += 1;
        }
        let stopped = o.get(end) == Some(&Origin::CallStop { block })
            && matches!(neutral.events.get(end), Some(Event::CallStop { arguments: None, .. }));
        out.push(Run { block, announce: k, end, all_bytes: covered == call.arguments.len(), stopped });
    }
    out
}

/// The call of a run.
pub(crate) fn call<'t>(turn: &'t Turn, run: &Run) -> &'t Call {
    match &turn.blocks[run.block as usize] {
        Block::Call(c) => c,
        Block::Text(_) | Block::Foreign(_) => unreachable!("runs are made of calls"),
    }
}

/// Whether `arguments` can be sent as a JSON value inside an event (Anthropic's `input`) and
/// read back as exactly this text: a JSON object with at least one member (an empty object is
/// how the provider's own stream starts a call, and reads back as no argument bytes), with
/// no whitespace around it and no line break anywhere (an SSE line break would come back as
/// LF, and multi-line data is re-indented: the text read back would not be the model's,
/// and a call that fails reports its buffer as received).
pub(crate) fn sendable_as_value(turn: &Turn, arguments: &str) -> bool {
    turn.transport.multiline.is_empty()
        && arguments.starts_with('{')
        && arguments.ends_with('}')
        && !is_empty_object(arguments)
        && memchr::memchr2(b'\r', b'\n', arguments.as_bytes()).is_none()
        && serde_json::from_str::<serde_json::Value>(arguments).is_ok_and(|v| v.is_object())
}

/// Whether a JSON text is an object with no members (`{}`, `{ }`, whitespace around it).
pub(crate) fn is_empty_object(json: &str) -> bool {
    json.trim_matches(|c: char| c.is_ascii_whitespace())
        .strip_prefix('{')
        .is_some_and(|rest| rest.trim_start_matches(|c: char| c.is_ascii_whitespace()) == "}")
}

#[cfg(test)]
mod tests {
    use super::*;
    use toolcert_scenario::build::{call, per_call, text};
    use toolcert_scenario::{Ending, StopReason};

    #[test]
    fn empty_objects_and_sendable_values() {
        for e in ["{}", " { } ", "{\n}", "{\t}"] {
            assert!(is_empty_object(e), "{e:?}");
        }
        for e in ["", "{", "}", "[]", "{\"a\":1}", "{}{}", "null"] {
            assert!(!is_empty_object(e), "{e:?}");
        }
        let t = per_call(vec![], Ending::Stop(StopReason::ToolUse));
        for yes in [r#"{"a": 1}"#, r#"{"n":1E+2,"s":"\u00e9"}"#] {
            assert!(sendable_as_value(&t, yes), "{yes:?}");
        }
        for no in ["", "{}", " {\"a\":1}", "{\"a\":1} ", "{\n\"a\":1}", "[1]", "{\"a\":", "42", "{\"a\":1}{}"]
        {
            assert!(!sendable_as_value(&t, no), "{no:?}");
        }
    }

    #[test]
    fn runs_see_what_the_stream_delivered_together() {
        let t = per_call(
            vec![
                text(&["a"]),
                call(1, "c1", "f", &["{\"a\"", ": 1}"]),
                call(2, "c2", "f", &["{\"b\"", ": 2}"]),
            ],
            Ending::Stop(StopReason::ToolUse),
        );
        let n = toolcert_render::render(&t);
        let r = runs(&t, &n);
        assert_eq!(
            r,
            [
                Run { block: 1, announce: 1, end: 4, all_bytes: true, stopped: true },
                Run { block: 2, announce: 5, end: 8, all_bytes: true, stopped: true },
            ]
        );
        // A ping between two fragments cuts the first call's run short.
        let pinged = toolcert_scenario::Turn { pings: vec![3], ..t.clone() };
        let r = runs(&pinged, &toolcert_render::render(&pinged));
        assert_eq!(r[0], Run { block: 1, announce: 1, end: 3, all_bytes: false, stopped: false });
        // Cut after the second call's last fragment: all its bytes, no terminal.
        let cut = toolcert_scenario::Turn {
            ending: Ending::Abandoned { after: 8, end: toolcert_scenario::StreamEnd::Disconnect },
            ..t
        };
        let r = runs(&cut, &toolcert_render::render(&cut));
        assert_eq!(r[1], Run { block: 2, announce: 5, end: 8, all_bytes: true, stopped: false });
    }
}
