//! The harness itself: checked cases per second on one core, as `toolcert certify --jobs 1`
//! checks them: generated case k of the seed (from `(seed, k)` alone), rendered, run through
//! the reference and judged, with the delivered-whole re-run on one case in four, then
//! classified for the coverage report (reading what the check rendered and parsed).
//! Named `harness/{what}/{level}/reference`.
//!
//! Uses mimalloc, as the `toolcert` binary does.

use criterion::{criterion_group, criterion_main, Criterion, Throughput};
use toolcert::gen::strategy::generated_case;
use toolcert::gen::{case_strategy, CoverageStats};
use toolcert::reference::ReferenceSubject;
use toolcert::runner::{Certification, Setting};
use toolcert::subject::Level;

#[global_allocator]
static GLOBAL: mimalloc::MiMalloc = mimalloc::MiMalloc;

const BATCH: u64 = 1000;

fn cases_per_second(c: &mut Criterion) {
    let mut group = c.benchmark_group("harness");
    group.throughput(Throughput::Elements(BATCH));
    for (name, level) in [("events", Level::Events), ("wire", Level::Wire), ("bytes", Level::Bytes)] {
        let run = Certification { level, ..Certification::default() };
        let strategy = case_strategy(&run.gen_config());
        let setting = run.setting();
        group.bench_function(format!("certify/{name}/reference"), |b| {
            let mut k = 0u64;
            let mut coverage = CoverageStats::new();
            b.iter(|| {
                for _ in 0..BATCH {
                    let case = generated_case(&strategy, 1, k, format!("gen/1/{k}"));
                    let setting = Setting { chunking: k.is_multiple_of(4), ..setting };
                    k += 1;
                    // Classified as certify classifies: reading what the check rendered and parsed.
                    let (checked, classified) =
                        toolcert::runner::check_classified(&ReferenceSubject, &case, setting);
                    coverage.add(&classified);
                    // A benchmark is also a correctness check.
                    assert!(checked.violations.is_empty(), "{:?}", checked.violations);
                }
            })
        });
        if level != Level::Events {
            continue;
        }
        group.bench_function(format!("generate/{name}/gen"), |b| {
            let mut k = 0u64;
            b.iter(|| {
                for _ in 0..BATCH {
                    std::hint::black_box(generated_case(&strategy, 1, k, String::new()));
                    k += 1;
                }
            })
        });
        let cases: Vec<_> = (0..BATCH).map(|k| generated_case(&strategy, 2, k, String::new())).collect();
        group.bench_function(format!("classify/{name}/coverage"), |b| {
            let mut coverage = CoverageStats::new();
            b.iter(|| {
                for case in &cases {
                    std::hint::black_box(coverage.record(case));
                }
            })
        });
        group.bench_function(format!("check/{name}/reference"), |b| {
            b.iter(|| {
                for case in &cases {
                    let setting = Setting { chunking: false, ..setting };
                    let checked = toolcert::runner::check(&ReferenceSubject, case, setting);
                    assert!(checked.violations.is_empty());
                }
            })
        });
    }
    group.finish();
}

criterion_group! {
    name = benches;
    config = Criterion::default().sample_size(10).measurement_time(std::time::Duration::from_secs(5));
    targets = cases_per_second
}
criterion_main!(benches);
