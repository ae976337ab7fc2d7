//! The adapter packages' reference decoders (`python/`, `node/`) read every server profile of
//! the per-call dialects as the Rust decoders do (docs/SPEC.md, "Server profiles of the
//! per-call dialects"): the adapter templates conform at each Anthropic and Responses profile,
//! wire and bytes, though they declare only the providers' own streams.
//!
//! `TOOLCERT_EXEC_PROFILE_CASES` sets the generated cases per setting (default 100).

mod common;

use common::{python_adapter, typescript_adapter};
use toolcert_exec::ExecSubject;
use toolcert_runner::Certification;
use toolcert_scenario::Dialect;
use toolcert_subject::driver::Speech;
use toolcert_subject::{Level, Subject};

fn cases() -> usize {
    std::env::var("TOOLCERT_EXEC_PROFILE_CASES").ok().and_then(|v| v.parse().ok()).unwrap_or(100)
}

fn conforms_at_every_per_call_profile(subject: &ExecSubject) {
    let mut failed = Vec::new();
    for dialect in [Dialect::Anthropic, Dialect::OpenAiResponses] {
        for p in dialect.profiles().skip(1) {
            for level in [Level::Wire, Level::Bytes] {
                let speech = Speech { dialect, quirks: p.quirks };
                let run = Certification {
                    cases: cases(),
                    level,
                    speech,
                    profile: subject.profile(),
                    ..Default::default()
                };
                let report = run.run(subject);
                if !report.conforms {
                    failed.push(format!("{} at {level}:\n{}", p.id(), report.to_text(2)));
                }
            }
        }
    }
    assert!(failed.is_empty(), "{} does not conform:\n{}", subject.name(), failed.join("\n\n"));
}

#[test]
fn python_package_reads_every_per_call_profile() {
    if common::cross_lang_skipped() {
        return;
    }
    conforms_at_every_per_call_profile(&python_adapter());
}

#[test]
fn node_package_reads_every_per_call_profile() {
    if common::cross_lang_skipped() {
        return;
    }
    conforms_at_every_per_call_profile(&typescript_adapter());
}
