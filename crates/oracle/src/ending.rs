//! ACC-ENDING: how the subject says a turn ended, against how the stream ended.
//!
//! Judged only for a subject that reports an ending ([`Observation::ending`]); one that cannot
//! say leaves the rule `n/a`. What the subject may say depends on what it was shown: a subject
//! that failed the turn itself stopped being fed at its error, so an end that came later is
//! not one it could report.
//!
//! [`Observation::ending`]: toolcert_subject::Observation

use toolcert_scenario::{EndingKind, StopReason};

use crate::{ending_name, Grade, Invariant, Judge};

/// Whether `said` is a spelling of `reason`: its own, or any dialect's reason of the same
/// meaning (a wire-level subject reports the dialect's spelling of the scenario's reason).
fn spells(said: &str, reason: StopReason) -> bool {
    reason.wire_name() == said
        || toolcert_dialect::registry().iter().any(|d| {
            let own = d.stop_reason(reason);
            own.wire_name() == said || d.spell(own) == said
        })
}

/// A stop reason some dialect spells `said`.
fn parse_reason(said: &str) -> Option<StopReason> {
    StopReason::ALL
        .iter()
        .copied()
        .find(|r| r.wire_name() == said || toolcert_dialect::registry().iter().any(|d| d.spell(*r) == said))
}

impl Judge<'_> {
    pub(crate) fn ending(&mut self) {
        let Some(reported) = &self.obs.ending else { return };
        let reported = &reported.value;
        // The end the subject was shown: all of the stream, or what came before its own error.
        let shown = match (&self.obs.error, self.exp.ended_at) {
            (None, _) => true,
            (Some(e), Some(at)) => at <= e.at.delivered,
            // A corpus file records no positions: the end counts as shown.
            (Some(_), None) => true,
        };
        let actual = match self.exp.ending {
            EndingKind::Complete | EndingKind::Truncated if !shown => None,
            kind => Some(kind),
        };
        let failed_turn = self.obs.error.is_some();
        let actual_name = match actual {
            Some(kind) => ending_name(kind),
            // The subject failed the turn before its end arrived.
            None => "unfinished",
        };

        // Must: a clean end only for a turn whose complete stop reason the subject was shown.
        if reported.ending == EndingKind::Complete && actual != Some(EndingKind::Complete) {
            self.flag(
                Invariant::AccEnding,
                Grade::Must,
                None,
                format!("a clean end reported for a turn that was {actual_name}"),
                format!("the turn reported as {actual_name}"),
                format!("reported complete{}", show_reason(reported.stop_reason.as_deref())),
            );
            return;
        }

        // Must: no stop reason the stream never carried (a finish_reason filled in for a
        // stream that simply stopped).
        if let Some(said) = reported.stop_reason.as_deref() {
            let carried = if shown { self.exp.stop } else { None };
            let known = matches!(actual, Some(EndingKind::Complete | EndingKind::Truncated));
            match carried {
                None if !known => {
                    self.flag(
                        Invariant::AccEnding,
                        Grade::Must,
                        None,
                        "a stop reason reported for a stream that carried none",
                        format!("no stop reason (the turn was {actual_name})"),
                        format!("stop reason {said:?}"),
                    );
                    return;
                }
                Some(reason) if !spells(said, reason) => {
                    // A clean reason for a cut turn tells the caller the answer is whole.
                    let clean_for_cut =
                        reason.is_truncating() && parse_reason(said).is_some_and(|r| !r.is_truncating());
                    self.flag(
                        Invariant::AccEnding,
                        if clean_for_cut { Grade::Must } else { Grade::Should },
                        None,
                        if clean_for_cut {
                            "a clean stop reason reported for a truncated turn"
                        } else {
                            "a stop reason other than the stream's"
                        },
                        format!("stop reason {:?} (or its spelling in the dialect)", reason.wire_name()),
                        format!("stop reason {said:?}"),
                    );
                    return;
                }
                _ => {}
            }
        }

        // Should: the kind of ending as the stream said it. A subject that failed the turn
        // may call it errored or abandoned, whatever came after.
        let fits = match actual {
            Some(kind) if kind == reported.ending => true,
            _ if failed_turn => matches!(reported.ending, EndingKind::Errored | EndingKind::Abandoned),
            _ => false,
        };
        if !fits {
            self.flag(
                Invariant::AccEnding,
                Grade::Should,
                None,
                format!("{} turn reported as {}", article(actual_name), ending_name(reported.ending)),
                format!("the turn reported as {actual_name}"),
                format!(
                    "reported {}{}",
                    ending_name(reported.ending),
                    show_reason(reported.stop_reason.as_deref())
                ),
            );
        }
    }
}

fn show_reason(reason: Option<&str>) -> String {
    reason.map(|r| format!(" (stop reason {r:?})")).unwrap_or_default()
}

/// `a truncated`, `an abandoned`.
fn article(word: &str) -> String {
    let an = word.starts_with(|c: char| "aeiou".contains(c));
    format!("{} {word}", if an { "an" } else { "a" })
}

#[cfg(test)]
mod tests {
    use toolcert_render::render;
    use toolcert_scenario::{Block, Case, Ending, Shape, StopReason, StreamEnd, TextBlock, Turn};
    use toolcert_subject::{ErrorClass, Observation, ReportedEnding, Stamp, Timed, TurnError};

    use crate::{judge_case_exercised, Grade, Invariant, Profile, Violation};

    fn text_turn(ending: Ending) -> Turn {
        Turn {
            tools: vec![],
            blocks: vec![Block::Text(TextBlock { text: "The answer is".into(), splits: vec![4, 8] })],
            shape: Shape::PerCall,
            ending,
            faults: vec![],
            pings: vec![],
            transport: Default::default(),
            wire: Default::default(),
        }
    }

