//! The hostile upstream (docs/SPEC.md, "The hostile upstream"): what a rendered wire stream
//! carries when the server that sends it is not honest. It sits after a dialect's renderer
//! ([`crate::render_wire`]) and before the bytes: it edits the rendered events' JSON text,
//! so every other byte stays as the dialect wrote it.
//!
//! - [`members`] (`Quirks::hostile`): `__proto__` and `constructor` members beside the
//!   fields of every event and every delta, their values shaped like a call of the dialect.
//!   A client reads an unknown member as if it had not come; one that merges what it reads
//!   into its own objects (`Object.assign`, a deep merge) swaps a prototype, pollutes
//!   `Object.prototype`, or finds a call the model never made.
//! - [`index`] (`WireEvents::hostile_index`): a copy of an argument fragment's event whose
//!   index is a value no index can be (`"__proto__"`, `-1`, `0.5`): a `malformed` turn, and a
//!   client that indexes a plain object or array with it writes into a prototype.

use toolcert_scenario::{Dialect, HostileIndex};
use toolcert_subject::WireMessage;

use crate::WireStream;

/// The call-shaped value each dialect's `__proto__` member holds: what a client that swaps
/// an object's prototype for it would read as a call.
fn lookalike(dialect: Dialect) -> &'static str {
    match dialect {
        Dialect::OpenAiChat => {
            r#"{"tool_calls":[{"index":0,"id":"call_forged","type":"function","function":{"name":"forged_call","arguments":"{\"forged\":true}"}}]}"#
        }
        Dialect::Anthropic => {
            r#"{"type":"tool_use","id":"toolu_forged","name":"forged_call","input":{"forged":true},"partial_json":"{\"forged\":true}"}"#
        }
        Dialect::OpenAiResponses => {
            r#"{"type":"response.output_item.done","output_index":0,"item":{"type":"function_call","id":"fc_forged","call_id":"call_forged","name":"forged_call","arguments":"{\"forged\":true}","status":"completed"}}"#
        }
        Dialect::Gemini => r#"{"functionCall":{"id":"forged","name":"forged_call","args":{"forged":true}}}"#,
        Dialect::Bedrock => {
            r#"{"toolUse":{"toolUseId":"tooluse_forged","name":"forged_call","input":"{\"forged\":true}"}}"#
        }
    }
}

/// A deep merge of `constructor` into an object reaches `Object.prototype` through it.
const CONSTRUCTOR: &str = r#"{"prototype":{"forged":true}}"#;

