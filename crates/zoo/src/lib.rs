//! `toolcert zoo`: the harness proves itself against the mutant zoo.
//!
//! Every mutant is hunted with generated cases only (no named case helps), over several
//! seeds: how many cases until the first failure, which invariants it broke (and which
//! findings: the signatures of the first failures), and how small the smallest shrunk
//! counterexample over the seeds is.

use serde::Serialize;
use toolcert_mutants::Mutant;
use toolcert_oracle::{Invariant, Profile};
use toolcert_runner::{Certification, Signature, Size};
use toolcert_scenario::{Block, Case};

/// One finding a mutant showed: its stable id and title.
#[derive(Clone, Debug, Serialize, PartialEq, Eq, PartialOrd, Ord)]
pub struct ZooFinding {
    pub id: String,
    pub title: String,
}

/// One mutant's result over all seeds.
#[derive(Clone, Debug, Serialize)]
pub struct ZooRow {
    pub mutant: String,
    /// Killed on every seed.
    pub killed: bool,
    /// Seeds on which no failure was found within the case budget.
    pub survived_seeds: Vec<u64>,
    /// The invariants violated (first failures, all seeds).
    pub invariants: Vec<Invariant>,
    /// The invariants that must catch it.
    pub expected: Vec<Invariant>,
    /// Some expected invariant was among the violated ones on every killing seed.
    pub expected_caught: bool,
    pub cases_to_detection_median: usize,
    pub cases_to_detection_max: usize,
    /// The findings its first failures showed (all seeds), by id.
    pub findings: Vec<ZooFinding>,
    /// The smallest shrunk counterexample over the seeds.
    pub smallest: Size,
    /// Events in the smallest shrunk counterexample.
    pub counterexample_events: usize,
    /// Argument bytes in the smallest shrunk counterexample.
    pub counterexample_argument_bytes: usize,
    #[serde(skip)]
    pub counterexample: Option<(Case, Vec<toolcert_oracle::Violation>)>,
    pub seed: String,
    pub bug: String,
    /// The bugs a certification of it shows (the named cases and `max_cases` generated ones
    /// at the first seed), by id: one, whose symptoms include an expected invariant, is how
    /// a mutant should read in a report (docs/SPEC.md, "Bugs").
    pub bugs: Vec<String>,
    /// Some bug of `bugs` has a symptom of an expected invariant.
    pub bug_expected: bool,
    /// The server profiles it was hunted at: every profile of its dialect that sends its
    /// trigger (all the wire behaviours it is set to meet); none for a mutant hunted where
    /// the provider's own stream triggers it.
    pub profiles: Vec<String>,
    /// The profiles at which some seed survived.
    pub survived_profiles: Vec<String>,
}

/// Where `m` is hunted: its own setting's quirks when they are plain, else every server
/// profile of its dialect that sends all of them (a mutant of vLLM's repeated finish is
/// hunted at OpenRouter's too), with the profiles' ids.
pub fn trigger_profiles(m: &Mutant) -> Vec<(toolcert_scenario::Quirks, Option<String>)> {
    if m.quirks.is_plain() {
        return vec![(m.quirks, None)];
    }
    let wanted: Vec<&str> = m.quirks.set().collect();
    let found: Vec<_> = m
        .dialect
        .profiles()
        .filter(|p| {
            let sends: Vec<&str> = p.quirks.set().collect();
            wanted.iter().all(|f| sends.contains(f))
        })
        .map(|p| (p.quirks, Some(p.id())))
        .collect();
    if found.is_empty() {
        vec![(m.quirks, None)]
    } else {
        found
    }
}

/// Settings of a zoo run.
#[derive(Clone, Debug)]
pub struct Zoo {
    pub seeds: Vec<u64>,
    /// Generated cases allowed per seed before a mutant counts as surviving.
    pub max_cases: usize,
}

impl Default for Zoo {
    fn default() -> Self {
        Zoo { seeds: (1..=5).collect(), max_cases: 200 }
    }
}

