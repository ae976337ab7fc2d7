//! The report of a certification run: per-invariant status at each grade, the failing
//! cases with their transcripts, and a text rendering for people.

use std::collections::BTreeMap;
use std::fmt::Write;

use serde::{Deserialize, Serialize};
use toolcert_oracle::{Grade, Invariant, Violation};
use toolcert_scenario::Case;

use crate::Certification;

/// Pass or fail, per invariant and grade.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Status {
    Pass,
    Fail,
}

impl Status {
    pub fn as_str(self) -> &'static str {
        match self {
            Status::Pass => "pass",
            Status::Fail => "fail",
        }
    }
}

#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct InvariantStatus {
    pub id: Invariant,
    /// At the run's required grade.
    pub status: Status,
    pub must: Status,
    pub should: Status,
    /// Cases that broke it.
    pub failures: usize,
    pub rule: String,
}

/// One failing case.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct Failure {
    pub case: String,
    pub violations: Vec<Violation>,
    /// The case's events, readable.
    pub transcript: String,
    /// The case as a value: replayable even after the generators change.
    pub scenario: Case,
    /// The seed and position that generated it, for generated cases.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub generated: Option<(u64, usize)>,
}

#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct Report {
    pub tool: String,
    pub version: String,
    pub subject: String,
    pub level: String,
    pub seed: u64,
    /// The grade required to conform.
    pub grade: Grade,
    /// Whether the subject conforms at `grade`.
    pub conforms: bool,
    /// The highest grade it passes: `should`, `must` or `none`.
    pub conformance: String,
    /// Cases run.
    pub cases: usize,
    pub named_cases: usize,
    pub generated_cases: usize,
    pub skipped: Vec<Skipped>,
    pub invariants: Vec<InvariantStatus>,
    pub failures: Vec<Failure>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub coverage: Option<serde_json::Value>,
    /// The coverage table as text, for people.
    #[serde(skip)]
    pub coverage_text: Option<String>,
    /// Failing cases beyond those kept in `failures` (counted, not shrunk).
    pub more_failures: usize,
    /// Generated cases the level and dialect cannot express (not run).
    pub unsupported: usize,
    #[serde(skip)]
    extra: Vec<(Invariant, Grade)>,
}

#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct Skipped {
    pub case: String,
    pub reason: String,
}

impl Report {
    pub(crate) fn new(subject: String, c: &Certification) -> Report {
        Report {
            tool: "toolcert".into(),
            version: env!("CARGO_PKG_VERSION").into(),
            subject,
            level: match c.level {
                toolcert_subject::Level::Events => "events".into(),
                l => format!("{l} ({})", c.speech.dialect),
            },
            seed: c.seed,
            grade: c.grade,
            conforms: true,
            conformance: String::new(),
            cases: 0,
            named_cases: 0,
            generated_cases: 0,
            skipped: Vec::new(),
            invariants: Vec::new(),
            failures: Vec::new(),
            coverage: None,
            coverage_text: None,
            more_failures: 0,
            unsupported: 0,
            extra: Vec::new(),
        }
    }

    pub(crate) fn skip(&mut self, case: &str, reason: &str) {
        self.skipped.push(Skipped { case: case.into(), reason: reason.into() });
    }

    /// Records one case run.
    pub fn record(&mut self, case: &Case, violations: Vec<Violation>, generated: Option<(u64, usize)>) {
        self.cases += 1;
        if generated.is_some() {
            self.generated_cases += 1;
        } else {
            self.named_cases += 1;
        }
        if !violations.is_empty() {
            self.failures.push(Failure {
                case: case.name.clone(),
                violations,
                transcript: toolcert_render::transcript(case),
                scenario: case.clone(),
                generated,
            });
        }
    }

    /// Records one generated case; `keep` keeps it in full (it was shrunk).
    pub(crate) fn record_generated(
        &mut self,
        case: &Case,
        violations: Vec<Violation>,
        at: (u64, usize),
        keep: bool,
    ) {
        if violations.is_empty() || keep {
            self.record(case, violations, Some(at));
        } else {
            self.cases += 1;
            self.generated_cases += 1;
            self.more_failures += 1;
            // Counted toward the invariants it broke, without keeping the case.
            let mut broke: Vec<(Invariant, Grade)> =
                violations.into_iter().map(|v| (v.invariant, v.grade)).collect();
            broke.sort();
            broke.dedup();
            self.extra.extend(broke);
        }
    }

