//! Bad options and bad files, as a careless user gives them: each gets the documented exit
//! code and a message that names what is wrong, within a time bound; and large inputs cost
//! memory and time in proportion to their size.

use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};
use std::time::{Duration, Instant};

fn toolcert(args: &[&str]) -> Output {
    let started = Instant::now();
    let out = Command::new(env!("CARGO_BIN_EXE_toolcert"))
        .args(args)
        .stdin(Stdio::null())
        .output()
        .expect("toolcert runs");
    assert!(started.elapsed() < Duration::from_secs(120), "{args:?} took {:?}", started.elapsed());
    out
}

fn code(out: &Output) -> i32 {
    out.status.code().unwrap_or(-1)
}

fn stderr(out: &Output) -> String {
    String::from_utf8_lossy(&out.stderr).into_owned()
}

fn stdout(out: &Output) -> String {
    String::from_utf8_lossy(&out.stdout).into_owned()
}

/// The first line of stderr names `what` (clap adds a usage hint below its own).
fn assert_says(out: &Output, what: &str) {
    let err = stderr(out);
    let first = err.lines().next().unwrap_or_default();
    assert!(first.contains(what), "the first line names {what:?}: {err:?}");
}

/// A scratch directory, removed when the test ends (the replay tests write streams of
/// 100 MB and more: left behind, a few runs fill the disk).
struct Scratch(PathBuf);

impl std::ops::Deref for Scratch {
    type Target = PathBuf;
    fn deref(&self) -> &PathBuf {
        &self.0
    }
}