impl Zoo {
    pub fn run_one(&self, m: &Mutant) -> ZooRow {
        let subject = m.subject();
        let mut cases = Vec::new();
        let mut invariants: Vec<Invariant> = Vec::new();
        let mut survived = Vec::new();
        let mut expected_caught = true;
        let mut counterexample: Option<(Case, Vec<toolcert_oracle::Violation>)> = None;
        let mut findings: Vec<ZooFinding> = Vec::new();
        let targets = trigger_profiles(m);
        let mut survived_profiles = Vec::new();
        for (quirks, profile) in &targets {
            for &seed in &self.seeds {
                let run = Certification {
                    cases: self.max_cases,
                    seed,
                    named: false,
                    profile: Profile { schema: true, ..Default::default() },
                    level: m.level,
                    speech: toolcert_subject::driver::Speech { dialect: m.dialect, quirks: *quirks },
                    ..Certification::default()
                };
                match run.hunt(&*subject, m.expected) {
                    None => {
                        survived.push(seed);
                        survived_profiles.extend(profile.clone());
                    }
                    Some(found) => {
                        cases.push(found.cases);
                        expected_caught &= found.first.iter().any(|i| m.expected.contains(i));
                        invariants.extend(found.first.iter().copied());
                        findings.extend(
                            found
                                .signatures
                                .iter()
                                .map(|s: &Signature| ZooFinding { id: s.id(), title: s.title() }),
                        );
                        let smaller =
                            counterexample.as_ref().is_none_or(|(c, _)| Size::of(&found.case) < Size::of(c));
                        if smaller {
                            counterexample = Some((found.case, found.violations));
                        }
                    }
                }
            }
        }
        survived.sort_unstable();
        survived.dedup();
        survived_profiles.sort();
        survived_profiles.dedup();
        invariants.sort();
        invariants.dedup();
        findings.sort();
        findings.dedup();
        let smallest = counterexample.as_ref().map(|(c, _)| Size::of(c)).unwrap_or_default();
        cases.sort_unstable();
        let (events, bytes) = counterexample.as_ref().map_or((0, 0), |(c, _)| size(c));
        let report = Certification {
            cases: self.max_cases,
            seed: self.seeds.first().copied().unwrap_or(1),
            profile: Profile { schema: true, ..Default::default() },
            level: m.level,
            speech: toolcert_subject::driver::Speech { dialect: m.dialect, quirks: m.quirks },
            ..Certification::default()
        }
        .run(&*subject);
        let bug_expected = report.bugs.iter().any(|b| {
            b.symptoms.iter().any(|id| m.expected.iter().any(|inv| id.split('#').next() == Some(inv.id())))
        });
        ZooRow {
            mutant: m.name.into(),
            killed: survived.is_empty(),
            survived_seeds: survived,
            invariants,
            expected: m.expected.to_vec(),
            expected_caught: expected_caught && !cases.is_empty(),
            cases_to_detection_median: cases.get(cases.len() / 2).copied().unwrap_or(0),
            cases_to_detection_max: cases.last().copied().unwrap_or(0),
            findings,
            smallest,
            counterexample_events: events,
            counterexample_argument_bytes: bytes,
            counterexample,
            seed: m.seed.into(),
            bug: m.bug.into(),
            bugs: report.bugs.iter().map(|b| b.id.clone()).collect(),
            bug_expected,
            profiles: targets.into_iter().filter_map(|(_, p)| p).collect(),
            survived_profiles,
        }
    }

    pub fn run(&self, progress: &mut dyn FnMut(&str)) -> Vec<ZooRow> {
        self.run_jobs(1, progress)
    }

    /// Hunts the mutants on `jobs` threads (each mutant on one), rows in zoo order: the same
    /// table for every job count.
    pub fn run_jobs(&self, jobs: usize, progress: &mut dyn FnMut(&str)) -> Vec<ZooRow> {
        let zoo = toolcert_mutants::zoo();
        let next = std::sync::atomic::AtomicUsize::new(0);
        let (tx, rx) = std::sync::mpsc::channel::<(usize, ZooRow)>();
        let mut rows: Vec<Option<ZooRow>> = vec![None; zoo.len()];
        std::thread::scope(|scope| {
            for _ in 0..jobs.max(1) {
                let tx = tx.clone();
                let (zoo, next) = (&zoo, &next);
                scope.spawn(move || loop {
                    let i = next.fetch_add(1, std::sync::atomic::Ordering::SeqCst);
                    let Some(m) = zoo.get(i) else { break };
                    if tx.send((i, self.run_one(m))).is_err() {
                        break;
                    }
                });
            }
            drop(tx);
            for (i, row) in rx {
                progress(&row.mutant);
                rows[i] = Some(row);
            }
        });
        rows.into_iter().flatten().collect()
    }
}

