//! The `.sse` corpus: the named cases of every dialect as raw bytes beside their
//! expectations, replayable by any project in any language (`corpus/README.md`).
//!
//! [`cases`] renders each single-stream named case in each dialect whose wire can carry its
//! meaning, lowered as the certification lowers it (`DialectDef::lower_turn`: an Anthropic-
//! or Responses-shaped case is also sent as OpenAI Chat chunks, its calls one after another,
//! and a Chat case whose blocks come one after another in the per-call dialects);
//! [`write()`] writes `corpus/<dialect>/<id>.sse` and `<id>.expect.json`; [`check`] replays
//! every file through the reference at the bytes level, judges it against its expectation
//! file, and checks the files still say what the scenarios say; [`replay`] shows what any
//! subject makes of one recorded stream.

use std::path::{Path, PathBuf};

use toolcert_dialect::{decoder, defect, detect, render_bytes, render_wire};
use toolcert_oracle::corpus::{outcome_to_file, ExpectationFile};
use toolcert_oracle::{expect, expect_defect, Profile, Violation};
use toolcert_render::{render, Event};
use toolcert_scenario::{Case, Dialect, Quirks, Shape, StreamEnd, Transport, Turn, WireDefect};
use toolcert_subject::driver::{drive, Input, Speech, Units};
use toolcert_subject::{ErrorClass, Level, Observation, Subject, WireMessage};

/// One corpus case: its id, the scenario, and what it is for.
#[derive(Clone, Debug)]
pub struct CorpusCase {
    /// `<dialect>/<named id>`.
    pub id: String,
    pub dialect: Dialect,
    pub turn: Turn,
    pub seed: String,
    pub about: String,
    /// A defect of the wire stream no neutral event describes (`named::defects`).
    pub defect: Option<WireDefect>,
    /// The server profile's wire behaviours it is sent with (none: its provider's own).
    pub quirks: Quirks,
}

/// The named cases each server profile's captures show (`<dialect>/profiles/<profile>/<id>`):
/// parallel calls, two calls to one tool, text around a call, a call without arguments, an
/// escape split across fragments, and the three ways a turn ends badly, where each profile's
/// shapes (ids, names, indices, whole calls, repeats, terminals) all appear.
const PROFILE_CAPTURES: [&str; 9] = [
    "keying/refunded-open-pair",
    "keying/refunded-open-interleaved",
    "deltas/prose-before-and-after",
    "keying/empty-arguments",
    "split/inside-unicode-escape",
    "names/case-and-suffix-pairs",
    "final/create-ticket-max-tokens",
    "final/abandoned-mid-arguments",
    "final/interleaved-disconnect",
];

