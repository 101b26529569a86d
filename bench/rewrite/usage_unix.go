//go:build unix

package rewrite

import (
	"os"
	"runtime"
	"syscall"
	"time"
)

// childUsage reads user+system CPU, peak RSS and minor page faults of an
// exited child from its rusage. Linux reports ru_maxrss in KiB, Darwin in
// bytes.
func childUsage(ps *os.ProcessState) (cpu time.Duration, maxRSSBytes, minorFaults int64) {
	ru, ok := ps.SysUsage().(*syscall.Rusage)
	if !ok {
		return ps.UserTime() + ps.SystemTime(), 0, 0
	}
	rss := int64(ru.Maxrss)
	if runtime.GOOS != "darwin" {
		rss *= 1024
	}
	return ps.UserTime() + ps.SystemTime(), rss, int64(ru.Minflt)
}
