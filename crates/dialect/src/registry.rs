//! The registry: every dialect toolcert speaks, each defined in one module of this crate.
//!
//! A [`DialectDef`] is everything about one provider's streaming API: its name, what it can
//! express (shapes, foreign blocks, quirk profiles, a terminal that repeats the arguments),
//! how it spells each stop reason, its wire messages (rendered from a turn's neutral stream
//! and decoded back), its framing at the bytes level (SSE, or a binary framing of its own),
//! how a recording of it is recognised, the mock provider's endpoint for it, its corpus
//! directory and its fuzz selectors. Everything above this crate (the runner, the fuzz
//! helpers, the mock provider, the subprocess protocol, the corpus and the CLI) iterates
//! [`registry`] or asks [`def`], and never matches on a dialect's name.
//!
//! # Adding a dialect
//!
//! 1. Add its id to [`toolcert_scenario::Dialect`] (a variant, its `name`, and its entry in
//!    `Dialect::ALL`, all at the end): the id is what cases, reports and the command line
//!    carry, so it lives in the vocabulary crate.
//! 2. Write one module `crates/dialect/src/<dialect>.rs` with its wire types (one set, used
//!    to render and, leniently, to decode), its renderer, its decoder and a unit struct that
//!    implements [`DialectDef`] (override the framing methods if it is not SSE: its bytes
//!    are then whatever [`DialectDef::render_bytes`] makes and [`DialectDef::deframer`]
//!    reads back into [`WireMessage::Frame`]s).
//! 3. Add one line to [`REGISTRY`] below.
//!
//! Its corpus files go under `corpus/<corpus_dir>/` (`toolcert corpus write`).

use toolcert_render::Rendered;
use toolcert_scenario::{
    Corrupt, Dialect, FaultKind, ForeignKind, Quirks, Shape, StopMeaning, StopReason, StreamEnd, Transport,
    Turn, WireEvents,
};
use toolcert_subject::{ErrorClass, TurnError, WireMessage};

use crate::json::Ids;
use crate::{BytesStream, WireDecoder, WireStream};

/// Everything about one dialect. Implemented by one unit struct per dialect module.
pub trait DialectDef: Sync {
    /// Its id in cases, reports and on the command line.
    fn id(&self) -> Dialect;

