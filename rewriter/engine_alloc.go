package rewriter

import (
	"sync/atomic"

	"github.com/apache/arrow-go/v18/arrow/memory"
)

// TrackingAllocator is an [memory.Allocator] that counts the bytes currently
// allocated through it and the peak of that count. The native engine routes
// every Arrow allocation it makes (decoded scan batches, sort gathers, spill
// reads, Parquet encoding buffers) through one TrackingAllocator, so the peak
// is a real measurement of the engine's Arrow memory, not an estimate.
//
// It is safe for concurrent use.
type TrackingAllocator struct {
	parent memory.Allocator
	cur    atomic.Int64
	peak   atomic.Int64
}

// NewTrackingAllocator wraps parent; a nil parent means
// [memory.DefaultAllocator].
func NewTrackingAllocator(parent memory.Allocator) *TrackingAllocator {
	if parent == nil {
		parent = memory.DefaultAllocator
	}
	return &TrackingAllocator{parent: parent}
}

// Allocate implements [memory.Allocator].
func (a *TrackingAllocator) Allocate(size int) []byte {
	b := a.parent.Allocate(size)
	a.add(int64(len(b)))
	return b
}

// Reallocate implements [memory.Allocator].
func (a *TrackingAllocator) Reallocate(size int, b []byte) []byte {
	old := len(b)
	nb := a.parent.Reallocate(size, b)
	a.add(int64(len(nb) - old))
	return nb
}

// Free implements [memory.Allocator].
func (a *TrackingAllocator) Free(b []byte) {
	a.add(-int64(len(b)))
	a.parent.Free(b)
}

func (a *TrackingAllocator) add(n int64) {
	v := a.cur.Add(n)
	for {
		p := a.peak.Load()
		if v <= p || a.peak.CompareAndSwap(p, v) {
			return
		}
	}
}

// CurrentBytes reports the bytes allocated and not yet freed.
func (a *TrackingAllocator) CurrentBytes() int64 { return a.cur.Load() }

// PeakBytes reports the highest value CurrentBytes has had.
func (a *TrackingAllocator) PeakBytes() int64 { return a.peak.Load() }