/// A cost mutant as `toolcert bench` prices it: killed when its verdict is superlinear.
#[derive(Clone, Debug, serde::Serialize)]
pub struct CostRow {
    pub mutant: String,
    pub bug: String,
    pub killed: bool,
    /// The growth exponent of the `call/13` series (one call, 13-byte fragments).
    pub exponent: Option<f64>,
    pub floor_exponent: Option<f64>,
}

/// The budget the zoo prices its cost mutants with: every tier of a quadratic accumulator runs
/// but one predicted over 20 budgets (the re-parse of 512 KiB in 1-byte fragments), about 20
/// seconds for both mutants in a release build.
pub const COST_BUDGET: std::time::Duration = std::time::Duration::from_millis(500);

/// Prices every cost mutant (`toolcert_mutants::cost_zoo`) at the events level against the
/// Rust floor.
pub fn cost_rows() -> Vec<CostRow> {
    toolcert_mutants::cost_zoo().iter().map(cost_row).collect()
}

/// Prices one cost mutant.
pub fn cost_row(m: &Mutant) -> CostRow {
    let opts = toolcert_cost::CostOptions { budget: COST_BUDGET, ..Default::default() };
    let report = toolcert_cost::price(&*m.subject(), toolcert_cost::Floor::Rust, &opts);
    let call = report.as_ref().ok().and_then(|r| r.series.iter().find(|s| s.series == "call/13").cloned());
    CostRow {
        mutant: m.name.into(),
        bug: m.bug.into(),
        killed: report.is_ok_and(|r| r.growth == toolcert_cost::Growth::Superlinear),
        exponent: call.as_ref().and_then(|s| s.exponent),
        floor_exponent: call.and_then(|s| s.floor_exponent),
    }
}

fn exponent(e: Option<f64>) -> String {
    e.map_or("-".into(), |e| format!("{e:.2}"))
}

/// The cost mutants' lines for a terminal.
pub fn cost_to_text(rows: &[CostRow]) -> String {
    let mut out = format!(
        "\n{} cost mutant{} (right outcomes, superlinear cost), priced by `toolcert bench` with a {} ms budget:\n",
        rows.len(),
        if rows.len() == 1 { "" } else { "s" },
        COST_BUDGET.as_millis()
    );
    for r in rows {
        out += &format!(
            "{:<30} {:<8} growth exponent {} (floor {}) on call/13\n",
            r.mutant,
            if r.killed { "killed" } else { "SURVIVED" },
            exponent(r.exponent),
            exponent(r.floor_exponent)
        );
    }
    out
}

/// The cost mutants' table as Markdown.
pub fn cost_to_markdown(rows: &[CostRow]) -> String {
    let mut out = format!(
        "\n## Cost mutants\n\nRight outcomes, superlinear cost: no invariant catches them, `toolcert bench` \
         must (`toolcert bench --subject builtin:mutant/NAME`, docs/COST.md). Priced at the events level \
         against the Rust floor with a {} ms budget per tier; *exponent* is the growth exponent of the \
         `call/13` series (one call of 1 KiB to 512 KiB in 13-byte fragments; the floor's beside it), \
         superlinear above 1.3.\n\n| mutant | killed | exponent | floor | bug |\n|---|---|---|---|---|\n",
        COST_BUDGET.as_millis()
    );
    for r in rows {
        out += &format!(
            "| `{}` | {} | {} | {} | {} |\n",
            r.mutant,
            if r.killed { "yes" } else { "**no**" },
            exponent(r.exponent),
            exponent(r.floor_exponent),
            r.bug.replace('|', "\\|")
        );
    }
    out
}

/// Events and argument bytes of a case.
pub fn size(case: &Case) -> (usize, usize) {
    let events = case.streams.iter().map(|t| toolcert_render::render(t).events.len()).sum();
    let bytes = case
        .streams
        .iter()
        .flat_map(|t| &t.blocks)
        .map(|b| match b {
            Block::Call(c) => c.arguments.len(),
            Block::Text(_) | Block::Foreign(_) => 0,
        })
        .sum();
    (events, bytes)
}

fn ids(v: &[Invariant]) -> String {
    v.iter().map(|i| i.id()).collect::<Vec<_>>().join(", ")
}