    /// Its name (`anthropic`, `openai-chat`, ...).
    fn name(&self) -> &'static str {
        self.id().name()
    }

    /// Whether it can carry a turn of this shape (a dialect with a per-call terminal has only
    /// the per-call shape; one without, only the interleaved shape).
    fn carries(&self, shape: &Shape) -> bool;

    /// Whether it has this kind of foreign block.
    fn speaks_foreign(&self, kind: ForeignKind) -> bool;

    /// Its own stop reasons: the words its decoder reads and gives back.
    fn stop_reasons(&self) -> &'static [StopReason];

    /// Its word for a meaning (a dialect with fewer words than meanings says several with
    /// one: Chat's `stop` is both a finished answer and a stop sequence).
    fn word(&self, meaning: StopMeaning) -> StopReason;

    /// The reason it sends for `reason`: the same reason when it is one of its own,
    /// otherwise its word for the reason's meaning. Its decoder gives back this one.
    fn stop_reason(&self, reason: StopReason) -> StopReason {
        if self.stop_reasons().contains(&reason) {
            reason
        } else {
            self.word(reason.meaning())
        }
    }

    /// The quirk profiles it is spoken in, the plain one first; a run over all settings
    /// certifies each.
    fn quirk_profiles(&self) -> &'static [Quirks] {
        &[Quirks::PLAIN]
    }

    /// Whether a call's terminal repeats the whole argument string (Responses' `done`).
    fn repeats_arguments(&self) -> bool {
        false
    }

    /// Its wire messages for an already-rendered neutral stream that [`crate::render_wire`]
    /// has checked it can express; `Err` says why it cannot after all.
    fn render(
        &self,
        turn: &Turn,
        neutral: &Rendered<'_>,
        quirks: Quirks,
        ids: &Ids,
    ) -> Result<WireStream, String>;

    /// A fresh decoder for one stream.
    fn decoder(&self, quirks: Quirks) -> Box<dyn WireDecoder>;

    /// Whether one recorded message shows this dialect (`false` when it says nothing, as a
    /// `ping` or an `error` does).
    fn detects(&self, message: &WireMessage) -> bool;

    /// For an SSE dialect: whether an event name (or the `type` of an event's data) is one of
    /// its events ([`DialectDef::detects`] of the SSE dialects, `json.rs`).
    fn names_event(&self, _name: &str) -> bool {
        false
    }

    /// For an SSE dialect whose events are unnamed: whether an event's data shows it (OpenAI
    /// Chat's chunks and `[DONE]`); asked when no dialect names the event.
    fn shows_in_data(&self, _event: &toolcert_sse::SseEvent) -> bool {
        false
    }

    /// The bytes level of `turn` framed as its events are rendered, with no wire stream in
    /// between, when the dialect can (`None`: [`DialectDef::render`], then
    /// [`DialectDef::render_bytes`]); the same bytes, cuts and counts as those two give.
    fn render_bytes_direct(
        &self,
        _turn: &Turn,
        _neutral: &Rendered<'_>,
        _quirks: Quirks,
        _ids: &Ids,
    ) -> Option<BytesStream> {
        None
    }

    /// The bytes of a wire stream, framed and cut into transport chunks as `transport` says.
    fn render_bytes(&self, wire: &WireStream, transport: &Transport) -> BytesStream {
        crate::bytes::render_sse_bytes(wire, transport)
    }

    /// A fresh reader of its framing: transport chunks back into wire messages.
    fn deframer(&self) -> Box<dyn Deframer> {
        Box::new(SseDeframer::default())
    }

    /// For a binary framing: one wire message framed alone (`None` for SSE, whose events
    /// `toolcert_sse` frames together, and for a message that is not its own).
    fn message_bytes(&self, _message: &WireMessage) -> Option<Vec<u8>> {
        None
    }

    /// The `content-type` of its streamed response body.
    fn content_type(&self) -> &'static str {
        "text/event-stream"
    }

    /// The base URL its SDKs take for the mock provider at `base`, and where they take it
    /// (what `toolcert serve` prints).
    fn sdk_base_url(&self, base: &str) -> String {
        format!("{base}/v1   (OpenAI SDKs, OPENAI_BASE_URL)")
    }

    /// The mock provider's request path for it (`/v1/messages`).
    fn endpoint(&self) -> &'static str;

    /// Whether the mock provider serves it at `path` (for a path with parameters, such as a
    /// model id, more than [`DialectDef::endpoint`] itself).
    fn serves(&self, path: &str) -> bool {
        path == self.endpoint()
    }

    /// Its directory under `corpus/`.
    fn corpus_dir(&self) -> &'static str {
        self.name()
    }

    /// How it spells one of its own reasons ([`DialectDef::stop_reason`]) on the wire:
    /// [`StopReason::wire_name`], unless it has its own word (Bedrock's
    /// `guardrail_intervened`).
    fn spell(&self, reason: StopReason) -> &'static str {
        reason.wire_name()
    }

    /// Whether its framing is binary (length-prefixed, checksummed messages) rather than
    /// SSE: its recorded streams are `.eventstream` files, it has no keep-alives, and its
    /// generated bytes-level turns may carry a damaged message ([`DialectDef::damaged_before`]).
    fn binary(&self) -> bool {
        false
    }

    /// For a framing with checksums: how many neutral events are complete before the message
    /// `corrupt` damages in `wire` (where the oracle places that fault, docs/SPEC.md
    /// BYTES-CHECKSUM). `None`: it has no checksums, and no damaged message is sent.
    fn damaged_before(&self, _wire: &WireStream, _corrupt: Corrupt) -> Option<u32> {
        None
    }

    /// The wire rules (invariant ids, `WIRE-*`) a turn exercises in this dialect, beyond
    /// the keep-alives and the bytes rules every dialect shares; `neutral` is the turn's
    /// delivered neutral stream.
    fn exercised(&self, _turn: &Turn, _neutral: &Rendered<'_>, _add: &mut dyn FnMut(&'static str)) {}

    /// Its level attribution: the features of its wire stream, in the order they are tried,
    /// each with the rule a failure is relabelled with when the case passes without it.
    fn attribution(&self) -> &'static [Attribution] {
        &[]
    }

    /// The rule a protocol violation of a turn with a `DoneMismatch` fault is relabelled
    /// with (Responses: the contradiction is in its own `done` events, `WIRE-DONE`).
    fn done_mismatch_rule(&self) -> Option<&'static str> {
        None
    }

    /// A turn written in either shape (a named case's, a corpus case's) lowered to what this
    /// dialect sends for it, keeping its meaning (`crate::lower`): the turn itself when the
    /// dialect carries its shape; a per-call turn as interleaved chunks, its calls one after
    /// another, where the finish reason is every call's terminal; an interleaved turn whose
    /// blocks come one after another as per-call blocks. Every position the scenario counts in
    /// neutral events moves so that the same blocks, fragments, faults and pings are delivered
    /// before it. `Err` names what the dialect's wire lacks to carry the case's meaning
    /// (`openai-chat has no per-call terminal: ...`): the case is skipped there. The
    /// certification (below the events level) and the corpus both lower named cases here.
    fn lower_turn(&self, turn: &Turn) -> Result<Turn, String> {
        crate::lower::lower_turn(self, turn)
    }

    /// A turn as this dialect's wire carries it in the server profile of `quirks`, when
    /// that differs from the turn (`None`: the turn itself). Gemini sends a call's arguments
    /// as typed values, so its documents are written as its pieces write them back, and its
    /// whole-call profile cannot cut a stream inside a call ([`crate::gemini`]). The runner
    /// checks, judges and keeps the shaped turn below the events level; a turn it cannot
    /// shape is left as it is, and the renderer refuses it.
    fn shape_turn(&self, _turn: &Turn, _quirks: Quirks) -> Option<Turn> {
        None
    }

    /// Why its wire cannot carry a fault of this kind, as what it has no (`replayed
    /// announcement: ...`), when it cannot (`None`: it can). OpenAI Chat reads every entry by
    /// one rule (docs/SPEC.md §3), under which some faults of the other dialects are no fault.
    fn fault_lacked(&self, _kind: &FaultKind) -> Option<&'static str> {
        None
    }

    /// For the corpus' wire defects (`NotJson`, `WrongType`): a copy of one of its rendered
    /// events (its JSON) that carries a non-empty argument fragment, with the fragment the
    /// number 42; `None` for any other event (and for a dialect without such events).
    fn wrong_typed(&self, _event: &serde_json::Value) -> Option<serde_json::Value> {
        None
    }

    /// For the `NamelessNewId` wire defect, when it has one (OpenAI Chat): what makes the copy
    /// of an event announcing a call that carries a new id and no name at the same index.
    fn nameless_new_id(&self) -> Option<fn(&serde_json::Value) -> Option<serde_json::Value>> {
        None
    }

    /// For a spliced second generation ([`WireEvents::spliced`]): the copy of the stream's
    /// first message that starts another message, when that message is the dialect's start
    /// event (`message_start`, `response.created`, Bedrock's `messageStart`); `None` for a
    /// dialect without one.
    fn second_generation(&self, _first: &WireMessage) -> Option<WireMessage> {
        None
    }

    /// Whether it reads any of a turn's dialect events ([`WireEvents`]: each option is read
    /// only by the dialect it names). A case carrying dialect events runs, and is written to
    /// the corpus, only in the dialects that read them.
    fn reads(&self, _wire: &WireEvents) -> bool {
        false
    }
}

