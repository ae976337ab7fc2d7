//! Coverage's schema check of a document as it is parsed, without building its value tree.
//!
//! [`crate::coverage`] labels a call whose arguments violate its tool's schema
//! (`schema_violation`): the document parsed as serde_json parses by default, then
//! [`doc::violates`] over the value. Building that value (a `String` per key and per number,
//! a map per object) and dropping it again cost more than the parse itself; [`parse_violates`]
//! answers the same question in the parse's own walk, with serde's visitors. Where the walk
//! alone cannot know the answer the value tree's way, it builds the value after all: under an
//! `enum` (compared by value), and when an object writes a key with a property schema twice
//! (the value keeps the last one; the walk has seen both).

use std::borrow::Cow;
use std::fmt;

use serde::de::{DeserializeSeed, Deserializer, MapAccess, SeqAccess, Visitor};
use serde::Deserialize as _;
use serde_json::Value;
use toolcert_schema::document::bytes;

use crate::doc;

/// serde_json's key for a number held as text (the workspace's `arbitrary_precision`): such
/// a number reaches a visitor as a map of one entry.
const NUMBER_TOKEN: &str = "$serde_json::private::Number";

/// What the walk found under one value.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Found {
    Fine,
    Violates,
    /// A property written twice: only the value tree says which one counts.
    Ambiguous,
}

impl Found {
    fn or(self, other: Found) -> Found {
        match (self, other) {
            (Found::Ambiguous, _) | (_, Found::Ambiguous) => Found::Ambiguous,
            (Found::Violates, _) | (_, Found::Violates) => Found::Violates,
            _ => Found::Fine,
        }
    }

    fn violates(bad: bool) -> Found {
        if bad {
            Found::Violates
        } else {
            Found::Fine
        }
    }
}

/// `Some(doc::violates(schema, &v))` if `document` parses (serde_json's default parse, as
/// `serde_json::from_str::<Value>` does: the same grammar and the same 128-level limit) to
/// `v`; `None` if it does not parse.
///
/// `deep`: the document nests past serde_json's default 128 levels (the caller has bounded
/// its depth, so the parse's recursion is bounded): parse it without that limit.
pub(crate) fn parse_violates(document: &str, schema: &Value, deep: bool) -> Option<bool> {
    let mut de = serde_json::Deserializer::from_str(document);
    if deep {
        de.disable_recursion_limit();
    }
    let found = Node { schema: Some(schema) }.deserialize(&mut de).and_then(|f| de.end().map(|()| f)).ok()?;
    match found {
        Found::Fine => Some(false),
        Found::Violates => Some(true),
        Found::Ambiguous => {
            toolcert_schema::document::parse_nested(document).map(|v| doc::violates(schema, &v))
        }
    }
}

/// [`parse_violates`] of a document that surely parses: one whole value as the lexer reads it,
/// nested at most [`toolcert_schema::document::MAX_DEPTH`] levels (the walk recurses), with
/// no lone surrogate escape (the only thing of such a document the parse refuses: its walk
/// never reads a number as a double). So only the schema is checked, in one walk over the
/// bytes, without a parser's bookkeeping. `None` where that walk alone cannot answer as
/// [`parse_violates`] does: an `enum` of other than strings, more than 64 properties or
/// required keys, a `$` (raw or escaped: serde_json's number key has one). The caller asks
/// [`parse_violates`] then. `top_values`: where the containers that are values of the
/// top-level container begin and end ([`crate::lex::Scan::top_values`], or fewer), for the
/// walk to skip those it checks nothing in at once; `escaped_dollar`: the document has a
/// `\u0024` escape (the lexer's pass tells).
pub(crate) fn lexed_violates(
    document: &str,
    schema: &Value,
    top_values: &[std::ops::Range<usize>],
    escaped_dollar: bool,
) -> Option<bool> {
    // serde_json's number key (first in an object, raw or escaped, anywhere: also where
    // nothing is checked, the parse reads its value as a number) is left to the parse.
    let b = document.as_bytes();
    if escaped_dollar || memchr::memchr(b'$', b).is_some() {
        return None;
    }
    let mut at = Bytes { b, i: 0, measured: top_values };
    // The generator's tool schemas are compiled once; another is compiled here.
    let own;
    let compiled = match doc::compiled(schema) {
        Some(c) => c,
        None => {
            own = doc::Compiled::new(schema);
            &own
        }
    };
    Some(at.value(Some(compiled))? == Found::Violates)
}

