//! Deliberately broken subjects (`tests/subjects/*.py`): each gives a finished result that
//! names its problem, within the timeouts, never a hang or a panic of the harness.

mod common;

use std::path::Path;
use std::time::{Duration, Instant};

use common::{impatient, python, shell_quote, subject_script};
use toolcert_exec::{ExecError, ExecOptions, ExecSubject};
use toolcert_oracle::{Invariant, Profile};
use toolcert_runner::{check, Certification, Setting};
use toolcert_scenario::{Case, Dialect};
use toolcert_subject::driver::Speech;
use toolcert_subject::{Level, Subject};

fn command(script: &str) -> String {
    format!("{} {}", python(), shell_quote(&subject_script(script)))
}

fn spawn(script: &str, options: ExecOptions) -> Result<ExecSubject, ExecError> {
    ExecSubject::spawn(&command(script), options)
}

fn named(id: &str) -> Case {
    toolcert_gen::named::by_id(id).unwrap_or_else(|| panic!("no named case {id}")).case
}

/// The crash text of every stream of `case`, run once at the events level.
fn crash_of(subject: &ExecSubject, case: &Case) -> String {
    let checked = check(subject, case, Setting::events(Profile::default()));
    let crashes: Vec<&str> = checked.observations.iter().filter_map(|o| o.crash.as_deref()).collect();
    assert_eq!(crashes.len(), checked.observations.len(), "every stream crashed: {:?}", checked.observations);
    assert!(
        checked.violations.iter().all(|v| v.invariant == Invariant::SubjectCrash),
        "a crash is judged SUBJECT-CRASH: {:?}",
        checked.violations
    );
    crashes[0].to_string()
}

#[test]
fn a_subject_that_crashes_on_every_third_stream_is_restarted_and_reconfigured() {
    if common::cross_lang_skipped() {
        return;
    }
    let subject = spawn("crash_every_third.py", ExecOptions { restarts: 100, ..impatient() }).unwrap();
    let started = Instant::now();
    // The wire level: a restarted subject that were not configured again would read wire
    // events as neutral ones and fail every case.
    let setting = Setting {
        profile: subject.profile(),
        level: Level::Wire,
        speech: Speech { dialect: Dialect::Anthropic, ..Speech::default() },
        ..Setting::default()
    };
    let (mut passed, mut crashed, mut streams) = (0, 0, 0);
    for named in toolcert_gen::named::all() {
        let checked = check(&subject, &named.case, setting);
        if checked.unsupported.is_some() {
            continue;
        }
        streams += named.case.streams.len();
        let crashes: Vec<&str> = checked.observations.iter().filter_map(|o| o.crash.as_deref()).collect();
        // The third stream can also be one of a re-run (delivered whole, isolation): then the
        // case's own observations are clean and the crash is the re-run's SUBJECT-CRASH.
        let in_rerun = checked
            .violations
            .iter()
            .find(|v| v.invariant == Invariant::SubjectCrash && v.observed.contains("re-run"));
        if crashes.is_empty() && in_rerun.is_none() {
            assert!(checked.violations.is_empty(), "{}: {:?}", named.id, checked.violations);
            passed += 1;
            continue;
        }
        crashed += 1;
        let crash = crashes.first().copied().unwrap_or_else(|| &in_rerun.expect("a crash").observed);
        assert!(crash.contains("exit status: 3"), "the exit status is named: {crash}");
        assert!(crash.contains("crash-every-third: stream 3, giving up"), "stderr is kept: {crash}");
        // (A crash in a case of several streams may be relabelled ACC-ISOLATION by the
        // runner when the stream alone, re-run on a fresh process, passes.)
        assert!(
            checked.violations.iter().all(|v| v.observed.contains("crash-every-third")),
            "{:?}",
            checked.violations
        );
    }
    let stats = subject.stats();
    assert!(started.elapsed() < Duration::from_secs(60), "took {:?}", started.elapsed());
    assert!(crashed >= streams / 3 - 1 && crashed >= 3, "{crashed} crashes in {streams} streams: {stats}");
    assert!(passed >= crashed, "between crashes the restarted subject conforms: {passed} passed");
    assert!(stats.crashes >= crashed as u64, "{stats}");
    // A process is restarted when the next stream needs it: after a crash on the very last
    // stream nothing is (whether that happens depends on how many streams the named cases have).
    assert!(
        stats.restarts == stats.crashes || stats.restarts + 1 == stats.crashes,
        "one restart per crash: {stats}"
    );
    assert_eq!(stats.timeouts + stats.protocol_errors, 0, "{stats}");
}

