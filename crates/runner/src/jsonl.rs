//! The JSONL record stream (docs/SPEC.md §7): a header (tool, protocol and suite versions,
//! the subject, the setting, seed and shard), one record per case, and a footer with the
//! counts. A [`Report`] is rebuilt from it exactly ([`from_jsonl`]), so the reports of several
//! shards or runs can be merged ([`crate::merge`]).
//!
//! ```text
//! {"record":"header","format":1,"tool":"toolcert","version":"0.1.0","protocol":null,"suite":{"version":"0.1.0","digest":"sha256:…"},"subject":{"name":"builtin:reference","metadata":{"levels":["events","wire","bytes"]}},"level":"events","schema":true,"grade":"should","seed":7}
//! {"record":"case","case":"named/deltas/lookup-order-a4471","index":0,"status":"pass"}
//! {"record":"case","case":"gen/7/3","index":3,"seed":7,"status":"fail","broke":[{"invariant":"ACC-IDENTITY","grade":"must"}],"violations":[…],"scenario":{…},"shrunk":true}
//! {"record":"case","case":"gen/7/40","index":40,"seed":7,"status":"fail","broke":[{"invariant":"ACC-IDENTITY","grade":"must"}]}
//! {"record":"footer","cases":330,"named_cases":30,"generated_cases":300,"skipped":1,"unsupported":0,"failed":41,"kept":32,"conforms":false,"conformance":"none","coverage":{…}}
//! ```
//!
//! A failing case carries `broke` (what it broke as run, which the counts are made of) and,
//! when it was kept in full, the `violations` and `scenario` of its counterexample (for a
//! generated case, shrunk). A run keeps at most [`crate::report::KEEP_FAILURES`] failures per
//! seed in full; the others are replayed from their seed and position.

use serde::{Deserialize, Serialize};
use toolcert_oracle::{Exercised, Grade, Violation};
use toolcert_scenario::{Case, Dialect};
use toolcert_subject::Level;

use crate::findings::Signature;
use crate::report::{Broken, CaseRecord, CaseStatus, Failure, Report};
use crate::suite::Suite;

/// The version of the JSONL record format.
pub const JSONL_FORMAT: u32 = 1;

#[derive(Serialize, Deserialize)]
#[serde(tag = "record", rename_all = "snake_case")]
enum Line {
    Header(Header),
    Case(CaseLine),
    Footer(Footer),
}

#[derive(Serialize, Deserialize)]
struct Header {
    format: u32,
    tool: String,
    version: String,
    protocol: Option<u32>,
    suite: Suite,
    subject: SubjectInfo,
    level: Level,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    dialect: Option<Dialect>,
    #[serde(default, skip_serializing_if = "is_false")]
    chat_index_zero: bool,
    #[serde(default, skip_serializing_if = "is_false")]
    chat_repeat_fields: bool,
    schema: bool,
    grade: Grade,
    seed: u64,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    seeds: Vec<u64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    shard: Option<String>,
}

#[derive(Serialize, Deserialize)]
struct SubjectInfo {
    name: String,
    #[serde(default, skip_serializing_if = "serde_json::Map::is_empty")]
    metadata: serde_json::Map<String, serde_json::Value>,
}

#[derive(Serialize, Deserialize)]
struct CaseLine {
    case: String,
    index: usize,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    seed: Option<u64>,
    status: CaseStatus,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    reason: Option<String>,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    broke: Vec<Broken>,
    /// The signatures of its violations as run (what findings are made of).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    signatures: Vec<Signature>,
    /// The invariants it could have broken, one bit each in `Invariant::ALL` order.
    #[serde(default, skip_serializing_if = "is_zero")]
    exercised: Exercised,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    violations: Vec<Violation>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    scenario: Option<Case>,
    /// The scenario is the shrunk counterexample of a generated case.
    #[serde(default, skip_serializing_if = "is_false")]
    shrunk: bool,
}

#[derive(Serialize, Deserialize, PartialEq, Debug)]
struct Footer {
    cases: usize,
    named_cases: usize,
    generated_cases: usize,
    skipped: usize,
    unsupported: usize,
    failed: usize,
    kept: usize,
    conforms: bool,
    conformance: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    coverage: Option<serde_json::Value>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    coverage_text: Option<String>,
    /// The distinct findings, for readers of the stream alone; a reader rebuilds them from
    /// the records (which is how merged streams get theirs).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    findings: Vec<crate::Finding>,
}

