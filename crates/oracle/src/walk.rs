//! The strict parse of a call's document walked against the value a subject dispatched,
//! without building a second value tree: most dispatched values are exactly the document's,
//! and parsing the document into a tree of its own only to compare it, node for node, with
//! the observed one was the oracle's largest cost.
//!
//! The walk reads the document with serde_json's own parser (so its grammar, strings and
//! numbers are exactly those of [`crate::parse_document`]) and compares each value as it is
//! read with the observed one in the same place. It answers only what it is sure of:
//! [`Walk::Parses`] (the strict parse gives exactly the observed value), [`Walk::Refused`]
//! (the strict parse refuses the document) or [`Walk::Unsure`] for everything else (another
//! value, a number that overflows a double, a key written twice, serde_json's number token
//! written as a key), where the caller parses the document as before.

use std::cell::Cell;
use std::fmt;

use serde::de::{self, DeserializeSeed, MapAccess, SeqAccess, Visitor};
use serde_json::{Map, Value};

use crate::MAX_DEPTH;

/// What walking a document told.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Walk {
    /// The strict parse accepts the document, and gives exactly the observed value (when
    /// walked against one).
    Parses,
    /// The strict parse refuses the document.
    Refused,
    /// Not decided here.
    Unsure,
}

/// The key serde_json's `arbitrary_precision` reads a number's text under.
const NUMBER_TOKEN: &str = "$serde_json::private::Number";

/// Walks `document` (not empty) against `observed`, or, without one, only checks that the
/// strict parse accepts it.
pub(crate) fn walk(document: &str, observed: Option<&Value>) -> Walk {
    let unsure = Cell::new(false);
    let mut de = serde_json::Deserializer::from_str(document);
    // The walk bounds the nesting itself (at MAX_DEPTH, as the strict parse does), so the
    // recursion stays bounded.
    de.disable_recursion_limit();
    let target = match observed {
        Some(v) => Target::Value(v),
        None => Target::Any,
    };
    let walked = Seed { target, unsure: &unsure, level: 0 }.deserialize(&mut de).and_then(|()| de.end());
    match walked {
        Ok(()) => Walk::Parses,
        Err(_) if unsure.get() => Walk::Unsure,
        Err(_) => Walk::Refused,
    }
}

/// What a value read is compared with.
#[derive(Clone, Copy)]
enum Target<'v> {
    /// Nothing: only the grammar is checked.
    Any,
    /// This observed value.
    Value(&'v Value),
    /// The observed value has nothing here (an array shorter than the document's).
    Missing,
}

/// Reads one value at nesting `level` (0 for the document) against `target`.
struct Seed<'v, 'u> {
    target: Target<'v>,
    unsure: &'u Cell<bool>,
    level: usize,
}

impl<'v, 'u> Seed<'v, 'u> {
    /// Gives up: the caller parses the document as before.
    fn give_up<T, E: de::Error>(&self) -> Result<T, E> {
        self.unsure.set(true);
        Err(E::custom("not decided by the walk"))
    }

    /// Whether a scalar read equals the observed value (`Any`: no comparison).
    fn expect<E: de::Error>(&self, same: impl FnOnce(&Value) -> bool) -> Result<(), E> {
        match self.target {
            Target::Any => Ok(()),
            Target::Value(v) if same(v) => Ok(()),
            _ => self.give_up(),
        }
    }

    /// A container opening one level deeper: refused past the bound, as the strict parse
    /// refuses it.
    fn deeper<E: de::Error>(&self) -> Result<usize, E> {
        let level = self.level + 1;
        if level > MAX_DEPTH {
            return Err(E::custom("nested too deep"));
        }
        Ok(level)
    }

    fn nested(&self, target: Target<'v>, level: usize) -> Seed<'v, 'u> {
        Seed { target, unsure: self.unsure, level }
    }
}

