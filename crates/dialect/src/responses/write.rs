//! Responses' envelopes written by hand, byte for byte as [`crate::json::to_json`] writes
//! the flattened [`Envelope`](super::Envelope) (its `type` and `sequence_number`, then the
//! body's fields in declaration order): serde's walk over a flattened body is a map's, and
//! the `done` events and the terminal response repeat every argument string. Items and
//! fields held as JSON values are serde's own. The tests render generated streams both ways.

use serde::Serialize;

use super::{
    ArgsDone, Item, ItemEvent, ItemFields, MessageItem, PartEvent, ResponseEvent, TextDoneBody, TextPart,
};
use crate::json::{to_json, Obj, Out, Payload, Val};

/// Appends the event `name` with sequence number `seq` (then counted), its body written by
/// `write` into the envelope; `size` is about the bytes of its strings.
pub(super) fn event<T: Serialize>(
    out: &mut Out,
    seq: &mut u64,
    name: &str,
    body: T,
    size: usize,
    write: fn(&mut Obj<'_>, &T),
    delivered: usize,
) {
    #[cfg(test)]
    if crate::json::serde_oracle::on() {
        let data = to_json(&super::Envelope { kind: name, sequence_number: *seq, body });
        *seq += 1;
        return out.push(Some(name), data, delivered);
    }
    let n = *seq;
    *seq += 1;
    let event = |b: &mut Payload| {
        b.reserve(size + 128);
        let mut o = Obj::open(b);
        o.key("type").str(name);
        o.key("sequence_number").u64(n);
        write(&mut o, &body);
        o.close();
    };
    out.with(Some(name), 0, event, delivered);
}

pub(super) fn args_done(o: &mut Obj<'_>, d: &ArgsDone<'_>) {
    o.key("item_id").str(d.item_id);
    o.key("output_index").u64(d.output_index.into());
    o.key("name").str(d.name);
    o.key("arguments").str(d.arguments.as_str());
}

pub(super) fn item_event(o: &mut Obj<'_>, e: &ItemEvent<'_, &Item>) {
    o.key("output_index").u64(e.output_index.into());
    item(o.key("item"), e.item);
}

pub(super) fn part_event(o: &mut Obj<'_>, p: &PartEvent<'_>) {
    o.key("item_id").str(p.item_id);
    o.key("output_index").u64(p.output_index.into());
    o.key("content_index").u64(p.content_index.into());
    text_part(o.key("part"), &p.part);
}

pub(super) fn text_done(o: &mut Obj<'_>, t: &TextDoneBody<'_>) {
    o.key("item_id").str(t.item_id);
    o.key("output_index").u64(t.output_index.into());
    o.key("content_index").u64(t.content_index.into());
    o.key("text").str(t.text);
    o.key("logprobs").raw("[]");
}

pub(super) fn response_event(o: &mut Obj<'_>, e: &ResponseEvent<'_>) {
    let r = &e.response;
    let mut w = o.key("response").obj();
    w.key("id").str(r.id);
    w.key("object").str(r.object);
    w.key("created_at").u64(r.created_at);
    w.key("status").str(r.status);
    match &r.error {
        Some(err) => {
            let mut x = w.key("error").obj();
            x.key("code").str(err.code);
            x.key("message").str(err.message.as_str());
            x.close();
        }
        None => {
            w.key("error").raw("null");
        }
    }
    match &r.incomplete_details {
        Some(d) => {
            let mut x = w.key("incomplete_details").obj();
            x.key("reason").str(d.reason);
            x.close();
        }
        None => {
            w.key("incomplete_details").raw("null");
        }
    }
    w.key("model").str(r.model);
    let mut v = w.key("output").raw("[");
    for (k, i) in r.output.iter().enumerate() {
        if k > 0 {
            v.buf().raw(",");
        }
        item(v.reborrow(), i);
    }
    v.raw("]");
    w.key("parallel_tool_calls").raw(if r.parallel_tool_calls { "true" } else { "false" });
    w.key("tool_choice").str(r.tool_choice);
    w.key("tools").raw("[]");
    match &r.usage {
        Some(u) => {
            let mut x = w.key("usage").obj();
            x.key("input_tokens").u64(u.input_tokens.into());
            x.key("output_tokens").u64(u.output_tokens.into());
            x.key("total_tokens").u64(u.total_tokens.into());
            x.close();
        }
        None => {
            w.key("usage").raw("null");
        }
    }
    w.close();
}

/// An item, as the untagged enum is written.
fn item(v: Val<'_>, i: &Item) {
    match i {
        Item::Call(f) => call(v.obj(), f),
        Item::Message(m) => message(v.obj(), m),
        Item::Foreign(value) => {
            v.raw(&to_json(value));
        }
    }
}

fn call(mut o: Obj<'_>, f: &ItemFields<'_>) {
    o.key("type").str(f.kind.as_str());
    if let Some(id) = &f.id {
        o.key("id").raw(&to_json(id));
    }
    for (k, v) in [("call_id", &f.call_id), ("name", &f.name), ("arguments", &f.arguments)] {
        if let Some(v) = v {
            o.key(k).str(v.as_str());
        }
    }
    if let Some(s) = f.status {
        o.key("status").str(s);
    }
    for (k, v) in [("input", &f.input), ("encrypted_content", &f.encrypted_content), ("action", &f.action)] {
        if let Some(v) = v {
            o.key(k).raw(&to_json(v));
        }
    }
    o.close();
}

fn message(mut o: Obj<'_>, m: &MessageItem) {
    o.key("type").str(m.kind);
    o.key("id").str(&m.id);
    o.key("status").str(m.status);
    o.key("role").str(m.role);
    let mut v = o.key("content").raw("[");
    for (k, p) in m.content.iter().enumerate() {
        if k > 0 {
            v.buf().raw(",");
        }
        text_part(v.reborrow(), p);
    }
    v.raw("]");
    o.close();
}

fn text_part(v: Val<'_>, p: &TextPart<'_>) {
    let mut o = v.obj();
    o.key("type").str(p.kind.as_str());
    o.key("annotations").raw("[]");
    o.key("text").str(&p.text);
    o.close();
}
