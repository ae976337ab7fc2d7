//! A streamed run's memory does not grow with its passing cases: the report keeps counts,
//! findings and the named, failing and skipped records, not a record per case. Measured in
//! bytes left allocated by the run (a counting allocator), not in time, so it cannot flake
//! on a busy machine; the run that keeps every record shows the measure sees per-case growth.

use std::alloc::{GlobalAlloc, Layout, System};
use std::sync::atomic::{AtomicIsize, Ordering};

use toolcert::runner::{Certification, Discard, Report};

struct Counting;

static LIVE: AtomicIsize = AtomicIsize::new(0);

unsafe impl GlobalAlloc for Counting {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        LIVE.fetch_add(layout.size() as isize, Ordering::Relaxed);
        unsafe { System.alloc(layout) }
    }
    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        LIVE.fetch_sub(layout.size() as isize, Ordering::Relaxed);
        unsafe { System.dealloc(ptr, layout) }
    }
}

#[global_allocator]
static GLOBAL: Counting = Counting;

/// Bytes still allocated once the run is over, held by its report.
fn retained(cases: usize, streamed: bool) -> (isize, Report) {
    let run = Certification { cases, seed: 5, ..Certification::default() };
    let subject = toolcert::reference::ReferenceSubject;
    let before = LIVE.load(Ordering::Relaxed);
    let report = if streamed {
        run.run_streamed(&subject, None, &mut |_, _| {}, &mut Discard)
    } else {
        run.run(&subject)
    };
    (LIVE.load(Ordering::Relaxed) - before, report)
}

#[test]
fn per_case_memory_does_not_grow() {
    // Warm the caches a run fills once (compiled schemas, the named cases).
    drop(retained(50, true));
    let (small, r1) = retained(500, true);
    let (large, r2) = retained(2500, true);
    assert!(r1.conforms && r2.conforms && r2.generated_cases == 2500);
    assert_eq!(r1.records.len(), r2.records.len(), "only the named cases' records are kept");
    let growth = large - small;
    // 2,000 more cases: less than 8 bytes each (coverage and counters are fixed-size).
    assert!(growth < 16 * 1024, "{growth} more bytes retained for 2000 more cases");
    drop((r1, r2));
    // The same measure sees a record per case when the run keeps them.
    let (small, r1) = retained(500, false);
    let (large, r2) = retained(2500, false);
    assert!(large - small > 2000 * 64, "{} bytes for 2000 kept records", large - small);
    drop((r1, r2));
}
