//! The number rule (docs/SPEC.md, "The number rule"): how dispatched arguments are compared
//! with the strict parse of the model's document, and what a strict parser refuses.
//!
//! The harness holds every JSON number as its decimal text (serde_json's
//! `arbitrary_precision`), so nothing here goes through a double. Two documents agree when
//! they have the same structure and every pair of numbers has the same exact decimal value
//! (`-0.0`, `0` and `0.0` are one value; `9007199254740993` and `9007199254740992` are two).
//! A number that kept its value but changed kind (an integer literal such as `2` against one
//! with a fraction or exponent such as `2.0`) is [`Agreement::Retyped`], a should-grade
//! note: many languages hand the tool an `int` or a `float` by the literal's form. Any
//! other change of spelling (`-0` for `0`, `1e2` for `100.0`, `1.50` for `1.5`) is
//! [`Agreement::Respelled`] and no violation at all.

use serde_json::{Number, Value};

/// How a dispatched value relates to the expected one, from best to worst.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub enum Agreement {
    /// The same document, number for number as spelled.
    Same,
    /// The same values; some number is spelled differently but is of the same kind.
    Respelled,
    /// The same values; some number changed kind (integer literal ↔ fraction or exponent).
    Retyped,
    /// Another structure, another string, or a number of another value.
    Differs,
}

/// Compares two documents under the number rule.
pub fn agree(a: &Value, b: &Value) -> Agreement {
    match (a, b) {
        (Value::Number(x), Value::Number(y)) => numbers(x, y),
        (Value::Array(x), Value::Array(y)) => {
            if x.len() != y.len() {
                return Agreement::Differs;
            }
            x.iter().zip(y).map(|(x, y)| agree(x, y)).max().unwrap_or(Agreement::Same)
        }
        (Value::Object(x), Value::Object(y)) => {
            if x.len() != y.len() {
                return Agreement::Differs;
            }
            let mut worst = Agreement::Same;
            for (k, v) in x {
                let Some(w) = y.get(k) else { return Agreement::Differs };
                worst = worst.max(agree(v, w));
                if worst == Agreement::Differs {
                    break;
                }
            }
            worst
        }
        _ if a == b => Agreement::Same,
        _ => Agreement::Differs,
    }
}

/// Whether two documents have the same value (must-grade fidelity).
pub fn same_value(a: &Value, b: &Value) -> bool {
    agree(a, b) != Agreement::Differs
}

fn numbers(x: &Number, y: &Number) -> Agreement {
    // The decimal text as parsed (`arbitrary_precision`), without formatting a copy.
    let (sx, sy) = (x.as_str(), y.as_str());
    if sx == sy {
        return Agreement::Same;
    }
    match (Decimal::parse(sx), Decimal::parse(sy)) {
        (Some(a), Some(b)) if a == b => {
            if is_integer_literal(sx) == is_integer_literal(sy) {
                Agreement::Respelled
            } else {
                Agreement::Retyped
            }
        }
        _ => Agreement::Differs,
    }
}

/// An integer literal: no fraction and no exponent (`-0` is one, `0.0` and `1e2` are not).
pub fn is_integer_literal(s: &str) -> bool {
    !s.bytes().any(|b| matches!(b, b'.' | b'e' | b'E'))
}

/// A JSON number's exact value: `±digits × 10^exponent`, digits without leading or trailing
/// zeros (zero has no digits and no sign).
#[derive(Debug, PartialEq, Eq)]
struct Decimal {
    negative: bool,
    digits: String,
    /// Saturates for exponents past ±10^38: no real document writes one, and a number that
    /// large overflows a double, which the strict parse refuses anyway.
    exponent: i128,
}

impl Decimal {
    /// Parses the JSON number grammar; `None` for anything else.
    fn parse(s: &str) -> Option<Decimal> {
        let (negative, rest) = match s.strip_prefix('-') {
            Some(r) => (true, r),
            None => (false, s),
        };
        let (mantissa, exp) = match rest.find(['e', 'E']) {
            Some(k) => (&rest[..k], Some(&rest[k + 1..])),
            None => (rest, None),
        };
        let (int, frac) = match mantissa.split_once('.') {
            Some((i, f)) => (i, f),
            None => (mantissa, ""),
        };
        let all_digits = |t: &str| t.bytes().all(|b| b.is_ascii_digit());
        if int.is_empty() || !all_digits(int) || !all_digits(frac) || mantissa.ends_with('.') {
            return None;
        }
        let mut exponent: i128 = match exp {
            None => 0,
            Some(e) => {
                let (neg, digits) = match e.as_bytes().first() {
                    Some(b'-') => (true, &e[1..]),
                    Some(b'+') => (false, &e[1..]),
                    _ => (false, e),
                };
                if digits.is_empty() || !all_digits(digits) {
                    return None;
                }
                let v = digits
                    .bytes()
                    .fold(0i128, |v, d| v.saturating_mul(10).saturating_add(i128::from(d - b'0')));
                if neg {
                    -v
                } else {
                    v
                }
            }
        };
        let mut digits: String = format!("{int}{frac}");
        exponent = exponent.saturating_sub(frac.len() as i128);
        let trailing = digits.len() - digits.trim_end_matches('0').len();
        digits.truncate(digits.len() - trailing);
        exponent = exponent.saturating_add(trailing as i128);
        let digits = digits.trim_start_matches('0').to_string();
        if digits.is_empty() {
            return Some(Decimal { negative: false, digits, exponent: 0 });
        }
        Some(Decimal { negative, digits, exponent })
    }
}

