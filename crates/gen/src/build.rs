//! Building: plan → [`Case`].
//!
//! The deterministic half of generation. It renders each call's document, cuts the last
//! one when the ending says the model was cut off, resolves each split plan to a byte offset
//! of the class it asks for (using [`crate::lex`]), numbers the calls as the provider would
//! (content-block position for the per-call shape, call ordinal for the interleaved one),
//! gives them realistic ids, and places the ending, faults and pings at positions scaled to
//! the stream's length. Any plan builds a case that renders.

use std::borrow::Cow;

use toolcert_scenario::{
    normalized_splits, Block, Call, Case, Ending, Fault, FaultKind, ForeignBlock, ForeignKind, Interleave,
    Shape, StopReason, StreamEnd, StreamSchedule, TextBlock, Tool, Turn,
};

use crate::doc::{self, TOOLS};
use crate::lex::{self, flag, Resume};
use crate::plan::{BlockPlan, CallPlan, CasePlan, ForeignPlan, SplitClass, SplitPlan, TextPlan, TurnPlan};
use crate::{GenConfig, ShapeMix};

/// Prose pieces of text blocks: markdown, non-ASCII, newlines.
const PROSE: &[&str] = &[
    "I'll look that up.",
    " Let me check",
    " the order",
    " **A-4471**",
    " é",
    " 東京",
    " 😀",
    "\n\n",
    "# Summary\n",
    "> quoted\n",
    " `code`",
    " *both*",
    " — done.",
    " Done.",
    "\n- item",
    " ok",
    // Unicode in every form, raw (the wire escapes none of it).
    " Cafe\u{301}",
    " \u{212b}ngstr\u{f6}m",
    " \u{fb01}le",
    " \u{ff21}\u{ff22}",
    " \u{1112}\u{1161}\u{11ab}",
    " 👨\u{200d}👩\u{200d}👧",
    " \u{200f}שלום\u{200e}",
    " line\u{2028}para\u{2029}",
    " \u{feff}bom",
    " \u{fdd0}\u{10ffff}",
    " 𝄞",
];

const FAULT_FRAGMENTS: &[&str] = &["{\"x\": 1}", "}", ", \"extra\": true", "\"open\"", " ", "é"];
const ERROR_MESSAGES: &[&str] = &[
    "Overloaded",
    "Internal server error",
    "rate_limit_exceeded: slow down",
    "upstream connect error or disconnect/reset before headers",
];

pub(crate) fn build_case(plan: &CasePlan, cfg: &GenConfig, name: String) -> Case {
    let (first, tools) = build_turn(&plan.first, cfg, plan.id_seed, 0, None);
    let mut streams = Vec::with_capacity(1 + plan.more.len());
    streams.push(first);
    if cfg.multi_stream {
        let shared = (plan.share != 0).then_some(&tools[..]);
        for (k, tp) in plan.more.iter().take(cfg.max_streams.saturating_sub(1)).enumerate() {
            streams.push(build_turn(tp, cfg, plan.id_seed, k + 1, shared).0);
        }
    }
    let schedule = if streams.len() >= 2 && plan.concurrent % 2 == 1 {
        StreamSchedule::Concurrent(plan.order.iter().map(|&o| u16::from(o)).collect())
    } else {
        StreamSchedule::Sequential
    };
    Case { name, streams, schedule }
}

/// The effective family: 0 Anthropic-like, 1 Responses-like, 2 OpenAI Chat.
fn family(f: u8, mix: ShapeMix) -> u8 {
    let f = f % 3;
    match mix {
        ShapeMix::Both => f,
        ShapeMix::PerCall => f.min(1),
        ShapeMix::Interleaved => 2,
    }
}

