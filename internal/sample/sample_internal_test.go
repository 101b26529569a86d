package sample

import (
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/stretchr/testify/require"
)

func TestChoosePPSSeededProportional(t *testing.T) {
	for _, tc := range []struct {
		name string
		rows []int64
		k    float64
		want int
	}{
		{"equal files, k of n", []int64{10, 10, 10, 10, 10, 10, 10, 10, 10, 10}, 4, 4},
		{"k at least n reads every file", []int64{5, 1, 9}, 3, 3},
		{"one file", []int64{7}, 2, 1},
		{"no files", nil, 2, 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, prob := choosePPS(tc.rows, tc.k, 0, rand.New(rand.NewPCG(1, 2)))
			require.Len(t, got, tc.want)
			require.Len(t, prob, tc.want)
			require.True(t, slices.IsSorted(got))
			require.Len(t, slices.Compact(slices.Clone(got)), len(got), "distinct")
			again, _ := choosePPS(tc.rows, tc.k, 0, rand.New(rand.NewPCG(1, 2)))
			require.Equal(t, got, again, "seeded")
		})
	}
	// Over many seeds each file is read in proportion to its rows (a file of
	// 40 rows among 100 with k = 2 is read 80% of the time), and a file too
	// large for its share is always read.
	rows := []int64{40, 10, 10, 10, 10, 10, 5, 5}
	counts := make([]int, len(rows))
	for seed := range uint64(4000) {
		got, prob := choosePPS(rows, 2, 0, rand.New(rand.NewPCG(seed, 0x5eed)))
		for j, i := range got {
			counts[i]++
			require.InDelta(t, min(1, 2*float64(rows[i])/100), prob[j], 1e-12)
		}
	}
	for i, c := range counts {
		require.InDelta(t, 4000*min(1, 2*float64(rows[i])/100), float64(c), 150, "file %d", i)
	}
	got, _ := choosePPS([]int64{1000, 1, 1, 1}, 1.5, 0, rand.New(rand.NewPCG(3, 4)))
	require.Contains(t, got, 0, "a file holding most rows is certain")
}

func TestAllocateEveryPartitionBounded(t *testing.T) {
	opts := DefaultOptions()
	// 90 day partitions of one 10,000-row file each, one projected file each.
	strata := make([]stratum, 90)
	for i := range strata {
		strata[i] = stratum{files: []int{i}, rows: 10_000, bytes: 1 << 20}
	}
	want := allocate(strata, 900_000, 90<<20, 90, opts)
	for i, w := range want {
		require.InDelta(t, 1000, w, 1e-9, "partition %d gets its file's rows", i)
	}
	// A table far larger than the cap: every partition still gets rows, and the
	// sum stays at MaxRows.
	strata = make([]stratum, 1000)
	for i := range strata {
		strata[i] = stratum{files: []int{i}, rows: 1_000_000, bytes: 1 << 30}
	}
	want = allocate(strata, 1_000_000_000, 1000<<30, 2000, opts)
	var sum float64
	for _, w := range want {
		require.Positive(t, w)
		sum += w
	}
	require.InDelta(t, float64(opts.MaxRows), sum, 1e-6)
}
