//go:build !duckdb

package rewriter_test

import (
	"testing"

	"github.com/apache/iceberg-go/table"
	"github.com/stretchr/testify/require"

	"github.com/floe-project/floe/internal/oracle"
)

// rowSum digests the live rows of tbl through iceberg-go's scan; with the
// duckdb build tag the DuckDB Parquet reader is used instead.
func rowSum(t testing.TB, tbl *table.Table) oracle.Sum {
	t.Helper()
	s, err := oracle.ChecksumIceberg(t.Context(), tbl)
	require.NoError(t, err)
	return s
}
