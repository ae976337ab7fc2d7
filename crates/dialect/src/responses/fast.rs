//! The Responses decoder's fast path ([`crate::fast`]): `response.function_call_arguments.delta`
//! and `response.output_text.delta` in their canonical layout, read without serde; `None` for
//! anything else, which the decoder parses as before.

use toolcert_render::Event;
use toolcert_sse::SseEvent;
use toolcert_subject::TurnError;

use crate::fast::Cursor;
use crate::json::own;

/// Decodes `event` if it has one of the shapes read here, exactly as
/// [`crate::SseDecoder::decode`] would (neither shape touches the decoder's state).
pub(super) fn decode(event: &SseEvent, out: &mut Vec<Event<'static>>) -> Option<Result<(), TurnError>> {
    if !crate::fast::enabled() {
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
            let fragment = c.string()?;
            c.lit("}")?;
            c.end()?;
            crate::fast::taken();
            out.push(Event::ArgsDelta { index, fragment: own(fragment) });
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
            let text = c.string()?;
            c.lit(r#","logprobs":[]}"#)?;
            c.end()?;
            crate::fast::taken();
            out.push(Event::TextDelta { text: own(text) });
        }
        _ => return None,
    }
    Some(Ok(()))
}