/// Every corpus case, in a stable order.
pub fn cases() -> Vec<CorpusCase> {
    let mut out = Vec::new();
    for dialect in Dialect::ALL {
        for named in toolcert_gen::named::all() {
            let [turn] = named.case.streams.as_slice() else { continue };
            // Lowered as the certification lowers it; a case whose meaning the dialect's wire
            // cannot carry (a case of another dialect's events, say) is not written there.
            let Ok(turn) = toolcert_dialect::def(dialect).lower_turn(turn) else { continue };
            // Only what the dialect can say faithfully (Responses alone repeats arguments in
            // its terminal, say).
            if render_wire(&turn, &render(&turn), dialect, Quirks::default()).is_err() {
                continue;
            }
            out.push(CorpusCase {
                id: format!("{}/{}", dialect.name(), named.id),
                dialect,
                turn,
                seed: named.seed.to_string(),
                about: named.about.to_string(),
                defect: None,
                quirks: Quirks::PLAIN,
            });
        }
        // Each server profile's captures: the same scenarios, as that server sends them.
        for p in dialect.profiles().filter(|p| !p.quirks.is_plain()) {
            // The captures every profile shows, and the cases that ask for Gemini's
            // terminators, which only its pieces profile sends.
            let captured = |n: &toolcert_gen::named::NamedCase| {
                PROFILE_CAPTURES.contains(&n.id)
                    || n.case.streams.iter().any(|t| !t.wire.gemini_ends.is_empty())
            };
            for named in toolcert_gen::named::all().into_iter().filter(captured) {
                let [turn] = named.case.streams.as_slice() else { continue };
                let Ok(turn) = toolcert_dialect::def(dialect).lower_turn(turn) else { continue };
                if render_wire(&turn, &render(&turn), dialect, p.quirks).is_err() {
                    continue;
                }
                out.push(CorpusCase {
                    id: format!("{}/profiles/{}/{}", dialect.name(), p.name, named.id),
                    dialect,
                    turn,
                    seed: named.seed.to_string(),
                    about: format!(
                        "{} As {} sends it: {} ({}; shown in {}).",
                        named.about,
                        p.id(),
                        p.shapes,
                        p.servers,
                        p.sources
                    ),
                    defect: None,
                    quirks: p.quirks,
                });
            }
        }
        for d in toolcert_gen::named::defects() {
            // The wire defects are SSE events (`toolcert_dialect::defect`).
            // A Chat-only defect (a nameless new id) goes to the dialects that have it.
            let def = toolcert_dialect::def(dialect);
            if (d.chat_only && def.nameless_new_id().is_none()) || def.binary() {
                continue;
            }
            let Ok(turn) = def.lower_turn(&d.turn) else { continue };
            out.push(CorpusCase {
                id: format!("{}/{}", dialect.name(), d.id),
                dialect,
                turn,
                seed: d.seed.to_string(),
                about: d.about.to_string(),
                defect: Some(d.defect),
                quirks: Quirks::PLAIN,
            });
        }
        // Damaged messages exist only where messages carry checksums.
        let binary = toolcert_dialect::def(dialect).binary();
        for named in toolcert_gen::named_binary::cases().into_iter().filter(|_| binary) {
            let [turn] = named.case.streams.as_slice() else { continue };
            out.push(CorpusCase {
                id: format!("{}/{}", dialect.name(), named.id),
                dialect,
                turn: turn.clone(),
                seed: named.seed.to_string(),
                about: named.about.to_string(),
                defect: None,
                quirks: Quirks::PLAIN,
            });
        }
    }
    out
}

/// The extension of a binary-framed dialect's stream files (the `.sse` of the others).
pub const EVENTSTREAM_EXT: &str = "eventstream";

/// The file a case's stream is stored in: `<id>.sse`, or `<id>.eventstream` for a
/// binary-framed dialect.
pub fn stream_file(dir: &Path, c: &CorpusCase) -> PathBuf {
    let ext = if toolcert_dialect::def(c.dialect).binary() { EVENTSTREAM_EXT } else { "sse" };
    dir.join(format!("{}.{ext}", c.id))
}

/// The wire messages of a binary-framed stream, read by `deframer` a piece at a time (as
/// `sse_events`); ends after the first framing error, its `Err`.
fn frame_events(
    bytes: &[u8],
    mut deframer: Box<dyn toolcert_dialect::Deframer>,
) -> impl Iterator<Item = Result<WireMessage, String>> + '_ {
    const PIECE: usize = 64 << 10;
    let mut pieces = bytes.chunks(PIECE);
    let mut ready = std::collections::VecDeque::new();
    let mut ended = false;
    std::iter::from_fn(move || loop {
        if let Some(ev) = ready.pop_front() {
            return Some(ev);
        }
        if ended {
            return None;
        }
        let Some(piece) = pieces.next() else {
            ended = true;
            continue;
        };
        let mut out = Vec::new();
        let fed = deframer.feed(piece, &mut out);
        ready.extend(out.into_iter().map(Ok));
        if let Err(e) = fed {
            // The messages completed before the error first.
            ended = true;
            ready.push_back(Err(e.detail));
        }
    })
}

/// The protocol error a wire defect requires: `malformed`, for each (data that is not JSON, a
/// field of the wrong type, a new call whose first entry has no name: a new id at an occupied
/// Chat index is a new call).
fn defect_class(d: WireDefect) -> ErrorClass {
    match d {
        WireDefect::NamelessNewId | WireDefect::NotJson | WireDefect::WrongType => ErrorClass::Malformed,
    }
}

