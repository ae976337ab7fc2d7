//! The mutant zoo: the harness proves itself (`docs/ZOO.md`).
//!
//! Each [`Mutant`] is a small events-level accumulator with exactly one bug from the seeds,
//! a bug real SDKs have shipped. The harness must flag every one, with one of the invariants
//! in [`Mutant::expected`]; a mutant it lets through is a hole in the generators or the
//! oracle.
//!
//! All mutants share one plain accumulator, [`Base`], written in the style of the seeds'
//! Python `Accumulator` and `finalize` (and apart from the reference accumulator). Every
//! decision it makes goes through a [`Hooks`] method whose default is correct; a mutant
//! overrides exactly one (see the `bugs` module), except the two isolation mutants, whose
//! bug is in the factory: it hands every stream the same accumulator. [`base`] is the
//! unmutated accumulator as a subject, which must conform.
//!
//! ```
//! let m = toolcert_mutants::by_name("name-keyed").expect("in the zoo");
//! assert_eq!(m.subject().name(), "builtin:mutant/name-keyed");
//! assert!(m.expected.contains(&toolcert_oracle::Invariant::AccIdentity));
//! ```

use bedrock::{BedrockFactory, Defect as BedrockDefect};
use gemini::{Defect as GeminiDefect, GeminiFactory};
use levels::{Defect, StackFactory};
use toolcert_oracle::Invariant;
use toolcert_scenario::{Dialect, Quirks};
use toolcert_subject::{Factory, Level, StreamSpec, Subject};

mod base;
mod bedrock;
mod bugs;
pub mod cost;
mod gemini;
mod levels;
mod wire_events;

pub use base::{Base, CallBuffer, Calls, Correct, Hooks, Schemas};

use bugs::*;
use Invariant::*;

/// A deliberately flawed accumulator and what must catch it.
#[derive(Clone, Copy, Debug)]
pub struct Mutant {
    /// Kebab-case; the subject is `builtin:mutant/<name>`.
    pub name: &'static str,
    /// The seed passage the bug comes from: `file heading / section`.
    pub seed: &'static str,
    /// The bug, in one line.
    pub bug: &'static str,
    /// The invariants that must catch it: a run against it must report at least one of them.
    pub expected: &'static [Invariant],
    /// Makes the factory for one case (what [`Subject::factory`] returns).
    pub factory: fn() -> Box<dyn Factory>,
    /// The level the bug lives at (and the mutant is certified at).
    pub level: Level,
    /// The dialect it is certified in, below the events level.
    pub dialect: Dialect,
    /// The quirk profile it is certified in (a server behaviour the bug needs to show).
    pub quirks: Quirks,
}

impl Mutant {
    /// The mutant as a subject named `builtin:mutant/<name>`.
    pub fn subject(&self) -> Box<dyn Subject> {
        Box::new(MutantSubject {
            name: format!("builtin:mutant/{}", self.name),
            factory: self.factory,
            level: self.level,
        })
    }
}

struct MutantSubject {
    name: String,
    factory: fn() -> Box<dyn Factory>,
    level: Level,
}

impl Subject for MutantSubject {
    fn name(&self) -> String {
        self.name.clone()
    }
    fn factory(&self) -> Box<dyn Factory> {
        (self.factory)()
    }
    fn levels(&self) -> Vec<Level> {
        vec![self.level]
    }
}

