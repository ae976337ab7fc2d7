//! The expected-failures baseline (as modelcontextprotocol/conformance keeps one): a listed
//! failure passes, an unlisted one fails, and a listed failure that no longer happens fails
//! too, as stale, so the list cannot rot.
//!
//! The file is JSON:
//!
//! ```json
//! {
//!   "toolcert_baseline": 1,
//!   "subject": "builtin:mutant/name-keyed",
//!   "expected_failures": [
//!     { "case": "named/keying/refunded-open-pair", "invariant": "ACC-IDENTITY",
//!       "reason": "buffers are keyed by tool name; fixed in 2.0" },
//!     { "case": "gen/7/12" }
//!   ]
//! }
//! ```
//!
//! An entry without `invariant` expects the case to fail, whatever it breaks. `subject` and
//! `reason` are for people; only `case` and `invariant` are matched.

use std::collections::{BTreeMap, BTreeSet};
use std::fmt::Write;

use serde::{Deserialize, Serialize};
use toolcert_oracle::Invariant;

use crate::report::Report;

/// The version of the baseline file format.
pub const BASELINE_FORMAT: u32 = 1;

/// A list of expected failures.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Baseline {
    /// The file format's version ([`BASELINE_FORMAT`]).
    pub toolcert_baseline: u32,
    /// The implementation the baseline was written for (not checked).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub subject: Option<String>,
    pub expected_failures: Vec<Entry>,
}

/// One expected failure: a case, and optionally the invariant it breaks.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Entry {
    pub case: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub invariant: Option<Invariant>,
    /// Why it is expected, for people.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reason: Option<String>,
}

impl Entry {
    fn new(case: &str, invariant: Option<Invariant>) -> Entry {
        Entry { case: case.into(), invariant, reason: None }
    }

    fn label(&self) -> String {
        match self.invariant {
            Some(i) => format!("{} {i}", self.case),
            None => self.case.clone(),
        }
    }
}

/// A report judged against a baseline.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct BaselineCheck {
    /// Failures the baseline lists (they pass).
    pub expected: Vec<Entry>,
    /// Failures it does not list (they fail the run).
    pub unexpected: Vec<Entry>,
    /// Entries whose case ran and no longer fails that way (they fail the run as stale).
    pub stale: Vec<Entry>,
    /// Entries whose case this run did not run (another shard, a filter, fewer generated
    /// cases): neither expected nor stale.
    pub not_run: Vec<Entry>,
}

impl Baseline {
    /// Reads a baseline file's text.
    pub fn parse(text: &str) -> Result<Baseline, String> {
        let b: Baseline = serde_json::from_str(text).map_err(|e| {
            format!(
                "not a toolcert baseline ({e}); expected {{\"toolcert_baseline\": 1, \"expected_failures\": \
                 [{{\"case\": ..., \"invariant\": ...}}]}}"
            )
        })?;
        if b.toolcert_baseline != BASELINE_FORMAT {
            return Err(format!(
                "baseline format {} is not understood (this toolcert reads format {BASELINE_FORMAT})",
                b.toolcert_baseline
            ));
        }
        Ok(b)
    }

    /// The report's current failures at its required grade, one entry per case and
    /// invariant, in run order.
    pub fn from_report(report: &Report) -> Baseline {
        let expected_failures = report
            .failing_cases()
            .into_iter()
            .flat_map(|(case, broke)| {
                let invs: BTreeSet<Invariant> = broke.iter().map(|b| b.invariant).collect();
                invs.into_iter().map(move |i| Entry::new(case, Some(i)))
            })
            .collect();
        Baseline {
            toolcert_baseline: BASELINE_FORMAT,
            subject: Some(report.subject.clone()),
            expected_failures,
        }
    }

    /// The file's text.
    pub fn to_json(&self) -> String {
        let mut s = serde_json::to_string_pretty(self).expect("a baseline serialises");
        s.push('\n');
        s
    }

    /// Judges `report`'s failures against the list.
    pub fn check(&self, report: &Report) -> BaselineCheck {
        let failing_cases: Vec<(&str, BTreeSet<Invariant>)> = report
            .failing_cases()
            .into_iter()
            .map(|(case, broke)| (case, broke.iter().map(|b| b.invariant).collect()))
            .collect();
        let failing: BTreeMap<&str, &BTreeSet<Invariant>> =
            failing_cases.iter().map(|(case, invs)| (*case, invs)).collect();
        let ran: BTreeSet<&str> = if report.records.is_empty() {
            failing.keys().copied().collect()
        } else {
            // A streamed run keeps no record of its passing cases: it says which ones ran.
            let listed = self.expected_failures.iter().map(|e| e.case.as_str());
            listed.filter(|case| failing.contains_key(case) || report.ran(case)).collect()
        };
        let listed = |case: &str, inv: Invariant| {
            self.expected_failures.iter().any(|e| e.case == case && e.invariant.is_none_or(|i| i == inv))
        };
        let mut check = BaselineCheck::default();
        for (case, invs) in &failing_cases {
            for &inv in invs {
                let entry = Entry::new(case, Some(inv));
                if listed(case, inv) {
                    check.expected.push(entry);
                } else {
                    check.unexpected.push(entry);
                }
            }
        }
        for e in &self.expected_failures {
            if !ran.contains(e.case.as_str()) {
                check.not_run.push(e.clone());
                continue;
            }
            let fails = failing.get(e.case.as_str());
            let still = match e.invariant {
                Some(i) => fails.is_some_and(|f| f.contains(&i)),
                None => fails.is_some_and(|f| !f.is_empty()),
            };
            if !still {
                check.stale.push(e.clone());
            }
        }
        check
    }
}

impl BaselineCheck {
    /// For the text report.
    pub fn to_text(&self) -> String {
        let mut out = format!(
            "baseline: {}, {} unexpected, {} stale",
            crate::report::plural(self.expected.len(), "expected failure", "expected failures"),
            self.unexpected.len(),
            self.stale.len()
        );
        if !self.not_run.is_empty() {
            let n = self.not_run.len();
            let what = if n == 1 { "entry names a case" } else { "entries name cases" };
            let _ = write!(out, " ({n} {what} this run did not run)");
        }
        out.push('\n');
        for e in &self.unexpected {
            let _ = writeln!(out, "  unexpected: {} (not in the baseline)", e.label());
        }
        for e in &self.stale {
            let _ = writeln!(
                out,
                "  stale: {} is listed as an expected failure but passes; remove it",
                e.label()
            );
        }
        out
    }
}
