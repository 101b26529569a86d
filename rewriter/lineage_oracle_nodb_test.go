//go:build !duckdb

package rewriter_test

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/floe-project/floe/internal/oracle"
)

// fileLineageOf reads the row lineage of files with arrow-go's Parquet
// reader; with the duckdb build tag DuckDB's is used instead.
func fileLineageOf(t testing.TB, files []oracle.LineageFile) map[int64]oracle.Lineage {
	t.Helper()
	m, err := oracle.RowLineageParquet(t.Context(), files, "id")
	require.NoError(t, err)
	return m
}
