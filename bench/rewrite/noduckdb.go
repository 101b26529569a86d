//go:build !duckdb

package rewrite

import (
	"context"

	"github.com/floe-project/floe/internal/oracle"
)

const duckDBAvailable = false

func runDuckDB(context.Context, Job) (JobResult, error) {
	return JobResult{}, ErrNoDuckDB
}

// Checksum digests the rows of the Parquet files at paths. Without the
// duckdb build tag it is [Digest]; with it, internal/oracle's DuckDB
// checksum. Only compare sums from the same binary.
func Checksum(ctx context.Context, paths []string) (oracle.Sum, error) {
	return Digest(ctx, paths)
}
