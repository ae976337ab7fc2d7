//! The reference accumulator at every level against the oracle: the first byte picks the
//! level, dialect and profile, the rest is a generator plan (or a value-form case). Any
//! violation or panic is a crash. See `toolcert::fuzzing::reference`.
#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| toolcert::fuzzing::reference(data));
