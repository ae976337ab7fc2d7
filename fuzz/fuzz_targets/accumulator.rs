//! A fuzz target for your own events-level accumulator: copy this file, replace `Mine` with
//! your type (or an adapter over it), and run `cargo +nightly fuzz run accumulator`.
//! Here `Mine` wraps the reference, so toolcert builds and runs the template itself.
#![no_main]

use toolcert::subject::{subject_fn, Accumulator, Emit, Event, StreamEnd, StreamSpec, TurnError};

/// Your accumulator, adapted to the events level.
struct Mine(toolcert::reference::Reference);

impl Accumulator for Mine {
    fn on_event(&mut self, event: &Event<'_>, out: &mut Emit) -> Result<(), TurnError> {
        self.0.on_event(event, out)
    }
    fn finish(&mut self, end: StreamEnd, out: &mut Emit) -> Result<(), TurnError> {
        self.0.finish(end, out)
    }
}

libfuzzer_sys::fuzz_target!(|data: &[u8]| {
    let subject = subject_fn("mine", |_: &StreamSpec<'_>| Mine(toolcert::reference::Reference::new()));
    toolcert::fuzzing::check_events(&subject, data);
});
