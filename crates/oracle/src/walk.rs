//! The strict parse of a call's document read against the value a subject dispatched,
//! without building a second value tree: most dispatched values are exactly the document's,
//! and parsing the document into a tree of its own only to compare it, node for node, with
//! the observed one was the oracle's largest cost.
//!
//! [`same_as`] reads the document's bytes, comparing each value as it is read with the
//! observed one in the same place. It answers only "exactly this value": anything else
//! (another value, a key written twice, a number no double holds, anything unusual) is left
//! to the parse, so a verdict never depends on it beyond what the parse would say.

use serde_json::{Map, Value};

use toolcert_schema::document::bytes::{self, next_special};

use crate::MAX_DEPTH;

/// The key serde_json's `arbitrary_precision` reads a number's text under.
const NUMBER_TOKEN: &str = "$serde_json::private::Number";

/// The entries of one observed object found so far, by address: a key found twice is one
/// written twice in the document.
struct Seen {
    few: [*const Value; 16],
    n: usize,
    more: Vec<*const Value>,
}

impl Default for Seen {
    fn default() -> Self {
        Seen { few: [std::ptr::null(); 16], n: 0, more: Vec::new() }
    }
}

impl Seen {
    /// False when `v` was found before.
    fn insert(&mut self, v: &Value) -> bool {
        let a: *const Value = v;
        if self.n < self.few.len() {
            if self.few[..self.n].contains(&a) {
                return false;
            }
            self.few[self.n] = a;
            self.n += 1;
            return true;
        }
        if self.more.is_empty() {
            self.more.extend_from_slice(&self.few);
            self.more.sort_unstable();
        }
        match self.more.binary_search(&a) {
            Ok(_) => false,
            Err(k) => {
                self.more.insert(k, a);
                true
            }
        }
    }

    fn len(&self) -> usize {
        if self.more.is_empty() {
            self.n
        } else {
            self.more.len()
        }
    }
}

/// Whether the strict parse of `document` (not empty) gives exactly `observed`, read straight
/// off the bytes: the document's grammar as serde_json reads it (RFC 8259: its whitespace, no
/// leading zeros, no trailing commas, strings without raw control characters, escapes with
/// surrogates paired), each value compared with the observed one in the same place as it is
/// read. `false` decides nothing: another value, a key written twice, a number no double
/// holds, serde_json's number token as a key, or anything the reader does not know
/// (the caller parses the document then).
pub(crate) fn same_as(document: &str, observed: &Value) -> bool {
    let mut r = Reader { doc: document, b: document.as_bytes(), at: 0, key: Vec::new() };
    r.ws();
    r.value(observed, 1) && {
        r.ws();
        r.at == r.b.len()
    }
}

/// A position in a document.
struct Reader<'d> {
    doc: &'d str,
    b: &'d [u8],
    at: usize,
    /// A key with escapes, decoded.
    key: Vec<u8>,
}

