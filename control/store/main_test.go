package store_test

import (
	"testing"

	"go.uber.org/goleak"

	"github.com/floe-project/floe/control/store"
)

// TestMain checks for leaked goroutines and stops the PostgreSQL cluster
// the tests started.
func TestMain(m *testing.M) { goleak.VerifyTestMain(store.SharedPostgres().Wrap(m)) }
