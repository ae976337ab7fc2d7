//! `toolcert diff OLD NEW`: what a release fixed, broke and kept.
//!
//! Where it sits: after certification, beside [`crate::merge`] and [`crate::matrix`]. It reads
//! two sets of reports back ([`read_side`]: a report file, or a directory of `*.jsonl`
//! reports; [`crate::jsonl`] rebuilds each report's bugs from its records, so a report written
//! before the footer carried bugs has them too), pairs their columns (one subject in one
//! setting and caller policy) and compares, per subject, the bug ids (stable across caller
//! policies, server profiles and SDK versions: [`crate::findings::Bug`]) and, per column, the
//! tier verdicts. It judges nothing itself and runs nothing.
//!
//! Columns pair by subject and setting. A subject is the implementation an adapter names in
//! its handshake (`implementation.name`, the same across the SDK's versions), else the
//! subject's own name; when each side holds one subject, the two are taken as releases of one
//! another whatever their names (`builtin:reference` against `builtin:mutant/NAME`). A setting
//! is the level, dialect and server profile with the caller policy the adapter declares.
//! Columns on one side only are listed and not compared.

use std::collections::BTreeMap;
use std::fmt::Write as _;
use std::path::Path;

use serde::Serialize;
use toolcert_oracle::{Grade, Invariant};

use crate::findings::{group_bugs, trigger_shape, Bug, Signature};
use crate::report::Report;
use crate::tiers::Tier;

/// One report and the file it came from.
#[derive(Clone, Debug)]
pub struct Source {
    pub file: String,
    pub report: Report,
}

/// Every report at `path`: the reports of one file (a JSONL file may hold one stream per
/// setting, a JSON file one summary or one per setting), or of every `*.jsonl` file of a
/// directory (not its subdirectories: `--out DIR` keeps scenarios, not reports, under
/// `failures/`). The error names the file and what is wrong with it.
pub fn read_side(path: &Path) -> Result<Vec<Source>, String> {
    let meta = std::fs::metadata(path).map_err(|e| format!("cannot read {}: {e}", path.display()))?;
    let files: Vec<std::path::PathBuf> = if meta.is_dir() {
        let entries = std::fs::read_dir(path)
            .map_err(|e| format!("cannot read the directory {}: {e}", path.display()))?;
        let mut files: Vec<_> = entries
            .filter_map(|e| e.ok().map(|e| e.path()))
            .filter(|p| p.is_file() && p.extension().is_some_and(|x| x == "jsonl"))
            .collect();
        files.sort();
        if files.is_empty() {
            return Err(format!(
                "no JSONL reports (*.jsonl) in the directory {}: write them with `toolcert certify --format jsonl`",
                path.display()
            ));
        }
        files
    } else {
        vec![path.to_path_buf()]
    };
    let mut out = Vec::new();
    for file in files {
        let shown = file.display().to_string();
        let f = std::fs::File::open(&file).map_err(|e| format!("cannot read {shown}: {e}"))?;
        let reports = crate::jsonl::read_reports_from(std::io::BufReader::with_capacity(1 << 16, f))
            .map_err(|e| format!("{shown}: {e}"))?;
        if reports.is_empty() {
            return Err(format!("{shown}: holds no report"));
        }
        out.extend(reports.into_iter().map(|report| Source { file: shown.clone(), report }));
    }
    Ok(out)
}

/// What changed from OLD to NEW.
#[derive(Clone, Debug, Serialize)]
pub struct Diff {
    /// The paths as given.
    pub old: String,
    pub new: String,
    /// One entry per subject with at least one column on both sides.
    pub subjects: Vec<SubjectDiff>,
    /// Columns (`subject: setting`) only OLD has: not compared.
    pub only_old: Vec<String>,
    /// Columns only NEW has: not compared, their bugs not counted as new.
    pub only_new: Vec<String>,
}

