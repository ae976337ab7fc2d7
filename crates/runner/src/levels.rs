//! Which wire or bytes rule a failure below the events level hinges on.
//!
//! A violation found at the wire or bytes level is judged as at every level (ACC-*). When the
//! same case passes after the smallest change to its stream that removes one wire or bytes
//! feature, that feature is the cause, and the violation is relabelled with the rule it
//! breaks: UTF-8 split across chunks (BYTES-UTF8), framing (BYTES-FRAMING), keep-alives
//! (WIRE-KEEPALIVE), Chat chunks carrying several entries (WIRE-CHAT), the dialect events of
//! [`toolcert_scenario::WireEvents`] (units of unknown types: WIRE-UNKNOWN; Chat's prelude,
//! usage and `[DONE]` bookkeeping: WIRE-KEEPALIVE; Responses calls announced only by their
//! `output_item.done`: WIRE-DONE). A faulty Responses `done` refused at the wire level is
//! WIRE-DONE. Only failures are re-run.

use std::cell::RefCell;

use toolcert_oracle::{Exercised, Invariant, Violation};
use toolcert_scenario::{Case, FaultKind, Transport};
use toolcert_subject::Level;

use crate::{check, Setting};

/// Relabels `violations` of `case` (run at `setting`) with the wire or bytes rule whose
/// feature they hinge on.
pub(crate) fn attribute(
    subject: &dyn toolcert_subject::Subject,
    case: &Case,
    setting: Setting,
    violations: &mut Vec<Violation>,
) {
    // A crash in a re-run is the subject's crash, not a sign for or against a feature.
    let crash: RefCell<Option<Violation>> = RefCell::new(None);
    let passes = |changed: &Case| {
        let c = check_plain(subject, changed, setting);
        if let Some(v) = crate::rerun_crash(&c.observations, "level attribution (WIRE-*, BYTES-*)") {
            crash.borrow_mut().get_or_insert(v);
            return false;
        }
        c.unsupported.is_none() && c.violations.is_empty()
    };
    relabel(case, setting, violations, &passes);
    if let Some(v) = crash.into_inner() {
        violations.push(v);
    }
}

/// The invariants of the wire and bytes levels that the lowered streams of `case` exercise
/// (docs/SPEC.md, "What exercises a rule").
pub(crate) fn exercised(case: &Case, lowered: &[crate::Lowered<'_, '_>], setting: Setting) -> Exercised {
    let mut set = Exercised::default();
    if setting.level == Level::Events {
        return set;
    }
    let def = toolcert_dialect::def(setting.speech.dialect);
    for (turn, l) in case.streams.iter().zip(lowered) {
        // A binary-framed dialect sends no keep-alive: its pings are never on the wire.
        if !turn.pings.is_empty() && !def.binary() {
            set.insert(Invariant::WireKeepalive);
        }
        def.exercised(turn, l.neutral, &mut |id| {
            if let Some(inv) = rule(id) {
                set.insert(inv);
            }
        });
        if let Some(b) = &l.bytes {
            if b.chunks.len() >= 2 || !turn.transport.is_plain() {
                set.insert(Invariant::BytesFraming);
            }
            // A chunk starting with a continuation byte: a character split across two chunks.
            let ends = b.chunks.ends();
            if ends[..ends.len().saturating_sub(1)].iter().any(|&e| b.chunks.bytes()[e] & 0xC0 == 0x80) {
                set.insert(Invariant::BytesUtf8);
            }
            if turn.transport.corrupt.is_some() {
                set.insert(Invariant::BytesChecksum);
            }
        }
    }
    set
}

fn relabel(case: &Case, setting: Setting, violations: &mut [Violation], passes: &dyn Fn(&Case) -> bool) {
    let label = |violations: &mut [Violation], inv: Invariant, why: &str| {
        for v in violations.iter_mut() {
            if !matches!(v.invariant, Invariant::AccIsolation | Invariant::SubjectCrash) {
                crate::annotate(&mut v.observed, why);
                v.invariant = inv;
            }
        }
    };
    if setting.level == Level::Bytes && case.streams.iter().any(|t| t.transport.corrupt.is_some()) {
        let sound = with_turns(case, |t| t.transport.corrupt = None);
        if passes(&sound) {
            label(
                violations,
                Invariant::BytesChecksum,
                "passes with every message's checksums and lengths right",
            );
            return;
        }
    }
    if setting.level == Level::Bytes && case.streams.iter().any(|t| !t.transport.is_plain()) {
        // The same chunks with every boundary moved back to the start of its character
        // isolates UTF-8 handling from the rest of the framing.
        if let Some(whole_chars) = snapped(case, setting).filter(|_| splits_a_char(case, setting)) {
            if passes(&whole_chars) {
                label(violations, Invariant::BytesUtf8, "passes when no chunk boundary splits a character");
                return;
            }
        }
        let plain = with_turns(case, |t| t.transport = Transport::default());
        if passes(&plain) {
            label(violations, Invariant::BytesFraming, "passes as one chunk with LF line ends");
            return;
        }
    }
    if case.streams.iter().any(|t| !t.pings.is_empty()) && passes(&with_turns(case, drop_pings)) {
        label(violations, Invariant::WireKeepalive, "passes without the keep-alives");
        return;
    }
    // The dialect's own features, in the order it tries them.
    let def = toolcert_dialect::def(setting.speech.dialect);
    for a in def.attribution() {
        let Some(inv) = rule(a.rule) else { continue };
        if case.streams.iter().any(a.has) && passes(&with_turns(case, a.strip)) {
            label(violations, inv, a.why);
            return;
        }
    }
    if let Some(inv) = def.done_mismatch_rule().and_then(rule) {
        let mismatch = case
            .streams
            .iter()
            .any(|t| t.faults.iter().any(|f| matches!(f.kind, FaultKind::DoneMismatch { .. })));
        if mismatch {
            for v in violations.iter_mut().filter(|v| v.invariant == Invariant::AccProtocol) {
                v.invariant = inv;
            }
        }
    }
}

