//! Findings: the distinct bugs behind a run's failing cases.
//!
//! A violation's [`Signature`] is its invariant, its grade and its kind (what went wrong, in
//! words that name no id, argument or position: the oracle writes it). Every failing case
//! counts once toward each signature it showed; a [`Finding`] is one signature with its
//! count, the first case that showed it, its smallest reproducer (shrunk keeping that very
//! signature) and the command that replays it. The id hashes the signature only, so the
//! same bug gets the same id across seeds, case counts, runs and settings.
//!
//! Derived from the per-case records by [`crate::Report::finish`], like every other count,
//! so findings merge with the reports of shards and seeds.

use serde::{Deserialize, Serialize};
use toolcert_oracle::{Grade, Invariant, Violation};
use toolcert_scenario::{Block, Case};

use crate::report::Failure;

/// What identifies one bug: the invariant, the grade and the kind of failure.
#[derive(Clone, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
pub struct Signature {
    pub invariant: Invariant,
    pub grade: Grade,
    pub kind: String,
}

impl Signature {
    pub fn of(v: &Violation) -> Signature {
        Signature { invariant: v.invariant, grade: v.grade, kind: v.kind.clone() }
    }

    /// The distinct signatures of `violations`, sorted (must before should per invariant).
    pub fn all(violations: &[Violation]) -> Vec<Signature> {
        let mut out: Vec<Signature> = violations.iter().map(Signature::of).collect();
        out.sort();
        out.dedup();
        out
    }

    pub fn matches(&self, v: &Violation) -> bool {
        v.invariant == self.invariant && v.grade == self.grade && v.kind == self.kind
    }

    /// `ACC-IDENTITY#1f2e3d4c`: the invariant, and a hash of the whole signature that is the
    /// same on every machine (FNV-1a, 32 bits).
    pub fn id(&self) -> String {
        let mut h: u32 = 0x811c_9dc5;
        for b in self
            .invariant
            .id()
            .bytes()
            .chain([0])
            .chain(self.grade.as_str().bytes())
            .chain([0])
            .chain(self.kind.bytes())
        {
            h ^= u32::from(b);
            h = h.wrapping_mul(0x0100_0193);
        }
        format!("{}#{h:08x}", self.invariant.id())
    }

    /// One line a maintainer reads: `ACC-IDENTITY (must): two calls to the same tool merged into one`.
    pub fn title(&self) -> String {
        let kind = if self.kind.is_empty() { self.invariant.rule() } else { self.kind.as_str() };
        format!("{} ({}): {kind}", self.invariant.id(), self.grade.as_str())
    }
}

/// How big a reproducer is, for choosing the smallest and for the zoo's table.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, PartialOrd, Ord, Serialize, Deserialize)]
pub struct Size {
    /// Provider-neutral events over all streams.
    pub events: usize,
    /// Non-empty argument and text fragments.
    pub fragments: usize,
    /// Argument and text bytes.
    pub bytes: usize,
}

impl Size {
    pub fn of(case: &Case) -> Size {
        let mut size = Size::default();
        for turn in &case.streams {
            size.events += toolcert_render::render(turn).events.len();
            for b in &turn.blocks {
                let (text, splits) = match b {
                    Block::Call(c) => (&c.arguments, &c.splits),
                    Block::Text(t) => (&t.text, &t.splits),
                    Block::Foreign(f) => (&f.text, &f.splits),
                };
                size.bytes += text.len();
                size.fragments +=
                    toolcert_scenario::fragments(text, splits).filter(|(_, f)| !f.is_empty()).count();
            }
        }
        size
    }
}

impl std::fmt::Display for Size {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let n = |k: usize, one: &str, many: &str| crate::report::plural(k, one, many);
        write!(
            f,
            "{}, {}, {}",
            n(self.events, "event", "events"),
            n(self.fragments, "fragment", "fragments"),
            n(self.bytes, "byte", "bytes")
        )
    }
}

/// One distinct bug of the subject.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Finding {
    /// Stable across seeds, case counts and runs: [`Signature::id`].
    pub id: String,
    pub invariant: Invariant,
    pub grade: Grade,
    /// What went wrong, without values.
    pub kind: String,
    pub title: String,
    /// Cases that showed it (as run, before shrinking).
    pub cases: usize,
    /// The first case (in run order) that showed it.
    pub first_case: String,
    /// The settings it was found in (`events`, `bytes (openai-chat)`), for reports over
    /// several settings.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub settings: Vec<String>,
    /// The smallest failure kept in full that shows it (for a generated case, shrunk keeping
    /// this very signature).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reproducer: Option<Failure>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub size: Option<Size>,
    /// The command that runs the reproducer again.
    pub replay: String,
}

impl Finding {
    pub fn signature(&self) -> Signature {
        Signature { invariant: self.invariant, grade: self.grade, kind: self.kind.clone() }
    }

    /// Whether it counts when `grade` is required.
    pub fn counts(&self, grade: Grade) -> bool {
        grade == Grade::Should || self.grade == Grade::Must
    }
}
