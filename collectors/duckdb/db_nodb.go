//go:build !duckdb

package duckdb

import (
	"context"
	"fmt"

	"github.com/floe-project/floe/collectors"
)

func readDB(_ context.Context, name string, _ func(collectors.QueryEvent) error, _ func(collectors.BadRecord) error) error {
	return fmt.Errorf("%s: %w", name, ErrNoDuckDB)
}
