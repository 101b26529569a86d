//go:build unix

package simulator_test

import "syscall"

// cpuSeconds is the user+system CPU time of this process so far, so that benchmarks on a
// shared machine can report the work done rather than the wall time waited.
func cpuSeconds() float64 {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return float64(ru.Utime.Sec+ru.Stime.Sec) + float64(ru.Utime.Usec+ru.Stime.Usec)/1e6
}
