//! The oracle itself can fail: each invariant is shown a deliberately wrong observation,
//! built by hand (no accumulator involved), and must flag it; the right observation passes.

use rstest::rstest;
use serde_json::json;
use toolcert_render::render;
use toolcert_scenario::{
    Block, Call, Case, Ending, Fault, FaultKind, StopReason, StreamEnd, StreamSchedule, TextBlock, Tool, Turn,
};
use toolcert_subject::{ErrorClass, FailReason, Observation, Outcome, Slot, Stamp, Timed, TurnError};

use super::*;

fn call(index: u32, id: &str, name: &str, args: &str, splits: &[usize]) -> Block {
    Block::Call(Call {
        index,
        call_id: id.into(),
        name: name.into(),
        arguments: args.into(),
        splits: splits.to_vec(),
    })
}

use toolcert_scenario::build::per_call as turn;

const REFUNDED: &str = r#"{"status": "refunded", "limit": 5}"#;
const OPEN: &str = r#"{"status": "open", "limit": 5}"#;

/// Two calls to the same tool, fragmented, in a complete turn, with prose first.
fn pair() -> Turn {
    turn(
        vec![
            Block::Text(TextBlock { text: "Searching both.".into(), splits: vec![9] }),
            call(1, "toolu_A", "search_orders", REFUNDED, &[14, 16]),
            call(2, "toolu_B", "search_orders", OPEN, &[12]),
        ],
        Ending::Stop(StopReason::ToolUse),
    )
}

fn at_finish(events: u32) -> Stamp {
    Stamp { delivered: events, before: events, at_finish: true }
}

fn dispatch(id: &str, name: &str, args: serde_json::Value) -> Outcome {
    Outcome::Dispatchable { call_id: id.into(), name: name.into(), args }
}

fn failed(reason: FailReason, id: &str, name: &str, raw: &str) -> Outcome {
    Outcome::Failed { reason, call_id: Some(id.into()), name: Some(name.into()), raw: raw.into() }
}

/// An observation whose outcomes were all emitted at finish.
fn obs(t: &Turn, outcomes: Vec<Outcome>, text: &str) -> Observation {
    let n = render(t).events.len() as u32;
    Observation {
        outcomes: outcomes.into_iter().map(|value| Timed { at: at_finish(n), value }).collect(),
        text: text.into(),
        ..Observation::default()
    }
}

fn judge_one(t: &Turn, o: &Observation) -> Vec<Violation> {
    let case = Case::single("t", t.clone());
    judge_case(&case, &[render(t)], std::slice::from_ref(o), Profile { schema: true, ..Default::default() })
}

fn invariants(v: &[Violation]) -> Vec<(Invariant, Grade)> {
    v.iter().map(|v| (v.invariant, v.grade)).collect()
}

fn right_pair(t: &Turn) -> Observation {
    obs(
        t,
        vec![
            dispatch("toolu_A", "search_orders", json!({"status": "refunded", "limit": 5})),
            dispatch("toolu_B", "search_orders", json!({"status": "open", "limit": 5})),
        ],
        "Searching both.",
    )
}

#[test]
fn the_right_observation_passes() {
    let t = pair();
    assert_eq!(judge_one(&t, &right_pair(&t)), []);
}

#[test]
fn account_flags_a_missing_and_a_doubled_dispatch() {
    let t = pair();
    let mut o = right_pair(&t);
    o.outcomes.pop();
    // The vanished call's namesake got an outcome: most likely folded into it.
    assert_eq!(
        invariants(&judge_one(&t, &o)),
        [(Invariant::AccAccount, Grade::Must), (Invariant::AccIdentity, Grade::Must)]
    );
    let mut other_tool = t.clone();
    let Block::Call(c) = &mut other_tool.blocks[2] else { unreachable!() };
    c.name = "lookup_order".into();
    let mut o = right_pair(&t);
    o.outcomes.pop();
    assert_eq!(invariants(&judge_one(&other_tool, &o)), [(Invariant::AccAccount, Grade::Must)]);
    let mut o = right_pair(&t);
    o.outcomes.push(o.outcomes[0].clone());
    assert_eq!(invariants(&judge_one(&t, &o)), [(Invariant::AccAccount, Grade::Must)]);
}

#[test]
fn account_flags_an_outcome_for_a_call_never_announced() {
    let t = pair();
    let mut o = right_pair(&t);
    o.outcomes.push(Timed { at: at_finish(9), value: dispatch("toolu_Z", "search_orders", json!({})) });
    assert_eq!(invariants(&judge_one(&t, &o)), [(Invariant::AccAccount, Grade::Must)]);
}