impl<'de> DeserializeSeed<'de> for Seed<'_, '_> {
    type Value = ();
    #[inline]
    fn deserialize<D: de::Deserializer<'de>>(self, deserializer: D) -> Result<(), D::Error> {
        deserializer.deserialize_any(self)
    }
}

/// The decimal text of an integer, as serde_json writes it (`itoa`).
fn integer_text(mut magnitude: u64, negative: bool, buf: &mut [u8; 21]) -> &str {
    let mut at = buf.len();
    loop {
        at -= 1;
        buf[at] = b'0' + (magnitude % 10) as u8;
        magnitude /= 10;
        if magnitude == 0 {
            break;
        }
    }
    if negative {
        at -= 1;
        buf[at] = b'-';
    }
    std::str::from_utf8(&buf[at..]).unwrap_or_default()
}

fn same_number(v: &Value, text: &str) -> bool {
    matches!(v, Value::Number(n) if n.as_str() == text)
}

/// Whether a double holds a number of this text (the strict parse's overflow rule, as
/// [`crate::number::parse_strict`] applies it).
fn finite(text: &str) -> bool {
    let b = text.as_bytes();
    let int = b.iter().position(|&c| c == b'.').unwrap_or(b.len());
    (int <= 308 && !b.iter().any(|&c| c == b'e' || c == b'E'))
        || text.parse::<f64>().ok().is_some_and(f64::is_finite)
}

impl<'de> Visitor<'de> for Seed<'_, '_> {
    type Value = ();

    fn expecting(&self, formatter: &mut fmt::Formatter) -> fmt::Result {
        formatter.write_str("any valid JSON value")
    }

    fn visit_bool<E: de::Error>(self, b: bool) -> Result<(), E> {
        self.expect(|v| *v == Value::Bool(b))
    }

    fn visit_i64<E: de::Error>(self, i: i64) -> Result<(), E> {
        let mut buf = [0; 21];
        let text = integer_text(i.unsigned_abs(), i < 0, &mut buf);
        self.expect(|v| same_number(v, text))
    }

    fn visit_u64<E: de::Error>(self, u: u64) -> Result<(), E> {
        let mut buf = [0; 21];
        let text = integer_text(u, false, &mut buf);
        self.expect(|v| same_number(v, text))
    }

    // Not reached from JSON text (its numbers come as integers or as text).
    fn visit_f64<E: de::Error>(self, _: f64) -> Result<(), E> {
        self.give_up()
    }

    fn visit_str<E: de::Error>(self, s: &str) -> Result<(), E> {
        self.expect(|v| matches!(v, Value::String(t) if t == s))
    }

    fn visit_unit<E: de::Error>(self) -> Result<(), E> {
        self.expect(|v| v.is_null())
    }

    fn visit_none<E: de::Error>(self) -> Result<(), E> {
        self.visit_unit()
    }

    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<(), A::Error> {
        let level = self.deeper()?;
        let items = match self.target {
            Target::Any => None,
            Target::Value(Value::Array(items)) => Some(items),
            _ => return self.give_up(),
        };
        let mut n = 0;
        loop {
            let target = match items {
                None => Target::Any,
                Some(items) => items.get(n).map_or(Target::Missing, Target::Value),
            };
            if seq.next_element_seed(self.nested(target, level))?.is_none() {
                break;
            }
            n += 1;
        }
        match items {
            Some(items) if items.len() != n => self.give_up(),
            _ => Ok(()),
        }
    }

    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<(), A::Error> {
        let object = match self.target {
            Target::Value(Value::Object(entries)) => Some(entries),
            _ => None,
        };
        let mut at = match map.next_key_seed(KeySeed { entries: object, first: true })? {
            None => {
                self.deeper::<A::Error>()?;
                return self.expect(|v| matches!(v, Value::Object(e) if e.is_empty()));
            }
            // A number that is no `u64` or `i64`, as serde_json hands its text over (a map
            // keyed by its token).
            Some(Key::Number) => {
                return map.next_value_seed(NumberSeed { target: self.target, unsure: self.unsure })
            }
            Some(Key::Found(at)) => at,
        };
        let level = self.deeper()?;
        let entries = match (self.target, object) {
            (Target::Any, _) => None,
            (_, Some(entries)) => Some(entries),
            _ => return self.give_up(),
        };
        // The entries found, to tell a key written twice (found twice) from all keys found.
        let mut seen = Seen::default();
        loop {
            let target = match (entries, at) {
                (None, _) => Target::Any,
                (Some(_), Some(v)) if seen.insert(v) => Target::Value(v),
                // Not in the observed object, or written twice.
                (Some(_), _) => return self.give_up(),
            };
            map.next_value_seed(self.nested(target, level))?;
            match map.next_key_seed(KeySeed { entries, first: false })? {
                None => break,
                Some(Key::Found(next)) => at = next,
                // Only a first key is read as the token.
                Some(Key::Number) => return self.give_up(),
            }
        }
        match entries {
            Some(e) if e.len() != seen.len() => self.give_up(),
            _ => Ok(()),
        }
    }
}

