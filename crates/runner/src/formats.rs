//! The report for CI and for people: JUnit XML and Markdown.
//!
//! **JUnit: one `<testsuite>` per invariant, one `<testcase>` per grade** (`must`, `should`),
//! as h2spec groups its cases by the section of the spec they test. The test names are then
//! the same in every run, whatever the seed and the number of generated cases, so a CI
//! server's history follows each rule across runs; the failing cases are listed inside the
//! `<failure>`, each with its violations and the command that replays it, and their
//! transcripts in `<system-out>`. A should testcase that fails when the run requires only the
//! must grade is `<skipped>`; so are testcases whose failures the baseline lists all of. Stale
//! baseline entries are failing testcases of a `baseline` testsuite; named cases that were not
//! run are skipped testcases of a `cases not run` testsuite.

use std::fmt::Write;

use toolcert_oracle::{Grade, Invariant};

use crate::report::{plural, Broken, Report, Status};

/// Most failing cases described in full in one JUnit failure or Markdown section.
const DETAIL: usize = 20;

/// Text safe for XML 1.0 character data and attribute values.
pub fn escape_xml(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    for c in s.chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' => out.push_str("&quot;"),
            '\'' => out.push_str("&apos;"),
            '\n' => out.push_str("&#10;"),
            '\t' => out.push_str("&#9;"),
            '\r' => out.push_str("&#13;"),
            // Not allowed in XML 1.0 even as references: shown as an escape.
            c if (c as u32) < 0x20 || c == '\u{FFFE}' || c == '\u{FFFF}' => {
                let _ = write!(out, "\\u{{{:x}}}", c as u32);
            }
            c => out.push(c),
        }
    }
    out
}

/// Text for an element's body: like [`escape_xml`], but newlines stay newlines.
fn xml_text(s: &str) -> String {
    escape_xml(s).replace("&#10;", "\n")
}

/// The cases that broke `inv` at `grade` (for `should`: at either grade), in run order.
fn breakers(r: &Report, inv: Invariant, grade: Grade) -> Vec<Breaker<'_>> {
    let hit = |b: &Broken| b.invariant == inv && (grade == Grade::Should || b.grade == Grade::Must);
    if r.records.is_empty() {
        return r
            .failures
            .iter()
            .filter(|f| f.violations.iter().any(|v| hit(&Broken { invariant: v.invariant, grade: v.grade })))
            .map(|f| Breaker { case: &f.case, generated: f.generated, failure: Some(f) })
            .collect();
    }
    r.records
        .iter()
        .filter(|rec| rec.broke.iter().any(hit))
        .map(|rec| Breaker {
            case: &rec.case,
            generated: rec.seed.map(|s| (s, rec.index)),
            failure: rec.failure.as_ref(),
        })
        .collect()
}

struct Breaker<'a> {
    case: &'a str,
    generated: Option<(u64, usize)>,
    failure: Option<&'a crate::Failure>,
}

impl Breaker<'_> {
    /// The case, its violations of `inv` and how to replay it.
    fn describe(&self, r: &Report, inv: Invariant) -> String {
        let mut out = format!("case {}\n", self.case);
        match self.failure {
            Some(f) => {
                let shown: Vec<_> = f.violations.iter().filter(|v| v.invariant == inv).collect();
                let shown = if shown.is_empty() { f.violations.iter().collect() } else { shown };
                if self.generated.is_some() {
                    out += "  (shrunk counterexample)\n";
                }
                for v in shown {
                    for line in v.to_string().lines() {
                        let _ = writeln!(out, "  {line}");
                    }
                }
            }
            None => out += "  (not kept in full: past the run's limit of shrunk failures)\n",
        }
        let _ = writeln!(out, "  replay: {}", r.replay_command(self.case, self.generated));
        if self.failure.is_some() {
            let _ = writeln!(out, "  or, with --out DIR: {}", r.replay_scenario_command(self.case));
        }
        out
    }
}

/// Whether a baseline lists the failure of `case` at `inv`.
fn expected(r: &Report, case: &str, inv: Invariant) -> bool {
    r.baseline.as_ref().is_some_and(|b| b.expected.iter().any(|e| e.case == case && e.invariant == Some(inv)))
}

