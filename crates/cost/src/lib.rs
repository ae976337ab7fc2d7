//! What a streaming tool-call accumulator costs.
//!
//! Two parts, both downstream of the renderers and beside the runner (nothing here judges
//! correctness; `certify` does):
//!
//! - [`workload`]: the criterion workloads and the naive peers the reference is compared
//!   with in `benches/` and the linearity check (`toolcert::bench` re-exports it);
//! - [`mod@suite`] and [`measure`]: the cost certification `toolcert bench --subject NAME` runs,
//!   for any subject (built in, `exec:`, or in process through the Rust API): a fixed,
//!   versioned suite of turns, the subject's own time per turn beside a floor measured in the
//!   same run, the growth exponent of each series and a verdict, linear or superlinear.
//!   [`render_text`] prints a [`CostReport`]; it serialises to JSON as it is.

pub mod floor;
pub mod measure;
pub mod memory;
pub mod suite;
pub mod workload;

pub use floor::default_floor;
pub use measure::{
    price, Bounded, CostOptions, CostReport, Floor, Growth, SeriesCost, WorkloadCost, MEMORY_FACTOR,
    MEMORY_SLACK, STOP_AFTER_BUDGETS,
};
pub use suite::{
    bounded_plan, bounded_suite, suite, CostWorkload, Planned, BOUNDED_SUITE_VERSION, SUITE_VERSION,
};

/// `640 B`, `3.2 MiB`: a heap size.
pub(crate) fn bytes(n: u64) -> String {
    match n {
        n if n >= 1 << 30 => format!("{:.1} GiB", n as f64 / (1u64 << 30) as f64),
        n if n >= 1 << 20 => format!("{:.1} MiB", n as f64 / (1u64 << 20) as f64),
        n if n >= 1 << 10 => format!("{:.1} KiB", n as f64 / 1024.0),
        n => format!("{n} B"),
    }
}

/// `1.2 µs`, `35 ms`: three significant digits.
fn duration(ns: f64) -> String {
    let (v, unit) = if ns >= 1e9 {
        (ns / 1e9, "s")
    } else if ns >= 1e6 {
        (ns / 1e6, "ms")
    } else if ns >= 1e3 {
        (ns / 1e3, "µs")
    } else {
        (ns, "ns")
    };
    if v >= 100.0 {
        format!("{v:.0} {unit}")
    } else if v >= 10.0 {
        format!("{v:.1} {unit}")
    } else {
        format!("{v:.2} {unit}")
    }
}

/// The report as text: a row per workload (the fastest, median and slowest time per turn,
/// ns per byte and the ratio to the floor from the fastest), then a line per series with its
/// growth exponent.
pub fn render_text(r: &CostReport) -> String {
    use std::fmt::Write as _;
    let mut out = String::new();
    let at = match &r.dialect {
        Some(d) => format!("{} ({d})", r.level),
        None => r.level.to_string(),
    };
    let _ = writeln!(out, "cost of {} at the {at} level (cost suite v{})", r.subject, r.suite_version);
    let _ = writeln!(out, "floor: {}\n", r.floor);
    let _ = writeln!(
        out,
        "{:<20} {:>7} {:>10} {:>10} {:>10} {:>8} {:>10} {:>7}  growth",
        "workload", "units", "fastest", "median", "slowest", "ns/byte", "floor", "ratio"
    );
    for w in &r.workloads {
        let Some(t) = &w.subject else {
            let _ = writeln!(out, "{:<20} {:>7} {:>10}", w.name, w.units, "not run");
            continue;
        };
        let floor = w.floor.as_ref().map_or("-".into(), |f| duration(f.min_ns as f64));
        let ratio = w.ratio.map_or("-".into(), |x| format!("{x:.1}x"));
        let _ = writeln!(
            out,
            "{:<20} {:>7} {:>10} {:>10} {:>10} {:>8.1} {:>10} {:>7}  {}{}",
            w.name,
            w.units,
            duration(t.min_ns as f64),
            duration(t.median_ns as f64),
            duration(t.max_ns as f64),
            w.ns_per_byte.unwrap_or(0.0),
            floor,
            ratio,
            w.growth,
            w.wrong.as_ref().map_or(String::new(), |e| format!("  (wrong result: {e})"))
        );
        if let Some(peak) = w.peak_bytes {
            let floor = w.floor_peak_bytes.map_or(String::new(), |f| format!(" (floor {})", bytes(f)));
            let _ = writeln!(out, "{:<20} heap at its peak {}{floor}", "", bytes(peak));
        }
    }
    out.push('\n');
    for s in &r.series {
        let exp = |e: Option<f64>| e.map_or("-".into(), |e| format!("{e:.2}"));
        let _ = writeln!(
            out,
            "{:<10} growth exponent {}, {} at the top (floor {}, {}): {}{}",
            s.series,
            exp(s.exponent),
            exp(s.top_exponent),
            exp(s.floor_exponent),
            exp(s.floor_top_exponent),
            s.growth,
            s.stopped.as_ref().map_or(String::new(), |why| format!("; {why}"))
        );
    }
    let _ = writeln!(
        out,
        "\n{}: {} (time per turn grows as size^exponent; above {} is superlinear)",
        r.subject,
        match r.growth {
            Growth::Linear => "LINEAR on every series".to_string(),
            Growth::Superlinear => "SUPERLINEAR".to_string(),
            Growth::Inconclusive => "inconclusive (a series ran fewer than two tiers)".to_string(),
        },
        measure::SUPERLINEAR_ABOVE
    );
    if let Some(b) = &r.bounded {
        if b.holds {
            let _ = writeln!(
                out,
                "bounded: HOLDS on every large stream (time no steeper than the floor's, heap within {} times \
                 the floor's plus {})",
                b.memory_factor,
                bytes(b.memory_slack_bytes)
            );
        } else {
            let _ = writeln!(out, "bounded: BROKEN on {} of the large streams:", b.broken.len());
            for why in &b.broken {
                let _ = writeln!(out, "  - {why}");
            }
        }
    }
    out
}
