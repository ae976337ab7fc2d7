//! Google Gemini `streamGenerateContent` (`alt=sse`), in its two server profiles: the Gemini
//! API's whole calls (`generate`) and Vertex AI's streamed function-call arguments
//! (`vertex-partial-args`).
//!
//! Where it sits: scenario → render events → **wire (this module: unnamed `data:` chunks,
//! each a `GenerateContentResponse`)** → bytes (SSE, `crate::bytes`) → subject; and back, the
//! [`GeminiDecoder`] is the reference stack's middle layer for this dialect.
//!
//! Gemini does not stream argument text. A `functionCall` part carries `args`, a JSON
//! object, whole; under `streamFunctionCallArguments` a call comes as its name with
//! `willContinue`, then `partialArgs`: typed values at JSON paths, a string's value in pieces
//! appended per path, numbers, booleans and nulls whole. The decoder turns both back into
//! argument text for the neutral core without keeping any argument byte: `args` as the JSON
//! text the server sent, and each piece as the text it adds to the document (`path::Writer`,
//! docs/SPEC.md "Gemini: arguments by JSON path"). Calls carry no index: each is the next
//! call, its neutral index its announcement ordinal, and a call the wire gives no `id` gets
//! `call_<ordinal>` (the renderer sends no `id` for a call whose id is that).
//!
//! The renderer sends a turn's calls as its lowering (`DialectDef::lower_turn` for Gemini) left them: a
//! document the wire can carry is written in the canonical form the pieces give back
//! (`path::canonical`), and split where pieces can be cut, so a stream decoded gives back
//! the scenario's own bytes.

pub(crate) mod path;

use std::borrow::Cow;

use serde::{Deserialize, Serialize};
use serde_json::value::RawValue;
use toolcert_render::{Event, Origin, Rendered};
use toolcert_scenario::{
    Block, Call, Dialect, FaultKind, ForeignKind, GeminiEnd, Quirks, Shape, StopMeaning, StopReason, Turn,
};
use toolcert_sse::SseEvent;
use toolcert_subject::{ErrorClass, TurnError, WireMessage};

use crate::json::Ids;
use crate::{Decoded, SseStream, WireStream};
use path::{Piece, Seg, Writer};

/// The id a call the wire gives none is known by: its announcement ordinal in the stream.
pub fn assigned_id(ordinal: u32) -> String {
    format!("call_{ordinal}")
}

// ---------------------------------------------------------------------------------------
// Wire types: one set, serialised to render and read leniently to decode.

#[derive(Serialize, Deserialize, Default)]
struct Chunk<'a> {
    #[serde(borrow, default, skip_serializing_if = "Vec::is_empty")]
    candidates: Vec<Candidate<'a>>,
    #[serde(rename = "usageMetadata", default, skip_serializing_if = "Option::is_none", skip_deserializing)]
    usage: Option<Usage>,
    #[serde(rename = "modelVersion", default, skip_serializing_if = "Option::is_none", skip_deserializing)]
    model_version: Option<&'static str>,
    #[serde(borrow, default, skip_serializing_if = "Option::is_none")]
    error: Option<ApiError<'a>>,
}

#[derive(Serialize, Deserialize, Default)]
struct Candidate<'a> {
    #[serde(borrow, default, skip_serializing_if = "Option::is_none")]
    content: Option<Content<'a>>,
    #[serde(rename = "finishReason", borrow, default, skip_serializing_if = "Option::is_none")]
    finish_reason: Option<Cow<'a, str>>,
    #[serde(default, skip_deserializing)]
    index: u32,
}

#[derive(Serialize, Deserialize, Default)]
struct Content<'a> {
    #[serde(borrow, default)]
    parts: Vec<Part<'a>>,
    #[serde(default, skip_serializing_if = "Option::is_none", skip_deserializing)]
    role: Option<&'static str>,
}

#[derive(Serialize, Deserialize, Default)]
struct Part<'a> {
    #[serde(borrow, default, skip_serializing_if = "Option::is_none")]
    text: Option<Cow<'a, str>>,
    /// A thought summary (`thought: true` beside `text`): never the answer's text.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    thought: bool,
    #[serde(rename = "functionCall", borrow, default, skip_serializing_if = "Option::is_none")]
    function_call: Option<FunctionCall<'a>>,
    /// Sent back with this part's call on the next turn; bound to the call it sits on.
    #[serde(rename = "thoughtSignature", borrow, default, skip_serializing_if = "Option::is_none")]
    thought_signature: Option<Cow<'a, str>>,
}

#[derive(Serialize, Deserialize, Default)]
struct FunctionCall<'a> {
    #[serde(borrow, default, skip_serializing_if = "Option::is_none")]
    id: Option<Cow<'a, str>>,
    #[serde(borrow, default, skip_serializing_if = "Option::is_none")]
    name: Option<Cow<'a, str>>,
    /// The whole arguments, as the JSON text the server sent.
    #[serde(borrow, default, skip_serializing_if = "Option::is_none", deserialize_with = "raw")]
    args: Option<Cow<'a, RawValue>>,
    #[serde(rename = "partialArgs", borrow, default, skip_serializing_if = "Vec::is_empty")]
    partial_args: Vec<PartialArg<'a>>,
    #[serde(rename = "willContinue", default, skip_serializing_if = "std::ops::Not::not")]
    will_continue: bool,
}

