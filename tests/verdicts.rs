//! Verdicts a maintainer can trust (docs/SPEC.md): `n/a` for rules no case could break, a run
//! that checks nothing is a usage error, a crash in a re-run is SUBJECT-CRASH, findings are
//! few and keep their ids across seeds.

use std::process::Command;

use toolcert::runner::Status;
use toolcert::subject::{subject_fn, Accumulator, Emit, Event, StreamEnd, StreamSpec, TurnError};
use toolcert::{Certification, Invariant};

fn toolcert(args: &[&str]) -> (i32, String, String) {
    let out = Command::new(env!("CARGO_BIN_EXE_toolcert")).args(args).output().expect("toolcert runs");
    (
        out.status.code().unwrap_or(-1),
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

fn json(args: &[&str]) -> (i32, serde_json::Value) {
    let mut all = args.to_vec();
    all.extend(["--format", "json"]);
    let (code, out, err) = toolcert(&all);
    (code, serde_json::from_str(&out).unwrap_or_else(|e| panic!("{e}: {out}\n{err}")))
}

fn row<'a>(report: &'a serde_json::Value, id: &str) -> &'a serde_json::Value {
    report["invariants"]
        .as_array()
        .unwrap()
        .iter()
        .find(|r| r["id"] == id)
        .unwrap_or_else(|| panic!("no {id}"))
}

#[test]
fn the_main_job_exercises_and_passes_every_invariant_in_every_setting() {
    let (code, report) = json(&["certify", "--cases", "300"]);
    assert_eq!(code, 0, "{report}");
    assert_eq!(report["conforms"], true);
    assert_eq!(
        report["settings"].as_array().unwrap().len(),
        1 + 2 * toolcert::scenario::PROFILES.len(),
        "events, and wire and bytes in every server profile of every dialect"
    );
    for inv in Invariant::ALL {
        let r = row(&report, inv.id());
        if *inv == Invariant::HostilePollution {
            // A runtime without prototypes, never checked: only an adapter package's subject
            // reports `pollution` (node/ci.sh certifies the mutant that breaks it).
            assert_eq!(r["status"], "n/a", "{inv}: {r}");
            continue;
        }
        assert_eq!(r["status"], "pass", "{inv}: {r}");
        assert!(r["exercised"].as_u64().unwrap() > 0, "{inv}: {r}");
    }
}

#[test]
fn rules_no_case_could_break_are_not_exercised_never_pass() {
    let (code, report) = json(&["certify", "--level", "events", "--cases", "50"]);
    assert_eq!(code, 0);
    for inv in Invariant::ALL {
        let r = row(&report, inv.id());
        let below_events = inv.id().starts_with("WIRE-") || inv.id().starts_with("BYTES-");
        if below_events {
            assert_eq!(r["status"], "n/a", "{r}");
            assert_eq!(r["exercised"], 0, "{r}");
            assert!(r["not_exercised"].as_str().unwrap().contains("level"), "{r}");
        } else if *inv == Invariant::HostilePollution {
            assert_eq!(r["status"], "n/a", "{r}");
            assert!(r["not_exercised"].as_str().unwrap().contains("not checked"), "{r}");
        } else {
            assert_eq!(r["status"], "pass", "{r}");
        }
    }
    let (_, no_schema) = json(&["certify", "--level", "events", "--no-schema", "--cases", "50"]);
    assert_eq!(row(&no_schema, "ACC-SCHEMA")["status"], "n/a");
    let (_, text, _) = toolcert(&["certify", "--level", "events", "--no-schema", "--cases", "50"]);
    assert!(text.contains("n/a ACC-SCHEMA: the schema profile is off"), "{text}");

    let (_, junit, _) = toolcert(&["certify", "--level", "events", "--cases", "50", "--format", "junit"]);
    let wire_chat = junit.split("<testsuite name=\"WIRE-CHAT\"").nth(1).unwrap();
    let wire_chat = &wire_chat[..wire_chat.find("</testsuite>").unwrap()];
    assert_eq!(wire_chat.matches("<skipped message=\"not exercised (n/a)").count(), 2, "{wire_chat}");
}

