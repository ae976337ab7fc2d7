//! Tests of the report and what is made of it: JSONL, merge, baseline, verdict, formats,
//! matrix.

use toolcert_oracle::{Grade, Invariant};
use toolcert_subject::{subject_fn, Accumulator, Emit, Event, StreamEnd, StreamSpec, TurnError};

use crate::baseline::{Baseline, Entry};
use crate::jsonl::{from_jsonl, read_report, to_jsonl};
use crate::matrix::Matrix;
use crate::report::{CaseStatus, Report, Verdict};
use crate::{merge, Certification, Shard};

/// Reports nothing at all: every announced call goes unaccounted for.
struct Silent;

impl Accumulator for Silent {
    fn on_event(&mut self, _: &Event<'_>, _: &mut Emit) -> Result<(), TurnError> {
        Ok(())
    }
    fn finish(&mut self, _: StreamEnd, _: &mut Emit) -> Result<(), TurnError> {
        Ok(())
    }
}

/// Panics on the first event.
struct Panics;

impl Accumulator for Panics {
    fn on_event(&mut self, _: &Event<'_>, _: &mut Emit) -> Result<(), TurnError> {
        panic!("boom")
    }
    fn finish(&mut self, _: StreamEnd, _: &mut Emit) -> Result<(), TurnError> {
        Ok(())
    }
}

