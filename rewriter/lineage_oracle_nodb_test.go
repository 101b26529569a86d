//go:build !duckdb

package rewriter_test

import (
	"testing"

	iceio "github.com/apache/iceberg-go/io"
	"github.com/stretchr/testify/require"

	"github.com/floe-project/floe/internal/oracle"
)

// fileLineageOf reads the row lineage of files with arrow-go's Parquet
// reader; with the duckdb build tag DuckDB's is used instead.
func fileLineageOf(t testing.TB, fio iceio.IO, files []oracle.LineageFile) map[int64]oracle.Lineage {
	t.Helper()
	m, err := oracle.RowLineageParquet(t.Context(), fio, files, "id")
	require.NoError(t, err)
	return m
}
