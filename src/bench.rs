//! Helpers for benchmarking an accumulator on the standard workloads (being written).
