//! The implementation × invariant matrix (as nst/JSONTestSuite's parser × case matrix and
//! Bowtie's summary): one column per implementation and setting, one row per invariant, each
//! cell the must and should status with failure counts; `pruned` hides the rows every
//! implementation passes.
//!
//! Reports of the same implementation in the same setting (shards, other seeds) are merged
//! into one column with [`crate::merge`] first. Reports of one setting judged by different
//! suites (another suite digest) are not comparable: [`Matrix::build_checked`] refuses them
//! unless told to allow them, and the matrix then says so.

use std::fmt::Write;

use toolcert_oracle::Invariant;

use crate::formats::{escape_xml, md_cell};
use crate::merge::{merge, setting_key};
use crate::report::{Report, Status};

/// One cell of the matrix.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Cell {
    /// Passes the must and the should part.
    Pass,
    /// Passes the must part; `n` cases break the should part, in `findings` distinct findings.
    ShouldFails { n: usize, findings: usize },
    /// `must` cases break the must part, `all` cases break it at either grade, in `findings`
    /// distinct findings.
    MustFails { must: usize, all: usize, findings: usize },
    /// Not exercised in that run (`n/a`: no case could break it, e.g. ACC-SCHEMA without the
    /// schema profile, WIRE-* at the events level).
    NotChecked,
}

impl Cell {
    fn of(r: &Report, inv: Invariant) -> Cell {
        // A report older than findings has none to count (`usize::MAX`: not shown).
        let findings =
            if r.legacy { usize::MAX } else { r.findings.iter().filter(|f| f.invariant == inv).count() };
        match r.invariants.iter().find(|i| i.id == inv) {
            None => Cell::NotChecked,
            Some(i) if i.must == Status::Fail => {
                Cell::MustFails { must: i.must_failures.max(1), all: i.failures, findings }
            }
            Some(i) if i.should == Status::Fail => Cell::ShouldFails { n: i.failures, findings },
            Some(i) if i.should == Status::NotExercised => Cell::NotChecked,
            Some(_) => Cell::Pass,
        }
    }

    fn passes(self) -> bool {
        matches!(self, Cell::Pass | Cell::NotChecked)
    }

    fn class(self) -> &'static str {
        match self {
            Cell::Pass => "pass",
            Cell::ShouldFails { .. } => "should",
            Cell::MustFails { .. } => "must",
            Cell::NotChecked => "na",
        }
    }

    fn markdown(self) -> String {
        match self {
            Cell::Pass => "must ✅ · should ✅".into(),
            Cell::ShouldFails { n, findings } => format!("must ✅ · should ❌ {n}{}", found(findings)),
            Cell::MustFails { must, all, findings } => {
                format!("must ❌ {must} · should ❌ {all}{}", found(findings))
            }
            Cell::NotChecked => "➖ n/a".into(),
        }
    }

    fn html(self) -> String {
        match self {
            Cell::Pass => "must ✓<br>should ✓".into(),
            Cell::ShouldFails { n, findings } => {
                format!("must ✓<br>should ✗ <b>{n}</b>{}", found(findings))
            }
            Cell::MustFails { must, all, findings } => {
                format!("must ✗ <b>{must}</b><br>should ✗ <b>{all}</b>{}", found(findings))
            }
            Cell::NotChecked => "n/a".into(),
        }
    }
}

/// ` (1 finding)`, ` (3 findings)`; nothing for a report older than findings.
fn found(n: usize) -> String {
    if n == usize::MAX {
        return String::new();
    }
    format!(" ({})", crate::report::plural(n, "finding", "findings"))
}

/// The columns of a matrix: one merged report per implementation and setting.
#[derive(Clone, Debug)]
pub struct Matrix {
    pub columns: Vec<Report>,
    /// Settings whose columns were judged by different suites, each with its digests (only
    /// with `allow_mixed_suites`; said in the output).
    pub mixed_suites: Vec<String>,
}

impl Matrix {
    /// Groups `reports` by implementation and setting (in order of first appearance) and
    /// merges each group.
    pub fn build(reports: Vec<Report>) -> Result<Matrix, String> {
        let mut groups: Vec<(String, Vec<Report>)> = Vec::new();
        for r in reports {
            let key = setting_key(&r);
            match groups.iter_mut().find(|(k, _)| *k == key) {
                Some((_, g)) => g.push(r),
                None => groups.push((key, vec![r])),
            }
        }
        let columns = groups.into_iter().map(|(_, g)| merge(g)).collect::<Result<_, _>>()?;
        Ok(Matrix { columns, mixed_suites: Vec::new() })
    }

