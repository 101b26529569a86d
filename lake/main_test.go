package lake_test

import (
	"testing"

	"go.uber.org/goleak"

	"github.com/floe-project/floe/internal/testlake/gcslake"
)

// TestMain checks for leaked goroutines: LoadState and the scan index fan
// out over manifests.
func TestMain(m *testing.M) {
	goleak.VerifyTestMain(m, gcslake.IgnoreLeaks())
}
