//! The report of a certification run: one record per case, per-invariant status at each
//! grade, the failing cases with their transcripts, and a text rendering for people.
//!
//! The per-case records are the source of truth: every count and status is derived from
//! them by [`Report::finish`], which is what lets reports of several shards (or several runs
//! of one implementation) merge back into one ([`crate::merge`]). They travel in the JSONL
//! stream ([`crate::jsonl`]), not in the JSON report, which stays a summary.

use std::fmt::Write;

use serde::{Deserialize, Serialize};
use toolcert_oracle::{Exercised, Grade, Invariant, Violation};
use toolcert_scenario::{Case, Dialect};
use toolcert_subject::{Level, Subject};

use crate::baseline::BaselineCheck;
use crate::findings::{Bug, Finding, Signature, Size};
use crate::suite::Suite;
use crate::tally::{RecordSink, Tally};
use crate::tiers::{CaseClass, TierStatus};
use crate::Certification;

/// Pass, fail or not exercised, per invariant and grade. A rule passes only when at least
/// one case that could break it ran.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Status {
    Pass,
    Fail,
    /// No case of the run could have broken it (`n/a`): not a pass.
    #[serde(rename = "n/a")]
    NotExercised,
}

impl Status {
    pub fn as_str(self) -> &'static str {
        match self {
            Status::Pass => "pass",
            Status::Fail => "fail",
            Status::NotExercised => "n/a",
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
    /// Cases run that could have broken it.
    #[serde(default)]
    pub exercised: usize,
    /// Why it is `n/a`, when it is.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub not_exercised: Option<String>,
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
    /// The signatures of its violations as run: what the findings are made of.
    pub signatures: Vec<Signature>,
    /// The invariants it could have broken.
    pub exercised: Exercised,
    /// What puts it in a tier of its own (a fault, an inexact number): docs/SPEC.md, "Tiers".
    pub class: CaseClass,
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
    /// The server profile the wire and bytes levels were spoken in (docs/SPEC.md, "Server
    /// profiles"); `None` for the dialect's provider's own, and at the events level.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub profile: Option<String>,
    /// Reports written before the server profiles: the quirk profile that reused index 0 for
    /// every parallel call (openai-chat). Read, never written.
    #[serde(default, skip_serializing)]
    pub chat_index_zero: bool,
    /// Reports written before the server profiles: the quirk profile that repeated id and
    /// name on every entry (openai-chat). Read, never written.
    #[serde(default, skip_serializing)]
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
    /// Named cases run (below the events level, lowered to the dialect).
    pub named_cases: usize,
    /// Named cases not run: `skipped.len()`, each reason in `skipped` (below the events level,
    /// what the dialect's wire lacks to carry the case's meaning).
    #[serde(default)]
    pub named_skipped: usize,
    pub generated_cases: usize,
    pub skipped: Vec<Skipped>,
    pub invariants: Vec<InvariantStatus>,
    /// One verdict per tier (docs/SPEC.md, "Tiers"), what every view leads with; empty for a
    /// report written before the tiers.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub tiers: Vec<TierStatus>,
    /// The bugs behind the failing cases: the findings grouped by cause (docs/SPEC.md,
    /// "Bugs"), must before should, most cases first. Empty for a report written before them.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub bugs: Vec<Bug>,
    /// The distinct symptoms behind the failing cases (one per signature), must before
    /// should, most cases first.
    #[serde(default)]
    pub findings: Vec<Finding>,
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
    /// The signatures some failure kept in full shows.
    #[serde(skip)]
    pub(crate) reproduced: std::collections::BTreeSet<Signature>,
    /// Read from a report written before toolcert counted what each case exercised and
    /// recorded signatures: its rules are judged as then (pass unless broken) and it has no
    /// findings to show.
    #[serde(skip)]
    pub legacy: bool,
    /// Where `--out` saves the reproducers ([`Certification::reproducers`]).
    #[serde(skip)]
    pub reproducers: Option<String>,
    /// What `finish` derives the report from.
    #[serde(skip)]
    pub(crate) tally: Tally,
    /// A streamed run: each record was tallied and handed to a sink as it was made, and
    /// `records` keeps only the named, failing and skipped ones.
    #[serde(skip)]
    pub(crate) streamed: Option<Streamed>,
    /// The subject's price on the cost suite (`certify --cost`), at this setting; a
    /// superlinear cost counts against the verdict.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cost: Option<crate::cost::CostReport>,
    /// The subject's price on the bounded suite (`certify --bounded`: the large streams of a
    /// hostile upstream, docs/SPEC.md "The bounded rule"), at this setting; a broken rule
    /// counts against the verdict.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub bounded: Option<crate::cost::CostReport>,
}

/// How far a streamed run has handed its records on.
#[derive(Clone, Debug, Default)]
pub(crate) struct Streamed {
    /// Records before this index were tallied and handed to the sink.
    pub handed: usize,
    /// Generated records kept (failing or skipped), at most [`MAX_KEPT_RECORDS`].
    pub kept_generated: usize,
    /// The generated cases of the run, to tell which ones ran: the count, the shard and the
    /// filter.
    pub span: Option<(usize, crate::Shard, Option<String>)>,
}

/// The most generated records (failing or skipped ones) a streamed run keeps in memory for
/// the text, JUnit and baseline views; past it they are counted (and streamed) only.
pub const MAX_KEPT_RECORDS: usize = 100_000;

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

impl Report {
    pub(crate) fn new(subject: &dyn Subject, c: &Certification) -> Report {
        let mut metadata = subject.metadata();
        metadata.insert("levels".into(), serde_json::to_value(subject.levels()).expect("levels serialise"));
        let protocol = metadata.get("protocol").and_then(|p| p.as_u64()).and_then(|p| u32::try_from(p).ok());
        Report {
            tool: "toolcert".into(),
            version: env!("CARGO_PKG_VERSION").into(),
            protocol,
            suite: Suite::with_sample(
                &c.suite_named(),
                &serde_json::to_value(c.gen_config()).expect("the generator config serialises"),
                &c.verdict_sample(),
            ),
            subject: subject.name(),
            subject_metadata: metadata,
            level: c.level,
            dialect: (c.level != Level::Events).then_some(c.speech.dialect),
            profile: profile_name(c.level, c.speech),
            chat_index_zero: false,
            chat_repeat_fields: false,
            schema: c.profile.schema,
            seed: c.seed,
            seeds: Vec::new(),
            shard: (!c.shard.is_whole()).then(|| c.shard.to_string()),
            grade: c.grade,
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
            reproducers: c.reproducers.clone(),
            tally: Tally::default(),
            streamed: None,
            cost: None,
            bounded: None,
        }
    }

