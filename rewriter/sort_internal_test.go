package rewriter

import (
	"bytes"
	"cmp"
	"math/rand/v2"
	"testing"

	"github.com/stretchr/testify/require"
)

// TestCompareEntsMatchesBytesCompare checks the prefix comparison against
// bytes.Compare on keys made to collide: short alphabets with zero bytes,
// lengths around the 16-byte prefix.
func TestCompareEntsMatchesBytesCompare(t *testing.T) {
	rnd := rand.New(rand.NewPCG(3, 4))
	var arena []byte
	var ents []rowEnt
	for i := range 2000 {
		n := rnd.IntN(24)
		off := len(arena)
		for range n {
			arena = append(arena, []byte{0, 1, 0xff}[rnd.IntN(3)])
		}
		p0, p1 := keyPrefix(arena[off:])
		ents = append(ents, rowEnt{p0: p0, p1: p1, koff: off, klen: int32(n), r: int32(i)})
	}
	key := func(e rowEnt) []byte { return arena[e.koff : e.koff+int(e.klen)] }
	for range 20000 {
		a, b := ents[rnd.IntN(len(ents))], ents[rnd.IntN(len(ents))]
		want := bytes.Compare(key(a), key(b))
		if want == 0 {
			want = cmp.Compare(a.r, b.r)
		}
		require.Equal(t, want, compareEnts(arena, &a, &b), "%x vs %x", key(a), key(b))
	}
}
