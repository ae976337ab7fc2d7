//! Reading an argument document as JSON at any depth up to a bound: the one parse the
//! oracle (to derive what a call's arguments are) and the reference accumulator (to parse
//! what it received) share. A pure helper: neither consults the other through it.

use serde_json::Value;

pub mod bytes;
mod strict;

pub use strict::{parse_finite, parse_finite_containers};

/// The most levels of nesting a document may have and still parse. JSON itself has no limit
/// and RFC 8259 (section 9) lets a parser set one; the generators nest up to 287 levels, past
/// the 128 of common defaults, so a client whose parser stops there is found. Deeper than
/// this the harness itself stops (the parse recurses), and judges the document unparseable.
pub const MAX_DEPTH: usize = 512;

/// The JSON grammar and the depth limit (no number checks): `None` when `document` is not
/// one JSON value nested at most [`MAX_DEPTH`] levels.
pub fn parse_nested(document: &str) -> Option<Value> {
    parse_nested_as::<Value>(document)
}

/// [`parse_nested`] into any type read from a JSON value, for a caller that checks more as it
/// reads (the reference refuses an overflowing number while parsing, not in a second walk):
/// `None` also when `T` refuses the value. `T`'s own errors must not be syntax errors, or one
/// could pass for the depth limit.
pub fn parse_nested_as<T: serde::de::DeserializeOwned>(document: &str) -> Option<T> {
    match serde_json::from_str::<T>(document) {
        Ok(v) => Some(v),
        // serde_json stops at 128 levels by default; between that and ours, parse again
        // without its limit (the depth is checked first, so the recursion stays bounded).
        // Only a syntax error can be the depth limit: a cut document's end-of-input error is
        // not formatted to find out.
        Err(e)
            if e.classify() == serde_json::error::Category::Syntax
                && e.to_string().starts_with("recursion limit exceeded")
                && depth(document) <= MAX_DEPTH =>
        {
            parse_unbounded(document)
        }
        Err(_) => None,
    }
}

/// [`parse_nested`], for a caller that parses many deep documents (the oracle): a document is
/// nested no deeper than it has brackets, so one with at most [`MAX_DEPTH`] of them is parsed
/// without serde_json's limit at once, as the retry would parse it, and a deep one does not
/// first fail at level 128, building an error at every level it unwinds (each counting lines
/// from the start). The count is a pass over the bytes (vectorised), which [`parse_nested`]
/// spares a caller whose documents are rarely deep (the reference, whose cost is measured
/// against a bare parse).
pub fn parse_nested_eager(document: &str) -> Option<Value> {
    if document.len() <= MAX_DEPTH || openers_at_most(document.as_bytes(), MAX_DEPTH) {
        return parse_unbounded(document);
    }
    parse_nested(document)
}

/// Whether `bytes` hold at most `limit` of `[` and `{`. Counted in blocks of bytes whose
/// per-byte flags sum in a `u8` lane each (the loop vectorises; a plain filtered count did not,
/// and cost a tenth of the oracle's parse), stopping once past the limit.
fn openers_at_most(bytes: &[u8], limit: usize) -> bool {
    // `[` is 0x5B and `{` 0x7B: one compare after setting bit 0x20.
    let opener = |b: u8| u8::from(b | 0x20 == b'{');
    let mut n = 0usize;
    let mut blocks = bytes.chunks_exact(255);
    for block in &mut blocks {
        n += usize::from(block.iter().fold(0u8, |s, &b| s + opener(b)));
        if n > limit {
            return false;
        }
    }
    n += blocks.remainder().iter().map(|&b| usize::from(opener(b))).sum::<usize>();
    n <= limit
}

/// The parse without serde_json's depth limit (the caller bounds the depth).
fn parse_unbounded<T: serde::de::DeserializeOwned>(document: &str) -> Option<T> {
    let mut de = serde_json::Deserializer::from_str(document);
    de.disable_recursion_limit();
    let v = T::deserialize(&mut de).ok()?;
    de.end().ok()?;
    Some(v)
}

/// The deepest nesting of arrays and objects outside strings, without parsing (so it can bound
/// a parse before it starts).
pub fn depth(document: &str) -> usize {
    let (mut d, mut deepest, mut in_string, mut escaped) = (0usize, 0usize, false, false);
    for &b in document.as_bytes() {
        if in_string {
            match (escaped, b) {
                (true, _) => escaped = false,
                (false, b'\\') => escaped = true,
                (false, b'"') => in_string = false,
                _ => {}
            }
            continue;
        }
        match b {
            b'"' => in_string = true,
            b'[' | b'{' => {
                d += 1;
                deepest = deepest.max(d);
            }
            b']' | b'}' => d = d.saturating_sub(1),
            _ => {}
        }
    }
    deepest
}

#[cfg(test)]
mod tests {
    use super::*;

    fn nested(levels: usize) -> String {
        format!("{}{}", "[".repeat(levels), "]".repeat(levels))
    }

    #[test]
    fn depth_counts_brackets_outside_strings_only() {
        assert_eq!(depth(r#"[{"a": "[[{\"]"}, []]"#), 2);
        assert_eq!(depth("1"), 0);
    }

    #[test]
    fn documents_parse_past_the_default_limit_up_to_the_bound() {
        assert!(parse_nested(&nested(300)).is_some());
        assert!(parse_nested(&nested(MAX_DEPTH)).is_some());
        assert!(parse_nested(&nested(MAX_DEPTH + 1)).is_none());
        assert!(parse_nested("[1] 2").is_none(), "nothing may trail the document");
    }

    #[test]
    fn openers_are_counted_as_a_plain_count_would() {
        let plain = |b: &[u8]| b.iter().filter(|&&c| c == b'[' || c == b'{').count();
        // Every byte value, in blocks that straddle the 255-byte lanes, at counts around the limit.
        let mut state = 7u64;
        for len in [0usize, 1, 254, 255, 256, 511, 512, 513, 1000, 4096] {
            for density in [0u64, 1, 4, 64] {
                let bytes: Vec<u8> = (0..len)
                    .map(|_| {
                        state = state.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
                        let r = state >> 33;
                        if density > 0 && r.is_multiple_of(density) {
                            if r & 1 == 0 {
                                b'['
                            } else {
                                b'{'
                            }
                        } else {
                            (r >> 8) as u8
                        }
                    })
                    .collect();
                for limit in [0, 1, 100, MAX_DEPTH, plain(&bytes), plain(&bytes).saturating_sub(1)] {
                    assert_eq!(
                        openers_at_most(&bytes, limit),
                        plain(&bytes) <= limit,
                        "{len} {density} {limit}"
                    );
                }
            }
        }
    }

    #[test]
    fn the_eager_parse_answers_as_the_retrying_one() {
        let docs = [
            nested(100),
            nested(127),
            nested(128),
            nested(129),
            nested(300),
            nested(MAX_DEPTH),
            nested(MAX_DEPTH + 1),
            format!("{}1", "[".repeat(200)),
            format!(r#"{{"a": "{}", "b": [1, 2.5e3]}}"#, "[{".repeat(400)),
            r#"{"a": [1, {"b": null}]}"#.into(),
            r#"{"a": 1,}"#.into(),
            r#"{"a": "\ud800"}"#.into(),
            "[1] 2".into(),
            "".into(),
        ];
        for d in &docs {
            assert_eq!(parse_nested_eager(d), parse_nested(d), "{d:.60}");
        }
        assert!(parse_nested_eager(&nested(300)).is_some());
    }
}
