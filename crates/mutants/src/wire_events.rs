//! The wire-level mutants of the dialect events (docs/SPEC.md §8, "Dialect events"): each
//! reads one of them wrong under a correct core, and only the class that sends it catches
//! it. `levels.rs` routes the stack's events through [`before_decode`] and its finish
//! through [`finish`].

use serde_json::Value;
use toolcert_subject::{Accumulator, Emit, ErrorClass, Event, Outcome, SseEvent, StreamEnd, TurnError};

use crate::levels::Defect;
use crate::{Base, Correct};

/// What the dialect-event defects remember over a stream.
#[derive(Default)]
pub(crate) struct State {
    /// `CompletedDuplicates`: the call ids the terminal response's `output` repeated.
    repeated: Vec<String>,
    /// `DoneAsFinish`: a finish reason came.
    finished: bool,
    /// `DoneAloneMalformed`: some event came.
    seen: bool,
    /// `SecondStartIgnored`: the stream's start event came.
    started: bool,
}

/// What the stack does with `event` instead of decoding it, if anything: `Some(result)`
/// when the defect handled it.
pub(crate) fn before_decode(
    defect: Defect,
    state: &mut State,
    core: &mut Base<Correct>,
    event: &SseEvent,
    out: &mut Emit,
) -> Option<Result<(), TurnError>> {
    let name = event.event.as_deref();
    match defect {
        Defect::ItemDoneTrusted | Defect::ItemDoneOnlyLost if name == Some("response.output_item.done") => {
            let v: Value = serde_json::from_str(&event.data).ok()?;
            (v.pointer("/item/type")? == "function_call").then_some(())?;
            let index = u32::try_from(v.get("output_index")?.as_u64()?).ok()?;
            let args = v.pointer("/item/arguments")?.as_str()?;
            match (defect, core.buffer_mut(index)) {
                // The item's arguments are taken as the call's, unchecked.
                (Defect::ItemDoneTrusted, Some(call)) => {
                    call.args = args.to_owned();
                    Some(Ok(()))
                }
                // Only an announced call's `done` is read: a call announced there is lost.
                (Defect::ItemDoneOnlyLost, None) => Some(Ok(())),
                _ => None,
            }
        }
        Defect::UnknownDeltaFails if name == Some("content_block_delta") => {
            let v: Value = serde_json::from_str(&event.data).ok()?;
            let kind = v.pointer("/delta/type")?.as_str()?;
            let known = ["text_delta", "input_json_delta", "thinking_delta", "signature_delta"];
            (!known.contains(&kind)).then(|| {
                Err(TurnError::new(
                    ErrorClass::Malformed,
                    format!("content_block_delta: unknown delta type {kind}"),
                ))
            })
        }
        Defect::PreludeAsError if name.is_none() && event.data.contains("\"prompt_filter_results\"") => {
            let v: Value = serde_json::from_str(&event.data).ok()?;
            v.get("choices")?.as_array()?.is_empty().then(|| {
                Err(TurnError::new(ErrorClass::Malformed, "chat.completion.chunk: choices is empty"))
            })
        }
        Defect::CompletedDuplicates if matches!(name, Some("response.completed" | "response.incomplete")) => {
            let v: Value = serde_json::from_str(&event.data).ok()?;
            for item in v.pointer("/response/output")?.as_array()? {
                if item.get("type").is_some_and(|t| t == "function_call") {
                    if let Some(id) = item.get("call_id").and_then(Value::as_str) {
                        state.repeated.push(id.to_owned());
                    }
                }
            }
            None
        }
        Defect::DoneAsFinish if name.is_none() => {
            if event.data == "[DONE]" && !state.finished {
                // `[DONE]` taken for the finish reason the stream never sent.
                let stop = Event::Stop { reason: toolcert_scenario::StopReason::Stop };
                return Some(core.on_event(&stop, out));
            }
            state.finished |= event.data.contains("\"finish_reason\":\"");
            None
        }
        Defect::UsageWithoutChoicesRefused if name.is_none() && event.data != "[DONE]" => {
            let v: Value = serde_json::from_str(&event.data).ok()?;
            (v.get("choices").is_none() && v.get("error").is_none())
                .then(|| Err(TurnError::new(ErrorClass::Malformed, "chat.completion.chunk: has no choices")))
        }
        Defect::SecondStartIgnored if matches!(name, Some("message_start" | "response.created")) => {
            // The first is read; any other is taken for the same message again.
            std::mem::replace(&mut state.started, true).then_some(Ok(()))
        }
        Defect::DoneAloneMalformed => {
            let first = !std::mem::replace(&mut state.seen, true);
            (first && event.data == "[DONE]").then(|| {
                Err(TurnError::new(ErrorClass::Malformed, "the stream ended before its first chunk"))
            })
        }
        _ => None,
    }
}

/// The core's finish; `CompletedDuplicates` reports again every outcome of a call the
/// terminal response repeated.
pub(crate) fn finish(
    defect: Defect,
    state: &State,
    core: &mut Base<Correct>,
    end: StreamEnd,
    out: &mut Emit,
) -> Result<(), TurnError> {
    if defect != Defect::CompletedDuplicates {
        return core.finish(end, out);
    }
    let mut scratch = Emit::default();
    let result = core.finish(end, &mut scratch);
    let obs = scratch.into_observation();
    for o in obs.outcomes {
        let o = o.value;
        let id = match &o {
            Outcome::Dispatchable { call_id, .. } | Outcome::SchemaError { call_id, .. } => {
                Some(call_id.as_str())
            }
            Outcome::Failed { call_id, .. } => call_id.as_deref(),
        };
        if id.is_some_and(|id| state.repeated.iter().any(|r| r == id)) {
            out.outcome(o.clone());
        }
        out.outcome(o);
    }
    if let Some(slots) = obs.layout {
        out.layout(slots);
    }
    result
}
