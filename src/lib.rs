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
//! let report = toolcert::Certification { profile: toolcert::Profile { schema: false, ..Default::default() }, ..Default::default() }
//!     .run(&subject_fn("mine", |_: &StreamSpec<'_>| Mine(toolcert::reference::Reference::new())));
//! assert!(report.conforms, "{}", report.to_text(3));
//! ```

// The rest of the harness (feature `harness`, on by default): a crate that only certifies its
// accumulator from `cargo test` builds none of it.
#[cfg(feature = "harness")]
pub mod bench;
#[cfg(feature = "harness")]
pub use toolcert_fuzzing as fuzzing;
#[cfg(feature = "harness")]
pub use toolcert_runner::corpus;
pub use toolcert_runner::regressions;
pub mod testing;
#[cfg(feature = "harness")]
pub use toolcert_zoo as zoo;

pub use toolcert_dialect as dialect;
#[cfg(feature = "harness")]
pub use toolcert_exec as exec;
pub use toolcert_gen as gen;
#[cfg(feature = "harness")]
pub use toolcert_mutants as mutants;
pub use toolcert_oracle as oracle;
pub use toolcert_reference as reference;
pub use toolcert_render as render;
pub use toolcert_runner as runner;
pub use toolcert_scenario as scenario;
pub use toolcert_schema as schema;
pub use toolcert_subject as subject;

pub use toolcert_oracle::{Grade, Invariant, Profile, Violation};
pub use toolcert_runner::{check_case, Certification, Combined, Report};

pub use toolcert_sse as sse;

use toolcert_subject::Subject;

/// The names of the subjects built into the binary.
#[cfg(feature = "harness")]
pub fn builtin_subjects() -> Vec<String> {
    let mut names = vec!["builtin:reference".to_string(), "builtin:mutant-base".to_string()];
    names.extend(
        toolcert_mutants::zoo()
            .iter()
            .chain(&toolcert_mutants::cost_zoo())
            .chain(&toolcert_mutants::bounded_zoo())
            .map(|m| format!("builtin:mutant/{}", m.name)),
    );
    names
}

/// Resolves a subject name: `builtin:reference`, `builtin:mutant/NAME`, `builtin:mutant-base`,
/// `exec:CMD`.
#[cfg(feature = "harness")]
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

/// Starts certifying `subject` in every setting it declares, as `toolcert certify` does: the
/// events level, and the wire and bytes levels of each dialect in each server profile it
/// declares ([`subject::Subject::settings`]). Set cases, seed and grade, narrow the settings
/// with [`Certify::level`], [`Certify::dialect`] and [`Certify::profile`], then
/// [`Certify::run`] for the verdict over all of them or [`Certify::assert_conforms`] in a
/// test.
///
/// The environment overrides the builder, so one test replays one case from a shell
/// (`TOOLCERT_CASE=gen/1/10 cargo test`): `TOOLCERT_CASE` (a case name filter; `gen/S/K`
/// also sets seed `S` and runs cases up to `K`), `TOOLCERT_SEED`, `TOOLCERT_CASES`,
/// `TOOLCERT_LEVEL`, `TOOLCERT_DIALECT` and `TOOLCERT_PROFILE` (for a subject fed at several
/// levels).
pub fn certify<S: Subject>(subject: S) -> Certify<S> {
    Certify {
        subject,
        run: Certification::default(),
        narrowing: Narrowing::default(),
        regressions: None,
        label: None,
    }
}

/// The settings a [`Certify`] is narrowed to, as given (a profile is resolved when it runs).
#[derive(Clone, Debug, Default)]
struct Narrowing {
    level: Option<subject::Level>,
    dialect: Option<scenario::Dialect>,
    profile: Option<String>,
}

/// A certification being set up; see [`certify`].
pub struct Certify<S> {
    subject: S,
    /// The run at each setting (its level and speech are the setting's).
    run: Certification,
    narrowing: Narrowing,
    regressions: Option<std::path::PathBuf>,
    label: Option<String>,
}

impl<S: Subject> Certify<S> {
    /// Generated cases to run per setting besides the named ones (default 0: named cases
    /// only). `TOOLCERT_CASES` overrides it.
    pub fn cases(mut self, n: usize) -> Self {
        self.run.cases = n;
        self
    }

    /// The seed of the generated cases (default 1); the same seed runs the same cases.
    /// `TOOLCERT_SEED` overrides it.
    pub fn seed(mut self, seed: u64) -> Self {
        self.run.seed = seed;
        self
    }

