//! What the dialect events of the SSE dialects share: inserting an event that completes no
//! neutral event into a rendered wire stream. Each dialect adds its own ([`WireEvents`](
//! toolcert_scenario::WireEvents)): Anthropic's units of unknown types (`anthropic/unknown.rs`),
//! OpenAI Chat's prelude chunk, usage chunk without `choices` and `[DONE]` after a stream
//! without a finish reason (`chat/extra.rs`); Responses' `output_item.done`-only calls and
//! one-sided mismatches change how a call is sent, so `responses.rs` renders them.

use toolcert_sse::SseEvent;

use crate::SseStream as WireStream;

/// Inserts `event` at `at`; it carries the count of the event before it.
pub(crate) fn insert(wire: &mut WireStream, at: usize, event: SseEvent) {
    let upto = at.checked_sub(1).and_then(|w| wire.upto.get(w)).copied().unwrap_or(0);
    wire.events.insert(at, event);
    wire.upto.insert(at, upto);
}
