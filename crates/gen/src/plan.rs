//! Plans: the small choice structures a case is built from, how they are sampled, and how
//! they shrink.
//!
//! A plan is plain data of small integers and vectors (no text, no positions): sampling
//! draws it from a [`Source`] with the biases that make every adversarial class common,
//! [`crate::build`] turns it into a [`Case`](toolcert_scenario::Case) deterministically, and
//! [`Shrink`] proposes simpler plans for proptest's shrinking. Every field's value 0 is its
//! simplest choice (complete ending, no cut, valid document, canonical whitespace, no
//! fault...), and every vector shrinks by dropping elements, so shrinking walks toward one
//! stream, few blocks, short arguments, few fragments, a complete ending and no faults.
//! The builder accepts any plan (out-of-range values are taken modulo), so a shrunk or
//! fuzzed plan always builds a renderable case.

use crate::doc::{self, Kind, CREATE_TICKET, GET_TIME};
use crate::source::Source;
use crate::wire::WirePlan;
use crate::{GenConfig, ShapeMix};

/// A short vector stored inline: plans are built and dropped once per case and most of
/// their lists are a few bytes long, so each one kept off the heap saves an allocation.
/// Pushing past `N` is ignored.
#[derive(Clone, Copy, PartialEq, Eq)]
pub(crate) struct Inline<T, const N: usize> {
    len: u8,
    items: [T; N],
}

impl<T: Copy + Default, const N: usize> Default for Inline<T, N> {
    fn default() -> Self {
        Inline { len: 0, items: [T::default(); N] }
    }
}

impl<T: Copy + Default, const N: usize> Inline<T, N> {
    /// The first `len` of `items` (at most `N`); the others must be `T::default()`, as in a
    /// vector pushed to.
    pub fn from_prefix(items: [T; N], len: usize) -> Self {
        Inline { len: len.min(N) as u8, items }
    }

    pub fn push(&mut self, t: T) {
        if usize::from(self.len) < N {
            self.items[usize::from(self.len)] = t;
            self.len += 1;
        }
    }
}

impl<T, const N: usize> std::ops::Deref for Inline<T, N> {
    type Target = [T];

    fn deref(&self) -> &[T] {
        &self.items[..usize::from(self.len)]
    }
}

impl<T: Copy + Default, const N: usize> FromIterator<T> for Inline<T, N> {
    fn from_iter<I: IntoIterator<Item = T>>(iter: I) -> Self {
        let mut v = Self::default();
        for t in iter {
            v.push(t);
        }
        v
    }
}

impl<T: std::fmt::Debug, const N: usize> std::fmt::Debug for Inline<T, N> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_list().entries(self.iter()).finish()
    }
}

/// The choice bytes of one field.
pub(crate) type FieldBytes = Inline<u8, 20>;

#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct CasePlan {
    /// Streams after the first.
    pub more: Vec<TurnPlan>,
    /// 0: the streams run one after another; 1: they are open at once.
    pub concurrent: u8,
    /// For concurrent streams: which stream delivers each next event.
    pub order: Vec<u8>,
    /// 1: later streams repeat the first one's layout and tools, call by call (so that state
    /// shared between streams shows).
    pub share: u8,
    pub first: TurnPlan,
    pub id_seed: u16,
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct TurnPlan {
    pub faults: Inline<FaultPlan, 2>,
    pub ending: EndingPlan,
    pub pings: Inline<u8, 3>,
    /// Interleaved shape: which chunk pieces share (`joins`) and the sending order.
    pub joins: Vec<u8>,
    pub order: Vec<u8>,
    /// 0: Anthropic-like per-call; 1: Responses-like per-call; 2: OpenAI Chat interleaved.
    pub family: u8,
    pub blocks: Vec<BlockPlan>,
    /// 1: every call after the first calls the first call's tool with the same keys.
    pub same_tool: u8,
    pub transport: TransportPlan,
    /// How tool names are spelled (0 snake_case as the templates have them; camelCase,
    /// PascalCase, kebab-case, with digits, the full 64 characters).
    pub names: u8,
    /// 1: two tools of the turn whose names differ only in case; 2: only by a suffix.
    pub name_pair: u8,
    /// 1: the first text block mentions the first call's tool by name.
    pub mention: u8,
    /// Interleaved shape: 0 call indices dense from 0; 1 starting past 0; 2 with gaps.
    pub indices: u8,
    pub index_arg: u8,
    /// Dialect events the wire rendering adds (`crate::wire`).
    pub wire: crate::wire::WirePlan,
    /// Foreign blocks (thinking, server tools, refusals, custom tool calls) mixed in.
    pub foreign: Inline<ForeignPlan, 2>,
}