/// The case's exact bytes (LF line ends, as `curl -N` records them) and its expectation.
pub fn materialise(c: &CorpusCase) -> Result<(Vec<u8>, ExpectationFile), String> {
    let neutral = render(&c.turn);
    let wire = render_wire(&c.turn, &neutral, c.dialect, c.quirks).map_err(|e| e.to_string())?;
    // A damaged message is placed where the oracle reads it: after exactly the neutral events
    // complete before it (as the runner places it).
    let mut turn = c.turn.clone();
    if let Some(k) = &mut turn.transport.corrupt {
        if let Some(before) = toolcert_dialect::def(c.dialect).damaged_before(&wire, *k) {
            k.after = before;
        }
    }
    // LF line ends as recorded; a connection that dropped inside an event keeps its tail.
    let transport =
        Transport { tail: c.turn.transport.tail, corrupt: turn.transport.corrupt, ..Transport::default() };
    let (wire, exp) = match c.defect {
        None => {
            let exp = expect(&turn, &neutral, Profile { schema: true, ..Default::default() });
            (wire, exp)
        }
        Some(d) => {
            let sse = wire.to_sse().ok_or_else(|| format!("{}: a wire defect needs an SSE dialect", c.id))?;
            let (wire, before) = defect(&sse, c.dialect, d).map_err(|e| format!("{}: {e}", c.id))?;
            (
                wire.into(),
                expect_defect(
                    &c.turn,
                    &neutral,
                    Profile { schema: true, ..Default::default() },
                    before,
                    defect_class(d),
                ),
            )
        }
    };
    let bytes = render_bytes(c.dialect, &wire, &transport).chunks.concat();
    let mut file = ExpectationFile::from_expected(&c.id, c.dialect.name(), &c.turn, neutral.end, &exp);
    file.seed.clone_from(&c.seed);
    file.about.clone_from(&c.about);
    file.quirks = c.quirks;
    Ok((bytes, file))
}

/// Writes every corpus case under `dir`; returns how many.
pub fn write(dir: &Path) -> Result<usize, String> {
    let cases = cases();
    for c in &cases {
        let (bytes, file) = materialise(c)?;
        let sse = stream_file(dir, c);
        let parent = sse.parent().expect("an id has a dialect directory");
        std::fs::create_dir_all(parent).map_err(|e| format!("{}: {e}", parent.display()))?;
        std::fs::write(&sse, &bytes).map_err(|e| format!("{}: {e}", sse.display()))?;
        let json = serde_json::to_string_pretty(&file).expect("an expectation serialises") + "\n";
        let exp = expectation_path(&sse);
        std::fs::write(&exp, json).map_err(|e| format!("{}: {e}", exp.display()))?;
    }
    Ok(cases.len())
}

/// `x.sse` (or `x.eventstream`) → `x.expect.json`.
pub fn expectation_path(sse: &Path) -> PathBuf {
    sse.with_extension("expect.json")
}

/// Reads and parses an expectation file; errors name the file, line and column.
pub fn read_expectation(path: &Path) -> Result<ExpectationFile, String> {
    let text = std::fs::read_to_string(path).map_err(|e| format!("{}: {e}", path.display()))?;
    match serde_json::from_str(&text) {
        Ok(file) => Ok(file),
        // The nesting cases' arguments are deeper than serde_json reads by default: read them
        // within the oracle's own depth limit.
        Err(e) if e.to_string().starts_with("recursion limit exceeded") => {
            let v = toolcert_oracle::parse_document(&text).ok_or_else(|| {
                format!("{}: nested deeper than {} levels", path.display(), toolcert_oracle::MAX_DEPTH)
            })?;
            serde_json::from_value(v).map_err(|e| format!("{}: {e}", path.display()))
        }
        Err(e) => Err(format!("{}:{}:{}: {e}", path.display(), e.line(), e.column())),
    }
}

