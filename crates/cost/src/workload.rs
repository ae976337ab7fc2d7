//! Benchmarking an accumulator on the standard workloads (criterion, callgrind).
//! (`toolcert::bench` re-exports this module.)
//!
//! A [`Workload`] is one turn with one call whose argument document is about 28 B, 610 B,
//! 64 KiB or 1 MiB ([`SIZES`]), sent in fragments of 1, 13 or 64 bytes ([`FRAGMENTS`]),
//! ending `tool_use`. [`Workload::stream`] renders it once, ahead of timing, at the level
//! your accumulator takes (events, or one dialect's SSE events, or SSE bytes with one
//! transport chunk per event); [`Stream::feed`] feeds it to a fresh accumulator from your
//! factory through the same driver `toolcert certify` uses; [`Workload::verify`] checks the
//! outcome, cheaply enough to do in every iteration, so a benchmark is also a correctness
//! check. Name benchmarks `{group}/{case}/{impl}` with [`Workload::name`] as the case, so
//! yours line up with toolcert's (`benches/accumulate.rs`, `docs/PERFORMANCE.md`):
//!
//! ```no_run
//! use criterion::{BenchmarkId, Criterion};
//! use toolcert_cost::workload::workloads;
//! use toolcert_subject::{Dialect, Level, StreamSpec};
//!
//! # struct Mine(toolcert_reference::Reference);
//! # impl toolcert_subject::Accumulator for Mine {
//! #     fn on_event(&mut self, e: &toolcert_subject::Event<'_>, o: &mut toolcert_subject::Emit)
//! #         -> Result<(), toolcert_subject::TurnError> { self.0.on_event(e, o) }
//! #     fn finish(&mut self, e: toolcert_subject::StreamEnd, o: &mut toolcert_subject::Emit)
//! #         -> Result<(), toolcert_subject::TurnError> { self.0.finish(e, o) }
//! # }
//! fn bench_mine(c: &mut Criterion) {
//!     let factory = |_: &StreamSpec<'_>| Mine(toolcert_reference::Reference::new());
//!     let mut group = c.benchmark_group("accumulate");
//!     for w in workloads() {
//!         let stream = w.stream(Level::Events, Dialect::Anthropic);
//!         group.bench_function(BenchmarkId::new(w.name(), "mine"), |b| {
//!             b.iter(|| w.verify(&stream.feed(&factory)).unwrap())
//!         });
//!     }
//! }
//! ```
//!
//! [`peers`] holds what toolcert compares the reference with: the floor (append, then one
//! strict parse) and the naive accumulators that re-parse on every fragment; [`Impl`] names
//! them all and runs one on a workload, for the benches, the linearity test and callgrind.

use std::fmt::Write as _;

use serde_json::Value;
use toolcert_dialect::render_wire;
use toolcert_reference::ReferenceFactory;
use toolcert_render::render;
use toolcert_scenario::{Block, Call, Case, Ending, Shape, StopReason, StreamEnd, Turn};
use toolcert_sse::{encode, Framing, SseEvent};
use toolcert_subject::driver::{drive, Input, Speech, Units};
use toolcert_subject::{Dialect, Event, Factory, Level, Observation, Outcome, Quirks, WireMessage};

/// The argument document sizes: name and length in bytes.
pub const SIZES: [(&str, usize); 4] = [("28B", 28), ("610B", 610), ("64KiB", 64 << 10), ("1MiB", 1 << 20)];

/// The fragment sizes, in bytes (a fragment never splits a character, so it can be a few
/// bytes longer).
pub const FRAGMENTS: [usize; 3] = [1, 13, 64];

/// The call id and tool name of every workload's call.
pub const CALL_ID: &str = "toolu_01BenchA";
pub const TOOL: &str = "create_ticket";