/// One foreign block: which of the family's kinds (`crate::build` lists them), where among
/// the blocks, which content, and where its content splits (fractions /256).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub(crate) struct ForeignPlan {
    pub kind: u8,
    pub at: u8,
    pub text: u8,
    pub splits: Inline<u8, 3>,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum BlockPlan {
    Text(TextPlan),
    Call(CallPlan),
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct TextPlan {
    pub pieces: Inline<u8, 6>,
    /// Split points as fractions of the text length (/256).
    pub splits: Inline<u8, 4>,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct CallPlan {
    pub doc: DocPlan,
    pub splits: Inline<SplitPlan, 8>,
    pub tool: u8,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct DocPlan {
    /// See [`Form`].
    pub form: u8,
    /// See [`Violation`] (schema profile only).
    pub violate: u8,
    /// 1: the document's description (or first text field) is ≥ 400 bytes; 2: the document
    /// is huge (4 KiB up to the configured size: a file body or a long list of records).
    pub long: u8,
    /// How huge (`long == 2`): picks the size between 4 KiB and the configured most.
    pub size: u8,
    /// Choice bytes for each written field, in template order; their count is how many of
    /// the template's fields (keys) the document has.
    pub fields: Inline<FieldBytes, 5>,
    /// 0 canonical `{"a": 1, "b": 2}`, 1 compact, 2 pretty, 3 varied per gap (`ws_bytes`).
    pub ws: u8,
    pub ws_bytes: Inline<u8, 16>,
    /// Picks the variant of the form (which garbage, which bad escape...).
    pub form_arg: u8,
}

/// What kind of document the model wrote.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Form {
    Valid,
    /// Valid, then whitespace: the prefix that ends at the `}` parses and is not the end.
    TrailingWs,
    /// No argument bytes at all (means `{}`).
    Empty,
    /// Two documents end to end.
    Concat,
    /// A valid document followed by garbage.
    Garbage,
    /// A string with an invalid escape (`\q`).
    BadEscape,
    /// A string with a raw control character (invalid JSON).
    RawControl,
    /// A number in a form JSON refuses (`NaN`, `01`, `+1`, `.5` ...).
    BadNumber,
    /// Only whitespace: not "no bytes", so not `{}`; unparseable.
    WhitespaceOnly,
    /// A bare scalar or array at the top level.
    NotObject,
    /// A key written twice (the last one wins).
    DuplicateKey,
    /// Nested 128 levels deep and more.
    Deep,
    /// A key of a kilobyte and more.
    LongKey,
    /// A string with a lone surrogate escape (`\ud800`).
    LoneSurrogate,
}

impl DocPlan {
    pub fn form(&self) -> Form {
        match self.form % 14 {
            0 => Form::Valid,
            1 => Form::TrailingWs,
            2 => Form::Empty,
            3 => Form::Concat,
            4 => Form::Garbage,
            5 => Form::BadEscape,
            6 => Form::RawControl,
            7 => Form::BadNumber,
            8 => Form::WhitespaceOnly,
            9 => Form::NotObject,
            10 => Form::DuplicateKey,
            11 => Form::Deep,
            12 => Form::LongKey,
            _ => Form::LoneSurrogate,
        }
    }

    pub fn violation(&self) -> Violation {
        match self.violate % 4 {
            0 => Violation::None,
            1 => Violation::Enum,
            2 => Violation::WrongType,
            _ => Violation::Missing,
        }
    }
}

/// A deliberate schema violation (schema profile).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Violation {
    None,
    /// An enum field gets a value outside the enum (`"priority": "P1"`).
    Enum,
    /// The first field gets a value of the wrong type (`"limit": "20"`).
    WrongType,
    /// The first required field is left out.
    Missing,
}

/// Where a split point goes; resolved against the document by [`crate::build`].
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub(crate) struct SplitPlan {
    /// See [`SplitClass`].
    pub class: u8,
    /// Run length, chunk size or empty-fragment position, depending on the class.
    pub arg: u8,
    /// Where to look for the class: the first candidate offset at or after this fraction
    /// (/256) of the document, wrapping around.
    pub pick: u8,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum SplitClass {
    Uniform,
    NextToSpace,
    Escape,
    Unicode,
    Nested,
    KeyColon,
    AfterBrace,
    OneByteRun,
    EmptyFragment,
    Chunked,
}

impl SplitPlan {
    pub fn class(&self) -> SplitClass {
        match self.class % 10 {
            0 => SplitClass::Uniform,
            1 => SplitClass::NextToSpace,
            2 => SplitClass::Escape,
            3 => SplitClass::Unicode,
            4 => SplitClass::Nested,
            5 => SplitClass::KeyColon,
            6 => SplitClass::AfterBrace,
            7 => SplitClass::OneByteRun,
            8 => SplitClass::EmptyFragment,
            _ => SplitClass::Chunked,
        }
    }
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct EndingPlan {
    /// 0 complete, 1 truncated, 2 abandoned, 3 errored.
    pub kind: u8,
    /// How the last call's document is cut (complete: a lying ending; truncated: the model
    /// was cut off): 0 not cut, 1 anywhere, 2 inside a string value, 3 right after the
    /// top-level `}` (the cut document parses).
    pub cut: u8,
    /// Abandoned / errored: where the stream stops (fraction /256 of the body).
    pub at: u8,
    /// Which stop reason of the family.
    pub reason: u8,
    /// Abandoned: 0 eof, 1 disconnect, 2 cancel.
    pub end: u8,
    pub cut_pos: u8,
    pub message: u8,
}

/// How the turn's bytes travel (bytes level): all zero is one chunk with LF line ends.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub(crate) struct TransportPlan {
    pub cuts: Inline<CutPlan, 6>,
    /// 0 LF, 1 CRLF, 2 CR.
    pub line_end: u8,
    pub comments: Inline<u8, 2>,
    pub multiline: Inline<u8, 2>,
    /// Abandoned streams: 0 the connection drops between events; 1 + aim: inside the next
    /// event (see `toolcert_scenario::TailAim`), at `tail_pick`.
    pub tail: u8,
    pub tail_pick: u8,
    /// Binary framing only (`GenConfig::corrupt`): 0 no damaged message; 1 + kind (see
    /// `toolcert_scenario::CorruptWhat`) of the message at `corrupt_at` (a fraction /256).
    pub corrupt: u8,
    pub corrupt_at: u8,
}

/// A transport cut: `aim` picks the kind of place (see `toolcert_scenario::CutAim`), `pick`
/// which one.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub(crate) struct CutPlan {
    pub aim: u8,
    pub pick: u8,
    pub pick_hi: u8,
}

impl TransportPlan {
    fn sample(src: &mut impl Source) -> TransportPlan {
        let n = src.weighted(&[10, 20, 20, 20, 15, 10, 5]);
        // Every aim on purpose: anywhere, inside a character, inside `data:`, between CR and
        // LF, and runs of tiny chunks.
        let cuts = (0..n)
            .map(|_| CutPlan {
                aim: src.weighted(&[25, 30, 20, 15, 10]) as u8,
                pick: src.byte(),
                pick_hi: src.byte(),
            })
            .collect();
        let line_end = src.weighted(&[40, 40, 20]) as u8;
        let some_bytes = |src: &mut _| {
            if Source::chance(src, 30) {
                let n = 1 + Source::below(src, 2) as usize;
                Source::inline_bytes(src, n)
            } else {
                Inline::default()
            }
        };
        let comments = some_bytes(&mut *src);
        let multiline = some_bytes(&mut *src);
        // Applies only when the turn is abandoned: often, so every aim is common there.
        let tail = if src.chance(45) { 1 + src.below(4) as u8 } else { 0 };
        let tail_pick = src.byte();
        TransportPlan { cuts, line_end, comments, multiline, tail, tail_pick, corrupt: 0, corrupt_at: 0 }
    }
}

#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub(crate) struct FaultPlan {
    /// 0 replayed announcement, 1 unannounced fragment, 2 fragment after stop, 3 a call's
    /// terminal repeating other arguments than its fragments (per-call shape only).
    pub kind: u8,
    pub call: u8,
    pub at: u8,
    pub fragment: u8,
}