impl Reader<'_> {
    #[inline]
    fn peek(&self) -> Option<u8> {
        self.b.get(self.at).copied()
    }

    #[inline]
    fn ws(&mut self) {
        self.at = bytes::ws(self.b, self.at);
    }

    /// One value at nesting `level` (the document's own container is at 1).
    fn value(&mut self, v: &Value, level: usize) -> bool {
        match (self.peek(), v) {
            (Some(b'{'), Value::Object(m)) => self.object(m, level),
            (Some(b'['), Value::Array(a)) => self.array(a, level),
            (Some(b'"'), Value::String(s)) => self.string(s),
            (Some(b't'), Value::Bool(true)) => self.word(b"true"),
            (Some(b'f'), Value::Bool(false)) => self.word(b"false"),
            (Some(b'n'), Value::Null) => self.word(b"null"),
            (Some(b'-' | b'0'..=b'9'), Value::Number(n)) => self.number(n.as_str()),
            _ => false,
        }
    }

    fn word(&mut self, w: &[u8]) -> bool {
        let ok = self.b[self.at..].starts_with(w);
        self.at += w.len();
        ok
    }

    fn object(&mut self, m: &Map<String, Value>, level: usize) -> bool {
        if level > MAX_DEPTH {
            return false;
        }
        self.at += 1;
        self.ws();
        if self.peek() == Some(b'}') {
            self.at += 1;
            return m.is_empty();
        }
        let mut seen = Seen::default();
        let mut first = true;
        loop {
            // serde_json reads the token as a first key as a number written as text.
            let Some(v) = self.key(m, first) else { return false };
            first = false;
            if !seen.insert(v) {
                return false;
            }
            self.ws();
            if self.peek() != Some(b':') {
                return false;
            }
            self.at += 1;
            self.ws();
            if !self.value(v, level + 1) {
                return false;
            }
            self.ws();
            match self.peek() {
                Some(b',') => {
                    self.at += 1;
                    self.ws();
                }
                Some(b'}') => {
                    self.at += 1;
                    return seen.len() == m.len();
                }
                _ => return false,
            }
        }
    }

    fn array(&mut self, a: &[Value], level: usize) -> bool {
        if level > MAX_DEPTH {
            return false;
        }
        self.at += 1;
        self.ws();
        if self.peek() == Some(b']') {
            self.at += 1;
            return a.is_empty();
        }
        let mut n = 0;
        loop {
            let Some(v) = a.get(n) else { return false };
            if !self.value(v, level + 1) {
                return false;
            }
            n += 1;
            self.ws();
            match self.peek() {
                Some(b',') => {
                    self.at += 1;
                    self.ws();
                }
                Some(b']') => {
                    self.at += 1;
                    return n == a.len();
                }
                _ => return false,
            }
        }
    }

    /// The entry of `m` an object key names (`None`: none, or the number token first).
    fn key<'m>(&mut self, m: &'m Map<String, Value>, first: bool) -> Option<&'m Value> {
        if self.peek() != Some(b'"') {
            return None;
        }
        let start = self.at + 1;
        let end = next_special(self.b, start);
        let key = if *self.b.get(end)? == b'"' {
            self.at = end + 1;
            // Cut at ASCII quotes: character boundaries.
            self.doc.get(start..end)?
        } else {
            let mut key = std::mem::take(&mut self.key);
            key.clear();
            let ok = self.literal(|piece| {
                key.extend_from_slice(piece);
                true
            });
            self.key = key;
            if !ok {
                return None;
            }
            // Whole characters, decoded or cut at ASCII bytes.
            std::str::from_utf8(&self.key).ok()?
        };
        if first && key == NUMBER_TOKEN {
            return None;
        }
        m.get(key)
    }

    /// A string literal equal to `t`.
    fn string(&mut self, t: &str) -> bool {
        let t = t.as_bytes();
        let body = &self.b[self.at + 1..];
        // Most strings have nothing to escape: the literal is the text itself.
        if body.starts_with(t) && body.get(t.len()) == Some(&b'"') && next_special(t, 0) == t.len() {
            self.at += t.len() + 2;
            return true;
        }
        let mut k = 0;
        self.literal(|piece| {
            let same = t[k..].starts_with(piece);
            k += piece.len();
            same
        }) && k == t.len()
    }

    /// Reads the string literal at the position (at its opening quote), handing its decoded
    /// text to `sink` piece by piece; false at anything serde_json would not read as a string
    /// (or `sink`'s false).
    fn literal(&mut self, mut sink: impl FnMut(&[u8]) -> bool) -> bool {
        let mut i = self.at + 1;
        loop {
            let run = i;
            i = next_special(self.b, i);
            if i > run && !sink(&self.b[run..i]) {
                return false;
            }
            match self.b.get(i) {
                Some(b'"') => {
                    self.at = i + 1;
                    return true;
                }
                Some(b'\\') => {
                    let Some((c, next)) = self.escape(i) else { return false };
                    let mut buf = [0; 4];
                    if !sink(c.encode_utf8(&mut buf).as_bytes()) {
                        return false;
                    }
                    i = next;
                }
                // A raw control character, or the end.
                _ => return false,
            }
        }
    }

    /// The character the escape at `i` stands for, and where the literal goes on.
    fn escape(&self, i: usize) -> Option<(char, usize)> {
        bytes::escape_at(self.b, i)
    }

    /// A number whose text, as serde_json keeps it, is `text`.
    fn number(&mut self, text: &str) -> bool {
        let b = self.b;
        let start = self.at;
        let Some(n) = bytes::number_at(b, start) else { return false };
        self.at = n.end;
        let mantissa = &b[start..n.mantissa_end];
        let exponent = n.exponent.map(|(sign, digits)| (sign, &b[digits]));
        // serde_json keeps a number's literal, its exponent written `e` with its sign.
        let t = text.as_bytes();
        let same = match exponent {
            None => t == mantissa,
            Some((sign, exp)) => {
                t.len() == mantissa.len() + 2 + exp.len()
                    && t.starts_with(mantissa)
                    && t[mantissa.len()] == b'e'
                    && t[mantissa.len() + 1] == sign
                    && t.ends_with(exp)
            }
        };
        // The strict parse refuses a number no double holds (decided by the parse: a key
        // written twice may replace it).
        let surely_finite = exponent.is_none() && n.int_end - start <= 308;
        same && (surely_finite || self.doc[start..n.end].parse::<f64>().is_ok_and(f64::is_finite))
    }
}

