//! Named cases from the seeds.
//!
//! Every trace and failure story of the three source chapters (docs/SPEC.md), built as a
//! scenario (what the model wrote, how the stream split and ended), never as an expected
//! output: the oracle derives each case's expectation. Ids are stable paths
//! (`keying/refunded-open-pair`) used by reports, the corpus and `--case` filters.

use toolcert_scenario::{
    Block, Call, Case, Ending, Fault, FaultKind, Interleave, Shape, StopReason, StreamEnd, StreamSchedule,
    Tail, TailAim, Tool, Turn, WireDefect,
};

/// A case from the seeds, with where it comes from.
#[derive(Clone, Debug)]
pub struct NamedCase {
    /// Stable id, also `case.name` without the `named/` prefix.
    pub id: &'static str,
    /// The seed chapter and heading it models.
    pub seed: &'static str,
    /// What it exercises, in one sentence.
    pub about: &'static str,
    /// The case needs the schema profile (a tool with a JSON Schema is judged against it).
    pub needs_schema: bool,
    pub case: Case,
}

const KEYING: &str = "000 Keying the argument accumulator";
const DELTAS: &str = "002 Argument deltas and text deltas";
const FINAL: &str = "003 Finalising a streamed tool call";

pub use toolcert_scenario::build::{call, per_call, text};

/// An OpenAI-Chat-shaped turn whose pieces are sent in `order` (block positions).
pub fn interleaved(blocks: Vec<Block>, order: Vec<u16>, ending: Ending) -> Turn {
    Turn {
        tools: vec![],
        blocks,
        shape: Shape::Interleaved(Interleave { order, joins: vec![] }),
        ending,
        faults: vec![],
        pings: vec![],
        transport: Default::default(),
        wire: Default::default(),
    }
}

fn stop(r: StopReason) -> Ending {
    Ending::Stop(r)
}

