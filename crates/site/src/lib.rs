//! The certification site (`toolcert site`): static, self-contained HTML pages and SVG badges
//! built from JSONL reports.
//!
//! The last stage after certification: `certify --format jsonl` writes a report per SDK and
//! column (dialect, server profile, caller policy), [`toolcert_runner::jsonl`] reads them back
//! with their tiers and bugs, and [`build`] turns them into
//!
//! ```text
//! OUT/index.html              one row per SDK and version, one column per tier
//! OUT/sdk/SDK.html            its bugs, most serious first, each with its symptoms, columns,
//!                             smallest reproducer's bytes, replay command and a standalone
//!                             script; the cost rows; what was not tested
//! OUT/badges/SDK-TIER.svg     a badge per SDK and tier
//! ```
//!
//! The reproducers' bytes are read from `--reproducers` (the `.sse` beside each saved
//! scenario), the commentary from `--notes`: `BUG-xxxxxxxx.md`, one note per bug id shown on
//! every SDK page the bug appears on, and `SDK.md`, an SDK's own note (its text before the
//! first `## ID` heading opens its page; a section under a heading of finding ids or bug ids
//! is shown under the bug that is, or has as a symptom, one of them, on that SDK's page only).
//! A bug note, or an SDK note's bug section, for a bug no report (of that SDK) contains is an
//! error: commentary must not outlive what it comments on.
//!
//! Everything written is a function of the inputs (no dates, sorted orders), so a committed
//! copy can be checked for being current by building again and comparing.

mod badge;
mod html;
mod scripts;

use std::collections::{BTreeMap, BTreeSet};
use std::fmt::Write as _;
use std::path::{Path, PathBuf};

use toolcert_oracle::{Grade, Invariant};
use toolcert_runner::report::{file_stem, Report};
use toolcert_runner::tiers::Tier;
use toolcert_runner::{Bug, Finding};

pub use html::esc;

/// What to build from and where.
#[derive(Clone, Debug)]
pub struct Options {
    /// The JSONL reports (`SDK--DIALECT[--PROFILE]--POLICY.jsonl`).
    pub reports: PathBuf,
    pub out: PathBuf,
    /// Where the saved reproducers are (`corpus/findings`).
    pub reproducers: PathBuf,
    /// The notes (`docs/certification/notes`); a directory that does not exist has none.
    pub notes: PathBuf,
}

/// Why a site was not built.
#[derive(Debug)]
pub enum Error {
    /// An input is missing or malformed (a report, a note): exit 2.
    Input(String),
    /// The site could not be written: exit 5.
    Output(String),
}

impl std::fmt::Display for Error {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Error::Input(s) | Error::Output(s) => f.write_str(s),
        }
    }
}

/// What was built.
#[derive(Debug, Default)]
pub struct Built {
    pub reports: usize,
    pub sdks: usize,
    pub bugs: usize,
    pub files: usize,
}

/// The caller policy a report plays (docs/PROTOCOL.md): tier 3 is shown for both.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
enum Policy {
    Alone,
    Documented,
}

/// One report and where it sits.
struct Run {
    file: PathBuf,
    sdk: String,
    /// `openai-chat / deepseek / as-handed-over`.
    label: String,
    /// `openai-chat--deepseek`: the corpus directory of its reproducers.
    column_dir: String,
    /// `as-handed-over`.
    policy_dir: String,
    policy: Policy,
    report: Report,
}

impl Run {
    fn implementation(&self) -> Option<&serde_json::Map<String, serde_json::Value>> {
        self.report.subject_metadata.get("implementation").and_then(|v| v.as_object())
    }

    fn version(&self) -> String {
        let imp = self.implementation();
        let get = |k: &str| imp.and_then(|m| m.get(k)).and_then(|v| v.as_str()).unwrap_or("");
        let name = get("name");
        let version = get("version");
        match (name, version) {
            ("", "") => String::new(),
            (n, "") => n.to_string(),
            ("", v) => v.to_string(),
            (n, v) => format!("{n} {v}"),
        }
    }

    fn dialect(&self) -> String {
        self.report.dialect.map(|d| d.name().to_string()).unwrap_or_default()
    }

    fn profile(&self) -> String {
        match (&self.report.profile, self.report.dialect) {
            (Some(p), _) => p.clone(),
            // No profile: the dialect's own provider, the first profile of the dialect.
            (None, Some(d)) => toolcert_scenario::PROFILES
                .iter()
                .find(|p| p.dialect == d)
                .map(|p| p.name.to_string())
                .unwrap_or_default(),
            (None, None) => String::new(),
        }
    }
}

/// The front grid's columns: tier 3 twice.
const COLUMNS: [(Tier, Policy, &str); 8] = [
    (Tier::Standard, Policy::Alone, "standard"),
    (Tier::Compatible, Policy::Alone, "compatible"),
    (Tier::Endings, Policy::Alone, "endings"),
    (Tier::Endings, Policy::Documented, "endings-documented"),
    (Tier::Strict, Policy::Alone, "strict"),
    (Tier::Faulty, Policy::Alone, "faulty"),
    (Tier::Hostile, Policy::Alone, "hostile"),
    (Tier::Numbers, Policy::Alone, "numbers"),
];

fn column_title(tier: Tier, policy: Policy) -> String {
    match (tier, policy) {
        (Tier::Endings, Policy::Alone) => format!("{} {}, SDK alone", tier.number(), tier.name()),
        (Tier::Endings, Policy::Documented) => {
            format!("{} {}, documented caller", tier.number(), tier.name())
        }
        _ => format!("{} {}", tier.number(), tier.name()),
    }
}

/// One cell of the grid, over every report of the SDK that plays its policy.
#[derive(Default)]
struct Cell {
    reports: usize,
    exercised: usize,
    bugs: BTreeSet<String>,
    fail: bool,
    differs: bool,
}

