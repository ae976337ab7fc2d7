package toolcert

import (
	"runtime"
	"runtime/metrics"
)

// heapObjects is the heap's objects, live or dead but not yet swept (what HeapAlloc counts).
// runtime/metrics reads it without stopping the world, which runtime.ReadMemStats does.
const heapObjects = "/memory/classes/heap/objects:bytes"

// heapPeak is a run's peak heap (`peak_bytes`; Config.Memory, toolcert bench --bounded asks).
// Go keeps no per-run peak to read, so the heap is sampled every 1,024 steps and after each
// finish (a finish parses whole buffers: what it holds is seen before it is let go), as the
// Node package does. It counts garbage not yet collected, so it overstates what the run
// needed (up to the GOGC headroom); the floor, the package's reference, is measured the same
// way. A nil *heapPeak measures nothing: no cost when memory is not asked for.
type heapPeak struct {
	sample     []metrics.Sample
	held, peak uint64
	steps      uint
}

// newHeapPeak records what is held before the run, after a collection: otherwise the last
// run's garbage would be counted as held, and a collection during this run, freeing it,
// would hide this run's peak under it.
func newHeapPeak() *heapPeak {
	runtime.GC()
	h := &heapPeak{sample: []metrics.Sample{{Name: heapObjects}}}
	h.held = h.read()
	h.peak = h.held
	return h
}

func (h *heapPeak) read() uint64 {
	metrics.Read(h.sample)
	if h.sample[0].Value.Kind() != metrics.KindUint64 {
		return 0 // a runtime without the metric: peak_bytes is 0, not a failed run
	}
	return h.sample[0].Value.Uint64()
}

// now samples the heap.
func (h *heapPeak) now() {
	if h != nil {
		h.peak = max(h.peak, h.read())
	}
}

// step counts a step of the case's order, sampling every 1,024th.
func (h *heapPeak) step() {
	if h != nil {
		h.steps++
		if h.steps&1023 == 0 {
			h.now()
		}
	}
}

// bytes is the most held at once over what was held before the run.
func (h *heapPeak) bytes() uint64 {
	return max(h.peak, h.held) - h.held
}