    /// Tallies the records made since the last call, hands them to `sink`, and drops those
    /// a report does not read again (passing generated cases): a streamed run's memory does
    /// not grow with its passing cases.
    pub(crate) fn hand_on(&mut self, sink: &mut dyn RecordSink) {
        let Some(st) = self.streamed.as_mut() else { return };
        let from = st.handed;
        for r in &self.records[from..] {
            self.tally.add(r);
            sink.case(r);
        }
        // Only the records handed on now are sifted (the ones before `from` were, and a run's
        // named cases stay there): the kept ones move up in order, the rest are cut off.
        let mut to = from;
        for at in from..self.records.len() {
            let r = &self.records[at];
            let keep =
                r.seed.is_none() || (r.status != CaseStatus::Pass && st.kept_generated < MAX_KEPT_RECORDS);
            if keep {
                if r.seed.is_some() {
                    st.kept_generated += 1;
                }
                self.records.swap(to, at);
                to += 1;
            }
        }
        self.records.truncate(to);
        st.handed = self.records.len();
    }

    /// Whether the run streamed its records (its JSONL went to a sink as it ran, and the
    /// report cannot be written as JSONL again).
    pub fn is_streamed(&self) -> bool {
        self.streamed.is_some()
    }

    /// Whether case `case` ran in this run (not skipped, not filtered out): from the records
    /// when the report holds them all, otherwise from what the run was asked to run.
    pub fn ran(&self, case: &str) -> bool {
        let listed =
            |case: &str| self.records.iter().any(|r| r.case == case && r.status != CaseStatus::Skipped);
        let span = match &self.streamed {
            Some(Streamed { span: Some(span), .. }) => span,
            _ => return listed(case),
        };
        let generated = case
            .strip_prefix("gen/")
            .and_then(|rest| rest.split_once('/'))
            .and_then(|(seed, k)| Some((seed.parse::<u64>().ok()?, k.parse::<usize>().ok()?)));
        match generated {
            Some((seed, k)) if seed == self.seed => {
                let (cases, shard, filter) = span;
                let skipped = self.records.iter().any(|r| r.case == case && r.status == CaseStatus::Skipped);
                k < *cases && shard.takes(k) && filter.as_deref().is_none_or(|f| case.contains(f)) && !skipped
            }
            Some(_) => false,
            None => listed(case),
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
            signatures: Vec::new(),
            exercised: Exercised::default(),
            class: CaseClass::default(),
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
            signatures: Vec::new(),
            exercised: Exercised::default(),
            class: CaseClass::default(),
            failure: None,
        });
    }