/// One subject's changes over the columns both sides have.
#[derive(Clone, Debug, Serialize)]
pub struct SubjectDiff {
    /// The implementation's name (`OLD -> NEW` when the two sides name different subjects).
    pub subject: String,
    /// The versions the adapters declared, if they did.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub old_version: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub new_version: Option<String>,
    pub columns: Vec<ColumnDiff>,
    /// Bugs NEW has in a compared column and OLD has in none.
    pub new: Vec<BugChange>,
    /// Bugs OLD has in a compared column and NEW has in none.
    pub fixed: Vec<BugChange>,
    /// Bugs both have.
    pub kept: Vec<KeptBug>,
}

/// One column compared.
#[derive(Clone, Debug, Serialize)]
pub struct ColumnDiff {
    /// `bytes (openai-chat) / documented`.
    pub setting: String,
    pub old_file: String,
    pub new_file: String,
    pub old_cases: usize,
    pub new_cases: usize,
    pub old_suite: String,
    pub new_suite: String,
    /// Tiers whose verdict differs.
    pub tiers: Vec<TierChange>,
    /// What makes the comparison weaker than it looks (another suite, fewer cases, another
    /// grade or schema profile, a report older than the findings).
    pub warnings: Vec<String>,
}

/// A tier whose verdict changed in one column.
#[derive(Clone, Debug, Serialize)]
pub struct TierChange {
    pub tier: Tier,
    pub name: String,
    /// `pass`, `fail`, `n/a`, `differs`; `none` when that report has no tier verdicts
    /// (written before the tiers).
    pub old: String,
    pub new: String,
}

impl TierChange {
    /// `tier 1 standard streams: fail -> pass`.
    pub fn line(&self) -> String {
        format!("tier {} {}: {} -> {}", self.tier.number(), self.name, self.old, self.new)
    }
}

/// A bug one side has and the other has not, as the side that has it reports it.
#[derive(Clone, Debug, Serialize)]
pub struct BugChange {
    pub id: String,
    pub invariant: Invariant,
    pub grade: Grade,
    /// The root symptom's title: `ACC-TEXT (must): the text differs from the text blocks`.
    pub title: String,
    /// The shape of its smallest trigger.
    pub trigger: String,
    /// Its symptoms' finding ids, the root first.
    pub symptoms: Vec<String>,
    /// The compared columns it appears in.
    pub columns: Vec<String>,
    /// The replay command of its root's smallest reproducer, as the report gives it (in the
    /// first of `columns`).
    pub replay: String,
    /// For a new bug: it counts at the grade its NEW report requires (what the exit code
    /// says). For a fixed bug: whether it counted at OLD's.
    pub counts: bool,
}

/// A bug both sides have, and where.
#[derive(Clone, Debug, Serialize)]
pub struct KeptBug {
    pub id: String,
    pub title: String,
    pub old_columns: Vec<String>,
    pub new_columns: Vec<String>,
}

/// Who a report is of: the implementation the adapter names, else the subject.
fn identity(r: &Report) -> String {
    implementation(r, "name").unwrap_or_else(|| r.subject.clone())
}

fn implementation(r: &Report, key: &str) -> Option<String> {
    let v = r.subject_metadata.get("implementation")?.get(key)?;
    v.as_str().filter(|s| !s.is_empty()).map(str::to_string)
}

/// The column's setting: the level, dialect and profile, and the caller policy if declared.
fn setting(r: &Report) -> String {
    match implementation(r, "policy") {
        Some(p) => format!("{} / {p}", r.setting_label()),
        None => r.setting_label(),
    }
}

/// The report's bugs. A JSON summary written before bugs has findings but no records to group
/// them by: each finding is then grouped only by what it carries (its reproducer).
fn bugs_of(r: &Report) -> Vec<Bug> {
    if !r.bugs.is_empty() || r.findings.is_empty() || r.has_records() {
        return r.bugs.clone();
    }
    group_bugs(
        &r.findings,
        |_, _| 0,
        |f| f.reproducer.as_ref().map(|x| Signature::all(&x.violations)).unwrap_or_default(),
        |f| f.reproducer.as_ref().map(|x| trigger_shape(&x.scenario)),
    )
}

