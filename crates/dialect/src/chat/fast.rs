//! Chat's fast paths ([`crate::fast`]): the decoder reads a chunk whose only choice carries
//! one argument fragment (`delta.tool_calls` with one entry of just `index` and
//! `function.arguments`) or one piece of text (`delta.content`), in the canonical layout,
//! without serde (`None` for anything else, which it parses as before). The renderer's
//! hand-written chunks are [`super::write`]'s.

use toolcert_render::Event;
use toolcert_sse::SseEvent;
use toolcert_subject::TurnError;

use super::ChatDecoder;
use crate::fast::Cursor;
use crate::json::own;

/// Decodes `event` if it has one of the shapes read here, exactly as
/// [`crate::SseDecoder::decode`] would.
pub(super) fn decode(
    d: &ChatDecoder,
    event: &SseEvent,
    out: &mut Vec<Event<'static>>,
) -> Option<Result<(), TurnError>> {
    if !crate::fast::enabled() {
        return None;
    }
    let mut c = Cursor::new(&event.data);
    c.lit(r#"{"id":"#)?;
    c.string()?;
    c.lit(r#","object":"chat.completion.chunk","created":"#)?;
    c.u32()?;
    c.lit(r#","model":"#)?;
    c.string()?;
    c.lit(r#","system_fingerprint":"#)?;
    c.string()?;
    c.lit(r#","choices":[{"index":0,"delta":{"#)?;
    let e = if c.lit(r#""tool_calls":[{"index":"#).is_some() {
        let index = c.u32()?;
        c.lit(r#","function":{"arguments":"#)?;
        let fragment = c.string()?;
        c.lit("}}]")?;
        // As `ChatDecoder::entry` for an entry without an id: under the index-zero quirk
        // the fragment is the last announced call's, else its index's.
        let index = match d.quirks.chat_index_zero {
            true => d.calls.len().saturating_sub(1) as u32,
            false => index,
        };
        Event::ArgsDelta { index, fragment: own(fragment) }
    } else {
        c.lit(r#""content":"#)?;
        Event::TextDelta { text: own(c.string()?) }
    };
    c.lit(r#"},"logprobs":null,"finish_reason":null}]}"#)?;
    c.end()?;
    crate::fast::taken();
    out.push(e);
    Some(Ok(()))
}
