//! `arbitrary` support for fuzz targets.
//!
//! The fuzzer's bytes drive the same sampling and building as the proptest strategies, so a
//! fuzz target sees the same biased cases; every input builds a renderable case, and a short
//! or exhausted input builds the simplest one (every choice reads as 0).

use arbitrary::{Arbitrary, Unstructured};
use toolcert_scenario::Case;

use crate::build::build_case;
use crate::plan::CasePlan;
use crate::source::UnstructuredSource;
use crate::GenConfig;

/// A generated case, for `fuzz_target!(|case: ArbitraryCase| ...)`.
#[derive(Clone, Debug, PartialEq)]
pub struct ArbitraryCase(pub Case);

impl<'a> Arbitrary<'a> for ArbitraryCase {
    fn arbitrary(u: &mut Unstructured<'a>) -> arbitrary::Result<Self> {
        case_from_unstructured(u, &GenConfig::default()).map(ArbitraryCase)
    }
}

/// A case drawn from fuzzer bytes under a configuration. Never fails: exhausted input reads
/// as zeros.
pub fn case_from_unstructured(u: &mut Unstructured<'_>, cfg: &GenConfig) -> arbitrary::Result<Case> {
    let plan = CasePlan::sample(&mut UnstructuredSource(u), cfg);
    Ok(build_case(&plan, cfg, "arbitrary".to_owned()))
}