    fn cut() -> Turn {
        text_turn(Ending::Abandoned { after: 2, end: StreamEnd::Disconnect })
    }

    /// The text delivered and the given ending, reported at finish.
    fn obs(t: &Turn, ending: Option<(EndingKind, Option<&str>)>) -> Observation {
        let r = render(t);
        let n = r.events.len() as u32;
        let text: String = crate::expect(t, &r, Profile::default()).text();
        Observation {
            text,
            ending: ending.map(|(k, s)| Timed {
                at: Stamp { delivered: n, before: n, at_finish: true },
                value: ReportedEnding::new(k, s),
            }),
            ..Observation::default()
        }
    }

    use toolcert_scenario::EndingKind;

    fn judge(t: &Turn, o: &Observation) -> (Vec<Violation>, bool) {
        let case = Case::single("t", t.clone());
        let (v, ex) = judge_case_exercised(&case, &[render(t)], std::slice::from_ref(o), Profile::default());
        (v, ex.contains(Invariant::AccEnding))
    }

    fn grades(v: &[Violation]) -> Vec<(Invariant, Grade)> {
        v.iter().map(|v| (v.invariant, v.grade)).collect()
    }

    #[test]
    fn a_subject_that_cannot_say_leaves_the_rule_unexercised() {
        let (v, exercised) = judge(&cut(), &obs(&cut(), None));
        assert!(v.is_empty(), "{v:?}");
        assert!(!exercised);
    }

    #[test]
    fn a_cut_stream_reported_as_it_ended_conforms() {
        let (v, exercised) = judge(&cut(), &obs(&cut(), Some((EndingKind::Abandoned, None))));
        assert!(v.is_empty(), "{v:?}");
        assert!(exercised);
    }

    #[test]
    fn a_clean_end_for_a_cut_stream_is_a_must_failure() {
        let (v, _) = judge(&cut(), &obs(&cut(), Some((EndingKind::Complete, None))));
        assert_eq!(grades(&v), [(Invariant::AccEnding, Grade::Must)]);
        assert_eq!(v[0].kind, "a clean end reported for a turn that was abandoned");
    }

    #[test]
    fn a_stop_reason_filled_in_for_a_stream_that_stopped_is_a_must_failure() {
        // An OpenAI-compatible client that says finish_reason "stop" for a dropped stream,
        // even while calling the ending abandoned.
        let (v, _) = judge(&cut(), &obs(&cut(), Some((EndingKind::Abandoned, Some("stop")))));
        assert_eq!(grades(&v), [(Invariant::AccEnding, Grade::Must)]);
        assert_eq!(v[0].kind, "a stop reason reported for a stream that carried none");
    }

    #[test]
    fn a_truncated_turn_is_reported_truncated_in_any_spelling() {
        let t = text_turn(Ending::Stop(StopReason::MaxTokens));
        for said in ["max_tokens", "length", "incomplete"] {
            let (v, _) = judge(&t, &obs(&t, Some((EndingKind::Truncated, Some(said)))));
            assert!(v.is_empty(), "{said}: {v:?}");
        }
        let (v, _) = judge(&t, &obs(&t, Some((EndingKind::Complete, Some("end_turn")))));
        assert_eq!(grades(&v), [(Invariant::AccEnding, Grade::Must)]);
        let (v, _) = judge(&t, &obs(&t, Some((EndingKind::Truncated, Some("stop")))));
        assert_eq!(grades(&v), [(Invariant::AccEnding, Grade::Must)]);
        assert_eq!(v[0].kind, "a clean stop reason reported for a truncated turn");
        let (v, _) = judge(&t, &obs(&t, Some((EndingKind::Truncated, Some("refusal")))));
        assert_eq!(grades(&v), [(Invariant::AccEnding, Grade::Should)]);
    }

    #[test]
    fn another_kind_of_unclean_end_is_a_should_failure() {
        let t = text_turn(Ending::Errored { after: 1, message: "overloaded".into() });
        let (v, _) = judge(&t, &obs(&t, Some((EndingKind::Errored, None))));
        assert!(v.is_empty(), "{v:?}");
        let (v, _) = judge(&t, &obs(&t, Some((EndingKind::Abandoned, None))));
        assert_eq!(grades(&v), [(Invariant::AccEnding, Grade::Should)]);
        assert_eq!(v[0].kind, "an errored turn reported as abandoned");
        let complete = text_turn(Ending::Stop(StopReason::EndTurn));
        let (v, _) = judge(&complete, &obs(&complete, Some((EndingKind::Truncated, Some("end_turn")))));
        assert_eq!(grades(&v), [(Invariant::AccEnding, Grade::Should)]);
    }

    #[test]
    fn a_subject_that_failed_the_turn_early_saw_no_end() {
        let t = text_turn(Ending::Stop(StopReason::EndTurn));
        let mut o = obs(&t, Some((EndingKind::Errored, None)));
        o.text = "The ".into();
        o.error = Some(Timed {
            at: Stamp { delivered: 1, before: 0, at_finish: false },
            value: TurnError::new(ErrorClass::Other, "gave up"),
        });
        // The error itself is ACC-PROTOCOL's to judge; the ending fits what it was shown.
        let (v, _) = judge(&t, &o);
        assert!(v.iter().all(|v| v.invariant != Invariant::AccEnding), "{v:?}");
        o.ending.as_mut().unwrap().value = ReportedEnding::new(EndingKind::Complete, Some("end_turn"));
        let (v, _) = judge(&t, &o);
        assert!(v.iter().any(|v| v.invariant == Invariant::AccEnding && v.grade == Grade::Must), "{v:?}");
    }
}
