//! Bedrock's payloads written by hand, byte for byte as [`crate::json::to_json`] writes the
//! wire types (camelCase keys in declaration order, absent options skipped): serde's walk
//! cost more than the rest of a message's rendering. The tests render generated streams
//! both ways.

use std::borrow::Cow;

use super::{BlockDelta, BlockStart, BlockStop, ExceptionBody, MessageStart, MessageStop, Metadata};
use crate::json::{Obj, Payload};

/// The padding member every payload ends with, when it has one.
fn pad(o: &mut Obj<'_>, p: &Option<Cow<'_, str>>) {
    if let Some(p) = p {
        o.key("p").str(p);
    }
}

fn opt(o: &mut Obj<'_>, k: &str, v: &Option<Cow<'_, str>>) {
    if let Some(v) = v {
        o.key(k).str(v);
    }
}

fn len(v: &Option<Cow<'_, str>>) -> usize {
    v.as_ref().map_or(0, |s| s.len())
}

pub(super) fn message_start(m: &MessageStart<'_>) -> String {
    let mut b = Payload::with_capacity(48 + len(&m.role) + len(&m.p));
    let mut o = Obj::open(&mut b);
    opt(&mut o, "role", &m.role);
    pad(&mut o, &m.p);
    o.close();
    b.finish()
}

pub(super) fn block_start(s: &BlockStart<'_>) -> String {
    let mut b = Payload::with_capacity(96 + len(&s.p));
    let mut o = Obj::open(&mut b);
    o.key("contentBlockIndex").u64(s.content_block_index.into());
    let mut start = o.key("start").obj();
    if let Some(t) = &s.start.tool_use {
        let mut u = start.key("toolUse").obj();
        u.key("toolUseId").str(&t.tool_use_id);
        u.key("name").str(&t.name);
        u.close();
    }
    start.close();
    pad(&mut o, &s.p);
    o.close();
    b.finish()
}

pub(super) fn block_delta(d: &BlockDelta<'_>) -> String {
    let x = &d.delta;
    let r = x.reasoning_content.as_ref();
    let size = len(&x.text)
        + x.tool_use.as_ref().map_or(0, |t| t.input.len())
        + r.map_or(0, |r| len(&r.text) + len(&r.signature) + len(&r.redacted_content));
    let mut b = Payload::with_capacity(size + len(&d.p) + 96);
    let mut o = Obj::open(&mut b);
    o.key("contentBlockIndex").u64(d.content_block_index.into());
    let mut delta = o.key("delta").obj();
    opt(&mut delta, "text", &x.text);
    if let Some(t) = &x.tool_use {
        let mut u = delta.key("toolUse").obj();
        u.key("input").str(&t.input);
        u.close();
    }
    if let Some(r) = r {
        let mut c = delta.key("reasoningContent").obj();
        opt(&mut c, "text", &r.text);
        opt(&mut c, "signature", &r.signature);
        opt(&mut c, "redactedContent", &r.redacted_content);
        c.close();
    }
    delta.close();
    pad(&mut o, &d.p);
    o.close();
    b.finish()
}

pub(super) fn block_stop(s: &BlockStop<'_>) -> String {
    let mut b = Payload::with_capacity(64 + len(&s.p));
    let mut o = Obj::open(&mut b);
    o.key("contentBlockIndex").u64(s.content_block_index.into());
    pad(&mut o, &s.p);
    o.close();
    b.finish()
}

pub(super) fn message_stop(m: &MessageStop<'_>) -> String {
    let mut b = Payload::with_capacity(64 + m.stop_reason.len() + len(&m.p));
    let mut o = Obj::open(&mut b);
    o.key("stopReason").str(&m.stop_reason);
    pad(&mut o, &m.p);
    o.close();
    b.finish()
}

pub(super) fn metadata(m: &Metadata<'_>) -> String {
    let mut b = Payload::with_capacity(128 + len(&m.p));
    let mut o = Obj::open(&mut b);
    let mut u = o.key("usage").obj();
    u.key("inputTokens").u64(m.usage.input_tokens.into());
    u.key("outputTokens").u64(m.usage.output_tokens.into());
    u.key("totalTokens").u64(m.usage.total_tokens.into());
    u.close();
    let mut t = o.key("metrics").obj();
    t.key("latencyMs").u64(m.metrics.latency_ms.into());
    t.close();
    pad(&mut o, &m.p);
    o.close();
    b.finish()
}

pub(super) fn exception(e: &ExceptionBody<'_>) -> String {
    let mut b = Payload::with_capacity(64 + len(&e.message));
    let mut o = Obj::open(&mut b);
    opt(&mut o, "message", &e.message);
    if let Some(c) = e.original_status_code {
        o.key("originalStatusCode").u64(c.into());
    }
    o.close();
    b.finish()
}