// --- Sampling ---------------------------------------------------------------------------

/// Weights of the tools of [`doc::TOOLS`].
const TOOL_WEIGHTS: [u32; 7] = [16, 20, 12, 16, 16, 12, 8];
/// Weights of [`SplitClass`] in declaration order.
const SPLIT_WEIGHTS: [u32; 10] = [14, 10, 10, 10, 10, 10, 4, 10, 8, 14];

impl CasePlan {
    pub fn sample(src: &mut impl Source, cfg: &GenConfig) -> CasePlan {
        let first = TurnPlan::sample(src, cfg, None);
        let extra = if cfg.multi_stream && cfg.max_streams >= 2 && src.chance(15) {
            (1 + usize::from(src.chance(30))).min(cfg.max_streams - 1)
        } else {
            0
        };
        let share = u8::from(extra > 0 && src.chance(60));
        let more = (0..extra).map(|_| TurnPlan::sample(src, cfg, (share != 0).then_some(&first))).collect();
        let concurrent = u8::from(extra > 0 && src.chance(55));
        let order = if concurrent != 0 {
            let n = 8 + src.below(40) as usize;
            let streams = 1 + extra as u32;
            if src.chance(50) {
                (0..n).map(|k| (k as u32 % streams) as u8).collect()
            } else {
                (0..n).map(|_| src.below(streams) as u8).collect()
            }
        } else {
            Vec::new()
        };
        let id_seed = src.below(1 << 16) as u16;
        CasePlan { more, concurrent, order, share, first, id_seed }
    }
}

