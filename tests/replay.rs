//! The replay lines a failing `assert_conforms` prints run as printed.
//!
//! The two fixtures certify a buggy in-process accumulator and are ignored in a normal run:
//! `printed_replays_run_as_printed` runs each in a child process of this test binary, reads
//! the panic message, then runs its shell line (`TOOLCERT_CASE=... cargo test NAME`, with this
//! binary standing for `cargo test`, which would only build it first) and its builder call,
//! and checks that each replays exactly the case printed.

use std::process::Command;

use toolcert::reference::Reference;
use toolcert::subject::{subject_fn, Accumulator, Emit, Event, StreamEnd, StreamSpec, TurnError};

/// Trims every fragment: the seed's mangled-summary bug.
struct Trims(Reference);

impl Accumulator for Trims {
    fn on_event(&mut self, event: &Event<'_>, out: &mut Emit) -> Result<(), TurnError> {
        match event {
            Event::ArgsDelta { index, fragment } => {
                self.0.on_event(&Event::ArgsDelta { index: *index, fragment: fragment.trim().into() }, out)
            }
            e => self.0.on_event(e, out),
        }
    }
    fn finish(&mut self, end: StreamEnd, out: &mut Emit) -> Result<(), TurnError> {
        self.0.finish(end, out)
    }
}

fn trims() -> toolcert::Certify<impl toolcert::subject::Subject> {
    toolcert::certify(subject_fn("trims", |_: &StreamSpec<'_>| Trims(Reference::new()))).schema(false)
}

#[test]
#[ignore = "a fixture that fails: printed_replays_run_as_printed runs it"]
fn fixture_named() {
    trims().assert_conforms();
}

#[test]
#[ignore = "a fixture that fails: printed_replays_run_as_printed runs it"]
fn fixture_generated() {
    trims().cases(200).only("gen/").assert_conforms();
}

/// Runs the fixture `test` of this binary with `env`, and returns what it printed.
fn run_fixture(test: &str, env: &[(String, String)]) -> String {
    let mut cmd = Command::new(std::env::current_exe().expect("the test binary"));
    cmd.args([test, "--exact", "--ignored", "--test-threads", "1"]);
    for var in ["TOOLCERT_CASE", "TOOLCERT_SEED", "TOOLCERT_CASES", "TOOLCERT_LEVEL", "TOOLCERT_DIALECT"] {
        cmd.env_remove(var);
    }
    cmd.envs(env.iter().map(|(k, v)| (k, v)));
    let out = cmd.output().expect("the test binary runs");
    assert!(!out.status.success(), "the fixture {test} fails");
    format!("{}{}", String::from_utf8_lossy(&out.stdout), String::from_utf8_lossy(&out.stderr))
}

/// The value after `label` on its line.
fn after<'a>(text: &'a str, label: &str) -> &'a str {
    let line = text
        .lines()
        .find_map(|l| l.trim_start().strip_prefix(label))
        .unwrap_or_else(|| panic!("no {label:?} in:\n{text}"));
    line.trim()
}

/// The panic message: from the verdict line to the end of the failing test's output.
fn message(output: &str) -> &str {
    let at = output.find("trims does not conform").unwrap_or_else(|| panic!("no verdict in:\n{output}"));
    let rest = &output[at..];
    let end = ["\nstack backtrace:", "\nnote: run with", "\n\nfailures:"]
        .iter()
        .filter_map(|m| rest.find(m))
        .min()
        .unwrap_or(rest.len());
    &rest[..end]
}

