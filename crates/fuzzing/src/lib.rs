//! Fuzzing accumulators with cargo-fuzz: the fuzzer's bytes become toolcert cases, and any
//! violation is a crash with a readable report.
//!
//! A fuzz target for your own accumulator is a few lines (`docs/FUZZING.md` has the whole
//! `fuzz/` layout):
//!
//! ```ignore
//! #![no_main]
//! use toolcert::subject::{subject_fn, StreamSpec};
//!
//! libfuzzer_sys::fuzz_target!(|data: &[u8]| {
//!     let subject = subject_fn("mine", |_: &StreamSpec<'_>| my_crate::Accumulator::new());
//!     toolcert::fuzzing::check_events(&subject, data);
//! });
//! ```
//!
//! The bytes drive the same biased generators as `toolcert certify` (through
//! [`toolcert_gen::ArbitraryCase`]), so the fuzzer starts from the adversarial classes and
//! coverage guidance takes it further.
//!
//! # Inputs: plans and values
//!
//! A fuzz input is read in one of two forms:
//!
//! - a **plan**: bytes the generators read as choices (for [`Target::Reference`], the first
//!   byte picks the [`FuzzSetting`]). This is what the fuzzer mutates. A plan stops meaning
//!   the same case when the generators change.
//! - a **value**: a header line `#toolcert level=… dialect=…` followed by the case as JSON.
//!   Values are what regression files hold (they keep reproducing whatever the generators
//!   become) and what the seed corpora are made of. [`value_form`] turns a crash artifact
//!   into one.
//!
//! # The targets toolcert fuzzes itself with
//!
//! [`Target`] names the checks behind `fuzz/fuzz_targets/*.rs`, so the fuzz targets, the
//! seed writer and the regression test (`tests/fuzz_regressions.rs`) run the same code:
//! the reference at every level against the oracle ([`reference()`]), the SSE decoder's chunk
//! invariance ([`sse_chunks`]) and the dialect decoders over arbitrary events
//! ([`dialect_decode`]).

use std::fmt::Write as _;

use arbitrary::{Arbitrary, Unstructured};
use toolcert_dialect::{decoder, render_wire};
use toolcert_gen::{case_from_unstructured, GenConfig};
use toolcert_oracle::Profile;
use toolcert_reference::{Reference, ReferenceSubject};
use toolcert_render::{render, transcript};
use toolcert_runner::{check, Certification, Setting};
use toolcert_scenario::{Case, Dialect, Quirks, StreamEnd};
use toolcert_sse::{encode, Decoder, Framing, LineEnd, SseError, SseEvent};
use toolcert_subject::driver::Speech;
use toolcert_subject::{Accumulator, Emit, ErrorClass, Event, Level, Subject};

/// Where a fuzz case is fed: the level, the dialect (wire and bytes levels), the quirk
/// profile and whether tool schemas are generated and judged.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct FuzzSetting {
    pub level: Level,
    pub dialect: Dialect,
    pub quirks: Quirks,
    pub schema: bool,
}

/// The level, dialect and quirk profile a selector byte chooses from: the events level, then
/// every (dialect, profile) of the registry at the wire and at the bytes level.
fn places() -> Vec<(Level, Dialect, Quirks)> {
    let mut out = vec![(Level::Events, Dialect::default(), Quirks::PLAIN)];
    for level in [Level::Wire, Level::Bytes] {
        out.extend(toolcert_dialect::registry::speeches().map(|(d, q)| (level, d, q)));
    }
    out
}

/// The word a wire behaviour (a [`Quirks`] flag) is written with in a header and a seed's
/// name: its name without the dialect, in kebab case (`chat_index_zero`: `index-zero`).
fn quirk_word(flag: &str) -> String {
    let bare =
        ["chat_", "responses_", "anthropic_"].iter().find_map(|p| flag.strip_prefix(p)).unwrap_or(flag);
    bare.replace('_', "-")
}

/// The flag a header word names.
fn quirk_of_word(word: &str) -> Option<&'static str> {
    Quirks::PLAIN.flags().into_iter().map(|(flag, _)| flag).find(|f| quirk_word(f) == word)
}

