//! The SSE decoder's chunk invariance: arbitrary bytes in arbitrary chunks give the events
//! and the error of decoding them whole. See `toolcert::fuzzing::sse_chunks`.
#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| toolcert::fuzzing::sse_chunks(data));
