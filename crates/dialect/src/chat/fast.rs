//! Chat's fast paths ([`crate::fast`]): the decoder reads a chunk whose only choice carries
//! one argument fragment (`delta.tool_calls` with one entry of just `index` and
//! `function.arguments`) or one piece of text (`delta.content`), in the canonical layout,
//! without serde (`None` for anything else, which it parses as before); the renderer writes
//! every chunk by hand, byte for byte as `to_json` would.

use toolcert_render::Event;
use toolcert_sse::SseEvent;
use toolcert_subject::TurnError;

use super::{ChatDecoder, ChoiceOut, ChunkOut, EntryOut};
use crate::fast::{Cursor, JsonBuf};
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

/// A chunk's data, as [`crate::json::to_json`] writes it (every chunk of a stream is one;
/// serde's walk over its optional fields costs about 2,000 instructions a chunk).
pub(super) fn chunk(c: &ChunkOut<'_>) -> String {
    let args: usize =
        c.choices.iter().flat_map(|ch| &ch.delta.tool_calls).map(|e| e.function.arguments.len() + 64).sum();
    let mut s = JsonBuf::with_capacity(args + 256);
    s.raw(r#"{"id":"#);
    s.str(c.id);
    s.raw(r#","object":"#);
    s.str(c.object);
    s.raw(r#","created":"#);
    s.u64(c.created);
    s.raw(r#","model":"#);
    s.str(c.model);
    s.raw(r#","system_fingerprint":"#);
    s.str(c.system_fingerprint);
    s.raw(r#","choices":["#);
    for (k, ch) in c.choices.iter().enumerate() {
        if k > 0 {
            s.raw(",");
        }
        choice(&mut s, ch);
    }
    s.raw("]");
    if let Some(u) = &c.usage {
        s.raw(r#","usage":{"prompt_tokens":"#);
        s.u64(u.prompt_tokens.into());
        s.raw(r#","completion_tokens":"#);
        s.u64(u.completion_tokens.into());
        s.raw(r#","total_tokens":"#);
        s.u64(u.total_tokens.into());
        s.raw("}");
    }
    s.raw("}");
    s.finish().unwrap_or_else(|| crate::json::to_json(c))
}

fn choice(s: &mut JsonBuf, ch: &ChoiceOut<'_>) {
    s.raw(r#"{"index":"#);
    s.u64(ch.index.into());
    s.raw(r#","delta":{"#);
    let d = &ch.delta;
    // Each present field, comma-separated, in declaration order (`skip_serializing_if`).
    let mut first = true;
    let mut key = |s: &mut JsonBuf, name: &str| {
        if !std::mem::take(&mut first) {
            s.raw(",");
        }
        s.str(name);
        s.raw(":");
    };
    let texts = [
        ("role", d.role),
        ("content", d.content),
        ("refusal", d.refusal),
        ("reasoning_content", d.reasoning_content),
        ("reasoning", d.reasoning),
    ];
    for (name, value) in texts {
        if let Some(v) = value {
            key(s, name);
            s.str(v);
        }
    }
    if !d.tool_calls.is_empty() {
        key(s, "tool_calls");
        s.raw("[");
        for (k, e) in d.tool_calls.iter().enumerate() {
            if k > 0 {
                s.raw(",");
            }
            entry(s, e);
        }
        s.raw("]");
    }
    s.raw(r#"},"logprobs":"#);
    // `Option<()>`: `()` serialises as `null` too.
    s.raw("null");
    s.raw(r#","finish_reason":"#);
    match ch.finish_reason {
        Some(r) => s.str(r),
        None => s.raw("null"),
    }
    s.raw("}");
}

fn entry(s: &mut JsonBuf, e: &EntryOut<'_>) {
    s.raw("{");
    if let Some(i) = e.index {
        s.raw(r#""index":"#);
        s.u64(i.into());
        s.raw(",");
    }
    if let Some(id) = &e.id {
        s.raw(r#""id":"#);
        s.str(id);
        s.raw(",");
    }
    if let Some(kind) = e.kind {
        s.raw(r#""type":"#);
        s.str(kind);
        s.raw(",");
    }
    s.raw(r#""function":{"#);
    if let Some(name) = e.function.name {
        s.raw(r#""name":"#);
        s.str(name);
        s.raw(",");
    }
    s.raw(r#""arguments":"#);
    s.str(e.function.arguments);
    s.raw("}}");
}

#[cfg(test)]
mod tests {
    use std::borrow::Cow;

    use super::super::{ChoiceOut, ChunkOut, DeltaOut, EntryOut, FunctionOut, Usage};

    /// Chunks with every optional field present or absent are the bytes `to_json` writes.
    #[test]
    fn chunks_are_written_as_to_json_writes_them() {
        let values = [None, Some(""), Some("{\"a\": \"é\\n\u{1}\""), Some("plain")];
        let mut tried = 0;
        for (m, v) in values.iter().enumerate() {
            for bits in 0u32..64 {
                let on = |b: u32| (bits >> b & 1 == 1).then_some(*v).flatten();
                let entry = |k: u32| EntryOut {
                    index: (bits & 1 == 0).then_some(k),
                    id: on(1).map(Cow::Borrowed),
                    kind: (bits & 4 == 0).then_some("function"),
                    function: FunctionOut { name: on(3), arguments: v.unwrap_or("x\"y") },
                };
                let entries = (0..(bits + m as u32) % 3).map(entry).collect();
                let delta = DeltaOut {
                    role: on(5).map(|_| "assistant"),
                    content: on(0),
                    refusal: on(2),
                    reasoning_content: on(4),
                    reasoning: on(3),
                    tool_calls: entries,
                };
                let finish = (bits % 5 == 0).then_some("tool_calls");
                let chunk = ChunkOut {
                    id: "chatcmpl-A\"b",
                    object: "chat.completion.chunk",
                    created: 1_754_000_000 + u64::from(bits),
                    model: "gpt-4o",
                    system_fingerprint: "fp_1",
                    choices: vec![ChoiceOut {
                        index: m as u32,
                        delta,
                        logprobs: None,
                        finish_reason: finish,
                    }],
                    usage: (bits % 7 == 0).then_some(Usage {
                        prompt_tokens: 1,
                        completion_tokens: bits,
                        total_tokens: u32::MAX,
                    }),
                };
                assert_eq!(super::chunk(&chunk), crate::json::to_json(&chunk), "{m} {bits}");
                tried += 1;
            }
        }
        assert_eq!(tried, 256);
    }
}