    /// [`Matrix::build`], after checking that the reports of each setting (level, dialect,
    /// quirk profile, grade, schema) were judged by one suite: otherwise an error naming the
    /// setting and its digests, or, with `allow_mixed_suites`, a matrix that says so.
    pub fn build_checked(reports: Vec<Report>, allow_mixed_suites: bool) -> Result<Matrix, String> {
        let mut settings: Vec<(String, Vec<String>)> = Vec::new();
        for r in &reports {
            let setting = format!(
                "{}, grade {}, schema {}",
                r.setting_label(),
                r.grade.as_str(),
                if r.schema { "on" } else { "off" }
            );
            let suite = format!("suite {} ({})", r.suite.version, r.suite.short_digest());
            match settings.iter_mut().find(|(k, _)| *k == setting) {
                Some((_, suites)) if !suites.contains(&suite) => suites.push(suite),
                Some(_) => {}
                None => settings.push((setting, vec![suite])),
            }
        }
        let mixed: Vec<String> = settings
            .into_iter()
            .filter(|(_, suites)| suites.len() > 1)
            .map(|(setting, suites)| format!("{setting}: {}", suites.join(" vs ")))
            .collect();
        if !mixed.is_empty() && !allow_mixed_suites {
            return Err(format!(
                "reports judged by different suites cannot share a matrix ({}); regenerate them with \
                 this toolcert, or pass --allow-mixed-suites to show them side by side anyway",
                mixed.join("; ")
            ));
        }
        let mut m = Matrix::build(reports)?;
        m.mixed_suites = mixed;
        Ok(m)
    }

    /// The invariants shown: all, or (`pruned`) those some implementation breaks.
    pub fn rows(&self, pruned: bool) -> Vec<Invariant> {
        Invariant::ALL
            .iter()
            .copied()
            .filter(|&inv| !pruned || self.columns.iter().any(|r| !Cell::of(r, inv).passes()))
            .collect()
    }

    /// What distinguishes columns that share a subject name.
    fn setting(&self, r: &Report) -> String {
        let mut parts = vec![r.setting_label(), r.grade.as_str().to_string()];
        if !r.schema {
            parts.push("no schema".into());
        }
        parts.join(" · ")
    }

    fn summary(&self, pruned: bool) -> String {
        let rows = self.rows(pruned);
        let hidden = Invariant::ALL.len() - rows.len();
        let n = |k: usize, one: &str, many: &str| crate::report::plural(k, one, many);
        let mut s = format!(
            "{} × {}",
            n(self.columns.len(), "implementation", "implementations"),
            n(rows.len(), "invariant", "invariants")
        );
        if pruned {
            let _ = write!(s, " (pruned: {hidden} invariants every implementation passes are hidden)");
        }
        s
    }

    /// The warning a matrix of mixed suites carries, if it is one.
    fn mixed_warning(&self) -> Option<String> {
        (!self.mixed_suites.is_empty()).then(|| {
            format!(
                "Warning: columns of one setting were judged by different suites and are not comparable \
                 (--allow-mixed-suites): {}.",
                self.mixed_suites.join("; ")
            )
        })
    }

    fn suites(&self) -> String {
        let mut suites: Vec<String> = self
            .columns
            .iter()
            .map(|r| format!("suite {} ({})", r.suite.version, r.suite.short_digest()))
            .collect();
        suites.sort();
        suites.dedup();
        suites.join(", ")
    }

    /// The matrix as a Markdown table.
    pub fn to_markdown(&self, pruned: bool) -> String {
        let mut out = String::from("# toolcert conformance matrix\n\n");
        let _ = writeln!(out, "{}; {}.\n", self.summary(pruned), self.suites());
        if let Some(w) = self.mixed_warning() {
            let _ = writeln!(out, "**{w}**\n");
        }
        out += "| invariant |";
        for r in &self.columns {
            let _ = write!(out, " {} ({}) |", md_cell(&column_name(r)), md_cell(&self.setting(r)));
        }
        out += "\n|---|";
        out += &"---|".repeat(self.columns.len());
        // The tiers lead (docs/SPEC.md, "Tiers"); the per-invariant rows follow (the classic view).
        if self.columns.iter().any(|r| !r.tiers.is_empty()) {
            for tier in crate::tiers::Tier::ALL {
                let _ = write!(out, "\n| **{} {}** |", tier.number(), tier.name());
                for r in &self.columns {
                    let _ = write!(out, " {} |", tier_cell(r, tier));
                }
            }
        }
        out += "\n| **conforms at** |";
        for r in &self.columns {
            let _ = write!(out, " **{}** |", r.conformance);
        }
        out += "\n| cases (failed) |";
        for r in &self.columns {
            let _ = write!(out, " {} ({}) |", r.cases, r.failures.len() + r.more_failures);
        }
        out += "\n| distinct findings |";
        for r in &self.columns {
            if r.legacy {
                out += " — (report predates findings) |";
            } else {
                let _ = write!(out, " {} |", r.findings.len());
            }
        }
        out.push('\n');
        for inv in self.rows(pruned) {
            let _ = write!(out, "| {} |", inv.id());
            for r in &self.columns {
                let _ = write!(out, " {} |", Cell::of(r, inv).markdown());
            }
            out.push('\n');
        }
        for series in self.cost_rows() {
            let _ = write!(out, "| {} |", cost_row_name(series.as_deref()));
            for r in &self.columns {
                let _ = write!(out, " {} |", md_cell(&cost_cell(r, series.as_deref())));
            }
            out.push('\n');
        }
        if !self.cost_rows().is_empty() {
            out += "\nCost rows (`certify --cost`, docs/COST.md): each series' growth verdict and exponent (over all tiers / between the two largest), \
                    and its largest priced tier as a multiple of the floor in the subject's language; \
                    a superlinear cost counts against the verdict.\n";
        }
        out += "\nEach cell: the must and the should part of the invariant, with the number of cases that broke \
                it and the distinct findings among them (✅ passes, ❌ fails, ➖ n/a: no case of that run could break it). A subject conforms at the highest grade \
                whose parts it passes everywhere.\n";
        out
    }