/// One side's reports by (subject, setting), several reports of one column (shards, seeds)
/// merged into one.
fn columns(side: Vec<Source>, which: &str) -> Result<BTreeMap<(String, String), Source>, String> {
    let mut groups: BTreeMap<(String, String), Vec<Source>> = BTreeMap::new();
    for s in side {
        groups.entry((identity(&s.report), setting(&s.report))).or_default().push(s);
    }
    let mut out = BTreeMap::new();
    for (key, mut group) in groups {
        let source = if group.len() == 1 {
            group.pop().expect("one source")
        } else {
            let mut files: Vec<String> = group.iter().map(|s| s.file.clone()).collect();
            files.dedup();
            let report = crate::merge::merge(group.into_iter().map(|s| s.report).collect())
                .map_err(|e| format!("{which}: {} reports of {}: {}: {e}", files.len(), key.0, key.1))?;
            Source { file: files.join(", "), report }
        };
        out.insert(key, source);
    }
    Ok(out)
}

impl Diff {
    /// Compares `old` with `new` (`old_path` and `new_path` name them in the output). Fails
    /// when no column is on both sides: there is nothing to compare.
    pub fn build(old_path: &str, old: Vec<Source>, new_path: &str, new: Vec<Source>) -> Result<Diff, String> {
        let old = columns(old, "OLD")?;
        let new = columns(new, "NEW")?;
        let one = |m: &BTreeMap<(String, String), Source>| {
            let mut ids: Vec<&String> = m.keys().map(|(s, _)| s).collect();
            ids.dedup();
            (ids.len() == 1).then(|| ids[0].clone())
        };
        // One subject a side: the two are releases of one another, whatever their names.
        let renamed = match (one(&old), one(&new)) {
            (Some(a), Some(b)) if a != b => Some((a, b)),
            _ => None,
        };
        let subject_of = |id: &str| match &renamed {
            Some((a, b)) => format!("{a} -> {b}"),
            None => id.to_string(),
        };
        let rekey = |m: BTreeMap<(String, String), Source>| -> BTreeMap<(String, String), Source> {
            m.into_iter().map(|((id, set), s)| ((subject_of(&id), set), s)).collect()
        };
        let (old, mut new) = (rekey(old), rekey(new));
        let mut by_subject: BTreeMap<String, Vec<(String, Source, Source)>> = BTreeMap::new();
        let mut only_old = Vec::new();
        for ((subject, set), o) in old {
            match new.remove(&(subject.clone(), set.clone())) {
                Some(n) => by_subject.entry(subject).or_default().push((set, o, n)),
                None => only_old.push(format!("{subject}: {set}")),
            }
        }
        let only_new: Vec<String> =
            new.into_keys().map(|(subject, set)| format!("{subject}: {set}")).collect();
        if by_subject.is_empty() {
            return Err(format!(
                "OLD ({old_path}) and NEW ({new_path}) have no subject and setting in common, so nothing \
                 was compared; OLD has: {}; NEW has: {}",
                or_none(&only_old),
                or_none(&only_new)
            ));
        }
        let subjects = by_subject.into_iter().map(|(subject, cols)| subject_diff(subject, cols)).collect();
        Ok(Diff { old: old_path.into(), new: new_path.into(), subjects, only_old, only_new })
    }

    /// New bugs that count at the grade their NEW report requires.
    pub fn new_bugs(&self) -> usize {
        self.subjects.iter().map(|s| s.new.iter().filter(|b| b.counts).count()).sum()
    }

    /// The exit code: 0 no new bug, 1 a new bug.
    pub fn code(&self) -> u8 {
        u8::from(self.new_bugs() > 0)
    }

    /// Every column's warnings, prefixed with the subject and column.
    pub fn warnings(&self) -> Vec<String> {
        let mut out = Vec::new();
        for s in &self.subjects {
            for c in &s.columns {
                out.extend(c.warnings.iter().map(|w| format!("{}: {}: {w}", s.subject, c.setting)));
            }
        }
        out
    }