/// What a subject made of one recorded stream.
#[derive(Clone, Debug)]
pub struct Replayed {
    pub dialect: Dialect,
    /// The server profile the stream was replayed in: the one given, the one its expectation
    /// file names, or the one its bytes show (`None`: they show a mix no profile sends).
    pub profile: Option<&'static toolcert_scenario::ServerProfile>,
    /// Whether [`Replayed::profile`] was detected from the bytes rather than given.
    pub profile_detected: bool,
    pub observation: Observation,
    /// When an expectation file sits beside the stream: its path and the violations.
    pub verdict: Option<(PathBuf, Vec<Violation>)>,
    /// The stream carried a terminal event (a stop reason or an error); an empty or cut-short
    /// recording did not, and nothing in it may be dispatched.
    pub terminal: bool,
    /// A Chat stream of several choices (`n` > 1): the indices of the choices besides 0, and
    /// the chunks that carried them. toolcert reads choice 0 only (each other choice is
    /// another completion of the same request): they are a reported skip, never dropped
    /// silently (docs/SPEC.md, "Server profiles").
    pub other_choices: (Vec<u64>, usize),
}

impl Replayed {
    /// The observation in the expectation files' shape.
    pub fn to_json(&self) -> serde_json::Value {
        let o = &self.observation;
        serde_json::json!({
            "dialect": self.dialect.name(),
            "profile": self.profile.map(|p| p.name),
            "profile_detected": self.profile_detected,
            "text": o.text,
            "error": o.error.as_ref().map(|e| serde_json::json!({"class": e.value.class, "detail": e.value.detail})),
            "crash": o.crash,
            "terminal": self.terminal,
            "other_choices": {"indices": self.other_choices.0, "chunks": self.other_choices.1},
            "calls": o.outcomes.iter().map(|t| outcome_to_file(&t.value)).collect::<Vec<_>>(),
            "verdict": self.verdict.as_ref().map(|(p, v)| serde_json::json!({
                "expectation": p.display().to_string(),
                "conforms": v.is_empty(),
                "violations": v,
            })),
        })
    }
}

/// The SSE events of `bytes`, decoded a piece at a time: what `decode_all` gives, without
/// holding every event at once. Ends after the first error.
fn sse_events(
    bytes: &[u8],
) -> impl Iterator<Item = Result<toolcert_sse::SseEvent, toolcert_sse::SseError>> + '_ {
    const PIECE: usize = 64 << 10;
    let mut decoder = toolcert_sse::Decoder::new();
    let mut pieces = bytes.chunks(PIECE);
    let mut ready = std::collections::VecDeque::new();
    let mut ended = false;
    std::iter::from_fn(move || loop {
        if let Some(ev) = ready.pop_front() {
            return Some(Ok(ev));
        }
        if ended {
            return None;
        }
        let mut out = Vec::new();
        let fed = match pieces.next() {
            Some(piece) => decoder.feed(piece, &mut out),
            None => {
                ended = true;
                decoder.finish(&mut out)
            }
        };
        ready.extend(out);
        if let Err(e) = fed {
            ended = true;
            // Events completed before the error first, as decode_all would have refused them.
            return Some(Err(e));
        }
    })
}

/// 1-based line of a byte offset, for error messages.
fn line_of(bytes: &[u8], offset: usize) -> usize {
    1 + bytes[..offset.min(bytes.len())].iter().filter(|&&b| b == b'\n').count()
}

