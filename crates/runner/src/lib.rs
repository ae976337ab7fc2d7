//! The runner: many cases against one subject, into a report.
//!
//! The last stage of the data flow before the facade. [`check_case`] renders a case, drives
//! the subject through it and asks the oracle for violations (re-running a failing stream of
//! a multi-stream case alone to tell shared state from a plain bug). [`Certification`] runs
//! the named cases and the generated ones and gathers a [`Report`].

use proptest::strategy::{Strategy, ValueTree};
use proptest::test_runner::TestRunner;
use toolcert_gen::strategy::CaseTree;
use toolcert_gen::{case_strategy, rng_for_seed, CoverageStats, GenConfig};
use toolcert_oracle::{judge_case, Grade, Invariant, Profile, Violation};
use toolcert_render::render;
use toolcert_scenario::Case;
use toolcert_subject::{driver::drive, Observation, Subject};

mod report;
pub use report::{Failure, InvariantStatus, Report, Status};

/// What running one case gave.
#[derive(Clone, Debug)]
pub struct Checked {
    pub violations: Vec<Violation>,
    pub observations: Vec<Observation>,
}

/// Renders `case`, feeds it to a fresh factory of `subject` and judges what it reported.
pub fn check_case(subject: &dyn Subject, case: &Case, profile: Profile) -> Checked {
    let rendered: Vec<_> = case.streams.iter().map(render).collect();
    let factory = subject.factory();
    let observations = drive(&*factory, case, &rendered);
    let mut violations = judge_case(case, &rendered, &observations, profile);
    if case.streams.len() > 1 && !violations.is_empty() {
        isolate(subject, case, profile, &mut violations);
    }
    Checked { violations, observations }
}

/// A stream that fails only in company shares state with its neighbours: its violations
/// are ACC-ISOLATION, whatever they looked like.
fn isolate(subject: &dyn Subject, case: &Case, profile: Profile, violations: &mut [Violation]) {
    let mut failing: Vec<u32> = violations.iter().map(|v| v.stream).collect();
    failing.dedup();
    for s in failing {
        let alone = Case::single(case.name.clone(), case.streams[s as usize].clone());
        let rendered = [render(&alone.streams[0])];
        let obs = drive(&*subject.factory(), &alone, &rendered);
        if judge_case(&alone, &rendered, &obs, profile).is_empty() {
            for v in violations.iter_mut().filter(|v| v.stream == s) {
                v.observed = format!("{} (the stream alone conforms)", v.observed);
                v.invariant = Invariant::AccIsolation;
            }
        }
    }
}

/// A certification run's settings; [`Certification::run`] gives the report.
#[derive(Clone, Debug)]
pub struct Certification {
    /// Generated cases to run besides the named ones.
    pub cases: usize,
    pub seed: u64,
    /// Run the seeds' named cases first.
    pub named: bool,
    /// Only cases whose name contains this.
    pub filter: Option<String>,
    pub profile: Profile,
    /// The grade the subject must reach to conform.
    pub grade: Grade,
}

impl Default for Certification {
    fn default() -> Self {
        Certification {
            cases: 0,
            seed: 1,
            named: true,
            filter: None,
            profile: Profile { schema: true },
            grade: Grade::Should,
        }
    }
}

/// The first failing generated case of a hunt, shrunk.
#[derive(Clone, Debug)]
pub struct Found {
    /// Generated cases run up to and including the first failure.
    pub cases: usize,
    /// The invariants the first failure broke (before shrinking).
    pub first: Vec<Invariant>,
    /// The shrunk counterexample and its violations.
    pub case: Case,
    pub violations: Vec<Violation>,
}

/// Most shrink steps spent on one counterexample.
const SHRINK_LIMIT: usize = 4096;

/// Failing generated cases shrunk and kept in full; beyond this a run only counts them.
const KEEP_FAILURES: usize = 32;

impl Certification {
    pub fn run(&self, subject: &dyn Subject) -> Report {
        self.run_with(subject, &mut |_, _| {})
    }

    /// The generator settings this run uses.
    pub fn gen_config(&self) -> GenConfig {
        GenConfig { schema: self.profile.schema, ..GenConfig::default() }
    }

    /// Runs every case, calling `progress(done, total)` as it goes.
    pub fn run_with(&self, subject: &dyn Subject, progress: &mut dyn FnMut(usize, usize)) -> Report {
        let mut report = Report::new(subject.name(), self);
        if self.named {
            for named in toolcert_gen::named::all() {
                if !self.wants(&named.case.name) {
                    continue;
                }
                if named.needs_schema && !self.profile.schema {
                    report.skip(&named.case.name, "needs the schema profile");
                    continue;
                }
                let checked = check_case(subject, &named.case, self.profile);
                report.record(&named.case, checked.violations, None);
            }
        }
        self.generated(subject, &mut report, progress);
        report.finish();
        report
    }

