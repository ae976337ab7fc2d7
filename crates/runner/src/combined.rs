//! One verdict over several settings: the main job certifies a subject at every level and
//! dialect it declares, one [`Report`] per setting, and [`Combined`] gives the verdict over
//! all of them, the findings merged by id (a bug found in several settings is one finding,
//! listing them) and a settings × invariants table.
//!
//! Per invariant: `fail` when some setting broke it, `pass` when none did and some setting
//! exercised it, `n/a` when no setting could break it.

use std::collections::BTreeMap;
use std::fmt::Write;

use serde::Serialize;
use toolcert_oracle::{Grade, Invariant};

use crate::findings::Finding;
use crate::report::{plural, status_row, Broken, Failure, InvariantStatus, Report, Status, Verdict};
use crate::tiers::TierStatus;

/// Several settings' reports of one subject, judged as one run.
#[derive(Clone, Debug, Serialize)]
pub struct Combined {
    pub tool: String,
    pub version: String,
    pub subject: String,
    pub grade: Grade,
    pub conforms: bool,
    /// The highest grade passed in every setting: `should`, `must` or `none`.
    pub conformance: String,
    /// Cases run, over all settings.
    pub cases: usize,
    /// One verdict per tier over all settings (docs/SPEC.md, "Tiers"): what every view leads
    /// with.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub tiers: Vec<TierStatus>,
    /// The verdict per invariant over all settings.
    pub invariants: Vec<InvariantStatus>,
    /// Bugs over all settings, merged by id (docs/SPEC.md, "Bugs").
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub bugs: Vec<crate::Bug>,
    /// Distinct findings over all settings, merged by id.
    pub findings: Vec<Finding>,
    /// Each setting's summary.
    pub settings: Vec<Report>,
    /// Every setting's failures kept in full, in setting order (each is also under its
    /// setting; not written out again).
    #[serde(skip)]
    pub failures: Vec<Failure>,
}

impl Combined {
    pub fn new(reports: Vec<Report>) -> Combined {
        let first = reports.first();
        let grade = first.map_or(Grade::Should, |r| r.grade);
        let invariants: Vec<InvariantStatus> = Invariant::ALL
            .iter()
            .map(|&inv| {
                let rows = reports.iter().filter_map(|r| r.status_of(inv));
                let (mut must, mut should, mut exercised) = (0, 0, 0);
                for row in rows {
                    must += row.must_failures;
                    should += row.should_failures;
                    exercised += row.exercised;
                }
                let mut row = status_row(inv, grade, must, should, exercised);
                if row.status == Status::NotExercised {
                    // One setting says why itself (a wire rule at the events level, ...).
                    let own = match reports.as_slice() {
                        [one] => one.status_of(inv).and_then(|r| r.not_exercised.clone()),
                        _ => None,
                    };
                    row.not_exercised =
                        Some(own.unwrap_or_else(|| "no setting of the run could break it".into()));
                }
                row
            })
            .collect();
        let mut by_id: BTreeMap<String, Finding> = BTreeMap::new();
        for r in &reports {
            for f in &r.findings {
                crate::merge::merge_finding(&mut by_id, f);
            }
        }
        let mut findings: Vec<Finding> = by_id.into_values().collect();
        findings.sort_by(|a, b| {
            (a.grade, std::cmp::Reverse(a.cases), &a.id).cmp(&(b.grade, std::cmp::Reverse(b.cases), &b.id))
        });
        let mut bugs: Vec<crate::Bug> = Vec::new();
        for b in reports.iter().flat_map(|r| &r.bugs) {
            match bugs.iter_mut().find(|o| o.id == b.id) {
                Some(o) => {
                    o.cases += b.cases;
                    o.grade = o.grade.min(b.grade);
                    for (mine, theirs) in [(&mut o.symptoms, &b.symptoms), (&mut o.settings, &b.settings)] {
                        for s in theirs {
                            if !mine.contains(s) {
                                mine.push(s.clone());
                            }
                        }
                    }
                }
                None => bugs.push(b.clone()),
            }
        }
        bugs.sort_by(|a, b| {
            (a.grade, std::cmp::Reverse(a.cases), &a.id).cmp(&(b.grade, std::cmp::Reverse(b.cases), &b.id))
        });
        let must_ok = reports.iter().all(|r| r.conformance != "none");
        let should_ok = reports.iter().all(|r| r.conformance == "should");
        let conformance = match (must_ok, should_ok) {
            (true, true) => "should",
            (true, false) => "must",
            _ => "none",
        };
        Combined {
            tool: first.map_or_else(|| "toolcert".into(), |r| r.tool.clone()),
            version: first.map_or_else(String::new, |r| r.version.clone()),
            subject: first.map_or_else(String::new, |r| r.subject.clone()),
            grade,
            conforms: reports.iter().all(|r| r.conforms),
            conformance: conformance.into(),
            cases: reports.iter().map(|r| r.cases).sum(),
            tiers: crate::tiers::merge(reports.iter().map(|r| r.tiers.as_slice())),
            invariants,
            bugs,
            findings,
            failures: reports.iter().flat_map(|r| r.failures.iter().cloned()).collect(),
            settings: reports,
        }
    }