/// Feeds the bytes of `path` to `subject` at the bytes level, in `chunk`-byte pieces (all at
/// once when 0), and judges the result when an expectation file sits beside it. The dialect
/// is detected from the stream unless given.
pub fn replay(
    path: &Path,
    subject: &dyn Subject,
    dialect: Option<Dialect>,
    profile: Option<&'static toolcert_scenario::ServerProfile>,
    chunk: usize,
) -> Result<Replayed, String> {
    let mut bytes = std::fs::read(path).map_err(|e| format!("{}: {e}", path.display()))?;
    // A binary-framed stream (Bedrock's event stream) by the dialect given, or else by its
    // extension: the registry's binary-framed dialect.
    let framed = match dialect {
        Some(d) => Some(toolcert_dialect::def(d)).filter(|d| d.binary()),
        None if path.extension().is_some_and(|e| e == EVENTSTREAM_EXT) => {
            toolcert_dialect::registry().iter().copied().find(|d| d.binary())
        }
        None => None,
    };
    let binary = framed.is_some();
    let units = |bytes| -> Box<dyn Iterator<Item = Result<WireMessage, String>> + '_> {
        match framed {
            Some(d) => Box::new(frame_events(bytes, d.deframer())),
            None => Box::new(sse_events(bytes).map(|e| e.map(WireMessage::Sse).map_err(|e| e.to_string()))),
        }
    };
    // A first pass checks the framing and finds the dialect; neither this pass nor the next
    // holds more than one piece's events at a time, whatever the stream's size.
    let (mut any_event, mut detected) = (false, None);
    if binary {
        // A damaged message is the stream's fault: fed to the subject and judged as any fault.
        for ev in units(&bytes).map_while(Result::ok) {
            any_event = true;
            detected = detected.or_else(|| detect(std::slice::from_ref(&ev)));
        }
    }
    for ev in sse_events(&bytes).take_while(|_| !binary) {
        let ev = ev.map_err(|e| {
            let at = match &e {
                toolcert_sse::SseError::InvalidUtf8 { offset }
                | toolcert_sse::SseError::TruncatedUtf8 { offset } => *offset as usize,
                _ => 0,
            };
            format!("{}:{}: not a readable SSE stream: {e}", path.display(), line_of(&bytes, at))
        })?;
        any_event = true;
        if detected.is_none() {
            detected = detect(&[WireMessage::Sse(ev)]);
        }
    }
    let exp_path = expectation_path(path);
    let expectation = if exp_path.exists() { Some(read_expectation(&exp_path)?) } else { None };
    let dialect = match dialect {
        Some(d) => d,
        None => match expectation.as_ref().map(|e| e.dialect.parse::<Dialect>()) {
            Some(Ok(d)) => d,
            Some(Err(e)) => return Err(format!("{}: {e}", exp_path.display())),
            None if !any_event => {
                return Err(format!(
                    "{}: holds no SSE event (empty, or no complete event), so no dialect to detect; \
                     pass --dialect to replay it anyway",
                    path.display()
                ))
            }
            None => detected.ok_or_else(|| {
                format!("{}: cannot tell the dialect from the stream; pass --dialect", path.display())
            })?,
        },
    };
    // A readable stream with an event its dialect's decoder refuses (a fault, data that is
    // not JSON, a field of the wrong type) is a faulty stream: it is fed to the subject and
    // judged. Decoding here only finds the events for a subject that takes no bytes (and the
    // line of a refused event).
    let levels = subject.levels();
    // The neutral events are kept only for a subject fed events; a large stream is otherwise
    // held once, as bytes (the events decoded here and the subject's own decoding are not).
    let keep_events = !levels.contains(&Level::Bytes);
    let mut terminal = false;
    if let Some(p) = profile.filter(|p| p.dialect != dialect) {
        return Err(format!("{}: a {dialect} stream, but the profile given is {}", path.display(), p.id()));
    }
    // The profile given, else the one a reproducer's expectation names; else the one the
    // bytes show (the decoders read every profile alike: this names the server, for the
    // report and for a subject that declares only some profiles).
    let written = expectation.as_ref().map(|e| e.quirks);
    let given = profile.map(|p| p.quirks).or(written);
    let mut detector = toolcert_dialect::profiles::ProfileDetector::new();
    let mut other_choices: (Vec<u64>, usize) = (Vec::new(), 0);
    let mut d = decoder(dialect, given.unwrap_or_default());
    let mut sink = Vec::new();
    let mut refused = None;
    for message in units(&bytes) {
        let message = match message {
            Ok(m) => m,
            // Only a binary stream gets here with an error (the first pass refused SSE's).
            Err(e) => {
                refused = Some(format!("{}: {dialect} framing: {e}", path.display()));
                break;
            }
        };
        if !keep_events {
            terminal |= sink.iter().any(|e| matches!(e, Event::Stop { .. } | Event::Error { .. }));
            sink.clear();
        }
        if given.is_none() {
            detector.feed(dialect, &message);
        }
        if dialect == Dialect::OpenAiChat {
            count_other_choices(&message, &mut other_choices);
        }
        if let Err(e) = d.decode(&message, &mut sink) {
            let needle = message.as_sse().and_then(|ev| ev.data.lines().next()).unwrap_or_default();
            let offset = find(&bytes, needle.as_bytes()).unwrap_or(0);
            refused = Some(format!(
                "{}:{}: {} event: {}",
                path.display(),
                line_of(&bytes, offset),
                dialect,
                e.detail
            ));
            break;
        }
    }
    terminal |= sink.iter().any(|e| matches!(e, Event::Stop { .. } | Event::Error { .. }));
    if !levels.contains(&Level::Bytes) && !levels.contains(&Level::Events) {
        return Err(format!("{} can be fed neither bytes nor events", subject.name()));
    }
    if let (Some(refused), false) = (&refused, levels.contains(&Level::Bytes)) {
        // Events carry no undecodable data: showing such a subject the events before it would
        // judge it on a stream it was never given.
        return Err(format!(
            "{refused}\n{} takes events, which cannot carry this event: replay the stream with a subject \
             that takes bytes",
            subject.name()
        ));
    }
    let chunks: toolcert_subject::Chunks = if chunk == 0 {
        [std::mem::take(&mut bytes)].into_iter().collect()
    } else {
        bytes.chunks(chunk).collect()
    };
    drop(bytes);
    let tools = expectation.as_ref().map(|e| e.tools.clone()).unwrap_or_default();
    let end = expectation.as_ref().map_or(StreamEnd::Eof, |e| e.end);
    let case = Case::single(
        path.display().to_string(),
        Turn {
            tools,
            blocks: vec![],
            shape: Shape::PerCall,
            ending: toolcert_scenario::Ending::Stop(toolcert_scenario::StopReason::EndTurn),
            faults: vec![],
            pings: vec![],
            transport: Transport::default(),
            wire: Default::default(),
        },
    );
    // A subject fed only events gets the stream through the project's SSE and dialect
    // decoders.
    let units = if levels.contains(&Level::Bytes) { Units::Bytes(&chunks) } else { Units::Events(&sink) };
    let input = [Input { units, end }];
    let (profile, profile_detected, quirks) = match (profile, written) {
        (Some(p), _) => (Some(p), false, p.quirks),
        (None, Some(q)) => (dialect.profile_of(q), false, q),
        (None, None) => {
            let p = detector.profile(dialect);
            (p, true, p.map_or_else(|| detector.shown(), |p| p.quirks))
        }
    };
    let speech = Speech { dialect, quirks };
    let observation = subject
        .observe(&case, &input, speech)
        .unwrap_or_else(|| drive(&*subject.factory(), &case, &input, speech))
        .pop()
        .unwrap_or_default();
    let verdict = match expectation {
        Some(e) => Some((
            exp_path.clone(),
            e.judge(&observation).map_err(|m| format!("{}: {m}", exp_path.display()))?,
        )),
        None => None,
    };
    Ok(Replayed { dialect, profile, profile_detected, observation, verdict, terminal, other_choices })
}

