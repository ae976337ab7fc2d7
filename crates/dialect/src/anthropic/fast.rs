//! The Anthropic decoder's fast path ([`crate::fast`]): a `content_block_delta` carrying an
//! `input_json_delta` or a `text_delta`, and a `content_block_stop`, in their canonical
//! layout, read without serde; `None` for anything else, which the decoder parses as before.

use toolcert_render::Event;
use toolcert_sse::SseEvent;
use toolcert_subject::TurnError;

use super::{own, AnthropicDecoder, Kind};
use crate::fast::Cursor;

/// Decodes `event` if it has one of the shapes read here, exactly as
/// [`crate::SseDecoder::decode`] would.
pub(super) fn decode(
    d: &AnthropicDecoder,
    event: &SseEvent,
    out: &mut Vec<Event<'static>>,
) -> Option<Result<(), TurnError>> {
    if !crate::fast::enabled() {
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
            let value = c.string()?;
            c.lit("}}")?;
            c.end()?;
            crate::fast::taken();
            // As the decoder's `content_block_delta` arm: text is text whatever the index;
            // a foreign block's input is foreign; an `Other` block's input is dropped.
            let e = match (text, d.kinds.get(&index)) {
                (true, _) => Event::TextDelta { text: own(value) },
                (false, Some(Kind::Foreign(kind))) => {
                    Event::ForeignDelta { index, kind: *kind, fragment: own(value) }
                }
                (false, Some(Kind::Other)) => return Some(Ok(())),
                (false, _) => Event::ArgsDelta { index, fragment: own(value) },
            };
            out.push(e);
        }
        "content_block_stop" => {
            c.lit(r#"{"type":"content_block_stop","index":"#)?;
            let index = c.u32()?;
            c.lit("}")?;
            c.end()?;
            crate::fast::taken();
            match d.kinds.get(&index) {
                Some(Kind::Text | Kind::Other) => {}
                Some(Kind::Foreign(_)) => out.push(Event::ForeignStop { index }),
                Some(Kind::ToolUse) | None => out.push(Event::CallStop { index, arguments: None }),
            }
        }
        _ => return None,
    }
    Some(Ok(()))
}
