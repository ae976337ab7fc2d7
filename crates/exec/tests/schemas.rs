//! The protocol's JSON Schemas (`docs/schemas/`) agree with the crate's message types and
//! with what the adapter templates actually write.

mod common;

use std::io::{BufRead, BufReader, Write};
use std::path::Path;
use std::process::{Command, Stdio};

use serde_json::{json, Value};
use toolcert_exec::protocol::{
    Configure, ConfigureReply, Emitted, ErrorContext, Implementation, ProfileMsg, Request, Run, RunBody,
    RunReply, Start, StartReply, StreamResult, PROTOCOL_VERSION,
};
use toolcert_render::render;
use toolcert_scenario::{Case, Dialect, Quirks};
use toolcert_subject::driver::{Input, Units};
use toolcert_subject::{EndingKind, ErrorClass, FailReason, Level, Outcome, ReportedEnding, Slot, TurnError};

const MESSAGES: [&str; 7] =
    ["start", "start-reply", "configure", "configure-reply", "run", "run-reply", "stop"];

fn validator(name: &str) -> jsonschema::Validator {
    let path = common::root().join("docs/schemas").join(format!("{name}.schema.json"));
    let text = std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    let schema: Value = serde_json::from_str(&text).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    jsonschema::validator_for(&schema).unwrap_or_else(|e| panic!("{name}.schema.json does not compile: {e}"))
}

fn assert_valid(name: &str, instance: &Value) {
    let v = validator(name);
    let errors: Vec<String> =
        v.iter_errors(instance).map(|e| format!("{} at {}", e, e.instance_path())).collect();
    assert!(errors.is_empty(), "{name}: {instance}\n{}", errors.join("\n"));
}

fn assert_invalid(name: &str, instance: &Value) {
    assert!(!validator(name).is_valid(instance), "{name} accepts what it should refuse: {instance}");
}

fn to_value<T: serde::Serialize>(t: &T) -> Value {
    serde_json::to_value(t).unwrap()
}

#[test]
fn every_message_has_a_schema_that_compiles() {
    for name in MESSAGES {
        validator(name);
    }
    let dir = common::root().join("docs/schemas");
    // The report formats' schemas (tests/schemas.rs at the root checks them) sit beside these.
    let reports = ["report.schema.json", "report-record.schema.json", "baseline.schema.json"];
    let files = std::fs::read_dir(&dir)
        .unwrap()
        .filter(|e| !reports.iter().any(|r| e.as_ref().is_ok_and(|e| e.file_name() == *r)))
        .count();
    assert_eq!(files, MESSAGES.len(), "one schema per message in {}", dir.display());
}

/// A run of `case` at `level`, as the harness sends it (`None`: the dialect cannot say it).
fn run_value(case: &Case, level: Level, dialect: Dialect) -> Option<Value> {
    let neutral: Vec<_> = case.streams.iter().map(render).collect();
    let wire: Vec<_> = case
        .streams
        .iter()
        .zip(&neutral)
        .map(|(t, n)| toolcert_dialect::render_wire(t, n, dialect, Quirks::default()).ok())
        .collect::<Option<_>>()?;
    let bytes: Vec<_> = case
        .streams
        .iter()
        .zip(&wire)
        .map(|(t, w)| toolcert_dialect::render_bytes(dialect, w, &t.transport))
        .collect();
    let inputs: Vec<Input<'_>> = (0..case.streams.len())
        .map(|s| Input {
            units: match level {
                Level::Events => Units::Events(&neutral[s].events),
                Level::Wire => Units::Wire(&wire[s].events),
                Level::Bytes => Units::Bytes(&bytes[s].chunks),
            },
            end: neutral[s].end,
        })
        .collect();
    Some(to_value(&Request::Run(Run::for_case(7, case, &inputs))))
}

