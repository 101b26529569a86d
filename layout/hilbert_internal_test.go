package layout

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

// TestBucketOfCountsBounds: bucketOf returns the number of boundaries at or
// below the value, for values on, between and outside them, with and without
// its guide, on even, clustered and extreme bounds.
func TestBucketOfCountsBounds(t *testing.T) {
	rnd := rand.New(rand.NewPCG(5, 6))
	gen := map[string]func(n int) []uint64{
		"even": func(n int) []uint64 {
			var b []uint64
			v := uint64(10)
			for range n {
				v += 1 + uint64(rnd.IntN(5))
				b = append(b, v)
			}
			return b
		},
		"clustered": func(n int) []uint64 {
			var b []uint64
			v := uint64(1)
			for i := range n {
				step := uint64(1)
				if i%50 == 0 {
					step = 1 << 40
				}
				v += step
				b = append(b, v)
			}
			return b
		},
		"extreme": func(n int) []uint64 {
			var b []uint64
			for i := range n {
				b = append(b, ^uint64(0)-uint64(n-i)*(1<<50))
			}
			if n > 0 {
				b[0] = 0
			}
			return b
		},
	}
	for name, g := range gen {
		for _, n := range []int{0, 1, 2, 3, 7, 64, 1000} {
			for _, guided := range []bool{false, true} {
				c := &quantileCol{width: 8, bounds64: g(n)}
				if guided {
					c.indexGuide()
				}
				bounds := c.bounds64
				for range 2000 {
					var x uint64
					switch k := rnd.IntN(4); {
					case n > 0 && k == 0:
						x = bounds[rnd.IntN(n)]
					case n > 0 && k == 1:
						x = bounds[rnd.IntN(n)] - 1
					case n > 0 && k == 2:
						x = bounds[rnd.IntN(n)] + 1
					default:
						x = rnd.Uint64()
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
					require.Equal(t, want, c.bucketOf(enc[:]), "%s bounds, n %d, guided %v, value %d", name, n, guided, x)
				}
			}
		}
	}
}