    /// Records one case run: named case `index`, or generated case `generated = (seed, k)`,
    /// kept in full.
    pub fn record(
        &mut self,
        index: usize,
        case: &Case,
        violations: Vec<Violation>,
        generated: Option<(u64, usize)>,
    ) {
        let signatures = Signature::all(&violations);
        let broke = Broken::of(&violations);
        let at = generated.unwrap_or((0, index));
        self.push_case(
            &case.name,
            at,
            generated.is_some(),
            broke,
            signatures,
            (Exercised::default(), CaseClass::of(case)),
            Some((case, violations)),
        );
    }

    /// Records one case as run: `as_run` its violations (what the counts and findings are
    /// made of), `exercised` what it could have broken, `kept` the failure kept in full (for
    /// a generated case, a shrunk counterexample with its violations).
    #[allow(clippy::too_many_arguments)]
    pub(crate) fn record_run(
        &mut self,
        name: &str,
        index: usize,
        generated: Option<u64>,
        as_run: &[Violation],
        exercised: Exercised,
        class: CaseClass,
        kept: Option<(&Case, Vec<Violation>)>,
    ) {
        let at = (generated.unwrap_or(0), index);
        let broke = Broken::of(as_run);
        let signatures = Signature::all(as_run);
        self.push_case(name, at, generated.is_some(), broke, signatures, (exercised, class), kept);
    }

    #[allow(clippy::too_many_arguments)]
    fn push_case(
        &mut self,
        name: &str,
        (seed, index): (u64, usize),
        generated: bool,
        broke: Vec<Broken>,
        signatures: Vec<Signature>,
        (exercised, class): (Exercised, CaseClass),
        kept: Option<(&Case, Vec<Violation>)>,
    ) {
        self.cases += 1;
        if generated {
            self.generated_cases += 1;
        } else {
            self.named_cases += 1;
        }
        let failure = kept.filter(|(_, v)| !v.is_empty()).map(|(case, violations)| Failure {
            case: name.to_string(),
            violations,
            transcript: toolcert_render::transcript(case),
            scenario: case.clone(),
            generated: generated.then_some((seed, index)),
        });
        if let Some(f) = &failure {
            for sig in Signature::all(&f.violations) {
                self.reproduced.insert(sig);
            }
            self.failures.push(f.clone());
        } else if !broke.is_empty() {
            self.more_failures += 1;
        }
        self.records.push(CaseRecord {
            case: name.to_string(),
            index,
            seed: generated.then_some(seed),
            status: if failure.is_some() || !broke.is_empty() { CaseStatus::Fail } else { CaseStatus::Pass },
            reason: None,
            broke,
            signatures,
            exercised,
            class,
            failure,
        });
    }

    /// Whether a failure kept in full already shows `sig` (a new signature is worth shrinking).
    pub(crate) fn reproduces(&self, sig: &Signature) -> bool {
        self.reproduced.contains(sig)
    }

    /// Keeps `case` with its `violations` in full as the failure of record `at` (found after
    /// the record was made); [`Report::finish`] counts it.
    pub(crate) fn keep(&mut self, at: usize, case: &Case, violations: Vec<Violation>) {
        let Some(r) = self.records.get_mut(at) else { return };
        for sig in Signature::all(&violations) {
            self.reproduced.insert(sig);
        }
        r.failure = Some(Failure {
            case: r.case.clone(),
            transcript: toolcert_render::transcript(case),
            scenario: case.clone(),
            generated: r.seed.map(|s| (s, r.index)),
            violations,
        });
    }

    /// Whether a failure kept in full already shows a violation of `inv`.
    pub(crate) fn reproduces_invariant(&self, inv: Invariant) -> bool {
        self.reproduced.iter().any(|sig| sig.invariant == inv)
    }

