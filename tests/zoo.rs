//! The harness proves itself: every mutant in the zoo dies on every seed, fast, caught by
//! an invariant that names its bug, while the reference and the unmutated base never fail.

use toolcert::oracle::Profile;
use toolcert::zoo::Zoo;
use toolcert::Certification;

const SEEDS: [u64; 5] = [1, 2, 3, 4, 5];

#[test]
fn every_mutant_dies_on_every_seed_with_an_expected_invariant() {
    let zoo = Zoo { seeds: SEEDS.to_vec(), max_cases: 200 };
    let rows = zoo.run(&mut |_| {});
    assert!(rows.len() >= 20, "the zoo has {} mutants", rows.len());
    let mut problems = Vec::new();
    for r in &rows {
        if !r.killed {
            problems.push(format!(
                "{} survives seeds {:?} within 200 cases (at profiles {:?})",
                r.mutant, r.survived_seeds, r.survived_profiles
            ));
        } else if !r.expected_caught {
            problems.push(format!(
                "{} is caught only by unexpected invariants on some seed: {:?} (expected one of {:?})",
                r.mutant, r.invariants, r.expected
            ));
        } else if !r.bug_expected {
            problems.push(format!(
                "{} shows no bug with an expected symptom ({:?}) in its certification: bugs {:?}",
                r.mutant, r.expected, r.bugs
            ));
        } else if r.cases_to_detection_median > median_allowed(&r.mutant) {
            problems.push(format!(
                "{} needs a median of {} cases (at most {})",
                r.mutant,
                r.cases_to_detection_median,
                median_allowed(&r.mutant)
            ));
        }
    }
    assert!(problems.is_empty(), "{}\n\n{}", problems.join("\n"), toolcert::zoo::to_text(&rows, &zoo));
}

/// The most cases a mutant's median detection may take. The mutants of the widened space
/// each show on one class of input that the default mix holds in a few percent
/// of cases (more would crowd out the rest); the wider mix also makes the classes some older
/// mutants need rarer (two documents end to end, no argument bytes) or moved the cases'
/// random stream under them (the replayed announcement: median 28 over seeds 1-5; each case
/// derived from its seed and position alone moved it again). They
/// must all still die within 200 cases on every seed.
fn median_allowed(mutant: &str) -> usize {
    const WIDENED: &[&str] = &[
        "buffer-capped-4k",
        "args-nfc-normalised",
        "numbers-through-double",
        "lenient-numbers",
        "whitespace-as-empty",
        "first-key-wins",
        "depth-limit-128",
        "objects-only",
        "lone-surrogate-replaced",
        "incomplete-event-dispatched",
        "raw-decode",
        "empty-args-unparseable",
        "duplicate-ignored",
        "duplicate-resets",
        "duplicate-phantom",
        "duplicate-concatenates",
        // Shows only on a turn without calls that was cut or broke off (about 3% of cases).
        "text-held-for-the-message",
        // Dialect events: a mismatch on output_item.done alone (about 4% of per-call cases),
        // a `[DONE]` after an unfinished Chat stream that still has a live call, a usage chunk
        // without choices (complete Chat turns only), `[DONE]` with nothing before it.
        "item-done-trusted",
        "done-as-finish",
        "usage-without-choices-refused",
        "done-alone-malformed",
        // The done mismatch: a median of 29-30 over seeds 1-5 once the dialect events moved the
        // cases' random stream (17-19 over seeds 1-20); responses-done-dropped now shows only
        // on a mismatch in function_call_arguments.done, since the decoder compares an
        // output_item.done that disagrees itself.
        "done-ignored",
        "done-trusted",
        "responses-done-dropped",
        // The Responses done mismatch: foreign blocks drawn at the end of each turn's plan
        // moved the random stream under it (medians 21-30 over seeds 1-5, 12-16 over 1-20).
        // Foreign blocks: each kind is in a few percent of cases, some in one family only
        // (medians 14-31 over seeds 1-20, at most 123).
        "server-tool-dispatched",
        "thinking-as-text",
        "custom-input-as-json",
        "refusal-as-text",
        // A model-written invalid escape or raw control character: two of the argument
        // document's forms, in a few percent of cases (median 38 over seeds 1-5, 44 over 1-20).
        "bad-escape-crashes",
        // Gemini: a call without argument bytes, sent whole in Vertex's pieces, is in a few
        // percent of generated turns (median 53 over seeds 1-5).
        "gemini-no-args-dropped",
    ];
    if WIDENED.contains(&mutant) {
        80
    } else {
        20
    }
}

/// A connection dropped inside an event is caught in every dialect, not only the one the
/// zoo certifies the mutant in.
#[test]
fn an_incomplete_last_event_acted_on_is_caught_in_every_dialect() {
    let m = toolcert::mutants::by_name("incomplete-event-dispatched").unwrap();
    for dialect in toolcert::scenario::Dialect::ALL {
        let m = toolcert::mutants::Mutant { dialect, ..m };
        let row = Zoo { seeds: SEEDS.to_vec(), max_cases: 200 }.run_one(&m);
        assert!(row.killed && row.expected_caught, "{dialect}: {row:?}");
    }
}

