//! Coverage that reads the renderings and the documents the check made labels every case
//! exactly as coverage that makes them itself: the shortcut certify takes must not move a count.

use toolcert::gen::strategy::{case_strategy, generated_case};
use toolcert::gen::{classify, GenConfig};
use toolcert::oracle::Profile;
use toolcert::reference::ReferenceSubject;
use toolcert::runner::{check_classified, Certification, Setting};

fn agree(profile: Profile, seed: u64) {
    let run = Certification { profile, ..Certification::default() };
    let strategy = case_strategy(&GenConfig::default());
    let mut read = 0;
    for k in 0..2000 {
        let case = generated_case(&strategy, seed, k, format!("gen/{seed}/{k}"));
        let setting = Setting { chunking: false, ..run.setting() };
        let (checked, coverage) = check_classified(&ReferenceSubject, &case, setting);
        for (s, turn) in case.streams.iter().enumerate() {
            read += (0..turn.blocks.len())
                .filter(|&b| checked.parsed.get(&checked.observations, s, b).is_some())
                .count();
        }
        assert_eq!(coverage, classify(&case), "case {k} of seed {seed}");
    }
    // The shortcut is taken, not just harmless.
    assert!(read > 500, "only {read} documents read from the oracle's parses");
}

#[test]
fn with_schemas() {
    agree(Profile { schema: true, ..Default::default() }, 3);
}

#[test]
fn without_schemas() {
    agree(Profile { schema: false, ..Default::default() }, 4);
}
