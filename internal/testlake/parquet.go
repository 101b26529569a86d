package testlake

import (
	"bytes"
	"context"
	"testing"

	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/apache/arrow-go/v18/parquet/file"
	"github.com/apache/arrow-go/v18/parquet/pqarrow"
	"github.com/stretchr/testify/require"
)

// SumFirstColumn reads a Parquet file (its bytes, as a store's backend
// holds them) whose first column is a long, such as an id, and returns its
// rows and the column's sum: a read of a table's data files that goes
// through neither iceberg-go nor floe.
func SumFirstColumn(t testing.TB, data []byte) (rows, sum int64) {
	t.Helper()
	rdr, err := file.NewParquetReader(bytes.NewReader(data))
	require.NoError(t, err)
	defer rdr.Close()
	fr, err := pqarrow.NewFileReader(rdr, pqarrow.ArrowReadProperties{}, memory.DefaultAllocator)
	require.NoError(t, err)
	tbl, err := fr.ReadTable(context.Background())
	require.NoError(t, err)
	defer tbl.Release()
	for _, c := range tbl.Column(0).Data().Chunks() {
		ids, ok := c.(*array.Int64)
		require.True(t, ok, "first column is %s, not a long", c.DataType())
		for _, v := range ids.Int64Values() {
			sum += v
		}
	}
	return tbl.NumRows(), sum
}
