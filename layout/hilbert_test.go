package layout_test

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"slices"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/stretchr/testify/require"

	"github.com/floe-project/floe/layout"
)

// hilbertInt returns the Hilbert index of p as an integer (dims·nbits ≤ 64).
func hilbertInt(t *testing.T, p []uint32, nbits int) uint64 {
	t.Helper()
	key, err := layout.AppendHilbertIndex(nil, p, nbits)
	require.NoError(t, err)
	total := len(p) * nbits
	require.Len(t, key, (total+7)/8)
	var buf [8]byte
	copy(buf[:], key)
	return binary.BigEndian.Uint64(buf[:]) >> (64 - total)
}

// TestHilbertAdjacencyAndBijectivity walks every cell of small grids in 2, 3 and 4 dimensions:
// the indices must be exactly 0 … cells-1 (a bijection), the curve must start at the origin,
// and consecutive cells along the curve must be neighbours at unit distance.
func TestHilbertAdjacencyAndBijectivity(t *testing.T) {
	for _, tc := range []struct{ dims, bits int }{
		{2, 1}, {2, 2}, {2, 3}, {2, 5}, {3, 1}, {3, 2}, {3, 3}, {4, 1}, {4, 2}, {4, 3},
	} {
		t.Run(fmt.Sprintf("dims=%d,bits=%d", tc.dims, tc.bits), func(t *testing.T) {
			side := 1 << tc.bits
			cells := 1
			for range tc.dims {
				cells *= side
			}
			byIndex := make([][]uint32, cells)
			for c := range cells {
				p := make([]uint32, tc.dims)
				rest := c
				for d := range p {
					p[d] = uint32(rest % side)
					rest /= side
				}
				h := hilbertInt(t, p, tc.bits)
				require.Less(t, h, uint64(cells), "index out of range for %v", p)
				require.Nil(t, byIndex[h], "index %d reached twice: %v and %v", h, byIndex[h], p)
				byIndex[h] = p
			}
			require.Equal(t, make([]uint32, tc.dims), byIndex[0], "the curve starts at the origin")
			for h := 1; h < cells; h++ {
				dist := 0
				for d := range tc.dims {
					a, b := int(byIndex[h-1][d]), int(byIndex[h][d])
					dist += max(a-b, b-a)
				}
				require.Equal(t, 1, dist, "cells %d and %d: %v → %v", h-1, h, byIndex[h-1], byIndex[h])
			}
		})
	}
}

func TestAppendHilbertIndexErrors(t *testing.T) {
	_, err := layout.AppendHilbertIndex(nil, nil, 3)
	require.ErrorContains(t, err, "0 dimensions")
	_, err = layout.AppendHilbertIndex(nil, make([]uint32, 17), 3)
	require.ErrorContains(t, err, "17 dimensions")
	_, err = layout.AppendHilbertIndex(nil, []uint32{1, 2}, 0)
	require.ErrorContains(t, err, "0 bits")
	_, err = layout.AppendHilbertIndex(nil, []uint32{1, 8}, 3)
	require.ErrorContains(t, err, "coordinate 1 = 8 does not fit in 3 bits")
	k, err := layout.AppendHilbertIndex([]byte{7}, []uint32{1 << 31, 5}, 32)
	require.NoError(t, err)
	require.Len(t, k, 9)
	require.Equal(t, byte(7), k[0])
}

// gridRecord returns a side×side grid of (a, b) int64 points, a-major.
func gridRecord(t testing.TB, side int) arrow.RecordBatch {
	var a, b []int64
	for i := range side {
		for j := range side {
			a = append(a, int64(i))
			b = append(b, int64(j))
		}
	}
	return int64Record(t, []string{"a", "b"}, ints(a...), ints(b...))
}

// TestCurveKeysTileTheGrid sorts a 32×32 grid by rank z-order and Hilbert keys and cuts the
// sorted rows into runs of 4^k rows (files): with quantile coordinates each run must be a
// square block of the grid, which is what makes both curves prune well on either column.
func TestCurveKeysTileTheGrid(t *testing.T) {
	const side = 32
	rec := gridRecord(t, side)
	q, err := layout.FitQuantiles([]arrow.RecordBatch{rec}, []string{"a", "b"}, side)
	require.NoError(t, err)
	for _, tc := range []struct {
		layout string
		mode   layout.ZOrderMode
	}{{"zorder(a, b)", layout.ZOrderRank}, {"hilbert(a, b)", layout.ZOrderIcebergExact}} {
		t.Run(tc.layout, func(t *testing.T) {
			l, err := layout.Parse(tc.layout)
			require.NoError(t, err)
			enc, err := layout.NewEncoder(l, rec.Schema(), layout.EncoderOptions{ZOrderMode: tc.mode, Quantiles: q})
			require.NoError(t, err)
			rows := make([]int, side*side)
			keys := make([][]byte, len(rows))
			for i := range rows {
				rows[i] = i
				keys[i], err = enc.AppendKey(nil, rec, i)
				require.NoError(t, err)
			}
			slices.SortFunc(rows, func(x, y int) int { return bytes.Compare(keys[x], keys[y]) })
			for i := 1; i < len(rows); i++ {
				require.NotEqual(t, keys[rows[i-1]], keys[rows[i]], "distinct cells get distinct keys")
			}
			for run := 4; run <= side*side; run *= 4 {
				w := 1
				for w*w < run {
					w++
				}
				for start := 0; start < len(rows); start += run {
					loA, hiA, loB, hiB := side, -1, side, -1
					for _, r := range rows[start : start+run] {
						a, b := r/side, r%side
						loA, hiA, loB, hiB = min(loA, a), max(hiA, a), min(loB, b), max(hiB, b)
					}
					require.Equal(t, w-1, hiA-loA, "run of %d at %d: a spans %d…%d", run, start, loA, hiA)
					require.Equal(t, w-1, hiB-loB, "run of %d at %d: b spans %d…%d", run, start, loB, hiB)
				}
			}
			if tc.layout == "hilbert(a, b)" {
				for i := 1; i < len(rows); i++ {
					a0, b0, a1, b1 := rows[i-1]/side, rows[i-1]%side, rows[i]/side, rows[i]%side
					require.Equal(t, 1, max(a0-a1, a1-a0)+max(b0-b1, b1-b0), "hilbert steps to a neighbour")
				}
			}
		})
	}
}