/// One JUnit testcase: its result and body.
enum Outcome {
    Pass,
    Skipped(String),
    Failure { message: String, body: String },
}

fn testcase(r: &Report, inv: Invariant, status: &crate::InvariantStatus, grade: Grade) -> (Outcome, String) {
    let at_grade = match grade {
        Grade::Must => status.must,
        Grade::Should => status.should,
    };
    if at_grade == Status::NotExercised {
        let why = status.not_exercised.as_deref().unwrap_or("no case of the run could break it");
        return (Outcome::Skipped(format!("not exercised (n/a): {why}")), String::new());
    }
    let failing = match grade {
        Grade::Must => status.must,
        Grade::Should => status.should,
    } == Status::Fail;
    if !failing {
        return (Outcome::Pass, String::new());
    }
    let cases = breakers(r, inv, grade);
    let transcripts: String = cases
        .iter()
        .take(DETAIL)
        .filter_map(|c| c.failure.map(|f| format!("# {}\n{}\n", c.case, f.transcript)))
        .collect();
    if grade == Grade::Should && r.grade == Grade::Must {
        return (
            Outcome::Skipped(format!(
                "not required: the run certifies the must grade ({} the should part)",
                plural(cases.len(), "case breaks", "cases break")
            )),
            transcripts,
        );
    }
    let (listed, unlisted): (Vec<_>, Vec<_>) = cases.into_iter().partition(|c| expected(r, c.case, inv));
    if unlisted.is_empty() && !listed.is_empty() {
        return (
            Outcome::Skipped(format!(
                "expected failure: the baseline lists {}",
                if listed.len() == 1 {
                    "the failing case".to_string()
                } else {
                    format!("all {} failing cases", listed.len())
                }
            )),
            transcripts,
        );
    }
    let count = if unlisted.is_empty() { status.failures } else { unlisted.len() };
    let mut body = String::new();
    for c in unlisted.iter().take(DETAIL) {
        body += &c.describe(r, inv);
    }
    if unlisted.len() > DETAIL {
        let _ = writeln!(body, "... and {} more", plural(unlisted.len() - DETAIL, "case", "cases"));
    }
    if !listed.is_empty() {
        let _ = writeln!(
            body,
            "({} in the baseline)",
            plural(listed.len(), "more failing case is listed", "more failing cases are listed")
        );
    }
    let message = format!(
        "{} {inv} at the {} grade: {}",
        plural(count, "case broke", "cases broke"),
        grade.as_str(),
        inv.rule()
    );
    (Outcome::Failure { message, body }, transcripts)
}

/// The report as JUnit XML (the Jenkins/Ant schema: testsuites, testsuite, properties,
/// testcase, failure, skipped, system-out).
pub fn to_junit(r: &Report) -> String {
    to_junit_many(std::slice::from_ref(r))
}

/// Several settings' reports as one JUnit document: each setting's testsuites, their names
/// prefixed with the setting when there are several (`bytes (anthropic) ACC-TEXT`).
pub fn to_junit_many(reports: &[Report]) -> String {
    let mut suites = String::new();
    let mut totals = (0, 0, 0);
    for r in reports {
        let prefix = if reports.len() > 1 { format!("{} ", r.setting_label()) } else { String::new() };
        junit_suites(r, &prefix, &mut suites, &mut totals);
    }
    let (tests, failures, skipped) = totals;
    let subject = reports.first().map_or("", |r| r.subject.as_str());
    format!(
        "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<testsuites name=\"{}\" tests=\"{tests}\" failures=\"{failures}\" errors=\"0\" skipped=\"{skipped}\">\n{suites}</testsuites>\n",
        escape_xml(&format!("toolcert {subject}"))
    )
}

