//! The seeds' named cases: each is a scenario; the oracle derives its expectation, which must
//! say what the seed says happens (written here from the seed's text, not from any
//! accumulator's output), and the reference accumulator must conform to it.

use rstest::rstest;
use toolcert::gen::named;
use toolcert::oracle::{expect, Expect, Judged, Profile};
use toolcert::reference::ReferenceSubject;
use toolcert::render::render;

/// The oracle's expectation for each stream, one label per announced call, plus the
/// protocol error the turn must fail with.
fn expectation(id: &str) -> Vec<String> {
    let case = named::by_id(id).unwrap_or_else(|| panic!("no named case {id}")).case;
    let mut labels = Vec::new();
    for turn in &case.streams {
        let e = expect(turn, &render(turn), Profile { schema: true, ..Default::default() });
        if let Some(f) = e.fault {
            labels.push(format!("protocol:{}", f.class));
        }
        for c in &e.calls {
            labels.push(match &c.expect {
                Expect::Finished { judged: Judged::Dispatch { args } } => format!("dispatch {args}"),
                Expect::Finished { judged: Judged::SchemaError { .. } } => "schema_error".into(),
                Expect::Finished { judged: Judged::Unparseable } => "failed(unparseable)".into(),
                Expect::Failed { reason } => format!("failed({})", reason.as_str()),
                Expect::FinishedOrAbandoned { .. } => "finished_or_abandoned".into(),
                Expect::Faulted { .. } => "faulted".into(),
            });
        }
    }
    labels
}

const WEATHER: &str = r#"dispatch {"days":3,"location":"Boston"}"#;
const REFUNDED: &str = r#"dispatch {"from":"2025-03-01","status":"refunded","to":"2025-03-31"}"#;
const OPEN: &str = r#"dispatch {"from":"2025-03-01","status":"open","to":"2025-03-31"}"#;

