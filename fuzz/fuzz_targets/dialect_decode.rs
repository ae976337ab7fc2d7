//! The dialect decoders over arbitrary SSE events: `Malformed` errors (or the `done_mismatch` a
//! Responses decoder sees itself) with a message, never a panic. See `toolcert::fuzzing::dialect_decode`.
#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| toolcert::fuzzing::dialect_decode(data));
