//! Named cases with foreign blocks (docs/SPEC.md §8, "Foreign blocks"): each kind in a turn
//! with text and a client call beside it, so that a subject that ignores the foreign block
//! conforms and one that dispatches it, shows it or parses it is caught (ACC-FOREIGN). Each
//! is written in the shape of the dialects that have its kinds; the corpus renders it in
//! each of them.

use toolcert_scenario::{Block, Ending, ForeignBlock, ForeignKind, StopReason};

use crate::named::{call, interleaved, named, per_call, text, NamedCase};

const DELTAS: &str = "002 Argument deltas and text deltas";

/// A foreign block sent as exactly these deltas (or, for a kind that does not stream, whole).
fn foreign(kind: ForeignKind, index: u32, id: &str, name: &str, deltas: &[&str]) -> Block {
    let Block::Call(c) = call(index, id, name, deltas) else { unreachable!() };
    let splits = if kind.streams() { c.splits } else { Vec::new() };
    Block::Foreign(ForeignBlock { kind, index, id: c.call_id, name: c.name, text: c.arguments, splits })
}

fn lookup(index: u32, id: &str) -> Block {
    call(index, id, "lookup_order", &[r#"{"order_id": "#, r#""A-4471"}"#])
}

pub(crate) fn cases() -> Vec<NamedCase> {
    let stop = Ending::Stop;
    vec![
        named(
            "foreign/thinking-then-call",
            DELTAS,
            "the model thinks first (a thinking block, a Responses reasoning summary), some of it shaped like JSON: none of it is text or a call",
            false,
            per_call(
                vec![
                    foreign(
                        ForeignKind::Thinking,
                        0,
                        "",
                        "",
                        &["The user wants A-4471; ", r#"{"plan": ["look up"]}"#, " then answer."],
                    ),
                    text(&["Checking the order."]),
                    lookup(2, "toolu_01Th"),
                ],
                stop(StopReason::ToolUse),
            ),
        ),
        named(
            "foreign/redacted-thinking",
            DELTAS,
            "encrypted reasoning (redacted_thinking, a reasoning item's encrypted_content) before a call: opaque, never text",
            false,
            per_call(
                vec![
                    foreign(ForeignKind::RedactedThinking, 0, "", "", &["EmwKAhgBEgy3va3pzix/LafPsn4aDFIT2Xlxh0L5"]),
                    lookup(1, "toolu_01Rd"),
                ],
                stop(StopReason::ToolUse),
            ),
        ),
        named(
            "foreign/server-tool-use-and-result",
            DELTAS,
            "Anthropic runs web_search itself: its server_tool_use streams input_json_delta like a call, then its result; only the client's call after them is dispatched",
            false,
            per_call(
                vec![
                    text(&["Let me search first."]),
                    foreign(
                        ForeignKind::ServerToolUse,
                        1,
                        "srvtoolu_01Ws",
                        "web_search",
                        &[r#"{"query": "A-4471 "#, r#"refund policy"}"#],
                    ),
                    foreign(ForeignKind::ServerToolResult, 2, "srvtoolu_01Ws", "", &["Refund policy | Help Center"]),
                    text(&["Found it; now the order."]),
                    lookup(4, "toolu_01Sv"),
                ],
                stop(StopReason::ToolUse),
            ),
        ),
        named(
            "foreign/web-search-call",
            DELTAS,
            "a Responses web_search_call item the server runs, then text: nothing to dispatch",
            false,
            per_call(
                vec![
                    foreign(ForeignKind::WebSearchCall, 0, "ws_01Wq", "", &["latest refund policy for order A-4471"]),
                    text(&["The policy allows refunds within 30 days."]),
                ],
                stop(StopReason::Completed),
            ),
        ),
        named(
            "foreign/custom-tool-call",
            DELTAS,
            "a Responses custom tool call whose freeform input (a patch) streams in pieces, beside a function call: the input is never parsed as JSON",
            false,
            per_call(
                vec![
                    foreign(
                        ForeignKind::CustomToolCall,
                        0,
                        "call_ctPatch01",
                        "apply_patch",
                        &["*** Begin Patch\n*** Update File: src/main.rs\n", "@@\n-fn main() {}\n+fn main() { run(); }\n", "*** End Patch"],
                    ),
                    lookup(1, "call_01Fn"),
                ],
                stop(StopReason::Completed),
            ),
        ),
        named(
            "foreign/custom-tool-call-json-shaped",
            DELTAS,
            "a custom tool call whose freeform input happens to be JSON: still not a function call's arguments",
            false,
            per_call(
                vec![foreign(
                    ForeignKind::CustomToolCall,
                    0,
                    "call_ctJson01",
                    "run_query",
                    &[r#"{"looks": "like "#, r#"json"}"#],
                )],
                stop(StopReason::Completed),
            ),
        ),
        named(
            "foreign/refusal",
            DELTAS,
            "the model refuses (a Responses refusal part): the refusal is not the answer's text",
            false,
            per_call(
                vec![foreign(ForeignKind::Refusal, 0, "", "", &["I can't help ", "with that request."])],
                stop(StopReason::Completed),
            ),
        ),
        named(
            "foreign/chat-reasoning-then-call",
            DELTAS,
            "an OpenAI-compatible server streams reasoning_content before the tool call: neither text nor arguments",
            false,
            interleaved(
                vec![
                    foreign(ForeignKind::Thinking, 0, "", "", &["Need the order; ", r#"{"order_id": "A-4471"}"#, " looks right."]),
                    lookup(0, "call_01Rc"),
                ],
                vec![],
                stop(StopReason::ToolCalls),
            ),
        ),
        named(
            "foreign/chat-refusal-and-reasoning",
            DELTAS,
            "OpenAI Chat: reasoning (as delta.reasoning) interleaved with a refusal and text: only the text is shown",
            false,
            interleaved(
                vec![
                    foreign(ForeignKind::Thinking, 0, "", "reasoning", &["This asks for ", "something unsafe."]),
                    foreign(ForeignKind::Refusal, 0, "", "", &["I can't help ", "with that."]),
                    text(&["Is there something else?"]),
                ],
                vec![0, 1, 0, 1, 2],
                stop(StopReason::Stop),
            ),
        ),
    ]
}
