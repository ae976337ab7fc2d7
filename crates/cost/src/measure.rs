//! Pricing a subject on the cost suite: time per turn, the floor beside it, growth and a
//! verdict.
//!
//! Where it sits: `toolcert bench` (and `certify --cost`) hand it a subject and a floor;
//! it renders each [`CostWorkload`] once at the subject's level,
//! times the subject and the floor on it in the same run, and fits how the time grows along
//! each series. An in-process subject is timed directly around the driver; a subprocess
//! reports its own time per run (`elapsed_ns`, docs/PROTOCOL.md), so process start and the
//! pipes are not in the figure. Every series reaches its top tier, so a verdict depends on the
//! shape of the cost and not on how busy the machine is: a slow run shrinks the repetitions,
//! never the sizes. The subject and the floor run in turn, repetition by repetition, and each
//! keeps its least time, so a burst of load prices both alike. Only a run predicted at many
//! budgets (a cubic subject) is not run, and the report says so.

use std::time::Duration;

use toolcert_subject::driver::{drive, Input, Speech};
use toolcert_subject::{Factory, Level, Observation, Outcome, Subject};

use crate::memory::Peak;
use crate::suite::{bounded_plan, suite, CostWorkload, Planned, BOUNDED_SUITE_VERSION, SUITE_VERSION};
use crate::workload::OwnedUnits;
pub use toolcert_runner::cost::{Bounded, CostReport, Growth, SeriesCost, Timing, WorkloadCost};

/// The bounded rule's memory factor: a subject's peak heap on a large stream may be this many
/// times the floor's on the same stream, plus [`MEMORY_SLACK`]. An accumulator keeps each
/// call's buffer and parses it once, as the floor does; a list of every fragment (a million
/// strings for a megabyte) or a copy per fragment is far past it.
pub const MEMORY_FACTOR: f64 = 8.0;

/// What a subject may hold beyond [`MEMORY_FACTOR`] times the floor's peak: its own tables
/// and output, whatever the stream's size.
pub const MEMORY_SLACK: u64 = 1 << 20;

/// A growth exponent above this is superlinear. Linear accumulators fit 0.9–1.1 over the
/// suite's tiers (per-turn constants pull small tiers up, caches large ones); one that
/// re-parses or copies its buffer per fragment fits 1.5–2.
pub const SUPERLINEAR_ABOVE: f64 = 1.3;

/// How much steeper than the floor's a superlinear subject's exponent must also be.
pub const STEEPER_THAN_FLOOR: f64 = 0.3;

/// A tier is run unless one run of it is predicted over this many budgets: the top tiers of a
/// quadratic subject run (their slope is the verdict), a cubic one's never end.
pub const STOP_AFTER_BUDGETS: f64 = 20.0;

/// How to run the suite.
#[derive(Clone, Debug)]
pub struct CostOptions {
    /// The level the subject is fed at.
    pub level: Level,
    /// The dialect below the events level.
    pub speech: Speech,
    /// A run longer than half of this is repeated once only; a series stops before a tier
    /// whose one run is predicted over [`STOP_AFTER_BUDGETS`] of it.
    pub budget: Duration,
    /// The sampling time aimed at per workload (at least 3 samples, at most 15).
    pub sampling: Duration,
    /// Add the 4 MiB tier.
    pub large: bool,
    /// Run the bounded suite (the large streams of a hostile upstream) instead of the cost
    /// suite, and judge the bounded rule.
    pub bounded: bool,
    /// How long the harness lets one run of a subprocess take before it kills it (`None`:
    /// no limit known). A tier whose run failed after at least this long passed the budget
    /// by more than the prediction saw coming: its series stops there, and says so, instead
    /// of the whole price failing.
    pub timeout: Option<Duration>,
}

impl Default for CostOptions {
    fn default() -> Self {
        CostOptions {
            level: Level::Events,
            speech: Speech::default(),
            budget: Duration::from_secs(10),
            sampling: Duration::from_millis(400),
            large: false,
            bounded: false,
            timeout: None,
        }
    }
}

/// The floor a subject is priced against.
pub enum Floor<'a> {
    /// In process: [`RustFloor`] fed the turn's neutral events.
    Rust,
    /// Another subject at the same level and dialect (for a subprocess: the adapter
    /// package's reference, in the subject's language).
    Subject(&'a dyn Subject, String),
    /// No floor; the reason.
    None(String),
}

