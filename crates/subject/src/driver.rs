//! Feeds streams to accumulators and records what they report.
//!
//! The driver knows only "deliver unit `k` of stream `s`" and "finish stream `s`". A unit is
//! one [`Event`] at the events level, one [`WireMessage`] at the wire level and
//! one transport chunk at the bytes level; stamps count units of the level fed.

use std::cell::Cell;
use std::panic::AssertUnwindSafe;

use toolcert_scenario::{Case, Dialect, Quirks, StreamEnd, StreamSchedule};

use crate::{
    Accumulator, BytesAccumulator, Emit, Event, Factory, Level, Observation, StreamSpec, Timed, TurnError,
    WireAccumulator, WireMessage,
};

/// One stream's units, at one level.
#[derive(Clone, Copy, Debug)]
pub enum Units<'a> {
    Events(&'a [Event<'a>]),
    Wire(&'a [WireMessage]),
    Bytes(&'a crate::Chunks),
}

impl Units<'_> {
    pub fn len(&self) -> usize {
        match self {
            Units::Events(u) => u.len(),
            Units::Wire(u) => u.len(),
            Units::Bytes(u) => u.len(),
        }
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    pub fn level(&self) -> Level {
        match self {
            Units::Events(_) => Level::Events,
            Units::Wire(_) => Level::Wire,
            Units::Bytes(_) => Level::Bytes,
        }
    }
}

/// One stream as fed: its units and how the transport closes after them.
#[derive(Clone, Copy, Debug)]
pub struct Input<'a> {
    pub units: Units<'a>,
    pub end: StreamEnd,
}

/// The dialect the wire and bytes levels are spoken in.
#[derive(Clone, Copy, Debug, Default)]
pub struct Speech {
    pub dialect: Dialect,
    pub quirks: Quirks,
}

enum Acc {
    Events(Box<dyn Accumulator>),
    Wire(Box<dyn WireAccumulator>),
    Bytes(Box<dyn BytesAccumulator>),
}

/// One stream's state while it is being fed.
struct Feed<'a> {
    acc: Option<Acc>,
    units: Units<'a>,
    end: StreamEnd,
    emit: Emit,
    next: usize,
}

