package pqdict_test

import (
	"math/rand/v2"
	"testing"

	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/stretchr/testify/require"

	"github.com/floe-project/floe/internal/pqdict"
)

func TestScaledDistinctRatio(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	ints := func(n int, domain int64) *array.Int64 {
		b := array.NewInt64Builder(memory.DefaultAllocator)
		defer b.Release()
		for range n {
			b.Append(rng.Int64N(domain))
		}
		return b.NewInt64Array()
	}
	tests := []struct {
		name     string
		n        int
		domain   int64
		rows     int64
		min, max float64
	}{
		// 2,500 values look unique in 2,000 rows, but a 100k-row row group repeats them.
		{name: "bounded domain scaled up", n: 2000, domain: 2500, rows: 100_000, min: 0.01, max: 0.3},
		{name: "bounded domain at batch scale", n: 2000, domain: 2500, rows: 2000, min: 0.5, max: 0.8},
		// A key-like column stays unique at any scale.
		{name: "unique keys", n: 2000, domain: 1 << 60, rows: 100_000, min: 0.95, max: 1},
		{name: "few values", n: 2000, domain: 7, rows: 100_000, min: 0, max: 0.01},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			arr := ints(tc.n, tc.domain)
			defer arr.Release()
			r, ok := pqdict.ScaledDistinctRatio(arr, tc.rows)
			require.True(t, ok)
			require.GreaterOrEqual(t, r, tc.min)
			require.LessOrEqual(t, r, tc.max)
		})
	}
}
