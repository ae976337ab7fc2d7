//! Benchmarking an accumulator on the standard workloads, and certifying what it costs:
//! re-exported from `toolcert-cost` ([`toolcert_cost::workload`] holds the criterion
//! workloads and the naive peers, [`cost`] the `toolcert bench` cost certification).

pub use toolcert_cost::workload::*;
/// The cost certification (`toolcert bench`).
pub mod cost {
    pub use toolcert_cost::measure::*;
    pub use toolcert_cost::memory;
    pub use toolcert_cost::{
        bounded_plan, bounded_suite, default_floor, render_text, suite, CostWorkload, Planned,
        BOUNDED_SUITE_VERSION, SUITE_VERSION,
    };
}
