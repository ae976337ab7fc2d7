//! The cost suite: the fixed, versioned turns `toolcert bench` prices a subject on.
//!
//! Four series, each a turn that grows along one dimension while everything else stays put,
//! so the time per tier says how the subject's cost grows:
//!
//! - `call/13` and `call/1`: one call whose arguments are 1 KiB, 8 KiB, 64 KiB and 512 KiB
//!   (4 MiB with `large`), in 13-byte and 1-byte fragments;
//! - `calls/13`: 16, 64 and 256 calls of 1 KiB each (a per-call lookup that scans shows here);
//! - `text/13`: 8 KiB, 64 KiB and 512 KiB of prose before one small call.
//!
//! Every turn ends `tool_use` and renders in every dialect. The documents come from
//! [`workload::document`](crate::workload::document) (escapes, raw non-ASCII, nesting, long
//! arrays). [`SUITE_VERSION`] changes whenever a turn does, so two cost reports compare only
//! when their versions agree.

use serde_json::Value;
use toolcert_scenario::{Block, Call, Case, Ending, Shape, StopReason, TextBlock, Turn};

use crate::workload::{char_splits, document};

/// The version of the suite below; reports carry it.
pub const SUITE_VERSION: u32 = 1;

/// One priced turn.
#[derive(Clone, Debug)]
pub struct CostWorkload {
    /// `call/13/64KiB`: series, then tier.
    pub name: String,
    /// `call/13`.
    pub series: &'static str,
    /// The tier's size along the series' dimension, in bytes (argument bytes for the call
    /// series, all calls' argument bytes for `calls`, text bytes for `text`).
    pub size: usize,
    /// The bytes a subject must move: every call's arguments plus the text.
    pub bytes: usize,
    pub fragment: usize,
    pub case: Case,
    /// What a correct subject reports: each call's id and the strict parse of its arguments
    /// (`None`: the document is not one a strict parser reads, deeper than
    /// [`toolcert_oracle::MAX_DEPTH`]: the call fails as `unparseable`).
    pub calls: Vec<(String, Option<Value>)>,
    pub text: String,
    /// A clean refusal (a turn error, nothing dispatched) is right too: the bounded suite's
    /// streams are a hostile upstream's, and a client may cap them.
    pub refusable: bool,
}

const TOOL: &str = "create_ticket";

fn label(bytes: usize) -> String {
    if bytes >= 1 << 20 && bytes.is_multiple_of(1 << 20) {
        format!("{}MiB", bytes >> 20)
    } else if bytes >= 1 << 10 && bytes.is_multiple_of(1 << 10) {
        format!("{}KiB", bytes >> 10)
    } else {
        format!("{bytes}B")
    }
}

fn call(index: u32, document: String, fragment: usize) -> Call {
    let splits = char_splits(&document, fragment);
    Call { index, call_id: format!("toolu_cost{index:04}"), name: TOOL.into(), arguments: document, splits }
}

fn prose(len: usize) -> String {
    const PIECE: &str = "Checking the order history — 注文 looks fine; next, the refund. ";
    let mut s = String::with_capacity(len + PIECE.len());
    while s.len() < len {
        s.push_str(PIECE);
    }
    let mut end = len;
    while !s.is_char_boundary(end) {
        end -= 1;
    }
    s.truncate(end);
    // Exactly `len` bytes, whatever character the cut fell in.
    while s.len() < len {
        s.push('.');
    }
    s
}

fn turn(blocks: Vec<Block>) -> Turn {
    Turn {
        tools: vec![],
        blocks,
        shape: Shape::PerCall,
        ending: Ending::Stop(StopReason::ToolUse),
        faults: vec![],
        pings: vec![],
        transport: Default::default(),
        wire: Default::default(),
    }
}

fn workload(series: &'static str, size: usize, fragment: usize, blocks: Vec<Block>) -> CostWorkload {
    let mut calls = Vec::new();
    let mut text = String::new();
    let mut bytes = 0;
    for b in &blocks {
        match b {
            Block::Call(c) => {
                bytes += c.arguments.len();
                let v = toolcert_oracle::parse_document(&c.arguments);
                calls.push((c.call_id.clone(), v));
            }
            Block::Text(t) => {
                bytes += t.text.len();
                text.push_str(&t.text);
            }
            #[allow(unreachable_patterns)]
            _ => {}
        }
    }
    let name = format!("{series}/{}", label(size));
    let case = Case::single(format!("cost/{name}"), turn(blocks));
    CostWorkload { name, series, size, bytes, fragment, case, calls, text, refusable: false }
}

