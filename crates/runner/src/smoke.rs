//! The smoke test: a few named cases at every level and dialect a subject declares, so an
//! adapter is proven to work (it starts, speaks the protocol, and gets the easy cases right)
//! before anyone reads its conformance. Any subject can be smoke-tested; `toolcert smoke`
//! runs it on an `exec:` adapter (whose self-description and counters it adds to the report).

use std::fmt;

use serde::Serialize;
use toolcert_oracle::Profile;
use toolcert_subject::driver::Speech;
use toolcert_subject::{Level, Subject};

use crate::{check, Setting};

/// The named cases the smoke test runs, by id (`toolcert_gen::named`): a plain call, the
/// classic splits, the endings, a fault, and the schema profile. Each runs wherever its
/// shape can be spoken (per-call cases in Anthropic and Responses, interleaved ones in Chat,
/// all of them at the events level).
pub const SMOKE_CASES: &[&str] = &[
    "deltas/lookup-order-a4471",
    "deltas/prose-before-and-after",
    "split/inside-unicode-escape",
    "keying/refunded-open-pair",
    "keying/refunded-open-interleaved",
    "keying/empty-arguments",
    "keying/two-documents-end-to-end",
    "final/create-ticket-max-tokens",
    "final/abandoned-mid-arguments",
    "final/interleaved-disconnect",
    "keying/unannounced-index",
    "final/priority-p1-schema-error",
];

/// How one smoke case went.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum SmokeStatus {
    Pass,
    Fail,
    Skip,
}

/// One case at one setting.
#[derive(Clone, Debug, Serialize)]
pub struct SmokeLine {
    /// `events`, `wire/anthropic`, `bytes/openai-chat`...
    pub setting: String,
    pub case: String,
    pub status: SmokeStatus,
    /// The first violation (a failure), or why the case was skipped.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub detail: Option<String>,
}

/// The smoke test's result; `Display` prints it for people.
#[derive(Clone, Debug, Serialize)]
pub struct SmokeReport {
    pub subject: String,
    /// What the subject said about itself (an `exec:` subject's implementation, as
    /// `toolcert_exec::Implementation` prints it).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub implementation: Option<String>,
    pub lines: Vec<SmokeLine>,
    /// The subject's counters after the test (an `exec:` subject's `ExecStats`, printed).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub stats: Option<String>,
    /// Every case run passed, and at least one ran.
    pub ok: bool,
}

impl SmokeReport {
    pub fn count(&self, status: SmokeStatus) -> usize {
        self.lines.iter().filter(|l| l.status == status).count()
    }
}

/// Runs [`SMOKE_CASES`] against any subject at the given settings (level and speech).
pub fn smoke_with(subject: &dyn Subject, settings: &[(Level, Speech)], profile: Profile) -> SmokeReport {
    let mut lines = Vec::new();
    for &(level, speech) in settings {
        let setting_name = match level {
            Level::Events => level.to_string(),
            _ => format!("{level}/{}", speech.dialect),
        };
        let setting = Setting { profile, level, speech, ..Setting::default() };
        for id in SMOKE_CASES {
            let Some(named) = toolcert_gen::named::by_id(id) else { continue };
            let mut line = SmokeLine {
                setting: setting_name.clone(),
                case: named.case.name.clone(),
                status: SmokeStatus::Pass,
                detail: None,
            };
            if named.needs_schema && !profile.schema {
                line.status = SmokeStatus::Skip;
                line.detail = Some("needs the schema profile (the subject does not validate schemas)".into());
                lines.push(line);
                continue;
            }
            let checked = check(subject, &named.case, setting);
            if checked.unsupported.is_some() {
                // The case's shape cannot be spoken in this dialect: not a smoke case here.
                continue;
            }
            if let Some(v) = checked.violations.first() {
                line.status = SmokeStatus::Fail;
                let more = match checked.violations.len() {
                    1 => String::new(),
                    n => format!(" (and {} more)", n - 1),
                };
                line.detail = Some(format!("{v}{more}"));
            }
            lines.push(line);
        }
    }
    let ran = lines.iter().any(|l| l.status == SmokeStatus::Pass);
    let ok = ran && !lines.iter().any(|l| l.status == SmokeStatus::Fail);
    SmokeReport { subject: subject.name(), implementation: None, lines, stats: None, ok }
}

impl fmt::Display for SmokeReport {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "smoke test of {}", self.subject)?;
        if let Some(imp) = &self.implementation {
            writeln!(f, ": {imp}")?;
        } else {
            writeln!(f)?;
        }
        let width = self.lines.iter().map(|l| l.setting.len()).max().unwrap_or(0);
        for line in &self.lines {
            let status = match line.status {
                SmokeStatus::Pass => "pass",
                SmokeStatus::Fail => "FAIL",
                SmokeStatus::Skip => "skip",
            };
            write!(f, "  {status}  {:width$}  {}", line.setting, line.case)?;
            if let Some(detail) = &line.detail {
                let detail = detail.replace('\n', "\n        ");
                write!(f, "\n        {detail}")?;
            }
            writeln!(f)?;
        }
        if let Some(stats) = &self.stats {
            writeln!(f, "  subject: {stats}")?;
        }
        let verdict = if self.ok { "ok" } else { "FAILED" };
        write!(
            f,
            "smoke: {verdict}: {} passed, {} failed, {} skipped",
            self.count(SmokeStatus::Pass),
            self.count(SmokeStatus::Fail),
            self.count(SmokeStatus::Skip)
        )
    }
}