#[test]
fn the_restart_budget_ends_restarts_and_the_run_still_finishes() {
    if common::cross_lang_skipped() {
        return;
    }
    let subject = spawn("crash_every_third.py", ExecOptions { restarts: 2, ..impatient() }).unwrap();
    let started = Instant::now();
    let report =
        Certification { cases: 40, named: false, profile: subject.profile(), ..Certification::default() }
            .run(&subject);
    let stats = subject.stats();
    assert!(started.elapsed() < Duration::from_secs(60), "took {:?}", started.elapsed());
    assert_eq!(stats.restarts, 2, "{stats}");
    assert_eq!(stats.crashes, 3, "{stats}");
    assert!(!report.conforms);
    // The report keeps the findings' smallest reproducers (real crashes); a case after the
    // budget was spent is a crash at once, saying so.
    let setting = toolcert_runner::Setting { profile: subject.profile(), ..Default::default() };
    let after = toolcert_runner::check(&subject, &named("deltas/lookup-order-a4471"), setting);
    let observed: Vec<&str> = after.violations.iter().map(|v| v.observed.as_str()).collect();
    assert!(observed.iter().any(|o| o.contains("out of restarts (2 allowed)")), "{observed:#?}");
}

#[test]
fn a_subject_that_hangs_times_out_and_is_killed() {
    if common::cross_lang_skipped() {
        return;
    }
    let subject =
        spawn("hang.py", ExecOptions { timeout: Duration::from_millis(500), restarts: 1, ..impatient() })
            .unwrap();
    let started = Instant::now();
    // A long case, so the request does not fit in the pipe of a subject that stopped reading.
    let mut case = named("final/create-ticket-max-tokens");
    if let toolcert_scenario::Block::Call(c) = &mut case.streams[0].blocks[0] {
        c.arguments = c.arguments.repeat(2000);
        c.splits = (1..c.arguments.len()).step_by(3).collect();
    }
    let crash = crash_of(&subject, &case);
    assert!(crash.contains("did not answer `run (seq 1)` within 500ms"), "{crash}");
    assert!(crash.contains("hang: sleeping forever"), "stderr is kept: {crash}");
    // Restarted once, then out of budget: the third case fails at once.
    let again = crash_of(&subject, &named("deltas/lookup-order-a4471"));
    assert!(again.contains("did not answer"), "{again}");
    let third = Instant::now();
    let last = crash_of(&subject, &named("deltas/lookup-order-a4471"));
    assert!(last.contains("out of restarts"), "{last}");
    assert!(third.elapsed() < Duration::from_millis(100));
    assert!(started.elapsed() < Duration::from_secs(10), "took {:?}", started.elapsed());
    let stats = subject.stats();
    assert_eq!((stats.timeouts, stats.restarts), (2, 1), "{stats}");
}

#[test]
fn a_subject_that_never_answers_the_handshake_is_refused_in_time() {
    if common::cross_lang_skipped() {
        return;
    }
    let started = Instant::now();
    let e =
        spawn("hang_at_start.py", ExecOptions { start_timeout: Duration::from_millis(500), ..impatient() })
            .unwrap_err();
    assert!(matches!(e, ExecError::Handshake { .. }), "{e}");
    assert!(e.to_string().contains("did not answer `start` within 500ms"), "{e}");
    assert!(started.elapsed() < Duration::from_secs(5));
}

#[test]
fn a_subject_that_prints_garbage_breaks_the_protocol() {
    if common::cross_lang_skipped() {
        return;
    }
    let subject = spawn("garbage.py", impatient()).unwrap();
    let crash = crash_of(&subject, &named("deltas/lookup-order-a4471"));
    assert!(crash.contains("broke the protocol answering `run (seq 1)`"), "{crash}");
    assert!(crash.contains("not one JSON document"), "{crash}");
    assert!(crash.contains("Hello! Processing your request"), "the line is shown: {crash}");
    assert_eq!(subject.stats().protocol_errors, 1);
}

#[test]
fn a_subject_that_prints_non_utf8_breaks_the_protocol() {
    if common::cross_lang_skipped() {
        return;
    }
    let subject = spawn("non_utf8.py", impatient()).unwrap();
    let crash = crash_of(&subject, &named("deltas/lookup-order-a4471"));
    assert!(crash.contains("not UTF-8"), "{crash}");
    assert_eq!(subject.stats().protocol_errors, 1);
}

#[test]
fn an_oversized_reply_line_breaks_the_protocol() {
    if common::cross_lang_skipped() {
        return;
    }
    let subject = spawn("oversized.py", ExecOptions { max_line: 64 << 10, ..impatient() }).unwrap();
    let crash = crash_of(&subject, &named("deltas/lookup-order-a4471"));
    assert!(crash.contains("longer than the 65536-byte limit"), "{crash}");
}

#[test]
fn a_reply_for_another_seq_breaks_the_protocol() {
    if common::cross_lang_skipped() {
        return;
    }
    let subject = spawn("wrong_seq.py", impatient()).unwrap();
    let crash = crash_of(&subject, &named("deltas/lookup-order-a4471"));
    assert!(crash.contains("the reply is for seq 1001"), "{crash}");
}

#[test]
fn a_protocol_version_mismatch_is_fatal() {
    if common::cross_lang_skipped() {
        return;
    }
    let e = spawn("version_mismatch.py", impatient()).unwrap_err();
    assert!(matches!(e, ExecError::VersionMismatch { harness: 1, subject: 2, .. }), "{e:?}");
    assert!(e.to_string().contains("speaks protocol version 2, this toolcert speaks version 1"), "{e}");
    assert!(e.to_string().contains("from-the-future"), "{e}");
}