/// The first line of a value-form input.
const HEADER: &str = "#toolcert";

impl FuzzSetting {
    /// The events level, no schemas: what [`check_events`] uses.
    pub fn events() -> FuzzSetting {
        FuzzSetting::default()
    }

    /// Every setting a selector byte can choose.
    pub fn all() -> Vec<FuzzSetting> {
        (0..places().len() as u8 * 2).map(FuzzSetting::from_byte).collect()
    }

    /// The setting a plan's first byte selects (every byte selects one).
    pub fn from_byte(b: u8) -> FuzzSetting {
        let places = places();
        let (level, dialect, quirks) = places[b as usize % places.len()];
        FuzzSetting { level, dialect, quirks, schema: (b as usize / places.len()) % 2 == 1 }
    }

    /// The smallest byte that selects this setting.
    pub fn to_byte(self) -> u8 {
        let places = places();
        let place = places
            .iter()
            .position(|&(l, d, q)| {
                l == self.level && (l == Level::Events || (d == self.dialect && q == self.quirks))
            })
            .unwrap_or(0);
        (place + if self.schema { places.len() } else { 0 }) as u8
    }

    /// The header line of the value form: `#toolcert level=wire dialect=openai-chat
    /// quirks=index-zero schema=on` (a `quirks=` word per quirk the profile has).
    pub fn header(self) -> String {
        let mut h = format!("{HEADER} level={}", self.level);
        if self.level != Level::Events {
            let _ = write!(h, " dialect={}", self.dialect);
        }
        for flag in self.quirks.set() {
            let _ = write!(h, " quirks={}", quirk_word(flag));
        }
        let _ = write!(h, " schema={}", if self.schema { "on" } else { "off" });
        h
    }

    /// Reads a header line written by [`FuzzSetting::header`].
    pub fn parse_header(line: &str) -> Result<FuzzSetting, String> {
        let rest = line.trim_end().strip_prefix(HEADER).ok_or_else(|| format!("not a {HEADER} header"))?;
        let mut s = FuzzSetting::default();
        for word in rest.split_whitespace() {
            match word.split_once('=') {
                Some(("level", v)) => s.level = v.parse()?,
                Some(("dialect", v)) => s.dialect = v.parse().map_err(|e| format!("{e}"))?,
                Some(("quirks", "none")) => s.quirks = Quirks::PLAIN,
                Some(("quirks", q)) if quirk_of_word(q).is_some() => {
                    s.quirks = quirk_of_word(q).and_then(|f| s.quirks.with(f)).unwrap_or(s.quirks);
                }
                Some(("schema", "on")) => s.schema = true,
                Some(("schema", "off")) => s.schema = false,
                _ => return Err(format!("unknown header word `{word}`")),
            }
        }
        Ok(s)
    }

    /// The runner's setting.
    pub fn setting(self) -> Setting {
        Setting {
            profile: Profile { schema: self.schema, ..Default::default() },
            level: self.level,
            speech: Speech { dialect: self.dialect, quirks: self.quirks },
            ..Setting::default()
        }
    }

    /// The generator configuration `toolcert certify` uses at this setting.
    pub fn gen_config(self) -> GenConfig {
        Certification {
            profile: Profile { schema: self.schema, ..Default::default() },
            level: self.level,
            speech: Speech { dialect: self.dialect, quirks: self.quirks },
            ..Certification::default()
        }
        .gen_config()
    }
}

/// The case a generator plan builds (exhausted input reads as zeros, so every input builds
/// one).
pub fn case_from_bytes(plan: &[u8], cfg: &GenConfig) -> Case {
    let mut u = Unstructured::new(plan);
    let mut case = case_from_unstructured(&mut u, cfg).unwrap_or_else(|_| Case::single("fuzz", empty_turn()));
    case.name = "fuzz".into();
    case
}