impl Cell {
    fn word(&self) -> (String, &'static str, &'static str) {
        if self.reports == 0 {
            ("not tested".into(), "nt", "#9f9f9f")
        } else if self.fail {
            let n = self.bugs.len();
            (format!("{n} bug{}", if n == 1 { "" } else { "s" }), "fail", "#e05d44")
        } else if self.differs {
            (
                format!("{} differ{}", self.bugs.len(), if self.bugs.len() == 1 { "s" } else { "" }),
                "differs",
                "#dfb317",
            )
        } else if self.exercised == 0 {
            ("n/a".into(), "na", "#9f9f9f")
        } else {
            ("pass".into(), "pass", "#4c1")
        }
    }
}

/// One bug of one SDK, over the reports it appears in.
struct BugView<'a> {
    bug: &'a Bug,
    /// The runs it appears in (indices into the SDK's runs).
    runs: Vec<usize>,
    symptoms: Vec<String>,
    silent: bool,
}

/// The invariants whose must part, broken with a call dispatched, is a silent wrong dispatch.
const SILENT: [Invariant; 5] = [
    Invariant::AccIdentity,
    Invariant::AccFidelity,
    Invariant::AccStrict,
    Invariant::AccTruncation,
    Invariant::AccAbandon,
];

/// Whether a finding is a wrong call handed over as runnable (rather than a turn that failed
/// loudly): a must violation of [`SILENT`] whose observed outcome is dispatchable, dispatched
/// arguments, another name, or two calls merged into one.
fn dispatches(f: &Finding) -> bool {
    if f.grade != Grade::Must || !SILENT.contains(&f.invariant) {
        return false;
    }
    let shows = |kind: &str, observed: &str| {
        observed.starts_with("dispatchable")
            || observed.starts_with("args ")
            || observed.starts_with("name ")
            || kind.contains("dispatch")
            || kind.contains("merged")
    };
    match &f.reproducer {
        Some(rep) => rep
            .violations
            .iter()
            .any(|v| v.grade == Grade::Must && SILENT.contains(&v.invariant) && shows(&v.kind, &v.observed)),
        None => shows(&f.kind, ""),
    }
}

/// Builds the site; see the module docs.
pub fn build(opts: &Options) -> Result<Built, Error> {
    let runs = read_runs(&opts.reports)?;
    let notes = read_notes(&opts.notes)?;
    let all_bugs: BTreeSet<&str> =
        runs.iter().flat_map(|r| r.report.bugs.iter().map(|b| b.id.as_str())).collect();
    for (id, note) in &notes.bugs {
        if !all_bugs.contains(id.as_str()) {
            return Err(Error::Input(format!(
                "{}: a note for {id}, which no report under {} contains (a fixed bug's note goes with it: \
                 delete or rename the note)",
                note.path.display(),
                opts.reports.display()
            )));
        }
    }
    for (sdk, note) in &notes.sdks {
        for id in note.by_finding.keys().filter(|k| is_bug_id(k)) {
            let found = runs.iter().any(|r| &r.sdk == sdk && r.report.bugs.iter().any(|b| &b.id == id));
            if !found {
                return Err(Error::Input(format!(
                    "{}: a section for {id}, which no report of {sdk} under {} contains (a fixed bug's note \
                     goes with it: delete the section)",
                    note.path.display(),
                    opts.reports.display()
                )));
            }
        }
    }
    let out_err = |p: &Path, e: std::io::Error| Error::Output(format!("cannot write {}: {e}", p.display()));
    for dir in [opts.out.clone(), opts.out.join("sdk"), opts.out.join("badges")] {
        std::fs::create_dir_all(&dir).map_err(|e| out_err(&dir, e))?;
    }
    let out = std::fs::canonicalize(&opts.out).map_err(|e| out_err(&opts.out, e))?;
    let ctx = Ctx {
        out,
        reports: absolute(&opts.reports),
        reproducers: absolute(&opts.reproducers),
        notes_dir: absolute(&opts.notes),
        notes,
    };
    let mut by_sdk: BTreeMap<String, Vec<Run>> = BTreeMap::new();
    let count = runs.len();
    for r in runs {
        by_sdk.entry(r.sdk.clone()).or_default().push(r);
    }
    let mut built = Built { reports: count, sdks: by_sdk.len(), ..Built::default() };
    let mut files: Vec<(PathBuf, String)> = Vec::new();
    let mut rows = Vec::new();
    for (sdk, runs) in &by_sdk {
        let cells: Vec<Cell> = COLUMNS.iter().map(|&(t, p, _)| cell(runs, t, p)).collect();
        let page = sdk_page(&ctx, sdk, runs, &cells, &mut built);
        files.push((ctx.out.join("sdk").join(format!("{}.html", file_stem(sdk))), page));
        for ((tier, policy, key), c) in COLUMNS.iter().zip(&cells) {
            let (value, _, color) = c.word();
            let label = match (tier, policy) {
                (Tier::Endings, Policy::Alone) => "toolcert tier 3 alone".to_string(),
                (Tier::Endings, Policy::Documented) => "toolcert tier 3 documented".to_string(),
                _ => format!("toolcert tier {} {}", tier.number(), tier.key()),
            };
            files
                .push((ctx.out.join("badges").join(badge_name(sdk, key)), badge::svg(&label, &value, color)));
        }
        rows.push((sdk.clone(), versions(runs, false), cells));
    }
    files.push((ctx.out.join("index.html"), front_page(&rows, count)));
    for (path, text) in &files {
        std::fs::write(path, text).map_err(|e| out_err(path, e))?;
    }
    built.files = files.len();
    Ok(built)
}

fn badge_name(sdk: &str, key: &str) -> String {
    format!("{}-{key}.svg", file_stem(sdk))
}

fn absolute(p: &Path) -> PathBuf {
    std::fs::canonicalize(p).unwrap_or_else(|_| {
        std::env::current_dir().map(|d| html::normalize(&d.join(p))).unwrap_or_else(|_| p.into())
    })
}

