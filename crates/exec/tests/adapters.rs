//! Certifies the adapter templates of `examples/adapters/` over the protocol, at every
//! level and dialect they declare, and shows the certification can fail.
//!
//! `TOOLCERT_EXEC_CASES` sets the generated cases per setting (default 5000).

mod common;

use std::time::Instant;

use common::{python_adapter, python_command, root, typescript_adapter};
use toolcert_exec::{ExecOptions, ExecSubject};
use toolcert_oracle::Invariant;
use toolcert_runner::{check, Certification, Setting};
use toolcert_scenario::{Block, Case, Dialect};
use toolcert_subject::driver::Speech;
use toolcert_subject::{Level, Subject};

/// Generated cases per setting.
fn cases() -> usize {
    std::env::var("TOOLCERT_EXEC_CASES").ok().and_then(|v| v.parse().ok()).unwrap_or(5000)
}

fn certify_every_setting(subject: &ExecSubject) {
    let mut failed = Vec::new();
    let all = Instant::now();
    for (level, speech) in subject.settings() {
        let started = Instant::now();
        let c = Certification {
            cases: cases(),
            level,
            speech,
            profile: subject.profile(),
            ..Certification::default()
        };
        let report = c.run(subject);
        eprintln!(
            "{}: {level}{}: {} cases in {:.1?} (conforms: {})",
            subject.implementation().name,
            if level == Level::Events { String::new() } else { format!(" {}", speech.dialect) },
            report.cases,
            started.elapsed(),
            report.conforms
        );
        if !report.conforms {
            failed.push(report.to_text(3));
        }
        // The templates say how each turn ended, so ACC-ENDING is judged, not n/a.
        let ending = report.invariants.iter().find(|i| i.id == Invariant::AccEnding).expect("a row");
        assert_ne!(ending.status, toolcert_runner::Status::NotExercised, "{level}: ACC-ENDING n/a");
    }
    let stats = subject.stats();
    eprintln!("{}: {stats}, in {:.1?}", subject.implementation().name, all.elapsed());
    assert!(failed.is_empty(), "{} does not conform:\n{}", subject.name(), failed.join("\n\n"));
    assert_eq!(stats.failures(), 0, "{}: {stats}; last: {:?}", subject.name(), subject.last_failure());
}

#[test]
fn python_template_conforms_at_every_declared_setting() {
    if common::cross_lang_skipped() {
        return;
    }
    let subject = python_adapter();
    assert_eq!(subject.levels(), Level::ALL, "the template declares every level");
    // Every SSE dialect: the packages have no decoder for a binary framing (Bedrock).
    let sse: Vec<Dialect> =
        Dialect::ALL.into_iter().filter(|&d| !toolcert_dialect::def(d).binary()).collect();
    assert_eq!(subject.implementation().known_dialects(), sse);
    assert!(subject.supports_schema());
    certify_every_setting(&subject);
}

#[test]
fn typescript_template_conforms_at_every_declared_setting() {
    if common::cross_lang_skipped() {
        return;
    }
    let subject = typescript_adapter();
    assert_eq!(subject.levels(), Level::ALL, "the template declares every level");
    // Every SSE dialect: the packages have no decoder for a binary framing (Bedrock).
    let sse: Vec<Dialect> =
        Dialect::ALL.into_iter().filter(|&d| !toolcert_dialect::def(d).binary()).collect();
    assert_eq!(subject.implementation().known_dialects(), sse);
    assert!(subject.supports_schema());
    certify_every_setting(&subject);
}

/// The packages' decoders read every server profile of their dialects alike (OpenAI Chat's by
/// the one rule of docs/SPEC.md §3), and the templates declare every wire behaviour (`QUIRKS`):
/// each profile of each SSE dialect is one of their settings, at the wire and the bytes level
/// (certified above with the rest).
#[test]
fn both_templates_are_certified_in_every_server_profile() {
    if common::cross_lang_skipped() {
        return;
    }
    for subject in [python_adapter(), typescript_adapter()] {
        let settings = subject.settings();
        for dialect in Dialect::ALL.into_iter().filter(|&d| !toolcert_dialect::def(d).binary()) {
            for p in dialect.profiles() {
                for level in [Level::Wire, Level::Bytes] {
                    let found = settings
                        .iter()
                        .any(|&(l, s)| l == level && s.dialect == dialect && s.quirks == p.quirks);
                    assert!(found, "{}: no {level} setting for {}", subject.name(), p.id());
                }
            }
        }
    }
}