/// Prices `subject` on the suite. `Err` when the subject cannot be timed (a subprocess that
/// sends no `elapsed_ns`), or crashed.
pub fn price(subject: &dyn Subject, floor: Floor<'_>, opts: &CostOptions) -> Result<CostReport, String> {
    // Built one at a time as they run: the harness holds one large stream, not all of them.
    let workloads: Vec<Planned> = if opts.bounded {
        bounded_plan()
    } else {
        suite(opts.large).into_iter().map(Planned::built).collect()
    };
    let factory = subject.factory();
    let rust_floor = RustFloorFactory;
    // One untimed run of the smallest turn each: a subprocess's first run pays its lazy
    // imports and set-up (an SDK building its models: seconds), which would price the first
    // tier and, through the prediction, stop its series.
    if let Some(first) = workloads.first().map(|p| spoken(p.build(), opts)) {
        let (units, end) = OwnedUnits::render(&first.case.streams[0], opts.level, opts.speech);
        let input = Input { units: units.units(), end };
        Timer::Subject { subject, factory: &*factory }.once(&first, input, opts.speech)?;
        if let Floor::Subject(f, _) = &floor {
            let floor_factory = f.factory();
            Timer::Subject { subject: *f, factory: &*floor_factory }
                .once(&first, input, opts.speech)
                .map_err(|e| format!("the floor: {e}"))?;
        }
    }
    let mut out = Vec::new();
    let mut series_out = Vec::new();
    let mut i = 0;
    while i < workloads.len() {
        let series = workloads[i].series;
        let tiers: Vec<&Planned> = workloads[i..].iter().take_while(|w| w.series == series).collect();
        i += tiers.len();
        let mut stopped = None;
        let mut points: Vec<(f64, f64)> = Vec::new();
        let mut floor_points: Vec<(f64, f64)> = Vec::new();
        let mut rows = Vec::new();
        for planned in tiers {
            let mut w = spoken(planned.build(), opts);
            let (units, end) = OwnedUnits::render(&w.case.streams[0], opts.level, opts.speech);
            let input = Input { units: units.units(), end };
            let mut row = WorkloadCost {
                name: w.name.clone(),
                series: series.into(),
                size: w.size,
                bytes: w.bytes,
                fragment: w.fragment,
                units: input.units.len(),
                subject: None,
                floor: None,
                ns_per_byte: None,
                ratio: None,
                wrong: None,
                growth: Growth::Inconclusive,
                peak_bytes: None,
                floor_peak_bytes: None,
            };
            if stopped.is_none() {
                if let Some(predicted) = predict(&points, w.size) {
                    if predicted > opts.budget.as_secs_f64() * STOP_AFTER_BUDGETS * 1e9 {
                        stopped = Some(format!(
                            "stopped before {}: one run would take about {:.1} s, over {STOP_AFTER_BUDGETS} \
                             times the {} s budget",
                            w.name,
                            predicted / 1e9,
                            opts.budget.as_secs_f64()
                        ));
                    }
                }
            }
            if stopped.is_some() {
                rows.push(row);
                continue;
            }
            let timer = Timer::Subject { subject, factory: &*factory };
            // The floor's input: the turn's neutral events for the Rust floor, the subject's
            // own bytes for a floor subject.
            let floor_units;
            let floor_factory;
            let floor_timer = match &floor {
                Floor::Rust => {
                    floor_units = OwnedUnits::render(&w.case.streams[0], Level::Events, opts.speech);
                    let (units, end) = &floor_units;
                    Some((Timer::Factory(&rust_floor), Input { units: units.units(), end: *end }))
                }
                Floor::Subject(f, _) => {
                    floor_factory = f.factory();
                    Some((Timer::Subject { subject: *f, factory: &*floor_factory }, input))
                }
                Floor::None(_) => None,
            };
            // The stream is in the units now and its expectation in `w.calls`; a subject is
            // handed the units and the offered tools, never the case's arguments again, so
            // the harness drops its copy of them (a large stream is held once less).
            for b in &mut w.case.streams[0].blocks {
                if let toolcert_scenario::Block::Call(c) = b {
                    c.arguments = String::new();
                    c.splits = Vec::new();
                }
            }
            let started = std::time::Instant::now();
            let floor_pair = floor_timer.as_ref().map(|(t, i)| (t, *i));
            let (timing, obs, floor_timing) = match sample(&timer, input, floor_pair, &w, opts) {
                Ok(sampled) => sampled,
                // On the bounded suite a crash is the verdict, not a failure to price.
                Err(e) if opts.bounded => {
                    stopped = Some(format!("stopped at {}: {e}", w.name));
                    rows.push(row);
                    continue;
                }
                Err(e) if opts.timeout.is_some_and(|t| started.elapsed() >= t) => {
                    stopped = Some(format!(
                        "stopped at {}: a run took longer than the {} s a run may take ({e})",
                        w.name,
                        opts.timeout.unwrap_or_default().as_secs()
                    ));
                    rows.push(row);
                    continue;
                }
                Err(e) => return Err(e),
            };
            row.wrong = check(&w, &obs.observation);
            row.peak_bytes = obs.peak;
            row.floor_peak_bytes = obs.floor_peak;
            points.push((w.size as f64, timing.min_ns as f64));
            row.ns_per_byte = Some(timing.min_ns as f64 / w.bytes as f64);
            row.subject = Some(timing);
            if let (Some(f), Some(s)) = (&floor_timing, &row.subject) {
                floor_points.push((w.size as f64, f.min_ns as f64));
                row.ratio = Some(s.min_ns as f64 / f.min_ns.max(1) as f64);
            }
            row.floor = floor_timing;
            rows.push(row);
        }
        let exponent = fit(&points);
        let floor_exponent = fit(&floor_points);
        // The slope between the two largest tiers: what the cost tends to. A subject with a
        // large cost per turn (an SDK building a request and an HTTP client) looks flat over
        // the small tiers, which pulls the fit over all tiers toward 1 however steep the top.
        let top_exponent = top_slope(&points);
        let floor_top_exponent = top_slope(&floor_points);
        // Superlinear: above the bound, and clearly steeper than the floor measured beside
        // it (the floor is linear by construction, so a steep floor means the machine, its
        // caches or its load, bent both curves alike), over all tiers or at the top.
        let steep = |e: Option<f64>, f: Option<f64>| {
            e.is_some_and(|e| e > SUPERLINEAR_ABOVE && f.is_none_or(|f| e - f > STEEPER_THAN_FLOOR))
        };
        let growth = match exponent {
            Some(_) if steep(exponent, floor_exponent) || steep(top_exponent, floor_top_exponent) => {
                Growth::Superlinear
            }
            Some(_) => Growth::Linear,
            None => Growth::Inconclusive,
        };
        for r in &mut rows {
            r.growth = growth;
        }
        out.extend(rows);
        series_out.push(SeriesCost {
            series: series.into(),
            exponent,
            floor_exponent,
            growth,
            stopped,
            top_exponent,
            floor_top_exponent,
        });
    }
    let growth = if series_out.iter().any(|s| s.growth == Growth::Superlinear) {
        Growth::Superlinear
    } else if series_out.iter().all(|s| s.growth == Growth::Linear) {
        Growth::Linear
    } else {
        Growth::Inconclusive
    };
    let bounded = opts.bounded.then(|| bounded_verdict(&out, &series_out));
    let floor = match floor {
        Floor::Rust => {
            "Rust, in process: each call's fragments appended to a String, one strict serde_json parse \
             per call, fed the turn's neutral events"
                .to_string()
        }
        Floor::Subject(_, about) => about,
        Floor::None(why) => format!("none: {why}"),
    };
    Ok(CostReport {
        suite_version: if opts.bounded { BOUNDED_SUITE_VERSION } else { SUITE_VERSION },
        subject: subject.name(),
        level: opts.level,
        dialect: (opts.level != Level::Events).then(|| opts.speech.dialect.to_string()),
        floor,
        budget_s: opts.budget.as_secs_f64(),
        workloads: out,
        series: series_out,
        growth,
        bounded,
    })
}

