//! Coverage: which adversarial classes a case reaches.
//!
//! [`classify`] reads a [`Case`] (generated, named, fuzzed or loaded from a file) and labels
//! what it exercises: the split class of each split point (found by lexing the call's
//! arguments, not by asking the generator what it meant), the endings, the faults that are
//! actually delivered, and the turn shapes. [`CoverageStats`] counts labels over a run,
//! each against the cases it can apply to, and prints the table a run reports (as
//! Hypothesis and proptest print their statistics). A generator that stops reaching a class
//! shows up here as a falling percentage, which is what the acceptance floor checks.

use std::fmt;

use serde::ser::SerializeMap;
use serde::{Serialize, Serializer};
use toolcert_render::{render, Event, Origin};
use toolcert_scenario::{
    normalized_splits, Block, Case, EndingKind, FaultClass, ForeignKind, Quirks, Shape, StreamSchedule,
    TailAim,
};

use crate::doc;
use crate::lex::{self, flag, Status};

/// What a case can exercise.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Label {
    // Split classes: where a split point lands in the arguments.
    InsideStringNextToSpace,
    BetweenBackslashAndEscape,
    InsideUnicodeEscape,
    InsideNestedObject,
    BetweenKeyAndColon,
    AfterBracePrefixParses,
    OneByteFragment,
    EmptyFragment,
    WholeFragment,
    // Endings.
    Complete,
    Truncated,
    Abandoned,
    Errored,
    /// A complete stop reason over a call whose document was cut.
    LyingComplete,
    // Faults that are delivered.
    ReplayAnnouncement,
    UnannouncedFragment,
    FragmentAfterStop,
    /// A call's terminal repeats arguments other than its fragments (Responses `done`).
    DoneMismatch,
    // Turn and case shapes.
    TextBeforeCall,
    TextAfterCall,
    SameToolTwice,
    Interleaved,
    LongArguments,
    ConcurrentStreams,
    SequentialStreams,
    InvalidDocument,
    EmptyArguments,
    SchemaViolation,
    // Size, names, Unicode, numbers, degenerate documents, cuts inside an event, indices.
    /// Arguments of 4 KiB and more.
    HugeArguments,
    /// A tool name other than lower snake_case (camelCase, PascalCase, dashes, digits).
    ToolNameSpelling,
    /// A tool name of the full 64 characters the providers allow.
    ToolName64,
    /// Two tools of one turn whose names differ only in case.
    ToolNameCasePair,
    /// Two tools of one turn, one name the other's plus a suffix.
    ToolNameSuffixPair,
    /// Text that names a tool the turn calls.
    TextMentionsTool,
    /// A combining mark (decomposed `e` + U+0301), raw or escaped.
    UnicodeDecomposed,
    /// A character NFC or NFKC changes (U+212B, ligatures, fullwidth, Hangul jamo).
    UnicodeNormalizes,
    /// Zero-width joiners and bidi controls.
    UnicodeInvisible,
    /// U+2028 or U+2029 raw.
    RawLineSeparator,
    /// U+FEFF inside a string or text.
    ByteOrderMark,
    /// A noncharacter (U+FDD0, U+FFFE, U+10FFFF ...).
    Noncharacter,
    /// A split point between the two escapes of a surrogate pair.
    SurrogatesSplit,
    /// An integer beyond ±2^53.
    BigInteger,
    /// An integer beyond the 64-bit range.
    Beyond64Bit,
    /// A decimal with more significant digits than a double keeps (17).
    LongDecimal,
    /// A number in exponent form.
    ExponentForm,
    /// `-0`, `0.0` or `-0.0`.
    SignedZero,
    /// A number form JSON refuses (`NaN`, `01`, `+1`, `.5` ...).
    InvalidNumber,
    /// No argument bytes, sent as several empty fragments.
    AllEmptyFragments,
    /// Arguments of only whitespace.
    WhitespaceOnly,
    /// A document that parses to something other than an object.
    NotObject,
    /// A top-level key written twice.
    DuplicateKeys,
    /// Nesting 128 levels deep and more.
    DeepNesting,
    /// A key of 1 KiB and more.
    LongKey,
    /// A lone surrogate escape.
    LoneSurrogate,
    /// The connection drops after the next event's lines, before its blank line.
    TailBeforeBlankLine,
    /// The connection drops inside a line of the next event.
    TailMidLine,
    /// The connection drops inside the next event's `data:` prefix.
    TailInsideDataPrefix,
    /// The connection drops between a `\\r` and its `\\n` in the next event.
    TailBetweenCrLf,
    /// Interleaved call indices that are not 0, 1, 2 ... (from past 0, with gaps).
    SparseIndices,
    /// Per-call indices numbered across text blocks (a call's index is not its ordinal).
    IndicesAcrossText,
    // Turns without calls, and how they end.
    /// A turn with text and no call.
    TextOnly,
    /// A turn with no block at all: the message opens and closes.
    EmptyTurn,
    /// A turn without calls (text-only or empty) that ends complete.
    NoCallComplete,
    /// A turn without calls that ends truncated (max tokens, length, incomplete).
    NoCallTruncated,
    /// A turn without calls that is abandoned (its stop never came).
    NoCallAbandoned,
    /// A turn without calls that ends with an error event.
    NoCallErrored,
    // Dialect events.
    /// Responses: a call announced only by its `output_item.done` (no added, deltas or arguments done).
    ItemDoneOnly,
    /// Responses: a done mismatch carried by `output_item.done` alone, `function_call_arguments.done` agreeing with the deltas.
    DoneMismatchItemOnly,
    /// Responses: a done mismatch carried by `function_call_arguments.done` alone.
    DoneMismatchArgumentsOnly,
    /// Responses: `response.completed` (or `incomplete`) repeats the calls in its `output`.
    CompletedRepeatsCalls,
    /// Anthropic: a `content_block_delta` of a type the client does not know (`citations_delta` ...).
    UnknownDelta,
    /// Anthropic: an event type the client does not know.
    UnknownEvent,
    /// Anthropic, Responses, Bedrock: a second generation's start event spliced into the stream.
    SplicedGeneration,
    /// Chat: the prelude chunk (`choices: []`, `prompt_filter_results`).
    ChatPrelude,
    /// Chat: the usage-only chunk with `choices: []`.
    UsageEmptyChoices,
    /// Chat: the usage-only chunk without a `choices` key.
    UsageWithoutChoices,
    /// Chat: `[DONE]` closes a stream no finish reason ended.
    DoneWithoutFinish,
    /// Chat: `[DONE]` with nothing before it.
    DoneAlone,
    // Foreign blocks delivered (ACC-FOREIGN), one label per kind.
    ForeignThinking,
    ForeignRedactedThinking,
    ForeignServerToolUse,
    ForeignServerToolResult,
    ForeignWebSearchCall,
    ForeignRefusal,
    ForeignCustomToolCall,
}

/// The sections of the coverage table.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum LabelGroup {
    Split,
    Ending,
    Fault,
    Shape,
    Size,
    Names,
    Unicode,
    Numbers,
    Degenerate,
    Transport,
    Indices,
    /// Turns without calls, by ending.
    NoCall,
    Dialect,
    Foreign,
}

/// The cases a label can apply to: the denominator of its percentage.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Scope {
    AllCases,
    /// Some turn has a call.
    HasCall,
    /// Some call has at least one argument byte.
    HasArgumentBytes,
    /// Some turn has two or more calls.
    HasMultiCallTurn,
    /// Some call is to a tool with a schema.
    HasSchemaCall,
    /// Some turn travels with a transport plan (the bytes level).
    HasTransport,
    /// Some turn has the per-call shape (Anthropic and Responses carry it).
    PerCallTurn,
    /// Some turn has the interleaved shape (OpenAI Chat carries it).
    InterleavedTurn,
}

impl Label {
    pub const ALL: [Label; 85] = [
        Label::InsideStringNextToSpace,
        Label::BetweenBackslashAndEscape,
        Label::InsideUnicodeEscape,
        Label::InsideNestedObject,
        Label::BetweenKeyAndColon,
        Label::AfterBracePrefixParses,
        Label::OneByteFragment,
        Label::EmptyFragment,
        Label::WholeFragment,
        Label::Complete,
        Label::Truncated,
        Label::Abandoned,
        Label::Errored,
        Label::LyingComplete,
        Label::ReplayAnnouncement,
        Label::UnannouncedFragment,
        Label::FragmentAfterStop,
        Label::DoneMismatch,
        Label::TextBeforeCall,
        Label::TextAfterCall,
        Label::SameToolTwice,
        Label::Interleaved,
        Label::LongArguments,
        Label::ConcurrentStreams,
        Label::SequentialStreams,
        Label::InvalidDocument,
        Label::EmptyArguments,
        Label::SchemaViolation,
        Label::HugeArguments,
        Label::ToolNameSpelling,
        Label::ToolName64,
        Label::ToolNameCasePair,
        Label::ToolNameSuffixPair,
        Label::TextMentionsTool,
        Label::UnicodeDecomposed,
        Label::UnicodeNormalizes,
        Label::UnicodeInvisible,
        Label::RawLineSeparator,
        Label::ByteOrderMark,
        Label::Noncharacter,
        Label::SurrogatesSplit,
        Label::BigInteger,
        Label::Beyond64Bit,
        Label::LongDecimal,
        Label::ExponentForm,
        Label::SignedZero,
        Label::InvalidNumber,
        Label::AllEmptyFragments,
        Label::WhitespaceOnly,
        Label::NotObject,
        Label::DuplicateKeys,
        Label::DeepNesting,
        Label::LongKey,
        Label::LoneSurrogate,
        Label::TailBeforeBlankLine,
        Label::TailMidLine,
        Label::TailInsideDataPrefix,
        Label::TailBetweenCrLf,
        Label::SparseIndices,
        Label::IndicesAcrossText,
        Label::TextOnly,
        Label::EmptyTurn,
        Label::NoCallComplete,
        Label::NoCallTruncated,
        Label::NoCallAbandoned,
        Label::NoCallErrored,
        Label::ItemDoneOnly,
        Label::DoneMismatchItemOnly,
        Label::DoneMismatchArgumentsOnly,
        Label::CompletedRepeatsCalls,
        Label::UnknownDelta,
        Label::UnknownEvent,
        Label::SplicedGeneration,
        Label::ChatPrelude,
        Label::UsageEmptyChoices,
        Label::UsageWithoutChoices,
        Label::DoneWithoutFinish,
        Label::DoneAlone,
        Label::ForeignThinking,
        Label::ForeignRedactedThinking,
        Label::ForeignServerToolUse,
        Label::ForeignServerToolResult,
        Label::ForeignWebSearchCall,
        Label::ForeignRefusal,
        Label::ForeignCustomToolCall,
    ];

    /// The label of a foreign kind.
    pub fn foreign(kind: ForeignKind) -> Label {
        match kind {
            ForeignKind::Thinking => Label::ForeignThinking,
            ForeignKind::RedactedThinking => Label::ForeignRedactedThinking,
            ForeignKind::ServerToolUse => Label::ForeignServerToolUse,
            ForeignKind::ServerToolResult => Label::ForeignServerToolResult,
            ForeignKind::WebSearchCall => Label::ForeignWebSearchCall,
            ForeignKind::Refusal => Label::ForeignRefusal,
            ForeignKind::CustomToolCall => Label::ForeignCustomToolCall,
        }
    }

