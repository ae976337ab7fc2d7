//! Named cases of binary framing (docs/SPEC.md, BYTES-CHECKSUM): one turn with two calls,
//! of which one event stream message arrives damaged, in each way a message can be. They
//! exist only where a stream has checksums (Bedrock's event stream); the corpus renders them
//! in the binary-framed dialects alone.

use toolcert_scenario::{Corrupt, CorruptWhat, Ending, StopReason};

use crate::named::{call, named, per_call, text, NamedCase};

const DELTAS: &str = "002 Argument deltas and text deltas";

/// Every damaged-message case.
pub fn cases() -> Vec<NamedCase> {
    let cases = [
        (
            "framing/prelude-crc",
            CorruptWhat::PreludeCrc,
            "the prelude CRC of the second call's first fragment is wrong: the first call finished before it, nothing after it counts",
        ),
        (
            "framing/message-crc",
            CorruptWhat::MessageCrc,
            "the message CRC of the second call's first fragment is wrong while its payload reads as good JSON: only the checksum tells",
        ),
        (
            "framing/payload-byte",
            CorruptWhat::Payload,
            "one byte of the padding in the second call's first fragment changed on the way: the payload still parses, the message CRC does not match",
        ),
        (
            "framing/total-length",
            CorruptWhat::Length,
            "the second call's first fragment says it is one byte shorter than it is (its prelude CRC recomputed): the message CRC is read from the wrong place",
        ),
    ];
    cases
        .into_iter()
        .map(|(id, what, about)| {
            let mut turn = per_call(
                vec![
                    text(&["Looking both up."]),
                    call(1, "tooluse_kK1bH0sQ2Uu5", "lookup_order", &[r#"{"order_id": "#, r#""A-4471"}"#]),
                    call(2, "tooluse_pQ7rT3vW9xYz", "lookup_order", &[r#"{"order_id": "#, r#""B-1180"}"#]),
                ],
                Ending::Stop(StopReason::ToolUse),
            );
            // Neutral events: text, start, 2 fragments, stop of the first call (5), then the
            // second call's start (6): the damaged message is its first fragment (7).
            turn.transport.corrupt = Some(Corrupt { after: 6, what });
            named(id, DELTAS, about, false, turn)
        })
        .collect()
}