fn run(c: &Certification) -> Report {
    c.run(&subject_fn("silent", |_: &StreamSpec<'_>| Silent))
}

fn silent(cases: usize, seed: u64) -> Report {
    run(&Certification { cases, seed, ..Certification::default() })
}

fn json(r: &Report) -> String {
    serde_json::to_string_pretty(r).unwrap()
}

#[test]
fn jsonl_rebuilds_the_report_exactly() {
    let r = silent(40, 3);
    assert!(!r.conforms && r.more_failures > 0, "the keep limit is exercised");
    let text = to_jsonl(&r).unwrap();
    let lines: Vec<&str> = text.lines().collect();
    assert!(lines[0].starts_with(r#"{"record":"header","format":1,"tool":"toolcert""#), "{}", lines[0]);
    assert!(lines.last().unwrap().starts_with(r#"{"record":"footer""#));
    assert_eq!(lines.len(), r.records.len() + 2, "one record per case");
    let back = from_jsonl(&text).unwrap();
    assert_eq!(json(&back), json(&r));
    assert_eq!(back.records, r.records);
    assert_eq!(back.coverage_text, r.coverage_text);
    assert_eq!(to_jsonl(&back).unwrap(), text, "written again, the same bytes");
    // read_report tells JSONL from the JSON summary.
    assert_eq!(json(&read_report(&text).unwrap()), json(&r));
    let summary = read_report(&json(&r)).unwrap();
    assert!(summary.records.is_empty() && summary.cases == r.cases);
    assert!(to_jsonl(&summary).is_err(), "a summary has no records to write");
}

#[test]
fn a_damaged_jsonl_report_is_refused_with_a_reason() {
    let text = to_jsonl(&silent(5, 1)).unwrap();
    let without_footer: String =
        text.lines().take(text.lines().count() - 1).map(|l| format!("{l}\n")).collect();
    assert!(from_jsonl(&without_footer).unwrap_err().contains("no footer"));
    let without_header: String = text.lines().skip(1).map(|l| format!("{l}\n")).collect();
    assert!(from_jsonl(&without_header).unwrap_err().contains("header"));
    let one_case_less: String =
        text.lines().enumerate().filter(|(i, _)| *i != 1).map(|(_, l)| format!("{l}\n")).collect();
    assert!(from_jsonl(&one_case_less).unwrap_err().contains("disagree"));
    let garbage = text.replacen(r#""record":"case""#, r#""record":"cas""#, 1);
    assert!(from_jsonl(&garbage).unwrap_err().starts_with("line 2"));
    let future = text.replacen(r#""format":1"#, r#""format":2"#, 1);
    assert!(from_jsonl(&future).unwrap_err().contains("not understood"));
}

#[test]
fn merging_the_shards_gives_the_unsharded_report() {
    let whole = silent(90, 7);
    assert!(whole.more_failures > 0, "failures not kept in full are merged too");
    let shard = |k| {
        run(&Certification { cases: 90, seed: 7, shard: Shard { index: k, count: 3 }, ..Default::default() })
    };
    let shards = [shard(1), shard(2), shard(3)];
    assert_eq!(shards[1].shard.as_deref(), Some("2/3"));
    assert_eq!(shards.iter().map(|s| s.cases).sum::<usize>(), whole.cases);
    // Through JSONL, in any order.
    let read: Vec<Report> =
        [2, 0, 1].iter().map(|&i| from_jsonl(&to_jsonl(&shards[i]).unwrap()).unwrap()).collect();
    let merged = merge(read).unwrap();
    assert_eq!(json(&merged), json(&whole));
    assert_eq!(merged.records, whole.records);
    // Two shards of three are a partial report.
    let partial = merge(vec![shards[0].clone(), shards[2].clone()]).unwrap();
    assert_eq!(partial.shard.as_deref(), Some("1+3/3"));
}

#[test]
fn merging_runs_of_two_seeds_counts_each_case_once() {
    let a = silent(10, 1);
    let b = silent(10, 2);
    let merged = merge(vec![a.clone(), b.clone(), a.clone()]).unwrap();
    assert_eq!(merged.named_cases, a.named_cases, "named cases are the same cases");
    assert_eq!(merged.generated_cases, 20);
    assert_eq!(merged.seeds, vec![1, 2]);
    // JSON summaries add up.
    let summaries: Vec<Report> = [&a, &b].iter().map(|r| read_report(&json(r)).unwrap()).collect();
    let added = merge(summaries).unwrap();
    assert_eq!(added.cases, a.cases + b.cases);
}

#[test]
fn reports_of_different_settings_do_not_merge() {
    let must = run(&Certification { grade: Grade::Must, ..Default::default() });
    let err = merge(vec![silent(0, 1), must]).unwrap_err();
    assert!(err.contains("grade must"), "{err}");
}

#[test]
fn the_verdict_has_one_meaning_per_outcome() {
    let empty = run(&Certification { named: false, ..Default::default() });
    assert_eq!(empty.verdict(), Verdict::Conforms);
    let failing = silent(5, 1);
    assert_eq!(failing.verdict(), Verdict::Violations);
    assert_eq!(failing.verdict().code(), 1);
    let crashing = Certification { cases: 5, ..Default::default() }
        .run(&subject_fn("panics", |_: &StreamSpec<'_>| Panics));
    assert!(crashing.invariants.iter().all(|i| (i.id == Invariant::SubjectCrash) == (i.failures > 0)));
    assert_eq!(crashing.verdict(), Verdict::Crashed);
    assert_eq!(crashing.verdict().code(), 3);
}

#[test]
fn a_baseline_passes_listed_failures_and_fails_unlisted_and_stale_ones() {
    let mut r = silent(200, 4);
    let baseline = Baseline::from_report(&r);
    assert!(!baseline.expected_failures.is_empty());
    let back = Baseline::parse(&baseline.to_json()).unwrap();
    assert_eq!(back, baseline);

    r.baseline = Some(baseline.check(&r));
    assert_eq!(r.verdict(), Verdict::Conforms, "{:?}", r.baseline);

    // An unlisted failure fails the run.
    let mut fewer = baseline.clone();
    let dropped = fewer.expected_failures.remove(0);
    r.baseline = Some(fewer.check(&r));
    assert_eq!(r.verdict(), Verdict::Violations);
    assert_eq!(r.baseline.as_ref().unwrap().unexpected, vec![Entry { reason: None, ..dropped }]);

    // A listed case that passes is stale; one this run did not run is neither.
    let passing =
        r.records.iter().find(|c| c.status == CaseStatus::Pass).expect("some case passes").case.clone();
    let mut more = baseline.clone();
    more.expected_failures.push(Entry { case: passing, invariant: None, reason: Some("fixed since".into()) });
    more.expected_failures.push(Entry { case: "gen/4/999".into(), invariant: None, reason: None });
    r.baseline = Some(more.check(&r));
    assert_eq!(r.verdict(), Verdict::StaleBaseline);
    assert_eq!(r.verdict().code(), 4);
    let check = r.baseline.as_ref().unwrap();
    assert_eq!((check.stale.len(), check.not_run.len()), (1, 1));
    assert!(r.to_text(0).contains("is listed as an expected failure but passes"));

    // A case-only entry covers every invariant the case breaks.
    let by_case = Baseline {
        expected_failures: r
            .failing_cases()
            .iter()
            .map(|(c, _)| Entry { case: c.to_string(), invariant: None, reason: None })
            .collect(),
        ..baseline
    };
    r.baseline = Some(by_case.check(&r));
    assert_eq!(r.verdict(), Verdict::Conforms);
}

#[test]
fn a_bad_baseline_file_says_what_is_wrong() {
    let unknown =
        r#"{"toolcert_baseline": 1, "expected_failures": [{"case": "x", "invariant": "ACC-NOPE"}]}"#;
    assert!(Baseline::parse(unknown).unwrap_err().contains("ACC-NOPE"));
    let typo = r#"{"toolcert_baseline": 1, "expected_failures": [{"case": "x", "invarient": "ACC-TEXT"}]}"#;
    assert!(Baseline::parse(typo).unwrap_err().contains("invarient"));
    let future = r#"{"toolcert_baseline": 2, "expected_failures": []}"#;
    assert!(Baseline::parse(future).unwrap_err().contains("format 2"));
}

#[test]
fn the_matrix_prunes_rows_everyone_passes() {
    let failing = silent(10, 1);
    let passing = run(&Certification { named: false, ..Default::default() });
    let m = Matrix::build(vec![failing.clone(), passing, failing]).unwrap();
    assert_eq!(m.columns.len(), 1, "one implementation, one setting: merged into one column");
    let md = m.to_markdown(false);
    assert!(md.contains("| ACC-ORDER |"), "{md}");
    let pruned = m.to_markdown(true);
    assert!(!pruned.contains("| ACC-ORDER |") && pruned.contains("| ACC-ACCOUNT | must ❌"), "{pruned}");
    let html = m.to_html(true);
    assert!(html.starts_with("<!DOCTYPE html>") && html.contains("<style>") && html.ends_with("</html>\n"));
    assert!(!html.contains("src=") && !html.contains("href=") && !html.contains("@import"), "self-contained");
    assert!(html.contains("class=\"swatch must\""), "a legend");
}

#[test]
fn markdown_fences_cannot_be_closed_by_the_content() {
    let block = crate::formats::md_code("text", "a ``` b");
    assert!(block.starts_with("````text\n") && block.ends_with("\n````\n"), "{block}");
    assert_eq!(crate::formats::md_cell("a|b\nc"), "a\\|b c");
}

#[test]
fn xml_escaping_keeps_documents_well_formed() {
    let e = crate::formats::escape_xml("<a href=\"x\">&'\u{1}\n");
    assert_eq!(e, "&lt;a href=&quot;x&quot;&gt;&amp;&apos;\\u{1}&#10;");
}

#[test]
fn junit_and_markdown_name_every_failing_invariant() {
    let r = silent(10, 2);
    let xml = crate::formats::to_junit(&r);
    assert!(xml.contains("<testsuite name=\"ACC-ACCOUNT\""));
    assert!(xml.contains("<failure message=") && xml.contains("replay: toolcert certify --subject silent"));
    let md = crate::formats::to_markdown(&r, 2);
    assert!(md.contains("| ACC-ACCOUNT | ❌ fail |") && md.contains("```text\n"), "{md}");
}

/// A rule none of whose failing generated cases was kept in full (the run's shrinking budget
/// spent on other findings) still gets one, shrunk: every failing rule shows a reproducer.
#[test]
fn every_failing_rule_keeps_a_failure_in_full() {
    let c = Certification { cases: 24, named: false, ..Certification::default() };
    let subject = subject_fn("silent", |_: &StreamSpec<'_>| Silent);
    let mut report = c.run(&subject);
    let inv = report.findings.first().expect("a silent accumulator fails").invariant;
    // As if the budget had run out before any case breaking `inv` came.
    for r in &mut report.records {
        if r.failure.as_ref().is_some_and(|f| f.violations.iter().any(|v| v.invariant == inv)) {
            r.failure = None;
        }
    }
    report.reproduced = report
        .records
        .iter()
        .filter_map(|r| r.failure.as_ref())
        .flat_map(|f| crate::Signature::all(&f.violations))
        .collect();
    report.finish();
    assert!(report.findings.iter().filter(|f| f.invariant == inv).all(|f| f.reproducer.is_none()));
    c.keep_one_per_rule(&subject, &toolcert_gen::case_strategy(&c.gen_config()), &mut report);
    report.finish();
    let kept = report.findings.iter().find(|f| f.invariant == inv && f.reproducer.is_some());
    let kept = kept.unwrap_or_else(|| panic!("{inv} has no failure in full:\n{}", report.to_text(9)));
    assert!(kept.reproducer.as_ref().unwrap().case.starts_with("gen/1/"));
}

#[test]
fn the_matrix_refuses_reports_of_one_setting_from_different_suites() {
    let old = silent(10, 1);
    let mut new = old.clone();
    new.subject = "another".into();
    new.suite.digest = format!("sha256:{}", "0".repeat(64));
    let refused = Matrix::build_checked(vec![old.clone(), new.clone()], false).unwrap_err();
    assert!(refused.contains("different suites") && refused.contains("--allow-mixed-suites"), "{refused}");
    let m = Matrix::build_checked(vec![old.clone(), new], true).unwrap();
    assert_eq!(m.columns.len(), 2);
    assert!(m.to_markdown(false).contains("Warning: columns of one setting were judged by different suites"));
    assert!(m.to_html(false).contains("judged by different suites"));
    // One suite: no warning.
    let same = Matrix::build_checked(vec![old.clone(), old], false).unwrap();
    assert!(same.mixed_suites.is_empty() && !same.to_markdown(false).contains("Warning"));
}

#[test]
fn matrix_columns_are_named_by_implementation_version_and_policy() {
    let mut r = silent(10, 1);
    r.subject = "exec:python adapter.py --policy documented".into();
    r.subject_metadata.insert(
        "implementation".into(),
        serde_json::json!({"name": "anthropic-python", "version": "anthropic==2.14.0", "policy": "documented"}),
    );
    let md = Matrix::build_checked(vec![r], false).unwrap().to_markdown(false);
    assert!(md.contains("anthropic-python anthropic==2.14.0 · documented"), "{md}");
    assert!(!md.contains("exec:python"), "{md}");
}