struct Ctx {
    out: PathBuf,
    reports: PathBuf,
    reproducers: PathBuf,
    notes_dir: PathBuf,
    notes: Notes,
}

fn read_runs(dir: &Path) -> Result<Vec<Run>, Error> {
    let entries = std::fs::read_dir(dir)
        .map_err(|e| Error::Input(format!("cannot read the reports directory {}: {e}", dir.display())))?;
    let mut paths: Vec<PathBuf> = entries
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| p.extension().is_some_and(|x| x == "jsonl"))
        .collect();
    paths.sort();
    if paths.is_empty() {
        return Err(Error::Input(format!(
            "no JSONL reports (*.jsonl) in {}: write them with `toolcert certify --format jsonl --out DIR`",
            dir.display()
        )));
    }
    let mut runs = Vec::new();
    for path in paths {
        let file = std::fs::File::open(&path)
            .map_err(|e| Error::Input(format!("cannot read {}: {e}", path.display())))?;
        let report = toolcert_runner::jsonl::read_report_from(std::io::BufReader::new(file))
            .map_err(|e| Error::Input(format!("{}: {e}", path.display())))?;
        let stem = path.file_stem().map(|s| s.to_string_lossy().into_owned()).unwrap_or_default();
        let mut parts: Vec<&str> = stem.split("--").collect();
        let sdk = parts.remove(0).to_string();
        let declared = report
            .subject_metadata
            .get("implementation")
            .and_then(|i| i.get("policy"))
            .and_then(|p| p.as_str())
            .map(str::to_string);
        let last = parts.last().copied().unwrap_or("");
        let policy_dir = if matches!(last, "as-handed-over" | "documented") {
            parts.pop();
            last.to_string()
        } else {
            declared.clone().unwrap_or_else(|| "as-handed-over".into())
        };
        let policy = match declared.as_deref().unwrap_or(&policy_dir) {
            "documented" => Policy::Documented,
            _ => Policy::Alone,
        };
        let column_dir = if parts.is_empty() {
            report.dialect.map(|d| d.name().to_string()).unwrap_or_else(|| report.level.to_string())
        } else {
            parts.join("--")
        };
        let label = format!("{} / {policy_dir}", column_dir.replace("--", " / "));
        // Absolute, so that links from the pages are relative to where the site is written.
        runs.push(Run { file: absolute(&path), sdk, label, column_dir, policy_dir, policy, report });
    }
    Ok(runs)
}

/// The SDK's versions over its reports: `full` with the implementation's name, else the
/// version alone (the front grid's column).
fn versions(runs: &[Run], full: bool) -> String {
    let alone = |r: &Run| {
        r.implementation().and_then(|m| m.get("version")).and_then(|v| v.as_str()).unwrap_or("").to_string()
    };
    let set: BTreeSet<String> =
        runs.iter().map(|r| if full { r.version() } else { alone(r) }).filter(|v| !v.is_empty()).collect();
    set.into_iter().collect::<Vec<_>>().join("; ")
}

fn cell(runs: &[Run], tier: Tier, policy: Policy) -> Cell {
    let mut c = Cell::default();
    for r in runs.iter().filter(|r| r.policy == policy && !r.report.tiers.is_empty()) {
        c.reports += 1;
        if let Some(t) = r.report.tiers.iter().find(|t| t.tier == tier) {
            c.exercised += t.exercised;
            match t.verdict.as_str() {
                "fail" => c.fail = true,
                "differs" => c.differs = true,
                _ => {}
            }
            if matches!(t.verdict.as_str(), "fail" | "differs") {
                c.bugs.extend(t.bugs.iter().cloned());
            }
        }
    }
    c
}

// ---- notes ----------------------------------------------------------------------------

struct BugNote {
    path: PathBuf,
    text: String,
}

#[derive(Default)]
struct SdkNote {
    path: PathBuf,
    intro: String,
    /// Commentary by finding id (`ACC-TRUNCATION#ef1583bd`) or bug id (`BUG-db9e047c`): a bug
    /// id shares a note among the SDKs that have the bug, a section here is this SDK's alone.
    by_finding: BTreeMap<String, Vec<String>>,
}

#[derive(Default)]
struct Notes {
    bugs: BTreeMap<String, BugNote>,
    sdks: BTreeMap<String, SdkNote>,
}

fn is_bug_id(s: &str) -> bool {
    s.len() == 12
        && s.starts_with("BUG-")
        && s[4..].bytes().all(|b| b.is_ascii_hexdigit() && !b.is_ascii_uppercase())
}

fn is_finding_id(s: &str) -> bool {
    match s.split_once('#') {
        Some((inv, hash)) => {
            !inv.is_empty()
                && inv.bytes().all(|b| b.is_ascii_uppercase() || b.is_ascii_digit() || b == b'-')
                && hash.len() == 8
                && hash.bytes().all(|b| b.is_ascii_hexdigit() && !b.is_ascii_uppercase())
        }
        None => false,
    }
}

fn read_notes(dir: &Path) -> Result<Notes, Error> {
    let mut notes = Notes::default();
    let entries = match std::fs::read_dir(dir) {
        Ok(e) => e,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(notes),
        Err(e) => {
            return Err(Error::Input(format!("cannot read the notes directory {}: {e}", dir.display())))
        }
    };
    let mut paths: Vec<PathBuf> = entries
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| p.extension().is_some_and(|x| x == "md"))
        .collect();
    paths.sort();
    for path in paths {
        let text = std::fs::read_to_string(&path)
            .map_err(|e| Error::Input(format!("cannot read the note {}: {e}", path.display())))?;
        let stem = path.file_stem().map(|s| s.to_string_lossy().into_owned()).unwrap_or_default();
        if stem.starts_with("BUG-") {
            if !is_bug_id(&stem) {
                return Err(Error::Input(format!(
                    "{}: a bug note is named after its bug id, BUG- and 8 lowercase hex digits",
                    path.display()
                )));
            }
            notes.bugs.insert(stem, BugNote { path, text });
        } else {
            notes.sdks.insert(stem, SdkNote { path, ..sdk_note(&text) });
        }
    }
    Ok(notes)
}