/// The bounded rule over a priced bounded suite: every stream dispatched right or refused
/// cleanly, every series run to its top with a time that grows no faster than the floor's,
/// and each peak heap within [`MEMORY_FACTOR`] of the floor's plus [`MEMORY_SLACK`].
fn bounded_verdict(rows: &[WorkloadCost], series: &[SeriesCost]) -> Bounded {
    let mut broken = Vec::new();
    for s in series {
        if let Some(why) = &s.stopped {
            broken.push(format!("{}: {why}", s.series));
        }
        if s.growth == Growth::Superlinear {
            let e = s.top_exponent.or(s.exponent).unwrap_or(f64::NAN);
            broken.push(format!(
                "{}: time grows as size^{e:.2}{}",
                s.series,
                s.floor_top_exponent
                    .or(s.floor_exponent)
                    .map_or(String::new(), |f| format!(", the floor's as size^{f:.2}"))
            ));
        }
    }
    for r in rows {
        if let Some(wrong) = &r.wrong {
            broken.push(format!("{}: {wrong}", r.name));
        }
        if let (Some(peak), Some(floor)) = (r.peak_bytes, r.floor_peak_bytes) {
            let allowed = (floor as f64 * MEMORY_FACTOR) as u64 + MEMORY_SLACK;
            if peak > allowed {
                broken.push(format!(
                    "{}: held {} at its peak, {:.0} times the floor's {} (at most {MEMORY_FACTOR} times, plus {})",
                    r.name,
                    crate::bytes(peak),
                    peak as f64 / floor.max(1) as f64,
                    crate::bytes(floor),
                    crate::bytes(MEMORY_SLACK)
                ));
            }
        }
    }
    Bounded {
        holds: broken.is_empty(),
        broken,
        memory_factor: MEMORY_FACTOR,
        memory_slack_bytes: MEMORY_SLACK,
    }
}