#[rstest]
#[case::lookup_order("deltas/lookup-order-a4471", &[r#"dispatch {"include_line_items":true,"order_id":"A-4471"}"#])]
#[case::refunded_open_pair("keying/refunded-open-pair", &[REFUNDED, OPEN])]
#[case::refunded_open_interleaved("keying/refunded-open-interleaved", &[REFUNDED, OPEN])]
#[case::split_inside_string("split/inside-string", &[r#"dispatch {"note":"shipped on the 3rd of March"}"#])]
#[case::split_inside_escape("split/inside-escape", &[r#"dispatch {"note":"line one\nline two"}"#])]
#[case::split_inside_unicode_escape("split/inside-unicode-escape", &[r#"dispatch {"city":"Mérida"}"#])]
#[case::split_inside_nested_object("split/inside-nested-object", &[r#"dispatch {"filter":{"status":"open"}}"#])]
#[case::split_between_key_and_colon("split/between-key-and-colon", &[r#"dispatch {"limit":20}"#])]
#[case::summary_leading_spaces(
    "deltas/summary-leading-spaces",
    &[r#"dispatch {"summary":"urgent request from ops about the March invoice run"}"#]
)]
#[case::prefix_parses("deltas/prefix-parses", &[r#"dispatch {"limit":20}"#])]
#[case::prefix_parses_then_truncated("final/prefix-parses-then-truncated", &["failed(truncated)"])]
#[case::create_ticket_max_tokens("final/create-ticket-max-tokens", &["failed(truncated)"])]
#[case::abandoned_mid_arguments("final/abandoned-mid-arguments", &["failed(abandoned)"])]
#[case::cancelled_mid_arguments("final/cancelled-mid-arguments", &["failed(abandoned)"])]
#[case::errored_mid_arguments("final/errored-mid-arguments", &["failed(abandoned)"])]
#[case::interleaved_disconnect("final/interleaved-disconnect", &["failed(abandoned)", "failed(abandoned)"])]
#[case::prose_before_and_after(
    "deltas/prose-before-and-after",
    &[r#"dispatch {"include_line_items":true,"order_id":"A-4471"}"#]
)]
#[case::two_documents_end_to_end("keying/two-documents-end-to-end", &["failed(unparseable)"])]
#[case::priority_p1("final/priority-p1-schema-error", &["schema_error"])]
#[case::empty_arguments("keying/empty-arguments", &["dispatch {}"])]
#[case::gemini_end_empty("gemini/end-empty-function-call", &[WEATHER])]
#[case::gemini_end_last_piece("gemini/end-last-piece", &[WEATHER])]
#[case::gemini_end_of_candidate("gemini/end-of-candidate", &[WEATHER])]
#[case::gemini_keep_alives("gemini/keep-alives", &[WEATHER])]
#[case::gemini_no_argument_call("gemini/no-argument-call", &["dispatch {}", r#"dispatch {"theme":"dark"}"#])]
#[case::gemini_bracketed_paths(
    "gemini/bracketed-paths",
    &[r#"dispatch {"__proto__":{"constructor":true},"a.b":{"it's [x]":"val"},"deep":{"x":{"y":[[null]]}},"items":[{"n":1},{"n":"two"}]}"#]
)]
#[case::gemini_surrogate_pair_split("gemini/surrogate-pair-split", &["dispatch {\"text\":\"hi \u{1F600} there\"}"])]
#[case::gemini_same_tool_pair(
    "gemini/same-tool-pair",
    &[r#"dispatch {"status":"refunded"}"#, r#"dispatch {"status":"open"}"#]
)]
#[case::gemini_cut_mid_string("gemini/cut-mid-string", &["failed(abandoned)"])]
#[case::gemini_max_tokens_mid_call("gemini/max-tokens-mid-call", &["failed(truncated)"])]
#[case::duplicate_announcement("keying/duplicate-announcement", &["protocol:duplicate_announcement", "faulted", "faulted"])]
#[case::unannounced_index("keying/unannounced-index", &["protocol:unannounced_index", "faulted", "faulted"])]
#[case::done_differs("deltas/done-differs-from-deltas", &["protocol:done_mismatch", "faulted", "faulted"])]
#[case::fragment_after_stop("keying/fragment-after-stop", &["protocol:fragment_after_stop", "faulted", "faulted"])]
#[case::two_streams_index_1(
    "keying/two-streams-index-1",
    &[r#"dispatch {"limit":5,"status":"refunded"}"#, r#"dispatch {"limit":5,"status":"open"}"#]
)]
#[case::successive_turns(
    "keying/successive-turns",
    &[r#"dispatch {"limit":5,"status":"refunded"}"#, r#"dispatch {"limit":5,"status":"open"}"#]
)]
#[case::case_and_suffix_pairs(
    "names/case-and-suffix-pairs",
    &[r#"dispatch {"city":"Oslo"}"#, r#"dispatch {"city":"Paris"}"#, r#"dispatch {"city":"Rome"}"#]
)]
#[case::sixty_four_characters("names/sixty-four-characters", &[r#"dispatch {"order_id":"A-1"}"#])]
#[case::nan_is_unparseable("numbers/nan-is-unparseable", &["failed(unparseable)"])]
#[case::leading_zero_is_unparseable("numbers/leading-zero-is-unparseable", &["failed(unparseable)"])]
#[case::whitespace_only("degenerate/whitespace-only", &["failed(unparseable)"])]
#[case::all_empty_fragments("degenerate/all-empty-fragments", &["dispatch {}"])]
#[case::duplicate_key("degenerate/duplicate-key", &[r#"dispatch {"city":"Paris","units":"metric"}"#])]
#[case::array_at_top_level("degenerate/array-at-top-level", &["dispatch [1,2]"])]
#[case::lone_surrogate("degenerate/lone-surrogate", &["failed(unparseable)"])]
#[case::sparse_chat("indices/sparse-chat", &[r#"dispatch {"city":"Oslo"}"#, r#"dispatch {"city":"Rome"}"#])]
// Four body events arrived (the text, the announcement, two fragments); the connection drops
// inside the fifth, the call's own stop, which therefore never arrived: the call is live at the
// end (docs/SPEC.md, ground truth per ending).
#[case::cut_before_blank_line("stream/cut-before-blank-line", &["failed(abandoned)"])]
#[case::cut_inside_data_prefix("stream/cut-inside-data-prefix", &["failed(abandoned)"])]
#[case::item_done_only("dialect/item-done-only", &[A4471, A4472])]
#[case::item_done_contradicts_deltas(
    "dialect/item-done-contradicts-deltas",
    &["protocol:done_mismatch", "faulted", "faulted"]
)]
#[case::completed_repeats_calls("dialect/completed-repeats-calls", &[A4471, A4472])]
#[case::unknown_delta_and_event("dialect/unknown-delta-and-event", &[A4471, A4472])]
#[case::chat_prelude("dialect/chat-prelude", &[OSLO])]
#[case::usage_without_choices("dialect/usage-without-choices", &[OSLO])]
#[case::done_without_finish("dialect/done-without-finish", &["failed(abandoned)"])]
// Nothing arrived before `[DONE]`: no call was announced, so none has an outcome.
#[case::done_alone("dialect/done-alone", &[])]
fn named_case(#[case] id: &str, #[case] seed_says: &[&str]) {
    assert_eq!(expectation(id), seed_says, "the oracle's expectation for {id}");
    let case = named::by_id(id).unwrap().case;
    let checked =
        toolcert::check_case(&ReferenceSubject, &case, Profile { schema: true, ..Default::default() });
    assert!(
        checked.violations.is_empty(),
        "the reference breaks {id}:\n{}",
        checked.violations.iter().map(|v| v.to_string()).collect::<Vec<_>>().join("\n")
    );
}