    /// Derives every count, the per-invariant table and the verdict from the records (or, for
    /// a streamed run, from the tally made as they were streamed).
    pub fn finish(&mut self) {
        if self.streamed.is_none() {
            self.tally = Tally::of(&self.records);
        }
        let t = &self.tally;
        self.cases = t.run;
        self.named_cases = t.named;
        self.generated_cases = self.cases - self.named_cases;
        self.skipped = t.skipped.clone();
        self.named_skipped = self.skipped.len();
        self.unsupported = t.unsupported;
        self.failures = t.failures.clone();
        self.more_failures = t.more_failures;
        let (must, should) = (&t.must, &t.should);
        // Every case a current run records exercises SUBJECT-CRASH at least: records that all
        // exercise nothing come from a report older than the exercised counts.
        self.legacy = t.run > 0 && t.exercised_nothing == t.run;
        // Such a report is judged as it was written: every case as able to break every rule of
        // its level and profile.
        let (level, schema) = (self.level, self.schema);
        let legacy = |inv: Invariant| {
            self.legacy
                && (inv != Invariant::AccSchema || schema)
                // Rules added after the exercised counts: such a report never checked them.
                && !Invariant::NEWER_THAN_EXERCISED_COUNTS.contains(&inv)
                && !(inv.id().starts_with("WIRE-") && level == Level::Events)
                && !(inv.id().starts_with("BYTES-") && level != Level::Bytes)
        };
        let exercised: Vec<usize> = Invariant::ALL
            .iter()
            .enumerate()
            .map(|(n, &inv)| if legacy(inv) { t.run } else { t.exercised.get(n).copied().unwrap_or(0) })
            .collect();
        let invariants: Vec<InvariantStatus> = Invariant::ALL
            .iter()
            .zip(&exercised)
            .map(|(&inv, &exercised)| {
                let must_failures = must.get(&inv).copied().unwrap_or(0);
                let should_failures = should.get(&inv).copied().unwrap_or(0);
                let mut row = status_row(inv, self.grade, must_failures, should_failures, exercised);
                if row.status == Status::NotExercised {
                    row.not_exercised = Some(self.why_not_exercised(inv));
                }
                row
            })
            .collect();
        self.invariants = invariants;
        // Only the hostile profiles carry the hostile members (docs/SPEC.md, "The hostile
        // upstream").
        let hostile = self.profile.as_deref() == Some("hostile");
        self.tiers = t.tiers.statuses(self.grade, self.profile.is_some(), hostile);
        self.findings = self.derive_findings();
        self.bugs = self.derive_bugs();
        for t in &mut self.tiers {
            t.bugs = self
                .bugs
                .iter()
                .filter(|b| b.symptoms.iter().any(|s| t.findings.contains(s)))
                .map(|b| b.id.clone())
                .collect();
        }
        self.conclude();
    }

    /// Why no case of this run could break `inv`.
    fn why_not_exercised(&self, inv: Invariant) -> String {
        use Invariant::*;
        let id = inv.id();
        if id.starts_with("WIRE-") && self.level == Level::Events {
            return "a wire rule: not exercised at the events level (run --level wire or bytes)".into();
        }
        if id.starts_with("BYTES-") && self.level != Level::Bytes {
            return format!("a bytes rule: not exercised at the {} level (run --level bytes)", self.level);
        }
        // The dialects a wire rule belongs to: those whose level attribution names it.
        let homes = || -> Vec<&str> {
            toolcert_dialect::registry()
                .iter()
                .filter(|d| d.attribution().iter().any(|a| a.rule == id))
                .map(|d| d.name())
                .collect()
        };
        match inv {
            _ if self.legacy && Invariant::NEWER_THAN_EXERCISED_COUNTS.contains(&inv) => {
                "the report predates this rule".into()
            }
            AccSchema if !self.schema => "the schema profile is off (--no-schema)".into(),
            WireChat | WireDone => format!("an {} rule: not exercised in this dialect", homes().join(" or ")),
            AccEnding => "the subject does not say how a turn ended (no `ending` in its observations)".into(),
            HostilePollution => {
                "the subject's runtime is not checked (no `pollution` in its observations: the Node and Python adapter packages check it)".into()
            }
            WireUnknown => {
                format!(
                    "generated in {} only: no unknown event or delta was delivered",
                    homes().join(" and ")
                )
            }
            _ if self.cases == 0 => "no case ran".into(),
            _ if self.cases == 1 => "the one case run could not break it (see docs/SPEC.md)".into(),
            _ => format!("none of the {} cases run could break it (see docs/SPEC.md)", self.cases),
        }
    }