fn empty_turn() -> toolcert_scenario::Turn {
    toolcert_scenario::Turn {
        tools: vec![],
        blocks: vec![],
        shape: Default::default(),
        ending: toolcert_scenario::Ending::Stop(toolcert_scenario::StopReason::EndTurn),
        faults: vec![],
        pings: vec![],
        transport: Default::default(),
        wire: Default::default(),
    }
}

/// A value-form input: the header line, then the case as pretty JSON.
pub fn value_form(setting: FuzzSetting, case: &Case) -> Vec<u8> {
    let mut out = setting.header().into_bytes();
    out.push(b'\n');
    out.extend(serde_json::to_vec_pretty(case).expect("a case serialises"));
    out.push(b'\n');
    out
}

/// Reads a value-form input; `None` when `data` is not one (a plan), `Some(Err)` when it
/// starts like one but does not parse.
pub fn parse_value(data: &[u8]) -> Option<Result<(FuzzSetting, Case), String>> {
    if !data.starts_with(HEADER.as_bytes()) {
        return None;
    }
    let (line, json) = match data.iter().position(|&b| b == b'\n') {
        Some(i) => (&data[..i], &data[i + 1..]),
        None => (data, &b""[..]),
    };
    Some((|| {
        let line = std::str::from_utf8(line).map_err(|e| format!("header: {e}"))?;
        let setting = FuzzSetting::parse_header(line)?;
        let case: Case = serde_json::from_slice(json).map_err(|e| format!("case: {e}"))?;
        case.validate().map_err(|e| format!("case: {e}"))?;
        Ok((setting, case))
    })())
}

/// Checks `subject` at the events level on the case `data` describes (a plan, or a value
/// form) and panics with the readable report on any violation. The whole body of a fuzz
/// target for an events-level accumulator.
#[track_caller]
pub fn check_events(subject: &dyn Subject, data: &[u8]) {
    check_at(subject, data, FuzzSetting::events());
}

/// Like [`check_events`] at any level: a wire- or bytes-level subject is fed the case in
/// `setting`'s dialect. A value-form input supplies only the case; `setting` stays yours.
/// Cases the dialect cannot express are skipped.
#[track_caller]
pub fn check_at(subject: &dyn Subject, data: &[u8], setting: FuzzSetting) {
    let case = match parse_value(data) {
        Some(Ok((_, case))) => case,
        Some(Err(_)) => return,
        None => case_from_bytes(data, &setting.gen_config()),
    };
    if let Err(report) = judge(subject, &case, setting) {
        panic!("{report}");
    }
}

/// Checks `case` at `setting`; `Err` holds the readable report of the violations.
pub fn judge(subject: &dyn Subject, case: &Case, setting: FuzzSetting) -> Result<(), String> {
    let checked = check(subject, case, setting.setting());
    if checked.unsupported.is_some() || checked.violations.is_empty() {
        return Ok(());
    }
    let mut r = format!(
        "toolcert: `{}` broke {} rule(s) on a fuzz case ({})\n\n",
        subject.name(),
        checked.violations.len(),
        setting.header().trim_start_matches("#toolcert ")
    );
    for v in &checked.violations {
        let _ = writeln!(r, "  {v}");
    }
    for (s, obs) in checked.observations.iter().enumerate() {
        if let Some(crash) = &obs.crash {
            let _ = writeln!(r, "  stream {s} crashed: {crash}");
        }
    }
    let _ = write!(r, "\nThe case, as the stream delivers it:\n{}\n", transcript(case));
    let _ = write!(
        r,
        "Its value form (save it under corpus/fuzz/regressions/<target>/ to replay it in \
         `cargo test --test fuzz_regressions`; see docs/FUZZING.md):\n{}",
        String::from_utf8_lossy(&value_form(setting, case))
    );
    Err(r)
}

/// The checks behind toolcert's own fuzz targets (`fuzz/fuzz_targets/<name>.rs`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Target {
    /// [`reference()`]: the reference at every level against the oracle.
    Reference,
    /// [`sse_chunks`]: the SSE decoder's chunk invariance.
    SseChunks,
    /// [`dialect_decode`]: the dialect decoders over arbitrary events.
    DialectDecode,
}

