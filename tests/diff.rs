//! `toolcert diff OLD NEW` on reports the CLI writes: the reference accumulator (no bug) and
//! two mutants of the zoo, each with one bug of its own. What is new, fixed and kept follows
//! from which subject has which bug: each side's bug ids are read from its own report's
//! footer, and the invariant that must catch each mutant from the zoo, never from the diff.

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::OnceLock;

use serde_json::Value;

/// A mutant that dispatches truncated turns (tier 3, endings) and one that doubles text
/// (tiers 1 and 5): two different bugs at the events level.
const A: &str = "ignores-truncation";
const B: &str = "text-doubled";

fn toolcert(args: &[&str]) -> (i32, String, String) {
    let out = Command::new(env!("CARGO_BIN_EXE_toolcert")).args(args).output().expect("toolcert runs");
    (
        out.status.code().unwrap_or(-1),
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

fn dir() -> PathBuf {
    let d = Path::new(env!("CARGO_TARGET_TMPDIR")).join(format!("diff-{}", std::process::id()));
    std::fs::create_dir_all(&d).unwrap();
    d
}

/// `certify --format jsonl` of `subject` at the events level, written once per test run.
fn report(subject: &str) -> PathBuf {
    static REPORTS: OnceLock<(PathBuf, PathBuf, PathBuf)> = OnceLock::new();
    let (r, a, b) = REPORTS.get_or_init(|| {
        let write = |subject: &str, name: &str| {
            let (code, out, err) = toolcert(&[
                "certify",
                "--subject",
                subject,
                "--level",
                "events",
                "--cases",
                "20",
                "--format",
                "jsonl",
            ]);
            assert!(code == 0 || code == 1, "{subject}: {err}");
            let path = dir().join(name);
            std::fs::write(&path, out).unwrap();
            path
        };
        (
            write("builtin:reference", "reference.jsonl"),
            write(&format!("builtin:mutant/{A}"), "a.jsonl"),
            write(&format!("builtin:mutant/{B}"), "b.jsonl"),
        )
    });
    match subject {
        "reference" => r.clone(),
        A => a.clone(),
        B => b.clone(),
        _ => unreachable!("{subject}"),
    }
}

/// The bug ids a report's footer lists.
fn bugs_in(path: &Path) -> BTreeSet<String> {
    let text = std::fs::read_to_string(path).unwrap();
    let footer: Value = serde_json::from_str(text.lines().last().unwrap()).unwrap();
    assert_eq!(footer["record"], "footer");
    footer["bugs"].as_array().into_iter().flatten().map(|b| b["id"].as_str().unwrap().to_string()).collect()
}

/// The invariants the zoo says must catch mutant `name`.
fn expected(name: &str) -> BTreeSet<String> {
    let m = toolcert::mutants::zoo().into_iter().find(|m| m.name == name).expect("a mutant of the zoo");
    assert_eq!(m.level, toolcert::subject::Level::Events, "{name} is certified at the events level here");
    m.expected.iter().map(|i| i.id().to_string()).collect()
}

fn diff_json(old: &Path, new: &Path) -> (i32, Value) {
    let (code, out, err) =
        toolcert(&["diff", "--format", "json", old.to_str().unwrap(), new.to_str().unwrap()]);
    assert!(code == 0 || code == 1, "{err}");
    (code, serde_json::from_str(&out).unwrap_or_else(|e| panic!("{e}: {out}")))
}

fn ids(v: &Value, key: &str) -> BTreeSet<String> {
    v[key].as_array().unwrap().iter().map(|b| b["id"].as_str().unwrap().to_string()).collect()
}

fn invariants(v: &Value, key: &str) -> BTreeSet<String> {
    v[key].as_array().unwrap().iter().map(|b| b["invariant"].as_str().unwrap().to_string()).collect()
}

#[test]
fn a_mutant_after_the_reference_brings_new_bugs_and_before_it_they_are_fixed() {
    let (reference, a) = (report("reference"), report(A));
    let bugs = bugs_in(&a);
    assert!(!bugs.is_empty(), "the mutant has a bug");
    assert!(bugs_in(&reference).is_empty(), "the reference has none");

    let (code, d) = diff_json(&reference, &a);
    assert_eq!(code, 1, "new bugs exit 1");
    let s = &d["subjects"][0];
    assert_eq!(d["subjects"].as_array().unwrap().len(), 1);
    assert_eq!(ids(s, "new"), bugs);
    assert!(ids(s, "fixed").is_empty() && s["kept"].as_array().unwrap().is_empty());
    assert!(
        !invariants(s, "new").is_disjoint(&expected(A)),
        "{:?} vs {:?}",
        invariants(s, "new"),
        expected(A)
    );
    for b in s["new"].as_array().unwrap() {
        let (inv, title, replay) =
            (b["invariant"].as_str().unwrap(), b["title"].as_str().unwrap(), b["replay"].as_str().unwrap());
        assert!(title.starts_with(inv), "{title}");
        assert!(
            replay.starts_with("toolcert certify") && replay.contains(&format!("builtin:mutant/{A}")),
            "{replay}"
        );
        assert_eq!(b["columns"], serde_json::json!(["events"]));
    }
    // A dispatched truncated turn is tier 3's (docs/SPEC.md, "Tiers"); the reference passes it.
    let (_, text, _) = toolcert(&["diff", reference.to_str().unwrap(), a.to_str().unwrap()]);
    assert!(text.contains("events: tier 3 endings: pass -> fail"), "{text}");

    let (code, d) = diff_json(&a, &reference);
    assert_eq!(code, 0, "only fixed bugs exit 0");
    let s = &d["subjects"][0];
    assert_eq!(ids(s, "fixed"), bugs);
    assert!(ids(s, "new").is_empty());
    let (_, text, _) = toolcert(&["diff", a.to_str().unwrap(), reference.to_str().unwrap()]);
    assert!(text.contains("events: tier 3 endings: fail -> pass"), "{text}");
}

#[test]
fn between_two_mutants_one_bug_is_fixed_and_the_other_new_from_files_or_directories() {
    let (a, b) = (report(A), report(B));
    let (in_a, in_b) = (bugs_in(&a), bugs_in(&b));
    let want_new: BTreeSet<String> = in_b.difference(&in_a).cloned().collect();
    let want_fixed: BTreeSet<String> = in_a.difference(&in_b).cloned().collect();
    let want_kept: BTreeSet<String> = in_a.intersection(&in_b).cloned().collect();
    assert!(!want_new.is_empty() && !want_fixed.is_empty(), "two different bugs");

    // The same reports as two directories of reports.
    let (da, db) = (dir().join("old"), dir().join("new"));
    for (d, f) in [(&da, &a), (&db, &b)] {
        std::fs::create_dir_all(d).unwrap();
        std::fs::copy(f, d.join("report.jsonl")).unwrap();
        // Not a report, and skipped: a directory holds reports in *.jsonl files only.
        std::fs::write(d.join("notes.md"), "not a report").unwrap();
    }
    for (old, new) in [(&a, &b), (&da, &db)] {
        let (code, d) = diff_json(old, new);
        assert_eq!(code, 1);
        let s = &d["subjects"][0];
        assert_eq!(ids(s, "new"), want_new);
        assert_eq!(ids(s, "fixed"), want_fixed);
        assert_eq!(ids(s, "kept"), want_kept);
        assert!(!invariants(s, "new").is_disjoint(&expected(B)));
        assert!(!invariants(s, "fixed").is_disjoint(&expected(A)));
        // Each side names its own subject: the two are compared as releases of one another.
        let subject = s["subject"].as_str().unwrap();
        assert!(subject.contains(A) && subject.contains(B), "{subject}");
    }
}

#[test]
fn identical_reports_change_nothing_and_exit_0() {
    let b = report(B);
    let (code, d) = diff_json(&b, &b);
    assert_eq!(code, 0);
    let s = &d["subjects"][0];
    assert!(ids(s, "new").is_empty() && ids(s, "fixed").is_empty());
    assert_eq!(ids(s, "kept"), bugs_in(&b));
    assert!(s["columns"].as_array().unwrap().iter().all(|c| c["tiers"].as_array().unwrap().is_empty()));
    assert!(s["columns"].as_array().unwrap().iter().all(|c| c["warnings"].as_array().unwrap().is_empty()));
    let (code, text, err) = toolcert(&["diff", b.to_str().unwrap(), b.to_str().unwrap()]);
    assert_eq!(code, 0, "{err}");
    assert!(text.contains("tier verdicts changed (0): none"), "{text}");
    assert!(!text.contains("warning"), "{text}");
}

#[test]
fn a_bad_report_exits_2_naming_the_file_and_what_is_wrong() {
    let good = report(A);
    let text = std::fs::read_to_string(&good).unwrap();
    let d = dir().join("bad");
    std::fs::create_dir_all(d.join("empty")).unwrap();
    let garbage = d.join("garbage.jsonl");
    std::fs::write(&garbage, "{\"record\":\"header\" this is not JSON\n").unwrap();
    let cut = d.join("cut.jsonl");
    std::fs::write(&cut, &text[..text.rfind("{\"record\":\"footer\"").unwrap()]).unwrap();
    let missing = d.join("missing.jsonl");
    let empty = d.join("empty");
    for (bad, what) in [
        (&garbage, "line 1"),
        (&cut, "no footer: the report is truncated"),
        (&missing, "cannot read"),
        (&empty, "no JSONL reports"),
    ] {
        let name = bad.to_str().unwrap();
        for args in [["diff", name, good.to_str().unwrap()], ["diff", good.to_str().unwrap(), name]] {
            let (code, out, err) = toolcert(&args);
            assert_eq!(code, 2, "{args:?}: {err}");
            assert_eq!(out, "");
            let first = err.lines().next().unwrap_or_default();
            assert!(first.contains(name) && first.contains(what), "{args:?}: {err}");
            assert!(!err.contains("panicked"), "{err}");
        }
    }
}

#[test]
fn reports_of_no_common_setting_are_bad_input() {
    let (code, out, err) = toolcert(&[
        "certify",
        "--level",
        "wire",
        "--dialect",
        "anthropic",
        "--cases",
        "2",
        "--format",
        "jsonl",
    ]);
    assert_eq!(code, 0, "{err}");
    let wire = dir().join("wire.jsonl");
    std::fs::write(&wire, out).unwrap();
    let (code, _, err) = toolcert(&["diff", report("reference").to_str().unwrap(), wire.to_str().unwrap()]);
    assert_eq!(code, 2, "{err}");
    assert!(err.contains("no subject and setting in common") && err.contains("wire (anthropic)"), "{err}");
}

#[test]
fn another_suite_is_a_warning_that_a_missing_bug_may_not_have_been_run() {
    let a = report(A);
    let text = std::fs::read_to_string(&a).unwrap();
    let header: Value = serde_json::from_str(text.lines().next().unwrap()).unwrap();
    let digest = header["suite"]["digest"].as_str().unwrap();
    let other = dir().join("other-suite.jsonl");
    std::fs::write(&other, text.replacen(digest, "sha256:0000000000000000000000000000000000000000", 1))
        .unwrap();
    let (code, out, err) = toolcert(&["diff", other.to_str().unwrap(), report(B).to_str().unwrap()]);
    assert_eq!(code, 1, "{err}");
    let warning = out.lines().find(|l| l.starts_with("warning:")).unwrap_or_else(|| panic!("{out}"));
    assert!(warning.contains("different suites") && warning.contains("may not have been run"), "{warning}");
    // JSON keeps stdout a document and says it on stderr too.
    let (_, _, err) =
        toolcert(&["diff", "--format", "json", other.to_str().unwrap(), report(B).to_str().unwrap()]);
    assert!(err.contains("different suites"), "{err}");
}

#[test]
fn markdown_is_a_release_note_section_with_each_new_bug_and_its_replay() {
    let (reference, a) = (report("reference"), report(A));
    let (code, md, err) =
        toolcert(&["diff", "--format", "markdown", reference.to_str().unwrap(), a.to_str().unwrap()]);
    assert_eq!(code, 1, "{err}");
    let bugs = bugs_in(&a);
    assert!(md.starts_with("## "), "{md}");
    assert!(md.contains(&format!("### New bugs ({})", bugs.len())), "{md}");
    for id in &bugs {
        let line = md.lines().find(|l| l.contains(id.as_str())).unwrap_or_else(|| panic!("{id}: {md}"));
        assert!(line.starts_with("- **BUG-"), "{line}");
    }
    assert_eq!(md.matches("  - replay: `toolcert certify").count(), bugs.len(), "{md}");
    assert!(md.contains("| events | 3 endings | pass | fail |"), "{md}");
}

#[test]
fn help_documents_the_exit_codes() {
    let (code, out, _) = toolcert(&["diff", "--help"]);
    assert_eq!(code, 0);
    for line in ["0  no new bug", "1  new bugs", "2  bad input"] {
        assert!(out.contains(line), "{line}: {out}");
    }
}

#[test]
fn reports_written_before_bugs_get_theirs_from_the_records() {
    let (reference, b) = (report("reference"), report(B));
    let want = bugs_in(&b);
    // A JSONL report whose footer carries no bugs (nor the tiers' bug lists), as written
    // before them: its bugs are rebuilt from its records.
    let text = std::fs::read_to_string(&b).unwrap();
    let (body, last) = text.trim_end().rsplit_once('\n').unwrap();
    let mut footer: Value = serde_json::from_str(last).unwrap();
    footer.as_object_mut().unwrap().remove("bugs");
    for t in footer["tiers"].as_array_mut().unwrap() {
        t.as_object_mut().unwrap().remove("bugs");
    }
    let older = dir().join("before-bugs.jsonl");
    std::fs::write(&older, format!("{body}\n{footer}\n")).unwrap();
    // A JSON summary without bugs: grouped from its findings and their reproducers.
    let (_, summary, err) = toolcert(&[
        "certify",
        "--subject",
        &format!("builtin:mutant/{B}"),
        "--level",
        "events",
        "--cases",
        "20",
        "--format",
        "json",
    ]);
    let mut summary: Value = serde_json::from_str(&summary).unwrap_or_else(|e| panic!("{e}: {err}"));
    assert!(!summary["findings"].as_array().unwrap().is_empty());
    summary.as_object_mut().unwrap().remove("bugs");
    let older_json = dir().join("before-bugs.json");
    std::fs::write(&older_json, summary.to_string()).unwrap();
    for new in [&older, &older_json] {
        let (code, d) = diff_json(&reference, new);
        assert_eq!(code, 1, "{}", new.display());
        assert_eq!(ids(&d["subjects"][0], "new"), want, "{}", new.display());
    }
}
