//! Linearity (docs/SPEC.md §7): accumulating a document costs O(its bytes) whatever the
//! fragment size. A buffer rebuilt on every fragment, or a re-parse after every fragment,
//! gives the right outcomes and quadratic cost; the oracle cannot see that, this test can.
//!
//! Like rust-analyzer's `assert_linear`, it measures the cost of each implementation on
//! documents of growing size and fits `cost = a + b·n + q·n²` (least squares, `n` scaled to
//! 1 at the largest size): the *quadratic share* `q / cost(1)` is near 0 for a linear
//! implementation and large for a quadratic one.
//!
//! **How cost is measured, and why.** With `valgrind --tool=callgrind`: instruction counts
//! inside the measured function only (`--toggle-collect`, one dump per measurement with
//! `--dump-after`), in one child process (this test binary re-run with
//! `TOOLCERT_LINEARITY_CHILD` set). Instruction counts are the same on every run whatever
//! else the machine is doing, so the test cannot flake on a busy shared machine, and the
//! margins are wide (linear: |share| < 0.05, measured within 0.01; quadratic: share > 0.3,
//! measured 1.0 and up).
//!
//! When valgrind is not installed the test **skips, saying so**, rather than time: on the
//! 2-core machine this was written on, shared with other builds, wall-clock timings (best of
//! five samples of at least 10 ms each, four tries per verdict) still called the floor and
//! the reference quadratic in three runs out of three, because a descheduled sample is not
//! "noise that only adds time" at these durations. Set `TOOLCERT_LINEARITY_TIMED=1` to use
//! that timing mode anyway on a quiet machine without valgrind, or
//! `TOOLCERT_REQUIRE_VALGRIND=1` to fail instead of skipping (CI sets it once it has
//! installed valgrind).

use std::path::PathBuf;
use std::process::Command;
use std::time::{Duration, Instant};

use toolcert::bench::{Impl, Prepared, Workload};

/// Set in the child process: run the measurements instead of the test.
const CHILD: &str = "TOOLCERT_LINEARITY_CHILD";

/// What is measured: each impl on documents of growing size, in fragments of this many
/// bytes, and whether it must be linear. Sizes are chosen so that the quadratic term of a
/// quadratic peer dominates its cost (this runs in debug builds, where parsing is slow and
/// `memcpy` is not) and the whole plan stays under a minute under callgrind.
fn plan() -> Vec<(Impl, [usize; 4], usize, bool)> {
    const K: usize = 1 << 10;
    vec![
        (Impl::Floor, [8 * K, 16 * K, 32 * K, 64 * K], 16, true),
        (Impl::ReferenceEvents, [8 * K, 16 * K, 32 * K, 64 * K], 16, true),
        (Impl::ReferenceWire, [K, 2 * K, 4 * K, 8 * K], 16, true),
        (Impl::ReferenceBytes, [K, 2 * K, 4 * K, 8 * K], 16, true),
        (Impl::NaiveReparse, [K, 2 * K, 3 * K, 4 * K], 64, false),
        (Impl::NaiveTolerant, [K, 2 * K, 3 * K, 4 * K], 64, false),
        (Impl::RebuiltBuffer, [4 * K, 8 * K, 16 * K, 32 * K], 16, false),
    ]
}

/// The measured function (callgrind counts inside it only).
#[no_mangle]
#[inline(never)]
fn toolcert_linearity_measured(p: &Prepared<'_>) {
    if let Err(e) = std::hint::black_box(p).run() {
        panic!("{e}");
    }
}

fn workload(len: usize, fragment: usize) -> Workload {
    Workload::new("linearity", len, fragment)
}

/// In the child: every measurement of the plan, in order, each once (callgrind dumps after
/// each). Outside the child: nothing.
#[test]
fn child() {
    if std::env::var_os(CHILD).is_none() {
        return;
    }
    for (imp, sizes, fragment, _) in plan() {
        for len in sizes {
            let w = workload(len, fragment);
            let p = imp.prepare(&w);
            toolcert_linearity_measured(&p);
        }
    }
}

