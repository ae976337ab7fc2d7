//! The harness against hostile subjects and a hostile environment, as a user meets it on the
//! command line: each run ends with the documented exit code and a one-line message, within
//! a time bound, and leaves no process of the subject behind.
//!
//! A subject's leftovers are found by a marker: hostile subjects start `sleep MARKER` (a
//! number of seconds no other process uses) in their process group, and the test looks for
//! that command line in `/proc` once toolcert has exited.

#![cfg(target_os = "linux")]

use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};
use std::time::{Duration, Instant};

fn toolcert() -> Command {
    Command::new(env!("CARGO_BIN_EXE_toolcert"))
}

/// A scratch directory of this test, empty.
fn scratch(name: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("toolcert-hostile-{}-{name}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

/// A `sleep` argument unique to this test and process: seconds enough to outlive any test.
fn marker(test: u32) -> String {
    format!("{}.{:06}{test:02}", 86_000 + test, std::process::id() % 1_000_000)
}

/// Processes whose command line is `sleep <marker>`.
fn left_behind(marker: &str) -> Vec<u32> {
    let mut found = Vec::new();
    for entry in std::fs::read_dir("/proc").unwrap().flatten() {
        let Some(pid) = entry.file_name().to_str().and_then(|n| n.parse::<u32>().ok()) else { continue };
        let Ok(cmdline) = std::fs::read(entry.path().join("cmdline")) else { continue };
        let args: Vec<&[u8]> = cmdline.split(|&b| b == 0).collect();
        if args.len() >= 2 && args[0].ends_with(b"sleep") && args[1] == marker.as_bytes() {
            found.push(pid);
        }
    }
    found
}

/// Asserts that nothing with the marker is alive (a SIGKILLed process may take a moment to go).
fn assert_none_left(marker: &str) {
    let deadline = Instant::now() + Duration::from_secs(3);
    loop {
        let left = left_behind(marker);
        if left.is_empty() {
            return;
        }
        if Instant::now() > deadline {
            for pid in &left {
                // SAFETY: kill(2) on a pid we found; cleanup so a failing test leaves nothing.
                unsafe {
                    libc::kill(*pid as i32, libc::SIGKILL);
                }
            }
            panic!("processes of the subject were left running: {left:?} (sleep {marker})");
        }
        std::thread::sleep(Duration::from_millis(50));
    }
}

/// Runs toolcert, asserting it ends within `bound`.
fn run(mut cmd: Command, bound: Duration) -> Output {
    let started = Instant::now();
    let out = cmd.stdin(Stdio::null()).output().expect("toolcert runs");
    assert!(started.elapsed() < bound, "took {:?} (bound {bound:?})", started.elapsed());
    out
}

fn code(out: &Output) -> i32 {
    use std::os::unix::process::ExitStatusExt;
    out.status.code().unwrap_or_else(|| 128 + out.status.signal().unwrap_or(0))
}

fn stderr(out: &Output) -> String {
    String::from_utf8_lossy(&out.stderr).into_owned()
}

/// Exactly one line on stderr, naming `what`.
fn assert_one_line(out: &Output, what: &str) {
    let err = stderr(out);
    assert_eq!(err.trim_end().lines().count(), 1, "one line on stderr: {err:?}");
    assert!(err.contains(what), "stderr names {what:?}: {err:?}");
}

/// A Python subject: `body` runs with `marker` defined, `start()` answering the handshake and
/// `requests` iterating over the requests after it.
fn python_subject(dir: &Path, name: &str, marker: &str, body: &str) -> String {
    let script = format!(
        r#"import json, os, subprocess, sys, time
marker = "{marker}"
def reply(value):
    sys.stdout.write(json.dumps(value) + "\n")
    sys.stdout.flush()
def start():
    json.loads(sys.stdin.readline())
    reply({{"version": 1, "implementation": {{"name": "{name}", "language": "python",
        "levels": ["events"], "dialects": []}}}})
def leave_a_sleeper():
    # In the subject's process group, holding nothing of its stdio.
    subprocess.Popen(["sleep", marker], stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
                     stderr=subprocess.DEVNULL)
{body}
"#
    );
    let path = dir.join(format!("{name}.py"));
    std::fs::write(&path, script).unwrap();
    format!("exec:python3 {}", path.display())
}

#[test]
fn a_subject_that_exits_before_reading_its_input_is_a_crash_never_a_sigpipe() {
    // `true` exits at once: the harness's `start` meets a closed pipe. Before the fix, SIGPIPE
    // killed toolcert (exit 141, no message) in most runs on a loaded machine.
    for _ in 0..12 {
        let mut cmd = toolcert();
        cmd.args(["certify", "--subject", "exec:true", "--cases", "50"]);
        let out = run(cmd, Duration::from_secs(20));
        assert_eq!(code(&out), 3, "{}", stderr(&out));
        assert_one_line(&out, "`true` failed the handshake: the subject exited (exit status: 0)");
    }
}

#[test]
fn a_subject_that_exits_right_after_start_leaves_nothing_behind() {
    let dir = scratch("exits-after-start");
    let m = marker(1);
    let subject = python_subject(&dir, "exits-after-start", &m, "leave_a_sleeper()\nstart()\nsys.exit(0)");
    for _ in 0..4 {
        let mut cmd = toolcert();
        cmd.args(["certify", "--subject", &subject, "--cases", "20", "--format", "json"]);
        let out = run(cmd, Duration::from_secs(30));
        assert_eq!(code(&out), 3, "{}", stderr(&out));
        let report: serde_json::Value = serde_json::from_slice(&out.stdout).expect("a JSON report");
        assert_eq!(report["conforms"], false);
        let crash = report["failures"][0]["violations"][0]["observed"].as_str().unwrap_or_default();
        assert!(crash.contains("exited") || crash.contains("restarts"), "{report}");
        assert_none_left(&m);
    }
}

#[test]
fn a_subject_that_closes_its_stdout_and_lives_on_is_a_crash_at_once() {
    let dir = scratch("closes-stdout");
    let m = marker(2);
    let body = r#"leave_a_sleeper()
start()
for line in sys.stdin:
    request = json.loads(line)
    if request["cmd"] == "configure":
        reply({"ok": True})
    elif request["cmd"] == "run":
        os.close(1)
        time.sleep(60)"#;
    let subject = python_subject(&dir, "closes-stdout", &m, body);
    let mut cmd = toolcert();
    cmd.args(["certify", "--subject", &subject, "--case", "lookup-order", "--format", "json"]);
    // Each case's request would time out after 10 s; a closed stdout must be seen long before.
    let out = run(cmd, Duration::from_secs(8));
    assert_eq!(code(&out), 3, "{}", stderr(&out));
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(text.contains("the subject closed its stdout when it owed a reply to `run"), "{text}");
    assert_none_left(&m);
}

#[test]
fn a_closed_stdout_ends_toolcert_quietly_and_stops_the_subject() {
    let dir = scratch("closed-stdout");
    let m = marker(3);
    // A correct adapter that also leaves a sleeper: toolcert must stop it on the way out.
    let adapter = concat!(env!("CARGO_MANIFEST_DIR"), "/examples/adapters/python/adapter.py");
    let subject = format!("exec:sleep {m} & exec python3 {adapter}");
    let _ = dir;
    for format in ["text", "jsonl"] {
        let mut child = toolcert()
            // A few cases at one setting: what is tested is the exit on the first write, not
            // the run (the text report is written once every setting has run).
            .args([
                "certify",
                "--subject",
                &subject,
                "--level",
                "events",
                "--cases",
                "20",
                "--format",
                format,
            ])
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap();
        // The reader goes away before toolcert writes anything.
        drop(child.stdout.take());
        let started = Instant::now();
        let out = child.wait_with_output().unwrap();
        assert!(started.elapsed() < Duration::from_secs(60), "took {:?}", started.elapsed());
        assert_eq!(code(&out), 141, "{}", stderr(&out));
        assert_eq!(stderr(&out), "", "quietly");
        assert_none_left(&m);
    }
}

#[test]
fn a_full_stdout_is_an_internal_error_in_one_line() {
    let dir = scratch("full-stdout");
    let report = dir.join("report.jsonl");
    let mut cmd = toolcert();
    cmd.args(["certify", "--cases", "100", "--format", "jsonl"]);
    let out = run(cmd, Duration::from_secs(60));
    std::fs::write(&report, &out.stdout).unwrap();
    let sse = concat!(env!("CARGO_MANIFEST_DIR"), "/crates/dialect/tests/data/anthropic.sse");
    let report = report.to_str().unwrap();
    let commands: Vec<Vec<&str>> = vec![
        vec!["certify", "--cases", "100", "--format", "text"],
        vec!["certify", "--cases", "100", "--format", "json"],
        vec!["certify", "--cases", "100", "--format", "jsonl"],
        vec!["certify", "--cases", "100", "--format", "junit"],
        vec!["certify", "--cases", "100", "--format", "markdown"],
        vec!["merge", report],
        vec!["merge", "--format", "jsonl", report, report],
        vec!["diff", report, report],
        vec!["diff", "--format", "json", report, report],
        vec!["replay", sse],
        vec!["replay", "--format", "json", sse],
        vec!["invariants"],
        vec!["cases"],
    ];
    for args in commands {
        let mut cmd = toolcert();
        cmd.args(&args).stdout(std::fs::File::create("/dev/full").unwrap());
        let out = run(cmd, Duration::from_secs(60));
        assert_eq!(code(&out), 5, "{args:?}: {}", stderr(&out));
        assert_one_line(&out, "cannot write to stdout: No space left on device");
    }
}

#[test]
fn ctrl_c_stops_the_subject_too() {
    let dir = scratch("ctrl-c");
    let m = marker(4);
    let body = r#"leave_a_sleeper()
start()
for line in sys.stdin:
    time.sleep(60)"#;
    let subject = python_subject(&dir, "hangs", &m, body);
    let mut child = toolcert()
        .args(["certify", "--subject", &subject])
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    // Until the sleeper runs, the subject is up.
    let deadline = Instant::now() + Duration::from_secs(10);
    while left_behind(&m).is_empty() {
        assert!(Instant::now() < deadline, "the subject never started");
        std::thread::sleep(Duration::from_millis(20));
    }
    // SAFETY: kill(2) on our own child.
    unsafe {
        libc::kill(child.id() as i32, libc::SIGINT);
    }
    let status = child.wait().unwrap();
    use std::os::unix::process::ExitStatusExt;
    assert_eq!(status.signal(), Some(libc::SIGINT), "ends as SIGINT ends a process: {status:?}");
    assert_none_left(&m);
}
