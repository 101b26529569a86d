package layout_test

import (
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/iceberg-go/table"
	"github.com/stretchr/testify/require"

	"github.com/floe-project/floe/bench/layout"
)

func TestGenerate(t *testing.T) {
	schema, err := table.SchemaToArrowSchema(layout.Schema(), nil, true, false)
	require.NoError(t, err)
	tests := []struct {
		name        string
		rows, files int
		wantErr     bool
	}{
		{name: "even", rows: 10_000, files: 10},
		{name: "remainder", rows: 10_007, files: 10},
		{name: "more files than rows", rows: 3, files: 4, wantErr: true},
		{name: "no rows", rows: 0, files: 1, wantErr: true},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			batches, err := layout.Generate(schema, tc.rows, tc.files, 7)
			if tc.wantErr {
				require.Error(t, err)
				return
			}
			require.NoError(t, err)
			defer func() {
				for _, b := range batches {
					b.Release()
				}
			}()
			require.Len(t, batches, tc.files)
			again, err := layout.Generate(schema, tc.rows, tc.files, 7)
			require.NoError(t, err)
			defer func() {
				for _, b := range again {
					b.Release()
				}
			}()
			var n int64
			for i, b := range batches {
				n += b.NumRows()
				require.True(t, array.RecordEqual(b, again[i]), "same seed, same rows")
				// Arrival order: every file spans nearly the whole ship-date domain,
				// so no date range can skip it.
				ship := b.Column(6).(*array.Date32)
				lo, hi := ship.Value(0), ship.Value(0)
				for j := range ship.Len() {
					lo, hi = min(lo, ship.Value(j)), max(hi, ship.Value(j))
				}
				require.Greater(t, int(hi-lo), 2400, "file %d spans %d days", i, hi-lo)
				rcpt := b.Column(7).(*array.Date32)
				for j := range rcpt.Len() {
					require.Greater(t, rcpt.Value(j), ship.Value(j), "receipt after ship")
				}
			}
			require.Equal(t, int64(tc.rows), n)
			require.Equal(t, arrow.DATE32, batches[0].Column(6).DataType().ID())
		})
	}
}