/// An SDK note: its intro, and its `## ID, ID` sections by finding id (the form
/// examples/sdks/certification.py reads).
fn sdk_note(text: &str) -> SdkNote {
    let mut note = SdkNote::default();
    let mut intro = Vec::new();
    let mut current: Option<(Vec<String>, Vec<&str>)> = None;
    let flush = |note: &mut SdkNote, cur: Option<(Vec<String>, Vec<&str>)>| {
        if let Some((ids, lines)) = cur {
            let body = lines.join("\n").trim().to_string();
            if !body.is_empty() {
                for id in ids {
                    note.by_finding.entry(id).or_default().push(body.clone());
                }
            }
        }
    };
    for line in text.lines() {
        if let Some(head) = line.strip_prefix("## ") {
            let ids: Vec<String> = head.split(',').map(|s| s.trim().to_string()).collect();
            if !ids.is_empty() && ids.iter().all(|i| is_finding_id(i) || is_bug_id(i)) {
                flush(&mut note, current.take());
                current = Some((ids, Vec::new()));
                continue;
            }
        }
        match &mut current {
            Some((_, lines)) => lines.push(line),
            None => intro.push(line),
        }
    }
    flush(&mut note, current.take());
    note.intro = intro.join("\n").trim().to_string();
    note
}

// ---- the front page -------------------------------------------------------------------

fn front_page(rows: &[(String, String, Vec<Cell>)], reports: usize) -> String {
    let mut b = String::new();
    let _ = write!(
        b,
        "<h1>Certification of streaming tool-call accumulators</h1>\n\
         <p>One row per SDK, one column per tier (docs/SPEC.md, “Tiers”), over {reports} reports. A cell is \
         <b>pass</b>, the number of <b>bugs</b> counted against the tier (linked to the SDK's page), <b>n/a</b> \
         (no case of its reports could break it) or <i>not tested</i> (no report of it for that column). \
         Tier 3 is shown for the SDK alone (<code>as-handed-over</code> reports) and with the check its \
         documentation tells the caller to make (<code>documented</code> reports); the other tiers are the SDK \
         alone. Tier 6 is implementation-defined (RFC 8259 §6): a difference there is counted, never a \
         failure.</p>\n<table>\n<tr><th>SDK</th><th>version</th>"
    );
    for (tier, policy, _) in COLUMNS {
        let _ = write!(b, "<th>{}</th>", esc(&column_title(tier, policy)));
    }
    b.push_str("</tr>\n");
    for (sdk, version, cells) in rows {
        let page = format!("sdk/{}.html", file_stem(sdk));
        let _ =
            write!(b, "<tr><td><a href=\"{}\">{}</a></td><td>{}</td>", esc(&page), esc(sdk), esc(version));
        for ((_, _, key), c) in COLUMNS.iter().zip(cells) {
            let (word, class, _) = c.word();
            if c.fail || c.differs {
                let _ = write!(
                    b,
                    "<td class=\"c {class}\"><a href=\"{}#tier-{key}\">{}</a></td>",
                    esc(&page),
                    esc(&word)
                );
            } else {
                let _ = write!(b, "<td class=\"c {class}\">{}</td>", esc(&word));
            }
        }
        b.push_str("</tr>\n");
    }
    b.push_str(
        "</table>\n<p><small>Built by <code>toolcert site</code> from the JSONL reports; each SDK's page \
                lists its bugs with their reproducers, what was not tested, and its badges.</small></p>",
    );
    html::page("toolcert certification", &b)
}

// ---- an SDK's page --------------------------------------------------------------------

