//! JSON read at the level of bytes, as serde_json reads it (RFC 8259), for the hand-written
//! readers of documents: the strict parse ([`super::parse_finite`]), the oracle's walk of a
//! document against a dispatched value, and the generator's lexer and its schema check.
//! Each keeps its own loop over values (they answer different questions); what they read
//! inside those loops is here, once: whitespace, the bytes a string cannot hold raw and the
//! run up to the next of them, an escape's character, a number's parts. All `#[inline]`:
//! they are those loops' innermost steps.

use std::ops::Range;

/// Past serde_json's whitespace (space, tab, line feed, carriage return) from `i`.
#[inline]
pub fn ws(b: &[u8], mut i: usize) -> usize {
    while let Some(b' ' | b'\t' | b'\n' | b'\r') = b.get(i) {
        i += 1;
    }
    i
}

/// Bytes that cannot stand for themselves in a JSON string.
#[inline]
pub fn special(c: u8) -> bool {
    c < 0x20 || c == b'"' || c == b'\\'
}

/// The first byte of `b` from `i` on that is [`special`] (`b.len()` if none), eight bytes at
/// a time: a string's text is most of a document's bytes.
#[inline]
pub fn next_special(b: &[u8], mut i: usize) -> usize {
    const ONES: u64 = 0x0101_0101_0101_0101;
    const HIGH: u64 = 0x8080_8080_8080_8080;
    while let Some(chunk) = b.get(i..i + 8) {
        let x = u64::from_le_bytes(chunk.try_into().expect("eight bytes"));
        // A byte below 0x20, or equal to a quote or a backslash, sets its high bit here; a
        // flagged byte's borrow may flag bytes above it, never below, so the lowest is exact.
        let zero = |v: u64| v.wrapping_sub(ONES) & !v;
        let below = x.wrapping_sub(ONES * 0x20) & !x;
        let quote = zero(x ^ (ONES * u64::from(b'"')));
        let slash = zero(x ^ (ONES * u64::from(b'\\')));
        let found = (below | quote | slash) & HIGH;
        if found != 0 {
            return i + (found.trailing_zeros() / 8) as usize;
        }
        i += 8;
    }
    while b.get(i).is_some_and(|&c| !special(c)) {
        i += 1;
    }
    i
}

/// The character the JSON escape at `b[i]` (a `\`) stands for, and where the literal goes
/// on; `None` for a bad escape or a lone or mispaired surrogate.
#[inline]
pub fn escape_at(b: &[u8], i: usize) -> Option<(char, usize)> {
    let c = match *b.get(i + 1)? {
        b'"' => '"',
        b'\\' => '\\',
        b'/' => '/',
        b'b' => '\u{8}',
        b'f' => '\u{c}',
        b'n' => '\n',
        b'r' => '\r',
        b't' => '\t',
        b'u' => {
            let n = hex(b, i + 2)?;
            return match n {
                0xD800..=0xDBFF => {
                    // A leading surrogate, paired with the trailing one that must follow.
                    if b.get(i + 6..i + 8)? != b"\\u" {
                        return None;
                    }
                    let low = hex(b, i + 8)?;
                    if !(0xDC00..=0xDFFF).contains(&low) {
                        return None;
                    }
                    let c = char::from_u32(0x10000 + ((n - 0xD800) << 10) + (low - 0xDC00))?;
                    Some((c, i + 12))
                }
                // A trailing surrogate alone is refused (`from_u32`).
                _ => Some((char::from_u32(n)?, i + 6)),
            };
        }
        _ => return None,
    };
    Some((c, i + 2))
}

/// Four hex digits at `i`.
#[inline]
fn hex(b: &[u8], i: usize) -> Option<u32> {
    let digits = b.get(i..i + 4)?;
    digits.iter().try_fold(0u32, |n, &d| Some(n * 16 + (d as char).to_digit(16)?))
}

/// Past the ASCII digits from `i`.
#[inline]
fn digits(b: &[u8], mut i: usize) -> usize {
    while b.get(i).is_some_and(u8::is_ascii_digit) {
        i += 1;
    }
    i
}

/// Where the parts of a number end (see [`number_at`]).
pub struct NumberAt {
    /// Past the integer part (its sign and digits).
    pub int_end: usize,
    /// Past the fraction if there is one: the literal before any exponent.
    pub mantissa_end: usize,
    /// The exponent's sign (`b'-'`, else `b'+'`, written or not) and its digits.
    pub exponent: Option<(u8, Range<usize>)>,
    /// Past the number.
    pub end: usize,
}

/// The number at `b[start]`: RFC 8259's grammar (one leading zero at most, a digit after the
/// point and in the exponent); `None` where the bytes are no number.
#[inline]
pub fn number_at(b: &[u8], start: usize) -> Option<NumberAt> {
    let mut i = start + usize::from(b.get(start) == Some(&b'-'));
    match b.get(i)? {
        b'0' => i += 1,
        b'1'..=b'9' => i = digits(b, i),
        _ => return None,
    }
    let int_end = i;
    if b.get(i) == Some(&b'.') {
        let frac = digits(b, i + 1);
        if frac == i + 1 {
            return None;
        }
        i = frac;
    }
    let mantissa_end = i;
    let exponent = match b.get(i) {
        Some(b'e' | b'E') => {
            let sign = b.get(i + 1).copied();
            let from = i + 1 + usize::from(matches!(sign, Some(b'+' | b'-')));
            let end = digits(b, from);
            if end == from {
                return None;
            }
            i = end;
            Some((if sign == Some(b'-') { b'-' } else { b'+' }, from..end))
        }
        _ => None,
    };
    if matches!(b.get(i), Some(b'0'..=b'9')) {
        // A leading zero followed by digits.
        return None;
    }
    Some(NumberAt { int_end, mantissa_end, exponent, end: i })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_scan_finds_the_first_special_byte() {
        let mut state = 7u64;
        for len in 0..40 {
            for _ in 0..200 {
                let bytes: Vec<u8> = (0..len)
                    .map(|_| {
                        state = state.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
                        let r = (state >> 33) as u8;
                        // Mostly plain bytes, some special, some with the high bit.
                        match r % 16 {
                            0 => b'"',
                            1 => b'\\',
                            2 => r % 0x20,
                            3 => 0x80 | r,
                            4 => 0x20 + r % 3,
                            5 => 0x5B + r % 3,
                            _ => b'a' + r % 26,
                        }
                    })
                    .collect();
                for from in 0..=len {
                    let want = (from..len).find(|&k| special(bytes[k])).unwrap_or(len);
                    assert_eq!(next_special(&bytes, from), want, "{bytes:?} from {from}");
                }
            }
        }
    }

    /// The numbers serde_json reads are read whole; what it refuses (as a whole document) is
    /// refused or read short of its end.
    #[test]
    fn numbers_are_serde_jsons() {
        let parts = ["", "-", "0", "00", "1", "12", "-0", ".", ".5", "5", "e", "E", "+", "3", "x"];
        let mut state = 11u64;
        for _ in 0..20_000 {
            let mut text = String::new();
            for _ in 0..1 + state % 6 {
                state = state.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
                text.push_str(parts[(state >> 33) as usize % parts.len()]);
            }
            let whole = number_at(text.as_bytes(), 0).is_some_and(|n| n.end == text.len());
            let serde = serde_json::from_str::<serde_json::Number>(&text).is_ok();
            assert_eq!(whole, serde, "{text:?}");
        }
    }
}