/// One wire feature of a dialect for level attribution: when a case fails with it and
/// passes once `strip` removes it, the failure is relabelled with `rule`.
pub struct Attribution {
    /// The invariant id (`WIRE-UNKNOWN`).
    pub rule: &'static str,
    /// Whether a turn has the feature.
    pub has: fn(&Turn) -> bool,
    /// The smallest change that removes it.
    pub strip: fn(&mut Turn),
    /// What the relabelled violation says (`passes without ...`).
    pub why: &'static str,
}

impl Attribution {
    /// WIRE-UNKNOWN, for a dialect whose turns carry units of unknown types (`wire.unknown`).
    pub(crate) const fn unknown_units(why: &'static str) -> Attribution {
        Attribution { rule: "WIRE-UNKNOWN", has: has_unknown_units, strip: strip_unknown_units, why }
    }
}

fn has_unknown_units(t: &Turn) -> bool {
    !t.wire.unknown.is_empty()
}

fn strip_unknown_units(t: &mut Turn) {
    t.wire.unknown.clear()
}

/// [`DialectDef::exercised`] of a dialect whose only wire rule of its own is WIRE-UNKNOWN.
pub(crate) fn unknown_units_exercised(turn: &Turn, add: &mut dyn FnMut(&'static str)) {
    if has_unknown_units(turn) {
        add("WIRE-UNKNOWN");
    }
}

/// The quirks of `dialect`'s server profiles ([`toolcert_scenario::PROFILES`], its provider's
/// own first), kept in `cell`: a dialect whose renderer sends every profile's shapes takes
/// its [`DialectDef::quirk_profiles`] from here, so a profile added to the table is certified.
pub(crate) fn profiles_of(
    dialect: Dialect,
    cell: &'static std::sync::OnceLock<Vec<Quirks>>,
) -> &'static [Quirks] {
    cell.get_or_init(|| dialect.profiles().map(|p| p.quirks).collect())
}

