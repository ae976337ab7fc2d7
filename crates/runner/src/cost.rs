//! A cost run's result as a certification report carries it (`certify --cost`).
//!
//! `toolcert-cost` prices a subject on its versioned cost suite (time per turn beside a floor,
//! the growth exponent of each series, a verdict); this module holds the plain data of that
//! price, so that a [`Report`](crate::Report) can carry it beside its invariants, write it
//! in every format (text, JSON, the JSONL footer, Markdown, JUnit) and read it back, and so
//! that the matrix can show it as cost rows. A superlinear cost counts against the report's
//! verdict as a broken invariant does (exit 1); the correctness grade (`conforms`,
//! `conformance`) stays what the cases say. Nothing here measures anything.

use std::fmt::Write as _;

use serde::{Deserialize, Serialize};
use toolcert_subject::Level;

/// How a series' cost grows.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Growth {
    Linear,
    Superlinear,
    /// Fewer than two tiers ran.
    Inconclusive,
}

impl std::fmt::Display for Growth {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(match self {
            Growth::Linear => "linear",
            Growth::Superlinear => "SUPERLINEAR",
            Growth::Inconclusive => "inconclusive",
        })
    }
}

/// A time in nanoseconds with its spread over the samples.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Timing {
    pub median_ns: u64,
    pub min_ns: u64,
    pub max_ns: u64,
    pub samples: usize,
}

/// One workload's price.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct WorkloadCost {
    pub name: String,
    pub series: String,
    /// The tier's size along its series, in bytes.
    pub size: usize,
    /// Argument and text bytes in the turn.
    pub bytes: usize,
    pub fragment: usize,
    /// Units fed (events, SSE events or chunks).
    pub units: usize,
    /// `None`: not run (the series stopped before it; see the series' `stopped`).
    pub subject: Option<Timing>,
    pub floor: Option<Timing>,
    /// Subject ns per argument/text byte, from its fastest sample.
    #[serde(default, deserialize_with = "number::opt_f64")]
    pub ns_per_byte: Option<f64>,
    /// The subject's fastest sample over the floor's. The fastest, not the median, prices
    /// both here and in the growth fit: on a shared machine noise only ever adds time.
    #[serde(default, deserialize_with = "number::opt_f64")]
    pub ratio: Option<f64>,
    /// The subject's result differed from what the turn says (certify says why); the price
    /// is still given.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub wrong: Option<String>,
    pub growth: Growth,
    /// The most heap the subject held at once during one run, over what it held before
    /// (in process: a counting allocator; `None`: not measured).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub peak_bytes: Option<u64>,
    /// The same for the floor.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub floor_peak_bytes: Option<u64>,
}

/// One series' growth.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct SeriesCost {
    pub series: String,
    /// The least-squares slope of log time over log size across the tiers that ran.
    #[serde(default, deserialize_with = "number::opt_f64")]
    pub exponent: Option<f64>,
    /// The same for the floor, for comparison.
    #[serde(default, deserialize_with = "number::opt_f64")]
    pub floor_exponent: Option<f64>,
    pub growth: Growth,
    /// Why the series stopped early, if it did.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub stopped: Option<String>,
    /// The slope between the two largest tiers that ran: what the cost tends to, where a
    /// large cost per turn flattens the small tiers.
    #[serde(default, skip_serializing_if = "Option::is_none", deserialize_with = "number::opt_f64")]
    pub top_exponent: Option<f64>,
    /// The same for the floor.
    #[serde(default, skip_serializing_if = "Option::is_none", deserialize_with = "number::opt_f64")]
    pub floor_top_exponent: Option<f64>,
}

/// A whole cost run.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct CostReport {
    pub suite_version: u32,
    pub subject: String,
    pub level: Level,
    /// Below the events level.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub dialect: Option<String>,
    /// What the floor is (or why there is none).
    pub floor: String,
    #[serde(deserialize_with = "number::f64")]
    pub budget_s: f64,
    pub workloads: Vec<WorkloadCost>,
    pub series: Vec<SeriesCost>,
    /// Superlinear if any series is; linear if every series is; inconclusive otherwise.
    pub growth: Growth,
    /// On the bounded suite (`bench --bounded`, docs/SPEC.md "The bounded rule"): whether the
    /// subject stayed within the stated factors of the floor on every large stream.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub bounded: Option<Bounded>,
}