impl Target {
    pub const ALL: [Target; 3] = [Target::Reference, Target::SseChunks, Target::DialectDecode];

    /// The fuzz target's name (`cargo fuzz run <name>`), also its corpus directory.
    pub fn name(self) -> &'static str {
        match self {
            Target::Reference => "reference",
            Target::SseChunks => "sse_chunks",
            Target::DialectDecode => "dialect_decode",
        }
    }

    pub fn by_name(name: &str) -> Option<Target> {
        Target::ALL.into_iter().find(|t| t.name() == name)
    }

    /// Runs the check on one input; panics (a crash, to the fuzzer) when it fails.
    #[track_caller]
    pub fn run(self, data: &[u8]) {
        match self {
            Target::Reference => reference(data),
            Target::SseChunks => sse_chunks(data),
            Target::DialectDecode => dialect_decode(data),
        }
    }

    /// The input that replays `data` and keeps replaying it when the generators change: the
    /// value form for a reference plan, the input itself otherwise (those inputs are values).
    pub fn regression(self, data: &[u8]) -> Vec<u8> {
        match self {
            Target::Reference if parse_value(data).is_none() => {
                let (setting, case) = reference_case(data);
                value_form(setting, &case)
            }
            _ => data.to_vec(),
        }
    }

    /// The seed corpus: inputs made from the seeds' named cases, named after them.
    pub fn seeds(self) -> Vec<(String, Vec<u8>)> {
        let mut out = Vec::new();
        for named in toolcert_gen::named::all() {
            let stem = named.id.replace('/', "--");
            match self {
                Target::Reference => {
                    for setting in FuzzSetting::all() {
                        if setting.schema != named.needs_schema {
                            continue;
                        }
                        let checked = check(&ReferenceSubject, &named.case, setting.setting());
                        if checked.unsupported.is_some() {
                            continue;
                        }
                        let name = format!("{stem}@{}", setting_tag(setting));
                        out.push((name, value_form(setting, &named.case)));
                    }
                }
                Target::SseChunks | Target::DialectDecode => {
                    for (d, dialect, quirks) in dialect_selectors() {
                        let Some(bytes) = sse_bytes(&named.case, dialect, quirks) else { continue };
                        let name = format!("{stem}@{}", dialect_tag(dialect, quirks));
                        let input = match self {
                            // No size limit, three-byte chunks.
                            Target::SseChunks => [&[0u8, 1, 3][..], &bytes].concat(),
                            _ => [&[d][..], &bytes].concat(),
                        };
                        out.push((name, input));
                    }
                }
            }
        }
        out
    }
}

fn setting_tag(s: FuzzSetting) -> String {
    let mut t = s.level.to_string();
    if s.level != Level::Events {
        t = format!("{t}-{}", dialect_tag(s.dialect, s.quirks));
    }
    t
}

fn dialect_tag(d: Dialect, q: Quirks) -> String {
    let mut t = d.to_string();
    for flag in q.set() {
        let _ = write!(t, "-{}", quirk_word(flag));
    }
    t
}

/// The SSE bytes (LF framing) of a case's first stream in a dialect, when it can speak it.
fn sse_bytes(case: &Case, dialect: Dialect, quirks: Quirks) -> Option<Vec<u8>> {
    let turn = case.streams.first()?;
    let wire = render_wire(turn, &render(turn), dialect, quirks).ok()?;
    let events: Vec<&SseEvent> =
        wire.events.iter().filter_map(toolcert_subject::WireMessage::as_sse).collect();
    Some(encode(&events, &Framing::default()).bytes)
}

/// The (dialect, quirk profile)s a [`dialect_decode`] selector byte chooses, with the
/// smallest byte that picks each: the registry's SSE dialects (its events are SSE events).
fn dialect_selectors() -> Vec<(u8, Dialect, Quirks)> {
    let speeches =
        toolcert_dialect::registry::speeches().filter(|&(d, _)| !toolcert_dialect::def(d).binary());
    speeches.enumerate().map(|(k, (d, q))| (selector_byte(k), d, q)).collect()
}

