//! The suite's version: a semver that changes when the rules of interpretation change (as
//! test262's does), and a content digest of what decides one setting's verdicts (the named
//! cases that setting runs, its generator configuration, and a fixed sample of cases as fed
//! with the oracle's expectations and verdicts: [`crate::Certification::verdict_sample`]), so
//! two reports are comparable only when both agree. The digest is per setting: a named case
//! added for one dialect changes the digest of the settings that run it, and no other; a
//! change to the oracle, a generator or a dialect changes the digest of every setting whose
//! sample it changes.

use serde::{Deserialize, Serialize};
use sha2::{Digest, Sha256};
use toolcert_gen::named::NamedCase;

/// The suite's semantic version. The major part changes when the rules of interpretation
/// change (what an invariant requires, how a case is judged); the minor part when cases or
/// invariants are added.
pub const SUITE_VERSION: &str = "0.1.0";

/// Which suite a report was judged by.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Suite {
    /// [`SUITE_VERSION`] of the toolcert that ran.
    pub version: String,
    /// `sha256:` and the hex SHA-256 of the setting's named cases (id, schema need, case, in
    /// suite order), its generator configuration and the SHA-256 of its verdict sample,
    /// serialised as JSON.
    pub digest: String,
}

impl Suite {
    /// The suite of a setting that runs the named cases `named` (in suite order) and
    /// generates with the configuration that serialises as `gen_config`.
    pub fn of<'a>(named: impl IntoIterator<Item = &'a NamedCase>, gen_config: &serde_json::Value) -> Suite {
        Suite::with_sample(named, gen_config, &[])
    }

    /// [`Suite::of`], with the SHA-256 of the setting's verdict sample (empty: none).
    pub fn with_sample<'a>(
        named: impl IntoIterator<Item = &'a NamedCase>,
        gen_config: &serde_json::Value,
        sample: &[u8],
    ) -> Suite {
        let named: Vec<serde_json::Value> = named
            .into_iter()
            .map(|n| serde_json::json!({"id": n.id, "needs_schema": n.needs_schema, "case": n.case}))
            .collect();
        // serde_json writes maps in key order and the list in suite order: the same suite
        // gives the same bytes on every machine.
        let content = if sample.is_empty() {
            serde_json::json!({"named": named, "generator": gen_config})
        } else {
            serde_json::json!({"named": named, "generator": gen_config, "verdicts": hex(sample)})
        };
        let bytes = serde_json::to_vec(&content).expect("the suite serialises");
        Suite { version: SUITE_VERSION.into(), digest: format!("sha256:{}", hex(&Sha256::digest(&bytes))) }
    }

    /// The major part of the version: reports of different majors were judged by different
    /// rules.
    pub fn major(&self) -> &str {
        self.version.split('.').next().unwrap_or("")
    }

    /// The digest shortened for people (`sha256:1a2b3c4d5e6f`).
    pub fn short_digest(&self) -> &str {
        let end = self.digest.char_indices().nth(19).map_or(self.digest.len(), |(i, _)| i);
        &self.digest[..end]
    }
}

fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_digest_is_the_sha256_of_the_serialised_suite() {
        let empty = Suite::of([], &serde_json::json!(null));
        let bytes = br#"{"generator":null,"named":[]}"#;
        // The FIPS 180-4 "abc" vector checks the crate is SHA-256; the second that the
        // digest is of the JSON above.
        assert_eq!(
            hex(&Sha256::digest(b"abc")),
            "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad"
        );
        assert_eq!(empty.digest, format!("sha256:{}", hex(&Sha256::digest(bytes))));
    }

    #[test]
    fn the_digest_depends_on_the_generator_configuration() {
        let named = toolcert_gen::named::all();
        let a = Suite::of(&named, &serde_json::json!({"schema": true}));
        let b = Suite::of(&named, &serde_json::json!({"schema": false}));
        assert_ne!(a.digest, b.digest);
        assert_eq!(a, Suite::of(&named, &serde_json::json!({"schema": true})));
        assert_eq!(a.major(), "0");
        assert!(a.short_digest().starts_with("sha256:") && a.short_digest().len() == 19);
    }

    #[test]
    fn a_changed_oracle_generator_or_dialect_changes_the_digest() {
        use crate::Certification;
        use toolcert_oracle::{judge_case, Profile};
        use toolcert_render::Rendered;
        use toolcert_scenario::{Case, Dialect};
        use toolcert_subject::driver::Speech;
        use toolcert_subject::{Level, Observation};
        let at = |level, dialect| Certification {
            level,
            speech: Speech { dialect, ..Speech::default() },
            profile: Profile { schema: false, ..Default::default() },
            ..Certification::default()
        };
        let c = at(Level::Bytes, Dialect::Anthropic);
        // The oracle with one rule relaxed: a call with no outcome is no longer ACC-ACCOUNT's.
        fn relaxed(
            case: &Case,
            r: &[Rendered<'_>],
            o: &[Observation],
            p: Profile,
        ) -> Vec<toolcert_oracle::Violation> {
            let mut v = judge_case(case, r, o, p);
            v.retain(|v| v.invariant != toolcert_oracle::Invariant::AccAccount);
            v
        }
        let digest = |c: &Certification, sample: &[u8]| {
            Suite::with_sample(&c.suite_named(), &serde_json::to_value(c.gen_config()).unwrap(), sample)
                .digest
        };
        let now = digest(&c, &c.verdict_sample());
        assert_eq!(now, digest(&c, &c.verdict_sample()), "the digest is deterministic");
        assert_ne!(now, digest(&c, &c.verdict_sample_judged(relaxed)), "a changed oracle stales the setting");
        // Another dialect feeds other bytes, so its sample differs.
        let chat = at(Level::Bytes, Dialect::OpenAiChat);
        assert_ne!(c.verdict_sample(), chat.verdict_sample());
        // The sample is what the digest holds: without it the digest is the older one.
        assert_ne!(now, digest(&c, &[]));
    }

    #[test]
    fn each_setting_digests_only_the_named_cases_it_runs() {
        use crate::Certification;
        use toolcert_oracle::Profile;
        use toolcert_scenario::Dialect;
        use toolcert_subject::driver::Speech;
        use toolcert_subject::Level;
        let at = |level, dialect| Certification {
            level,
            speech: Speech { dialect, ..Speech::default() },
            profile: Profile { schema: false, ..Default::default() },
            ..Certification::default()
        };
        let ids = |c: &Certification| c.suite_named().iter().map(|n| n.id).collect::<Vec<_>>();
        let anthropic = ids(&at(Level::Bytes, Dialect::Anthropic));
        let chat = ids(&at(Level::Bytes, Dialect::OpenAiChat));
        let responses = ids(&at(Level::Wire, Dialect::OpenAiResponses));
        let bedrock = ids(&at(Level::Bytes, Dialect::Bedrock));
        // A case carrying dialect events is in the suites of the dialects that read them only.
        for (id, homes) in [
            ("dialect/chat-prelude", vec![&chat]),
            ("dialect/item-done-only", vec![&responses]),
            ("dialect/unknown-delta-and-event", vec![&anthropic, &bedrock]),
            ("dialect/spliced-generation", vec![&anthropic, &responses, &bedrock]),
        ] {
            for suite in [&anthropic, &chat, &responses, &bedrock] {
                assert_eq!(suite.contains(&id), homes.iter().any(|h| std::ptr::eq(suite, *h)), "{id}");
            }
        }
        // A case written in one shape is lowered to the dialects of the other where its
        // meaning survives: the per-call lookup trace runs in Chat, the Chat reasoning before a
        // call in the per-call dialects; one whose meaning needs what a wire lacks is out (Chat
        // has no `done` repeating the arguments, Anthropic no interleaved blocks).
        for suite in [&anthropic, &chat, &responses, &bedrock] {
            assert!(suite.contains(&"deltas/lookup-order-a4471"));
            assert!(suite.contains(&"foreign/chat-reasoning-then-call"));
        }
        assert!(!chat.contains(&"deltas/done-differs-from-deltas"));
        assert!(responses.contains(&"deltas/done-differs-from-deltas"));
        assert!(
            !anthropic.contains(&"final/interleaved-disconnect")
                && chat.contains(&"final/interleaved-disconnect")
        );
        // The suite holds each case as the setting runs it: lowered to the dialect's shape.
        let in_chat = at(Level::Bytes, Dialect::OpenAiChat).suite_named();
        let lookup = in_chat.iter().find(|n| n.id == "deltas/lookup-order-a4471").unwrap();
        assert!(matches!(lookup.case.streams[0].shape, toolcert_scenario::Shape::Interleaved(_)));
        // The schema cases are out of a setting without the schema profile.
        let schema_only: Vec<&str> =
            toolcert_gen::named::all().into_iter().filter(|n| n.needs_schema).map(|n| n.id).collect();
        assert!(!schema_only.is_empty() && schema_only.iter().all(|id| !anthropic.contains(id)));
        // The events level speaks every case but a wire fault's (a second generation spliced
        // in needs a start event), and the hostile cases, which run in the hostile profiles
        // only.
        let events = ids(&Certification::default());
        let hostile =
            toolcert_gen::named::all().iter().filter(|n| toolcert_gen::named::is_hostile(n.id)).count();
        assert!(hostile >= 8);
        assert_eq!(events.len(), toolcert_gen::named::all().len() - 1 - hostile);
        assert!(!events.contains(&"dialect/spliced-generation"));
        assert!([&anthropic, &chat, &responses, &bedrock]
            .iter()
            .all(|s| !s.contains(&"hostile/index-proto")));
        let hostile_chat = Certification {
            speech: Speech {
                dialect: Dialect::OpenAiChat,
                quirks: toolcert_scenario::Quirks { hostile: true, ..Default::default() },
            },
            ..at(Level::Bytes, Dialect::OpenAiChat)
        };
        let in_hostile = ids(&hostile_chat);
        assert!(
            in_hostile.contains(&"hostile/index-proto") && in_hostile.contains(&"hostile/prototype-names")
        );
        let missing: Vec<_> = chat.iter().filter(|id| !in_hostile.contains(id)).collect();
        assert!(missing.is_empty(), "a hostile profile runs the dialect's cases too: {missing:?}");
        // So a case added to one setting's list changes that setting's digest only.
        let digest = |c: &Certification| {
            Suite::of(&c.suite_named(), &serde_json::to_value(c.gen_config()).unwrap()).digest
        };
        let a = at(Level::Bytes, Dialect::Anthropic);
        let mut grown = a.suite_named();
        grown.push(toolcert_gen::named::by_id("dialect/chat-prelude").unwrap());
        let gen = serde_json::to_value(a.gen_config()).unwrap();
        assert_ne!(Suite::of(&grown, &gen).digest, digest(&a));
        assert_eq!(digest(&a), digest(&at(Level::Bytes, Dialect::Anthropic)));
        assert_ne!(digest(&a), digest(&at(Level::Bytes, Dialect::OpenAiChat)));
    }
}
