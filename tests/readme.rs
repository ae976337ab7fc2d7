//! The README's example, compiled and run as written (regenerate: see the README).

use toolcert::subject::{
    subject_fn, Accumulator, Emit, ErrorClass, Event, FailReason, Outcome, StreamEnd, StreamSpec, TurnError,
};

/// Your accumulator, adapted: here a tiny correct one.
#[derive(Default)]
struct Mine {
    calls: Vec<(u32, String, String, String, bool)>, // index, id, name, buffer, stopped
    stop: Option<toolcert::scenario::StopReason>,
}

impl Accumulator for Mine {
    fn on_event(&mut self, event: &Event<'_>, out: &mut Emit) -> Result<(), TurnError> {
        let err = |class, msg: &str| Err(TurnError::new(class, msg));
        match event {
            Event::TextDelta { text } => out.text(text),
            Event::CallStart { index, call_id, name } => {
                if self.stop.is_some() {
                    return err(ErrorClass::FragmentAfterStop, "call after stop");
                }
                if self.calls.iter().any(|c| c.0 == *index) {
                    return err(ErrorClass::DuplicateAnnouncement, "again");
                }
                self.calls.push((*index, call_id.to_string(), name.to_string(), String::new(), false));
            }
            Event::ArgsDelta { index, fragment } => {
                let after_stop = self.stop.is_some();
                match self.calls.iter_mut().find(|c| c.0 == *index) {
                    None => return err(ErrorClass::UnannouncedIndex, "unannounced"),
                    Some(c) if c.4 || after_stop => return err(ErrorClass::FragmentAfterStop, "after stop"),
                    Some(c) => c.3.push_str(fragment), // append only: no trim, parse or decode
                }
            }
            Event::CallStop { index, arguments } => match self.calls.iter_mut().find(|c| c.0 == *index) {
                // Responses repeats the arguments in its terminal: they must match the fragments.
                Some(c) if arguments.as_ref().is_some_and(|a| **a != c.3) => {
                    return err(ErrorClass::DoneMismatch, "done differs")
                }
                Some(c) => c.4 = true,
                None => return err(ErrorClass::UnannouncedIndex, "stop of unannounced"),
            },
            Event::Stop { reason } => self.stop = Some(*reason),
            // Errors, pings, and foreign blocks (thinking, server tools): never a call.
            _ => {}
        }
        Ok(())
    }

    fn finish(&mut self, _end: StreamEnd, out: &mut Emit) -> Result<(), TurnError> {
        for (_, id, name, buf, _) in &self.calls {
            let failed = |reason| Outcome::Failed {
                reason,
                call_id: Some(id.clone()),
                name: Some(name.clone()),
                raw: buf.clone(),
            };
            out.outcome(match self.stop {
                None => failed(FailReason::Abandoned),
                Some(r) if r.is_truncating() => failed(FailReason::Truncated),
                Some(_) if buf.is_empty() => Outcome::Dispatchable {
                    call_id: id.clone(),
                    name: name.clone(),
                    args: serde_json::json!({}),
                },
                Some(_) => match serde_json::from_str(buf) {
                    Ok(args) => Outcome::Dispatchable { call_id: id.clone(), name: name.clone(), args },
                    Err(_) => failed(FailReason::Unparseable),
                },
            });
        }
        Ok(())
    }
}

#[test]
fn my_accumulator_conforms() {
    toolcert::certify(subject_fn("mine", |_: &StreamSpec<'_>| Mine::default()))
        .schema(false) // this one does not validate tool schemas
        .grade(toolcert::Grade::Must) // serde_json's nesting limit (128) is a should-grade note
        .assert_conforms(); // panics with the invariant, the transcript and how to replay it
}

// Or one #[test] per invariant (`mine_invariants::AccFidelity`, ...), generated from the
// invariant table, so the failing rule is in the test's name; a rule the run cannot break
// (a WIRE-* rule at the events level, ACC-SCHEMA without schemas) says n/a:
toolcert::certify_tests!(mine_invariants, subject_fn("mine", |_: &StreamSpec<'_>| Mine::default()), |c| c
    .schema(false)
    .grade(toolcert::Grade::Must));