fn check_fixture(test: &str) {
    let first = run_fixture(test, &[]);
    let msg = message(&first);
    // Short: no coverage and no table; each failing rule's section within the limit.
    assert!(!msg.contains("coverage of the generated cases") && !msg.contains("exercised  rule"), "{msg}");
    for section in msg.split("\n\n").skip(1) {
        assert!(
            section.lines().count() <= toolcert::testing::RULE_LINES,
            "a section over the limit:\n{section}"
        );
        assert!(
            section.contains("replay in the test: "),
            "every failing rule shows a reproducer:\n{section}"
        );
    }
    let report = after(msg, "full report:").split(" (records: ").next().unwrap().to_string();
    let full = std::fs::read_to_string(&report).unwrap_or_else(|e| panic!("{report}: {e}"));
    assert!(full.contains("invariant         must"), "the full report has the table: {report}");

    // The shell line, as printed: `TOOLCERT_CASE=NAME cargo test TEST`.
    let shell = after(msg, "or from a shell:");
    let words: Vec<&str> = shell.split_whitespace().collect();
    let cargo = words.iter().position(|w| *w == "cargo").expect("cargo test in the line");
    assert_eq!(&words[cargo..], &["cargo", "test", test], "{shell}");
    let env: Vec<(String, String)> = words[..cargo]
        .iter()
        .map(|w| {
            let (k, v) = w.split_once('=').expect("NAME=value");
            (k.to_string(), v.trim_matches('\'').to_string())
        })
        .collect();
    let case = env.iter().find(|(k, _)| k == "TOOLCERT_CASE").map(|(_, v)| v.clone()).expect("TOOLCERT_CASE");
    let again = run_fixture(test, &env);
    let replayed = message(&again);
    assert!(replayed.contains("in 1 of 1 case "), "exactly one case ran and failed:\n{replayed}");
    assert!(replayed.contains(&format!("smallest reproducer: {case}")), "the same case:\n{replayed}");

    // The builder call, as printed, in this process.
    let call = after(msg, "replay in the test:");
    let mut certify = trims();
    for part in call.trim_start_matches('.').split(").") {
        let (method, arg) = part.trim_end_matches(')').split_once('(').expect("method(arg)");
        certify = match method {
            "seed" => certify.seed(arg.parse().unwrap()),
            "cases" => certify.cases(arg.parse().unwrap()),
            "only" => certify.only(arg.trim_matches('"')),
            other => panic!("unexpected builder method {other} in {call}"),
        };
    }
    let r = certify.run();
    assert_eq!(r.cases, 1, "{call} runs one case");
    assert_eq!(r.failing_cases().iter().map(|(c, _)| *c).collect::<Vec<_>>(), [case.as_str()], "{call}");
}

#[test]
fn printed_replays_run_as_printed() {
    check_fixture("fixture_named");
    check_fixture("fixture_generated");
}

#[test]
fn bad_overrides_name_the_variable() {
    use toolcert::testing::Overrides;
    let with = |k: &'static str, v: &'static str| move |name: &str| (name == k).then(|| v.to_string());
    let err = Overrides::from_lookup(with("TOOLCERT_SEED", "seven")).unwrap_err();
    assert!(err.contains("TOOLCERT_SEED") && err.contains("whole number"), "{err}");
    let err = Overrides::from_lookup(with("TOOLCERT_LEVEL", "tcp")).unwrap_err();
    assert!(err.contains("TOOLCERT_LEVEL") && err.contains("events, wire or bytes"), "{err}");
    let err = Overrides::from_lookup(with("TOOLCERT_DIALECT", "vertex")).unwrap_err();
    assert!(err.contains("TOOLCERT_DIALECT") && err.contains("openai-chat"), "{err}");
    let ok = Overrides::from_lookup(with("TOOLCERT_CASES", " 12 ")).unwrap();
    assert_eq!(ok.cases, Some(12));
    assert_eq!(toolcert::testing::generated_position("gen/3/41"), Some((3, 41)));
    assert_eq!(toolcert::testing::generated_position("regression/gen/3/41"), None);
    assert_eq!(toolcert::testing::generated_position("gen/3/41/x"), None);
}

#[test]
fn a_level_the_subject_does_not_declare_is_refused() {
    let err = std::panic::catch_unwind(|| trims().level(toolcert::subject::Level::Bytes).run()).unwrap_err();
    let msg = err.downcast_ref::<String>().cloned().unwrap_or_default();
    assert!(msg.contains("not fed at the bytes level") && msg.contains("declares events"), "{msg}");
}

#[test]
fn a_filter_that_matches_nothing_fails_the_test() {
    let err = std::panic::catch_unwind(|| trims().only("no-such-case").assert_conforms()).unwrap_err();
    let msg = err.downcast_ref::<String>().cloned().unwrap_or_default();
    assert!(msg.contains("no case ran") && msg.contains("no-such-case"), "{msg}");
}

/// `certify_tests!` makes one test per row of the invariant table, so a new invariant gets
/// its test without anyone editing the macro.
mod generated {
    use super::*;

    toolcert::certify_tests!(per_rule, subject_fn("reference", |_: &StreamSpec<'_>| Reference::new()), |c| c
        .only("named/keying/refunded-open-pair"));

    macro_rules! names {
        ((@names) $($inv:ident = $id:literal;)*) => {
            const TESTS: &[(&str, fn())] = &[$(($id, per_rule::$inv as fn())),*];
        };
    }
    toolcert::__for_each_invariant!(names, (@names));

    #[test]
    fn one_test_per_invariant() {
        let tests = TESTS;
        let ids: Vec<&str> = tests.iter().map(|(id, _)| *id).collect();
        let all: Vec<&str> = toolcert::Invariant::ALL.iter().map(|i| i.id()).collect();
        assert_eq!(ids, all);
    }
}
