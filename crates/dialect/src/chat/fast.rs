//! Chat's fast paths ([`crate::fast`]): the decoder reads a chunk whose only choice carries
//! one argument fragment (`delta.tool_calls` with one entry of just `index` and
//! `function.arguments`) or one piece of text (`delta.content`), in the canonical layout,
//! without serde (`None` for anything else, which it parses as before); the renderer writes
//! every chunk by hand, byte for byte as `to_json` would.

use toolcert_render::Event;
use toolcert_sse::SseEvent;
use toolcert_subject::TurnError;

use super::{ChatDecoder, Choice, Chunk, Delta, Entry};
use crate::fast::{Cursor, JsonBuf};
use crate::json::{own, Seen, Str};

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
/// serde's walk over its optional fields costs about 2,000 instructions a chunk): the
/// fields in declaration order, `None` as `null` where serde writes it and left out where
/// the type skips it.
pub(super) fn chunk(c: &Chunk<'_>) -> String {
    let args: usize = c
        .choices
        .iter()
        .flatten()
        .filter_map(|ch| ch.delta.as_ref()?.tool_calls.as_ref())
        .flatten()
        .filter_map(|e| Some(e.function.as_ref()?.arguments.as_ref()?.as_str().len() + 64))
        .sum();
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
    s.raw(r#","choices":"#);
    match &c.choices {
        None => s.raw("null"),
        Some(choices) => {
            s.raw("[");
            for (k, ch) in choices.iter().enumerate() {
                if k > 0 {
                    s.raw(",");
                }
                choice(&mut s, ch);
            }
            s.raw("]");
        }
    }
    match &c.usage {
        None => {}
        Some(Seen::Read) => s.raw(r#","usage":null"#),
        Some(Seen::Sent(u)) => {
            s.raw(r#","usage":{"prompt_tokens":"#);
            s.u64(u.prompt_tokens.into());
            s.raw(r#","completion_tokens":"#);
            s.u64(u.completion_tokens.into());
            s.raw(r#","total_tokens":"#);
            s.u64(u.total_tokens.into());
            s.raw("}");
        }
    }
    s.raw("}");
    s.finish().unwrap_or_else(|| crate::json::to_json(c))
}

fn opt_u32(s: &mut JsonBuf, n: Option<u32>) {
    match n {
        Some(n) => s.u64(n.into()),
        None => s.raw("null"),
    }
}

fn opt_str(s: &mut JsonBuf, v: Option<&Str<'_>>) {
    match v {
        Some(v) => s.str(v.as_str()),
        None => s.raw("null"),
    }
}

fn choice(s: &mut JsonBuf, ch: &Choice<'_>) {
    s.raw(r#"{"index":"#);
    opt_u32(s, ch.index);
    s.raw(r#","delta":"#);
    match &ch.delta {
        None => s.raw("null"),
        Some(d) => delta(s, d),
    }
    // `Option<()>`: `()` is written `null` too.
    s.raw(r#","logprobs":null,"finish_reason":"#);
    opt_str(s, ch.finish_reason.as_ref());
    s.raw("}");
}

fn delta(s: &mut JsonBuf, d: &Delta<'_>) {
    s.raw("{");
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
        ("content", d.content.as_ref().map(Str::as_str)),
        ("refusal", d.refusal.as_ref().map(Str::as_str)),
        ("reasoning_content", d.reasoning_content.as_ref().map(Str::as_str)),
        ("reasoning", d.reasoning.as_ref().map(Str::as_str)),
    ];
    for (name, value) in texts {
        if let Some(v) = value {
            key(s, name);
            s.str(v);
        }
    }
    if let Some(entries) = &d.tool_calls {
        key(s, "tool_calls");
        s.raw("[");
        for (k, e) in entries.iter().enumerate() {
            if k > 0 {
                s.raw(",");
            }
            entry(s, e);
        }
        s.raw("]");
    }
    s.raw("}");
}

fn entry(s: &mut JsonBuf, e: &Entry<'_>) {
    s.raw("{");
    if let Some(i) = e.index {
        s.raw(r#""index":"#);
        s.u64(i.into());
        s.raw(",");
    }
    if let Some(id) = &e.id {
        s.raw(r#""id":"#);
        s.str(id.as_str());
        s.raw(",");
    }
    if let Some(kind) = e.kind {
        s.raw(r#""type":"#);
        s.str(kind);
        s.raw(",");
    }
    s.raw(r#""function":"#);
    match &e.function {
        None => s.raw("null"),
        Some(f) => {
            s.raw("{");
            if let Some(name) = &f.name {
                s.raw(r#""name":"#);
                s.str(name.as_str());
                s.raw(",");
            }
            s.raw(r#""arguments":"#);
            opt_str(s, f.arguments.as_ref());
            s.raw("}");
        }
    }
    s.raw("}");
}

#[cfg(test)]
mod tests {
    use super::super::{chunk, Choice, Chunk, Delta, Entry, Function, Usage};
    use crate::json::{Seen, Str};

    /// Chunks with every optional field present or absent are the bytes `to_json` writes.
    #[test]
    fn chunks_are_written_as_to_json_writes_them() {
        let values = [None, Some(""), Some("{\"a\": \"é\\n\u{1}\""), Some("plain")];
        let mut tried = 0;
        for (m, v) in values.iter().enumerate() {
            for bits in 0u32..256 {
                let on = |b: u32| (bits >> b & 1 == 1).then_some(*v).flatten().map(Str::of);
                let entry = |k: u32| Entry {
                    index: (bits & 1 == 0).then_some(k),
                    id: on(1),
                    kind: (bits & 4 == 0).then_some("function"),
                    function: (bits & 64 == 0)
                        .then(|| Function { name: on(3), arguments: v.map(Str::of).or(on(2)) }),
                };
                let entries = (bits & 128 == 0).then(|| (0..(bits + m as u32) % 3).map(entry).collect());
                let delta = Delta {
                    role: on(5).map(|_| "assistant"),
                    content: on(0),
                    refusal: on(2),
                    reasoning_content: on(4),
                    reasoning: on(3),
                    tool_calls: entries,
                };
                let choices = (bits % 11 != 3).then(|| {
                    vec![Choice {
                        index: (bits % 13 != 5).then_some(m as u32),
                        delta: (bits % 17 != 7).then_some(delta),
                        logprobs: None,
                        finish_reason: (bits % 5 == 0).then(|| Str::of("tool_calls")),
                    }]
                });
                let usage = match bits % 7 {
                    0 => Some(Seen::Sent(Usage {
                        prompt_tokens: 1,
                        completion_tokens: bits,
                        total_tokens: u32::MAX,
                    })),
                    1 => Some(Seen::Read),
                    _ => None,
                };
                let c = Chunk { choices, usage, ..chunk("chatcmpl-A\"b") };
                assert_eq!(super::chunk(&c), crate::json::to_json(&c), "{m} {bits}");
                tried += 1;
            }
        }
        assert_eq!(tried, 1024);
    }
}
