//! The reference accumulator against the floor and the naive peers, on the standard
//! workloads (`toolcert::bench`): one call whose argument document is about 28 B, 610 B,
//! 64 KiB or 1 MiB, in 1-, 13- and 64-byte fragments, one turn ending `tool_use`; the wire
//! and bytes levels speak Anthropic. Named `{group}/{case}/{impl}`:
//! `accumulate/610B-13/reference-events`. Every iteration checks its result, so a benchmark
//! is also a correctness check (and each impl is compared with the document's strict parse
//! once before timing). Results and how to read them: `docs/PERFORMANCE.md`.
//!
//! Uses mimalloc, as the `toolcert` binary does.

use std::time::Duration;

use criterion::{criterion_group, criterion_main, BenchmarkId, Criterion, Throughput};
use toolcert::bench::{workloads, Impl};

#[global_allocator]
static GLOBAL: mimalloc::MiMalloc = mimalloc::MiMalloc;

/// Bytes parsed or copied in one iteration above which a quadratic peer is skipped: the
/// naive peers at 64 KiB in 1-byte fragments (2 GiB) and at 1 MiB (8 GiB and more) would
/// take seconds to minutes per iteration.
const PEER_BUDGET: u128 = 256 << 20;

fn accumulate(c: &mut Criterion) {
    let mut group = c.benchmark_group("accumulate");
    for w in workloads() {
        group.throughput(Throughput::Bytes(w.document.len() as u64));
        group.sample_size(if w.document.len() >= 64 << 10 { 10 } else { 40 });
        for imp in Impl::ALL {
            if imp.work(&w) > PEER_BUDGET {
                eprintln!(
                    "skipping accumulate/{}/{}: quadratic, {} MiB of work",
                    w.name(),
                    imp.name(),
                    imp.work(&w) >> 20
                );
                continue;
            }
            let prepared = imp.prepare(&w);
            prepared.run_full().unwrap_or_else(|e| panic!("{}: {e}", imp.name()));
            group.bench_function(BenchmarkId::new(w.name(), imp.name()), |b| {
                b.iter(|| prepared.run().unwrap_or_else(|e| panic!("{}: {e}", imp.name())))
            });
        }
    }
    group.finish();
}

criterion_group! {
    name = benches;
    config = Criterion::default().warm_up_time(Duration::from_secs(1)).measurement_time(Duration::from_secs(3));
    targets = accumulate
}
criterion_main!(benches);
