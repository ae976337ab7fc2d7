//! The report of a certification run: one record per case, per-invariant status at each
//! grade, the failing cases with their transcripts, and a text rendering for people.
//!
//! The per-case records are the source of truth: every count and status is derived from
//! them by [`Report::finish`], which is what lets reports of several shards (or several runs
//! of one implementation) merge back into one ([`crate::merge`]). They travel in the JSONL
//! stream ([`crate::jsonl`]), not in the JSON report, which stays a summary.

use std::collections::BTreeMap;
use std::fmt::Write;

use serde::{Deserialize, Serialize};
use toolcert_oracle::{Grade, Invariant, Violation};
use toolcert_scenario::{Case, Dialect};
use toolcert_subject::{Level, Subject};

use crate::baseline::BaselineCheck;
use crate::suite::Suite;
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

#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct InvariantStatus {
    pub id: Invariant,
    /// At the run's required grade.
    pub status: Status,
    pub must: Status,
    pub should: Status,
    /// Cases that broke it, at either grade.
    pub failures: usize,
    /// Cases that broke its must part.
    #[serde(default)]
    pub must_failures: usize,
    /// Cases that broke its should part (and not its must part).
    #[serde(default)]
    pub should_failures: usize,
    pub rule: String,
}

/// One failing case kept in full.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Failure {
    pub case: String,
    /// The violations of `scenario` (for a generated case: of the shrunk counterexample).
    pub violations: Vec<Violation>,
    /// The case's events, readable.
    pub transcript: String,
    /// The case as a value: replayable even after the generators change.
    pub scenario: Case,
    /// The seed and position that generated it, for generated cases.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub generated: Option<(u64, usize)>,
}

/// What became of one case.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum CaseStatus {
    Pass,
    Fail,
    /// Not run: it needs a profile the run does not have, or the level and dialect cannot
    /// express it.
    Skipped,
}

/// One invariant broken at one grade.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
pub struct Broken {
    pub invariant: Invariant,
    pub grade: Grade,
}

impl Broken {
    /// The invariants `violations` broke, each once per grade, sorted.
    pub fn of(violations: &[Violation]) -> Vec<Broken> {
        let mut broke: Vec<Broken> =
            violations.iter().map(|v| Broken { invariant: v.invariant, grade: v.grade }).collect();
        broke.sort();
        broke.dedup();
        broke
    }
}

/// One case of a run: the unit the JSONL stream records and reports merge by.
#[derive(Clone, Debug, PartialEq)]
pub struct CaseRecord {
    pub case: String,
    /// Its position: among the named cases, or `k` of generated case `gen/SEED/k`.
    pub index: usize,
    /// The seed, for a generated case.
    pub seed: Option<u64>,
    pub status: CaseStatus,
    /// Why it was not run.
    pub reason: Option<String>,
    /// The invariants it broke as run (before shrinking): what the counts are made of.
    pub broke: Vec<Broken>,
    /// The failure kept in full (for a generated case, shrunk); `None` past the run's limit.
    pub failure: Option<Failure>,
}

impl CaseRecord {
    /// Where it sorts in a run: named cases in order, then generated ones by seed and `k`.
    pub fn order(&self) -> (bool, u64, usize) {
        (self.seed.is_some(), self.seed.unwrap_or(0), self.index)
    }

    /// What it broke at the grades that count when `grade` is required.
    pub fn counted(&self, grade: Grade) -> impl Iterator<Item = Broken> + '_ {
        self.broke.iter().copied().filter(move |b| grade == Grade::Should || b.grade == Grade::Must)
    }
}

#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct Report {
    pub tool: String,
    pub version: String,
    /// The subprocess protocol version the subject spoke; `None` for in-process subjects.
    #[serde(default)]
    pub protocol: Option<u32>,
    /// The suite the cases were judged by.
    #[serde(default)]
    pub suite: Suite,
    pub subject: String,
    /// What the subject says about itself (`levels`, and for out-of-process subjects its
    /// language and version).
    #[serde(default, skip_serializing_if = "serde_json::Map::is_empty")]
    pub subject_metadata: serde_json::Map<String, serde_json::Value>,
    pub level: Level,
    /// The dialect the wire and bytes levels spoke (`None` at the events level).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub dialect: Option<Dialect>,
    /// The quirk profile that reuses index 0 for every parallel call (openai-chat).
    #[serde(default, skip_serializing_if = "is_false")]
    pub chat_index_zero: bool,
    /// The quirk profile that repeats id and name on every entry of a call (openai-chat).
    #[serde(default, skip_serializing_if = "is_false")]
    pub chat_repeat_fields: bool,
    /// The schema profile: calls judged against their tools' JSON Schemas.
    #[serde(default = "yes")]
    pub schema: bool,
    pub seed: u64,
    /// Every seed, when the report merges runs of several seeds.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub seeds: Vec<u64>,
    /// The slice of the cases this report covers (`K/N`, or `1+3/4` for merged shards that do
    /// not cover the whole run); `None` for a whole run.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub shard: Option<String>,
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
    /// The run judged against an expected-failures baseline.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub baseline: Option<BaselineCheck>,
    /// One record per case, in run order; empty for a report read from the JSON summary.
    #[serde(skip)]
    pub records: Vec<CaseRecord>,
}

