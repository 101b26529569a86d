//go:build !unix

package bench

// pageFaultMicros is not measured where anonymous mmap is not available.
func pageFaultMicros() float64 { return 0 }
