//! The corpus expectation format: what a correct accumulator reports for one recorded
//! stream, as a file any language's test suite can read (`corpus/README.md` specifies it
//! field by field).
//!
//! An [`ExpectationFile`] is written from the oracle's [`Expected`] for a scenario, and read
//! back into one to judge an observation of the recorded bytes ([`ExpectationFile::judge`]).
//! Timing is not part of the file: a replayed stream is judged on what the subject reported
//! by the end, not on when.

use std::borrow::Cow;

use serde::{Deserialize, Serialize};
use serde_json::Value;
use toolcert_scenario::EndingKind;
use toolcert_subject::{ErrorClass, FailReason, Observation, Outcome};

use crate::{Expect, Expected, ExpectedCall, FaultExpect, Judged, Violation};

/// The format version; a reader refuses a file with a larger major.
pub const FORMAT: u32 = 1;

/// `<id>.expect.json`, beside `<id>.sse`.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ExpectationFile {
    pub format: u32,
    /// The stable id, also the path without extension (`anthropic/split/inside-unicode-escape`).
    pub id: String,
    /// `anthropic`, `openai-chat` or `openai-responses`.
    pub dialect: String,
    /// The seed passage the case comes from, and what it exercises.
    #[serde(default)]
    pub seed: String,
    #[serde(default)]
    pub about: String,
    /// The request's tools with their JSON Schemas (a subject validating schemas needs them).
    #[serde(default)]
    pub tools: Vec<toolcert_scenario::Tool>,
    /// How the transport closes after the last byte: `eof`, `disconnect` or `cancel`.
    pub end: toolcert_scenario::StreamEnd,
    /// `complete`, `truncated`, `abandoned` or `errored`.
    pub ending: EndingKind,
    /// The text the user reads, exactly.
    pub text: String,
    /// The protocol error the turn must fail with, if the stream is faulty.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub error: Option<ExpectedError>,
    /// One entry per announced call, in announcement order.
    pub calls: Vec<CallExpectation>,
    /// The quirk profile the stream was rendered in (a reproducer of a quirk-profile run):
    /// replay and `corpus check` decode it in that profile. Absent: the plain dialect.
    #[serde(default, skip_serializing_if = "is_plain")]
    pub quirks: toolcert_scenario::Quirks,
}

fn is_plain(q: &toolcert_scenario::Quirks) -> bool {
    *q == toolcert_scenario::Quirks::default()
}

/// A protocol error: its class, or either of two classes.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ExpectedError {
    pub class: ErrorClass,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub or: Option<ErrorClass>,
}

/// What one call must give.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct CallExpectation {
    pub call_id: String,
    pub name: String,
    /// The argument bytes as received (the buffer a failure reports as `raw`).
    pub raw: String,
    pub expect: CallExpect,
}

/// The outcome a call must give.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(tag = "outcome", rename_all = "snake_case", deny_unknown_fields)]
pub enum CallExpect {
    /// Dispatchable with exactly these arguments.
    Dispatchable { args: Value },
    /// Parsed, but the arguments violate the tool's schema.
    SchemaError { args: Value },
    /// Failed for this reason, with `raw` as the buffer.
    Failed { reason: FailReason },
    /// Either `finished` (the call's own terminal arrived) or failed as abandoned (the turn's
    /// stop reason never came).
    FinishedOrAbandoned { finished: Box<CallExpect> },
    /// The turn is faulty: no outcome is required; a dispatch is allowed only with exactly
    /// `may_dispatch` (a call that finished before the fault).
    NoDispatch {
        #[serde(default, skip_serializing_if = "Option::is_none")]
        may_dispatch: Option<Value>,
    },
}

fn judged_to_file(j: &Judged) -> CallExpect {
    match j {
        Judged::Dispatch { args } => CallExpect::Dispatchable { args: args.clone().into_owned() },
        Judged::SchemaError { args } => CallExpect::SchemaError { args: args.clone().into_owned() },
        Judged::Unparseable => CallExpect::Failed { reason: FailReason::Unparseable },
    }
}

fn file_to_judged(e: &CallExpect) -> Option<Judged<'_>> {
    match e {
        CallExpect::Dispatchable { args } => Some(Judged::Dispatch { args: Cow::Borrowed(args) }),
        CallExpect::SchemaError { args } => Some(Judged::SchemaError { args: Cow::Borrowed(args) }),
        CallExpect::Failed { reason: FailReason::Unparseable } => Some(Judged::Unparseable),
        _ => None,
    }
}