/// Instruction counts of every measurement, from one callgrind run of the child; `None`
/// when valgrind is not installed.
fn callgrind_counts() -> Option<Vec<u64>> {
    if Command::new("valgrind").arg("--version").output().is_err() {
        return None;
    }
    let dir = std::env::temp_dir().join(format!("toolcert-linearity-{}", std::process::id()));
    std::fs::create_dir_all(&dir).expect("a temp dir");
    let out = dir.join("callgrind.out");
    let run = Command::new("valgrind")
        .args([
            "--tool=callgrind",
            "--collect-atstart=no",
            "--toggle-collect=toolcert_linearity_measured",
            "--dump-after=toolcert_linearity_measured",
        ])
        .arg(format!("--callgrind-out-file={}", out.display()))
        .arg(std::env::current_exe().expect("the test binary"))
        .args(["--exact", "child", "--nocapture", "--test-threads=1"])
        .env(CHILD, "1")
        .output()
        .expect("valgrind runs");
    assert!(run.status.success(), "callgrind run failed:\n{}", String::from_utf8_lossy(&run.stderr));
    // One file per dump, `callgrind.out.N` for N = 1, 2, ... (plus the final one, unnumbered).
    let mut parts: Vec<(usize, PathBuf)> = std::fs::read_dir(&dir)
        .expect("the temp dir")
        .filter_map(|e| {
            let p = e.ok()?.path();
            let n = p.file_name()?.to_str()?.strip_prefix("callgrind.out.")?.parse().ok()?;
            Some((n, p))
        })
        .collect();
    parts.sort();
    let counts = parts
        .iter()
        .map(|(_, p)| {
            let text = std::fs::read_to_string(p).expect("a callgrind dump");
            text.lines()
                .find_map(|l| l.strip_prefix("summary:").or_else(|| l.strip_prefix("totals:")))
                .and_then(|v| v.split_whitespace().next()?.parse().ok())
                .expect("a callgrind total")
        })
        .collect();
    let _ = std::fs::remove_dir_all(&dir);
    Some(counts)
}

/// Wall-clock seconds of one impl at each size: each sample repeats the run until it takes
/// at least 10 ms, and the best of five samples counts (noise only ever adds time).
fn timings(imp: Impl, sizes: [usize; 4], fragment: usize) -> Vec<f64> {
    sizes
        .iter()
        .map(|&len| {
            let w = workload(len, fragment);
            let p = imp.prepare(&w);
            let mut reps = 1;
            loop {
                let t = Instant::now();
                (0..reps).for_each(|_| toolcert_linearity_measured(&p));
                if t.elapsed() >= Duration::from_millis(10) {
                    break;
                }
                reps *= 2;
            }
            let mut best = Duration::MAX;
            for _ in 0..5 {
                let t = Instant::now();
                (0..reps).for_each(|_| toolcert_linearity_measured(&p));
                best = best.min(t.elapsed());
            }
            best.as_secs_f64() / reps as f64
        })
        .collect()
}

/// The quadratic share of the least-squares fit `cost = a + b·x + q·x²`, `x = n / n_max`:
/// `q / cost(1)`.
fn quadratic_share(sizes: &[usize], costs: &[f64]) -> f64 {
    let top = *sizes.iter().max().expect("sizes") as f64;
    let xs: Vec<f64> = sizes.iter().map(|&n| n as f64 / top).collect();
    // Normal equations for the basis (1, x, x²).
    let mut m = [[0.0f64; 4]; 3];
    for (&x, &c) in xs.iter().zip(costs) {
        let basis = [1.0, x, x * x];
        for i in 0..3 {
            for j in 0..3 {
                m[i][j] += basis[i] * basis[j];
            }
            m[i][3] += basis[i] * c;
        }
    }
    // Gaussian elimination with partial pivoting.
    for col in 0..3 {
        let pivot = (col..3).max_by(|&a, &b| m[a][col].abs().total_cmp(&m[b][col].abs())).expect("a row");
        m.swap(col, pivot);
        for row in 0..3 {
            if row != col {
                let f = m[row][col] / m[col][col];
                let pivot_row = m[col];
                for (x, p) in m[row].iter_mut().zip(pivot_row).skip(col) {
                    *x -= f * p;
                }
            }
        }
    }
    let (a, b, q) = (m[0][3] / m[0][0], m[1][3] / m[1][1], m[2][3] / m[2][2]);
    q / (a + b + q)
}

/// Verdict thresholds on the quadratic share. Instruction counts are exact, so the linear
/// band is narrow; timings are not, so under timing a linear verdict is anything that is not
/// clearly quadratic (the quadratic peers measure 0.7 and up either way).
const LINEAR_MAX: f64 = 0.05;
const LINEAR_MAX_TIMED: f64 = 0.3;
const QUADRATIC_MIN: f64 = 0.3;

