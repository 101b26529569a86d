package layout_test

import (
	"fmt"
	"math/rand/v2"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/stretchr/testify/require"

	"github.com/floe-project/floe/layout"
)

// benchRecord is a lineitem-like batch: a wide integer key, a date and a short string.
func benchRecord(b *testing.B, rows int) arrow.RecordBatch {
	r := rand.New(rand.NewPCG(9, 9))
	schema := arrow.NewSchema([]arrow.Field{
		{Name: "orderkey", Type: arrow.PrimitiveTypes.Int64},
		{Name: "shipdate", Type: arrow.FixedWidthTypes.Date32},
		{Name: "shipmode", Type: arrow.BinaryTypes.String},
	}, nil)
	bld := array.NewRecordBuilder(memory.NewGoAllocator(), schema)
	defer bld.Release()
	modes := []string{"AIR", "FOB", "MAIL", "RAIL", "REG AIR", "SHIP", "TRUCK"}
	for range rows {
		bld.Field(0).(*array.Int64Builder).Append(r.Int64N(6_000_000))
		bld.Field(1).(*array.Date32Builder).Append(arrow.Date32(8035 + r.IntN(2526)))
		bld.Field(2).(*array.StringBuilder).Append(modes[r.IntN(len(modes))])
	}
	rec := bld.NewRecordBatch()
	b.Cleanup(rec.Release)
	return rec
}

func BenchmarkEncode(b *testing.B) {
	const rows = 8192
	rec := benchRecord(b, rows)
	q, err := layout.FitQuantiles([]arrow.RecordBatch{rec}, []string{"orderkey", "shipdate", "shipmode"}, layout.DefaultQuantileBuckets)
	require.NoError(b, err)
	cols := map[int]string{2: "shipdate, orderkey", 3: "shipdate, orderkey, shipmode"}
	for _, name := range []string{"sort", "zorder", "zorder-rank", "hilbert"} {
		for _, n := range []int{2, 3} {
			b.Run(fmt.Sprintf("layout=%s,cols=%d", name, n), func(b *testing.B) {
				strategy, opts := name, layout.EncoderOptions{Quantiles: q}
				if name == "zorder-rank" {
					strategy, opts.ZOrderMode = "zorder", layout.ZOrderRank
				}
				l, err := layout.Parse(strategy + "(" + cols[n] + ")")
				require.NoError(b, err)
				enc, err := layout.NewEncoder(l, rec.Schema(), opts)
				require.NoError(b, err)
				var key []byte
				keyBytes := 0
				b.ReportAllocs()
				iterations := 0
				for b.Loop() {
					for row := range rows {
						key, err = enc.AppendKey(key[:0], rec, row)
						if err != nil {
							b.Fatal(err)
						}
						keyBytes += len(key)
					}
					iterations++
				}
				total := float64(iterations * rows)
				b.ReportMetric(total/b.Elapsed().Seconds(), "rows/s")
				b.ReportMetric(float64(b.Elapsed().Nanoseconds())/total, "ns/row")
				b.ReportMetric(float64(keyBytes)/total, "key_bytes/row")
			})
		}
	}
}

// BenchmarkTreeEncode keys rows by a tree of three cuts a row (seven cuts, eight leaves):
// range cuts only, or the same tree with its cuts on shipmode made set cuts of 3 values,
// or with every cut a set of 64 orderkeys, so that a set cut's cost (a binary search of
// the set for the row's value key) reads beside a range cut's (one comparison).
func BenchmarkTreeEncode(b *testing.B) {
	const rows = 8192
	rec := benchRecord(b, rows)
	key := func(col, row int) []byte {
		k, err := layout.ValueKey(rec.Column(col), row)
		require.NoError(b, err)
		return k
	}
	// Rows whose shipmode is each of the seven modes, to take value keys from.
	mode := map[string]int{}
	for r := range rows {
		if s := rec.Column(2).(*array.String).Value(r); mode[s] == 0 {
			mode[s] = r + 1
		}
	}
	modeKey := func(s string) []byte { return key(2, mode[s]-1) }
	orderkeys := func(seed int) [][]byte {
		out := make([][]byte, 64)
		for i := range out {
			out[i] = key(0, (seed*64+i)%rows)
		}
		return out
	}
	leaf := func(c string) *layout.TreeNode { return &layout.TreeNode{SortColumn: c} }
	for _, name := range []string{"range", "set3", "set64"} {
		b.Run("cuts="+name, func(b *testing.B) {
			cut := func(col int, at string, seed int) *layout.TreeCut {
				switch {
				case name == "set64":
					return &layout.TreeCut{Column: "orderkey", Set: orderkeys(seed)}
				case col == 2 && name == "set3":
					return &layout.TreeCut{Column: "shipmode", Set: [][]byte{modeKey(at), modeKey("RAIL"), modeKey("TRUCK")}}
				case col == 2:
					return &layout.TreeCut{Column: "shipmode", Value: modeKey(at)}
				}
				return &layout.TreeCut{Column: "orderkey", Value: key(0, seed)}
			}
			root := &layout.TreeNode{Cut: cut(0, "", 1),
				Left: &layout.TreeNode{Cut: cut(2, "MAIL", 2),
					Left:  &layout.TreeNode{Cut: cut(0, "", 3), Left: leaf("shipdate"), Right: leaf("orderkey")},
					Right: &layout.TreeNode{Cut: cut(0, "", 4), Left: leaf("shipdate"), Right: leaf("orderkey")}},
				Right: &layout.TreeNode{Cut: cut(2, "FOB", 5),
					Left:  &layout.TreeNode{Cut: cut(0, "", 6), Left: leaf("shipdate"), Right: leaf("orderkey")},
					Right: &layout.TreeNode{Cut: cut(0, "", 7), Left: leaf("shipdate"), Right: leaf("orderkey")}},
			}
			tr, err := layout.NewTree(rec.Schema(), root)
			require.NoError(b, err)
			l, err := layout.Parse("tree(orderkey, shipdate, shipmode)")
			require.NoError(b, err)
			enc, err := layout.NewEncoder(l, rec.Schema(), layout.EncoderOptions{Tree: tr})
			require.NoError(b, err)
			var k []byte
			b.ReportAllocs()
			iterations := 0
			for b.Loop() {
				for row := range rows {
					k, err = enc.AppendKey(k[:0], rec, row)
					if err != nil {
						b.Fatal(err)
					}
				}
				iterations++
			}
			total := float64(iterations * rows)
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/total, "ns/row")
		})
	}
}
