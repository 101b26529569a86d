//go:build !duckdb

package oracle_test

import (
	"testing"

	"github.com/apache/iceberg-go/table"
)

// requireDuckDBApplies needs the duckdb build tag.
func requireDuckDBApplies(*testing.T, *table.Table, *table.Table) {}