/// The text of a string's raw content `raw` (well-formed, no lone surrogate), escapes decoded.
fn unescape(raw: &[u8]) -> Option<String> {
    let text = std::str::from_utf8(raw).ok()?;
    let mut out = String::with_capacity(raw.len());
    let mut i = 0;
    while let Some(n) = text[i..].find('\\') {
        out.push_str(&text[i..i + n]);
        let (c, next) = bytes::escape_at(raw, i + n)?;
        out.push(c);
        i = next;
    }
    out.push_str(&text[i..]);
    Some(out)
}

/// A walk over a document known to be well-formed.
struct Bytes<'d> {
    b: &'d [u8],
    i: usize,
    /// Containers whose ends are known, in order, none before `i` but those passed already
    /// (the walk only goes forward).
    measured: &'d [std::ops::Range<usize>],
}

impl<'d> Bytes<'d> {
    fn peek(&self) -> u8 {
        self.b.get(self.i).copied().unwrap_or(0)
    }

    fn ws(&mut self) {
        self.i = bytes::ws(self.b, self.i);
    }

    /// The string at `i` (its opening quote): its raw text, and whether it has an escape.
    fn string(&mut self) -> (&'d [u8], bool) {
        let start = self.i + 1;
        let mut j = start;
        let mut escaped = false;
        // (A well-formed string has no control character: the run stops at a quote or a
        // backslash.)
        while j < self.b.len() {
            j = bytes::next_special(self.b, j);
            if self.b.get(j) != Some(&b'\\') {
                break;
            }
            escaped = true;
            j += 2;
        }
        self.i = j + 1;
        (&self.b[start..j.min(self.b.len())], escaped)
    }

