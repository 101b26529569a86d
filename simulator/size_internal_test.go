package simulator

import (
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/stretchr/testify/require"
)

func int32Array(vals []int32) *array.Int32 {
	b := array.NewInt32Builder(memory.DefaultAllocator)
	defer b.Release()
	b.AppendValues(vals, nil)
	return b.NewInt32Array()
}

// TestDenseBytesPerRow checks the density extrapolation against the real thing: the
// bytes per row of a full column, estimated from a 1-in-10 sample of it.
func TestDenseBytesPerRow(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	const n, every = 200_000, 10
	fld := arrow.Field{Name: "c", Type: arrow.PrimitiveTypes.Int32}
	tests := []struct {
		name   string
		domain int32
		sorted bool
		// lo, hi bound estimate / truth.
		lo, hi float64
	}{
		// Runs double with density: the sample has runs of 20, the table of 200.
		{name: "sorted, 1000 values", domain: 1000, sorted: true, lo: 0.5, hi: 2},
		{name: "sorted, 50 values", domain: 50, sorted: true, lo: 0.5, hi: 2},
		// No locality: about the same bytes per row (the dictionary page amortizes better
		// over more rows, which the fit slightly overdoes).
		{name: "random, 1000 values", domain: 1000, lo: 0.8, hi: 1.15},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			vals := make([]int32, n)
			for i := range vals {
				vals[i] = rng.Int32N(tc.domain)
			}
			if tc.sorted {
				slices.Sort(vals)
			}
			full := int32Array(vals)
			defer full.Release()
			truth, err := denseBytesPerRow(full, fld, nil, 1)
			require.NoError(t, err)
			var sampled []int32
			for i := 0; i < n; i += every {
				sampled = append(sampled, vals[i])
			}
			sample := int32Array(sampled)
			defer sample.Release()
			naive, err := denseBytesPerRow(sample, fld, nil, 1)
			require.NoError(t, err)
			est, err := denseBytesPerRow(sample, fld, nil, 1.0/every)
			require.NoError(t, err)
			t.Logf("bytes/row: table %.4f, sample as is %.4f, extrapolated %.4f", truth, naive, est)
			require.GreaterOrEqual(t, est/truth, tc.lo)
			require.LessOrEqual(t, est/truth, tc.hi)
			if tc.sorted {
				require.Less(t, est/truth, naive/truth, "extrapolation moves towards the table")
			}
		})
	}
}
