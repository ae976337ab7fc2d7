//! The delivery order a `run` carries is exactly the order in which the in-process driver
//! feeds streams, for every schedule the generators make.

use std::cell::RefCell;
use std::rc::Rc;

use toolcert_exec::delivery_order;
use toolcert_gen::GenConfig;
use toolcert_render::render;
use toolcert_scenario::{StreamEnd, StreamSchedule};
use toolcert_subject::driver::{drive, Input, Speech, Units};
use toolcert_subject::{Accumulator, Emit, Event, Factory, StreamSpec, TurnError};

type Log = Rc<RefCell<Vec<[u32; 2]>>>;

/// Records `[stream, unit]` for every delivery and `[stream, units]` for every finish.
struct Recorder {
    log: Log,
    made: RefCell<u32>,
}

struct Recording {
    log: Log,
    stream: u32,
    seen: u32,
}

impl Factory for Recorder {
    fn make(&self, _: &StreamSpec<'_>) -> Option<Box<dyn Accumulator>> {
        let mut made = self.made.borrow_mut();
        *made += 1;
        Some(Box::new(Recording { log: Rc::clone(&self.log), stream: *made - 1, seen: 0 }))
    }
}

impl Accumulator for Recording {
    fn on_event(&mut self, _: &Event<'_>, _: &mut Emit) -> Result<(), TurnError> {
        self.log.borrow_mut().push([self.stream, self.seen]);
        self.seen += 1;
        Ok(())
    }
    fn finish(&mut self, _: StreamEnd, _: &mut Emit) -> Result<(), TurnError> {
        self.log.borrow_mut().push([self.stream, self.seen]);
        Ok(())
    }
}

#[test]
fn the_run_order_is_the_drivers_order() {
    let cfg = GenConfig { multi_stream: true, ..GenConfig::default() };
    let mut concurrent = 0;
    for case in toolcert_gen::cases(&cfg, 7).take(3000) {
        let neutral: Vec<_> = case.streams.iter().map(render).collect();
        let inputs: Vec<Input<'_>> =
            neutral.iter().map(|n| Input { units: Units::Events(&n.events), end: n.end }).collect();
        let recorder = Recorder { log: Log::default(), made: RefCell::new(0) };
        drive(&recorder, &case, &inputs, Speech::default());
        let lens: Vec<usize> = neutral.iter().map(|n| n.events.len()).collect();
        assert_eq!(*recorder.log.borrow(), delivery_order(&case.schedule, &lens), "{}", case.name);
        concurrent +=
            usize::from(matches!(case.schedule, StreamSchedule::Concurrent(_)) && case.streams.len() > 1);
    }
    assert!(concurrent > 100, "the generators interleave streams ({concurrent} cases)");
}
