//go:build duckdb

package rewriter_test

import (
	"testing"

	"github.com/apache/iceberg-go"
	"github.com/apache/iceberg-go/table"
	"github.com/stretchr/testify/require"

	"github.com/floe-project/floe/internal/oracle"
)

// duckSum digests the live rows of tbl through DuckDB's own Parquet reader
// (position deletes applied by anti-join).
func duckSum(t testing.TB, tbl *table.Table) oracle.Sum {
	t.Helper()
	s, err := oracle.ChecksumTable(t.Context(), tbl)
	require.NoError(t, err)
	return s
}

// checkWithDuckDB is the independent oracle: the rows of the new snapshot,
// read by DuckDB over its files, are the rows of the old one, the new files
// alone hold all of them, and, when sorted, each partition's new files are
// globally ordered by id as DuckDB reads them back.
func checkWithDuckDB(t testing.TB, before oracle.Sum, after *table.Table, files map[string][]iceberg.DataFile, sorted bool) {
	t.Helper()
	ctx := t.Context()
	require.Equal(t, before, duckSum(t, after), "duckdb: rows changed by the rewrite")
	fio, err := after.FS(ctx)
	require.NoError(t, err)
	var paths []string
	for part, fs := range files {
		var ps []string
		for _, f := range fs {
			ps = append(ps, f.FilePath())
		}
		paths = append(paths, ps...)
		if sorted {
			n, err := oracle.OrderViolations(ctx, fio, ps, "id")
			require.NoError(t, err)
			require.Zero(t, n, "duckdb: partition %q files out of key order", part)
		}
	}
	got, err := oracle.Checksum(ctx, fio, paths)
	require.NoError(t, err)
	require.Equal(t, before, got, "duckdb: the new files do not hold exactly the old rows")
}
