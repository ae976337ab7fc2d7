//! The reference's former parse, kept as the differential tests' oracle of the hand-written
//! one (`toolcert_schema::document::parse_finite_containers`, see [`crate::parse_serde`]).
//!
//! A JSON value read with its numbers checked as they are read: the strict parse's overflow
//! rule (a number no double holds, `1e400`, is refused) without a second walk over the
//! parsed value, which would cost a visible share of the floor on large documents; and
//! with its nesting bounded as it is read, so that a document nested past serde_json's 128
//! levels is parsed once, not first refused at level 128 and then parsed again.
//!
//! The visitor mirrors serde_json's `Value` visitor, call for call (so it accepts exactly what
//! `serde_json::from_str::<Value>` accepts and builds the same value), with two checks added:
//! where a number arrives as text (under the workspace's `arbitrary_precision`, a number that
//! is no `u64` or `i64` comes as a one-entry map keyed by serde_json's number token), and
//! where an array or object opens deeper than [`MAX_DEPTH`].

use std::cell::Cell;
use std::fmt;

use serde::de::{self, DeserializeSeed, MapAccess, SeqAccess, Visitor};
use serde::Deserialize;
use serde_json::{Map, Number, Value};
use toolcert_schema::document::MAX_DEPTH;

/// The key serde_json's `arbitrary_precision` reads a number's text under (its
/// `number::TOKEN`, private to it; its own `Value` visitor matches the same string).
const NUMBER_TOKEN: &str = "$serde_json::private::Number";

/// A [`Value`] and whether any number read for it overflows a double, even one a repeated
/// key's later value replaced (rare: the caller then decides on the value as parsed).
pub(crate) struct Checked {
    pub(crate) value: Value,
    pub(crate) overflow_read: bool,
}

/// The strict parse of `document` ([`toolcert_schema::document::parse_nested`]'s grammar and
/// depth bound), its numbers checked as they are read. serde_json's own depth limit is off:
/// the visitor refuses a container deeper than [`MAX_DEPTH`] before reading into it, so the
/// recursion stays bounded.
pub(crate) fn parse_checked(document: &str) -> Option<Checked> {
    let mut de = serde_json::Deserializer::from_str(document);
    de.disable_recursion_limit();
    let checked = Checked::deserialize(&mut de).ok()?;
    de.end().ok()?;
    Some(checked)
}

impl<'de> Deserialize<'de> for Checked {
    #[inline]
    fn deserialize<D: de::Deserializer<'de>>(deserializer: D) -> Result<Checked, D::Error> {
        let overflow = Cell::new(false);
        let value = deserializer.deserialize_any(FiniteVisitor(&overflow, 0))?;
        Ok(Checked { value, overflow_read: overflow.get() })
    }
}

/// The seed of a value inside `.1` arrays and objects.
struct Nested<'a>(&'a Cell<bool>, usize);

impl<'de> DeserializeSeed<'de> for Nested<'_> {
    type Value = Value;
    #[inline]
    fn deserialize<D: de::Deserializer<'de>>(self, deserializer: D) -> Result<Value, D::Error> {
        deserializer.deserialize_any(FiniteVisitor(self.0, self.1))
    }
}

/// Reads a value inside `.1` arrays and objects, setting the flag when a number overflows
/// (not an error at once: a repeated key keeps its last value, so a later one may replace it).
struct FiniteVisitor<'a>(&'a Cell<bool>, usize);

/// A container opening at `level` (1 for the document's own) past the bound.
fn too_deep<E: de::Error>(level: usize) -> Result<(), E> {
    if level > MAX_DEPTH {
        return Err(E::custom(format_args!("nested deeper than {MAX_DEPTH} levels")));
    }
    Ok(())
}