enum Laid<'p> {
    Text(&'p TextPlan),
    Call { plan: &'p CallPlan, tool: u8, keys: usize },
    Foreign { plan: &'p ForeignPlan, kind: ForeignKind },
}

/// The foreign kinds each family has (0 Anthropic-like, 1 Responses-like, 2 OpenAI Chat),
/// and how often each is drawn: Anthropic's server tool use brings its result along.
const FOREIGN_KINDS: [&[ForeignKind]; 3] = [
    &[ForeignKind::Thinking, ForeignKind::RedactedThinking, ForeignKind::ServerToolUse],
    &[
        ForeignKind::Thinking,
        ForeignKind::RedactedThinking,
        ForeignKind::WebSearchCall,
        ForeignKind::Refusal,
        ForeignKind::CustomToolCall,
    ],
    &[ForeignKind::Thinking, ForeignKind::Refusal],
];
pub(crate) const FOREIGN_WEIGHTS: [&[u32]; 3] = [&[35, 20, 45], &[15, 10, 20, 20, 35], &[50, 50]];

/// What foreign blocks carry, per kind: content that looks like what the provider sends,
/// some of it valid JSON (so that a client that parses it finds a document), none of it
/// text a text block or an argument document has.
fn foreign_text(kind: ForeignKind, choice: u8) -> &'static str {
    const THINKING: &[&str] = &[
        "The user wants the order's status, so I should look it up before answering.",
        "{\"plan\": [\"look up\", \"summarise\"]} \u{2014} draft, not a call",
        "Thinking about Mérida \u{2708} and 東京 first; then the weather.",
    ];
    const REDACTED: &[&str] = &[
        "EmwKAhgBEgy3va3pzix/LafPsn4aDFIT2Xlxh0L5L8rLVyIwxtE3rAFBa8cr3qpPkNRj2YfWXGmKDxH4mPnZ5sQ7vB8URj2pLmXH",
        "ErUBCkYIARgCIkCYLr7LMWnzBUHn",
    ];
    const SERVER_INPUT: &[&str] = &[
        "{\"query\": \"weather in Paris today\"}",
        "{\"query\": \"A-4471 refund policy\", \"max_uses\": 3}",
    ];
    const RESULT: &[&str] = &["Paris weather \u{2014} Météo-France", "Refund policy | Help Center"];
    const QUERY: &[&str] = &["latest refund policy for order A-4471", "weather Paris \u{2600}"];
    const REFUSAL: &[&str] =
        &["I can't help with that request.", "I\u{2019}m sorry, but I can\u{2019}t assist with that."];
    const CUSTOM: &[&str] = &[
        "*** Begin Patch\n*** Update File: src/main.rs\n@@\n-fn main() {}\n+fn main() { run(); }\n*** End Patch",
        "{\"looks\": \"like json\", \"but\": \"is freeform\"}",
        "SELECT id, status FROM orders WHERE id = 'A-4471';",
    ];
    let pick = |list: &[&'static str]| list[usize::from(choice) % list.len()];
    match kind {
        ForeignKind::Thinking => pick(THINKING),
        ForeignKind::RedactedThinking => pick(REDACTED),
        ForeignKind::ServerToolUse => pick(SERVER_INPUT),
        ForeignKind::ServerToolResult => pick(RESULT),
        ForeignKind::WebSearchCall => pick(QUERY),
        ForeignKind::Refusal => pick(REFUSAL),
        ForeignKind::CustomToolCall => pick(CUSTOM),
    }
}

/// Builds one turn; also returns the tools its calls use, in order (for shared streams).
pub(crate) fn build_turn(
    tp: &TurnPlan,
    cfg: &GenConfig,
    id_seed: u16,
    stream: usize,
    shared: Option<&[u8]>,
) -> (Turn, Vec<u8>) {
    let family = family(tp.family, cfg.shape_mix);
    let interleaved = family == 2;

    // Lay the blocks out: no two text blocks in a row, at most `max_calls` calls, the
    // same-tool and shared-stream rules applied.
    let mut laid: Vec<Laid<'_>> = Vec::with_capacity(tp.blocks.len());
    let mut call_tools: Vec<u8> = Vec::with_capacity(cfg.max_calls.min(8));
    let mut first_keys = 0;
    for b in &tp.blocks {
        match b {
            BlockPlan::Text(t) => {
                if !matches!(laid.last(), Some(Laid::Text(_))) {
                    laid.push(Laid::Text(t));
                }
            }
            BlockPlan::Call(c) => {
                let k = call_tools.len();
                if k >= cfg.max_calls {
                    continue;
                }
                let same = tp.same_tool % 2 == 1 && k > 0;
                let tool = if same {
                    call_tools[0]
                } else {
                    shared.and_then(|s| s.get(k)).copied().unwrap_or(c.tool) % TOOLS.len() as u8
                };
                let keys = if same { first_keys } else { c.doc.fields.len() };
                if k == 0 {
                    first_keys = keys;
                }
                call_tools.push(tool);
                laid.push(Laid::Call { plan: c, tool, keys });
            }
        }
    }

    // Foreign blocks go anywhere among the others; a server tool use brings its result.
    for f in tp.foreign.iter() {
        let kinds = FOREIGN_KINDS[usize::from(family)];
        let kind = kinds[usize::from(f.kind) % kinds.len()];
        let at = usize::from(f.at) * (laid.len() + 1) / 256;
        laid.insert(at, Laid::Foreign { plan: f, kind });
        if kind == ForeignKind::ServerToolUse && f.text % 4 != 3 {
            laid.insert(at + 1, Laid::Foreign { plan: f, kind: ForeignKind::ServerToolResult });
        }
    }

    // The ending decides whether the model was cut off inside its last call; nothing it
    // wrote after the cut exists.
    let kind = tp.ending.kind % 4;
    let cut = if kind <= 1 { tp.ending.cut % 4 } else { 0 };
    let last_call = laid.iter().rposition(|l| matches!(l, Laid::Call { .. }));
    if let (true, Some(last)) = (cut != 0, last_call) {
        laid.truncate(last + 1);
    }

    let names = Names::new(tp, &call_tools);
    let mut blocks = Vec::with_capacity(laid.len());
    let mut resumes = Vec::new();
    let mut ordinal = 0u32;
    for (pos, l) in laid.iter().enumerate() {
        match *l {
            Laid::Text(t) => blocks.push(Block::Text(text_block(t))),
            Laid::Foreign { plan, kind } => {
                let text = foreign_text(kind, plan.text).to_owned();
                let splits = if kind.streams() {
                    let at: Vec<usize> = plan.splits.iter().map(|&s| scale(s, text.len())).collect();
                    normalized_splits(&text, &at)
                } else {
                    Vec::new()
                };
                // A result answers the server tool use just before it, under its id.
                let id = match (kind, blocks.last()) {
                    (ForeignKind::ServerToolResult, Some(Block::Foreign(u))) => u.id.clone(),
                    (ForeignKind::ServerToolResult, _) => String::new(),
                    _ if kind.carries_id() => {
                        let mut id = foreign_id(kind, id_seed, stream, pos as u32);
                        while blocks.iter().any(|b| matches!(b, Block::Foreign(f) if f.id == id)) {
                            id.push('x');
                        }
                        id
                    }
                    _ => String::new(),
                };
                let name = match kind {
                    ForeignKind::ServerToolUse => "web_search",
                    ForeignKind::CustomToolCall => "apply_patch",
                    // Chat's reasoning under its other spelling, every other time.
                    ForeignKind::Thinking if interleaved && plan.text % 2 == 1 => "reasoning",
                    _ => "",
                };
                let index = if interleaved { 0 } else { pos as u32 };
                blocks.push(Block::Foreign(ForeignBlock {
                    kind,
                    index,
                    id,
                    name: name.into(),
                    text,
                    splits,
                }));
            }
            Laid::Call { plan, tool, keys } => {
                let mut arguments = String::with_capacity(match plan.doc.long {
                    0 => 256,
                    1 => 1024,
                    _ => doc::huge_size(plan.doc.size, cfg.max_args_size) + 512,
                });
                resumes.clear();
                doc::render(
                    tool,
                    &plan.doc,
                    keys,
                    cfg.schema,
                    cfg.max_args_size,
                    &mut arguments,
                    &mut resumes,
                );
                if cut != 0 && Some(pos) == last_call {
                    cut_document(&mut arguments, cut, tp.ending.cut_pos, &mut resumes);
                }
                let splits = resolve_splits(&arguments, &plan.splits, &resumes);
                let mut call_id = call_id(family, id_seed, stream, ordinal);
                while blocks.iter().any(|b| matches!(b, Block::Call(c) if c.call_id == call_id)) {
                    call_id.push('x');
                }
                blocks.push(Block::Call(Call {
                    index: if interleaved { chat_index(tp, ordinal) } else { pos as u32 },
                    call_id,
                    name: names.of(tool).to_owned(),
                    arguments,
                    splits,
                }));
                ordinal += 1;
            }
        }
    }

    // Text that names a tool the turn calls (what a client must not take for a call).
    if tp.mention % 2 == 1 {
        if let (Some(&t), Some(Block::Text(text))) =
            (call_tools.first(), blocks.iter_mut().find(|b| matches!(b, Block::Text(_))))
        {
            text.text.push_str(" I'll call `");
            text.text.push_str(names.of(t));
            text.text.push_str("` for that.");
        }
    }
    let mut tools: Vec<Tool> = Vec::with_capacity(call_tools.len());
    for &t in &call_tools {
        let name = names.of(t);
        if !tools.iter().any(|x| x.name == name) {
            tools.push(Tool {
                name: name.to_owned(),
                schema: cfg.schema.then(|| doc::schema(t as usize).clone()),
            });
        }
    }

    let has_calls = ordinal > 0;
    let stop = |complete: bool| -> StopReason {
        let r = tp.ending.reason as usize;
        match (family, complete) {
            (0, true) => match r % 3 {
                0 if has_calls => StopReason::ToolUse,
                0 | 1 => StopReason::EndTurn,
                _ => StopReason::StopSequence,
            },
            (0, false) => [StopReason::MaxTokens, StopReason::Refusal][r % 2],
            (1, true) => StopReason::Completed,
            (1, false) => StopReason::Incomplete,
            (_, true) => {
                if has_calls && r.is_multiple_of(2) {
                    StopReason::ToolCalls
                } else {
                    StopReason::Stop
                }
            }
            (_, false) => [StopReason::Length, StopReason::ContentFilter][r % 2],
        }
    };
    if cfg.hostile {
        hostile_values(&mut blocks, &mut tools, id_seed, stream);
    }
    let base = body_len(&blocks, interleaved);
    let mut turn = Turn {
        tools,
        blocks,
        shape: if interleaved {
            Shape::Interleaved(Interleave {
                order: tp.order.iter().map(|&o| u16::from(o)).collect(),
                joins: tp.joins.iter().map(|&j| j % 2 == 1).collect(),
            })
        } else {
            Shape::PerCall
        },
        ending: match kind {
            0 => Ending::Stop(stop(true)),
            1 => Ending::Stop(stop(false)),
            // Placed below, once the body's length is known.
            2 => Ending::Abandoned { after: 0, end: StreamEnd::Eof },
            _ => Ending::Errored { after: 0, message: String::new() },
        },
        faults: Vec::new(),
        pings: Vec::new(),
        transport: transport(&tp.transport, base, kind == 2),
        wire: tp.wire.build(base),
    };

    let stop_event = usize::from(kind <= 1);
    if cfg.faults {
        let len = base + stop_event;
        let calls: Vec<&str> = turn.calls().map(|c| c.arguments.as_str()).collect();
        turn.faults = tp
            .faults
            .iter()
            .map(|f| {
                let fragment = FAULT_FRAGMENTS[f.fragment as usize % FAULT_FRAGMENTS.len()].to_owned();
                let call = u16::from(f.call);
                let kind = if interleaved || !cfg.done_mismatch { f.kind % 3 } else { f.kind % 4 };
                Fault {
                    kind: match kind {
                        0 => FaultKind::ReplayAnnouncement { call },
                        // At an index no announcement used, in every dialect (an OpenAI
                        // Chat entry without an index continues the latest call: no fault).
                        1 => FaultKind::UnannouncedFragment { missing_index: false, fragment },
                        2 => FaultKind::FragmentAfterStop { call, fragment },
                        _ => FaultKind::DoneMismatch {
                            call,
                            arguments: mismatch(
                                calls.get(call as usize % calls.len().max(1)).copied(),
                                f.fragment,
                            ),
                        },
                    },
                    at: scale(f.at, len) as u32,
                }
            })
            .collect();
    }
    // A done mismatch changes a terminal event; the other faults add one.
    let inserted = turn.faults.iter().filter(|f| !matches!(f.kind, FaultKind::DoneMismatch { .. })).count();
    let len = base + stop_event + inserted;
    turn.pings = tp.pings.iter().map(|&p| scale(p, len) as u32).collect();
    // Abandoned and errored turns send no stop: the body is blocks, faults and pings.
    let mut after = scale(tp.ending.at, base + inserted + turn.pings.len()) as u32;
    // `[DONE]` with nothing before it: the turn abandoned before its first event.
    if interleaved && tp.wire.done_alone() {
        turn.ending = Ending::Abandoned { after: 0, end: StreamEnd::Eof };
        after = 0;
    }
    match &mut turn.ending {
        Ending::Abandoned { after: a, end } => {
            *a = after;
            *end = [StreamEnd::Eof, StreamEnd::Disconnect, StreamEnd::Cancel][tp.ending.end as usize % 3];
        }
        Ending::Errored { after: a, message } => {
            *a = after;
            *message = ERROR_MESSAGES[tp.ending.message as usize % ERROR_MESSAGES.len()].to_owned();
        }
        Ending::Stop(_) => {}
    }
    (turn, call_tools)
}

/// Arguments a call's terminal event could repeat that differ from what its fragments carry
/// (as a Responses `done` after a lost or altered delta).
fn mismatch(args: Option<&str>, choice: u8) -> String {
    let args = args.unwrap_or("");
    let mut chars = args.char_indices();
    match (choice % 3, chars.nth(args.chars().count() * 2 / 3)) {
        // The fragments' document missing its last third.
        (0, Some((cut, _))) if cut > 0 => args[..cut].to_owned(),
        // The document with one character doubled.
        (1, Some((at, c))) => {
            let mut s = String::with_capacity(args.len() + c.len_utf8());
            s.push_str(&args[..at]);
            s.push(c);
            s.push_str(&args[at..]);
            s
        }
        // Another document altogether.
        _ if args == "{\"x\": 1}" => "{}".to_owned(),
        _ => "{\"x\": 1}".to_owned(),
    }
}

/// `fraction`/256 of the way through `0..=len`.
fn scale(fraction: u8, len: usize) -> usize {
    usize::from(fraction) * (len + 1) / 256
}

/// Body events the blocks render to (before the stop, faults and pings).
fn body_len(blocks: &[Block], interleaved: bool) -> usize {
    let frags = |text: &str, splits: &[usize]| {
        if text.is_empty() && splits.is_empty() {
            0
        } else {
            splits.len() + 1
        }
    };
    blocks
        .iter()
        .map(|b| match b {
            Block::Text(t) => frags(&t.text, &t.splits),
            Block::Call(c) if interleaved => 1 + frags(&c.arguments, &c.splits),
            Block::Call(c) => 2 + frags(&c.arguments, &c.splits),
            Block::Foreign(f) if interleaved => frags(&f.text, &f.splits),
            Block::Foreign(f) if f.kind.streams() => 2 + frags(&f.text, &f.splits),
            Block::Foreign(_) => 2,
        })
        .sum()
}

fn text_block(t: &TextPlan) -> TextBlock {
    let mut text = String::with_capacity(96);
    for &p in t.pieces.iter() {
        text.push_str(PROSE[p as usize % PROSE.len()]);
    }
    if text.is_empty() {
        text.push_str(PROSE[0]);
    }
    let mut splits: Vec<usize> = t.splits.iter().map(|&f| interior(&text, f)).filter(|&s| s > 0).collect();
    splits.sort_unstable();
    TextBlock { text, splits }
}

/// A char boundary in `1..len` at `fraction`/256 of the way, or 0 when there is none.
fn interior(text: &str, fraction: u8) -> usize {
    let len = text.len();
    if len < 2 {
        return 0;
    }
    let mut s = 1 + usize::from(fraction) * (len - 1) / 256;
    while !text.is_char_boundary(s) {
        s -= 1;
    }
    s
}

/// Cuts the document as a model cut off mid-call would leave it (and drops the resume
/// points past the cut).
fn cut_document(doc: &mut String, mode: u8, pos: u8, resumes: &mut Vec<Resume>) {
    let at = match mode {
        2 => nth_with(doc, flag::IN_VALUE_STRING, pos, resumes).unwrap_or_else(|| interior(doc, pos)),
        // Right after the top-level `}`: the cut document parses (the truncation rule must
        // still refuse it). Documents with nothing after the brace stay whole.
        3 => nth_with(doc, flag::PREFIX_PARSES, 0, resumes).unwrap_or(doc.len()),
        _ => interior(doc, pos),
    };
    // A cut before the first byte would leave no arguments, which means `{}`: not a cut.
    if at > 0 {
        doc.truncate(at);
        resumes.retain(|r| r.at() < at);
    }
}

/// The first interior offset (`1..len`, char boundary) carrying `f` at or after
/// `fraction`/256 of the way through the document, wrapping around. (A position, not the
/// n-th candidate: one partial pass instead of a count and a pass.)
fn nth_with(doc: &str, f: u16, fraction: u8, resumes: &[Resume]) -> Option<usize> {
    lex::first_flagged(doc, &[(f, fraction)], resumes)[0]
}

/// Resolves split plans to sorted byte offsets on char boundaries; `resumes` are the
/// renderer's (see [`lex::first_flagged`]).
pub(crate) fn resolve_splits(doc: &str, plans: &[SplitPlan], resumes: &[Resume]) -> Vec<usize> {
    let len = doc.len();
    let bytes = doc.as_bytes();
    // Every plan's question of the lexer, answered in one pass (see `lex::first_flagged`).
    let wanted = |p: &SplitPlan| match p.class() {
        SplitClass::NextToSpace => Some(flag::NEXT_TO_SPACE),
        SplitClass::Escape => Some(flag::ESCAPE),
        SplitClass::Unicode => Some(flag::UNICODE),
        SplitClass::Nested => Some(flag::NESTED),
        SplitClass::KeyColon => Some(flag::KEY_COLON),
        SplitClass::AfterBrace => Some(flag::PREFIX_PARSES),
        _ => None,
    };
    // (A call has at most 8 plans; more are answered 8 at a time.)
    let mut questions = [(0u16, 0u8); 8];
    let mut answers = [None; 8];
    let mut read = 0;
    let mut out = Vec::with_capacity(
        2 * plans.len() + if plans.iter().any(|p| p.class() == SplitClass::Chunked) { len / 2 } else { 0 },
    );
    for (k, p) in plans.iter().enumerate() {
        if k % 8 == 0 {
            let chunk = &plans[k..plans.len().min(k + 8)];
            let mut asked = 0;
            read = 0;
            for p in chunk {
                if let Some(f) = wanted(p) {
                    questions[asked] = (f, p.pick);
                    asked += 1;
                }
            }
            lex::first_flagged_into(doc, &questions[..asked], resumes, &mut answers[..asked]);
        }
        // This plan's answer, taken in plan order whether or not the plan reads it.
        let answer = if wanted(p).is_some() {
            read += 1;
            answers[read - 1]
        } else {
            None
        };
        let uniform = || Some(interior(doc, p.pick)).filter(|&s| s > 0);
        let one = match p.class() {
            SplitClass::Uniform => uniform(),
            SplitClass::NextToSpace => answer.or_else(uniform),
            SplitClass::Escape => answer.or_else(uniform),
            // One in three between the two escapes of a surrogate pair, where there is one.
            SplitClass::Unicode if p.arg % 3 == 0 => surrogate_gap(doc, p.pick).or(answer).or_else(uniform),
            SplitClass::Unicode => answer.or_else(uniform),
            SplitClass::Nested => answer.or_else(uniform),
            SplitClass::KeyColon => answer.or_else(uniform),
            SplitClass::AfterBrace => answer.or_else(uniform),
            SplitClass::OneByteRun => {
                // Consecutive one-byte fragments from an ASCII byte on.
                let from = usize::from(p.pick) * len / 256;
                let start = (from..len)
                    .find(|&s| bytes[s].is_ascii())
                    .or_else(|| (0..from).find(|&s| bytes[s].is_ascii()));
                if let Some(start) = start {
                    let run = 1 + usize::from(p.arg % 4);
                    let mut s = start;
                    while s < len && s < start + run && bytes[s].is_ascii() {
                        if s > 0 {
                            out.push(s);
                        }
                        s += 1;
                    }
                    if s < len {
                        out.push(s);
                    }
                }
                None
            }
            SplitClass::EmptyFragment => match p.arg % 3 {
                // Anthropic often opens a call with an empty `partial_json`.
                0 => Some(0),
                1 => uniform().inspect(|&s| out.push(s)),
                _ => Some(len),
            },
            SplitClass::Chunked => {
                // A tokenizer's flushes: roughly constant fragment size (larger ones in a
                // huge document, as providers send them, which keeps the event count sane).
                let k = if len > crate::HUGE_MIN {
                    256 + 32 * usize::from(p.arg)
                } else {
                    3 + usize::from(p.arg % 14)
                };
                let mut s = 1 + usize::from(p.pick) % k;
                let mut last = 0;
                while s < len {
                    let mut b = s;
                    while !doc.is_char_boundary(b) {
                        b -= 1;
                    }
                    if b > last {
                        out.push(b);
                        last = b;
                    }
                    s += k;
                }
                None
            }
        };
        out.extend(one);
    }
    if !out.is_sorted() {
        // A few sorted runs (a chunked plan's is long): the stable sort merges runs, where the
        // unstable one would partition thousands of offsets. (Offsets are plain integers:
        // both orders are the same.)
        out.sort();
    }
    debug_assert_eq!(normalized_splits(doc, &out), out);
    out
}

/// An offset between a high-surrogate escape and the `\\u` that follows it (`\\ud83d|\\ude00`),
/// the first at or after `fraction`/256 of the document, wrapping around.
fn surrogate_gap(doc: &str, fraction: u8) -> Option<usize> {
    let b = doc.as_bytes();
    // `s` is where a `\u` starts: the gap if a high surrogate's escape ends there.
    let is_gap = |s: usize| {
        s >= 6
            && b[s - 6] == b'\\'
            && b[s - 5] == b'u'
            && matches!(b[s - 4], b'd' | b'D')
            && matches!(b[s - 3], b'8' | b'9' | b'a' | b'b' | b'A' | b'B')
    };
    let start = usize::from(fraction) * b.len() / 256;
    let escapes =
        |from: usize, to: usize| memchr::memmem::find_iter(&b[from..to], b"\\u").map(move |p| from + p);
    // (A `\u` starting before `start` may end after it.)
    escapes(start, b.len())
        .find(|&s| is_gap(s))
        .or_else(|| escapes(0, (start + 1).min(b.len())).find(|&s| is_gap(s)))
}

/// A realistic call id: `toolu_01…` (Anthropic) or `call_…` (OpenAI), derived from the case's
/// id seed, the stream and the call's ordinal.
/// A foreign block's id, in the provider's spelling and never a call's.
fn foreign_id(kind: ForeignKind, seed: u16, stream: usize, pos: u32) -> String {
    let mut x = (u64::from(seed) << 24) ^ ((stream as u64) << 8) ^ u64::from(pos) ^ 0xF0_F0;
    let tail: String =
        (0..16).map(|_| char::from(b"0123456789abcdef"[(splitmix64(&mut x) % 16) as usize])).collect();
    match kind {
        ForeignKind::ServerToolUse => format!("srvtoolu_01{tail}"),
        ForeignKind::WebSearchCall => format!("ws_{tail}"),
        _ => format!("call_ct{tail}"),
    }
}

/// The names a JavaScript or Python client finds on every object, or that reach a prototype.
const HOSTILE_WORDS: [&str; 4] = ["__proto__", "constructor", "toString", "prototype"];

/// A hostile upstream's values in a generated turn (`GenConfig::hostile`; docs/SPEC.md "The
/// hostile upstream"): some call ids become `__proto__`, `constructor`, `toString` or
/// `prototype`, or carry a control character; some documents open with a `__proto__` or a
/// `constructor` member; some turns name a tool with one of those words. Chosen from the ids'
/// seed, not from the plan, so that the other settings' cases stay what they were. They are
/// the model's values: a correct client hands them over exactly.
fn hostile_values(blocks: &mut [Block], tools: &mut [Tool], seed: u16, stream: usize) {
    let mut x = (u64::from(seed) << 32 ^ (stream as u64) << 20) ^ 0x5EED_0B57_11E5;
    let turn_choice = splitmix64(&mut x);
    // A tool renamed in one turn of four: in the offer and in every call of it.
    if turn_choice.is_multiple_of(4) {
        let word = HOSTILE_WORDS[(turn_choice >> 8) as usize % HOSTILE_WORDS.len()];
        if let Some(old) = tools.first().map(|t| t.name.clone()) {
            if !tools.iter().any(|t| t.name == word) {
                tools[0].name = word.to_owned();
                for b in blocks.iter_mut() {
                    if let Block::Call(c) = b {
                        if c.name == old {
                            c.name = word.to_owned();
                        }
                    }
                }
            }
        }
    }
    let mut taken: Vec<String> = blocks
        .iter()
        .filter_map(|b| if let Block::Call(c) = b { Some(c.call_id.clone()) } else { None })
        .collect();
    for b in blocks.iter_mut() {
        let Block::Call(c) = b else { continue };
        let choice = splitmix64(&mut x);
        let word = HOSTILE_WORDS[(choice >> 8) as usize % HOSTILE_WORDS.len()];
        match choice % 8 {
            0 if !taken.iter().any(|t| t == word) => {
                c.call_id = word.to_owned();
                taken.push(word.to_owned());
            }
            1 => c
                .call_id
                .insert(c.call_id.len() / 2, ['\u{7}', '\u{1b}', '\u{0}'][(choice >> 16) as usize % 3]),
            2 | 3 if c.arguments.starts_with("{\"") => {
                let member = if choice % 8 == 2 {
                    r#""__proto__":{"forged":true},"#
                } else {
                    r#""constructor":{"prototype":{"forged":true}},"#
                };
                c.arguments.insert_str(1, member);
                for split in &mut c.splits {
                    if *split > 1 {
                        *split += member.len();
                    }
                }
            }
            _ => {}
        }
    }
}

fn call_id(family: u8, seed: u16, stream: usize, ordinal: u32) -> String {
    const ALPHABET: &[u8] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789";
    let (prefix, n) = if family == 0 { ("toolu_01", 22) } else { ("call_", 24) };
    let mut x = u64::from(seed) << 32 ^ (stream as u64) << 20 ^ u64::from(ordinal);
    // Six bits a character, ten characters a word; the two values past the alphabet fold
    // back (a slight bias no one will notice in an id).
    const SIXTY_FOUR: [u8; 64] = {
        let mut t = [0u8; 64];
        let mut k = 0;
        while k < 64 {
            t[k] = ALPHABET[k % 62];
            k += 1;
        }
        t
    };
    let mut tail = [0u8; 24];
    for chunk in tail[..n].chunks_mut(10) {
        let mut word = splitmix64(&mut x);
        for c in chunk {
            *c = SIXTY_FOUR[(word & 63) as usize];
            word >>= 6;
        }
    }
    let mut id = String::with_capacity(prefix.len() + n);
    id.push_str(prefix);
    id.push_str(std::str::from_utf8(&tail[..n]).expect("an ASCII alphabet"));
    id
}

pub(crate) fn splitmix64(x: &mut u64) -> u64 {
    *x = x.wrapping_add(0x9E37_79B9_7F4A_7C15);
    let mut z = *x;
    z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    z ^ (z >> 31)
}

/// The call index of the `ordinal`-th call of an interleaved turn: dense from 0, or as some
/// servers number them, from past 0 or with gaps (an index is a key, not a position).
fn chat_index(tp: &TurnPlan, ordinal: u32) -> u32 {
    let arg = u32::from(tp.index_arg);
    match tp.indices % 3 {
        0 => ordinal,
        1 => 1 + arg % 4 + ordinal,
        _ => arg % 3 + ordinal * (2 + arg / 3 % 3),
    }
}

/// How a turn spells its tools' names: one style for the turn (snake_case as the templates
/// have them, camelCase, PascalCase, kebab-case, with digits, or the full 64 characters
/// the providers allow, `^[a-zA-Z0-9_-]{1,64}$`), and sometimes a second tool whose name
/// differs from the first's only in case, or only by a suffix.
struct Names {
    /// Empty: the template's name. (Borrowed where a style writes it as it is.)
    spelled: [Cow<'static, str>; TOOLS.len()],
}

impl Names {
    fn new(tp: &TurnPlan, call_tools: &[u8]) -> Names {
        let mut spelled: [Cow<'static, str>; TOOLS.len()] = Default::default();
        let style = tp.names % 6;
        for &t in call_tools {
            if spelled[t as usize].is_empty() {
                spelled[t as usize] = spell(TOOLS[t as usize].name, style);
            }
        }
        let mut distinct = call_tools.iter().copied();
        let first = distinct.next();
        let second = first.and_then(|f| call_tools.iter().copied().find(|&t| t != f));
        if let (Some(a), Some(b)) = (first, second) {
            let a_name = spelled[a as usize].clone();
            match tp.name_pair % 3 {
                // The first letter's case flipped: the only difference.
                1 => {
                    let mut chars = a_name.chars();
                    let c = chars.next().unwrap_or('x');
                    let flipped =
                        if c.is_ascii_uppercase() { c.to_ascii_lowercase() } else { c.to_ascii_uppercase() };
                    spelled[b as usize] = Cow::Owned(std::iter::once(flipped).chain(chars).collect());
                }
                // One name is the other and a suffix (a name at the limit loses its suffix).
                2 if a_name.len() + 3 <= 64 => spelled[b as usize] = Cow::Owned(format!("{a_name}_v2")),
                2 => spelled[b as usize] = Cow::Owned(a_name[..a_name.len() - 3].to_owned()),
                _ => {}
            }
        }
        Names { spelled }
    }

    fn of(&self, tool: u8) -> &str {
        let s = &self.spelled[tool as usize];
        if s.is_empty() {
            TOOLS[tool as usize].name
        } else {
            s
        }
    }
}

/// `snake_name` in one of the spelling styles of [`Names`].
fn spell(snake: &'static str, style: u8) -> Cow<'static, str> {
    // The words without their underscores, capitalized from the `first`-th on.
    let capitalized = |first: usize| {
        let mut s = String::with_capacity(snake.len());
        for (i, w) in snake.split('_').enumerate() {
            let mut c = w.chars();
            if let Some(f) = c.next() {
                s.push(if i >= first { f.to_ascii_uppercase() } else { f });
                s.push_str(c.as_str());
            }
        }
        s
    };
    Cow::Owned(match style {
        1 => capitalized(1),
        2 => capitalized(0),
        3 => snake.replace('_', "-"),
        4 => format!("{snake}2_v1"),
        5 => {
            let mut s = String::with_capacity(64);
            s.push_str(snake);
            s.push('_');
            for c in "Xy0-z9_".chars().cycle() {
                if s.len() == 64 {
                    break;
                }
                s.push(c);
            }
            s
        }
        _ => return Cow::Borrowed(snake),
    })
}

/// The scenario's transport from its plan; comment and multi-line positions scale to the
/// turn's length. An abandoned turn may drop its connection inside the next event.
fn transport(t: &crate::plan::TransportPlan, events: usize, abandoned: bool) -> toolcert_scenario::Transport {
    use toolcert_scenario::{Cut, CutAim, LineEnd, Tail, TailAim, Transport};
    const AIMS: [CutAim; 5] =
        [CutAim::Anywhere, CutAim::InsideChar, CutAim::InsideDataPrefix, CutAim::BetweenCrLf, CutAim::Every];
    Transport {
        line_end: [LineEnd::Lf, LineEnd::CrLf, LineEnd::Cr][t.line_end as usize % 3],
        cuts: t
            .cuts
            .iter()
            .map(|c| Cut {
                aim: AIMS[c.aim as usize % AIMS.len()],
                pick: u32::from(c.pick) | u32::from(c.pick_hi) << 8,
            })
            .collect(),
        comments: t.comments.iter().map(|&p| scale(p, events + 2) as u32).collect(),
        multiline: t.multiline.iter().map(|&p| scale(p, events + 2) as u32).collect(),
        tail: (abandoned && t.tail > 0)
            .then(|| Tail { aim: TailAim::ALL[(t.tail as usize - 1) % 4], pick: u32::from(t.tail_pick) }),
        corrupt: (t.corrupt > 0).then(|| toolcert_scenario::Corrupt {
            after: scale(t.corrupt_at, events + 2) as u32,
            what: toolcert_scenario::CorruptWhat::ALL[(t.corrupt as usize - 1) % 4],
        }),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn plan(class: SplitClass, pick: u8, arg: u8) -> SplitPlan {
        SplitPlan { class: class as u8, arg, pick }
    }

    #[test]
    fn splits_land_in_their_class() {
        let d = r#"{"city": "M\u00e9rida", "note": "line one\nline two"}"#;
        let s = resolve_splits(d, &[plan(SplitClass::Unicode, 0, 0)], &[]);
        assert_eq!(&d[..s[0]], r#"{"city": "M\u"#);
        let s = resolve_splits(d, &[plan(SplitClass::Escape, 128, 0)], &[]);
        assert_eq!(&d[s[0]..], "nline two\"}");
        let s = resolve_splits(d, &[plan(SplitClass::KeyColon, 0, 0)], &[]);
        assert_eq!(&d[s[0]..s[0] + 1], ":");
        let d = "{\"limit\": 20}\n";
        let s = resolve_splits(d, &[plan(SplitClass::AfterBrace, 0, 0)], &[]);
        assert_eq!(s, [13]);
    }

    #[test]
    fn one_byte_runs_and_empty_fragments() {
        let d = r#"{"a": "é"}"#;
        let s = resolve_splits(d, &[plan(SplitClass::OneByteRun, 0, 1)], &[]);
        assert_eq!(s, [1, 2]);
        let s = resolve_splits(d, &[plan(SplitClass::EmptyFragment, 0, 0)], &[]);
        assert_eq!(s, [0]);
        let s = resolve_splits(d, &[plan(SplitClass::EmptyFragment, 0, 2)], &[]);
        assert_eq!(s, [d.len()]);
    }

    /// Huge and deep documents of every form, whole and cut: each resume point the renderer records
    /// is where a pass from the first byte has the lexer, and every answer resuming from
    /// them is the answer of a pass from the first byte.
    #[test]
    fn resume_points_hold_and_answer_as_a_pass_from_the_start() {
        use crate::source::RngSource;
        let classes = [
            flag::NEXT_TO_SPACE,
            flag::ESCAPE,
            flag::UNICODE,
            flag::NESTED,
            flag::KEY_COLON,
            flag::PREFIX_PARSES,
            flag::IN_VALUE_STRING,
            flag::IN_STRING,
        ];
        let mut docs = 0;
        let mut points = 0;
        for k in 0..300u64 {
            let huge = k % 10 == 0;
            let cfg = GenConfig {
                schema: k % 2 == 0,
                max_args_size: if huge { 1 << 18 } else { 1 << 16 },
                ..GenConfig::default()
            };
            let plan = CasePlan::sample(&mut RngSource::new(&mut crate::rng_for_case(3, k)), &cfg);
            for (n, b) in plan.first.blocks.iter().enumerate() {
                let BlockPlan::Call(c) = b else { continue };
                let mut d = c.doc;
                // Huge, deep (form 11), or both.
                d.long = if k % 3 == 1 { d.long } else { 2 };
                if k % 3 != 0 {
                    d.form = 11;
                }
                d.size = d.size.wrapping_add(k as u8);
                let mut doc = String::new();
                let mut resumes = Vec::new();
                doc::render(
                    c.tool % 7,
                    &d,
                    d.fields.len(),
                    cfg.schema,
                    cfg.max_args_size,
                    &mut doc,
                    &mut resumes,
                );
                if n % 2 == 1 {
                    cut_document(&mut doc, 1 + (k % 3) as u8, d.form_arg, &mut resumes);
                }
                for &r in &resumes {
                    assert!(lex::resume_holds(&doc, r), "{r:?} in {doc:?}");
                }
                docs += 1;
                points += resumes.len();
                let questions: Vec<(u16, u8)> = (0..8)
                    .map(|q| {
                        (
                            classes[(q + k as usize) % classes.len()],
                            [
                                0,
                                1,
                                128,
                                255,
                                d.form_arg,
                                (c.splits.len() as u8).wrapping_mul(37),
                                d.size,
                                200,
                            ][q],
                        )
                    })
                    .collect();
                assert_eq!(
                    lex::first_flagged(&doc, &questions, &resumes),
                    lex::first_flagged(&doc, &questions, &[]),
                    "{questions:?} {resumes:?} in {doc:?}"
                );
            }
        }
        assert!(docs > 250 && points > 10 * docs, "{docs} documents, {points} points");
    }

    #[test]
    fn surrogate_gaps_are_where_the_per_byte_search_finds_them() {
        let mut docs: Vec<String> =
            ["", "\\u", "\\ud83d\\u", "x\\ud83d\\ude00\\uD83D\\uDE00 \\uDBFF\\udfff\\u"]
                .iter()
                .map(|d| d.to_string())
                .collect();
        for case in crate::cases(&GenConfig::default(), 21).take(1000) {
            docs.extend(case.streams.iter().flat_map(|t| t.calls().map(|c| c.arguments.clone())));
        }
        for d in &docs {
            for fraction in 0..=255u8 {
                assert_eq!(
                    surrogate_gap(d, fraction),
                    surrogate_gap_per_byte(d, fraction),
                    "{d:?} at {fraction}"
                );
            }
        }
    }

    /// [`surrogate_gap`] as it was, byte by byte (the tests' oracle).
    fn surrogate_gap_per_byte(doc: &str, fraction: u8) -> Option<usize> {
        let b = doc.as_bytes();
        let is_gap = |s: usize| {
            s >= 6
                && s + 2 <= b.len()
                && b[s - 6] == b'\\'
                && b[s - 5] == b'u'
                && matches!(b[s - 4], b'd' | b'D')
                && matches!(b[s - 3], b'8' | b'9' | b'a' | b'b' | b'A' | b'B')
                && &b[s..s + 2] == b"\\u"
        };
        let start = usize::from(fraction) * b.len() / 256;
        (start..b.len()).find(|&s| is_gap(s)).or_else(|| (0..start).find(|&s| is_gap(s)))
    }

    #[test]
    fn cuts_after_the_top_level_brace_parse() {
        let mut d = String::from("{\"limit\": 20}  ");
        cut_document(&mut d, 3, 0, &mut Vec::new());
        assert_eq!(d, "{\"limit\": 20}");
        let mut d = String::from(r#"{"note": "abc def"}"#);
        cut_document(&mut d, 2, 0, &mut Vec::new());
        assert_eq!(d, r#"{"note": ""#);
    }

    /// [`call_id`] as it was, a character at a time (the tests' oracle).
    fn call_id_per_char(family: u8, seed: u16, stream: usize, ordinal: u32) -> String {
        const ALPHABET: &[u8] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789";
        let (prefix, n) = if family == 0 { ("toolu_01", 22) } else { ("call_", 24) };
        let mut x = u64::from(seed) << 32 ^ (stream as u64) << 20 ^ u64::from(ordinal);
        let mut tail = [0u8; 24];
        let mut word = 0u64;
        for (i, c) in tail[..n].iter_mut().enumerate() {
            if i % 10 == 0 {
                word = splitmix64(&mut x);
            }
            *c = ALPHABET[(word & 63) as usize % 62];
            word >>= 6;
        }
        format!("{prefix}{}", std::str::from_utf8(&tail[..n]).unwrap())
    }

    /// A hostile setting's generated turns carry each kind of hostile value, as the model's
    /// own, and another setting's carry none.
    #[test]
    fn hostile_values_come_in_a_hostile_setting_only() {
        let hostile = GenConfig { hostile: true, ..GenConfig::default() };
        let calls = |cfg: &GenConfig| -> Vec<(String, String, String)> {
            crate::cases(cfg, 7)
                .take(400)
                .flat_map(|c| c.streams)
                .flat_map(|t| {
                    t.calls()
                        .map(|c| (c.call_id.clone(), c.name.clone(), c.arguments.clone()))
                        .collect::<Vec<_>>()
                })
                .collect()
        };
        let seen = calls(&hostile);
        let has = |f: &dyn Fn(&(String, String, String)) -> bool| seen.iter().filter(|c| f(c)).count();
        assert!(has(&|c| HOSTILE_WORDS.contains(&c.0.as_str())) > 5);
        assert!(has(&|c| c.0.contains(['\u{7}', '\u{1b}', '\u{0}'])) > 5);
        assert!(has(&|c| HOSTILE_WORDS.contains(&c.1.as_str())) > 5);
        assert!(has(&|c| c.2.starts_with(r#"{"__proto__":{"forged":true},"#)) > 5);
        assert!(has(&|c| c.2.starts_with(r#"{"constructor":{"prototype""#)) > 5);
        let plain = calls(&GenConfig::default());
        assert!(plain.iter().all(|c| !HOSTILE_WORDS.contains(&c.0.as_str()) && !c.2.contains("forged")));
    }

    #[test]
    fn call_ids_are_the_per_char_ones() {
        for seed in (0..=u16::MAX).step_by(97) {
            for family in 0..3 {
                for (stream, ordinal) in [(0, 0), (1, 3), (2, 7), (0, 1 << 19)] {
                    assert_eq!(
                        call_id(family, seed, stream, ordinal),
                        call_id_per_char(family, seed, stream, ordinal)
                    );
                }
            }
        }
    }

    #[test]
    fn ids_look_real_and_differ() {
        let a = call_id(0, 7, 0, 0);
        let b = call_id(0, 7, 0, 1);
        assert!(a.starts_with("toolu_01") && a.len() == 30, "{a}");
        assert_ne!(a, b);
        assert!(call_id(2, 7, 0, 0).starts_with("call_"));
    }
}
