//go:build !linux

package rewriter

import "errors"

// hugeSupported: off Linux the pool leaves every buffer to the Go heap.
const hugeSupported = false

// mapHuge is Linux-only; elsewhere the pool's buffers come from the Go heap.
func mapHuge(int) ([]byte, error) { return nil, errors.New("page pool: not supported on this system") }

func unmapHuge([]byte) error { return nil }

func dropPages([]byte) {}

func hugePagesOn() bool { return false }