    /// The matrix as a self-contained HTML page (inline CSS, no external assets).
    pub fn to_html(&self, pruned: bool) -> String {
        let mut out = String::from(
            "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n\
             <meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n\
             <title>toolcert conformance matrix</title>\n<style>\n",
        );
        out += STYLE;
        out += "</style>\n</head>\n<body>\n<h1>toolcert conformance matrix</h1>\n";
        let _ = writeln!(
            out,
            "<p class=\"meta\">{}; {}.</p>",
            escape_xml(&self.summary(pruned)),
            escape_xml(&self.suites())
        );
        if let Some(w) = self.mixed_warning() {
            let _ = writeln!(out, "<p class=\"meta\"><strong>{}</strong></p>", escape_xml(&w));
        }
        out += "<ul class=\"legend\">\n\
                <li><span class=\"swatch pass\"></span>passes the must and the should part</li>\n\
                <li><span class=\"swatch should\"></span>passes must, breaks should (per-call accounting)</li>\n\
                <li><span class=\"swatch must\"></span>breaks must (dispatches what it should not, or not exactly)</li>\n\
                <li><span class=\"swatch na\"></span>n/a: no case of that run could break it</li>\n\
                </ul>\n<p class=\"meta\">Numbers count the cases that broke the part.</p>\n";
        out += "<table>\n<thead>\n<tr><th class=\"corner\">invariant</th>";
        for r in &self.columns {
            let _ = write!(
                out,
                "<th scope=\"col\"><span class=\"subject\">{}</span><span class=\"setting\">{}</span></th>",
                escape_xml(&column_name(r)),
                escape_xml(&self.setting(r))
            );
        }
        out += "</tr>\n</thead>\n<tbody>\n<tr class=\"summary\"><th scope=\"row\">conforms at</th>";
        for r in &self.columns {
            let class = match r.conformance.as_str() {
                "should" => "pass",
                "must" => "should",
                _ => "must",
            };
            let _ = write!(out, "<td class=\"{class}\">{}</td>", escape_xml(&r.conformance));
        }
        out += "</tr>\n<tr class=\"summary\"><th scope=\"row\">cases (failed)</th>";
        for r in &self.columns {
            let _ = write!(out, "<td>{} ({})</td>", r.cases, r.failures.len() + r.more_failures);
        }
        out += "</tr>\n";
        for inv in self.rows(pruned) {
            let _ = write!(
                out,
                "<tr><th scope=\"row\" title=\"{}\"><code>{}</code><span class=\"rule\">{}</span></th>",
                escape_xml(inv.why()),
                inv.id(),
                escape_xml(inv.rule())
            );
            for r in &self.columns {
                let cell = Cell::of(r, inv);
                let _ = write!(out, "<td class=\"{}\">{}</td>", cell.class(), cell.html());
            }
            out += "</tr>\n";
        }
        for series in self.cost_rows() {
            let _ = write!(
                out,
                "<tr><th scope=\"row\">{}</th>",
                escape_xml(&cost_row_name(series.as_deref()).replace("**", ""))
            );
            for r in &self.columns {
                let class = match r.cost.as_ref().map(|c| (c, series.as_deref())) {
                    None => "na",
                    Some((c, None)) => growth_class(c.growth),
                    Some((c, Some(s))) => {
                        c.series.iter().find(|x| x.series == s).map_or("na", |x| growth_class(x.growth))
                    }
                };
                let _ = write!(
                    out,
                    "<td class=\"{class}\">{}</td>",
                    escape_xml(&cost_cell(r, series.as_deref()))
                );
            }
            out += "</tr>\n";
        }
        let version = self.columns.first().map(|r| r.version.as_str()).unwrap_or(env!("CARGO_PKG_VERSION"));
        let _ = write!(
            out,
            "</tbody>\n</table>\n<p class=\"meta\">Generated by toolcert {}.</p>\n</body>\n</html>\n",
            escape_xml(version)
        );
        out
    }
}