impl ExpectationFile {
    /// The file for one stream's expectation.
    pub fn from_expected(
        id: &str,
        dialect: &str,
        turn: &toolcert_scenario::Turn,
        end: toolcert_scenario::StreamEnd,
        exp: &Expected<'_>,
    ) -> ExpectationFile {
        ExpectationFile {
            format: FORMAT,
            id: id.to_string(),
            dialect: dialect.to_string(),
            seed: String::new(),
            about: String::new(),
            tools: turn.tools.clone(),
            end,
            ending: exp.ending,
            text: exp.text(),
            error: exp.fault.map(|f| ExpectedError { class: f.class, or: f.also }),
            calls: exp
                .calls
                .iter()
                .map(|c| CallExpectation {
                    call_id: c.call_id.to_string(),
                    name: c.name.to_string(),
                    raw: c.raw.to_string(),
                    expect: match &c.expect {
                        Expect::Finished { judged } => judged_to_file(judged),
                        Expect::Failed { reason } => CallExpect::Failed { reason: *reason },
                        Expect::FinishedOrAbandoned { judged } => {
                            CallExpect::FinishedOrAbandoned { finished: Box::new(judged_to_file(judged)) }
                        }
                        Expect::Faulted { may_dispatch } => {
                            CallExpect::NoDispatch { may_dispatch: may_dispatch.clone().map(Cow::into_owned) }
                        }
                    },
                })
                .collect(),
            quirks: toolcert_scenario::Quirks::default(),
        }
    }

    /// The oracle's expectation, without timing: every call's terminal counts as arrived
    /// before the end (a replay judges outcomes, not when they came).
    pub fn to_expected(&self) -> Result<Expected<'_>, String> {
        if self.format > FORMAT {
            return Err(format!("format {} is newer than this toolcert understands ({FORMAT})", self.format));
        }
        let calls = self
            .calls
            .iter()
            .enumerate()
            .map(|(k, c)| {
                let expect = match &c.expect {
                    CallExpect::Failed { reason: FailReason::Unparseable } | CallExpect::Dispatchable { .. } | CallExpect::SchemaError { .. } => {
                        Expect::Finished { judged: file_to_judged(&c.expect).expect("finished kinds") }
                    }
                    CallExpect::Failed { reason } => Expect::Failed { reason: *reason },
                    CallExpect::FinishedOrAbandoned { finished } => Expect::FinishedOrAbandoned {
                        judged: file_to_judged(finished)
                            .ok_or_else(|| format!("call {}: `finished` must be dispatchable, schema_error or failed(unparseable)", c.call_id))?,
                    },
                    CallExpect::NoDispatch { may_dispatch } => Expect::Faulted { may_dispatch: may_dispatch.as_ref().map(Cow::Borrowed) },
                };
                Ok(ExpectedCall {
                    block: k as u32,
                    index: k as u32,
                    call_id: &c.call_id,
                    name: &c.name,
                    terminal_at: Some(0),
                    raw: std::borrow::Cow::Borrowed(&c.raw),
                    fragments: vec![&c.raw],
                    expect,
                })
            })
            .collect::<Result<Vec<_>, String>>()?;
        Ok(Expected {
            ending: self.ending,
            // The file records the ending, not the reason's spelling nor when it came.
            stop: None,
            ended_at: None,
            calls,
            fault: self.error.as_ref().map(|e| FaultExpect { class: e.class, also: e.or, at: 0 }),
            // A subject that fails a faulty turn may have shown any prefix of the text; one that
            // does not fail it must show all of it.
            text_pieces: vec![(u32::from(self.error.is_some()), &self.text)],
            layout: None,
            events: 0,
            // The file lists calls, not foreign blocks: an outcome for one is an unannounced
            // call's (ACC-ACCOUNT), text from one differs from the text (ACC-TEXT).
            foreign: Vec::new(),
            refusal: Default::default(),
        })
    }

    /// Judges an observation of the recorded stream against this file.
    pub fn judge(&self, obs: &Observation) -> Result<Vec<Violation>, String> {
        // The file records no positions: a turn that failed may have shown any prefix of the
        // text (its error's stamp counts units of a recording, not events of a scenario).
        let mut obs = obs.clone();
        if let Some(e) = &mut obs.error {
            e.at.before = 0;
            e.at.delivered = e.at.delivered.max(1);
        }
        Ok(crate::judge_stream(&self.to_expected()?, &obs))
    }
}

/// An outcome in the expectation file's shape (for `replay --format json`).
pub fn outcome_to_file(o: &Outcome) -> serde_json::Value {
    match o {
        Outcome::Dispatchable { call_id, name, args } => {
            serde_json::json!({"call_id": call_id, "name": name, "outcome": "dispatchable", "args": args})
        }
        Outcome::SchemaError { call_id, name, args, errors } => {
            serde_json::json!({"call_id": call_id, "name": name, "outcome": "schema_error", "args": args, "errors": errors})
        }
        Outcome::Failed { reason, call_id, name, raw } => {
            serde_json::json!({"call_id": call_id, "name": name, "outcome": "failed", "reason": reason, "raw": raw})
        }
    }
}

/// The error class names, for documentation.
pub fn error_classes() -> Vec<&'static str> {
    ErrorClass::ALL.iter().map(|c| c.as_str()).collect()
}