fn junit_suites(r: &Report, prefix: &str, suites: &mut String, totals: &mut (usize, usize, usize)) {
    let (mut tests, mut failures, mut skipped) = (0, 0, 0);
    let properties = {
        let mut p = vec![
            ("tool", format!("{} {}", r.tool, r.version)),
            ("suite", format!("{} {}", r.suite.version, r.suite.digest)),
            ("subject", r.subject.clone()),
            ("level", r.setting_label()),
            ("grade", r.grade.as_str().to_string()),
            ("schema", r.schema.to_string()),
            ("seed", r.seed.to_string()),
            ("cases", r.cases.to_string()),
            ("conformance", r.conformance.clone()),
        ];
        if let Some(s) = &r.shard {
            p.push(("shard", s.clone()));
        }
        if r.unsupported > 0 {
            p.push(("unsupported generated cases", r.unsupported.to_string()));
        }
        p
    };
    let props = |extra: &[(&str, String)]| {
        let mut out = String::from("    <properties>\n");
        for (k, v) in properties.iter().map(|(k, v)| (*k, v)).chain(extra.iter().map(|(k, v)| (*k, v))) {
            let _ = writeln!(out, "      <property name=\"{}\" value=\"{}\"/>", escape_xml(k), escape_xml(v));
        }
        out + "    </properties>\n"
    };
    for status in &r.invariants {
        let inv = status.id;
        let mut cases = String::new();
        let (mut t, mut f, mut s) = (0, 0, 0);
        for grade in [Grade::Must, Grade::Should] {
            t += 1;
            let (outcome, transcripts) = testcase(r, inv, status, grade);
            let _ = write!(
                cases,
                "    <testcase classname=\"toolcert.{}\" name=\"{}\"",
                inv.id(),
                grade.as_str()
            );
            let system_out = if transcripts.is_empty() {
                String::new()
            } else {
                format!("      <system-out>{}</system-out>\n", xml_text(&transcripts))
            };
            match outcome {
                Outcome::Pass => cases += "/>\n",
                Outcome::Skipped(message) => {
                    s += 1;
                    let _ = write!(
                        cases,
                        ">\n      <skipped message=\"{}\"/>\n{system_out}    </testcase>\n",
                        escape_xml(&message)
                    );
                }
                Outcome::Failure { message, body } => {
                    f += 1;
                    let _ = write!(
                        cases,
                        ">\n      <failure message=\"{}\" type=\"{}\">{}</failure>\n{system_out}    </testcase>\n",
                        escape_xml(&message),
                        inv.id(),
                        xml_text(&body)
                    );
                }
            }
        }
        tests += t;
        failures += f;
        skipped += s;
        let _ = write!(
            suites,
            "  <testsuite name=\"{}{}\" package=\"toolcert\" tests=\"{t}\" failures=\"{f}\" errors=\"0\" skipped=\"{s}\">\n{}{cases}  </testsuite>\n",
            escape_xml(prefix),
            inv.id(),
            props(&[("rule", inv.rule().to_string())]),
        );
    }
    if let Some(b) = r.baseline.as_ref().filter(|b| !b.stale.is_empty()) {
        let mut cases = String::new();
        for e in &b.stale {
            let name = match e.invariant {
                Some(i) => format!("{} {i}", e.case),
                None => e.case.clone(),
            };
            let _ = write!(
                cases,
                "    <testcase classname=\"toolcert.baseline\" name=\"{}\">\n      <failure message=\"stale: listed as an expected failure but passes\" type=\"stale-baseline\">remove this entry from the baseline</failure>\n    </testcase>\n",
                escape_xml(&name)
            );
        }
        tests += b.stale.len();
        failures += b.stale.len();
        let _ = write!(
            suites,
            "  <testsuite name=\"{}baseline\" package=\"toolcert\" tests=\"{n}\" failures=\"{n}\" errors=\"0\" skipped=\"0\">\n{}{cases}  </testsuite>\n",
            escape_xml(prefix),
            props(&[]),
            n = b.stale.len()
        );
    }
    if let Some(cost) = &r.cost {
        // One test per cost series: a superlinear one fails, as the verdict counts it.
        let mut cases = String::new();
        let mut f = 0;
        for s in &cost.series {
            let _ =
                write!(cases, "    <testcase classname=\"toolcert.cost\" name=\"{}\"", escape_xml(&s.series));
            if s.growth == crate::cost::Growth::Superlinear {
                f += 1;
                let _ = write!(
                    cases,
                    ">\n      <failure message=\"{}\" type=\"cost-superlinear\">{}</failure>\n    </testcase>\n",
                    escape_xml(&format!("superlinear: growth exponent {:.2}", s.exponent.unwrap_or(f64::NAN))),
                    xml_text(&cost.to_text())
                );
            } else {
                cases += "/>\n";
            }
        }
        tests += cost.series.len();
        failures += f;
        let _ = write!(
            suites,
            "  <testsuite name=\"{}cost\" package=\"toolcert\" tests=\"{}\" failures=\"{f}\" errors=\"0\" skipped=\"0\">\n{}{cases}  </testsuite>\n",
            escape_xml(prefix),
            cost.series.len(),
            props(&[("cost suite", cost.suite_version.to_string()), ("floor", cost.floor.clone())]),
        );
    }
    if let Some((cost, bounded)) = r.bounded.as_ref().and_then(|c| Some((c, c.bounded.as_ref()?))) {
        // One test per bounded series: one with a broken stream fails, as the verdict counts it.
        let mut cases = String::new();
        let mut f = 0;
        for s in &cost.series {
            let _ = write!(
                cases,
                "    <testcase classname=\"toolcert.bounded\" name=\"{}\"",
                escape_xml(&s.series)
            );
            if let Some(broken) = bounded.broken.iter().find(|b| b.starts_with(&s.series)) {
                f += 1;
                let _ = write!(
                    cases,
                    ">\n      <failure message=\"{}\" type=\"bounded-broken\">{}</failure>\n    </testcase>\n",
                    escape_xml(broken),
                    xml_text(&cost.to_text())
                );
            } else {
                cases += "/>\n";
            }
        }
        tests += cost.series.len();
        failures += f;
        let _ = write!(
            suites,
            "  <testsuite name=\"{}bounded\" package=\"toolcert\" tests=\"{}\" failures=\"{f}\" errors=\"0\" skipped=\"0\">\n{}{cases}  </testsuite>\n",
            escape_xml(prefix),
            cost.series.len(),
            props(&[("bounded suite", cost.suite_version.to_string()), ("floor", cost.floor.clone())]),
        );
    }
    if !r.skipped.is_empty() {
        let mut cases = String::new();
        for s in &r.skipped {
            let _ = write!(
                cases,
                "    <testcase classname=\"toolcert.cases\" name=\"{}\">\n      <skipped message=\"{}\"/>\n    </testcase>\n",
                escape_xml(&s.case),
                escape_xml(&s.reason)
            );
        }
        tests += r.skipped.len();
        skipped += r.skipped.len();
        let _ = write!(
            suites,
            "  <testsuite name=\"{}cases not run\" package=\"toolcert\" tests=\"{n}\" failures=\"0\" errors=\"0\" skipped=\"{n}\">\n{}{cases}  </testsuite>\n",
            escape_xml(prefix),
            props(&[]),
            n = r.skipped.len()
        );
    }
    totals.0 += tests;
    totals.1 += failures;
    totals.2 += skipped;
}

