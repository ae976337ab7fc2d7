//! A readable transcript of a case: the events as a person reads them in a failure report,
//! laid out like the seeds' traces (event name, then its payload as JSON).

use std::fmt::Write;

use toolcert_scenario::{Case, StreamSchedule};

use crate::{render, Event};

/// The case's streams as SSE-like text, one event per line.
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
    for (s, turn) in case.streams.iter().enumerate() {
        let r = render(turn);
        if many {
            let _ = writeln!(out, "# stream {s}");
        }
        for e in &r.events {
            let (name, data) = match e {
                Event::TextDelta { text } => ("text_delta", serde_json::json!({ "text": text })),
                Event::CallStart { index, call_id, name } => {
                    ("call_start", serde_json::json!({ "index": index, "id": call_id, "name": name }))
                }
                Event::ArgsDelta { index, fragment } => {
                    ("args_delta", serde_json::json!({ "index": index, "partial_json": fragment }))
                }
                Event::CallStop { index, arguments: None } => {
                    ("call_stop", serde_json::json!({ "index": index }))
                }
                Event::CallStop { index, arguments: Some(a) } => {
                    ("call_stop", serde_json::json!({ "index": index, "arguments": a }))
                }
                Event::Stop { reason } => ("stop", serde_json::json!({ "stop_reason": reason.wire_name() })),
                Event::Error { message } => ("error", serde_json::json!({ "message": message })),
                Event::Ping => ("ping", serde_json::json!({})),
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
