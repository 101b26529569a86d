//go:build !unix

package rewrite

import (
	"os"
	"time"
)

// childUsage reports CPU only: peak RSS needs getrusage.
func childUsage(ps *os.ProcessState) (cpu time.Duration, maxRSSBytes int64) {
	return ps.UserTime() + ps.SystemTime(), 0
}