/// `w` as the dialect below the events level can send it: OpenAI Chat has no per-call
/// terminal, so its turns go interleaved (in block order: the same bytes, one terminal).
fn spoken(mut w: CostWorkload, opts: &CostOptions) -> CostWorkload {
    if opts.level == Level::Events {
        return w;
    }
    let turn = &w.case.streams[0];
    let neutral = toolcert_render::render(turn);
    if toolcert_dialect::render_wire(turn, &neutral, opts.speech.dialect, opts.speech.quirks).is_err() {
        w.case.streams[0].shape = toolcert_scenario::Shape::Interleaved(Default::default());
    }
    w
}

enum Timer<'a> {
    /// A subject: its own `observe` (timed by its `elapsed_ns`) or, in process, its
    /// factory through the driver.
    Subject { subject: &'a dyn Subject, factory: &'a dyn Factory },
    /// A factory through the driver.
    Factory(&'a dyn Factory),
}

impl Timer<'_> {
    /// One run: its time and what the subject reported.
    fn once(
        &self,
        w: &CostWorkload,
        input: Input<'_>,
        speech: Speech,
    ) -> Result<(Duration, Observation, Option<u64>), String> {
        let case = &w.case;
        let timed = |factory: &dyn Factory| {
            let peak = Peak::start();
            let started = thread_cpu();
            let obs = drive(factory, case, &[input], speech).pop().expect("one stream, one observation");
            (thread_cpu().saturating_sub(started), obs, peak.bytes())
        };
        let (elapsed, obs, peak) = match self {
            Timer::Factory(f) => timed(*f),
            Timer::Subject { subject, factory } => match subject.observe(case, &[input], speech) {
                Some(mut obs) => {
                    let obs = obs.pop().unwrap_or_default();
                    if let Some(crash) = &obs.crash {
                        return Err(format!("{}: {crash}", w.name));
                    }
                    let Some(elapsed) = subject.last_elapsed() else {
                        return Err(format!(
                            "{} reports no time of its own (`elapsed_ns` in its run replies, \
                             docs/PROTOCOL.md): the adapter packages send it from version 0.1.1; \
                             a hand-written adapter adds it",
                            subject.name()
                        ));
                    };
                    // A subprocess's heap is its adapter's to report (`peak_bytes`).
                    (elapsed, obs, subject.last_peak_bytes())
                }
                None => timed(*factory),
            },
        };
        if let Some(crash) = &obs.crash {
            return Err(format!("{}: crashed: {crash}", w.name));
        }
        Ok((elapsed, obs, peak))
    }

    fn in_process(&self) -> bool {
        match self {
            Timer::Factory(_) => true,
            Timer::Subject { subject, .. } => subject.last_elapsed().is_none(),
        }
    }
}