#[derive(Serialize, Deserialize, Default)]
struct PartialArg<'a> {
    #[serde(rename = "jsonPath", borrow, default)]
    json_path: Cow<'a, str>,
    /// A string piece, as its JSON string literal (its escapes are copied, not decoded).
    #[serde(
        rename = "stringValue",
        borrow,
        default,
        skip_serializing_if = "Option::is_none",
        deserialize_with = "raw"
    )]
    string_value: Option<Cow<'a, RawValue>>,
    #[serde(
        rename = "numberValue",
        borrow,
        default,
        skip_serializing_if = "Option::is_none",
        deserialize_with = "raw"
    )]
    number_value: Option<Cow<'a, RawValue>>,
    #[serde(rename = "boolValue", default, skip_serializing_if = "Option::is_none")]
    bool_value: Option<bool>,
    /// Protobuf's `NULL_VALUE` (any value here is a null).
    #[serde(
        rename = "nullValue",
        borrow,
        default,
        skip_serializing_if = "Option::is_none",
        deserialize_with = "raw"
    )]
    null_value: Option<Cow<'a, RawValue>>,
    #[serde(rename = "willContinue", default, skip_serializing_if = "std::ops::Not::not")]
    will_continue: bool,
}

#[derive(Serialize, Deserialize)]
struct Usage {
    #[serde(rename = "promptTokenCount")]
    prompt: u32,
    #[serde(rename = "candidatesTokenCount")]
    candidates: u32,
    #[serde(rename = "totalTokenCount")]
    total: u32,
}

#[derive(Serialize, Deserialize, Default)]
struct ApiError<'a> {
    #[serde(default, skip_deserializing)]
    code: u32,
    #[serde(borrow, default)]
    message: Cow<'a, str>,
    #[serde(default, skip_serializing_if = "Option::is_none", skip_deserializing)]
    status: Option<&'static str>,
}

/// A raw JSON value borrowed from the message (`null` is absent).
fn raw<'de, D: serde::Deserializer<'de>>(d: D) -> Result<Option<Cow<'de, RawValue>>, D::Error> {
    let v = <&'de RawValue>::deserialize(d)?;
    Ok((v.get() != "null").then_some(Cow::Borrowed(v)))
}

fn raw_owned(json: String) -> Result<Cow<'static, RawValue>, String> {
    RawValue::from_string(json).map(Cow::Owned).map_err(|e| format!("a value that is not JSON: {e}"))
}

const MODEL: &str = "gemini-2.5-flash";

// ---------------------------------------------------------------------------------------
// Rendering.

/// One chunk's data.
fn chunk(parts: Vec<Part<'_>>, finish: Option<&str>, usage: bool) -> SseEvent {
    let c = Chunk {
        candidates: vec![Candidate {
            content: Some(Content { parts, role: Some("model") }),
            finish_reason: finish.map(|f| Cow::Owned(f.to_owned())),
            index: 0,
        }],
        usage: usage.then_some(Usage { prompt: 12, candidates: 20, total: 32 }),
        model_version: Some(MODEL),
        error: None,
    };
    SseEvent::data(serde_json::to_string(&c).expect("serialisable"))
}

fn call_part<'a>(call: FunctionCall<'a>, signature: Option<String>) -> Part<'a> {
    Part { function_call: Some(call), thought_signature: signature.map(Cow::Owned), ..Part::default() }
}

/// The wire, with each event's count of neutral events delivered.
struct Out {
    wire: SseStream,
}

impl Out {
    fn push(&mut self, e: SseEvent, upto: usize) {
        self.wire.events.push(e);
        self.wire.upto.push(upto as u32);
    }

    /// Neutral events up to `upto` are delivered by the last event sent (an empty fragment,
    /// a fragment whose text a piece already sent). `false`: no event was sent yet.
    fn extend_last(&mut self, upto: usize) -> bool {
        match self.wire.upto.last_mut() {
            Some(u) => {
                *u = (*u).max(upto as u32);
                true
            }
            None => false,
        }
    }
}

/// The live call of a Vertex stream being rendered: its canonical document, where each
/// leaf sits in it, and how much of it the pieces sent so far wrote.
struct Live<'t> {
    leaves: Vec<path::Leaf>,
    /// Per leaf: where a string's content starts (a scalar's own start), and the end of the
    /// leaf (after a string's closing quote).
    at: Vec<(usize, usize)>,
    args: &'t str,
    /// The next leaf to send, and how far into its content (a string left open).
    leaf: usize,
    within: Option<usize>,
    /// Text written so far.
    text: String,
    writer: Writer,
}

