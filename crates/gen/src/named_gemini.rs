//! Named cases of Gemini's streamed function-call arguments (docs/SPEC.md "Gemini: arguments
//! by JSON path"): each terminator form, a keep-alive, a call without arguments, bracketed
//! paths and hostile keys, a surrogate pair split across pieces, a same-tool pair, a cut
//! mid-string.
//!
//! Where it sits: beside `named.rs`, whose list it joins. Each case asks for its calls'
//! terminators (`WireEvents::gemini_ends`), a dialect event only Gemini reads, so these cases
//! run (and are written to the corpus) in the Gemini settings alone; Gemini's lowering writes
//! their documents as its pieces write them back.

use toolcert_scenario::{Ending, GeminiEnd, StopReason, StreamEnd, Turn};

use crate::named::{call, named, per_call, text, NamedCase};

const FINAL: &str = "003 Finalising a streamed tool call";
const DELTAS: &str = "002 Argument deltas and text deltas";
const KEYING: &str = "000 Keying the argument accumulator";

fn ends(mut t: Turn, e: &[GeminiEnd]) -> Turn {
    t.wire.gemini_ends = e.to_vec();
    t
}

fn weather() -> Vec<toolcert_scenario::Block> {
    vec![
        text(&["Checking the forecast."]),
        call(1, "call_gw1", "get_weather", &["{\"location\":\"Bos", "ton\"", ",\"days\":3}"]),
    ]
}

pub(crate) fn cases() -> Vec<NamedCase> {
    use GeminiEnd::*;
    let tool_use = Ending::Stop(StopReason::ToolUse);
    vec![
        named(
            "gemini/end-empty-function-call",
            FINAL,
            "Vertex: a call ended by an empty {\"functionCall\":{}} after its last piece",
            false,
            ends(per_call(weather(), tool_use.clone()), &[Empty]),
        ),
        named(
            "gemini/end-last-piece",
            FINAL,
            "Vertex: a call ended by its last piece, which has no willContinue at either level (clients that wait for willContinue: false never form it)",
            false,
            ends(per_call(weather(), tool_use.clone()), &[LastPiece]),
        ),
        named(
            "gemini/end-of-candidate",
            FINAL,
            "Vertex: a call ended by the candidate's finishReason, with no terminator of its own",
            false,
            ends(per_call(weather(), tool_use.clone()), &[Finish]),
        ),
        named(
            "gemini/keep-alives",
            DELTAS,
            "Vertex: bare {\"functionCall\":{\"willContinue\":true}} keep-alives between a call's pieces add nothing and end nothing",
            false,
            Turn { pings: vec![3, 4, 5], ..ends(per_call(weather(), tool_use.clone()), &[Empty]) },
        ),
        named(
            "gemini/no-argument-call",
            FINAL,
            "a call without arguments is one {\"functionCall\":{\"name\":...}} carrying the turn's thoughtSignature, dispatched as {} (clients have dropped it, and its signature, or taken the next call's first piece for one)",
            false,
            ends(
                per_call(
                    vec![
                        call(0, "call_0", "read_theme", &[]),
                        call(1, "call_rt2", "set_theme", &["{\"theme\":\"da", "rk\"}"]),
                    ],
                    tool_use.clone(),
                ),
                &[Empty, LastPiece],
            ),
        ),
        named(
            "gemini/bracketed-paths",
            KEYING,
            "keys with dots, quotes and brackets ($['a.b'], $['it\\'s [x]']), __proto__ and constructor, and array elements ($.items[1].n): built by path, never split on `.`",
            false,
            ends(
                per_call(
                    vec![call(
                        0,
                        "call_bp1",
                        "configure",
                        &[
                            "{\"a.b\":{\"it's [x]\":\"v",
                            "al\"},\"__proto__\":{\"constructor\":true",
                            "},\"items\":[{\"n\":1},{\"n\":\"two\"}],\"deep\":{\"x\":{\"y\":[[null]]}}}",
                        ],
                    )],
                    tool_use.clone(),
                ),
                &[Empty],
            ),
        ),
        named(
            "gemini/surrogate-pair-split",
            DELTAS,
            "a string piece ends between the two escapes of a surrogate pair: only the joined string is one character",
            false,
            ends(
                per_call(
                    vec![call(0, "call_sp1", "send_message", &["{\"text\":\"hi \\ud83d", "\\ude00 there\"}"])],
                    tool_use.clone(),
                ),
                &[LastPiece],
            ),
        ),
        named(
            "gemini/same-tool-pair",
            KEYING,
            "two calls to one tool, one after the other: keyed by name they collapse into one",
            false,
            ends(
                per_call(
                    vec![
                        call(0, "call_st1", "search_orders", &["{\"status\":\"refu", "nded\"}"]),
                        call(1, "call_st2", "search_orders", &["{\"status\":\"op", "en\"}"]),
                    ],
                    tool_use.clone(),
                ),
                &[Empty, Finish],
            ),
        ),
        named(
            "gemini/cut-mid-string",
            FINAL,
            "the stream drops while a string's pieces are still coming: the call is abandoned, never dispatched",
            false,
            ends(
                per_call(weather(), Ending::Abandoned { after: 3, end: StreamEnd::Disconnect }),
                &[Empty],
            ),
        ),
        named(
            "gemini/max-tokens-mid-call",
            FINAL,
            "MAX_TOKENS ends the candidate while the call is live: the turn is truncated and nothing is dispatched",
            false,
            ends(per_call(weather(), Ending::Stop(StopReason::MaxTokens)), &[Finish]),
        ),
    ]
}
