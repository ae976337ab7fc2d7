//! A certification inside `cargo test`: what [`crate::Certify`] does beyond running.
//!
//! It sits between the builder and the test harness. Before the run, the environment
//! overrides the builder's settings (`TOOLCERT_CASE`, `TOOLCERT_SEED`, `TOOLCERT_CASES`,
//! `TOOLCERT_LEVEL`, `TOOLCERT_DIALECT`, `TOOLCERT_PROFILE`), as `PROPTEST_CASES` does for
//! proptest, so one case can be replayed from a shell without editing the test. After a
//! failing run (over every setting the subject declares, or those the builder narrowed it
//! to), the full report goes to `target/toolcert/` (text, and JSONL for `toolcert merge` and
//! `matrix`, one stream per setting), and the panic message stays short: per failing rule its
//! smallest reproducer, clipped to about forty lines, with the builder call and the shell line
//! that replay it in the setting it came from.

use std::fmt::Write as _;
use std::path::{Path, PathBuf};

use toolcert_oracle::{Grade, Invariant};
use toolcert_runner::report::{file_stem, plural, shell_quote};
use toolcert_runner::{Combined, Finding, Report, Status};
use toolcert_scenario::Dialect;
use toolcert_subject::Level;

/// Narrows or widens the run to one case: a name filter; `gen/SEED/K` also sets the seed and
/// runs exactly the cases up to `K`.
pub const CASE_VAR: &str = "TOOLCERT_CASE";
/// The seed of the generated cases.
pub const SEED_VAR: &str = "TOOLCERT_SEED";
/// How many generated cases to run besides the named ones.
pub const CASES_VAR: &str = "TOOLCERT_CASES";
/// The level the subject is fed at (`events`, `wire`, `bytes`).
pub const LEVEL_VAR: &str = "TOOLCERT_LEVEL";
/// The dialect of the wire and bytes levels (`anthropic`, `openai-chat`, `openai-responses`).
pub const DIALECT_VAR: &str = "TOOLCERT_DIALECT";
/// The server profile of the wire and bytes levels (`vllm`, `openai-chat/ollama`, `all`).
pub const PROFILE_VAR: &str = "TOOLCERT_PROFILE";

/// Most lines the panic message gives one failing rule.
pub const RULE_LINES: usize = 40;
/// Most transcript lines shown for a reproducer (the full report has all of them).
const TRANSCRIPT_LINES: usize = 14;
/// Most violations shown for a reproducer.
const VIOLATIONS: usize = 3;
/// Most characters of one line (a huge document's expected value is one line).
const LINE_CHARS: usize = 160;

/// The environment's overrides, read once per run.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Overrides {
    pub case: Option<String>,
    pub seed: Option<u64>,
    pub cases: Option<usize>,
    pub level: Option<Level>,
    pub dialect: Option<Dialect>,
    /// A profile name as given (resolved against the dialect when the run starts).
    pub profile: Option<String>,
}

impl Overrides {
    /// Reads the variables.
    ///
    /// # Errors
    /// A value that does not parse, naming the variable and what it expects.
    pub fn from_env() -> Result<Overrides, String> {
        Overrides::from_lookup(|name| std::env::var(name).ok())
    }

    /// Reads the variables from `get` (the environment, or a table in a test).
    pub fn from_lookup(get: impl Fn(&str) -> Option<String>) -> Result<Overrides, String> {
        let get = |name: &str| get(name).map(|v| v.trim().to_string()).filter(|v| !v.is_empty());
        let number = |name: &str| -> Result<Option<u64>, String> {
            get(name)
                .map(|v| v.parse::<u64>().map_err(|_| format!("{name}={v:?}: expected a whole number")))
                .transpose()
        };
        let cases = number(CASES_VAR)?
            .map(|n| usize::try_from(n).map_err(|_| format!("{CASES_VAR}={n}: too large")))
            .transpose()?;
        let level = get(LEVEL_VAR)
            .map(|v| v.parse::<Level>().map_err(|e| format!("{LEVEL_VAR}: {e}")))
            .transpose()?;
        let dialect = get(DIALECT_VAR)
            .map(|v| {
                v.parse::<Dialect>().map_err(|_| {
                    let names: Vec<&str> = Dialect::ALL.iter().map(|d| d.name()).collect();
                    format!("{DIALECT_VAR}={v:?}: expected one of {}", names.join(", "))
                })
            })
            .transpose()?;
        Ok(Overrides {
            case: get(CASE_VAR),
            seed: number(SEED_VAR)?,
            cases,
            level,
            dialect,
            profile: get(PROFILE_VAR),
        })
    }

