//! Value-level minimisation of a counterexample, after the generator's own shrinking.
//!
//! The generator shrinks along the choices it made; a person reading a counterexample wants
//! less: no fragment boundary, block, stream, ping or byte that the failure does not need.
//! [`minimize`] takes greedy steps on the [`Case`] value itself (every scenario value renders,
//! positions are clamped where used, so any step gives a valid case) and keeps a step only
//! when the failure it must keep still shows, until no step helps: a local minimum.

use toolcert_oracle::Violation;
use toolcert_scenario::{Block, Case, Turn};

/// Shrinks `best` while `shows` still finds the failure (it returns the violations of a
/// candidate that shows it), trying at most `limit` candidates.
pub(crate) fn minimize(
    mut best: (Case, Vec<Violation>),
    shows: &dyn Fn(&Case) -> Option<Vec<Violation>>,
    limit: usize,
) -> (Case, Vec<Violation>) {
    let mut tried = 0;
    'improve: loop {
        for candidate in steps(&best.0) {
            if tried >= limit {
                break 'improve;
            }
            tried += 1;
            if let Some(v) = shows(&candidate) {
                best = (candidate, v);
                continue 'improve;
            }
        }
        break;
    }
    best
}

/// Every one-step simplification of `case`, the ones that remove most first.
fn steps(case: &Case) -> Vec<Case> {
    let mut out = Vec::new();
    if case.streams.len() > 1 {
        for s in 0..case.streams.len() {
            let mut c = case.clone();
            c.streams.remove(s);
            out.push(c);
        }
    }
    for (s, turn) in case.streams.iter().enumerate() {
        let with = |f: &dyn Fn(&mut Turn)| {
            let mut c = case.clone();
            f(&mut c.streams[s]);
            c
        };
        for b in 0..turn.blocks.len() {
            out.push(with(&|t| {
                t.blocks.remove(b);
            }));
        }
        for f in 0..turn.faults.len() {
            out.push(with(&|t| {
                t.faults.remove(f);
            }));
        }
        for p in 0..turn.pings.len() {
            out.push(with(&|t| {
                t.pings.remove(p);
            }));
        }
        let tr = &turn.transport;
        for k in 0..tr.cuts.len() {
            out.push(with(&|t| {
                t.transport.cuts.remove(k);
            }));
        }
        if !tr.comments.is_empty() {
            out.push(with(&|t| t.transport.comments.clear()));
        }
        if !tr.multiline.is_empty() {
            out.push(with(&|t| t.transport.multiline.clear()));
        }
        if tr.line_end != Default::default() {
            out.push(with(&|t| t.transport.line_end = Default::default()));
        }
        // Merge adjacent fragments: drop one split point.
        for (b, block) in turn.blocks.iter().enumerate() {
            for k in 0..splits(block).len() {
                out.push(with(&|t| {
                    splits_mut(&mut t.blocks[b]).remove(k);
                }));
            }
        }
        // Shorter strings: cut spans of halving length out of text and arguments.
        for (b, block) in turn.blocks.iter().enumerate() {
            let text = match block {
                Block::Call(c) => &c.arguments,
                Block::Text(t) => &t.text,
                Block::Foreign(f) => &f.text,
            };
            for (lo, hi) in spans(text) {
                out.push(with(&|t| cut_span(&mut t.blocks[b], lo, hi)));
            }
        }
    }
    out
}

fn splits(b: &Block) -> &[usize] {
    match b {
        Block::Call(c) => &c.splits,
        Block::Text(t) => &t.splits,
        Block::Foreign(f) => &f.splits,
    }
}

fn splits_mut(b: &mut Block) -> &mut Vec<usize> {
    match b {
        Block::Call(c) => &mut c.splits,
        Block::Text(t) => &mut t.splits,
        Block::Foreign(f) => &mut f.splits,
    }
}

/// Spans to try removing: halves, quarters, ... down to 1/64 of the string (at least one
/// character), on character boundaries.
fn spans(text: &str) -> Vec<(usize, usize)> {
    let n = text.len();
    let mut out = Vec::new();
    let mut parts = 2;
    while parts <= 64 {
        let width = n.div_ceil(parts);
        if width == 0 {
            break;
        }
        let mut lo = 0;
        while lo < n {
            let hi = (lo + width).min(n);
            let (a, b) = (floor(text, lo), floor(text, hi));
            if a < b && !out.contains(&(a, b)) {
                out.push((a, b));
            }
            lo = hi;
        }
        if width == 1 {
            break;
        }
        parts *= 2;
    }
    out
}

fn floor(text: &str, mut at: usize) -> usize {
    while at > 0 && !text.is_char_boundary(at) {
        at -= 1;
    }
    at
}

/// Removes bytes `lo..hi` of the block's string; split points after the span move back with
/// it, those inside it land on its start.
fn cut_span(block: &mut Block, lo: usize, hi: usize) {
    let (text, splits) = match block {
        Block::Call(c) => (&mut c.arguments, &mut c.splits),
        Block::Text(t) => (&mut t.text, &mut t.splits),
        Block::Foreign(f) => (&mut f.text, &mut f.splits),
    };
    text.replace_range(lo..hi, "");
    for s in splits.iter_mut() {
        if *s >= hi {
            *s -= hi - lo;
        } else if *s > lo {
            *s = lo;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn spans_stay_on_character_boundaries() {
        let text = "aé€😀b";
        for (lo, hi) in spans(text) {
            assert!(text.is_char_boundary(lo) && text.is_char_boundary(hi), "{lo}..{hi}");
            assert!(lo < hi);
        }
    }

    #[test]
    fn cutting_a_span_moves_the_splits_after_it() {
        let mut b =
            Block::Text(toolcert_scenario::TextBlock { text: "abcdef".into(), splits: vec![1, 3, 5] });
        cut_span(&mut b, 2, 4);
        let Block::Text(t) = b else { unreachable!() };
        assert_eq!(t.text, "abef");
        assert_eq!(t.splits, vec![1, 2, 3]);
    }
}
