//go:build linux

package scale

import (
	"bufio"
	"fmt"
	"os"
	"strconv"
	"strings"
	"syscall"
	"time"
)

// CPUTime is the user and system CPU this process has used.
func CPUTime() (time.Duration, error) {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0, fmt.Errorf("read rusage: %w", err)
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano()), nil
}

// ResetPeakRSS starts a new peak resident set: Linux resets VmHWM to the
// current RSS when "5" is written to /proc/self/clear_refs.
func ResetPeakRSS() error {
	if err := os.WriteFile("/proc/self/clear_refs", []byte("5"), 0); err != nil {
		return fmt.Errorf("reset peak rss: %w", err)
	}
	return nil
}

// PeakRSS is the process's peak resident set since start or the last
// ResetPeakRSS, in bytes (VmHWM).
func PeakRSS() (int64, error) {
	f, err := os.Open("/proc/self/status")
	if err != nil {
		return 0, fmt.Errorf("read peak rss: %w", err)
	}
	defer f.Close()
	return parseHWM(bufio.NewScanner(f))
}

// parseHWM reads the VmHWM line of a /proc/PID/status.
func parseHWM(sc *bufio.Scanner) (int64, error) {
	for sc.Scan() {
		v, ok := strings.CutPrefix(sc.Text(), "VmHWM:")
		if !ok {
			continue
		}
		kb, err := strconv.ParseInt(strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(v), "kB")), 10, 64)
		if err != nil {
			return 0, fmt.Errorf("read peak rss: VmHWM %q: %w", v, err)
		}
		return kb << 10, nil
	}
	if err := sc.Err(); err != nil {
		return 0, fmt.Errorf("read peak rss: %w", err)
	}
	return 0, fmt.Errorf("read peak rss: no VmHWM line")
}
