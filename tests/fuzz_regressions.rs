//! Fuzz finds, replayed as ordinary tests: every file under `corpus/fuzz/regressions/<target>/`
//! runs through the same check as the fuzz target `<target>` (`toolcert::fuzzing::Target`),
//! and so does every seed under `corpus/fuzz/<target>/`. All failures are reported at once.
//! How a crash becomes a file here: `docs/FUZZING.md`.

use std::panic::{catch_unwind, AssertUnwindSafe};
use std::path::Path;

use toolcert::fuzzing::{parse_value, Target};

/// Runs every file under `dir/<target>/` through its target; the failures' file names and
/// reports.
fn replay(dir: &Path) -> (usize, Vec<String>) {
    let mut ran = 0;
    let mut failures = Vec::new();
    for t in Target::ALL {
        let Ok(entries) = std::fs::read_dir(dir.join(t.name())) else { continue };
        let mut files: Vec<_> = entries.filter_map(|e| Some(e.ok()?.path())).collect();
        files.sort();
        for path in files {
            let name = path.file_name().and_then(|n| n.to_str()).unwrap_or_default();
            if !path.is_file() || name.starts_with('.') || name.ends_with(".md") {
                continue;
            }
            let data = std::fs::read(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
            ran += 1;
            if let Err(panic) = catch_unwind(AssertUnwindSafe(|| t.run(&data))) {
                let msg = panic
                    .downcast_ref::<String>()
                    .cloned()
                    .or_else(|| panic.downcast_ref::<&str>().map(|s| s.to_string()))
                    .unwrap_or_default();
                failures.push(format!("{} ({}):\n{msg}", path.display(), t.name()));
            }
        }
    }
    (ran, failures)
}

fn corpus() -> &'static Path {
    Path::new(concat!(env!("CARGO_MANIFEST_DIR"), "/corpus/fuzz"))
}

#[test]
fn regressions_stay_fixed() {
    let (ran, failures) = replay(&corpus().join("regressions"));
    println!("replayed {ran} regression inputs");
    assert!(
        failures.is_empty(),
        "{} of {ran} regressions fail:\n\n{}",
        failures.len(),
        failures.join("\n\n")
    );
}

#[test]
fn seed_corpora_pass() {
    let (ran, failures) = replay(corpus());
    assert!(ran > 0, "no seeds under {}: run `cargo run --example fuzz_corpus -- seeds`", corpus().display());
    assert!(failures.is_empty(), "{} of {ran} seeds fail:\n\n{}", failures.len(), failures.join("\n\n"));
}

/// The fuzzer's first find (`regressions/reference/two-calls-share-an-index`): a scenario
/// value whose turn gives two calls one positional index. No model can send that turn (the
/// index names the call; an index announced twice is a `ReplayAnnouncement` fault), so the
/// oracle has no expectation for it: `Case::validate` refuses it and every way in (fuzz
/// value forms, `--scenario`, regressions files) reports it as not a scenario.
///
/// The second (`two-calls-share-an-id`, found by the `accumulator` target in a 20-second CI
/// run): two calls with one call id. Outcomes name their call by id, so no outcome could say
/// which of the two it is for; refused the same way.
#[test]
fn invalid_scenario_values_are_refused() {
    for (file, why) in [
        ("two-calls-share-an-index", "share the positional index"),
        ("two-calls-share-an-id", "share the call id"),
    ] {
        let path = corpus().join("regressions/reference").join(file);
        let data = std::fs::read(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
        let err = parse_value(&data).expect("a value form").expect_err("refused as not a scenario");
        assert!(err.contains(why), "{}: {err}", path.display());
    }
}
