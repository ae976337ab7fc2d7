//! toolcert certifies streaming tool-call accumulators: the client code that turns a streamed
//! LLM response back into the tool calls the model made.
//!
//! This facade re-exports the stages of the data flow (scenario → render → subject → oracle →
//! runner) and resolves subject names (`builtin:reference`). See `ARCHITECTURE.md`.
//!
//! Certify your own accumulator from `cargo test`:
//!
//! ```
//! use toolcert::subject::{subject_fn, Accumulator, Emit, Event, StreamEnd, StreamSpec, TurnError};
//!
//! // Your accumulator, adapted to the events level (here: the reference itself).
//! struct Mine(toolcert::reference::Reference);
//! impl Accumulator for Mine {
//!     fn on_event(&mut self, e: &Event<'_>, out: &mut Emit) -> Result<(), TurnError> { self.0.on_event(e, out) }
//!     fn finish(&mut self, end: StreamEnd, out: &mut Emit) -> Result<(), TurnError> { self.0.finish(end, out) }
//! }
//!
//! let report = toolcert::Certification { profile: toolcert::Profile { schema: false }, ..Default::default() }
//!     .run(&subject_fn("mine", |_: &StreamSpec<'_>| Mine(toolcert::reference::Reference::new())));
//! assert!(report.conforms, "{}", report.to_text(3));
//! ```

pub mod bench;
pub mod corpus;
pub mod fuzzing;
pub mod regressions;
pub mod zoo;

pub use toolcert_exec as exec;
pub use toolcert_gen as gen;
pub use toolcert_mutants as mutants;
pub use toolcert_oracle as oracle;
pub use toolcert_reference as reference;
pub use toolcert_render as render;
pub use toolcert_runner as runner;
pub use toolcert_scenario as scenario;
pub use toolcert_subject as subject;

pub use toolcert_oracle::{Grade, Invariant, Profile, Violation};
pub use toolcert_runner::{check_case, Certification, Report};

use toolcert_subject::Subject;

/// The names of the subjects built into the binary.
pub fn builtin_subjects() -> Vec<String> {
    let mut names = vec!["builtin:reference".to_string(), "builtin:mutant-base".to_string()];
    names.extend(
        toolcert_mutants::zoo()
            .iter()
            .chain(&toolcert_mutants::cost_zoo())
            .map(|m| format!("builtin:mutant/{}", m.name)),
    );
    names
}

/// Resolves a subject name: `builtin:reference`, `builtin:mutant/NAME`, `builtin:mutant-base`.
pub fn subject_by_name(name: &str) -> Result<Box<dyn Subject>, String> {
    if name == "builtin:reference" {
        return Ok(Box::new(toolcert_reference::ReferenceSubject));
    }
    if name == "builtin:mutant-base" {
        return Ok(toolcert_mutants::base());
    }
    if let Some(m) = name.strip_prefix("builtin:mutant/").and_then(toolcert_mutants::by_name) {
        return Ok(m.subject());
    }
    if let Some(cmd) = toolcert_exec::parse_subject(name) {
        return toolcert_exec::ExecSubject::spawn(cmd, Default::default())
            .map(|s| Box::new(s) as Box<dyn Subject>)
            .map_err(|e| e.to_string());
    }
    Err(format!(
        "unknown subject {name:?}; subjects are builtin:reference, builtin:mutant-base, \
         builtin:mutant/NAME (`toolcert zoo` lists the mutants) and exec:COMMAND (any program \
         speaking docs/PROTOCOL.md)"
    ))
}

/// Starts certifying `subject`: set cases, seed and profile, then [`Certify::run`] for the
/// report or [`Certify::assert_conforms`] in a test.
pub fn certify<S: Subject>(subject: S) -> Certify<S> {
    Certify { subject, run: Certification::default(), regressions: None }
}

/// A certification being set up; see [`certify`].
pub struct Certify<S> {
    subject: S,
    run: Certification,
    regressions: Option<std::path::PathBuf>,
}

impl<S: Subject> Certify<S> {
    /// Generated cases to run besides the named ones (default 0: named cases only).
    pub fn cases(mut self, n: usize) -> Self {
        self.run.cases = n;
        self
    }

    /// The seed of the generated cases (default 1); the same seed runs the same cases.
    pub fn seed(mut self, seed: u64) -> Self {
        self.run.seed = seed;
        self
    }