impl<'de> Visitor<'de> for FiniteVisitor<'_> {
    type Value = Value;

    fn expecting(&self, formatter: &mut fmt::Formatter) -> fmt::Result {
        formatter.write_str("any valid JSON value")
    }

    #[inline]
    fn visit_bool<E>(self, value: bool) -> Result<Value, E> {
        Ok(Value::Bool(value))
    }

    #[inline]
    fn visit_i64<E>(self, value: i64) -> Result<Value, E> {
        Ok(Value::Number(value.into()))
    }

    fn visit_i128<E: de::Error>(self, value: i128) -> Result<Value, E> {
        Number::deserialize(de::value::I128Deserializer::new(value)).map(Value::Number)
    }

    #[inline]
    fn visit_u64<E>(self, value: u64) -> Result<Value, E> {
        Ok(Value::Number(value.into()))
    }

    fn visit_u128<E: de::Error>(self, value: u128) -> Result<Value, E> {
        Number::deserialize(de::value::U128Deserializer::new(value)).map(Value::Number)
    }

    // Not reached from JSON text (its numbers come as integers or as text); as serde_json's.
    #[inline]
    fn visit_f64<E>(self, value: f64) -> Result<Value, E> {
        Ok(Number::from_f64(value).map_or(Value::Null, Value::Number))
    }

    #[inline]
    fn visit_str<E>(self, value: &str) -> Result<Value, E> {
        Ok(Value::String(String::from(value)))
    }

    #[inline]
    fn visit_string<E>(self, value: String) -> Result<Value, E> {
        Ok(Value::String(value))
    }

    #[inline]
    fn visit_none<E>(self) -> Result<Value, E> {
        Ok(Value::Null)
    }

    #[inline]
    fn visit_some<D: de::Deserializer<'de>>(self, deserializer: D) -> Result<Value, D::Error> {
        deserializer.deserialize_any(self)
    }

    #[inline]
    fn visit_unit<E>(self) -> Result<Value, E> {
        Ok(Value::Null)
    }

    #[inline]
    fn visit_seq<V: SeqAccess<'de>>(self, mut visitor: V) -> Result<Value, V::Error> {
        let level = self.1 + 1;
        too_deep(level)?;
        let mut vec = Vec::new();
        while let Some(elem) = visitor.next_element_seed(Nested(self.0, level))? {
            vec.push(elem);
        }
        Ok(Value::Array(vec))
    }

    fn visit_map<V: MapAccess<'de>>(self, mut visitor: V) -> Result<Value, V::Error> {
        match visitor.next_key::<Key>()? {
            Some(Key::Number) => {
                let Text(number) = visitor.next_value()?;
                if !finite(&number) {
                    self.0.set(true);
                }
                Ok(Value::Number(number))
            }
            Some(Key::Map(first)) => {
                let level = self.1 + 1;
                too_deep(level)?;
                let mut values = Map::new();
                values.insert(first, visitor.next_value_seed(Nested(self.0, level))?);
                while let Some(key) = visitor.next_key::<String>()? {
                    values.insert(key, visitor.next_value_seed(Nested(self.0, level))?);
                }
                Ok(Value::Object(values))
            }
            None => {
                too_deep(self.1 + 1)?;
                Ok(Value::Object(Map::new()))
            }
        }
    }
}

/// A map's first key: the number token, or a key of the map (serde_json's `KeyClassifier`).
enum Key {
    Number,
    Map(String),
}

impl<'de> Deserialize<'de> for Key {
    #[inline]
    fn deserialize<D: de::Deserializer<'de>>(deserializer: D) -> Result<Key, D::Error> {
        deserializer.deserialize_str(KeyVisitor)
    }
}

struct KeyVisitor;

impl Visitor<'_> for KeyVisitor {
    type Value = Key;

    fn expecting(&self, formatter: &mut fmt::Formatter) -> fmt::Result {
        formatter.write_str("a string key")
    }

    #[inline]
    fn visit_str<E>(self, s: &str) -> Result<Key, E> {
        Ok(if s == NUMBER_TOKEN { Key::Number } else { Key::Map(s.to_owned()) })
    }

    #[inline]
    fn visit_string<E>(self, s: String) -> Result<Key, E> {
        Ok(if s == NUMBER_TOKEN { Key::Number } else { Key::Map(s) })
    }
}

/// A number from its text, as serde_json's `NumberFromString` reads it.
struct Text(Number);

impl<'de> Deserialize<'de> for Text {
    fn deserialize<D: de::Deserializer<'de>>(deserializer: D) -> Result<Text, D::Error> {
        deserializer.deserialize_str(TextVisitor)
    }
}

struct TextVisitor;

impl Visitor<'_> for TextVisitor {
    type Value = Text;

    fn expecting(&self, formatter: &mut fmt::Formatter) -> fmt::Result {
        formatter.write_str("string containing a number")
    }

    fn visit_str<E: de::Error>(self, s: &str) -> Result<Text, E> {
        s.parse().map(Text).map_err(de::Error::custom)
    }
}

/// Whether a number a double can hold: its text first (no exponent and at most 308 digits
/// before the point is below 10^308, under `f64::MAX`); only other numbers are parsed.
fn finite(n: &Number) -> bool {
    let b = n.as_str().as_bytes();
    let int = b.iter().position(|&c| c == b'.').unwrap_or(b.len());
    (int <= 308 && !b.iter().any(|&c| c == b'e' || c == b'E')) || n.as_f64().is_some_and(f64::is_finite)
}

/// Whether no number in `v` overflows a double.
pub(crate) fn holds(v: &Value) -> bool {
    match v {
        Value::Number(n) => finite(n),
        Value::Array(a) => a.iter().all(holds),
        Value::Object(o) => o.values().all(holds),
        _ => true,
    }
}