#[test]
fn fidelity_flags_arguments_the_model_never_wrote() {
    let t = turn(
        vec![call(0, "toolu_T", "create_ticket", r#"{"summary": "urgent request from ops"}"#, &[26])],
        Ending::Stop(StopReason::ToolUse),
    );
    let trimmed =
        obs(&t, vec![dispatch("toolu_T", "create_ticket", json!({"summary": "urgent requestfrom ops"}))], "");
    assert_eq!(invariants(&judge_one(&t, &trimmed)), [(Invariant::AccFidelity, Grade::Must)]);
}

/// The number rule: a change of value is a must failure, a change of kind (integer literal
/// against fraction or exponent) a should note, any other respelling nothing.
#[rstest]
#[case::negative_zero_respelled(r#"{"x": -0.0}"#, r#"{"x": 0.0}"#, &[])]
#[case::negative_zero_as_integer(r#"{"x": -0.0}"#, r#"{"x": 0}"#, &[(Invariant::AccFidelity, Grade::Should)])]
#[case::exponent_respelled(r#"{"x": 1E+2}"#, r#"{"x": 100.0}"#, &[])]
#[case::float_as_integer(r#"{"x": 2.0}"#, r#"{"x": 2}"#, &[(Invariant::AccFidelity, Grade::Should)])]
#[case::integer_as_float(r#"{"x": 20}"#, r#"{"x": 20.0}"#, &[(Invariant::AccFidelity, Grade::Should)])]
#[case::integer_past_a_double(
    r#"{"x": 9007199254740993}"#,
    r#"{"x": 9007199254740992}"#,
    &[(Invariant::AccFidelity, Grade::Must)]
)]
#[case::decimal_past_a_double(
    r#"{"x": 0.30000000000000000001}"#,
    r#"{"x": 0.3}"#,
    &[(Invariant::AccFidelity, Grade::Must)]
)]
#[case::underflow_to_zero(r#"{"x": 1e-400}"#, r#"{"x": 0.0}"#, &[(Invariant::AccFidelity, Grade::Must)])]
#[case::exact_big_integer(
    r#"{"x": 123456789012345678901234567890}"#,
    r#"{"x": 123456789012345678901234567890}"#,
    &[]
)]
fn fidelity_follows_the_number_rule(
    #[case] document: &str,
    #[case] dispatched: &str,
    #[case] want: &[(Invariant, Grade)],
) {
    let t = turn(vec![call(0, "toolu_N", "set_x", document, &[3])], Ending::Stop(StopReason::ToolUse));
    let args: serde_json::Value = serde_json::from_str(dispatched).unwrap();
    let o = obs(&t, vec![dispatch("toolu_N", "set_x", args)], "");
    assert_eq!(invariants(&judge_one(&t, &o)), want);
}

/// What a strict parser refuses is unparseable, and dispatching it breaks ACC-STRICT.
#[rstest]
#[case::overflow(r#"{"x": 1e400}"#)]
#[case::nan(r#"{"x": NaN}"#)]
#[case::infinity(r#"{"x": -Infinity}"#)]
#[case::lone_surrogate(r#"{"x": "\ud800"}"#)]
fn a_strict_parser_refuses(#[case] document: &str) {
    assert_eq!(judge(document, None), Judged::Unparseable);
    let t = turn(vec![call(0, "toolu_N", "set_x", document, &[3])], Ending::Stop(StopReason::ToolUse));
    let o = obs(&t, vec![dispatch("toolu_N", "set_x", json!({"x": 0}))], "");
    assert_eq!(invariants(&judge_one(&t, &o)), [(Invariant::AccStrict, Grade::Must)]);
}

#[test]
fn identity_flags_a_wrong_name_and_merged_same_tool_calls() {
    let t = pair();
    let mut o = right_pair(&t);
    o.outcomes[1].value = dispatch("toolu_B", "lookup_order", json!({"status": "open", "limit": 5}));
    assert_eq!(invariants(&judge_one(&t, &o)), [(Invariant::AccIdentity, Grade::Must)]);
    // A name-keyed buffer: both documents in the first call's buffer, the second call gone.
    let merged = format!("{REFUNDED}{OPEN}");
    let o = obs(
        &t,
        vec![failed(FailReason::Unparseable, "toolu_A", "search_orders", &merged)],
        "Searching both.",
    );
    let v = invariants(&judge_one(&t, &o));
    assert!(v.contains(&(Invariant::AccIdentity, Grade::Must)), "{v:?}");
    assert!(v.contains(&(Invariant::AccAccount, Grade::Must)), "{v:?}");
}

#[test]
fn order_flags_fragments_joined_out_of_order() {
    let t = pair();
    // toolu_A's fragments are [0..14] [14..16] [16..]; swap the last two.
    let swapped = format!("{}{}{}", &REFUNDED[..14], &REFUNDED[16..], &REFUNDED[14..16]);
    let mut o = right_pair(&t);
    o.outcomes[0].value = failed(FailReason::Unparseable, "toolu_A", "search_orders", &swapped);
    assert_eq!(invariants(&judge_one(&t, &o)), [(Invariant::AccOrder, Grade::Must)]);
}