/// One benchmark workload: one call's argument document sent in fragments of about
/// `fragment` bytes, in one turn that ends `tool_use`.
#[derive(Clone, Debug)]
pub struct Workload {
    /// The size's name (`610B`).
    pub size: &'static str,
    pub fragment: usize,
    /// The argument document, exactly as the model wrote it.
    pub document: String,
    /// Its strict parse.
    pub expected: Value,
    /// The scenario (one turn, Anthropic shape).
    pub case: Case,
}

/// Every workload: each size of [`SIZES`] with each fragment size of [`FRAGMENTS`].
pub fn workloads() -> Vec<Workload> {
    SIZES
        .iter()
        .flat_map(|&(name, len)| FRAGMENTS.iter().map(move |&f| Workload::new(name, len, f)))
        .collect()
}

/// The workload of a size name (`28B`, `610B`, `64KiB`, `1MiB`) and a fragment size.
pub fn workload(size: &str, fragment: usize) -> Option<Workload> {
    let &(name, len) = SIZES.iter().find(|(n, _)| *n == size)?;
    Some(Workload::new(name, len, fragment))
}

impl Workload {
    /// A workload whose document is [`document`]`(len)`, under the size name `size`.
    pub fn new(size: &'static str, len: usize, fragment: usize) -> Workload {
        let document = document(len);
        let expected = serde_json::from_str(&document).expect("bench documents are JSON");
        let splits = char_splits(&document, fragment.max(1));
        let turn = Turn {
            tools: vec![],
            blocks: vec![Block::Call(Call {
                index: 0,
                call_id: CALL_ID.into(),
                name: TOOL.into(),
                arguments: document.clone(),
                splits,
            })],
            shape: Shape::PerCall,
            ending: Ending::Stop(StopReason::ToolUse),
            faults: vec![],
            pings: vec![],
            transport: Default::default(),
            wire: Default::default(),
        };
        let case = Case::single(format!("bench/{size}-{fragment}"), turn);
        Workload { size, fragment, document, expected, case }
    }

    /// The case part of a benchmark id: `610B-13`.
    pub fn name(&self) -> String {
        format!("{}-{}", self.size, self.fragment)
    }

    fn call(&self) -> &Call {
        self.case.streams[0].calls().next().expect("a workload has one call")
    }

    /// The argument fragments in order.
    pub fn fragments(&self) -> Vec<&str> {
        let c = self.call();
        toolcert_scenario::fragments(&c.arguments, &c.splits).map(|(_, f)| f).collect()
    }

    /// The turn rendered at `level` (in `dialect` below the events level), ready to feed.
    /// The bytes level sends one transport chunk per SSE event, as a server that flushes
    /// each event.
    pub fn stream(&self, level: Level, dialect: Dialect) -> Stream {
        let turn = &self.case.streams[0];
        let speech = Speech { dialect, quirks: Quirks::default() };
        let (units, end) = OwnedUnits::render(turn, level, speech);
        // The driver reads only the tools and the schedule: no second copy of the document.
        let shell =
            Case::single(self.case.name.clone(), Turn { blocks: vec![], ..turn.clone_without_blocks() });
        Stream { shell, units, end, speech }
    }

    /// Checks an observation cheaply (in every iteration): one dispatchable outcome for the
    /// call, no turn error, no crash, and args that match the document's top level (keys,
    /// value kinds, lengths of strings and arrays). [`Workload::verify_full`] compares all.
    pub fn verify(&self, obs: &Observation) -> Result<(), String> {
        self.verify_with(obs, |args| self.verify_value(args))
    }

    /// Like [`Workload::verify`], comparing the whole args with the document's strict parse.
    pub fn verify_full(&self, obs: &Observation) -> Result<(), String> {
        self.verify_with(obs, |args| {
            if *args == self.expected {
                Ok(())
            } else {
                Err("the args differ from the document's strict parse".into())
            }
        })
    }