#[test]
fn a_run_that_checks_nothing_is_a_usage_error() {
    let (code, _, err) = toolcert(&["certify", "--case", "zzznomatch"]);
    assert_eq!(code, 2, "{err}");
    assert!(err.contains("no case ran") && err.contains("zzznomatch"), "{err}");

    let (code, _, err) =
        toolcert(&["certify", "--level", "bytes", "--dialect", "anthropic", "--chat-index-zero"]);
    assert_eq!(code, 2, "{err}");
    assert!(err.contains("is a profile of openai-chat, not of anthropic"), "{err}");
    let (code, _, err) = toolcert(&["certify", "--level", "events", "--profile", "openai-chat/vllm"]);
    assert_eq!(code, 2, "{err}");
    assert!(err.contains("not at the events level"), "{err}");

    let dir = std::env::temp_dir().join(format!("toolcert-verdicts-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let empty = dir.join("empty.json");
    std::fs::write(&empty, r#"{"name": "empty", "streams": []}"#).unwrap();
    let (code, _, err) = toolcert(&["certify", "--scenario", empty.to_str().unwrap()]);
    assert_eq!(code, 2, "{err}");
    assert!(err.contains("no streams"), "{err}");
}

/// The reference, except that the factory made for the second case run panics.
fn crashes_on_second_run() -> impl toolcert::subject::Subject {
    use std::sync::atomic::{AtomicUsize, Ordering};
    use std::sync::Arc;
    struct Mine(toolcert::reference::Reference);
    impl Accumulator for Mine {
        fn on_event(&mut self, e: &Event<'_>, out: &mut Emit) -> Result<(), TurnError> {
            self.0.on_event(e, out)
        }
        fn finish(&mut self, end: StreamEnd, out: &mut Emit) -> Result<(), TurnError> {
            self.0.finish(end, out)
        }
    }
    let made = Arc::new(AtomicUsize::new(0));
    subject_fn("crashes-on-second-run", move |_: &StreamSpec<'_>| {
        assert!(made.fetch_add(1, Ordering::SeqCst) == 0, "the second run dies");
        Mine(toolcert::reference::Reference::new())
    })
}

#[test]
fn a_crash_in_the_delivered_whole_rerun_is_a_crash() {
    let run = Certification {
        filter: Some("named/final/create-ticket-max-tokens".into()),
        ..Certification::default()
    };
    let report = run.run(&crashes_on_second_run());
    assert_eq!(
        report.status_of(Invariant::SubjectCrash).unwrap().status,
        Status::Fail,
        "{}",
        report.to_text(3)
    );
    assert_eq!(report.status_of(Invariant::AccChunking).unwrap().status, Status::NotExercised);
    assert_eq!(report.verdict(), toolcert::runner::Verdict::Crashed);
    let crash = &report.failures[0].violations[0];
    assert!(crash.observed.contains("delivered-whole"), "{crash}");
}

/// An exec subject (the Python template behind a proxy) that exits on its second `run`.
#[test]
fn an_exec_subject_that_dies_in_a_rerun_exits_3() {
    let python = std::env::var("PYTHON").unwrap_or_else(|_| "python3".into());
    if Command::new(&python).arg("--version").output().is_err() {
        eprintln!("python3 missing: skipped (CI installs it)");
        return;
    }
    let root = env!("CARGO_MANIFEST_DIR");
    let proxy = format!("{root}/tests/data/exit-on-second-run.py");
    let subject = format!("exec:{python} {proxy} {python} {root}/examples/adapters/python/adapter.py");
    let (code, out, err) = toolcert(&[
        "certify",
        "--subject",
        &subject,
        "--level",
        "events",
        "--case",
        "named/final/create-ticket-max-tokens",
    ]);
    assert_eq!(code, 3, "{out}\n{err}");
    assert!(out.contains("SUBJECT-CRASH") && out.contains("delivered-whole"), "{out}");
}

#[test]
fn findings_are_few_and_keep_their_ids_across_seeds() {
    let ids = |seed: &str| {
        let (code, report) =
            json(&["certify", "--subject", "builtin:mutant/name-keyed", "--cases", "2000", "--seed", seed]);
        assert_eq!(code, 1);
        let findings = report["findings"].as_array().unwrap().clone();
        assert!(!findings.is_empty() && findings.len() <= 16, "{} findings", findings.len());
        for f in &findings {
            assert!(
                f["cases"].as_u64().unwrap() > 0 && f["replay"].as_str().unwrap().starts_with("toolcert ")
            );
        }
        let merged =
            findings.iter().find(|f| f["title"].as_str().unwrap().contains("same tool merged")).unwrap();
        assert!(merged["reproducer"]["scenario"].is_object(), "{merged}");
        findings.iter().map(|f| f["id"].as_str().unwrap().to_string()).collect::<Vec<_>>()
    };
    let (one, two) = (ids("1"), ids("2"));
    let shared = one.iter().filter(|id| two.contains(id)).count();
    assert!(shared * 2 > one.len(), "most findings keep their id: {one:?} vs {two:?}");
    assert!(
        one.iter().any(|id| id.starts_with("ACC-IDENTITY#"))
            && two.iter().any(|id| id.starts_with("ACC-IDENTITY#"))
    );
}

#[test]
fn shrinking_keeps_the_signature_it_started_from() {
    let (_, report) = json(&["certify", "--subject", "builtin:mutant/name-keyed", "--cases", "500"]);
    for f in report["findings"].as_array().unwrap() {
        let Some(rep) = f.get("reproducer") else { continue };
        for v in rep["violations"].as_array().unwrap() {
            assert_eq!(v["invariant"], f["invariant"], "{f}");
            assert_eq!(v["grade"], f["grade"], "{f}");
            assert_eq!(v["kind"], f["kind"], "{f}");
        }
    }
}

#[test]
fn every_job_count_gives_the_same_report() {
    let run = |jobs: &str| {
        let (code, out, err) = toolcert(&[
            "certify",
            "--subject",
            "builtin:mutant/name-keyed",
            "--cases",
            "600",
            "--jobs",
            jobs,
            "--format",
            "jsonl",
        ]);
        assert_eq!(code, 1, "{err}");
        out
    };
    let one = run("1");
    assert!(one == run("2"), "--jobs 2 wrote another report than --jobs 1");
    assert!(one == run("3"));
}