    /// The grade to reach (default [`Grade::Should`]: per-call accounting as well).
    pub fn grade(mut self, grade: Grade) -> Self {
        self.run.grade = grade;
        self
    }

    /// Judge calls against their tools' JSON Schemas (default on, with the `schema` feature;
    /// without it the run has no schema profile). Turn it off for an accumulator that does not
    /// validate.
    pub fn schema(mut self, on: bool) -> Self {
        self.run.profile.schema = on;
        self
    }

    /// Only cases whose name contains `filter`; `gen/S/K` is exactly generated case `K` of
    /// seed `S` (it sets the seed and the cases). `TOOLCERT_CASE` overrides it.
    pub fn only(mut self, filter: &str) -> Self {
        self.run.filter = Some(filter.into());
        self
    }

    /// Only this level (default: every level the subject declares); the subject must
    /// declare it. `TOOLCERT_LEVEL` overrides it.
    pub fn level(mut self, level: subject::Level) -> Self {
        self.narrowing.level = Some(level);
        self
    }

    /// Only this dialect at the wire and bytes levels, in its provider's own server profile
    /// unless [`Certify::profile`] says otherwise (default: every dialect the subject declares,
    /// each in every profile it declares). The events level is left out unless
    /// [`Certify::level`] asks for it. `TOOLCERT_DIALECT` overrides it.
    pub fn dialect(mut self, dialect: scenario::Dialect) -> Self {
        self.narrowing.dialect = Some(dialect);
        self
    }

    /// Only this server profile (`"vllm"`, `"openai-chat/ollama"`; `toolcert profiles` and
    /// [`scenario::PROFILES`] list them), or every profile of the dialects run (`"all"`).
    /// Profiles are spoken below the events level. `TOOLCERT_PROFILE` overrides it.
    pub fn profile(mut self, name: &str) -> Self {
        self.narrowing.profile = Some(name.into());
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

    /// The name the full report is saved under in `target/toolcert/` (default: the test's).
    #[doc(hidden)]
    pub fn label(mut self, label: &str) -> Self {
        self.label = Some(label.into());
        self
    }

    /// The case filter the run uses (the environment's, or the builder's).
    fn filter(&self) -> Option<String> {
        testing::Overrides::from_env().ok().and_then(|e| e.case).or_else(|| self.run.filter.clone())
    }

    /// The settings to run, as configured, with the environment's overrides applied.
    fn effective(&self) -> Result<runner::Settings, String> {
        let env = testing::Overrides::from_env()?;
        let mut run = self.run.clone();
        if let Some(case) = env.case.clone() {
            run.filter = Some(case);
        }
        run.seed = env.seed.unwrap_or(run.seed);
        run.cases = env.cases.unwrap_or(run.cases);
        // A generated case's name says where it comes from: run exactly the cases up to it,
        // so `gen/1/1` is not also `gen/1/10`.
        if let Some((seed, k)) = run.filter.as_deref().and_then(testing::generated_position) {
            run.seed = seed;
            run.cases = k + 1;
        }
        let words = env.words();
        if !words.is_empty() {
            eprintln!("toolcert: from the environment: {}", words.join(" "));
        }
        if run.profile.schema && !toolcert_schema::AVAILABLE {
            // The light dependency has no validator: the run judges no schemas, and says so.
            run.profile.schema = false;
            eprintln!(
                "toolcert: built without the `schema` feature: tool schemas are not judged (ACC-SCHEMA n/a); \
                 depend with features = [\"schema\"] to judge them"
            );
        }
        let dialect = env.dialect.or(self.narrowing.dialect);
        let profile = env.profile.or_else(|| self.narrowing.profile.clone());
        let narrowing = runner::Narrowing {
            level: env.level.or(self.narrowing.level),
            dialect,
            profile: profile
                .map(|p| runner::ProfileChoice::parse(dialect, &p))
                .transpose()
                .map_err(|e| e.to_string())?,
        };
        runner::Settings::choose(&self.subject, run, &narrowing).map_err(|e| e.to_string())
    }

    /// Runs every case in every setting chosen and returns the verdict over all of them
    /// (each setting's report under `settings`).
    ///
    /// # Panics
    /// When the regressions file cannot be read, parsed or written (the message names the
    /// file and line), an override in the environment does not parse, or the settings asked
    /// for are not among those the subject declares.
    pub fn run(&self) -> runner::Combined {
        let mut settings = self.effective().unwrap_or_else(|e| panic!("toolcert: {e}"));
        let Some(path) = &self.regressions else { return settings.run_kept(&self.subject) };
        let saved = regressions::load(path).unwrap_or_else(|e| panic!("{e}"));
        let mut replayed = saved.clone();
        if let Some(filter) =
            settings.base.filter.as_deref().filter(|f| testing::generated_position(f).is_some())
        {
            // Replaying one generated case: not its saved copy (`regression/gen/...`) too.
            replayed.retain(|c| c.name == filter);
        }
        settings.base.regressions = replayed;
        let combined = settings.run_kept(&self.subject);
        regressions::append(path, &saved, &combined.settings).unwrap_or_else(|e| panic!("{e}"));
        combined
    }

    /// Runs every case in every setting chosen and panics unless the subject conforms in all
    /// of them. The message is short: per broken rule its smallest reproducer and how to
    /// replay it (a builder call, and a shell line with `TOOLCERT_CASE`); the full report is
    /// written under `target/toolcert/` and its path printed. A run in which no case ran (a
    /// filter that matches nothing) panics.
    #[track_caller]
    pub fn assert_conforms(&self) {
        let report = self.run();
        if report.ran_nothing() {
            panic!("toolcert: {}", testing::nothing_ran(&report, self.filter().as_deref()));
        }
        if !report.conforms {
            let test = testing::current_test();
            let name = self.label.clone().or_else(|| test.clone()).unwrap_or_else(|| report.subject.clone());
            let saved = testing::save(&name, &report);
            panic!("{}", testing::failure_text(&report, &saved, test.as_deref()));
        }
    }
}

/// What a module of [`certify_tests!`] runs once and each of its tests reads.
#[doc(hidden)]
pub struct TestRun {
    pub report: runner::Combined,
    pub saved: Option<Result<testing::Saved, String>>,
    pub filter: Option<String>,
}

impl TestRun {
    /// Runs `certify` and saves the full report when the subject does not conform.
    pub fn new<S: Subject>(certify: Certify<S>, module: &str) -> TestRun {
        let certify = certify.label(module);
        let report = certify.run();
        let saved = (!report.conforms).then(|| testing::save(module, &report));
        TestRun { report, saved, filter: certify.filter() }
    }