fn samples_of_requests() -> Vec<(&'static str, Value)> {
    let mut out = vec![
        ("start", to_value(&Request::Start(Start { version: PROTOCOL_VERSION, toolcert: "0.1.0".into() }))),
        (
            "configure",
            to_value(&Request::Configure(Configure {
                level: Level::Bytes,
                dialect: Dialect::OpenAiChat,
                quirks: Quirks { chat_index_zero: true, ..Default::default() },
                profile: ProfileMsg { schema: true, memory: false },
            })),
        ),
        ("stop", to_value(&Request::<'static>::Stop)),
    ];
    for named in toolcert_gen::named::all() {
        for level in Level::ALL {
            let dialect = match named.case.streams[0].shape {
                toolcert_scenario::Shape::PerCall => Dialect::OpenAiResponses,
                toolcert_scenario::Shape::Interleaved(_) => Dialect::OpenAiChat,
            };
            out.extend(run_value(&named.case, level, dialect).map(|run| ("run", run)));
        }
    }
    out
}

fn samples_of_replies() -> Vec<(&'static str, Value)> {
    let implementation = Implementation {
        name: "sample".into(),
        language: "rust".into(),
        version: "1.0.0".into(),
        homepage: Some("https://example.invalid".into()),
        language_version: Some("1.88".into()),
        levels: vec!["events".into(), "bytes".into()],
        dialects: vec!["anthropic".into()],
        quirks: vec!["chat_index_zero".into()],
        capabilities: vec!["schema".into()],
        policy: Some("documented".into()),
        policy_doc: Some("https://example.invalid/docs".into()),
        caps: toolcert_oracle::Caps { calls: Some(128), fragments: Some(65_536), ..Default::default() },
    };
    let result = StreamResult {
        outcomes: vec![
            Emitted {
                value: Outcome::Dispatchable {
                    call_id: "c1".into(),
                    name: "f".into(),
                    args: json!({"a": [1, 2.5, null]}),
                },
                units: 9,
                at_finish: true,
            },
            Emitted {
                value: Outcome::SchemaError {
                    call_id: "c2".into(),
                    name: "f".into(),
                    args: json!({"priority": "P1"}),
                    errors: vec!["/priority: not one of the enum values".into()],
                },
                units: 9,
                at_finish: true,
            },
            Emitted {
                value: Outcome::Failed {
                    reason: FailReason::Abandoned,
                    call_id: None,
                    name: None,
                    raw: "{\"a\":".into(),
                },
                units: 3,
                at_finish: false,
            },
        ],
        text: "Looking that up.".into(),
        layout: Some(vec![
            Slot::Text { text: "Looking that up.".into() },
            Slot::Call { call_id: "c1".into() },
        ]),
        error: Some(Emitted {
            value: TurnError::new(ErrorClass::UnannouncedIndex, "fragment for index 4"),
            units: 4,
            at_finish: false,
        }),
        crash: Some("ZeroDivisionError".into()),
        ending: Some(Emitted {
            value: ReportedEnding::new(EndingKind::Truncated, Some("length")),
            units: 9,
            at_finish: true,
        }),
        pollution: Some(vec!["Object.prototype.arguments".into()]),
    };
    vec![
        ("start-reply", to_value(&StartReply { version: 1, implementation })),
        ("configure-reply", to_value(&ConfigureReply { ok: true, reason: None })),
        ("configure-reply", to_value(&ConfigureReply { ok: false, reason: Some("no".into()) })),
        (
            "run-reply",
            to_value(&RunReply {
                seq: 7,
                body: RunBody::Results(vec![result, StreamResult::default()]),
                elapsed_ns: Some(123_456),
                peak_bytes: Some(65_536),
            }),
        ),
        (
            "run-reply",
            to_value(&RunReply {
                seq: 7,
                body: RunBody::Skipped { reason: "not today".into() },
                elapsed_ns: None,
                peak_bytes: None,
            }),
        ),
        (
            "run-reply",
            to_value(&RunReply {
                seq: 7,
                body: RunBody::Errored {
                    context: ErrorContext {
                        message: Some("boom".into()),
                        traceback: Some("Traceback".into()),
                    },
                },
                elapsed_ns: None,
                peak_bytes: None,
            }),
        ),
    ]
}

#[test]
fn samples_of_every_message_validate_and_read_back() {
    for (name, value) in samples_of_requests() {
        assert_valid(name, &value);
        let back: Request<'_> =
            serde_json::from_value(value.clone()).unwrap_or_else(|e| panic!("{name}: {e}"));
        assert_eq!(to_value(&back), value, "{name} reads back");
    }
    for (name, value) in samples_of_replies() {
        assert_valid(name, &value);
        match name {
            "start-reply" => drop(serde_json::from_value::<StartReply>(value).unwrap()),
            "configure-reply" => drop(serde_json::from_value::<ConfigureReply>(value).unwrap()),
            _ => drop(serde_json::from_value::<RunReply>(value).unwrap()),
        }
    }
}

#[test]
fn the_schemas_refuse_malformed_messages() {
    assert_invalid("start", &json!({"cmd": "start"}));
    assert_invalid("start-reply", &json!({"version": 1, "implementation": {"name": "x", "language": "y"}}));
    assert_invalid(
        "configure",
        &json!({"cmd": "configure", "level": "http", "dialect": "anthropic", "quirks": {}, "profile": {}}),
    );
    assert_invalid("configure-reply", &json!({"reason": "?"}));
    let run = |unit: Value| json!({"cmd": "run", "seq": 1, "case": {"streams": [{"units": [unit], "end": "eof"}], "order": [[0, 0], [0, 1]]}});
    assert_valid("run", &run(json!({"bytes": "3q2+7w=="})));
    assert_invalid("run", &run(json!({"bytes": "3q2+7w="})));
    assert_invalid("run", &run(json!({"text": "a", "bytes": "YQ=="})));
    assert_invalid("run", &run(json!({"type": "args_delta", "index": -1, "fragment": "{"})));
    assert_invalid("run", &run(json!({"type": "stop", "reason": "done"})));
    let reply = |result: Value| json!({"seq": 1, "results": [result]});
    assert_valid("run-reply", &reply(json!({"error": {"class": "malformed", "detail": "x", "units": 1}})));
    assert_invalid("run-reply", &reply(json!({"error": {"class": "oops", "detail": "x", "units": 1}})));
    assert_invalid(
        "run-reply",
        &reply(json!({"outcomes": [{"outcome": "dispatchable", "call_id": "c", "name": "f", "units": 1}]})),
    );
    assert_invalid(
        "run-reply",
        &reply(json!({"outcomes": [{"outcome": "failed", "reason": "later", "raw": "", "units": 1}]})),
    );
    assert_invalid("run-reply", &json!({"seq": 1}));
    assert_invalid("run-reply", &json!({"seq": 1, "skipped": true, "errored": true}));
    assert_invalid("run-reply", &json!({"seq": 1, "results": [], "skipped": true}));
    // And the Rust types refuse the same replies.
    assert!(serde_json::from_value::<RunReply>(json!({"seq": 1})).is_err());
    assert!(serde_json::from_value::<RunReply>(json!({"seq": 1, "results": [], "skipped": true})).is_err());
    assert!(serde_json::from_value::<RunReply>(reply(
        json!({"error": {"class": "oops", "detail": "x", "units": 1}})
    ))
    .is_err());
}

/// Speaks to an adapter by hand: every request it is sent and every line it writes is checked
/// against the schemas.
fn converse(cmd: &str, dir: &Path) {
    let mut child = Command::new("sh")
        .arg("-c")
        .arg(cmd)
        .current_dir(dir)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::inherit())
        .spawn()
        .unwrap();
    let mut stdin = child.stdin.take().unwrap();
    let mut stdout = BufReader::new(child.stdout.take().unwrap());
    let mut ask = |name: &str, request: &Value, reply: &str| -> Value {
        assert_valid(name, request);
        writeln!(stdin, "{request}").unwrap();
        let mut line = String::new();
        stdout.read_line(&mut line).unwrap();
        // Replies carry arguments nested as deep as the oracle reads them (past serde_json's
        // default limit), as the harness reads them.
        let mut de = serde_json::Deserializer::from_str(&line);
        de.disable_recursion_limit();
        let value: Value =
            serde::Deserialize::deserialize(&mut de).unwrap_or_else(|e| panic!("{cmd}: {e}: {line}"));
        assert_valid(reply, &value);
        value
    };
    let hello = ask(
        "start",
        &to_value(&Request::Start(Start { version: 1, toolcert: "test".into() })),
        "start-reply",
    );
    let hello: StartReply = serde_json::from_value(hello).unwrap();
    let mut runs = 0;
    for level in hello.implementation.known_levels() {
        for dialect in hello.implementation.known_dialects() {
            let configure = Configure {
                level,
                dialect,
                quirks: Quirks::default(),
                profile: ProfileMsg { schema: true, memory: false },
            };
            let ok = ask("configure", &to_value(&Request::Configure(configure)), "configure-reply");
            assert_eq!(ok["ok"], true, "{cmd}: {ok}");
            for named in toolcert_gen::named::all() {
                let Some(run) = run_value(&named.case, level, dialect) else { continue };
                let reply = ask("run", &run, "run-reply");
                // Through the text, as the harness reads it: a Value holding a number past 64 bits
                // does not convert with `from_value` under arbitrary_precision.
                let text = reply.to_string();
                let mut de = serde_json::Deserializer::from_str(&text);
                de.disable_recursion_limit();
                let reply: RunReply = serde::Deserialize::deserialize(&mut de).unwrap();
                assert_eq!(reply.seq, 7);
                assert!(matches!(reply.body, RunBody::Results(_)), "{cmd}: {:?}", reply.body);
                runs += 1;
            }
        }
    }
    writeln!(stdin, "{}", to_value(&Request::<'static>::Stop)).unwrap();
    drop(stdin);
    assert!(child.wait().unwrap().success(), "{cmd} exits 0 on stop");
    assert!(runs > 50, "{cmd}: {runs} runs");
}

#[test]
fn the_python_template_writes_what_the_schemas_say() {
    if common::cross_lang_skipped() {
        return;
    }
    converse(&common::python_command(), &common::root());
}

#[test]
fn the_typescript_template_writes_what_the_schemas_say() {
    if common::cross_lang_skipped() {
        return;
    }
    converse(&common::typescript_command(), &common::root());
}