    /// For a terminal.
    pub fn to_text(&self) -> String {
        let mut out = String::new();
        let _ = writeln!(out, "toolcert diff {} -> {}", self.old, self.new);
        for w in self.warnings() {
            let _ = writeln!(out, "warning: {w}");
        }
        for s in &self.subjects {
            let _ = writeln!(out, "\n{}", s.heading());
            let _ = writeln!(
                out,
                "  compared: {}",
                s.columns.iter().map(|c| c.setting.as_str()).collect::<Vec<_>>().join("; ")
            );
            for (label, bugs) in [("new", &s.new), ("fixed", &s.fixed)] {
                let _ = writeln!(
                    out,
                    "  {label} ({}):{}",
                    bugs.len(),
                    if bugs.is_empty() { " none" } else { "" }
                );
                for b in bugs {
                    let note =
                        if label == "new" && !b.counts { "  [not counted at NEW's grade]" } else { "" };
                    let _ = writeln!(out, "    {}  {}{note}", b.id, b.title);
                    let _ =
                        writeln!(out, "      trigger: {}; symptoms: {}", b.trigger, b.symptoms.join(", "));
                    let _ = writeln!(out, "      in: {}", b.columns.join("; "));
                    let _ = writeln!(out, "      replay: {}", b.replay);
                }
            }
            let _ =
                writeln!(out, "  kept ({}):{}", s.kept.len(), if s.kept.is_empty() { " none" } else { "" });
            for k in &s.kept {
                let _ = writeln!(out, "    {}  {}{}", k.id, k.title, k.moved());
            }
            let changes: Vec<(&ColumnDiff, &TierChange)> =
                s.columns.iter().flat_map(|c| c.tiers.iter().map(move |t| (c, t))).collect();
            let _ = writeln!(
                out,
                "  tier verdicts changed ({}):{}",
                changes.len(),
                if changes.is_empty() { " none" } else { "" }
            );
            for (c, t) in changes {
                let _ = writeln!(out, "    {}: {}", c.setting, t.line());
            }
        }
        for (label, cols) in [("only in OLD", &self.only_old), ("only in NEW", &self.only_new)] {
            if !cols.is_empty() {
                let _ = writeln!(out, "\nnot compared, {label} ({}):", cols.len());
                for c in cols {
                    let _ = writeln!(out, "  {c}");
                }
            }
        }
        let fixed: usize = self.subjects.iter().map(|s| s.fixed.len()).sum();
        let kept: usize = self.subjects.iter().map(|s| s.kept.len()).sum();
        let _ = writeln!(
            out,
            "\n{}, {} fixed, {} kept",
            crate::report::plural(self.new_bugs(), "new bug", "new bugs"),
            fixed,
            kept
        );
        out
    }

    /// A release note section to paste: per subject, new and fixed bugs with their replay
    /// commands, the kept ones by id, the tier verdicts that changed.
    pub fn to_markdown(&self) -> String {
        let mut out = String::new();
        for s in &self.subjects {
            let _ = writeln!(out, "## {}\n", md(&s.heading()));
            let warnings: Vec<String> = s
                .columns
                .iter()
                .flat_map(|c| c.warnings.iter().map(move |w| format!("{}: {w}", c.setting)))
                .collect();
            for w in &warnings {
                let _ = writeln!(out, "> **Warning**: {}\n", md(w));
            }
            let cols: Vec<String> = s.columns.iter().map(|c| format!("`{}`", c.setting)).collect();
            let _ = writeln!(out, "Compared: {}.\n", cols.join(", "));
            for (label, bugs) in [("New bugs", &s.new), ("Fixed bugs", &s.fixed)] {
                let _ = writeln!(out, "### {label} ({})\n", bugs.len());
                if bugs.is_empty() {
                    let _ = writeln!(out, "None.\n");
                    continue;
                }
                for b in bugs {
                    let cols: Vec<String> = b.columns.iter().map(|c| format!("`{c}`")).collect();
                    let _ = writeln!(out, "- **{}** {} (in {})", b.id, md(&b.title), cols.join(", "));
                    let _ = writeln!(out, "  - replay: `{}`", b.replay.replace('`', "'"));
                }
                out.push('\n');
            }
            if !s.kept.is_empty() {
                let ids: Vec<String> = s.kept.iter().map(|k| format!("`{}`", k.id)).collect();
                let _ = writeln!(out, "### Kept ({})\n\n{}\n", s.kept.len(), ids.join(", "));
            }
            let changes: Vec<(&ColumnDiff, &TierChange)> =
                s.columns.iter().flat_map(|c| c.tiers.iter().map(move |t| (c, t))).collect();
            if !changes.is_empty() {
                let _ = writeln!(
                    out,
                    "### Tier verdicts\n\n| setting | tier | before | after |\n|---|---|---|---|"
                );
                for (c, t) in changes {
                    let _ = writeln!(
                        out,
                        "| {} | {} {} | {} | {} |",
                        md(&c.setting),
                        t.tier.number(),
                        t.name,
                        t.old,
                        t.new
                    );
                }
                out.push('\n');
            }
        }
        for (label, cols) in
            [("only in the old reports", &self.only_old), ("only in the new reports", &self.only_new)]
        {
            if !cols.is_empty() {
                let list: Vec<String> = cols.iter().map(|c| format!("`{c}`")).collect();
                let _ = writeln!(out, "Not compared, {label}: {}.\n", list.join(", "));
            }
        }
        out
    }
}

