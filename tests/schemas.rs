//! The report formats' JSON Schemas (`docs/schemas/report.schema.json`,
//! `report-record.schema.json`, `baseline.schema.json`) against reports these tests produce:
//! failing and conforming runs, every setting of the reference, a shard, a merge, a baseline
//! and a run judged against one. Each schema also refuses a report broken on purpose.

use serde_json::Value;
use toolcert::runner::baseline::Baseline;
use toolcert::runner::{jsonl, Combined, Shard};
use toolcert::subject::Subject;
use toolcert::{Certification, Report};

fn schema(name: &str) -> Value {
    let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("docs/schemas")
        .join(format!("{name}.schema.json"));
    let text = std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    serde_json::from_str(&text).unwrap_or_else(|e| panic!("{}: {e}", path.display()))
}

fn validator(name: &str) -> jsonschema::Validator {
    jsonschema::validator_for(&schema(name))
        .unwrap_or_else(|e| panic!("{name}.schema.json does not compile: {e}"))
}

/// Every error of `value` against `v`, one per line, or nothing.
fn errors(v: &jsonschema::Validator, value: &Value) -> String {
    v.iter_errors(value).map(|e| format!("  at {}: {e}", e.instance_path())).collect::<Vec<_>>().join("\n")
}

fn assert_valid(v: &jsonschema::Validator, what: &str, value: &Value) {
    let errs = errors(v, value);
    assert!(errs.is_empty(), "{what} does not match its schema:\n{errs}");
}

fn run(subject: &dyn Subject, c: Certification) -> Report {
    c.run(subject)
}

fn mutant(name: &str) -> Box<dyn Subject> {
    toolcert::subject_by_name(&format!("builtin:mutant/{name}")).expect("a zoo mutant")
}

/// Reports of several kinds: failing, conforming, below the events level, a shard (made once).
fn reports() -> &'static [(String, Report)] {
    static REPORTS: std::sync::OnceLock<Vec<(String, Report)>> = std::sync::OnceLock::new();
    REPORTS.get_or_init(make_reports)
}

fn make_reports() -> Vec<(String, Report)> {
    let reference = toolcert::reference::ReferenceSubject;
    let mut out = vec![
        (
            "a failing run".to_string(),
            run(&*mutant("name-keyed"), Certification { cases: 30, ..Default::default() }),
        ),
        ("a conforming run".into(), run(&reference, Certification { cases: 20, ..Default::default() })),
        (
            "a shard without the schema profile".into(),
            run(
                &reference,
                Certification {
                    cases: 20,
                    shard: "2/3".parse::<Shard>().unwrap(),
                    profile: toolcert::Profile { schema: false, ..Default::default() },
                    ..Default::default()
                },
            ),
        ),
    ];
    // One failing and one conforming setting below the events level.
    for (name, subject) in
        [("wire mutant", mutant("chat-keyed-by-id")), ("reference", Box::new(reference) as Box<dyn Subject>)]
    {
        if let Some(&(level, speech)) =
            subject.settings().iter().rev().find(|(l, _)| *l != toolcert::subject::Level::Events)
        {
            let r = run(&*subject, Certification { cases: 20, level, speech, ..Default::default() });
            out.push((format!("{name} at {}", r.setting_label()), r));
        }
    }
    out
}

