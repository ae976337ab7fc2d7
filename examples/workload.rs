//! Runs one benchmark workload many times, for instruction counts under callgrind (stable on
//! a noisy machine, where timings are not). `docs/PERFORMANCE.md` uses it.
//!
//! ```text
//! cargo build --profile dist --example workload
//! # one impl on one workload (counts only inside the measured loop):
//! valgrind --tool=callgrind --collect-atstart=no --toggle-collect=toolcert_workload_iterations \
//!     target/dist/examples/workload reference-events 610B 13 2000
//! # the whole comparison table (runs the line above for each row):
//! target/dist/examples/workload table
//! # wall-clock medians, the impls interleaved round by round (ratios paired per round):
//! target/dist/examples/workload time-table 13 64
//! # the reference against the floor and the raw parses:
//! target/dist/examples/workload parse-table 13
//! ```
//!
//! Besides the impls, two parses with no accumulator around them, counted in their own loop
//! (`--toggle-collect=toolcert_workload_parses`): `raw-parse`, one strict parse of the whole
//! document, and `event-parse`, one strict parse of the JSON of every SSE event the wire
//! level sends (Anthropic), the least a wire- or bytes-level accumulator can do.
//!
//! Impls: floor, reference-events, reference-wire, reference-bytes, naive-reparse,
//! naive-tolerant, rebuilt-buffer. Sizes: 28B, 610B, 64KiB, 1MiB. Uses mimalloc, as the
//! benches and the `toolcert` binary do.

use std::process::Command;
use std::time::{Duration, Instant};

use toolcert::bench::{workload, Impl, Prepared};

#[global_allocator]
static GLOBAL: mimalloc::MiMalloc = mimalloc::MiMalloc;

/// The loop callgrind counts (`--toggle-collect=toolcert_workload_iterations`).
#[no_mangle]
#[inline(never)]
fn toolcert_workload_iterations(p: &Prepared<'_>, n: usize) {
    for _ in 0..n {
        if let Err(e) = std::hint::black_box(p).run() {
            panic!("{e}");
        }
    }
}

/// The loop callgrind counts for the parses (`--toggle-collect=toolcert_workload_parses`):
/// every document parsed strictly into a value and dropped, `n` times.
#[no_mangle]
#[inline(never)]
fn toolcert_workload_parses(docs: &[&str], n: usize) {
    for _ in 0..n {
        for d in std::hint::black_box(docs) {
            let v: serde_json::Value = serde_json::from_str(d).unwrap_or_else(|e| panic!("{e}"));
            std::hint::black_box(v);
        }
    }
}

/// The JSON payloads of the SSE events `w` is sent as at the wire level (Anthropic).
fn event_payloads(w: &toolcert::bench::Workload) -> Vec<String> {
    use toolcert::subject::driver::Units;
    let stream = w.stream(toolcert::subject::Level::Wire, toolcert::scenario::Dialect::Anthropic);
    match stream.input().units {
        Units::Wire(events) => events.iter().filter_map(|e| e.as_sse()).map(|e| e.data.clone()).collect(),
        _ => unreachable!("a wire stream"),
    }
}

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    match args.iter().map(String::as_str).collect::<Vec<_>>()[..] {
        [parse @ ("raw-parse" | "event-parse"), size, frag, n] => {
            let w =
                workload(size, frag.parse().expect("a fragment size")).expect("a size: 28B 610B 64KiB 1MiB");
            let docs = if parse == "raw-parse" { vec![w.document.clone()] } else { event_payloads(&w) };
            let docs: Vec<&str> = docs.iter().map(String::as_str).collect();
            toolcert_workload_parses(&docs, n.parse().expect("an iteration count"));
        }
        ["parse-table", frag] => parse_table(frag.parse().expect("a fragment size")),
        ["table"] => table(13),
        ["time-table", ref frags @ ..] => time_table(frags),
        ["table", frag] => table(frag.parse().expect("a fragment size")),
        [imp, size, frag, n] => {
            let imp = Impl::by_name(imp).unwrap_or_else(|| panic!("unknown impl {imp}"));
            let w =
                workload(size, frag.parse().expect("a fragment size")).expect("a size: 28B 610B 64KiB 1MiB");
            let p = imp.prepare(&w);
            p.run_full().unwrap_or_else(|e| panic!("{e}"));
            toolcert_workload_iterations(&p, n.parse().expect("an iteration count"));
        }
        _ => {
            eprintln!("usage: workload IMPL SIZE FRAGMENT ITERATIONS | workload table [FRAGMENT]");
            std::process::exit(2);
        }
    }
}

