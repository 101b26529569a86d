//go:build unix

package bench

import (
	"slices"
	"syscall"
	"time"
)

// pageFaultMicros measures the cost of a first touch of fresh memory (see
// [Machine]); 0 when the memory cannot be mapped.
func pageFaultMicros() float64 {
	const size, page = 64 << 20, 4 << 10
	var runs []float64
	for range 3 {
		b, err := syscall.Mmap(-1, 0, size, syscall.PROT_READ|syscall.PROT_WRITE, syscall.MAP_ANON|syscall.MAP_PRIVATE)
		if err != nil {
			return 0
		}
		start := time.Now()
		for i := 0; i < len(b); i += page {
			b[i] = 1
		}
		runs = append(runs, float64(time.Since(start).Nanoseconds())/1e3/float64(size/page))
		if err := syscall.Munmap(b); err != nil {
			return 0
		}
	}
	slices.Sort(runs)
	return runs[1]
}
