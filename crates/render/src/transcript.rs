//! A readable transcript of a case: the neutral events as a person reads them in a failure
//! report, one per line, each with its payload under the names `docs/PROTOCOL.md` gives the
//! events level (`call_start {index, call_id, name}`, `args_delta {index, fragment}`,
//! `call_stop {index, arguments}`, `stop {reason}`), so a transcript reads the same whatever
//! dialect the case was sent in. The wire and bytes levels print each dialect's own SSE
//! beside it (`toolcert zoo`, reproducers).

use std::fmt::Write;

use serde_json::Value;
use toolcert_scenario::{Case, StreamSchedule};

use crate::{render, Event};

/// `{"k": v, ...}` with the keys in the order given (a JSON map would sort them).
fn obj(fields: &[(&str, Value)]) -> String {
    let parts: Vec<String> = fields.iter().map(|(k, v)| format!("\"{k}\":{v}")).collect();
    format!("{{{}}}", parts.join(","))
}

fn s(text: &str) -> Value {
    Value::String(text.to_string())
}

/// The case's streams as text, one event per line.
pub fn transcript(case: &Case) -> String {
    let mut out = String::new();
    let many = case.streams.len() > 1;
    if many {
        let how = match case.schedule {
            StreamSchedule::Sequential => "one after another",
            StreamSchedule::Concurrent(_) => "at once, events interleaved",
        };
        let _ = writeln!(out, "# {} streams, {how}, each with its own accumulator", case.streams.len());
    }
    for (k, turn) in case.streams.iter().enumerate() {
        let r = render(turn);
        if many {
            let _ = writeln!(out, "# stream {k}");
        }
        for (i, e) in r.events.iter().enumerate() {
            let (name, data) = match e {
                Event::TextDelta { text } => ("text_delta", obj(&[("text", s(text))])),
                Event::CallStart { index, call_id, name } => (
                    "call_start",
                    obj(&[("index", Value::from(*index)), ("call_id", s(call_id)), ("name", s(name))]),
                ),
                Event::ArgsDelta { index, fragment } => {
                    ("args_delta", obj(&[("index", Value::from(*index)), ("fragment", s(fragment))]))
                }
                Event::CallStop { index, arguments: None } => {
                    ("call_stop", obj(&[("index", Value::from(*index))]))
                }
                Event::CallStop { index, arguments: Some(a) } => {
                    let mut line = obj(&[("index", Value::from(*index)), ("arguments", s(a))]);
                    // The arguments a terminal repeats are worth reading beside the fragments
                    // they must equal: a mismatch is the fault.
                    let joined = joined_before(&r.events[..i], *index);
                    if joined != *a {
                        let _ = write!(line, "  # the fragments joined: {}", s(&joined));
                    }
                    ("call_stop", line)
                }
                Event::Stop { reason } => ("stop", obj(&[("reason", s(reason.wire_name()))])),
                Event::Error { message } => ("error", obj(&[("message", s(message))])),
                Event::Ping => ("ping", "{}".to_string()),
                Event::ForeignStart { index, kind, id, name, content } => {
                    let mut fields = vec![("index", Value::from(*index)), ("kind", s(kind.name()))];
                    for (k, v) in [("id", id), ("name", name), ("content", content)] {
                        if !v.is_empty() {
                            fields.push((k, s(v)));
                        }
                    }
                    ("foreign", obj(&fields))
                }
                Event::ForeignDelta { index, kind, fragment } => (
                    "foreign_dt",
                    obj(&[
                        ("index", Value::from(*index)),
                        ("kind", s(kind.name())),
                        ("fragment", s(fragment)),
                    ]),
                ),
                Event::ForeignStop { index } => ("foreign_end", obj(&[("index", Value::from(*index))])),
            };
            let _ = writeln!(out, "{name:<11} {data}");
        }
        let end = match r.end {
            toolcert_scenario::StreamEnd::Eof => "end of stream",
            toolcert_scenario::StreamEnd::Disconnect => "connection lost",
            toolcert_scenario::StreamEnd::Cancel => "cancelled by the client",
        };
        let _ = writeln!(out, "({end})");
    }
    out
}

/// The fragments for `index` among `events`, joined.
fn joined_before(events: &[Event<'_>], index: u32) -> String {
    events
        .iter()
        .filter_map(|e| match e {
            Event::ArgsDelta { index: i, fragment } if *i == index => Some(fragment.as_ref()),
            _ => None,
        })
        .collect()
}