const A4471: &str = r#"dispatch {"order_id":"A-4471"}"#;
const A4472: &str = r#"dispatch {"order_id":"A-4472"}"#;
const OSLO: &str = r#"dispatch {"city":"Oslo"}"#;

/// The dialect events at the level they live at: the dialect's stream carries the unit (as
/// the provider's API reference spells it), the reference conforms on it at the wire and
/// bytes levels, and the mutant that reads it wrong fails it.
#[rstest]
#[case::item_done_only(
    "dialect/item-done-only",
    "openai-responses",
    "\"output_index\":2,\"item\":{\"type\":\"function_call\"",
    "item-done-only-lost"
)]
#[case::item_done_contradicts(
    "dialect/item-done-contradicts-deltas",
    "openai-responses",
    "A-9999",
    "item-done-trusted"
)]
#[case::completed_repeats(
    "dialect/completed-repeats-calls",
    "openai-responses",
    "\"status\":\"completed\",\"error\"",
    "completed-calls-duplicated"
)]
#[case::unknown_delta(
    "dialect/unknown-delta-and-event",
    "anthropic",
    "\"citations_delta\"",
    "unknown-delta-fails"
)]
#[case::chat_prelude(
    "dialect/chat-prelude",
    "openai-chat",
    "\"prompt_filter_results\"",
    "chat-prelude-as-error"
)]
#[case::usage_without_choices(
    "dialect/usage-without-choices",
    "openai-chat",
    "\"system_fingerprint\":\"fp_07871e2ad8\",\"usage\"",
    "usage-without-choices-refused"
)]
#[case::done_without_finish("dialect/done-without-finish", "openai-chat", "[DONE]", "done-as-finish")]
#[case::done_alone("dialect/done-alone", "openai-chat", "[DONE]", "done-alone-malformed")]
// A second generation spliced in: malformed at the wire and bytes levels (the events level has
// no start event), and read on as one turn by the mutant.
#[case::spliced_anthropic("dialect/spliced-generation", "anthropic", "_retry\"", "second-start-ignored")]
#[case::spliced_responses("dialect/spliced-generation", "openai-responses", "_retry\"", "")]
#[case::spliced_bedrock(
    "dialect/spliced-generation",
    "bedrock",
    "messageStart",
    "bedrock-second-start-ignored"
)]
fn dialect_event_case(#[case] id: &str, #[case] dialect: &str, #[case] carries: &str, #[case] mutant: &str) {
    use toolcert::runner::{check, Setting};
    use toolcert::subject::driver::Speech;
    use toolcert::subject::Level;
    let case = named::by_id(id).unwrap().case;
    let dialect: toolcert::scenario::Dialect = dialect.parse().unwrap();
    let turn = &case.streams[0];
    let wire = toolcert_dialect::render_wire(turn, &render(turn), dialect, Default::default()).unwrap();
    // Each message as a line: an event's data, a frame's event type and payload.
    let sse: String = wire
        .events
        .iter()
        .map(|m| match (m.as_sse(), m.as_frame()) {
            (Some(e), _) => format!("{}\n", e.data),
            (_, Some(f)) => {
                format!("{} {}\n", f.header(":event-type").unwrap_or(""), String::from_utf8_lossy(&f.payload))
            }
            _ => String::new(),
        })
        .collect();
    assert!(sse.contains(carries), "{id}: the {dialect} stream carries {carries}:\n{sse}");
    if id == "dialect/spliced-generation" {
        let starts = sse
            .lines()
            .filter(|l| ["message_start", "response.created", "messageStart"].iter().any(|s| l.contains(s)));
        assert_eq!(starts.count(), 2, "{id}: the {dialect} stream starts two generations:\n{sse}");
    }
    if id == "dialect/done-alone" {
        assert_eq!(sse, "[DONE]\n", "{id}: [DONE] is the whole stream");
    }
    for level in [Level::Wire, Level::Bytes] {
        let setting = Setting {
            level,
            speech: Speech { dialect, quirks: Default::default() },
            ..Setting::events(Profile { schema: true, ..Default::default() })
        };
        let checked = check(&ReferenceSubject, &case, setting);
        assert!(
            checked.violations.is_empty(),
            "the reference breaks {id} at {level:?}: {:?}",
            checked.violations
        );
        if !mutant.is_empty() && level == Level::Wire {
            let m = toolcert::mutants::by_name(mutant).unwrap();
            let v = check(&*m.subject(), &case, setting).violations;
            assert!(v.iter().any(|v| m.expected.contains(&v.invariant)), "{mutant} passes {id}: {v:?}");
        }
    }
}