/// Counts a Chat chunk's choices besides choice 0 (their indices, and one more chunk).
fn count_other_choices(message: &WireMessage, seen: &mut (Vec<u64>, usize)) {
    #[derive(serde::Deserialize)]
    struct Chunk {
        #[serde(default)]
        choices: Vec<Choice>,
    }
    #[derive(serde::Deserialize)]
    struct Choice {
        #[serde(default)]
        index: u64,
    }
    let Some(ev) = message.as_sse() else { return };
    // Only a chunk with `choices` can hold a second one: the others are not parsed.
    if !ev.data.contains("\"choices\"") {
        return;
    }
    let Ok(chunk) = serde_json::from_str::<Chunk>(&ev.data) else { return };
    let mut any = false;
    for c in chunk.choices.iter().filter(|c| c.index != 0) {
        any = true;
        if !seen.0.contains(&c.index) {
            seen.0.push(c.index);
        }
    }
    seen.1 += usize::from(any);
}

fn find(hay: &[u8], needle: &[u8]) -> Option<usize> {
    if needle.is_empty() {
        return None;
    }
    hay.windows(needle.len()).position(|w| w == needle)
}

/// Every `.sse` file under `dir`, sorted (see [`walk`]).
pub fn files(dir: &Path) -> Result<Vec<PathBuf>, String> {
    Ok(walk(dir)?.files)
}