    /// Past the scalar at `i` (a number or a literal): its text.
    fn scalar(&mut self) -> &'d [u8] {
        let start = self.i;
        while !matches!(self.peek(), b',' | b'}' | b']' | b' ' | b'\t' | b'\n' | b'\r' | 0) {
            self.i += 1;
        }
        &self.b[start..self.i]
    }

    /// Past the value at `i` (after whitespace), nothing checked.
    fn skip(&mut self) {
        self.ws();
        match self.peek() {
            b'"' => {
                self.string();
            }
            b'{' | b'[' => {
                // A container measured already: past it at once.
                while let Some((m, rest)) = self.measured.split_first() {
                    if m.start > self.i {
                        break;
                    }
                    self.measured = rest;
                    if m.start == self.i {
                        self.i = m.end;
                        return;
                    }
                }
                // Else over the bytes to the closing bracket, a string's content a word at a time.
                let b = self.b;
                let (mut i, mut depth) = (self.i, 0usize);
                while let Some(&c) = b.get(i) {
                    i += 1;
                    match c {
                        b'"' => {
                            loop {
                                i = bytes::next_special(b, i);
                                if b.get(i) != Some(&b'\\') {
                                    break;
                                }
                                i += 2;
                            }
                            i += 1;
                        }
                        b'{' | b'[' => depth += 1,
                        b'}' | b']' => {
                            depth -= 1;
                            if depth == 0 {
                                break;
                            }
                        }
                        _ => {}
                    }
                }
                self.i = i;
            }
            _ => {
                self.scalar();
            }
        }
    }

    /// The value at `i` (after whitespace) under `schema`, as [`Node`] finds it.
    fn value(&mut self, schema: Option<&doc::Compiled<'_>>) -> Option<Found> {
        let Some(s) = schema.filter(|s| s.object) else {
            // Nothing to check below.
            self.skip();
            return Some(Found::Fine);
        };
        self.ws();
        let leaf = |k: usize| Found::violates(s.refuses(k));
        if s.allowed.is_some() {
            // `doc::violates` of the value: its type, then the enum.
            if !s.enum_strings {
                return None;
            }
            if self.peek() != b'"' {
                // No string is one of the strings.
                self.skip();
                return Some(Found::Violates);
            }
            let (raw, escaped) = self.string();
            let decoded;
            let raw = if escaped {
                decoded = unescape(raw)?;
                decoded.as_bytes()
            } else {
                raw
            };
            let listed =
                s.allowed.unwrap_or_default().iter().any(|a| a.as_str().map(str::as_bytes) == Some(raw));
            return Some(Found::violates(s.refuses(KIND_STRING) || !listed));
        }
        Some(match self.peek() {
            b'{' => return self.object(s),
            b'[' => {
                self.i += 1;
                let mut found = leaf(KIND_ARRAY);
                let items = s.items.as_deref();
                self.ws();
                if self.peek() == b']' {
                    self.i += 1;
                    return Some(found);
                }
                loop {
                    found = found.or(self.value(items)?);
                    self.ws();
                    self.i += 1;
                    if self.b.get(self.i - 1) != Some(&b',') {
                        break found;
                    }
                }
            }
            b'"' => {
                self.string();
                leaf(KIND_STRING)
            }
            b't' | b'f' => {
                self.scalar();
                leaf(KIND_BOOLEAN)
            }
            b'n' => {
                self.scalar();
                leaf(KIND_NULL)
            }
            _ => {
                let t = std::str::from_utf8(self.scalar()).ok()?;
                // As `Walk::number` reads serde_json's number held as text: `is_i64`,
                // `is_u64` or a finite double without a fraction (every integer text short
                // of 300 digits is one).
                let plain = t.len() < 300 && !t.bytes().any(|c| matches!(c, b'.' | b'e' | b'E'));
                let integer = plain || t.parse::<f64>().is_ok_and(|f| f.is_finite() && f.fract() == 0.0);
                leaf(if integer { KIND_INTEGER } else { KIND_NUMBER })
            }
        })
    }

    /// The object at `i` under the (object) schema `s`, as `Walk::visit_map` finds it.
    fn object(&mut self, s: &doc::Compiled<'_>) -> Option<Found> {
        self.i += 1;
        self.ws();
        let type_found = Found::violates(s.refuses(KIND_OBJECT));
        if self.peek() == b'}' {
            self.i += 1;
            // `type`, then every required key is missing.
            return Some(type_found.or(Found::violates(!s.required.is_empty())));
        }
        if s.properties.len() > 64 || s.required_len > 64 {
            return None;
        }
        // Which required keys were written, and which properties' last values (the value
        // tree keeps the last of a key written twice) violate theirs: a bit each.
        let (mut present, mut violating) = (0u64, 0u64);
        loop {
            self.ws();
            let (key, escaped) = self.string();
            let decoded;
            let key = if escaped {
                decoded = unescape(key)?;
                decoded.as_bytes()
            } else {
                key
            };
            for (n, _) in s.required.iter().enumerate().filter(|(_, q)| q.as_bytes() == key) {
                present |= 1 << n;
            }
            let property = s.properties.iter().enumerate().find(|(_, (name, _))| name.as_bytes() == key);
            self.ws();
            self.i += 1; // the colon
            match property {
                Some((n, (_, p))) => {
                    if self.value(Some(p))? == Found::Violates {
                        violating |= 1 << n;
                    } else {
                        violating &= !(1 << n);
                    }
                }
                // Nothing to check.
                None => self.skip(),
            }
            self.ws();
            self.i += 1;
            if self.b.get(self.i - 1) != Some(&b',') {
                break;
            }
        }
        let strings = if s.required.is_empty() { 0 } else { u64::MAX >> (64 - s.required.len()) };
        let missing = strings & !present != 0;
        Some(Found::violates(violating != 0).or(type_found).or(Found::violates(missing)))
    }
}

/// The classes of value `type` tells apart, as `doc::Compiled` numbers them.
const KIND_STRING: usize = 0;
const KIND_INTEGER: usize = 1;
const KIND_NUMBER: usize = 2;
const KIND_BOOLEAN: usize = 3;
const KIND_NULL: usize = 4;
const KIND_OBJECT: usize = 5;
const KIND_ARRAY: usize = 6;

/// One value and the schema it must meet (`None`: nothing to check, only to parse).
#[derive(Clone, Copy)]
struct Node<'s> {
    schema: Option<&'s Value>,
}