fn sdk_page(ctx: &Ctx, sdk: &str, runs: &[Run], cells: &[Cell], built: &mut Built) -> String {
    let page_dir = ctx.out.join("sdk");
    let mut b = String::new();
    let _ = writeln!(b, "<nav><a href=\"../index.html\">← all SDKs</a></nav>");
    let _ = writeln!(b, "<h1>{}</h1>\n<p>{}</p>", esc(sdk), esc(&versions(runs, true)));
    let note = ctx.notes.sdks.get(sdk);
    if let Some(n) = note.filter(|n| !n.intro.is_empty()) {
        let _ =
            writeln!(b, "<div class=\"note\">{}</div>", html::markdown(&n.intro, &ctx.notes_dir, &page_dir));
    }

    // Tiers.
    let _ = writeln!(b, "<h2 id=\"tiers\">Tiers</h2>\n<table><tr><th>tier</th><th>verdict</th><th>bugs</th><th>badge</th></tr>");
    for ((tier, policy, key), c) in COLUMNS.iter().zip(cells) {
        let (word, class, _) = c.word();
        let anchor = format!(" id=\"tier-{key}\"");
        let bugs: Vec<String> =
            c.bugs.iter().map(|id| format!("<a href=\"#{0}\">{0}</a>", esc(id))).collect();
        let _ = writeln!(
            b,
            "<tr{anchor}><td>{}</td><td class=\"c {class}\">{}</td><td>{}</td><td><img src=\"../badges/{}\" alt=\"{}\"></td></tr>",
            esc(&column_title(*tier, *policy)),
            esc(&word),
            bugs.join(" "),
            esc(&badge_name(sdk, key)),
            esc(&format!("{}: {word}", column_title(*tier, *policy)))
        );
    }
    b.push_str("</table>\n");
    let _ = writeln!(
        b,
        "<details><summary>Badges: the Markdown to embed them (paths relative to the site's root)</summary><pre>{}</pre></details>",
        esc(&COLUMNS
            .iter()
            .map(|(tier, policy, key)| format!(
                "[![{}]({})](sdk/{}.html)",
                column_title(*tier, *policy),
                format_args!("badges/{}", badge_name(sdk, key)),
                file_stem(sdk)
            ))
            .collect::<Vec<_>>()
            .join("\n"))
    );

    // Bugs.
    let views = bug_views(runs);
    built.bugs += views.len();
    let silent = views.iter().filter(|v| v.silent).count();
    let _ = writeln!(
        b,
        "<h2 id=\"bugs\">Bugs</h2>\n<p>{} bug{} in {} report{}, most serious first: {silent} silent wrong \
         dispatch{} (a wrong call handed over as runnable), then loud failures and other must bugs, then should \
         bugs.</p>",
        views.len(),
        if views.len() == 1 { "" } else { "s" },
        runs.len(),
        if runs.len() == 1 { "" } else { "s" },
        if silent == 1 { "" } else { "es" }
    );
    if !views.is_empty() {
        b.push_str("<table><tr><th>bug</th><th>kind</th><th>title</th><th>columns</th></tr>\n");
        for v in &views {
            let _ = writeln!(
                b,
                "<tr><td><a href=\"#{0}\">{0}</a></td><td>{1}</td><td>{2}</td><td class=\"c\">{3}</td></tr>",
                esc(&v.bug.id),
                seriousness(v),
                esc(&v.bug.title),
                v.runs.len()
            );
        }
        b.push_str("</table>\n");
    }
    let mut shown_findings = BTreeSet::new();
    for v in &views {
        bug_section(ctx, &page_dir, runs, v, note, &mut shown_findings, &mut b);
    }
    if let Some(n) = note {
        let stale: Vec<&String> = n.by_finding.keys().filter(|k| !shown_findings.contains(*k)).collect();
        if !stale.is_empty() {
            let _ = writeln!(
                b,
                "<p><small>The SDK's note also comments on findings no report of {} shows now: {}.</small></p>",
                esc(sdk),
                stale.iter().map(|s| format!("<code>{}</code>", esc(s))).collect::<Vec<_>>().join(", ")
            );
        }
    }

    cost_section(runs, &mut b);
    not_tested(runs, cells, &mut b);

    // The reports.
    b.push_str("<h2 id=\"reports\">Reports</h2>\n<table><tr><th>column</th><th>implementation</th><th>cases</th><th>failed</th><th>skipped</th><th>bugs</th></tr>\n");
    for r in runs {
        let link = html::relative(&page_dir, &r.file);
        let _ = writeln!(
            b,
            "<tr><td><a href=\"{}\">{}</a></td><td>{}</td><td class=\"c\">{}</td><td class=\"c\">{}</td><td class=\"c\">{}</td><td class=\"c\">{}</td></tr>",
            esc(&link),
            esc(&r.label),
            esc(&r.version()),
            r.report.cases,
            r.report.failures.len() + r.report.more_failures,
            r.report.skipped.len(),
            r.report.bugs.len()
        );
    }
    b.push_str("</table>\n");
    html::page(&format!("{sdk}: toolcert certification"), &b)
}

fn seriousness(v: &BugView) -> &'static str {
    if v.silent {
        "<span class=\"tag silent-t\">silent wrong dispatch</span>"
    } else if v.bug.grade == Grade::Must {
        "<span class=\"tag loud-t\">must</span>"
    } else {
        "<span class=\"tag\">should</span>"
    }
}

fn bug_views(runs: &[Run]) -> Vec<BugView<'_>> {
    let mut by_id: BTreeMap<&str, BugView> = BTreeMap::new();
    for (i, r) in runs.iter().enumerate() {
        for bug in &r.report.bugs {
            let silent =
                bug.symptoms.iter().any(|s| r.report.findings.iter().any(|f| &f.id == s && dispatches(f)));
            let v = by_id.entry(&bug.id).or_insert_with(|| BugView {
                bug,
                runs: Vec::new(),
                symptoms: Vec::new(),
                silent: false,
            });
            v.runs.push(i);
            v.silent |= silent;
            for s in &bug.symptoms {
                if !v.symptoms.contains(s) {
                    v.symptoms.push(s.clone());
                }
            }
            // The most serious grade over the columns heads the bug.
            if bug.grade == Grade::Must && v.bug.grade != Grade::Must {
                v.bug = bug;
            }
        }
    }
    let mut views: Vec<BugView> = by_id.into_values().collect();
    let cases = |v: &BugView| -> usize {
        v.runs
            .iter()
            .filter_map(|&i| runs[i].report.bugs.iter().find(|b| b.id == v.bug.id))
            .map(|b| b.cases)
            .sum()
    };
    views.sort_by(|a, b| {
        let rank = |v: &BugView| (!v.silent, v.bug.grade != Grade::Must);
        rank(a)
            .cmp(&rank(b))
            .then(b.runs.len().cmp(&a.runs.len()))
            .then(cases(b).cmp(&cases(a)))
            .then(a.bug.id.cmp(&b.bug.id))
    });
    views
}

/// The scenario file a replay command names (`--scenario PATH`, maybe shell-quoted).
fn scenario_arg(replay: &str) -> Option<String> {
    let rest = &replay[replay.find("--scenario ")? + "--scenario ".len()..];
    if let Some(q) = rest.strip_prefix('\'') {
        q.find('\'').map(|end| q[..end].to_string())
    } else {
        rest.split_whitespace().next().map(str::to_string)
    }
}

/// The reproducer files of a bug in a run: the saved scenario and the bytes beside it.
struct Saved {
    scenario: PathBuf,
    /// The streams' bytes, in order (`CASE.sse`, or `CASE.stream-N.sse`).
    bytes: Vec<PathBuf>,
}

