//! Chat's chunks written by hand, byte for byte as [`crate::json::to_json`] writes them: the
//! fields every chunk of a stream repeats (`id`, `object`, `created`, `model`,
//! `system_fingerprint`) are written once a stream ([`head`]), each chunk then only its
//! choices. The tests render generated streams both ways.

use super::{Choice, Chunk, Delta, Entry};
use crate::json::{Payload, Seen, Str};

/// `{"id":…,"system_fingerprint":…,"choices":`, which every chunk of the stream of `c`
/// starts with.
pub(super) fn head(c: &Chunk<'_>) -> String {
    let mut p = Payload::with_capacity(160);
    p.raw(r#"{"id":"#);
    p.str(c.id);
    p.raw(r#","object":"#);
    p.str(c.object);
    p.raw(r#","created":"#);
    p.u64(c.created);
    p.raw(r#","model":"#);
    p.str(c.model);
    p.raw(r#","system_fingerprint":"#);
    p.str(c.system_fingerprint);
    p.raw(r#","choices":"#);
    p.finish()
}

/// `c`, whose [`head`] is `head` (the tests'; the renderer writes in place).
#[cfg(test)]
pub(super) fn chunk(c: &Chunk<'_>, head: &str) -> String {
    let args: usize = c
        .choices
        .iter()
        .flatten()
        .filter_map(|ch| ch.delta.as_ref()?.tool_calls.as_ref())
        .flatten()
        .filter_map(|e| Some(e.function.as_ref()?.arguments.as_ref()?.as_str().len() + 64))
        .sum();
    let mut p = Payload::with_capacity(head.len() + args + 160);
    chunk_into(c, head, &mut p);
    p.finish()
}

/// [`chunk`], appended to `p` (in place, at the bytes level); serde's bytes when
/// [`crate::json::serde_oracle`] says so.
pub(super) fn chunk_into(c: &Chunk<'_>, head: &str, p: &mut Payload) {
    #[cfg(test)]
    if crate::json::serde_oracle::on() {
        return p.raw(&crate::json::to_json(c));
    }
    debug_assert_eq!(head, self::head(c));
    p.reserve(head.len() + 160);
    p.raw(head);
    match &c.choices {
        None => p.raw("null"),
        Some(choices) => {
            p.raw("[");
            for (k, ch) in choices.iter().enumerate() {
                if k > 0 {
                    p.raw(",");
                }
                choice(p, ch);
            }
            p.raw("]");
        }
    }
    match &c.usage {
        None => {}
        Some(Seen::Read) => p.raw(r#","usage":null"#),
        Some(Seen::Sent(u)) => {
            p.raw(r#","usage":{"prompt_tokens":"#);
            p.u64(u.prompt_tokens.into());
            p.raw(r#","completion_tokens":"#);
            p.u64(u.completion_tokens.into());
            p.raw(r#","total_tokens":"#);
            p.u64(u.total_tokens.into());
            p.raw("}");
        }
    }
    p.raw("}");
}

fn opt_str(p: &mut Payload, v: Option<&Str<'_>>) {
    match v {
        Some(v) => p.str(v.as_str()),
        None => p.raw("null"),
    }
}

fn choice(p: &mut Payload, ch: &Choice<'_>) {
    p.raw(r#"{"index":"#);
    match ch.index {
        Some(n) => p.u64(n.into()),
        None => p.raw("null"),
    }
    p.raw(r#","delta":"#);
    match &ch.delta {
        None => p.raw("null"),
        Some(d) => delta(p, d),
    }
    // `Option<()>`: `()` is written `null` too.
    p.raw(r#","logprobs":null,"finish_reason":"#);
    opt_str(p, ch.finish_reason.as_ref());
    p.raw("}");
}

fn delta(p: &mut Payload, d: &Delta<'_>) {
    // Each present field, comma-separated, in declaration order (`skip_serializing_if`).
    let mut sep = "{";
    let texts = [
        (r#""role":"#, d.role),
        (r#""content":"#, d.content.as_ref().map(Str::as_str)),
        (r#""refusal":"#, d.refusal.as_ref().map(Str::as_str)),
        (r#""reasoning_content":"#, d.reasoning_content.as_ref().map(Str::as_str)),
        (r#""reasoning":"#, d.reasoning.as_ref().map(Str::as_str)),
    ];
    for (key, value) in texts {
        if let Some(v) = value {
            p.raw(sep);
            sep = ",";
            p.raw(key);
            p.str(v);
        }
    }
    if let Some(entries) = &d.tool_calls {
        p.raw(sep);
        sep = ",";
        p.raw(r#""tool_calls":["#);
        for (k, e) in entries.iter().enumerate() {
            if k > 0 {
                p.raw(",");
            }
            entry(p, e);
        }
        p.raw("]");
    }
    if sep == "{" {
        p.raw("{");
    }
    p.raw("}");
}

fn entry(p: &mut Payload, e: &Entry<'_>) {
    p.raw("{");
    if let Some(i) = e.index {
        p.raw(r#""index":"#);
        p.u64(i.into());
        p.raw(",");
    }
    if let Some(id) = &e.id {
        p.raw(r#""id":"#);
        p.str(id.as_str());
        p.raw(",");
    }
    if let Some(kind) = e.kind {
        p.raw(r#""type":"#);
        p.str(kind);
        p.raw(",");
    }
    p.raw(r#""function":"#);
    match &e.function {
        None => p.raw("null"),
        Some(f) => {
            p.raw("{");
            if let Some(name) = &f.name {
                p.raw(r#""name":"#);
                p.str(name.as_str());
                p.raw(",");
            }
            p.raw(r#""arguments":"#);
            opt_str(p, f.arguments.as_ref());
            p.raw("}");
        }
    }
    p.raw("}");
}

#[cfg(test)]
mod tests {
    use super::super::{chunk, Choice, Chunk, Delta, Entry, Function, Usage};
    use super::head;
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
                        content_filter_results: None,
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
                assert_eq!(super::chunk(&c, &head(&c)), crate::json::to_json(&c), "{m} {bits}");
                tried += 1;
            }
        }
        assert_eq!(tried, 1024);
    }
}