fn is_false(b: &bool) -> bool {
    !*b
}

fn yes() -> bool {
    true
}

#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Skipped {
    pub case: String,
    pub reason: String,
}

/// What a report says, as one exit code would (see [`Verdict::code`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Verdict {
    /// Conforms at the required grade (or every failure is listed in the baseline).
    Conforms,
    /// Broke at least one invariant (not listed in the baseline).
    Violations,
    /// Its only unexpected failures are crashes (or timeouts) of the subject.
    Crashed,
    /// Nothing unexpected failed, but a baseline entry names a failure that no longer
    /// happens.
    StaleBaseline,
}

impl Verdict {
    /// The process exit code: 0, 1, 3, 4 (2 is a usage error, 5 an internal error).
    pub fn code(self) -> u8 {
        match self {
            Verdict::Conforms => 0,
            Verdict::Violations => 1,
            Verdict::Crashed => 3,
            Verdict::StaleBaseline => 4,
        }
    }
}

/// Failing generated cases shrunk and kept in full per seed (named failures included); beyond
/// this a run only counts them.
pub const KEEP_FAILURES: usize = 32;

impl Report {
    pub(crate) fn new(subject: &dyn Subject, c: &Certification) -> Report {
        let mut metadata = subject.metadata();
        metadata.insert("levels".into(), serde_json::to_value(subject.levels()).expect("levels serialise"));
        let protocol = metadata.get("protocol").and_then(|p| p.as_u64()).and_then(|p| u32::try_from(p).ok());
        Report {
            tool: "toolcert".into(),
            version: env!("CARGO_PKG_VERSION").into(),
            protocol,
            suite: Suite::of(&serde_json::to_value(c.gen_config()).expect("the generator config serialises")),
            subject: subject.name(),
            subject_metadata: metadata,
            level: c.level,
            dialect: (c.level != Level::Events).then_some(c.speech.dialect),
            chat_index_zero: c.level != Level::Events && c.speech.quirks.chat_index_zero,
            chat_repeat_fields: c.level != Level::Events && c.speech.quirks.chat_repeat_fields,
            schema: c.profile.schema,
            seed: c.seed,
            seeds: Vec::new(),
            shard: (!c.shard.is_whole()).then(|| c.shard.to_string()),
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
            baseline: None,
            records: Vec::new(),
        }
    }

    /// Records a named case that was not run.
    pub(crate) fn skip(&mut self, index: usize, case: &str, reason: &str) {
        self.skipped.push(Skipped { case: case.into(), reason: reason.into() });
        self.records.push(CaseRecord {
            case: case.into(),
            index,
            seed: None,
            status: CaseStatus::Skipped,
            reason: Some(reason.into()),
            broke: Vec::new(),
            failure: None,
        });
    }

    /// Records generated case `k` of `seed`, which the level and dialect cannot express.
    pub(crate) fn unsupported_case(&mut self, (seed, k): (u64, usize), case: &str, reason: &str) {
        self.unsupported += 1;
        self.records.push(CaseRecord {
            case: case.into(),
            index: k,
            seed: Some(seed),
            status: CaseStatus::Skipped,
            reason: Some(reason.into()),
            broke: Vec::new(),
            failure: None,
        });
    }

    /// Records one case run: named case `index`, or generated case `generated = (seed, k)`.
    pub fn record(
        &mut self,
        index: usize,
        case: &Case,
        violations: Vec<Violation>,
        generated: Option<(u64, usize)>,
    ) {
        let broke = Broken::of(&violations);
        self.record_kept(index, case, violations, broke, generated);
    }