/// Documents at the edge of RFC 8259, where a lenient parser (Python's json.loads,
/// JavaScript's JSON.parse) and serde_json disagree unless the template takes care.
const EDGE_DOCUMENTS: &[&str] = &[
    r#"{"a": -0}"#,
    r#"{"a": -0.0, "b": 0}"#,
    r#"{"a": 1.0, "b": 1, "c": 1e2, "d": 1E+2, "e": 1e-2}"#,
    r#"{"a": 12345678901234567890}"#,
    r#"{"a": 18446744073709551616}"#,
    r#"{"a": 123456789012345678901234567890}"#,
    r#"{"a": -9223372036854775808, "b": -9223372036854775809}"#,
    r#"{"a": 9007199254740993}"#,
    r#"{"a": 0.1, "b": 5e-324, "c": 1.7976931348623157e308, "d": 2.2250738585072014e-308}"#,
    r#"{"a": 1e400}"#,
    r#"{"a": -1e400}"#,
    r#"{"a": 1e-400}"#,
    r#"{"a": 0e99999999999999}"#,
    r#"{"a": NaN}"#,
    r#"{"a": Infinity}"#,
    r#"{"a": -Infinity}"#,
    r#"{"a": "\ud800"}"#,
    r#"{"a": "\udc00"}"#,
    r#"{"a": "\ud83d\ude00"}"#,
    r#"{"a": "\ud83d\u0041"}"#,
    r#"{"\ud800": 1}"#,
    r#"{"a": "\u00e9\/\b\f\n\r\t\"\\"}"#,
    "{\"a\": \"tab\there\"}",
    "{\"a\": \"del\u{7f} and nbsp\u{a0}\"}",
    r#"{"a": "\x"}"#,
    r#"{"a": "\u00g0"}"#,
    r#"{"a": 1, "a": 2}"#,
    " \n\r\t{\"a\" \n:\t1 } \r\n",
    "{\"a\": 1}\u{a0}",
    "\u{feff}{\"a\": 1}",
    r#"{"a": 1}{"b": 2}"#,
    r#"{"a": 1} x"#,
    r#"{"a": 01}"#,
    r#"{"a": 1.}"#,
    r#"{"a": .5}"#,
    r#"{"a": +1}"#,
    r#"{"a": -}"#,
    r#"{'a': 1}"#,
    r#"{"a": 1,}"#,
    r#"[1, 2]"#,
    r#""just a string""#,
    "null",
    "true",
    "17",
    r#"{"a": true, "b": false, "c": null, "d": [], "e": {}}"#,
    r#"{"a": tru}"#,
    r#"{"a": nul}"#,
    "",
    " ",
    "{",
];

/// A named case whose one call carries `doc`, split into fragments of `every` bytes.
fn case_with_arguments(doc: &str, every: usize) -> Case {
    let mut case = toolcert_gen::named::by_id("deltas/lookup-order-a4471").unwrap().case;
    let call = case.streams[0].blocks.iter_mut().find_map(|b| match b {
        Block::Call(c) => Some(c),
        _ => None,
    });
    let call = call.expect("the case has a call");
    call.arguments = doc.into();
    call.splits = (every..doc.len()).step_by(every).collect();
    case.name = format!("edge/{doc}");
    case
}

fn deep(n: usize) -> String {
    format!("{{\"a\": {}1{}}}", "[".repeat(n - 1), "]".repeat(n - 1))
}

/// The strict parse of each template agrees with serde_json, the oracle's, on every edge
/// document, at the events level and through SSE bytes.
fn agrees_with_serde_json(subject: &ExecSubject) {
    let mut docs: Vec<String> = EDGE_DOCUMENTS.iter().map(|d| d.to_string()).collect();
    docs.extend([
        deep(127),
        deep(128),
        deep(400),
        "1".repeat(400),
        format!("{{\"a\": 1{}}}", "0".repeat(400)),
    ]);
    let bytes = Setting {
        profile: subject.profile(),
        level: Level::Bytes,
        speech: Speech { dialect: Dialect::Anthropic, ..Speech::default() },
        ..Setting::default()
    };
    let settings = [Setting { profile: subject.profile(), ..Setting::default() }, bytes];
    let mut failures = Vec::new();
    for doc in &docs {
        for every in [1, 4, usize::MAX] {
            let case = case_with_arguments(doc, every.min(doc.len().max(1)));
            for setting in settings {
                let checked = check(subject, &case, setting);
                if !checked.violations.is_empty() {
                    failures.push(format!("{} ({}): {:?}", case.name, setting.level, checked.violations));
                }
            }
        }
    }
    assert!(failures.is_empty(), "{}:\n{}", subject.name(), failures.join("\n"));
}

#[test]
fn the_python_templates_strict_parse_agrees_with_serde_json() {
    if common::cross_lang_skipped() {
        return;
    }
    agrees_with_serde_json(&python_adapter());
}

#[test]
fn the_typescript_templates_strict_parse_agrees_with_serde_json() {
    if common::cross_lang_skipped() {
        return;
    }
    agrees_with_serde_json(&typescript_adapter());
}

