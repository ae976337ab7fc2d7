//! docs/SPEC.md and the code name the same invariants: every id in `Invariant::ALL` has a
//! row in SPEC's invariant table (§6), and every id written in that table's first column is
//! one the code knows.

use toolcert_oracle::Invariant;

fn spec() -> String {
    let path = concat!(env!("CARGO_MANIFEST_DIR"), "/../../docs/SPEC.md");
    std::fs::read_to_string(path).expect("docs/SPEC.md exists")
}

/// The first cell of every row of the table under "## 6. The invariants".
fn table_ids(spec: &str) -> Vec<String> {
    let section = spec.split("## 6. The invariants").nth(1).expect("SPEC has an invariants section");
    let section = section.split("\n## ").next().unwrap_or(section);
    // The invariant table is the one headed `| id |`: the section's other tables (the tiers)
    // list other things.
    section
        .lines()
        .skip_while(|l| !l.starts_with("| id "))
        .take_while(|l| l.starts_with('|'))
        .filter(|l| l.starts_with("| ") && !l.starts_with("| id ") && !l.starts_with("|---"))
        .map(|l| l.split('|').nth(1).unwrap_or_default().trim().to_string())
        .collect()
}

#[test]
fn every_invariant_has_a_row_in_the_spec_and_no_row_is_unknown() {
    let spec = spec();
    let ids = table_ids(&spec);
    assert!(!ids.is_empty(), "no invariant rows in docs/SPEC.md");
    for inv in Invariant::ALL {
        assert!(ids.iter().any(|i| i == inv.id()), "{} has no row in docs/SPEC.md §6", inv.id());
    }
    for id in &ids {
        assert!(Invariant::from_id(id).is_some_and(|i| i.id() == id), "docs/SPEC.md §6 names unknown {id}");
    }
    assert_eq!(ids.len(), Invariant::ALL.len(), "a row per invariant: {ids:?}");
}

/// Ids cited anywhere in the spec's prose are ids too (`ACC-…`, `WIRE-…`, `BYTES-…`; the
/// wildcards `WIRE-*` and `BYTES-*` name the families).
#[test]
fn every_id_the_spec_cites_exists() {
    let spec = spec();
    let bytes = spec.as_bytes();
    for prefix in ["ACC-", "WIRE-", "BYTES-", "SUBJECT-"] {
        for (at, _) in spec.match_indices(prefix) {
            let end = (at + prefix.len()..bytes.len())
                .find(|&k| !(bytes[k].is_ascii_uppercase() || bytes[k].is_ascii_digit()))
                .unwrap_or(bytes.len());
            let id = &spec[at..end];
            if id.len() == prefix.len() {
                continue; // `WIRE-\*` and the like
            }
            assert!(Invariant::from_id(id).is_some(), "docs/SPEC.md cites unknown invariant {id}");
        }
    }
}