fn saved(ctx: &Ctx, run: &Run, bug: &Bug, root: Option<&Finding>) -> Option<Saved> {
    let named = scenario_arg(&bug.replay);
    let stem = match (&named, root.and_then(|f| f.reproducer.as_ref())) {
        (Some(p), _) => Path::new(p).file_stem()?.to_string_lossy().into_owned(),
        (None, Some(rep)) => file_stem(&rep.case),
        (None, None) => return None,
    };
    let mut candidates = Vec::new();
    if let Some(p) = &named {
        if let Some(i) = p.find("corpus/findings/") {
            candidates.push(ctx.reproducers.join(&p[i + "corpus/findings/".len()..]));
        }
    }
    candidates.push(
        ctx.reproducers
            .join(&run.sdk)
            .join(&run.column_dir)
            .join(&run.policy_dir)
            .join("failures")
            .join(format!("{stem}.json")),
    );
    if let Some(p) = &named {
        candidates.push(PathBuf::from(p));
        candidates.push(ctx.reports.join(p));
    }
    let scenario = candidates.into_iter().find(|c| c.is_file())?;
    let dir = scenario.parent()?.to_path_buf();
    let one = dir.join(format!("{stem}.sse"));
    let bytes = if one.is_file() {
        vec![one]
    } else {
        let mut n = 0;
        let mut v = Vec::new();
        while dir.join(format!("{stem}.stream-{n}.sse")).is_file() {
            v.push(dir.join(format!("{stem}.stream-{n}.sse")));
            n += 1;
        }
        if v.is_empty() {
            for ext in ["eventstream", "txt"] {
                let p = dir.join(format!("{stem}.{ext}"));
                if p.is_file() {
                    v.push(p);
                    break;
                }
            }
        }
        v
    };
    Some(Saved { scenario: absolute(&scenario), bytes: bytes.iter().map(|p| absolute(p)).collect() })
}

/// The most bytes of a reproducer shown on a page; the file link has them all.
const SHOWN_BYTES: usize = 48 << 10;
/// The most bytes a script carries inline.
const SCRIPT_BYTES: u64 = 64 << 10;

fn bug_section(
    ctx: &Ctx,
    page_dir: &Path,
    runs: &[Run],
    v: &BugView,
    note: Option<&SdkNote>,
    shown_findings: &mut BTreeSet<String>,
    b: &mut String,
) {
    let bug = v.bug;
    let class = if v.silent {
        "silent"
    } else if bug.grade == Grade::Must {
        "loud"
    } else {
        "should"
    };
    let _ = writeln!(
        b,
        "<div class=\"bug {class}\" id=\"{}\">\n<h3>{}{} {}</h3>",
        esc(&bug.id),
        esc(&bug.id),
        seriousness(v),
        esc(&bug.title)
    );
    let _ = writeln!(
        b,
        "<p>Trigger: {}. Found in {} column{}: {}.</p>",
        esc(&bug.trigger),
        v.runs.len(),
        if v.runs.len() == 1 { "" } else { "s" },
        v.runs
            .iter()
            .map(|&i| format!(
                "<a href=\"{}\">{}</a> ({} case{})",
                esc(&html::relative(page_dir, &runs[i].file)),
                esc(&runs[i].label),
                runs[i].report.bugs.iter().find(|x| x.id == bug.id).map_or(0, |x| x.cases),
                if runs[i].report.bugs.iter().find(|x| x.id == bug.id).map_or(0, |x| x.cases) == 1 {
                    ""
                } else {
                    "s"
                }
            ))
            .collect::<Vec<_>>()
            .join(", ")
    );
    if let Some(n) = ctx.notes.bugs.get(&bug.id) {
        let _ =
            writeln!(b, "<div class=\"note\">{}</div>", html::markdown(&n.text, &ctx.notes_dir, page_dir));
    }
    // Symptoms.
    b.push_str("<p>Symptoms:</p>\n<ul>\n");
    for s in &v.symptoms {
        let f = v.runs.iter().find_map(|&i| runs[i].report.findings.iter().find(|f| &f.id == s));
        match f {
            Some(f) => {
                let _ = write!(
                    b,
                    "<li><code>{}</code>: {} ({} case{})",
                    esc(s),
                    esc(&f.title),
                    f.cases,
                    if f.cases == 1 { "" } else { "s" }
                );
                if let Some(v) =
                    f.reproducer.as_ref().and_then(|r| r.violations.iter().find(|v| f.signature().matches(v)))
                {
                    let _ = write!(
                        b,
                        "<br><small>expected</small> <code>{}</code><br><small>observed</small> <code>{}</code>",
                        esc(&clip(&v.expected, 300)),
                        esc(&clip(&v.observed, 300))
                    );
                }
                b.push_str("</li>\n");
            }
            None => {
                let _ = writeln!(b, "<li><code>{}</code></li>", esc(s));
            }
        }
    }
    b.push_str("</ul>\n");
    if let Some(n) = note {
        let mut seen = BTreeSet::new();
        for s in std::iter::once(&bug.id).chain(&v.symptoms) {
            if let Some(texts) = n.by_finding.get(s) {
                shown_findings.insert(s.clone());
                for t in texts {
                    if seen.insert(t) {
                        let _ = writeln!(
                            b,
                            "<div class=\"note\">{}</div>",
                            html::markdown(t, &ctx.notes_dir, page_dir)
                        );
                    }
                }
            }
        }
    }
    // The smallest reproducer over the columns that saved one.
    let mut best: Option<(usize, u64, Saved, Option<&Finding>, &Bug)> = None;
    for &i in &v.runs {
        let r = &runs[i];
        let Some(here) = r.report.bugs.iter().find(|x| x.id == bug.id) else { continue };
        let root = r.report.findings.iter().find(|f| Some(&f.id) == here.symptoms.first());
        if let Some(s) = saved(ctx, r, here, root) {
            let size: u64 = s.bytes.iter().filter_map(|p| std::fs::metadata(p).ok()).map(|m| m.len()).sum();
            if best.as_ref().is_none_or(|(_, n, ..)| size < *n) {
                best = Some((i, size, s, root, here));
            }
        }
    }
    match best {
        Some((i, size, s, root, here)) => {
            let r = &runs[i];
            let _ = writeln!(
                b,
                "<p>Smallest reproducer ({} bytes fed, from {}): <a href=\"{}\">scenario</a>{}</p>",
                size,
                esc(&r.label),
                esc(&html::relative(page_dir, &s.scenario)),
                s.bytes
                    .iter()
                    .map(|p| format!(
                        ", <a href=\"{}\">{}</a>",
                        esc(&html::relative(page_dir, p)),
                        esc(&p.file_name().unwrap_or_default().to_string_lossy())
                    ))
                    .collect::<String>()
            );
            for p in &s.bytes {
                match read_head(p, SHOWN_BYTES) {
                    Ok((head, total)) => {
                        let more = if total > head.len() as u64 {
                            format!("\n… {} more bytes in the file", total - head.len() as u64)
                        } else {
                            String::new()
                        };
                        let _ = writeln!(
                            b,
                            "<pre class=\"bytes\">{}{}</pre>",
                            html::bytes_pre(&head),
                            esc(&more)
                        );
                    }
                    Err(e) => {
                        let _ = writeln!(
                            b,
                            "<p>Cannot read {}: {}</p>",
                            esc(&p.display().to_string()),
                            esc(&e.to_string())
                        );
                    }
                }
            }
            let _ = writeln!(
                b,
                "<p>Replay (from the repository's root; it fails as stated):</p>\n<pre>{}</pre>",
                esc(&here.replay)
            );
            script_section(r, &s, size, root, b);
        }
        None => {
            let _ = writeln!(
                b,
                "<p>No saved reproducer was found for it under the reproducers directory. Replay:</p>\n<pre>{}</pre>",
                esc(&bug.replay)
            );
        }
    }
    b.push_str("</div>\n");
}

