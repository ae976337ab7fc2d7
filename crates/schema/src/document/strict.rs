//! The strict parse of an argument document read straight into a [`Value`], without serde's
//! visitor machinery: [`parse_finite`] answers exactly as
//! `parse_nested(document).filter(no number overflows a double)` does, value for value,
//! at about a third of its cost (under the workspace's `arbitrary_precision` serde_json
//! hands every number that is no `u64` or `i64` through a one-entry map keyed by its number
//! token, and parses its text twice, allocating it twice). The parse every dispatched call
//! pays, in the reference and in the oracle, so it is written out by hand; the serde parse
//! stays the tests' oracle for it.
//!
//! What it reads is serde_json's grammar (RFC 8259): its four whitespace bytes, no leading
//! zeros, no trailing commas, strings without raw control characters, escapes with
//! surrogates paired, nothing after the value; containers nested at most [`MAX_DEPTH`]
//! levels (the recursion is bounded by it). Numbers keep their text as serde_json keeps it
//! (the literal, an exponent written `e` with its sign); a key written twice keeps its last
//! value; serde_json's number token as an object's first key makes the object a number read
//! from the string after it, as serde_json reads it.

use serde_json::{Map, Number, Value};

use super::bytes::{self, escape_at, next_special};
use super::MAX_DEPTH;

/// The key serde_json's `arbitrary_precision` reads a number's text under (its private
/// `number::TOKEN`; its `Value` visitor reads an object whose first key is this as a number).
const NUMBER_TOKEN: &str = "$serde_json::private::Number";

/// The strict parse of `document`: one JSON value nested at most [`MAX_DEPTH`] levels,
/// nothing trailing, and no number in it (as a key written twice left it) that a double
/// cannot hold (`1e400`). `None`: unparseable. Exactly
/// `parse_nested(document).filter(no number overflows)`, where an object serde_json reads
/// as a number (its number token as first key) is a level of nesting, as [`super::depth`]
/// counts its braces.
pub fn parse_finite(document: &str) -> Option<Value> {
    parse(document, true)
}

/// [`parse_finite`], where an object serde_json reads as a number is no level of nesting
/// (only arrays and objects that stay containers are): the reference accumulator's reading.
pub fn parse_finite_containers(document: &str) -> Option<Value> {
    parse(document, false)
}

fn parse(document: &str, token_level: bool) -> Option<Value> {
    let mut p = Parser { doc: document, b: document.as_bytes(), at: 0, overflow: false, token_level };
    p.ws();
    let v = p.value(0)?;
    p.ws();
    if p.at != p.b.len() {
        return None;
    }
    // A number read that overflows may have been replaced by a repeated key's later value:
    // the value as parsed decides (rare).
    (!p.overflow || holds(&v)).then_some(v)
}

/// Whether a number a double can hold: its text first (no exponent and at most 308 digits
/// before the point is below 10^308, under `f64::MAX`); only other numbers are parsed.
fn finite(n: &Number) -> bool {
    let b = n.as_str().as_bytes();
    let int = b.iter().position(|&c| c == b'.').unwrap_or(b.len());
    (int <= 308 && !b.iter().any(|&c| c == b'e' || c == b'E')) || n.as_f64().is_some()
}

/// Whether no number in `v` overflows a double.
fn holds(v: &Value) -> bool {
    match v {
        Value::Number(n) => finite(n),
        Value::Array(a) => a.iter().all(holds),
        Value::Object(o) => o.values().all(holds),
        _ => true,
    }
}

struct Parser<'d> {
    doc: &'d str,
    b: &'d [u8],
    at: usize,
    /// Some number read overflows a double.
    overflow: bool,
    /// An object read as a number is a level of nesting.
    token_level: bool,
}