    fn verify_with(
        &self,
        obs: &Observation,
        args_ok: impl Fn(&Value) -> Result<(), String>,
    ) -> Result<(), String> {
        if let Some(crash) = &obs.crash {
            return Err(format!("{}: crashed: {crash}", self.name()));
        }
        if let Some(e) = &obs.error {
            return Err(format!("{}: turn error {}", self.name(), e.value));
        }
        match obs.outcomes.as_slice() {
            [one] => match &one.value {
                Outcome::Dispatchable { call_id, name, args } if call_id == CALL_ID && name == TOOL => {
                    args_ok(args).map_err(|e| format!("{}: {e}", self.name()))
                }
                other => {
                    Err(format!("{}: expected a dispatchable {CALL_ID}, got {}", self.name(), other.label()))
                }
            },
            many => Err(format!("{}: expected one outcome, got {}", self.name(), many.len())),
        }
    }

    /// Checks a parsed document cheaply against the expected one: the same top-level keys,
    /// each value of the same kind, strings and arrays of the same length.
    pub fn verify_value(&self, v: &Value) -> Result<(), String> {
        let (Value::Object(got), Value::Object(want)) = (v, &self.expected) else {
            return if *v == self.expected { Ok(()) } else { Err("not the expected value".into()) };
        };
        if got.len() != want.len() {
            return Err(format!("{} top-level keys, expected {}", got.len(), want.len()));
        }
        for ((gk, gv), (wk, wv)) in got.iter().zip(want) {
            let same = gk == wk
                && match (gv, wv) {
                    (Value::String(a), Value::String(b)) => a.len() == b.len(),
                    (Value::Array(a), Value::Array(b)) => a.len() == b.len(),
                    (Value::Object(a), Value::Object(b)) => a.len() == b.len(),
                    (a, b) => a == b,
                };
            if !same {
                return Err(format!("top-level `{gk}` differs from the expected `{wk}`"));
            }
        }
        Ok(())
    }
}

trait WithoutBlocks {
    fn clone_without_blocks(&self) -> Turn;
}

impl WithoutBlocks for Turn {
    fn clone_without_blocks(&self) -> Turn {
        Turn {
            tools: self.tools.clone(),
            blocks: vec![],
            shape: self.shape.clone(),
            ending: self.ending.clone(),
            faults: vec![],
            pings: vec![],
            transport: Default::default(),
            wire: Default::default(),
        }
    }
}

/// Split points every `n` bytes, each moved forward to a character boundary.
pub(crate) fn char_splits(doc: &str, n: usize) -> Vec<usize> {
    let mut out = Vec::with_capacity(doc.len() / n + 1);
    let mut at = 0;
    loop {
        let mut end = at + n;
        if end >= doc.len() {
            return out;
        }
        while !doc.is_char_boundary(end) {
            end += 1;
        }
        out.push(end);
        at = end;
    }
}

/// A workload's turn rendered at one level.
#[derive(Debug)]
pub struct Stream {
    shell: Case,
    units: OwnedUnits,
    end: StreamEnd,
    speech: Speech,
}

/// A turn's units at one level, owned, rendered once ahead of timing.
#[derive(Debug)]
pub(crate) enum OwnedUnits {
    Events(Vec<Event<'static>>),
    Wire(Vec<WireMessage>),
    Bytes(toolcert_subject::Chunks),
}

impl OwnedUnits {
    /// `turn` at `level` (in `speech` below the events level). The bytes level sends one
    /// transport chunk per SSE event, as a server that flushes each event.
    pub(crate) fn render(turn: &Turn, level: Level, speech: Speech) -> (OwnedUnits, StreamEnd) {
        let rendered = render(turn);
        let wire = || {
            render_wire(turn, &rendered, speech.dialect, speech.quirks)
                .unwrap_or_else(|e| panic!("a cost turn speaks every dialect: {e}"))
        };
        let units = match level {
            Level::Events => {
                OwnedUnits::Events(rendered.events.iter().cloned().map(Event::into_owned).collect())
            }
            Level::Wire => OwnedUnits::Wire(wire().events),
            Level::Bytes => {
                let wire = wire();
                // A binary framing: one message per chunk, as a server that flushes each (the
                // SSE path below would find no event and send nothing).
                let def = toolcert_dialect::def(speech.dialect);
                if def.binary() {
                    let chunks = wire.events.iter().filter_map(|m| def.message_bytes(m)).collect();
                    return (OwnedUnits::Bytes(chunks), rendered.end);
                }
                // The SSE dialects (`Impl` uses Anthropic).
                let events: Vec<&SseEvent> = wire.events.iter().filter_map(WireMessage::as_sse).collect();
                let encoded = encode(&events, &Framing::default());
                OwnedUnits::Bytes(toolcert_subject::Chunks::cut(encoded.bytes, encoded.ends))
            }
        };
        (units, rendered.end)
    }

