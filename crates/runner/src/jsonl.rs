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
//! A failing case carries `broke` and `signatures` (what it broke as run, which the counts and
//! findings are made of) and, when it was kept in full, the `violations` and `scenario` of its
//! counterexample (for a generated case, shrunk). A run keeps in full the first failure of
//! each new finding; the others are replayed from their seed and position. Every case carries
//! `exercised`, the rules it could have broken (what `n/a` is made of).

use serde::{Deserialize, Serialize};
use toolcert_oracle::{Exercised, Grade, Violation};
use toolcert_scenario::{Case, Dialect};
use toolcert_subject::Level;

use crate::findings::Signature;
use crate::report::{Broken, CaseRecord, CaseStatus, Failure, Report};
use crate::suite::Suite;
use crate::tally::RecordSink;
use crate::tiers::CaseClass;

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
    #[serde(default, skip_serializing_if = "Option::is_none")]
    profile: Option<String>,
    /// Written before the server profiles; read only.
    #[serde(default, skip_serializing)]
    chat_index_zero: bool,
    #[serde(default, skip_serializing)]
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
    /// What puts it in a tier of its own (docs/SPEC.md, "Tiers").
    #[serde(default, skip_serializing_if = "CaseClass::is_empty", rename = "classes")]
    class: CaseClass,
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
    /// One verdict per tier; absent in a report written before the tiers.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    tiers: Vec<crate::tiers::TierStatus>,
    /// Which rules counted the tiers ([`crate::tiers::TIER_RULES`]); absent (0) in a report
    /// written by the first rules.
    #[serde(default, skip_serializing_if = "is_zero_u32")]
    tier_rules: u32,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    coverage: Option<serde_json::Value>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    coverage_text: Option<String>,
    /// The distinct findings, for readers of the stream alone; a reader rebuilds them from
    /// the records (which is how merged streams get theirs).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    findings: Vec<crate::Finding>,
    /// The findings grouped into bugs; absent in a report written before them.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    bugs: Vec<crate::Bug>,
    /// Which rules grouped the bugs ([`crate::findings::BUG_RULES`]); absent (0) in a report
    /// written by the first rules.
    #[serde(default, skip_serializing_if = "is_zero_u32")]
    bug_rules: u32,
    /// The price on the cost suite (`certify --cost`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    cost: Option<crate::cost::CostReport>,
    /// The price on the bounded suite (`certify --bounded`); boxed, as the footer is the
    /// largest line.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    bounded: Option<Box<crate::cost::CostReport>>,
}

fn is_zero_u32(n: &u32) -> bool {
    *n == 0
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
        tiers: r.tiers.clone(),
        tier_rules: if r.tiers.is_empty() { 0 } else { crate::tiers::TIER_RULES },
        coverage: r.coverage.clone(),
        coverage_text: r.coverage_text.clone(),
        findings: r.findings.clone(),
        bugs: r.bugs.clone(),
        bug_rules: if r.bugs.is_empty() { 0 } else { crate::findings::BUG_RULES },
        cost: r.cost.clone(),
        bounded: r.bounded.clone().map(Box::new),
    }
}

/// The report as a JSONL stream. Fails for a report read from a JSON summary, which has no
/// per-case records, and for a streamed run, whose records went to its sink.
pub fn to_jsonl(r: &Report) -> Result<String, String> {
    if !r.has_records() {
        return Err(if r.streamed.is_some() {
            "this report was streamed (its records went to the JSONL stream as the run went); \
             only a report holding its records can be written as JSONL again"
                .into()
        } else {
            "this report was read from a JSON summary, which has no per-case records; \
             only a run or a JSONL report can be written as JSONL"
                .into()
        });
    }
    let mut out = header_line(r);
    for rec in &r.records {
        out += &case_line(rec);
    }
    out += &footer_line(r);
    Ok(out)
}

fn line(l: &Line) -> String {
    let mut out = serde_json::to_string(l).expect("a record serialises");
    out.push('\n');
    out
}

