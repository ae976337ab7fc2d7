//! Anthropic's delta events in their canonical layout ([`crate::canonical`]), without serde:
//! the decoder's first step reads a `content_block_delta` carrying an `input_json_delta` or a
//! `text_delta`, and a `content_block_stop` (`None` for anything else, which it parses as
//! before); the renderer writes every `content_block_delta` by hand, byte for byte as
//! `to_json` would.

use toolcert_render::Event;
use toolcert_sse::SseEvent;
use toolcert_subject::TurnError;

use std::borrow::Cow;
use std::collections::HashMap;

use super::{BlockDelta, Kind};
use crate::canonical::Cursor;
use crate::json::Payload;
use crate::json::Str;

/// A `content_block_delta`'s data, as [`crate::json::to_json`] writes it (the most frequent
/// event of a stream, where serde's walk over the optional fields would cost more than the
/// rest of rendering it): its `type` when present, `index`, and the delta's `type` and
/// present fields, in declaration order.
pub(super) fn block_delta(d: &BlockDelta<'_>) -> String {
    let delta = &d.delta;
    let fields = [
        ("text", delta.text.as_ref().map(Str::as_str)),
        ("partial_json", delta.partial_json.as_ref().map(Str::as_str)),
        ("thinking", delta.thinking.as_ref().map(Str::as_str)),
        ("signature", delta.signature),
    ];
    let len: usize = fields.iter().filter_map(|(_, v)| v.map(str::len)).sum();
    let mut s = Payload::with_capacity(len + 96);
    s.raw("{");
    if let Some(kind) = &d.kind {
        s.raw(r#""type":"#);
        s.str(kind.as_str());
        s.raw(",");
    }
    s.raw(r#""index":"#);
    s.u64(d.index.into());
    s.raw(r#","delta":{"type":"#);
    s.str(delta.kind.as_str());
    for (name, value) in fields {
        if let Some(v) = value {
            s.raw(",");
            s.str(name);
            s.raw(":");
            s.str(v);
        }
    }
    s.raw("}}");
    s.finish()
}

/// Decodes `event` if it has one of the shapes read here, exactly as
/// [`crate::SseDecoder::decode`] would.
pub(super) fn decode<'m>(
    kinds: &mut HashMap<u32, Kind>,
    scratch: &'m mut Vec<u8>,
    event: &'m SseEvent,
    out: &mut crate::Decoded<'m>,
) -> Option<Result<(), TurnError>> {
    if !crate::canonical::enabled() {
        return None;
    }
    let mut c = Cursor::new(&event.data);
    match event.event.as_deref()? {
        "content_block_delta" => {
            c.lit(r#"{"type":"content_block_delta","index":"#)?;
            let index = c.u32()?;
            c.lit(r#","delta":{"type":""#)?;
            let text = if c.lit(r#"input_json_delta","partial_json":"#).is_some() {
                false
            } else {
                c.lit(r#"text_delta","text":"#)?;
                true
            };
            let value = c.string_in(scratch)?;
            c.lit("}}")?;
            c.end()?;
            crate::canonical::taken();
            // Borrowed from the data, or from the scratch buffer it was unescaped into.
            let value = Cow::Borrowed(match value {
                Some(t) => t,
                None => crate::canonical::unescaped(scratch)?,
            });
            // As the decoder's `content_block_delta` arm: text is text whatever the index;
            // a foreign block's input is foreign; an `Other` block's input is dropped.
            let e = match (text, kinds.get(&index)) {
                (true, _) => Event::TextDelta { text: value },
                (false, Some(Kind::Foreign(kind))) => {
                    Event::ForeignDelta { index, kind: *kind, fragment: value }
                }
                (false, Some(Kind::Other)) => return Some(Ok(())),
                // A call whose start carried its whole input: nothing may add to it.
                (false, Some(Kind::ToolUseWhole)) if value.is_empty() => return Some(Ok(())),
                (false, Some(Kind::ToolUseWhole)) => return Some(Err(super::after_whole(index))),
                (false, _) => Event::ArgsDelta { index, fragment: value },
            };
            out.push(e);
        }
        "content_block_stop" => {
            c.lit(r#"{"type":"content_block_stop","index":"#)?;
            let index = c.u32()?;
            c.lit("}")?;
            c.end()?;
            crate::canonical::taken();
            match kinds.get(&index) {
                Some(Kind::Text | Kind::Other) => {}
                Some(Kind::Foreign(_)) => out.push(Event::ForeignStop { index }),
                Some(Kind::ToolUse) | None => out.push(Event::CallStop { index, arguments: None }),
                Some(Kind::ToolUseWhole) => {
                    kinds.insert(index, Kind::ToolUse);
                    out.push(Event::CallStop { index, arguments: None })
                }
            }
        }
        "content_block_start" => {
            c.lit(r#"{"type":"content_block_start","index":"#)?;
            let index = c.u32()?;
            c.lit(r#","content_block":{"type":""#)?;
            // As the decoder's `content_block_start` arm for a tool use and for a text block
            // (the other block types go to serde): `input` is a key serde skips.
            if c.lit(r#"tool_use","id":"#).is_some() {
                let id = c.string()?;
                c.lit(r#","name":"#)?;
                let name = c.string()?;
                c.lit(r#","input":{}}}"#)?;
                c.end()?;
                crate::canonical::taken();
                out.push(Event::CallStart { index, call_id: id.0, name: name.0 });
                kinds.insert(index, Kind::ToolUse);
            } else {
                c.lit(r#"text","text":"#)?;
                let text = c.string()?;
                c.lit("}}")?;
                c.end()?;
                crate::canonical::taken();
                if !text.as_str().is_empty() {
                    out.push(Event::TextDelta { text: text.0 });
                }
                kinds.insert(index, Kind::Text);
            }
        }
        "message_delta" => {
            c.lit(r#"{"type":"message_delta","delta":{"stop_reason":"#)?;
            let reason = if c.lit("null").is_some() { None } else { Some(c.string()?) };
            // `stop_sequence` and `usage` are keys serde skips (any JSON value): read here
            // only in the forms the renderer writes.
            c.lit(r#","stop_sequence":"#)?;
            if c.lit("null").is_none() {
                c.string()?;
            }
            c.lit(r#"},"usage":{"output_tokens":"#)?;
            c.u32()?;
            c.lit("}}")?;
            c.end()?;
            crate::canonical::taken();
            if let Some(r) = reason {
                out.push(Event::Stop {
                    reason: match super::stop_reason("message_delta", r.as_str()) {
                        Ok(r) => r,
                        Err(e) => return Some(Err(e)),
                    },
                });
            }
        }
        "message_stop" => {
            c.lit(r#"{"type":"message_stop"}"#)?;
            c.end()?;
            crate::canonical::taken();
        }
        "ping" => {
            c.lit(r#"{"type":"ping"}"#)?;
            c.end()?;
            crate::canonical::taken();
            out.push(Event::Ping);
        }
        _ => return None,
    }
    Some(Ok(()))
}

#[cfg(test)]
mod tests {
    use super::super::{ty, BlockDelta, Delta};
    use crate::json::Str;
    use crate::SseDecoder;
    use toolcert_sse::SseEvent;

    /// The shapes read here, in and just out of their layout (escapes, an empty and a
    /// non-empty text start, an unknown or absent stop reason, a stop sequence, extra keys,
    /// `\u` escapes, a wrong `type`), decode as serde decodes them, in order on one decoder
    /// (the starts record the block kinds the stops and deltas are read with).
    #[test]
    fn starts_stops_and_message_events_decode_as_serde_does() {
        let events = [
            (
                "message_start",
                r#"{"type":"message_start","message":{"id":"msg_1","type":"message","role":"assistant","model":"m\"x","content":[],"stop_reason":null,"stop_sequence":null,"usage":{"input_tokens":3,"cache_creation_input_tokens":0,"cache_read_input_tokens":0,"output_tokens":1}}}"#,
            ),
            ("ping", r#"{"type":"ping"}"#),
            ("ping", r#"{"type": "ping"}"#),
            (
                "content_block_start",
                r#"{"type":"content_block_start","index":0,"content_block":{"type":"text","text":""}}"#,
            ),
            (
                "content_block_start",
                r#"{"type":"content_block_start","index":1,"content_block":{"type":"text","text":"hé\n"}}"#,
            ),
            (
                "content_block_start",
                r#"{"type":"content_block_start","index":2,"content_block":{"type":"tool_use","id":"toolu_\"1","name":"get_weather","input":{}}}"#,
            ),
            (
                "content_block_start",
                r#"{"type":"content_block_start","index":3,"content_block":{"type":"tool_use","id":"t\u0041","name":"n","input":{}}}"#,
            ),
            (
                "content_block_start",
                r#"{"type":"content_block_start","index":4,"content_block":{"type":"tool_use","name":"n","input":{}}}"#,
            ),
            (
                "content_block_start",
                r#"{"type":"content_block_stop","index":5,"content_block":{"type":"text","text":""}}"#,
            ),
            (
                "content_block_delta",
                r#"{"type":"content_block_delta","index":2,"delta":{"type":"input_json_delta","partial_json":"{\"a\": 1"}}"#,
            ),
            ("content_block_stop", r#"{"type":"content_block_stop","index":1}"#),
            ("content_block_stop", r#"{"type":"content_block_stop","index":2}"#),
            (
                "message_delta",
                r#"{"type":"message_delta","delta":{"stop_reason":"tool_use","stop_sequence":null},"usage":{"output_tokens":7}}"#,
            ),
            (
                "message_delta",
                r#"{"type":"message_delta","delta":{"stop_reason":"stop_sequence","stop_sequence":"END"},"usage":{"output_tokens":7}}"#,
            ),
            (
                "message_delta",
                r#"{"type":"message_delta","delta":{"stop_reason":null,"stop_sequence":null},"usage":{"output_tokens":0}}"#,
            ),
            (
                "message_delta",
                r#"{"type":"message_delta","delta":{"stop_reason":"bogus","stop_sequence":null},"usage":{"output_tokens":7}}"#,
            ),
            (
                "message_delta",
                r#"{"type":"message_delta","delta":{"stop_reason":"end_turn","stop_sequence":null},"usage":{"output_tokens":-1}}"#,
            ),
            ("message_stop", r#"{"type":"message_stop"}"#),
            ("message_stop", r#"{"type":"message_stop"} "#),
            ("message_stop", r#"{"type":"ping"}"#),
        ];
        let run = |slow: bool| {
            crate::canonical::tests::SLOW.with(|s| s.set(slow));
            let mut d = super::super::AnthropicDecoder::new();
            let mut scratch = Vec::new();
            let got: Vec<_> = events
                .iter()
                .map(|(name, data)| {
                    let e = SseEvent { event: Some((*name).into()), data: (*data).into(), id: None };
                    let mut out = crate::Decoded::new();
                    d.decode(&e, &mut scratch, &mut out).map_err(|e| format!("{e:?}"))?;
                    Ok::<_, String>(
                        out.into_iter().map(toolcert_render::Event::into_owned).collect::<Vec<_>>(),
                    )
                })
                .collect();
            crate::canonical::tests::SLOW.with(|s| s.set(false));
            got
        };
        let before = crate::canonical::tests::TAKEN.with(std::cell::Cell::get);
        let fast = run(false);
        let taken = crate::canonical::tests::TAKEN.with(std::cell::Cell::get) - before;
        assert_eq!(fast, run(true));
        assert!(taken >= 12, "{taken} events on the fast path");
    }

    /// Deltas with and without their `type` and with every combination of fields are the
    /// bytes `to_json` writes.
    #[test]
    fn deltas_are_written_as_to_json_writes_them() {
        for value in ["", "{\"a\": 1", "é \u{1}\n\\ ✈", "\"\"\""] {
            for index in [0, 7, u32::MAX] {
                for bits in 0u32..32 {
                    let on = |b: u32| (bits >> b & 1 == 1).then(|| Str::of(value));
                    let delta = Delta {
                        text: on(0),
                        partial_json: on(1),
                        thinking: on(2),
                        signature: (bits & 8 != 0).then_some("EqQB\"sig"),
                        ..Delta::of("input_json_delta")
                    };
                    let kind = if bits & 16 == 0 { ty("content_block_delta") } else { None };
                    let d = BlockDelta { kind, index, delta };
                    assert_eq!(super::block_delta(&d), crate::json::to_json(&d), "{bits}");
                }
            }
        }
    }
}