fn script_section(r: &Run, s: &Saved, size: u64, root: Option<&Finding>, b: &mut String) {
    let sentence = |b: &mut String, why: &str| {
        let _ = writeln!(b, "<p><small>{}</small></p>", esc(why));
    };
    if s.bytes.len() != 1 || s.bytes[0].extension().is_none_or(|x| x != "sse") {
        return sentence(
            b,
            "No standalone script: the reproducer is not one SSE stream (several turns, or events-level or binary \
             framing); replay it with the command above.",
        );
    }
    if size > SCRIPT_BYTES {
        return sentence(b, "No standalone script: the reproducer is too large to carry inline; replay it with the command above.");
    }
    let Ok(bytes) = std::fs::read(&s.bytes[0]) else {
        return sentence(b, "No standalone script: the reproducer's bytes could not be read.");
    };
    let tools =
        root.and_then(|f| f.reproducer.as_ref()).map(|rep| tool_names(&rep.scenario)).unwrap_or_default();
    let dialect = r.dialect();
    let rep =
        scripts::Reproducer { subject: &r.report.subject, dialect: &dialect, tools: &tools, bytes: &bytes };
    match scripts::script(&rep) {
        Ok((lang, text)) => {
            let _ = writeln!(
                b,
                "<details><summary>A standalone {} script that shows it without toolcert</summary><pre>{}</pre></details>",
                esc(lang),
                esc(&text)
            );
        }
        Err(why) => sentence(b, &why),
    }
}

fn tool_names(case: &toolcert_scenario::Case) -> Vec<String> {
    let mut names = Vec::new();
    let value = serde_json::to_value(case).unwrap_or_default();
    let mut add = |n: &serde_json::Value| {
        if let Some(n) = n.as_str() {
            if !names.iter().any(|x| x == n) {
                names.push(n.to_string());
            }
        }
    };
    for stream in value["streams"].as_array().into_iter().flatten() {
        for t in stream["tools"].as_array().into_iter().flatten() {
            add(&t["name"]);
        }
        for block in stream["blocks"].as_array().into_iter().flatten() {
            add(&block["call"]["name"]);
        }
    }
    names
}

fn read_head(p: &Path, max: usize) -> std::io::Result<(Vec<u8>, u64)> {
    use std::io::Read as _;
    let f = std::fs::File::open(p)?;
    let total = f.metadata()?.len();
    let mut head = Vec::new();
    f.take(max as u64).read_to_end(&mut head)?;
    Ok((head, total))
}

fn clip(s: &str, max: usize) -> String {
    if s.chars().count() <= max {
        s.to_string()
    } else {
        format!("{}…", s.chars().take(max).collect::<String>())
    }
}

fn cost_section(runs: &[Run], b: &mut String) {
    let priced: Vec<&Run> = runs.iter().filter(|r| r.report.cost.is_some()).collect();
    if priced.is_empty() {
        return;
    }
    b.push_str("<h2 id=\"cost\">Cost</h2>\n<table><tr><th>column</th><th>workload</th><th>series</th><th>size</th><th>ns per byte</th><th>× floor</th><th>growth</th><th>note</th></tr>\n");
    for r in priced {
        let Some(cost) = &r.report.cost else { continue };
        for w in &cost.workloads {
            let word = |g| {
                serde_json::to_value(g).ok().and_then(|v| v.as_str().map(str::to_string)).unwrap_or_default()
            };
            let _ = writeln!(
                b,
                "<tr><td>{}</td><td>{}</td><td>{}</td><td class=\"c\">{}</td><td class=\"c\">{}</td><td class=\"c\">{}</td><td>{}</td><td>{}</td></tr>",
                esc(&r.label),
                esc(&w.name),
                esc(&w.series),
                w.size,
                w.ns_per_byte.map(|x| format!("{x:.1}")).unwrap_or_else(|| "—".into()),
                w.ratio.map(|x| format!("{x:.2}")).unwrap_or_else(|| "—".into()),
                esc(&word(w.growth)),
                esc(w.wrong.as_deref().unwrap_or(""))
            );
        }
    }
    b.push_str("</table>\n");
}

