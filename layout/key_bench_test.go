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