impl TurnPlan {
    /// `like`: the first stream of the case, whose layout (shape, where text goes, which
    /// tools with which keys) this stream repeats with new values, so that both announce the
    /// same indices for the same tools (what shared state trips on).
    pub fn sample(src: &mut impl Source, cfg: &GenConfig, like: Option<&TurnPlan>) -> TurnPlan {
        if let Some(like) = like {
            return TurnPlan::sample_like(src, cfg, like);
        }
        let family = match cfg.shape_mix {
            ShapeMix::PerCall => src.weighted(&[75, 25]) as u8,
            ShapeMix::Interleaved => 2,
            ShapeMix::Both => src.weighted(&[45, 15, 40]) as u8,
        };
        // "No call" is listed last, so that an exhausted source still makes a call. One turn
        // in ten has none: a text answer (cut or whole) is what a user sees most.
        let n_calls = [1, 2, 3, 4, 0][src.weighted(&[40, 27, 13, 10, 10])].min(cfg.max_calls);
        let same_tool = u8::from(n_calls >= 2 && src.chance(35));

        let mut blocks = Vec::with_capacity(2 * n_calls + 1);
        // A turn without calls is all text, or (one in three) empty: the message opens and
        // closes with no block. Otherwise text before the first call sometimes.
        if n_calls == 0 {
            if !src.chance(35) {
                blocks.push(BlockPlan::Text(TextPlan::sample(src)));
                if src.chance(30) {
                    blocks.push(BlockPlan::Text(TextPlan::sample(src)));
                }
            }
        } else if src.chance(35) {
            blocks.push(BlockPlan::Text(TextPlan::sample(src)));
        }
        let mut first_tool = 0u8;
        let mut first_keys = 0usize;
        for k in 0..n_calls {
            if k > 0 && src.chance(15) {
                blocks.push(BlockPlan::Text(TextPlan::sample(src)));
            }
            let same = same_tool != 0 && k > 0;
            let tool = if same { first_tool } else { src.weighted(&TOOL_WEIGHTS) as u8 };
            let doc = DocPlan::sample(src, cfg, tool, same.then_some(first_keys));
            if k == 0 {
                first_tool = tool;
                first_keys = doc.fields.len();
            }
            let splits = sample_splits(src, &doc);
            blocks.push(BlockPlan::Call(CallPlan { doc, splits, tool }));
        }
        if n_calls > 0 && src.chance(25) {
            blocks.push(BlockPlan::Text(TextPlan::sample(src)));
        }
        TurnPlan::finish(src, cfg, family, blocks, same_tool)
    }

