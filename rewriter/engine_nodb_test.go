//go:build !duckdb

package rewriter_test

import (
	"testing"

	"github.com/apache/iceberg-go"
	"github.com/apache/iceberg-go/table"

	"github.com/floe-project/floe/internal/oracle"
)

// duckSum needs DuckDB; without the duckdb build tag the iceberg-go checksum
// stands in and checkWithDuckDB only notes that the DuckDB oracle was skipped.
func duckSum(t testing.TB, _ *table.Table) oracle.Sum {
	t.Helper()
	return oracle.Sum{}
}

func checkWithDuckDB(t testing.TB, _ oracle.Sum, _ *table.Table, _ map[string][]iceberg.DataFile, _ bool) {
	t.Helper()
	t.Log("DuckDB oracle skipped: run with -tags duckdb")
}
