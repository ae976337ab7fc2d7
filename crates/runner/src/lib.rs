//! The runner: many cases against one subject, into a report.
//!
//! The last stage of the data flow before the facade. [`check_case`] renders a case, drives
//! the subject through it and asks the oracle for violations (re-running a failing stream of
//! a multi-stream case alone to tell shared state from a plain bug). [`Certification`] runs
//! the named cases and the generated ones and gathers a [`Report`].

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

impl Certification {
    pub fn run(&self, subject: &dyn Subject) -> Report {
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
        report.finish();
        report
    }

    fn wants(&self, name: &str) -> bool {
        self.filter.as_deref().is_none_or(|f| name.contains(f))
    }
}