/// Bit 2 of a [`dialect_decode`] selector says how the input is read; the other bits number
/// the dialect.
fn selector_byte(k: usize) -> u8 {
    ((k & 3) | (k >> 2) << 3) as u8
}

/// The dialect number a [`dialect_decode`] selector byte holds (inverse of [`selector_byte`]).
fn selector_index(sel: u8) -> usize {
    (sel as usize & 3) | (sel as usize >> 3) << 2
}

/// The setting and case of a [`Target::Reference`] input.
fn reference_case(data: &[u8]) -> (FuzzSetting, Case) {
    let setting = FuzzSetting::from_byte(data.first().copied().unwrap_or(0));
    let plan = data.get(1..).unwrap_or_default();
    (setting, case_from_bytes(plan, &setting.gen_config()))
}

/// The reference accumulator against the oracle, at the level, dialect and profile the
/// input chooses (first byte: [`FuzzSetting::from_byte`]; the rest: a generator plan), or a
/// value-form input. Any violation panics with the readable report; cases the chosen level
/// cannot express are skipped.
#[track_caller]
pub fn reference(data: &[u8]) {
    let (setting, case) = match parse_value(data) {
        Some(Ok(value)) => value,
        Some(Err(_)) => return,
        None => reference_case(data),
    };
    if let Err(report) = judge(&ReferenceSubject, &case, setting) {
        panic!("{report}");
    }
}

/// Decoder size limits an [`sse_chunks`] input chooses from (its first byte, modulo 8).
const LIMITS: [usize; 8] = [toolcert_sse::DEFAULT_LIMIT, 0, 1, 4, 16, 64, 256, 4096];

/// Largest input decoded one byte at a time as well.
const BYTEWISE_MAX: usize = 1 << 16;

/// What decoding gave: the events dispatched and the error, if the stream was refused.
type Decoded = (Vec<SseEvent>, Option<SseError>);

fn decode_chunks<'a>(limit: usize, chunks: impl IntoIterator<Item = &'a [u8]>) -> Decoded {
    let mut d = Decoder::with_limit(limit);
    let mut out = Vec::new();
    for c in chunks {
        if let Err(e) = d.feed(c, &mut out) {
            return (out, Some(e));
        }
    }
    let e = d.finish(&mut out).err();
    (out, e)
}

/// The chunks an [`sse_chunks`] input's sizes cut `stream` into: sizes taken in turn,
/// cyclically (`0` is an empty chunk); all-zero sizes give their empty chunks, then the rest
/// whole.
fn chunks_by_sizes<'a>(stream: &'a [u8], sizes: &[u8]) -> Vec<&'a [u8]> {
    if sizes.is_empty() {
        return vec![stream];
    }
    let mut out = Vec::new();
    let mut at = 0;
    if sizes.iter().all(|&s| s == 0) {
        out.extend(sizes.iter().map(|_| &stream[..0]));
        out.push(stream);
        return out;
    }
    for &s in sizes.iter().cycle() {
        if at >= stream.len() {
            break;
        }
        let end = (at + s as usize).min(stream.len());
        out.push(&stream[at..end]);
        at = end;
    }
    out
}