/// An object's key read: the entry of the observed object it names.
enum Key<'v> {
    /// serde_json's number token, as a first key.
    Number,
    /// `None`: the observed object has no such key (or there is no observed object).
    Found(Option<&'v Value>),
}

struct KeySeed<'v> {
    entries: Option<&'v Map<String, Value>>,
    /// The first key of a map, which serde_json's value visitor reads as the number token
    /// if it is one.
    first: bool,
}

impl<'de, 'v> DeserializeSeed<'de> for KeySeed<'v> {
    type Value = Key<'v>;
    #[inline]
    fn deserialize<D: de::Deserializer<'de>>(self, deserializer: D) -> Result<Key<'v>, D::Error> {
        deserializer.deserialize_str(self)
    }
}

impl<'v> Visitor<'_> for KeySeed<'v> {
    type Value = Key<'v>;

    fn expecting(&self, formatter: &mut fmt::Formatter) -> fmt::Result {
        formatter.write_str("a string key")
    }

    fn visit_str<E: de::Error>(self, s: &str) -> Result<Key<'v>, E> {
        if self.first && s == NUMBER_TOKEN {
            return Ok(Key::Number);
        }
        Ok(Key::Found(self.entries.and_then(|e| e.get(s))))
    }
}

/// The text of a number that is no `u64` or `i64`, as serde_json's number token carries it.
struct NumberSeed<'v, 'u> {
    target: Target<'v>,
    unsure: &'u Cell<bool>,
}

impl<'de> DeserializeSeed<'de> for NumberSeed<'_, '_> {
    type Value = ();
    fn deserialize<D: de::Deserializer<'de>>(self, deserializer: D) -> Result<(), D::Error> {
        deserializer.deserialize_str(self)
    }
}

impl NumberSeed<'_, '_> {
    fn give_up<E: de::Error>(&self) -> Result<(), E> {
        self.unsure.set(true);
        Err(E::custom("not decided by the walk"))
    }
}

impl Visitor<'_> for NumberSeed<'_, '_> {
    type Value = ();

    fn expecting(&self, formatter: &mut fmt::Formatter) -> fmt::Result {
        formatter.write_str("string containing a number")
    }

    // The parser hands a number's text over as an owned string; a string in the document
    // (the token written as a key) comes borrowed or copied, and is left to the parse.
    fn visit_string<E: de::Error>(self, text: String) -> Result<(), E> {
        // A number no double holds is refused, unless a key written twice replaced it:
        // decided on the parsed value.
        if !finite(&text) {
            return self.give_up();
        }
        match self.target {
            Target::Any => Ok(()),
            Target::Value(v) if same_number(v, &text) => Ok(()),
            _ => self.give_up(),
        }
    }

    fn visit_str<E: de::Error>(self, _: &str) -> Result<(), E> {
        self.give_up()
    }
}

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
