//! The harness itself: generated cases per second, generate + render + run + check against
//! the reference, on one core. Named `{group}/{case}/{impl}`.
//!
//! Uses mimalloc, as the `toolcert` binary does.

use criterion::{criterion_group, criterion_main, BatchSize, Criterion, Throughput};
use proptest::strategy::{Strategy, ValueTree};
use proptest::test_runner::TestRunner;
use toolcert::gen::{case_strategy, rng_for_seed, GenConfig};
use toolcert::oracle::Profile;
use toolcert::reference::ReferenceSubject;
use toolcert::runner::Setting;

#[global_allocator]
static GLOBAL: mimalloc::MiMalloc = mimalloc::MiMalloc;

const BATCH: u64 = 1000;

fn cases_per_second(c: &mut Criterion) {
    let mut group = c.benchmark_group("harness");
    group.throughput(Throughput::Elements(BATCH));
    for (name, schema) in [("default", true), ("no-schema", false)] {
        let cfg = GenConfig { schema, ..GenConfig::default() };
        let strategy = case_strategy(&cfg);
        let profile = Profile { schema };
        let mut runner = TestRunner::new_with_rng(Default::default(), rng_for_seed(1));
        group.bench_function(format!("generate+check/{name}/reference"), |b| {
            let mut k = 0usize;
            b.iter(|| {
                for _ in 0..BATCH {
                    let case = strategy.new_tree(&mut runner).expect("a case").current();
                    // As `certify` does: the delivered-whole re-run on one case in four.
                    let setting = Setting { chunking: k.is_multiple_of(4), ..Setting::events(profile) };
                    k += 1;
                    let checked = toolcert::runner::check(&ReferenceSubject, &case, setting);
                    // A benchmark is also a correctness check.
                    assert!(checked.violations.is_empty(), "{:?}", checked.violations);
                }
            })
        });
        let mut runner = TestRunner::new_with_rng(Default::default(), rng_for_seed(1));
        group.bench_function(format!("generate/{name}/gen"), |b| {
            b.iter(|| {
                for _ in 0..BATCH {
                    std::hint::black_box(strategy.new_tree(&mut runner).expect("a case").current());
                }
            })
        });
        let mut runner = TestRunner::new_with_rng(Default::default(), rng_for_seed(2));
        let cases: Vec<_> =
            (0..BATCH).map(|_| strategy.new_tree(&mut runner).expect("a case").current()).collect();
        group.bench_function(format!("check/{name}/reference"), |b| {
            b.iter_batched(
                || (),
                |_| {
                    for case in &cases {
                        let setting = Setting { chunking: false, ..Setting::events(profile) };
                        let checked = toolcert::runner::check(&ReferenceSubject, case, setting);
                        assert!(checked.violations.is_empty());
                    }
                },
                BatchSize::SmallInput,
            )
        });
    }
    group.finish();
}

criterion_group! {
    name = benches;
    config = Criterion::default().sample_size(20).measurement_time(std::time::Duration::from_secs(4));
    targets = cases_per_second
}
criterion_main!(benches);