/// The SSE decoder's chunk invariance: an arbitrary byte stream cut into arbitrary chunks
/// (and one byte at a time) decodes to exactly the events and the error of decoding it
/// whole, without panicking; and a stream it accepts, re-encoded, decodes to the same events.
///
/// Input: byte 0 picks the size limit (`LIMITS`, modulo 8) and, in its bits 3 and 4, the line
/// end of the re-encoding; byte 1 is the number `n` of chunk sizes; the next `n` bytes are
/// chunk sizes, used in turn; the rest is the stream.
#[track_caller]
pub fn sse_chunks(data: &[u8]) {
    let flags = data.first().copied().unwrap_or(0);
    let n = data.get(1).copied().unwrap_or(0) as usize;
    let sizes = data.get(2..(2 + n).min(data.len())).unwrap_or_default();
    let stream = data.get(2 + n..).unwrap_or_default();
    let limit = LIMITS[flags as usize % LIMITS.len()];

    let whole = decode_chunks(limit, [stream]);
    let chunks = chunks_by_sizes(stream, sizes);
    let cut = decode_chunks(limit, chunks.iter().copied());
    let show = |what: &str, other: &Decoded| {
        format!(
            "SSE chunk invariance broken ({what}), limit {limit}, chunk sizes {sizes:?}\n\
             stream: {}\nwhole: {whole:?}\n{what}: {other:?}",
            String::from_utf8_lossy(stream).escape_debug()
        )
    };
    assert!(cut == whole, "{}", show("cut", &cut));
    if stream.len() <= BYTEWISE_MAX {
        let bytewise = decode_chunks(limit, stream.chunks(1));
        assert!(bytewise == whole, "{}", show("one byte at a time", &bytewise));
    }
    if let (events, None) = &whole {
        let line_end = LineEnd::ALL[(flags as usize >> 3) % 3];
        let again = encode(events, &Framing { line_end, ..Framing::default() });
        let redecoded = decode_chunks(toolcert_sse::DEFAULT_LIMIT, [&again.bytes[..]]);
        assert!(
            redecoded.0 == *events && redecoded.1.is_none(),
            "re-encoding the decoded events ({line_end:?}) does not decode back: {events:?}\nbytes: {}\ngave: {redecoded:?}",
            String::from_utf8_lossy(&again.bytes).escape_debug()
        );
    }
}

/// One event made of arbitrary strings (for [`dialect_decode`]'s second mode).
#[derive(Debug, Arbitrary)]
struct ArbitraryEvent {
    event: Option<String>,
    data: String,
    id: Option<String>,
}

