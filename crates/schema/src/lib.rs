//! Compiled tool schemas, cached per thread.
//!
//! Compiling a JSON Schema costs far more than validating against it, and a run meets the
//! same few tool schemas in every case. The oracle, the reference accumulator and the
//! mutants' base validate through this cache (none consults another: this is only a
//! compiler). A leaf: it knows nothing of the project but JSON. [`document`] is the
//! depth-bounded parse of an argument document both the oracle and the reference use.
//!
//! Without the `schema` feature (the light dev-dependency) there is no validator: every
//! document is accepted, and [`AVAILABLE`] tells a runner not to use the schema profile.

pub mod document;

use std::cell::RefCell;
use std::rc::Rc;
use std::sync::Arc;

use serde_json::Value;

/// Whether schemas are validated at all (the `schema` feature).
pub const AVAILABLE: bool = cfg!(feature = "schema");

/// A compiled schema, or why it did not compile.
pub enum Compiled {
    #[cfg(feature = "schema")]
    Valid(jsonschema::Validator),
    Invalid(String),
    /// Built without the `schema` feature: accepts every document.
    #[cfg(not(feature = "schema"))]
    Unavailable,
}

impl Compiled {
    /// The validation errors of `args`, as messages; a schema that does not compile rejects
    /// everything with that reason.
    #[cfg_attr(not(feature = "schema"), allow(unused_variables))]
    pub fn errors(&self, args: &Value) -> Vec<String> {
        match self {
            // Most documents are valid: the boolean check costs half of setting up the error
            // walk, which only an invalid document then pays for.
            #[cfg(feature = "schema")]
            Compiled::Valid(v) if v.is_valid(args) => Vec::new(),
            #[cfg(feature = "schema")]
            Compiled::Valid(v) => v.iter_errors(args).map(|e| e.to_string()).collect(),
            Compiled::Invalid(e) => vec![format!("the tool's schema does not compile: {e}")],
            #[cfg(not(feature = "schema"))]
            Compiled::Unavailable => Vec::new(),
        }
    }

    #[cfg_attr(not(feature = "schema"), allow(unused_variables))]
    pub fn accepts(&self, args: &Value) -> bool {
        match self {
            #[cfg(feature = "schema")]
            Compiled::Valid(v) => v.is_valid(args),
            Compiled::Invalid(_) => false,
            #[cfg(not(feature = "schema"))]
            Compiled::Unavailable => true,
        }
    }
}

/// Schemas kept per thread; a run uses a handful, so a short list compared by value is the
/// cheapest lookup (no hashing or serialising of the schema).
const KEEP: usize = 64;

thread_local! {
    static CACHE: RefCell<Vec<(Arc<Value>, Rc<Compiled>)>> = const { RefCell::new(Vec::new()) };
}

/// The compiled form of `schema`.
pub fn compiled(schema: &Value) -> Rc<Compiled> {
    lookup(schema, || Arc::new(schema.clone()))
}

/// The compiled form of a shared schema (a `toolcert_scenario::Tool`'s): found by
/// address first, since the cases of a run share a handful of schema allocations, and
/// comparing two schemas by value costs more than everything else a case does with them.
pub fn compiled_shared(schema: &Arc<Value>) -> Rc<Compiled> {
    lookup(schema, || Arc::clone(schema))
}

fn lookup(schema: &Value, keep: impl FnOnce() -> Arc<Value>) -> Rc<Compiled> {
    CACHE.with(|cache| {
        let mut cache = cache.borrow_mut();
        let same = |s: &Arc<Value>| std::ptr::eq(Arc::as_ptr(s), schema);
        if let Some((_, c)) =
            cache.iter().find(|(s, _)| same(s)).or_else(|| cache.iter().find(|(s, _)| **s == *schema))
        {
            return Rc::clone(c);
        }
        #[cfg(feature = "schema")]
        let c = Rc::new(match jsonschema::validator_for(schema) {
            Ok(v) => Compiled::Valid(v),
            Err(e) => Compiled::Invalid(e.to_string()),
        });
        #[cfg(not(feature = "schema"))]
        let c = Rc::new(Compiled::Unavailable);
        if cache.len() == KEEP {
            cache.remove(0);
        }
        cache.push((keep(), Rc::clone(&c)));
        c
    })
}

#[cfg(all(test, feature = "schema"))]
mod tests {
    use super::*;

    /// Numbers are held as decimal text across the workspace (serde_json's
    /// `arbitrary_precision`, docs/SPEC.md §4); the validator still reads them by value.
    #[test]
    fn schemas_judge_numbers_held_as_text() {
        let schema: Value = serde_json::from_str(
            r#"{"type": "object", "properties": {"n": {"type": "integer", "minimum": 0, "maximum": 100},
                "p": {"type": "number", "exclusiveMinimum": 0}, "e": {"enum": [1, 2.5]}}}"#,
        )
        .unwrap();
        let c = compiled(&schema);
        // `errors` (checked first, walked only when invalid) agrees with `accepts`.
        let ok = |doc: &str| {
            let v = serde_json::from_str(doc).unwrap();
            let errors = c.errors(&v);
            assert_eq!(errors.is_empty(), c.accepts(&v), "{doc}: {errors:?}");
            c.accepts(&v)
        };
        for good in [
            r#"{"n": 0}"#,
            r#"{"n": 1.0}"#,
            r#"{"n": 1e2}"#,
            r#"{"n": -0}"#,
            r#"{"p": 1e-300}"#,
            r#"{"e": 2.50}"#,
            r#"{"e": 1.0}"#,
        ] {
            assert!(ok(good), "refused {good}");
        }
        for bad in [
            r#"{"n": 1.5}"#,
            r#"{"n": -1}"#,
            r#"{"n": 1e3}"#,
            r#"{"n": "1"}"#,
            r#"{"p": 0.0}"#,
            r#"{"p": -1e-300}"#,
            r#"{"e": 3}"#,
        ] {
            assert!(!ok(bad), "accepted {bad}");
        }
    }
}
