//! Helpers for fuzzing an accumulator with cargo-fuzz (being written).
