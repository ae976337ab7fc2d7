//! The Responses delta events in their canonical layout ([`crate::canonical`]), without
//! serde: the decoder's first step reads `response.function_call_arguments.delta` and
//! `response.output_text.delta` (`None` for anything else, which it parses as before); the
//! renderer writes the same two events by hand, byte for byte as `to_json` would.

use std::borrow::Cow;

use toolcert_render::Event;
use toolcert_sse::SseEvent;
use toolcert_subject::TurnError;

use super::{ArgsDelta, Renderer, TextDelta};
use crate::canonical::Cursor;
use crate::json::Payload;

/// `{"type":NAME,"sequence_number":N,"item_id":ID,"output_index":I,`: the start both deltas
/// share (the envelope's fields, then the body's, as the flattened envelope is written).
fn head(s: &mut Payload, name: &str, seq: u64, item_id: &str, output_index: u32) {
    s.raw(r#"{"type":"#);
    s.str(name);
    s.raw(r#","sequence_number":"#);
    s.u64(seq);
    s.raw(r#","item_id":"#);
    s.str(item_id);
    s.raw(r#","output_index":"#);
    s.u64(output_index.into());
    s.raw(",");
}

impl Renderer<'_> {
    /// [`Renderer::event`] for a `response.function_call_arguments.delta` (serde's flattened
    /// envelope is walked as a map, the costliest part of rendering the event).
    pub(super) fn args_delta(&mut self, name: &str, body: ArgsDelta<'_>, delivered: usize) {
        let seq = self.seq;
        self.seq += 1;
        self.out.with(Some(name), 0, |p| args_delta_into(p, name, seq, &body), delivered);
    }

    /// [`Renderer::event`] for a `response.output_text.delta`.
    pub(super) fn text_delta(&mut self, name: &str, body: TextDelta<'_>, delivered: usize) {
        let seq = self.seq;
        self.seq += 1;
        self.out.with(Some(name), 0, |p| text_delta_into(p, name, seq, &body), delivered);
    }
}

/// The data of a `response.function_call_arguments.delta`, as a string (the tests').
#[cfg(test)]
fn args_delta(name: &str, seq: u64, body: &ArgsDelta<'_>) -> String {
    let mut s = Payload::with_capacity(0);
    args_delta_into(&mut s, name, seq, body);
    s.finish()
}

/// The data of a `response.function_call_arguments.delta`, appended to `s`.
fn args_delta_into(s: &mut Payload, name: &str, seq: u64, body: &ArgsDelta<'_>) {
    s.reserve(body.delta.as_str().len() + body.item_id.len() + 96);
    head(s, name, seq, body.item_id, body.output_index);
    s.raw(r#""delta":"#);
    s.str(body.delta.as_str());
    s.raw("}");
}

/// The data of a `response.output_text.delta`, as a string (the tests').
#[cfg(test)]
fn text_delta(name: &str, seq: u64, body: &TextDelta<'_>) -> String {
    let mut s = Payload::with_capacity(0);
    text_delta_into(&mut s, name, seq, body);
    s.finish()
}

/// The data of a `response.output_text.delta`, appended to `s`.
fn text_delta_into(s: &mut Payload, name: &str, seq: u64, body: &TextDelta<'_>) {
    s.reserve(body.delta.as_str().len() + body.item_id.len() + 128);
    head(s, name, seq, body.item_id, body.output_index);
    s.raw(r#""content_index":"#);
    s.u64(body.content_index.into());
    s.raw(r#","delta":"#);
    s.str(body.delta.as_str());
    s.raw(r#","logprobs":[]}"#);
}

/// Decodes `event` if it has one of the shapes read here, exactly as
/// [`crate::SseDecoder::decode`] would (a delta marks its call as having argument bytes, as
/// there).
pub(super) fn decode<'m>(
    calls: &mut super::Calls,
    scratch: &'m mut Vec<u8>,
    event: &'m SseEvent,
    out: &mut crate::Decoded<'m>,
) -> Option<Result<(), TurnError>> {
    if !crate::canonical::enabled() {
        return None;
    }
    let mut c = Cursor::new(&event.data);
    match event.event.as_deref()? {
        "response.function_call_arguments.delta" => {
            c.lit(r#"{"type":"response.function_call_arguments.delta","sequence_number":"#)?;
            c.u32()?;
            c.lit(r#","item_id":"#)?;
            c.string()?;
            c.lit(r#","output_index":"#)?;
            let index = c.u32()?;
            c.lit(r#","delta":"#)?;
            let fragment = c.string_in(scratch)?;
            c.lit("}")?;
            c.end()?;
            crate::canonical::taken();
            calls.delta(index);
            // Borrowed from the data, or from the scratch buffer it was unescaped into.
            out.push(Event::ArgsDelta {
                index,
                fragment: Cow::Borrowed(match fragment {
                    Some(t) => t,
                    None => crate::canonical::unescaped(scratch)?,
                }),
            });
        }
        "response.output_text.delta" => {
            c.lit(r#"{"type":"response.output_text.delta","sequence_number":"#)?;
            c.u32()?;
            c.lit(r#","item_id":"#)?;
            c.string()?;
            c.lit(r#","output_index":"#)?;
            c.u32()?;
            c.lit(r#","content_index":"#)?;
            c.u32()?;
            c.lit(r#","delta":"#)?;
            let text = c.string_in(scratch)?;
            c.lit(r#","logprobs":[]}"#)?;
            c.end()?;
            crate::canonical::taken();
            out.push(Event::TextDelta {
                text: Cow::Borrowed(match text {
                    Some(t) => t,
                    None => crate::canonical::unescaped(scratch)?,
                }),
            });
        }
        _ => return None,
    }
    Some(Ok(()))
}

#[cfg(test)]
mod tests {
    use super::super::{ArgsDelta, Envelope, TextDelta};
    use crate::json::Str;

    /// The hand-written deltas are the bytes of the envelope `Renderer::event` serialises.
    #[test]
    fn deltas_are_written_as_to_json_writes_them() {
        for value in ["", "{\"a\": 1", "é \u{1}\n\\ ✈", "\"\"\""] {
            for (seq, index) in [(0u64, 0u32), (17, 3), (u64::MAX, u32::MAX)] {
                let args = || ArgsDelta {
                    kind: None,
                    item_id: "fc_0a\"",
                    output_index: index,
                    delta: Str::of(value),
                };
                let name = "response.function_call_arguments.delta";
                let want = crate::json::to_json(&Envelope { kind: name, sequence_number: seq, body: args() });
                assert_eq!(super::args_delta(name, seq, &args()), want);
                let text = || TextDelta {
                    kind: None,
                    item_id: "msg_1",
                    output_index: index,
                    content_index: index / 2,
                    delta: Str::of(value),
                    logprobs: [],
                };
                let name = "response.output_text.delta";
                let want = crate::json::to_json(&Envelope { kind: name, sequence_number: seq, body: text() });
                assert_eq!(super::text_delta(name, seq, &text()), want);
            }
        }
    }
}