    /// The variables that were set, as `NAME=value` words.
    pub fn words(&self) -> Vec<String> {
        let mut out = Vec::new();
        if let Some(c) = &self.case {
            out.push(format!("{CASE_VAR}={}", shell_quote(c)));
        }
        if let Some(s) = self.seed {
            out.push(format!("{SEED_VAR}={s}"));
        }
        if let Some(n) = self.cases {
            out.push(format!("{CASES_VAR}={n}"));
        }
        if let Some(l) = self.level {
            out.push(format!("{LEVEL_VAR}={l}"));
        }
        if let Some(d) = self.dialect {
            out.push(format!("{DIALECT_VAR}={}", d.name()));
        }
        if let Some(p) = &self.profile {
            out.push(format!("{PROFILE_VAR}={}", shell_quote(p)));
        }
        out
    }
}

/// `gen/SEED/K`: the seed and position of a generated case's name.
pub fn generated_position(name: &str) -> Option<(u64, usize)> {
    let mut parts = name.strip_prefix("gen/")?.split('/');
    let seed = parts.next()?.parse().ok()?;
    let k = parts.next()?.parse().ok()?;
    parts.next().is_none().then_some((seed, k))
}

/// The builder calls that replay `case` of `report` (one setting's), as a test would write
/// them; `narrow`: the run had several settings, so the call names this one.
pub fn builder_call(report: &Report, case: &str, narrow: bool) -> String {
    let mut out = String::new();
    if narrow || report.level != Level::Events {
        let _ = write!(out, ".level(Level::{:?})", report.level);
        if let Some(d) = report.dialect {
            let _ = write!(out, ".dialect(Dialect::{d:?})");
        }
        if let Some(p) = profile(report, narrow) {
            let _ = write!(out, ".profile({p:?})");
        }
    }
    if let Some((seed, k)) = generated_position(case) {
        let _ = write!(out, ".seed({seed}).cases({})", k + 1);
    }
    let _ = write!(out, ".only({case:?})");
    out
}

/// The server profile that names `report`'s setting: its quirk profile, and with `narrow`
/// its dialect's provider's own too (a run narrowed to every profile, `"all"`, comes back
/// with the test, and only a name picks the plain one out of it).
fn profile(report: &Report, narrow: bool) -> Option<String> {
    let dialect = report.dialect.filter(|_| report.level != Level::Events)?;
    let plain = || dialect.profile_of(toolcert_scenario::Quirks::PLAIN).map(|p| p.name.to_string());
    report.profile.clone().or_else(|| if narrow { plain() } else { None })
}

/// The shell line that replays `case` of `report` (one setting's) in the test `test`
/// (`None`: every test); `narrow`: the run had several settings, so the line names this one.
pub fn shell_line(report: &Report, case: &str, test: Option<&str>, narrow: bool) -> String {
    let mut words = vec![format!("{CASE_VAR}={}", shell_quote(case))];
    // Settings the run took from the environment must be given again, and the setting of a
    // run over several; those the test's code sets come back with the test.
    let env = Overrides::from_env().unwrap_or_default();
    if narrow || env.level.is_some() {
        words.push(format!("{LEVEL_VAR}={}", report.level));
    }
    if let Some(d) = report.dialect.filter(|_| narrow || env.dialect.is_some()) {
        words.push(format!("{DIALECT_VAR}={}", d.name()));
    }
    if let Some(p) = profile(report, narrow).filter(|_| narrow || env.profile.is_some()) {
        words.push(format!("{PROFILE_VAR}={}", shell_quote(&p)));
    }
    words.push("cargo test".into());
    if let Some(t) = test {
        words.push(shell_quote(t));
    }
    words.join(" ")
}

/// The name of the test running on this thread (libtest names each test's thread after it).
pub fn current_test() -> Option<String> {
    std::thread::current().name().filter(|n| *n != "main").map(str::to_string)
}

