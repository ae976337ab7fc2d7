//! The dependency rules of ARCHITECTURE.md ("Dependencies point one way"), checked against
//! every crate's manifest: each crate has a stage of the data flow, a crate depends only on
//! crates of earlier stages, the subject seam depends on nothing of the project but the
//! vocabulary crate, and the accumulators (the reference, the mutants) are depended on by
//! nobody but the facade (and the cost crate, which prices the reference and the zoo's cost
//! mutants beside naive peers, the fuzzing crate, whose targets check the reference, and the
//! zoo crate, which hunts the mutants).
//! Dev-dependencies are not rules of the architecture: a test may sit on any crate.
//!
//! And the map itself, so it cannot rot: every crate directory and every source file of a
//! crate or of the facade is named in its section of ARCHITECTURE.md, the invariant table
//! lists exactly the ids the oracle knows, and each test it cites for a rule exists.

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

/// ARCHITECTURE.md's `### ` sections, by heading.
fn architecture_sections() -> Vec<(String, String)> {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("ARCHITECTURE.md");
    let text = std::fs::read_to_string(path).expect("ARCHITECTURE.md reads");
    text.split("\n### ")
        .skip(1)
        .map(|s| {
            let (heading, body) = s.split_once('\n').unwrap_or((s, ""));
            // A section ends where the next `## ` chapter begins.
            let body = body.split("\n## ").next().unwrap_or_default();
            (heading.to_owned(), body.to_owned())
        })
        .collect()
}

/// Every `.rs` file under `dir`, as its path relative to `dir` with `/` separators.
fn sources(dir: &Path) -> Vec<String> {
    fn walk(root: &Path, dir: &Path, out: &mut Vec<String>) {
        for entry in std::fs::read_dir(dir).unwrap_or_else(|e| panic!("{}: {e}", dir.display())) {
            let path = entry.expect("a directory entry").path();
            if path.is_dir() {
                walk(root, &path, out);
            } else if path.extension().is_some_and(|e| e == "rs") {
                let rel = path.strip_prefix(root).expect("under the root");
                out.push(
                    rel.components().map(|c| c.as_os_str().to_string_lossy()).collect::<Vec<_>>().join("/"),
                );
            }
        }
    }
    let mut out = Vec::new();
    walk(dir, dir, &mut out);
    out.sort();
    out
}

#[test]
fn every_crate_and_source_file_is_on_the_map() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let sections = architecture_sections();
    let section =
        |heading: &str| sections.iter().find(|(h, _)| h.starts_with(heading)).map(|(_, body)| body.as_str());
    let mut missing = Vec::new();
    let mut dirs: Vec<(String, std::path::PathBuf)> = std::fs::read_dir(root.join("crates"))
        .expect("crates/")
        .map(|e| e.expect("a crates/ entry").path())
        .filter(|p| p.join("Cargo.toml").is_file())
        .map(|p| (format!("`crates/{}`", p.file_name().unwrap().to_string_lossy()), p.join("src")))
        .collect();
    dirs.push(("`src/`".to_owned(), root.join("src")));
    for (heading, src) in dirs {
        let Some(body) = section(&heading) else {
            missing.push(format!("no section `### {heading}`"));
            continue;
        };
        // Named in backticks by its path under `src/`, so `extra.rs` is not taken for
        // `chat/extra.rs`.
        for file in sources(&src) {
            if !body.contains(&format!("`{file}`")) {
                missing.push(format!("{heading}: `{file}`"));
            }
        }
    }
    assert!(missing.is_empty(), "ARCHITECTURE.md does not name:\n{}", missing.join("\n"));
}

/// The rows of ARCHITECTURE.md's invariant table: id and the "shown failing by" cell.
fn invariant_rows() -> Vec<(String, String)> {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("ARCHITECTURE.md");
    let text = std::fs::read_to_string(path).expect("ARCHITECTURE.md reads");
    let table = text.split("\n## Invariants\n").nth(1).expect("ARCHITECTURE.md has `## Invariants`");
    table
        .lines()
        .skip_while(|l| !l.starts_with("| id |"))
        .skip(2)
        .take_while(|l| l.starts_with('|'))
        .map(|l| {
            let cells: Vec<&str> = l.trim_matches('|').split(" | ").map(str::trim).collect();
            (cells[0].to_owned(), cells.last().copied().unwrap_or_default().to_owned())
        })
        .collect()
}

#[test]
fn the_invariant_table_is_the_oracles_and_its_tests_exist() {
    use toolcert::oracle::Invariant;
    let rows = invariant_rows();
    let ids: Vec<&str> = rows.iter().map(|(id, _)| id.as_str()).collect();
    let known: Vec<&str> = Invariant::ALL.iter().map(|i| i.id()).collect();
    let mut sorted = (ids.clone(), known.clone());
    sorted.0.sort();
    sorted.1.sort();
    assert_eq!(sorted.0, sorted.1, "ARCHITECTURE.md's invariant table against Invariant::ALL");

    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let oracle_tests =
        std::fs::read_to_string(root.join("crates/oracle/src/tests.rs")).expect("oracle tests");
    for (id, shown) in &rows {
        let inv = Invariant::from_id(id).expect("a known id");
        // "oracle `tests.rs`": a wrong observation there is flagged with this rule.
        if shown.contains("oracle `tests.rs`") {
            assert!(
                oracle_tests.contains(&format!("(Invariant::{inv:?}, Grade::")),
                "{id}: ARCHITECTURE.md cites crates/oracle/src/tests.rs, which asserts no {id} violation"
            );
        }
        // "zoo (`a`, `b`)": mutants that the zoo test requires this rule, and only it, to catch.
        if let Some(zoo) = shown.split("zoo (").nth(1) {
            let list = zoo.split(')').next().unwrap_or_default();
            for name in list.split('`').skip(1).step_by(2) {
                let m = toolcert::mutants::by_name(name)
                    .unwrap_or_else(|| panic!("{id}: ARCHITECTURE.md cites `{name}`, which is no mutant"));
                assert_eq!(m.expected, [inv], "{id}: `{name}` must be caught by {id} alone");
            }
        }
    }
}