fn is_false(b: &bool) -> bool {
    !*b
}

fn is_zero(e: &Exercised) -> bool {
    e.is_empty()
}

fn footer(r: &Report) -> Footer {
    Footer {
        cases: r.cases,
        named_cases: r.named_cases,
        generated_cases: r.generated_cases,
        skipped: r.skipped.len(),
        unsupported: r.unsupported,
        failed: r.failures.len() + r.more_failures,
        kept: r.failures.len(),
        conforms: r.conforms,
        conformance: r.conformance.clone(),
        coverage: r.coverage.clone(),
        coverage_text: r.coverage_text.clone(),
        findings: r.findings.clone(),
    }
}

/// The report as a JSONL stream. Fails for a report read from a JSON summary, which has no
/// per-case records.
pub fn to_jsonl(r: &Report) -> Result<String, String> {
    if !r.has_records() {
        return Err("this report was read from a JSON summary, which has no per-case records; \
                    only a run or a JSONL report can be written as JSONL"
            .into());
    }
    let mut out = String::new();
    let mut line = |l: &Line| {
        out.push_str(&serde_json::to_string(l).expect("a record serialises"));
        out.push('\n');
    };
    line(&Line::Header(Header {
        format: JSONL_FORMAT,
        tool: r.tool.clone(),
        version: r.version.clone(),
        protocol: r.protocol,
        suite: r.suite.clone(),
        subject: SubjectInfo { name: r.subject.clone(), metadata: r.subject_metadata.clone() },
        level: r.level,
        dialect: r.dialect,
        chat_index_zero: r.chat_index_zero,
        chat_repeat_fields: r.chat_repeat_fields,
        schema: r.schema,
        grade: r.grade,
        seed: r.seed,
        seeds: r.seeds.clone(),
        shard: r.shard.clone(),
    }));
    for rec in &r.records {
        line(&Line::Case(CaseLine {
            case: rec.case.clone(),
            index: rec.index,
            seed: rec.seed,
            status: rec.status,
            reason: rec.reason.clone(),
            broke: rec.broke.clone(),
            signatures: rec.signatures.clone(),
            exercised: rec.exercised,
            violations: rec.failure.as_ref().map(|f| f.violations.clone()).unwrap_or_default(),
            scenario: rec.failure.as_ref().map(|f| f.scenario.clone()),
            shrunk: rec.seed.is_some() && rec.failure.is_some(),
        }));
    }
    line(&Line::Footer(footer(r)));
    Ok(out)
}