/// The hostile upstream's named cases, in each dialect's hostile profile: the stream carries
/// the hostile value where the dialect can send it, and the reference conforms at the wire
/// and bytes levels (a hostile index is a `malformed` turn; a hostile id, name or key is
/// handed over exactly). Gemini has no index to replace.
#[rstest]
#[case::prototype_names("hostile/prototype-names", r#""name":"__proto__""#)]
#[case::control_characters("hostile/control-characters", r#"\u001b[2J\r\n"#)]
#[case::id_of_one_mebibyte("hostile/id-of-one-mebibyte", "AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA")]
#[case::index_proto("hostile/index-proto", r#"index":"__proto__""#)]
#[case::index_negative("hostile/index-negative", r#"index":-1"#)]
#[case::index_fraction("hostile/index-fraction", r#"index":0.5"#)]
#[case::index_string("hostile/index-string", r#"index":"0""#)]
#[case::index_true("hostile/index-true", r#"index":true"#)]
fn hostile_case(#[case] id: &str, #[case] carries: &str) {
    use toolcert::scenario::{Dialect, Quirks};
    use toolcert::subject::driver::Speech;
    use toolcert::subject::Level;
    let hostile = Quirks { hostile: true, ..Quirks::default() };
    let indexed = id.starts_with("hostile/index-");
    for dialect in Dialect::ALL.into_iter().filter(|d| d.profile("hostile").is_some()) {
        for level in [Level::Wire, Level::Bytes] {
            let run = toolcert::Certification {
                level,
                speech: Speech { dialect, quirks: hostile },
                cases: 0,
                filter: Some(format!("named/{id}")),
                ..toolcert::Certification::default()
            };
            let report = run.run(&ReferenceSubject);
            if indexed && matches!(dialect, Dialect::Gemini | Dialect::Bedrock) {
                assert_eq!(report.named_skipped, 1, "{id}: {dialect} has no index on a call's fragments");
                continue;
            }
            assert_eq!(report.named_cases, 1, "{id} runs in {dialect}'s hostile profile at {level:?}");
            assert!(
                report.conforms,
                "the reference on {id} in {dialect} at {level:?}:\n{}",
                report.to_text(3)
            );
            // Never outside the hostile profiles.
            let plain =
                toolcert::Certification { speech: Speech { dialect, quirks: Quirks::default() }, ..run };
            let report = plain.run(&ReferenceSubject);
            assert_eq!(report.named_cases + report.named_skipped, 0, "{id} outside the hostile profile");
        }
        // What the stream carries, where the case is written in the dialect's own shape.
        if matches!(dialect, Dialect::Anthropic | Dialect::OpenAiResponses) {
            let turn = &named::by_id(id).unwrap().case.streams[0];
            let wire = toolcert_dialect::render_wire(turn, &render(turn), dialect, hostile).unwrap();
            let sse: String =
                wire.events.iter().filter_map(|m| m.as_sse()).map(|e| format!("{}\n", e.data)).collect();
            assert!(sse.contains(carries), "{id}: the {dialect} stream carries {carries}");
            assert!(sse.contains(r#""__proto__":{"#), "{id}: the hostile members are sent");
        }
    }
}

#[test]
fn every_named_case_is_listed_above() {
    let source = include_str!("named_cases.rs");
    for c in named::all() {
        assert!(source.contains(&format!("\"{}\"", c.id)), "named case {} has no rstest case", c.id);
    }
}

#[test]
fn named_case_ids_are_unique() {
    let mut ids: Vec<&str> = named::all().iter().map(|c| c.id).collect();
    ids.sort_unstable();
    let n = ids.len();
    ids.dedup();
    assert_eq!(ids.len(), n);
}

/// Documents too long or too odd to write out here: what the oracle must make of them, by
/// kind, and the values that matter in them.
#[rstest]
#[case::file_body_64k("size/file-body-64k", &["\"path\""])]
#[case::every_form("unicode/every-form", &["A\u{30a}rhus", "e\u{301}"])]
#[case::past_a_double("numbers/past-a-double", &["9007199254740993", "18446744073709551616", "-9223372036854775809", "3.14159265358979323846264338327950288"])]
#[case::nested_200_deep("degenerate/nested-200-deep", &["[[[[1]]]]"])]
fn named_case_dispatches_exactly(#[case] id: &str, #[case] holds: &[&str]) {
    let labels = expectation(id);
    assert_eq!(labels.len(), 1, "{id}: one call");
    assert!(labels[0].starts_with("dispatch "), "{id}: {}", &labels[0][..labels[0].len().min(200)]);
    for piece in holds {
        assert!(labels[0].contains(piece), "{id}: the arguments keep {piece:?}");
    }
    let case = named::by_id(id).unwrap().case;
    let checked =
        toolcert::check_case(&ReferenceSubject, &case, Profile { schema: true, ..Default::default() });
    assert!(checked.violations.is_empty(), "the reference breaks {id}");
}

/// Turns without calls: what the user reads and how the turn ended, as the case's story says
/// (written from the scenario's text, not from any accumulator's output); the reference must
/// conform, exercise ACC-ENDING and say exactly that ending.
#[rstest]
#[case::text_cut_mid_text(
    "turn/text-cut-mid-text",
    "abandoned",
    None,
    "Your order A-4471 shipped on March 3 "
)]
#[case::text_cut_inside_stop(
    "turn/text-cut-inside-stop",
    "abandoned",
    None,
    "Your order A-4471 shipped on March 3 and should arrive by Friday."
)]
#[case::empty("turn/empty", "complete", Some("end_turn"), "")]
#[case::text_max_tokens(
    "turn/text-max-tokens",
    "truncated",
    Some("max_tokens"),
    "Your order A-4471 shipped on March 3 and should arrive by Friday."
)]
#[case::text_errored("turn/text-errored", "errored", None, "Your order A-4471 shipped on March 3 ")]
fn named_turn_without_calls(
    #[case] id: &str,
    #[case] ending: &str,
    #[case] stop_reason: Option<&str>,
    #[case] text: &str,
) {
    let case = named::by_id(id).unwrap().case;
    let turn = &case.streams[0];
    assert_eq!(turn.calls().count(), 0, "{id}: no call");
    let e = expect(turn, &render(turn), Profile { schema: true, ..Default::default() });
    assert_eq!(serde_json::to_value(e.ending).unwrap(), ending, "{id}: the oracle's ending");
    assert_eq!(e.text(), text, "{id}: the oracle's text");
    let checked =
        toolcert::check_case(&ReferenceSubject, &case, Profile { schema: true, ..Default::default() });
    assert!(checked.violations.is_empty(), "the reference breaks {id}: {:?}", checked.violations);
    assert!(checked.exercised.contains(toolcert::oracle::Invariant::AccEnding), "{id}: ACC-ENDING exercised");
    let said = checked.observations[0].ending.as_ref().expect("the reference says how the turn ended");
    assert_eq!(serde_json::to_value(said.value.ending).unwrap(), ending, "{id}: the reference's ending");
    assert_eq!(said.value.stop_reason.as_deref(), stop_reason, "{id}: the reference's stop reason");
}
/// Foreign blocks (docs/SPEC.md §8): what the rule says a correct client reports, written
/// from the rule (the client's calls only, the text blocks only), and the reference conforms
/// at the events level and at the wire and bytes levels of every dialect that has the kinds.
#[rstest]
#[case::thinking("foreign/thinking-then-call", &[LOOKUP], "Checking the order.")]
#[case::redacted("foreign/redacted-thinking", &[LOOKUP], "")]
#[case::server_tool("foreign/server-tool-use-and-result", &[LOOKUP], "Let me search first.Found it; now the order.")]
#[case::web_search("foreign/web-search-call", &[], "The policy allows refunds within 30 days.")]
#[case::custom_tool("foreign/custom-tool-call", &[LOOKUP], "")]
#[case::custom_json_shaped("foreign/custom-tool-call-json-shaped", &[], "")]
#[case::refusal("foreign/refusal", &[], "")]
#[case::chat_reasoning("foreign/chat-reasoning-then-call", &[LOOKUP], "")]
#[case::chat_refusal("foreign/chat-refusal-and-reasoning", &[], "Is there something else?")]
fn foreign_blocks_are_neither_calls_nor_text(#[case] id: &str, #[case] calls: &[&str], #[case] text: &str) {
    use toolcert::runner::{check, Setting};
    use toolcert::subject::{driver::Speech, Level};
    assert_eq!(expectation(id), calls, "{id}");
    let case = named::by_id(id).unwrap().case;
    let turn = &case.streams[0];
    assert!(turn.foreign().next().is_some(), "{id} has a foreign block");
    let e = expect(turn, &render(turn), Profile::default());
    assert_eq!(e.text(), text, "{id}");
    let mut settings = vec![Setting::default()];
    for dialect in toolcert::scenario::Dialect::ALL {
        let def = toolcert_dialect::def(dialect);
        if !def.carries(&turn.shape) || turn.foreign().any(|f| !def.speaks_foreign(f.kind)) {
            continue;
        }
        for level in [Level::Wire, Level::Bytes] {
            settings.push(Setting {
                level,
                speech: Speech { dialect, ..Speech::default() },
                ..Setting::default()
            });
        }
    }
    assert!(settings.len() >= 3, "{id} renders in some dialect");
    for setting in settings {
        let checked = check(&ReferenceSubject, &case, setting);
        assert!(checked.unsupported.is_none(), "{id}: {:?}", checked.unsupported);
        assert!(
            checked.violations.is_empty(),
            "the reference breaks {id} at {setting:?}: {:?}",
            checked.violations
        );
        assert!(checked.exercised.contains(toolcert::Invariant::AccForeign), "{id}: ACC-FOREIGN exercised");
    }
}