impl<'de> DeserializeSeed<'de> for Node<'_> {
    type Value = Found;

    fn deserialize<D: Deserializer<'de>>(self, deserializer: D) -> Result<Found, D::Error> {
        // A schema that is no object checks nothing (as `doc::violates` reads it).
        let schema = self.schema.and_then(Value::as_object);
        if let Some(s) = schema {
            if let Some(Value::Array(_)) = s.get("enum") {
                // Compared by value: this subtree is built.
                let v = Value::deserialize(deserializer)?;
                return Ok(Found::violates(doc::violates(self.schema.expect("an object schema"), &v)));
            }
        }
        deserializer.deserialize_any(Walk { schema })
    }
}

/// The visitor of one value under `schema`.
struct Walk<'s> {
    schema: Option<&'s serde_json::Map<String, Value>>,
}

/// The kinds of value `type` tells apart.
#[derive(Clone, Copy)]
enum Kind {
    String,
    /// A number, and whether `type: integer` accepts it.
    Number {
        integer: bool,
    },
    Boolean,
    Null,
    Object,
    Array,
}

impl Walk<'_> {
    /// Whether `type` refuses a value of `kind` (`doc::violates`' first test).
    fn wrong_type(&self, kind: Kind) -> bool {
        let Some(t) = self.schema.and_then(|s| s.get("type")) else { return false };
        let matches = |t: &str| match t {
            "string" => matches!(kind, Kind::String),
            "integer" => matches!(kind, Kind::Number { integer: true }),
            "number" => matches!(kind, Kind::Number { .. }),
            "boolean" => matches!(kind, Kind::Boolean),
            "null" => matches!(kind, Kind::Null),
            "object" => matches!(kind, Kind::Object),
            "array" => matches!(kind, Kind::Array),
            _ => true,
        };
        match t {
            Value::String(t) => !matches(t),
            Value::Array(ts) => !ts.iter().filter_map(Value::as_str).any(matches),
            _ => false,
        }
    }

    fn leaf(&self, kind: Kind) -> Found {
        Found::violates(self.wrong_type(kind))
    }

    /// A number as `doc::violates` reads it (`is_i64`, `is_u64`, or a finite double without
    /// a fraction, for `integer`).
    fn number(&self, n: &serde_json::Number) -> Found {
        let integer =
            n.is_i64() || n.is_u64() || n.as_f64().is_some_and(|f| f.is_finite() && f.fract() == 0.0);
        self.leaf(Kind::Number { integer })
    }
}

impl<'de> Visitor<'de> for Walk<'_> {
    type Value = Found;

    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("a JSON value")
    }

    fn visit_bool<E>(self, _: bool) -> Result<Found, E> {
        Ok(self.leaf(Kind::Boolean))
    }

    fn visit_i64<E>(self, n: i64) -> Result<Found, E> {
        Ok(self.number(&n.into()))
    }

    fn visit_u64<E>(self, n: u64) -> Result<Found, E> {
        Ok(self.number(&n.into()))
    }

    fn visit_f64<E>(self, n: f64) -> Result<Found, E> {
        // As `Value` takes it: a double that is no JSON number becomes `null`.
        Ok(match serde_json::Number::from_f64(n) {
            Some(n) => self.number(&n),
            None => self.leaf(Kind::Null),
        })
    }

    fn visit_str<E>(self, _: &str) -> Result<Found, E> {
        Ok(self.leaf(Kind::String))
    }

    fn visit_unit<E>(self) -> Result<Found, E> {
        Ok(self.leaf(Kind::Null))
    }

    fn visit_none<E>(self) -> Result<Found, E> {
        Ok(self.leaf(Kind::Null))
    }

    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Found, A::Error> {
        let mut found = self.leaf(Kind::Array);
        // `items` applies to each element (when the value is an array, whatever `type` said).
        let items = Node { schema: self.schema.and_then(|s| s.get("items")) };
        while let Some(f) = seq.next_element_seed(items)? {
            found = found.or(f);
        }
        Ok(found)
    }

    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Found, A::Error> {
        let Some(first) = map.next_key_seed(Key)? else {
            return Ok(self.empty_object());
        };
        if first == NUMBER_TOKEN {
            // A number as text (`Value` reads the same entry and stops there).
            let n = map.next_value_seed(NumberText)?;
            return Ok(self.number(&n));
        }
        let props = self.schema.and_then(|s| s.get("properties")).and_then(Value::as_object);
        let required = self.schema.and_then(|s| s.get("required")).and_then(Value::as_array);
        // Which properties (by position in `properties`) and which required keys were
        // written: a bit each, so no key is kept.
        if props.is_some_and(|p| p.len() > 64) || required.is_some_and(|r| r.len() > 64) {
            // Beyond what the bits can hold (no template comes near): the value tree's way.
            return self.object_by_value(first, map);
        }
        let (mut written, mut present) = (0u64, 0u64);
        let mut found = Found::Fine;
        let mut key = Some(first);
        while let Some(k) = key.take() {
            if let Some(r) = required {
                for (n, _) in r.iter().enumerate().filter(|(_, q)| q.as_str() == Some(&*k)) {
                    present |= 1 << n;
                }
            }
            let schema = match props.and_then(|p| p.iter().enumerate().find(|(_, (name, _))| **name == *k)) {
                Some((n, (_, s))) => {
                    if written & (1 << n) != 0 {
                        found = Found::Ambiguous;
                    }
                    written |= 1 << n;
                    Some(s)
                }
                None => None,
            };
            found = found.or(map.next_value_seed(Node { schema })?);
            key = map.next_key_seed(Key)?;
        }
        // Required keys that are no string count as present (`doc::violates` skips them).
        let strings = required.map_or(0, |r| {
            r.iter().enumerate().filter(|(_, q)| q.is_string()).fold(0u64, |m, (n, _)| m | 1 << n)
        });
        let missing = strings & !present != 0;
        Ok(found.or(self.leaf(Kind::Object)).or(Found::violates(missing)))
    }
}