/// The Python template with one line of the `toolcert-adapter` package it runs on changed:
/// a copy of the package in a scratch directory, put first on `PYTHONPATH`.
fn python_mutant(name: &str, from: &str, to: &str) -> ExecSubject {
    let package = root().join("python/toolcert_adapter");
    let dir = std::env::temp_dir().join(format!("toolcert-exec-{name}-{}", std::process::id()));
    let copy = dir.join("toolcert_adapter");
    std::fs::create_dir_all(&copy).unwrap();
    let mut patched = 0;
    for entry in std::fs::read_dir(&package).unwrap() {
        let path = entry.unwrap().path();
        if path.extension().is_none_or(|e| e != "py") {
            continue;
        }
        let mut source = std::fs::read_to_string(&path).unwrap();
        if source.contains(from) {
            source = source.replacen(from, to, 1);
            patched += 1;
        }
        std::fs::write(copy.join(path.file_name().unwrap()), source).unwrap();
    }
    assert_eq!(patched, 1, "exactly one module of the package has `{from}`");
    let cmd = format!("PYTHONPATH={} {}", common::shell_quote(&dir), common::python_command());
    let subject = ExecSubject::spawn(&cmd, ExecOptions::default()).unwrap();
    // It answered the handshake: the interpreter has read the files.
    let _ = std::fs::remove_dir_all(&dir);
    subject
}

#[test]
fn a_template_with_a_seeded_bug_fails_certification() {
    if common::cross_lang_skipped() {
        return;
    }
    // Per-fragment trim: the seeds' first story.
    let trim = python_mutant(
        "trim",
        r#"call.parts.append(e["fragment"])"#,
        r#"call.parts.append(e["fragment"].strip())"#,
    );
    let report = Certification { cases: 300, profile: trim.profile(), ..Certification::default() }.run(&trim);
    assert!(!report.conforms);
    assert!(report.failing(Invariant::AccFidelity).is_some(), "{}", report.to_text(3));
    // Incremental UTF-8 replaced by a per-chunk decode: only the bytes level can tell.
    let per_chunk = python_mutant(
        "per-chunk-utf8",
        r#"text = self.utf8.decode(chunk[start:end], False)"#,
        r#"text = chunk[start:end].decode("utf-8", "replace")"#,
    );
    let bytes = Certification {
        cases: 500,
        level: Level::Bytes,
        speech: Speech { dialect: Dialect::Anthropic, ..Speech::default() },
        profile: per_chunk.profile(),
        ..Certification::default()
    };
    let report = bytes.run(&per_chunk);
    assert!(!report.conforms, "a per-chunk UTF-8 decode is caught at the bytes level");
    let events = Certification { cases: 300, profile: per_chunk.profile(), ..Certification::default() };
    assert!(events.run(&per_chunk).conforms, "and is invisible at the events level");
}

/// `toolcert smoke`'s report of an adapter.
fn smoke(subject: &ExecSubject) -> toolcert_runner::SmokeReport {
    let mut report = toolcert_runner::smoke_with(subject, &subject.settings(), subject.profile());
    report.implementation = Some(subject.implementation().to_string());
    report.stats = Some(subject.stats().to_string());
    report
}

#[test]
fn the_smoke_test_passes_both_templates_and_fails_a_broken_one() {
    if common::cross_lang_skipped() {
        return;
    }
    for subject in [python_adapter(), typescript_adapter()] {
        let report = smoke(&subject);
        let text = report.to_string();
        assert!(report.ok, "{text}");
        // (Not a count of cases: it grows with the named cases.)
        let last = text.lines().last().unwrap_or_default();
        assert!(last.starts_with("smoke: ok: ") && last.ends_with(" passed, 0 failed, 0 skipped"), "{text}");
        assert!(text.contains("pass  bytes/openai-chat"), "{text}");
    }
    // Any subject: the reference, in process.
    let reference = toolcert_runner::smoke_with(
        &toolcert_reference::ReferenceSubject,
        &[
            (Level::Events, Speech::default()),
            (Level::Bytes, Speech { dialect: Dialect::OpenAiChat, ..Speech::default() }),
        ],
        toolcert_oracle::Profile { schema: true, ..Default::default() },
    );
    assert!(reference.ok, "{reference}");
    let broken = python_mutant("abandon", r#"return failed("abandoned")"#, r#"pass"#);
    let report = smoke(&broken);
    let text = report.to_string();
    assert!(!report.ok, "{text}");
    assert!(text.contains("FAIL") && text.contains("ACC-ABANDON"), "{text}");
    assert!(text.contains("smoke: FAILED"), "{text}");
}

#[test]
fn the_python_command_can_be_given_relative_to_a_directory() {
    if common::cross_lang_skipped() {
        return;
    }
    let options =
        ExecOptions { dir: Some(root().join("examples/adapters/python")), ..ExecOptions::default() };
    let subject = ExecSubject::spawn("python3 adapter.py", options).unwrap();
    assert_eq!(subject.implementation().name, "toolcert-adapter-python");
    assert_eq!(subject.name(), "exec:python3 adapter.py");
    let _ = python_command();
}