    /// The label as reports spell it (`inside_unicode_escape`).
    pub fn name(self) -> &'static str {
        match self {
            Label::InsideStringNextToSpace => "inside_string_next_to_space",
            Label::BetweenBackslashAndEscape => "between_backslash_and_escape",
            Label::InsideUnicodeEscape => "inside_unicode_escape",
            Label::InsideNestedObject => "inside_nested_object",
            Label::BetweenKeyAndColon => "between_key_and_colon",
            Label::AfterBracePrefixParses => "after_brace_prefix_parses",
            Label::OneByteFragment => "one_byte_fragment",
            Label::EmptyFragment => "empty_fragment",
            Label::WholeFragment => "whole_fragment",
            Label::Complete => "complete",
            Label::Truncated => "truncated",
            Label::Abandoned => "abandoned",
            Label::Errored => "errored",
            Label::LyingComplete => "lying_complete",
            Label::ReplayAnnouncement => "replay_announcement",
            Label::UnannouncedFragment => "unannounced_fragment",
            Label::FragmentAfterStop => "fragment_after_stop",
            Label::DoneMismatch => "done_mismatch",
            Label::TextBeforeCall => "text_before_call",
            Label::TextAfterCall => "text_after_call",
            Label::SameToolTwice => "same_tool_twice",
            Label::Interleaved => "interleaved",
            Label::LongArguments => "long_arguments",
            Label::ConcurrentStreams => "concurrent_streams",
            Label::SequentialStreams => "sequential_streams",
            Label::InvalidDocument => "invalid_document",
            Label::EmptyArguments => "empty_arguments",
            Label::SchemaViolation => "schema_violation",
            Label::HugeArguments => "huge_arguments",
            Label::ToolNameSpelling => "tool_name_spelling",
            Label::ToolName64 => "tool_name_64",
            Label::ToolNameCasePair => "tool_name_case_pair",
            Label::ToolNameSuffixPair => "tool_name_suffix_pair",
            Label::TextMentionsTool => "text_mentions_tool",
            Label::UnicodeDecomposed => "unicode_decomposed",
            Label::UnicodeNormalizes => "unicode_normalizes",
            Label::UnicodeInvisible => "unicode_invisible",
            Label::RawLineSeparator => "raw_line_separator",
            Label::ByteOrderMark => "byte_order_mark",
            Label::Noncharacter => "noncharacter",
            Label::SurrogatesSplit => "surrogates_split",
            Label::BigInteger => "big_integer",
            Label::Beyond64Bit => "beyond_64_bit",
            Label::LongDecimal => "long_decimal",
            Label::ExponentForm => "exponent_form",
            Label::SignedZero => "signed_zero",
            Label::InvalidNumber => "invalid_number",
            Label::AllEmptyFragments => "all_empty_fragments",
            Label::WhitespaceOnly => "whitespace_only",
            Label::NotObject => "not_object",
            Label::DuplicateKeys => "duplicate_keys",
            Label::DeepNesting => "deep_nesting",
            Label::LongKey => "long_key",
            Label::LoneSurrogate => "lone_surrogate",
            Label::TailBeforeBlankLine => "tail_before_blank_line",
            Label::TailMidLine => "tail_mid_line",
            Label::TailInsideDataPrefix => "tail_inside_data_prefix",
            Label::TailBetweenCrLf => "tail_between_cr_lf",
            Label::SparseIndices => "sparse_indices",
            Label::IndicesAcrossText => "indices_across_text",
            Label::TextOnly => "text_only",
            Label::EmptyTurn => "empty_turn",
            Label::NoCallComplete => "no_call_complete",
            Label::NoCallTruncated => "no_call_truncated",
            Label::NoCallAbandoned => "no_call_abandoned",
            Label::NoCallErrored => "no_call_errored",
            Label::ItemDoneOnly => "item_done_only",
            Label::DoneMismatchItemOnly => "done_mismatch_item_only",
            Label::DoneMismatchArgumentsOnly => "done_mismatch_arguments_only",
            Label::CompletedRepeatsCalls => "completed_repeats_calls",
            Label::UnknownDelta => "unknown_delta",
            Label::UnknownEvent => "unknown_event",
            Label::ChatPrelude => "chat_prelude",
            Label::UsageEmptyChoices => "usage_empty_choices",
            Label::UsageWithoutChoices => "usage_without_choices",
            Label::DoneWithoutFinish => "done_without_finish",
            Label::DoneAlone => "done_alone",
            Label::SplicedGeneration => "spliced_generation",
            Label::ForeignThinking => "foreign_thinking",
            Label::ForeignRedactedThinking => "foreign_redacted_thinking",
            Label::ForeignServerToolUse => "foreign_server_tool_use",
            Label::ForeignServerToolResult => "foreign_server_tool_result",
            Label::ForeignWebSearchCall => "foreign_web_search_call",
            Label::ForeignRefusal => "foreign_refusal",
            Label::ForeignCustomToolCall => "foreign_custom_tool_call",
        }
    }

    pub fn group(self) -> LabelGroup {
        use Label::*;
        match self {
            InsideStringNextToSpace
            | BetweenBackslashAndEscape
            | InsideUnicodeEscape
            | InsideNestedObject
            | BetweenKeyAndColon
            | AfterBracePrefixParses
            | OneByteFragment
            | EmptyFragment
            | WholeFragment => LabelGroup::Split,
            Complete | Truncated | Abandoned | Errored | LyingComplete => LabelGroup::Ending,
            ReplayAnnouncement | UnannouncedFragment | FragmentAfterStop | DoneMismatch => LabelGroup::Fault,
            HugeArguments => LabelGroup::Size,
            ToolNameSpelling | ToolName64 | ToolNameCasePair | ToolNameSuffixPair | TextMentionsTool => {
                LabelGroup::Names
            }
            UnicodeDecomposed | UnicodeNormalizes | UnicodeInvisible | RawLineSeparator | ByteOrderMark
            | Noncharacter | SurrogatesSplit => LabelGroup::Unicode,
            BigInteger | Beyond64Bit | LongDecimal | ExponentForm | SignedZero | InvalidNumber => {
                LabelGroup::Numbers
            }
            AllEmptyFragments | WhitespaceOnly | NotObject | DuplicateKeys | DeepNesting | LongKey
            | LoneSurrogate => LabelGroup::Degenerate,
            TailBeforeBlankLine | TailMidLine | TailInsideDataPrefix | TailBetweenCrLf => {
                LabelGroup::Transport
            }
            SparseIndices | IndicesAcrossText => LabelGroup::Indices,
            TextOnly | EmptyTurn | NoCallComplete | NoCallTruncated | NoCallAbandoned | NoCallErrored => {
                LabelGroup::NoCall
            }
            ItemDoneOnly
            | DoneMismatchItemOnly
            | DoneMismatchArgumentsOnly
            | CompletedRepeatsCalls
            | UnknownDelta
            | UnknownEvent
            | SplicedGeneration
            | ChatPrelude
            | UsageEmptyChoices
            | UsageWithoutChoices
            | DoneWithoutFinish
            | DoneAlone => LabelGroup::Dialect,
            ForeignThinking
            | ForeignRedactedThinking
            | ForeignServerToolUse
            | ForeignServerToolResult
            | ForeignWebSearchCall
            | ForeignRefusal
            | ForeignCustomToolCall => LabelGroup::Foreign,
            _ => LabelGroup::Shape,
        }
    }

    pub fn scope(self) -> Scope {
        use Label::*;
        match self.group() {
            LabelGroup::Split => Scope::HasArgumentBytes,
            LabelGroup::Ending | LabelGroup::Fault => Scope::AllCases,
            LabelGroup::Shape => match self {
                SameToolTwice => Scope::HasMultiCallTurn,
                SchemaViolation => Scope::HasSchemaCall,
                Interleaved | ConcurrentStreams | SequentialStreams => Scope::AllCases,
                _ => Scope::HasCall,
            },
            LabelGroup::Transport => Scope::HasTransport,
            LabelGroup::Unicode | LabelGroup::Names | LabelGroup::Foreign => Scope::AllCases,
            LabelGroup::Numbers => Scope::HasArgumentBytes,
            LabelGroup::Size | LabelGroup::Degenerate | LabelGroup::Indices => Scope::HasCall,
            LabelGroup::NoCall => Scope::AllCases,
            // Each of its dialect: the cases whose turns that dialect carries.
            LabelGroup::Dialect => match self {
                ChatPrelude | UsageEmptyChoices | UsageWithoutChoices | DoneWithoutFinish | DoneAlone => {
                    Scope::InterleavedTurn
                }
                _ => Scope::PerCallTurn,
            },
        }
    }
}

impl fmt::Display for Label {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// A set of [`Label`]s (a bit set: classifying runs once per case, so it must be cheap).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub struct LabelSet(u128);

// Every label has its bit.
const _: () = assert!(Label::ALL.len() <= 128);

impl LabelSet {
    pub fn insert(&mut self, l: Label) {
        self.0 |= 1u128 << l as u32;
    }

    pub fn contains(&self, l: Label) -> bool {
        self.0 & (1u128 << l as u32) != 0
    }

    pub fn is_empty(&self) -> bool {
        self.0 == 0
    }

    /// The labels, in table order.
    pub fn iter(&self) -> impl Iterator<Item = Label> + '_ {
        Label::ALL.into_iter().filter(|&l| self.contains(l))
    }
}

impl Serialize for LabelSet {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.collect_seq(self.iter())
    }
}

/// The labels one case hits and the scopes it belongs to.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize)]
pub struct Coverage {
    pub labels: LabelSet,
    /// The scopes the case belongs to (bit `s as u16` for each [`Scope`] `s`).
    #[serde(skip)]
    scopes: u16,
    /// At a server profile's setting: the behaviours it sends, and those the case's bytes
    /// showed (the runner fills it in; classifying a case knows no setting).
    #[serde(skip)]
    pub profile: Option<(Quirks, Quirks)>,
}

impl Coverage {
    pub fn has(&self, label: Label) -> bool {
        self.labels.contains(label)
    }

    /// Whether the label can apply to this case (it counts in the label's denominator).
    pub fn applies(&self, label: Label) -> bool {
        self.in_scope(label.scope())
    }

    pub fn in_scope(&self, scope: Scope) -> bool {
        self.scopes & (1 << scope as u16) != 0
    }

    fn enter(&mut self, scope: Scope) {
        self.scopes |= 1 << scope as u16;
    }
}

/// serde_json's default recursion limit: its parse refuses a document nested this deep.
const SERDE_DEPTH_LIMIT: usize = 128;

/// The labels of each [`Scope`] (by `scope as usize`, as the bits of `Coverage::scopes`),
/// computed once.
fn scope_labels() -> &'static [LabelSet; 16] {
    static SETS: std::sync::OnceLock<[LabelSet; 16]> = std::sync::OnceLock::new();
    SETS.get_or_init(|| {
        let mut sets = [LabelSet::default(); 16];
        for l in Label::ALL {
            sets[l.scope() as usize].insert(l);
        }
        sets
    })
}

/// Labels what `case` exercises; see the module docs.
pub fn classify(case: &Case) -> Coverage {
    classify_with(case, &|_, _| None, None)
}

/// The strict parse of call block `block`'s arguments in stream `stream`, where an earlier
/// stage made it (the oracle does, for the calls it judges): `Some(Some(value))`,
/// `Some(None)` for a document that does not parse, `None` if nobody parsed it.
pub type ParsedDocs<'p> = dyn Fn(usize, usize) -> Option<Option<&'p serde_json::Value>> + 'p;