impl<'s> Walk<'s> {
    /// An empty object: `type`, then every required key is missing.
    fn empty_object(&self) -> Found {
        let missing = self
            .schema
            .and_then(|s| s.get("required"))
            .and_then(Value::as_array)
            .is_some_and(|r| r.iter().any(Value::is_string));
        self.leaf(Kind::Object).or(Found::violates(missing))
    }

    /// The rest of an object built as a value, then checked as `doc::violates` checks it.
    fn object_by_value<'de, A: MapAccess<'de>>(
        &self,
        first: Cow<'de, str>,
        mut map: A,
    ) -> Result<Found, A::Error> {
        let mut o = serde_json::Map::new();
        o.insert(first.into_owned(), map.next_value()?);
        while let Some((k, v)) = map.next_entry::<String, Value>()? {
            o.insert(k, v);
        }
        let schema = Value::Object(self.schema.cloned().unwrap_or_default());
        Ok(Found::violates(doc::violates(&schema, &Value::Object(o))))
    }
}

/// An object's key, borrowed from the document where it has no escapes.
struct Key;

impl<'de> DeserializeSeed<'de> for Key {
    type Value = Cow<'de, str>;

    fn deserialize<D: Deserializer<'de>>(self, deserializer: D) -> Result<Cow<'de, str>, D::Error> {
        deserializer.deserialize_str(self)
    }
}

impl<'de> Visitor<'de> for Key {
    type Value = Cow<'de, str>;

    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("a key")
    }

    fn visit_borrowed_str<E>(self, s: &'de str) -> Result<Cow<'de, str>, E> {
        Ok(Cow::Borrowed(s))
    }

    fn visit_str<E>(self, s: &str) -> Result<Cow<'de, str>, E> {
        Ok(Cow::Owned(s.to_owned()))
    }

    fn visit_string<E>(self, s: String) -> Result<Cow<'de, str>, E> {
        Ok(Cow::Owned(s))
    }
}

/// The text of a number held as text, parsed as `Value` parses it.
struct NumberText;

impl<'de> DeserializeSeed<'de> for NumberText {
    type Value = serde_json::Number;

    fn deserialize<D: Deserializer<'de>>(self, deserializer: D) -> Result<serde_json::Number, D::Error> {
        deserializer.deserialize_str(self)
    }
}