/// The calling thread's CPU time: what an in-process run costs, without the time other
/// processes preempted it for (on a shared machine the wall clock prices their work too). The
/// subprocess adapters report their process's CPU time the same way (`elapsed_ns`).
#[cfg(unix)]
fn thread_cpu() -> Duration {
    let mut ts = libc::timespec { tv_sec: 0, tv_nsec: 0 };
    // SAFETY: clock_gettime writes one timespec through a valid pointer; this clock exists on
    // every Unix toolcert runs on, and a failure leaves the zero written above.
    unsafe { libc::clock_gettime(libc::CLOCK_THREAD_CPUTIME_ID, &mut ts) };
    Duration::new(ts.tv_sec.max(0) as u64, ts.tv_nsec.clamp(0, 999_999_999) as u32)
}

/// Elsewhere, the monotonic clock from a fixed start.
#[cfg(not(unix))]
fn thread_cpu() -> Duration {
    static START: std::sync::OnceLock<std::time::Instant> = std::sync::OnceLock::new();
    START.get_or_init(std::time::Instant::now).elapsed()
}

/// Runs `w` on the subject and, in turn with it, on the floor, until the sampling time is spent
/// (3 to 15 rounds; one when a single run of the subject takes more than half the budget). A
/// round is one sample of each, so load that comes and goes slows both alike, and each keeps
/// its least time. A sample of a fast in-process run is a batch of runs lasting at least a
/// millisecond, so the clock's resolution does not show. `Err` names the floor when it failed.
fn sample(
    timer: &Timer<'_>,
    input: Input<'_>,
    floor: Option<(&Timer<'_>, Input<'_>)>,
    w: &CostWorkload,
    opts: &CostOptions,
) -> Result<(Timing, Sampled, Option<Timing>), String> {
    let (first, observation, peak) = timer.once(w, input, opts.speech)?;
    let (floor_first, floor_peak) = match floor {
        Some((t, i)) => {
            let (time, _, peak) = t.once(w, i, opts.speech).map_err(|e| format!("the floor: {e}"))?;
            (Some(time), peak)
        }
        None => (None, None),
    };
    let batch_of = |t: &Timer<'_>, first: Duration| {
        if t.in_process() {
            (Duration::from_millis(1).as_nanos() / first.max(Duration::from_nanos(1)).as_nanos())
                .clamp(1, 10_000) as u32
        } else {
            1
        }
    };
    let batch = batch_of(timer, first);
    let per_round = first * batch + floor_first.unwrap_or_default();
    let wanted = if first > opts.budget / 2 {
        1
    } else {
        (opts.sampling.as_nanos() / per_round.max(Duration::from_nanos(1)).as_nanos()).clamp(3, 15) as usize
    };
    let floor_batch = match (floor, floor_first) {
        (Some((t, _)), Some(f)) => batch_of(t, f),
        _ => 1,
    };
    let mut samples = Vec::with_capacity(wanted);
    let mut floor_samples = Vec::with_capacity(wanted);
    if batch == 1 {
        samples.push(first.as_nanos() as u64);
    }
    if let (1, Some(f)) = (floor_batch, floor_first) {
        floor_samples.push(f.as_nanos() as u64);
    }
    let run = |t: &Timer<'_>, i: Input<'_>, batch: u32| -> Result<u64, String> {
        let mut total = Duration::ZERO;
        for _ in 0..batch {
            total += t.once(w, i, opts.speech)?.0;
        }
        Ok((total.as_nanos() / batch as u128) as u64)
    };
    while samples.len() < wanted || (floor.is_some() && floor_samples.len() < wanted) {
        if samples.len() < wanted {
            samples.push(run(timer, input, batch)?);
        }
        if let Some((t, i)) = floor {
            if floor_samples.len() < wanted {
                floor_samples.push(run(t, i, floor_batch).map_err(|e| format!("the floor: {e}"))?);
            }
        }
    }
    let timing = |mut samples: Vec<u64>| {
        samples.sort_unstable();
        Timing {
            median_ns: samples[samples.len() / 2],
            min_ns: samples[0],
            max_ns: samples[samples.len() - 1],
            samples: samples.len(),
        }
    };
    let floor_timing = floor.is_some().then(|| timing(floor_samples));
    Ok((timing(samples), Sampled { observation, peak, floor_peak }, floor_timing))
}

/// What the first run of a tier showed besides its time: the observation (checked) and
/// the peak heap of the subject and the floor (the same on every run of the same input).
struct Sampled {
    observation: Observation,
    peak: Option<u64>,
    floor_peak: Option<u64>,
}