/// Instructions per iteration of each impl at 610 B, 64 KiB and 1 MiB, under callgrind,
/// with the ratio to the floor.
fn table(frag: usize) {
    let me = std::env::current_exe().expect("own path");
    println!("| workload | impl | instructions / iteration | × floor |");
    println!("|---|---|---:|---:|");
    for (size, iters) in [("610B", 2000), ("64KiB", 20), ("1MiB", 2)] {
        let mut floor = None;
        for imp in Impl::ALL {
            let w = workload(size, frag).expect("a workload");
            if imp.quadratic() && imp.work(&w) > 64 << 20 {
                continue;
            }
            let iters = if imp.quadratic() { (iters / 20).max(1) } else { iters };
            let out = std::env::temp_dir().join(format!("toolcert-callgrind-{}.out", std::process::id()));
            let status = Command::new("valgrind")
                .args([
                    "--tool=callgrind",
                    "--collect-atstart=no",
                    "--toggle-collect=toolcert_workload_iterations",
                ])
                .arg(format!("--callgrind-out-file={}", out.display()))
                .arg(&me)
                .args([imp.name(), size, &frag.to_string(), &iters.to_string()])
                .output()
                .expect("valgrind runs");
            assert!(status.status.success(), "{}", String::from_utf8_lossy(&status.stderr));
            let text = std::fs::read_to_string(&out).expect("callgrind output");
            let _ = std::fs::remove_file(&out);
            let total: u64 = text
                .lines()
                .find_map(|l| l.strip_prefix("summary:").or_else(|| l.strip_prefix("totals:")))
                .and_then(|v| v.split_whitespace().next()?.parse().ok())
                .expect("a callgrind total");
            let per = total / iters as u64;
            let base = *floor.get_or_insert(per);
            println!("| {size}-{frag} | {} | {per} | {:.3} |", imp.name(), per as f64 / base as f64);
        }
    }
}

/// Instructions per iteration of `args` under callgrind, counted in `toggle` only.
fn count(args: &[&str], toggle: &str, iters: usize) -> u64 {
    let me = std::env::current_exe().expect("own path");
    let out = std::env::temp_dir().join(format!("toolcert-callgrind-{}.out", std::process::id()));
    let status = Command::new("valgrind")
        .args(["--tool=callgrind", "--collect-atstart=no", &format!("--toggle-collect={toggle}")])
        .arg(format!("--callgrind-out-file={}", out.display()))
        .arg(&me)
        .args(args)
        .arg(iters.to_string())
        .output()
        .expect("valgrind runs");
    assert!(status.status.success(), "{}", String::from_utf8_lossy(&status.stderr));
    let text = std::fs::read_to_string(&out).expect("callgrind output");
    let _ = std::fs::remove_file(&out);
    let total: u64 = text
        .lines()
        .find_map(|l| l.strip_prefix("summary:").or_else(|| l.strip_prefix("totals:")))
        .and_then(|v| v.split_whitespace().next()?.parse().ok())
        .expect("a callgrind total");
    total / iters as u64
}