    fn sample_like(src: &mut impl Source, cfg: &GenConfig, like: &TurnPlan) -> TurnPlan {
        let blocks = like
            .blocks
            .iter()
            .map(|b| match b {
                BlockPlan::Text(_) => BlockPlan::Text(TextPlan::sample(src)),
                BlockPlan::Call(c) => {
                    let doc = DocPlan::sample(src, cfg, c.tool, Some(c.doc.fields.len()));
                    let splits = sample_splits(src, &doc);
                    BlockPlan::Call(CallPlan { doc, splits, tool: c.tool })
                }
            })
            .collect();
        let mut t = TurnPlan::finish(src, cfg, like.family, blocks, like.same_tool);
        // The same tools under the same names and indices: what shared state trips on.
        (t.names, t.name_pair, t.indices, t.index_arg) =
            (like.names, like.name_pair, like.indices, like.index_arg);
        t
    }

    /// The ending, faults, pings and interleaving of a turn whose blocks are chosen.
    fn finish(
        src: &mut impl Source,
        cfg: &GenConfig,
        family: u8,
        blocks: Vec<BlockPlan>,
        same_tool: u8,
    ) -> TurnPlan {
        let no_calls = !blocks.iter().any(|b| matches!(b, BlockPlan::Call(_)));
        let ending = EndingPlan::sample(src, no_calls);
        let mut faults = Inline::default();
        // Often enough that a bug seen only on a faulty stream shows within ~20 cases.
        if cfg.faults && src.chance(32) {
            let n = 1 + usize::from(src.chance(20));
            for _ in 0..n {
                let kind = if family == 2 {
                    // The interleaved shape has no per-call terminal (no done to mismatch),
                    // and a fragment after stop needs the stop to be sent.
                    if ending.kind >= 2 {
                        src.below(2) as u8
                    } else {
                        src.below(3) as u8
                    }
                } else {
                    src.weighted(&[20, 20, 28, 32]) as u8
                };
                faults.push(FaultPlan { kind, call: src.byte(), at: src.byte(), fragment: src.byte() });
            }
        }
        let pings = if src.chance(12) {
            let n = 1 + src.below(3) as usize;
            src.inline_bytes(n)
        } else {
            Inline::default()
        };
        let (order, joins) = if family == 2 {
            let b = blocks.len().max(1) as u32;
            let order = match src.weighted(&[25, 25, 35, 15]) {
                0 => Vec::new(),
                1 => {
                    let reps = 2 + src.below(7);
                    (0..reps * b).map(|k| (k % b) as u8).collect()
                }
                2 => {
                    let n = 4 + src.below(29);
                    (0..n).map(|_| src.below(b) as u8).collect()
                }
                _ => {
                    let mut v = Vec::new();
                    for _ in 0..2 + src.below(8) {
                        let x = src.below(b) as u8;
                        for _ in 0..1 + src.below(3) {
                            v.push(x);
                        }
                    }
                    v
                }
            };
            let joins = if src.chance(40) {
                (0..4 + src.below(17)).map(|_| u8::from(src.chance(35))).collect()
            } else {
                Vec::new()
            };
            (order, joins)
        } else {
            (Vec::new(), Vec::new())
        };
        let mut transport = if cfg.transport { TransportPlan::sample(src) } else { TransportPlan::default() };
        let names = src.weighted(&[62, 10, 9, 7, 6, 6]) as u8;
        let name_pair = src.weighted(&[64, 18, 18]) as u8;
        let mention = u8::from(src.chance(30));
        let indices = if family == 2 { src.weighted(&[70, 15, 15]) as u8 } else { 0 };
        let index_arg = src.byte();
        let wire = crate::wire::WirePlan::sample(src);
        // Drawn last, so that every other choice of a seed stays what it was. Each kind is
        // reached in a few percent of cases: Responses-like turns (the rarest family, with
        // the most kinds) carry one most often.
        let mut foreign = Inline::default();
        if src.chance([15, 40, 10][usize::from(family.min(2))]) {
            let n = 1 + usize::from(src.chance(15));
            for _ in 0..n {
                let kind = src.weighted(crate::build::FOREIGN_WEIGHTS[usize::from(family.min(2))]) as u8;
                let splits = {
                    let k = src.below(4) as usize;
                    src.inline_bytes(k)
                };
                foreign.push(ForeignPlan { kind, at: src.byte(), text: src.byte(), splits });
            }
        }
        // After the foreign blocks, and only where asked, so no other run's cases change.
        if cfg.transport && cfg.corrupt && src.chance(20) {
            transport.corrupt = 1 + src.below(4) as u8;
            transport.corrupt_at = src.byte();
        }
        let mut wire = wire;
        if cfg.spliced && cfg.faults && src.chance(6) {
            wire.spliced = 1 + src.below(255) as u8;
        }
        TurnPlan {
            faults,
            ending,
            pings,
            joins,
            order,
            family,
            blocks,
            same_tool,
            transport,
            names,
            name_pair,
            mention,
            indices,
            index_arg,
            wire,
            foreign,
        }
    }
}