fn or_none(list: &[String]) -> String {
    if list.is_empty() {
        "nothing".into()
    } else {
        list.join(", ")
    }
}

/// Markdown text with the characters that would start markup escaped (`>` only quotes at the
/// start of a line, where none of these texts puts it, so `OLD -> NEW` stays as written).
fn md(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    for c in s.chars() {
        if matches!(c, '|' | '*' | '_' | '`' | '<' | '[' | ']' | '\\') {
            out.push('\\');
        }
        out.push(c);
    }
    out
}

impl SubjectDiff {
    /// `openai (Node) responses.stream 6.30.1 -> 7.59.0`.
    fn heading(&self) -> String {
        match (&self.old_version, &self.new_version) {
            (Some(a), Some(b)) if a != b => format!("{} {a} -> {b}", self.subject),
            (Some(a), Some(_)) => format!("{} {a} (both)", self.subject),
            (a, b) => {
                let v = |v: &Option<String>| v.clone().unwrap_or_else(|| "?".into());
                if a.is_none() && b.is_none() {
                    self.subject.clone()
                } else {
                    format!("{} {} -> {}", self.subject, v(a), v(b))
                }
            }
        }
    }
}

impl KeptBug {
    /// Where it moved: `; now also in X; no longer in Y`, or nothing.
    fn moved(&self) -> String {
        let gained: Vec<&str> =
            self.new_columns.iter().filter(|c| !self.old_columns.contains(c)).map(String::as_str).collect();
        let lost: Vec<&str> =
            self.old_columns.iter().filter(|c| !self.new_columns.contains(c)).map(String::as_str).collect();
        let mut out = String::new();
        if !gained.is_empty() {
            let _ = write!(out, "; now also in {}", gained.join(", "));
        }
        if !lost.is_empty() {
            let _ = write!(out, "; no longer in {}", lost.join(", "));
        }
        out
    }
}

/// Each side's bugs over the compared columns: the bug as its first column reports it, the
/// columns it is in, whether it counts at some column's grade.
type Seen = BTreeMap<String, (Bug, Vec<String>, bool)>;

fn subject_diff(subject: String, cols: Vec<(String, Source, Source)>) -> SubjectDiff {
    let mut old_bugs: Seen = BTreeMap::new();
    let mut new_bugs: Seen = BTreeMap::new();
    let mut columns = Vec::new();
    let version = |s: &Source| implementation(&s.report, "version");
    let old_version = cols.iter().find_map(|(_, o, _)| version(o));
    let new_version = cols.iter().find_map(|(_, _, n)| version(n));
    for (set, o, n) in &cols {
        for (seen, r) in [(&mut old_bugs, &o.report), (&mut new_bugs, &n.report)] {
            for b in bugs_of(r) {
                let counts = b.counts(r.grade);
                let e = seen.entry(b.id.clone()).or_insert_with(|| (b, Vec::new(), false));
                e.1.push(set.clone());
                e.2 |= counts;
            }
        }
        columns.push(column_diff(set, o, n));
    }
    let change = |(b, cols, counts): &(Bug, Vec<String>, bool)| BugChange {
        id: b.id.clone(),
        invariant: b.invariant,
        grade: b.grade,
        title: b.title.clone(),
        trigger: b.trigger.clone(),
        symptoms: b.symptoms.clone(),
        columns: cols.clone(),
        replay: b.replay.clone(),
        counts: *counts,
    };
    // Most serious first, as reports list bugs.
    let order = |v: &mut Vec<BugChange>| v.sort_by(|a, b| (a.grade, &a.id).cmp(&(b.grade, &b.id)));
    let mut new: Vec<BugChange> =
        new_bugs.iter().filter(|(id, _)| !old_bugs.contains_key(*id)).map(|(_, e)| change(e)).collect();
    let mut fixed: Vec<BugChange> =
        old_bugs.iter().filter(|(id, _)| !new_bugs.contains_key(*id)).map(|(_, e)| change(e)).collect();
    order(&mut new);
    order(&mut fixed);
    let kept = new_bugs
        .iter()
        .filter_map(|(id, (b, cols, _))| {
            let (_, old_cols, _) = old_bugs.get(id)?;
            Some(KeptBug {
                id: id.clone(),
                title: b.title.clone(),
                old_columns: old_cols.clone(),
                new_columns: cols.clone(),
            })
        })
        .collect();
    SubjectDiff { subject, old_version, new_version, columns, new, fixed, kept }
}

