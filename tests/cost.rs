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
        // The budget stopped the 1-byte series before its 512 KiB tier at the latest, and
        // says so.
        let one = series(&report, "call/1");
        assert!(
            one["stopped"].as_str().is_some_and(|s| s.contains("over the 0.5 s budget")),
            "{mutant}: {one}"
        );
        let skipped = report["workloads"].as_array().unwrap().iter().find(|w| w["name"] == "call/1/512KiB");
        assert_eq!(skipped.map(|w| w["subject"].is_null()), Some(true));
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