fn not_tested(runs: &[Run], cells: &[Cell], b: &mut String) {
    b.push_str("<h2 id=\"not-tested\">What was not tested</h2>\n<ul>\n");
    for ((tier, policy, _), c) in COLUMNS.iter().zip(cells) {
        let (word, ..) = c.word();
        if word == "n/a" {
            let _ = writeln!(
                b,
                "<li>Tier {}: <b>n/a</b>, no case of its {} report{} could break it.</li>",
                esc(&column_title(*tier, *policy)),
                c.reports,
                if c.reports == 1 { "" } else { "s" }
            );
        } else if word == "not tested" {
            let why = if runs.iter().any(|r| r.policy == *policy) {
                "its reports predate the tiers"
            } else if *policy == Policy::Documented {
                "no report plays the documented caller"
            } else {
                "no report plays the SDK alone (as-handed-over)"
            };
            let _ = writeln!(
                b,
                "<li>Tier {}: <i>not tested</i>: {why}.</li>",
                esc(&column_title(*tier, *policy))
            );
        }
    }
    // Profiles and policies with no report.
    let dialects: BTreeSet<(String, Option<toolcert_scenario::Dialect>)> =
        runs.iter().map(|r| (r.dialect(), r.report.dialect)).collect();
    for (name, dialect) in &dialects {
        let Some(d) = dialect else { continue };
        let have: BTreeSet<String> =
            runs.iter().filter(|r| r.report.dialect == Some(*d)).map(Run::profile).collect();
        let missing: Vec<&str> = toolcert_scenario::PROFILES
            .iter()
            .filter(|p| p.dialect == *d && !have.contains(p.name))
            .map(|p| p.name)
            .collect();
        if !missing.is_empty() {
            let _ = writeln!(
                b,
                "<li>{}: no report under the server profile{} {} (<code>toolcert profiles</code>).</li>",
                esc(name),
                if missing.len() == 1 { "" } else { "s" },
                missing.iter().map(|m| format!("<code>{}</code>", esc(m))).collect::<Vec<_>>().join(", ")
            );
        }
        for (policy, word) in [(Policy::Alone, "as-handed-over"), (Policy::Documented, "documented")] {
            if !runs.iter().any(|r| r.report.dialect == Some(*d) && r.policy == policy) {
                let _ = writeln!(
                    b,
                    "<li>{}: no <code>{word}</code> report (that caller policy was not run).</li>",
                    esc(name)
                );
            }
        }
    }
    let unchecked: Vec<&str> = runs.iter().filter(|r| !r.report.schema).map(|r| r.label.as_str()).collect();
    if !unchecked.is_empty() {
        let _ = writeln!(
            b,
            "<li>ACC-SCHEMA (arguments against the tool's JSON Schema) was not checked in {} of {} reports: they ran \
             without the schema profile (<code>--no-schema</code>), and the cases that exist only to test it were \
             skipped.</li>",
            unchecked.len(),
            runs.len()
        );
    }
    // Generated cases a profile cannot speak.
    for r in runs.iter().filter(|r| r.report.unsupported > 0) {
        let _ = writeln!(
            b,
            "<li>{}: {} generated case{} its setting cannot speak (counted as unsupported, not run).</li>",
            esc(&r.label),
            r.report.unsupported,
            if r.report.unsupported == 1 { "" } else { "s" }
        );
    }
    b.push_str("</ul>\n");
    // Skipped named cases, by reason.
    let mut by_reason: BTreeMap<&str, BTreeMap<&str, Vec<&str>>> = BTreeMap::new();
    for r in runs {
        for s in &r.report.skipped {
            by_reason.entry(&s.reason).or_default().entry(&s.case).or_default().push(&r.label);
        }
    }
    if by_reason.is_empty() {
        b.push_str("<p>No case was skipped.</p>\n");
    } else {
        b.push_str("<p>Cases skipped, with the reason each report gave:</p>\n");
        for (reason, cases) in &by_reason {
            let reports: BTreeSet<&str> = cases.values().flatten().copied().collect();
            let _ = writeln!(
                b,
                "<details><summary>{} case{} in {} report{}: {}</summary><ul>{}</ul></details>",
                cases.len(),
                if cases.len() == 1 { "" } else { "s" },
                reports.len(),
                if reports.len() == 1 { "" } else { "s" },
                esc(reason),
                cases
                    .iter()
                    .map(|(case, cols)| format!(
                        "<li><code>{}</code> ({})</li>",
                        esc(case),
                        esc(&cols.join(", "))
                    ))
                    .collect::<String>()
            );
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_scenario_of_a_replay_is_found_quoted_or_not() {
        assert_eq!(
            scenario_arg(
                "toolcert certify --subject 'exec:x y' --scenario corpus/findings/a/b/c/failures/g_1.json"
            ),
            Some("corpus/findings/a/b/c/failures/g_1.json".into())
        );
        assert_eq!(
            scenario_arg("toolcert certify --scenario '/tmp/a b/x.json' --level bytes"),
            Some("/tmp/a b/x.json".into())
        );
        assert_eq!(scenario_arg("toolcert certify --seed 1 --case gen/1/3"), None);
    }

    #[test]
    fn an_sdk_note_splits_into_intro_and_sections_by_finding() {
        let n = sdk_note("Intro.\n\n## ACC-IDENTITY#0123abcd, WIRE-DONE#89abcdef\n\nMerged.\n\n## Other heading\n\nstill merged\n");
        assert_eq!(n.intro, "Intro.");
        assert_eq!(
            n.by_finding["ACC-IDENTITY#0123abcd"],
            vec!["Merged.\n\n## Other heading\n\nstill merged"]
        );
        assert!(n.by_finding.contains_key("WIRE-DONE#89abcdef"));
    }

    #[test]
    fn bug_ids_are_exact() {
        assert!(is_bug_id("BUG-0123abcd"));
        assert!(!is_bug_id("BUG-0123ABCD"));
        assert!(!is_bug_id("BUG-0123abc"));
        assert!(!is_bug_id("BUG-0123abcde"));
    }
}