/// The invariant a dialect names by id (`WIRE-CHAT`).
fn rule(id: &str) -> Option<Invariant> {
    Invariant::ALL.iter().copied().find(|i| i.id() == id)
}

/// `check` without attribution (the re-runs must not recurse).
fn check_plain(subject: &dyn toolcert_subject::Subject, case: &Case, setting: Setting) -> crate::Checked {
    let mut s = setting;
    // Attribution only runs below the events level; a re-run at the same level with a
    // marker would recurse, so re-run through the same `check` but only on passing checks.
    s.attribute = false;
    s.chunking = false;
    check(subject, case, s)
}

/// The turn without its keep-alives, cut where it was cut: an abandoned or errored ending
/// counts the pings before its cut, so it moves back by as many.
fn drop_pings(t: &mut toolcert_scenario::Turn) {
    let mut at = std::mem::take(&mut t.pings);
    at.sort_unstable();
    // Ping j lands at body position p + j (the pings before it shift it along).
    let before =
        |cut: u32| at.iter().enumerate().filter(|&(j, &p)| p.saturating_add(j as u32) < cut).count() as u32;
    match &mut t.ending {
        toolcert_scenario::Ending::Abandoned { after, .. }
        | toolcert_scenario::Ending::Errored { after, .. } => *after -= before(*after),
        toolcert_scenario::Ending::Stop(_) => {}
    }
}

fn with_turns(case: &Case, f: impl Fn(&mut toolcert_scenario::Turn)) -> Case {
    let mut c = case.clone();
    c.streams.iter_mut().for_each(f);
    c
}

/// Whether some transport cut of the case lands inside a multi-byte character.
fn splits_a_char(case: &Case, setting: Setting) -> bool {
    case.streams.iter().any(|t| {
        let neutral = toolcert_render::render(t);
        let Ok(wire) =
            toolcert_dialect::render_wire(t, &neutral, setting.speech.dialect, setting.speech.quirks)
        else {
            return false;
        };
        let b = toolcert_dialect::render_bytes(setting.speech.dialect, &wire, &t.transport);
        let bytes = b.chunks.bytes();
        b.cuts.iter().any(|&c| bytes.get(c).is_some_and(|x| x & 0xC0 == 0x80))
    })
}

/// The case with each stream's resolved cuts moved back to character starts (as explicit
/// offsets); `None` if a stream cannot be rendered.
fn snapped(case: &Case, setting: Setting) -> Option<Case> {
    let mut c = case.clone();
    for t in &mut c.streams {
        let neutral = toolcert_render::render(t);
        let wire =
            toolcert_dialect::render_wire(t, &neutral, setting.speech.dialect, setting.speech.quirks).ok()?;
        let b = toolcert_dialect::render_bytes(setting.speech.dialect, &wire, &t.transport);
        let bytes = b.chunks.bytes();
        let cuts = b
            .cuts
            .iter()
            .map(|&c| {
                let mut c = c;
                while c > 0 && bytes.get(c).is_some_and(|x| x & 0xC0 == 0x80) {
                    c -= 1;
                }
                toolcert_scenario::Cut { aim: toolcert_scenario::CutAim::Anywhere, pick: c as u32 }
            })
            .collect();
        t.transport.cuts = cuts;
    }
    Some(c)
}

#[cfg(test)]
mod tests {
    /// A rule a dialect names that is no invariant would never be exercised or attributed.
    #[test]
    fn every_dialect_rule_is_an_invariant() {
        for d in toolcert_dialect::registry() {
            let rules = d.attribution().iter().map(|a| a.rule).chain(d.done_mismatch_rule());
            for id in rules {
                assert!(super::rule(id).is_some(), "{}: {id} is not an invariant", d.name());
            }
        }
    }
}
