package sample

import (
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/stretchr/testify/require"
)

func TestChooseFilesExactSeededUniform(t *testing.T) {
	for _, tc := range []struct {
		n    int
		frac float64
		want int
	}{{240, 0.133, 32}, {2400, 0.0133, 32}, {10, 0.01, 1}, {5, 1, 5}, {7, 0.99, 7}, {0, 0.5, 0}} {
		got := chooseFiles(tc.n, tc.frac, rand.New(rand.NewPCG(1, 2)))
		require.Len(t, got, tc.want, "%d files at %g", tc.n, tc.frac)
		require.True(t, slices.IsSorted(got))
		require.Len(t, slices.Compact(slices.Clone(got)), len(got), "distinct")
		require.Equal(t, got, chooseFiles(tc.n, tc.frac, rand.New(rand.NewPCG(1, 2))), "seeded")
	}
	// Over many seeds every file is read about equally often.
	counts := make([]int, 20)
	for seed := range uint64(4000) {
		for _, i := range chooseFiles(20, 0.25, rand.New(rand.NewPCG(seed, 0x5eed))) {
			counts[i]++
		}
	}
	for i, c := range counts {
		require.InDelta(t, 1000, c, 120, "file %d", i)
	}
}