fn column_diff(set: &str, o: &Source, n: &Source) -> ColumnDiff {
    let (a, b) = (&o.report, &n.report);
    let mut warnings = Vec::new();
    if a.suite != b.suite {
        warnings.push(format!(
            "judged by different suites (OLD {} {}, NEW {} {}): a bug absent from NEW may not have been run",
            a.suite.version,
            short(&a.suite.digest),
            b.suite.version,
            short(&b.suite.digest)
        ));
    }
    if b.cases < a.cases {
        warnings.push(format!(
            "NEW ran fewer cases ({}) than OLD ({}): a bug absent from NEW may not have been run",
            b.cases, a.cases
        ));
    }
    if a.grade != b.grade || a.schema != b.schema {
        let how = |r: &Report| {
            format!("grade {}, schema {}", r.grade.as_str(), if r.schema { "on" } else { "off" })
        };
        warnings.push(format!("run differently (OLD {}, NEW {})", how(a), how(b)));
    }
    for (side, r) in [("OLD", a), ("NEW", b)] {
        if r.legacy {
            warnings.push(format!(
                "the {side} report predates findings: it names no bug, so none can be compared"
            ));
        }
    }
    let verdict = |r: &Report, t: Tier| -> String {
        if r.tiers.is_empty() {
            return "none".into();
        }
        r.tiers.iter().find(|s| s.tier == t).map_or_else(|| "n/a".into(), |s| s.verdict.clone())
    };
    let tiers = Tier::ALL
        .iter()
        .filter_map(|&t| {
            let (va, vb) = (verdict(a, t), verdict(b, t));
            (va != vb).then(|| TierChange { tier: t, name: t.name().into(), old: va, new: vb })
        })
        .collect();
    ColumnDiff {
        setting: set.to_string(),
        old_file: o.file.clone(),
        new_file: n.file.clone(),
        old_cases: a.cases,
        new_cases: b.cases,
        old_suite: a.suite.digest.clone(),
        new_suite: b.suite.digest.clone(),
        tiers,
        warnings,
    }
}

