//! The command line as a user meets it: exit codes and the JSON report's shape.

use std::process::Command;

fn toolcert(args: &[&str]) -> (i32, String, String) {
    let out = Command::new(env!("CARGO_BIN_EXE_toolcert")).args(args).output().expect("toolcert runs");
    (
        out.status.code().unwrap_or(-1),
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

#[test]
fn certify_with_no_arguments_certifies_the_reference() {
    let (code, stdout, _) = toolcert(&[]);
    assert_eq!(code, 0, "{stdout}");
    assert!(stdout.contains("builtin:reference"), "{stdout}");
    assert!(stdout.contains("CONFORMS"), "{stdout}");
}

#[test]
fn certify_json_has_the_documented_fields() {
    let (code, stdout, _) = toolcert(&["certify", "--format", "json"]);
    assert_eq!(code, 0);
    let report: serde_json::Value = serde_json::from_str(&stdout).expect("the report is JSON");
    assert_eq!(report["conforms"], true);
    assert!(report["cases"].as_u64().unwrap() >= 20, "{}", report["cases"]);
    let invariants = report["invariants"].as_array().unwrap();
    assert!(invariants.len() >= 12);
    for i in invariants {
        let id = i["id"].as_str().unwrap();
        assert!(
            ["ACC-", "WIRE-", "BYTES-", "SUBJECT-", "HOSTILE-"].iter().any(|p| id.starts_with(p)),
            "{id}"
        );
        // An in-process subject's runtime is not checked for pollution (the adapter packages
        // check theirs): the one rule it leaves `n/a`.
        let want = if id == "HOSTILE-POLLUTION" { "n/a" } else { "pass" };
        assert_eq!(i["status"], want, "{i}");
    }
}

#[test]
fn an_unknown_subject_is_a_usage_error() {
    let (code, _, stderr) = toolcert(&["certify", "--subject", "builtin:nope"]);
    assert_eq!(code, 2);
    assert!(stderr.contains("unknown subject"), "{stderr}");
}

#[test]
fn a_mutant_fails_certify_and_shows_its_counterexample() {
    let (code, stdout, _) = toolcert(&["certify", "--subject", "builtin:mutant/name-keyed"]);
    assert_eq!(code, 1, "{stdout}");
    assert!(stdout.contains("ACC-IDENTITY") && stdout.contains("call_start"), "{stdout}");
}

#[test]
fn replay_prints_the_calls_and_json_uses_the_expectation_shape() {
    let file = concat!(env!("CARGO_MANIFEST_DIR"), "/crates/dialect/tests/data/anthropic.sse");
    let (code, stdout, _) = toolcert(&["replay", file]);
    assert_eq!(code, 0, "{stdout}");
    assert!(
        stdout.contains("toolu_01Ka8fWqKz2TbN4xQ1v7sEuR") && stdout.contains("search_orders"),
        "{stdout}"
    );
    let (code, stdout, _) = toolcert(&["replay", file, "--dialect", "anthropic", "--format", "json"]);
    assert_eq!(code, 0);
    let v: serde_json::Value = serde_json::from_str(&stdout).unwrap();
    assert_eq!(v["calls"][0]["outcome"], "dispatchable");
    assert!(v["calls"][0]["args"].is_object());
}

/// A readable but faulty stream is no usage error: the subject is fed it and judged against
/// the fault's own class (a new id at an occupied Chat index is a new call, and a nameless one
/// is a malformed first entry).
#[test]
fn replay_runs_a_faulty_stream_through_the_subject() {
    let dir = concat!(env!("CARGO_MANIFEST_DIR"), "/corpus/openai-chat");
    let file = format!("{dir}/keying/new-id-at-occupied-index.sse");
    let (code, stdout, stderr) = toolcert(&["replay", &file]);
    assert_eq!(code, 0, "{stdout}{stderr}");
    assert!(stdout.contains("turn failed: malformed") && stdout.contains("conforms"), "{stdout}");
    // A subject that makes a buffer for a fragment no call holds dispatches it: violations.
    let file = format!("{dir}/keying/unannounced-index.sse");
    let (code, stdout, stderr) =
        toolcert(&["replay", &file, "--subject", "builtin:mutant/buffer-on-first-fragment"]);
    assert_eq!(code, 1, "{stdout}{stderr}");
    assert!(stdout.contains("ACC-PROTOCOL (must)"), "{stdout}");
    // Data that is not JSON, and a fragment of the wrong type: `malformed`, in every dialect.
    for d in ["anthropic", "openai-chat", "openai-responses"] {
        for case in ["data-not-json", "fragment-of-wrong-type"] {
            let file = format!("{}/corpus/{d}/deltas/{case}.sse", env!("CARGO_MANIFEST_DIR"));
            let (code, stdout, stderr) = toolcert(&["replay", &file]);
            assert_eq!(code, 0, "{file}: {stdout}{stderr}");
            assert!(stdout.contains("turn failed: malformed"), "{file}: {stdout}");
        }
    }
    // A subject fed events cannot be shown an event no neutral event describes: usage error.
    let file = format!("{}/corpus/anthropic/deltas/data-not-json.sse", env!("CARGO_MANIFEST_DIR"));
    let (code, _, stderr) = toolcert(&["replay", &file, "--subject", "builtin:mutant/duplicate-ignored"]);
    assert_eq!(code, 2, "{stderr}");
    assert!(stderr.contains("takes events") && stderr.contains("data-not-json.sse:"), "{stderr}");
}

#[test]
fn corpus_check_passes_on_the_committed_corpus() {
    let dir = concat!(env!("CARGO_MANIFEST_DIR"), "/corpus");
    let (code, stdout, _) = toolcert(&["corpus", "check", "--dir", dir]);
    assert_eq!(code, 0, "{stdout}");
    assert!(stdout.contains("66 of 66") || stdout.contains(" corpus cases pass"), "{stdout}");
}

/// A Chat stream of several choices (`n` = 2): choice 0's calls and text are read, and the
/// other choice is a reported skip, never dropped silently (docs/SPEC.md, "Server profiles").
#[test]
fn replay_reports_the_choices_it_does_not_read() {
    let dir = std::env::temp_dir().join(format!("toolcert-multi-choice-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let file = dir.join("two-choices.sse");
    let chunk = |choices: &str| {
        format!(
            r#"data: {{"id":"c","object":"chat.completion.chunk","created":1,"model":"m","choices":[{choices}]}}"#
        )
    };
    let stream = [
        chunk(r#"{"index":0,"delta":{"role":"assistant","tool_calls":[{"index":0,"id":"call_a","type":"function","function":{"name":"f","arguments":"{}"}}]},"finish_reason":null},{"index":1,"delta":{"content":"B"},"finish_reason":null}"#),
        chunk(r#"{"index":1,"delta":{"tool_calls":[{"index":0,"id":"call_b","type":"function","function":{"name":"g","arguments":"{}"}}]},"finish_reason":null}"#),
        chunk(r#"{"index":0,"delta":{},"finish_reason":"tool_calls"},{"index":1,"delta":{},"finish_reason":"tool_calls"}"#),
        "data: [DONE]".to_owned(),
    ]
    .join("\n\n")
        + "\n\n";
    std::fs::write(&file, stream).unwrap();
    let (code, stdout, stderr) = toolcert(&["replay", file.to_str().unwrap()]);
    assert_eq!(code, 0, "{stdout}{stderr}");
    assert!(stdout.contains("dispatch  f  call_a"), "{stdout}");
    assert!(!stdout.contains("call_b"), "choice 1's call is not choice 0's: {stdout}");
    assert!(stdout.contains("skipped: choice 1 (3 chunks)"), "{stdout}");
    let (_, json, _) = toolcert(&["replay", file.to_str().unwrap(), "--format", "json"]);
    let v: serde_json::Value = serde_json::from_str(&json).unwrap();
    assert_eq!(v["other_choices"]["indices"], serde_json::json!([1]));
    std::fs::remove_dir_all(&dir).ok();
}
