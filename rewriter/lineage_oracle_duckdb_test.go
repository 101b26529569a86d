//go:build duckdb

package rewriter_test

import (
	"testing"

	iceio "github.com/apache/iceberg-go/io"
	"github.com/stretchr/testify/require"

	"github.com/floe-project/floe/internal/oracle"
)

// fileLineageOf reads the row lineage of files with DuckDB's Parquet
// reader.
func fileLineageOf(t testing.TB, fio iceio.IO, files []oracle.LineageFile) map[int64]oracle.Lineage {
	t.Helper()
	m, err := oracle.RowLineage(t.Context(), fio, files, "id")
	require.NoError(t, err)
	return m
}