/// A Markdown table cell: pipes escaped, one line.
pub fn md_cell(s: &str) -> String {
    s.replace('\\', "\\\\").replace('|', "\\|").replace('\n', " ")
}

/// A fenced code block that `body` cannot close early.
pub fn md_code(lang: &str, body: &str) -> String {
    let mut longest = 0;
    let mut run = 0;
    for c in body.chars() {
        run = if c == '`' { run + 1 } else { 0 };
        longest = longest.max(run);
    }
    let fence = "`".repeat((longest + 1).max(3));
    let nl = if body.ends_with('\n') { "" } else { "\n" };
    format!("{fence}{lang}\n{body}{nl}{fence}\n")
}

/// Inline code that `s` cannot close early.
fn md_inline(s: &str) -> String {
    if s.contains('`') {
        format!("`` {} ``", s.replace('\n', " "))
    } else {
        format!("`{s}`")
    }
}

/// A pass/fail mark for people.
pub fn mark(s: Status) -> &'static str {
    match s {
        Status::Pass => "✅ pass",
        Status::Fail => "❌ fail",
        Status::NotExercised => "➖ n/a",
    }
}

/// The report as Markdown: a summary table, then each failure with its transcript.
pub fn to_markdown(r: &Report, max_failures: usize) -> String {
    let mut out = format!("# toolcert: {}\n\n", md_cell(&r.subject));
    let _ = writeln!(out, "{}\n", r.title_line());
    let _ = writeln!(out, "Suite {} ({}).\n", r.suite.version, md_inline(&r.suite.digest));
    let _ = writeln!(out, "**{}**\n", r.verdict_line());
    if !r.tiers.is_empty() {
        out += "| tier | verdict | cases exercised | findings |\n|---|---|---:|---|\n";
        for t in &r.tiers {
            let ids: Vec<String> = t.findings.iter().map(|f| md_inline(f)).collect();
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
    if let Some(b) = &r.baseline {
        let _ = writeln!(
            out,
            "Baseline: {} expected failures, {} unexpected, {} stale.\n",
            b.expected.len(),
            b.unexpected.len(),
            b.stale.len()
        );
        for e in &b.stale {
            let inv = e.invariant.map(|i| format!(" {i}")).unwrap_or_default();
            let _ = writeln!(
                out,
                "- stale: {}{inv} is listed as an expected failure but passes",
                md_inline(&e.case)
            );
        }
        if !b.stale.is_empty() {
            out.push('\n');
        }
    }
    let findings: Vec<&crate::Finding> = r.counted_findings().collect();
    if !findings.is_empty() {
        let _ = writeln!(
            out,
            "## {}\n\n| finding | cases | what |\n|---|---:|---|",
            crate::report::plural(findings.len(), "distinct finding", "distinct findings")
        );
        for f in &findings {
            let _ = writeln!(out, "| {} | {} | {} |", md_inline(&f.id), f.cases, md_cell(&f.title));
        }
        out.push('\n');
    }
    out += "| invariant | must | should | failing cases | exercised | rule |\n|---|---|---|---:|---:|---|\n";
    for i in &r.invariants {
        let _ = writeln!(
            out,
            "| {} | {} | {} | {} | {} | {} |",
            i.id.id(),
            mark(i.must),
            mark(i.should),
            i.failures,
            i.exercised,
            md_cell(&i.rule)
        );
    }
    for i in r.invariants.iter().filter(|i| i.status == Status::NotExercised) {
        let _ = writeln!(out, "\nn/a {}: {}", i.id, i.not_exercised.as_deref().unwrap_or("not exercised"));
    }
    if !r.skipped.is_empty() {
        out += "\nNot run:\n\n";
        for s in &r.skipped {
            let _ = writeln!(out, "- {}: {}", md_inline(&s.case), s.reason);
        }
    }
    if let Some(cost) = &r.cost {
        let _ = write!(out, "\n{}", cost.to_markdown());
    }
    if let Some(bounded) = &r.bounded {
        let _ = write!(out, "\n{}", bounded.to_markdown());
    }
    for f in findings.iter().take(max_failures) {
        let _ = writeln!(out, "\n### {} {}\n", md_inline(&f.id), md_cell(&f.title));
        let _ = writeln!(out, "{}, first {}.\n", plural(f.cases, "case", "cases"), md_inline(&f.first_case));
        let _ = writeln!(out, "Why it matters: {}\n", f.invariant.why());
        let Some(rep) = &f.reproducer else {
            out += &md_code("sh", &f.replay);
            continue;
        };
        let size = f.size.unwrap_or_default();
        let _ = writeln!(out, "Smallest reproducer {} ({size}):\n", md_inline(&rep.case));
        for v in &rep.violations {
            let call = v.call_id.as_ref().map(|c| format!(" call {}", md_inline(c))).unwrap_or_default();
            let stream =
                if rep.scenario.streams.len() > 1 { format!(" stream {}", v.stream) } else { String::new() };
            let _ = writeln!(
                out,
                "- **{}** ({}){call}{stream}: expected {}, observed {}",
                v.invariant,
                v.grade.as_str(),
                md_inline(&v.expected),
                md_inline(&v.observed)
            );
        }
        out.push('\n');
        out += &md_code("text", &rep.transcript);
        let _ = writeln!(out, "\nReplay:\n");
        let mut replay = r.replay_command(&rep.case, rep.generated);
        if rep.generated.is_some() {
            replay.push('\n');
            replay += &r.replay_scenario_command(&rep.case);
        }
        out += &md_code("sh", &replay);
    }
    if findings.len() > max_failures {
        let _ = writeln!(
            out,
            "\n… and {} more findings (the JSON report lists every one).",
            findings.len() - max_failures
        );
    }
    out
}
