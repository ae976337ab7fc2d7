//! Round-trip throughput of the Python template at the events level: events delivered to the
//! subject and answered, per second, through the whole protocol (serialising the run,
//! the pipe, the adapter's parse, feed and reply, parsing the reply).
//!
//! `cargo test --release -p toolcert-exec --test throughput -- --ignored --nocapture`

mod common;

use std::time::{Duration, Instant};

use toolcert_gen::GenConfig;
use toolcert_render::render;
use toolcert_scenario::{Block, Case};
use toolcert_subject::driver::{Input, Speech, Units};
use toolcert_subject::Subject;

/// Feeds `cases` to the subject (rendered beforehand, outside the clock); events and time.
fn round_trips(subject: &dyn Subject, cases: &[Case]) -> (usize, Duration) {
    let rendered: Vec<Vec<_>> = cases.iter().map(|c| c.streams.iter().map(render).collect()).collect();
    let mut events = 0;
    let started = Instant::now();
    for (case, neutral) in cases.iter().zip(&rendered) {
        let inputs: Vec<Input<'_>> =
            neutral.iter().map(|n| Input { units: Units::Events(&n.events), end: n.end }).collect();
        events += inputs.iter().map(|i| i.units.len()).sum::<usize>();
        let obs = subject.observe(case, &inputs, Speech::default()).expect("an exec subject observes");
        assert!(obs.iter().all(|o| o.crash.is_none()), "{}: {obs:?}", case.name);
    }
    (events, started.elapsed())
}

fn report(what: &str, cases: usize, (events, took): (usize, Duration)) -> f64 {
    let rate = events as f64 / took.as_secs_f64();
    eprintln!(
        "{what}: {cases} cases, {events} events in {took:.2?}: {rate:.0} events/s, {:.0} cases/s",
        cases as f64 / took.as_secs_f64()
    );
    rate
}

#[test]
#[ignore = "a measurement: run in release with --ignored --nocapture"]
fn python_template_round_trip_throughput_at_the_events_level() {
    if common::cross_lang_skipped() {
        return;
    }
    let subject = common::python_adapter();
    // Warm up: the interpreter's first cases pay for imports and caches.
    let warm: Vec<Case> = toolcert_gen::cases(&GenConfig::default(), 99).take(200).collect();
    round_trips(&subject, &warm);

    let generated: Vec<Case> = toolcert_gen::cases(&GenConfig::default(), 1).take(5000).collect();
    let typical = report("generated cases (seed 1)", generated.len(), round_trips(&subject, &generated));

    // Long arguments cut into one-byte fragments: one run carries thousands of events.
    let mut long = toolcert_gen::named::by_id("deltas/lookup-order-a4471").unwrap().case;
    for block in &mut long.streams[0].blocks {
        if let Block::Call(c) = block {
            let body: String = (0..400).map(|k| format!("\"key{k}\": \"value {k} é\", ")).collect();
            c.arguments = format!("{{{body}\"end\": true}}");
            c.splits = (1..c.arguments.len()).filter(|&i| c.arguments.is_char_boundary(i)).collect();
        }
    }
    let long_cases = vec![long; 20];
    let batched =
        report("long cases (one-byte fragments)", long_cases.len(), round_trips(&subject, &long_cases));
    assert!(batched >= 20_000.0, "target: 20,000 events/s on a batched case, got {batched:.0}");
    assert!(typical > 0.0);
}
