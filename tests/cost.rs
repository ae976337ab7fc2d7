//! `toolcert bench`: the cost certification's verdicts, report and refusals. Nothing here
//! asserts a time: the quadratic mutants' growth exponent (about 2 against the floor's 1) is
//! the signal, far beyond what a loaded machine bends, and the budget keeps them short.

use std::process::Command;

fn toolcert(args: &[&str]) -> (i32, String, String) {
    let out = Command::new(env!("CARGO_BIN_EXE_toolcert")).args(args).output().expect("toolcert runs");
    (
        out.status.code().unwrap_or(-1),
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

fn series<'a>(report: &'a serde_json::Value, name: &str) -> &'a serde_json::Value {
    report["series"]
        .as_array()
        .unwrap()
        .iter()
        .find(|s| s["series"] == name)
        .unwrap_or_else(|| panic!("{name}"))
}

#[test]
fn a_quadratic_accumulator_is_superlinear_where_it_copies_and_linear_elsewhere() {
    for mutant in ["rebuilt-buffer", "reparse-every-fragment"] {
        let subject = format!("builtin:mutant/{mutant}");
        let (code, out, err) =
            toolcert(&["bench", "--subject", &subject, "--budget", "0.5", "--format", "json"]);
        assert_eq!(code, 1, "{mutant}: superlinear exits 1\n{err}");
        let report: serde_json::Value = serde_json::from_str(&out).unwrap_or_else(|e| panic!("{e}: {out}"));
        assert_eq!(report["suite_version"], 1);
        assert_eq!(report["growth"], "superlinear", "{mutant}");
        let call = series(&report, "call/13");
        assert_eq!(call["growth"], "superlinear", "{mutant}: {call}");
        assert!(call["exponent"].as_f64().unwrap() > 1.3, "{mutant}: {call}");
        // Its bug is in the argument buffer: the text series does not grow faster.
        assert_eq!(series(&report, "text/13")["growth"], "linear", "{mutant}");
        // Which tiers run is a rule on the subject's own times, tested with no clock in it
        // (crates/cost, `a_slow_top_tier_runs_and_only_a_run_at_twenty_budgets_stops_a_series`):
        // asserting it here would ask this machine's clock to stay on one side of the line.
        // Right outcomes: nothing on any workload is wrong, only slow.
        assert!(report["workloads"].as_array().unwrap().iter().all(|w| w.get("wrong").is_none()));
    }
}

#[test]
fn the_text_report_names_the_floor_the_series_and_the_verdict() {
    let (code, out, _) =
        toolcert(&["bench", "--subject", "builtin:mutant/rebuilt-buffer", "--budget", "0.5"]);
    assert_eq!(code, 1);
    assert!(out.contains("floor: Rust, in process"), "{out}");
    assert!(out.contains("call/13    growth exponent"), "{out}");
    assert!(out.contains("builtin:mutant/rebuilt-buffer: SUPERLINEAR"), "{out}");
}

#[test]
fn a_subprocess_that_reports_no_time_of_its_own_is_refused() {
    let script = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/data/no-elapsed.py");
    let subject = format!("exec:python3 {script}");
    let (code, _, err) = toolcert(&["bench", "--subject", &subject, "--floor", "none"]);
    assert_eq!(code, 3, "{err}");
    assert!(err.contains("elapsed_ns"), "{err}");
}

#[test]
fn bad_options_are_usage_errors() {
    for args in [
        &["bench", "--budget", "0"][..],
        &["bench", "--budget", "nan"],
        &["bench", "--floor", "python3 x.py"],
        &["bench", "--subject", "builtin:nope"],
        &["bench", "--level", "wire", "--subject", "builtin:mutant/name-keyed"],
    ] {
        let (code, _, err) = toolcert(args);
        assert_eq!(code, 2, "{args:?}: {err}");
        assert!(err.starts_with("toolcert: ") || err.contains("error:"), "{args:?}: {err}");
    }
}