/// The bounded rule's verdict: the subject fails each large stream cleanly or dispatches it
/// right, with a time that grows no faster than the floor's and a peak heap within
/// `memory_factor` of the floor's (plus `memory_slack_bytes`), and never crashes or runs on.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Bounded {
    pub holds: bool,
    /// Why it does not: one line per broken stream.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub broken: Vec<String>,
    #[serde(deserialize_with = "number::f64")]
    pub memory_factor: f64,
    pub memory_slack_bytes: u64,
}

impl CostReport {
    /// Whether the cost counts against the verdict.
    pub fn superlinear(&self) -> bool {
        self.growth == Growth::Superlinear
    }

    /// A price on the bounded suite whose rule is broken.
    pub fn broken(&self) -> bool {
        self.bounded.as_ref().is_some_and(|b| !b.holds)
    }

    /// The bounded rule's verdict: `HOLDS on every large stream`, `BROKEN on 2 large streams`;
    /// `None` on the cost suite.
    pub fn bounded_verdict(&self) -> Option<String> {
        let b = self.bounded.as_ref()?;
        Some(match b.holds {
            true => "HOLDS on every large stream".into(),
            false => format!("BROKEN on {} large streams", b.broken.len()),
        })
    }

    /// [`CostReport::bounded_verdict`] with the factors it was judged by.
    pub fn bounded_line(&self) -> Option<String> {
        let b = self.bounded.as_ref()?;
        Some(format!(
            "{} (time no steeper than the floor's, heap within {} times the floor's plus {} KiB)",
            self.bounded_verdict()?,
            b.memory_factor,
            b.memory_slack_bytes >> 10
        ))
    }

    /// `events`, `bytes (anthropic)`.
    pub fn setting(&self) -> String {
        match &self.dialect {
            Some(d) => format!("{} ({d})", self.level),
            None => self.level.to_string(),
        }
    }

    /// `LINEAR on every series`, `SUPERLINEAR: call/13 (exponent 2.10), call/1 (2.16)`.
    pub fn verdict_line(&self) -> String {
        match self.growth {
            Growth::Linear => "LINEAR on every series".into(),
            Growth::Superlinear => {
                let steep: Vec<String> = self
                    .series
                    .iter()
                    .filter(|s| s.growth == Growth::Superlinear)
                    .map(|s| {
                        format!(
                            "{} (exponent {}, {} at the top)",
                            s.series,
                            exponent(s.exponent),
                            exponent(s.top_exponent)
                        )
                    })
                    .collect();
                format!("SUPERLINEAR: {}", steep.join(", "))
            }
            Growth::Inconclusive => "inconclusive (a series ran fewer than two tiers)".into(),
        }
    }

    /// The largest tier of `series` that ran.
    fn last_run(&self, series: &str) -> Option<&WorkloadCost> {
        self.workloads.iter().rfind(|w| w.series == series && w.subject.is_some())
    }

    /// The cost section of a text report: the verdict, then a line per series with its
    /// exponent, the floor's, and the price of its largest tier that ran.
    pub fn to_text(&self) -> String {
        let (title, verdict) = match self.bounded_line() {
            Some(rule) => ("bounded rule (bounded suite", format!("{rule}; growth {}", self.verdict_line())),
            None => ("cost (suite", self.verdict_line()),
        };
        let mut out = format!(
            "{title} v{}, {} level, budget {} s): {verdict}\nfloor: {}\n",
            self.suite_version,
            self.setting(),
            self.budget_s,
            self.floor
        );
        for why in self.bounded.iter().flat_map(|b| &b.broken) {
            let _ = writeln!(out, "  broken: {why}");
        }
        for s in &self.series {
            let _ = write!(
                out,
                "  {:<10} {:<12} exponent {}, {} at the top (floor {}, {})",
                s.series,
                s.growth.to_string(),
                exponent(s.exponent),
                exponent(s.top_exponent),
                exponent(s.floor_exponent),
                exponent(s.floor_top_exponent)
            );
            if let Some(w) = self.last_run(&s.series) {
                let _ = write!(out, "; {}: {}", w.name, price(w));
            }
            if let Some(why) = &s.stopped {
                let _ = write!(out, "; {why}");
            }
            out.push('\n');
        }
        for w in self.workloads.iter().filter(|w| w.wrong.is_some()) {
            let _ = writeln!(out, "  {}: wrong result ({})", w.name, w.wrong.as_deref().unwrap_or(""));
        }
        out
    }

