//! The oracle reads a dispatched call's document against the dispatched value instead of
//! parsing it into a value of its own (`toolcert_oracle::walk`): its verdicts, every word of
//! them, and the parses it hands on must be those of the oracle that parses every document
//! (`judge_case_parsing_all`, the test oracle), for the reference and for every mutant of the
//! zoo that is fed events.

use toolcert::gen::strategy::{case_strategy, generated_case};
use toolcert::gen::GenConfig;
use toolcert::oracle::{judge_case_parsed, judge_case_parsing_all, parse_document, Profile};
use toolcert::reference::ReferenceSubject;
use toolcert::render::render;
use toolcert::runner::{check, Setting};
use toolcert::scenario::Block;
use toolcert::subject::{Level, Subject};

fn agree(subject: &dyn Subject, seed: u64, cases: usize, profile: Profile) -> usize {
    let strategy = case_strategy(&GenConfig::default());
    let mut read = 0;
    for k in 0..cases as u64 {
        let case = generated_case(&strategy, seed, k, format!("gen/{seed}/{k}"));
        let setting = Setting { chunking: false, attribute: false, ..Setting::events(profile) };
        let observed = check(subject, &case, setting).observations;
        let neutral: Vec<_> = case.streams.iter().map(render).collect();
        let (walked, exercised, parsed) = judge_case_parsed(&case, &neutral, &observed, profile);
        let (parsing, exercised_parsing) = judge_case_parsing_all(&case, &neutral, &observed, profile);
        assert_eq!(walked, parsing, "{} case {k} of seed {seed}", subject.name());
        assert_eq!(exercised, exercised_parsing, "{} case {k} of seed {seed}", subject.name());
        for (s, turn) in case.streams.iter().enumerate() {
            for (b, block) in turn.blocks.iter().enumerate() {
                let Block::Call(c) = block else { continue };
                if let Some(got) = parsed.get(&observed, s, b) {
                    read += 1;
                    assert_eq!(got, parse_document(&c.arguments).as_ref(), "case {k} stream {s} block {b}");
                }
            }
        }
    }
    read
}

#[test]
fn the_reference_is_judged_as_by_parsing_every_document() {
    for (seed, profile) in [
        (11, Profile { schema: true, ..Default::default() }),
        (12, Profile { schema: false, ..Default::default() }),
    ] {
        let read = agree(&ReferenceSubject, seed, 1500, profile);
        assert!(read > 500, "only {read} parses handed on");
    }
}

#[test]
fn every_mutant_is_judged_as_by_parsing_every_document() {
    for m in toolcert::mutants::zoo().iter().filter(|m| m.level == Level::Events) {
        agree(&*m.subject(), 21, 150, Profile { schema: true, ..Default::default() });
    }
}