impl<'t> Live<'t> {
    fn new(args: &'t str) -> Result<Live<'t>, String> {
        let leaves = if args.is_empty() { Vec::new() } else { path::leaves(args)? };
        let mut w = Writer::default();
        let mut text = String::new();
        let mut at = Vec::with_capacity(leaves.len());
        for leaf in &leaves {
            let raw = &args[leaf.raw.clone()];
            if leaf.string {
                w.piece(&leaf.path, Piece::Str { raw: "", last: false }, &mut text)?;
                let start = text.len();
                w.piece(&leaf.path, Piece::Str { raw, last: true }, &mut text)?;
                at.push((start, text.len()));
            } else {
                let start = text.len();
                w.piece(&leaf.path, Piece::Scalar(raw), &mut text)?;
                at.push((start, text.len()));
            }
        }
        Ok(Live { leaves, at, args, leaf: 0, within: None, text: String::new(), writer: Writer::default() })
    }

    /// The `partialArgs` that write the document up to `target` (a place pieces can end).
    fn pieces_to(&mut self, target: usize) -> Result<Vec<PartialArg<'static>>, String> {
        let nowhere = || format!("a fragment ends at byte {target}, where no piece can end");
        let mut out = Vec::new();
        while self.text.len() < target {
            let (Some(leaf), Some(&(start, end))) = (self.leaves.get(self.leaf), self.at.get(self.leaf))
            else {
                return Err(nowhere());
            };
            let raw = &self.args[leaf.raw.clone()];
            let path_text = path::write_path(&leaf.path);
            if leaf.string {
                let from = self.within.unwrap_or(0);
                let (take, last) = if target >= end {
                    (raw.len(), true)
                } else if target >= start + from && target < end {
                    (target - start, false)
                } else {
                    return Err(nowhere());
                };
                // Inside a character or an escape, no piece can end.
                if take != raw.len() && take != 0 && !path::string_cuts(raw).any(|c| c == take) {
                    return Err(nowhere());
                }
                let chunk = &raw[from..take];
                self.writer.piece(&leaf.path, Piece::Str { raw: chunk, last }, &mut self.text)?;
                out.push(PartialArg {
                    json_path: Cow::Owned(path_text),
                    string_value: Some(raw_owned(format!("\"{chunk}\""))?),
                    will_continue: !last,
                    ..PartialArg::default()
                });
                if last {
                    self.leaf += 1;
                    self.within = None;
                } else {
                    self.within = Some(take);
                }
            } else {
                if target < end {
                    return Err(nowhere());
                }
                self.writer.piece(&leaf.path, Piece::Scalar(raw), &mut self.text)?;
                let mut arg = PartialArg { json_path: Cow::Owned(path_text), ..PartialArg::default() };
                match raw {
                    "true" => arg.bool_value = Some(true),
                    "false" => arg.bool_value = Some(false),
                    "null" => arg.null_value = Some(raw_owned("\"NULL_VALUE\"".into())?),
                    n => arg.number_value = Some(raw_owned(n.to_owned())?),
                }
                out.push(arg);
                self.leaf += 1;
            }
            let _ = start;
        }
        if self.text.len() != target {
            return Err(nowhere());
        }
        Ok(out)
    }
}

/// How a Vertex call ends on the wire (the three forms observed).
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
enum Terminator {
    /// `{"functionCall":{}}`.
    Empty,
    /// The last piece with no `willContinue` at either level.
    LastPiece,
    /// The candidate's `finishReason`.
    Finish,
}

