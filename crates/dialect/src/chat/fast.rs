//! Chat's fast paths ([`crate::fast`]): the decoder reads a chunk whose only choice carries
//! one argument fragment (`delta.tool_calls` with one entry of just `index` and
//! `function.arguments`) or one piece of text (`delta.content`), in the canonical layout,
//! without serde (`None` for anything else, which it parses as before). The renderer's
//! hand-written chunks are [`super::write`]'s.

use std::borrow::Cow;

use toolcert_render::Event;
use toolcert_sse::SseEvent;
use toolcert_subject::TurnError;

use crate::fast::Cursor;
use crate::Quirks;

/// Decodes `event` if it has one of the shapes read here, exactly as
/// [`crate::SseDecoder::decode`] would.
pub(super) fn decode<'m>(
    quirks: Quirks,
    calls: usize,
    scratch: &'m mut Vec<u8>,
    event: &'m SseEvent,
    out: &mut crate::Decoded<'m>,
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
        let fragment = c.string_in(scratch)?;
        c.lit("}}]")?;
        // As `ChatDecoder::entry` for an entry without an id: under the index-zero quirk
        // the fragment is the last announced call's, else its index's.
        let index = match quirks.chat_index_zero {
            true => calls.saturating_sub(1) as u32,
            false => index,
        };
        Event::ArgsDelta {
            index,
            fragment: Cow::Borrowed(match fragment {
                Some(t) => t,
                None => crate::fast::unescaped(scratch)?,
            }),
        }
    } else {
        c.lit(r#""content":"#)?;
        let text = c.string_in(scratch)?;
        // Borrowed from the data, or from the scratch buffer it was unescaped into.
        Event::TextDelta {
            text: Cow::Borrowed(match text {
                Some(t) => t,
                None => crate::fast::unescaped(scratch)?,
            }),
        }
    };
    c.lit(r#"},"logprobs":null,"finish_reason":null}]}"#)?;
    c.end()?;
    crate::fast::taken();
    out.push(e);
    Some(Ok(()))
}
