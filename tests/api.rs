//! The Rust API as a user meets it in `cargo test`.

use toolcert::reference::Reference;
use toolcert::subject::{subject_fn, Accumulator, Emit, Event, StreamEnd, StreamSpec, TurnError};

/// An accumulator under test, here a thin wrapper over the reference.
struct Mine(Reference);

impl Accumulator for Mine {
    fn on_event(&mut self, event: &Event<'_>, out: &mut Emit) -> Result<(), TurnError> {
        self.0.on_event(event, out)
    }
    fn finish(&mut self, end: StreamEnd, out: &mut Emit) -> Result<(), TurnError> {
        self.0.finish(end, out)
    }
}

/// Trims every fragment: the seed's mangled-summary bug.
struct Trims(Reference);

impl Accumulator for Trims {
    fn on_event(&mut self, event: &Event<'_>, out: &mut Emit) -> Result<(), TurnError> {
        match event {
            Event::ArgsDelta { index, fragment } => {
                self.0.on_event(&Event::ArgsDelta { index: *index, fragment: fragment.trim().into() }, out)
            }
            e => self.0.on_event(e, out),
        }
    }
    fn finish(&mut self, end: StreamEnd, out: &mut Emit) -> Result<(), TurnError> {
        self.0.finish(end, out)
    }
}

#[test]
fn a_conforming_accumulator_passes() {
    toolcert::certify(subject_fn("mine", |_: &StreamSpec<'_>| Mine(Reference::new())))
        .schema(false)
        .assert_conforms();
}

#[test]
fn a_trimming_accumulator_fails_with_a_readable_counterexample() {
    let report = toolcert::certify(subject_fn("trims", |_: &StreamSpec<'_>| Trims(Reference::new())))
        .schema(false)
        .run();
    assert!(!report.conforms);
    let text = report.failing(toolcert::Invariant::AccFidelity).expect("ACC-FIDELITY fails");
    assert!(text.contains("urgent requestfrom ops"), "{text}");
    assert!(text.contains("args_delta"), "the transcript is shown: {text}");
}

toolcert::certify_tests!(
    reference_per_invariant,
    subject_fn("reference", |_: &StreamSpec<'_>| Mine(Reference::new())),
    |c| c.schema(false)
);

#[test]
#[ignore = "prints the failure text for a person to read"]
fn show_trims_report() {
    let report = toolcert::certify(subject_fn("trims", |_: &StreamSpec<'_>| Trims(Reference::new())))
        .schema(false)
        .run();
    println!("{}", report.to_text(2));
}

#[test]
fn failures_are_saved_as_regressions_and_replayed_first() {
    let path = std::env::temp_dir().join(format!("toolcert-regressions-{}.jsonl", std::process::id()));
    let _ = std::fs::remove_file(&path);
    let trims = || subject_fn("trims", |_: &StreamSpec<'_>| Trims(Reference::new()));
    let first = toolcert::certify(trims()).schema(false).cases(300).regressions(&path).run();
    assert!(!first.conforms);
    let saved = toolcert::regressions::load(&path).unwrap();
    assert!(!saved.is_empty(), "the shrunk failures are saved");
    assert!(saved.iter().all(|c| c.name.starts_with("regression/gen/")));
    // Later runs replay them even without generated cases, and a correct subject passes them.
    let again = toolcert::certify(trims()).schema(false).regressions(&path).run();
    assert!(again.failures.iter().any(|f| f.case.starts_with("regression/")));
    let fixed = toolcert::certify(subject_fn("mine", |_: &StreamSpec<'_>| Mine(Reference::new())))
        .schema(false)
        .regressions(&path)
        .run();
    assert!(fixed.conforms, "{}", fixed.to_text(2));
    assert_eq!(toolcert::regressions::load(&path).unwrap().len(), saved.len(), "nothing saved twice");
    std::fs::write(&path, "# x\n{\"name\": 3}\n").unwrap();
    let err = toolcert::regressions::load(&path).unwrap_err();
    assert!(err.contains(":2:"), "{err}");
    let _ = std::fs::remove_file(&path);
}