const LOOKUP: &str = r#"dispatch {"order_id":"A-4471"}"#;

/// What a dialect's wire may lack to carry a named case's meaning, as docs/SPEC.md §8 ("Named
/// cases in every dialect") lists it: every skip reason below the events level is
/// `<dialect> has no <one of these>`.
const WIRE_LACKS: &[&str] = &[
    "`done` event repeating the arguments: ",
    "per-call terminal: ",
    "interleaved blocks (",
    "chunk carrying several pieces: ",
    "free call indices (",
    "`response.output_item.done` event that announces a call alone: ",
    "second `done` event (",
    "delta or event of a type added later (",
    "prelude chunk (",
    "usage chunk without `choices`: ",
    "`data: [DONE]` sentinel: ",
    "replayed announcement: ",
    "empty fragment after the finish reason: ",
    "argument text, only a JSON object of typed values: ",
    "call index (",
    "call streamed in pieces with a terminator of its own (",
    "start event (",
    "way to send this stream (",
];

/// What a dialect's server profile cannot send of a lowered case (Gemini's whole calls: a
/// call cut mid-way), as the refusal of its renderer says it.
const PROFILE_LACKS: &[&str] = &[
    "a Gemini functionCall part is whole: ",
    "the stream ends after a call's last fragment but before its end",
];