    pub(crate) fn units(&self) -> Units<'_> {
        match self {
            OwnedUnits::Events(e) => Units::Events(e),
            OwnedUnits::Wire(w) => Units::Wire(w),
            OwnedUnits::Bytes(b) => Units::Bytes(b),
        }
    }
}

impl Stream {
    /// The stream as the driver takes it.
    pub fn input(&self) -> Input<'_> {
        Input { units: self.units.units(), end: self.end }
    }

    /// How many units (events, SSE events or chunks) the stream has.
    pub fn len(&self) -> usize {
        self.input().units.len()
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Feeds the stream to a fresh accumulator from `factory` (at the stream's level) and
    /// returns what it reported.
    pub fn feed(&self, factory: &dyn Factory) -> Observation {
        drive(factory, &self.shell, &[self.input()], self.speech).pop().expect("one stream, one observation")
    }

    /// Feeds an events-level stream to a fresh [`Reference`](toolcert_reference::Reference)
    /// directly (`on_event` per event, then `finish`), as the reference's own user would:
    /// the reference's cost without the driver's. A turn error is recorded as the driver
    /// records it; other levels give an empty observation.
    pub fn feed_direct(&self) -> Observation {
        use toolcert_subject::{Accumulator, Emit, Stamp, Timed};
        let mut emit = Emit::default();
        if let OwnedUnits::Events(events) = &self.units {
            let mut acc = toolcert_reference::Reference::new();
            let fed = events.iter().try_for_each(|e| acc.on_event(e, &mut emit));
            let result = fed.and_then(|()| acc.finish(self.end, &mut emit));
            let mut obs = emit.into_observation();
            if let Err(e) = result {
                obs.error = Some(Timed { at: Stamp { delivered: 0, before: 0, at_finish: true }, value: e });
            }
            return obs;
        }
        emit.into_observation()
    }
}

/// A deterministic argument document of exactly `len` bytes (the 28-byte one below 29):
/// a ticket with nested objects, arrays and numbers, a description with escapes (`\n`,
/// `\"`, `\\`, `\t`, `\uXXXX` with a surrogate pair), raw non-ASCII (é, 東京, an emoji) and
/// markdown; from 1 KiB up, an array of records fills half of it.
pub fn document(len: usize) -> String {
    const CITY: &str = r#"{"city":"Paris","units":"C"}"#;
    const TAIL: &str = r#"", "due": "2025-03-21", "notify": true}"#;
    const TEXT: [&str; 4] = [
        r#"The 03-14 run aborted after 1,204 of 3,880 invoices.\nAffected accounts are listed in the \"attached\" export; "#,
        r#"the failure appears to originate in the tax service (`tax-calc v2.3`) \u2014 see *runbook* \u00a74. "#,
        "> Customers in Mérida and 東京 were billed twice 😀 \\ud83d\\ude00.\\n\\t- step one\\n\\t- step two \\\\ done. ",
        r#"# Next steps\n1. re-run the batch for the 2,676 invoices left\n2. refund the duplicates / notify \"ops\"\n"#,
    ];
    if len <= CITY.len() {
        return CITY.to_owned();
    }
    let mut d = String::with_capacity(len);
    d.push_str(
        r#"{"project": "BILLING", "title": "March invoice run failed", "priority": "urgent", "labels": ["billing", "tax"], "assignee": {"team": "payments", "user": "m.dubois"}, "estimate_hours": 6.5"#,
    );
    if len >= 1024 {
        d.push_str(r#", "rows": ["#);
        let mut k = 0u64;
        while d.len() < len / 2 {
            if k > 0 {
                d.push_str(", ");
            }
            let _ = write!(
                d,
                r#"{{"id": {k}, "sku": "A-{k:05}", "name": "Widget n\u00b0{k} — Mérida", "tags": ["red", "small"], "price": {}.{:02}, "qty": {}, "refund": {}, "note": null}}"#,
                10 + k % 90,
                k % 100,
                k % 7,
                k.is_multiple_of(3)
            );
            k += 1;
        }
        d.push(']');
    }
    d.push_str(r#", "description": ""#);
    'fill: loop {
        for t in TEXT {
            if d.len() + t.len() + TAIL.len() > len {
                break 'fill;
            }
            d.push_str(t);
        }
    }
    const PAD: &str = "lorem ipsum dolor sit amet ";
    while d.len() + TAIL.len() < len {
        let room = len - TAIL.len() - d.len();
        d.push_str(&PAD[..room.min(PAD.len())]);
    }
    d.push_str(TAIL);
    d
}

/// The implementations toolcert benchmarks side by side: the reference at each level, the
/// floor, and the naive peers.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Impl {
    /// [`peers::floor`]: append every fragment to a `String`, then one strict parse.
    Floor,
    /// The reference fed neutral events directly, as its user's code feeds it: `on_event`
    /// per event, then `finish` (no driver, no panic catching, no stamps).
    Reference,
    /// The reference fed neutral events through the driver, as `toolcert certify` feeds it.
    ReferenceEvents,
    /// The reference fed Anthropic SSE events (dialect decoder + core).
    ReferenceWire,
    /// The reference fed Anthropic SSE bytes, one chunk per event (SSE decoder + dialect
    /// decoder + core).
    ReferenceBytes,
    /// [`peers::naive_reparse`]: a strict parse of the whole buffer after every fragment.
    NaiveReparse,
    /// [`peers::naive_tolerant`]: a tolerant partial parse after every fragment.
    NaiveTolerant,
    /// The zoo's cost mutant `rebuilt-buffer` (`toolcert_mutants::cost::RebuiltBuffer`)
    /// through the driver: the buffer copied on every fragment.
    RebuiltBuffer,
}

impl Impl {
    pub const ALL: [Impl; 8] = [
        Impl::Floor,
        Impl::Reference,
        Impl::ReferenceEvents,
        Impl::ReferenceWire,
        Impl::ReferenceBytes,
        Impl::NaiveReparse,
        Impl::NaiveTolerant,
        Impl::RebuiltBuffer,
    ];

    /// The impl part of a benchmark id.
    pub fn name(self) -> &'static str {
        match self {
            Impl::Floor => "floor",
            Impl::Reference => "reference",
            Impl::ReferenceEvents => "reference-events",
            Impl::ReferenceWire => "reference-wire",
            Impl::ReferenceBytes => "reference-bytes",
            Impl::NaiveReparse => "naive-reparse",
            Impl::NaiveTolerant => "naive-tolerant",
            Impl::RebuiltBuffer => "rebuilt-buffer",
        }
    }

    pub fn by_name(name: &str) -> Option<Impl> {
        Impl::ALL.into_iter().find(|i| i.name() == name)
    }

    /// Cost grows with the square of the document (over the fragment size).
    pub fn quadratic(self) -> bool {
        matches!(self, Impl::NaiveReparse | Impl::NaiveTolerant | Impl::RebuiltBuffer)
    }

    /// Bytes the impl copies or parses for a workload, roughly: the quadratic peers touch
    /// `len²/(2·fragment)`. Benches skip a peer whose work would take forever.
    pub fn work(self, w: &Workload) -> u128 {
        let n = w.document.len() as u128;
        if self.quadratic() {
            n * n / (2 * w.fragment.max(1) as u128)
        } else {
            n
        }
    }

    /// Renders what the impl needs from `w`, ahead of timing.
    pub fn prepare(self, w: &Workload) -> Prepared<'_> {
        let stream = match self {
            Impl::Reference | Impl::ReferenceEvents | Impl::RebuiltBuffer => {
                Some(w.stream(Level::Events, Dialect::Anthropic))
            }
            Impl::ReferenceWire => Some(w.stream(Level::Wire, Dialect::Anthropic)),
            Impl::ReferenceBytes => Some(w.stream(Level::Bytes, Dialect::Anthropic)),
            _ => None,
        };
        Prepared { imp: self, workload: w, fragments: w.fragments(), stream }
    }
}