/// The dialect decoders over arbitrary events: they return `Malformed` errors with a
/// message, never panic, and what they decode feeds the reference core without a panic.
///
/// Input: byte 0 picks the dialect and quirk profile (in its bits other than bit 2, modulo
/// the registry's SSE dialects and profiles, in registry order: anthropic, openai-chat, its
/// index-zero and repeat-fields profiles, openai-responses) and, in bit 2, how the rest is
/// read: as SSE text
/// (lossy UTF-8; the seeds are real streams) or as arbitrary events of arbitrary strings.
#[track_caller]
pub fn dialect_decode(data: &[u8]) {
    let sel = data.first().copied().unwrap_or(0);
    let rest = data.get(1..).unwrap_or_default();
    let selectors = dialect_selectors();
    let (_, dialect, quirks) = selectors[selector_index(sel) % selectors.len()];
    let events: Vec<SseEvent> = if sel & 4 == 0 {
        let text = String::from_utf8_lossy(rest);
        let mut d = Decoder::new();
        let mut out = Vec::new();
        let _ = d.feed(text.as_bytes(), &mut out).and_then(|()| d.finish(&mut out));
        out
    } else {
        let mut u = Unstructured::new(rest);
        let mut out = Vec::new();
        while let Ok(e) = ArbitraryEvent::arbitrary(&mut u) {
            out.push(SseEvent { event: e.event, data: e.data, id: e.id });
            if u.is_empty() {
                break;
            }
        }
        out
    };
    let mut dec = decoder(dialect, quirks);
    let mut core = Reference::new();
    let mut emit = Emit::default();
    let mut neutral: Vec<Event<'static>> = Vec::new();
    let mut core_live = true;
    for (k, e) in events.iter().enumerate() {
        neutral.clear();
        if let Err(err) = dec.decode(&toolcert_subject::WireMessage::Sse(e.clone()), &mut neutral) {
            // Unreadable input is `malformed`; the one fault a decoder sees by itself is the
            // Responses `output_item.done` that contradicts `function_call_arguments.done`.
            let decoder_class = matches!(err.class, ErrorClass::Malformed | ErrorClass::DoneMismatch);
            assert!(
                decoder_class && !err.detail.trim().is_empty(),
                "{dialect} decoder: event {k} {e:?} gave an unclear error: {err:?}"
            );
            return;
        }
        for n in &neutral {
            if core_live && core.on_event(n, &mut emit).is_err() {
                core_live = false;
            }
        }
    }
    if core_live {
        let _ = core.finish(StreamEnd::Eof, &mut emit);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_selector_byte_round_trips_through_the_header() {
        for b in 0..=255u8 {
            let s = FuzzSetting::from_byte(b);
            assert_eq!(FuzzSetting::parse_header(&s.header()), Ok(s), "{}", s.header());
            assert_eq!(FuzzSetting::from_byte(s.to_byte()), s);
        }
        assert_eq!(FuzzSetting::all().len(), 2 * (1 + 2 * toolcert_dialect::registry::speeches().count()));
    }

    /// The hostile upstream's output is fuzzed: a plan's first byte reaches every hostile
    /// profile at both levels (its members on every event), and the hostile named cases there
    /// run as seeds.
    #[test]
    fn the_fuzzers_reach_every_hostile_profile() {
        for dialect in [Dialect::Anthropic, Dialect::OpenAiChat, Dialect::OpenAiResponses, Dialect::Gemini] {
            for level in [Level::Wire, Level::Bytes] {
                assert!(
                    FuzzSetting::all()
                        .iter()
                        .any(|s| s.level == level && s.dialect == dialect && s.quirks.hostile),
                    "{level} {dialect}"
                );
            }
            assert!(dialect_selectors().iter().any(|&(_, d, q)| d == dialect && q.hostile), "{dialect}");
        }
        let seeds = Target::Reference.seeds();
        let hostile = |name: &str| name == "hostile--index-proto@bytes-anthropic-hostile";
        let (_, input) = seeds.iter().find(|(n, _)| hostile(n)).expect("a hostile seed");
        Target::Reference.run(input);
    }

    #[test]
    fn every_sse_dialect_and_profile_has_a_decode_selector_in_both_modes() {
        let selectors = dialect_selectors();
        let sse = toolcert_dialect::registry::speeches().filter(|&(d, _)| !toolcert_dialect::def(d).binary());
        assert_eq!(selectors.iter().map(|&(_, d, q)| (d, q)).collect::<Vec<_>>(), sse.collect::<Vec<_>>());
        for (k, &(b, _, _)) in selectors.iter().enumerate() {
            assert_eq!(b & 4, 0, "bit 2 is the input mode");
            assert_eq!(selector_index(b), k);
            assert_eq!(selector_index(b | 4), k);
        }
    }

    #[test]
    fn the_header_keeps_every_quirk_of_every_profile() {
        for (dialect, quirks) in toolcert_dialect::registry::speeches() {
            for level in [Level::Wire, Level::Bytes] {
                let s = FuzzSetting { level, dialect, quirks, schema: true };
                assert_eq!(FuzzSetting::parse_header(&s.header()), Ok(s), "{}", s.header());
            }
        }
    }

    #[test]
    fn a_plan_becomes_a_value_that_replays_the_same_case() {
        let plan = b"\x05some fuzzer bytes \x00\xff\x13 of a plan";
        let (setting, case) = reference_case(plan);
        let value = Target::Reference.regression(plan);
        let (s2, c2) = parse_value(&value).expect("a value").expect("parses");
        assert_eq!((s2, c2), (setting, case));
    }

    #[test]
    fn chunk_sizes_cover_the_stream() {
        let s = b"abcdefgh";
        assert_eq!(chunks_by_sizes(s, &[3, 0, 2]).concat(), s);
        assert_eq!(chunks_by_sizes(s, &[0, 0]), [&b""[..], b"", s]);
        assert_eq!(chunks_by_sizes(s, &[]), [s]);
    }

    #[test]
    fn the_targets_accept_odd_inputs() {
        for t in Target::ALL {
            for data in
                [&b""[..], b"\x00", b"\xff\xff\xff", b"#toolcert", b"#toolcert level=x\n{", b"\x07\x01"]
            {
                t.run(data);
            }
        }
    }
}
