//go:build !linux

package scale

import (
	"errors"
	"time"
)

// errNoUsage says this OS does not give the process's usage here.
var errNoUsage = errors.New("process usage is read on linux only")

// CPUTime is the user and system CPU this process has used (linux only).
func CPUTime() (time.Duration, error) { return 0, errNoUsage }

// ResetPeakRSS starts a new peak resident set (linux only).
func ResetPeakRSS() error { return errNoUsage }

// PeakRSS is the process's peak resident set in bytes (linux only).
func PeakRSS() (int64, error) { return 0, errNoUsage }