/// The reference (fed directly, and behind the driver) against the floor
/// and the raw parse of the document; its wire and bytes levels against the parse of every
/// SSE event's JSON. Instructions per iteration, under callgrind.
fn parse_table(frag: usize) {
    println!("| workload | impl | instructions / iteration | × floor | × raw parse | × event parse |");
    println!("|---|---|---:|---:|---:|---:|");
    for (size, iters) in [("610B", 2000), ("64KiB", 20), ("1MiB", 2)] {
        let f = frag.to_string();
        let run = |imp: &str| count(&[imp, size, &f], "toolcert_workload_iterations", iters);
        let parse = |which: &str| count(&[which, size, &f], "toolcert_workload_parses", iters);
        let raw = parse("raw-parse");
        let events = parse("event-parse");
        let floor = run("floor");
        let rows = [
            ("raw-parse", raw),
            ("floor", floor),
            ("reference", run("reference")),
            ("reference-events", run("reference-events")),
            ("event-parse", events),
            ("reference-wire", run("reference-wire")),
            ("reference-bytes", run("reference-bytes")),
        ];
        for (name, per) in rows {
            let ratio = |base: u64| format!("{:.3}", per as f64 / base as f64);
            let to_events = if name.starts_with("reference-") && name != "reference-events" {
                ratio(events)
            } else {
                "—".into()
            };
            println!("| {size}-{frag} | {name} | {per} | {} | {} | {to_events} |", ratio(floor), ratio(raw));
        }
    }
}

/// Wall-clock medians on a machine shared with other work: the impls of a workload run in
/// rounds, one batch of each per round (at least 3 ms, in a rotating order), so a burst of
/// load hits all of them alike; the ratio to the floor is the median of the per-round ratios.
fn time_table(frags: &[&str]) {
    const ROUNDS: usize = 15;
    let frags: Vec<usize> = if frags.is_empty() {
        vec![13]
    } else {
        frags.iter().map(|f| f.parse().expect("a fragment size")).collect()
    };
    println!("| workload | impl | median / iteration | × floor (median of paired rounds) |");
    println!("|---|---|---:|---:|");
    for frag in frags {
        for size in ["610B", "64KiB", "1MiB"] {
            let w = workload(size, frag).expect("a workload");
            let impls: Vec<Impl> =
                Impl::ALL.into_iter().filter(|i| !i.quadratic() || i.work(&w) <= 64 << 20).collect();
            let prepared: Vec<Prepared<'_>> = impls.iter().map(|i| i.prepare(&w)).collect();
            // Repetitions per batch: enough for 3 ms.
            let reps: Vec<usize> = prepared
                .iter()
                .map(|p| {
                    p.run_full().unwrap_or_else(|e| panic!("{e}"));
                    let t = Instant::now();
                    p.run().unwrap_or_else(|e| panic!("{e}"));
                    (Duration::from_millis(3).as_secs_f64() / t.elapsed().as_secs_f64()).ceil().max(1.0)
                        as usize
                })
                .collect();
            let mut samples = vec![Vec::with_capacity(ROUNDS); impls.len()];
            for round in 0..ROUNDS {
                for k in 0..impls.len() {
                    let k = (k + round) % impls.len();
                    let t = Instant::now();
                    for _ in 0..reps[k] {
                        std::hint::black_box(&prepared[k]).run().unwrap_or_else(|e| panic!("{e}"));
                    }
                    samples[k].push(t.elapsed().as_secs_f64() / reps[k] as f64);
                }
            }
            for (k, imp) in impls.iter().enumerate() {
                let mut ratios: Vec<f64> = samples[k].iter().zip(&samples[0]).map(|(a, f)| a / f).collect();
                let mut own = samples[k].clone();
                println!(
                    "| {size}-{frag} | {} | {} | {:.3} |",
                    imp.name(),
                    human(median(&mut own)),
                    median(&mut ratios)
                );
            }
        }
    }
}

fn median(v: &mut [f64]) -> f64 {
    v.sort_by(f64::total_cmp);
    v[v.len() / 2]
}

fn human(secs: f64) -> String {
    match secs {
        s if s >= 1.0 => format!("{s:.3} s"),
        s if s >= 1e-3 => format!("{:.3} ms", s * 1e3),
        s if s >= 1e-6 => format!("{:.3} µs", s * 1e6),
        s => format!("{:.0} ns", s * 1e9),
    }
}
