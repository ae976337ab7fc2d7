//! The server profiles agree everywhere they are named: docs/SPEC.md's table ("Server
//! profiles"), the profile table the settings are built from (`toolcert::scenario::PROFILES`),
//! the settings a run over everything certifies, and `toolcert certify --help`.

use std::process::Command;

use toolcert::scenario::{Dialect, PROFILES};

/// The rows of SPEC's profile table: dialect, profile, servers, what it sends, faults, sources.
fn spec_rows() -> Vec<Vec<String>> {
    let spec =
        std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/docs/SPEC.md")).expect("SPEC.md reads");
    let section = spec.split("### Server profiles").nth(1).expect("SPEC.md has a Server profiles section");
    section
        .lines()
        .skip_while(|l| !l.starts_with("| dialect | profile |"))
        .skip(2)
        .take_while(|l| l.starts_with('|'))
        .map(|l| l.trim_matches('|').split(" | ").map(|c| c.trim().to_owned()).collect())
        .collect()
}

/// With `TOOLCERT_BLESS=1`: rewrites SPEC's table rows from the profile table, keeping each
/// row's faults column (the one column SPEC alone holds).
fn bless(rows: &[Vec<String>]) {
    let path = concat!(env!("CARGO_MANIFEST_DIR"), "/docs/SPEC.md");
    let spec = std::fs::read_to_string(path).unwrap();
    let old: String = rows.iter().map(|r| format!("| {} |\n", r.join(" | "))).collect();
    let new: String = PROFILES
        .iter()
        .map(|p| {
            let faults = rows
                .iter()
                .find(|r| r[0] == p.dialect.name() && r[1] == p.name)
                .map_or("all of §3's", |r| r[4].as_str());
            format!(
                "| {} | {} | {} | {} | {faults} | {} |\n",
                p.dialect.name(),
                p.name,
                p.servers,
                p.shapes,
                p.sources
            )
        })
        .collect();
    assert!(spec.contains(&old), "the table's rows are contiguous");
    std::fs::write(path, spec.replacen(&old, &new, 1)).unwrap();
}

#[test]
fn the_spec_table_is_the_profile_table() {
    let rows = spec_rows();
    if std::env::var_os("TOOLCERT_BLESS").is_some() {
        bless(&rows);
        return;
    }
    assert_eq!(rows.len(), PROFILES.len(), "one SPEC row per profile, no more");
    for (row, p) in rows.iter().zip(PROFILES) {
        assert_eq!(row.len(), 6, "{row:?}");
        assert_eq!((row[0].as_str(), row[1].as_str()), (p.dialect.name(), p.name), "the same order");
        assert_eq!(row[2], p.servers, "{}: servers", p.id());
        assert_eq!(row[3], p.shapes, "{}: what it sends", p.id());
        assert_eq!(row[5], p.sources, "{}: sources", p.id());
        assert!(!row[4].is_empty(), "{}: says which faults its wire carries", p.id());
    }
}

#[test]
fn a_run_over_everything_certifies_every_profile_of_every_dialect() {
    use toolcert::subject::Subject;
    let settings = toolcert::reference::ReferenceSubject.settings();
    for p in PROFILES {
        for level in [toolcert::subject::Level::Wire, toolcert::subject::Level::Bytes] {
            assert!(
                settings.iter().any(|(l, s)| *l == level && s.dialect == p.dialect && s.quirks == p.quirks),
                "{} at the {level} level",
                p.id()
            );
        }
    }
    for d in Dialect::ALL {
        assert!(
            d.profiles().next().is_some_and(|p| p.quirks.is_plain()),
            "{d}: its provider's own profile first"
        );
    }
}

#[test]
fn certify_help_lists_every_profile_and_a_wrong_name_is_a_usage_error() {
    let out = Command::new(env!("CARGO_BIN_EXE_toolcert")).args(["certify", "--help"]).output().unwrap();
    let help = String::from_utf8(out.stdout).unwrap();
    for d in Dialect::ALL {
        let line = format!("{}: {}", d.name(), d.profiles().map(|p| p.name).collect::<Vec<_>>().join(", "));
        assert!(help.contains(&line), "--help lists {d}'s profiles as `{line}`:\n{help}");
    }
    let out = Command::new(env!("CARGO_BIN_EXE_toolcert"))
        .args(["certify", "--dialect", "openai-chat", "--profile", "no-such-server", "--cases", "0"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    let err = String::from_utf8(out.stderr).unwrap();
    assert!(
        err.contains("unknown server profile `no-such-server`") && err.contains("openai-chat/vllm"),
        "{err}"
    );
}

#[test]
fn one_profile_runs_alone_and_says_so() {
    let out = Command::new(env!("CARGO_BIN_EXE_toolcert"))
        .args([
            "certify",
            "--level",
            "wire",
            "--profile",
            "openai-chat/deepseek",
            "--cases",
            "20",
            "--format",
            "json",
        ])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(0), "{}", String::from_utf8_lossy(&out.stderr));
    // One setting: its report alone.
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert!(v.get("settings").is_none(), "one setting, not several: {v}");
    assert_eq!(v["profile"], "deepseek");
    assert_eq!(v["dialect"], "openai-chat");
    assert_eq!(v["level"], "wire");
}

/// The adapter packages and the SDK adapters list every wire behaviour, by the flag names the
/// protocol's `configure` sends (an adapter declares the ones it reads; an SDK's, all).
#[test]
fn every_list_of_quirks_outside_rust_names_every_flag() {
    let root = env!("CARGO_MANIFEST_DIR");
    for file in [
        "python/toolcert_adapter/protocol.py",
        "node/src/protocol.js",
        "node/src/index.d.ts",
        "java/src/main/java/dev/toolcert/adapter/Protocol.java",
        "docs/schemas/configure.schema.json",
        "examples/sdks/node/lib/harness.mjs",
        "go/protocol.go",
        "examples/sdks/rust/adapter/src/lib.rs",
        "examples/sdks/rust/src/main.rs",
    ] {
        let text = std::fs::read_to_string(format!("{root}/{file}")).unwrap();
        for (flag, _) in toolcert::scenario::Quirks::PLAIN.flags() {
            assert!(text.contains(&format!("\"{flag}\"")), "{file} does not list {flag}");
        }
    }
}

/// Every profile's behaviours reach the subject: the coverage report counts, per behaviour,
/// the generated cases whose bytes showed it (read back by the detector `replay` uses), and
/// each shows in at least a tenth of the cases a profile renders. A renderer that stopped
/// sending a profile's shape would leave that profile's setting certifying the plain wire.
#[test]
fn every_profile_behaviour_shows_in_the_generated_bytes() {
    for p in PROFILES.iter().filter(|p| !p.quirks.is_plain()) {
        let name = format!("{}/{}", p.dialect.name(), p.name);
        let out = Command::new(env!("CARGO_BIN_EXE_toolcert"))
            .args(["certify", "--level", "wire", "--profile", &name, "--cases", "300", "--format", "json"])
            .output()
            .unwrap();
        assert_eq!(out.status.code(), Some(0), "{name}: {}", String::from_utf8_lossy(&out.stderr));
        let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
        for flag in p.quirks.set() {
            let c = &v["coverage"][format!("profile:{flag}")];
            let (count, applicable) =
                (c["count"].as_u64().unwrap_or(0), c["applicable"].as_u64().unwrap_or(0));
            assert!(applicable >= 50, "{name}: {flag} counted over {applicable} cases only: {c}");
            assert!(count * 10 >= applicable, "{name}: {flag} shown in {count} of {applicable} cases");
        }
    }
}