/// The suite, series by series, each series' tiers from the smallest; `large` adds the
/// 4 MiB tier to the call series.
pub fn suite(large: bool) -> Vec<CostWorkload> {
    let mut sizes = vec![1 << 10, 8 << 10, 64 << 10, 512 << 10];
    if large {
        sizes.push(4 << 20);
    }
    let mut out = Vec::new();
    for (series, fragment) in [("call/13", 13), ("call/1", 1)] {
        for &len in &sizes {
            out.push(workload(series, len, fragment, vec![Block::Call(call(0, document(len), fragment))]));
        }
    }
    for n in [16u32, 64, 256] {
        let blocks = (0..n).map(|i| Block::Call(call(i, document(1 << 10), 13))).collect();
        out.push(workload("calls/13", n as usize * (1 << 10), 13, blocks));
    }
    for len in [8 << 10, 64 << 10, 512 << 10] {
        let text = prose(len);
        let splits = char_splits(&text, 13);
        let blocks = vec![Block::Text(TextBlock { text, splits }), Block::Call(call(0, document(28), 13))];
        out.push(workload("text/13", len, 13, blocks));
    }
    out
}

/// The version of [`bounded_suite`]; reports carry it.
pub const BOUNDED_SUITE_VERSION: u32 = 1;

/// A document of exactly `len` bytes that is one long string: `{"data":"xxxx…"}`. Its parse
/// weighs what its bytes do, so a subject's memory over the floor's is its own overhead.
fn blob(len: usize) -> String {
    const OPEN: &str = r#"{"data":""#;
    const CLOSE: &str = r#""}"#;
    let fill = len.saturating_sub(OPEN.len() + CLOSE.len());
    let mut d = String::with_capacity(len);
    d.push_str(OPEN);
    // Base64's alphabet: what a large binary argument looks like on the wire.
    const ALPHABET: &[u8] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
    d.extend((0..fill).map(|k| ALPHABET[(k * 7 + k / 64) % 64] as char));
    d.push_str(CLOSE);
    d
}