    /// The grade to reach (default [`Grade::Should`]: per-call accounting as well).
    pub fn grade(mut self, grade: Grade) -> Self {
        self.run.grade = grade;
        self
    }

    /// Judge calls against their tools' JSON Schemas (default on). Turn it off for an
    /// accumulator that does not validate.
    pub fn schema(mut self, on: bool) -> Self {
        self.run.profile.schema = on;
        self
    }

    /// Only cases whose name contains `filter`.
    pub fn only(mut self, filter: &str) -> Self {
        self.run.filter = Some(filter.into());
        self
    }

    /// Keeps regressions in `path` (JSON lines of scenarios, `#` comments allowed): the
    /// cases there run after the named ones, and every generated failure is appended, shrunk,
    /// so it keeps being checked after the generators change (values, not seeds). Commit the
    /// file, as proptest users commit `proptest-regressions/`.
    pub fn regressions(mut self, path: impl Into<std::path::PathBuf>) -> Self {
        self.regressions = Some(path.into());
        self
    }

    /// Runs every case and returns the report.
    ///
    /// # Panics
    /// When the regressions file cannot be read, parsed or written: the message names the
    /// file and line.
    pub fn run(&self) -> Report {
        let Some(path) = &self.regressions else { return self.run.run(&self.subject) };
        let saved = regressions::load(path).unwrap_or_else(|e| panic!("{e}"));
        let run = Certification { regressions: saved.clone(), ..self.run.clone() };
        let report = run.run(&self.subject);
        regressions::append(path, &saved, &report).unwrap_or_else(|e| panic!("{e}"));
        report
    }

    /// Runs every case and panics with the readable counterexamples unless the subject
    /// conforms.
    #[track_caller]
    pub fn assert_conforms(&self) {
        let report = self.run();
        if !report.conforms {
            panic!("{}", report.to_text(3));
        }
    }
}

/// Expands to a module of tests, one `#[test]` per invariant, certifying the subject that
/// `$subject` makes. The run happens once and each test reports its own invariant, so a
/// failure names the rule that broke in the test's own name.
///
/// ```ignore
/// toolcert::certify_tests!(mine, toolcert::subject::subject_fn("mine", |_: &StreamSpec<'_>| Mine::new()));
/// ```
#[macro_export]
macro_rules! certify_tests {
    ($module:ident, $subject:expr) => {
        $crate::certify_tests!($module, $subject, |c| c);
    };
    ($module:ident, $subject:expr, $configure:expr) => {
        mod $module {
            #[allow(unused_imports)]
            use super::*;

            fn report() -> &'static $crate::Report {
                static REPORT: ::std::sync::OnceLock<$crate::Report> = ::std::sync::OnceLock::new();
                REPORT.get_or_init(|| {
                    let configure: fn($crate::Certify<_>) -> $crate::Certify<_> = $configure;
                    configure($crate::certify($subject)).run()
                })
            }

            // The events-level rules only: the run feeds the events level, where no case can
            // break a WIRE-* or BYTES-* rule, and a test that cannot fail is not emitted.
            $crate::certify_tests!(@tests report;
                acc_account = AccAccount, acc_fidelity = AccFidelity, acc_identity = AccIdentity,
                acc_order = AccOrder, acc_completion = AccCompletion, acc_truncation = AccTruncation,
                acc_abandon = AccAbandon, acc_strict = AccStrict, acc_protocol = AccProtocol,
                acc_isolation = AccIsolation, acc_text = AccText, acc_schema = AccSchema,
                acc_chunking = AccChunking, subject_crash = SubjectCrash);
        }
    };
    (@tests $report:ident; $($test:ident = $inv:ident),*) => {
        $(
            #[test]
            fn $test() {
                let report = $report();
                if let Some(failure) = report.failing($crate::Invariant::$inv) {
                    panic!("{}", failure);
                }
                // Not exercised (ACC-SCHEMA with `.schema(false)`, a filter that left no case
                // that could break it): said, since libtest cannot mark a test skipped at run time.
                if let Some(row) = report.status_of($crate::Invariant::$inv) {
                    if row.status == $crate::runner::Status::NotExercised {
                        eprintln!(
                            "toolcert: {} n/a (not exercised): {}",
                            row.id,
                            row.not_exercised.as_deref().unwrap_or("no case could break it")
                        );
                    }
                }
            }
        )*
    };
}