/// Every dialect, in [`Dialect::ALL`] order. Adding a dialect adds one line here.
pub static REGISTRY: &[&dyn DialectDef] = &[
    &crate::anthropic::Anthropic,
    &crate::chat::OpenAiChat,
    &crate::responses::OpenAiResponses,
    &crate::bedrock::Bedrock,
    &crate::gemini::Gemini,
];

/// Every dialect.
pub fn registry() -> &'static [&'static dyn DialectDef] {
    REGISTRY
}

/// The definition of `dialect`.
pub fn def(dialect: Dialect) -> &'static dyn DialectDef {
    REGISTRY.iter().copied().find(|d| d.id() == dialect).expect("every Dialect has a registry entry")
}

/// Every (dialect, quirk profile) a wire or bytes level is certified in, in registry order:
/// the fuzz selectors and a run's settings.
pub fn speeches() -> impl Iterator<Item = (Dialect, Quirks)> {
    REGISTRY.iter().flat_map(|d| d.quirk_profiles().iter().map(move |&q| (d.id(), q)))
}

/// Reads one stream's bytes, in transport chunks cut anywhere, back into wire messages.
pub trait Deframer {
    /// Appends the messages `chunk` completes. Messages completed before a framing error are
    /// still appended; the error is `ErrorClass::Malformed`, and the same in every chunking.
    fn feed(&mut self, chunk: &[u8], out: &mut Vec<WireMessage>) -> Result<(), TurnError>;

    /// The stream ended as `end` says: appends what the end completes. A message cut by a
    /// dropped connection is the drop's doing (no error unless `end` is a clean end).
    fn finish(&mut self, end: StreamEnd, out: &mut Vec<WireMessage>) -> Result<(), TurnError>;

    /// What [`Deframer::feed`] does, with each message handed to `each` as it is completed
    /// instead of collected: stops at the first error of `each`, which is returned. A
    /// framing that can (SSE) reuses one message's buffers for the next, so a stream cut into
    /// many small chunks costs no allocation and no move per message.
    fn feed_each(
        &mut self,
        chunk: &[u8],
        each: &mut dyn FnMut(&WireMessage) -> Result<(), TurnError>,
    ) -> Result<(), TurnError> {
        let mut out = Vec::new();
        let fed = self.feed(chunk, &mut out);
        for m in &out {
            each(m)?;
        }
        fed
    }
}

/// The SSE framing's reader: `toolcert-sse`'s incremental decoder.
pub struct SseDeframer {
    sse: toolcert_sse::Decoder,
    events: Vec<toolcert_sse::SseEvent>,
    /// The message [`Deframer::feed_each`] hands out, refilled in place for each event.
    message: WireMessage,
}

impl Default for SseDeframer {
    fn default() -> Self {
        SseDeframer {
            sse: toolcert_sse::Decoder::new(),
            events: Vec::new(),
            message: WireMessage::Sse(toolcert_sse::SseEvent::default()),
        }
    }
}