    /// The findings from the records: one per signature, counted over the cases that showed
    /// it, with the smallest failure kept in full that shows it as reproducer.
    fn derive_findings(&self) -> Vec<Finding> {
        let by_sig = &self.tally.signatures;
        // Kept failures whose signatures no record lists (shrinking found another view of
        // the same case) still reproduce what they show.
        let mut findings: Vec<Finding> = by_sig
            .iter()
            .map(|(sig, (cases, first))| {
                let cases = *cases;
                let smallest = self
                    .failures
                    .iter()
                    .filter(|f| f.violations.iter().any(|v| sig.matches(v)))
                    .map(|f| (Size::of(&f.scenario), f))
                    .min_by_key(|(size, f)| (*size, f.case.clone()));
                let replay = match smallest {
                    Some((_, f)) if self.reproducers.is_some() => self.replay_saved_command(&f.case),
                    Some((_, f)) => self.replay_command(&f.case, f.generated),
                    None => self.replay_command(&first.case, first.seed.map(|s| (s, first.index))),
                };
                Finding {
                    id: sig.id(),
                    invariant: sig.invariant,
                    grade: sig.grade,
                    kind: sig.kind.clone(),
                    title: sig.title(),
                    cases,
                    first_case: first.case.clone(),
                    settings: vec![self.setting_label()],
                    size: smallest.map(|(size, _)| size),
                    reproducer: smallest.map(|(_, f)| {
                        let mut f = f.clone();
                        // The reproducer shows the violations of its own finding.
                        f.violations.retain(|v| sig.matches(v));
                        f
                    }),
                    replay,
                }
            })
            .collect();
        findings.sort_by(|a, b| {
            (a.grade, std::cmp::Reverse(a.cases), &a.id).cmp(&(b.grade, std::cmp::Reverse(b.cases), &b.id))
        });
        findings
    }

    /// The findings grouped into bugs, from the co-occurrence tally and the failures kept in
    /// full (a report read from a summary keeps the bugs it was written with).
    fn derive_bugs(&self) -> Vec<Bug> {
        if self.findings.is_empty() {
            return Vec::new();
        }
        let smallest = |f: &Finding| -> Option<&Failure> {
            let case = &f.reproducer.as_ref()?.case;
            self.failures.iter().find(|x| &x.case == case)
        };
        crate::findings::group_bugs(
            &self.findings,
            |a, b| self.tally.together.get(&(a.clone(), b.clone())).copied().unwrap_or(0),
            |f| smallest(f).map(|x| Signature::all(&x.violations)).unwrap_or_default(),
            |f| f.reproducer.as_ref().map(|r| crate::findings::trigger_shape(&r.scenario)),
        )
    }

    /// Bugs that count at the required grade.
    pub fn counted_bugs(&self) -> impl Iterator<Item = &Bug> {
        self.bugs.iter().filter(|b| b.counts(self.grade))
    }

    /// Findings that count at the required grade.
    pub fn counted_findings(&self) -> impl Iterator<Item = &Finding> {
        self.findings.iter().filter(|f| f.counts(self.grade))
    }

    /// Whether the run ran nothing that could break a rule (every case filtered out, skipped
    /// or not expressible in the setting): such a run certifies nothing.
    pub fn ran_nothing(&self) -> bool {
        self.cases == 0
    }