#[test]
fn the_reference_and_the_base_are_never_flagged() {
    for subject in [toolcert::subject_by_name("builtin:reference").unwrap(), toolcert::mutants::base()] {
        for seed in SEEDS {
            let run = Certification {
                cases: 200,
                seed,
                named: false,
                profile: Profile { schema: true, ..Default::default() },
                ..Default::default()
            };
            if let Some(found) = run.hunt(&*subject, &[]) {
                panic!(
                    "{} flagged on seed {seed} after {} cases:\n{}{:#?}",
                    subject.name(),
                    found.cases,
                    toolcert::render::transcript(&found.case),
                    found.violations
                );
            }
        }
    }
}

#[test]
fn the_name_keyed_counterexample_is_two_same_tool_calls_in_a_handful_of_events() {
    let m = toolcert::mutants::by_name("name-keyed").unwrap();
    let row = Zoo { seeds: vec![1], max_cases: 200 }.run_one(&m);
    let (case, violations) = row.counterexample.expect("killed");
    let calls: Vec<_> = case.streams[0].calls().collect();
    assert_eq!(case.streams.len(), 1);
    assert_eq!(calls.len(), 2, "{}", toolcert::render::transcript(&case));
    assert_eq!(calls[0].name, calls[1].name);
    assert!(row.counterexample_events <= 10, "{} events", row.counterexample_events);
    assert!(violations.iter().any(|v| v.invariant == toolcert::Invariant::AccIdentity));
}

/// Each dialect-event mutant is caught only by its class: on the same generated cases with
/// that dialect event taken out of every turn, it conforms at its level.
#[test]
fn dialect_event_mutants_live_without_their_class() {
    use toolcert::gen::{GenConfig, ShapeMix};
    use toolcert::runner::{check, Setting};
    use toolcert::scenario::{Dialect, MismatchIn, Turn};
    use toolcert::subject::driver::Speech;
    use toolcert::subject::Level;
    type Strip = fn(&mut Turn);
    let mutants: [(&str, Strip); 7] = [
        ("item-done-trusted", |t| t.wire.mismatch_in = MismatchIn::Both),
        ("item-done-only-lost", |t| t.wire.item_done_only.clear()),
        ("unknown-delta-fails", |t| t.wire.unknown.clear()),
        ("chat-prelude-as-error", |t| t.wire.chat_prelude = false),
        ("done-as-finish", |t| t.wire.done_without_finish = false),
        ("usage-without-choices-refused", |t| t.wire.usage_without_choices = false),
        ("done-alone-malformed", |t| t.wire.done_without_finish = false),
    ];
    for (name, strip) in mutants {
        let m = toolcert::mutants::by_name(name).unwrap();
        let subject = m.subject();
        let shape_mix =
            if m.dialect == Dialect::OpenAiChat { ShapeMix::Interleaved } else { ShapeMix::PerCall };
        let cfg = GenConfig { shape_mix, ..GenConfig::default() };
        let setting = Setting {
            level: Level::Wire,
            speech: Speech { dialect: m.dialect, quirks: m.quirks },
            ..Setting::events(Profile { schema: true, ..Default::default() })
        };
        let (mut with, mut without) = (0, 0);
        for mut case in toolcert::gen::cases(&cfg, 1).take(300) {
            with += usize::from(!check(&*subject, &case, setting).violations.is_empty());
            case.streams.iter_mut().for_each(strip);
            let v = check(&*subject, &case, setting).violations;
            without += usize::from(!v.is_empty());
            assert!(v.is_empty(), "{name} fails {} without its class: {v:?}", case.name);
        }
        assert!(with > 0 && without == 0, "{name}: {with} failing cases with its class");
    }
}

/// The server-profile mutants are caught only where a server sends their shape: on the same
/// generated cases in the plain openai-chat profile they conform, and in their own profile
/// they fail (docs/SPEC.md, "Server profiles").
#[test]
fn server_profile_mutants_live_in_the_plain_profile() {
    use toolcert::gen::{GenConfig, ShapeMix};
    use toolcert::runner::{check, Setting};
    use toolcert::scenario::Quirks;
    use toolcert::subject::driver::Speech;
    use toolcert::subject::Level;
    for name in ["finish-repeats-as-calls", "missing-index-as-zero"] {
        let m = toolcert::mutants::by_name(name).unwrap();
        let subject = m.subject();
        let cfg = GenConfig { shape_mix: ShapeMix::Interleaved, ..GenConfig::default() };
        let at = |quirks| Setting {
            level: Level::Wire,
            speech: Speech { dialect: m.dialect, quirks },
            ..Setting::events(Profile { schema: true, ..Default::default() })
        };
        let (mut own, mut plain) = (0, 0);
        for case in toolcert::gen::cases(&cfg, 1).take(300) {
            own += usize::from(!check(&*subject, &case, at(m.quirks)).violations.is_empty());
            let v = check(&*subject, &case, at(Quirks::PLAIN)).violations;
            plain += usize::from(!v.is_empty());
            assert!(v.is_empty(), "{name} fails {} in the plain profile: {v:?}", case.name);
        }
        assert!(own > 0 && plain == 0, "{name}: {own} failing cases in its profile");
    }
}