impl Drop for Scratch {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

fn scratch(name: &str) -> Scratch {
    let dir = std::env::temp_dir().join(format!("toolcert-bad-{}-{name}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    Scratch(dir)
}

fn s(p: &Path) -> &str {
    p.to_str().unwrap()
}

#[test]
fn negative_and_malformed_numbers_are_named() {
    for (args, what) in [
        (vec!["certify", "--cases", "-1"], "invalid value '-1' for '--cases <CASES>': must be 0 or more"),
        (vec!["certify", "--seed", "-1"], "invalid value '-1' for '--seed <SEED>': must be 0 or more"),
        (vec!["certify", "--cases", "many"], "expected a whole number, got \"many\""),
        (vec!["zoo", "--seeds", "-3"], "must be 0 or more, got -3"),
        (vec!["serve", "--port", "70000"], "70000 is too large"),
    ] {
        let out = toolcert(&args);
        assert_eq!(code(&out), 2, "{args:?}");
        assert_says(&out, what);
    }
}

#[test]
fn a_scenario_that_is_not_an_object_says_what_it_holds() {
    let dir = scratch("scenario");
    for (text, what) in [
        ("[]", "holds an array, not a scenario"),
        ("", "holds nothing (it is empty), not a scenario"),
        ("\"x\"", "holds a string, not a scenario"),
        ("{\"name\": 3}", "is not a scenario"),
        ("{\"name\": \"x\", ", "is not JSON"),
    ] {
        let path = dir.join("s.json");
        std::fs::write(&path, text).unwrap();
        let out = toolcert(&["certify", "--scenario", s(&path)]);
        assert_eq!(code(&out), 2, "{text:?}: {}", stderr(&out));
        assert_says(&out, what);
        assert_eq!(stderr(&out).trim_end().lines().count(), 1, "{}", stderr(&out));
    }
}

#[test]
fn a_report_cut_short_is_called_truncated() {
    let dir = scratch("truncated");
    let full = toolcert(&["certify", "--cases", "5", "--format", "jsonl"]);
    assert_eq!(code(&full), 0);
    let text = stdout(&full);
    // Cut inside the second record, and cut at a line's end before the footer.
    let inside = &text[..text.find('\n').unwrap() + 40];
    let at_line = &text[..text.rfind("{\"record\":\"footer\"").unwrap()];
    for (cut, what) in [(inside, "line 2: truncated"), (at_line, "no footer: the report is truncated")] {
        let path = dir.join("r.jsonl");
        std::fs::write(&path, cut).unwrap();
        let out = toolcert(&["merge", s(&path)]);
        assert_eq!(code(&out), 2, "{}", stderr(&out));
        assert_says(&out, what);
    }
}

#[test]
fn an_empty_or_cut_sse_file_says_no_terminal_event_arrived() {
    let dir = scratch("sse");
    let empty = dir.join("empty.sse");
    std::fs::write(&empty, "").unwrap();
    let out = toolcert(&["replay", s(&empty)]);
    assert_eq!(code(&out), 2);
    assert_says(&out, "holds no SSE event");
    let out = toolcert(&["replay", "--dialect", "anthropic", s(&empty)]);
    assert!(stdout(&out).contains("no terminal event arrived"), "{}", stdout(&out));

    let whole = std::fs::read_to_string(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/crates/dialect/tests/data/anthropic.sse"
    ))
    .unwrap();
    let cut = dir.join("cut.sse");
    std::fs::write(&cut, &whole[..whole.find("message_delta").unwrap()]).unwrap();
    let out = toolcert(&["replay", s(&cut)]);
    let text = stdout(&out);
    assert!(text.contains("no terminal event arrived"), "{text}");
    assert!(text.contains("not run (abandoned)"), "nothing dispatched: {text}");
    let out = toolcert(&["replay", "--format", "json", s(&cut)]);
    let json: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(json["terminal"], false);
    // The whole stream has its terminal.
    let out = toolcert(&[
        "replay",
        concat!(env!("CARGO_MANIFEST_DIR"), "/crates/dialect/tests/data/anthropic.sse"),
    ]);
    assert!(!stdout(&out).contains("no terminal event"), "{}", stdout(&out));
}

#[cfg(unix)]
#[test]
fn corpus_check_walks_each_directory_once_and_refuses_an_empty_one() {
    use std::os::unix::fs::symlink;
    let dir = scratch("corpus");
    // A symlink loop: about 2^40 paths if links are followed blindly.
    let looped = dir.join("loop");
    std::fs::create_dir_all(&looped).unwrap();
    symlink(".", looped.join("a")).unwrap();
    symlink(".", looped.join("b")).unwrap();
    let out = toolcert(&["corpus", "check", "--dir", s(&looped)]);
    assert_eq!(code(&out), 2, "{}", stderr(&out));
    assert!(
        stderr(&out).contains("a link to") && stderr(&out).contains("walked already"),
        "{}",
        stderr(&out)
    );
    assert!(stderr(&out).contains(&format!("no .sse files under {}", looped.display())), "{}", stderr(&out));

    for name in ["empty", "x.sse"] {
        let d = dir.join(name);
        std::fs::create_dir_all(&d).unwrap();
        let out = toolcert(&["corpus", "check", "--dir", s(&d)]);
        assert_eq!(code(&out), 2, "{name}");
        assert_says(&out, &format!("no .sse files under {}", d.display()));
    }

    // The real corpus with a link out of it and a link back into it: only its own cases.
    let corpus = dir.join("corpus");
    let written = toolcert(&["corpus", "write", "--dir", s(&corpus)]);
    assert_eq!(code(&written), 0, "{}", stderr(&written));
    let files = std::fs::read_dir(corpus.join("anthropic")).unwrap().count();
    symlink("../..", corpus.join("anthropic/up")).unwrap();
    symlink(".", corpus.join("again")).unwrap();
    let out = toolcert(&["corpus", "check", "--dir", s(&corpus)]);
    assert_eq!(code(&out), 0, "{}{}", stdout(&out), stderr(&out));
    assert!(stderr(&out).contains("anthropic/up: a link out of"), "{}", stderr(&out));
    let summary = stdout(&out);
    let checked: usize = summary.lines().last().unwrap().split(' ').next().unwrap().parse().unwrap();
    let sse = walk_count(&corpus);
    assert_eq!(checked, sse, "each case once: {summary}");
    assert!(files > 0);
}

/// Stream files (`.sse`, and Bedrock's `.eventstream`) under `dir`, links not followed.
fn walk_count(dir: &Path) -> usize {
    let mut n = 0;
    for e in std::fs::read_dir(dir).unwrap().flatten() {
        let t = e.file_type().unwrap();
        if t.is_dir() {
            n += walk_count(&e.path());
        } else if t.is_file() && e.path().extension().is_some_and(|x| x == "sse" || x == "eventstream") {
            n += 1;
        }
    }
    n
}

#[test]
fn merged_shards_are_the_unsharded_run_and_a_partial_merge_says_so() {
    let dir = scratch("merge");
    let whole = toolcert(&["certify", "--cases", "12", "--format", "jsonl"]);
    let mut shards = Vec::new();
    for k in 1..=3 {
        let out = toolcert(&["certify", "--cases", "12", "--shard", &format!("{k}/3"), "--format", "jsonl"]);
        let path = dir.join(format!("s{k}.jsonl"));
        std::fs::write(&path, &out.stdout).unwrap();
        shards.push(path);
    }
    let merged = toolcert(&["merge", "--format", "jsonl", s(&shards[0]), s(&shards[1]), s(&shards[2])]);
    assert_eq!(code(&merged), 0, "{}", stderr(&merged));
    assert!(stdout(&whole).contains("\"coverage_text\""), "the run's footer has the coverage text");
    assert_eq!(stdout(&merged), stdout(&whole), "merging every shard gives the unsharded run, byte for byte");

    // Text by default, as the README says.
    let text = toolcert(&["merge", s(&shards[0]), s(&shards[1]), s(&shards[2])]);
    assert!(stdout(&text).contains("CONFORMS at the should grade"), "{}", stdout(&text));

    let partial = toolcert(&["merge", s(&shards[0]), s(&shards[1])]);
    assert_eq!(code(&partial), 2, "two shards of three are not the run");
    assert!(stdout(&partial).contains("INCOMPLETE: shards missing (3); CONFORMS"), "{}", stdout(&partial));
    assert_says(&partial, "incomplete merge: shards 3 missing");
    let allowed = toolcert(&["merge", "--allow-partial", s(&shards[0]), s(&shards[1])]);
    assert_eq!(code(&allowed), 0, "{}", stderr(&allowed));
    assert!(stdout(&allowed).contains("INCOMPLETE: shards missing (3)"), "still said");
}

/// An Anthropic stream of `calls` tool calls, each with `size` bytes of arguments in fragments
/// of at most 1,000 bytes.
fn anthropic_stream(calls: usize, size: usize) -> Vec<u8> {
    let mut out = String::new();
    out.push_str("event: message_start\ndata: {\"type\":\"message_start\",\"message\":{\"id\":\"msg_1\",\"type\":\"message\",\"role\":\"assistant\",\"model\":\"m\",\"content\":[],\"stop_reason\":null,\"stop_sequence\":null,\"usage\":{\"input_tokens\":1,\"output_tokens\":1}}}\n\n");
    for i in 0..calls {
        out.push_str(&format!("event: content_block_start\ndata: {{\"type\":\"content_block_start\",\"index\":{i},\"content_block\":{{\"type\":\"tool_use\",\"id\":\"toolu_{i}\",\"name\":\"f\",\"input\":{{}}}}}}\n\n"));
        let args = format!("{{\"a\": \"{}\"}}", "x".repeat(size.saturating_sub(9)));
        for piece in args.as_bytes().chunks(1000) {
            let piece = serde_json::to_string(std::str::from_utf8(piece).unwrap()).unwrap();
            out.push_str(&format!("event: content_block_delta\ndata: {{\"type\":\"content_block_delta\",\"index\":{i},\"delta\":{{\"type\":\"input_json_delta\",\"partial_json\":{piece}}}}}\n\n"));
        }
        out.push_str(&format!(
            "event: content_block_stop\ndata: {{\"type\":\"content_block_stop\",\"index\":{i}}}\n\n"
        ));
    }
    out.push_str("event: message_delta\ndata: {\"type\":\"message_delta\",\"delta\":{\"stop_reason\":\"tool_use\",\"stop_sequence\":null},\"usage\":{\"output_tokens\":1}}\n\nevent: message_stop\ndata: {\"type\":\"message_stop\"}\n\n");
    out.into_bytes()
}

/// Runs `toolcert replay FILE` as a child; its CPU time (user + system), from wait4(2)'s
/// rusage of that child alone.
#[cfg(target_os = "linux")]
fn replay_cpu(file: &Path) -> Duration {
    let child = Command::new(env!("CARGO_BIN_EXE_toolcert"))
        .args(["replay", s(file)])
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let pid = child.id() as libc::pid_t;
    // Reaped by wait4 below, not by std (which would lose the child's rusage).
    std::mem::forget(child);
    // SAFETY: wait4 writes the status and rusage we own; it reaps our own child (std's Child
    // is not used to wait for it afterwards).
    let (status, usage) = unsafe {
        let mut status = 0;
        let mut usage: libc::rusage = std::mem::zeroed();
        assert_eq!(libc::wait4(pid, &mut status, 0, &mut usage), pid);
        (status, usage)
    };
    assert!(libc::WIFEXITED(status) && libc::WEXITSTATUS(status) == 0, "replay of {} failed", file.display());
    let tv =
        |t: libc::timeval| Duration::from_secs(t.tv_sec as u64) + Duration::from_micros(t.tv_usec as u64);
    tv(usage.ru_utime) + tv(usage.ru_stime)
}

/// The peak RSS (KiB) of `toolcert replay FILE` once it has judged the stream: read from its
/// `/proc/PID/status` (VmHWM) while it is blocked writing its output to a pipe nobody reads
/// yet. (rusage's ru_maxrss would not do: it keeps the parent's high-water mark across the
/// spawn's exec.)
#[cfg(target_os = "linux")]
fn replay_peak_kib(file: &Path) -> u64 {
    use std::io::{BufRead, BufReader, Read};
    let mut child = Command::new(env!("CARGO_BIN_EXE_toolcert"))
        .args(["replay", s(file)])
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let mut out = BufReader::new(child.stdout.take().unwrap());
    // The first line comes once the observation is complete; the rest fills the pipe.
    let mut first = String::new();
    out.read_line(&mut first).unwrap();
    std::thread::sleep(Duration::from_millis(200));
    let status = std::fs::read_to_string(format!("/proc/{}/status", child.id())).unwrap();
    let line = status.lines().find(|l| l.starts_with("VmHWM:")).expect("VmHWM");
    let peak = line.split_whitespace().nth(1).unwrap().parse().unwrap();
    std::io::copy(&mut out.take(u64::MAX), &mut std::io::sink()).unwrap();
    assert!(child.wait().unwrap().success());
    peak
}

#[cfg(target_os = "linux")]
#[test]
fn replay_is_linear_in_the_number_of_calls() {
    // The reference scanned every call on each announcement: replay took 3.5 s at 100k calls
    // and 14.8 s at 200k. CPU time of the child (not wall time), the least of three runs (a
    // loaded machine inflates one run's CPU time through cache and frequency contention: it
    // failed once beside valgrind runs), with a ratio bound (2.5, for 2x the work; a scan per
    // announcement gives 4x).
    let dir = scratch("linear");
    let mut cost = Vec::new();
    for calls in [100_000, 200_000] {
        let path = dir.join(format!("{calls}.sse"));
        std::fs::write(&path, anthropic_stream(calls, 8)).unwrap();
        cost.push((0..3).map(|_| replay_cpu(&path)).min().unwrap());
    }
    let ratio = cost[1].as_secs_f64() / cost[0].as_secs_f64();
    eprintln!("replay CPU time: 100k calls {:?}, 200k calls {:?}, ratio {ratio:.2}", cost[0], cost[1]);
    assert!(ratio < 2.5, "200k calls cost {ratio:.2} times 100k ({:?} against {:?})", cost[1], cost[0]);
}

#[cfg(target_os = "linux")]
#[test]
fn replay_of_a_large_stream_holds_it_about_twice() {
    // A 45 MB stream of 40 MB of arguments peaked at 424 MB (9x) when the stream was held as
    // bytes, as every SSE event and as every neutral event at once, then copied for the
    // subject. The bound: about 2x the stream, beyond a constant for the binary itself.
    let dir = scratch("large");
    let path = dir.join("large.sse");
    std::fs::write(&path, anthropic_stream(20, 2_000_000)).unwrap();
    let small = dir.join("small.sse");
    // Enough output (300 KB) to fill the pipe, so that it is still running when measured.
    std::fs::write(&small, anthropic_stream(1, 300_000)).unwrap();
    let base = replay_peak_kib(&small);
    let peak = replay_peak_kib(&path);
    let size = std::fs::metadata(&path).unwrap().len() / 1024;
    eprintln!("replay peak RSS: {peak} KiB for a {size} KiB stream ({base} KiB for a tiny one)");
    assert!(peak < base + 3 * size, "peak {peak} KiB, stream {size} KiB, base {base} KiB");
}