/// The stream's first line.
pub fn header_line(r: &Report) -> String {
    line(&Line::Header(Header {
        format: JSONL_FORMAT,
        tool: r.tool.clone(),
        version: r.version.clone(),
        protocol: r.protocol,
        suite: r.suite.clone(),
        subject: SubjectInfo { name: r.subject.clone(), metadata: r.subject_metadata.clone() },
        level: r.level,
        dialect: r.dialect,
        profile: r.profile.clone(),
        chat_index_zero: false,
        chat_repeat_fields: false,
        schema: r.schema,
        grade: r.grade,
        seed: r.seed,
        seeds: r.seeds.clone(),
        shard: r.shard.clone(),
    }))
}

/// One case's line.
pub fn case_line(rec: &CaseRecord) -> String {
    line(&Line::Case(CaseLine {
        case: rec.case.clone(),
        index: rec.index,
        seed: rec.seed,
        status: rec.status,
        reason: rec.reason.clone(),
        broke: rec.broke.clone(),
        signatures: rec.signatures.clone(),
        exercised: rec.exercised,
        class: rec.class,
        violations: rec.failure.as_ref().map(|f| f.violations.clone()).unwrap_or_default(),
        scenario: rec.failure.as_ref().map(|f| f.scenario.clone()),
        shrunk: rec.seed.is_some() && rec.failure.is_some(),
    }))
}

/// The last line, with the finished report's counts.
pub fn footer_line(r: &Report) -> String {
    line(&Line::Footer(footer(r)))
}

/// [`footer_line`] with the prices `priced` in place of the report's own: a streamed run
/// writes its footer before the report it returns can be given the prices made beside it.
pub fn footer_line_with_cost(r: &Report, priced: &Priced) -> String {
    let mut f = footer(r);
    if priced.cost.is_some() {
        f.cost.clone_from(&priced.cost);
    }
    if priced.bounded.is_some() {
        f.bounded = priced.bounded.clone().map(Box::new);
    }
    line(&Line::Footer(f))
}

/// What a setting was priced at beside its cases: the cost suite (`certify --cost`) and the
/// bounded suite (`certify --bounded`).
#[derive(Clone, Debug, Default)]
pub struct Priced {
    pub cost: Option<crate::cost::CostReport>,
    pub bounded: Option<crate::cost::CostReport>,
}

/// A [`RecordSink`] writing the JSONL stream to `out` as the run goes (`--out DIR`'s
/// `report.jsonl`, `--format jsonl` on stdout). The first write error stops the writing and
/// is kept for [`JsonlWriter::finish`].
pub struct JsonlWriter<W: std::io::Write> {
    out: W,
    error: Option<std::io::Error>,
    /// Written into the footer (`certify --cost` and `--bounded` price before the cases run).
    priced: Priced,
}

impl<W: std::io::Write> JsonlWriter<W> {
    pub fn new(out: W) -> Self {
        JsonlWriter { out, error: None, priced: Priced::default() }
    }

    /// The prices the footer carries.
    pub fn with_cost(mut self, priced: Priced) -> Self {
        self.priced = priced;
        self
    }

    fn write(&mut self, line: &str) {
        if self.error.is_none() {
            if let Err(e) = self.out.write_all(line.as_bytes()) {
                self.error = Some(e);
            }
        }
    }

    /// Flushes; the first error any write met.
    pub fn finish(mut self) -> std::io::Result<W> {
        match self.error.take() {
            Some(e) => Err(e),
            None => self.out.flush().map(|()| self.out),
        }
    }
}

impl<W: std::io::Write> RecordSink for JsonlWriter<W> {
    fn header(&mut self, report: &Report) {
        self.write(&header_line(report));
    }

    fn case(&mut self, record: &CaseRecord) {
        self.write(&case_line(record));
    }

    fn footer(&mut self, report: &Report) {
        let line = footer_line_with_cost(report, &self.priced);
        self.write(&line);
    }