impl TextPlan {
    fn sample(src: &mut impl Source) -> TextPlan {
        let n = 1 + src.below(5) as usize;
        let pieces = src.inline_bytes(n);
        let n = src.below(4) as usize;
        let splits = src.inline_bytes(n);
        TextPlan { pieces, splits }
    }
}

impl DocPlan {
    /// `keys`: the key count to copy from an earlier call to the same tool.
    fn sample(src: &mut impl Source, cfg: &GenConfig, tool: u8, keys: Option<usize>) -> DocPlan {
        let t = doc::template(tool);
        let n = keys.unwrap_or_else(|| {
            let optional = t.fields.len() - t.required;
            t.required.max(usize::from(!t.fields.is_empty())) + src.below(optional as u32 + 1) as usize
        });
        let fields = t
            .fields
            .iter()
            .take(n)
            .map(|f| {
                let len = match f.kind {
                    Kind::Text | Kind::NullableText => 10,
                    Kind::LongText => 18,
                    Kind::Object(_) => 20,
                    Kind::Array(_) => 14,
                    _ => 3,
                };
                src.inline_bytes(len)
            })
            .collect();
        let ws = src.weighted(&[45, 20, 10, 25]) as u8;
        let ws_bytes = if ws == 3 { src.inline_bytes(16) } else { Inline::default() };
        let form = if tool as usize % doc::TOOLS.len() == GET_TIME {
            // No parameters: no bytes, `{}`, or only whitespace.
            [0, 2, 8][src.weighted(&[45, 30, 25])]
        } else {
            // Valid, trailing whitespace, empty, concatenated, garbage, bad escape, raw
            // control, bad number, whitespace only, not an object, duplicate key, deep,
            // long key, lone surrogate.
            src.weighted(&[76, 6, 3, 7, 3, 4, 1, 5, 5, 5, 8, 6, 3, 8]) as u8
        };
        let form_arg = src.byte();
        // Huge documents in every mode, more often when the size profile asks for them.
        let huge_chance = if cfg.max_args_size > crate::HUGE_DEFAULT_MAX { 12 } else { 2 };
        let long = if src.chance(huge_chance) {
            2
        } else {
            u8::from(if tool as usize % doc::TOOLS.len() == CREATE_TICKET {
                src.chance(40)
            } else {
                doc::has_text(t) && src.chance(4)
            })
        };
        let size = src.byte();
        let violate = if cfg.schema && src.chance(20) { 1 + src.weighted(&[50, 30, 20]) as u8 } else { 0 };
        DocPlan { form, violate, long, size, fields, ws, ws_bytes, form_arg }
    }
}