/// The table for a terminal.
pub fn to_text(rows: &[ZooRow], zoo: &Zoo) -> String {
    let mut out = format!(
        "{} mutants, seeds {:?}, at most {} per seed\n\n{:<30} {:<8} {:>6} {:>5} {:>7} {:>6} {:>4}  invariants violated\n",
        rows.len(),
        zoo.seeds,
        toolcert_runner::report::plural(zoo.max_cases, "generated case", "generated cases"),
        "mutant",
        "killed",
        "median",
        "max",
        "events",
        "bytes",
        "bugs"
    );
    for r in rows {
        let killed = match (r.killed, r.expected_caught) {
            (true, true) => "killed",
            (true, false) => "WRONG",
            _ => "SURVIVED",
        };
        out += &format!(
            "{:<30} {:<8} {:>6} {:>5} {:>7} {:>6} {:>4}  {}\n",
            r.mutant,
            killed,
            r.cases_to_detection_median,
            r.cases_to_detection_max,
            r.counterexample_events,
            r.counterexample_argument_bytes,
            r.bugs.len(),
            ids(&r.invariants)
        );
    }
    let dead = rows.iter().filter(|r| r.killed && r.expected_caught).count();
    out += &format!("\n{dead} of {} mutants killed with an expected invariant on every seed\n", rows.len());
    let one = rows.iter().filter(|r| r.bugs.len() == 1 && r.bug_expected).count();
    out += &format!(
        "{one} of {} show one bug in a certification (the named cases and the first seed's generated ones), \
         with an expected invariant among its symptoms\n",
        rows.len()
    );
    out += "median, max: generated cases up to and including the first failure, over the seeds; \
            events, bytes: the smallest shrunk counterexample's events and argument bytes over the seeds; \
            bugs: the bugs a certification of it reports (docs/SPEC.md, \"Bugs\")\n";
    out += &hunted_at(rows);
    out
}

/// The server profiles each mutant with a trigger was hunted at (every profile that sends
/// it), and where a seed survived.
fn hunted_at(rows: &[ZooRow]) -> String {
    let mut out = String::new();
    for r in rows.iter().filter(|r| !r.profiles.is_empty()) {
        out += &format!("{} hunted at {}", r.mutant, r.profiles.join(", "));
        if !r.survived_profiles.is_empty() {
            out += &format!(" (survived at {})", r.survived_profiles.join(", "));
        }
        out += "\n";
    }
    if !out.is_empty() {
        out.insert_str(0, "\nmutants with a trigger, hunted at every server profile that sends it:\n");
    }
    out
}

/// The table as Markdown, for `docs/ZOO.md`.
pub fn to_markdown(rows: &[ZooRow], zoo: &Zoo) -> String {
    let mut out = String::from(
        "# The mutant zoo\n\nGenerated by `toolcert zoo --seeds 20 --format markdown > docs/ZOO.md`; do not edit by hand.\n\n",
    );
    out += &format!(
        "Each mutant is an accumulator with exactly one bug from the seeds, certified at the level the bug lives at (events; or wire and bytes, in one dialect and, where the bug needs it, a quirk profile). It is hunted with \
         generated cases only (seeds {:?}, at most {} cases per seed); *median* and *max* are the generated \
         cases up to and including the first failure (how fast it dies), *events*, *fragments* and \
         *bytes* the size of the smallest shrunk counterexample over the seeds (provider-neutral \
         events, non-empty argument and text fragments, argument and text bytes), *findings* the distinct \
         findings its first failures showed, *bugs* the bugs a certification of it reports (the named \
         cases and the first seed's generated ones; docs/SPEC.md, \"Bugs\").\n\n",
        zoo.seeds, zoo.max_cases
    );
    out += "| mutant | killed | median | max | events | fragments | bytes | findings | bugs | invariants violated | must catch it | bug | seed |\n|---|---|---|---|---|---|---|---|---|---|---|---|---|\n";
    for r in rows {
        out += &format!(
            "| `{}` | {} | {} | {} | {} | {} | {} | {} | {} | {} | {} | {} | {} |\n",
            r.mutant,
            if r.killed && r.expected_caught { "yes" } else { "**no**" },
            r.cases_to_detection_median,
            r.cases_to_detection_max,
            r.smallest.events,
            r.smallest.fragments,
            r.smallest.bytes,
            r.findings.len(),
            r.bugs.len(),
            ids(&r.invariants),
            ids(&r.expected),
            r.bug.replace('|', "\\|"),
            r.seed
        );
    }
    out += &hunted_at(rows);
    out
}