fn render(turn: &Turn, neutral: &Rendered<'_>, quirks: Quirks, ids: &Ids) -> Result<SseStream, String> {
    let partial = quirks.gemini_partial_args;
    let mut out = Out { wire: SseStream::default() };
    let events = &neutral.events;
    let origins = &neutral.origins;
    let mut ordinal: u32 = 0;
    let mut live: Option<Live<'_>> = None;
    // The live call's terminator, when it is sent after its last fragment.
    let mut signed = false;
    // The live call's last fragment came; its closing brackets wait for its terminator.
    let mut pending_close = false;
    let seed = ids.seed_byte();
    // Whole calls (`generate`) waiting to be sent, several in one chunk.
    let mut batch: Option<(Vec<Part<'static>>, usize)> = None;
    let mut k = 0;
    while k < events.len() {
        if partial || !matches!(events[k], Event::CallStart { .. }) {
            flush(&mut batch, &mut out);
        }
        match (&events[k], origins[k]) {
            (Event::TextDelta { text }, _) => {
                if live.is_some() {
                    return Err("text inside a call's pieces".into());
                }
                let part = Part { text: Some(Cow::Borrowed(text)), ..Part::default() };
                out.push(chunk(vec![part], None, false), k + 1);
                k += 1;
            }
            (Event::CallStart { .. }, Origin::Announce { block }) => {
                if live.is_some() {
                    return Err("a call announced while another is live".into());
                }
                let Some(Block::Call(call)) = turn.blocks.get(block as usize) else {
                    return Err("an announcement of no call".into());
                };
                let id = (call.call_id != assigned_id(ordinal)).then(|| Cow::Owned(call.call_id.clone()));
                let name = Some(Cow::Owned(call.name.clone()));
                // Gemini signs the first call of a turn's parallel calls.
                let signature = (!signed).then(|| signature(seed, ordinal));
                signed = true;
                ordinal += 1;
                // Where the call's own events end (its terminal), if they come together.
                let run_end = run_end(neutral, k, block);
                if !partial {
                    let Some(stop) = run_end else {
                        return Err(
                            "a Gemini functionCall part is whole: this call's events do not come together \
                             (a ping, a fault or the end of the stream among them)"
                                .into(),
                        );
                    };
                    let args = match call.arguments.as_str() {
                        "" => None,
                        a if sendable(turn, a) => Some(raw_owned(a.to_owned())?),
                        _ => {
                            return Err("a Gemini `args` is a JSON object sent as written: this call's \
                                        document is not one"
                                .into())
                        }
                    };
                    let fc = FunctionCall { id, name, args, ..FunctionCall::default() };
                    let part = call_part(fc, signature);
                    match batch.as_mut() {
                        // Parallel calls in one chunk, in turns whose seed says so; in the
                        // others, one chunk each.
                        Some((parts, upto)) if seed & 1 == 1 => {
                            parts.push(part);
                            *upto = stop + 1;
                        }
                        _ => {
                            flush(&mut batch, &mut out);
                            batch = Some((vec![part], stop + 1));
                        }
                    }
                    k = stop + 1;
                    continue;
                }
                if call.arguments.is_empty() {
                    if let Some(stop) = run_end {
                        // A call without arguments: its name alone, whole.
                        let fc = FunctionCall { id, name, ..FunctionCall::default() };
                        out.push(chunk(vec![call_part(fc, signature)], None, false), stop + 1);
                        k = stop + 1;
                        continue;
                    }
                }
                let c = path::canonical(&call.arguments).map_err(|e| format!("this call's document: {e}"))?;
                if c.text != call.arguments {
                    return Err(
                        "this call's document is not in the form Vertex's pieces write (lower the case \
                                first)"
                            .into(),
                    );
                }
                let fc = FunctionCall { id, name, will_continue: true, ..FunctionCall::default() };
                out.push(chunk(vec![call_part(fc, signature)], None, false), k + 1);
                live = Some(Live::new(&call.arguments)?);
                k += 1;
            }
            (Event::ArgsDelta { .. }, Origin::Fragment { block, end, .. }) => {
                let Some(l) = live.as_mut() else {
                    return Err("a fragment of no live call".into());
                };
                let end = end as usize;
                let all = end == l.args.len() && !l.args.is_empty();
                // The document's closing brackets come with the call's terminator only.
                let target = if all { l.args.len() - closers(l.args) } else { end };
                let pieces = l.pieces_to(target)?;
                let next_is_stop =
                    matches!(origins.get(k + 1), Some(Origin::CallStop { block: b }) if *b == block);
                let form = terminator(
                    turn,
                    seed,
                    ordinal,
                    next_is_stop && matches!(origins.get(k + 2), Some(Origin::Stop)),
                );
                if all && next_is_stop && form == Terminator::LastPiece && !pieces.is_empty() {
                    let fc = FunctionCall { partial_args: pieces, ..FunctionCall::default() };
                    out.push(chunk(vec![call_part(fc, None)], None, false), k + 2);
                    live = None;
                    k += 2;
                    continue;
                }
                let done = if all { k } else { k + 1 };
                pending_close |= all;
                if pieces.is_empty() {
                    if !out.extend_last(done) {
                        return Err("a fragment before any event".into());
                    }
                } else {
                    let fc =
                        FunctionCall { partial_args: pieces, will_continue: true, ..FunctionCall::default() };
                    out.push(chunk(vec![call_part(fc, None)], None, false), done);
                }
                k += 1;
            }
            (Event::CallStop { .. }, Origin::CallStop { .. }) => {
                if live.take().is_none() {
                    return Err("a call's terminal with no live call".into());
                }
                pending_close = false;
                let form = terminator(turn, seed, ordinal, matches!(origins.get(k + 1), Some(Origin::Stop)));
                if form == Terminator::Finish {
                    // The finish reason ends the call: the stop's chunk delivers both.
                    k += 1;
                    continue;
                }
                out.push(chunk(vec![call_part(FunctionCall::default(), None)], None, false), k + 1);
                k += 1;
            }
            (Event::Stop { reason }, _) => {
                live = None;
                let def = crate::registry::def(Dialect::Gemini);
                let word = def.spell(def.stop_reason(*reason));
                out.push(chunk(Vec::new(), Some(word), true), k + 1);
                k += 1;
            }
            (Event::Error { .. }, _) if pending_close => return Err(CUT_BEFORE_END.into()),
            (Event::Error { message }, _) => {
                let e = ApiError { code: 500, message: Cow::Borrowed(message), status: Some("INTERNAL") };
                let c = Chunk { error: Some(e), ..Chunk::default() };
                out.push(SseEvent::data(serde_json::to_string(&c).expect("serialisable")), k + 1);
                k += 1;
            }
            (Event::Ping, _) => {
                let parts = match live {
                    Some(_) => {
                        let keep = FunctionCall { will_continue: true, ..FunctionCall::default() };
                        vec![call_part(keep, None)]
                    }
                    None => Vec::new(),
                };
                out.push(chunk(parts, None, false), k + 1);
                k += 1;
            }
            (e, _) => return Err(format!("Gemini has no event for {e:?}")),
        }
    }
    flush(&mut batch, &mut out);
    if pending_close || out.wire.upto.last().copied().unwrap_or(0) as usize != events.len() {
        return Err(CUT_BEFORE_END.into());
    }
    Ok(out.wire)
}

/// Sends the whole calls waiting, in one chunk.
fn flush(batch: &mut Option<(Vec<Part<'static>>, usize)>, out: &mut Out) {
    if let Some((parts, upto)) = batch.take() {
        out.push(chunk(parts, None, false), upto);
    }
}

/// Why a stream cut between a call's last fragment and its end is not Gemini's to send: the
/// document's closing brackets come with the call's terminator.
const CUT_BEFORE_END: &str =
    "the stream ends after a call's last fragment but before its end, which Gemini's wire cannot send apart";

/// The position of the terminal of the call announced at `k` when its fragments and terminal
/// follow its announcement with nothing between.
fn run_end(neutral: &Rendered<'_>, k: usize, block: u32) -> Option<usize> {
    let mut j = k + 1;
    while let Some(Origin::Fragment { block: b, .. }) = neutral.origins.get(j) {
        if *b != block {
            return None;
        }
        j += 1;
    }
    (neutral.origins.get(j) == Some(&Origin::CallStop { block })).then_some(j)
}

/// The closing brackets at the end of a canonical document (what the terminator writes).
fn closers(doc: &str) -> usize {
    doc.bytes().rev().take_while(|&b| b == b'}' || b == b']').count()
}

/// Whether `args` can be sent as a Gemini `args` object and read back as exactly this text.
fn sendable(turn: &Turn, args: &str) -> bool {
    turn.transport.multiline.is_empty()
        && args.starts_with('{')
        && args.ends_with('}')
        && memchr::memchr2(b'\r', b'\n', args.as_bytes()).is_none()
        && serde_json::from_str::<&RawValue>(args).is_ok()
}

/// A call's terminator form: the one the turn asks for (`WireEvents::gemini_ends`, by call
/// number), else chosen from the turn and the call so that every form is sent; the finish
/// reason only when the call's terminal is right before the stop.
fn terminator(turn: &Turn, seed: u8, ordinal: u32, before_stop: bool) -> Terminator {
    let ends = &turn.wire.gemini_ends;
    let call = ordinal.saturating_sub(1);
    let asked = match ends.get(call as usize % ends.len().max(1)) {
        Some(GeminiEnd::Empty) => 2,
        Some(GeminiEnd::LastPiece) => 1,
        Some(GeminiEnd::Finish) => 0,
        None => (seed as u32 + ordinal) % 3,
    };
    match asked {
        0 if before_stop => Terminator::Finish,
        1 => Terminator::LastPiece,
        _ => Terminator::Empty,
    }
}

/// A provider-looking thought signature, different for each turn and call.
fn signature(seed: u8, ordinal: u32) -> String {
    format!("CiQB0e2Kb{seed:02x}{ordinal:04x}sig")
}

// ---------------------------------------------------------------------------------------
// Decoding.

/// Maps Gemini chunks back to neutral events, either profile alike.
#[derive(Default)]
pub struct GeminiDecoder {
    /// Calls announced so far (the next call's ordinal).
    calls: u32,
    /// The call whose pieces are still coming, and its writer.
    live: Option<(u32, Writer)>,
    /// The thought signature of each call announced, bound to it (what a client sends back
    /// with that call); kept for the call, never joined with another's.
    signatures: Vec<(u32, String)>,
    scratch: String,
}

impl GeminiDecoder {
    pub fn new() -> GeminiDecoder {
        GeminiDecoder::default()
    }

    /// The thought signature bound to the call of this ordinal, if its part carried one.
    pub fn signature_of(&self, ordinal: u32) -> Option<&str> {
        self.signatures.iter().find(|(o, _)| *o == ordinal).map(|(_, s)| s.as_str())
    }

    fn decode_chunk(&mut self, event: &SseEvent, out: &mut Decoded<'static>) -> Result<(), TurnError> {
        let data = event.data.trim();
        if data.is_empty() {
            return Ok(());
        }
        let chunk: Chunk<'_> = serde_json::from_str(data)
            .map_err(|e| malformed(format!("a Gemini chunk that is not a GenerateContentResponse: {e}")))?;
        if let Some(e) = chunk.error {
            out.push(Event::Error { message: Cow::Owned(e.message.into_owned()) });
            return Ok(());
        }
        let Some(cand) = chunk.candidates.into_iter().next() else {
            out.push(Event::Ping);
            return Ok(());
        };
        let parts = cand.content.map(|c| c.parts).unwrap_or_default();
        let had_parts = !parts.is_empty();
        for part in parts {
            if let Some(fc) = part.function_call {
                self.call(fc, part.thought_signature, out)?;
            } else if let Some(text) = part.text {
                if !part.thought && !text.is_empty() {
                    out.push(Event::TextDelta { text: Cow::Owned(text.into_owned()) });
                }
            }
        }
        match cand.finish_reason {
            Some(word) => {
                // The end of the candidate ends a live call.
                self.end_live(out);
                out.push(Event::Stop { reason: reason(&word) });
            }
            None if !had_parts => out.push(Event::Ping),
            None => {}
        }
        Ok(())
    }

    fn call(
        &mut self,
        fc: FunctionCall<'_>,
        signature: Option<Cow<'_, str>>,
        out: &mut Decoded<'static>,
    ) -> Result<(), TurnError> {
        if let Some(name) = fc.name.filter(|n| !n.is_empty()) {
            // A new call: one still live ended where its pieces did.
            self.end_live(out);
            let ordinal = self.calls;
            self.calls += 1;
            let call_id = match fc.id.filter(|i| !i.is_empty()) {
                Some(id) => id.into_owned(),
                None => assigned_id(ordinal),
            };
            if let Some(s) = signature {
                self.signatures.push((ordinal, s.into_owned()));
            }
            out.push(Event::CallStart {
                index: ordinal,
                call_id: Cow::Owned(call_id),
                name: Cow::Owned(name.into_owned()),
            });
            if let Some(args) = fc.args {
                if !args.get().starts_with('{') {
                    return Err(malformed(format!(
                        "a functionCall whose args is not an object: {}",
                        args.get()
                    )));
                }
                out.push(Event::ArgsDelta { index: ordinal, fragment: Cow::Owned(args.get().to_owned()) });
            }
            self.live = Some((ordinal, Writer::default()));
            self.pieces(&fc.partial_args, out)?;
            if !fc.will_continue {
                self.end_live(out);
            }
            return Ok(());
        }
        if self.live.is_none() {
            // A piece for no call: the call it continues ended, or none was announced (the
            // core's fragment after stop, or unannounced index).
            if fc.partial_args.is_empty() && fc.args.is_none() {
                return Ok(());
            }
            let index = self.calls.saturating_sub(1);
            self.scratch.clear();
            let mut w = Writer::default();
            for arg in &fc.partial_args {
                let (path, piece) = read_piece(arg)?;
                let _ = w.piece(&path, piece, &mut self.scratch);
            }
            out.push(Event::ArgsDelta { index, fragment: Cow::Owned(std::mem::take(&mut self.scratch)) });
            return Ok(());
        }
        self.pieces(&fc.partial_args, out)?;
        if !fc.will_continue {
            self.end_live(out);
        }
        Ok(())
    }

    fn pieces(&mut self, args: &[PartialArg<'_>], out: &mut Decoded<'static>) -> Result<(), TurnError> {
        let Some((index, writer)) = self.live.as_mut() else { return Ok(()) };
        if args.is_empty() {
            return Ok(());
        }
        let mut text = String::new();
        for arg in args {
            let (path, piece) = read_piece(arg)?;
            writer.piece(&path, piece, &mut text).map_err(|e| malformed(format!("partialArgs: {e}")))?;
        }
        if !text.is_empty() {
            out.push(Event::ArgsDelta { index: *index, fragment: Cow::Owned(text) });
        }
        Ok(())
    }

    fn end_live(&mut self, out: &mut Decoded<'static>) {
        if let Some((index, mut writer)) = self.live.take() {
            let mut text = String::new();
            writer.end(&mut text);
            if !text.is_empty() {
                out.push(Event::ArgsDelta { index, fragment: Cow::Owned(text) });
            }
            out.push(Event::CallStop { index, arguments: None });
        }
    }
}

/// One `partialArgs` entry as a path and a typed value.
fn read_piece<'a>(arg: &'a PartialArg<'_>) -> Result<(Vec<Seg>, Piece<'a>), TurnError> {
    let path = path::parse_path(&arg.json_path).map_err(|e| malformed(format!("partialArgs: {e}")))?;
    let piece = if let Some(s) = &arg.string_value {
        let lit = s.get();
        match lit.strip_prefix('"').and_then(|l| l.strip_suffix('"')) {
            Some(raw) if lit.len() >= 2 => Piece::Str { raw, last: !arg.will_continue },
            _ => return Err(malformed(format!("partialArgs: a stringValue that is not a string: {lit}"))),
        }
    } else if let Some(n) = &arg.number_value {
        let lit = n.get();
        if !lit.starts_with(|c: char| c == '-' || c.is_ascii_digit()) {
            return Err(malformed(format!("partialArgs: a numberValue that is not a number: {lit}")));
        }
        Piece::Scalar(lit)
    } else if let Some(b) = arg.bool_value {
        Piece::Scalar(if b { "true" } else { "false" })
    } else if arg.null_value.is_some() {
        Piece::Scalar("null")
    } else {
        return Err(malformed(format!("partialArgs: an entry at `{}` with no value", arg.json_path)));
    };
    Ok((path, piece))
}

/// A finish reason's meaning, in the words this dialect gives back.
fn reason(word: &str) -> StopReason {
    match word {
        "STOP" => StopReason::Stop,
        "MAX_TOKENS" => StopReason::MaxTokens,
        "PROHIBITED_CONTENT" | "BLOCKLIST" | "SPII" => StopReason::Refusal,
        // SAFETY, RECITATION, IMAGE_SAFETY, LANGUAGE, MALFORMED_FUNCTION_CALL, OTHER, ...: the
        // output was cut short by the server's own check.
        _ => StopReason::ContentFilter,
    }
}

impl crate::SseDecoder for GeminiDecoder {
    fn decode<'m>(
        &mut self,
        event: &'m SseEvent,
        _scratch: &'m mut Vec<u8>,
        out: &mut Decoded<'m>,
    ) -> Result<(), TurnError> {
        let mut owned = Decoded::new();
        let r = self.decode_chunk(event, &mut owned);
        for e in owned {
            out.push(e);
        }
        r
    }
}

fn malformed(detail: String) -> TurnError {
    TurnError::new(ErrorClass::Malformed, detail)
}

// ---------------------------------------------------------------------------------------
// Lowering: a turn's calls in the form the wire carries.

/// `turn`'s calls written as Vertex's pieces write them ([`path::canonical`]), each split
/// point moved to the first place at or after its proportional position where a piece can
/// end (so the count of fragments, and every position counted in neutral events, stays).
/// `Err`: a document no Gemini call can carry.
fn canonical_calls(mut turn: Turn) -> Result<Turn, String> {
    for b in &mut turn.blocks {
        let Block::Call(call) = b else { continue };
        canonical_call(call)?;
    }
    Ok(turn)
}

fn canonical_call(call: &mut Call) -> Result<(), String> {
    // No bytes stay no bytes; whitespace alone is no document (unparseable), not Gemini's.
    let c = if call.arguments.is_empty() {
        path::Canonical { text: String::new(), cuts: vec![0] }
    } else {
        path::canonical(&call.arguments).map_err(|e| {
            format!("gemini has no argument text, only a JSON object of typed values: this case's document cannot be one ({e})")
        })?
    };
    let old = call.arguments.len().max(1);
    let new = c.text.len();
    let splits = toolcert_scenario::normalized_splits(&call.arguments, &call.splits);
    call.splits = splits
        .iter()
        .map(|&s| {
            let aim = (s as u128 * new as u128 / old as u128) as usize;
            c.cuts.iter().copied().find(|&p| p >= aim).unwrap_or(new)
        })
        .collect();
    call.arguments = c.text;
    Ok(())
}

/// An abandoned or errored turn cut where Gemini cannot cut, cut where it can: inside a
/// call (its announcement delivered, its terminal not), before that announcement when calls
/// are `whole`; otherwise, after a call's last fragment (whose closing brackets come with the
/// terminator), before that fragment.
fn cut_where_gemini_can(turn: &mut Turn, whole: bool) {
    use toolcert_scenario::Ending;
    let (Ending::Abandoned { after, .. } | Ending::Errored { after, .. }) = turn.ending else { return };
    let full = {
        let mut whole = turn.clone();
        whole.ending = Ending::Abandoned { after: u32::MAX, end: toolcert_scenario::StreamEnd::Eof };
        toolcert_render::render(&whole).origins
    };
    let cut = (after as usize).min(full.len());
    let open = full[..cut].iter().enumerate().fold(None, |open, (k, o)| match o {
        Origin::Announce { .. } => Some(k),
        Origin::CallStop { .. } => None,
        _ => open,
    });
    let Some(announce) = open else { return };
    let mut moved = cut;
    if whole {
        moved = announce;
    } else {
        let len = |block: u32| match turn.blocks.get(block as usize) {
            Some(Block::Call(c)) => c.arguments.len() as u32,
            _ => 0,
        };
        while moved > announce + 1
            && matches!(full[moved - 1], Origin::Fragment { block, end, .. } if end == len(block) && end > 0)
        {
            moved -= 1;
        }
    }
    if let Ending::Abandoned { after, .. } | Ending::Errored { after, .. } = &mut turn.ending {
        *after = moved as u32;
    }
}

// ---------------------------------------------------------------------------------------
// The registry entry.

/// Google Gemini in the [`mod@crate::registry`].
pub struct Gemini;

impl crate::DialectDef for Gemini {
    fn id(&self) -> Dialect {
        Dialect::Gemini
    }

    /// Calls come one at a time, each ended before the next: the per-call shape.
    fn carries(&self, shape: &Shape) -> bool {
        matches!(shape, Shape::PerCall)
    }

    fn speaks_foreign(&self, _kind: ForeignKind) -> bool {
        false
    }

    fn stop_reasons(&self) -> &'static [StopReason] {
        use StopReason::*;
        &[Stop, MaxTokens, ContentFilter, Refusal]
    }

    /// `STOP` ends an answer, a turn of calls and a stop sequence alike.
    fn word(&self, meaning: StopMeaning) -> StopReason {
        match meaning {
            StopMeaning::Complete | StopMeaning::ToolUse | StopMeaning::StopSequence => StopReason::Stop,
            StopMeaning::Truncated => StopReason::MaxTokens,
            StopMeaning::Refused => StopReason::Refusal,
            StopMeaning::Filtered => StopReason::ContentFilter,
        }
    }

    fn spell(&self, reason: StopReason) -> &'static str {
        match reason {
            StopReason::Stop => "STOP",
            StopReason::MaxTokens => "MAX_TOKENS",
            StopReason::Refusal => "PROHIBITED_CONTENT",
            StopReason::ContentFilter => "SAFETY",
            other => other.wire_name(),
        }
    }

    fn quirk_profiles(&self) -> &'static [Quirks] {
        static PROFILES: std::sync::OnceLock<Vec<Quirks>> = std::sync::OnceLock::new();
        crate::registry::profiles_of(Dialect::Gemini, &PROFILES)
    }

    fn render(
        &self,
        turn: &Turn,
        neutral: &Rendered<'_>,
        quirks: Quirks,
        ids: &Ids,
    ) -> Result<WireStream, String> {
        Ok(render(turn, neutral, quirks, ids)?.into())
    }

    /// The wire stream's bytes (the chunks are small; nothing to gain framing as rendered).
    fn render_bytes_direct(
        &self,
        turn: &Turn,
        neutral: &Rendered<'_>,
        quirks: Quirks,
        _ids: &Ids,
    ) -> Option<crate::BytesStream> {
        let wire = crate::render_wire(turn, neutral, Dialect::Gemini, quirks).ok()?;
        Some(crate::render_bytes(Dialect::Gemini, &wire, &turn.transport))
    }

    fn decoder(&self, _quirks: Quirks) -> Box<dyn crate::WireDecoder> {
        Box::new(crate::OverSse::new(GeminiDecoder::new()))
    }

    fn detects(&self, message: &WireMessage) -> bool {
        message.as_sse().and_then(crate::json::detect_one) == Some(Dialect::Gemini)
    }

    /// A `GenerateContentResponse`: `candidates`, `usageMetadata` or `promptFeedback`.
    fn shows_in_data(&self, event: &SseEvent) -> bool {
        #[derive(Deserialize)]
        struct Shape {
            #[serde(default)]
            candidates: Option<serde::de::IgnoredAny>,
            #[serde(rename = "usageMetadata", default)]
            usage: Option<serde::de::IgnoredAny>,
            #[serde(rename = "promptFeedback", default)]
            feedback: Option<serde::de::IgnoredAny>,
        }
        event.event.is_none()
            && serde_json::from_str::<Shape>(&event.data)
                .is_ok_and(|s| s.candidates.is_some() || s.usage.is_some() || s.feedback.is_some())
    }

    /// One model's path; any model id is served (`serves`).
    fn endpoint(&self) -> &'static str {
        "/v1beta/models/toolcert-mock:streamGenerateContent"
    }

    fn serves(&self, path: &str) -> bool {
        let model =
            path.strip_prefix("/v1beta/models/").and_then(|p| p.strip_suffix(":streamGenerateContent"));
        model.is_some_and(|m| !m.is_empty() && !m.contains('/'))
    }

    fn sdk_base_url(&self, base: &str) -> String {
        format!("{base}      (Google Gen AI SDKs' base URL, any model id, `alt=sse`)")
    }

    /// Gemini's calls carry no index, and no event of its stream repeats an announcement or
    /// sends a piece for a call by its key: the faults are other dialects'.
    fn fault_lacked(&self, kind: &FaultKind) -> Option<&'static str> {
        Some(match kind {
            FaultKind::ReplayAnnouncement { .. } => "call index (a call's announcement cannot be replayed)",
            FaultKind::UnannouncedFragment { .. } => "call index (a piece names no call)",
            FaultKind::FragmentAfterStop { .. } => "call index (a piece after a call's end names no call)",
            _ => "such fault",
        })
    }

    /// The lowering every dialect does, then each call written as the pieces write it.
    fn lower_turn(&self, turn: &Turn) -> Result<Turn, String> {
        let low = canonical_calls(crate::lower::lower_turn(self, turn)?)?;
        // Vertex's pieces send what any profile can; a cut they cannot send is no Gemini
        // stream (a call's closing brackets come with its terminator only).
        let pieces = Quirks { gemini_partial_args: true, ..Quirks::PLAIN };
        crate::render_wire(&low, &toolcert_render::render(&low), Dialect::Gemini, pieces)
            .map_err(|e| format!("gemini has no way to send this stream ({})", e.reason))?;
        Ok(low)
    }

    /// A string piece, or a whole call's `args`, retyped as a number.
    fn wrong_typed(&self, event: &serde_json::Value) -> Option<serde_json::Value> {
        let mut copy = event.clone();
        let call = copy.pointer_mut("/candidates/0/content/parts/0/functionCall")?;
        if let Some(args) = call.get_mut("args").filter(|a| a.as_object().is_some_and(|o| !o.is_empty())) {
            *args = serde_json::json!(42);
            return Some(copy);
        }
        let piece = call.pointer_mut("/partialArgs/0/stringValue")?;
        crate::defect::nonempty(piece).then_some(())?;
        *piece = serde_json::json!(42);
        Some(copy)
    }

    /// The terminators a turn asks for.
    fn reads(&self, wire: &toolcert_scenario::WireEvents) -> bool {
        !wire.gemini_ends.is_empty()
    }

    /// Documents as the pieces write them; in the whole-call profile, a cut inside a call
    /// moved before its announcement (the server had sent nothing of a call it never
    /// finished).
    fn shape_turn(&self, turn: &Turn, quirks: Quirks) -> Option<Turn> {
        let mut shaped = canonical_calls(turn.clone()).unwrap_or_else(|_| turn.clone());
        cut_where_gemini_can(&mut shaped, !quirks.gemini_partial_args);
        (shaped != *turn).then_some(shaped)
    }
}

#[cfg(test)]
mod tests;