fn sample_splits(src: &mut impl Source, doc: &DocPlan) -> Inline<SplitPlan, 8> {
    let long = doc.long != 0;
    let mut n = if long { 2 + src.below(6) as usize } else { src.weighted(&[15, 28, 22, 15, 10, 6, 4]) };
    // No argument bytes, sent as several empty fragments (some servers do).
    if doc.form() == Form::Empty && src.chance(40) {
        let n = 2 + src.below(3) as usize;
        return (0..n)
            .map(|_| SplitPlan { class: SplitClass::EmptyFragment as u8, arg: 0, pick: 0 })
            .collect();
    }
    let brace_form = matches!(doc.form(), Form::TrailingWs | Form::Concat);
    let force_brace = brace_form && src.chance(60);
    if force_brace {
        n = n.max(1);
    }
    (0..n)
        .map(|k| {
            let class = if k == 0 && force_brace {
                SplitClass::AfterBrace as u8
            } else if long && k == 0 && src.chance(50) {
                SplitClass::Chunked as u8
            } else {
                src.weighted(&SPLIT_WEIGHTS) as u8
            };
            SplitPlan { class, arg: src.byte(), pick: src.byte() }
        })
        .collect()
}

impl EndingPlan {
    /// `no_calls`: a turn without calls, whose every ending is equally common (how a turn
    /// ended is all there is to get wrong besides its text).
    fn sample(src: &mut impl Source, no_calls: bool) -> EndingPlan {
        // Truncation bugs only show on truncated turns: weight them enough to surface within ~20 cases.
        let weights: &[u32] = if no_calls { &[25, 25, 25, 25] } else { &[42, 24, 19, 15] };
        let kind = src.weighted(weights) as u8;
        let cut = match kind {
            0 if src.chance(8) => 1 + src.below(2) as u8,
            1 => src.weighted(&[15, 40, 30, 15]) as u8,
            _ => 0,
        };
        EndingPlan {
            kind,
            cut,
            at: src.byte(),
            reason: src.weighted(&[80, 12, 8]) as u8,
            end: src.weighted(&[50, 30, 20]) as u8,
            cut_pos: src.byte(),
            message: src.below(4) as u8,
        }
    }
}

// --- Shrinking --------------------------------------------------------------------------

/// Simpler variants of a plan, enumerated one at a time.
pub(crate) trait Shrink: Sized {
    /// The `*k`-th simpler variant. When `*k` is past this value's variants, returns `None`
    /// having subtracted their number from `*k`, so callers can chain fields.
    fn nth_simpler(&self, k: &mut usize) -> Option<Self>;
}

fn take(k: &mut usize) -> bool {
    if *k == 0 {
        true
    } else {
        *k -= 1;
        false
    }
}

macro_rules! shrink_int {
    ($($t:ty),*) => {$(
        impl Shrink for $t {
            fn nth_simpler(&self, k: &mut usize) -> Option<Self> {
                let v = *self;
                // Small values are mostly choices among a few classes, where any smaller
                // choice may be the simpler one that still fails: try them all. Larger ones
                // move toward 0: straight to 0, then halfway, then one step.
                if v <= 16 {
                    return (0..v).nth(*k).or_else(|| {
                        *k -= usize::from(v);
                        None
                    });
                }
                let candidates = [0, v / 2, v.saturating_sub(1)];
                let mut last = None;
                for c in candidates {
                    if c < v && Some(c) != last {
                        last = Some(c);
                        if take(k) {
                            return Some(c);
                        }
                    }
                }
                None
            }
        }
    )*};
}
shrink_int!(u8, u16);

impl<T: Shrink + Clone> Shrink for Vec<T> {
    fn nth_simpler(&self, k: &mut usize) -> Option<Self> {
        shrink_seq(self, k)
    }
}

impl<T: Shrink + Copy + Default, const N: usize> Shrink for Inline<T, N> {
    fn nth_simpler(&self, k: &mut usize) -> Option<Self> {
        shrink_seq(self, k).map(|v| v.into_iter().collect())
    }
}