/// [`classify`], reading the strict parse of a call's arguments from `parsed` where it was
/// already made instead of parsing the document again, and each stream's neutral rendering
/// from `rendered` (`rendered[s]` is [`render`] of `case.streams[s]`) if it was made.
pub fn classify_with<'c, 'p>(
    case: &'c Case,
    parsed: &ParsedDocs<'p>,
    rendered: Option<&[toolcert_render::Rendered<'c>]>,
) -> Coverage {
    classify_impl(case, parsed, rendered, true)
}

/// [`classify_with`]; `lexer_pass`: a document's tokens and characters are read in the
/// lexer's pass (`false`: in passes of their own, for every document, as they were before:
/// the tests' oracle).
fn classify_impl<'c, 'p>(
    case: &'c Case,
    parsed: &ParsedDocs<'p>,
    rendered: Option<&[toolcert_render::Rendered<'c>]>,
    lexer_pass: bool,
) -> Coverage {
    let mut cov = Coverage::default();
    cov.enter(Scope::AllCases);
    if case.streams.len() >= 2 {
        cov.labels.insert(match case.schedule {
            StreamSchedule::Concurrent(_) => Label::ConcurrentStreams,
            StreamSchedule::Sequential => Label::SequentialStreams,
        });
    }
    // The lexer's vectors, kept from one document to the next (and one case to the next).
    thread_local! {
        static SPARE: std::cell::Cell<lex::Spare> = Default::default();
    }
    let mut spare = SPARE.take();
    for (stream, turn) in case.streams.iter().enumerate() {
        if !turn.transport.is_plain() {
            cov.enter(Scope::HasTransport);
        }
        if let (Some(tail), EndingKind::Abandoned) = (turn.transport.tail, turn.ending.kind()) {
            cov.labels.insert(match tail.aim {
                TailAim::BeforeBlankLine => Label::TailBeforeBlankLine,
                TailAim::MidLine => Label::TailMidLine,
                TailAim::InsideDataPrefix => Label::TailInsideDataPrefix,
                TailAim::BetweenCrLf => Label::TailBetweenCrLf,
            });
        }
        classify_names_and_indices(turn, &mut cov);
        // The turn's neutral rendering, made once and only if a label needs it.
        let made = std::cell::OnceCell::new();
        let rendered = || match rendered {
            Some(r) => &r[stream],
            None => made.get_or_init(|| render(turn)),
        };
        dialect_labels(turn, rendered, &mut cov);
        for block in &turn.blocks {
            if let Block::Text(t) = block {
                unicode_labels(&t.text, &mut cov);
            }
        }
        if turn.blocks.iter().any(|b| matches!(b, Block::Foreign(_))) {
            // A foreign block counts once delivered: its start (or, in Chat, a delta) arrived.
            for o in &rendered().origins {
                if let Origin::ForeignStart { block } | Origin::Foreign { block, .. } = *o {
                    if let Some(Block::Foreign(f)) = turn.blocks.get(block as usize) {
                        cov.labels.insert(Label::foreign(f.kind));
                    }
                }
            }
        }
        let kind = turn.ending.kind();
        if !turn.blocks.iter().any(|b| matches!(b, Block::Call(_))) {
            cov.labels.insert(if turn.blocks.is_empty() { Label::EmptyTurn } else { Label::TextOnly });
            cov.labels.insert(match kind {
                EndingKind::Complete => Label::NoCallComplete,
                EndingKind::Truncated => Label::NoCallTruncated,
                EndingKind::Abandoned => Label::NoCallAbandoned,
                EndingKind::Errored => Label::NoCallErrored,
            });
        }
        cov.labels.insert(match kind {
            EndingKind::Complete => Label::Complete,
            EndingKind::Truncated => Label::Truncated,
            EndingKind::Abandoned => Label::Abandoned,
            EndingKind::Errored => Label::Errored,
        });
        if matches!(turn.shape, Shape::Interleaved(_)) {
            cov.labels.insert(Label::Interleaved);
        }
        if !turn.faults.is_empty() {
            // Only faults the stream delivers count: one that names a call of a turn with
            // none, or that the ending cut off, exercises nothing.
            let rendered = rendered();
            for o in &rendered.origins {
                if let Origin::Fault { fault } = *o {
                    cov.labels.insert(match turn.faults[fault as usize].kind.class() {
                        FaultClass::ReplayAnnouncement => Label::ReplayAnnouncement,
                        FaultClass::UnannouncedFragment => Label::UnannouncedFragment,
                        FaultClass::FragmentAfterStop => Label::FragmentAfterStop,
                        FaultClass::DoneMismatch => Label::DoneMismatch,
                    });
                }
            }
            // A done mismatch is no event of its own: it rides on the call's terminal, and
            // counts when that terminal is delivered with arguments other than the call's.
            for (event, origin) in rendered.events.iter().zip(&rendered.origins) {
                if let (Event::CallStop { arguments: Some(a), .. }, Origin::CallStop { block }) =
                    (event, origin)
                {
                    if let Some(Block::Call(c)) = turn.blocks.get(*block as usize) {
                        if **a != c.arguments {
                            cov.labels.insert(Label::DoneMismatch);
                        }
                    }
                }
            }
        }
        let mut seen_call = false;
        let mut text_pending = false;
        let mut keysets: Vec<(&str, Vec<&str>)> = Vec::new();
        for (at, block) in turn.blocks.iter().enumerate() {
            let call = match block {
                Block::Text(_) => {
                    if seen_call {
                        cov.labels.insert(Label::TextAfterCall);
                    }
                    text_pending = true;
                    continue;
                }
                Block::Foreign(_) => continue,
                Block::Call(c) => c,
            };
            if text_pending {
                cov.labels.insert(Label::TextBeforeCall);
            }
            seen_call = true;
            cov.enter(Scope::HasCall);
            let args = call.arguments.as_str();
            // The lexer's flags of the split offsets only: one pass, no flag per byte.
            // (Splits a generator made are normal already: no copy of them then.)
            let mut prev = 0;
            let normal = call.splits.iter().all(|&s| {
                let ordered = prev <= s;
                prev = s;
                ordered && args.is_char_boundary(s)
            });
            let copied;
            let splits: &[usize] = if normal {
                &call.splits
            } else {
                copied = normalized_splits(args, &call.splits);
                &copied
            };
            let mut lexed = Lexed::default();
            let vectors = std::mem::take(&mut spare);
            let scan = lex::scan_observed_into(args, splits, &mut lexed, vectors);
            classify_splits(args, splits, &scan.flags, lexer_pass, &mut cov);
            if args.len() >= 400 {
                cov.labels.insert(Label::LongArguments);
            }
            if args.len() >= crate::HUGE_MIN {
                cov.labels.insert(Label::HugeArguments);
            }
            let mut keys: Vec<&str> = scan.top_keys.iter().map(|r| &args[r.clone()]).collect();
            keys.sort_unstable();
            shape_labels(args, &call.splits, &scan, &keys, &mut cov);
            let facts = if lexed.unreliable || !lexer_pass {
                // The lexer gave up somewhere (or the old passes are asked for): they read on.
                unicode_labels(args, &mut cov);
                document_labels(args, &mut cov)
            } else {
                cov.labels.0 |= lexed.labels.0;
                if scan.deepest >= 128 {
                    cov.labels.insert(Label::DeepNesting);
                }
                lexed.facts
            };
            let schema = turn.schema_of(&call.name);
            if schema.is_some() {
                cov.enter(Scope::HasSchemaCall);
            }
            // Strictly, as the oracle parses.
            let parses = if args.is_empty() {
                cov.labels.insert(Label::EmptyArguments);
                if let Some(schema) = schema {
                    if doc::violates(schema, &serde_json::Value::Object(Default::default())) {
                        cov.labels.insert(Label::SchemaViolation);
                    }
                }
                true
            } else if scan.status != Status::Valid {
                // The lexer refuses only what the strict parser refuses (its tests hold it
                // to that), so the parser is asked only about what the lexer accepts.
                cov.enter(Scope::HasArgumentBytes);
                false
            } else {
                cov.enter(Scope::HasArgumentBytes);
                // The oracle's parse where it made one (a value tree), else one made here.
                let (parses, violates) = match parsed(stream, at) {
                    Some(value) => (
                        value.is_some(),
                        matches!((schema, value), (Some(s), Some(v)) if doc::violates(s, v)),
                    ),
                    None => parse_strictly(args, schema, &scan, &facts, lexer_pass),
                };
                if violates {
                    cov.labels.insert(Label::SchemaViolation);
                }
                parses
            };
            if !parses {
                if scan.status == Status::Incomplete {
                    if kind == EndingKind::Complete {
                        cov.labels.insert(Label::LyingComplete);
                    }
                } else {
                    cov.labels.insert(Label::InvalidDocument);
                }
            }
            if keysets.iter().any(|(n, k)| *n == call.name && *k == keys) {
                cov.labels.insert(Label::SameToolTwice);
            }
            keysets.push((&call.name, keys));
            spare = scan.into();
        }
        if keysets.len() >= 2 {
            cov.enter(Scope::HasMultiCallTurn);
        }
    }
    SPARE.set(spare);
    cov
}

/// Whether a document the lexer accepts parses strictly, as the oracle parses, and whether it
/// breaks `schema`, without a value tree. Past serde_json's default 128 levels the parse goes
/// on (the lexer bounded the depth, so the recursion is bounded too); deeper than the oracle
/// parses is unparseable.
///
/// `lexer_pass`: a document the lexer reads as one value is known to parse (`false`: it is
/// parsed all the same, the tests' oracle).
fn parse_strictly(
    args: &str,
    schema: Option<&serde_json::Value>,
    scan: &lex::Scan,
    facts: &DocFacts,
    lexer_pass: bool,
) -> (bool, bool) {
    if scan.deepest > toolcert_schema::document::MAX_DEPTH {
        return (false, false);
    }
    let deep = scan.deepest >= SERDE_DEPTH_LIMIT;
    // A document the lexer reads as one value parses unless it has a lone surrogate, which the
    // parse refuses wherever it is (the tests hold the lexer and the parse to that): only its
    // schema is to be checked.
    if lexer_pass && facts.lone_surrogate {
        return (false, false);
    }
    let sure = lexer_pass;
    let (lenient, violates) = match schema {
        Some(schema) => {
            match sure
                .then(|| {
                    crate::violates::lexed_violates(args, schema, &scan.top_values, facts.escaped_dollar)
                })
                .flatten()
            {
                Some(violates) => (true, violates),
                // The schema checked in the parse's walk.
                None => match crate::violates::parse_violates(args, schema, deep) {
                    Some(violates) => (true, violates),
                    None => (false, false),
                },
            }
        }
        None if sure => (true, false),
        None => {
            let mut de = serde_json::Deserializer::from_str(args);
            if deep {
                de.disable_recursion_limit();
            }
            let ok = <serde::de::IgnoredAny as serde::Deserialize>::deserialize(&mut de)
                .and_then(|_| de.end())
                .is_ok();
            (ok, false)
        }
    };
    // What the walk skips without decoding (it neither decodes a string's escapes nor reads a
    // number as a double), the oracle's parse refuses.
    (lenient && !facts.lone_surrogate && !facts.overflowing_number, violates)
}

/// The dialect events a turn's wire rendering sends ([`toolcert_scenario::WireEvents`]),
/// counted where the dialect that reads them would send them.
fn dialect_labels<'c, 't: 'c>(
    turn: &'t toolcert_scenario::Turn,
    rendered: impl Fn() -> &'c toolcert_render::Rendered<'t>,
    cov: &mut Coverage,
) {
    use toolcert_scenario::{Ending, MismatchIn, UnknownKind};
    let w = &turn.wire;
    let stopped = matches!(turn.ending, Ending::Stop(_));
    if matches!(turn.shape, Shape::PerCall) {
        cov.enter(Scope::PerCallTurn);
        if stopped && turn.calls().next().is_some() {
            cov.labels.insert(Label::CompletedRepeatsCalls);
        }
        if w.spliced.is_some() {
            cov.labels.insert(Label::SplicedGeneration);
        }
        for u in &w.unknown {
            cov.labels.insert(match u.kind {
                UnknownKind::Delta => Label::UnknownDelta,
                UnknownKind::Event => Label::UnknownEvent,
            });
        }
        let mismatched =
            turn.faults.iter().any(|f| matches!(f.kind, toolcert_scenario::FaultKind::DoneMismatch { .. }));
        if !w.item_done_only.is_empty() || (mismatched && !w.mismatch_in.is_both()) {
            let rendered = rendered();
            if !toolcert_render::item_done_only(turn, rendered).is_empty() {
                cov.labels.insert(Label::ItemDoneOnly);
            }
            // A mismatch the stream delivers (its terminal repeats other arguments).
            let delivered = rendered.events.iter().zip(&rendered.origins).any(|(e, o)| match (e, o) {
                (Event::CallStop { arguments: Some(a), .. }, Origin::CallStop { block }) => {
                    matches!(turn.blocks.get(*block as usize), Some(Block::Call(c)) if **a != c.arguments)
                }
                _ => false,
            });
            if delivered {
                match w.mismatch_in {
                    MismatchIn::ItemDone => cov.labels.insert(Label::DoneMismatchItemOnly),
                    MismatchIn::ArgumentsDone => cov.labels.insert(Label::DoneMismatchArgumentsOnly),
                    MismatchIn::Both => {}
                }
            }
        }
    } else {
        cov.enter(Scope::InterleavedTurn);
        if w.chat_prelude {
            cov.labels.insert(Label::ChatPrelude);
        }
        if stopped {
            cov.labels.insert(if w.usage_without_choices {
                Label::UsageWithoutChoices
            } else {
                Label::UsageEmptyChoices
            });
        }
        // A stream cut inside its next event never reaches a `[DONE]`.
        if w.done_without_finish && !stopped && turn.transport.tail.is_none() {
            cov.labels.insert(Label::DoneWithoutFinish);
            if matches!(turn.ending, Ending::Abandoned { after: 0, .. }) {
                cov.labels.insert(Label::DoneAlone);
            }
        }
    }
}

/// Tool-name spellings and pairs, text naming a tool, and how the calls are numbered.
fn classify_names_and_indices(turn: &toolcert_scenario::Turn, cov: &mut Coverage) {
    let mut names: Vec<&str> = Vec::with_capacity(4);
    let interleaved = matches!(turn.shape, Shape::Interleaved(_));
    for (ordinal, c) in turn.calls().enumerate() {
        let n = c.name.as_str();
        if !n.bytes().all(|b| b.is_ascii_lowercase() || b == b'_') {
            cov.labels.insert(Label::ToolNameSpelling);
        }
        if n.len() == 64 {
            cov.labels.insert(Label::ToolName64);
        }
        if !names.contains(&n) {
            names.push(n);
        }
        if c.index != ordinal as u32 {
            cov.labels.insert(if interleaved { Label::SparseIndices } else { Label::IndicesAcrossText });
        }
    }
    for (i, a) in names.iter().enumerate() {
        for b in &names[i + 1..] {
            if a.eq_ignore_ascii_case(b) {
                cov.labels.insert(Label::ToolNameCasePair);
            } else if a.starts_with(b) || b.starts_with(a) {
                cov.labels.insert(Label::ToolNameSuffixPair);
            }
        }
    }
    if !names.is_empty() {
        for b in &turn.blocks {
            if let Block::Text(t) = b {
                if names.iter().any(|n| t.text.contains(n)) {
                    cov.labels.insert(Label::TextMentionsTool);
                }
            }
        }
    }
}

/// Unicode classes, raw and as `\u` escapes, in argument or text bytes.
fn unicode_labels(s: &str, cov: &mut Coverage) {
    let unit = |c: u32, cov: &mut Coverage| unicode_unit(c, &mut cov.labels);
    let b = s.as_bytes();
    raw_unicode_labels(s, &mut cov.labels);
    let mut i = 0;
    let mut pending_high: Option<u32> = None;
    while let Some(off) = memchr::memchr(b'\\', &b[i..]) {
        let at = i + off;
        let Some(&next) = b.get(at + 1) else { break };
        if next != b'u' {
            pending_high = None;
            i = at + 2;
            continue;
        }
        let hex = b.get(at + 2..at + 6).and_then(|h| std::str::from_utf8(h).ok());
        let Some(v) = hex.and_then(|h| u32::from_str_radix(h, 16).ok()) else {
            i = at + 2;
            continue;
        };
        match (pending_high.take(), v) {
            (Some(hi), 0xDC00..=0xDFFF) => unit(0x10000 + ((hi - 0xD800) << 10) + (v - 0xDC00), cov),
            (_, 0xD800..=0xDBFF) => pending_high = Some(v),
            (_, v) => unit(v, cov),
        }
        i = at + 6;
    }
}

/// Whether a character starting with byte `b` may have a class of [`unicode_unit`] or be a
/// line separator: U+0300..U+036F (lead byte `CC`, `CD`), U+1000..U+2FFF (`E1`, `E2`),
/// U+F000..U+FFFF (`EF`), beyond U+FFFF (`F0`..`F4`).
#[inline(always)]
fn may_label(b: u8) -> bool {
    (b & 0xFE == 0xCC) | (b == 0xE1) | (b == 0xE2) | (b >= 0xEF)
}

/// The labels of the raw (unescaped) characters of `s`: only those whose lead byte may
/// start a labelled one are decoded, found sixteen bytes at a time (the test vectorizes).
fn raw_unicode_labels(s: &str, labels: &mut LabelSet) {
    let b = s.as_bytes();
    let one = |at: usize, labels: &mut LabelSet| {
        // Of the characters beyond U+FFFF, only noncharacters (U+nFFFE, U+nFFFF) have a
        // class, and their third byte is 0xBF.
        if b[at] >= 0xF0 && b.get(at + 2) != Some(&0xBF) {
            return;
        }
        let c = s[at..].chars().next().expect("a character starts at a lead byte");
        if c == '\u{2028}' || c == '\u{2029}' {
            labels.insert(Label::RawLineSeparator);
        }
        unicode_unit(c as u32, labels);
    };
    let chunks = b.chunks_exact(16);
    let rest = chunks.remainder();
    for (n, chunk) in chunks.enumerate() {
        if chunk.iter().fold(false, |m, &x| m | may_label(x)) {
            for (k, &x) in chunk.iter().enumerate() {
                if may_label(x) {
                    one(n * 16 + k, labels);
                }
            }
        }
    }
    // The last bytes as one more chunk (zeros after them are ASCII).
    let mut last = [0u8; 16];
    last[..rest.len()].copy_from_slice(rest);
    if last.iter().fold(false, |m, &x| m | may_label(x)) {
        let base = b.len() - rest.len();
        for (k, &x) in rest.iter().enumerate() {
            if may_label(x) {
                one(base + k, labels);
            }
        }
    }
}

/// The Unicode class of one code point (raw or escaped), if it has one.
fn unicode_unit(c: u32, labels: &mut LabelSet) {
    let label = match c {
        0x300..=0x36F => Label::UnicodeDecomposed,
        0x212B | 0x2126 | 0xFB00..=0xFB06 | 0xFF01..=0xFF5E | 0x1100..=0x11FF => Label::UnicodeNormalizes,
        0x200B..=0x200F | 0x202A..=0x202E | 0x2066..=0x2069 => Label::UnicodeInvisible,
        0xFEFF => Label::ByteOrderMark,
        0xFDD0..=0xFDEF | 0xFFFE | 0xFFFF => Label::Noncharacter,
        c if c > 0xFFFF && c & 0xFFFE == 0xFFFE => Label::Noncharacter,
        _ => return,
    };
    labels.insert(label);
}

/// What [`unicode_labels`] and the token pass of [`document_labels`] find, gathered from the
/// lexer's own pass instead ([`lex::scan_observed_into`]): the same labels and facts for every
/// document the lexer does not find [`Lexed::unreliable`] (the only tokens and characters of
/// such a document are its strings' and values', which both passes read alike).
#[derive(Default)]
struct Lexed {
    labels: LabelSet,
    facts: DocFacts,
    /// The lexer's calls do not say what the passes read ([`lex::Observer::unreliable`]): a
    /// lexical error, or a top-level value glued to the one before.
    unreliable: bool,
    /// A high surrogate escape waiting for its low half, as [`unicode_labels`] pairs them
    /// (across anything but another escape).
    pending_high: Option<u32>,
}

impl lex::Observer for Lexed {
    fn number(&mut self, text: &str) {
        // Most numbers are short integers without a leading zero: nothing to label. (Sixteen
        // digits may pass 2^53.)
        let b = text.as_bytes();
        let digits = b.strip_prefix(b"-").unwrap_or(b);
        if digits.len() <= 15
            && digits.first().is_some_and(|d| (b'1'..=b'9').contains(d))
            && digits.iter().all(u8::is_ascii_digit)
        {
            return;
        }
        // Any other in one pass (what `number_labels` finds: the tests hold them to that).
        self.facts.overflowing_number |= long_number_labels(text, &mut self.labels);
    }

    fn unicode_escape(&mut self, v: u32) {
        self.facts.escaped_dollar |= v == 0x24;
        match (self.pending_high.take(), v) {
            (Some(hi), 0xDC00..=0xDFFF) => {
                unicode_unit(0x10000 + ((hi - 0xD800) << 10) + (v - 0xDC00), &mut self.labels)
            }
            (_, 0xD800..=0xDBFF) => self.pending_high = Some(v),
            (_, v) => unicode_unit(v, &mut self.labels),
        }
    }

    fn other_escape(&mut self) {
        self.pending_high = None;
    }

    fn non_ascii(&mut self, c: char) {
        if c == '\u{2028}' || c == '\u{2029}' {
            self.labels.insert(Label::RawLineSeparator);
        }
        unicode_unit(c as u32, &mut self.labels);
    }

    fn text(&mut self, s: &str) {
        raw_unicode_labels(s, &mut self.labels);
    }

    fn lone_surrogate(&mut self) {
        self.labels.insert(Label::LoneSurrogate);
        self.facts.lone_surrogate = true;
    }

    fn unreliable(&mut self) {
        self.unreliable = true;
    }
}

/// What the label pass of one document found that decides whether it parses.
#[derive(Default)]
struct DocFacts {
    /// A `\u` surrogate escape that is not half of a pair.
    lone_surrogate: bool,
    /// A number outside strings that no double holds (`1e400`).
    overflowing_number: bool,
    /// A `\u0024` escape (a `$`: serde_json's number key has one). Only the lexer's pass tells.
    escaped_dollar: bool,
}

/// Whitespace-only and non-object documents, empty fragments, duplicate and long keys
/// (`keys`: the top-level keys, sorted), splits between surrogate halves.
fn shape_labels(args: &str, splits: &[usize], scan: &lex::Scan, keys: &[&str], cov: &mut Coverage) {
    if args.is_empty() {
        if !splits.is_empty() {
            cov.labels.insert(Label::AllEmptyFragments);
        }
        return;
    }
    let b = args.as_bytes();
    let first = b.iter().position(|c| !matches!(c, b' ' | b'\t' | b'\n' | b'\r'));
    match first {
        None => cov.labels.insert(Label::WhitespaceOnly),
        Some(f) if b[f] != b'{' && scan.status == Status::Valid => cov.labels.insert(Label::NotObject),
        _ => {}
    }
    if keys.iter().any(|k| k.len() >= 1024) {
        cov.labels.insert(Label::LongKey);
    }
    // Of one document (two written end to end repeat their keys without duplicating any).
    if scan.status == Status::Valid && keys.windows(2).any(|w| w[0] == w[1]) {
        cov.labels.insert(Label::DuplicateKeys);
    }
    // A split between the two escapes of a surrogate pair (`\ud83d` | `\ude00`).
    for &s in splits {
        if s >= 6 && s + 2 <= b.len() && b[s - 6] == b'\\' && b[s - 5] == b'u' && &b[s..s + 2] == b"\\u" {
            let hi = std::str::from_utf8(&b[s - 4..s]).ok().and_then(|h| u32::from_str_radix(h, 16).ok());
            if hi.is_some_and(|h| (0xD800..=0xDBFF).contains(&h)) {
                cov.labels.insert(Label::SurrogatesSplit);
            }
        }
    }
}

/// Number forms, nesting depth and lone surrogates, in a pass of its own that reads any
/// bytes (the lexer's pass finds the same in documents it does not call invalid).
fn document_labels(args: &str, cov: &mut Coverage) -> DocFacts {
    let mut facts = DocFacts::default();
    let b = args.as_bytes();
    let lone = |cov: &mut Coverage, facts: &mut DocFacts| {
        cov.labels.insert(Label::LoneSurrogate);
        facts.lone_surrogate = true;
    };
    // One pass outside strings: tokens that look like numbers, and depth.
    let (mut depth, mut deepest) = (0usize, 0usize);
    let mut i = 0;
    while i < b.len() {
        match b[i] {
            b'"' => {
                // Skip the string, noting lone surrogates among its escapes.
                i += 1;
                let mut high = false;
                while i < b.len() && b[i] != b'"' {
                    if !high && b[i] != b'\\' {
                        // Plain content up to the next quote or escape: nothing to note.
                        i = memchr::memchr2(b'"', b'\\', &b[i..]).map_or(b.len(), |n| i + n);
                        continue;
                    }
                    if b[i] == b'\\' {
                        let v = (b.get(i + 1) == Some(&b'u'))
                            .then(|| b.get(i + 2..i + 6))
                            .flatten()
                            .and_then(|h| std::str::from_utf8(h).ok())
                            .and_then(|h| u32::from_str_radix(h, 16).ok());
                        match v {
                            Some(0xD800..=0xDBFF) => {
                                if high {
                                    lone(cov, &mut facts);
                                }
                                high = true;
                                i += 6;
                                continue;
                            }
                            Some(0xDC00..=0xDFFF) if high => high = false,
                            Some(0xDC00..=0xDFFF) => lone(cov, &mut facts),
                            _ => {}
                        }
                        if high && v.is_none() {
                            lone(cov, &mut facts);
                            high = false;
                        }
                        i += 2;
                        continue;
                    }
                    if high {
                        lone(cov, &mut facts);
                        high = false;
                    }
                    i += 1;
                }
                if high {
                    lone(cov, &mut facts);
                }
                i += 1;
            }
            b'[' | b'{' => {
                depth += 1;
                deepest = deepest.max(depth);
                i += 1;
            }
            b']' | b'}' => {
                depth = depth.saturating_sub(1);
                i += 1;
            }
            // Words other than `NaN` and `Infinity` are literals or garbage, not numbers.
            c if c.is_ascii_alphabetic() && c != b'N' && c != b'I' => {
                while i < b.len() && b[i].is_ascii_alphanumeric() {
                    i += 1;
                }
            }
            c if c == b'-' || c == b'+' || c == b'.' || c.is_ascii_alphanumeric() => {
                let end = b[i..]
                    .iter()
                    .position(|&c| !(c.is_ascii_alphanumeric() || matches!(c, b'-' | b'+' | b'.')))
                    .map_or(b.len(), |n| i + n);
                facts.overflowing_number |= number_labels(&args[i..end], &mut cov.labels);
                i = end;
            }
            _ => i += 1,
        }
    }
    if deepest >= 128 {
        cov.labels.insert(Label::DeepNesting);
    }
    facts
}

/// The classes of one number-like token outside strings; `true` when it is a number no
/// double holds (the number rule refuses its document).
fn number_labels(t: &str, labels: &mut LabelSet) -> bool {
    if matches!(t, "true" | "false" | "null") {
        return false;
    }
    if !is_json_number(t) {
        labels.insert(Label::InvalidNumber);
        return false;
    }
    let digits = t.trim_start_matches('-');
    let exp = digits.find(['e', 'E']);
    if exp.is_some() {
        labels.insert(Label::ExponentForm);
    }
    // Surely finite from its text (no exponent, under 300 digits), else read as a double.
    let overflowing = (exp.is_some() || t.len() >= 300) && t.parse::<f64>().is_ok_and(f64::is_infinite);
    let mantissa = &digits[..exp.unwrap_or(digits.len())];
    if !mantissa.contains('.') && exp.is_none() {
        // An integer: beyond 2^53, beyond 64 bits.
        // (Fifteen digits stay below 10^15 < 2^53: no need to read them.)
        match if mantissa.len() <= 15 { Ok(0) } else { mantissa.parse::<u128>() } {
            Ok(v) if v > 1 << 53 => {
                labels.insert(Label::BigInteger);
                let beyond = if t.starts_with('-') { v > 1 << 63 } else { v > u128::from(u64::MAX) };
                if beyond {
                    labels.insert(Label::Beyond64Bit);
                }
            }
            Ok(_) => {}
            Err(_) => {
                labels.insert(Label::BigInteger);
                labels.insert(Label::Beyond64Bit);
            }
        }
    }
    let significant = mantissa.bytes().filter(u8::is_ascii_digit).skip_while(|&d| d == b'0').count();
    if mantissa.contains('.') && significant > 17 {
        labels.insert(Label::LongDecimal);
    }
    if mantissa.bytes().all(|d| d == b'0' || d == b'.') && (t.starts_with('-') || mantissa.contains('.')) {
        labels.insert(Label::SignedZero);
    }
    overflowing
}

/// [`number_labels`] of a long number token in one pass over its bytes (the grammar, the
/// digits' counts), a double read only where the digits before the point and the exponent may
/// take the value past 10^308 (below that no double overflows), an integer's size told from its
/// digits.
fn long_number_labels(t: &str, labels: &mut LabelSet) -> bool {
    let b = t.as_bytes();
    let neg = b.first() == Some(&b'-');
    let mut i = usize::from(neg);
    let run = |i: usize| b[i..].iter().position(|d| !d.is_ascii_digit()).unwrap_or(b.len() - i);
    // Digits from the first that is not zero on (none: the number is a zero).
    let mut significant = 0;
    let whole = match b.get(i) {
        Some(b'0') => 1,
        Some(c) if c.is_ascii_digit() => {
            significant = run(i);
            significant
        }
        _ => 0,
    };
    i += whole;
    let mut valid = whole > 0;
    let dot = b.get(i) == Some(&b'.');
    if dot {
        i += 1;
        let n = run(i);
        valid &= n > 0;
        significant +=
            if significant > 0 { n } else { n - b[i..i + n].iter().take_while(|&&d| d == b'0').count() };
        i += n;
    }
    let mantissa_end = i;
    let exp = matches!(b.get(i), Some(b'e' | b'E'));
    let mut exp_value: i64 = 0;
    if exp {
        i += 1;
        let minus = b.get(i) == Some(&b'-');
        if matches!(b.get(i), Some(b'+' | b'-')) {
            i += 1;
        }
        let s = i;
        while let Some(&d) = b.get(i).filter(|d| d.is_ascii_digit()) {
            exp_value = exp_value.saturating_mul(10).saturating_add(i64::from(d - b'0'));
            i += 1;
        }
        valid &= i > s;
        if minus {
            exp_value = -exp_value;
        }
    }
    if !valid || i != b.len() {
        labels.insert(Label::InvalidNumber);
        return false;
    }
    if exp {
        labels.insert(Label::ExponentForm);
    }
    let may_overflow = (exp || t.len() >= 300) && (whole as i64).saturating_add(exp_value) > 308;
    let overflowing = may_overflow && t.parse::<f64>().is_ok_and(f64::is_infinite);
    if !dot && !exp && whole > 15 {
        // An integer: beyond 2^53, beyond 64 bits, compared as digits (no leading zero: the
        // longer is the greater; one past u128 is beyond both, as its failed parse is).
        let int = &b[usize::from(neg)..mantissa_end];
        let above = |bound: &[u8]| int.len() > bound.len() || (int.len() == bound.len() && int > bound);
        if above(b"9007199254740992") {
            labels.insert(Label::BigInteger);
            if above(if neg { b"9223372036854775808" } else { b"18446744073709551615" }) {
                labels.insert(Label::Beyond64Bit);
            }
        }
    }
    if dot && significant > 17 {
        labels.insert(Label::LongDecimal);
    }
    if significant == 0 && (neg || dot) {
        labels.insert(Label::SignedZero);
    }
    overflowing
}

/// RFC 8259's number grammar: `-? (0 | [1-9][0-9]*) (. [0-9]+)? ([eE] [+-]? [0-9]+)?`.
fn is_json_number(t: &str) -> bool {
    let b = t.as_bytes();
    let mut i = usize::from(b.first() == Some(&b'-'));
    let digits = |i: &mut usize| {
        let s = *i;
        while *i < b.len() && b[*i].is_ascii_digit() {
            *i += 1;
        }
        *i - s
    };
    match b.get(i) {
        Some(b'0') => i += 1,
        Some(c) if c.is_ascii_digit() => {
            digits(&mut i);
        }
        _ => return false,
    }
    if b.get(i) == Some(&b'.') {
        i += 1;
        if digits(&mut i) == 0 {
            return false;
        }
    }
    if matches!(b.get(i), Some(b'e' | b'E')) {
        i += 1;
        if matches!(b.get(i), Some(b'+' | b'-')) {
            i += 1;
        }
        if digits(&mut i) == 0 {
            return false;
        }
    }
    i == b.len()
}

/// `splits` normalized, `flags[n]` the lexer's flags of `splits[n]`. `lexer_pass`: a prefix
/// the lexer reads as one object parses (`false`: it is parsed all the same, the tests' oracle).
fn classify_splits(args: &str, splits: &[usize], flags: &[u16], lexer_pass: bool, cov: &mut Coverage) {
    debug_assert_eq!(splits.len(), flags.len());
    let len = args.len();
    // The fragments' sizes, and the interior splits' flags together (one pass): a label each.
    let (mut empty, mut one, mut whole, mut prefix_parses) = (false, false, false, false);
    let mut any = 0;
    let mut start = 0;
    for (&end, &f) in splits.iter().zip(flags) {
        let n = end - start;
        (empty, one, whole) = (empty | (n == 0), one | (n == 1), whole | (n == len));
        if end != 0 && end < len {
            any |= f;
            // The lexer reads the prefix as one whole value, with serde_json's grammar: the
            // parse that skips a value (`IgnoredAny`) checks that grammar only (no depth limit,
            // no surrogate pairing), so it accepts the prefix too (a test holds them to that).
            prefix_parses |= f & flag::PREFIX_PARSES != 0
                && (lexer_pass || serde_json::from_str::<serde::de::IgnoredAny>(&args[..end]).is_ok());
        }
        start = end;
    }
    let n = len - start;
    empty |= n == 0 && !(len == 0 && splits.is_empty());
    one |= n == 1;
    // (`n == len` of a split fragment: the other fragments are empty.)
    whole = (whole || n == len) && len > 0;
    for (hit, label) in [
        (empty, Label::EmptyFragment),
        (one, Label::OneByteFragment),
        (whole, Label::WholeFragment),
        (prefix_parses, Label::AfterBracePrefixParses),
        (any & flag::NEXT_TO_SPACE != 0, Label::InsideStringNextToSpace),
        (any & flag::ESCAPE != 0, Label::BetweenBackslashAndEscape),
        (any & flag::UNICODE != 0, Label::InsideUnicodeEscape),
        (any & flag::NESTED != 0, Label::InsideNestedObject),
        (any & flag::KEY_COLON != 0, Label::BetweenKeyAndColon),
    ] {
        if hit {
            cov.labels.insert(label);
        }
    }
}

/// How often one label was hit, out of the cases it applies to.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize)]
pub struct LabelCount {
    pub count: u64,
    pub applicable: u64,
}

impl LabelCount {
    /// `None` when the label applied to no case.
    pub fn percent(&self) -> Option<f64> {
        (self.applicable > 0).then(|| 100.0 * self.count as f64 / self.applicable as f64)
    }
}

/// The prefix of a profile behaviour's key in a coverage table (`profile:chat_index_zero`),
/// beside the labels' keys.
pub const PROFILE_KEY: &str = "profile:";

/// Label counts over many cases.
///
/// A label applies to a case when the case is in the label's one scope, so a count of the
/// cases in each scope stands for every label's denominator: counting a case costs a step
/// per scope it is in and per label it carries, not per label that applies.
#[derive(Clone, Debug)]
pub struct CoverageStats {
    pub cases: u64,
    /// By `label as usize` (the order of [`Label::ALL`]): the counts given to
    /// [`CoverageStats::from_counts`]; the cases added since count on top.
    counts: [LabelCount; Label::ALL.len()],
    /// By `label as usize`: cases added since that carried the label in its scope.
    hits: [u64; Label::ALL.len()],
    /// By `scope as usize`: cases added since that were in the scope.
    in_scope: [u64; 16],
    /// The server profile's behaviours (its [`Quirks`] flags, in registry order): the cases
    /// whose bytes showed each, of the cases counted at that profile. Empty for a setting at
    /// its provider's own profile, and for the events level (no bytes to show them).
    profile: Vec<(&'static str, LabelCount)>,
}

impl PartialEq for CoverageStats {
    fn eq(&self, other: &Self) -> bool {
        self.cases == other.cases && self.iter().eq(other.iter()) && self.profile == other.profile
    }
}

impl Eq for CoverageStats {}

// `Label::ALL` lists the labels in their order: `counts[l as usize]` is label `l`'s.
const _: () = {
    let mut i = 0;
    while i < Label::ALL.len() {
        assert!(Label::ALL[i] as usize == i);
        i += 1;
    }
};

impl Default for CoverageStats {
    fn default() -> Self {
        CoverageStats {
            cases: 0,
            counts: [LabelCount::default(); Label::ALL.len()],
            hits: [0; Label::ALL.len()],
            in_scope: [0; 16],
            profile: Vec::new(),
        }
    }
}

impl CoverageStats {
    pub fn new() -> Self {
        Self::default()
    }

    /// Stats from counts kept elsewhere (a report's coverage table, merged shards' tables
    /// added up) over `cases` cases; labels not given count zero.
    pub fn from_counts(cases: u64, counts: impl IntoIterator<Item = (Label, LabelCount)>) -> Self {
        let mut stats = Self { cases, ..Self::default() };
        for (l, c) in counts {
            stats.counts[l as usize] = c;
        }
        stats
    }

    /// Counts one case of a setting at a server profile that sends the behaviours `sent`:
    /// each of them counts the case, and counts it shown when the case's bytes showed it
    /// (`shown`, as [`toolcert_scenario::ServerProfile`] detection reads them back).
    pub fn add_profile(&mut self, sent: Quirks, shown: Quirks) {
        let shown: Vec<&str> = shown.set().collect();
        for flag in sent.set() {
            let at = match self.profile.iter().position(|(f, _)| *f == flag) {
                Some(at) => at,
                None => {
                    self.profile.push((flag, LabelCount::default()));
                    self.profile.len() - 1
                }
            };
            let c = &mut self.profile[at].1;
            c.applicable += 1;
            c.count += u64::from(shown.contains(&flag));
        }
    }

    /// Profile behaviour counts kept elsewhere (a report's table), by flag name; a name that
    /// is no [`Quirks`] flag is `Err` with the name.
    pub fn with_profile_counts<'n>(
        mut self,
        counts: impl IntoIterator<Item = (&'n str, LabelCount)>,
    ) -> Result<Self, &'n str> {
        for (name, c) in counts {
            let flag = Quirks::PLAIN.flags().into_iter().map(|(f, _)| f).find(|f| *f == name).ok_or(name)?;
            self.profile.push((flag, c));
        }
        // In the flags' order, as a run counts them (a merged table comes sorted by key).
        let order = |f: &str| Quirks::PLAIN.flags().iter().position(|(g, _)| *g == f);
        self.profile.sort_by_key(|(f, _)| order(f));
        Ok(self)
    }

    /// The profile behaviours counted: flag name, cases showing it, cases counted.
    pub fn profile(&self) -> &[(&'static str, LabelCount)] {
        &self.profile
    }

    /// Classifies `case` and counts it.
    pub fn record(&mut self, case: &Case) -> Coverage {
        let cov = classify(case);
        self.add(&cov);
        cov
    }

    /// [`CoverageStats::record`] with the parses made already ([`classify_with`]).
    pub fn record_with<'p>(&mut self, case: &Case, parsed: &ParsedDocs<'p>) -> Coverage {
        let cov = classify_with(case, parsed, None);
        self.add(&cov);
        cov
    }

    pub fn add(&mut self, cov: &Coverage) {
        self.cases += 1;
        if let Some((sent, shown)) = cov.profile {
            self.add_profile(sent, shown);
        }
        let mut scopes = cov.scopes;
        while scopes != 0 {
            self.in_scope[scopes.trailing_zeros() as usize] += 1;
            scopes &= scopes - 1;
        }
        // The labels whose scope the case is in, as one set: a step per label carried.
        let sets = scope_labels();
        let applicable = (0..16).filter(|&b| cov.scopes & (1 << b) != 0).fold(0, |m, b| m | sets[b].0);
        let mut bits = cov.labels.0 & applicable;
        while bits != 0 {
            self.hits[bits.trailing_zeros() as usize] += 1;
            bits &= bits - 1;
        }
    }

    pub fn get(&self, label: Label) -> LabelCount {
        let c = self.counts[label as usize];
        LabelCount {
            count: c.count + self.hits[label as usize],
            applicable: c.applicable + self.in_scope[label.scope() as usize],
        }
    }

    pub fn iter(&self) -> impl Iterator<Item = (Label, LabelCount)> + '_ {
        Label::ALL.iter().map(|&l| (l, self.get(l)))
    }

    /// Labels of `groups` that applied to some case and were hit in fewer than `percent`%
    /// of those cases.
    pub fn below(&self, percent: f64, groups: &[LabelGroup]) -> Vec<(Label, LabelCount)> {
        self.iter()
            .filter(|(l, c)| groups.contains(&l.group()) && c.percent().is_some_and(|p| p < percent))
            .collect()
    }
}