#[test]
fn certify_cost_puts_the_price_in_every_format_and_a_superlinear_cost_fails_the_verdict() {
    let dir = std::env::temp_dir().join(format!("toolcert-certify-cost-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let common = [
        "certify",
        "--subject",
        "builtin:mutant/rebuilt-buffer",
        "--level",
        "events",
        "--cases",
        "10",
        "--cost",
        "--cost-budget",
        "0.5",
    ];
    let with =
        |extra: &[&str]| -> Vec<String> { common.iter().chain(extra).map(|s| s.to_string()).collect() };
    let args = with(&["--format", "jsonl"]);
    let (code, jsonl, err) = toolcert(&args.iter().map(String::as_str).collect::<Vec<_>>());
    // Its outcomes are right (it conforms), its cost is not: exit 1.
    assert_eq!(code, 1, "{err}");
    let footer: serde_json::Value = serde_json::from_str(jsonl.lines().last().unwrap()).unwrap();
    assert_eq!(footer["record"], "footer");
    assert_eq!(footer["conforms"], true);
    assert_eq!(footer["cost"]["growth"], "superlinear", "{footer}");
    assert_eq!(series(&footer["cost"], "call/13")["growth"], "superlinear");
    // The JSONL reads back with its cost: the matrix shows the cost rows, merge keeps the verdict.
    let path = dir.join("rebuilt.jsonl");
    std::fs::write(&path, &jsonl).unwrap();
    let (code, matrix, err) = toolcert(&["matrix", path.to_str().unwrap()]);
    assert_eq!(code, 0, "{err}");
    assert!(matrix.contains("| **cost** | SUPERLINEAR (events) |"), "{matrix}");
    assert!(matrix.contains("| cost call/13 | SUPERLINEAR "), "{matrix}");
    let (code, _, _) = toolcert(&["merge", path.to_str().unwrap()]);
    assert_eq!(code, 1, "a merged report keeps the cost verdict");
    // Text and Markdown say it; JSON carries it.
    let args = with(&[]);
    let (code, text, _) = toolcert(&args.iter().map(String::as_str).collect::<Vec<_>>());
    assert_eq!(code, 1);
    assert!(text.contains("cost (suite v1, events level"), "{text}");
    assert!(text.contains("; cost SUPERLINEAR: call/13"), "{text}");
    let args = with(&["--format", "markdown"]);
    let (_, md, _) = toolcert(&args.iter().map(String::as_str).collect::<Vec<_>>());
    assert!(md.contains("## Cost: SUPERLINEAR"), "{md}");
    let args = with(&["--format", "junit"]);
    let (_, junit, _) = toolcert(&args.iter().map(String::as_str).collect::<Vec<_>>());
    assert!(junit.contains("type=\"cost-superlinear\""), "{junit}");
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn certify_bounded_puts_the_bounded_rule_in_the_report_and_a_broken_rule_fails_the_verdict() {
    let run = |subject: &str, format: &str| {
        toolcert(&[
            "certify",
            "--subject",
            subject,
            "--level",
            "events",
            "--cases",
            "3",
            "--bounded",
            "--cost-budget",
            "0.5",
            "--format",
            format,
        ])
    };
    // The mutant that keeps every fragment conforms on the cases and breaks the rule: exit 1.
    let (code, jsonl, err) = run("builtin:mutant/kept-fragments", "jsonl");
    assert_eq!(code, 1, "{err}");
    let footer: serde_json::Value = serde_json::from_str(jsonl.lines().last().unwrap()).unwrap();
    assert_eq!(footer["conforms"], true);
    assert_eq!(footer["bounded"]["bounded"]["holds"], false, "{footer}");
    let broken = footer["bounded"]["bounded"]["broken"].as_array().unwrap();
    assert!(
        broken.iter().any(|b| b.as_str().unwrap().starts_with("bounded/fragments/1MiB: held")),
        "{broken:?}"
    );
    assert!(footer.get("cost").is_none(), "--bounded alone prices no cost suite");
    let (_, junit, _) = run("builtin:mutant/kept-fragments", "junit");
    assert!(junit.contains("type=\"bounded-broken\""), "{junit}");
    // The reference holds it, and says so in its text.
    let (code, text, err) = run("builtin:reference", "text");
    assert_eq!(code, 0, "{err}");
    assert!(text.contains("bounded rule (bounded suite v1, events level"), "{text}");
    assert!(text.contains("; bounded rule HOLDS on every large stream (events)"), "{text}");
}

#[test]
fn without_cost_a_report_carries_none() {
    let (code, out, err) = toolcert(&[
        "certify",
        "--subject",
        "builtin:mutant/rebuilt-buffer",
        "--level",
        "events",
        "--cases",
        "5",
        "--format",
        "json",
    ]);
    assert_eq!(code, 0, "{err}");
    let report: serde_json::Value = serde_json::from_str(&out).unwrap();
    assert!(report.get("cost").is_none());
}

#[test]
fn bad_cost_options_are_usage_errors() {
    for args in [
        &["certify", "--cost", "--cost-budget", "0", "--cases", "1"][..],
        &["certify", "--cost", "--scenario", "x.json"],
        &["certify", "--cost", "--cost-floor", "python3 floor.py", "--cases", "1"],
    ] {
        let (code, _, err) = toolcert(args);
        assert_eq!(code, 2, "{args:?}: {err}");
        assert!(err.starts_with("toolcert: "), "{args:?}: {err}");
    }
}

/// `bench --bounded`: the large streams of a hostile upstream. The reference holds the rule;
/// a mutant that keeps every fragment holds tens of times the floor's heap (counted by the
/// binary's allocator, not timed), and one that re-parses per fragment grows quadratically.
#[test]
fn the_bounded_rule_holds_for_the_reference_and_breaks_for_the_bounded_mutants() {
    let bounded = |subject: &str| {
        let (code, out, err) =
            toolcert(&["bench", "--bounded", "--subject", subject, "--budget", "0.5", "--format", "json"]);
        let report: serde_json::Value =
            serde_json::from_str(&out).unwrap_or_else(|e| panic!("{e}: {out}\n{err}"));
        (code, report)
    };
    let (code, report) = bounded("builtin:reference");
    assert_eq!((code, &report["bounded"]["holds"]), (0, &serde_json::json!(true)), "{report}");
    let top = |report: &serde_json::Value, name: &str| -> serde_json::Value {
        report["workloads"].as_array().unwrap().iter().find(|w| w["name"] == name).cloned().unwrap()
    };
    // The sizes the rule names ran, each with both heaps measured.
    for name in
        ["bounded/calls/10000", "bounded/fragments/1MiB", "bounded/line/200MB", "bounded/depth/100000"]
    {
        let w = top(&report, name);
        assert!(w["peak_bytes"].as_u64().is_some() && w["floor_peak_bytes"].as_u64().is_some(), "{w}");
    }
    let (code, report) = bounded("builtin:mutant/kept-fragments");
    assert_eq!(code, 1, "{report}");
    let broken: Vec<&str> =
        report["bounded"]["broken"].as_array().unwrap().iter().filter_map(|b| b.as_str()).collect();
    assert!(
        broken
            .iter()
            .any(|b| b.starts_with("bounded/fragments/1MiB: held") && b.contains("times the floor's")),
        "{broken:?}"
    );
    let (code, report) = bounded("builtin:mutant/reparse-every-fragment");
    assert_eq!(code, 1, "{report}");
    let broken = report["bounded"]["broken"].to_string();
    assert!(broken.contains("bounded/fragments"), "{broken}");
}