    fn stopped(&self) -> bool {
        self.error.is_some()
    }
}

/// Rebuilds a report from its JSONL stream, checking the footer's counts against the records.
pub fn from_jsonl(text: &str) -> Result<Report, String> {
    from_lines(text.lines().map(|l| Ok(l.to_string())))
}

/// [`from_jsonl`] over lines read one at a time: a report file is never held whole, only the
/// report it rebuilds and one line.
fn from_lines(lines: impl Iterator<Item = std::io::Result<String>>) -> Result<Report, String> {
    let mut report: Option<Report> = None;
    let mut end: Option<Footer> = None;
    for (n, raw) in lines.enumerate() {
        let at = n + 1;
        let raw = raw.map_err(|e| format!("line {at}: {e}"))?;
        let raw = raw.as_str();
        if raw.trim().is_empty() {
            continue;
        }
        if end.is_some() {
            return Err(format!("line {at}: a record after the footer"));
        }
        let line: Line = serde_json::from_str(raw).map_err(|e| {
            // A report cut short (a killed run, a partial copy) ends inside a record: say so,
            // rather than what serde makes of the half record.
            let cut = serde_json::from_str::<serde::de::IgnoredAny>(raw)
                .err()
                .is_some_and(|e| e.classify() == serde_json::error::Category::Eof);
            if cut {
                format!(
                    "line {at}: truncated: the record ends before its JSON does (the report was cut short)"
                )
            } else {
                format!("line {at}: not a report record: {e}")
            }
        })?;
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
                    profile: h.profile,
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
                    named_skipped: 0,
                    generated_cases: 0,
                    skipped: Vec::new(),
                    invariants: Vec::new(),
                    tiers: Vec::new(),
                    bugs: Vec::new(),
                    findings: Vec::new(),
                    failures: Vec::new(),
                    coverage: None,
                    coverage_text: None,
                    more_failures: 0,
                    unsupported: 0,
                    baseline: None,
                    records: Vec::new(),
                    reproduced: Default::default(),
                    legacy: false,
                    reproducers: None,
                    tally: Default::default(),
                    streamed: None,
                    cost: None,
                    bounded: None,
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
                    class: c.class,
                    failure,
                });
            }
            (Line::Footer(f), Some(_)) => end = Some(f),
        }
    }
    let mut report = report.ok_or("an empty report: no header")?;
    let end = end.ok_or("no footer: the report is truncated (did the run finish?)")?;
    if end.tier_rules < 4 {
        // Before rules 4 a spliced generation or a hostile index did not make a case faulty:
        // a record that keeps its case is classed again from it (the tiers are counted again
        // below).
        for rec in &mut report.records {
            if let Some(f) = &rec.failure {
                rec.class = rec.class.union(crate::tiers::CaseClass::of(&f.scenario));
            }
        }
    }
    report.finish();
    if end.tiers.is_empty() {
        // Written before the tiers: its records carry no class, so no tier is judged.
        report.tiers.clear();
    }
    // A finding's replay is how the run that wrote it saved its reproducer (a saved file
    // under --out, else the case's seed): kept as written.
    for f in &mut report.findings {
        if let Some(written) = end.findings.iter().find(|g| g.id == f.id) {
            f.replay.clone_from(&written.replay);
        }
    }
    for b in &mut report.bugs {
        if let Some(root) = report.findings.iter().find(|f| f.id == b.symptoms[0]) {
            b.replay.clone_from(&root.replay);
        }
    }
    report.coverage = end.coverage.clone();
    report.coverage_text = end.coverage_text.clone();
    report.cost = end.cost.clone();
    report.bounded = end.bounded.as_deref().cloned();
    let mut counted = footer(&report);
    if end.bugs.is_empty() {
        // Written before the bugs: they are derived from its records as read, and the
        // footer is compared without them.
        counted.bugs.clear();
        counted.tiers.iter_mut().for_each(|t| t.bugs.clear());
    }
    if !end.tiers.is_empty() && end.tier_rules != crate::tiers::TIER_RULES {
        // Tiers counted by older rules: counted again from the records by the current ones
        // (the records are the report; the tiers are derived from them), and not compared.
        counted.tiers.clone_from(&end.tiers);
        counted.tier_rules = end.tier_rules;
    }
    if !end.bugs.is_empty() && end.bug_rules != crate::findings::BUG_RULES {
        // Bugs grouped by older rules: grouped again from the records by the current ones,
        // and the tiers, which count bugs, counted again with them; neither is compared.
        counted.bugs.clone_from(&end.bugs);
        counted.bug_rules = end.bug_rules;
        counted.tiers.clone_from(&end.tiers);
        counted.tier_rules = end.tier_rules;
    }
    if counted != end {
        // Name the fields that disagree, so an edited or incomplete report says where.
        let (a, b) = (
            serde_json::to_value(&end).unwrap_or_default(),
            serde_json::to_value(&counted).unwrap_or_default(),
        );
        let differ: Vec<&str> = a
            .as_object()
            .into_iter()
            .flatten()
            .filter(|(k, v)| b.get(k.as_str()) != Some(v))
            .map(|(k, _)| k.as_str())
            .collect();
        return Err(format!(
            "the footer's counts ({} cases, {} failed, conforms {}) disagree with the records ({} cases, {} failed, \
             conforms {}; differing: {}): the report is incomplete or was edited",
            end.cases, end.failed, end.conforms, counted.cases, counted.failed, counted.conforms, differ.join(", ")
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

/// The longest JSONL record read: a record holds one case (with its scenario when kept in
/// full), never a whole run; a longer line is refused once this much of it is read.
pub const MAX_RECORD: u64 = 256 << 20;

/// [`read_reports`] from a reader (a file), streaming a JSONL file line by line (each line at
/// most [`MAX_RECORD`] bytes; one report rebuilt at a time); a JSON document is read whole.
pub fn read_reports_from(mut reader: impl std::io::BufRead) -> Result<Vec<Report>, String> {
    let mut head = Vec::new();
    let first = loop {
        match bounded_line(&mut reader, MAX_RECORD) {
            None => break String::new(),
            Some(Err(e)) => return Err(format!("line {}: {e}", head.len() + 1)),
            Some(Ok(line)) if line.trim().is_empty() => head.push(line),
            Some(Ok(line)) => break line,
        }
    };
    if !looks_jsonl(&first) {
        let mut text = head.concat() + &first + "\n";
        reader.read_to_string(&mut text).map_err(|e| e.to_string())?;
        return read_reports(&text);
    }
    head.push(first);
    let mut lines = head
        .into_iter()
        .map(Ok)
        .chain(std::iter::from_fn(move || bounded_line(&mut reader, MAX_RECORD)))
        .peekable();
    let mut out = Vec::new();
    let mut at = 1;
    while lines.peek().is_some() {
        // One stream: its header, then every line up to the next header.
        let mut started = false;
        let mut count = 0;
        let stream = std::iter::from_fn(|| {
            let next = lines.next_if(|l| {
                !(started && l.as_ref().is_ok_and(|l| l.starts_with(r#"{"record":"header""#)))
            })?;
            started = true;
            count += 1;
            Some(next)
        });
        let report = from_lines(stream).map_err(|e| {
            if out.is_empty() && lines.peek().is_none() {
                e
            } else {
                format!("the report starting at line {at}: {e}")
            }
        })?;
        at += count;
        out.push(report);
    }
    Ok(out)
}

/// [`read_report`] from a reader (a file), streaming a JSONL report line by line (each line at
/// most [`MAX_RECORD`] bytes); a JSON summary, one document, is read whole.
pub fn read_report_from(mut reader: impl std::io::BufRead) -> Result<Report, String> {
    let mut head = Vec::new();
    let first = loop {
        match bounded_line(&mut reader, MAX_RECORD) {
            None => break String::new(),
            Some(Err(e)) => return Err(format!("line {}: {e}", head.len() + 1)),
            Some(Ok(line)) if line.trim().is_empty() => head.push(line),
            Some(Ok(line)) => break line,
        }
    };
    let is_jsonl = looks_jsonl(&first);
    if is_jsonl {
        head.push(first);
        let rest = std::iter::from_fn(move || bounded_line(&mut reader, MAX_RECORD));
        return from_lines(head.into_iter().map(Ok).chain(rest));
    }
    let mut text = head.concat() + &first + "\n";
    reader.read_to_string(&mut text).map_err(|e| e.to_string())?;
    read_report(&text)
}

/// Whether a report's first line is a JSONL record (whole, or cut short: it is still one).
fn looks_jsonl(first: &str) -> bool {
    first.trim_start().starts_with("{\"record\"")
        || serde_json::from_str::<serde_json::Value>(first).ok().is_some_and(|v| v.get("record").is_some())
}

/// The next line of at most `max` bytes, without its line end; `None` at the end.
fn bounded_line(reader: &mut impl std::io::BufRead, max: u64) -> Option<std::io::Result<String>> {
    use std::io::{BufRead as _, Read as _};
    let mut buf = Vec::new();
    match reader.by_ref().take(max + 1).read_until(b'\n', &mut buf) {
        Ok(0) => None,
        Err(e) => Some(Err(e)),
        Ok(_) if buf.len() as u64 > max && buf.last() != Some(&b'\n') => {
            Some(Err(std::io::Error::other(format!("a line longer than {max} bytes: not a report record"))))
        }
        Ok(_) => {
            while buf.last().is_some_and(|&b| b == b'\n' || b == b'\r') {
                buf.pop();
            }
            Some(String::from_utf8(buf).map_err(|e| std::io::Error::other(format!("not UTF-8: {e}"))))
        }
    }
}

/// Reads a report written as JSONL (`--out DIR`'s `report.jsonl`, `--format jsonl`) or as the
/// JSON summary (`--format json`, which merges only approximately: it has no per-case
/// records).
pub fn read_report(text: &str) -> Result<Report, String> {
    let first = text.lines().find(|l| !l.trim().is_empty()).unwrap_or("");
    let is_jsonl = looks_jsonl(first);
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_line_past_the_bound_is_refused_without_reading_it_whole() {
        let text = format!("short\n{}\nnext\n", "x".repeat(100));
        let mut r = std::io::BufReader::with_capacity(8, text.as_bytes());
        assert_eq!(bounded_line(&mut r, 16).unwrap().unwrap(), "short");
        let err = bounded_line(&mut r, 16).unwrap().unwrap_err();
        assert!(err.to_string().contains("a line longer than 16 bytes"), "{err}");
        // Reading stopped at the bound, inside the long line.
        let mut rest = String::new();
        std::io::Read::read_to_string(&mut r, &mut rest).unwrap();
        assert_eq!(rest, format!("{}\nnext\n", "x".repeat(100 - 17)));
        let mut r = std::io::BufReader::new("a\r\nb".as_bytes());
        assert_eq!(bounded_line(&mut r, 16).unwrap().unwrap(), "a");
        assert_eq!(bounded_line(&mut r, 16).unwrap().unwrap(), "b");
        assert!(bounded_line(&mut r, 16).is_none());
    }

    #[test]
    fn a_record_cut_inside_its_json_is_truncated() {
        let cut = "{\"record\":\"header\",\"format\":1,\"tool\":\"toolcert\",\"version\":\"0.1.0\",\"protocol\":null,\"suite\":{\"vers";
        let err = from_jsonl(cut).unwrap_err();
        assert!(err.starts_with("line 1: truncated"), "{err}");
        let err = read_report_from(std::io::BufReader::new(format!("\n\n{cut}").as_bytes())).unwrap_err();
        assert!(err.starts_with("line 3: truncated"), "{err}");
    }
}