#[test]
fn completion_flags_a_dispatch_before_the_terminal_event() {
    let t = turn(
        vec![call(0, "toolu_L", "search_orders", "{\"limit\": 20}\n", &[13])],
        Ending::Stop(StopReason::ToolUse),
    );
    // Events: announce, fragment, fragment, call stop, stop. Dispatched after the first fragment.
    let mut o = obs(&t, vec![dispatch("toolu_L", "search_orders", json!({"limit": 20}))], "");
    o.outcomes[0].at = Stamp { delivered: 2, before: 1, at_finish: false };
    assert_eq!(invariants(&judge_one(&t, &o)), [(Invariant::AccCompletion, Grade::Must)]);
    o.outcomes[0].at = Stamp { delivered: 4, before: 3, at_finish: false };
    assert_eq!(judge_one(&t, &o), []);
}

#[test]
fn truncation_flags_a_dispatch_from_a_cut_turn_even_when_it_parses() {
    let t = turn(
        vec![call(0, "toolu_L", "search_orders", r#"{"limit": 20}"#, &[])],
        Ending::Stop(StopReason::MaxTokens),
    );
    let o = obs(&t, vec![dispatch("toolu_L", "search_orders", json!({"limit": 20}))], "");
    assert_eq!(invariants(&judge_one(&t, &o)), [(Invariant::AccTruncation, Grade::Must)]);
    let right =
        obs(&t, vec![failed(FailReason::Truncated, "toolu_L", "search_orders", r#"{"limit": 20}"#)], "");
    assert_eq!(judge_one(&t, &right), []);
    // Failing the whole turn meets the must grade, not the should grade.
    let mut whole = obs(&t, vec![], "");
    whole.error = Some(Timed { at: at_finish(4), value: TurnError::new(ErrorClass::Truncated, "length") });
    assert_eq!(invariants(&judge_one(&t, &whole)), [(Invariant::AccTruncation, Grade::Should)]);
}

#[test]
fn abandon_flags_a_dropped_and_a_dispatched_live_call() {
    let t = turn(
        vec![call(0, "toolu_Q", "lookup_order", r#"{"order_id": "A-4471"}"#, &[8])],
        Ending::Abandoned { after: 2, end: StreamEnd::Disconnect },
    );
    let dropped = obs(&t, vec![], "");
    assert_eq!(invariants(&judge_one(&t, &dropped)), [(Invariant::AccAbandon, Grade::Should)]);
    let run = obs(&t, vec![dispatch("toolu_Q", "lookup_order", json!({"order_id": "A-4471"}))], "");
    let v = invariants(&judge_one(&t, &run));
    assert!(
        v.contains(&(Invariant::AccAbandon, Grade::Must))
            || v.contains(&(Invariant::AccCompletion, Grade::Must))
    );
    let right = obs(&t, vec![failed(FailReason::Abandoned, "toolu_Q", "lookup_order", r#"{"order_"#)], "");
    assert_eq!(judge_one(&t, &right), []);
    let wrong_raw = obs(&t, vec![failed(FailReason::Abandoned, "toolu_Q", "lookup_order", "")], "");
    assert_eq!(invariants(&judge_one(&t, &wrong_raw)), [(Invariant::AccFidelity, Grade::Should)]);
}

#[test]
fn strict_flags_the_first_of_two_documents_dispatched() {
    let two = format!("{REFUNDED}{OPEN}");
    let t = turn(
        vec![call(0, "toolu_A", "search_orders", &two, &[REFUNDED.len()])],
        Ending::Stop(StopReason::ToolUse),
    );
    let o =
        obs(&t, vec![dispatch("toolu_A", "search_orders", json!({"status": "refunded", "limit": 5}))], "");
    assert_eq!(invariants(&judge_one(&t, &o)), [(Invariant::AccStrict, Grade::Must)]);
}

#[rstest]
#[case::replay(FaultKind::ReplayAnnouncement { call: 0 }, ErrorClass::DuplicateAnnouncement)]
#[case::unannounced(FaultKind::UnannouncedFragment { missing_index: false, fragment: "{}".into() }, ErrorClass::UnannouncedIndex)]
#[case::after_stop(FaultKind::FragmentAfterStop { call: 0, fragment: "}".into() }, ErrorClass::FragmentAfterStop)]
fn protocol_flags_an_accepted_fault(#[case] fault: FaultKind, #[case] class: ErrorClass) {
    let mut t = pair();
    t.faults.push(Fault { kind: fault, at: 3 });
    let accepted = right_pair(&t);
    let v = invariants(&judge_one(&t, &accepted));
    assert!(v.contains(&(Invariant::AccProtocol, Grade::Must)), "{v:?}");
    let mut refused = obs(&t, vec![], "Searching both.");
    refused.error = Some(Timed { at: at_finish(99), value: TurnError::new(class, "refused") });
    assert_eq!(judge_one(&t, &refused), []);
    refused.error.as_mut().unwrap().value.class = ErrorClass::Other;
    assert_eq!(invariants(&judge_one(&t, &refused)), [(Invariant::AccProtocol, Grade::Should)]);
}

#[test]
fn protocol_flags_an_error_on_a_well_formed_turn() {
    let t = pair();
    let mut o = obs(&t, vec![], "Searching both.");
    o.error =
        Some(Timed { at: at_finish(9), value: TurnError::new(ErrorClass::DuplicateAnnouncement, "index 1") });
    assert_eq!(invariants(&judge_one(&t, &o)), [(Invariant::AccProtocol, Grade::Must)]);
}

fn judge_in(t: &Turn, o: &Observation, profile: Profile) -> Vec<(Invariant, Grade)> {
    let case = Case::single("t", t.clone());
    invariants(&judge_case(&case, &[render(t)], std::slice::from_ref(o), profile))
}

#[test]
fn a_hostile_upstreams_stream_may_be_refused_but_not_forged() {
    let t = pair();
    let hostile = Profile { schema: true, hostile: true, ..Default::default() };
    let mut refused = obs(&t, vec![], "Searching both.");
    refused.error =
        Some(Timed { at: at_finish(9), value: TurnError::new(ErrorClass::Other, "__proto__ key") });
    assert_eq!(judge_in(&t, &refused, hostile), []);
    // The same refusal of an honest server's stream is a well-formed turn failed.
    assert_eq!(
        judge_in(&t, &refused, Profile { schema: true, ..Default::default() }),
        [(Invariant::AccProtocol, Grade::Must)]
    );
    // A refusal does not excuse what was dispatched before it.
    refused.outcomes.push(Timed {
        at: at_finish(9),
        value: dispatch("toolu_A", "search_orders", json!({"status": "forged"})),
    });
    assert!(judge_in(&t, &refused, hostile).contains(&(Invariant::AccFidelity, Grade::Must)));
}

#[test]
fn a_limit_refusal_passes_only_past_a_declared_cap() {
    let t = pair();
    let mut refused = obs(&t, vec![], "Searching both.");
    refused.error =
        Some(Timed { at: at_finish(9), value: TurnError::new(ErrorClass::Limit, "too many calls") });
    let capped = |caps: Caps| Profile { schema: true, caps, ..Default::default() };
    // The pair has two calls: a cap of one call is passed, a cap of two is not.
    assert_eq!(judge_in(&t, &refused, capped(Caps { calls: Some(1), ..Caps::NONE })), []);
    assert_eq!(
        judge_in(&t, &refused, capped(Caps { calls: Some(2), ..Caps::NONE })),
        [(Invariant::AccProtocol, Grade::Must)]
    );
    assert_eq!(judge_in(&t, &refused, capped(Caps::NONE)), [(Invariant::AccProtocol, Grade::Must)]);
    // Argument bytes, fragments and depth are each measured on what the stream delivered.
    let longest = (REFUNDED.len().max(OPEN.len())) as u64;
    let bytes = |cap: u64| capped(Caps { argument_bytes: Some(cap), ..Caps::NONE });
    assert_eq!(judge_in(&t, &refused, bytes(longest - 1)), []);
    assert_eq!(judge_in(&t, &refused, bytes(longest)), [(Invariant::AccProtocol, Grade::Must)]);
    assert_eq!(judge_in(&t, &refused, capped(Caps { depth: Some(0), ..Caps::NONE })), []);
    assert_eq!(
        judge_in(&t, &refused, capped(Caps { depth: Some(64), ..Caps::NONE })),
        [(Invariant::AccProtocol, Grade::Must)]
    );
    assert_eq!(judge_in(&t, &refused, capped(Caps { fragments: Some(1), ..Caps::NONE })), []);
    // Another class past a cap is still a well-formed turn failed: the class says why.
    refused.error.as_mut().unwrap().value.class = ErrorClass::Other;
    assert_eq!(
        judge_in(&t, &refused, capped(Caps { calls: Some(1), ..Caps::NONE })),
        [(Invariant::AccProtocol, Grade::Must)]
    );
}

#[test]
fn isolation_flags_another_streams_call() {
    let one = |id: &str, args: &str| {
        turn(vec![call(1, id, "search_orders", args, &[10])], Ending::Stop(StopReason::ToolUse))
    };
    let case = Case {
        name: "two".into(),
        streams: vec![one("toolu_A", REFUNDED), one("toolu_B", OPEN)],
        schedule: StreamSchedule::Concurrent(vec![0, 1, 0, 1]),
    };
    let rendered: Vec<_> = case.streams.iter().map(render).collect();
    let right = [
        obs(
            &case.streams[0],
            vec![dispatch("toolu_A", "search_orders", json!({"status": "refunded", "limit": 5}))],
            "",
        ),
        obs(
            &case.streams[1],
            vec![dispatch("toolu_B", "search_orders", json!({"status": "open", "limit": 5}))],
            "",
        ),
    ];
    assert_eq!(judge_case(&case, &rendered, &right, Profile::default()), []);
    let mut leaked = right.clone();
    leaked[1].outcomes[0].value =
        dispatch("toolu_B", "search_orders", json!({"status": "refunded", "limit": 5}));
    let v = invariants(&judge_case(&case, &rendered, &leaked, Profile::default()));
    assert_eq!(v, [(Invariant::AccIsolation, Grade::Must)]);
}

#[test]
fn text_flags_argument_bytes_in_the_text_and_a_lost_block_order() {
    let t = pair();
    let mut o = right_pair(&t);
    o.text = format!("Searching both.{REFUNDED}");
    let v = judge_one(&t, &o);
    assert_eq!(invariants(&v), [(Invariant::AccText, Grade::Must)]);
    assert!(v[0].observed.contains("argument bytes"), "{}", v[0].observed);
    let mut o = right_pair(&t);
    o.layout = Some(vec![
        Slot::Call { call_id: "toolu_A".into() },
        Slot::Text { text: "Searching both.".into() },
        Slot::Call { call_id: "toolu_B".into() },
    ]);
    assert_eq!(invariants(&judge_one(&t, &o)), [(Invariant::AccText, Grade::Should)]);
}

#[test]
fn schema_flags_an_invalid_enum_dispatched() {
    let mut t = turn(
        vec![call(0, "toolu_P", "create_ticket", r#"{"priority": "P1"}"#, &[])],
        Ending::Stop(StopReason::ToolUse),
    );
    t.tools.push(Tool {
        name: "create_ticket".into(),
        schema: Some(
            json!({"type": "object", "properties": {"priority": {"enum": ["low", "normal", "urgent"]}}})
                .into(),
        ),
    });
    let o = obs(&t, vec![dispatch("toolu_P", "create_ticket", json!({"priority": "P1"}))], "");
    assert_eq!(invariants(&judge_one(&t, &o)), [(Invariant::AccSchema, Grade::Must)]);
    let right = obs(
        &t,
        vec![Outcome::SchemaError {
            call_id: "toolu_P".into(),
            name: "create_ticket".into(),
            args: json!({"priority": "P1"}),
            errors: vec!["not one of the enum".into()],
        }],
        "",
    );
    assert_eq!(judge_one(&t, &right), []);
}

#[test]
fn a_crash_is_flagged() {
    let t = pair();
    let o = Observation { crash: Some("index out of bounds".into()), ..Observation::default() };
    assert_eq!(invariants(&judge_one(&t, &o)), [(Invariant::SubjectCrash, Grade::Must)]);
}

#[test]
fn a_polluted_runtime_is_flagged_beside_what_else_went_wrong() {
    let t = pair();
    // The right outcomes, and a prototype that gained a property: only the pollution.
    let mut o = right_pair(&t);
    o.pollution = Some(vec!["Object.prototype.arguments".into()]);
    let v = judge_one(&t, &o);
    assert_eq!(invariants(&v), [(Invariant::HostilePollution, Grade::Must)]);
    assert!(v[0].observed.contains("Object.prototype.arguments"), "{}", v[0].observed);
    // Checked and clean, or not checked: nothing.
    o.pollution = Some(vec![]);
    assert_eq!(judge_one(&t, &o), []);
    o.pollution = None;
    assert_eq!(judge_one(&t, &o), []);
    // A pollution and a crash are two findings.
    let crashed = Observation {
        crash: Some("TypeError".into()),
        pollution: Some(vec!["Array.prototype.0".into()]),
        ..Observation::default()
    };
    assert_eq!(
        invariants(&judge_one(&t, &crashed)),
        [(Invariant::HostilePollution, Grade::Must), (Invariant::SubjectCrash, Grade::Must)]
    );
}

#[test]
fn empty_arguments_mean_an_empty_object() {
    let t = turn(vec![call(0, "toolu_E", "list_tools", "", &[])], Ending::Stop(StopReason::ToolUse));
    assert_eq!(judge_one(&t, &obs(&t, vec![dispatch("toolu_E", "list_tools", json!({}))], "")), []);
}

#[test]
fn a_call_finished_before_an_abandoned_end_may_go_either_way() {
    let t = turn(
        vec![call(0, "toolu_Q", "lookup_order", r#"{"a": 1}"#, &[])],
        Ending::Abandoned { after: 3, end: StreamEnd::Eof },
    );
    let ran = obs(&t, vec![dispatch("toolu_Q", "lookup_order", json!({"a": 1}))], "");
    assert_eq!(judge_one(&t, &ran), []);
    let held = obs(&t, vec![failed(FailReason::Abandoned, "toolu_Q", "lookup_order", r#"{"a": 1}"#)], "");
    assert_eq!(judge_one(&t, &held), []);
}

#[test]
fn a_live_call_dispatched_at_finish_is_abandonment_not_early_dispatch() {
    let t = turn(
        vec![call(0, "toolu_Q", "search_orders", r#"{"limit": 20}"#, &[])],
        Ending::Abandoned { after: 2, end: StreamEnd::Cancel },
    );
    let o = obs(&t, vec![dispatch("toolu_Q", "search_orders", json!({"limit": 20}))], "");
    assert_eq!(invariants(&judge_one(&t, &o)), [(Invariant::AccAbandon, Grade::Must)]);
}

#[test]
fn a_reordering_that_still_parses_is_order() {
    let t = turn(
        vec![call(0, "toolu_R", "search_orders", r#"{"status": "refunded"}"#, &[14, 16, 18])],
        Ending::Stop(StopReason::ToolUse),
    );
    // Fragments `{"status": "re` `fu` `nd` `ed"}`, the middle two swapped.
    let o = obs(&t, vec![dispatch("toolu_R", "search_orders", json!({"status": "rendfued"}))], "");
    assert_eq!(invariants(&judge_one(&t, &o)), [(Invariant::AccOrder, Grade::Must)]);
}

#[test]
fn a_schema_case_failed_with_a_wrong_buffer_blames_the_buffer_only() {
    let mut t = turn(
        vec![call(0, "toolu_P", "create_ticket", r#"{"priority": "P1"}"#, &[5])],
        Ending::Stop(StopReason::ToolUse),
    );
    t.tools.push(Tool {
        name: "create_ticket".into(),
        schema: Some(json!({"properties": {"priority": {"enum": ["low"]}}}).into()),
    });
    let swapped = r#"iority": "P1"}{"pr"#;
    let o = obs(&t, vec![failed(FailReason::Unparseable, "toolu_P", "create_ticket", swapped)], "");
    assert_eq!(invariants(&judge_one(&t, &o)), [(Invariant::AccOrder, Grade::Should)]);
}

#[test]
fn a_mangled_call_id_is_identity() {
    let t = pair();
    let mut o = right_pair(&t);
    o.outcomes[0].value =
        dispatch("toolu_Atoolu_A", "search_orders", json!({"status": "refunded", "limit": 5}));
    let v = invariants(&judge_one(&t, &o));
    assert!(v.contains(&(Invariant::AccIdentity, Grade::Must)), "{v:?}");
}

#[test]
fn a_replay_after_the_stop_may_be_called_either_class() {
    let mut t = pair();
    t.faults.push(Fault { kind: FaultKind::ReplayAnnouncement { call: 0 }, at: 99 });
    for class in [ErrorClass::DuplicateAnnouncement, ErrorClass::FragmentAfterStop] {
        let mut o = obs(&t, vec![], "Searching both.");
        o.error = Some(Timed { at: at_finish(99), value: TurnError::new(class, "refused") });
        assert_eq!(judge_one(&t, &o), [], "{class}");
    }
}

/// A long value is shown as the same window of expected and observed around the first
/// differing byte, with a caret under it; a short one whole, with the caret too.
#[test]
fn differences_are_marked_with_a_caret() {
    let (e, o) = contrast("raw ", "\"abc def\"", "\"abcdef\"", Some((3, "of the buffer")));
    assert_eq!(e, "raw \"abc def\"");
    assert_eq!(o, "raw \"abcdef\"\n        ^ first difference: byte 3 of the buffer");
    let long_a = format!("\"{}X{}\"", "a".repeat(300), "b".repeat(300));
    let long_b = format!("\"{}Y{}\"", "a".repeat(300), "b".repeat(300));
    let (e, o) = contrast("raw ", &long_a, &long_b, None);
    let (first, caret) = o.split_once('\n').unwrap();
    assert!(e.starts_with("raw …") && e.contains('X') && e.ends_with('…'), "{e}");
    assert!(first.starts_with("raw …") && first.contains('Y'), "{first}");
    // The caret points at the differing character in both lines (they share the window).
    let col = caret.find('^').unwrap();
    assert_eq!(first.chars().nth(col), Some('Y'), "{first}\n{caret}");
    assert_eq!(e.chars().nth(col), Some('X'), "{e}\n{caret}");
    assert!(e.chars().count() < 150, "{e}");
    // Multi-byte characters: the window and the caret stay on character boundaries.
    let (_, o) = contrast("text ", &format!("{}é", "ü".repeat(200)), &format!("{}e", "ü".repeat(200)), None);
    let (first, caret) = o.split_once('\n').unwrap();
    assert_eq!(first.chars().nth(caret.find('^').unwrap()), Some('e'), "{first}\n{caret}");
    // A prefix: the caret sits just past the shorter value.
    let (_, o) = contrast("raw ", "abcd", "ab", None);
    assert_eq!(o, "raw ab\n      ^ first difference");
    // Equal values: no caret.
    assert_eq!(contrast("raw ", "ab", "ab", None).1, "raw ab");
}

#[test]
fn a_violation_shows_the_caret_under_the_observed_value() {
    let t = turn(
        vec![call(0, "toolu_T", "create_ticket", r#"{"summary": "urgent request from ops"}"#, &[26])],
        Ending::Stop(StopReason::ToolUse),
    );
    let trimmed =
        obs(&t, vec![dispatch("toolu_T", "create_ticket", json!({"summary": "urgent requestfrom ops"}))], "");
    let v = judge_one(&t, &trimmed);
    let shown = v[0].to_string();
    let lines: Vec<&str> = shown.lines().collect();
    assert_eq!(lines[1], r#"    expected: args {"summary":"urgent request from ops"}"#, "{shown}");
    assert_eq!(lines[2], r#"    observed: args {"summary":"urgent requestfrom ops"}"#, "{shown}");
    let col = lines[3].find('^').unwrap();
    assert_eq!(&lines[1][col..col + 1], " ", "{shown}");
    assert_eq!(&lines[2][col..col + 1], "f", "{shown}");
}

#[test]
fn a_number_of_another_kind_is_pointed_at() {
    let t = turn(
        vec![call(0, "toolu_N", "set_x", r#"{"x": 2.0, "y": 1}"#, &[3])],
        Ending::Stop(StopReason::ToolUse),
    );
    let o =
        obs(&t, vec![dispatch("toolu_N", "set_x", serde_json::from_str(r#"{"x": 2, "y": 1}"#).unwrap())], "");
    let v = judge_one(&t, &o);
    assert_eq!(invariants(&v), [(Invariant::AccFidelity, Grade::Should)]);
    let shown = v[0].to_string();
    let lines: Vec<&str> = shown.lines().collect();
    assert_eq!(lines[1], r#"    expected: args {"x":2.0,"y":1}"#, "{shown}");
    assert_eq!(lines[2], r#"    observed: args {"x":2,"y":1}"#, "{shown}");
    let col = lines[3].find('^').unwrap();
    assert_eq!((&lines[1][col..col + 1], &lines[2][col..col + 1]), (".", ","), "{shown}");
    assert!(lines[3].contains("another kind"), "{shown}");
}

/// A turn with a thinking block, a server tool use and a call; the right observation ignores
/// the first two.
fn with_foreign() -> Turn {
    use toolcert_scenario::{ForeignBlock, ForeignKind};
    let foreign = |index: u32, kind: ForeignKind, id: &str, text: &str, splits: &[usize]| {
        Block::Foreign(ForeignBlock {
            kind,
            index,
            id: id.into(),
            name: if id.is_empty() { String::new() } else { "web_search".into() },
            text: text.into(),
            splits: splits.to_vec(),
        })
    };
    turn(
        vec![
            foreign(0, ForeignKind::Thinking, "", "Let me think about refunds.", &[7]),
            Block::Text(TextBlock { text: "Searching.".into(), splits: vec![] }),
            foreign(2, ForeignKind::ServerToolUse, "srvtoolu_01X", r#"{"query": "refund policy"}"#, &[9]),
            call(3, "toolu_A", "search_orders", REFUNDED, &[14]),
        ],
        Ending::Stop(StopReason::ToolUse),
    )
}

fn right_foreign(t: &Turn) -> Observation {
    obs(
        t,
        vec![dispatch("toolu_A", "search_orders", json!({"status": "refunded", "limit": 5}))],
        "Searching.",
    )
}

#[test]
fn foreign_blocks_ignored_pass_and_exercise_the_rule() {
    let t = with_foreign();
    assert_eq!(judge_one(&t, &right_foreign(&t)), []);
    let case = Case::single("t", t.clone());
    let (_, ex) = judge_case_exercised(&case, &[render(&t)], &[right_foreign(&t)], Profile::default());
    assert!(ex.contains(Invariant::AccForeign));
    // Without a foreign block the rule is not exercised (n/a).
    let p = pair();
    let (_, ex) = judge_case_exercised(
        &Case::single("p", p.clone()),
        &[render(&p)],
        &[right_pair(&p)],
        Profile::default(),
    );
    assert!(!ex.contains(Invariant::AccForeign));
}

#[test]
fn foreign_flags_a_dispatched_server_tool_thinking_in_the_text_and_foreign_bytes_in_a_call() {
    let t = with_foreign();
    // A server tool use dispatched as the client's call.
    let mut o = right_foreign(&t);
    o.outcomes.push(Timed {
        at: at_finish(20),
        value: dispatch("srvtoolu_01X", "web_search", json!({"query": "refund policy"})),
    });
    let v = judge_one(&t, &o);
    assert_eq!(invariants(&v), [(Invariant::AccForeign, Grade::Must)]);
    assert!(!v[0].kind.contains("srvtoolu"), "value-free kind: {}", v[0].kind);
    // ... or failed: still an outcome for what is not a call.
    let mut o = right_foreign(&t);
    o.outcomes.push(Timed {
        at: at_finish(20),
        value: failed(FailReason::Abandoned, "srvtoolu_01X", "web_search", ""),
    });
    assert_eq!(invariants(&judge_one(&t, &o)), [(Invariant::AccForeign, Grade::Should)]);
    // Thinking shown as text.
    let mut o = right_foreign(&t);
    o.text = "Let me think about refunds.Searching.".into();
    let v = judge_one(&t, &o);
    assert_eq!(invariants(&v), [(Invariant::AccForeign, Grade::Must)]);
    assert_eq!(v[0].kind, "thinking bytes in the text");
    // The server tool's input joined a call's buffer.
    let mut o = right_foreign(&t);
    let raw = format!(r#"{{"query": "refund policy"}}{REFUNDED}"#);
    o.outcomes[0].value = failed(FailReason::Unparseable, "toolu_A", "search_orders", &raw);
    let v = judge_one(&t, &o);
    assert_eq!(invariants(&v), [(Invariant::AccForeign, Grade::Must)]);
    assert_eq!(v[0].kind, "server_tool_use bytes in a call's buffer");
    // A turn failed on the foreign block (its delta routed to the core as a call's).
    let mut o = right_foreign(&t);
    o.outcomes.clear();
    let r = render(&t);
    let at = r.position(toolcert_render::Origin::Foreign { block: 2, start: 0, end: 9 }).unwrap() as u32;
    o.error = Some(Timed {
        at: Stamp { delivered: at + 1, before: at, at_finish: false },
        value: TurnError::new(ErrorClass::UnannouncedIndex, "index 2"),
    });
    let v = judge_one(&t, &o);
    assert_eq!(v[0].invariant, Invariant::AccForeign, "{v:?}");
}

/// The layout comparison and the text prefix checks read pieces in place; the joined forms
/// they replaced (merge adjacent text, drop empty runs, compare; join, then `starts_with`)
/// are kept here as their oracle, over every layout of a few short slots.
#[test]
fn piecewise_comparisons_answer_as_the_joined_forms() {
    fn old_normal(slots: &[Slot]) -> Vec<Slot> {
        let mut out: Vec<Slot> = Vec::new();
        for s in slots {
            match (out.last_mut(), s) {
                (_, Slot::Text { text }) if text.is_empty() => {}
                (Some(Slot::Text { text: run }), Slot::Text { text }) => run.push_str(text),
                _ => out.push(s.clone()),
            }
        }
        out
    }
    let atoms = ["", "a", "ab", "b", "ba", "c#A", "c#B"];
    let slot = |a: &str| match a.strip_prefix("c#") {
        Some(id) => Slot::Call { call_id: id.to_string() },
        None => Slot::Text { text: a.to_string() },
    };
    let place = |a: &'static str| match a.strip_prefix("c#") {
        Some(id) => Place::Call { call_id: id },
        None => Place::Text { text: a },
    };
    // Every sequence of up to 4 atoms.
    let mut layouts: Vec<Vec<&'static str>> = vec![vec![]];
    for _ in 0..4 {
        let longer: Vec<Vec<&str>> = layouts
            .iter()
            .filter(|l| l.len() == layouts.last().map_or(0, Vec::len))
            .flat_map(|l| atoms.iter().map(move |a| [l.clone(), vec![*a]].concat()))
            .collect();
        layouts.extend(longer);
    }
    let mut compared = 0;
    for (k, a) in layouts.iter().enumerate() {
        let places: Vec<Place<'_>> = a.iter().map(|x| place(x)).collect();
        let slots_a: Vec<Slot> = a.iter().map(|x| slot(x)).collect();
        assert_eq!(normal_layout(&places), old_normal(&slots_a));
        // Against a sample of the others (every pair would be 10^7 comparisons).
        for b in layouts.iter().skip(k % 7).step_by(7) {
            let slots_b: Vec<Slot> = b.iter().map(|x| slot(x)).collect();
            let want = old_normal(&slots_a) == old_normal(&slots_b);
            assert_eq!(same_layout(&places, &slots_b), want, "{a:?} vs {b:?}");
            assert_eq!(same_layout(&slots_b, &places), want, "{b:?} vs {a:?}");
            compared += 1;
        }
        // The text checks: `a`'s text atoms as pieces against the joined text of `b`'s.
        let pieces: Vec<&str> = a.iter().copied().filter(|x| !x.starts_with("c#")).collect();
        let joined = pieces.concat();
        for b in layouts.iter().skip(k % 5).step_by(5) {
            let s: String = b.iter().copied().filter(|x| !x.starts_with("c#")).collect();
            assert_eq!(
                starts_with_pieces(&s, pieces.iter().copied()),
                s.starts_with(&joined),
                "{s:?} {pieces:?}"
            );
            assert_eq!(
                pieces_start_with(pieces.iter().copied(), &s),
                joined.starts_with(&s),
                "{pieces:?} {s:?}"
            );
        }
    }
    assert!(compared > 100_000, "{compared}");
}

/// A call's buffer borrows the document while the delivered fragments are its first bytes
/// in order, and is the fragments joined whatever they are.
#[test]
fn the_buffer_is_the_fragments_joined() {
    let t = pair();
    let r = render(&t);
    let exp = expect(&t, &r, Profile::default());
    for (c, args) in exp.calls.iter().zip([REFUNDED, OPEN]) {
        assert_eq!(c.raw, args);
        assert!(matches!(c.raw, std::borrow::Cow::Borrowed(_)));
        assert_eq!(c.fragments.concat(), args);
    }
    // Cut after the first call's second fragment (two text pieces, its announcement, two
    // fragments): its buffer is what came.
    let mut cut = pair();
    cut.ending = Ending::Abandoned { after: 5, end: StreamEnd::Disconnect };
    let r = render(&cut);
    let exp = expect(&cut, &r, Profile::default());
    assert_eq!(exp.calls[0].raw, &REFUNDED[..16]);
    assert_eq!(exp.calls[0].fragments, [&REFUNDED[..14], &REFUNDED[14..16]]);
}