#[test]
fn json_summaries_match_the_report_schema() {
    let v = validator("report");
    let reports = reports();
    assert!(reports.iter().any(|(_, r)| !r.conforms) && reports.iter().any(|(_, r)| r.conforms));
    for (what, r) in reports {
        assert_valid(&v, what, &serde_json::to_value(r).unwrap());
    }
    // Over every setting of the reference, as `certify` prints by default.
    let reference = toolcert::reference::ReferenceSubject;
    let settings: Vec<Report> = reference
        .settings()
        .into_iter()
        .map(|(level, speech)| {
            run(&reference, Certification { cases: 3, level, speech, ..Default::default() })
        })
        .collect();
    // Every server profile of every dialect has its setting, named in its report.
    for p in toolcert::scenario::PROFILES.iter().filter(|p| !p.quirks.is_plain()) {
        assert!(
            settings.iter().any(|r| r.dialect == Some(p.dialect) && r.profile.as_deref() == Some(p.name)),
            "{}",
            p.id()
        );
    }
    assert_valid(&v, "a combined report", &serde_json::to_value(Combined::new(settings)).unwrap());
    // And a failing subject over its settings.
    let m = mutant("name-keyed");
    let failing: Vec<Report> = m
        .settings()
        .into_iter()
        .map(|(level, speech)| run(&*m, Certification { cases: 10, level, speech, ..Default::default() }))
        .collect();
    assert_valid(&v, "a failing combined report", &serde_json::to_value(Combined::new(failing)).unwrap());
}

#[test]
fn jsonl_records_match_the_record_schema() {
    let v = validator("report-record");
    for (what, r) in reports() {
        let text = jsonl::to_jsonl(r).unwrap();
        for (n, line) in text.lines().enumerate() {
            let value: Value = serde_json::from_str(line).unwrap();
            assert_valid(&v, &format!("{what}, line {}", n + 1), &value);
        }
    }
    // Shards merged short of the whole run, and runs of two seeds merged.
    let m = mutant("name-keyed");
    let shard = |k: usize, seed: u64| {
        let shard = format!("{k}/3").parse::<Shard>().unwrap();
        run(&*m, Certification { cases: 12, seed, shard, ..Default::default() })
    };
    let partial = toolcert::runner::merge(vec![shard(1, 1), shard(3, 1)]).unwrap();
    let seeds = toolcert::runner::merge(vec![
        run(&*m, Certification { cases: 10, seed: 1, ..Default::default() }),
        run(&*m, Certification { cases: 10, seed: 2, ..Default::default() }),
    ])
    .unwrap();
    for (what, r) in [("partially merged shards", &partial), ("two seeds merged", &seeds)] {
        for (n, line) in jsonl::to_jsonl(r).unwrap().lines().enumerate() {
            assert_valid(&v, &format!("{what}, line {}", n + 1), &serde_json::from_str(line).unwrap());
        }
        assert_valid(&validator("report"), what, &serde_json::to_value(r).unwrap());
    }
    assert!(partial.shard.is_some() && seeds.seeds.len() == 2);
}

#[test]
fn baselines_match_the_baseline_schema() {
    let v = validator("baseline");
    let failing = reports()[0].1.clone();
    let baseline = Baseline::from_report(&failing);
    assert!(!baseline.expected_failures.is_empty());
    assert_valid(&v, "a written baseline", &serde_json::from_str(&baseline.to_json()).unwrap());
    // The README's example.
    let readme =
        std::fs::read_to_string(std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("README.md")).unwrap();
    let at = readme.find("\"toolcert_baseline\": 1").expect("the README shows a baseline");
    let start = readme[..at].rfind("```json\n").unwrap() + "```json\n".len();
    let end = start + readme[start..].find("```").unwrap();
    let example: Value = serde_json::from_str(&readme[start..end]).unwrap();
    assert_valid(&v, "the README's baseline", &example);
    Baseline::parse(&readme[start..end]).expect("and toolcert reads it");
    // A run judged against it carries the check in its summary.
    let mut judged = failing.clone();
    judged.baseline = Some(baseline.check(&failing));
    assert_valid(
        &validator("report"),
        "a report judged against a baseline",
        &serde_json::to_value(&judged).unwrap(),
    );
}

