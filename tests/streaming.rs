//! A streamed run (`Certification::run_streamed`, what `certify` does) writes the JSONL
//! stream byte for byte as the report that keeps every record would, for every job count,
//! for a conforming subject and for a failing one; and its report says the same.

use toolcert::runner::jsonl::{to_jsonl, JsonlWriter};
use toolcert::runner::{Certification, MoreSubjects, Report};
use toolcert::subject::Level;

fn runs(subject: &str, level: Level, cases: usize, jobs: usize) -> (Report, String, Report) {
    let run = Certification { cases, seed: 11, level, ..Certification::default() };
    let make = || toolcert::subject_by_name(subject);
    let more = MoreSubjects { jobs, make: &make };
    let more = (jobs > 1).then_some(&more);
    let own = make().unwrap();
    let kept = run.run_jobs(&*own, more, &mut |_, _| {});
    let mut sink = JsonlWriter::new(Vec::new());
    let streamed = run.run_streamed(&*own, more, &mut |_, _| {}, &mut sink);
    let bytes = String::from_utf8(sink.finish().unwrap()).unwrap();
    (kept, bytes, streamed)
}

fn same(subject: &str, level: Level, cases: usize) {
    let (kept, streamed_jsonl, streamed) = runs(subject, level, cases, 1);
    assert_eq!(streamed_jsonl, to_jsonl(&kept).unwrap(), "{subject}: the stream is the kept report's JSONL");
    let (_, two_jobs, _) = runs(subject, level, cases, 2);
    assert_eq!(two_jobs, streamed_jsonl, "{subject}: the same stream with two jobs");
    assert_eq!(
        serde_json::to_string(&streamed).unwrap(),
        serde_json::to_string(&kept).unwrap(),
        "{subject}: the same summary"
    );
    assert_eq!(streamed.to_text(5), kept.to_text(5));
    assert_eq!(streamed.verdict(), kept.verdict());
    assert!(to_jsonl(&streamed).is_err(), "a streamed report's records went to its stream");
}

#[test]
fn the_reference_streams_what_it_keeps() {
    same("builtin:reference", Level::Events, 300);
    same("builtin:reference", Level::Bytes, 60);
}

#[test]
fn a_failing_subject_streams_what_it_keeps() {
    let (kept, _, streamed) = runs("builtin:mutant/name-keyed", Level::Events, 200, 1);
    assert!(!kept.conforms && kept.more_failures > 0, "failures kept in full and only counted");
    same("builtin:mutant/name-keyed", Level::Events, 200);
    // Its failing records are kept for the text, JUnit and baseline views.
    assert_eq!(streamed.failing_cases(), kept.failing_cases());
    let baseline = toolcert::runner::baseline::Baseline::from_report(&kept);
    assert_eq!(baseline.check(&streamed), baseline.check(&kept));
}
