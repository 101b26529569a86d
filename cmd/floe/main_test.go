package main

import (
	"testing"

	"go.uber.org/goleak"

	"github.com/floe-project/floe/internal/testlake/gcslake"
)

// TestMain checks for leaked goroutines: verbs run in process here, and
// serve, collect --listen and the telemetry sources start servers and
// loops that must all be stopped when their command returns.
// The floe binary the process tests share is removed after the tests.
func TestMain(m *testing.M) {
	goleak.VerifyTestMain(removingBin{m}, gcslake.IgnoreLeaks())
}

// removingBin runs the tests, then removes the shared floe binary.
type removingBin struct{ m *testing.M }

func (r removingBin) Run() int {
	defer testBin.remove()
	return r.m.Run()
}
