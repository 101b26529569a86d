package control_test

import (
	"testing"

	"go.uber.org/goleak"
)

// TestMain checks that no test leaves a goroutine behind: the daemon's
// actors, the run queue, lease renewals and the alert deliveries all end
// with their owner.
func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }
