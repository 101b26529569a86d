package rewriter_test

import (
	"testing"

	"github.com/apache/iceberg-go/table"
	"github.com/stretchr/testify/require"

	"github.com/floe-project/floe/internal/oracle"
)

// rowSum digests the live rows of tbl's current snapshot with DuckDB's own
// Parquet reader over the snapshot's files (position deletes applied), or
// through iceberg-go's scan without the duckdb build tag.
func rowSum(t testing.TB, tbl *table.Table) oracle.Sum {
	t.Helper()
	s, err := oracle.ChecksumPreferDuckDB(t.Context(), tbl)
	require.NoError(t, err)
	return s
}