    /// Whether no case ran in any setting: such a run certifies nothing.
    pub fn ran_nothing(&self) -> bool {
        self.settings.iter().all(Report::ran_nothing)
    }

    /// The row of `invariant` over all settings.
    pub fn status_of(&self, invariant: Invariant) -> Option<&InvariantStatus> {
        self.invariants.iter().find(|i| i.id == invariant)
    }

    /// Each case that failed at a grade that counts, with what it broke there: setting by
    /// setting, each in run order (a case failing in several settings is listed in each).
    pub fn failing_cases(&self) -> Vec<(&str, Vec<Broken>)> {
        self.settings.iter().flat_map(Report::failing_cases).collect()
    }

    /// The findings of `invariant` at the required grade with their reproducers, as text,
    /// setting by setting (each headed by its setting when there are several); `None` when
    /// no setting broke it.
    pub fn failing(&self, invariant: Invariant) -> Option<String> {
        if let [one] = self.settings.as_slice() {
            return one.failing(invariant);
        }
        let parts: Vec<String> = self
            .settings
            .iter()
            .filter_map(|r| r.failing(invariant).map(|t| format!("in {}: {t}", r.setting_label())))
            .collect();
        (!parts.is_empty()).then(|| parts.join("\n"))
    }

    /// The worst verdict of the settings: violations, then a crash, then a stale baseline.
    pub fn verdict(&self) -> Verdict {
        let verdicts: Vec<Verdict> = self.settings.iter().map(Report::verdict).collect();
        [Verdict::Violations, Verdict::Crashed, Verdict::StaleBaseline]
            .into_iter()
            .find(|v| verdicts.contains(v))
            .unwrap_or(Verdict::Conforms)
    }

    /// The shards of the run that no report holds (merged shards short of the whole run).
    pub fn missing_shards(&self) -> Vec<usize> {
        let mut missing: Vec<usize> = self.settings.iter().flat_map(crate::merge::missing_shards).collect();
        missing.sort_unstable();
        missing.dedup();
        missing
    }

    /// Findings that count at the required grade.
    pub fn counted_findings(&self) -> impl Iterator<Item = &Finding> {
        self.findings.iter().filter(|f| f.counts(self.grade))
    }

    pub fn verdict_line(&self) -> String {
        let verdict = if self.conforms { "CONFORMS" } else { "DOES NOT CONFORM" };
        let failing: usize = self.settings.iter().map(|r| r.failures.len() + r.more_failures).sum();
        let na = self.invariants.iter().filter(|i| i.status == Status::NotExercised).count();
        let na = if na > 0 { format!("; {na} not exercised (n/a)") } else { String::new() };
        // Shards merged short of the whole run judge only the cases they ran.
        let missing = self.missing_shards();
        let incomplete = if missing.is_empty() {
            String::new()
        } else {
            let list: Vec<String> = missing.iter().map(usize::to_string).collect();
            format!("INCOMPLETE: shards missing ({}); ", list.join(", "))
        };
        format!(
            "{incomplete}{verdict} at the {} grade in {} (passes: {}); {} in {failing} of {}{na}{}",
            self.grade.as_str(),
            plural(self.settings.len(), "setting", "settings"),
            self.conformance,
            plural(self.counted_findings().count(), "distinct finding", "distinct findings"),
            plural(self.cases, "case", "cases"),
            crate::cost::verdict_suffix(&self.settings),
        )
    }