/// Rebuilds a report from its JSONL stream, checking the footer's counts against the records.
pub fn from_jsonl(text: &str) -> Result<Report, String> {
    let mut report: Option<Report> = None;
    let mut end: Option<Footer> = None;
    for (n, raw) in text.lines().enumerate().filter(|(_, l)| !l.trim().is_empty()) {
        let at = n + 1;
        if end.is_some() {
            return Err(format!("line {at}: a record after the footer"));
        }
        let line: Line =
            serde_json::from_str(raw).map_err(|e| format!("line {at}: not a report record: {e}"))?;
        match (line, report.as_mut()) {
            (Line::Header(h), None) => {
                if h.format != JSONL_FORMAT {
                    return Err(format!(
                        "line {at}: report format {} is not understood (this toolcert reads format {JSONL_FORMAT})",
                        h.format
                    ));
                }
                report = Some(Report {
                    tool: h.tool,
                    version: h.version,
                    protocol: h.protocol,
                    suite: h.suite,
                    subject: h.subject.name,
                    subject_metadata: h.subject.metadata,
                    level: h.level,
                    dialect: h.dialect,
                    chat_index_zero: h.chat_index_zero,
                    chat_repeat_fields: h.chat_repeat_fields,
                    schema: h.schema,
                    seed: h.seed,
                    seeds: h.seeds,
                    shard: h.shard,
                    grade: h.grade,
                    conforms: true,
                    conformance: String::new(),
                    cases: 0,
                    named_cases: 0,
                    generated_cases: 0,
                    skipped: Vec::new(),
                    invariants: Vec::new(),
                    findings: Vec::new(),
                    failures: Vec::new(),
                    coverage: None,
                    coverage_text: None,
                    more_failures: 0,
                    unsupported: 0,
                    baseline: None,
                    records: Vec::new(),
                    reproduced: Default::default(),
                });
            }
            (Line::Header(_), Some(_)) => return Err(format!("line {at}: a second header")),
            (_, None) => return Err(format!("line {at}: the first record must be the header")),
            (Line::Case(c), Some(r)) => {
                if c.status == CaseStatus::Fail && c.broke.is_empty() {
                    return Err(format!("line {at}: failing case {} breaks nothing", c.case));
                }
                let failure = c.scenario.map(|scenario| Failure {
                    case: c.case.clone(),
                    violations: c.violations,
                    transcript: toolcert_render::transcript(&scenario),
                    scenario,
                    generated: c.seed.map(|s| (s, c.index)),
                });
                r.records.push(CaseRecord {
                    case: c.case,
                    index: c.index,
                    seed: c.seed,
                    status: c.status,
                    reason: c.reason,
                    broke: c.broke,
                    signatures: c.signatures,
                    exercised: c.exercised,
                    failure,
                });
            }
            (Line::Footer(f), Some(_)) => end = Some(f),
        }
    }
    let mut report = report.ok_or("an empty report: no header")?;
    let end = end.ok_or("no footer: the report is truncated (did the run finish?)")?;
    report.finish();
    report.coverage = end.coverage.clone();
    report.coverage_text = end.coverage_text.clone();
    let counted = footer(&report);
    if counted != end {
        return Err(format!(
            "the footer's counts ({} cases, {} failed, conforms {}) disagree with the records ({} cases, {} failed, \
             conforms {}): the report is incomplete or was edited",
            end.cases, end.failed, end.conforms, counted.cases, counted.failed, counted.conforms
        ));
    }
    Ok(report)
}

/// Reads every report of a file: a JSONL file may hold several streams one after another
/// (`certify --format jsonl` over several settings writes one per setting); a JSON file holds
/// one summary, or (`certify --format json` over several settings) one per setting.
pub fn read_reports(text: &str) -> Result<Vec<Report>, String> {
    let first = text.lines().find(|l| !l.trim().is_empty()).unwrap_or("");
    let is_jsonl =
        serde_json::from_str::<serde_json::Value>(first).ok().is_some_and(|v| v.get("record").is_some());
    if !is_jsonl {
        let value: serde_json::Value = serde_json::from_str(text)
            .map_err(|e| format!("neither a JSONL report nor a JSON report ({e})"))?;
        if let Some(settings) = value.get("settings").and_then(|s| s.as_array()) {
            return settings.iter().map(|s| read_report(&s.to_string())).collect::<Result<Vec<_>, _>>();
        }
        return read_report(text).map(|r| vec![r]);
    }
    let mut streams: Vec<String> = Vec::new();
    for line in text.lines() {
        if line.starts_with(r#"{"record":"header""#) || streams.is_empty() {
            streams.push(String::new());
        }
        let last = streams.last_mut().expect("a stream was started");
        last.push_str(line);
        last.push('\n');
    }
    let mut line = 0;
    let mut out = Vec::new();
    for stream in &streams {
        out.push(from_jsonl(stream).map_err(|e| {
            if streams.len() > 1 {
                format!("the report starting at line {}: {e}", line + 1)
            } else {
                e
            }
        })?);
        line += stream.lines().count();
    }
    Ok(out)
}

/// Reads a report written as JSONL (`--out DIR`'s `report.jsonl`, `--format jsonl`) or as the
/// JSON summary (`--format json`, which merges only approximately: it has no per-case
/// records).
pub fn read_report(text: &str) -> Result<Report, String> {
    let first = text.lines().find(|l| !l.trim().is_empty()).unwrap_or("");
    let is_jsonl =
        serde_json::from_str::<serde_json::Value>(first).ok().is_some_and(|v| v.get("record").is_some());
    if is_jsonl {
        return from_jsonl(text);
    }
    let report: Report =
        serde_json::from_str(text).map_err(|e| format!("neither a JSONL report nor a JSON report ({e})"))?;
    if report.tool != "toolcert" {
        return Err(format!("a report of {:?}, not of toolcert", report.tool));
    }
    Ok(report)
}