impl Serialize for CoverageStats {
    /// `{label: {count, applicable, percent}}`, labels in table order.
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        #[derive(Serialize)]
        struct Entry {
            count: u64,
            applicable: u64,
            percent: Option<f64>,
        }
        let mut map = s.serialize_map(Some(self.counts.len() + self.profile.len()))?;
        for (l, c) in self.iter() {
            let percent = c.percent().map(|p| (p * 100.0).round() / 100.0);
            map.serialize_entry(l.name(), &Entry { count: c.count, applicable: c.applicable, percent })?;
        }
        for (flag, c) in &self.profile {
            let percent = c.percent().map(|p| (p * 100.0).round() / 100.0);
            let key = format!("{PROFILE_KEY}{flag}");
            map.serialize_entry(&key, &Entry { count: c.count, applicable: c.applicable, percent })?;
        }
        map.end()
    }
}

impl fmt::Display for CoverageStats {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        writeln!(f, "coverage over {} {}", self.cases, if self.cases == 1 { "case" } else { "cases" })?;
        let mut group = None;
        for (l, c) in self.iter() {
            if group != Some(l.group()) {
                group = Some(l.group());
                let title = match l.group() {
                    LabelGroup::Split => "split classes (of cases with argument bytes)",
                    LabelGroup::Ending => "endings (of all cases)",
                    LabelGroup::Fault => "faults delivered (of all cases)",
                    LabelGroup::Shape => "shapes",
                    LabelGroup::Size => "size (of cases with a call)",
                    LabelGroup::Names => "tool names (of all cases)",
                    LabelGroup::Unicode => "unicode, in arguments or text (of all cases)",
                    LabelGroup::Numbers => "numbers (of cases with argument bytes)",
                    LabelGroup::Degenerate => "degenerate documents (of cases with a call)",
                    LabelGroup::Transport => "cut inside an event (of cases with a transport)",
                    LabelGroup::Indices => "indices (of cases with a call)",
                    LabelGroup::NoCall => "turns without calls, by ending (of all cases)",
                    LabelGroup::Dialect => "dialect events (of the cases whose shape the dialect carries)",
                    LabelGroup::Foreign => "foreign blocks delivered (of all cases)",
                };
                writeln!(f, "  {title}")?;
            }
            match c.percent() {
                Some(p) => {
                    writeln!(f, "    {:<30} {:>6.2}%  {:>7} / {}", l.name(), p, c.count, c.applicable)?
                }
                None => writeln!(f, "    {:<30} {:>7}  {:>7} / {}", l.name(), "n/a", c.count, c.applicable)?,
            }
        }
        if !self.profile.is_empty() {
            writeln!(
                f,
                "  server profile behaviours shown in the bytes (of the cases the profile rendered)"
            )?;
            for (flag, c) in &self.profile {
                let p = c.percent().unwrap_or(0.0);
                writeln!(f, "    {:<30} {:>6.2}%  {:>7} / {}", flag, p, c.count, c.applicable)?;
            }
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::GenConfig;
    use toolcert_scenario::{Call, Ending, StopReason, StreamEnd, TextBlock, Turn};

    /// What the lenient passes would accept but the oracle's strict parse refuses is found by
    /// the label pass: a lone surrogate, a number no double holds.
    #[test]
    fn the_label_pass_finds_what_the_lenient_passes_skip() {
        let facts = |d: &str| {
            let old = document_labels(d, &mut Coverage::default());
            // The lexer's pass finds the same.
            let mut lexed = Lexed::default();
            lex::scan_observed(d, &[], &mut lexed);
            assert_eq!(
                (old.lone_surrogate, old.overflowing_number),
                (lexed.facts.lone_surrogate, lexed.facts.overflowing_number),
                "{d}"
            );
            old
        };
        for refused in [
            r#"{"a":"\ud800"}"#,
            r#"{"a":"x\udc00"}"#,
            r#"{"a":"\ud800\u0041"}"#,
            r#"{"a":1e400}"#,
            r#"{"a":-1E+999}"#,
        ] {
            assert!(serde_json::from_str::<serde::de::IgnoredAny>(refused).is_ok(), "{refused}");
            let f = facts(refused);
            assert!(f.lone_surrogate || f.overflowing_number, "{refused}");
        }
        let long = format!(r#"{{"a":{}}}"#, "9".repeat(400));
        assert!(facts(&long).overflowing_number);
        for accepted in [
            r#"{"a":"\ud83d\ude00"}"#,
            r#"{"a":1e300,"b":"\u00e9"}"#,
            r#"{"a":1e-400}"#,
            r#"{"a":"1e400 in a string"}"#,
            r#"{"a":"\\ud800 is an escaped backslash"}"#,
            "{\"a\":\"\\f\u{3a9}\\u00e9\u{3a9}\"}",
        ] {
            assert!(serde_json::from_str::<serde_json::Value>(accepted).is_ok(), "{accepted}");
            let f = facts(accepted);
            assert!(!f.lone_surrogate && !f.overflowing_number, "{accepted}");
        }
    }

    /// The lexer's depth tells exactly where serde_json's default parse stops (so `classify`
    /// lifts the limit for every document it would refuse for depth alone, and no other), around
    /// the limit and with brackets inside strings.
    #[test]
    fn the_lexers_depth_agrees_with_the_default_parses_limit() {
        let mut docs = Vec::new();
        for n in [1, 126, 127, 128, 129, 300] {
            docs.push(format!("{}{}", "[".repeat(n), "]".repeat(n)));
            docs.push(format!("{}1{}", "{\"a\":[".repeat(n / 2), "]}".repeat(n / 2)));
            docs.push(format!(
                "{{\"s\": \"{}\", \"t\": {}{}}}",
                "[{\\\"".repeat(n),
                "[".repeat(n.min(100)),
                "]".repeat(n.min(100))
            ));
        }
        for doc in &docs {
            let scan = lex::scan_at(doc, &[]);
            assert_eq!(scan.status, Status::Valid, "{doc}");
            let refused = serde_json::from_str::<serde_json::Value>(doc).is_err();
            assert_eq!(scan.deepest >= SERDE_DEPTH_LIMIT, refused, "{doc}");
        }
    }

    /// Labels and facts of one document by the lexer's pass and by the passes of their own
    /// (`None` for the lexer's where its calls are unreliable: the old passes read on).
    /// The labels, and whether a lone surrogate and an overflowing number were found.
    type Found = (LabelSet, bool, bool);

    fn both_passes(d: &str) -> (Option<Found>, Found) {
        let mut old = Coverage::default();
        unicode_labels(d, &mut old);
        let f = document_labels(d, &mut old);
        let mut lexed = Lexed::default();
        let scan = lex::scan_observed(d, &[], &mut lexed);
        if scan.deepest >= 128 {
            lexed.labels.insert(Label::DeepNesting);
        }
        let new = (!lexed.unreliable).then_some((
            lexed.labels,
            lexed.facts.lone_surrogate,
            lexed.facts.overflowing_number,
        ));
        (new, (old.labels, f.lone_surrogate, f.overflowing_number))
    }

    /// The raw characters' labels found by their lead bytes are those of every character.
    #[test]
    fn raw_labels_by_lead_byte_are_every_characters() {
        let every = |s: &str| {
            let mut labels = LabelSet::default();
            for c in s.chars().filter(|c| !c.is_ascii()) {
                if c == '\u{2028}' || c == '\u{2029}' {
                    labels.insert(Label::RawLineSeparator);
                }
                unicode_unit(c as u32, &mut labels);
            }
            labels
        };
        // Every code point near a class's edges, and between.
        let mut points: Vec<u32> = (0x80..0x3000).step_by(7).collect();
        for edge in [
            0x300u32, 0x36F, 0x212B, 0x2126, 0xFB00, 0xFB06, 0xFF01, 0xFF5E, 0x1100, 0x11FF, 0x200B, 0x200F,
            0x202A, 0x202E, 0x2066, 0x2069, 0xFEFF, 0xFDD0, 0xFDEF, 0xFFFE, 0xFFFF, 0x1FFFE, 0x10FFFF,
            0x2028, 0x2029, 0x1F600, 0x10000, 0xE000, 0xD7FF, 0x3000, 0x7FF, 0x800,
        ] {
            points.extend(edge.saturating_sub(2)..=edge + 2);
        }
        // Every plane's last two code points, and the ones around them.
        points.extend((1..=16u32).flat_map(|p| (p << 16) + 0xFFBE..=(p << 16) + 0xFFFF));
        points.extend((0x3000..0x110000).step_by(251));
        let chars: Vec<char> =
            points.into_iter().filter_map(char::from_u32).filter(|c| !c.is_ascii()).collect();
        let mut x = 0x9e37_79b9_7f4a_7c15u64;
        for n in 0..20_000 {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            let len = (x % 40) as usize;
            let s: String = (0..len)
                .map(|k| {
                    let r = (x >> (k % 50)) as usize ^ k.wrapping_mul(0x9e37);
                    if r.is_multiple_of(3) {
                        ['a', ' ', '"'][r / 3 % 3]
                    } else {
                        chars[r % chars.len()]
                    }
                })
                .collect();
            let mut labels = LabelSet::default();
            raw_unicode_labels(&s, &mut labels);
            assert_eq!(labels, every(&s), "{n} {s:?}");
        }
        for c in &chars {
            let s = format!("{}{c}", "x".repeat((*c as usize) % 20));
            let mut labels = LabelSet::default();
            raw_unicode_labels(&s, &mut labels);
            assert_eq!(labels, every(&s), "{s:?}");
        }
    }

    /// A long number is read as `number_labels` reads it, valid or not.
    #[test]
    fn long_numbers_are_read_as_number_labels_reads_them() {
        let mut x = 0x2545_f491_4f6c_dd1du64;
        let mut next = || {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            x
        };
        let (mut valid, mut overflowing) = (0, 0);
        let mut texts: Vec<String> = [
            "9007199254740993",
            "-9223372036854775808",
            "-9223372036854775809",
            "18446744073709551615",
            "18446744073709551616",
            "-0.0000000000000000",
            "0.00000000000000000001",
            "1.0000000000000000000001",
            "123456789012345678901234567890123456789012",
            "1e400000000000000000000000000",
            "1e-40000000000000000000",
            "0.0000000000000001e400",
            "-0000000000000000",
            "1234567890123456e293",
            "1234567890123456e292",
            "12345678901234567",
            "1.7976931348623157e308",
            "1.7976931348623159e308",
            "-1.79769313486231581e308",
        ]
        .into_iter()
        .map(String::from)
        .collect();
        texts.push("9".repeat(309));
        texts.push("1".repeat(308));
        texts.push(format!("-{}.5", "1".repeat(309)));
        texts.push(format!("0.{}1e310", "0".repeat(300)));
        for n in 0..100_000 {
            let r = next();
            let part = |r: u64, k: u64| {
                let len = 1 + (r >> k) as usize % [3, 20, 40, 320][(r >> (k + 8)) as usize % 4];
                (0..len).map(|j| (b'0' + ((r >> (j % 50)) as u8 ^ j as u8) % 10) as char).collect::<String>()
            };
            let mut t = String::new();
            if r & 1 == 0 {
                t.push('-');
            }
            let int = part(r, 3);
            // Leading zeros now and then (invalid), a lone zero more often.
            t.push_str(match (r >> 20) % 8 {
                0 => "0",
                1 => "00",
                _ => int.trim_start_matches('0'),
            });
            if (r >> 24) % 3 == 0 {
                t.push('.');
                if (r >> 26) % 9 != 0 {
                    t.push_str(&if (r >> 28) % 4 == 0 {
                        "0".repeat(1 + (r >> 30) as usize % 30)
                    } else {
                        part(r, 31)
                    });
                }
            }
            if (r >> 40) % 3 == 0 {
                t.push(['e', 'E'][(r >> 42) as usize % 2]);
                t.push_str(["", "+", "-"][(r >> 43) as usize % 3]);
                if (r >> 45) % 11 != 0 {
                    t.push_str(&(next() % [10, 400, 1000, 1 << 40][(r >> 47) as usize % 4]).to_string());
                }
            }
            if n % 97 == 0 {
                t.push(['x', '.', '-', 'e'][n % 4]);
            }
            texts.push(t);
        }
        for t in texts.iter().filter(|t| t.len() > 15) {
            let (mut fast, mut slow) = (LabelSet::default(), LabelSet::default());
            let of = long_number_labels(t, &mut fast);
            let os = number_labels(t, &mut slow);
            assert_eq!((fast, of), (slow, os), "{t}");
            valid += usize::from(!slow.contains(Label::InvalidNumber));
            overflowing += usize::from(os);
        }
        assert!(valid > 20_000 && overflowing > 500, "{valid} valid, {overflowing} overflowing");
    }

    /// The lexer's pass reads a short number as `number_labels` does, valid or not.
    #[test]
    fn short_numbers_are_read_as_number_labels_reads_them() {
        let mut x = 0x2545_f491_4f6c_dd1du64;
        let alphabet = b"0123456789000-.eE+";
        let (mut valid, mut zeros) = (0, 0);
        for n in 0..200_000 {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            let len = 1 + (x % 18) as usize;
            let t: String =
                (0..len).map(|k| alphabet[(x >> (k * 3 % 60)) as usize % alphabet.len()] as char).collect();
            let t = if n % 3 == 0 { t.replace(['e', 'E', '+'], "") } else { t };
            // Zeros, which the random texts rarely are.
            let t = match n % 1000 {
                0..10 => ["-0", "0.0", "-0.0", "-0.000", "0.00", "-00", "0.", "-", ".0", "-.0"][n % 1000]
                    .to_owned(),
                _ => t,
            };
            let mut lexed = Lexed::default();
            lex::Observer::number(&mut lexed, &t);
            let mut labels = LabelSet::default();
            let overflowing = number_labels(&t, &mut labels);
            assert_eq!((lexed.labels, lexed.facts.overflowing_number), (labels, overflowing), "{t}");
            valid += usize::from(is_json_number(&t) && t.len() <= 15);
            zeros += usize::from(labels.contains(Label::SignedZero));
        }
        assert!(valid > 5000 && zeros > 500, "{valid} valid, {zeros} signed zeros");
    }

    /// Documents at the edges, whole and cut at every character: where the lexer does not
    /// call one invalid its pass finds what the passes of their own found.
    #[test]
    fn the_lexers_pass_finds_what_the_old_passes_found_at_the_edges() {
        let deep = |n: usize| format!("{}1{}", "[".repeat(n), "]".repeat(n));
        let mut docs: Vec<String> = [
            r#"{"a": NaN}"#,
            r#"{"a": Infinity}"#,
            r#"{"a": -Infinity}"#,
            r#"{"a": 01}"#,
            r#"{"a": 1.}"#,
            r#"{"a": .5}"#,
            r#"{"a": +1}"#,
            r#"{"a": 0x1F}"#,
            r#"{"a": 1e}"#,
            r#"{"a": 1e+}"#,
            r#"{"a": -}"#,
            r#"{"a": 1.5e-7, "b": -0, "c": 0.0, "d": -0.0, "e": 1E+400, "f": 12345678901234567890123}"#,
            r#"{"a": 9007199254740993, "b": -9223372036854775809, "c": 18446744073709551616}"#,
            r#"{"a": 3.14159265358979323846, "b": 0.000000000000000000001, "c": 1e-400}"#,
            r#"[1, -2, 3.5, 1e5, 0, -0]"#,
            "123",
            "-0.0",
            "1e400",
            "\"x\"",
            "true",
            "null",
            r#"{"a":"\ud800"}"#,
            r#"{"a":"x\udc00"}"#,
            r#"{"a":"\ud800\u0041"}"#,
            r#"{"a":"\ud83d\ude00"}"#,
            r#"{"a":"\ud83d\ud83d\ude00"}"#,
            r#"{"a":"\ud83d\ude00\ude00"}"#,
            r#"{"a":"\ud800\n"}"#,
            r#"{"a":"\ud800x"}"#,
            r#"{"a":"\ud800é"}"#,
            r#"{"a":"\ud800", "b": "\udc00"}"#,
            r#"{"\ud800": 1, "b": "\udbff\udfff"}"#,
            r#"{"a":"\\ud800 is an escaped backslash"}"#,
            r#"{"a":"\ud83d", "b": 1, "c": "\ude00"}"#,
            r#"{"a":"\ud83dxyz\ude00"}"#,
            r#"{"a":"\u0301\u212b\u200d\ufeff\ufdd0\uffff\ud83f\udffe\udbff\udfff"}"#,
            "{\"a\":\"e\u{301} \u{212b} \u{200d} \u{feff} \u{fdd0} \u{10ffff} \u{1fffe} \u{1f600}\"}",
            "{\"a\":\"line\u{2028}sep\u{2029}\"}",
            "{\"\u{fb01}\": \"\u{ff21}\u{1100}\u{2066}\"}",
            r#"{"a": 1, "a": 2}"#,
            r#"{"a": {"b": 1, "b": 2}}"#,
            "   ",
            " \t\n\r ",
            "",
            r#"{"a": "x\q y", "b": 1.5}"#,
            r#"{"a": [1, 2, 01], "b": "\ud800"}"#,
            r#"{"a":1}{"a":2}"#,
            r#"1 2"#,
            "01",
            "1-2",
            r#"{"a": tru}"#,
            r#"{"a": "\u12G4"}"#,
            "{\"a\": \"\u{1}\"}",
            r#"{"a": [1, 2,], "b": -01.5e+3}"#,
            r#"{"a": 1} x 1e400"#,
            r#"{"a": "unterminated"#,
            // Values end to end: the lexer's calls are what the passes read unless a value is
            // glued to a number or literal before it.
            "1true",
            "true1",
            "true1e400",
            "false-0.0",
            "null-1e400 2",
            "truefalse1",
            "00",
            "0-1",
            "1.5e3-2",
            "1e5e400",
            r#""a"1e400"#,
            r#"1"\ud800""#,
            r#"{}1e400[]-0{"a":-0.0}"#,
            r#"[1]2 3.0 -0"#,
            r#"{"a":"\ud83d"}{"b":"\ude00"}"#,
            r#""\ud83d""\ude00""#,
            r#"{"a":1}{"a":"e\u0301 é \u00e9"} {"b": 12345678901234567890}"#,
            r#"{"a":[[1]]}[[[[2]]]]"#,
            "1e400 1e400",
            "\"\u{2028}\"\"\u{feff}\"",
        ]
        .into_iter()
        .map(String::from)
        .collect();
        for n in [127, 128, 129, 200] {
            docs.push(deep(n));
            docs.push(format!("{}\"\\ud800\"{}", "{\"a\":[".repeat(n / 2), "]}".repeat(n / 2)));
        }
        let (mut compared, mut lone, mut invalid_numbers) = (0, 0, 0);
        for d in &docs {
            let cuts = (0..=d.len()).filter(|&c| d.is_char_boundary(c));
            for cut in cuts {
                let doc = &d[..cut];
                let (new, old) = both_passes(doc);
                if let Some(new) = new {
                    assert_eq!(new, old, "{doc:?}");
                    compared += 1;
                    lone += usize::from(new.1);
                    invalid_numbers += usize::from(new.0.contains(Label::InvalidNumber));
                }
                // And the case's coverage as a whole, splits included.
                let splits = vec![cut / 3, cut / 2, cut.saturating_sub(1)];
                let case = one_call(doc, splits, Ending::Stop(StopReason::ToolUse));
                let none: &ParsedDocs = &|_, _| None;
                assert_eq!(
                    classify_impl(&case, none, None, true),
                    classify_impl(&case, none, None, false),
                    "{doc:?}"
                );
            }
        }
        assert!(compared > 3000 && lone > 100 && invalid_numbers > 20, "{compared} {lone} {invalid_numbers}");
    }

    /// The lexer's pass labels every generated case as the passes of their own do, over
    /// several seeds and configurations (schemas, none, huge
    /// documents, the transport's), and the named cases.
    #[test]
    fn the_lexers_pass_labels_generated_cases_as_the_old_passes() {
        let configs = [
            (GenConfig::default(), 8000),
            (GenConfig { schema: true, ..GenConfig::default() }, 8000),
            (GenConfig { max_args_size: 512 * 1024, ..GenConfig::default() }, 800),
            (GenConfig { faults: false, multi_stream: false, ..GenConfig::default() }, 4000),
            (GenConfig { transport: true, corrupt: true, schema: true, ..GenConfig::default() }, 2000),
        ];
        let none: &ParsedDocs = &|_, _| None;
        let (mut cases, mut lexed) = (0, 0);
        for (n, (cfg, count)) in configs.iter().enumerate() {
            for seed in [1, 7 + n as u64] {
                for case in crate::cases(cfg, seed).take(count / 2) {
                    assert_eq!(
                        classify_impl(&case, none, None, true),
                        classify_impl(&case, none, None, false),
                        "{}",
                        case.name
                    );
                    cases += 1;
                    for turn in &case.streams {
                        lexed += turn
                            .calls()
                            .filter(|c| {
                                lex::scan_observed(&c.arguments, &[], &mut ()).status != Status::Invalid
                            })
                            .count();
                    }
                }
            }
        }
        // The named cases too.
        for named in crate::named::all() {
            let case = &named.case;
            assert_eq!(
                classify_impl(case, none, None, true),
                classify_impl(case, none, None, false),
                "{}",
                named.id
            );
            cases += 1;
        }
        assert!(cases >= 20_000 && lexed > 20_000, "{cases} cases, {lexed} documents in the lexer's pass");
    }

    fn one_call(args: &str, splits: Vec<usize>, ending: Ending) -> Case {
        let call = Call {
            index: 0,
            call_id: "toolu_01A".into(),
            name: "get_weather".into(),
            arguments: args.into(),
            splits,
        };
        Case::single(
            "t",
            Turn {
                tools: vec![],
                blocks: vec![Block::Call(call)],
                shape: Shape::PerCall,
                ending,
                faults: vec![],
                pings: vec![],
                transport: Default::default(),
                wire: Default::default(),
            },
        )
    }

    fn labels(args: &str, splits: Vec<usize>) -> LabelSet {
        classify(&one_call(args, splits, Ending::Stop(StopReason::ToolUse))).labels
    }

    #[test]
    fn the_seed_split_positions_are_classified() {
        let d = r#"{"city": "M\u00e9rida"}"#;
        let at = d.find("e9").unwrap();
        assert!(labels(d, vec![at]).contains(Label::InsideUnicodeEscape));
        let d = r#"{"note": "line one\nline two"}"#;
        let at = d.find('\\').unwrap() + 1;
        let l = labels(d, vec![at]);
        assert!(l.contains(Label::BetweenBackslashAndEscape));
        assert!(!l.contains(Label::InsideUnicodeEscape));
        let d = r#"{"summary": "urgent request from ops"}"#;
        let at = d.find(" from").unwrap();
        assert!(labels(d, vec![at]).contains(Label::InsideStringNextToSpace));
        let d = r#"{"filter": {"status": "open"}}"#;
        assert!(labels(d, vec![d.find("en").unwrap()]).contains(Label::InsideNestedObject));
        let d = r#"{"limit": 20}"#;
        let l = labels(d, vec![8]);
        assert!(l.contains(Label::BetweenKeyAndColon));
        assert!(!l.contains(Label::InsideStringNextToSpace));
    }

    #[test]
    fn brace_prefixes_need_more_bytes_after_them() {
        let d = "{\"limit\": 20}\n";
        assert!(labels(d, vec![13]).contains(Label::AfterBracePrefixParses));
        // The end of the document is not a prefix with something after it.
        assert!(!labels("{\"limit\": 20}", vec![13]).contains(Label::AfterBracePrefixParses));
        let d = r#"{"a":1}{"a":2}"#;
        let l = labels(d, vec![7]);
        assert!(l.contains(Label::AfterBracePrefixParses));
        assert!(l.contains(Label::InvalidDocument));
        // A nested brace does not end a parsable prefix.
        let d = r#"{"a": {"b": 1}, "c": 2}"#;
        assert!(!labels(d, vec![14]).contains(Label::AfterBracePrefixParses));
    }

    /// Every prefix the lexer reads as one whole value (`PREFIX_PARSES`) the skipping parse
    /// accepts, so that coverage need not ask it: generated documents of every configuration
    /// and the named cases', cut anywhere, and hand-made ones the skipping parse is lenient
    /// about (lone surrogates, nesting past 128 levels, numbers no double holds).
    #[test]
    fn prefixes_the_lexer_reads_whole_parse() {
        let configs = [
            (GenConfig { schema: true, ..GenConfig::default() }, 3000),
            (GenConfig { max_args_size: 512 * 1024, ..GenConfig::default() }, 100),
            (GenConfig { transport: true, corrupt: true, ..GenConfig::default() }, 1000),
        ];
        let mut docs: Vec<String> = Vec::new();
        for (cfg, n) in &configs {
            for case in crate::cases(cfg, 5).take(*n) {
                docs.extend(case.streams.iter().flat_map(|t| t.calls()).map(|c| c.arguments.clone()));
            }
        }
        for named in crate::named::all() {
            docs.extend(named.case.streams.iter().flat_map(|t| t.calls()).map(|c| c.arguments.clone()));
        }
        let deep = |n: usize| format!("{}{}", "{\"a\":[".repeat(n), "]}".repeat(n));
        for d in [
            r#"{"a":"\ud800"} {"b":1}"#.to_string(),
            r#"{"a":"\udc00\ud800x"}{"#.to_string(),
            r#"{"a":1e400,"b":-0,"c":123456789012345678901234567890}1"#.to_string(),
            format!("{} ", deep(127)),
            format!("{}[", deep(129)),
            format!("{}x", deep(300)),
        ] {
            docs.push(d);
        }
        let mut prefixes = 0;
        for d in &docs {
            let flags = lex::scan(d).flags;
            for s in (1..d.len()).filter(|&s| flags[s] & flag::PREFIX_PARSES != 0) {
                assert!(serde_json::from_str::<serde::de::IgnoredAny>(&d[..s]).is_ok(), "{:?}", &d[..s]);
                prefixes += 1;
            }
        }
        assert!(prefixes > 300, "{prefixes} prefixes");
    }

    #[test]
    fn fragment_sizes() {
        let d = r#"{"a": 1}"#;
        let l = labels(d, vec![]);
        assert!(l.contains(Label::WholeFragment));
        let l = labels(d, vec![0, 1, 2]);
        assert!(l.contains(Label::EmptyFragment) && l.contains(Label::OneByteFragment));
        assert!(!l.contains(Label::WholeFragment));
        let l = labels("", vec![]);
        assert!(l.contains(Label::EmptyArguments) && !l.contains(Label::EmptyFragment));
    }

    #[test]
    fn lying_endings_are_complete_stops_over_cut_documents() {
        let cut = r#"{"title": "x", "description": "The run abor"#;
        let l = classify(&one_call(cut, vec![], Ending::Stop(StopReason::ToolUse))).labels;
        assert!(l.contains(Label::LyingComplete) && !l.contains(Label::InvalidDocument));
        let l = classify(&one_call(cut, vec![], Ending::Stop(StopReason::MaxTokens))).labels;
        assert!(l.contains(Label::Truncated) && !l.contains(Label::LyingComplete));
        let l = classify(&one_call(cut, vec![], Ending::Abandoned { after: 1, end: StreamEnd::Eof })).labels;
        assert!(!l.contains(Label::LyingComplete));
        let l = classify(&one_call(r#"{"a": "\q"}"#, vec![], Ending::Stop(StopReason::ToolUse))).labels;
        assert!(l.contains(Label::InvalidDocument) && !l.contains(Label::LyingComplete));
    }

    #[test]
    fn text_order_and_same_tool() {
        let call = |i: u32, args: &str| {
            Block::Call(Call {
                index: i,
                call_id: format!("c{i}"),
                name: "search_orders".into(),
                arguments: args.into(),
                splits: vec![],
            })
        };
        let text = || Block::Text(TextBlock { text: "ok".into(), splits: vec![] });
        let turn = Turn {
            tools: vec![],
            blocks: vec![
                text(),
                call(1, r#"{"status": "open"}"#),
                call(2, r#"{"status":"refunded"}"#),
                text(),
            ],
            shape: Shape::PerCall,
            ending: Ending::Stop(StopReason::ToolUse),
            faults: vec![],
            pings: vec![],
            transport: Default::default(),
            wire: Default::default(),
        };
        let cov = classify(&Case::single("t", turn));
        for l in [Label::TextBeforeCall, Label::TextAfterCall, Label::SameToolTwice] {
            assert!(cov.has(l), "{l}");
        }
        assert!(cov.applies(Label::SameToolTwice));
    }

    #[test]
    fn stats_serialize_with_denominators() {
        let mut stats = CoverageStats::new();
        stats.record(&one_call(r#"{"a": 1}"#, vec![], Ending::Stop(StopReason::ToolUse)));
        stats.record(&one_call("", vec![], Ending::Abandoned { after: 0, end: StreamEnd::Cancel }));
        let v = serde_json::to_value(&stats).unwrap();
        assert_eq!(v["complete"]["count"], 1);
        assert_eq!(v["complete"]["applicable"], 2);
        assert_eq!(v["complete"]["percent"], 50.0);
        assert_eq!(v["whole_fragment"]["applicable"], 1);
        assert_eq!(v["schema_violation"]["percent"], serde_json::Value::Null);
        let table = stats.to_string();
        assert!(table.contains("whole_fragment") && table.contains("100.00%"), "{table}");
    }
}
