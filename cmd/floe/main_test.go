package main

import (
	"testing"

	"go.uber.org/goleak"

	"github.com/floe-project/floe/internal/testlake/gcslake"
)

// TestMain checks for leaked goroutines: verbs run in process here, and
// serve, collect --listen and the telemetry sources start servers and
// loops that must all be stopped when their command returns.
func TestMain(m *testing.M) {
	goleak.VerifyTestMain(m, gcslake.IgnoreLeaks())
}