    /// The verdict from the per-invariant table.
    pub(crate) fn conclude(&mut self) {
        let must_ok = self.invariants.iter().all(|i| i.must != Status::Fail);
        let should_ok = self.invariants.iter().all(|i| i.should != Status::Fail);
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
        // A superlinear cost (`certify --cost`) is a violation, whatever the cases say.
        if self.cost.as_ref().is_some_and(crate::cost::CostReport::superlinear)
            || self.bounded.as_ref().is_some_and(crate::cost::CostReport::broken)
        {
            return Verdict::Violations;
        }
        let crash = |i: Invariant| i == Invariant::SubjectCrash;
        let (unexpected, crash_only) = match &self.baseline {
            Some(b) => {
                (!b.unexpected.is_empty(), b.unexpected.iter().all(|e| e.invariant.is_some_and(crash)))
            }
            // A streamed run keeps a bounded number of failing records: its tally counts them all.
            None if self.streamed.is_some() => {
                let (failing, crash_only) = self.tally.failing(self.grade);
                (failing > 0 || !self.conforms, crash_only)
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
        self.streamed.is_none() && !self.records.is_empty()
            || (self.cases == 0 && self.skipped.is_empty() && self.unsupported == 0)
    }

    /// "events", or "wire (anthropic)".
    /// The wire behaviours of the server profile the report's wire and bytes levels were
    /// spoken in (a report written before the profiles: its two quirk flags).
    pub fn quirks(&self) -> toolcert_scenario::Quirks {
        let named = self.dialect.zip(self.profile.as_deref()).and_then(|(d, p)| d.profile(p));
        match named {
            Some(p) => p.quirks,
            None => toolcert_scenario::Quirks {
                chat_index_zero: self.chat_index_zero,
                chat_repeat_fields: self.chat_repeat_fields,
                ..toolcert_scenario::Quirks::PLAIN
            },
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
            // A report written before the profiles keeps the label it was written with.
            Some(d) if self.level != Level::Events && (self.chat_index_zero || self.chat_repeat_fields) => {
                let mut quirk = String::new();
                if self.chat_index_zero {
                    quirk += ", chat index zero";
                }
                if self.chat_repeat_fields {
                    quirk += ", chat repeated fields";
                }
                format!("{} ({}{quirk})", self.level, d.name())
            }
            Some(d) if self.level != Level::Events => {
                let speech = toolcert_subject::driver::Speech { dialect: d, quirks: self.quirks() };
                setting_name(self.level, speech)
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
            // A report written before the profiles replays with the flags it was run with.
            if self.chat_index_zero {
                out += " --chat-index-zero";
            }
            if self.chat_repeat_fields {
                out += " --chat-repeat-fields";
            }
            let written_before = self.chat_index_zero || self.chat_repeat_fields;
            if let Some(p) = self
                .dialect
                .and_then(|d| d.profile_of(self.quirks()))
                .filter(|p| !p.quirks.is_plain() && !written_before)
            {
                let _ = write!(out, " --profile {}", p.name);
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

    /// The command that replays a failure's scenario where this run's `--out` saved it.
    pub fn replay_saved_command(&self, case: &str) -> String {
        let dir = self.reproducers.as_deref().unwrap_or("DIR");
        let path = format!("{}/failures/{}.json", dir.trim_end_matches('/'), file_stem(case));
        format!("toolcert certify {} --scenario {}", self.setting_args(), shell_quote(&path))
    }

    /// The command that replays a failure's saved scenario, as `--out DIR` writes it.
    pub fn replay_scenario_command(&self, case: &str) -> String {
        format!("toolcert certify {} --scenario DIR/failures/{}.json", self.setting_args(), file_stem(case))
    }

    /// The one-line summary: verdict, grade, counts.
    pub fn verdict_line(&self) -> String {
        let verdict = if self.conforms { "CONFORMS" } else { "DOES NOT CONFORM" };
        let na = self.invariants.iter().filter(|i| i.status == Status::NotExercised).count();
        let na = if na > 0 { format!("; {na} not exercised (n/a)") } else { String::new() };
        // A shard (or shards merged short of the whole run) judges only the cases it ran.
        let missing = crate::merge::missing_shards(self);
        let incomplete = if missing.is_empty() {
            String::new()
        } else {
            let list: Vec<String> = missing.iter().map(usize::to_string).collect();
            format!("INCOMPLETE: shards missing ({}); ", list.join(", "))
        };
        format!(
            "{incomplete}{verdict} at the {} grade (passes: {}); {} in {} of {}{na}{}",
            self.grade.as_str(),
            self.conformance,
            plural(self.counted_findings().count(), "distinct finding", "distinct findings"),
            self.failures.len() + self.more_failures,
            plural(self.cases, "case failed", "cases failed").replace(" failed", ""),
            crate::cost::verdict_suffix(std::slice::from_ref(self)),
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
            "toolcert {} certifying {} at the {} level: {} ({} named, {} named skipped, {} generated, \
             {seed}{shard})",
            self.version,
            self.subject,
            self.setting_label(),
            plural(self.cases, "case", "cases"),
            self.named_cases,
            self.named_skipped,
            self.generated_cases,
        )
    }

    /// The report for a terminal: failures first (with transcripts), then the table.
    pub fn to_text(&self, max_findings: usize) -> String {
        let mut out = String::new();
        let _ = writeln!(out, "{}", self.title_line());
        let _ = write!(out, "{}", self.tiers_text());
        let _ = write!(out, "{}", self.findings_text(max_findings));
        if let Some(coverage) = &self.coverage_text {
            let _ = writeln!(out, "\ncoverage of the generated cases:\n{coverage}");
        }
        let _ = write!(out, "\n{}", self.table_text());
        if let Some(cost) = &self.cost {
            let _ = write!(out, "\n{}", cost.to_text());
        }
        if let Some(bounded) = &self.bounded {
            let _ = write!(out, "\n{}", bounded.to_text());
        }
        if !self.skipped.is_empty() {
            let _ = writeln!(
                out,
                "named cases: {} run, {} skipped (below the events level: what the dialect's wire lacks)",
                self.named_cases, self.named_skipped
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

    /// The tiers, one line each (nothing for a report written before them).
    pub fn tiers_text(&self) -> String {
        let mut out = String::new();
        if self.tiers.is_empty() {
            return out;
        }
        let _ = writeln!(out, "tiers:");
        for t in &self.tiers {
            let _ = writeln!(out, "  {}", t.line());
        }
        out
    }

    /// "N bugs (M distinct findings)", one line each with its symptoms, then the first
    /// `detail` bugs in full (their root symptom's reproducer). A report written before bugs
    /// lists its findings.
    pub fn findings_text(&self, detail: usize) -> String {
        let mut out = String::new();
        let counted: Vec<&Finding> = self.counted_findings().collect();
        if counted.is_empty() {
            return out;
        }
        let failing = match self.streamed {
            Some(_) => self.tally.failing(self.grade).0,
            None => self.failing_cases().len(),
        };
        let cases = if failing == 1 { "case" } else { "cases" };
        let bugs: Vec<&Bug> = self.counted_bugs().collect();
        if bugs.is_empty() {
            let _ = writeln!(
                out,
                "\n{} in {failing} failing {cases}:",
                plural(counted.len(), "distinct finding", "distinct findings")
            );
            for f in &counted {
                let _ = writeln!(out, "  {}", finding_line(f));
            }
            for f in counted.iter().take(detail) {
                let _ = write!(out, "{}", self.finding_text(f));
            }
            if counted.len() > detail {
                let _ = writeln!(
                    out,
                    "\n... {} more findings in full with --show N or --format json",
                    counted.len() - detail
                );
            }
            return out;
        }
        let _ = writeln!(
            out,
            "\n{} ({}) in {failing} failing {cases}:",
            plural(bugs.len(), "bug", "bugs"),
            plural(counted.len(), "distinct finding", "distinct findings"),
        );
        for b in &bugs {
            let _ = writeln!(out, "  {}", b.line());
            for id in &b.symptoms {
                if let Some(f) = self.findings.iter().find(|f| &f.id == id) {
                    let _ = writeln!(out, "      {}", finding_line(f));
                }
            }
        }
        for b in bugs.iter().take(detail) {
            let _ = write!(out, "\nBUG {} {}\n  trigger: {}", b.id, b.title, b.trigger);
            match b.symptoms.len() {
                1 => {}
                n => {
                    let _ = write!(out, "\n  symptoms ({n}): {}", b.symptoms.join(", "));
                }
            }
            out.push('\n');
            if let Some(f) = self.findings.iter().find(|f| f.id == b.symptoms[0]) {
                let _ = write!(out, "{}", self.finding_text(f));
            }
        }
        if bugs.len() > detail {
            let _ = writeln!(
                out,
                "\n... {} more bugs in full with --show N or --format json",
                bugs.len() - detail
            );
        }
        out
    }

    /// One finding in full: its reproducer's violations, why it matters, the transcript and
    /// the replay command.
    pub fn finding_text(&self, f: &Finding) -> String {
        let mut out = String::new();
        let _ = writeln!(out, "\nFINDING {} {}", f.id, f.title);
        let _ =
            writeln!(out, "  {} of {}, first {}", f.cases, plural(self.cases, "case", "cases"), f.first_case);
        let _ = writeln!(out, "  why it matters: {}", f.invariant.why());
        match &f.reproducer {
            Some(r) => {
                let size = f.size.unwrap_or_default();
                let _ = writeln!(out, "  smallest reproducer: {} ({})", r.case, size);
                for v in &r.violations {
                    let stream = if r.scenario.streams.len() > 1 {
                        format!(" stream {}", v.stream)
                    } else {
                        String::new()
                    };
                    let _ = writeln!(out, "  {v}{stream}");
                }
                let _ = writeln!(out, "  transcript:");
                for line in r.transcript.lines() {
                    let _ = writeln!(out, "    {line}");
                }
                let _ = writeln!(out, "  replay: {}", replay_hint(self, r));
            }
            None => {
                let _ = writeln!(out, "  (no reproducer kept: the run's shrinking budget was spent)");
                let _ = writeln!(out, "  replay: {}", f.replay);
            }
        }
        out
    }

    /// The per-invariant table, with the reason for every `n/a`.
    pub fn table_text(&self) -> String {
        let mut out = String::new();
        let _ = writeln!(
            out,
            "{:<17} {:<5} {:<6} {:>8} {:>9}  rule",
            "invariant", "must", "should", "failing", "exercised"
        );
        for i in &self.invariants {
            let _ = writeln!(
                out,
                "{:<17} {:<5} {:<6} {:>8} {:>9}  {}",
                i.id.id(),
                i.must.as_str(),
                i.should.as_str(),
                i.failures,
                i.exercised,
                i.rule
            );
        }
        for i in self.invariants.iter().filter(|i| i.status == Status::NotExercised) {
            let _ = writeln!(out, "n/a {}: {}", i.id, i.not_exercised.as_deref().unwrap_or("not exercised"));
        }
        out
    }
}

/// `1 case`, `2 cases`.
pub fn plural(n: usize, one: &str, many: &str) -> String {
    format!("{n} {}", if n == 1 { one } else { many })
}

/// The per-invariant row from its failure counts and the cases that exercised it.
pub(crate) fn status_row(
    inv: Invariant,
    grade: Grade,
    must_failures: usize,
    should_failures: usize,
    exercised: usize,
) -> InvariantStatus {
    let unless_failed = if exercised > 0 { Status::Pass } else { Status::NotExercised };
    let must = if must_failures > 0 { Status::Fail } else { unless_failed };
    let should = if must_failures + should_failures > 0 { Status::Fail } else { unless_failed };
    InvariantStatus {
        id: inv,
        status: if grade == Grade::Must { must } else { should },
        must,
        should,
        failures: must_failures + should_failures,
        must_failures,
        should_failures,
        exercised,
        not_exercised: None,
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
    /// The findings of `invariant` at the required grade, each with its reproducer, as
    /// text; `None` when the invariant holds (or was not exercised: see [`Report::status_of`]).
    pub fn failing(&self, invariant: Invariant) -> Option<String> {
        let status = self.invariants.iter().find(|i| i.id == invariant)?;
        if status.status != Status::Fail {
            return None;
        }
        let mut out =
            format!("{invariant} broken by {} of {}\n", status.failures, plural(self.cases, "case", "cases"));
        let mine: Vec<&Finding> = self.counted_findings().filter(|f| f.invariant == invariant).collect();
        for f in &mine {
            out.push_str(&self.finding_text(f));
        }
        if mine.is_empty() {
            // Counted at a grade the findings list does not (should failures under --grade must).
            let _ = writeln!(out, "(no finding at the required grade)");
        }
        Some(out)
    }

    /// The row of `invariant`.
    pub fn status_of(&self, invariant: Invariant) -> Option<&InvariantStatus> {
        self.invariants.iter().find(|i| i.id == invariant)
    }
}

#[cfg(test)]
#[path = "report_tests.rs"]
mod tests;

/// The name of the server profile `speech` is spoken in, for a report: `None` at the events
/// level and for the dialect's provider's own profile. Quirks no profile sends (a hand-made
/// setting) are named by their flags.
pub fn profile_name(level: Level, speech: toolcert_subject::driver::Speech) -> Option<String> {
    if level == Level::Events || speech.quirks.is_plain() {
        return None;
    }
    Some(match speech.dialect.profile_of(speech.quirks) {
        Some(p) => p.name.to_owned(),
        None => speech.quirks.set().collect::<Vec<_>>().join("+"),
    })
}

/// `events`, `bytes (openai-chat)`, `bytes (openai-chat, vllm)`: a setting as reports and
/// progress lines name it.
pub fn setting_name(level: Level, speech: toolcert_subject::driver::Speech) -> String {
    if level == Level::Events {
        return level.to_string();
    }
    match profile_name(level, speech) {
        Some(p) => format!("{level} ({}, {p})", speech.dialect.name()),
        None => format!("{level} ({})", speech.dialect.name()),
    }
}

/// One finding on one line: its id, its cases and its title.
fn finding_line(f: &Finding) -> String {
    format!("{:<24} {:>6} {}  {}", f.id, f.cases, if f.cases == 1 { "case " } else { "cases" }, f.title)
}
