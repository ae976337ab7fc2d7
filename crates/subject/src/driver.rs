//! Feeds rendered streams to accumulators and records what they report.
//!
//! The driver is level-agnostic in spirit: it knows only "deliver unit `k` of stream `s`",
//! "finish stream `s`". At the events level a unit is one [`Event`](crate::Event).

use std::panic::{catch_unwind, AssertUnwindSafe};

use toolcert_render::Rendered;
use toolcert_scenario::{Case, StreamSchedule};

use crate::{Accumulator, Emit, Factory, Observation, StreamSpec, Timed};

/// One stream's state while it is being fed.
struct Feed {
    acc: Option<Box<dyn Accumulator>>,
    emit: Emit,
    next: usize,
}

impl Feed {
    fn alive(&self) -> bool {
        self.acc.is_some()
    }

    /// Delivers one event; a turn error or a panic ends the stream.
    fn deliver(&mut self, event: &crate::Event<'_>) {
        let Some(acc) = self.acc.as_mut() else { return };
        self.emit.delivered += 1;
        let emit = &mut self.emit;
        match catch_unwind(AssertUnwindSafe(|| acc.on_event(event, emit))) {
            Ok(Ok(())) => {}
            Ok(Err(e)) => {
                let at = emit.stamp();
                emit.obs.error = Some(Timed { at, value: e });
                self.acc = None;
            }
            Err(panic) => {
                emit.obs.crash = Some(panic_message(panic));
                self.acc = None;
            }
        }
    }

    fn finish(&mut self, end: crate::StreamEnd) {
        let Some(mut acc) = self.acc.take() else { return };
        let emit = &mut self.emit;
        emit.at_finish = true;
        match catch_unwind(AssertUnwindSafe(|| acc.finish(end, emit))) {
            Ok(Ok(())) => {}
            Ok(Err(e)) => {
                let at = emit.stamp();
                emit.obs.error = Some(Timed { at, value: e });
            }
            Err(panic) => emit.obs.crash = Some(panic_message(panic)),
        }
    }
}

fn panic_message(panic: Box<dyn std::any::Any + Send>) -> String {
    panic
        .downcast_ref::<&str>()
        .map(|s| s.to_string())
        .or_else(|| panic.downcast_ref::<String>().cloned())
        .unwrap_or_else(|| "panic with a non-string payload".into())
}

/// Feeds every stream of `case` (already rendered, one [`Rendered`] per stream) to its own
/// accumulator from `factory`, following the case's [`StreamSchedule`]; one observation per
/// stream. Accumulator panics are caught and recorded as crashes.
pub fn drive(factory: &dyn Factory, case: &Case, rendered: &[Rendered<'_>]) -> Vec<Observation> {
    let spec = |s: usize| StreamSpec { tools: &case.streams[s].tools };
    let make = |s: usize| {
        let acc = catch_unwind(AssertUnwindSafe(|| factory.make(&spec(s))));
        let mut feed = Feed { acc: None, emit: Emit::default(), next: 0 };
        match acc {
            Ok(acc) => feed.acc = Some(acc),
            Err(panic) => feed.emit.obs.crash = Some(panic_message(panic)),
        }
        feed
    };
    let mut feeds: Vec<Feed> = Vec::with_capacity(rendered.len());
    match &case.schedule {
        StreamSchedule::Sequential => {
            for (s, r) in rendered.iter().enumerate() {
                let mut feed = make(s);
                for event in &r.events {
                    if !feed.alive() {
                        break;
                    }
                    feed.deliver(event);
                }
                feed.finish(r.end);
                feeds.push(feed);
            }
        }
        StreamSchedule::Concurrent(order) => {
            feeds.extend((0..rendered.len()).map(make));
            let n = rendered.len().max(1);
            let step = |s: usize, feeds: &mut Vec<Feed>| -> bool {
                let (feed, r) = (&mut feeds[s], &rendered[s]);
                if feed.next >= r.events.len() {
                    return false;
                }
                feed.deliver(&r.events[feed.next]);
                feed.next += 1;
                if feed.next == r.events.len() {
                    feed.finish(r.end);
                }
                true
            };
            for (s, r) in rendered.iter().enumerate() {
                if r.events.is_empty() {
                    feeds[s].finish(r.end);
                }
            }
            for &o in order {
                step(o as usize % n, &mut feeds);
            }
            // Whatever the order left goes round-robin.
            let mut progressed = true;
            while progressed {
                progressed = false;
                for s in 0..rendered.len() {
                    progressed |= step(s, &mut feeds);
                }
            }
        }
    }
    feeds.into_iter().map(|f| f.emit.obs).collect()
}
