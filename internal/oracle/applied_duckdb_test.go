//go:build duckdb

package oracle_test

import (
	"testing"

	"github.com/apache/iceberg-go/table"
	"github.com/stretchr/testify/require"

	"github.com/floe-project/floe/internal/oracle"
)

// requireDuckDBApplies checks that DuckDB's read of tbl, with the deletes
// PlanLive found, holds the rows of twin, which has no delete; a table with
// equality deletes is refused.
func requireDuckDBApplies(t *testing.T, tbl, twin *table.Table) {
	t.Helper()
	got, err := oracle.ChecksumTable(t.Context(), tbl)
	plan, perr := oracle.PlanLive(t.Context(), tbl)
	require.NoError(t, perr)
	for _, f := range plan.Files {
		if len(f.Equality) > 0 {
			require.ErrorIs(t, err, oracle.ErrUnsupportedDeletes)
			return
		}
	}
	require.NoError(t, err)
	want, err := oracle.ChecksumTable(t.Context(), twin)
	require.NoError(t, err)
	require.Equal(t, want, got, "DuckDB's read with the deletes applied")
}