fn names_what_the_wire_lacks(dialect: toolcert::scenario::Dialect, reason: &str) -> bool {
    if let Some(cannot) = reason.strip_prefix(&format!("{dialect} cannot express this stream: ")) {
        return PROFILE_LACKS.iter().any(|l| cannot.starts_with(l));
    }
    let Some(lacks) = reason.strip_prefix(&format!("{dialect} has no ")) else { return false };
    WIRE_LACKS.iter().any(|l| lacks.starts_with(l))
        || toolcert::scenario::ForeignKind::ALL
            .iter()
            .any(|k| lacks.starts_with(&format!("{} block: ", k.name())))
}

/// Below the events level every named case is lowered to the dialect: OpenAI Chat, which has
/// no per-call shape, runs the per-call cases as chunks (all but the ones whose meaning needs
/// what its wire lacks); every dialect's reference run conforms; each skip names what the
/// wire lacks; the report counts the named cases run and skipped, in JSON and in text.
#[test]
fn every_dialect_runs_the_named_cases_its_wire_can_carry() {
    use toolcert::scenario::Dialect;
    use toolcert::subject::driver::Speech;
    use toolcert::subject::Level;
    // The hostile cases run in the hostile profiles only (`hostile_case` below).
    let all = named::all().iter().filter(|n| !named::is_hostile(n.id)).count();
    for dialect in Dialect::ALL {
        let run = toolcert::Certification {
            level: Level::Bytes,
            speech: Speech { dialect, ..Speech::default() },
            cases: 0,
            ..toolcert::Certification::default()
        };
        let report = run.run(&ReferenceSubject);
        assert!(report.conforms, "the reference in {dialect}:\n{}", report.to_text(3));
        assert_eq!(
            report.named_cases + report.named_skipped,
            all,
            "{dialect}: every named case run or skipped"
        );
        assert_eq!(report.named_skipped, report.skipped.len());
        for s in &report.skipped {
            assert!(names_what_the_wire_lacks(dialect, &s.reason), "{dialect}: {}: {}", s.case, s.reason);
        }
        let json = serde_json::to_value(&report).unwrap();
        assert_eq!(json["named_cases"], report.named_cases);
        assert_eq!(json["named_skipped"], report.skipped.len());
        let text = report.to_text(0);
        let counts = format!("named cases: {} run, {} skipped", report.named_cases, report.named_skipped);
        assert!(text.contains(&counts), "{dialect}: the text says {counts:?}:\n{text}");
        let ran = |id: &str| report.ran(&format!("named/{id}"));
        // Written per-call, run everywhere; written in Chat chunks with its blocks one after
        // another, run everywhere too.
        let thinks = toolcert_dialect::def(dialect).speaks_foreign(toolcert::scenario::ForeignKind::Thinking);
        assert!(ran("deltas/lookup-order-a4471"), "{dialect}");
        assert!(ran("foreign/chat-reasoning-then-call") || !thinks, "{dialect}");
        if dialect == Dialect::OpenAiChat {
            // All but the replayed announcement, which Chat cannot say (docs/SPEC.md §3).
            assert!(report.named_cases >= 54, "Chat runs {} named cases", report.named_cases);
            // The cut mid-arguments, the faults and the two streams all run as Chat chunks.
            for id in [
                "final/abandoned-mid-arguments",
                "keying/unannounced-index",
                "keying/fragment-after-stop",
                "keying/two-streams-index-1",
            ] {
                assert!(ran(id), "{id} in Chat");
            }
        }
    }
}

