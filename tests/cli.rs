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
        assert!(["ACC-", "WIRE-", "BYTES-", "SUBJECT-"].iter().any(|p| id.starts_with(p)), "{id}");
        assert_eq!(i["status"], "pass", "{i}");
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

#[test]
fn corpus_check_passes_on_the_committed_corpus() {
    let dir = concat!(env!("CARGO_MANIFEST_DIR"), "/corpus");
    let (code, stdout, _) = toolcert(&["corpus", "check", "--dir", dir]);
    assert_eq!(code, 0, "{stdout}");
    assert!(stdout.contains("66 of 66") || stdout.contains(" corpus cases pass"), "{stdout}");
}