/// Arrays nested `depth` deep: `[[[…]]]`.
fn nested(depth: usize) -> String {
    let mut d = String::with_capacity(2 * depth + 2);
    d.push('{');
    d.push_str(r#""a":"#);
    d.extend(std::iter::repeat_n('[', depth));
    d.extend(std::iter::repeat_n(']', depth));
    d.push('}');
    d
}

/// Fragment boundaries every `fragment` bytes of an ASCII document.
fn ascii_splits(len: usize, fragment: usize) -> Vec<usize> {
    (1..len.div_ceil(fragment)).map(|k| k * fragment).collect()
}

/// The bounded suite (`toolcert bench --bounded`; docs/SPEC.md "The bounded rule"): the large
/// streams of a hostile upstream, each series growing to the size the rule names, so a
/// subject's time and heap can be set beside the floor's on the same input:
///
/// - `bounded/calls`: 10 to 10,000 calls of a few bytes each;
/// - `bounded/fragments`: one call of 1 KiB to 1 MiB in one-byte fragments (1,048,576 at the
///   top);
/// - `bounded/arguments`: one call of 1 MiB to 100 MiB in 64 KiB fragments;
/// - `bounded/line`: one call of 2 MB to 200 MB in a single fragment (at the bytes level one
///   SSE `data:` line of that length);
/// - `bounded/depth`: arrays nested 100 to 100,000 deep: past 512 no strict parser reads it,
///   so the call fails as `unparseable` (or the turn is refused), and a recursive reader
///   must not overflow its stack.
///
/// Every turn ends `tool_use`; a clean refusal is right as well as a dispatch.
pub fn bounded_suite() -> Vec<CostWorkload> {
    bounded_plan().iter().map(Planned::build).collect()
}

/// A workload of a suite, built only when it runs ([`Planned::build`]): the bounded suite's
/// large streams are hundreds of megabytes each (its document and its parse), so a run
/// holds one at a time, and the harness's own memory follows the largest stream, not the
/// sum of them.
pub struct Planned {
    /// The series it belongs to (`bounded/line`).
    pub series: &'static str,
    make: Box<dyn Fn() -> CostWorkload + Send + Sync>,
}

impl Planned {
    /// The workload.
    pub fn build(&self) -> CostWorkload {
        (self.make)()
    }

    /// A workload already built (the cost suite's are small).
    pub fn built(w: CostWorkload) -> Planned {
        Planned { series: w.series, make: Box::new(move || w.clone()) }
    }

    fn new(series: &'static str, make: impl Fn() -> CostWorkload + Send + Sync + 'static) -> Planned {
        Planned { series, make: Box::new(move || CostWorkload { refusable: true, ..make() }) }
    }
}

/// [`bounded_suite`], each workload built when it runs.
pub fn bounded_plan() -> Vec<Planned> {
    fn one(series: &'static str, size: usize, fragment: usize, document: String) -> CostWorkload {
        let splits = ascii_splits(document.len(), fragment);
        let call = Call {
            index: 0,
            call_id: "toolu_bounded".into(),
            name: TOOL.into(),
            arguments: document,
            splits,
        };
        workload(series, size, fragment, vec![Block::Call(call)])
    }
    let mut out = Vec::new();
    for n in [10u32, 100, 1_000, 10_000] {
        out.push(Planned::new("bounded/calls", move || {
            let blocks = (0..n)
                .map(|i| {
                    Block::Call(Call {
                        index: i,
                        call_id: format!("toolu_b{i:05}"),
                        name: TOOL.into(),
                        arguments: format!(r#"{{"n":{i}}}"#),
                        splits: vec![],
                    })
                })
                .collect();
            CostWorkload {
                name: format!("bounded/calls/{n}"),
                ..workload("bounded/calls", n as usize, 0, blocks)
            }
        }));
    }
    for len in [1 << 10, 16 << 10, 128 << 10, 1 << 20] {
        out.push(Planned::new("bounded/fragments", move || one("bounded/fragments", len, 1, blob(len))));
    }
    for len in [1 << 20, 10 << 20, 100 << 20] {
        out.push(Planned::new("bounded/arguments", move || {
            one("bounded/arguments", len, 64 << 10, blob(len))
        }));
    }
    for len in [2_000_000, 20_000_000, 200_000_000] {
        out.push(Planned::new("bounded/line", move || CostWorkload {
            name: format!("bounded/line/{}MB", len / 1_000_000),
            ..one("bounded/line", len, len, blob(len))
        }));
    }
    for depth in [100usize, 1_000, 10_000, 100_000] {
        out.push(Planned::new("bounded/depth", move || CostWorkload {
            name: format!("bounded/depth/{depth}"),
            ..one("bounded/depth", depth, 13, nested(depth))
        }));
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tiers_grow_within_each_series_and_carry_their_sizes() {
        let s = suite(false);
        assert_eq!(s.len(), 14);
        for w in &s {
            assert!(w.name.starts_with(w.series), "{}", w.name);
            let args: usize = w.case.streams[0].calls().map(|c| c.arguments.len()).sum();
            assert_eq!(w.bytes, args + w.text.len(), "{}", w.name);
        }
        let call13: Vec<usize> = s.iter().filter(|w| w.series == "call/13").map(|w| w.size).collect();
        assert_eq!(call13, [1 << 10, 8 << 10, 64 << 10, 512 << 10]);
        assert_eq!(s.iter().find(|w| w.name == "calls/13/256KiB").map(|w| w.calls.len()), Some(256));
        assert_eq!(s.iter().find(|w| w.name == "text/13/64KiB").map(|w| w.text.len()), Some(64 << 10));
        assert_eq!(suite(true).len(), 16);
    }

    #[test]
    fn the_bounded_suite_reaches_the_sizes_the_rule_names() {
        let s = bounded_suite();
        let top = |series: &str| s.iter().rfind(|w| w.series == series).expect("a series");
        assert_eq!(top("bounded/calls").calls.len(), 10_000);
        let fragments = &top("bounded/fragments").case.streams[0];
        assert_eq!(fragments.calls().map(|c| c.splits.len() + 1).sum::<usize>(), 1 << 20);
        assert_eq!(top("bounded/arguments").bytes, 100 << 20);
        let line = &top("bounded/line").case.streams[0];
        assert!(line.calls().all(|c| c.splits.is_empty() && c.arguments.len() == 200_000_000));
        let deep = top("bounded/depth");
        assert_eq!(
            toolcert_oracle::nesting_depth(&deep.case.streams[0].calls().next().unwrap().arguments),
            100_001
        );
        // Past the deepest document a strict parser reads, the call must fail as unparseable.
        assert_eq!(deep.calls[0].1, None);
        assert!(s.iter().find(|w| w.name == "bounded/depth/100").unwrap().calls[0].1.is_some());
        for w in &s {
            assert!(w.refusable && w.name.starts_with(w.series), "{}", w.name);
            for c in w.case.streams[0].calls() {
                assert!(
                    c.splits.windows(2).all(|p| p[0] < p[1])
                        && c.splits.iter().all(|&k| k < c.arguments.len())
                );
            }
        }
    }
}