/// The oracle's expectation of a turn: the ending, the protocol error, each call's outcome
/// with its id and raw buffer, the text and the foreign blocks delivered.
/// With `moved`, a faulted turn's calls are compared without what each may dispatch (see
/// below).
fn meaning(
    turn: &toolcert::scenario::Turn,
    moved: bool,
    rewritten: bool,
) -> (String, Vec<String>, String, Vec<String>) {
    let e = expect(turn, &render(turn), Profile { schema: true, ..Default::default() });
    let mut calls: Vec<String> = e.fault.iter().map(|f| format!("protocol:{}", f.class)).collect();
    calls.extend(e.calls.iter().map(|c| {
        let outcome = match &c.expect {
            Expect::Faulted { .. } if moved => "faulted".to_string(),
            other => format!("{other:?}"),
        };
        // A dialect that writes documents its own way (Gemini's typed values) keeps what each
        // is, not its bytes: the raw buffers differ.
        let raw = if rewritten { None } else { Some(&c.raw) };
        format!("{} {} {raw:?} {outcome}", c.call_id, c.name)
    }));
    let text: String = e.text_pieces.iter().map(|(_, t)| *t).collect();
    let foreign = e.foreign.iter().map(|f| format!("{:?}", f.kind)).collect();
    (format!("{:?}", e.ending), calls, text, foreign)
}