    /// Computes the per-invariant table and the verdict.
    pub fn finish(&mut self) {
        let mut broken: BTreeMap<(Invariant, Grade), usize> = BTreeMap::new();
        for f in &self.failures {
            let mut seen: Vec<(Invariant, Grade)> =
                f.violations.iter().map(|v| (v.invariant, v.grade)).collect();
            seen.sort();
            seen.dedup();
            for k in seen {
                *broken.entry(k).or_default() += 1;
            }
        }
        for k in &self.extra {
            *broken.entry(*k).or_default() += 1;
        }
        let status = |inv, g| if broken.contains_key(&(inv, g)) { Status::Fail } else { Status::Pass };
        self.invariants = Invariant::ALL
            .iter()
            .map(|&inv| {
                let must = status(inv, Grade::Must);
                let should = if must == Status::Fail { Status::Fail } else { status(inv, Grade::Should) };
                InvariantStatus {
                    id: inv,
                    status: if self.grade == Grade::Must { must } else { should },
                    must,
                    should,
                    failures: broken.get(&(inv, Grade::Must)).copied().unwrap_or(0)
                        + broken.get(&(inv, Grade::Should)).copied().unwrap_or(0),
                    rule: inv.rule().into(),
                }
            })
            .collect();
        let must_ok = self.invariants.iter().all(|i| i.must == Status::Pass);
        let should_ok = self.invariants.iter().all(|i| i.should == Status::Pass);
        self.conformance = match (must_ok, should_ok) {
            (true, true) => "should",
            (true, false) => "must",
            _ => "none",
        }
        .into();
        self.conforms = if self.grade == Grade::Must { must_ok } else { should_ok };
    }

    /// The report for a terminal: failures first (with transcripts), then the table.
    pub fn to_text(&self, max_failures: usize) -> String {
        let mut out = String::new();
        let _ = writeln!(
            out,
            "toolcert {} certifying {} at the {} level: {} cases ({} named, {} generated, seed {})",
            self.version,
            self.subject,
            self.level,
            self.cases,
            self.named_cases,
            self.generated_cases,
            self.seed
        );
        for f in self.failures.iter().take(max_failures) {
            let _ = writeln!(out, "\nFAIL {}", f.case);
            for v in &f.violations {
                let stream = if f.scenario.streams.len() > 1 {
                    format!(" stream {}", v.stream)
                } else {
                    String::new()
                };
                let _ = writeln!(out, "  {v}{stream}");
            }
            let mut invs: Vec<Invariant> = f.violations.iter().map(|v| v.invariant).collect();
            invs.sort();
            invs.dedup();
            for inv in invs {
                let _ = writeln!(out, "  why it matters ({inv}): {}", inv.why());
            }
            let _ = writeln!(out, "  transcript:");
            for line in f.transcript.lines() {
                let _ = writeln!(out, "    {line}");
            }
            let _ = writeln!(out, "  replay: {}", replay_hint(self, f));
        }
        let hidden = self.failures.len().saturating_sub(max_failures) + self.more_failures;
        if hidden > 0 {
            let _ =
                writeln!(out, "\n... and {hidden} more failing cases (--format json lists the kept ones)");
        }
        if let Some(coverage) = &self.coverage_text {
            let _ = writeln!(out, "\ncoverage of the generated cases:\n{coverage}");
        }
        let _ = writeln!(out, "\n{:<15} {:<5} {:<6} {:>8}  rule", "invariant", "must", "should", "failing");
        for i in &self.invariants {
            let _ = writeln!(
                out,
                "{:<15} {:<5} {:<6} {:>8}  {}",
                i.id.id(),
                i.must.as_str(),
                i.should.as_str(),
                i.failures,
                i.rule
            );
        }
        for s in &self.skipped {
            let _ = writeln!(out, "skipped {}: {}", s.case, s.reason);
        }
        let verdict = if self.conforms { "CONFORMS" } else { "DOES NOT CONFORM" };
        let _ = writeln!(
            out,
            "\n{verdict} at the {} grade (passes: {}); {} of {} cases failed",
            self.grade.as_str(),
            self.conformance,
            self.failures.len() + self.more_failures,
            self.cases
        );
        out
    }
}

fn replay_hint(r: &Report, f: &Failure) -> String {
    match f.generated {
        Some((seed, _)) => format!(
            "toolcert certify --subject {} --seed {seed} --case {} (or save `scenario` from --format json and pass --scenario FILE)",
            r.subject, f.case
        ),
        None => format!("toolcert certify --subject {} --case {}", r.subject, f.case),
    }
}

impl Report {
    /// The first failing case that broke `invariant` at the required grade, as text; `None`
    /// when the invariant holds.
    pub fn failing(&self, invariant: Invariant) -> Option<String> {
        let status = self.invariants.iter().find(|i| i.id == invariant)?;
        if status.status == Status::Pass {
            return None;
        }
        let f = self.failures.iter().find(|f| {
            f.violations
                .iter()
                .any(|v| v.invariant == invariant && (self.grade == Grade::Should || v.grade == Grade::Must))
        })?;
        let mut one = self.clone();
        one.failures = vec![f.clone()];
        Some(one.to_text(1))
    }
}
