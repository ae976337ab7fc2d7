//! Chat's delta chunks in their canonical layout ([`crate::canonical`]), without serde: the
//! decoder's first step reads a chunk whose only choice carries one argument fragment
//! (`delta.tool_calls` with one entry of just `index`, or no index, and `function.arguments`)
//! or one piece of text (`delta.content`) (`None` for anything else, which it parses as
//! before). Only the reading is here: the decoder routes the fragment by the one rule it
//! routes every entry by. The renderer's hand-written chunks are [`super::write`]'s.

use std::borrow::Cow;

use toolcert_sse::SseEvent;

use crate::canonical::Cursor;

/// What a fast-path chunk carries.
pub(super) enum Piece<'m> {
    Text(Cow<'m, str>),
    /// An entry of `index` (if any) and `arguments` alone: no id, no name, no finish reason.
    Fragment {
        index: Option<u32>,
        fragment: Cow<'m, str>,
    },
}

/// Reads `event` if it has one of the shapes read here, exactly as serde would.
pub(super) fn decode<'m>(scratch: &'m mut Vec<u8>, event: &'m SseEvent) -> Option<Piece<'m>> {
    if !crate::canonical::enabled() {
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
    // Borrowed from the data, or from the scratch buffer it was unescaped into.
    let fast = if c.lit(r#""tool_calls":[{"#).is_some() {
        // Some servers send no index (Mistral, Gemini's compatible endpoint).
        let index = match c.lit(r#""index":"#) {
            Some(()) => {
                let index = c.u32()?;
                c.lit(",")?;
                Some(index)
            }
            None => None,
        };
        c.lit(r#""function":{"arguments":"#)?;
        let fragment = c.string_in(scratch)?;
        c.lit("}}]")?;
        let fragment = match fragment {
            Some(t) => t,
            None => crate::canonical::unescaped(scratch)?,
        };
        Piece::Fragment { index, fragment: Cow::Borrowed(fragment) }
    } else {
        c.lit(r#""content":"#)?;
        let text = match c.string_in(scratch)? {
            Some(t) => t,
            None => crate::canonical::unescaped(scratch)?,
        };
        Piece::Text(Cow::Borrowed(text))
    };
    c.lit(r#"},"logprobs":null,"finish_reason":null}]}"#)?;
    c.end()?;
    crate::canonical::taken();
    Some(fast)
}
