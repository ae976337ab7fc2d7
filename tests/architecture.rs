//! The dependency rules of ARCHITECTURE.md ("Dependencies point one way"), checked against
//! every crate's manifest: each crate has a stage of the data flow, a crate depends only on
//! crates of earlier stages, the subject seam depends on nothing of the project but the
//! vocabulary crate, and the accumulators (the reference, the mutants) are depended on by
//! nobody but the facade (and the cost crate, which prices the reference and the zoo's cost
//! mutants beside naive peers, the fuzzing crate, whose targets check the reference, and the
//! zoo crate, which hunts the mutants).
//! Dev-dependencies are not rules of the architecture: a test may sit on any crate.

use std::collections::BTreeMap;
use std::path::Path;

/// Every crate under `crates/` with its stage, earliest first; the facade is last.
const STAGES: &[(&str, u32)] = &[
    // Leaves: no project crate below them.
    ("scenario", 0),
    ("schema", 0),
    ("serve", 0),
    // The seam every implementation plugs into.
    ("subject", 1),
    // Scenario → neutral events; SSE framing.
    ("render", 2),
    ("sse", 2),
    // The dialects (wire and bytes levels) and where scenarios come from.
    ("dialect", 3),
    ("gen", 3),
    // Judging, and the accumulator written to the seeds.
    ("oracle", 4),
    ("reference", 4),
    // More subjects: the zoo and any program over the subprocess protocol.
    ("mutants", 5),
    ("exec", 5),
    ("runner", 6),
    ("cost", 7),
    // Fuzz inputs as cases, and the targets toolcert fuzzes itself with (the reference).
    ("fuzzing", 7),
    // The certification site, read from the runner's JSONL reports.
    ("site", 7),
    // The harness proving itself against the mutant zoo (hunted by the runner, priced by cost).
    ("zoo", 8),
];
const FACADE_STAGE: u32 = 9;

/// The project crates a manifest's `[dependencies]` (and `[target.….dependencies]`) name,
/// without the `toolcert-` prefix.
fn project_deps(manifest: &str) -> Vec<String> {
    let mut out = Vec::new();
    let mut in_deps = false;
    for line in manifest.lines().map(str::trim) {
        if line.starts_with('[') {
            in_deps = line == "[dependencies]"
                || (line.starts_with("[target.") && line.ends_with(".dependencies]"));
            continue;
        }
        if !in_deps {
            continue;
        }
        let name = line.split(['=', '.', ' ']).next().unwrap_or_default();
        if let Some(dep) = name.strip_prefix("toolcert-") {
            out.push(dep.to_string());
        }
    }
    out
}

fn manifests() -> BTreeMap<String, Vec<String>> {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let mut out = BTreeMap::new();
    for entry in std::fs::read_dir(root.join("crates")).expect("crates/") {
        let dir = entry.expect("a crates/ entry").path();
        let Ok(text) = std::fs::read_to_string(dir.join("Cargo.toml")) else { continue };
        let name = dir.file_name().expect("a directory name").to_string_lossy().into_owned();
        out.insert(name, project_deps(&text));
    }
    let facade = std::fs::read_to_string(root.join("Cargo.toml")).expect("the root manifest");
    out.insert("(facade)".into(), project_deps(&facade));
    out
}

fn stage(name: &str) -> Option<u32> {
    if name == "(facade)" {
        return Some(FACADE_STAGE);
    }
    STAGES.iter().find(|(n, _)| *n == name).map(|&(_, s)| s)
}

#[test]
fn every_crate_has_a_stage() {
    for name in manifests().keys() {
        assert!(
            stage(name).is_some(),
            "crates/{name} has no stage in tests/architecture.rs (and ARCHITECTURE.md)"
        );
    }
}

#[test]
fn dependencies_point_down_the_data_flow() {
    let mut wrong = Vec::new();
    for (name, deps) in manifests() {
        let Some(at) = stage(&name) else { continue };
        for dep in deps {
            match stage(&dep) {
                Some(s) if s < at => {}
                Some(s) => wrong.push(format!("{name} (stage {at}) depends on {dep} (stage {s})")),
                None => {
                    wrong.push(format!("{name} depends on toolcert-{dep}, which is not a crate with a stage"))
                }
            }
        }
    }
    assert!(wrong.is_empty(), "dependencies against the data flow:\n{}", wrong.join("\n"));
}

#[test]
fn the_subject_seam_is_a_leaf() {
    let all = manifests();
    assert_eq!(all["subject"], ["scenario"], "toolcert-subject depends on the vocabulary crate alone");
    for leaf in ["scenario", "schema", "serve"] {
        assert!(all[leaf].is_empty(), "toolcert-{leaf} is a leaf, but depends on {:?}", all[leaf]);
    }
}

#[test]
fn nothing_depends_on_an_accumulator_but_the_facade() {
    for (name, deps) in manifests() {
        for acc in ["reference", "mutants"] {
            // Cost prices the reference and the zoo's cost mutants beside naive peers; the
            // fuzzing crate's targets check the reference; the zoo crate hunts the mutants.
            let allowed = name == "(facade)"
                || name == "cost"
                || (name == "fuzzing" && acc == "reference")
                || (name == "zoo" && acc == "mutants");
            assert!(allowed || !deps.iter().any(|d| d == acc), "{name} depends on toolcert-{acc}");
        }
    }
}

#[test]
fn the_parser_reads_dependencies_only() {
    let manifest = "[package]\nname = \"toolcert-x\"\n[dependencies]\ntoolcert-a.workspace = true\n\
                    toolcert-b = { workspace = true }\nserde.workspace = true\n[dev-dependencies]\n\
                    toolcert-c.workspace = true\n[target.'cfg(unix)'.dependencies]\ntoolcert-d = \"1\"\n";
    assert_eq!(project_deps(manifest), ["a", "b", "d"]);
}
