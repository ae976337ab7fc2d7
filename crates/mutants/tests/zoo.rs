//! The zoo against the oracle: the base accumulator conforms on every named case, and every
//! mutant is killed, with one of its expected invariants, by a named case or (where no named
//! case has the shape its bug needs) by a hand-built scenario listed in [`hand_built`].
//!
//! Run with `--nocapture` to see, for each mutant, the cases that kill it and the invariants
//! they report.

use std::collections::BTreeSet;

use toolcert_gen::named::{self, call, interleaved};
use toolcert_mutants::{base, by_name, zoo, Mutant};
use toolcert_oracle::{Invariant, Profile};
use toolcert_runner::check_case;
use toolcert_scenario::{Case, Ending, StopReason};

const PROFILE: Profile = Profile { schema: true, hostile: false, caps: toolcert_oracle::Caps::NONE };

/// The invariants a case reports against a subject.
fn violated(subject: &dyn toolcert_subject::Subject, case: &Case) -> BTreeSet<Invariant> {
    check_case(subject, case, PROFILE).violations.iter().map(|v| v.invariant).collect()
}

fn show(invariants: &BTreeSet<Invariant>) -> String {
    invariants.iter().map(|i| i.id()).collect::<Vec<_>>().join(", ")
}

/// Scenarios for mutants whose bug needs a shape no named case has. Each entry says why.
fn hand_built(mutant: &str) -> Option<Case> {
    let case = match mutant {
        // The named truncation cases all stop on max_tokens: the one reason this mutant knows.
        "only-max-tokens" => Case::single(
            "hand/chat-length-cut",
            interleaved(
                vec![call(0, "call_8Hs1", "search_orders", &[r#"{"limit": "#, "20}"])],
                vec![],
                Ending::Stop(StopReason::Length),
            ),
        ),
        // No named case has a model-written invalid escape (generated documents do).
        "bad-escape-crashes" => Case::single(
            "hand/invalid-escape",
            interleaved(
                vec![call(0, "call_8Hs2", "search_orders", &[r#"{"query": "order \d"#, r#"+"}"#])],
                vec![],
                Ending::Stop(StopReason::ToolUse),
            ),
        ),
        _ => return None,
    };
    Some(case)
}

#[test]
fn the_base_conforms_on_every_named_case() {
    let subject = base();
    let mut bad = Vec::new();
    for n in named::all() {
        let checked = check_case(&*subject, &n.case, PROFILE);
        for v in &checked.violations {
            bad.push(format!("{}: {v}", n.id));
        }
    }
    assert!(bad.is_empty(), "the unmutated base fails:\n{}", bad.join("\n"));
}

#[test]
fn the_base_conforms_on_the_hand_built_cases() {
    let subject = base();
    for m in zoo() {
        if let Some(case) = hand_built(m.name) {
            let v = check_case(&*subject, &case, PROFILE).violations;
            assert!(v.is_empty(), "{}: {v:?}", case.name);
        }
    }
}

/// Every named case that kills `m`, with what it reported.
fn named_kills(m: &Mutant) -> Vec<(&'static str, BTreeSet<Invariant>)> {
    let subject = m.subject();
    named::all()
        .into_iter()
        .map(|n| (n.id, violated(&*subject, &n.case)))
        .filter(|(_, inv)| !inv.is_empty())
        .collect()
}

#[test]
fn every_mutant_is_killed_with_an_expected_invariant() {
    let mut escaped = Vec::new();
    // Mutants below the events level need transport cuts and wire variety that only generated
    // cases give; the workspace's tests/zoo.rs hunts them at their own level.
    for m in zoo().into_iter().filter(|m| m.level == toolcert_subject::Level::Events) {
        let kills = named_kills(&m);
        let expected = |inv: &BTreeSet<Invariant>| m.expected.iter().any(|e| inv.contains(e));
        println!(
            "{} (expects {})",
            m.name,
            m.expected.iter().map(|i| i.id()).collect::<Vec<_>>().join(" | ")
        );
        for (id, inv) in &kills {
            let mark = if expected(inv) { "*" } else { " " };
            println!("  {mark} named/{id}: {}", show(inv));
        }
        if kills.iter().any(|(_, inv)| expected(inv)) {
            continue;
        }
        match hand_built(m.name) {
            Some(case) => {
                let inv = violated(&*m.subject(), &case);
                println!("  * {}: {}", case.name, show(&inv));
                if !expected(&inv) {
                    escaped.push(format!("{}: its hand-built case reports [{}]", m.name, show(&inv)));
                }
            }
            None => escaped.push(format!(
                "{}: no named case reports one of {:?} (kills: {:?})",
                m.name, m.expected, kills
            )),
        }
    }
    assert!(escaped.is_empty(), "mutants not caught as expected:\n{}", escaped.join("\n"));
}

#[test]
fn hand_built_cases_are_only_for_mutants_the_named_cases_miss() {
    for m in zoo().iter().filter(|m| hand_built(m.name).is_some()) {
        let caught = named_kills(m).iter().any(|(_, inv)| m.expected.iter().any(|e| inv.contains(e)));
        assert!(!caught, "{}: the named cases catch it now; drop its hand-built case", m.name);
    }
}

#[test]
fn the_zoo_is_well_formed() {
    let zoo = zoo();
    assert!(zoo.len() >= 20, "only {} mutants", zoo.len());
    let mut names = BTreeSet::new();
    for m in &zoo {
        assert!(names.insert(m.name), "{} twice", m.name);
        assert!(
            m.name
                .split('-')
                .all(|w| !w.is_empty() && w.bytes().all(|b| b.is_ascii_lowercase() || b.is_ascii_digit())),
            "{} is not kebab-case",
            m.name
        );
        assert_eq!(m.subject().name(), format!("builtin:mutant/{}", m.name));
        assert!(!m.expected.is_empty() && !m.bug.is_empty(), "{}", m.name);
        assert!(
            ["000 ", "002 ", "003 "].iter().any(|s| m.seed.starts_with(s)) && m.seed.contains(" / "),
            "{}",
            m.seed
        );
        assert_eq!(by_name(m.name).map(|b| b.name), Some(m.name));
    }
    assert!(by_name("no-such-mutant").is_none());
}