/// The strict parse of a finished document (docs/SPEC.md, "What a strict parser refuses"):
/// the whole text is one JSON value (RFC 8259: no `NaN`, no `Infinity`, no comments, nothing
/// trailing), every string is valid Unicode (no lone surrogate escape such as `"\ud800"`), and
/// no number overflows a double (`1e400`: a double parser makes it infinity, which is no JSON
/// value at all). An empty document is not parsed here; callers give it `{}`.
pub fn parse_strict(document: &str) -> Result<Value, String> {
    let value: Value = match crate::expect::parse_nested(document) {
        Some(v) => v,
        // Say why (the depth limit, or serde_json's own error).
        None => {
            return Err(serde_json::from_str::<Value>(document).err().map_or_else(
                || format!("nested deeper than {} levels", crate::MAX_DEPTH),
                |e| e.to_string(),
            ))
        }
    };
    match overflowing(&value) {
        Some(n) => Err(format!("the number {n} overflows a double")),
        None => Ok(value),
    }
}

/// Whether a number's text is surely finite as a double: no exponent and at most 308 digits
/// before the point.
fn fits_a_double(text: &str) -> bool {
    let b = text.as_bytes();
    let int = b.iter().position(|&c| c == b'.').unwrap_or(b.len());
    int <= 308 && !b.iter().any(|&c| c == b'e' || c == b'E')
}

/// The first number whose magnitude a double cannot hold.
pub(crate) fn overflowing(v: &Value) -> Option<&Number> {
    match v {
        // Most numbers are surely finite from their text (no exponent, at most 308 digits
        // before the point: below 10^308); only the others are parsed as a double.
        Value::Number(n) if fits_a_double(n.as_str()) => None,
        Value::Number(n) => n.as_f64().is_none().then_some(n),
        Value::Array(a) => a.iter().find_map(overflowing),
        Value::Object(o) => o.values().find_map(overflowing),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn v(s: &str) -> Value {
        serde_json::from_str(s).unwrap()
    }

    #[test]
    fn exact_values() {
        use Agreement::*;
        let cases = [
            ("0", "0", Same),
            ("-0", "0", Respelled),
            ("-0.0", "0.0", Respelled),
            ("-0.0", "0", Retyped),
            ("0", "0.0", Retyped),
            ("100", "1e2", Retyped),
            ("1E2", "100.0", Respelled),
            ("1.50", "1.5", Respelled),
            ("1.5e-7", "0.00000015", Respelled),
            ("9007199254740993", "9007199254740992", Differs),
            ("0.1000000000000000000001", "0.1", Differs),
            ("123456789012345678901234567890", "123456789012345678901234567890.0", Retyped),
            ("1e-400", "0", Differs),
            ("-1", "1", Differs),
            ("1", "\"1\"", Differs),
            ("10", "1", Differs),
            ("0.5", "5e-1", Respelled),
        ];
        for (a, b, want) in cases {
            assert_eq!(agree(&v(a), &v(b)), want, "{a} vs {b}");
            assert_eq!(agree(&v(b), &v(a)), want, "{b} vs {a}");
        }
    }

    #[test]
    fn structures_take_the_worst_number() {
        let a = v(r#"{"a": [1, 2.0, {"b": -0.0}], "c": "x"}"#);
        assert_eq!(agree(&a, &v(r#"{"c": "x", "a": [1, 2.0, {"b": 0.0}]}"#)), Agreement::Respelled);
        assert_eq!(agree(&a, &v(r#"{"c": "x", "a": [1, 2, {"b": 0.0}]}"#)), Agreement::Retyped);
        assert_eq!(agree(&a, &v(r#"{"c": "x", "a": [1, 2, {"b": 1}]}"#)), Agreement::Differs);
        assert_eq!(agree(&a, &v(r#"{"c": "x", "a": [1, 2.0]}"#)), Agreement::Differs);
        assert_eq!(agree(&a, &v(r#"{"c": "x", "d": [1, 2.0, {"b": 0.0}]}"#)), Agreement::Differs);
    }

    #[test]
    fn numbers_are_held_exactly() {
        // The workspace holds numbers as text: a double would make these equal.
        assert_ne!(v("9007199254740993"), v("9007199254740992"));
        assert_eq!(v("-0.0").to_string(), "-0.0");
        assert_eq!(
            v("3.14159265358979323846264338327950288").to_string(),
            "3.14159265358979323846264338327950288"
        );
    }

    #[test]
    fn the_strict_parser_refuses() {
        for bad in [
            "NaN",
            "Infinity",
            "-Infinity",
            r#"{"a": NaN}"#,
            r#"{"a": 1e400}"#,
            r#"{"a": -1e400}"#,
            r#"{"a": 1.8e308}"#,
            r#"{"a": "\ud800"}"#,
            r#"{"a": "\udc00x"}"#,
            r#"{"a": "\ud800\u0041"}"#,
            r#"{"a": 1}{"b": 2}"#,
            r#"{"a": 1,}"#,
            r#"{"a": 01}"#,
            r#"{"a": .5}"#,
            r#"{"a": 1.}"#,
            r#"{"a": +1}"#,
            "{'a': 1}",
        ] {
            assert!(parse_strict(bad).is_err(), "accepted {bad}");
        }
        for good in [
            r#"{"a": 1.7976931348623157e308}"#,
            r#"{"a": 1e-400}"#,
            r#"{"a": 123456789012345678901234567890}"#,
            r#"{"a": "\ud83d\ude00"}"#,
            r#"{"a": -0}"#,
            r#"{"a": 1E+2}"#,
        ] {
            assert!(parse_strict(good).is_ok(), "refused {good}");
        }
    }
}