    fn record_kept(
        &mut self,
        index: usize,
        case: &Case,
        violations: Vec<Violation>,
        broke: Vec<Broken>,
        generated: Option<(u64, usize)>,
    ) {
        self.cases += 1;
        if generated.is_some() {
            self.generated_cases += 1;
        } else {
            self.named_cases += 1;
        }
        let failure = (!violations.is_empty()).then(|| Failure {
            case: case.name.clone(),
            violations,
            transcript: toolcert_render::transcript(case),
            scenario: case.clone(),
            generated,
        });
        if let Some(f) = &failure {
            self.failures.push(f.clone());
        }
        self.records.push(CaseRecord {
            case: case.name.clone(),
            index: generated.map_or(index, |g| g.1),
            seed: generated.map(|g| g.0),
            status: if failure.is_some() || !broke.is_empty() { CaseStatus::Fail } else { CaseStatus::Pass },
            reason: None,
            broke,
            failure,
        });
    }

    /// Records one generated case. `broke` is what it broke as generated; `keep` keeps it in
    /// full (`case` and `violations` are then its shrunk counterexample).
    pub(crate) fn record_generated(
        &mut self,
        case: &Case,
        violations: Vec<Violation>,
        broke: Vec<Broken>,
        at: (u64, usize),
        keep: bool,
    ) {
        if violations.is_empty() || keep {
            self.record_kept(at.1, case, violations, broke, Some(at));
        } else {
            self.cases += 1;
            self.generated_cases += 1;
            self.more_failures += 1;
            self.records.push(CaseRecord {
                case: case.name.clone(),
                index: at.1,
                seed: Some(at.0),
                status: CaseStatus::Fail,
                reason: None,
                broke,
                failure: None,
            });
        }
    }

    /// Failures kept in full so far.
    pub(crate) fn kept(&self) -> usize {
        self.failures.len()
    }

    /// Derives every count, the per-invariant table and the verdict from the records.
    pub fn finish(&mut self) {
        let records = &self.records;
        let run = || records.iter().filter(|r| r.status != CaseStatus::Skipped);
        self.cases = run().count();
        self.named_cases = run().filter(|r| r.seed.is_none()).count();
        self.generated_cases = self.cases - self.named_cases;
        self.skipped = records
            .iter()
            .filter(|r| r.status == CaseStatus::Skipped && r.seed.is_none())
            .map(|r| Skipped { case: r.case.clone(), reason: r.reason.clone().unwrap_or_default() })
            .collect();
        self.unsupported =
            records.iter().filter(|r| r.status == CaseStatus::Skipped && r.seed.is_some()).count();
        self.failures = records.iter().filter_map(|r| r.failure.clone()).collect();
        self.more_failures = run().filter(|r| r.status == CaseStatus::Fail && r.failure.is_none()).count();

        let mut must: BTreeMap<Invariant, usize> = BTreeMap::new();
        let mut should: BTreeMap<Invariant, usize> = BTreeMap::new();
        for r in run() {
            let mut invs: Vec<Invariant> = r.broke.iter().map(|b| b.invariant).collect();
            invs.dedup();
            for inv in invs {
                let at_must = r.broke.contains(&Broken { invariant: inv, grade: Grade::Must });
                *(if at_must { &mut must } else { &mut should }).entry(inv).or_default() += 1;
            }
        }
        let invariants: Vec<InvariantStatus> = Invariant::ALL
            .iter()
            .map(|&inv| {
                let must_failures = must.get(&inv).copied().unwrap_or(0);
                let should_failures = should.get(&inv).copied().unwrap_or(0);
                status_row(inv, self.grade, must_failures, should_failures)
            })
            .collect();
        self.invariants = invariants;
        self.conclude();
    }