/// Where `cargo test` puts its build: the directory holding `CACHEDIR.TAG` above the test
/// binary, else `CARGO_TARGET_DIR`, else `target` under the package.
pub fn target_dir() -> PathBuf {
    if let Some(dir) = std::env::var_os("CARGO_TARGET_DIR") {
        return PathBuf::from(dir);
    }
    if let Ok(exe) = std::env::current_exe() {
        if let Some(dir) = exe.ancestors().skip(1).find(|d| d.join("CACHEDIR.TAG").is_file()) {
            return dir.to_path_buf();
        }
    }
    let package = std::env::var_os("CARGO_MANIFEST_DIR").map_or_else(|| PathBuf::from("."), PathBuf::from);
    package.join("target")
}

/// The full report written after a failing run.
#[derive(Clone, Debug)]
pub struct Saved {
    /// `target/toolcert/NAME.txt`: every finding in full, coverage and the table.
    pub text: PathBuf,
    /// `target/toolcert/NAME.jsonl`: the record stream (`toolcert merge`, `matrix`).
    pub jsonl: Option<PathBuf>,
}

/// Writes the full report as `dir/NAME.txt` and `dir/NAME.jsonl` (one record stream per
/// setting, as `toolcert certify --format jsonl` prints them).
///
/// # Errors
/// The directory or the text file cannot be written.
pub fn save_in(dir: &Path, name: &str, report: &Combined) -> Result<Saved, String> {
    std::fs::create_dir_all(dir).map_err(|e| format!("{}: {e}", dir.display()))?;
    let stem = file_stem(name);
    let text = dir.join(format!("{stem}.txt"));
    std::fs::write(&text, report.to_text(usize::MAX)).map_err(|e| format!("{}: {e}", text.display()))?;
    let streams: Result<Vec<String>, String> =
        report.settings.iter().map(toolcert_runner::jsonl::to_jsonl).collect();
    let jsonl = streams.ok().and_then(|body| {
        let path = dir.join(format!("{stem}.jsonl"));
        std::fs::write(&path, body.concat()).ok().map(|()| path)
    });
    Ok(Saved { text, jsonl })
}

/// Writes the full report under `target/toolcert/`.
pub fn save(name: &str, report: &Combined) -> Result<Saved, String> {
    save_in(&target_dir().join("toolcert"), name, report)
}

/// The first lines of a failing run's panic message: the verdict and where the full report is.
pub fn header(report: &Combined, saved: &Result<Saved, String>) -> String {
    let broken: Vec<&str> =
        report.invariants.iter().filter(|i| i.status == Status::Fail).map(|i| i.id.id()).collect();
    let failing = report.failing_cases().len();
    let settings = match report.settings.as_slice() {
        [one] => format!("{} level", one.setting_label()),
        all => plural(all.len(), "setting", "settings"),
    };
    let sum = |count: fn(&Report) -> usize| report.settings.iter().map(count).sum::<usize>();
    let mut out = format!(
        "{} does not conform at the {} grade: {} broken in {} of {} ({settings}, seed {}; {} named, {} generated)\n",
        report.subject,
        report.grade.as_str(),
        broken.join(", "),
        failing,
        plural(report.cases, "case", "cases"),
        report.settings.first().map_or(0, |r| r.seed),
        sum(|r| r.named_cases),
        sum(|r| r.generated_cases),
    );
    match saved {
        Ok(s) => {
            let _ = write!(out, "full report: {}", s.text.display());
            if let Some(j) = &s.jsonl {
                let _ = write!(out, " (records: {})", j.display());
            }
            out.push('\n');
        }
        Err(e) => {
            let _ = writeln!(out, "full report not written: {e}");
        }
    }
    out
}