/// Simpler variants of a sequence: halves, then each element dropped, then each element
/// simplified.
fn shrink_seq<T: Shrink + Clone>(items: &[T], k: &mut usize) -> Option<Vec<T>> {
    let n = items.len();
    // Big steps first: drop the second half, then the first half.
    if n >= 2 {
        if take(k) {
            return Some(items[..n / 2].to_vec());
        }
        if take(k) {
            return Some(items[n / 2..].to_vec());
        }
    }
    for i in 0..n {
        if take(k) {
            let mut v = items.to_vec();
            v.remove(i);
            return Some(v);
        }
    }
    for i in 0..n {
        if let Some(e) = items[i].nth_simpler(k) {
            let mut v = items.to_vec();
            v[i] = e;
            return Some(v);
        }
    }
    None
}

/// The first simpler variant among the fields, in the order given.
macro_rules! shrink_fields {
    ($self:ident, $k:ident, $($f:ident),* $(,)?) => {{
        $(
            if let Some(v) = $self.$f.nth_simpler($k) {
                let mut s = $self.clone();
                s.$f = v;
                return Some(s);
            }
        )*
        None
    }};
}

macro_rules! shrink_struct {
    ($t:ident { $($f:ident),* $(,)? }) => {
        impl Shrink for $t {
            fn nth_simpler(&self, k: &mut usize) -> Option<Self> {
                shrink_fields!(self, k, $($f),*)
            }
        }
    };
}

// Field order is shrink priority: the first fields simplify first.

impl Shrink for CasePlan {
    fn nth_simpler(&self, k: &mut usize) -> Option<Self> {
        // One stream alone, whichever it is: a failure in a later stream need not keep the
        // first one around.
        for t in &self.more {
            if take(k) {
                return Some(CasePlan { more: Vec::new(), first: t.clone(), ..self.clone() });
            }
        }
        self.fields_simpler(k)
    }
}

impl CasePlan {
    fn fields_simpler(&self, k: &mut usize) -> Option<Self> {
        shrink_fields!(self, k, more, concurrent, order, share, first, id_seed)
    }
}
shrink_struct!(TurnPlan {
    faults,
    ending,
    pings,
    transport,
    joins,
    order,
    family,
    blocks,
    same_tool,
    names,
    name_pair,
    mention,
    indices,
    index_arg,
    wire,
    foreign
});
shrink_struct!(WirePlan { item_only, mismatch_in, unknown, chat, done, spliced });
shrink_struct!(ForeignPlan { kind, at, text, splits });
shrink_struct!(TransportPlan { cuts, tail, multiline, comments, line_end, tail_pick });
shrink_struct!(CutPlan { aim, pick, pick_hi });
shrink_struct!(TextPlan { pieces, splits });
shrink_struct!(CallPlan { doc, splits, tool });
shrink_struct!(DocPlan { form, violate, long, size, fields, ws, ws_bytes, form_arg });
shrink_struct!(SplitPlan { class, arg, pick });
shrink_struct!(EndingPlan { kind, cut, at, reason, end, cut_pos, message });
shrink_struct!(FaultPlan { kind, call, at, fragment });

impl Shrink for BlockPlan {
    fn nth_simpler(&self, k: &mut usize) -> Option<Self> {
        match self {
            BlockPlan::Text(t) => t.nth_simpler(k).map(BlockPlan::Text),
            BlockPlan::Call(c) => c.nth_simpler(k).map(BlockPlan::Call),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ints_shrink_toward_zero_without_repeats() {
        let all = |v: u8| {
            let mut out = Vec::new();
            let mut k = 0;
            loop {
                let mut kk = k;
                match v.nth_simpler(&mut kk) {
                    Some(c) => out.push(c),
                    None => break,
                }
                k += 1;
            }
            out
        };
        assert_eq!(all(0), Vec::<u8>::new());
        assert_eq!(all(1), [0]);
        assert_eq!(all(2), [0, 1]);
        assert_eq!(all(10), [0, 1, 2, 3, 4, 5, 6, 7, 8, 9]);
        assert_eq!(all(40), [0, 20, 39]);
    }

    #[test]
    fn vec_candidates_chain_through_k() {
        let v: Vec<u8> = vec![3, 4];
        let mut k = 100;
        assert_eq!(v.nth_simpler(&mut k), None);
        // halves (2) + removals (2) + 3 → [0, 1, 2] + 4 → [0, 1, 2, 3] = 11 variants
        assert_eq!(k, 89);
    }
}
