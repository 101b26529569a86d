package analyzer_test

import (
	"testing"

	"go.uber.org/goleak"
)

// TestMain checks for leaked goroutines. The SQL catalog of the test
// warehouses keeps database/sql's connection opener alive until the
// process ends; that one is expected.
func TestMain(m *testing.M) {
	goleak.VerifyTestMain(m, goleak.IgnoreTopFunction("database/sql.(*DB).connectionOpener"))
}
