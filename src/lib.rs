//! toolcert certifies streaming tool-call accumulators: the client code that turns a streamed
//! LLM response back into the tool calls the model made.
//!
//! This facade re-exports the stages of the data flow (scenario → render → subject → oracle →
//! runner) and resolves subject names (`builtin:reference`). See `ARCHITECTURE.md`.
//!
//! Certify your own accumulator from `cargo test`:
//!
//! ```
//! use toolcert::subject::{subject_fn, Accumulator, Emit, Event, StreamEnd, StreamSpec, TurnError};
//!
//! // Your accumulator, adapted to the events level (here: the reference itself).
//! struct Mine(toolcert::reference::Reference);
//! impl Accumulator for Mine {
//!     fn on_event(&mut self, e: &Event<'_>, out: &mut Emit) -> Result<(), TurnError> { self.0.on_event(e, out) }
//!     fn finish(&mut self, end: StreamEnd, out: &mut Emit) -> Result<(), TurnError> { self.0.finish(end, out) }
//! }
//!
//! let report = toolcert::Certification { profile: toolcert::Profile { schema: false }, ..Default::default() }
//!     .run(&subject_fn("mine", |_: &StreamSpec<'_>| Mine(toolcert::reference::Reference::new())));
//! assert!(report.conforms, "{}", report.to_text(3));
//! ```

pub use toolcert_gen as gen;
pub use toolcert_oracle as oracle;
pub use toolcert_reference as reference;
pub use toolcert_render as render;
pub use toolcert_runner as runner;
pub use toolcert_scenario as scenario;
pub use toolcert_subject as subject;

pub use toolcert_oracle::{Grade, Invariant, Profile, Violation};
pub use toolcert_runner::{check_case, Certification, Report};

use toolcert_subject::Subject;

/// The subjects built into the binary, by name.
pub fn builtin_subjects() -> Vec<(String, Box<dyn Subject>)> {
    vec![(
        "builtin:reference".to_string(),
        Box::new(toolcert_reference::ReferenceSubject) as Box<dyn Subject>,
    )]
}

/// Resolves a subject name (`builtin:reference`).
pub fn subject_by_name(name: &str) -> Result<Box<dyn Subject>, String> {
    let mut all = builtin_subjects();
    match all.iter().position(|(n, _)| n == name) {
        Some(i) => Ok(all.swap_remove(i).1),
        None => {
            let known: Vec<String> = all.into_iter().map(|(n, _)| n).collect();
            Err(format!("unknown subject {name:?}; known subjects: {}", known.join(", ")))
        }
    }
}