const STYLE: &str = "body { font-family: system-ui, -apple-system, 'Segoe UI', sans-serif; margin: 2rem; color: #1d2330; background: #fff; }
h1 { font-size: 1.5rem; margin: 0 0 .5rem; }
.meta { color: #555; margin: .25rem 0; }
.legend { list-style: none; padding: 0; display: flex; flex-wrap: wrap; gap: 1.25rem; margin: 1rem 0 .25rem; }
.legend li { display: flex; align-items: center; gap: .4rem; }
.swatch { display: inline-block; width: 1.1rem; height: 1.1rem; border-radius: 3px; border: 1px solid #0003; }
table { border-collapse: collapse; margin-top: 1rem; }
th, td { border: 1px solid #c9ced6; padding: .45rem .6rem; vertical-align: middle; }
thead th { background: #f3f5f8; font-weight: 600; text-align: center; }
th.corner { text-align: left; }
th .subject { display: block; font-family: ui-monospace, SFMono-Regular, Menlo, monospace; }
th .setting { display: block; font-weight: 400; font-size: .8rem; color: #555; }
tbody th { text-align: left; background: #fafbfc; font-weight: 400; min-width: 16rem; max-width: 26rem; }
tbody th code { font-weight: 700; }
tbody th .rule { display: block; font-size: .8rem; color: #555; }
td { text-align: center; font-size: .85rem; min-width: 8rem; }
tr.summary td, tr.summary th { font-weight: 600; }
.pass { background: #cdeccf; }
.should { background: #ffe49a; }
.must { background: #f5b5b0; }
.na { background: #e6e8eb; color: #666; }
";

impl Matrix {
    /// The cost rows: none when no column was priced, else the verdict (`None`) and then
    /// each series any column has, in order of first appearance.
    pub fn cost_rows(&self) -> Vec<Option<String>> {
        let mut rows = Vec::new();
        for c in self.columns.iter().filter_map(|r| r.cost.as_ref()) {
            if rows.is_empty() {
                rows.push(None);
            }
            for s in &c.series {
                if !rows.iter().any(|r| r.as_deref() == Some(s.series.as_str())) {
                    rows.push(Some(s.series.clone()));
                }
            }
        }
        rows
    }
}

fn cost_row_name(series: Option<&str>) -> String {
    match series {
        None => "**cost**".into(),
        Some(s) => format!("cost {s}"),
    }
}

/// A cost cell: the column's verdict or a series' growth, or that it was not priced.
fn cost_cell(r: &Report, series: Option<&str>) -> String {
    match &r.cost {
        None => "not priced".into(),
        Some(c) => {
            let cell = c.cell(series);
            if series.is_none() {
                format!("{cell} ({})", c.setting())
            } else {
                cell
            }
        }
    }
}

fn growth_class(g: crate::cost::Growth) -> &'static str {
    match g {
        crate::cost::Growth::Linear => "pass",
        crate::cost::Growth::Superlinear => "must",
        crate::cost::Growth::Inconclusive => "na",
    }
}

/// A column's name: the implementation the subject said it is (name and version), with the
/// caller policy it declared (docs/PROTOCOL.md), else the subject.
/// A tier's cell: `pass`, `n/a`, `fail: N bugs` (findings for a report older than bugs; `—`
/// for a report older than the tiers).
fn tier_cell(r: &Report, tier: crate::tiers::Tier) -> String {
    match r.tiers.iter().find(|t| t.tier == tier) {
        None => "—".into(),
        Some(t) if t.verdict == "pass" || t.verdict == "n/a" => t.verdict.clone(),
        Some(t) if t.bugs.is_empty() => {
            format!("**{}**: {}", t.verdict, crate::report::plural(t.findings.len(), "finding", "findings"))
        }
        Some(t) => format!("**{}**: {}", t.verdict, crate::report::plural(t.bugs.len(), "bug", "bugs")),
    }
}

fn column_name(r: &Report) -> String {
    let name = r.implementation_label().unwrap_or_else(|| r.subject.clone());
    let policy =
        r.subject_metadata.get("implementation").and_then(|i| i.get("policy")).and_then(|p| p.as_str());
    match policy {
        Some(p) if !p.is_empty() => format!("{name} · {p}"),
        _ => name,
    }
}