/// A factory making one fresh `Base<H>` per stream.
fn per_stream<H: Hooks>() -> Box<dyn Factory> {
    Box::new(|spec: &StreamSpec<'_>| Base::<H>::new(spec))
}

/// The unmutated base accumulator as a subject, `builtin:mutant-base`: every mutant is it with
/// one hook overridden, so it must conform wherever they must not.
pub fn base() -> Box<dyn Subject> {
    Box::new(MutantSubject {
        name: "builtin:mutant-base".into(),
        factory: per_stream::<Correct>,
        level: Level::Events,
    })
}

const KEYING_DOCS: &str = "000 Keying the argument accumulator / Where the two documents go";
const KEYING_KEY: &str = "000 Keying the argument accumulator / The key the stream already gave you";
const KEYING_PER_STREAM: &str = "000 Keying the argument accumulator / One accumulator per stream";
const KEYING_OOO: &str = "000 Keying the argument accumulator / Opaque, ordered, owned";
const KEYING_SEVEN: &str = "000 Keying the argument accumulator / Why a name key survives seven months";
const DELTAS_CALL: &str = "002 Argument deltas and text deltas / What the stream says about a call";
const DELTAS_CONCAT: &str = "002 Argument deltas and text deltas / Concatenate, and do nothing else";
const DELTAS_TEXT: &str = "002 Argument deltas and text deltas / Two properties a text delta does not have";
const DELTAS_SURFACE: &str =
    "002 Argument deltas and text deltas / What the message surface does to a fragment";
const DELTAS_FIXTURES: &str = "002 Argument deltas and text deltas / Fixtures that cannot fail";
const FINAL_TERMINAL: &str = "003 Finalising a streamed tool call / What the terminal event certifies";
const FINAL_ABSENCE: &str = "003 Finalising a streamed tool call / Making absence into an event";
const FINAL_LOG: &str = "003 Finalising a streamed tool call / What each outcome is worth writing down";

/// Every mutant, in a stable order.
pub fn zoo() -> Vec<Mutant> {
    let m = |name, seed, bug, expected, factory| Mutant {
        name,
        seed,
        bug,
        expected,
        factory,
        level: Level::Events,
        dialect: Dialect::Anthropic,
        quirks: Quirks::default(),
    };
    vec![
        // Keying.
        m(
            "name-keyed",
            KEYING_DOCS,
            "buffers keyed by tool name: two calls to one tool collapse into one buffer",
            // Also: a buffer keyed by name cannot see a replayed or unannounced index (PROTOCOL).
            &[AccIdentity, AccProtocol],
            per_stream::<NameKeyed>,
        ),
        m(
            "latest-call-id",
            KEYING_KEY,
            "every outcome carries the id of the most recent announcement",
            &[AccIdentity],
            per_stream::<LatestCallId>,
        ),
        // Faults given a plausible interpretation.
        m(
            "buffer-on-first-fragment",
            KEYING_KEY,
            "a defaultdict: a fragment for an unannounced index silently makes a buffer",
            &[AccProtocol],
            per_stream::<BufferOnFirstFragment>,
        ),
        m(
            "unannounced-to-open-call",
            KEYING_KEY,
            "a fragment for an unannounced index is merged into the most recent open call",
            &[AccProtocol],
            per_stream::<UnannouncedToOpenCall>,
        ),
        m(
            "unknown-index-as-0",
            KEYING_KEY,
            "a fragment for an unknown index is taken as index 0 and joins call 0",
            &[AccProtocol],
            per_stream::<UnknownIndexAsZero>,
        ),
        m(
            "duplicate-ignored",
            KEYING_KEY,
            "a replayed announcement is accepted silently",
            &[AccProtocol],
            per_stream::<DuplicateIgnored>,
        ),
        m(
            "duplicate-resets",
            KEYING_KEY,
            "a replayed announcement empties the call's buffer and starts it over",
            &[AccProtocol],
            per_stream::<DuplicateResets>,
        ),
        m(
            "duplicate-phantom",
            KEYING_KEY,
            "a replayed announcement adds a phantom empty call with the same id",
            &[AccProtocol, AccAccount],
            per_stream::<DuplicatePhantom>,
        ),
        m(
            "duplicate-concatenates",
            KEYING_KEY,
            "a replayed announcement's id and name are appended to the call's (id \"aa\", name \"ff\")",
            &[AccProtocol, AccIdentity],
            per_stream::<DuplicateConcatenates>,
        ),
        m(
            "fragment-after-stop-accepted",
            KEYING_KEY,
            "a fragment after its call's terminal event is appended to the finished buffer",
            &[AccProtocol],
            per_stream::<FragmentAfterStopAccepted>,
        ),
        m(
            "done-ignored",
            DELTAS_CALL,
            "the arguments a Responses `done` repeats are not compared with the fragments",
            &[AccProtocol],
            per_stream::<DoneIgnored>,
        ),
        m(
            "done-trusted",
            DELTAS_CALL,
            "the arguments a Responses `done` repeats replace the fragments, even when they differ",
            &[AccProtocol],
            per_stream::<DoneTrusted>,
        ),
        // What is done to a fragment.
        m(
            "fragment-trim",
            DELTAS_CONCAT,
            "each fragment is trimmed before it is appended: spaces inside strings vanish (and a buffer of white space only becomes empty, so it is dispatched as {})",
            &[AccFidelity, AccStrict],
            per_stream::<FragmentTrim>,
        ),
        m(
            "fragment-unescape",
            DELTAS_CONCAT,
            "each fragment's JSON escapes are decoded on their own: an escape split in two is lost",
            // Also: decoding a bad escape per fragment repairs a document the model wrote invalid (STRICT).
            &[AccFidelity, AccStrict],
            per_stream::<FragmentUnescape>,
        ),
        m(
            "fragments-reversed",
            KEYING_OOO,
            "fragments are joined in reverse arrival order (pushed to the front of the buffer)",
            &[AccOrder],
            per_stream::<FragmentsReversed>,
        ),
        m(
            "args-in-text",
            DELTAS_SURFACE,
            "argument fragments are also appended to the message text",
            &[AccText],
            per_stream::<ArgsInText>,
        ),
        // When a call is complete.
        m(
            "parses-is-complete",
            DELTAS_CONCAT,
            "a call is dispatched as soon as its buffer parses, before its terminal event",
            &[AccCompletion],
            per_stream::<ParsesIsComplete>,
        ),
        m(
            "balanced-braces",
            DELTAS_CALL,
            "a call is dispatched as soon as its braces balance, before its terminal event",
            // In a turn that was then cut or abandoned, the early outcome is also the wrong
            // one for the ending (TRUNCATION, ABANDON): on some seeds that is what shows first.
            &[AccCompletion, AccTruncation, AccAbandon],
            per_stream::<BalancedBraces>,
        ),
        m(
            "dispatch-at-call-stop",
            FINAL_TERMINAL,
            "a call is dispatched at its own terminal event, before the stop reason says max_tokens",
            // A truncated turn runs what it should not (TRUNCATION); a terminal that is itself faulty
            // (a done that disagrees with the deltas) is run before the fault fails the turn
            // (PROTOCOL).
            &[AccTruncation, AccProtocol],
            per_stream::<DispatchAtCallStop>,
        ),
        m(
            "finish-reason-not-terminal",
            KEYING_KEY,
            "only a call's own terminal finishes it: every OpenAI Chat call (finish_reason only) is abandoned",
            // A complete Chat turn loses its calls (ABANDON); a truncated one reports them
            // abandoned instead of truncated (TRUNCATION).
            &[AccAbandon, AccTruncation],
            per_stream::<FinishReasonNotTerminal>,
        ),
        m(
            "live-judged-as-finished",
            FINAL_TERMINAL,
            "at the end of the stream a call still live is parsed as if finished, not failed as abandoned",
            &[AccAbandon],
            per_stream::<LiveJudgedAsFinished>,
        ),
        // Finalising.
        m(
            "ignores-truncation",
            FINAL_ABSENCE,
            "the stop reason is never consulted: a turn cut by max_tokens / length is dispatched",
            &[AccTruncation],
            per_stream::<IgnoresTruncation>,
        ),
        m(
            "only-max-tokens",
            FINAL_ABSENCE,
            "only max_tokens counts as truncation (the seeds' finalize): a Chat `length` cut is dispatched",
            &[AccTruncation],
            per_stream::<OnlyMaxTokens>,
        ),
        m(
            "raw-decode",
            KEYING_DOCS,
            "the buffer is read with raw_decode: the first document wins, trailing bytes are ignored",
            &[AccStrict],
            per_stream::<RawDecode>,
        ),
        m(
            "bad-escape-crashes",
            FINAL_TERMINAL,
            "a model-written invalid escape (\\q) or raw control character throws out of the parse: the turn dies instead of that call failing as unparseable",
            &[SubjectCrash],
            per_stream::<BadEscapeCrashes>,
        ),
        m(
            "repair-parse",
            KEYING_DOCS,
            "the buffer is read with a repair parser: cut documents are closed, two documents merged",
            &[AccStrict],
            per_stream::<RepairParse>,
        ),
        m(
            "empty-args-unparseable",
            DELTAS_CALL,
            "a call with no argument bytes is parsed as \"\" and fails instead of taking {}",
            &[AccFidelity],
            per_stream::<EmptyArgsUnparseable>,
        ),
        m(
            "schema-unchecked",
            FINAL_TERMINAL,
            "parsed arguments are dispatched without checking the tool's schema",
            &[AccSchema],
            per_stream::<SchemaUnchecked>,
        ),
        // Reporting.
        m(
            "drops-live-calls",
            FINAL_ABSENCE,
            "a call still live when the stream ends gets no outcome at all",
            &[AccAbandon],
            per_stream::<DropsLiveCalls>,
        ),
        m(
            "empty-args-dropped",
            KEYING_SEVEN,
            "a call with no argument bytes is never reported (`if buf.args:`)",
            // Dropped from a complete turn (ACCOUNT), an abandoned one (ABANDON) or a
            // truncated one (TRUNCATION: the call gets no per-call "not run" outcome).
            &[AccAccount, AccAbandon, AccTruncation],
            per_stream::<EmptyArgsDropped>,
        ),
        m(
            "outcomes-twice",
            KEYING_SEVEN,
            "every outcome is reported twice",
            &[AccAccount],
            per_stream::<OutcomesTwice>,
        ),
        m(
            "failure-raw-dropped",
            FINAL_LOG,
            "a failure is reported with an empty raw buffer instead of the buffer as received",
            &[AccFidelity],
            per_stream::<FailureRawDropped>,
        ),
        // The text surface.
        m(
            "text-doubled",
            DELTAS_TEXT,
            "each text delta is shown twice",
            &[AccText],
            per_stream::<TextDoubled>,
        ),
        m("text-dropped", DELTAS_TEXT, "text deltas are not shown", &[AccText], per_stream::<TextDropped>),
        m(
            "prose-ahead-of-calls",
            DELTAS_FIXTURES,
            "the message is laid out as all prose, then all calls: prose after a call moves before it",
            &[AccText],
            per_stream::<ProseAheadOfCalls>,
        ),
        // Isolation.
        m(
            "shared-across-streams",
            KEYING_PER_STREAM,
            "one accumulator for every stream, wiped at each stream's end: concurrent streams collide",
            &[AccIsolation],
            OneForAll::cleared_per_stream,
        ),
        m(
            "not-reset-between-turns",
            KEYING_PER_STREAM,
            "one accumulator for the whole agent loop, never reset: a turn finds the last turn's calls",
            &[AccIsolation],
            OneForAll::never_reset,
        ),
        // The widened space: each bug shows only on its class of input.
        m(
            "buffer-capped-4k",
            DELTAS_CONCAT,
            "a fixed 4 KiB argument buffer: the bytes of a longer document past it are dropped",
            &[AccFidelity, AccStrict, AccAccount],
            per_stream::<BufferCapped>,
        ),
        m(
            "tool-names-case-folded",
            KEYING_DOCS,
            "tool names lower-cased at the announcement: getWeather comes back as getweather",
            &[AccIdentity],
            per_stream::<NamesCaseFolded>,
        ),
        m(
            "args-nfc-normalised",
            DELTAS_CONCAT,
            "the buffer is Unicode-normalised (NFC) before it is parsed: a decomposed é, the Angstrom sign or Hangul jamo change",
            &[AccFidelity],
            per_stream::<NfcNormalised>,
        ),
        m(
            "numbers-through-double",
            DELTAS_CONCAT,
            "every number goes through a double: 9007199254740993 becomes 9007199254740992",
            &[AccFidelity],
            per_stream::<NumbersThroughDouble>,
        ),
        m(
            "lenient-numbers",
            FINAL_TERMINAL,
            "a buffer that does not parse is read again with NaN, Infinity, 01, +1, .5, 1. and 0x1F taken as numbers",
            &[AccStrict],
            per_stream::<LenientNumbers>,
        ),
        m(
            "whitespace-as-empty",
            FINAL_TERMINAL,
            "a buffer of only whitespace is taken as no arguments ({}) instead of unparseable",
            &[AccStrict],
            per_stream::<WhitespaceAsEmpty>,
        ),
        m(
            "first-key-wins",
            FINAL_TERMINAL,
            "of a key written twice the first value is kept; JSON parsers keep the last",
            &[AccFidelity],
            per_stream::<FirstKeyWins>,
        ),
        m(
            "depth-limit-128",
            FINAL_TERMINAL,
            "the buffer is parsed with serde_json's default recursion limit: a valid document nested past 127 levels fails",
            &[AccFidelity, AccStrict, AccAccount],
            per_stream::<DepthLimited>,
        ),
        m(
            "objects-only",
            FINAL_TERMINAL,
            "a document that is not an object (42, [1, 2]) is failed as unparseable; the model wrote valid JSON",
            &[AccFidelity, AccStrict, AccAccount],
            per_stream::<ObjectsOnly>,
        ),
        m(
            "lone-surrogate-replaced",
            FINAL_TERMINAL,
            "a buffer with a lone surrogate escape (\\ud800) is read again with it replaced by U+FFFD and dispatched",
            &[AccStrict],
            per_stream::<LoneSurrogateReplaced>,
        ),
        m(
            "index-as-position",
            KEYING_KEY,
            "a fragment's index is taken as its call's position among the announced calls: wrong once indices start past 0, skip, or count text blocks",
            &[AccProtocol, AccIdentity, AccFidelity, AccAccount],
            per_stream::<IndexAsPosition>,
        ),
        // Turns without calls, and how a turn ended.
        m(
            "complete-on-abandon",
            FINAL_ABSENCE,
            "a stream that ends without its stop reason is reported as a complete turn",
            &[AccEnding],
            per_stream::<CompleteOnAbandon>,
        ),
        m(
            "fills-in-stop",
            FINAL_ABSENCE,
            "finish_reason \"stop\" filled in for a stream that simply stopped or broke off with an error",
            &[AccEnding],
            per_stream::<FillsInStop>,
        ),
        m(
            "text-held-for-the-message",
            DELTAS_TEXT,
            "text is held until something else arrives and released at the end only for a turn with calls or a stop: a cut text-only answer shows nothing",
            &[AccText],
            per_stream::<TextHeldForTheMessage>,
        ),
        // Foreign blocks: each bug shows only on a turn with one.
        m(
            "server-tool-dispatched",
            DELTAS_CALL,
            "an Anthropic server_tool_use block is taken for the client's call: its input_json_delta is its arguments",
            &[AccForeign],
            per_stream::<ServerToolDispatched>,
        ),
        m(
            "thinking-as-text",
            DELTAS_TEXT,
            "thinking and reasoning deltas are shown as the answer's text",
            &[AccForeign],
            per_stream::<ThinkingAsText>,
        ),
        m(
            "custom-input-as-json",
            DELTAS_CALL,
            "a Responses custom tool call is handled as a function call: its freeform input is parsed as JSON",
            &[AccForeign],
            per_stream::<CustomInputAsJson>,
        ),
        m(
            "refusal-as-text",
            DELTAS_TEXT,
            "refusal deltas are shown as the answer's text",
            &[AccForeign],
            per_stream::<RefusalAsText>,
        ),
        // Below the events level: one defect under a correct core.
        below(
            "utf8-per-chunk-lossy",
            DELTAS_UTF8,
            "each transport chunk decoded on its own with replacement characters (from_utf8_lossy)",
            &[BytesUtf8],
            (Level::Bytes, Dialect::OpenAiChat),
            || Box::new(StackFactory(Defect::Utf8Lossy)),
        ),
        below(
            "utf8-per-chunk-strict",
            DELTAS_UTF8,
            "each transport chunk decoded on its own, strictly: a character split across chunks is an error",
            &[BytesUtf8],
            (Level::Bytes, Dialect::Anthropic),
            || Box::new(StackFactory(Defect::Utf8Strict)),
        ),
        below(
            "cr-line-ends-dropped",
            DELTAS_UTF8,
            "carriage returns stripped and lines split on LF only: a stream with CR line ends falls apart",
            &[BytesFraming],
            (Level::Bytes, Dialect::OpenAiResponses),
            || Box::new(StackFactory(Defect::CrDropped)),
        ),
        below(
            "multiline-data-last-line",
            DELTAS_UTF8,
            "of an event's several data: lines only the last is kept",
            &[BytesFraming],
            (Level::Bytes, Dialect::Anthropic),
            || Box::new(StackFactory(Defect::MultilineLastOnly)),
        ),
        below(
            "chat-keyed-by-id",
            KEYING_DOCS,
            "OpenAI Chat entries go to the call whose id came last, but the id is only on an index's first entry",
            // Fragments land in the wrong call (IDENTITY on the one that gains them, FIDELITY
            // on the one that loses them), and a fragment for no call at all goes unnoticed
            // (PROTOCOL).
            &[WireChat, AccIdentity, AccFidelity, AccProtocol],
            (Level::Wire, Dialect::OpenAiChat),
            || Box::new(StackFactory(Defect::ChatKeyedById)),
        ),
        below(
            "responses-done-dropped",
            DELTAS_CALL,
            "Responses' done is not compared with the deltas: a done that disagrees goes unnoticed",
            &[WireDone],
            (Level::Wire, Dialect::OpenAiResponses),
            || Box::new(StackFactory(Defect::DoneDropped)),
        ),
        below(
            "usage-chunk-indexed",
            DELTAS_CALL,
            "an OpenAI Chat usage chunk (choices: []) is read as choices[0]",
            &[SubjectCrash],
            (Level::Wire, Dialect::OpenAiChat),
            || Box::new(StackFactory(Defect::UsageChunkCrash)),
        ),
        // Hunted where servers send no index (Gemini's compatible endpoint).
        Mutant {
            quirks: Quirks { chat_no_index: true, ..Quirks::default() },
            ..below(
                "missing-index-as-zero",
                KEYING_DOCS,
                "OpenAI Chat tool-call entries without an index are taken as index 0 and keyed by index alone: the second call's bytes join the first's and the second call is lost",
                // The second call gets no outcome (ACCOUNT; in a truncated or abandoned turn
                // the outcome it owed: TRUNCATION, ABANDON), the first holds both documents
                // (FIDELITY, or unparseable where it parsed: STRICT), or the first's id names
                // the second's bytes (IDENTITY).
                &[AccAccount, AccFidelity, AccIdentity, AccTruncation, AccAbandon, AccStrict],
                (Level::Wire, Dialect::OpenAiChat),
                || Box::new(StackFactory(Defect::MissingIndexAsZero)),
            )
        },
        below(
            "incomplete-event-dispatched",
            DELTAS_UTF8,
            "at the end of the stream an event still waiting for its blank line is dispatched anyway",
            // Found by the level re-run: the same case without its tail conforms (BYTES-FRAMING).
            &[BytesFraming, AccAbandon, AccProtocol, AccAccount, AccFidelity],
            (Level::Bytes, Dialect::Anthropic),
            || Box::new(StackFactory(Defect::IncompleteEventDispatched)),
        ),
        // Hunted at the vllm profile, which repeats id, type and name on every entry.
        Mutant {
            quirks: VLLM,
            ..below(
                "announcement-fields-concatenated",
                KEYING_DOCS,
                "every string field of an OpenAI Chat entry concatenated onto the call's: a server that repeats id and name on every entry gives get_weatherget_weather",
                &[AccIdentity],
                (Level::Wire, Dialect::OpenAiChat),
                || Box::new(StackFactory(Defect::FieldsConcatenated)),
            )
        },
        // Server profiles' shapes (docs/SPEC.md, "Server profiles"), each hunted where a
        // server sends it.
        Mutant {
            quirks: Quirks { chat_repeat_on_finish: true, ..Quirks::default() },
            ..below(
                "finish-repeats-as-calls",
                KEYING_SEVEN,
                "OpenAI Chat: the calls a finish chunk repeats with empty arguments (OpenRouter, vLLM) are taken as calls again: each is reported twice",
                &[AccAccount],
                (Level::Wire, Dialect::OpenAiChat),
                || Box::new(StackFactory(Defect::FinishRepeatsAsCalls)),
            )
        },
        Mutant {
            quirks: Quirks { chat_sparse_index: true, ..Quirks::default() },
            ..below(
                "chat-index-into-list",
                KEYING_KEY,
                "OpenAI Chat: a call's index is taken as its position in a list: the first call at index 1 (gateways in front of Anthropic) raises IndexError",
                &[SubjectCrash],
                (Level::Wire, Dialect::OpenAiChat),
                || Box::new(StackFactory(Defect::IndexAsPosition)),
            )
        },
        Mutant {
            quirks: Quirks { chat_index_zero: true, chat_whole_calls: true, ..Quirks::default() },
            ..below(
                "index-reused-merged",
                KEYING_KEY,
                "OpenAI Chat: calls keyed by index alone: a new id at an index that holds a call (Ollama's index 0 for every parallel call) continues it: the calls are merged",
                // As missing-index-as-zero: the later call is lost (ACCOUNT; TRUNCATION,
                // ABANDON in a cut turn), the first holds both documents (FIDELITY, STRICT).
                &[AccAccount, AccFidelity, AccIdentity, AccTruncation, AccAbandon, AccStrict],
                (Level::Wire, Dialect::OpenAiChat),
                || Box::new(StackFactory(Defect::IndexReusedMerged)),
            )
        },
        Mutant {
            quirks: VLLM,
            ..below(
                "split-entries-last-wins",
                KEYING_KEY,
                "OpenAI Chat: a chunk's entries read into a map by index: of two entries with one index in one chunk (vLLM) only the last is kept",
                &[AccFidelity, AccStrict, AccSchema],
                (Level::Wire, Dialect::OpenAiChat),
                || Box::new(StackFactory(Defect::SplitEntriesLastWins)),
            )
        },
        Mutant {
            quirks: Quirks { chat_empty_continuations: true, ..Quirks::default() },
            ..below(
                "empty-id-new-call",
                KEYING_KEY,
                "OpenAI Chat: a continuation's \"id\": \"\" (DeepSeek) taken as a new call: each starts a call with an empty id and name, and its fragment leaves its call",
                &[AccAccount, AccIdentity, AccFidelity, AccStrict],
                (Level::Wire, Dialect::OpenAiChat),
                || Box::new(StackFactory(Defect::EmptyIdNewCall)),
            )
        },
        Mutant {
            quirks: Quirks { chat_late_name: true, ..Quirks::default() },
            ..below(
                "late-name-refused",
                KEYING_DOCS,
                "OpenAI Chat: a call's first entry must carry function.name: a host that sends the name in the call's next entry (after its first argument bytes) fails the turn",
                &[AccProtocol],
                (Level::Wire, Dialect::OpenAiChat),
                || Box::new(StackFactory(Defect::LateNameRefused)),
            )
        },
        Mutant {
            quirks: Quirks { responses_rotating_item_id: true, ..Quirks::default() },
            ..below(
                "item-id-keyed",
                KEYING_KEY,
                "OpenAI Responses: deltas and dones looked up by item_id: under a rotating item_id (GitHub Copilot's gateway) they are all ignored",
                // The call's bytes are lost (FIDELITY, STRICT), it is never finished (ABANDON,
                // TRUNCATION, ACCOUNT), and a fault in an ignored event goes unnoticed
                // (PROTOCOL, WIRE-DONE).
                &[AccFidelity, AccAbandon, AccTruncation, AccStrict, AccAccount, AccProtocol, WireDone],
                (Level::Wire, Dialect::OpenAiResponses),
                || Box::new(StackFactory(Defect::ItemIdKeyed)),
            )
        },
        // The dialect events: each read wrong, under a correct core.
        below(
            "item-done-trusted",
            DELTAS_CALL,
            "OpenAI Responses: the arguments of an announced call's output_item.done replace the deltas, unchecked",
            // Found as a done_mismatch never raised (PROTOCOL), attributed to WIRE-DONE.
            &[WireDone],
            (Level::Wire, Dialect::OpenAiResponses),
            || Box::new(StackFactory(Defect::ItemDoneTrusted)),
        ),
        below(
            "item-done-only-lost",
            DELTAS_CALL,
            "OpenAI Responses: an output_item.done for a call no output_item.added announced is ignored: the call is lost",
            // The call gets no outcome (ACCOUNT); the level re-run names WIRE-DONE.
            &[WireDone, AccAccount],
            (Level::Wire, Dialect::OpenAiResponses),
            || Box::new(StackFactory(Defect::ItemDoneOnlyLost)),
        ),
        below(
            "unknown-delta-fails",
            DELTAS_CALL,
            "Anthropic: a content_block_delta of a type the client does not know (citations_delta) fails the turn",
            &[WireUnknown],
            (Level::Wire, Dialect::Anthropic),
            || Box::new(StackFactory(Defect::UnknownDeltaFails)),
        ),
        below(
            "chat-prelude-as-error",
            DELTAS_CALL,
            "OpenAI Chat: the prelude chunk some hosts send (choices: [], prompt_filter_results) fails the turn",
            &[WireKeepalive],
            (Level::Wire, Dialect::OpenAiChat),
            || Box::new(StackFactory(Defect::PreludeAsError)),
        ),
        below(
            "second-start-ignored",
            DELTAS_CALL,
            "Anthropic: a second message_start in one stream (a proxy that retried upstream splices another generation in) is skipped and the turn read on as one: calls of two generations are dispatched as one turn's",
            &[AccProtocol],
            (Level::Wire, Dialect::Anthropic),
            || Box::new(StackFactory(Defect::SecondStartIgnored)),
        ),
        below(
            "completed-calls-duplicated",
            DELTAS_CALL,
            "OpenAI Responses: the calls response.completed repeats in its output are reported again",
            &[AccAccount],
            (Level::Wire, Dialect::OpenAiResponses),
            || Box::new(StackFactory(Defect::CompletedDuplicates)),
        ),
        below(
            "done-as-finish",
            FINAL_ABSENCE,
            "OpenAI Chat: [DONE] is taken for the finish reason a stream never sent: its live calls are dispatched",
            // A live call dispatched (ABANDON), attributed to WIRE-KEEPALIVE by the level re-run.
            &[WireKeepalive, AccAbandon],
            (Level::Wire, Dialect::OpenAiChat),
            || Box::new(StackFactory(Defect::DoneAsFinish)),
        ),
        below(
            "usage-without-choices-refused",
            DELTAS_CALL,
            "OpenAI Chat: a usage-only chunk without a choices key fails the turn as malformed",
            &[WireKeepalive],
            (Level::Wire, Dialect::OpenAiChat),
            || Box::new(StackFactory(Defect::UsageWithoutChoicesRefused)),
        ),
        below(
            "done-alone-malformed",
            FINAL_ABSENCE,
            "OpenAI Chat: data: [DONE] with nothing before it fails the turn as malformed instead of ending it abandoned",
            &[WireKeepalive],
            (Level::Wire, Dialect::OpenAiChat),
            || Box::new(StackFactory(Defect::DoneAloneMalformed)),
        ),
        // Bedrock's binary event stream.
        below(
            "bedrock-crc-unchecked",
            DELTAS_UTF8,
            "Bedrock event stream messages cut out by their lengths alone: neither the prelude nor the message CRC is compared",
            &[BytesChecksum],
            (Level::Bytes, Dialect::Bedrock),
            || Box::new(BedrockFactory(BedrockDefect::CrcUnchecked)),
        ),
        below(
            "bedrock-per-chunk",
            DELTAS_UTF8,
            "each transport chunk decoded as if it held whole event stream messages: a message split across chunks is lost",
            &[BytesFraming],
            (Level::Bytes, Dialect::Bedrock),
            || Box::new(BedrockFactory(BedrockDefect::PerChunk)),
        ),
        below(
            "bedrock-exception-as-end",
            FINAL_ABSENCE,
            "a Bedrock exception message (modelStreamErrorException, throttlingException, ...) read as a clean end_turn",
            &[AccAbandon, AccEnding],
            (Level::Wire, Dialect::Bedrock),
            || Box::new(BedrockFactory(BedrockDefect::ExceptionAsEnd)),
        ),
        below(
            "bedrock-index-ignored",
            KEYING_KEY,
            "Bedrock toolUse deltas and stops go to the tool use started last, whatever their contentBlockIndex",
            &[AccProtocol],
            (Level::Wire, Dialect::Bedrock),
            || Box::new(BedrockFactory(BedrockDefect::IndexIgnored)),
        ),
        below(
            "bedrock-unknown-fails",
            DELTAS_CALL,
            "Bedrock: a contentBlockDelta whose delta carries a member the client does not know (citation), or a message of an event type it does not know, fails the turn",
            &[WireUnknown],
            (Level::Wire, Dialect::Bedrock),
            || Box::new(BedrockFactory(BedrockDefect::UnknownFails)),
        ),
        below(
            "bedrock-second-start-ignored",
            DELTAS_CALL,
            "Bedrock: a second messageStart in one stream (a proxy that retried upstream splices another generation in) is skipped and the turn read on as one: calls of two generations are dispatched as one turn's",
            &[AccProtocol],
            (Level::Wire, Dialect::Bedrock),
            || Box::new(BedrockFactory(BedrockDefect::SecondStartIgnored)),
        ),
        // Gemini: the bugs its clients have shipped (docs/ZOO.md), hunted in Vertex's pieces.
        vertex(
            "gemini-needs-explicit-end",
            FINAL_TERMINAL,
            "Gemini: a streamed call forms only at an empty functionCall; one whose last piece has no willContinue, or that the end of the candidate ends, is never formed",
            // The call never formed: no outcome (ACCOUNT), the abandoned or cut ones reported
            // wrong (ABANDON), its id gone from the layout (IDENTITY), the text around it
            // misplaced (TEXT), a stream delivered whole read otherwise (CHUNKING).
            &[AccAccount, AccAbandon, AccFidelity, AccCompletion, AccIdentity, AccText, AccChunking],
            || Box::new(GeminiFactory(GeminiDefect::NeedsExplicitEnd)),
        ),
        vertex(
            "gemini-no-args-dropped",
            DELTAS_CALL,
            "Gemini: a call without arguments ({\"functionCall\":{\"name\":...}}) dropped, its thought signature with it (the next request fails with a 400)",
            &[AccAccount, AccTruncation, AccAbandon, AccText],
            || Box::new(GeminiFactory(GeminiDefect::NoArgsDropped)),
        ),
        vertex(
            "gemini-first-piece-whole",
            FINAL_TERMINAL,
            "Gemini: a call's first piece (name and willContinue, no arguments) taken for a whole call with no arguments; the pieces after it never flushed",
            // An empty document where the model wrote one: wrong (FIDELITY) or, where the
            // tool needs arguments, taken as valid (STRICT).
            &[AccFidelity, AccCompletion, AccAccount, AccAbandon, AccTruncation, AccStrict],
            || Box::new(GeminiFactory(GeminiDefect::FirstPieceWhole)),
        ),
        vertex(
            "gemini-index-as-key",
            DELTAS_CONCAT,
            "Gemini: jsonPath split on `.` alone, so $.items[0] writes a member named `items[0]`",
            &[AccFidelity, AccSchema],
            || Box::new(GeminiFactory(GeminiDefect::IndexAsKey)),
        ),
        vertex(
            "gemini-duplicated-at-finish",
            KEYING_DOCS,
            "Gemini: at the end of the candidate every call of the turn is handed on again (the aggregated response re-executed: 57 model calls)",
            &[AccAccount, AccIdentity, AccProtocol],
            || Box::new(GeminiFactory(GeminiDefect::DuplicatedAtFinish)),
        ),
        vertex(
            "gemini-keyed-by-name",
            KEYING_SEVEN,
            "Gemini: calls keyed by function name, so a second call to the same tool continues the first and the two collapse into one",
            &[AccAccount, AccIdentity, AccProtocol, AccFidelity],
            || Box::new(GeminiFactory(GeminiDefect::KeyedByName)),
        ),
    ]
}

/// A Gemini mutant, hunted at the wire level in Vertex's streamed arguments.
fn vertex(
    name: &'static str,
    seed: &'static str,
    bug: &'static str,
    expected: &'static [Invariant],
    factory: fn() -> Box<dyn Factory>,
) -> Mutant {
    Mutant {
        name,
        seed,
        bug,
        expected,
        factory,
        level: Level::Wire,
        dialect: Dialect::Gemini,
        quirks: Quirks { gemini_partial_args: true, ..Quirks::PLAIN },
    }
}

/// The vllm server profile's quirks (docs/SPEC.md, "Server profiles").
const VLLM: Quirks = Quirks {
    chat_repeat_fields: true,
    chat_split_entries: true,
    chat_repeat_on_finish: true,
    ..Quirks::PLAIN
};

/// A mutant below the events level.
fn below(
    name: &'static str,
    seed: &'static str,
    bug: &'static str,
    expected: &'static [Invariant],
    (level, dialect): (Level, Dialect),
    factory: fn() -> Box<dyn Factory>,
) -> Mutant {
    Mutant { name, seed, bug, expected, factory, level, dialect, quirks: Quirks::default() }
}

const DELTAS_UTF8: &str = "002 Argument deltas and text deltas / Concatenate, and do nothing else (bytes)";

/// The mutant with this name.
pub fn by_name(name: &str) -> Option<Mutant> {
    zoo().into_iter().chain(cost_zoo()).chain(bounded_zoo()).find(|m| m.name == name)
}

/// The bounded mutants: right outcomes and a linear time, and a heap far past the floor's on
/// the bounded suite's large streams (`toolcert bench --bounded` must call the rule broken;
/// so must it for `reparse-every-fragment`, whose million-fragment run never ends in time).
pub fn bounded_zoo() -> Vec<Mutant> {
    vec![Mutant {
        name: "kept-fragments",
        seed: "hostile upstream (no seed chapter: the chapters judge outcomes, not what they hold)",
        bug: "every fragment is kept as a string of its own until the call ends, with no cap: right \
              outcomes, linear time, a heap of tens of bytes per fragment",
        expected: &[],
        factory: per_stream::<cost::KeptFragments>,
        level: Level::Events,
        dialect: Dialect::Anthropic,
        quirks: Quirks::default(),
    }]
}

/// The cost mutants: right outcomes, superlinear cost (`expected` is empty: no invariant
/// can catch them; `toolcert bench` must call them superlinear, and `toolcert zoo` checks).
pub fn cost_zoo() -> Vec<Mutant> {
    let m = |name, bug, factory| Mutant {
        name,
        seed: "cost (no seed chapter: the chapters judge outcomes, not their price)",
        bug,
        expected: &[],
        factory,
        level: Level::Events,
        dialect: Dialect::Anthropic,
        quirks: Quirks::default(),
    };
    vec![
        m(
            "rebuilt-buffer",
            "the buffer is rebuilt as a new string on every fragment: right outcomes, quadratic cost",
            per_stream::<cost::RebuiltBuffer>,
        ),
        m(
            "reparse-every-fragment",
            "the whole buffer is parsed after every fragment to see if it is complete: right \
             outcomes, quadratic cost",
            per_stream::<cost::ReparseEveryFragment>,
        ),
    ]
}
