package simulator

import (
	"cmp"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/stretchr/testify/require"
)

// TestRadixSortEntsMatchesTheComparisonSort checks that the radix sort
// gives the order of a stable comparison sort on (partition, prefix), ties
// in row order, over entries with few distinct values in each field (many
// ties) and with values that differ only in the high or the low bytes.
func TestRadixSortEntsMatchesTheComparisonSort(t *testing.T) {
	cases := []struct {
		name string
		gen  func(r *rand.Rand) sortEnt
	}{
		{name: "few-values", gen: func(r *rand.Rand) sortEnt {
			return sortEnt{part: r.Int32N(3), p0: r.Uint64N(4) << 56, p1: r.Uint64N(3)}
		}},
		{name: "low-bytes", gen: func(r *rand.Rand) sortEnt {
			return sortEnt{p0: r.Uint64N(1000), p1: r.Uint64()}
		}},
		{name: "wide", gen: func(r *rand.Rand) sortEnt {
			return sortEnt{part: r.Int32N(1 << 20), p0: r.Uint64(), p1: r.Uint64N(2)}
		}},
		{name: "one-partition-no-keys", gen: func(*rand.Rand) sortEnt { return sortEnt{} }},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			r := rand.New(rand.NewPCG(1, 2))
			ents := make([]sortEnt, 5000)
			for i := range ents {
				ents[i] = tc.gen(r)
				ents[i].row = int32(i)
			}
			want := slices.Clone(ents)
			slices.SortStableFunc(want, func(a, b sortEnt) int {
				return cmp.Or(cmp.Compare(a.part, b.part), cmp.Compare(a.p0, b.p0), cmp.Compare(a.p1, b.p1))
			})
			got := radixSortEnts(ents, make([]sortEnt, len(ents)))
			require.Equal(t, want, got)
		})
	}
}
