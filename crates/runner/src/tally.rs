//! What a report is derived from, case by case: the counts, the per-invariant tallies, the
//! findings' signatures and the failures kept in full, with no record per case.
//!
//! [`Report::finish`](crate::Report::finish) derives every count, status and finding from a
//! `Tally`. A report that holds every record (read from JSONL, merged, or run keeping its
//! records) tallies them at the end; a streamed run ([`crate::Certification::run_streamed`])
//! tallies each record as it is made, hands it to a [`RecordSink`] (the JSONL stream of
//! `--out` and `--format jsonl`, written as the run goes) and keeps only the few records a
//! report still reads (named cases, failing and skipped cases), so its memory does not grow
//! with the number of passing cases.

use std::collections::BTreeMap;

use toolcert_oracle::{Grade, Invariant};

use crate::findings::Signature;
use crate::report::{CaseRecord, CaseStatus, Failure, Report, Skipped};

/// Where a streamed run's records go, in run order: the header before the first, the
/// footer once the report is finished.
pub trait RecordSink {
    fn header(&mut self, report: &Report);
    fn case(&mut self, record: &CaseRecord);
    fn footer(&mut self, report: &Report);
    /// Whether the sink can take no more (its output failed): the run stops early, as its
    /// stream is lost anyway.
    fn stopped(&self) -> bool {
        false
    }
}

/// A sink that keeps nothing: a streamed run that writes no JSONL.
pub struct Discard;

impl RecordSink for Discard {
    fn header(&mut self, _: &Report) {}
    fn case(&mut self, _: &CaseRecord) {}
    fn footer(&mut self, _: &Report) {}
}

/// The first case that showed a signature (its finding's `first_case` and replay).
#[derive(Clone, Debug, PartialEq)]
pub(crate) struct First {
    pub case: String,
    pub seed: Option<u64>,
    pub index: usize,
}

/// Everything [`Report::finish`](crate::Report::finish) needs, added up record by record.
#[derive(Clone, Debug, Default, PartialEq)]
pub(crate) struct Tally {
    /// Cases run (not skipped), and of them named ones.
    pub run: usize,
    pub named: usize,
    /// Named cases not run.
    pub skipped: Vec<Skipped>,
    /// Generated cases not run.
    pub unsupported: usize,
    pub failures: Vec<Failure>,
    /// Failing cases run without a failure kept in full.
    pub more_failures: usize,
    /// Cases that broke each invariant's must part, and its should part only.
    pub must: BTreeMap<Invariant, usize>,
    pub should: BTreeMap<Invariant, usize>,
    /// Per invariant (in `Invariant::ALL` order): cases run that exercised or broke it.
    pub exercised: Vec<usize>,
    /// Cases run that exercised nothing (all of them: a report older than exercised counts).
    pub exercised_nothing: usize,
    /// Per signature: the cases that showed it, and the first of them.
    pub signatures: BTreeMap<Signature, (usize, First)>,
    /// Per ordered pair of signatures: the failing cases that showed both (what tells one
    /// bug's symptoms apart from another bug's: [`crate::findings::group_bugs`]).
    pub together: BTreeMap<(Signature, Signature), usize>,
    /// Cases run that broke something at a grade that counts, per required grade (must,
    /// should), and of them those whose every counted break is SUBJECT-CRASH.
    pub failing: [usize; 2],
    pub crash_only: [usize; 2],
    /// Per tier: what exercised it and what broke it.
    pub tiers: crate::tiers::TierTally,
}

fn slot(grade: Grade) -> usize {
    match grade {
        Grade::Must => 0,
        Grade::Should => 1,
    }
}

impl Tally {
    /// The tally of every record of `records`.
    pub fn of<'a>(records: impl IntoIterator<Item = &'a CaseRecord>) -> Tally {
        let mut t = Tally::default();
        for r in records {
            t.add(r);
        }
        t
    }

    /// Adds one record.
    pub fn add(&mut self, r: &CaseRecord) {
        if self.exercised.is_empty() {
            self.exercised = vec![0; Invariant::ALL.len()];
        }
        if r.status == CaseStatus::Skipped {
            match r.seed {
                None => self
                    .skipped
                    .push(Skipped { case: r.case.clone(), reason: r.reason.clone().unwrap_or_default() }),
                Some(_) => self.unsupported += 1,
            }
            return;
        }
        self.run += 1;
        if r.seed.is_none() {
            self.named += 1;
        }
        match &r.failure {
            Some(f) => self.failures.push(f.clone()),
            None if r.status == CaseStatus::Fail => self.more_failures += 1,
            None => {}
        }
        let mut invs: Vec<Invariant> = r.broke.iter().map(|b| b.invariant).collect();
        invs.dedup();
        for &inv in &invs {
            let at_must = r.broke.iter().any(|b| b.invariant == inv && b.grade == Grade::Must);
            *(if at_must { &mut self.must } else { &mut self.should }).entry(inv).or_default() += 1;
        }
        if r.exercised.is_empty() {
            self.exercised_nothing += 1;
        }
        for (n, &inv) in Invariant::ALL.iter().enumerate() {
            if r.exercised.contains(inv) || invs.contains(&inv) {
                self.exercised[n] += 1;
            }
        }
        self.tiers.add(r.class, r.exercised, &r.signatures);
        if r.status == CaseStatus::Fail {
            for sig in &r.signatures {
                let first = || First { case: r.case.clone(), seed: r.seed, index: r.index };
                self.signatures.entry(sig.clone()).or_insert_with(|| (0, first())).0 += 1;
            }
            for a in &r.signatures {
                for b in &r.signatures {
                    if a != b {
                        *self.together.entry((a.clone(), b.clone())).or_default() += 1;
                    }
                }
            }
        }
        for grade in [Grade::Must, Grade::Should] {
            let mut counted = r.counted(grade).peekable();
            if counted.peek().is_some() {
                self.failing[slot(grade)] += 1;
                if counted.all(|b| b.invariant == Invariant::SubjectCrash) {
                    self.crash_only[slot(grade)] += 1;
                }
            }
        }
    }

    /// Failing cases at `grade`, and whether each of them only crashed.
    pub fn failing(&self, grade: Grade) -> (usize, bool) {
        let n = self.failing[slot(grade)];
        (n, n > 0 && self.crash_only[slot(grade)] == n)
    }
}