/// One failing rule, in at most [`RULE_LINES`] lines: its smallest reproducer with the
/// builder call and shell line that replay it (in the setting it came from), then its other
/// findings one line each. `None` when the rule does not fail at the run's grade.
pub fn rule_text(report: &Combined, inv: Invariant, test: Option<&str>) -> Option<String> {
    let row = report.status_of(inv)?;
    if row.status != Status::Fail {
        return None;
    }
    let failures = if report.grade == Grade::Must { row.must_failures } else { row.failures };
    let mut lines = vec![format!(
        "{inv} broken by {} of {}: {}",
        failures,
        plural(report.cases, "case", "cases"),
        inv.rule()
    )];
    lines.push(format!("  why it matters: {}", inv.why()));
    let mine: Vec<&Finding> = report.counted_findings().filter(|f| f.invariant == inv).collect();
    // The finding shown in full: one with a reproducer kept, the most cases first.
    let shown = mine.iter().find(|f| f.reproducer.is_some()).or(mine.first()).copied();
    let narrow = report.settings.len() > 1;
    if let Some(f) = shown {
        lines.push(format!("  finding {}: {} ({})", f.id, f.title, plural(f.cases, "case", "cases")));
        // The setting whose reproducer the merged finding kept (the smallest), else its first.
        let has = |r: &&Report| r.findings.iter().any(|g| g.id == f.id);
        let kept = |r: &&Report| r.findings.iter().any(|g| g.id == f.id && g.size == f.size);
        // A run that failed has a setting; the first stands in should none hold the finding.
        let home = report.settings.iter().find(kept).or_else(|| report.settings.iter().find(has));
        let home = home.or(report.settings.first())?;
        if narrow {
            lines.push(format!("  in {}; shown from {}", f.settings.join(", "), home.setting_label()));
        }
        let case = match &f.reproducer {
            Some(r) => {
                let size = f.size.map(|s| format!(" ({s})")).unwrap_or_default();
                lines.push(format!("  smallest reproducer: {}{size}", r.case));
                for v in r.violations.iter().take(VIOLATIONS) {
                    lines.extend(v.to_string().lines().map(|l| format!("  {}", clip(l))));
                }
                if r.violations.len() > VIOLATIONS {
                    lines.push(format!(
                        "  … {} more violations in the full report",
                        r.violations.len() - VIOLATIONS
                    ));
                }
                lines.push("  transcript:".into());
                let all: Vec<&str> = r.transcript.lines().collect();
                lines.extend(all.iter().take(TRANSCRIPT_LINES).map(|l| format!("    {}", clip(l))));
                if all.len() > TRANSCRIPT_LINES {
                    lines.push(format!(
                        "    … {} more lines in the full report",
                        all.len() - TRANSCRIPT_LINES
                    ));
                }
                r.case.clone()
            }
            None => {
                lines.push(format!("  first case: {} (no reproducer kept)", f.first_case));
                f.first_case.clone()
            }
        };
        lines.push(format!("  replay in the test: {}", builder_call(home, &case, narrow)));
        lines.push(format!("  or from a shell:    {}", shell_line(home, &case, test, narrow)));
        if generated_position(&case).is_some() {
            lines.push(
                "  (a generated case replays unshrunk and shrinks again to the same reproducer)".into(),
            );
        }
    } else {
        lines.push("  (no finding at the required grade)".into());
    }
    let others: Vec<&&Finding> = mine.iter().filter(|f| Some(**f) != shown).collect();
    for f in others.iter().take(3) {
        lines.push(format!("  also {}: {} ({})", f.id, f.title, plural(f.cases, "case", "cases")));
    }
    if others.len() > 3 {
        lines.push(format!("  … {} more findings of {inv} in the full report", others.len() - 3));
    }
    if lines.len() > RULE_LINES {
        lines.truncate(RULE_LINES - 1);
        lines.push("  … the rest in the full report".into());
    }
    let mut out = lines.join("\n");
    out.push('\n');
    Some(out)
}

/// The whole panic message of a failing `assert_conforms`: the header, then each failing rule.
pub fn failure_text(report: &Combined, saved: &Result<Saved, String>, test: Option<&str>) -> String {
    let mut out = header(report, saved);
    for inv in report.invariants.iter().map(|i| i.id) {
        if let Some(text) = rule_text(report, inv, test) {
            out.push('\n');
            out.push_str(&text);
        }
    }
    out
}

/// Why a run that ran no case certifies nothing.
pub fn nothing_ran(report: &Combined, filter: Option<&str>) -> String {
    let why = match filter {
        Some(f) => {
            format!("no case name contains {f:?} (named cases: `toolcert cases`; generated: gen/SEED/K)")
        }
        None => "every case was skipped".into(),
    };
    format!("{}: no case ran, so nothing was certified: {why}", report.subject)
}

/// `line` cut to [`LINE_CHARS`] characters.
fn clip(line: &str) -> String {
    match line.char_indices().nth(LINE_CHARS) {
        Some((at, _)) => format!("{}… ({} bytes)", &line[..at], line.len()),
        None => line.to_string(),
    }
}