impl Feed<'_> {
    /// Delivers the next unit; a turn error or a panic ends the stream. False when there was
    /// no unit left.
    fn step(&mut self) -> bool {
        if self.next >= self.units.len() {
            return false;
        }
        let k = self.next;
        self.next += 1;
        let Some(acc) = self.acc.as_mut() else { return true };
        self.emit.delivered += 1;
        let emit = &mut self.emit;
        let units = self.units;
        let result = guarded(AssertUnwindSafe(|| match (acc, units) {
            (Acc::Events(a), Units::Events(u)) => a.on_event(&u[k], emit),
            (Acc::Wire(a), Units::Wire(u)) => a.on_wire(&u[k], emit),
            (Acc::Bytes(a), Units::Bytes(u)) => a.on_bytes(&u[k], emit),
            _ => unreachable!("an accumulator is made for the level of its units"),
        }));
        match result {
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
        if self.next == self.units.len() {
            self.finish();
        }
        true
    }

    /// Delivers every unit left, then finishes: what [`step`](Self::step) until exhausted
    /// does, with the level matched once and one `catch_unwind` for the whole run instead of
    /// one per unit (the per-unit cost of the driver is most of the events level's overhead
    /// over a plain append). A unit that errs or panics is stamped as in `step`.
    fn run_to_end(&mut self) {
        let Some(acc) = self.acc.as_mut() else {
            self.next = self.units.len();
            return;
        };
        let (units, emit, next) = (self.units, &mut self.emit, &mut self.next);
        let result = guarded(AssertUnwindSafe(|| match (acc, units) {
            (Acc::Events(a), Units::Events(u)) => {
                feed_all(|k| u.get(k), next, emit, |e, out| a.on_event(e, out))
            }
            (Acc::Wire(a), Units::Wire(u)) => feed_all(|k| u.get(k), next, emit, |e, out| a.on_wire(e, out)),
            (Acc::Bytes(a), Units::Bytes(u)) => {
                feed_all(|k| u.get(k), next, emit, |c, out| a.on_bytes(c, out))
            }
            _ => unreachable!("an accumulator is made for the level of its units"),
        }));
        match result {
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
        self.next = self.units.len();
        self.finish();
    }

    fn finish(&mut self) {
        let Some(mut acc) = self.acc.take() else { return };
        let emit = &mut self.emit;
        emit.at_finish = true;
        let end = self.end;
        let result = guarded(AssertUnwindSafe(|| match &mut acc {
            Acc::Events(a) => a.finish(end, emit),
            Acc::Wire(a) => a.finish(end, emit),
            Acc::Bytes(a) => a.finish(end, emit),
        }));
        match result {
            Ok(Ok(())) => {}
            Ok(Err(e)) => {
                let at = emit.stamp();
                emit.obs.error = Some(Timed { at, value: e });
            }
            Err(panic) => emit.obs.crash = Some(panic_message(panic)),
        }
    }
}

/// Feeds `units[*next..]` in order, counting each unit as delivered before handing it over
/// (so a stamp counts the unit being handled); stops at the first turn error.
#[inline(always)]
fn feed_all<'u, U: ?Sized + 'u>(
    unit: impl Fn(usize) -> Option<&'u U>,
    next: &mut usize,
    emit: &mut Emit,
    mut on_unit: impl FnMut(&U, &mut Emit) -> Result<(), TurnError>,
) -> Result<(), TurnError> {
    while let Some(unit) = unit(*next) {
        *next += 1;
        emit.delivered += 1;
        on_unit(unit, emit)?;
    }
    Ok(())
}

thread_local! {
    static FEEDING: Cell<bool> = const { Cell::new(false) };
}

/// Whether this thread is inside a subject's code, called by the driver: a panic there is
/// caught and recorded as a crash, so a panic hook may keep quiet about it (the `toolcert`
/// binary's does; otherwise `RUST_BACKTRACE=1` prints a backtrace per crashing case).
pub fn feeding() -> bool {
    FEEDING.with(Cell::get)
}

/// `catch_unwind`, with [`feeding`] true while `f` runs.
fn guarded<R>(f: AssertUnwindSafe<impl FnOnce() -> R>) -> std::thread::Result<R> {
    let outer = FEEDING.with(|c| c.replace(true));
    let result = std::panic::catch_unwind(f);
    FEEDING.with(|c| c.set(outer));
    result
}

fn panic_message(panic: Box<dyn std::any::Any + Send>) -> String {
    panic
        .downcast_ref::<&str>()
        .map(|s| s.to_string())
        .or_else(|| panic.downcast_ref::<String>().cloned())
        .unwrap_or_else(|| "panic with a non-string payload".into())
}

/// Feeds every stream of `case` (`inputs[s]` for `case.streams[s]`, all at one level) to its
/// own accumulator from `factory`, following the case's [`StreamSchedule`]; one observation
/// per stream. Panics are caught and recorded as crashes; a factory that cannot make an
/// accumulator for the level is recorded as a crash too.
pub fn drive(factory: &dyn Factory, case: &Case, inputs: &[Input<'_>], speech: Speech) -> Vec<Observation> {
    let make = |s: usize| {
        let input = inputs[s];
        let spec = StreamSpec {
            tools: &case.streams[s].tools,
            level: input.units.level(),
            dialect: speech.dialect,
            quirks: speech.quirks,
        };
        let made = guarded(AssertUnwindSafe(|| match input.units {
            Units::Events(_) => factory.make(&spec).map(Acc::Events),
            Units::Wire(_) => factory.make_wire(&spec).map(Acc::Wire),
            Units::Bytes(_) => factory.make_bytes(&spec).map(Acc::Bytes),
        }));
        let mut feed = Feed { acc: None, units: input.units, end: input.end, emit: Emit::default(), next: 0 };
        match made {
            Ok(Some(acc)) => feed.acc = Some(acc),
            Ok(None) => {
                feed.emit.obs.crash = Some(format!("the subject cannot be fed at the {} level", spec.level))
            }
            Err(panic) => feed.emit.obs.crash = Some(panic_message(panic)),
        }
        if input.units.is_empty() {
            feed.finish();
        }
        feed
    };
    match &case.schedule {
        // One stream at a time: each is fed to its end and only its observation is kept.
        StreamSchedule::Sequential => (0..inputs.len())
            .map(|s| {
                let mut feed = make(s);
                feed.run_to_end();
                feed.emit.obs
            })
            .collect(),
        StreamSchedule::Concurrent(order) => {
            let mut feeds: Vec<Feed<'_>> = (0..inputs.len()).map(make).collect();
            let n = inputs.len().max(1);
            for &o in order {
                feeds[o as usize % n].step();
            }
            // Whatever the order left goes round-robin.
            let mut progressed = true;
            while progressed {
                progressed = false;
                for feed in feeds.iter_mut() {
                    progressed |= feed.step();
                }
            }
            feeds.into_iter().map(|f| f.emit.obs).collect()
        }
    }
}