impl<'de> Visitor<'de> for NumberText {
    type Value = serde_json::Number;

    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("string containing a number")
    }

    fn visit_str<E: serde::de::Error>(self, s: &str) -> Result<serde_json::Number, E> {
        s.parse().map_err(E::custom)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn by_value(document: &str, schema: &Value) -> Option<bool> {
        serde_json::from_str::<Value>(document).ok().map(|v| doc::violates(schema, &v))
    }

    /// A lone surrogate, and a `\u0024` escape, as the lexer's pass finds them.
    struct Lone(bool, bool);

    impl crate::lex::Observer for Lone {
        fn number(&mut self, _: &str) {}
        fn unicode_escape(&mut self, v: u32) {
            self.1 |= v == 0x24;
        }
        fn other_escape(&mut self) {}
        fn non_ascii(&mut self, _: char) {}
        fn lone_surrogate(&mut self) {
            self.0 = true;
        }
    }

    /// Whether `lexed_violates` may be asked about `d` (what `coverage` checks first: `None` if
    /// not), and then that it answers as `parse_violates` does where it answers (`Some(true)`).
    fn lexed_agrees(d: &str, schema: &Value) -> Option<bool> {
        let mut lone = Lone(false, false);
        let scan = crate::lex::scan_observed(d, &[], &mut lone);
        if scan.status != crate::lex::Status::Valid || scan.deepest > toolcert_schema::document::MAX_DEPTH {
            return None;
        }
        let deep = scan.deepest >= 128;
        if lone.0 {
            // The parse refuses a lone surrogate wherever it is.
            assert_eq!(parse_violates(d, schema, deep), None, "{d}");
            return None;
        }
        // Such a document parses as coverage parses one without a schema.
        let mut de = serde_json::Deserializer::from_str(d);
        if deep {
            de.disable_recursion_limit();
        }
        let parses =
            <serde::de::IgnoredAny as serde::Deserialize>::deserialize(&mut de).and_then(|_| de.end());
        assert!(parses.is_ok(), "{d}");
        // And where the walk answers, the parse does too, alike (skipping the containers the
        // lexer measured at once, or each over its bytes).
        let answer = lexed_violates(d, schema, &scan.top_values, lone.1);
        assert_eq!(answer, lexed_violates(d, schema, &[], lone.1), "{d}");
        if answer.is_some() {
            assert_eq!(answer, parse_violates(d, schema, deep), "{d}");
        }
        Some(answer.is_some())
    }

    /// Skipping a whole well-formed document ends right after its value (strings with
    /// brackets, quotes and backslashes inside, escapes at their ends), and skipping each value
    /// of its top-level container ends where the lexer measured it to end.
    #[test]
    fn skipping_a_document_ends_after_its_value() {
        let mut docs: Vec<String> = [
            r#"{"a": "]}", "b": ["\"]", "\\"], "c": {"d": "\\\""}}"#,
            r#"[{"k": "x\u005d"}, [], {}, "[", 1, true]"#,
            r#"{"a":"\\"}  "#,
            r#"[[[{"n": [[["}"]]]}]]]"#,
        ]
        .into_iter()
        .map(String::from)
        .collect();
        for case in
            crate::cases(&crate::GenConfig { schema: true, ..crate::GenConfig::default() }, 5).take(3000)
        {
            docs.extend(case.streams.iter().flat_map(|t| t.calls().map(|c| c.arguments.clone())));
        }
        let (mut skipped, mut measured) = (0, 0);
        for d in &docs {
            if crate::lex::scan_observed(d, &[], &mut ()).status != crate::lex::Status::Valid
                || !d.trim_start().starts_with(['{', '['])
            {
                continue;
            }
            let mut at = Bytes { b: d.as_bytes(), i: 0, measured: &[] };
            at.skip();
            assert_eq!(at.i, d.trim_end().len(), "{d}");
            skipped += 1;
            let scan = crate::lex::scan_observed(d, &[], &mut ());
            for m in &scan.top_values {
                let mut at = Bytes { b: d.as_bytes(), i: m.start, measured: &[] };
                at.skip();
                assert_eq!(at.i, m.end, "{d}");
                measured += 1;
            }
            // Every one of them, whatever splits the scan was asked about.
            let values = crate::lex::scan_observed(d, &(0..=d.len()).collect::<Vec<_>>(), &mut ()).top_values;
            assert_eq!(values, scan.top_values, "{d}");
        }
        assert!(skipped > 2000 && measured > 1000, "{skipped} {measured}");
    }

    #[test]
    fn the_byte_walk_agrees_with_the_parse_on_generated_documents() {
        let (mut asked, mut answered, mut violating, mut lookups) = (0, 0, 0, 0);
        for seed in [11, 12, 13] {
            for case in crate::cases(&crate::GenConfig { schema: true, ..crate::GenConfig::default() }, seed)
                .take(3000)
            {
                for turn in &case.streams {
                    for call in turn.calls() {
                        let Some(schema) = turn.schema_of(&call.name) else { continue };
                        let d = call.arguments.as_str();
                        let Some(answered_here) = lexed_agrees(d, schema) else { continue };
                        // (A document the walk may be asked about.) Where the compiled walk
                        // answers under any tool's schema, the parse answers alike.
                        let dollar = d.contains("u0024");
                        let deep = toolcert_schema::document::depth(d) >= 128;
                        for t in 0..doc::TOOLS.len() {
                            let s: &Value = doc::schema(t);
                            let answer = lexed_violates(d, s, &[], dollar);
                            if answer.is_some() {
                                assert_eq!(answer, parse_violates(d, s, deep), "tool {t}: {d}");
                            }
                            lookups += usize::from(answer.is_some());
                        }
                        asked += 1;
                        if answered_here {
                            answered += 1;
                            let dollar = d.contains("u0024");
                            violating += usize::from(lexed_violates(d, schema, &[], dollar) == Some(true));
                        }
                    }
                }
            }
        }
        assert!(answered * 100 > asked * 95, "only {answered} of {asked} answered by the byte walk");
        assert!(violating > 100, "only {violating} violating documents answered");
        assert!(lookups > 7 * answered / 2, "only {lookups} compared with the lookups' walk");
    }

    #[test]
    fn agrees_with_the_value_tree_on_hand_made_documents() {
        let schema: Value = serde_json::json!({
            "type": "object",
            "required": ["a", "b", 7],
            "properties": {
                "a": {"type": "integer"},
                "b": {"type": ["string", "null"]},
                "c": {"type": "array", "items": {"type": "number"}},
                "d": {"enum": ["x", 1, {"k": [1]}]},
                "e": {"type": "object", "required": ["f"], "properties": {"f": {"type": "boolean"}}},
                "g": "not a schema",
            }
        });
        let docs = [
            r#"{"a": 1, "b": "x"}"#,
            r#"{"a": 1.0, "b": null}"#,
            r#"{"a": 1.5, "b": null}"#,
            r#"{"a": 1e2, "b": null}"#,
            r#"{"a": 123456789012345678901234567890, "b": null}"#,
            r#"{"a": -0, "b": 1}"#,
            r#"{"a": 1}"#,
            r#"{}"#,
            r#"[]"#,
            r#"[1, 2]"#,
            r#""a string""#,
            r#"null"#,
            r#"{"a": 1, "b": "x", "c": [1, 2.5, "3"]}"#,
            r#"{"a": 1, "b": "x", "c": [1, 2.5, 3]}"#,
            r#"{"a": 1, "b": "x", "d": "x"}"#,
            r#"{"a": 1, "b": "x", "d": "y"}"#,
            r#"{"a": 1, "b": "x", "d": {"k": [1]}}"#,
            r#"{"a": 1, "b": "x", "d": {"k": [1.0]}}"#,
            r#"{"a": 1, "b": "x", "e": {}}"#,
            r#"{"a": 1, "b": "x", "e": {"f": true}}"#,
            r#"{"a": 1, "b": "x", "e": {"f": 1}}"#,
            r#"{"a": 1, "b": "x", "g": 1, "z": [{"deep": [1, {"x": "y"}]}]}"#,
            // Duplicates: the last one counts.
            r#"{"a": "bad", "a": 1, "b": "x"}"#,
            r#"{"a": 1, "a": "bad", "b": "x"}"#,
            r#"{"z": 1, "z": 2, "a": 1, "b": "x"}"#,
            // Escaped keys and strings.
            r#"{"\u0061": 1, "b": "x\ny"}"#,
            r#"{"a": 1, "b": "\ud83d\ude00"}"#,
            // Refused by the parser.
            r#"{"a": 1, "b": "\ud800"}"#,
            r#"{"a": 1,}"#,
            r#"{"a": 01}"#,
            r#"{"a": 1}{"b": 2}"#,
            r#"{"a": 1e400, "b": "x"}"#,
            r#"{"a": NaN}"#,
            r#"{"a": 1, "b": "x"#,
            r#"{"$serde_json::private::Number": "12"}"#,
            r#"{"$serde_json::private::Number": "x"}"#,
            r#"{"a": 1, "b": "x", "$serde_json::private::Number": "12"}"#,
            r#"{"a": 1, "b": "x", "z": {"$serde_json::private::Number": "x"}}"#,
            r#"{"a": 1, "b": "x", "z": {"\u0024serde_json::private::Number": "x"}}"#,
            r#"{"a": 1, "b": "x", "d": {"\u0024serde_json::private::Number": "1"}}"#,
            r#"{"a": 1, "b": "x", "z": {"\\u0024serde_json::private::Number": "x"}}"#,
            r#"{"\\u0024serde_json::private::Number": "x", "a": 1, "b": "x"}"#,
            r#"{"a": 1, "b": "\u0024"}"#,
            r#" { "a" : 2 , "b" : [ ] , "c" : [ 1 , 2e0 , -0.5 ] , "e" : { "f" : false } } "#,
            r#"{"a": 1E2, "b": "x\"y", "d": "x"}"#,
            r#"{"a": 1, "b": "x", "d": "\u0078"}"#,
            r#"{"a": 1, "b": "x", "d": ["x"]}"#,
            r#"{"a": 1, "b": "x", "d": null}"#,
            r#"{"a": 1, "b": "x", "e": {"f": true, "f": false}}"#,
            r#"{"a": 1, "b": "x", "c": [[1], {"x": [2, "3"]}]}"#,
            r#"{"a": 1e400, "b": null}"#,
            r#"{"a": 0.1e1, "b": null, "c": [1e-400]}"#,
            r#""a string \" with a quote""#,
            r#"[{"a": "b"}, [], {}, "x", 1, true, false, null]"#,
            "",
        ];
        let mut answered = 0;
        for d in docs {
            assert_eq!(parse_violates(d, &schema, false), by_value(d, &schema), "{d}");
            answered += usize::from(lexed_agrees(d, &schema) == Some(true));
            // And under an enum of other values, and under the schema of one property.
            let listed = serde_json::json!({"enum": ["x", "a string"], "type": ["string", "object"]});
            lexed_agrees(d, &listed);
            lexed_agrees(d, &schema["properties"]["e"]);
        }
        assert!(answered > 20, "{answered}");
        let deep = format!("{}1{}", "[".repeat(130), "]".repeat(130));
        assert_eq!(parse_violates(&deep, &schema, false), None);
        // Told it is deep, it parses on, as the oracle's parse does.
        let nested = toolcert_schema::document::parse_nested(&deep).map(|v| doc::violates(&schema, &v));
        assert!(nested.is_some());
        assert_eq!(parse_violates(&deep, &schema, true), nested);
        let fine = format!("{}1{}", "[".repeat(100), "]".repeat(100));
        assert_eq!(parse_violates(&fine, &schema, false), by_value(&fine, &schema));
    }

    #[test]
    fn agrees_with_the_value_tree_on_generated_documents() {
        use proptest::strategy::ValueTree;
        let strategy =
            crate::case_strategy(&crate::GenConfig { schema: true, ..crate::GenConfig::default() });
        let (mut checked, mut violating) = (0, 0);
        for k in 0..1500 {
            let case = crate::strategy::case_tree(&strategy, 11, k).current();
            for turn in &case.streams {
                for call in turn.calls() {
                    let Some(schema) = turn.schema_of(&call.name) else { continue };
                    let d = call.arguments.as_str();
                    let got = parse_violates(d, schema, false);
                    assert_eq!(got, by_value(d, schema), "case {k}: {d}");
                    checked += 1;
                    violating += usize::from(got == Some(true));
                }
            }
        }
        assert!(checked > 500, "only {checked} documents with a schema");
        assert!(violating > 20, "only {violating} of {checked} documents violate their schema");
    }
}