    /// The cost section of a Markdown report: the verdict, then a row per workload.
    pub fn to_markdown(&self) -> String {
        let (title, suite) = match self.bounded_line() {
            Some(rule) => (format!("Bounded rule: {rule}"), "Bounded suite"),
            None => (format!("Cost: {}", self.verdict_line()), "Cost suite"),
        };
        let mut out = format!(
            "## {title}\n\n{suite} v{} at the {} level, budget {} s; floor: {}.\n\n",
            self.suite_version,
            self.setting(),
            self.budget_s,
            crate::formats::md_cell(&self.floor)
        );
        for why in self.bounded.iter().flat_map(|b| &b.broken) {
            let _ = writeln!(out, "- broken: {}", crate::formats::md_cell(why));
        }
        if self.bounded.as_ref().is_some_and(|b| !b.broken.is_empty()) {
            out.push('\n');
        }
        out.push_str(
            "| workload | ns/byte | ratio to the floor | series growth (exponent) |\n|---|---:|---:|---|\n",
        );
        for w in &self.workloads {
            let series = self.series.iter().find(|s| s.series == w.series);
            let growth = series.map_or(String::new(), |s| format!("{} ({})", s.growth, exponent(s.exponent)));
            let (per_byte, ratio) = match &w.subject {
                None => ("not run".to_string(), "—".to_string()),
                Some(_) => (
                    w.ns_per_byte.map_or("—".into(), |x| format!("{x:.1}")),
                    w.ratio.map_or("—".into(), |x| format!("{x:.1}×")),
                ),
            };
            let _ = writeln!(out, "| `{}` | {per_byte} | {ratio} | {growth} |", w.name);
        }
        for s in self.series.iter().filter(|s| s.stopped.is_some()) {
            let _ = writeln!(out, "\n{}: {}.", s.series, s.stopped.as_deref().unwrap_or(""));
        }
        out
    }

    /// A matrix cell for `series` (`None`: the verdict over every series).
    pub fn cell(&self, series: Option<&str>) -> String {
        let Some(name) = series else {
            return self.growth.to_string();
        };
        match self.series.iter().find(|s| s.series == name) {
            None => "—".into(),
            Some(s) => {
                let mut c = format!("{} {}/{}", s.growth, exponent(s.exponent), exponent(s.top_exponent));
                if let Some(r) = self.last_run(name).and_then(|w| w.ratio) {
                    let _ = write!(c, " · {r:.1}× floor");
                }
                c
            }
        }
    }
}

/// `2.10`, `-`.
fn exponent(e: Option<f64>) -> String {
    e.map_or("-".into(), |e| format!("{e:.2}"))
}

/// `3.6 ns/byte, 1.0× the floor`.
fn price(w: &WorkloadCost) -> String {
    let mut s = w.ns_per_byte.map_or(String::new(), |x| format!("{x:.1} ns/byte"));
    if let Some(r) = w.ratio {
        let _ = write!(s, ", {r:.1}× the floor");
    }
    if let Some(peak) = w.peak_bytes {
        let _ = write!(s, ", heap {:.1} MiB", peak as f64 / f64::from(1 << 20));
        if let Some(f) = w.floor_peak_bytes {
            let _ = write!(s, " (floor {:.1} MiB)", f as f64 / f64::from(1 << 20));
        }
    }
    s
}

/// What a verdict line adds for the reports that carry a cost: `; cost LINEAR on every
/// series (events)`, nothing when none does.
pub fn verdict_suffix(reports: &[crate::Report]) -> String {
    let costs: Vec<String> = reports
        .iter()
        .filter_map(|r| r.cost.as_ref())
        .map(|c| format!("; cost {} ({})", c.verdict_line(), c.setting()))
        .chain(
            reports
                .iter()
                .filter_map(|r| r.bounded.as_ref())
                .filter_map(|c| Some(format!("; bounded rule {} ({})", c.bounded_verdict()?, c.setting()))),
        )
        .collect();
    costs.concat()
}

/// Reading a fraction back wherever a report is read. The workspace keeps numbers as their
/// text (serde_json's `arbitrary_precision`), and inside a tagged record (the JSONL footer)
/// such a number reaches a plain `f64` as a map it refuses; through `Number` it reads.
mod number {
    use serde::de::Error as _;
    use serde::{Deserialize, Deserializer};

    pub fn f64<'de, D: Deserializer<'de>>(d: D) -> Result<f64, D::Error> {
        let n = serde_json::Number::deserialize(d)?;
        n.as_f64().ok_or_else(|| D::Error::custom(format!("{n} is not a finite number")))
    }

    pub fn opt_f64<'de, D: Deserializer<'de>>(d: D) -> Result<Option<f64>, D::Error> {
        match Option::<serde_json::Number>::deserialize(d)? {
            None => Ok(None),
            Some(n) => {
                n.as_f64().map(Some).ok_or_else(|| D::Error::custom(format!("{n} is not a finite number")))
            }
        }
    }
}
