package scale

import (
	"testing"

	"github.com/stretchr/testify/require"
)

// Reads per table average over the whole lake, count the tables read at
// all, and refuse a lake smaller than the tables read.
func TestPerTable(t *testing.T) {
	for _, tc := range []struct {
		name                string
		reads               map[string]Reads
		tables              int
		metadata, manifests float64
		read                int
		err                 string
	}{
		{name: "nothing read", reads: nil, tables: 10000},
		{name: "a tenth read once", reads: map[string]Reads{"a": {1, 6}, "b": {1, 4}}, tables: 20, metadata: 0.1, manifests: 0.5, read: 2},
		{name: "a table listed with no reads is not read", reads: map[string]Reads{"a": {0, 0}, "b": {3, 3}}, tables: 3, metadata: 1, manifests: 1, read: 1},
		{name: "no lake", tables: 0, err: "a lake of 0 tables"},
		{name: "more read than there are", reads: map[string]Reads{"a": {1, 1}, "b": {1, 1}}, tables: 1, err: "2 tables read in a lake of 1"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			md, mf, read, err := PerTable(tc.reads, tc.tables)
			if tc.err != "" {
				require.ErrorContains(t, err, tc.err)
				return
			}
			require.NoError(t, err)
			require.InDelta(t, tc.metadata, md, 1e-9)
			require.InDelta(t, tc.manifests, mf, 1e-9)
			require.Equal(t, tc.read, read)
		})
	}
}

// Measure sees the CPU a phase burns and the memory it touches.
func TestMeasure(t *testing.T) {
	var sink []byte
	u, err := Measure(func() error {
		sink = make([]byte, 64<<20)
		for i := range sink {
			sink[i] = byte(i)
		}
		return nil
	})
	require.NoError(t, err)
	require.Positive(t, u.CPU)
	require.GreaterOrEqual(t, u.PeakRSS, int64(64<<20), "the phase touched 64 MiB")
	require.Positive(t, u.Wall)
	require.Len(t, sink, 64<<20)
}
