//! Which invariants a case could break: a rule is `pass` only when at least one case that
//! exercised it ran, and `n/a` otherwise (docs/SPEC.md, "What exercises a rule").
//!
//! The oracle knows what a scenario asks of a subject at the events level (calls, endings,
//! documents, schemas); the runner adds what only the setting knows (the wire and bytes
//! rules, the delivered-whole re-run). ACC-ENDING alone depends on the subject: it is
//! exercised where the subject says how a turn ended ([`reported`]).

use serde::{Deserialize, Serialize};
use toolcert_scenario::{Block, Case, EndingKind};
use toolcert_subject::FailReason;

use crate::{Expect, Expected, Invariant, Judged, Profile};

/// A set of invariants, one bit each, by position in [`Invariant::ALL`].
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(transparent)]
pub struct Exercised(pub u64);

impl Exercised {
    fn bit(inv: Invariant) -> u64 {
        let at = Invariant::ALL.iter().position(|&i| i == inv).expect("every invariant is in ALL");
        1 << at
    }

    pub fn insert(&mut self, inv: Invariant) {
        self.0 |= Self::bit(inv);
    }

    pub fn contains(self, inv: Invariant) -> bool {
        self.0 & Self::bit(inv) != 0
    }

    pub fn union(self, other: Exercised) -> Exercised {
        Exercised(self.0 | other.0)
    }

    pub fn is_empty(self) -> bool {
        self.0 == 0
    }

    /// The invariants in the set, in [`Invariant::ALL`] order.
    pub fn iter(self) -> impl Iterator<Item = Invariant> {
        Invariant::ALL.iter().copied().filter(move |&i| self.contains(i))
    }
}

impl FromIterator<Invariant> for Exercised {
    fn from_iter<I: IntoIterator<Item = Invariant>>(iter: I) -> Exercised {
        let mut set = Exercised::default();
        iter.into_iter().for_each(|i| set.insert(i));
        set
    }
}

/// The events-level invariants `case` exercises, from the expectations of its streams
/// (`expected[s]` belongs to `case.streams[s]`, as [`crate::expect`] derived them).
pub fn exercised(case: &Case, expected: &[Expected<'_>], profile: Profile) -> Exercised {
    use Invariant::*;
    let mut set = Exercised::default();
    // Any stream can crash the subject, and must raise a protocol error exactly when it is
    // faulty.
    set.insert(SubjectCrash);
    set.insert(AccProtocol);
    if case.streams.len() > 1 {
        set.insert(AccIsolation);
    }
    for (turn, exp) in case.streams.iter().zip(expected) {
        if !exp.calls.is_empty() {
            for inv in [AccAccount, AccIdentity, AccFidelity, AccText] {
                set.insert(inv);
            }
            match exp.ending {
                EndingKind::Truncated => set.insert(AccTruncation),
                EndingKind::Abandoned | EndingKind::Errored => set.insert(AccAbandon),
                EndingKind::Complete => {}
            }
        }
        if !exp.text_pieces.is_empty() {
            set.insert(AccText);
        }
        // Only a foreign block that was delivered can be dispatched or leak.
        if !exp.foreign.is_empty() {
            set.insert(AccForeign);
        }
        for call in &exp.calls {
            if call.terminal_at.is_some() {
                set.insert(AccCompletion);
            }
            if call.fragments.iter().filter(|f| !f.is_empty()).count() >= 2 {
                set.insert(AccOrder);
            }
            let judged = match &call.expect {
                Expect::Finished { judged } | Expect::FinishedOrAbandoned { judged } => Some(judged),
                // A finished document that does not parse, in a complete turn.
                Expect::Failed { reason: FailReason::Unparseable } => Some(&Judged::Unparseable),
                _ => None,
            };
            match judged {
                Some(Judged::Unparseable) => set.insert(AccStrict),
                Some(Judged::Dispatch { .. } | Judged::SchemaError { .. })
                    if profile.schema && turn.schema_of(call.name).is_some() =>
                {
                    set.insert(AccSchema)
                }
                _ => {}
            }
        }
        let text_in_pieces = turn.blocks.iter().any(|b| match b {
            Block::Text(t) => {
                toolcert_render::fragments(&t.text, &t.splits).filter(|(_, f)| !f.is_empty()).count() >= 2
            }
            Block::Call(_) | Block::Foreign(_) => false,
        });
        if text_in_pieces {
            set.insert(AccOrder);
        }
    }
    set
}

/// What the observations themselves open to judgement: ACC-ENDING, for a subject that reports
/// how a turn ended, and HOSTILE-POLLUTION, for one whose runtime was checked (one that cannot
/// say leaves it `n/a`).
pub fn reported(observed: &[toolcert_subject::Observation]) -> Exercised {
    let mut set = Exercised::default();
    if observed.iter().any(|o| o.ending.is_some()) {
        set.insert(Invariant::AccEnding);
    }
    if observed.iter().any(|o| o.pollution.is_some()) {
        set.insert(Invariant::HostilePollution);
    }
    set
}
