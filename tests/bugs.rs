//! Bugs, not symptoms (docs/SPEC.md, "Bugs"): the findings one cause explains are reported as
//! one bug, under an id that comes from what went wrong and the shape of its shrunk trigger,
//! never from the seed, the case count or the grade the ending gave it.

use toolcert::Certification;

fn run(mutant: &str, cases: usize, seed: u64) -> toolcert::Report {
    let subject = toolcert::subject_by_name(&format!("builtin:mutant/{mutant}")).expect("a zoo mutant");
    Certification { cases, seed, ..Certification::default() }.run(&*subject)
}

#[test]
fn the_name_keyed_mutant_is_at_most_three_bugs_led_by_the_merge() {
    let r = run("name-keyed", 2000, 1);
    assert!(r.findings.len() > 3, "the symptoms are many: {}", r.findings.len());
    assert!(r.bugs.len() <= 3, "{} bugs:\n{}", r.bugs.len(), r.findings_text(0));
    let first = &r.bugs[0];
    assert_eq!(first.invariant, toolcert::oracle::Invariant::AccIdentity, "{first:?}");
    assert!(first.title.contains("merged"), "{first:?}");
    assert!(first.symptoms.len() > 1, "{first:?}");
    // Every finding is a symptom of exactly one bug.
    for f in &r.findings {
        let owners = r.bugs.iter().filter(|b| b.symptoms.contains(&f.id)).count();
        assert_eq!(owners, 1, "{} is a symptom of {owners} bugs", f.id);
    }
}

#[test]
fn a_bug_keeps_its_id_across_seeds_and_case_counts() {
    let a = run("name-keyed", 300, 1);
    let b = run("name-keyed", 600, 2);
    assert_eq!(a.bugs[0].id, b.bugs[0].id, "{:?}\n{:?}", a.bugs[0], b.bugs[0]);
}

#[test]
fn bugs_of_different_mutants_have_different_ids() {
    let a = run("name-keyed", 300, 1);
    let b = run("fragment-trim", 300, 1);
    for x in &a.bugs {
        assert!(b.bugs.iter().all(|y| y.id != x.id), "{} in both", x.id);
    }
}

#[test]
fn the_reference_has_no_bug() {
    let subject = toolcert::subject_by_name("builtin:reference").expect("the reference");
    let r = Certification { cases: 300, ..Certification::default() }.run(&*subject);
    assert!(r.bugs.is_empty() && r.findings.is_empty(), "{:?}", r.bugs);
}

/// Tier 6 (exact numbers) takes what a number the double cannot hold does to a subject that
/// parses through doubles: `differs`, and tier 1 passes (docs/SPEC.md, "Tiers").
#[test]
fn numbers_through_a_double_differ_in_tier_six_not_tier_one() {
    let r = run("numbers-through-double", 300, 1);
    let tier = |name: &str| r.tiers.iter().find(|t| t.name == name).cloned().expect("a tier");
    let numbers = tier("exact numbers");
    assert_eq!(numbers.verdict, "differs", "{numbers:?}");
    assert!(!numbers.findings.is_empty(), "{numbers:?}");
    let standard = tier("standard streams");
    assert!(
        standard.findings.iter().all(|f| !numbers.findings.contains(f)),
        "a number changed is counted in tier 1 too: {standard:?}"
    );
}

/// One bug, whatever it did to the cases it met (docs/SPEC.md, "Bugs"): a fault the client
/// misses also shows as a refusal with another fault's class when the case carried two, and
/// as a dispatched call of the faulty turn; a class raised where nothing is wrong also shows
/// as a faulty stream refused with that class; an unannounced call's outcome and a cut turn's
/// ending are what the case happened to be.
#[test]
fn a_mutant_whose_one_bug_shows_many_ways_is_one_bug() {
    use toolcert::oracle::Invariant::*;
    for (mutant, expected) in [
        ("duplicate-ignored", AccProtocol),
        ("done-ignored", AccProtocol),
        ("fragment-after-stop-accepted", AccProtocol),
        ("index-as-position", AccProtocol),
        ("dispatch-at-call-stop", AccTruncation),
        ("empty-args-dropped", AccAccount),
        ("args-in-text", AccText),
        ("shared-across-streams", AccIsolation),
    ] {
        let r = run(mutant, 200, 1);
        assert!(r.findings.len() > 1, "{mutant}: a bug of several symptoms: {}", r.findings_text(0));
        let ids: Vec<&str> = r.bugs.iter().map(|b| b.title.as_str()).collect();
        assert_eq!(r.bugs.len(), 1, "{mutant}: {ids:?}\n{}", r.findings_text(0));
        assert_eq!(r.bugs[0].invariant, expected, "{mutant}: {:?}", r.bugs[0]);
        assert_eq!(r.bugs[0].symptoms.len(), r.findings.len(), "{mutant}");
    }
}