    /// Runs the generated cases: case `k` of seed `s` is named `gen/s/k` and is the same on
    /// every machine. A failing case is shrunk to a fixpoint that still breaks one of the
    /// invariants it broke.
    fn generated(&self, subject: &dyn Subject, report: &mut Report, progress: &mut dyn FnMut(usize, usize)) {
        if self.cases == 0 {
            return;
        }
        let cfg = self.gen_config();
        let strategy = case_strategy(&cfg);
        let mut runner =
            TestRunner::new_with_rng(proptest::test_runner::Config::default(), rng_for_seed(self.seed));
        let mut coverage = CoverageStats::new();
        let every = (self.cases / 200).max(1);
        for k in 0..self.cases {
            let Ok(mut tree) = strategy.new_tree(&mut runner) else { continue };
            let name = format!("gen/{}/{k}", self.seed);
            let mut case = tree.current();
            case.name.clone_from(&name);
            if !self.wants(&name) {
                continue;
            }
            coverage.record(&case);
            let violations = check_case(subject, &case, self.profile).violations;
            if violations.is_empty() || report.failures.len() >= KEEP_FAILURES {
                report.record_generated(&case, violations, (self.seed, k), false);
            } else {
                let (shrunk, violations) = self.shrink(subject, &mut tree, case, violations);
                report.record_generated(&shrunk, violations, (self.seed, k), true);
            }
            if k % every == 0 || k + 1 == self.cases {
                progress(k + 1, self.cases);
            }
        }
        report.coverage = Some(serde_json::to_value(&coverage).expect("coverage serialises"));
        report.coverage_text = Some(coverage.to_string());
    }

    /// Runs generated cases until the first failure (at most `self.cases`) and shrinks it,
    /// keeping one of `target` broken when the failure broke any of them.
    pub fn hunt(&self, subject: &dyn Subject, target: &[Invariant]) -> Option<Found> {
        let cfg = self.gen_config();
        let strategy = case_strategy(&cfg);
        let mut runner =
            TestRunner::new_with_rng(proptest::test_runner::Config::default(), rng_for_seed(self.seed));
        for k in 0..self.cases {
            let Ok(mut tree) = strategy.new_tree(&mut runner) else { continue };
            let mut case = tree.current();
            case.name = format!("gen/{}/{k}", self.seed);
            let violations = check_case(subject, &case, self.profile).violations;
            if violations.is_empty() {
                continue;
            }
            let first: Vec<Invariant> = violations.iter().map(|v| v.invariant).collect();
            let keep: Vec<Invariant> = first.iter().copied().filter(|i| target.contains(i)).collect();
            let keep = if keep.is_empty() { first.clone() } else { keep };
            let (case, violations) = self.shrink_keeping(subject, &mut tree, case, violations, &keep);
            return Some(Found { cases: k + 1, first, case, violations });
        }
        None
    }

    fn shrink(
        &self,
        subject: &dyn Subject,
        tree: &mut CaseTree,
        case: Case,
        violations: Vec<Violation>,
    ) -> (Case, Vec<Violation>) {
        let broke: Vec<Invariant> = violations.iter().map(|v| v.invariant).collect();
        self.shrink_keeping(subject, tree, case, violations, &broke)
    }

    /// Shrinks to a fixpoint that still breaks one of `broke`.
    fn shrink_keeping(
        &self,
        subject: &dyn Subject,
        tree: &mut CaseTree,
        case: Case,
        violations: Vec<Violation>,
        broke: &[Invariant],
    ) -> (Case, Vec<Violation>) {
        let name = case.name.clone();
        let mut best = (case, violations);
        let mut steps = 0;
        if !tree.simplify() {
            return best;
        }
        loop {
            steps += 1;
            let mut candidate = tree.current();
            candidate.name.clone_from(&name);
            let v = check_case(subject, &candidate, self.profile).violations;
            let still = v.iter().any(|v| broke.contains(&v.invariant));
            if still {
                best = (candidate, v);
                if steps >= SHRINK_LIMIT || !tree.simplify() {
                    break;
                }
            } else if steps >= SHRINK_LIMIT || !tree.complicate() {
                break;
            }
        }
        best
    }

    fn wants(&self, name: &str) -> bool {
        self.filter.as_deref().is_none_or(|f| name.contains(f))
    }
}