/// One impl ready to run on one workload.
#[derive(Debug)]
pub struct Prepared<'w> {
    imp: Impl,
    workload: &'w Workload,
    fragments: Vec<&'w str>,
    stream: Option<Stream>,
}

impl Prepared<'_> {
    /// Runs the impl once on the workload and checks the result ([`Workload::verify`]).
    pub fn run(&self) -> Result<(), String> {
        let w = self.workload;
        let value = |v: Option<Value>| match v {
            Some(v) => w.verify_value(&v),
            None => Err(format!("{}: {} gave no document", w.name(), self.imp.name())),
        };
        match self.imp {
            Impl::Floor => value(peers::floor(&self.fragments).ok()),
            Impl::NaiveReparse => value(peers::naive_reparse(&self.fragments)),
            Impl::NaiveTolerant => value(peers::naive_tolerant(&self.fragments)),
            Impl::Reference => w.verify(&self.stream.as_ref().expect("prepared").feed_direct()),
            Impl::ReferenceEvents | Impl::ReferenceWire | Impl::ReferenceBytes => {
                w.verify(&self.stream.as_ref().expect("prepared").feed(&ReferenceFactory))
            }
            Impl::RebuiltBuffer => {
                let factory = |spec: &toolcert_subject::StreamSpec<'_>| {
                    toolcert_mutants::Base::<toolcert_mutants::cost::RebuiltBuffer>::new(spec)
                };
                w.verify(&self.stream.as_ref().expect("prepared").feed(&factory))
            }
        }
    }

    /// Runs once and compares the whole result with the document's strict parse (for a
    /// check before timing; [`Prepared::run`] checks cheaply).
    pub fn run_full(&self) -> Result<(), String> {
        let w = self.workload;
        let whole = |v: Option<Value>| {
            if v.as_ref() == Some(&w.expected) {
                Ok(())
            } else {
                Err(format!("{}: {} gave another document", w.name(), self.imp.name()))
            }
        };
        match self.imp {
            Impl::Floor => whole(peers::floor(&self.fragments).ok()),
            Impl::NaiveReparse => whole(peers::naive_reparse(&self.fragments)),
            Impl::NaiveTolerant => whole(peers::naive_tolerant(&self.fragments)),
            Impl::Reference => w.verify_full(&self.stream.as_ref().expect("prepared").feed_direct()),
            Impl::ReferenceEvents | Impl::ReferenceWire | Impl::ReferenceBytes => {
                w.verify_full(&self.stream.as_ref().expect("prepared").feed(&ReferenceFactory))
            }
            Impl::RebuiltBuffer => {
                let factory = |spec: &toolcert_subject::StreamSpec<'_>| {
                    toolcert_mutants::Base::<toolcert_mutants::cost::RebuiltBuffer>::new(spec)
                };
                w.verify_full(&self.stream.as_ref().expect("prepared").feed(&factory))
            }
        }
    }
}

