package simulator

import (
	"math/rand/v2"
	"testing"

	"github.com/stretchr/testify/require"
)

// TestAxesToTranspose2MatchesGeneral: the two-axis fast path gives the general
// transform's result at every width.
func TestAxesToTranspose2MatchesGeneral(t *testing.T) {
	rnd := rand.New(rand.NewPCG(3, 4))
	for nbits := 1; nbits <= 32; nbits++ {
		for range 2000 {
			mask := uint32(1<<nbits - 1)
			x0, x1 := rnd.Uint32()&mask, rnd.Uint32()&mask
			want := []uint32{x0, x1, 0}[:2]
			axesToTransposeN(want, nbits)
			g0, g1 := axesToTranspose2(x0, x1, nbits)
			require.Equal(t, want, []uint32{g0, g1}, "nbits %d, (%d, %d)", nbits, x0, x1)
		}
	}
}

// TestBucketOfCountsBounds: the branch-free search returns the number of
// boundaries at or below the value, for values on, between and outside them.
func TestBucketOfCountsBounds(t *testing.T) {
	rnd := rand.New(rand.NewPCG(5, 6))
	for _, n := range []int{0, 1, 2, 3, 7, 64, 1000} {
		c := &quantileCol{width: 8}
		var bounds []uint64
		v := uint64(10)
		for range n {
			v += 1 + uint64(rnd.IntN(5))
			bounds = append(bounds, v)
		}
		c.bounds64 = bounds
		for range 500 {
			x := uint64(rnd.IntN(int(v) + 20))
			if n > 0 && rnd.IntN(3) == 0 {
				x = bounds[rnd.IntN(n)]
			}
			want := 0
			for _, b := range bounds {
				if b <= x {
					want++
				}
			}
			var enc [8]byte
			for i := range enc {
				enc[i] = byte(x >> (56 - 8*i))
			}
			require.Equal(t, want, c.bucketOf(enc[:]), "value %d of %d bounds", x, n)
		}
	}
}