/// What [`walk`] found under a directory.
#[derive(Clone, Debug, Default)]
pub struct Walk {
    /// The `.sse` files, sorted.
    pub files: Vec<PathBuf>,
    /// What was not walked, and why (a link back into a directory already walked, a link
    /// out of the corpus).
    pub skipped: Vec<String>,
}

/// Walks `dir` for `.sse` files, each real directory once: a symbolic link to a directory
/// already walked (a loop such as `a -> .`) or to one outside `dir` (`up -> ../..`) is
/// skipped and listed, so a walk ends and checks only the corpus's own files.
pub fn walk(dir: &Path) -> Result<Walk, String> {
    let root = std::fs::canonicalize(dir).map_err(|e| format!("{}: {e}", dir.display()))?;
    let mut seen = std::collections::BTreeSet::from([root.clone()]);
    let mut out = Walk::default();
    let mut stack = vec![dir.to_path_buf()];
    while let Some(d) = stack.pop() {
        let entries = std::fs::read_dir(&d).map_err(|e| format!("{}: {e}", d.display()))?;
        for entry in entries {
            let entry = entry.map_err(|e| format!("{}: {e}", d.display()))?;
            let p = entry.path();
            let linked = entry.file_type().is_ok_and(|t| t.is_symlink());
            if p.is_dir() {
                // Fuzz seeds and findings are not replayable cases.
                if matches!(p.file_name().and_then(|n| n.to_str()), Some("fuzz")) {
                    continue;
                }
                let real = match std::fs::canonicalize(&p) {
                    Ok(real) => real,
                    Err(e) => {
                        out.skipped.push(format!("{}: {e}", p.display()));
                        continue;
                    }
                };
                if linked && !real.starts_with(&root) {
                    out.skipped.push(format!("{}: a link out of {}", p.display(), dir.display()));
                } else if !seen.insert(real.clone()) {
                    out.skipped.push(format!(
                        "{}: a link to {}, walked already",
                        p.display(),
                        real.display()
                    ));
                } else {
                    stack.push(p);
                }
            } else if p.extension().is_some_and(|e| e == "sse" || e == EVENTSTREAM_EXT) {
                out.files.push(p);
            }
        }
    }
    out.files.sort();
    out.skipped.sort();
    Ok(out)
}

/// One file's check.
#[derive(Clone, Debug)]
pub struct Checked {
    pub path: PathBuf,
    pub problems: Vec<String>,
}

/// Checks every corpus case under `dir`: `reference` (the reference accumulator, which the
/// runner does not depend on) conforms to each expectation in one chunk, byte by byte and in
/// 7-byte chunks; and each file of a named case still says what its scenario says (a stale
/// file is a problem: regenerate with `toolcert corpus write`).
pub fn check(dir: &Path, reference: &dyn Subject) -> Result<Vec<Checked>, String> {
    let current: std::collections::BTreeMap<String, CorpusCase> =
        cases().into_iter().map(|c| (c.id.clone(), c)).collect();
    let mut out = Vec::new();
    for path in files(dir)? {
        let mut problems = Vec::new();
        for chunk in [0, 1, 7] {
            match replay(&path, reference, None, None, chunk) {
                Ok(r) => match r.verdict {
                    None => {
                        problems.push(format!("no expectation file ({})", expectation_path(&path).display()))
                    }
                    Some((_, v)) if !v.is_empty() => {
                        problems.extend(v.iter().map(|v| format!("in {chunk}-byte chunks: {v}")))
                    }
                    Some(_) => {}
                },
                Err(e) => problems.push(e),
            }
            if !problems.is_empty() {
                break;
            }
        }
        if let Ok(file) = read_expectation(&expectation_path(&path)) {
            if let Some(c) = current.get(&file.id) {
                match materialise(c) {
                    Ok((bytes, want)) => {
                        if std::fs::read(&path).ok().as_deref() != Some(bytes.as_slice()) || file != want {
                            problems.push(format!(
                                "stale: {} no longer matches its scenario (run `toolcert corpus write`)",
                                file.id
                            ));
                        }
                    }
                    Err(e) => problems.push(e),
                }
            }
        }
        out.push(Checked { path, problems });
    }
    Ok(out)
}