/// `sha256:3e210243da62…`: enough of a digest to tell two apart.
fn short(digest: &str) -> String {
    match digest.char_indices().nth(19) {
        Some((at, _)) => format!("{}…", &digest[..at]),
        None => digest.to_string(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A report of `name` at `version` (a subprocess adapter's handshake) in the OpenAI Chat
    /// bytes setting of `profile`, with `bugs` (`(id, grade)`) and no case records.
    fn report(
        command: &str,
        name: &str,
        version: &str,
        profile: Option<&str>,
        grade: &str,
        bugs: &[(&str, &str)],
    ) -> Source {
        let bugs: Vec<serde_json::Value> = bugs
            .iter()
            .map(|(id, g)| {
                serde_json::json!({"id": id, "title": format!("ACC-TEXT ({g}): {id}"), "grade": g,
                    "invariant": "ACC-TEXT", "cases": 1, "trigger": "1 call; complete",
                    "symptoms": [format!("ACC-TEXT#{id}")], "replay": format!("replay {id} {version}")})
            })
            .collect();
        let mut v = serde_json::json!({
            "tool": "toolcert", "version": "0.1.0", "subject": command,
            "subject_metadata": {"implementation": {"name": name, "version": version, "policy": "as-handed-over"}},
            "level": "bytes", "dialect": "openai-chat", "seed": 1, "grade": grade, "conforms": bugs.is_empty(),
            "conformance": "none", "cases": 0, "named_cases": 0, "generated_cases": 0, "skipped": [],
            "invariants": [], "findings": [], "failures": [], "more_failures": 0, "unsupported": 0, "bugs": bugs,
        });
        if let Some(p) = profile {
            v["profile"] = p.into();
        }
        let report: Report = serde_json::from_value(v).expect("a report");
        Source { file: format!("{command}.json"), report }
    }

    #[test]
    fn columns_pair_by_implementation_across_versions_and_one_sided_columns_are_not_compared() {
        let old = vec![
            report("exec:chat-6", "chat", "6", None, "should", &[("BUG-1", "must"), ("BUG-2", "must")]),
            report("exec:responses-6", "responses", "6", None, "should", &[("BUG-3", "must")]),
        ];
        let new = vec![
            // Another command for each: the implementation's name pairs them.
            report("exec:v7/chat", "chat", "7", None, "should", &[("BUG-2", "must"), ("BUG-3", "must")]),
            report("exec:v7/responses", "responses", "7", None, "should", &[("BUG-3", "must")]),
            // A profile OLD never ran: its bug is not new.
            report("exec:v7/chat", "chat", "7", Some("vllm"), "should", &[("BUG-9", "must")]),
        ];
        let d = Diff::build("old", old, "new", new).expect("comparable");
        let names: Vec<&str> = d.subjects.iter().map(|s| s.subject.as_str()).collect();
        assert_eq!(names, ["chat", "responses"]);
        let chat = &d.subjects[0];
        let ids = |v: &[BugChange]| v.iter().map(|b| b.id.clone()).collect::<Vec<_>>();
        // BUG-3 was the responses subject's, not chat's: new in chat.
        assert_eq!(ids(&chat.new), ["BUG-3"]);
        assert_eq!(ids(&chat.fixed), ["BUG-1"]);
        assert_eq!(chat.kept.iter().map(|k| k.id.as_str()).collect::<Vec<_>>(), ["BUG-2"]);
        assert_eq!(chat.heading(), "chat 6 -> 7");
        // A fixed bug is shown as OLD gives it, a new one as NEW does.
        assert_eq!(chat.fixed[0].replay, "replay BUG-1 6");
        assert_eq!(chat.new[0].replay, "replay BUG-3 7");
        let responses = &d.subjects[1];
        assert!(responses.new.is_empty() && responses.fixed.is_empty() && responses.kept.len() == 1);
        assert_eq!(d.only_new.len(), 1, "{:?}", d.only_new);
        assert!(d.only_new[0].starts_with("chat: ") && d.only_new[0].contains("vllm"), "{:?}", d.only_new);
        assert!(d.only_old.is_empty());
        assert_eq!(d.new_bugs(), 1);
        assert_eq!(d.code(), 1);
    }

    #[test]
    fn a_new_should_bug_under_a_must_grade_report_is_listed_but_not_counted() {
        let old = vec![report("exec:a", "sdk", "1", None, "must", &[])];
        let new = vec![report("exec:b", "sdk", "2", None, "must", &[("BUG-5", "should")])];
        let d = Diff::build("old", old, "new", new).expect("comparable");
        assert_eq!(d.subjects[0].new.len(), 1);
        assert!(!d.subjects[0].new[0].counts);
        assert_eq!(d.code(), 0);
        assert!(d.to_text().contains("[not counted at NEW's grade]"));
    }

    #[test]
    fn kept_bugs_say_which_columns_they_left_and_entered() {
        let k = KeptBug {
            id: "BUG-1".into(),
            title: String::new(),
            old_columns: vec!["a".into(), "b".into()],
            new_columns: vec!["b".into(), "c".into()],
        };
        assert_eq!(k.moved(), "; now also in c; no longer in a");
    }
}
