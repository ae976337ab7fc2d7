//! The reference conforms at every server profile of the per-call dialects (Anthropic and
//! OpenAI Responses), at the wire and bytes levels: the named cases and generated ones, each
//! profile's shapes sent by its renderer and read by the one decoder of its dialect
//! (docs/SPEC.md, "Server profiles"). `TOOLCERT_PROFILE_CASES` sets the generated cases per
//! setting (`toolcert certify` runs a thousand).

use toolcert::reference::ReferenceSubject;
use toolcert::scenario::{Dialect, Quirks};
use toolcert::subject::driver::Speech;
use toolcert::subject::Level;
use toolcert::Certification;

fn cases() -> usize {
    std::env::var("TOOLCERT_PROFILE_CASES").ok().and_then(|n| n.parse().ok()).unwrap_or(60)
}

fn certify(dialect: Dialect) {
    let profiles: Vec<Quirks> = dialect.profiles().map(|p| p.quirks).collect();
    assert_eq!(
        toolcert::dialect::def(dialect).quirk_profiles(),
        profiles.as_slice(),
        "{dialect}: every profile of the table is a setting"
    );
    assert!(profiles.len() > 1, "{dialect}: its server profiles");
    for quirks in profiles {
        let name = dialect.profile_of(quirks).map_or_else(String::new, |p| p.id());
        for level in [Level::Wire, Level::Bytes] {
            let run = Certification {
                cases: cases(),
                seed: 7,
                level,
                speech: Speech { dialect, quirks },
                ..Default::default()
            };
            let report = run.run(&ReferenceSubject);
            assert!(!report.ran_nothing(), "{name} at {level:?}: no case ran");
            assert!(report.conforms, "{name} at {level:?}:\n{}", report.to_text(3));
        }
    }
}

#[test]
fn the_reference_conforms_at_every_anthropic_profile() {
    certify(Dialect::Anthropic);
}

#[test]
fn the_reference_conforms_at_every_responses_profile() {
    certify(Dialect::OpenAiResponses);
}