/// What the reference is compared with.
pub mod peers {
    use serde_json::Value;

    /// The floor: every fragment appended to one `String`, then one strict parse of the
    /// whole document. No accumulator can do less.
    pub fn floor(fragments: &[&str]) -> Result<Value, serde_json::Error> {
        let mut buf = String::new();
        for f in fragments {
            buf.push_str(f);
        }
        serde_json::from_str(&buf)
    }

    /// The naive accumulator that re-parses the whole buffer after every fragment (to learn
    /// whether the call is complete): quadratic. The last parse's result.
    pub fn naive_reparse(fragments: &[&str]) -> Option<Value> {
        let mut buf = String::new();
        let mut last = None;
        for f in fragments {
            buf.push_str(f);
            last = serde_json::from_str(&buf).ok();
        }
        last
    }

    /// The naive accumulator that shows a live preview: after every fragment, closes the
    /// open strings and brackets of the buffer ([`close_partial`]) and parses that:
    /// quadratic. The last preview.
    pub fn naive_tolerant(fragments: &[&str]) -> Option<Value> {
        let mut buf = String::new();
        let mut last = None;
        for f in fragments {
            buf.push_str(f);
            last = serde_json::from_str(&close_partial(&buf)).ok();
        }
        last
    }

    /// Closes a prefix of a JSON document so that it parses: an unfinished value string is
    /// closed (dropping an unfinished escape), what cannot be closed (a key, a number or a
    /// literal cut short, a dangling comma or colon) is cut back to the last complete value,
    /// and the open arrays and objects are closed. A complete document comes back as is.
    pub fn close_partial(s: &str) -> String {
        #[derive(Clone, Copy, PartialEq)]
        enum Open {
            Object,
            Array,
        }
        #[derive(Clone, Copy, PartialEq)]
        enum Next {
            Value,
            Key,
            Colon,
            After,
        }
        let b = s.as_bytes();
        let mut stack: Vec<Open> = Vec::new();
        // The longest prefix that closes, and how many of `stack` it leaves open.
        let (mut safe, mut safe_depth) = (0, 0);
        let mut next = Next::Value;
        let mut i = 0;
        let close = |out: &mut String, stack: &[Open]| {
            for o in stack.iter().rev() {
                out.push(if *o == Open::Object { '}' } else { ']' });
            }
        };
        while i < b.len() {
            match b[i] {
                b' ' | b'\t' | b'\n' | b'\r' => i += 1,
                b'{' | b'[' => {
                    stack.push(if b[i] == b'{' { Open::Object } else { Open::Array });
                    next = if b[i] == b'{' { Next::Key } else { Next::Value };
                    i += 1;
                    (safe, safe_depth) = (i, stack.len());
                }
                b'}' | b']' => {
                    stack.pop();
                    i += 1;
                    next = Next::After;
                    (safe, safe_depth) = (i, stack.len());
                }
                b',' => {
                    next = if stack.last() == Some(&Open::Object) { Next::Key } else { Next::Value };
                    i += 1;
                }
                b':' => {
                    next = Next::Value;
                    i += 1;
                }
                b'"' => {
                    let start = i;
                    i += 1;
                    let mut closed = false;
                    while i < b.len() {
                        match b[i] {
                            b'\\' => i += 2,
                            b'"' => {
                                closed = true;
                                i += 1;
                                break;
                            }
                            _ => i += 1,
                        }
                    }
                    if !closed {
                        if next != Next::Value {
                            break; // an unfinished key: cut back
                        }
                        let mut out = String::with_capacity(s.len() + stack.len() + 1);
                        out.push_str(&s[..trim_escape(s, start + 1)]);
                        out.push('"');
                        close(&mut out, &stack);
                        return out;
                    }
                    if next == Next::Key {
                        next = Next::Colon;
                    } else {
                        next = Next::After;
                        (safe, safe_depth) = (i, stack.len());
                    }
                }
                _ => {
                    while i < b.len() && !matches!(b[i], b',' | b'}' | b']' | b' ' | b'\t' | b'\n' | b'\r') {
                        i += 1;
                    }
                    if i == b.len() {
                        break; // a number or literal that may go on: cut back
                    }
                    next = Next::After;
                    (safe, safe_depth) = (i, stack.len());
                }
            }
        }
        let mut out = String::with_capacity(safe + safe_depth);
        out.push_str(&s[..safe]);
        close(&mut out, &stack[..safe_depth.min(stack.len())]);
        out
    }