    /// The verdict from the per-invariant table.
    pub(crate) fn conclude(&mut self) {
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

    /// Each case that failed at a grade that counts, with what it broke there, in run order.
    pub fn failing_cases(&self) -> Vec<(&str, Vec<Broken>)> {
        if self.records.is_empty() {
            // A summary read from JSON: the kept failures are all there is.
            return self
                .failures
                .iter()
                .map(|f| {
                    let broke = Broken::of(&f.violations)
                        .into_iter()
                        .filter(|b| self.grade == Grade::Should || b.grade == Grade::Must)
                        .collect();
                    (f.case.as_str(), broke)
                })
                .filter(|(_, b): &(&str, Vec<Broken>)| !b.is_empty())
                .collect();
        }
        self.records
            .iter()
            .map(|r| (r.case.as_str(), r.counted(self.grade).collect::<Vec<_>>()))
            .filter(|(_, b)| !b.is_empty())
            .collect()
    }

    /// What the report says, as one exit code would: unexpected failures (all of them, or
    /// those the baseline does not list) are violations, or a crash when every one of them is
    /// SUBJECT-CRASH; then a stale baseline entry; otherwise the subject conforms.
    pub fn verdict(&self) -> Verdict {
        let crash = |i: Invariant| i == Invariant::SubjectCrash;
        let (unexpected, crash_only) = match &self.baseline {
            Some(b) => {
                (!b.unexpected.is_empty(), b.unexpected.iter().all(|e| e.invariant.is_some_and(crash)))
            }
            None => {
                let failing = self.failing_cases();
                let crash_only = !failing.is_empty()
                    && failing.iter().all(|(_, broke)| broke.iter().all(|b| crash(b.invariant)));
                (!failing.is_empty() || !self.conforms, crash_only)
            }
        };
        if unexpected {
            return if crash_only { Verdict::Crashed } else { Verdict::Violations };
        }
        if self.baseline.as_ref().is_some_and(|b| !b.stale.is_empty()) {
            return Verdict::StaleBaseline;
        }
        Verdict::Conforms
    }

    /// Whether the report holds every case record (it was run, or read from JSONL), so it
    /// can be merged exactly and baselines can see every failure.
    pub fn has_records(&self) -> bool {
        !self.records.is_empty() || (self.cases == 0 && self.skipped.is_empty() && self.unsupported == 0)
    }

    /// "events", or "wire (anthropic)".
    /// The quirk profile the report's wire and bytes levels were spoken in.
    pub fn quirks(&self) -> toolcert_scenario::Quirks {
        toolcert_scenario::Quirks {
            chat_index_zero: self.chat_index_zero,
            chat_repeat_fields: self.chat_repeat_fields,
        }
    }

    /// The implementation the subject said it is (`name version`, from a subprocess subject's
    /// handshake), if it said.
    pub fn implementation_label(&self) -> Option<String> {
        let imp = self.subject_metadata.get("implementation")?;
        let name = imp.get("name")?.as_str()?;
        match imp.get("version").and_then(|v| v.as_str()).filter(|v| !v.is_empty()) {
            Some(v) => Some(format!("{name} {v}")),
            None => Some(name.to_owned()),
        }
    }

    pub fn setting_label(&self) -> String {
        match self.dialect {
            Some(d) if self.level != Level::Events => {
                let mut quirk = String::new();
                if self.chat_index_zero {
                    quirk += ", chat index zero";
                }
                if self.chat_repeat_fields {
                    quirk += ", chat repeated fields";
                }
                format!("{} ({}{quirk})", self.level, d.name())
            }
            _ => self.level.to_string(),
        }
    }

    /// The options that reproduce this run's setting on the command line (after `certify`).
    pub fn setting_args(&self) -> String {
        let mut out = format!("--subject {}", shell_quote(&self.subject));
        if self.level != Level::Events {
            let _ = write!(out, " --level {}", self.level);
            if let Some(d) = self.dialect {
                let _ = write!(out, " --dialect {}", d.name());
            }
            if self.chat_index_zero {
                out += " --chat-index-zero";
            }
            if self.chat_repeat_fields {
                out += " --chat-repeat-fields";
            }
        }
        if !self.schema {
            out += " --no-schema";
        }
        if self.grade == Grade::Must {
            out += " --grade must";
        }
        out
    }

    /// The command that replays the case `case` (generated `gen/SEED/k` or named).
    pub fn replay_command(&self, case: &str, generated: Option<(u64, usize)>) -> String {
        match generated {
            Some((seed, k)) => format!(
                "toolcert certify {} --seed {seed} --cases {} --case {case}",
                self.setting_args(),
                k + 1
            ),
            None => format!("toolcert certify {} --case {case}", self.setting_args()),
        }
    }

    /// The command that replays a failure's saved scenario, as `--out DIR` writes it.
    pub fn replay_scenario_command(&self, case: &str) -> String {
        format!("toolcert certify {} --scenario DIR/failures/{}.json", self.setting_args(), file_stem(case))
    }

    /// The one-line summary: verdict, grade, counts.
    pub fn verdict_line(&self) -> String {
        let verdict = if self.conforms { "CONFORMS" } else { "DOES NOT CONFORM" };
        // A shard (or shards merged short of the whole run) judges only the cases it ran.
        let missing = crate::merge::missing_shards(self);
        let incomplete = if missing.is_empty() {
            String::new()
        } else {
            let list: Vec<String> = missing.iter().map(usize::to_string).collect();
            format!("INCOMPLETE: shards missing ({}); ", list.join(", "))
        };
        format!(
            "{incomplete}{verdict} at the {} grade (passes: {}); {} of {} cases failed",
            self.grade.as_str(),
            self.conformance,
            self.failures.len() + self.more_failures,
            self.cases
        )
    }

    /// The first line: what was certified, how.
    pub fn title_line(&self) -> String {
        let shard = self.shard.as_ref().map(|s| format!(", shard {s}")).unwrap_or_default();
        let seed = if self.seeds.len() > 1 {
            format!("seeds {}", self.seeds.iter().map(u64::to_string).collect::<Vec<_>>().join(","))
        } else {
            format!("seed {}", self.seed)
        };
        format!(
            "toolcert {} certifying {} at the {} level: {} cases ({} named, {} generated, {seed}{shard})",
            self.version,
            self.subject,
            self.setting_label(),
            self.cases,
            self.named_cases,
            self.generated_cases,
        )
    }

    /// The report for a terminal: failures first (with transcripts), then the table.
    pub fn to_text(&self, max_failures: usize) -> String {
        let mut out = String::new();
        let _ = writeln!(out, "{}", self.title_line());
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
        let _ = writeln!(out, "\n{}", self.verdict_line());
        if let Some(b) = &self.baseline {
            let _ = write!(out, "{}", b.to_text());
        }
        out
    }
}

/// The per-invariant row from its failure counts.
pub(crate) fn status_row(
    inv: Invariant,
    grade: Grade,
    must_failures: usize,
    should_failures: usize,
) -> InvariantStatus {
    let must = if must_failures > 0 { Status::Fail } else { Status::Pass };
    let should = if must_failures + should_failures > 0 { Status::Fail } else { Status::Pass };
    InvariantStatus {
        id: inv,
        status: if grade == Grade::Must { must } else { should },
        must,
        should,
        failures: must_failures + should_failures,
        must_failures,
        should_failures,
        rule: inv.rule().into(),
    }
}

fn replay_hint(r: &Report, f: &Failure) -> String {
    let seed = r.replay_command(&f.case, f.generated);
    match f.generated {
        Some(_) => format!(
            "{seed}\n          (that re-shrinks; the shrunk case itself: --out DIR, then {})",
            r.replay_scenario_command(&f.case)
        ),
        None => seed,
    }
}

/// A case name as a file name: `named/keying/a-b` → `named_keying_a-b`.
pub fn file_stem(case: &str) -> String {
    case.chars().map(|c| if c.is_ascii_alphanumeric() || matches!(c, '-' | '.') { c } else { '_' }).collect()
}

/// `s` quoted for a POSIX shell when it needs it.
pub fn shell_quote(s: &str) -> String {
    if !s.is_empty() && s.chars().all(|c| c.is_ascii_alphanumeric() || "-_./:=@+,".contains(c)) {
        s.to_string()
    } else {
        format!("'{}'", s.replace('\'', r"'\''"))
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
        let counts = |grade: Grade| self.grade == Grade::Should || grade == Grade::Must;
        if let Some(f) = self
            .failures
            .iter()
            .find(|f| f.violations.iter().any(|v| v.invariant == invariant && counts(v.grade)))
        {
            let mut one = self.clone();
            one.failures = vec![f.clone()];
            one.more_failures = 0;
            return Some(one.to_text(1));
        }
        // Broken only by cases not kept in full (or whose shrunk form broke another rule).
        let cases: Vec<&CaseRecord> = self
            .records
            .iter()
            .filter(|r| r.broke.iter().any(|b| b.invariant == invariant && counts(b.grade)))
            .collect();
        let mut out = format!("{invariant} is broken by {} cases not kept in full", status.failures);
        if let Some(first) = cases.first() {
            let _ = write!(
                out,
                ", the first {}; replay it: {}",
                first.case,
                self.replay_command(&first.case, first.seed.map(|s| (s, first.index)))
            );
        }
        let mut summary = self.clone();
        summary.failures.clear();
        Some(format!("{out}\n\n{}", summary.to_text(0)))
    }
}

#[cfg(test)]
#[path = "report_tests.rs"]
mod tests;
