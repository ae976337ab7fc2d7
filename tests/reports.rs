//! Reports for people and CI, as a user meets them on the command line: the formats, `--out`,
//! the baseline, shards and `merge`, the matrix, and the exit codes.

use std::path::{Path, PathBuf};
use std::process::Command;

const FAILING: &str = "builtin:mutant/name-keyed";

fn toolcert(args: &[&str]) -> (i32, String, String) {
    let out = Command::new(env!("CARGO_BIN_EXE_toolcert")).args(args).output().expect("toolcert runs");
    (
        out.status.code().unwrap_or(-1),
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

/// A fresh scratch directory for one test.
fn scratch(name: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("toolcert-reports-{}-{name}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

fn s(p: &Path) -> &str {
    p.to_str().unwrap()
}

#[test]
fn the_same_seed_twice_prints_identical_reports() {
    let args = ["certify", "--subject", FAILING, "--cases", "300", "--seed", "7", "--format", "json"];
    let (code, first, _) = toolcert(&args);
    assert_eq!(code, 1);
    let (_, second, _) = toolcert(&args);
    assert!(first == second, "two runs of seed 7 printed different reports");
    let report: serde_json::Value = serde_json::from_str(&first).unwrap();
    assert_eq!(report["generated_cases"], 300);
    assert!(!report["failures"].as_array().unwrap().is_empty());
    // Nothing that differs between machines or runs.
    for key in ["\"time\":", "\"timestamp\":", "\"elapsed", "\"duration", "per_sec"] {
        assert!(!first.contains(key), "the report contains {key}");
    }
    for path in [std::env::temp_dir().to_str().unwrap(), env!("CARGO_MANIFEST_DIR")] {
        assert!(!first.contains(path), "the report contains the path {path}");
    }
}

#[test]
fn every_format_reports_the_failures() {
    let base = ["certify", "--subject", FAILING, "--cases", "20", "--seed", "3"];
    let run = |format: &str| {
        let mut args = base.to_vec();
        args.extend(["--format", format]);
        let (code, out, err) = toolcert(&args);
        assert_eq!(code, 1, "{format}: {err}");
        assert!(!err.contains('█') && !err.contains("cases/s"), "no progress bar with {format}");
        out
    };
    let text = run("text");
    assert!(
        text.contains("distinct findings in")
            && text.contains("FINDING ACC-IDENTITY#")
            && text.contains("DOES NOT CONFORM"),
        "{text}"
    );
    // The findings lead, before the table.
    assert!(text.find("FINDING").unwrap() < text.find("invariant ").unwrap(), "{text}");

    let json: serde_json::Value = serde_json::from_str(&run("json")).unwrap();
    assert_eq!(json["conforms"], false);
    assert!(json["suite"]["digest"].as_str().unwrap().starts_with("sha256:"));

    let jsonl = run("jsonl");
    let report = toolcert::runner::jsonl::read_report(&jsonl).expect("the JSONL report reads back");
    assert_eq!(report.cases, json["cases"].as_u64().unwrap() as usize);
    assert_eq!(jsonl.lines().count(), report.cases + report.skipped.len() + 2);

    let junit = run("junit");
    assert!(junit.starts_with("<?xml") && junit.contains("<testsuite name=\"ACC-IDENTITY\""), "{junit}");
    assert!(
        junit.contains("<failure message=")
            && junit.contains("replay: toolcert certify --subject builtin:mutant/name-keyed")
    );
    let xsd = Path::new(env!("CARGO_MANIFEST_DIR")).join("crates/runner/tests/data/junit.xsd");
    if Command::new("xmllint").arg("--version").output().is_ok_and(|o| o.status.success()) {
        let file = scratch("junit").join("report.xml");
        std::fs::write(&file, &junit).unwrap();
        let out =
            Command::new("xmllint").arg("--noout").arg("--schema").arg(&xsd).arg(&file).output().unwrap();
        assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    }

    let md = run("markdown");
    assert!(md.starts_with("# toolcert: builtin:mutant/name-keyed"), "{md}");
    assert!(md.contains("| ACC-IDENTITY | ❌ fail | ❌ fail |") && md.contains("```text\n"), "{md}");
}

#[test]
fn out_writes_the_jsonl_report_and_replayable_reproducers() {
    let dir = scratch("out");
    let (code, _, err) = toolcert(&["certify", "--subject", FAILING, "--cases", "10", "--out", s(&dir)]);
    assert_eq!(code, 1, "{err}");
    let jsonl = std::fs::read_to_string(dir.join("report.jsonl")).unwrap();
    let report = toolcert::runner::jsonl::read_report(&jsonl).unwrap();
    assert!(!report.failures.is_empty());
    for f in &report.failures {
        let stem = toolcert::runner::report::file_stem(&f.case);
        let scenario = dir.join("failures").join(format!("{stem}.json"));
        assert!(dir.join("failures").join(format!("{stem}.txt")).exists(), "events level: a transcript");
        let (code, out, _) = toolcert(&["certify", "--subject", FAILING, "--scenario", s(&scenario)]);
        assert_eq!(code, 1, "{} replays as a failure:\n{out}", f.case);
        let (code, _, _) =
            toolcert(&["certify", "--subject", "builtin:reference", "--scenario", s(&scenario)]);
        assert_eq!(code, 0);
    }
}

#[test]
fn out_writes_the_sse_bytes_below_the_events_level() {
    let dir = scratch("sse");
    let (code, _, _) = toolcert(&[
        "certify",
        "--subject",
        "builtin:reference",
        "--level",
        "bytes",
        "--dialect",
        "openai-chat",
        "--cases",
        "5",
        "--out",
        s(&dir),
    ]);
    assert_eq!(code, 0);
    // The reference passes: the crashing wire mutant gives failures to write.
    let (code, _, _) = toolcert(&[
        "certify",
        "--subject",
        "builtin:mutant/usage-chunk-indexed",
        "--level",
        "wire",
        "--dialect",
        "openai-chat",
        "--cases",
        "20",
        "--seed",
        "3",
        "--out",
        s(&dir),
    ]);
    assert_eq!(code, 3);
    let sse: Vec<PathBuf> = std::fs::read_dir(dir.join("failures"))
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|e| e == "sse"))
        .collect();
    assert!(!sse.is_empty());
    let bytes = std::fs::read_to_string(&sse[0]).unwrap();
    assert!(bytes.starts_with("data: ") && bytes.contains("\n\n"), "{bytes}");
    // `x.sse`, or `x.stream-N.sse` for a stream of a multi-stream case: the scenario is `x.json`.
    let name = sse[0].file_name().unwrap().to_str().unwrap();
    let stem = name.split(".stream-").next().unwrap().trim_end_matches(".sse");
    let scenario = sse[0].with_file_name(format!("{stem}.json"));
    let (code, _, _) = toolcert(&[
        "certify",
        "--subject",
        "builtin:mutant/usage-chunk-indexed",
        "--level",
        "wire",
        "--dialect",
        "openai-chat",
        "--scenario",
        s(&scenario),
    ]);
    assert_eq!(code, 1, "the scenario replays at the level given");
}

#[test]
fn a_baseline_passes_listed_failures_and_fails_unlisted_and_stale_ones() {
    let dir = scratch("baseline");
    let file = dir.join("baseline.json");
    let run = ["certify", "--subject", FAILING, "--cases", "20", "--seed", "3"];
    let with = |extra: &[&str]| {
        let mut args = run.to_vec();
        args.extend(extra);
        toolcert(&args)
    };
    let (code, _, err) = with(&["--write-baseline", s(&file)]);
    assert_eq!(code, 0, "{err}");
    let written: serde_json::Value = serde_json::from_str(&std::fs::read_to_string(&file).unwrap()).unwrap();
    assert_eq!(written["toolcert_baseline"], 1);
    let entries = written["expected_failures"].as_array().unwrap().clone();
    assert!(entries
        .iter()
        .any(|e| e["case"] == "named/keying/refunded-open-pair" && e["invariant"] == "ACC-IDENTITY"));

    // Every failure listed: passes.
    let (code, out, _) = with(&["--baseline", s(&file)]);
    assert_eq!(code, 0, "{out}");
    assert!(out.contains("baseline: ") && out.contains(" 0 unexpected, 0 stale"), "{out}");

    // One failure unlisted: fails.
    let mut fewer = written.clone();
    fewer["expected_failures"] = serde_json::Value::Array(entries[1..].to_vec());
    std::fs::write(&file, fewer.to_string()).unwrap();
    let (code, out, _) = with(&["--baseline", s(&file), "--format", "json"]);
    assert_eq!(code, 1);
    let report: serde_json::Value = serde_json::from_str(&out).unwrap();
    assert_eq!(report["baseline"]["unexpected"].as_array().unwrap().len(), 1);

    // A listed case that passes: stale.
    let mut stale = written.clone();
    stale["expected_failures"]
        .as_array_mut()
        .unwrap()
        .push(serde_json::json!({"case": "named/deltas/lookup-order-a4471"}));
    std::fs::write(&file, stale.to_string()).unwrap();
    let (code, out, _) = with(&["--baseline", s(&file)]);
    assert_eq!(code, 4, "{out}");
    assert!(out.contains("stale: named/deltas/lookup-order-a4471"), "{out}");
    let (code, junit, _) = with(&["--baseline", s(&file), "--format", "junit"]);
    assert_eq!(code, 4);
    assert!(
        junit.contains("<testsuite name=\"baseline\"")
            && junit.contains("expected failure: the baseline lists")
    );

    // A malformed baseline is a usage error.
    std::fs::write(&file, r#"{"toolcert_baseline": 1, "expected_failures": [{"case": 3}]}"#).unwrap();
    let (code, _, err) = with(&["--baseline", s(&file)]);
    assert_eq!(code, 2);
    assert!(err.contains("not a toolcert baseline"), "{err}");
}

#[test]
fn merging_shards_gives_the_unsharded_report() {
    let dir = scratch("shards");
    let run = ["certify", "--subject", FAILING, "--cases", "150", "--seed", "11", "--format", "json"];
    let (code, whole, _) = toolcert(&run);
    assert_eq!(code, 1);
    let mut reports = Vec::new();
    for k in 1..=3 {
        let out = dir.join(format!("shard-{k}"));
        let shard = format!("{k}/3");
        let mut args = run.to_vec();
        args.extend(["--shard", &shard, "--out", s(&out)]);
        let (code, printed, _) = toolcert(&args);
        assert_eq!(code, 1);
        assert!(printed.contains(&format!("\"shard\": \"{k}/3\"")));
        reports.push(out.join("report.jsonl"));
    }
    let mut args = vec!["merge", "--format", "json"];
    args.extend(reports.iter().rev().map(|p| s(p)));
    let (code, merged, err) = toolcert(&args);
    assert_eq!(code, 1, "merge exits with the merged verdict: {err}");
    // Each shard shrinks the first failures of each finding it meets, so the reproducers
    // kept may differ (and be smaller); everything counted is the same.
    let w: serde_json::Value = serde_json::from_str(&whole).unwrap();
    let m: serde_json::Value = serde_json::from_str(&merged).unwrap();
    let counted = |r: &serde_json::Value| {
        let mut r = r.clone();
        // Which failures are kept in full differs too (each shard keeps the first of each
        // finding it meets): what is counted is every failing case, kept or not.
        let failing = r["failures"].as_array().unwrap().len() as u64 + r["more_failures"].as_u64().unwrap();
        r["more_failures"] = failing.into();
        r.as_object_mut().unwrap().remove("failures");
        for f in r["findings"].as_array_mut().unwrap() {
            for key in ["reproducer", "size", "replay"] {
                f.as_object_mut().unwrap().remove(key);
            }
        }
        r
    };
    assert_eq!(counted(&m), counted(&w), "merged shards count otherwise than the unsharded run");
    assert!(!w["findings"].as_array().unwrap().is_empty());
    assert!(w["more_failures"].as_u64().unwrap() > 0, "the keep limit is exercised");

    // Shards of different runs do not merge.
    let other = dir.join("other");
    toolcert(&["certify", "--subject", FAILING, "--grade", "must", "--out", s(&other)]);
    let (code, _, err) = toolcert(&["merge", s(&reports[0]), s(&other.join("report.jsonl"))]);
    assert_eq!(code, 2);
    assert!(err.contains("cannot merge"), "{err}");
}

#[test]
fn the_matrix_lines_up_implementations_and_invariants() {
    let dir = scratch("matrix");
    let mut reports = Vec::new();
    for (name, subject) in [("reference", "builtin:reference"), ("name-keyed", FAILING)] {
        let out = dir.join(name);
        toolcert(&["certify", "--subject", subject, "--level", "events", "--cases", "20", "--out", s(&out)]);
        reports.push(out.join("report.jsonl"));
    }
    let json = dir.join("name-keyed.json");
    std::fs::write(&json, toolcert(&["certify", "--subject", FAILING, "--format", "json"]).1).unwrap();
    let paths: Vec<&str> = reports.iter().map(|p| s(p)).collect();

    let (code, md, err) = toolcert(&[&["matrix"][..], &paths].concat());
    assert_eq!(code, 0, "{err}");
    assert!(md.contains("| invariant | builtin:reference (events · should) | builtin:mutant/name-keyed (events · should) |"), "{md}");
    assert!(md.contains("| ACC-ORDER | must ✅ · should ✅ | must ✅ · should ✅ |"), "{md}");
    assert!(md.contains("| ACC-IDENTITY | must ✅ · should ✅ | must ❌"), "{md}");
    let (_, pruned, _) = toolcert(&[&["matrix", "--pruned"][..], &paths].concat());
    assert!(!pruned.contains("| ACC-ORDER |") && pruned.contains("| ACC-IDENTITY |"), "{pruned}");

    let (code, html, _) = toolcert(&[&["matrix", "--format", "html", "--pruned"][..], &paths].concat());
    assert_eq!(code, 0);
    assert!(
        html.starts_with("<!DOCTYPE html>") && html.contains("<style>") && html.contains("class=\"legend\"")
    );
    assert!(
        !html.contains("src=") && !html.contains("href=") && !html.contains("url("),
        "no external assets"
    );
    assert!(html.contains("<td class=\"must\">") && html.contains("<td class=\"pass\">"));

    // A JSON summary is read too.
    let (code, md, _) = toolcert(&["matrix", s(&reports[0]), s(&json)]);
    assert_eq!(code, 0);
    assert!(md.contains("builtin:mutant/name-keyed"));
    let (code, _, err) = toolcert(&["matrix", s(&dir.join("missing.jsonl"))]);
    assert_eq!(code, 2);
    assert!(err.contains("cannot read"), "{err}");
}

#[test]
fn exit_codes_have_one_meaning_each() {
    assert_eq!(toolcert(&["certify", "--subject", "builtin:reference"]).0, 0, "conforms");
    assert_eq!(toolcert(&["certify", "--subject", FAILING]).0, 1, "violations");
    assert_eq!(toolcert(&["certify", "--subject", "builtin:nope"]).0, 2, "unknown subject");
    assert_eq!(toolcert(&["certify", "--shard", "4/3"]).0, 2, "bad shard");
    assert_eq!(toolcert(&["certify", "--format", "yaml"]).0, 2, "bad option");
    let (code, _, err) = toolcert(&[
        "certify",
        "--subject",
        "builtin:mutant/usage-chunk-indexed",
        "--level",
        "wire",
        "--dialect",
        "openai-chat",
        "--cases",
        "20",
        "--seed",
        "3",
        "--format",
        "json",
    ]);
    assert_eq!(code, 3, "crashes only: {err}");
    // 4 (stale baseline) is covered by the baseline test.
    let blocker = scratch("exit").join("a-file");
    std::fs::write(&blocker, "").unwrap();
    let (code, out, err) = toolcert(&["certify", "--out", s(&blocker.join("dir"))]);
    assert_eq!(code, 5, "cannot write --out: {err}");
    // The stream to --out opens before the first case: a run that cannot keep its record
    // stops at once, naming the path, instead of certifying for nothing.
    assert!(err.contains("cannot write") && err.contains("report.jsonl"), "{err}");
    assert!(!out.contains("CONFORMS"), "no report for a run that stopped: {out}");
    let (_, help, _) = toolcert(&["certify", "--help"]);
    for line in [
        "0  conforms",
        "1  violations",
        "2  usage error",
        "3  the subject crashed",
        "4  stale baseline",
        "5  internal error",
    ] {
        assert!(help.contains(line), "--help documents {line:?}:\n{help}");
    }
}