    /// The body of the test of `inv`: panics with its rule's reproducer when it is broken, and
    /// says when it is `n/a`.
    #[track_caller]
    pub fn check(&self, inv: Invariant) {
        let report = &self.report;
        if report.ran_nothing() {
            panic!("toolcert: {}", testing::nothing_ran(report, self.filter.as_deref()));
        }
        let test = testing::current_test();
        if let Some(text) = testing::rule_text(report, inv, test.as_deref()) {
            let saved = self.saved.clone().unwrap_or_else(|| Err("the run conforms".into()));
            panic!("{}\n{text}", testing::header(report, &saved));
        }
        // Not exercised (ACC-SCHEMA with `.schema(false)`, a wire rule at the events level, a
        // filter that left no case that could break it): said, since libtest cannot mark a
        // test skipped at run time.
        if let Some(row) = report.status_of(inv) {
            if row.status == runner::Status::NotExercised {
                eprintln!(
                    "toolcert: {} n/a (not exercised): {}",
                    row.id,
                    row.not_exercised.as_deref().unwrap_or("no case could break it")
                );
            }
        }
    }
}

/// Expands to a module of tests, one `#[test]` per invariant of the table (named after it:
/// `mine::AccFidelity`), certifying the subject that `$subject` makes. The run happens once
/// and each test reports its own invariant, so a failure names the rule that broke in the
/// test's own name; a rule the run could not break (a wire rule at the events level) says
/// `n/a`. The tests are generated from the invariant table: a new invariant gets its test.
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
        #[allow(non_snake_case)]
        mod $module {
            #[allow(unused_imports)]
            use super::*;

            fn run() -> &'static $crate::TestRun {
                static RUN: ::std::sync::OnceLock<$crate::TestRun> = ::std::sync::OnceLock::new();
                RUN.get_or_init(|| {
                    let configure: fn($crate::Certify<_>) -> $crate::Certify<_> = $configure;
                    $crate::TestRun::new(configure($crate::certify($subject)), module_path!())
                })
            }

            $crate::__for_each_invariant!($crate::certify_tests, (@tests run));
        }
    };
    ((@tests $run:ident) $($inv:ident = $id:literal;)*) => {
        $(
            #[doc = $id]
            #[test]
            pub fn $inv() {
                $run().check($crate::Invariant::$inv);
            }
        )*
    };
}

#[doc(hidden)]
pub use toolcert_oracle::for_each_invariant as __for_each_invariant;
