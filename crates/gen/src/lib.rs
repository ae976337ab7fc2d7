//! Generators for toolcert scenarios: the first stage of the data flow.
//!
//! Cases come from three places, all here: proptest strategies ([`case_strategy`],
//! [`turn_strategy`], or the seeded stream [`cases`]), `arbitrary` for fuzz targets
//! ([`ArbitraryCase`]), and the named cases of the seeds ([`named`]). Whatever made a case,
//! [`coverage::classify`] says which adversarial classes it reaches, computed from the case
//! itself; [`CoverageStats`] turns that into the table a run prints.
//!
//! Inside, generation has two halves: sampling draws a small *plan* of choice integers with
//! the biases that make every class common (`plan`), and building renders the plan into a
//! [`Case`](toolcert_scenario::Case) in one pass (`build`, `doc`). Shrinking works on plans,
//! so a failing case shrinks toward one stream, few blocks, short arguments, few fragments,
//! a complete ending and no faults.

mod build;
mod doc;
mod lex;
pub mod named_binary;
mod named_foreign;
mod named_gemini;
mod named_hostile;
mod plan;
mod source;
mod violates;
mod wire;

pub mod arb;
pub mod coverage;
pub mod named;
pub mod strategy;

use proptest::test_runner::{RngAlgorithm, TestRng};
use serde::{Deserialize, Serialize};

pub use arb::{case_from_unstructured, ArbitraryCase};
pub use coverage::{
    classify, classify_with, Coverage, CoverageStats, Label, LabelCount, LabelGroup, LabelSet, ParsedDocs,
    Scope,
};
pub use strategy::{case_strategy, cases, turn_strategy, CaseStrategy, TurnStrategy};

/// Which stream shapes to generate.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ShapeMix {
    /// Anthropic- and Responses-like: blocks one after another, each call closed by its own
    /// terminal event.
    PerCall,
    /// OpenAI Chat-like: pieces of several calls interleave; the finish reason is the only
    /// terminal.
    Interleaved,
    #[default]
    Both,
}

/// What the generators produce.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(default)]
pub struct GenConfig {
    pub shape_mix: ShapeMix,
    /// Schema profile: tools carry JSON Schemas and some calls violate them
    /// (`"priority": "P1"`). Off: `Turn::tools` have no schema.
    pub schema: bool,
    /// Stream faults (replayed announcements, unannounced fragments, fragments after stop).
    pub faults: bool,
    /// Cases of several streams, concurrent or in sequence.
    pub multi_stream: bool,
    /// Most calls in one turn.
    pub max_calls: usize,
    /// Most streams in one case.
    pub max_streams: usize,
    /// Faults where a call's terminal repeats other arguments than its fragments (only
    /// Responses-like streams can carry them).
    pub done_mismatch: bool,
    /// Transport framing and cuts for the bytes level (line ends, chunk cuts, comments,
    /// multi-line data); off: one chunk, LF.
    pub transport: bool,
    /// The most bytes a huge document has (`--args-size`). Huge documents (4 KiB and up)
    /// are in every run; past the default 64 KiB they are also more frequent, up to 1 MiB
    /// and beyond, so that a buffer limit anywhere is found.
    pub max_args_size: usize,
    /// With `transport`, for a binary-framed dialect: some turns send one message with a
    /// wrong checksum or length (`toolcert_scenario::Corrupt`, BYTES-CHECKSUM).
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub corrupt: bool,
    /// For a dialect with a start event, below the events level: some turns have a second
    /// generation spliced in (`WireEvents::spliced`, a `malformed` fault).
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub spliced: bool,
    /// In a hostile profile's setting: hostile values in generated calls (prototype words as
    /// ids, tool names and argument keys; control characters in ids).
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub hostile: bool,
}

/// The default [`GenConfig::max_args_size`]: 64 KiB.
pub const HUGE_DEFAULT_MAX: usize = 64 * 1024;
/// The least a huge document has: 4 KiB.
pub const HUGE_MIN: usize = 4 * 1024;

impl Default for GenConfig {
    fn default() -> Self {
        GenConfig {
            shape_mix: ShapeMix::Both,
            schema: false,
            faults: true,
            multi_stream: true,
            max_calls: 4,
            max_streams: 3,
            done_mismatch: true,
            transport: false,
            max_args_size: HUGE_DEFAULT_MAX,
            corrupt: false,
            spliced: false,
            hostile: false,
        }
    }
}

/// The RNG a run with this seed uses: ChaCha, its 32-byte seed the splitmix64 stream of
/// `seed` (little-endian). Runners use it so that a seed reproduces a run on any machine.
/// The RNG of generated case `k` of `seed`: every case is derived from `(seed, k)` alone, so a
/// shard or a job generates only its own cases and gets the same ones in every run.
pub fn rng_for_case(seed: u64, k: u64) -> TestRng {
    TestRng::from_seed(RngAlgorithm::ChaCha, &seed_bytes(case_seed(seed, k)))
}

pub fn rng_for_seed(seed: u64) -> TestRng {
    TestRng::from_seed(RngAlgorithm::ChaCha, &seed_bytes(seed))
}

/// The seed of [`rng_for_seed`] that [`rng_for_case`]`(seed, k)` is.
fn case_seed(seed: u64, k: u64) -> u64 {
    let mut x = seed;
    build::splitmix64(&mut x) ^ k.wrapping_mul(0x9E37_79B9_7F4A_7C15)
}

/// The 32 ChaCha seed bytes of [`rng_for_seed`]: the splitmix64 stream of `seed`.
fn seed_bytes(seed: u64) -> [u8; 32] {
    let mut x = seed;
    let mut bytes = [0u8; 32];
    for chunk in bytes.chunks_mut(8) {
        chunk.copy_from_slice(&build::splitmix64(&mut x).to_le_bytes());
    }
    bytes
}

/// The generator [`rng_for_case`] wraps, without the wrapper (whose every draw dispatches
/// over its algorithms): the same words in the same order (`TestRng`'s ChaCha is this one,
/// seeded with the same bytes).
pub(crate) fn chacha_for_case(seed: u64, k: u64) -> chacha20::ChaCha20Rng {
    <chacha20::ChaCha20Rng as rand_core::SeedableRng>::from_seed(seed_bytes(case_seed(seed, k)))
}

#[cfg(test)]
mod tests {
    use proptest::prelude::Rng;

    /// The generator drawn from straight gives the words the wrapper gives, whichever way
    /// they are drawn (words, bytes, across block ends).
    #[test]
    fn the_bare_chacha_draws_as_the_test_rng() {
        for (seed, k) in [(0, 0), (1, 7), (12345, 99), (u64::MAX, u64::MAX)] {
            let mut wrapped = super::rng_for_case(seed, k);
            let mut bare = super::chacha_for_case(seed, k);
            for step in 0..2000usize {
                match step % 5 {
                    0 | 1 | 3 => assert_eq!(wrapped.next_u64(), bare.next_u64(), "{seed} {k} {step}"),
                    2 => assert_eq!(wrapped.next_u32(), bare.next_u32(), "{seed} {k} {step}"),
                    _ => {
                        let (mut a, mut b) = ([0u8; 23], [0u8; 23]);
                        let n = step % 23;
                        wrapped.fill_bytes(&mut a[..n]);
                        bare.fill_bytes(&mut b[..n]);
                        assert_eq!(a, b, "{seed} {k} {step}");
                    }
                }
            }
        }
    }
}