/// Lowering keeps each named case's meaning: in every dialect it is lowered to, the oracle
/// derives from the lowered scenario the expectation it derives from the case as written
/// (the same ending, protocol error, outcomes, raw buffers, text and foreign blocks). One
/// difference is the dialect's own (docs/SPEC.md §8): a fragment after one call's terminal
/// follows the finish reason in Chat, every call's terminal there, so a call the original
/// finished only after the fault may be dispatched in Chat; the fault and its class stay.
#[test]
fn lowering_keeps_each_named_case_expectation() {
    use toolcert::scenario::{FaultKind, Shape};
    let mut lowered = 0;
    for named in named::all() {
        for dialect in toolcert::scenario::Dialect::ALL {
            let Ok(case) = toolcert::runner::lower_case(&named.case, dialect) else { continue };
            for (low, turn) in case.streams.iter().zip(&named.case.streams) {
                if low.shape != turn.shape {
                    lowered += 1;
                }
                let moved = matches!(low.shape, Shape::Interleaved(_))
                    && turn.shape == Shape::PerCall
                    && turn.faults.iter().any(|f| matches!(f.kind, FaultKind::FragmentAfterStop { .. }));
                let rewritten = low.calls().zip(turn.calls()).any(|(a, b)| a.arguments != b.arguments);
                assert_eq!(
                    meaning(low, moved, rewritten),
                    meaning(turn, moved, rewritten),
                    "{} in {dialect}",
                    named.id
                );
            }
        }
    }
    assert!(lowered >= 45, "only {lowered} turns changed shape");
}
