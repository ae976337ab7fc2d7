//! How much heap a run holds at its peak: a counting global allocator.
//!
//! Where it sits: beside [`crate::measure`], which reads the peak around each in-process run
//! of the bounded suite (a subprocess is measured by its own adapter). The `toolcert` binary
//! installs [`Counting`] around mimalloc as its global allocator; a program that does not gets `None` from
//! [`Peak::bytes`], and the report says memory was not measured.
//!
//! Each allocation counts its requested size plus [`OVERHEAD`]: what a general-purpose
//! malloc spends on a chunk's header and alignment, so a million one-byte strings weigh what
//! they do in a real heap and not a megabyte.

use std::alloc::{GlobalAlloc, Layout};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering::Relaxed};

/// Bytes counted per allocation beyond its size (glibc's chunk header and 16-byte rounding).
pub const OVERHEAD: u64 = 16;

static LIVE: AtomicU64 = AtomicU64::new(0);
static PEAK: AtomicU64 = AtomicU64::new(0);
static INSTALLED: AtomicBool = AtomicBool::new(false);

/// An allocator (the system's, mimalloc), counting what is live and its peak:
/// `#[global_allocator] static A: Counting<System> = Counting(System);`.
pub struct Counting<A>(pub A);

fn weight(size: usize) -> u64 {
    size as u64 + OVERHEAD
}

fn grew(by: u64) {
    let now = LIVE.fetch_add(by, Relaxed) + by;
    PEAK.fetch_max(now, Relaxed);
}

// SAFETY: every method forwards to the inner allocator with the same arguments and returns
// its result unchanged; the counters are only atomics beside it.
unsafe impl<A: GlobalAlloc> GlobalAlloc for Counting<A> {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        let p = unsafe { self.0.alloc(layout) };
        if !p.is_null() {
            INSTALLED.store(true, Relaxed);
            grew(weight(layout.size()));
        }
        p
    }

    unsafe fn alloc_zeroed(&self, layout: Layout) -> *mut u8 {
        let p = unsafe { self.0.alloc_zeroed(layout) };
        if !p.is_null() {
            INSTALLED.store(true, Relaxed);
            grew(weight(layout.size()));
        }
        p
    }

    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        unsafe { self.0.dealloc(ptr, layout) };
        LIVE.fetch_sub(weight(layout.size()), Relaxed);
    }

    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        let p = unsafe { self.0.realloc(ptr, layout, new_size) };
        if !p.is_null() {
            // A move holds both blocks for a moment; the peak counts the larger one only, as
            // an in-place growth would.
            if new_size >= layout.size() {
                grew((new_size - layout.size()) as u64);
            } else {
                LIVE.fetch_sub((layout.size() - new_size) as u64, Relaxed);
            }
        }
        p
    }
}

/// A peak measurement: started by [`Peak::start`], read by [`Peak::bytes`].
pub struct Peak {
    base: u64,
}

impl Peak {
    /// From now: the peak is reset to what is live.
    pub fn start() -> Peak {
        let base = LIVE.load(Relaxed);
        PEAK.store(base, Relaxed);
        Peak { base }
    }

    /// The most held at once since [`Peak::start`], over what was held then; `None` when
    /// [`Counting`] is not the global allocator.
    pub fn bytes(&self) -> Option<u64> {
        INSTALLED.load(Relaxed).then(|| PEAK.load(Relaxed).saturating_sub(self.base))
    }
}
