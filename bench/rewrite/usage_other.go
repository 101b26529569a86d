//go:build !unix

package rewrite

import (
	"os"
	"time"
)

// childUsage reports CPU only: peak RSS and page faults need getrusage.
func childUsage(ps *os.ProcessState) (cpu time.Duration, maxRSSBytes, minorFaults int64) {
	return ps.UserTime() + ps.SystemTime(), 0, 0
}