/// The refunded/open pair of `search_orders` calls, as the keying chapter streams it.
fn refunded_open(first_index: u32) -> Vec<Block> {
    vec![
        call(
            first_index,
            "toolu_01Ka",
            "search_orders",
            &[r#"{"status": "refu"#, r#"nded", "from": "2025-03-01", "to": "2025-03-31"}"#],
        ),
        call(
            first_index + 1,
            "toolu_01Mb",
            "search_orders",
            &[r#"{"status": "op"#, r#"en", "from": "2025-03-01", "to": "2025-03-31"}"#],
        ),
    ]
}

/// The lookup_order turn of the deltas chapter: prose, then the call in three fragments.
fn lookup_order_turn() -> Vec<Block> {
    vec![
        text(&["Let me pull", " that up for you."]),
        call(
            1,
            "toolu_01QxR",
            "lookup_order",
            &[r#"{"order_id": "A-44"#, r#"71", "include_line_ite"#, r#"ms": true}"#],
        ),
    ]
}

/// The create_ticket buffer that max_tokens cut (finalising chapter).
const CUT_TICKET: &str = "{\"project\": \"BILLING\", \"title\": \"March invoice run failed\",\n \"priority\": \"urgent\", \"description\": \"The 03-14 run aborted after\n  1,204 of 3,880 invoices. Affected accounts are listed in the\n  attached export; the failure appears to originate in the tax";

/// Splits `s` into fragments of about `n` bytes, on character boundaries.
fn every(s: &str, n: usize) -> Vec<usize> {
    let mut out = Vec::new();
    let mut at = n;
    while at < s.len() {
        let mut b = at;
        while !s.is_char_boundary(b) {
            b += 1;
        }
        out.push(b);
        at = b + n;
    }
    out
}

fn ticket_schema() -> serde_json::Value {
    serde_json::json!({
        "type": "object",
        "properties": {
            "project": {"type": "string"},
            "title": {"type": "string"},
            "priority": {"enum": ["low", "normal", "urgent"]},
            "description": {"type": "string"}
        },
        "required": ["project", "title", "priority"]
    })
}

/// The five split positions of the keying chapter ("Opaque, ordered, owned").
fn split_case(id: &'static str, about: &'static str, fragments: &[&str]) -> NamedCase {
    named(
        id,
        KEYING,
        about,
        false,
        per_call(vec![call(0, "toolu_01Sp", "annotate", fragments)], stop(StopReason::ToolUse)),
    )
}

pub(crate) fn named(
    id: &'static str,
    seed: &'static str,
    about: &'static str,
    needs_schema: bool,
    turn: Turn,
) -> NamedCase {
    NamedCase { id, seed, about, needs_schema, case: Case::single(format!("named/{id}"), turn) }
}

/// Whether the named case `id` is a hostile upstream's, run in the hostile server profiles
/// only (docs/SPEC.md, "The hostile upstream").
pub fn is_hostile(id: &str) -> bool {
    id.starts_with(crate::named_hostile::PREFIX)
}

/// Every named case, in a stable order.
pub fn all() -> Vec<NamedCase> {
    let mut cases = vec![
        named(
            "deltas/lookup-order-a4471",
            DELTAS,
            "the chapter's own trace: prose, then lookup_order A-4471 in three fragments",
            false,
            per_call(lookup_order_turn(), stop(StopReason::ToolUse)),
        ),
        named(
            "keying/refunded-open-pair",
            KEYING,
            "two calls to search_orders with the same keys: a name key merges them",
            false,
            per_call(refunded_open(0), stop(StopReason::ToolUse)),
        ),
        named(
            "keying/refunded-open-interleaved",
            KEYING,
            "the same pair in OpenAI Chat chunks, each chunk carrying an entry for both indices",
            false,
            Turn {
                shape: Shape::Interleaved(Interleave {
                    order: vec![0, 1, 0, 1],
                    joins: vec![false, true, false, true],
                }),
                ..interleaved(refunded_open(0), vec![], stop(StopReason::ToolCalls))
            },
        ),
        split_case(
            "split/inside-string",
            "a split inside a quoted string: \"3\" | \"rd of March\"",
            &[r#"{"note": "shipped on the 3"#, r#"rd of March"}"#],
        ),
        split_case(
            "split/inside-escape",
            "a split between the backslash and the n of \\n",
            &[r#"{"note": "line one\"#, r#"nline two"}"#],
        ),
        split_case(
            "split/inside-unicode-escape",
            "a split inside \\u00e9: \\u00 | e9",
            &[r#"{"city": "M\u00"#, r#"e9rida"}"#],
        ),
        split_case(
            "split/inside-nested-object",
            "a split inside a nested object",
            &[r#"{"filter": {"status": "op"#, r#"en"}}"#],
        ),
        split_case(
            "split/between-key-and-colon",
            "a split between a key and its colon",
            &[r#"{"limit""#, r#": 20}"#],
        ),
        named(
            "deltas/summary-leading-spaces",
            DELTAS,
            "fragments that begin with spaces inside a string: trimming them mangles the summary",
            false,
            per_call(
                vec![call(
                    0,
                    "toolu_01Tr",
                    "create_ticket",
                    &[r#"{"summary": "urgent request"#, " from ops about the March", r#" invoice run"}"#],
                )],
                stop(StopReason::ToolUse),
            ),
        ),
        named(
            "deltas/prefix-parses",
            DELTAS,
            "the buffer {\"limit\": 20} parses while a fragment is still to come: parsing is not completion",
            false,
            per_call(
                vec![call(0, "toolu_01Lm", "search_orders", &[r#"{"limit": 20}"#, "\n"])],
                stop(StopReason::ToolUse),
            ),
        ),
        named(
            "final/prefix-parses-then-truncated",
            FINAL,
            "a buffer that parses after its block stop, in a turn max_tokens cut: nothing may run",
            false,
            per_call(
                vec![call(0, "toolu_01Lm", "search_orders", &[r#"{"limit": 20}"#])],
                stop(StopReason::MaxTokens),
            ),
        ),
        named(
            "final/create-ticket-max-tokens",
            FINAL,
            "create_ticket cut at max_tokens mid-description: strict parse refuses, nothing is repaired",
            false,
            per_call(
                vec![Block::Call(Call {
                    index: 0,
                    call_id: "toolu_01Tk".into(),
                    name: "create_ticket".into(),
                    arguments: CUT_TICKET.into(),
                    splits: every(CUT_TICKET, 13),
                })],
                stop(StopReason::MaxTokens),
            ),
        ),
        named(
            "final/abandoned-mid-arguments",
            FINAL,
            "the connection drops mid-arguments with no terminal event: the call is Failed(abandoned)",
            false,
            per_call(lookup_order_turn(), Ending::Abandoned { after: 4, end: StreamEnd::Disconnect }),
        ),
        named(
            "final/cancelled-mid-arguments",
            FINAL,
            "the user cancels mid-arguments: cancellation is abandonment",
            false,
            per_call(lookup_order_turn(), Ending::Abandoned { after: 3, end: StreamEnd::Cancel }),
        ),
        named(
            "final/errored-mid-arguments",
            FINAL,
            "an error event arrives mid-arguments: the live call is abandoned, never dispatched",
            false,
            per_call(lookup_order_turn(), Ending::Errored { after: 4, message: "overloaded_error".into() }),
        ),
        named(
            "final/interleaved-disconnect",
            FINAL,
            "an OpenAI Chat stream drops before finish_reason: every call is abandoned",
            false,
            interleaved(
                refunded_open(0),
                vec![0, 1, 0, 1],
                Ending::Abandoned { after: 4, end: StreamEnd::Disconnect },
            ),
        ),
        named(
            "deltas/prose-before-and-after",
            DELTAS,
            "prose before a call and after it: text reassembled exactly, no argument bytes in it, order kept",
            false,
            per_call(
                {
                    let mut b = lookup_order_turn();
                    b.push(text(&["I'll check the", " *line items* next."]));
                    b
                },
                stop(StopReason::ToolUse),
            ),
        ),
        named(
            "keying/two-documents-end-to-end",
            KEYING,
            "one buffer holding two documents end to end: json.loads refuses, raw_decode keeps the first",
            false,
            per_call(
                vec![call(
                    0,
                    "toolu_01Ka",
                    "search_orders",
                    &[
                        r#"{"status": "refunded", "from": "2025-03-01", "to": "2025-03-31"}"#,
                        r#"{"status": "open", "from": "2025-03-01", "to": "2025-03-31"}"#,
                    ],
                )],
                stop(StopReason::ToolUse),
            ),
        ),
        named(
            "final/priority-p1-schema-error",
            FINAL,
            "priority \"P1\" against an enum low|normal|urgent: a SchemaError the model can correct",
            true,
            Turn {
                tools: vec![Tool { name: "create_ticket".into(), schema: Some(ticket_schema().into()) }],
                ..per_call(
                    vec![call(
                        0,
                        "toolu_01Pr",
                        "create_ticket",
                        &[
                            r#"{"project": "BILLING", "title": "March invoice run failed", "#,
                            r#""priority": "P1"}"#,
                        ],
                    )],
                    stop(StopReason::ToolUse),
                )
            },
        ),
        named(
            "keying/empty-arguments",
            DELTAS,
            "a call with no argument bytes takes the arguments {}",
            false,
            per_call(vec![call(0, "toolu_01Em", "list_tools", &[])], stop(StopReason::ToolUse)),
        ),
    ];
    cases.extend(protocol_cases());
    cases.extend(isolation_cases());
    cases.extend(widened_cases());
    cases.extend(no_call_cases());
    cases.extend(dialect_event_cases());
    cases.extend(crate::named_foreign::cases());
    cases.extend(crate::named_gemini::cases());
    // Last, so that every other case keeps its position.
    cases.extend(crate::named_hostile::cases());
    cases
}

/// A document of about `size` bytes: a file body with every JSON escape, Unicode in every
/// form, and code.
fn file_body(size: usize) -> String {
    const LINES: &[&str] = &[
        r#"fn main() {\n\tprintln!(\"hello, {}\", name);\n}\n"#,
        r#"\tif (a \u003c b \u0026\u0026 c) { return \"\\\"; }\r\n"#,
        r#"path = \"C:\\Users\\zo\u00eb\\notes.txt\"\n"#,
        r#"bell\u0007 nul\u0000 esc\u001b\b\f url: https:\/\/example.com\/a\n"#,
        "// Mérida, 東京, 😀, e\u{301}, \\ud83d\\ude00\\n",
    ];
    let mut doc = String::from(r#"{"path": "src/lib.rs", "content": ""#);
    let mut k = 0;
    while doc.len() < size {
        doc.push_str(LINES[k % LINES.len()]);
        k += 1;
    }
    doc.push_str("\"}");
    doc
}

/// The cases of the widened generated space (sizes, names, Unicode, numbers, degenerate
/// documents and indices): one or more for each class, so the corpus shows each and the
/// zoo's mutants of each are caught by name.
fn widened_cases() -> Vec<NamedCase> {
    let one = |name: &str, args: &str, splits: Vec<usize>| {
        per_call(
            vec![Block::Call(Call {
                index: 0,
                call_id: "toolu_01Wd".into(),
                name: name.into(),
                arguments: args.into(),
                splits,
            })],
            stop(StopReason::ToolUse),
        )
    };
    let big = file_body(64 * 1024);
    let big_splits = every(&big, 4096);
    let unicode = concat!(
        "{\"note\": \"e\u{301} \u{212b} \u{1112}\u{1161}\u{11ab} \u{fb01} \u{ff21} 👨\u{200d}👩 \u{200f}x\u{202e}",
        "\u{2028}\u{2029}\u{feff}\u{fdd0}\u{10ffff}",
        r#" \ud83d\ude00 e\u0301 \u212b \ufeff \u2028", "city": "A\u030arhus"}"#
    );
    let gap = unicode.find(r"\ude00").expect("the pair");
    let deep = {
        let mut d = String::from(r#"{"tree": "#);
        d.push_str(&"[".repeat(200));
        d.push('1');
        d.push_str(&"]".repeat(200));
        d.push('}');
        d
    };
    let cut_tail = |id: &'static str, about: &'static str, aim: TailAim| {
        let mut t = per_call(
            vec![
                text(&["Checking."]),
                call(1, "toolu_01Tl", "lookup_order", &[r#"{"order_id": "#, r#""A-4471"}"#]),
            ],
            Ending::Abandoned { after: 4, end: StreamEnd::Disconnect },
        );
        t.transport.tail = Some(Tail { aim, pick: 3 });
        named(id, FINAL, about, false, t)
    };
    let mut cases = vec![
        named(
            "size/file-body-64k",
            DELTAS,
            "a 64 KiB file body with every escape, in 4 KiB fragments: no buffer limit may cut it",
            false,
            one("write_file", &big, big_splits),
        ),
        named(
            "names/case-and-suffix-pairs",
            KEYING,
            "getWeather, GetWeather and getWeather_v2 in one turn, after text that names getWeather: names are exact strings",
            false,
            per_call(
                vec![
                    text(&["I'll call `getWeather` for both cities."]),
                    call(1, "toolu_01Nc", "getWeather", &[r#"{"city": "Oslo"}"#]),
                    call(2, "toolu_01Nd", "GetWeather", &[r#"{"city": "#, r#""Paris"}"#]),
                    call(3, "toolu_01Ne", "getWeather_v2", &[r#"{"city": "Rome"}"#]),
                ],
                stop(StopReason::ToolUse),
            ),
        ),
        named(
            "names/sixty-four-characters",
            KEYING,
            "a tool name of the full 64 characters the providers allow, with dashes and digits",
            false,
            one("lookup-Order_v2-0123456789-abcdefghijklmnopqrstuvwxyz-ABCDEFGHIJ", r#"{"order_id": "A-1"}"#, vec![]),
        ),
        named(
            "unicode/every-form",
            DELTAS,
            "decomposed and NFC/NFKC-changing characters, joiners, bidi marks, raw U+2028, U+FEFF, noncharacters; a surrogate pair split across fragments",
            false,
            one("annotate", unicode, vec![gap]),
        ),
        named(
            "numbers/past-a-double",
            DELTAS,
            "integers past 2^53 and past 64 bits, a decimal longer than a double keeps, exponent forms, -0.0: kept as written",
            false,
            one(
                "update_inventory",
                r#"{"id": 9007199254740993, "big": 18446744073709551616, "low": -9223372036854775809, "pi": 3.14159265358979323846264338327950288, "e": 1E+2, "f": 1e-7, "z": -0.0, "zero": 0.0}"#,
                vec![30],
            ),
        ),
        named(
            "numbers/nan-is-unparseable",
            FINAL,
            "NaN is no JSON number: the document is unparseable, never read leniently",
            false,
            one("search_orders", r#"{"status": "open", "limit": NaN}"#, vec![20]),
        ),
        named(
            "numbers/leading-zero-is-unparseable",
            FINAL,
            "01 and +1 are no JSON numbers: the document is unparseable",
            false,
            one("search_orders", r#"{"status": "open", "limit": 01, "page": +1}"#, vec![]),
        ),
        named(
            "degenerate/whitespace-only",
            FINAL,
            "arguments of only whitespace are not \"no arguments\": unparseable, never {}",
            false,
            one("get_time", " \n", vec![1]),
        ),
        named(
            "degenerate/all-empty-fragments",
            FINAL,
            "no argument bytes sent as three empty fragments: the arguments are {}",
            false,
            one("get_time", "", vec![0, 0]),
        ),
        named(
            "degenerate/duplicate-key",
            FINAL,
            "a key written twice: the last value wins, as JSON parsers do",
            false,
            one("get_weather", r#"{"city": "Oslo", "units": "metric", "city": "Paris"}"#, vec![17]),
        ),
        named(
            "degenerate/nested-200-deep",
            FINAL,
            "a valid document nested 200 levels deep: parsed, not refused at a parser's default limit",
            false,
            one("annotate", &deep, vec![120]),
        ),
        named(
            "degenerate/array-at-top-level",
            FINAL,
            "a bare array at the top level parses and is dispatched as written",
            false,
            one("annotate", "[1, 2]", vec![2]),
        ),
        named(
            "degenerate/lone-surrogate",
            FINAL,
            "a lone surrogate escape is no Unicode string: unparseable",
            false,
            one("annotate", r#"{"note": "bad \ud800 here"}"#, vec![]),
        ),
        named(
            "indices/sparse-chat",
            KEYING,
            "OpenAI Chat call indices 2 and 5, interleaved: an index is a key, not a position",
            false,
            interleaved(
                vec![
                    call(2, "call_Sp2", "get_weather", &[r#"{"city": "#, r#""Oslo"}"#]),
                    call(5, "call_Sp5", "get_weather", &[r#"{"city": "#, r#""Rome"}"#]),
                ],
                vec![0, 1, 0, 1, 0, 1],
                stop(StopReason::ToolCalls),
            ),
        ),
    ];
    cases.push(cut_tail(
        "stream/cut-before-blank-line",
        "the connection drops after the next event's lines (the stop), before its blank line: it never arrived, the call is abandoned",
        TailAim::BeforeBlankLine,
    ));
    cases.push(cut_tail(
        "stream/cut-inside-data-prefix",
        "the connection drops inside the next event's data: prefix: nothing of it arrived",
        TailAim::InsideDataPrefix,
    ));
    cases
}

/// The dialect events (docs/SPEC.md §8, "Dialect events"): each case's turn carries one in
/// the dialect that reads it (the corpus renders it there only).
fn dialect_event_cases() -> Vec<NamedCase> {
    use toolcert_scenario::{MismatchIn, Unknown, UnknownKind};
    let two_calls = || {
        vec![
            text(&["Checking both orders."]),
            call(1, "call_Io1", "lookup_order", &[r#"{"order_id": "#, r#""A-4471"}"#]),
            call(2, "call_Io2", "lookup_order", &[r#"{"order_id": "#, r#""A-4472"}"#]),
        ]
    };
    let with = |mut t: Turn, f: &dyn Fn(&mut Turn)| {
        f(&mut t);
        t
    };
    let chat_call = || call(0, "call_Ch1", "get_weather", &[r#"{"city": "#, r#""Oslo"}"#]);
    vec![
        named(
            "dialect/item-done-only",
            DELTAS,
            "OpenAI Responses: the second call is announced only by its output_item.done, which carries the whole item: it is a call like the first",
            false,
            with(per_call(two_calls(), stop(StopReason::Completed)), &|t| t.wire.item_done_only = vec![1]),
        ),
        named(
            "dialect/item-done-contradicts-deltas",
            DELTAS,
            "OpenAI Responses: function_call_arguments.done repeats the deltas, but output_item.done's item says other arguments: the turn fails as done_mismatch",
            false,
            with(per_call(two_calls(), stop(StopReason::Completed)), &|t| {
                t.faults.push(Fault {
                    kind: FaultKind::DoneMismatch { call: 0, arguments: r#"{"order_id": "A-9999"}"#.into() },
                    at: 0,
                });
                t.wire.mismatch_in = MismatchIn::ItemDone;
            }),
        ),
        named(
            "dialect/spliced-generation",
            DELTAS,
            "Anthropic, OpenAI Responses and Bedrock: after the first call's arguments and the second call's start, a second message_start, response.created or messageStart (a proxy that retried upstream splices another generation in): the turn fails as malformed, nothing of the second call is dispatched",
            false,
            with(per_call(two_calls(), stop(StopReason::ToolUse)), &|t| t.wire.spliced = Some(6)),
        ),
        named(
            "dialect/completed-repeats-calls",
            DELTAS,
            "OpenAI Responses: response.completed repeats both calls in its output: still two calls, each reported once",
            false,
            per_call(two_calls(), stop(StopReason::Completed)),
        ),
        named(
            "dialect/unknown-delta-and-event",
            DELTAS,
            "Anthropic and Bedrock: a citation delta inside the text (citations_delta, delta.citation), a delta type or member added later inside the call and an event type added later: each skipped",
            false,
            with(per_call(two_calls(), stop(StopReason::ToolUse)), &|t| {
                t.wire.unknown = vec![
                    Unknown { kind: UnknownKind::Delta, at: 0 },
                    Unknown { kind: UnknownKind::Delta, at: 3 },
                    Unknown { kind: UnknownKind::Event, at: 5 },
                ]
            }),
        ),
        named(
            "dialect/chat-prelude",
            DELTAS,
            "OpenAI Chat: the prelude chunk some hosts send first (choices: [], prompt_filter_results) carries nothing",
            false,
            with(interleaved(vec![chat_call()], vec![], stop(StopReason::ToolCalls)), &|t| t.wire.chat_prelude = true),
        ),
        named(
            "dialect/usage-without-choices",
            DELTAS,
            "OpenAI Chat: the closing usage chunk has no choices key at all: bookkeeping, not a malformed chunk",
            false,
            with(interleaved(vec![chat_call()], vec![], stop(StopReason::ToolCalls)), &|t| {
                t.wire.usage_without_choices = true
            }),
        ),
        named(
            "dialect/done-without-finish",
            FINAL,
            "OpenAI Chat: the stream stops mid-call with data: [DONE] but no finish_reason: [DONE] is no finish, the call is abandoned",
            false,
            with(
                interleaved(vec![chat_call()], vec![], Ending::Abandoned { after: 2, end: StreamEnd::Eof }),
                &|t| t.wire.done_without_finish = true,
            ),
        ),
        named(
            "dialect/done-alone",
            FINAL,
            "OpenAI Chat: data: [DONE] with nothing before it: an abandoned turn with no call, no text and no protocol error",
            false,
            with(
                interleaved(vec![chat_call()], vec![], Ending::Abandoned { after: 0, end: StreamEnd::Eof }),
                &|t| t.wire.done_without_finish = true,
            ),
        ),
    ]
}

fn protocol_cases() -> Vec<NamedCase> {
    let with_fault = |fault: FaultKind, at: u32| {
        let mut t = per_call(refunded_open(0), stop(StopReason::ToolUse));
        t.faults.push(Fault { kind: fault, at });
        t
    };
    vec![
        named(
            "keying/duplicate-announcement",
            KEYING,
            "a reconnect replays a call's announcement: the turn fails with a protocol error",
            false,
            with_fault(FaultKind::ReplayAnnouncement { call: 0 }, 2),
        ),
        named(
            "keying/unannounced-index",
            KEYING,
            "a fragment for an index never announced: the turn fails, no buffer is made up for it",
            false,
            with_fault(
                FaultKind::UnannouncedFragment {
                    missing_index: false,
                    fragment: r#"{"status": "open"}"#.into(),
                },
                2,
            ),
        ),
        named(
            "deltas/done-differs-from-deltas",
            DELTAS,
            "Responses' done repeats the arguments but says something else than the deltas: the turn fails",
            false,
            with_fault(
                FaultKind::DoneMismatch {
                    call: 1,
                    arguments: r#"{"status": "refunded", "from": "2025-03-01", "to": "2025-03-31"}"#.into(),
                },
                0,
            ),
        ),
        named(
            "keying/fragment-after-stop",
            KEYING,
            "a fragment for a call after its block stop: the turn fails",
            false,
            with_fault(FaultKind::FragmentAfterStop { call: 0, fragment: r#", "limit": 5}"#.into() }, 0),
        ),
    ]
}

fn isolation_cases() -> Vec<NamedCase> {
    let stream = |id: &str, status: &str| {
        per_call(
            vec![
                text(&["Searching."]),
                call(1, id, "search_orders", &[r#"{"status": ""#, status, r#"", "limit": 5}"#]),
            ],
            stop(StopReason::ToolUse),
        )
    };
    let two = |schedule| Case {
        name: String::new(),
        streams: vec![stream("toolu_01Us", "refunded"), stream("toolu_02Them", "open")],
        schedule,
    };
    let mut concurrent = NamedCase {
        id: "keying/two-streams-index-1",
        seed: KEYING,
        about: "two conversations at once both announce index 1: each stream needs its own accumulator",
        needs_schema: false,
        case: two(StreamSchedule::Concurrent(vec![0, 1, 0, 1, 0, 1, 0, 1])),
    };
    concurrent.case.name = format!("named/{}", concurrent.id);
    let mut successive = NamedCase {
        id: "keying/successive-turns",
        seed: KEYING,
        about: "two turns of one agent loop in sequence, both using index 1: nothing carries over",
        needs_schema: false,
        case: two(StreamSchedule::Sequential),
    };
    successive.case.name = format!("named/{}", successive.id);
    vec![concurrent, successive]
}

/// A corpus case whose stream carries a wire defect ([`WireDefect`]): data a decoder must
/// refuse, which no neutral event describes, so it exists as recorded bytes only (the
/// corpus renders it in each dialect in `dialects`; certify never runs it).
#[derive(Clone, Debug)]
pub struct DefectCase {
    /// Stable id within each dialect's corpus directory.
    pub id: &'static str,
    pub seed: &'static str,
    pub about: &'static str,
    pub turn: Turn,
    pub defect: WireDefect,
    /// Only OpenAI Chat can say a nameless new id; data errors exist in every dialect.
    pub chat_only: bool,
}

/// The wire-defect cases.
pub fn defects() -> Vec<DefectCase> {
    let lookup = || per_call(lookup_order_turn(), stop(StopReason::ToolUse));
    vec![
        DefectCase {
            id: "keying/new-id-at-occupied-index",
            seed: KEYING,
            about: "an entry brings a new id to an index that holds a call, without a name: a new id \
                    starts a new call, at an occupied index too (some servers send index 0 for every \
                    call), and the entries after it at that index are its; its name may come late, but \
                    none comes before the finish reason, so the turn fails as malformed",
            turn: per_call(refunded_open(0), stop(StopReason::ToolUse)),
            defect: WireDefect::NamelessNewId,
            chat_only: true,
        },
        DefectCase {
            id: "deltas/data-not-json",
            seed: DELTAS,
            about:
                "after the first argument fragment, an event whose data is `{not json`: the turn fails as \
                    malformed and nothing is dispatched",
            turn: lookup(),
            defect: WireDefect::NotJson,
            chat_only: false,
        },
        DefectCase {
            id: "deltas/fragment-of-wrong-type",
            seed: DELTAS,
            about: "a fragment event whose fragment is the number 42 instead of a string: the turn fails as \
                    malformed, the number is never appended to the buffer",
            turn: lookup(),
            defect: WireDefect::WrongType,
            chat_only: false,
        },
    ]
}

/// The named case with this id.
pub fn by_id(id: &str) -> Option<NamedCase> {
    all().into_iter().find(|c| c.id == id)
}

/// Turns without calls: the text answer a user sees most, and how it ended.
fn no_call_cases() -> Vec<NamedCase> {
    let answer = || text(&["Your order A-4471 ", "shipped on March 3 ", "and should arrive by Friday."]);
    let mut cut_inside = per_call(vec![answer()], Ending::Abandoned { after: 3, end: StreamEnd::Disconnect });
    cut_inside.transport.tail = Some(Tail { aim: TailAim::MidLine, pick: 5 });
    vec![
        named(
            "turn/text-cut-mid-text",
            FINAL,
            "a text-only answer whose connection drops after two of its three deltas: the text so far, \
             and the turn abandoned, never a clean end or a made-up stop reason",
            false,
            per_call(vec![answer()], Ending::Abandoned { after: 2, end: StreamEnd::Disconnect }),
        ),
        named(
            "turn/text-cut-inside-stop",
            FINAL,
            "a whole text answer whose connection drops inside the event carrying its stop: that event \
             never completed, so the turn is abandoned, not ended",
            false,
            cut_inside,
        ),
        named(
            "turn/empty",
            DELTAS,
            "a turn with no block at all: the message opens and closes, no text, no call",
            false,
            per_call(vec![], stop(StopReason::EndTurn)),
        ),
        named(
            "turn/text-max-tokens",
            FINAL,
            "a text-only answer cut by max_tokens: the text as sent, the turn truncated",
            false,
            per_call(vec![answer()], stop(StopReason::MaxTokens)),
        ),
        named(
            "turn/text-errored",
            FINAL,
            "a text-only answer broken off by an error event: the text as sent, the turn errored",
            false,
            per_call(vec![answer()], Ending::Errored { after: 2, message: "Overloaded".into() }),
        ),
    ]
}