    /// The end of an unfinished string's content (from `from`) without an unfinished escape
    /// at its end: a lone `\`, a `\u` with fewer than four digits, or a leading surrogate
    /// whose pair has not arrived.
    fn trim_escape(s: &str, from: usize) -> usize {
        let b = s.as_bytes();
        let mut i = from;
        let mut keep = from;
        while i < b.len() {
            if b[i] != b'\\' {
                i += 1;
                keep = i;
                continue;
            }
            match b.get(i + 1) {
                None => return keep,
                Some(b'u') => {
                    let code = |at: usize| {
                        let hex = b.get(at..at + 4)?;
                        u16::from_str_radix(std::str::from_utf8(hex).ok()?, 16).ok()
                    };
                    let Some(c) = code(i + 2) else { return keep };
                    if (0xD800..0xDC00).contains(&c) {
                        // A leading surrogate needs its trailing one, `\uXXXX`, to parse.
                        if b.get(i + 6..i + 8) != Some(&b"\\u"[..]) || code(i + 8).is_none() {
                            return keep;
                        }
                        i += 12;
                    } else {
                        i += 6;
                    }
                    keep = i;
                }
                Some(_) => {
                    i += 2;
                    keep = i;
                }
            }
        }
        keep
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn documents_have_their_sizes_and_parse() {
        for (name, len) in SIZES {
            let d = document(len);
            assert_eq!(d.len(), len, "{name}");
            serde_json::from_str::<Value>(&d).unwrap_or_else(|e| panic!("{name}: {e}\n{d}"));
        }
    }

    #[test]
    fn every_prefix_closes_into_a_document() {
        let d = document(610);
        for end in (0..=d.len()).filter(|&e| d.is_char_boundary(e)) {
            let closed = peers::close_partial(&d[..end]);
            if end > 0 {
                serde_json::from_str::<Value>(&closed)
                    .unwrap_or_else(|e| panic!("prefix {end}: {e}\n{}\n→ {closed}", &d[..end]));
            }
        }
        assert_eq!(peers::close_partial(&d), d);
        assert_eq!(peers::close_partial(r#"{"a": "x\u00"#), r#"{"a": "x"}"#);
        assert_eq!(peers::close_partial(r#"{"a": [1, 2"#), r#"{"a": [1]}"#);
        assert_eq!(peers::close_partial(r#"{"a": "\ud83d\ude"#), r#"{"a": ""}"#);
    }

    #[test]
    fn every_impl_gets_the_small_workloads_right() {
        for w in [workload("610B", 13), workload("28B", 1), workload("610B", 64)] {
            let w = w.expect("a workload");
            for imp in Impl::ALL {
                let p = imp.prepare(&w);
                p.run_full().unwrap_or_else(|e| panic!("{}: {e}", imp.name()));
                p.run().unwrap_or_else(|e| panic!("{}: {e}", imp.name()));
            }
        }
    }

    #[test]
    fn fragments_are_about_the_fragment_size() {
        let w = workload("610B", 13).expect("a workload");
        let f = w.fragments();
        assert_eq!(f.concat(), w.document);
        assert!(f.iter().all(|f| !f.is_empty() && f.len() <= 13 + 3));
        assert_eq!(workloads().len(), 12);
    }
}