impl Parser<'_> {
    #[inline]
    fn peek(&self) -> Option<u8> {
        self.b.get(self.at).copied()
    }

    #[inline]
    fn ws(&mut self) {
        self.at = bytes::ws(self.b, self.at);
    }

    /// One value inside `depth` containers.
    fn value(&mut self, depth: usize) -> Option<Value> {
        match self.peek()? {
            b'{' => self.object(depth),
            b'[' => self.array(depth),
            b'"' => self.string().map(Value::String),
            b't' => self.word(b"true", Value::Bool(true)),
            b'f' => self.word(b"false", Value::Bool(false)),
            b'n' => self.word(b"null", Value::Null),
            b'-' | b'0'..=b'9' => self.number().map(Value::Number),
            _ => None,
        }
    }

    fn word(&mut self, w: &[u8], v: Value) -> Option<Value> {
        if !self.b[self.at..].starts_with(w) {
            return None;
        }
        self.at += w.len();
        Some(v)
    }

    fn array(&mut self, depth: usize) -> Option<Value> {
        if depth >= MAX_DEPTH {
            return None;
        }
        self.at += 1;
        self.ws();
        let mut items = Vec::new();
        if self.peek()? == b']' {
            self.at += 1;
            return Some(Value::Array(items));
        }
        loop {
            items.push(self.value(depth + 1)?);
            self.ws();
            match self.peek()? {
                b',' => {
                    self.at += 1;
                    self.ws();
                }
                b']' => {
                    self.at += 1;
                    return Some(Value::Array(items));
                }
                _ => return None,
            }
        }
    }

    fn object(&mut self, depth: usize) -> Option<Value> {
        self.at += 1;
        self.ws();
        match self.peek()? {
            b'}' => {
                if depth >= MAX_DEPTH {
                    return None;
                }
                self.at += 1;
                return Some(Value::Object(Map::new()));
            }
            b'"' => {}
            _ => return None,
        }
        let first = self.string()?;
        if first == NUMBER_TOKEN {
            // serde_json's number read back from its text: the string after the token is
            // parsed as a number (serde_json's own reading), and the object ends there.
            if self.token_level && depth >= MAX_DEPTH {
                return None;
            }
            self.colon()?;
            if self.peek()? != b'"' {
                return None;
            }
            let text = self.string()?;
            let n: Number = text.parse().ok()?;
            if !finite(&n) {
                self.overflow = true;
            }
            self.ws();
            if self.peek()? != b'}' {
                return None;
            }
            self.at += 1;
            return Some(Value::Number(n));
        }
        // Deeper than the bound, an object is refused once its first key is read (a number
        // token is no container).
        if depth >= MAX_DEPTH {
            return None;
        }
        let mut map = Map::new();
        let mut key = first;
        loop {
            self.colon()?;
            let v = self.value(depth + 1)?;
            map.insert(key, v);
            self.ws();
            match self.peek()? {
                b',' => {
                    self.at += 1;
                    self.ws();
                    if self.peek()? != b'"' {
                        return None;
                    }
                    key = self.string()?;
                }
                b'}' => {
                    self.at += 1;
                    return Some(Value::Object(map));
                }
                _ => return None,
            }
        }
    }

    /// The `:` after a key, with the whitespace around it.
    #[inline]
    fn colon(&mut self) -> Option<()> {
        self.ws();
        if self.peek()? != b':' {
            return None;
        }
        self.at += 1;
        self.ws();
        Some(())
    }

    /// The string literal at the position (at its opening quote), decoded.
    fn string(&mut self) -> Option<String> {
        let start = self.at + 1;
        let end = next_special(self.b, start);
        if *self.b.get(end)? == b'"' {
            self.at = end + 1;
            // Cut at ASCII quotes: character boundaries.
            return Some(self.doc[start..end].to_owned());
        }
        self.escaped(start, end)
    }

    /// A string literal from `start` whose first special byte is at `i` (not its end quote).
    #[cold]
    fn escaped(&mut self, start: usize, mut i: usize) -> Option<String> {
        // Room for a few hundred bytes more than the run before the first escape (most escaped
        // strings outgrew a tighter start, reallocating and copying), never more than the
        // document has left, which bounds the decoded text.
        let room = (2 * (i - start) + 256).min(self.b.len() - start);
        let mut out = String::with_capacity(room);
        // Runs are cut at ASCII bytes: character boundaries.
        out.push_str(&self.doc[start..i]);
        loop {
            match self.b.get(i)? {
                b'"' => {
                    self.at = i + 1;
                    return Some(out);
                }
                b'\\' => {
                    let (c, next) = escape_at(self.b, i)?;
                    out.push(c);
                    i = next;
                }
                // A raw control character.
                _ => return None,
            }
            let run = i;
            i = next_special(self.b, i);
            out.push_str(&self.doc[run..i]);
        }
    }

    /// A number, its text kept as serde_json keeps it.
    fn number(&mut self) -> Option<Number> {
        let start = self.at;
        let n = bytes::number_at(self.b, start)?;
        self.at = n.end;
        let (int_end, mantissa_end) = (n.int_end, n.mantissa_end);
        let negative = self.b[start] == b'-';
        let mantissa = &self.doc[start..mantissa_end];
        let Some((sign, exp)) = n.exponent else {
            if mantissa_end == int_end {
                // An integer: as a `u64` or `i64` where one holds it (serde_json's text of
                // it is its literal: no leading zeros, and `-0` is not read as one).
                if !negative {
                    if let Ok(u) = mantissa.parse::<u64>() {
                        return Some(Number::from(u));
                    }
                } else if mantissa != "-0" {
                    if let Ok(s) = mantissa.parse::<i64>() {
                        return Some(Number::from(s));
                    }
                }
            }
            return self.text(mantissa);
        };
        let mut text = String::with_capacity(mantissa.len() + 2 + exp.len());
        text.push_str(mantissa);
        text.push('e');
        text.push(char::from(sign));
        text.push_str(&self.doc[exp]);
        self.text(&text)
    }

    /// A number from its text as serde_json keeps it (a valid JSON number), checked.
    fn text(&mut self, text: &str) -> Option<Number> {
        let n: Number = text.parse().ok()?;
        if !finite(&n) {
            self.overflow = true;
        }
        Some(n)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::document::parse_nested;

    /// The strict parse as serde_json makes it: the depth-bounded parse, then no number that
    /// overflows a double (checked over the whole value). The oracle of [`parse_finite`].
    fn by_serde(doc: &str) -> Option<Value> {
        fn fits(v: &Value) -> bool {
            match v {
                Value::Number(n) => n.as_f64().is_some_and(f64::is_finite),
                Value::Array(a) => a.iter().all(fits),
                Value::Object(o) => o.values().all(fits),
                _ => true,
            }
        }
        parse_nested(doc).filter(fits)
    }

    fn same(doc: &str) {
        let (got, want) = (parse_finite(doc), by_serde(doc));
        assert_eq!(got, want, "{doc:.200}");
        // Numbers compare by their text: the same text, not only the same value.
        assert_eq!(got.as_ref().map(|v| v.to_string()), want.map(|v| v.to_string()), "{doc:.200}");
        // The reference's reading differs only where an object read as a number sits past
        // the bound.
        if !doc.contains("private::Number") {
            assert_eq!(parse_finite_containers(doc), got, "{doc:.200}");
        }
    }

    #[test]
    fn an_object_read_as_a_number_is_a_level_only_for_the_oracle() {
        let at = |depth: usize| deep(depth, r#"{"$serde_json::private::Number": "1"}"#);
        assert!(parse_finite(&at(MAX_DEPTH - 1)).is_some());
        assert!(parse_finite(&at(MAX_DEPTH)).is_none() && by_serde(&at(MAX_DEPTH)).is_none());
        assert_eq!(parse_finite_containers(&at(MAX_DEPTH)), parse_finite(&deep(MAX_DEPTH, "1")));
        assert!(parse_finite_containers(&at(MAX_DEPTH + 1)).is_none());
    }

    fn deep(levels: usize, inner: &str) -> String {
        format!("{}{inner}{}", "[".repeat(levels), "]".repeat(levels))
    }

    fn adversarial() -> Vec<String> {
        let long = format!("{}.5", "9".repeat(400));
        let mut docs: Vec<String> = [
            r#"{"a": [1, -2, 3.25, 1e3, -0.0, {"b": null, "c": true}], "d": "x\u00e9\ud83d\ude00"}"#,
            r#"{"a": 1e400}"#,
            r#"{"a": [1, 2, {"b": -1E309}]}"#,
            "[1.7976931348623157e308, 2.2250738585072014e-308, 1e-400, 1.8e308]",
            r#"{"a": 18446744073709551615, "b": 18446744073709551616, "c": -9223372036854775808}"#,
            r#"{"a": -9223372036854775809, "b": -0, "c": 0, "d": -0.0, "e": 0e0, "f": 1E+2, "g": 1e-2}"#,
            r#"{"a": 1, "a": 2}"#,
            r#"{"a": 1e400, "a": 2}"#,
            r#"{"a": 2, "a": 1e400}"#,
            r#"{"a": {"b": 1e400}, "a": {"b": 1}}"#,
            r#"{"a": 1e400, "b": [1e400], "a": 1, "b": 2}"#,
            r#"{"$serde_json::private::Number": "1.5"}"#,
            r#"{"$serde_json::private::Number": "1e400"}"#,
            r#"{"$serde_json::private::Number": "1E5"}"#,
            r#"{"$serde_json::private::Number": "x"}"#,
            r#"{"$serde_json::private::Number": " 1"}"#,
            r#"{"$serde_json::private::Number": "1 "}"#,
            r#"{"$serde_json::private::Number": "01"}"#,
            r#"{"$serde_json::private::Number": "-"}"#,
            r#"{"$serde_json::private::Number": ""}"#,
            r#"{"$serde_json::private::Number": "1\u002e5"}"#,
            r#"{"$serde_json::private::Numb\u0065r": "7"}"#,
            r#"{"$serde_json::private::Number": "1.5", "b": 2}"#,
            r#"{"$serde_json::private::Number": "1.5" , }"#,
            r#"{"$serde_json::private::Number": "1.5" }"#,
            r#"{"$serde_json::private::Number": 2}"#,
            r#"{"$serde_json::private::Number": null}"#,
            r#"{"b": 1, "$serde_json::private::Number": "2"}"#,
            r#"{"k": {"$serde_json::private::Number": "2"}}"#,
            r#"{"a": "\ud800"}"#,
            r#"{"a": "\udc00"}"#,
            r#"{"a": "\ud800\u0041"}"#,
            r#"{"a": "\ud800\\"}"#,
            r#"{"a": "\ud800\n"}"#,
            r#"{"a": "\ud800\udbff"}"#,
            r#"{"a": "\udbff\udfff\u0000\u001f\u007f\uFFFF\uabcd\uABCD"}"#,
            r#"{"\ud83d\ude00": 1, "\u00e9": 2, "é": 3}"#,
            r#"{"a": "\x"}"#,
            r#"{"a": "\u12"}"#,
            r#"{"a": "\u12g4"}"#,
            r#"{"a": "\/\b\f\n\r\t\"\\"}"#,
            "{\"a\": \"tab\there\"}",
            "{\"a\": \"nl\nhere\"}",
            "{\"a\": \"del\u{7f}é東😀\"}",
            r#"{"a": 1,}"#,
            r#"[1,]"#,
            r#"[,1]"#,
            r#"{,}"#,
            r#"{"a" 1}"#,
            r#"{"a": }"#,
            r#"{1: 2}"#,
            r#"{"a": 01}"#,
            r#"{"a": .5}"#,
            r#"{"a": 1.}"#,
            r#"{"a": 1.e5}"#,
            r#"{"a": 1e}"#,
            r#"{"a": 1e+}"#,
            r#"{"a": +1}"#,
            r#"{"a": -}"#,
            r#"{"a": --1}"#,
            r#"{"a": 00}"#,
            r#"{"a": -01}"#,
            r#"{"a": 0x10}"#,
            r#"{"a": 1.5.5}"#,
            r#"{"a": tru}"#,
            r#"{"a": truex}"#,
            r#"{"a": nulll}"#,
            r#"{"a": NaN}"#,
            "NaN",
            "Infinity",
            "[1] 2",
            "[1] ]",
            "{} {}",
            " \t\r\n{ \t\r\n\"a\" \t\r\n: \t\r\n[ \t\r\n1 \t\r\n, \t\r\n2 \t\r\n] \t\r\n} \t\r\n",
            "\u{c}{}",
            "{}\u{a0}",
            "",
            " ",
            "{}",
            "[]",
            "3",
            "-3",
            "\"s\"",
            "true",
            "null",
            "1e400",
            "{'a': 1}",
            "{\"a\":\"",
            "{\"a\":\"\\",
            "{\"a\":\"\\u",
            "{\"a\":\"\\ud800\\u",
            "{\"a\":1",
            "{\"a\":",
            "{\"a\"",
            "{",
            "[",
        ]
        .iter()
        .map(|s| s.to_string())
        .collect();
        docs.push(format!(r#"{{"a": {long}}}"#));
        docs.push(format!(r#"{{"a": {}}}"#, "9".repeat(308)));
        docs.push(format!(r#"{{"a": {}}}"#, "9".repeat(309)));
        docs.push(format!(r#"{{"a": {}e-300}}"#, "9".repeat(309)));
        docs.push(format!(r#"{{"a": "{}"}}"#, "x".repeat(1000)));
        docs.push(format!(r#"{{"a": "{}\n"}}"#, "é".repeat(1000)));
        for n in [1, 7, 8, 9, 15, 16, 17] {
            docs.push(format!(r#"{{"a": "{}\"", "b": "{}\u0001"}}"#, "y".repeat(n), "z".repeat(n)));
            docs.push(format!("{{\"a\": \"{}\u{1}\"}}", "y".repeat(n)));
        }
        for levels in [127, 128, 129, 300, MAX_DEPTH - 1, MAX_DEPTH, MAX_DEPTH + 1, 5000] {
            docs.push(deep(levels, "1"));
            docs.push(deep(levels, ""));
            docs.push(deep(levels, "{}"));
            docs.push(deep(levels, r#"{"a": 1}"#));
            docs.push(deep(levels, r#"{"$serde_json::private::Number": "1"}"#));
            docs.push(deep(levels, "1e400"));
            docs.push(format!("{}1{}", r#"{"a": ["#.repeat(levels / 2), "]}".repeat(levels / 2)));
            docs.push(format!("{}1{}", r#"{"a": ["#.repeat(levels / 2), "]}".repeat(levels / 2 - 1)));
        }
        docs
    }

    #[test]
    fn answers_as_serde_json_on_adversarial_documents() {
        for d in adversarial() {
            same(&d);
        }
    }

    #[test]
    fn answers_as_serde_json_on_cut_and_damaged_documents() {
        // Every cut, and bytes replaced and inserted at random, of each document: the hand-
        // written reader and serde_json must agree on every one.
        let mut state = 0x9E37_79B9_7F4A_7C15u64;
        let mut next = move || {
            state = state.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
            (state >> 33) as usize
        };
        let pieces: [&str; 24] = [
            "\"",
            "\\",
            "\\u",
            "\\ud800",
            "\\udc00",
            ",",
            ":",
            "[",
            "]",
            "{",
            "}",
            "-",
            "0",
            "1",
            ".",
            "e",
            "E+",
            " ",
            "\n",
            "\u{1}",
            "é",
            "😀",
            "1e400",
            "$serde_json::private::Number",
        ];
        let mut checked = 0;
        for d in adversarial().iter().filter(|d| d.len() < 2000) {
            for cut in (0..=d.len()).filter(|&k| d.is_char_boundary(k)) {
                same(&d[..cut]);
                checked += 1;
            }
            for _ in 0..40 {
                let mut m = d.clone();
                for _ in 0..1 + next() % 3 {
                    let mut at = next() % (m.len() + 1);
                    while !m.is_char_boundary(at) {
                        at -= 1;
                    }
                    let piece = pieces[next() % pieces.len()];
                    if next() % 2 == 0 && at < m.len() {
                        let mut end = at + 1;
                        while !m.is_char_boundary(end) {
                            end += 1;
                        }
                        m.replace_range(at..end, piece);
                    } else {
                        m.insert_str(at, piece);
                    }
                }
                same(&m);
                checked += 1;
            }
        }
        assert!(checked > 10_000, "{checked}");
    }
}