#[test]
fn the_schemas_refuse_what_toolcert_would_not_write() {
    let report = run(&*mutant("name-keyed"), Certification { cases: 5, ..Default::default() });
    let good = serde_json::to_value(&report).unwrap();
    let v = validator("report");
    let broken = |edit: &dyn Fn(&mut Value)| {
        let mut bad = good.clone();
        edit(&mut bad);
        bad
    };
    for (what, bad) in [
        ("a status that is no status", broken(&|r| r["invariants"][0]["status"] = "ok".into())),
        ("an unknown field", broken(&|r| r["surprise"] = true.into())),
        ("a missing verdict", broken(&|r| drop(r.as_object_mut().unwrap().remove("conforms")))),
        ("a finding id without its hash", broken(&|r| r["findings"][0]["id"] = "ACC-IDENTITY".into())),
    ] {
        assert!(!errors(&v, &bad).is_empty(), "the report schema accepts {what}");
    }
    let rec = validator("report-record");
    let header: Value =
        serde_json::from_str(jsonl::to_jsonl(&report).unwrap().lines().next().unwrap()).unwrap();
    let mut bad = header.clone();
    bad["record"] = "middle".into();
    assert!(!errors(&rec, &bad).is_empty(), "the record schema accepts an unknown record");
    let b = validator("baseline");
    let bad: Value = serde_json::json!({"toolcert_baseline": 2, "expected_failures": []});
    assert!(!errors(&b, &bad).is_empty(), "the baseline schema accepts another format version");
    let bad: Value =
        serde_json::json!({"toolcert_baseline": 1, "expected_failures": [{"case": "x", "why": "y"}]});
    assert!(!errors(&b, &bad).is_empty(), "the baseline schema accepts an unknown field");
}

/// The record schema repeats the report schema's definitions it needs (each file stands
/// alone); they must not drift apart.
#[test]
fn shared_definitions_agree() {
    let report = schema("report");
    let record = schema("report-record");
    for (name, def) in record["$defs"].as_object().unwrap() {
        if let Some(same) = report["$defs"].get(name) {
            assert_eq!(
                def, same,
                "$defs/{name} differs between report.schema.json and report-record.schema.json"
            );
        }
    }
}

/// A report priced by `certify --cost`: the summary and the JSONL footer carry the cost, each
/// matches its schema, and the footer reads back to the same price.
#[test]
fn a_priced_report_matches_both_schemas_and_reads_back() {
    use toolcert::bench::cost::{price, CostOptions, Floor};
    let reference = toolcert::reference::ReferenceSubject;
    // The shape of the report is checked here, not its figures. A budget of one nanosecond
    // stops every tier after a series' first, however fast the machine or the reference is
    // (with 20 ms, whether a tier stopped depended on the machine's load).
    let opts = CostOptions {
        budget: std::time::Duration::from_nanos(1),
        sampling: std::time::Duration::from_millis(1),
        ..Default::default()
    };
    let cost = price(&reference, Floor::Rust, &opts).expect("the reference can be priced");
    assert!(cost.workloads.iter().any(|w| w.subject.is_none()), "the budget stopped some tier");
    let mut report = run(&reference, Certification { cases: 5, ..Default::default() });
    report.cost = Some(cost);
    let summary = serde_json::to_value(&report).unwrap();
    assert!(summary["cost"]["series"].is_array());
    assert_valid(&validator("report"), "a priced report", &summary);
    let text = jsonl::to_jsonl(&report).unwrap();
    let rec = validator("report-record");
    for (n, line) in text.lines().enumerate() {
        assert_valid(&rec, &format!("a priced report, line {}", n + 1), &serde_json::from_str(line).unwrap());
    }
    let footer: Value = serde_json::from_str(text.lines().last().unwrap()).unwrap();
    assert_eq!(footer["cost"], summary["cost"]);
    let back = jsonl::from_jsonl(&text).unwrap();
    assert_eq!(back.cost, report.cost);
    // A cost without its verdict is refused by both.
    let mut bad = summary.clone();
    bad["cost"].as_object_mut().unwrap().remove("growth");
    assert!(
        !errors(&validator("report"), &bad).is_empty(),
        "the report schema accepts a cost without growth"
    );
    let mut bad = footer.clone();
    bad["cost"]["series"][0]["growth"] = "quadratic".into();
    assert!(!errors(&rec, &bad).is_empty(), "the record schema accepts an unknown growth");
}