// TestHilbertKeyMatchesIndexOfBuckets ties the encoder to AppendHilbertIndex: the key of a row
// is the Hilbert index of its scaled bucket coordinates, with nulls in the first slot.
func TestHilbertKeyMatchesIndexOfBuckets(t *testing.T) {
	rec := int64Record(t, []string{"x", "y", "z"},
		append(span(0, 100), nil, ints(5)[0]),
		append(span(100, 200), ints(3)[0], nil),
		append(span(0, 100), nil, nil))
	q, err := layout.FitQuantiles([]arrow.RecordBatch{rec}, []string{"x", "y", "z"}, 8)
	require.NoError(t, err)
	l, err := layout.Parse("hilbert(x, y, z)")
	require.NoError(t, err)
	enc, err := layout.NewEncoder(l, rec.Schema(), layout.EncoderOptions{Quantiles: q})
	require.NoError(t, err)
	require.Equal(t, []string{"x", "y", "z"}, enc.KeyColumns())
	for row := range int(rec.NumRows()) {
		coords := make([]uint32, 3)
		for i, c := range []string{"x", "y", "z"} {
			b, null, err := q.Bucket(c, rec, row)
			require.NoError(t, err)
			slot := uint64(b + 1)
			if null {
				slot = 0
			}
			n, _ := q.Buckets(c)
			coords[i] = uint32(slot << 4 / uint64(n+1)) // 8 buckets + null slot need 4 bits
		}
		want, err := layout.AppendHilbertIndex(nil, coords, 4)
		require.NoError(t, err)
		got, err := enc.AppendKey(nil, rec, row)
		require.NoError(t, err)
		require.Equal(t, want, got, "row %d coords %v", row, coords)
	}
}

// TestCurveNullsOrder checks where nulls land in rank z-order and Hilbert coordinates: slot 0
// by default, the last slot with nulls last.
func TestCurveNullsOrder(t *testing.T) {
	rec := int64Record(t, []string{"a", "b"}, append(span(0, 8), nil), append(span(0, 8), nil))
	q, err := layout.FitQuantiles([]arrow.RecordBatch{rec}, []string{"a", "b"}, 8)
	require.NoError(t, err)
	for _, tc := range []struct {
		layout string
		want   []uint32 // coordinates of the all-null row: 8 buckets + 1 null slot need 4 bits
	}{
		{"hilbert(a, b)", []uint32{0, 0}},
		{"hilbert(a nulls last, b)", []uint32{8 << 4 / 9, 0}},
		{"hilbert(a nulls last, b nulls last)", []uint32{8 << 4 / 9, 8 << 4 / 9}},
	} {
		t.Run(tc.layout, func(t *testing.T) {
			l, err := layout.Parse(tc.layout)
			require.NoError(t, err)
			enc, err := layout.NewEncoder(l, rec.Schema(), layout.EncoderOptions{Quantiles: q})
			require.NoError(t, err)
			got, err := enc.AppendKey(nil, rec, 8)
			require.NoError(t, err)
			want, err := layout.AppendHilbertIndex(nil, tc.want, 4)
			require.NoError(t, err)
			require.Equal(t, want, got)
		})
	}
	t.Run("rank zorder nulls last sorts the all-null row last", func(t *testing.T) {
		l, err := layout.Parse("zorder(a nulls last, b nulls last)")
		require.NoError(t, err)
		enc, err := layout.NewEncoder(l, rec.Schema(), layout.EncoderOptions{ZOrderMode: layout.ZOrderRank, Quantiles: q})
		require.NoError(t, err)
		last, err := enc.AppendKey(nil, rec, 8)
		require.NoError(t, err)
		for row := range 8 {
			k, err := enc.AppendKey(nil, rec, row)
			require.NoError(t, err)
			require.Negative(t, bytes.Compare(k, last), "row %d", row)
		}
	})
}
