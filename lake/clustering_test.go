package lake_test

import (
	"fmt"
	"math/rand/v2"
	"testing"

	"github.com/apache/iceberg-go"
	"github.com/stretchr/testify/require"

	"github.com/floe-project/floe/lake"
)

// files builds data files of one partition with [lo, hi] bounds on field 1;
// a negative lo means no bounds.
func files(ranges ...[2]int64) []lake.File {
	out := make([]lake.File, len(ranges))
	for i, r := range ranges {
		f := lake.File{Path: fmt.Sprintf("f%d", i), Records: 10}
		if r[0] >= 0 {
			f.Lower = map[int]iceberg.Literal{1: iceberg.Int64Literal(r[0])}
			f.Upper = map[int]iceberg.Literal{1: iceberg.Int64Literal(r[1])}
		}
		out[i] = f
	}
	return out
}

func TestClusteringOverlapSemantics(t *testing.T) {
	for _, tc := range []struct {
		name            string
		ranges          [][2]int64
		depth, overlaps float64
		overlapFraction float64
	}{
		{name: "disjoint", ranges: [][2]int64{{0, 4}, {5, 9}, {10, 14}}, depth: 1},
		{name: "touching at one boundary value", ranges: [][2]int64{{0, 5}, {5, 9}, {9, 14}}, depth: 1},
		{name: "sorted with a heavy value", ranges: [][2]int64{{0, 3}, {3, 3}, {3, 3}, {3, 3}, {3, 8}, {8, 12}}, depth: 1},
		{name: "one value everywhere", ranges: [][2]int64{{7, 7}, {7, 7}, {7, 7}}, depth: 1},
		{name: "single value strictly inside", ranges: [][2]int64{{0, 10}, {5, 5}}, depth: 2, overlaps: 1, overlapFraction: 1},
		{name: "shared interior", ranges: [][2]int64{{0, 6}, {5, 9}}, depth: 2, overlaps: 1, overlapFraction: 1},
		{name: "identical ranges", ranges: [][2]int64{{0, 9}, {0, 9}, {0, 9}}, depth: 3, overlaps: 2, overlapFraction: 1},
		// [0,9] [5,14] overlap; [20,29] [25,34] overlap; [40,49] alone.
		{name: "two pairs and a loner", ranges: [][2]int64{{0, 9}, {5, 14}, {20, 29}, {25, 34}, {40, 49}}, depth: 1.8, overlaps: 0.8, overlapFraction: 0.8},
		// Nested: [0,20] holds [2,4] and [6,8], which don't overlap each other.
		{name: "nested", ranges: [][2]int64{{0, 20}, {2, 4}, {6, 8}}, depth: 2, overlaps: 4.0 / 3, overlapFraction: 1},
		{name: "unbounded overlaps all", ranges: [][2]int64{{-1, 0}, {0, 4}, {5, 9}}, depth: 2, overlaps: 4.0 / 3, overlapFraction: 1},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c := lake.MeasureClustering("id", 1, files(tc.ranges...))
			require.Equal(t, len(tc.ranges), c.Files)
			require.InDelta(t, tc.depth, c.AverageDepth, 1e-9, "depth")
			require.InDelta(t, tc.overlaps, c.AverageOverlaps, 1e-9, "overlaps")
			require.InDelta(t, tc.overlapFraction, c.OverlapFraction, 1e-9, "overlap fraction")
		})
	}
}

// The sweep agrees with a brute-force count over random ranges: overlap is
// "a shared value strictly inside one of the two", depth the largest set of
// pairwise overlapping files through one point.
func TestClusteringMatchesBruteForce(t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 11))
	for trial := range 300 {
		n := 1 + rng.IntN(9)
		ranges := make([][2]int64, n)
		for i := range ranges {
			lo := rng.Int64N(12)
			ranges[i] = [2]int64{lo, lo + rng.Int64N(4)}
		}
		overlap := func(a, b [2]int64) bool {
			return a[0] < b[1] && b[0] < a[1] || (a[0] == a[1] && b[0] < a[0] && a[0] < b[1]) || (b[0] == b[1] && a[0] < b[0] && b[0] < a[1])
		}
		var wantOverlaps, wantFrac, wantDepth float64
		for i := range ranges {
			o := 0
			for j := range ranges {
				if i != j && overlap(ranges[i], ranges[j]) {
					o++
				}
			}
			wantOverlaps += float64(o)
			if o > 0 {
				wantFrac++
			}
			// Depth through points of i's range: values and mid-gaps, doubled.
			best := 1
			for p := 2 * ranges[i][0]; p <= 2*ranges[i][1]; p++ {
				d, single := 0, false
				for j := range ranges {
					r := ranges[j]
					switch {
					case r[0] == r[1] && 2*r[0] == p:
						single = true
					case 2*r[0] < p && p < 2*r[1]:
						d++
					}
				}
				if single {
					d++
				}
				best = max(best, d)
			}
			wantDepth += float64(best)
		}
		c := lake.MeasureClustering("id", 1, files(ranges...))
		f := float64(n)
		require.InDelta(t, wantOverlaps/f, c.AverageOverlaps, 1e-9, "trial %d %v", trial, ranges)
		require.InDelta(t, wantFrac/f, c.OverlapFraction, 1e-9, "trial %d %v", trial, ranges)
		require.InDelta(t, wantDepth/f, c.AverageDepth, 1e-9, "trial %d %v", trial, ranges)
	}
}