/// Whether the strict parse surely refuses `document` without parsing it: it ends inside a
/// value (a document cut short, the commonest refused one), or nests deeper than
/// [`MAX_DEPTH`]. Read with the grammar of [`same_as`]; `false` decides nothing.
pub(crate) fn cut_short(document: &str) -> bool {
    // A document that ends closing a container is rarely cut: not skimmed (it is parsed).
    if let Some(b'}' | b']') = document.trim_end_matches([' ', '\t', '\n', '\r']).bytes().last() {
        return false;
    }
    let mut r = Reader { doc: document, b: document.as_bytes(), at: 0, key: Vec::new() };
    r.ws();
    matches!(r.skim(1), Skim::Cut)
}

/// What skimming a value found.
enum Skim {
    /// A whole value.
    Whole,
    /// The end of the document inside it, or nesting too deep: surely refused.
    Cut,
    /// Anything else (for the parse to decide).
    Odd,
}

impl Reader<'_> {
    /// Skims one value at nesting `level`, checking its grammar only.
    fn skim(&mut self, level: usize) -> Skim {
        let Some(c) = self.peek() else { return Skim::Cut };
        match c {
            b'{' | b'[' => {
                if level > MAX_DEPTH {
                    return Skim::Cut;
                }
                let close = if c == b'{' { b'}' } else { b']' };
                self.at += 1;
                self.ws();
                if self.peek() == Some(close) {
                    self.at += 1;
                    return Skim::Whole;
                }
                loop {
                    if c == b'{' {
                        match self.skim(level + 1) {
                            Skim::Whole if self.b[self.at - 1] == b'"' => {}
                            Skim::Whole => return Skim::Odd,
                            other => return other,
                        }
                        self.ws();
                        match self.peek() {
                            None => return Skim::Cut,
                            Some(b':') => self.at += 1,
                            Some(_) => return Skim::Odd,
                        }
                        self.ws();
                    }
                    match self.skim(level + 1) {
                        Skim::Whole => {}
                        other => return other,
                    }
                    self.ws();
                    match self.peek() {
                        None => return Skim::Cut,
                        Some(b',') => {
                            self.at += 1;
                            self.ws();
                        }
                        Some(d) if d == close => {
                            self.at += 1;
                            return Skim::Whole;
                        }
                        Some(_) => return Skim::Odd,
                    }
                }
            }
            b'"' => {
                let mut i = self.at + 1;
                loop {
                    i = next_special(self.b, i);
                    match self.b.get(i) {
                        None => return Skim::Cut,
                        Some(b'"') => {
                            self.at = i + 1;
                            return Skim::Whole;
                        }
                        Some(b'\\') => match self.escape(i) {
                            Some((_, next)) => i = next,
                            // An escape the document ends inside.
                            None if i + 12 > self.b.len() => return Skim::Cut,
                            None => return Skim::Odd,
                        },
                        Some(_) => return Skim::Odd,
                    }
                }
            }
            b't' | b'f' | b'n' => {
                let word: &[u8] = match c {
                    b't' => b"true",
                    b'f' => b"false",
                    _ => b"null",
                };
                let rest = &self.b[self.at..];
                if rest.starts_with(word) {
                    self.at += word.len();
                    Skim::Whole
                } else if word.starts_with(rest) {
                    Skim::Cut
                } else {
                    Skim::Odd
                }
            }
            b'-' | b'0'..=b'9' => {
                let b = self.b;
                let digits = |mut i: usize| {
                    while b.get(i).is_some_and(u8::is_ascii_digit) {
                        i += 1;
                    }
                    i
                };
                let mut i = self.at + usize::from(c == b'-');
                match b.get(i) {
                    None => return Skim::Cut,
                    Some(b'0') => i += 1,
                    Some(b'1'..=b'9') => i = digits(i),
                    Some(_) => return Skim::Odd,
                }
                if b.get(i) == Some(&b'.') {
                    let frac = digits(i + 1);
                    if frac == i + 1 {
                        return if frac == b.len() { Skim::Cut } else { Skim::Odd };
                    }
                    i = frac;
                }
                if let Some(b'e' | b'E') = b.get(i) {
                    let from = i + 1 + usize::from(matches!(b.get(i + 1), Some(b'+' | b'-')));
                    let end = digits(from);
                    if end == from {
                        return if from >= b.len() { Skim::Cut } else { Skim::Odd };
                    }
                    i = end;
                }
                self.at = i;
                Skim::Whole
            }
            _ => Skim::Odd,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::parse_document;

    /// The rule the walk is held to: it says "exactly this value" only where the strict
    /// parse gives exactly this value.
    fn sound(doc: &str, v: &Value) {
        if same_as(doc, v) {
            assert_eq!(parse_document(doc).as_ref(), Some(v), "{doc:.120}");
        }
    }

    fn docs() -> Vec<String> {
        let deep =
            |levels: usize, inner: &str| format!("{}{inner}{}", "[".repeat(levels), "]".repeat(levels));
        let mut docs: Vec<String> = [
            r#"{"a": [1, -2, 3.25, 1e3, -0.0, {"b": null, "c": true}], "d": "x\u00e9\ud83d\ude00"}"#,
            r#"{"city": "Paris", "days": 3, "units": "metric"}"#,
            r#" {"a" : 1 , "b":[ ] ,"c" : { } } "#,
            "\t[1,\r\n2]\n",
            r#"{"a": 1e400}"#,
            r#"{"a": [1, 2, {"b": -1E309}]}"#,
            r#"[1.7976931348623157e308, 2.2250738585072014e-308, 1e-400, 1E+2, 1e-2, 2.5E3]"#,
            r#"{"a": 18446744073709551616, "b": -9223372036854775809, "c": 18446744073709551615}"#,
            r#"{"a": -9223372036854775808, "b": -0, "c": 0, "d": -0.0}"#,
            r#"{"a": 1, "a": 2}"#,
            r#"{"a": 1e400, "a": 2}"#,
            r#"{"a": 1, "b": 2, "a": 1}"#,
            r#"{"$serde_json::private::Number": "1.5"}"#,
            r#"{"$serde_json::private::Number": "x"}"#,
            r#"{"b": 1, "$serde_json::private::Number": "1.5"}"#,
            r#"{"k": {"$serde_json::private::Number": 2}}"#,
            r#"{"a\"b": "c\\d\/e\b\f\n\r\t", "\u0041": "\u0000\u001f\u007f"}"#,
            r#"{"s": "\ud800"}"#,
            r#"{"s": "\udc00"}"#,
            r#"{"s": "\ud800\u0041"}"#,
            r#"{"s": "\uD83D\uDE00 \uFFFF"}"#,
            "{\"s\": \"raw\ttab\"}",
            "{\"s\": \"é ü 日本 🎉\"}",
            r#"{"a": 1,}"#,
            r#"[1,]"#,
            r#"[1 2]"#,
            r#"{"a" 1}"#,
            r#"{"a": 01}"#,
            r#"{"a": .5}"#,
            r#"{"a": 1.}"#,
            r#"{"a": +1}"#,
            r#"{"a": 1e}"#,
            r#"{"a": 1e+}"#,
            r#"{"a": -}"#,
            r#"{"a": tru}"#,
            r#"{"a": truex}"#,
            r#"{"a": nul}"#,
            "[1] 2",
            "NaN",
            "3",
            "\"x\"",
            "true",
            "null",
            "{}",
            "[]",
            "{\"a\": [1, 2",
            "{\"a\": \"unterminated",
            "\u{feff}{}",
        ]
        .iter()
        .map(|s| s.to_string())
        .collect();
        docs.push(format!(r#"{{"a": {}}}"#, "9".repeat(308)));
        docs.push(format!(r#"{{"a": {}}}"#, "9".repeat(309)));
        docs.push(format!(r#"{{"a": {}.5}}"#, "9".repeat(400)));
        docs.push(format!(r#"{{"a": {}e-100}}"#, "9".repeat(400)));
        for n in [1, 127, 128, 511, 512, 513, 600] {
            docs.push(deep(n, "1"));
            docs.push(deep(n, "{}"));
        }
        let many: Vec<String> = (0..40).map(|k| format!("\"k{k}\": {k}")).collect();
        docs.push(format!("{{{}}}", many.join(", ")));
        docs.push(format!("{{{}, \"k7\": 7}}", many.join(", ")));
        docs
    }

    #[test]
    fn the_walk_says_same_only_where_the_parse_gives_that_value() {
        let docs = docs();
        let values: Vec<Value> = docs.iter().filter_map(|d| parse_document(d)).collect();
        for d in &docs {
            for v in &values {
                sound(d, v);
            }
        }
        // And it is taken on ordinary documents, escapes and all.
        for d in &docs[..4] {
            assert!(same_as(d, &parse_document(d).unwrap()), "{d}");
        }
        let escaped = r#"{"a\"b": "c\\d\/e\b\f\n\r\t", "\u0041": "\u0000\u001f\u007f"}"#;
        assert!(same_as(escaped, &parse_document(escaped).unwrap()));
    }

    #[test]
    fn a_document_cut_short_is_one_the_parse_refuses() {
        let mut taken = 0;
        for d in docs() {
            for end in (0..=d.len()).filter(|&e| d.is_char_boundary(e)) {
                let cut = &d[..end];
                if cut_short(cut) {
                    taken += 1;
                    assert!(parse_document(cut).is_none(), "{cut:.120}");
                }
            }
        }
        assert!(taken > 1000, "{taken}");
    }

    #[test]
    fn the_walk_stays_sound_on_mangled_documents() {
        // Each document cut, with a byte dropped, doubled or replaced, against the parse of
        // the original and of the mangled one.
        let docs = docs();
        let bytes = b" \t\n\"\\/{}[],:-+.0123456789eEtrufalsn\x01u\xc3";
        let mut seed = 0x9e37_79b9_7f4a_7c15u64;
        let mut next = || {
            seed ^= seed << 13;
            seed ^= seed >> 7;
            seed ^= seed << 17;
            seed
        };
        for d in docs.iter().filter(|d| d.len() < 2000) {
            let original = parse_document(d);
            for _ in 0..300 {
                let mut b = d.as_bytes().to_vec();
                let at = (next() as usize) % (b.len() + 1);
                match next() % 4 {
                    0 => b.truncate(at),
                    1 if at < b.len() => {
                        b.remove(at);
                    }
                    2 if at < b.len() => b.insert(at, b[at]),
                    _ => b.insert(at, bytes[(next() as usize) % bytes.len()]),
                }
                let Ok(m) = String::from_utf8(b) else { continue };
                if cut_short(&m) {
                    assert!(parse_document(&m).is_none(), "{m:.120}");
                }
                if let Some(v) = &original {
                    sound(&m, v);
                }
                if let Some(v) = parse_document(&m) {
                    sound(&m, &v);
                }
            }
        }
    }
}
