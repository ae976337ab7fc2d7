//! The library certifies what the command line certifies: for the same subject, seed and
//! number of cases, `toolcert::certify(subject)` in a test and `toolcert certify` as a process
//! run the same settings and give the same report.
//!
//! The reports are compared whole, byte for byte: a report holds no timings and no paths
//! (README, "Reports and CI"), the run writes no `--out` reproducers (whose replay commands
//! would name a directory), and the JSONL stream is the same for every `--jobs`, so no field
//! needs dropping. What differs between the two is how they run, never what they write: the
//! process checks generated cases on every core and streams its records, the library on one
//! thread keeping them.

use std::process::Command;

use toolcert::runner::jsonl::to_jsonl;
use toolcert::subject::{Level, Subject};

/// `toolcert certify ARGS --format FORMAT` as a process: its stdout.
fn cli(args: &[&str], format: &str) -> String {
    let out = Command::new(env!("CARGO_BIN_EXE_toolcert"))
        .arg("certify")
        .args(args)
        .args(["--format", format])
        .output()
        .expect("toolcert runs");
    assert!(
        matches!(out.status.code(), Some(0 | 1)),
        "toolcert certify {args:?} exits with a verdict: {:?}\n{}",
        out.status,
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8(out.stdout).expect("reports are UTF-8")
}

/// The library's run, as the command line prints it: one JSONL stream per setting, and the
/// JSON summary (one setting's report alone, several settings' verdict over all of them).
fn library(run: &toolcert::Combined) -> (String, String) {
    let jsonl: Vec<String> = run.settings.iter().map(|r| to_jsonl(r).expect("kept records")).collect();
    let json = match run.settings.as_slice() {
        [one] => serde_json::to_string_pretty(one),
        _ => serde_json::to_string_pretty(run),
    }
    .expect("a report serialises");
    (jsonl.concat(), json + "\n")
}

/// The builder's environment overrides (`TOOLCERT_CASE`, ...) change the library's run and
/// not the command line's: with one set, there is nothing to compare.
fn overridden() -> bool {
    let env = toolcert::testing::Overrides::from_env().unwrap_or_default();
    let set = env != toolcert::testing::Overrides::default();
    if set {
        eprintln!("skipped: {} narrow the library's run only", env.words().join(" "));
    }
    set
}

fn subject(name: &str) -> Box<dyn Subject> {
    toolcert::subject_by_name(name).unwrap_or_else(|e| panic!("{e}"))
}

#[test]
fn the_reference_in_every_setting_it_declares() {
    if overridden() {
        return;
    }
    let name = "builtin:reference";
    let run = toolcert::certify(subject(name)).seed(3).cases(4).run();
    // Every setting the reference declares: the events level, and both lower levels of every
    // dialect in every server profile.
    let profiles: usize = toolcert::scenario::Dialect::ALL.iter().map(|d| d.profiles().count()).sum();
    assert_eq!(run.settings.len(), 1 + 2 * profiles);
    assert_eq!(run.settings.len(), subject(name).settings().len());
    assert!(run.conforms, "{}", run.verdict_line());
    let (jsonl, json) = library(&run);
    let args = ["--subject", name, "--seed", "3", "--cases", "4"];
    assert!(jsonl == cli(&args, "jsonl"), "the JSONL streams differ");
    assert!(json == cli(&args, "json"), "the JSON summaries differ");
}

#[test]
fn a_mutant_in_every_profile_of_one_dialect() {
    if overridden() {
        return;
    }
    // Declared at the wire level of every dialect; narrowed to OpenAI Chat in all its
    // profiles, where its bug (entries keyed by the last id) shows in some and not others.
    let name = "builtin:mutant/chat-keyed-by-id";
    let run = toolcert::certify(subject(name))
        .seed(5)
        .cases(8)
        .dialect(toolcert::scenario::Dialect::OpenAiChat)
        .profile("all")
        .run();
    assert_eq!(run.settings.len(), toolcert::scenario::Dialect::OpenAiChat.profiles().count());
    assert!(run.settings.iter().all(|r| r.level == Level::Wire));
    assert!(!run.conforms, "the mutant is caught: {}", run.verdict_line());
    let (jsonl, json) = library(&run);
    let args =
        ["--subject", name, "--seed", "5", "--cases", "8", "--dialect", "openai-chat", "--profile", "all"];
    assert!(jsonl == cli(&args, "jsonl"), "the JSONL streams differ");
    assert!(json == cli(&args, "json"), "the JSON summaries differ");
    // One setting is one report, as the command line prints it.
    let one = toolcert::certify(subject(name))
        .cases(8)
        .seed(5)
        .dialect(toolcert::scenario::Dialect::OpenAiChat)
        .run();
    assert_eq!(one.settings.len(), 1);
    let (jsonl, json) = library(&one);
    let args = ["--subject", name, "--seed", "5", "--cases", "8", "--dialect", "openai-chat"];
    assert!(jsonl == cli(&args, "jsonl"), "the JSONL streams differ");
    assert!(json == cli(&args, "json"), "the JSON summaries differ");
}

/// Over several settings, the panic message of `assert_conforms` names the setting each
/// reproducer came from, and its builder call, appended to the test's own as printed, replays
/// that case there alone.
#[test]
fn a_replay_line_names_its_setting() {
    if overridden() {
        return;
    }
    let name = "builtin:mutant/chat-keyed-by-id";
    let certify = || {
        toolcert::certify(subject(name))
            .seed(5)
            .cases(8)
            .dialect(toolcert::scenario::Dialect::OpenAiChat)
            .profile("all")
    };
    let run = certify().run();
    assert!(run.settings.len() > 1 && !run.conforms);
    let text = toolcert::testing::failure_text(&run, &Err("not saved".into()), Some("t"));
    let calls: Vec<&str> =
        text.lines().filter_map(|l| l.trim().strip_prefix("replay in the test: ")).collect();
    let shells: Vec<&str> =
        text.lines().filter_map(|l| l.trim().strip_prefix("or from a shell:    ")).collect();
    assert!(!calls.is_empty(), "{text}");
    for shell in &shells {
        assert!(
            shell.contains("TOOLCERT_LEVEL=wire TOOLCERT_DIALECT=openai-chat TOOLCERT_PROFILE="),
            "{shell}"
        );
    }
    for call in calls {
        let mut replay = certify();
        let mut case = String::new();
        for part in call.trim_start_matches('.').split(").") {
            let (method, arg) = part.trim_end_matches(')').split_once('(').expect("method(arg)");
            replay = match method {
                "level" => {
                    assert_eq!(arg, "Level::Wire", "{call}");
                    replay.level(Level::Wire)
                }
                "dialect" => {
                    assert_eq!(arg, "Dialect::OpenAiChat", "{call}");
                    replay.dialect(toolcert::scenario::Dialect::OpenAiChat)
                }
                "profile" => replay.profile(arg.trim_matches('"')),
                "seed" => replay.seed(arg.parse().unwrap()),
                "cases" => replay.cases(arg.parse().unwrap()),
                "only" => {
                    case = arg.trim_matches('"').to_string();
                    replay.only(&case)
                }
                other => panic!("unexpected builder method {other} in {call}"),
            };
        }
        let again = replay.run();
        assert_eq!(again.settings.len(), 1, "{call} narrows to one setting");
        let failing: Vec<&str> = again.failing_cases().iter().map(|(c, _)| *c).collect();
        assert!(failing.contains(&case.as_str()), "{call} fails on {case}: {failing:?}");
    }
}