#[test]
fn a_subject_that_exits_at_start_is_refused_with_its_stderr() {
    if common::cross_lang_skipped() {
        return;
    }
    let started = Instant::now();
    let e = spawn("exit_at_start.py", impatient()).unwrap_err();
    let text = e.to_string();
    assert!(matches!(e, ExecError::Handshake { .. }), "{e:?}");
    assert!(text.contains("exited (exit status: 3)"), "{text}");
    assert!(text.contains("ModuleNotFoundError"), "stderr is kept: {text}");
    assert!(started.elapsed() < Duration::from_secs(5));
}

#[test]
fn a_command_that_does_not_exist_is_refused_clearly() {
    let e = ExecSubject::spawn("toolcert-no-such-program --flag", impatient()).unwrap_err();
    let text = e.to_string();
    assert!(text.contains("exit status: 127"), "{text}");
    assert!(text.contains("not found"), "sh's message: {text}");
}

#[test]
fn a_chatty_stderr_does_not_block_the_subject() {
    if common::cross_lang_skipped() {
        return;
    }
    let subject = spawn("chatty.py", impatient()).unwrap();
    let started = Instant::now();
    let report =
        Certification { cases: 20, named: false, profile: subject.profile(), ..Certification::default() }
            .run(&subject);
    assert!(report.conforms, "{}", report.to_text(3));
    assert_eq!(subject.stats().failures(), 0, "{}", subject.stats());
    assert!(started.elapsed() < Duration::from_secs(30));
}

#[test]
fn skipped_errored_and_refused_cases_are_reported_not_restarted() {
    if common::cross_lang_skipped() {
        return;
    }
    let subject = spawn("skips.py", impatient()).unwrap();
    let first = crash_of(&subject, &named("deltas/lookup-order-a4471"));
    assert!(first.contains("skipped the case: not today"), "{first}");
    let second = crash_of(&subject, &named("deltas/lookup-order-a4471"));
    assert!(second.contains("errored on the case: KeyError: 'x'"), "{second}");
    let wire = Setting {
        level: Level::Wire,
        speech: Speech { dialect: Dialect::Anthropic, ..Speech::default() },
        ..Setting::default()
    };
    let checked = check(&subject, &named("deltas/lookup-order-a4471"), wire);
    let refused = checked.observations[0].crash.as_deref().unwrap_or_default();
    assert!(
        refused.contains("refused to run at the wire level in anthropic: wire is not wired up yet"),
        "{refused}"
    );
    // Undeclared settings are refused without asking.
    let bytes = Setting { level: Level::Bytes, ..wire };
    let checked = check(&subject, &named("deltas/lookup-order-a4471"), bytes);
    let undeclared = checked.observations[0].crash.as_deref().unwrap_or_default();
    assert!(undeclared.contains("does not declare the bytes level"), "{undeclared}");
    let stats = subject.stats();
    assert_eq!((stats.skipped, stats.errored, stats.failures(), stats.restarts), (1, 1, 0, 0), "{stats}");
}

#[test]
fn the_factory_of_an_exec_subject_refuses_clearly() {
    if common::cross_lang_skipped() {
        return;
    }
    let subject = spawn("skips.py", impatient()).unwrap();
    let case = named("deltas/lookup-order-a4471");
    let neutral = toolcert_render::render(&case.streams[0]);
    let inputs = [toolcert_subject::driver::Input {
        units: toolcert_subject::driver::Units::Events(&neutral.events),
        end: neutral.end,
    }];
    let obs = toolcert_subject::driver::drive(&*subject.factory(), &case, &inputs, Speech::default());
    let error = obs[0].error.as_ref().expect("the turn fails");
    assert!(error.value.detail.contains("cannot be driven event by event"), "{}", error.value.detail);
}

#[test]
fn what_a_subject_leaves_running_is_killed_with_it() {
    if common::cross_lang_skipped() {
        return;
    }
    let marker = std::env::temp_dir().join(format!("toolcert-exec-orphan-{}", std::process::id()));
    let cmd = format!("sleep 300 & echo $! > {}; {}", shell_quote(&marker), command("exit_at_start.py"));
    let e = ExecSubject::spawn(&cmd, impatient()).unwrap_err();
    assert!(e.to_string().contains("exit status: 3"), "{e}");
    let pid = std::fs::read_to_string(&marker).unwrap();
    let _ = std::fs::remove_file(&marker);
    let proc_dir = Path::new("/proc").join(pid.trim());
    let deadline = Instant::now() + Duration::from_secs(2);
    // Gone, or a zombie waiting for init to reap it.
    let alive = || std::fs::read_to_string(proc_dir.join("stat")).is_ok_and(|stat| !stat.contains(") Z "));
    while alive() && Instant::now() < deadline {
        std::thread::sleep(Duration::from_millis(20));
    }
    assert!(!alive(), "the background `sleep` ({}) was killed with the subject", pid.trim());
}
