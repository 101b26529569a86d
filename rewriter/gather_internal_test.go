package rewriter

import (
	"fmt"
	"math/rand/v2"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/decimal128"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/stretchr/testify/require"
)

var gatherSchema = arrow.NewSchema([]arrow.Field{
	{Name: "i64", Type: arrow.PrimitiveTypes.Int64, Nullable: true},
	{Name: "i32", Type: arrow.PrimitiveTypes.Int32},
	{Name: "i16", Type: arrow.PrimitiveTypes.Int16, Nullable: true},
	{Name: "b", Type: arrow.FixedWidthTypes.Boolean, Nullable: true},
	{Name: "s", Type: arrow.BinaryTypes.String, Nullable: true},
	{Name: "ls", Type: arrow.BinaryTypes.LargeString, Nullable: true},
	{Name: "fsb", Type: &arrow.FixedSizeBinaryType{ByteWidth: 3}, Nullable: true},
	{Name: "dec", Type: &arrow.Decimal128Type{Precision: 20, Scale: 2}, Nullable: true},
	{Name: "ts", Type: &arrow.TimestampType{Unit: arrow.Microsecond, TimeZone: "UTC"}},
	{Name: "list", Type: arrow.ListOf(arrow.PrimitiveTypes.Int32), Nullable: true},
}, nil)

func gatherTestBatch(mem memory.Allocator, rnd *rand.Rand, n int) arrow.RecordBatch {
	b := array.NewRecordBuilder(mem, gatherSchema)
	defer b.Release()
	for i := range n {
		null := rnd.IntN(5) == 0
		if null {
			b.Field(0).AppendNull()
		} else {
			b.Field(0).(*array.Int64Builder).Append(rnd.Int64())
		}
		b.Field(1).(*array.Int32Builder).Append(rnd.Int32())
		b.Field(2).(*array.Int16Builder).AppendValues([]int16{int16(i)}, []bool{!null})
		b.Field(3).(*array.BooleanBuilder).AppendValues([]bool{rnd.IntN(2) == 0}, []bool{rnd.IntN(4) != 0})
		if rnd.IntN(6) == 0 {
			b.Field(4).AppendNull()
			b.Field(5).AppendNull()
		} else {
			s := fmt.Sprintf("v%d-%s", i, string(make([]byte, rnd.IntN(9))))
			b.Field(4).(*array.StringBuilder).Append(s)
			b.Field(5).(*array.LargeStringBuilder).Append(s + s)
		}
		b.Field(6).(*array.FixedSizeBinaryBuilder).AppendValues([][]byte{{byte(i), 1, 2}}, []bool{!null})
		b.Field(7).(*array.Decimal128Builder).AppendValues([]decimal128.Num{decimal128.FromI64(int64(i) - 7)}, []bool{rnd.IntN(3) != 0})
		b.Field(8).(*array.TimestampBuilder).Append(arrow.Timestamp(i * 1000))
		lb := b.Field(9).(*array.ListBuilder)
		if null {
			lb.AppendNull()
		} else {
			lb.Append(true)
			lb.ValueBuilder().(*array.Int32Builder).AppendValues([]int32{int32(i), 1}, nil)
		}
	}
	return b.NewRecordBatch()
}

// TestGatherBatchMatchesRows gathers random rows, singly and in runs, from
// several sources (some of them slices with an offset) and compares every
// value with the source row it names.
func TestGatherBatchMatchesRows(t *testing.T) {
	mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
	defer mem.AssertSize(t, 0)
	rnd := rand.New(rand.NewPCG(1, 2))

	var srcs []arrow.RecordBatch
	for i := range 4 {
		rec := gatherTestBatch(mem, rnd, 200)
		if i%2 == 1 {
			sl := rec.NewSlice(13, 190)
			rec.Release()
			rec = sl
		}
		srcs = append(srcs, rec)
	}
	defer func() {
		for _, s := range srcs {
			s.Release()
		}
	}()
	for _, runs := range []bool{false, true} {
		t.Run(fmt.Sprintf("runs=%t", runs), func(t *testing.T) {
			var refs []rowRef
			for len(refs) < 1000 {
				src := rnd.IntN(len(srcs))
				rows := int(srcs[src].NumRows())
				n := 1
				if runs {
					n = 1 + rnd.IntN(20)
				}
				start := rnd.IntN(rows - n + 1)
				for r := start; r < start+n; r++ {
					refs = append(refs, rowRef{src: int32(src), row: int32(r)})
				}
			}
			spans := appendSpans(nil, refs)
			got, err := gatherBatch(t.Context(), mem, gatherSchema, srcs, spans, len(refs), 1+len(refs)%3)
			require.NoError(t, err)
			defer got.Release()
			require.Equal(t, int64(len(refs)), got.NumRows())
			for c := range gatherSchema.NumFields() {
				col := got.Column(c)
				nulls := 0
				for i, r := range refs {
					want := srcs[r.src].Column(c)
					require.Equal(t, want.IsNull(int(r.row)), col.IsNull(i), "column %d row %d", c, i)
					require.Equal(t, want.ValueStr(int(r.row)), col.ValueStr(i), "column %d row %d", c, i)
					if col.IsNull(i) {
						nulls++
					}
				}
				require.Equal(t, nulls, col.NullN(), "column %d", c)
				require.NoError(t, array.ValidateFull(col), "column %d", c)
			}
		})
	}
}
