package rewriter

import (
	"bytes"
	"cmp"
	"encoding/binary"
	"math/rand/v2"
	"slices"
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

// TestRadixSortEntsMatchesCompareEnts: the radix sort puts entries in the
// order compareEnts gives, for keys of one length and of mixed lengths up to
// 16 bytes, with many equal keys (kept in input order) and zero bytes.
func TestRadixSortEntsMatchesCompareEnts(t *testing.T) {
	rnd := rand.New(rand.NewPCG(5, 6))
	for _, tc := range []struct {
		name     string
		min, max int
		alphabet []byte
	}{
		{"fixed 14 bytes", 14, 14, []byte{0, 1, 7, 0xff}},
		{"fixed 8 bytes", 8, 8, []byte{0, 0x80, 0xff}},
		{"mixed lengths", 0, 16, []byte{0, 1, 0xff}},
		{"few distinct", 3, 3, []byte{0, 1}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var arena []byte
			var ents []rowEnt
			for i := range 5000 {
				n := tc.min + rnd.IntN(tc.max-tc.min+1)
				off := len(arena)
				for range n {
					arena = append(arena, tc.alphabet[rnd.IntN(len(tc.alphabet))])
				}
				p0, p1 := keyPrefix(arena[off:])
				ents = append(ents, rowEnt{p0: p0, p1: p1, koff: off, klen: int32(n), b: int32(i / 100), r: int32(i % 100)})
			}
			want := slices.Clone(ents)
			slices.SortFunc(want, func(a, b rowEnt) int { return compareEnts(arena, &a, &b) })
			got := radixSortEnts(slices.Clone(ents), make([]rowEnt, len(ents)))
			require.Equal(t, want, got)
		})
	}
	require.Len(t, radixSortEnts(nil, nil), 0)
}

// BenchmarkRadixSortEnts sorts 1M entries keyed like bench/rewrite's
// sort(l_shipdate, l_orderkey): a 4-byte date of about 2,500 values and an
// 8-byte key of about 250,000, 14 bytes with their markers, so 5 passes.
// Tried for issue 47 on a loaded 2-core Xeon, about 75 ns per entry:
// deciding the digit's word once per pass instead of per entry gained
// nothing (the passes are bound by memory), and sorting (packed varying
// digits, index) pairs of 16 bytes in the scratch's memory, then permuting
// the entries in place, took twice as long (the permutation's cycles are
// chains of dependent cache misses).
func BenchmarkRadixSortEnts(b *testing.B) {
	rnd := rand.New(rand.NewPCG(47, 2))
	const n = 1 << 20
	ents := make([]rowEnt, n)
	for i := range ents {
		var key [14]byte
		key[0] = 1
		binary.BigEndian.PutUint32(key[1:], uint32(8000+rnd.IntN(2500)))
		key[5] = 1
		binary.BigEndian.PutUint64(key[6:], uint64(rnd.IntN(250_000)))
		p0, p1 := keyPrefix(key[:])
		ents[i] = rowEnt{p0: p0, p1: p1, klen: 14, b: int32(i >> 13), r: int32(i & 8191)}
	}
	work, scratch := make([]rowEnt, n), make([]rowEnt, n)
	for b.Loop() {
		copy(work, ents)
		radixSortEnts(work, scratch)
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*n), "ns/ent")
}
