//go:build !duckdb

package oracle

import (
	"context"

	"github.com/apache/iceberg-go/table"
)

// ChecksumPreferDuckDB is ChecksumTable, DuckDB's read, when floe is built
// with the duckdb tag, and [ChecksumIceberg] without it, as here: the most
// independent read of tbl's live rows the build has. Compare its Sums only
// with its own.
func ChecksumPreferDuckDB(ctx context.Context, tbl *table.Table) (Sum, error) {
	return ChecksumIceberg(ctx, tbl)
}