    /// For a terminal: the findings over all settings, the settings × invariants table, the
    /// verdict.
    /// One setting's run reads as that setting's report, as the command line prints it.
    pub fn to_text(&self, detail: usize) -> String {
        if let [one] = self.settings.as_slice() {
            return one.to_text(detail);
        }
        let mut out = format!(
            "toolcert {} certifying {} in {}: {}\n",
            self.version,
            self.subject,
            plural(self.settings.len(), "setting", "settings"),
            plural(self.cases, "case", "cases")
        );
        if !self.tiers.is_empty() {
            let _ = writeln!(out, "tiers over all settings:");
            for t in &self.tiers {
                let _ = writeln!(out, "  {}", t.line());
            }
        }
        let counted: Vec<&Finding> = self.counted_findings().collect();
        if !counted.is_empty() {
            let _ = writeln!(out, "\n{}:", plural(counted.len(), "distinct finding", "distinct findings"));
            for f in &counted {
                let _ = writeln!(
                    out,
                    "  {:<24} {:>6} {}  {}\n  {:<24} in {}",
                    f.id,
                    f.cases,
                    if f.cases == 1 { "case " } else { "cases" },
                    f.title,
                    "",
                    f.settings.join(", ")
                );
            }
            // Each finding in full from the setting with its smallest reproducer.
            for f in counted.iter().take(detail) {
                let home = self
                    .settings
                    .iter()
                    .filter_map(|r| r.findings.iter().find(|g| g.id == f.id).map(|g| (r, g)))
                    .min_by_key(|(_, g)| g.size);
                if let Some((r, g)) = home {
                    let _ = write!(out, "{}", r.finding_text(g));
                    let _ = writeln!(out, "  (the reproducer is from the setting {})", r.setting_label());
                }
            }
        }
        let _ = write!(out, "\n{}", self.table_text());
        for cost in self.settings.iter().filter_map(|r| r.cost.as_ref()) {
            let _ = write!(out, "\n{}", cost.to_text());
        }
        let _ = writeln!(out, "\n{}", self.verdict_line());
        out
    }

    /// Settings as columns, invariants as rows: `pass`, `fail N`, `n/a`.
    pub fn table_text(&self) -> String {
        let mut out = String::new();
        let labels: Vec<String> =
            self.settings.iter().enumerate().map(|(k, _)| format!("s{}", k + 1)).collect();
        for (k, r) in self.settings.iter().enumerate() {
            let _ = writeln!(
                out,
                "{:<4} {} ({}; named: {} run, {} skipped)",
                labels[k],
                r.setting_label(),
                plural(r.cases, "case", "cases"),
                r.named_cases,
                r.named_skipped
            );
        }
        let _ = write!(out, "\n{:<17} {:<8}", "invariant", "overall");
        for l in &labels {
            let _ = write!(out, " {l:<7}");
        }
        out.push('\n');
        for (i, row) in self.invariants.iter().enumerate() {
            let _ = write!(out, "{:<17} {:<8}", row.id.id(), cell(row));
            for r in &self.settings {
                let c = r.invariants.get(i).map_or_else(|| "n/a".to_string(), cell);
                let _ = write!(out, " {c:<7}");
            }
            out.push('\n');
        }
        out
    }

    /// As Markdown: findings, then the settings × invariants table.
    pub fn to_markdown(&self) -> String {
        let mut out = format!(
            "# toolcert: {}\n\n**{}**\n\n",
            crate::formats::md_cell(&self.subject),
            self.verdict_line()
        );
        if !self.tiers.is_empty() {
            out += "| tier | verdict | cases exercised | findings |\n|---|---|---:|---|\n";
            for t in &self.tiers {
                let ids: Vec<String> = t.findings.iter().map(|f| format!("`{f}`")).collect();
                let _ = writeln!(
                    out,
                    "| {} {} | {} | {} | {} |",
                    t.tier.number(),
                    t.name,
                    t.verdict,
                    t.exercised,
                    ids.join(" ")
                );
            }
            out.push('\n');
        }
        let counted: Vec<&Finding> = self.counted_findings().collect();
        if !counted.is_empty() {
            let _ = writeln!(
                out,
                "## {}\n\n| finding | cases | what | settings |\n|---|---:|---|---|",
                plural(counted.len(), "distinct finding", "distinct findings")
            );
            for f in &counted {
                let _ = writeln!(
                    out,
                    "| `{}` | {} | {} | {} |",
                    f.id,
                    f.cases,
                    crate::formats::md_cell(&f.title),
                    crate::formats::md_cell(&f.settings.join(", "))
                );
            }
            out.push('\n');
        }
        out += "| invariant | overall |";
        for r in &self.settings {
            let _ = write!(out, " {} |", crate::formats::md_cell(&r.setting_label()));
        }
        out += "\n|---|---|";
        out += &"---|".repeat(self.settings.len());
        out.push('\n');
        for (i, row) in self.invariants.iter().enumerate() {
            let _ = write!(out, "| {} | {} |", row.id.id(), cell(row));
            for r in &self.settings {
                let _ = write!(out, " {} |", r.invariants.get(i).map_or_else(|| "n/a".to_string(), cell));
            }
            out.push('\n');
        }
        for cost in self.settings.iter().filter_map(|r| r.cost.as_ref()) {
            let _ = write!(out, "\n{}", cost.to_markdown());
        }
        out
    }
}

/// `pass`, `n/a`, `fail 12` (cases that broke it at the required grade).
fn cell(row: &InvariantStatus) -> String {
    match row.status {
        Status::Fail => {
            let n = if row.must == Status::Fail && row.status == row.must {
                row.must_failures
            } else {
                row.failures
            };
            format!("fail {n}")
        }
        s => s.as_str().to_string(),
    }
}
