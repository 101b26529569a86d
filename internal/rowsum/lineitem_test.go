package rowsum_test

import (
	"fmt"
	"math/rand/v2"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/stretchr/testify/require"

	"github.com/floe-project/floe/internal/rowsum"
)

// lineitem is a batch shaped like the rewrite benchmark's rows (TPC-H
// lineitem): integer keys, decimals, dates, short low-cardinality strings,
// plain or dictionary-coded (the rewriter reads them coded, its content
// check reads them back plain), a longer comment with some nulls.
func lineitem(n int, seed uint64, dict bool) arrow.RecordBatch {
	r := rand.New(rand.NewPCG(seed, 47))
	strType := arrow.DataType(arrow.BinaryTypes.String)
	if dict {
		strType = &arrow.DictionaryType{IndexType: arrow.PrimitiveTypes.Int32, ValueType: arrow.BinaryTypes.String}
	}
	sc := arrow.NewSchema([]arrow.Field{
		field("l_orderkey", 1, arrow.PrimitiveTypes.Int64),
		field("l_partkey", 2, arrow.PrimitiveTypes.Int64),
		field("l_linenumber", 3, arrow.PrimitiveTypes.Int32),
		field("l_quantity", 4, &arrow.Decimal128Type{Precision: 15, Scale: 2}),
		field("l_extendedprice", 5, &arrow.Decimal128Type{Precision: 15, Scale: 2}),
		field("l_returnflag", 6, strType),
		field("l_shipdate", 7, arrow.FixedWidthTypes.Date32),
		field("l_shipinstruct", 8, strType),
		field("l_shipmode", 9, strType),
		field("l_comment", 10, arrow.BinaryTypes.String),
	}, nil)
	b := array.NewRecordBuilder(memory.DefaultAllocator, sc)
	defer b.Release()
	flags := []string{"A", "N", "R"}
	instr := []string{"DELIVER IN PERSON", "COLLECT COD", "NONE", "TAKE BACK RETURN"}
	modes := []string{"REG AIR", "AIR", "RAIL", "SHIP", "TRUCK", "MAIL", "FOB"}
	str := func(i int, v string) {
		if dict {
			_ = b.Field(i).(*array.BinaryDictionaryBuilder).AppendString(v)
		} else {
			b.Field(i).(*array.StringBuilder).Append(v)
		}
	}
	for i := range n {
		b.Field(0).(*array.Int64Builder).Append(int64(i / 4))
		b.Field(1).(*array.Int64Builder).Append(r.Int64N(200_000))
		b.Field(2).(*array.Int32Builder).Append(int32(i%7 + 1))
		b.Field(3).(*array.Decimal128Builder).Append(decimalOf(r.Int64N(5000)))
		b.Field(4).(*array.Decimal128Builder).Append(decimalOf(r.Int64N(10_000_000)))
		str(5, flags[r.IntN(len(flags))])
		b.Field(6).(*array.Date32Builder).Append(arrow.Date32(8000 + r.IntN(2500)))
		str(7, instr[r.IntN(len(instr))])
		str(8, modes[r.IntN(len(modes))])
		if i%13 == 5 {
			b.Field(9).AppendNull()
		} else {
			c := fmt.Sprintf("comment %x about the row %d", r.Uint64()>>r.IntN(60), i)
			b.Field(9).(*array.StringBuilder).Append(c[:min(len(c), 10+r.IntN(34))])
		}
	}
	return b.NewRecordBatch()
}

// BenchmarkDigestLineitem digests lineitem-shaped rows as the rewriter's
// check sees them: coded as read, plain as read back.
func BenchmarkDigestLineitem(b *testing.B) {
	for _, dict := range []bool{true, false} {
		b.Run(fmt.Sprintf("dict=%v", dict), func(b *testing.B) {
			rec := lineitem(64<<10, 1, dict)
			defer rec.Release()
			b.ReportAllocs()
			var d rowsum.Digest
			for b.Loop() {
				if err := d.Add(rec); err != nil {
					b.Fatal(err)
				}
			}
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(d.Sum().Rows), "ns/row")
		})
	}
}

// Rows read coded and read back plain digest alike; one changed value, a
// value swapped between two columns of a row, and a dropped row each
// change the digest, and Diff names what changed.
func TestDigestLineitemSeesEveryEdit(t *testing.T) {
	coded, plain := lineitem(5000, 7, true), lineitem(5000, 7, false)
	defer coded.Release()
	defer plain.Release()
	want := digest(t, coded)
	require.True(t, want.Equal(digest(t, plain)), "%s", rowsum.Diff(want, digest(t, plain)))

	edited := func(edit func(c int, vals []int64)) arrow.RecordBatch {
		cols := plain.Columns()
		out := make([]arrow.Array, len(cols))
		copy(out, cols)
		keys := []int64{}
		for c := range 2 {
			keys = append(keys, cols[c].(*array.Int64).Int64Values()...)
		}
		n := int(plain.NumRows())
		edit(n, keys)
		for c := range 2 {
			bld := array.NewInt64Builder(memory.DefaultAllocator)
			bld.AppendValues(keys[c*n:(c+1)*n], nil)
			out[c] = bld.NewArray()
			bld.Release()
		}
		rec := array.NewRecordBatch(plain.Schema(), out, plain.NumRows())
		out[0].Release()
		out[1].Release()
		return rec
	}
	one := edited(func(n int, k []int64) { k[n+4321]++ })
	defer one.Release()
	require.Equal(t, "values differ in column l_partkey (field 2)", rowsum.Diff(want, digest(t, one)))

	swapped := edited(func(n int, k []int64) { k[17], k[n+17] = k[n+17], k[17] })
	defer swapped.Release()
	require.Equal(t, "values differ in column l_orderkey (field 1), l_partkey (field 2)", rowsum.Diff(want, digest(t, swapped)))

	head, tail := plain.NewSlice(0, 2500), plain.NewSlice(2501, 5000)
	defer head.Release()
	defer tail.Release()
	dropped := digest(t, head, tail)
	require.False(t, want.Equal(dropped))
	require.Contains(t, rowsum.Diff(want, dropped), "4999 rows, want 5000")
}