/// What the subject got wrong on `w`, if anything: every call dispatched with its exact
/// arguments, in order, and the whole text.
fn check(w: &CostWorkload, obs: &Observation) -> Option<String> {
    if let Some(e) = &obs.error {
        // A clean refusal: a turn error with nothing dispatched before it.
        let dispatched = obs.outcomes.iter().any(|o| !matches!(o.value, Outcome::Failed { .. }));
        if w.refusable && !dispatched {
            return None;
        }
        return Some(format!("turn error {}", e.value));
    }
    if obs.outcomes.len() != w.calls.len() {
        return Some(format!("{} outcomes for {} calls", obs.outcomes.len(), w.calls.len()));
    }
    for (o, (id, args)) in obs.outcomes.iter().zip(&w.calls) {
        let Some(args) = args else {
            match &o.value {
                Outcome::Failed { reason: toolcert_subject::FailReason::Unparseable, .. } => continue,
                other => return Some(format!("{id}: {} instead of failed (unparseable)", other.label())),
            }
        };
        match &o.value {
            Outcome::Dispatchable { call_id, args: got, .. } if call_id == id && got == args => {}
            Outcome::Dispatchable { call_id, .. } if call_id == id => {
                return Some(format!(
                    "{id}: dispatched with arguments other than the document's (certify says how they differ)"
                ))
            }
            other => return Some(format!("{id}: {} instead of its arguments", other.label())),
        }
    }
    (obs.text != w.text).then(|| "the text differs".to_string())
}

/// The least-squares slope of ln(time) over ln(size) (fastest samples); `None` under two
/// points.
fn fit(points: &[(f64, f64)]) -> Option<f64> {
    if points.len() < 2 {
        return None;
    }
    let n = points.len() as f64;
    let (xs, ys): (Vec<f64>, Vec<f64>) = points.iter().map(|&(x, y)| (x.ln(), y.max(1.0).ln())).unzip();
    let mx = xs.iter().sum::<f64>() / n;
    let my = ys.iter().sum::<f64>() / n;
    let sxy: f64 = xs.iter().zip(&ys).map(|(x, y)| (x - mx) * (y - my)).sum();
    let sxx: f64 = xs.iter().map(|x| (x - mx) * (x - mx)).sum();
    (sxx > 0.0).then(|| sxy / sxx)
}

/// The slope of ln(time) over ln(size) between the two largest tiers; `None` under two
/// points.
fn top_slope(points: &[(f64, f64)]) -> Option<f64> {
    match points {
        [.., (x0, y0), (x1, y1)] => Some((y1.max(1.0) / y0.max(1.0)).ln() / (x1 / x0).ln()),
        _ => None,
    }
}

/// The time of one run at `size`, extrapolated from the last two tiers at their local slope
/// (never below linear); `None` before any tier ran.
fn predict(points: &[(f64, f64)], size: usize) -> Option<f64> {
    let &(x1, y1) = points.last()?;
    let slope = match points {
        [.., (x0, y0), _] => ((y1.max(1.0) / y0.max(1.0)).ln() / (x1 / x0).ln()).max(1.0),
        _ => 1.0,
    };
    Some(y1 * (size as f64 / x1).powf(slope))
}

/// The Rust floor: each call's fragments appended to one `String`, one strict parse per call
/// at the stop, the text passed through. What any accumulator that keeps the raw buffer
/// must at least spend.
#[derive(Debug, Default)]
pub struct RustFloor {
    calls: Vec<(u32, String, String, String)>,
    stop: Option<toolcert_scenario::StopReason>,
}

impl toolcert_subject::Accumulator for RustFloor {
    fn on_event(
        &mut self,
        event: &toolcert_subject::Event<'_>,
        out: &mut toolcert_subject::Emit,
    ) -> Result<(), toolcert_subject::TurnError> {
        use toolcert_subject::Event;
        match event {
            Event::TextDelta { text } => out.text(text),
            Event::CallStart { index, call_id, name } => {
                self.calls.push((*index, call_id.to_string(), name.to_string(), String::new()))
            }
            Event::ArgsDelta { index, fragment } => {
                // The newest call first: fragments nearly always belong to it.
                if let Some(c) = self.calls.iter_mut().rev().find(|c| c.0 == *index) {
                    c.3.push_str(fragment);
                }
            }
            Event::Stop { reason } => self.stop = Some(*reason),
            _ => {}
        }
        Ok(())
    }

