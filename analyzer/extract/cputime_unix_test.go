//go:build unix

package extract_test

import (
	"syscall"
	"time"
)

// cpuTime is the user+system CPU time of the process so far, for
// benchmarks that must report throughput per core on a shared machine.
func cpuTime() (time.Duration, bool) {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0, false
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano()), true
}
