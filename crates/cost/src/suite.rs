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
    /// What a correct subject reports: each call's id and the strict parse of its arguments.
    pub calls: Vec<(String, Value)>,
    pub text: String,
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
                let v = serde_json::from_str(&c.arguments).expect("cost documents are JSON");
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
    CostWorkload { name, series, size, bytes, fragment, case, calls, text }
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
}