#[derive(Debug)]
struct Verdict {
    imp: Impl,
    sizes: [usize; 4],
    fragment: usize,
    costs: Vec<f64>,
    share: f64,
    must_be_linear: bool,
    timed: bool,
}

impl Verdict {
    fn linear_max(&self) -> f64 {
        if self.timed {
            LINEAR_MAX_TIMED
        } else {
            LINEAR_MAX
        }
    }

    fn right(&self) -> bool {
        if self.must_be_linear {
            self.share.abs() < self.linear_max()
        } else {
            self.share > QUADRATIC_MIN
        }
    }

    fn line(&self) -> String {
        let verdict = if self.share > QUADRATIC_MIN {
            "quadratic"
        } else if self.share.abs() < self.linear_max() {
            "linear"
        } else {
            "unclear"
        };
        let points: Vec<String> =
            self.sizes.iter().zip(&self.costs).map(|(n, c)| format!("{}K: {c:.4e}", n >> 10)).collect();
        format!(
            "{:<17} share {:>7.3} {verdict:<9} (expected {}) [fragments of {}: {}]",
            self.imp.name(),
            self.share,
            if self.must_be_linear { "linear" } else { "quadratic" },
            self.fragment,
            points.join(", ")
        )
    }
}

#[test]
fn the_reference_is_linear_and_the_quadratic_peers_are_caught() {
    if std::env::var_os(CHILD).is_some() {
        return;
    }
    let plan = plan();
    let verdicts: Vec<Verdict> = match callgrind_counts() {
        Some(counts) => {
            assert_eq!(counts.len(), plan.len() * 4, "one callgrind dump per measurement");
            println!("linearity: instruction counts under callgrind");
            plan.iter()
                .zip(counts.chunks(4))
                .map(|(&(imp, sizes, fragment, must_be_linear), c)| {
                    let costs: Vec<f64> = c.iter().map(|&c| c as f64).collect();
                    let share = quadratic_share(&sizes, &costs);
                    Verdict { imp, sizes, fragment, costs, share, must_be_linear, timed: false }
                })
                .collect()
        }
        None if std::env::var_os("TOOLCERT_REQUIRE_VALGRIND").is_some() => {
            panic!("TOOLCERT_REQUIRE_VALGRIND is set and valgrind is not installed")
        }
        None if std::env::var_os("TOOLCERT_LINEARITY_TIMED").is_none() => {
            println!(
                "linearity: SKIPPED, valgrind is not installed (install it for exact instruction \
                 counts, or set TOOLCERT_LINEARITY_TIMED=1 to time on a quiet machine)"
            );
            return;
        }
        None => {
            println!(
                "linearity: timing (TOOLCERT_LINEARITY_TIMED): best of 5 samples of at least 10 ms \
                 per size, up to 4 tries per verdict"
            );
            plan.iter()
                .map(|&(imp, sizes, fragment, must_be_linear)| {
                    let mut v = Verdict {
                        imp,
                        sizes,
                        fragment,
                        costs: vec![],
                        share: f64::NAN,
                        must_be_linear,
                        timed: true,
                    };
                    for _ in 0..4 {
                        v.costs = timings(imp, sizes, fragment);
                        v.share = quadratic_share(&sizes, &v.costs);
                        if v.right() {
                            break;
                        }
                    }
                    v
                })
                .collect()
        }
    };
    let report: Vec<String> = verdicts.iter().map(Verdict::line).collect();
    println!("{}", report.join("\n"));
    let wrong: Vec<&Verdict> = verdicts.iter().filter(|v| !v.right()).collect();
    assert!(wrong.is_empty(), "linearity verdicts wrong for {wrong:?}:\n{}", report.join("\n"));
}

#[test]
fn the_fit_tells_linear_from_quadratic() {
    let sizes = [1, 2, 4, 8];
    let linear: Vec<f64> = sizes.iter().map(|&n| 100.0 + 7.0 * n as f64).collect();
    let quadratic: Vec<f64> = sizes.iter().map(|&n| 100.0 + 7.0 * n as f64 + 3.0 * (n * n) as f64).collect();
    assert!(quadratic_share(&sizes, &linear).abs() < 1e-9);
    let share = quadratic_share(&sizes, &quadratic);
    assert!((share - 192.0 / (100.0 + 56.0 + 192.0)).abs() < 1e-9, "{share}");
}