/// The objects whose fields a client merges, by the key that opens them: the event itself,
/// and in Chat and Anthropic the delta (and Anthropic's starting block).
fn keys(dialect: Dialect) -> &'static [&'static str] {
    match dialect {
        Dialect::OpenAiChat => &[r#""delta":{"#],
        Dialect::Anthropic => &[r#""delta":{"#, r#""content_block":{"#],
        Dialect::Bedrock => &[r#""delta":{"#, r#""start":{"#],
        Dialect::OpenAiResponses | Dialect::Gemini => &[],
    }
}

/// Adds the hostile members to every SSE event of `wire` whose data is a JSON object (a
/// `[DONE]` sentinel is left alone), and to every binary frame's JSON payload (Bedrock: the
/// bytes level computes each message's lengths and checksums from the edited payload).
pub(crate) fn members(wire: &mut WireStream, dialect: Dialect) {
    let members = format!(r#""__proto__":{},"constructor":{CONSTRUCTOR}"#, lookalike(dialect));
    let edit = |data: &str| -> Option<String> {
        if !data.starts_with('{') {
            return None;
        }
        let mut out = String::with_capacity(data.len() + (1 + keys(dialect).len()) * (members.len() + 1));
        let mut opens = vec![0usize];
        for key in keys(dialect) {
            // A key's quote is never escaped here: inside a JSON string every `"` is `\"`,
            // so `"delta":{` matches only a member.
            opens.extend(data.match_indices(key).map(|(at, k)| at + k.len() - 1));
        }
        opens.sort_unstable();
        let mut from = 0;
        for open in opens {
            out.push_str(&data[from..=open]);
            out.push_str(&members);
            if !data[open + 1..].starts_with('}') {
                out.push(',');
            }
            from = open + 1;
        }
        out.push_str(&data[from..]);
        Some(out)
    };
    let edit_message = |m: &mut WireMessage| match m {
        WireMessage::Sse(e) => {
            if let Some(edited) = edit(&e.data) {
                e.data = edited;
            }
        }
        WireMessage::Frame(f) => {
            if let Some(edited) = std::str::from_utf8(&f.payload).ok().and_then(&edit) {
                f.payload = edited.into_bytes();
            }
        }
    };
    for event in &mut wire.events {
        edit_message(event);
    }
    if let Some(m) = &mut wire.next {
        edit_message(m);
    }
}

/// The field that names a call's position in an argument fragment's event, and how to tell
/// such an event.
fn index_field(dialect: Dialect) -> Option<(&'static str, &'static str)> {
    match dialect {
        // The entry's index, not the choice's: the entry opens `tool_calls`.
        Dialect::OpenAiChat => Some((r#""tool_calls":[{"index":"#, r#""arguments":""#)),
        Dialect::Anthropic => Some((r#""index":"#, r#""input_json_delta""#)),
        Dialect::OpenAiResponses => {
            Some((r#""output_index":"#, r#""response.function_call_arguments.delta""#))
        }
        Dialect::Gemini | Dialect::Bedrock => None,
    }
}

/// Inserts the hostile index's event after the last event that completes at most `after`
/// neutral events: a copy of the stream's first argument fragment's event with its index
/// replaced. `Err` when the dialect has no index or the stream no fragment to copy.
pub(crate) fn index(wire: &mut WireStream, dialect: Dialect, hostile: &HostileIndex) -> Result<(), String> {
    let (field, fragment) = index_field(dialect).ok_or_else(|| {
        format!("{dialect} has no index on a call's fragments (its calls come one at a time)")
    })?;
    // The copy of a fragment, its index replaced; `named`: the entry names its call by id too
    // (a Chat announcement), which a client may key on instead of the index.
    let hostile_copy = |e: &toolcert_sse::SseEvent| {
        let at = e.data.find(field)? + field.len();
        e.data.contains(fragment).then_some(())?;
        let len = e.data[at..].find([',', '}']).unwrap_or(e.data.len() - at);
        let named = e.data[at + len..].starts_with(r#","id":"#);
        let mut copy = e.clone();
        copy.data = format!("{}{}{}", &e.data[..at], hostile.value, &e.data[at + len..]);
        Some((copy, named))
    };
    let copies: Vec<_> =
        wire.events.iter().filter_map(WireMessage::as_sse).filter_map(hostile_copy).collect();
    // A continuation is what only the index keys; an announcement when there is none.
    let copy =
        copies.iter().find(|(_, named)| !named).or(copies.first()).map(|(c, _)| c.clone()).ok_or_else(
            || "the stream has no argument fragment whose index a hostile value could replace".to_string(),
        )?;
    let k = wire.upto.iter().rposition(|&n| n <= hostile.after);
    let (at, upto) = match k {
        Some(k) => (k + 1, wire.upto[k]),
        None => (0, 0),
    };
    wire.events.insert(at, WireMessage::Sse(copy));
    wire.upto.insert(at, upto);
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use toolcert_sse::SseEvent;

    fn sse(data: &str) -> WireMessage {
        WireMessage::Sse(SseEvent { event: None, data: data.into(), id: None })
    }

    fn data(w: &WireStream, k: usize) -> &str {
        &w.events[k].as_sse().unwrap().data
    }

    #[test]
    fn members_sit_beside_the_fields_of_the_event_and_its_delta_and_leave_the_rest() {
        let mut w = WireStream {
            events: vec![
                sse(r#"{"choices":[{"index":0,"delta":{"content":"\"delta\":{ hi"}}]}"#),
                sse(r#"{"choices":[{"index":0,"delta":{},"finish_reason":"stop"}]}"#),
                sse("[DONE]"),
            ],
            upto: vec![1, 2, 2],
            next: None,
        };
        members(&mut w, Dialect::OpenAiChat);
        for k in 0..2 {
            let v: serde_json::Value = serde_json::from_str(data(&w, k)).expect("still JSON");
            assert!(v.get("__proto__").is_some() && v.get("constructor").is_some(), "{}", data(&w, k));
            let delta = &v["choices"][0]["delta"];
            assert_eq!(delta["__proto__"]["tool_calls"][0]["id"], "call_forged");
        }
        // The text that looks like a key inside a string is not a member.
        let v: serde_json::Value = serde_json::from_str(data(&w, 0)).unwrap();
        assert_eq!(v["choices"][0]["delta"]["content"], "\"delta\":{ hi");
        assert_eq!(data(&w, 2), "[DONE]");
    }

    #[test]
    fn a_binary_frames_payload_carries_the_members_too() {
        let frame = |payload: &str| {
            WireMessage::Frame(toolcert_subject::Frame {
                headers: vec![(":event-type".into(), "contentBlockDelta".into())],
                payload: payload.as_bytes().to_vec(),
            })
        };
        let mut w = WireStream {
            events: vec![frame(
                r#"{"contentBlockIndex":0,"delta":{"toolUse":{"input":"{\"a\""}},"p":"abc"}"#,
            )],
            upto: vec![1],
            next: None,
        };
        members(&mut w, Dialect::Bedrock);
        let f = w.events[0].as_frame().unwrap();
        let v: serde_json::Value = serde_json::from_slice(&f.payload).expect("still JSON");
        assert_eq!(v["__proto__"]["toolUse"]["toolUseId"], "tooluse_forged");
        assert_eq!(v["delta"]["constructor"]["prototype"]["forged"], true);
        assert_eq!(v["delta"]["toolUse"]["input"], "{\"a\"");
        assert_eq!(f.headers[0].1, "contentBlockDelta");
    }

    #[test]
    fn a_hostile_index_is_a_copy_of_a_fragment_with_its_index_replaced() {
        let frag = r#"{"choices":[{"index":0,"delta":{"tool_calls":[{"index":0,"function":{"arguments":"{\"a\""}}]}}]}"#;
        let mut w = WireStream {
            events: vec![
                sse(
                    r#"{"choices":[{"index":0,"delta":{"tool_calls":[{"index":0,"id":"c","type":"function","function":{"name":"f","arguments":""}}]}}]}"#,
                ),
                sse(frag),
                sse(r#"{"choices":[{"index":0,"delta":{},"finish_reason":"tool_calls"}]}"#),
            ],
            upto: vec![1, 2, 4],
            next: None,
        };
        index(&mut w, Dialect::OpenAiChat, &HostileIndex { after: 2, value: r#""__proto__""#.into() })
            .unwrap();
        assert_eq!(w.events.len(), 4);
        assert_eq!(w.upto, [1, 2, 2, 4]);
        let v: serde_json::Value = serde_json::from_str(data(&w, 2)).unwrap();
        assert_eq!(v["choices"][0]["index"], 0, "the choice's index is left");
        assert_eq!(v["choices"][0]["delta"]["tool_calls"][0]["index"], "__proto__");
        assert!(index(&mut w, Dialect::Gemini, &HostileIndex { after: 0, value: "-1".into() }).is_err());
    }
}
