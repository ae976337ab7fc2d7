//! Where generation draws its choices from.
//!
//! The same sampling code builds plans for proptest (drawing from the runner's [`TestRng`])
//! and for fuzz targets (drawing from `arbitrary::Unstructured`). Every draw is a small
//! integer whose value 0 is the simplest, most common choice, so an exhausted fuzz input
//! yields the simplest case rather than an error.

use arbitrary::Unstructured;
use proptest::prelude::Rng;

use crate::plan::Inline;

pub(crate) trait Source {
    /// A value in `0..n` (`n >= 1`); 0 when the source is exhausted.
    fn below(&mut self, n: u32) -> u32;

    /// A byte, uniform.
    fn byte(&mut self) -> u8 {
        self.below(256) as u8
    }

    /// An index into `weights`, with probability proportional to its weight. Index 0 is the
    /// exhausted-source answer, so put the simplest choice first.
    fn weighted(&mut self, weights: &[u32]) -> usize {
        let total: u32 = weights.iter().sum();
        let mut r = self.below(total.max(1));
        for (i, &w) in weights.iter().enumerate() {
            if r < w {
                return i;
            }
            r -= w;
        }
        0
    }

    /// True with probability `percent`%; false when exhausted.
    fn chance(&mut self, percent: u32) -> bool {
        self.below(100) >= 100 - percent.min(100)
    }

    /// Fills `buf` with uniform bytes.
    fn fill(&mut self, buf: &mut [u8]) {
        for b in buf {
            *b = self.byte();
        }
    }

    /// `n` uniform bytes (at most `N`).
    fn inline_bytes<const N: usize>(&mut self, n: usize) -> Inline<u8, N> {
        let mut buf = [0u8; N];
        let n = n.min(N);
        self.fill(&mut buf[..n]);
        Inline::from_prefix(buf, n)
    }
}

/// Draws from an RNG: a proptest runner's [`TestRng`](proptest::test_runner::TestRng), or the
/// ChaCha generator it wraps, straight (the fast path: no allocation per draw, one RNG call
/// per two draws, and no dispatch over the wrapper's algorithms; both give the same words).
pub(crate) struct RngSource<'a, R: Rng + ?Sized> {
    rng: &'a mut R,
    spare: Option<u32>,
}

impl<'a, R: Rng + ?Sized> RngSource<'a, R> {
    pub fn new(rng: &'a mut R) -> Self {
        RngSource { rng, spare: None }
    }
}

impl<R: Rng + ?Sized> Source for RngSource<'_, R> {
    #[inline]
    fn below(&mut self, n: u32) -> u32 {
        let r = match self.spare.take() {
            Some(r) => r,
            None => {
                let w = self.rng.next_u64();
                self.spare = Some((w >> 32) as u32);
                w as u32
            }
        };
        // Lemire's multiply-shift: unbiased enough for test generation, and branch-free.
        ((u64::from(r) * u64::from(n)) >> 32) as u32
    }

    fn fill(&mut self, buf: &mut [u8]) {
        self.rng.fill_bytes(buf);
    }
}

/// Draws from fuzzer bytes.
pub(crate) struct UnstructuredSource<'a, 'b>(pub &'a mut Unstructured<'b>);

impl Source for UnstructuredSource<'_, '_> {
    fn below(&mut self, n: u32) -> u32 {
        if n <= 1 {
            return 0;
        }
        self.0.int_in_range(0..=n - 1).unwrap_or(0)
    }
}
