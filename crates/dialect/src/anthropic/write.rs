//! Anthropic's event payloads written by hand, byte for byte as [`crate::json::to_json`]
//! writes the wire types (keys in declaration order, absent options skipped, `null` for a
//! `None` that is not skipped): serde's walk over a payload's optional fields would be most
//! of a stream's rendering. The tests render generated streams both ways.

use super::{
    Bare, BlockDelta, BlockStart, BlockStop, Content, ErrorEvent, Input, MessageDelta, MessageStart,
    ResultContent,
};
use crate::json::{to_json, Obj, Payload, Str};

/// An optional `type` first, as every event has it (skipped when `None`).
fn typed<'b>(b: &'b mut Payload, kind: &Option<Str<'_>>) -> Obj<'b> {
    let mut o = Obj::open(b);
    if let Some(k) = kind {
        o.key("type").str(k.as_str());
    }
    o
}

pub(super) fn message_start(m: &MessageStart<'_>, b: &mut Payload) {
    // A message that starts with blocks (programmatic tool calling) is rare: serde's.
    if !matches!(&m.message.content, Content::Sent(c) if c.is_empty()) {
        return b.raw(&to_json(m));
    }
    b.reserve(320);
    let mut o = typed(b, &m.kind);
    let msg = &m.message;
    let mut i = o.key("message").obj();
    i.key("id").str(msg.id);
    i.key("type").str(msg.kind);
    i.key("role").str(msg.role);
    i.key("model").str(msg.model);
    i.key("content").raw("[]");
    i.key("stop_reason").opt_str(msg.stop_reason);
    i.key("stop_sequence").opt_str(msg.stop_sequence);
    let u = &msg.usage;
    let mut w = i.key("usage").obj();
    w.key("input_tokens").u64(u.input_tokens.into());
    w.key("cache_creation_input_tokens").u64(u.cache_creation_input_tokens.into());
    w.key("cache_read_input_tokens").u64(u.cache_read_input_tokens.into());
    w.key("output_tokens").u64(u.output_tokens.into());
    w.close();
    i.close();
    o.close();
}

pub(super) fn block_start(s: &BlockStart<'_>, b: &mut Payload) {
    let c = &s.content_block;
    // Only a rendered search result is written here; read content is serde's.
    if matches!(c.content, Some(ResultContent::Read(_))) {
        return b.raw(&to_json(s));
    }
    b.reserve(
        160 + [&c.id, &c.name, &c.text, &c.data, &c.tool_use_id]
            .iter()
            .map(|f| f.as_ref().map_or(0, |s| s.as_str().len()))
            .sum::<usize>(),
    );
    let mut o = typed(b, &s.kind);
    o.key("index").u64(s.index.into());
    let mut i = o.key("content_block").obj();
    i.key("type").str(c.kind.as_str());
    let field = |i: &mut Obj<'_>, k: &str, v: &Option<Str<'_>>| {
        if let Some(v) = v {
            i.key(k).str(v.as_str());
        }
    };
    field(&mut i, "id", &c.id);
    field(&mut i, "name", &c.name);
    match c.input {
        Some(Input::Empty) => {
            i.key("input").raw("{}");
        }
        // The arguments as the model wrote them (checked to be a JSON object with no line
        // break, `whole::sendable_as_value`).
        Some(Input::Whole(raw)) => {
            i.key("input").raw(raw.get());
        }
        None => {}
    }
    field(&mut i, "text", &c.text);
    if let Some(t) = c.thinking {
        i.key("thinking").str(t);
    }
    if let Some(t) = c.signature {
        i.key("signature").str(t);
    }
    field(&mut i, "data", &c.data);
    field(&mut i, "tool_use_id", &c.tool_use_id);
    if let Some(ResultContent::Search([r])) = &c.content {
        let mut a = i.key("content").raw("[");
        let mut e = Obj::open(a.buf());
        e.key("type").str(r.kind);
        e.key("title").str(r.title);
        e.key("url").str(r.url);
        e.key("encrypted_content").str(r.encrypted_content);
        e.key("page_age").opt_str(r.page_age);
        e.close();
        a.raw("]");
    }
    i.close();
    o.close();
}

/// The hot deltas (`text_delta`, `input_json_delta`, with their `type`) with their fixed
/// parts as literals; any other delta as [`super::deltas::block_delta`] writes it.
pub(super) fn block_delta(d: &BlockDelta<'_>, b: &mut Payload) {
    let x = &d.delta;
    let (head, value) = match (&d.kind, x.kind.as_str(), &x.text, &x.partial_json, &x.thinking, x.signature) {
        (Some(k), "text_delta", Some(v), None, None, None) if k.as_str() == "content_block_delta" => {
            (r#"","text":"#, v)
        }
        (Some(k), "input_json_delta", None, Some(v), None, None) if k.as_str() == "content_block_delta" => {
            (r#"","partial_json":"#, v)
        }
        _ => return b.raw(&super::deltas::block_delta(d)),
    };
    b.reserve(value.as_str().len() + 96);
    b.raw(r#"{"type":"content_block_delta","index":"#);
    b.u64(d.index.into());
    b.raw(r#","delta":{"type":""#);
    b.raw(x.kind.as_str());
    b.raw(head);
    b.str(value.as_str());
    b.raw("}}");
}

pub(super) fn block_stop(s: &BlockStop<'_>, b: &mut Payload) {
    b.reserve(48);
    let mut o = typed(b, &s.kind);
    o.key("index").u64(s.index.into());
    o.close();
}

pub(super) fn message_delta(m: &MessageDelta<'_>, b: &mut Payload) {
    b.reserve(128);
    let mut o = typed(b, &m.kind);
    let mut d = o.key("delta").obj();
    d.key("stop_reason").opt_str(m.delta.stop_reason.as_ref().map(Str::as_str));
    d.key("stop_sequence").opt_str(m.delta.stop_sequence);
    d.close();
    let mut u = o.key("usage").obj();
    u.key("output_tokens").u64(m.usage.output_tokens.into());
    u.close();
    o.close();
}

pub(super) fn bare(e: &Bare<'_>, b: &mut Payload) {
    b.reserve(32);
    typed(b, &e.kind).close();
}

pub(super) fn error(e: &ErrorEvent<'_>, b: &mut Payload) {
    b.reserve(80 + e.error.message.as_str().len());
    let mut o = typed(b, &e.kind);
    let mut i = o.key("error").obj();
    i.key("type").str(e.error.kind);
    i.key("message").str(e.error.message.as_str());
    i.close();
    o.close();
}