    fn finish(
        &mut self,
        _end: toolcert_scenario::StreamEnd,
        out: &mut toolcert_subject::Emit,
    ) -> Result<(), toolcert_subject::TurnError> {
        let complete = self.stop.is_some_and(|r| !r.is_truncating());
        for (_, call_id, name, args) in self.calls.drain(..) {
            out.outcome(match serde_json::from_str(&args) {
                Ok(args) if complete => Outcome::Dispatchable { call_id, name, args },
                _ => Outcome::Failed {
                    reason: toolcert_subject::FailReason::Unparseable,
                    call_id: Some(call_id),
                    name: Some(name),
                    raw: args,
                },
            });
        }
        Ok(())
    }
}

struct RustFloorFactory;

impl Factory for RustFloorFactory {
    fn make(&self, _: &toolcert_subject::StreamSpec<'_>) -> Option<Box<dyn toolcert_subject::Accumulator>> {
        Some(Box::new(RustFloor::default()))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn fit_finds_the_exponent_of_a_power_law() {
        let lin: Vec<(f64, f64)> = [1e3, 8e3, 64e3].iter().map(|&x| (x, 5.0 * x)).collect();
        let quad: Vec<(f64, f64)> = [1e3, 8e3, 64e3].iter().map(|&x| (x, 0.01 * x * x)).collect();
        assert!((fit(&lin).unwrap() - 1.0).abs() < 1e-9);
        assert!((fit(&quad).unwrap() - 2.0).abs() < 1e-9);
        assert_eq!(fit(&lin[..1]), None);
    }

    #[test]
    fn the_top_slope_sees_a_quadratic_under_a_large_cost_per_turn() {
        // 1 ms a turn, then quadratic: flat at first, steep at the top.
        let t = |x: f64| 1e6 + 1e-2 * x * x;
        let points: Vec<(f64, f64)> = [1e3, 8e3, 64e3].iter().map(|&x| (x, t(x))).collect();
        let all = fit(&points).unwrap();
        let top = top_slope(&points).unwrap();
        assert!(all < 1.3, "the fit over all tiers misses it: {all}");
        assert!(top > 1.5, "{top}");
        assert_eq!(top_slope(&points[..1]), None);
    }

    /// A subprocess-like subject: it answers turns of up to `answers` units at once with its
    /// own tiny time, and on a larger one takes `hang` and then crashes, as a subprocess the
    /// harness killed for time does.
    struct Hangs {
        answers: usize,
        hang: Duration,
        elapsed: std::cell::Cell<Option<Duration>>,
    }

    impl Subject for Hangs {
        fn name(&self) -> String {
            "hangs".into()
        }
        fn factory(&self) -> Box<dyn Factory> {
            Box::new(RustFloorFactory)
        }
        fn observe(
            &self,
            _: &toolcert_scenario::Case,
            inputs: &[Input<'_>],
            _: Speech,
        ) -> Option<Vec<Observation>> {
            let units = inputs[0].units.len();
            if units > self.answers {
                std::thread::sleep(self.hang);
                self.elapsed.set(None);
                return Some(vec![Observation { crash: Some("killed".into()), ..Observation::default() }]);
            }
            self.elapsed.set(Some(Duration::from_nanos(units as u64 * 100)));
            Some(vec![Observation::default()])
        }
        fn last_elapsed(&self) -> Option<Duration> {
            self.elapsed.get()
        }
    }

    #[test]
    fn a_tier_that_outlasts_the_run_timeout_stops_its_series_and_says_so() {
        let opts = CostOptions {
            budget: Duration::from_secs(60),
            sampling: Duration::from_millis(1),
            timeout: Some(Duration::from_millis(20)),
            ..Default::default()
        };
        let first = suite(false)[0].clone();
        let (units, _) = OwnedUnits::render(&first.case.streams[0], opts.level, opts.speech);
        let subject = Hangs {
            answers: units.units().len(),
            hang: Duration::from_millis(25),
            elapsed: Default::default(),
        };
        let report = price(&subject, Floor::None("test".into()), &opts).expect("priced despite the hang");
        let call = report.series.iter().find(|s| s.series == first.series).unwrap();
        let why = call.stopped.as_deref().unwrap_or_default();
        assert!(why.starts_with("stopped at ") && why.contains("longer than"), "{why}");
        // The tier that hung has no price; the one before it does.
        let tiers: Vec<_> = report.workloads.iter().filter(|w| w.series == first.series).collect();
        assert!(tiers[0].subject.is_some() && tiers[1].subject.is_none());
        // A crash that comes before the timeout is still a failure of the whole price.
        let quick = Hangs { answers: 0, hang: Duration::ZERO, elapsed: Default::default() };
        assert!(price(&quick, Floor::None("test".into()), &opts).is_err());
    }

    /// A subprocess-like subject whose own reported time is `cost(units)` nanoseconds: the
    /// rule a cost verdict follows, tested with no clock in it.
    struct Costs {
        cost: fn(f64) -> f64,
        elapsed: std::cell::Cell<Option<Duration>>,
    }

    impl Subject for Costs {
        fn name(&self) -> String {
            "costs".into()
        }
        fn factory(&self) -> Box<dyn Factory> {
            Box::new(RustFloorFactory)
        }
        fn observe(
            &self,
            _: &toolcert_scenario::Case,
            inputs: &[Input<'_>],
            _: Speech,
        ) -> Option<Vec<Observation>> {
            let ns = (self.cost)(inputs[0].units.len() as f64);
            self.elapsed.set(Some(Duration::from_nanos(ns as u64)));
            Some(vec![Observation::default()])
        }
        fn last_elapsed(&self) -> Option<Duration> {
            self.elapsed.get()
        }
    }

    #[test]
    fn a_slow_top_tier_runs_and_only_a_run_at_twenty_budgets_stops_a_series() {
        let opts = CostOptions { budget: Duration::from_millis(500), ..Default::default() };
        // Quadratic, about 2 s a run at 512 KiB of 1-byte fragments: over the budget, which
        // once skipped the tier and left the flat small tiers to decide.
        let quadratic = Costs { cost: |u| u * u / 128.0, elapsed: Default::default() };
        let report = price(&quadratic, Floor::None("test".into()), &opts).unwrap();
        for s in &report.series {
            assert_eq!(s.stopped, None, "{}", s.series);
            assert_eq!(s.growth, Growth::Superlinear, "{}", s.series);
        }
        let top = report.workloads.iter().find(|w| w.name == "call/1/512KiB").unwrap();
        let t = top.subject.as_ref().expect("the top tier ran").min_ns;
        assert!(t > 1_000_000_000 && top.subject.as_ref().unwrap().samples == 1, "{t} ns");
        // Cubic: the 512 KiB tier is predicted at minutes, over 20 budgets: not run.
        let cubic = Costs { cost: |u| u * u * u / 1e6, elapsed: Default::default() };
        let report = price(&cubic, Floor::None("test".into()), &opts).unwrap();
        let one = report.series.iter().find(|s| s.series == "call/1").unwrap();
        let why = one.stopped.as_deref().unwrap_or_default();
        assert!(why.starts_with("stopped before call/1/512KiB") && why.contains("over 20 times"), "{why}");
        assert_eq!(one.growth, Growth::Superlinear);
    }

    #[test]
    fn a_bedrock_turn_is_sent_as_event_stream_messages_and_read_right() {
        let speech = Speech { dialect: toolcert_subject::Dialect::Bedrock, quirks: Default::default() };
        let w = &suite(false)[0];
        let (units, end) = OwnedUnits::render(&w.case.streams[0], Level::Bytes, speech);
        let input = Input { units: units.units(), end };
        assert!(input.units.len() > 2, "one chunk per message");
        let obs = drive(&toolcert_reference::ReferenceFactory, &w.case, &[input], speech).pop().unwrap();
        assert_eq!(check(w, &obs), None, "{obs:?}");
    }

    #[test]
    fn prediction_extrapolates_at_the_local_slope_never_below_linear() {
        // Quadratic: 8x the size costs 64x.
        let p = predict(&[(1e3, 1e3), (8e3, 64e3)], 64_000).unwrap();
        assert!((p - 64e3 * 64.0).abs() / p < 1e-9, "{p}");
        // Sublinear tiers are extrapolated linearly.
        let p = predict(&[(1e3, 1e3), (8e3, 2e3)], 64_000).unwrap();
        assert!((p - 16e3).abs() < 1e-6, "{p}");
    }
}