impl SseDeframer {
    /// [`Deframer::feed_each`] with a callback the compiler sees (a caller that holds the
    /// deframer itself, rather than as a `dyn Deframer`, has the chunk that only extends a
    /// line, most chunks of a stream cut every few bytes, read inline).
    #[inline(always)]
    pub fn feed_with<F: FnMut(&WireMessage) -> Result<(), TurnError>>(
        &mut self,
        chunk: &[u8],
        each: &mut F,
    ) -> Result<(), TurnError> {
        let WireMessage::Sse(event) = &mut self.message else { unreachable!("always an SSE event") };
        let mut pos = 0;
        match self.sse.pull(chunk, &mut pos, event) {
            // The commonest chunk of a stream cut every few bytes: part of a line.
            Ok(false) => Ok(()),
            first => self.feed_rest(first, chunk, pos, each),
        }
    }

    /// The rest of [`SseDeframer::feed_with`] once a chunk has done more than extend a line.
    #[inline(never)]
    fn feed_rest<F: FnMut(&WireMessage) -> Result<(), TurnError>>(
        &mut self,
        mut pulled: Result<bool, toolcert_sse::SseError>,
        chunk: &[u8],
        mut pos: usize,
        each: &mut F,
    ) -> Result<(), TurnError> {
        loop {
            match pulled {
                Ok(true) => each(&self.message)?,
                Ok(false) => return Ok(()),
                Err(e) => return Err(malformed(e)),
            }
            let WireMessage::Sse(event) = &mut self.message else { unreachable!("always an SSE event") };
            pulled = self.sse.pull(chunk, &mut pos, event);
        }
    }
}

fn malformed(e: toolcert_sse::SseError) -> TurnError {
    TurnError::new(ErrorClass::Malformed, e.to_string())
}

impl Deframer for SseDeframer {
    fn feed_each(
        &mut self,
        chunk: &[u8],
        each: &mut dyn FnMut(&WireMessage) -> Result<(), TurnError>,
    ) -> Result<(), TurnError> {
        self.feed_with(chunk, &mut { each })
    }

    fn feed(&mut self, chunk: &[u8], out: &mut Vec<WireMessage>) -> Result<(), TurnError> {
        self.events.clear();
        let fed = self.sse.feed(chunk, &mut self.events);
        // Most transport chunks complete no event: nothing to move.
        if !self.events.is_empty() {
            out.extend(self.events.drain(..).map(WireMessage::Sse));
        }
        fed.map_err(malformed)
    }

    fn finish(&mut self, end: StreamEnd, out: &mut Vec<WireMessage>) -> Result<(), TurnError> {
        self.events.clear();
        let closed = self.sse.finish(&mut self.events);
        out.extend(self.events.drain(..).map(WireMessage::Sse));
        match (closed, end) {
            (Err(e), StreamEnd::Eof) => Err(malformed(e)),
            _ => Ok(()),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A dialect sends a reason of the same meaning class (complete, tool use, stop sequence
    /// stay untruncated; truncating stays truncating), always one of its own words, and its
    /// own words unchanged.
    #[test]
    fn each_dialect_spells_every_reason_with_one_of_its_own_words_of_the_same_meaning() {
        for d in REGISTRY {
            for reason in StopReason::ALL {
                let sent = d.stop_reason(reason);
                assert!(d.stop_reasons().contains(&sent), "{}: {reason:?} sent as {sent:?}", d.name());
                assert_eq!(
                    sent.is_truncating(),
                    reason.is_truncating(),
                    "{}: {reason:?} as {sent:?}",
                    d.name()
                );
                if d.stop_reasons().contains(&reason) {
                    assert_eq!(sent, reason, "{}: its own word {reason:?}", d.name());
                }
            }
            for meaning in StopMeaning::ALL {
                let word = d.word(meaning);
                assert_eq!(
                    word.is_truncating(),
                    meaning.is_truncating(),
                    "{}: {meaning:?} as {word:?}",
                    d.name()
                );
            }
        }
    }

    #[test]
    fn the_registry_holds_every_dialect_once_in_order() {
        let ids: Vec<Dialect> = REGISTRY.iter().map(|d| d.id()).collect();
        assert_eq!(ids, Dialect::ALL);
        for d in Dialect::ALL {
            assert_eq!(def(d).name(), d.name());
            assert_eq!(def(d).quirk_profiles()[0], Quirks::PLAIN, "{d}: the plain profile first");
        }
        let paths: std::collections::BTreeSet<&str> = REGISTRY.iter().map(|d| d.endpoint()).collect();
        assert_eq!(paths.len(), REGISTRY.len(), "one endpoint per dialect");
    }
}
