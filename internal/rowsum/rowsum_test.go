package rowsum_test

import (
	"fmt"
	"math/rand/v2"
	"strconv"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/compute"
	"github.com/apache/arrow-go/v18/arrow/decimal128"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/stretchr/testify/require"

	"github.com/floe-project/floe/internal/rowsum"
)

func field(name string, id int, dt arrow.DataType) arrow.Field {
	return arrow.Field{Name: name, Type: dt, Nullable: true,
		Metadata: arrow.NewMetadata([]string{"PARQUET:field_id"}, []string{strconv.Itoa(id)})}
}

// table is a small batch of every kind of column the rewriter meets: ids,
// strings with nulls, binary, timestamps, decimals, a struct and a list.
func table(t *testing.T, n int, edit func(i int, s string) string) arrow.RecordBatch {
	t.Helper()
	sc := arrow.NewSchema([]arrow.Field{
		field("id", 1, arrow.PrimitiveTypes.Int64),
		field("s", 2, arrow.BinaryTypes.String),
		field("b", 3, arrow.BinaryTypes.Binary),
		field("ts", 4, &arrow.TimestampType{Unit: arrow.Microsecond, TimeZone: "UTC"}),
		field("d", 5, &arrow.Decimal128Type{Precision: 12, Scale: 2}),
		field("st", 6, arrow.StructOf(field("x", 7, arrow.PrimitiveTypes.Int32), field("y", 8, arrow.BinaryTypes.String))),
		field("l", 9, arrow.ListOfField(field("element", 10, arrow.PrimitiveTypes.Float64))),
	}, nil)
	b := array.NewRecordBuilder(memory.DefaultAllocator, sc)
	defer b.Release()
	for i := range n {
		b.Field(0).(*array.Int64Builder).Append(int64(i))
		s := fmt.Sprintf("value-%d", i%17)
		if edit != nil {
			s = edit(i, s)
		}
		if i%11 == 3 {
			b.Field(1).AppendNull()
		} else {
			b.Field(1).(*array.StringBuilder).Append(s)
		}
		b.Field(2).(*array.BinaryBuilder).Append([]byte{byte(i), byte(i >> 8)})
		b.Field(3).(*array.TimestampBuilder).Append(arrow.Timestamp(1_700_000_000_000_000 + int64(i)*1_000_000))
		b.Field(4).(*array.Decimal128Builder).Append(decimalOf(int64(i) * 101))
		sb := b.Field(5).(*array.StructBuilder)
		sb.Append(true)
		sb.FieldBuilder(0).(*array.Int32Builder).Append(int32(i % 5))
		sb.FieldBuilder(1).(*array.StringBuilder).Append(strconv.Itoa(i % 3))
		lb := b.Field(6).(*array.ListBuilder)
		lb.Append(true)
		for j := range i % 4 {
			lb.ValueBuilder().(*array.Float64Builder).Append(float64(i*j) / 4)
		}
	}
	return b.NewRecordBatch()
}

func digest(t *testing.T, recs ...arrow.RecordBatch) rowsum.Sum {
	t.Helper()
	var d rowsum.Digest
	for _, r := range recs {
		require.NoError(t, d.Add(r))
	}
	return d.Sum()
}

func TestDigestIgnoresRowOrderAndBatching(t *testing.T) {
	rec := table(t, 1000, nil)
	defer rec.Release()
	want := digest(t, rec)
	require.Equal(t, int64(1000), want.Rows)
	require.Len(t, want.Columns, 7)

	// The same rows shuffled (a seeded permutation) and cut into batches
	// of uneven size.
	perm := rand.New(rand.NewPCG(1, 2)).Perm(1000)
	idx := array.NewInt64Builder(memory.DefaultAllocator)
	for _, p := range perm {
		idx.Append(int64(p))
	}
	ia := idx.NewInt64Array()
	idx.Release()
	defer ia.Release()
	out, err := compute.Take(t.Context(), *compute.DefaultTakeOptions(), compute.NewDatum(rec), compute.NewDatum(ia))
	require.NoError(t, err)
	shuffled := out.(*compute.RecordDatum).Value
	defer shuffled.Release()
	var parts []arrow.RecordBatch
	for lo := int64(0); lo < 1000; lo += 333 {
		p := shuffled.NewSlice(lo, min(lo+333, 1000))
		defer p.Release()
		parts = append(parts, p)
	}
	got := digest(t, parts...)
	require.True(t, want.Equal(got), "want %v, got %v", want, got)
	require.Empty(t, rowsum.Diff(want, got))

	// Digested apart and added.
	a, b := digest(t, parts[0], parts[1]), digest(t, parts[2], parts[3])
	require.True(t, want.Equal(a.Plus(b)))
	require.Equal(t, want.Columns, a.Plus(b).Columns)
}

func TestDigestSeesOneChangedByte(t *testing.T) {
	rec := table(t, 500, nil)
	defer rec.Release()
	want := digest(t, rec)
	cases := []struct {
		name string
		edit func(i int, s string) string
		diff string
	}{
		{"last byte NUL", func(i int, s string) string {
			if i == 499 {
				return s[:len(s)-1] + "\x00"
			}
			return s
		}, "values differ in column s (field 2)"},
		{"one byte changed", func(i int, s string) string {
			if i == 250 {
				return "walue" + s[5:]
			}
			return s
		}, "values differ in column s (field 2)"},
		{"one value longer", func(i int, s string) string {
			if i == 0 {
				return s + "x"
			}
			return s
		}, "values differ in column s (field 2)"},
		{"two values swapped between rows", func(i int, s string) string {
			switch i {
			case 1:
				return "value-2"
			case 2:
				return "value-1"
			}
			return s
		}, "every column holds the same values, but they are combined into other rows"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			changed := table(t, 500, tc.edit)
			defer changed.Release()
			got := digest(t, changed)
			require.False(t, want.Equal(got))
			require.Equal(t, tc.diff, rowsum.Diff(want, got))
		})
	}
}

func TestDigestCountsDuplicatesAndLosses(t *testing.T) {
	rec := table(t, 100, nil)
	defer rec.Release()
	want := digest(t, rec)
	// A row written twice and another lost: the xor of a pair cancels,
	// the sum does not.
	head, tail := rec.NewSlice(0, 99), rec.NewSlice(0, 1)
	defer head.Release()
	defer tail.Release()
	got := digest(t, head, tail)
	require.Equal(t, want.Rows, got.Rows)
	require.False(t, want.Equal(got))
	lost := digest(t, head)
	require.Contains(t, rowsum.Diff(want, lost), "99 rows, want 100")
}

// A batch and its rows carried another way (dictionary-coded strings, large
// strings, a timestamp in nanoseconds, columns in another order, an int32
// column widened) digest alike.
func TestDigestHashesValuesNotRepresentations(t *testing.T) {
	mem := memory.DefaultAllocator
	plain := arrow.NewSchema([]arrow.Field{
		field("k", 1, arrow.PrimitiveTypes.Int32),
		field("s", 2, arrow.BinaryTypes.String),
		field("ts", 3, &arrow.TimestampType{Unit: arrow.Microsecond}),
	}, nil)
	b := array.NewRecordBuilder(mem, plain)
	vals := []string{"eu", "us", "eu", "", "apac"}
	for i, v := range vals {
		b.Field(0).(*array.Int32Builder).Append(int32(i))
		if i == 3 {
			b.Field(1).AppendNull()
		} else {
			b.Field(1).(*array.StringBuilder).Append(v)
		}
		b.Field(2).(*array.TimestampBuilder).Append(arrow.Timestamp(int64(i) * 1_000_000))
	}
	rec := b.NewRecordBatch()
	b.Release()
	defer rec.Release()

	dt := &arrow.DictionaryType{IndexType: arrow.PrimitiveTypes.Int16, ValueType: arrow.BinaryTypes.String}
	other := arrow.NewSchema([]arrow.Field{
		field("ts", 3, &arrow.TimestampType{Unit: arrow.Nanosecond}),
		field("s", 2, dt),
		field("k", 1, arrow.PrimitiveTypes.Int64),
	}, nil)
	ob := array.NewRecordBuilder(mem, other)
	for i, v := range vals {
		ob.Field(0).(*array.TimestampBuilder).Append(arrow.Timestamp(int64(i) * 1_000_000_000))
		if i == 3 {
			ob.Field(1).AppendNull()
		} else {
			require.NoError(t, ob.Field(1).(*array.BinaryDictionaryBuilder).AppendString(v))
		}
		ob.Field(2).(*array.Int64Builder).Append(int64(i))
	}
	orec := ob.NewRecordBatch()
	ob.Release()
	defer orec.Release()
	want, got := digest(t, rec), digest(t, orec)
	require.True(t, want.Equal(got), "want %v, got %v: %s", want, got, rowsum.Diff(want, got))

	// Large strings hash as strings.
	large, err := compute.CastArray(t.Context(), rec.Column(1), compute.SafeCastOptions(arrow.BinaryTypes.LargeString))
	require.NoError(t, err)
	defer large.Release()
	lrec := array.NewRecordBatch(arrow.NewSchema([]arrow.Field{plain.Field(0), field("s", 2, arrow.BinaryTypes.LargeString), plain.Field(2)}, nil),
		[]arrow.Array{rec.Column(0), large, rec.Column(2)}, rec.NumRows())
	defer lrec.Release()
	require.True(t, want.Equal(digest(t, lrec)))

	// A null differs from the empty string.
	sb := array.NewStringBuilder(mem)
	sb.AppendValues(vals, nil)
	empty := sb.NewStringArray()
	sb.Release()
	defer empty.Release()
	erec := array.NewRecordBatch(plain, []arrow.Array{rec.Column(0), empty, rec.Column(2)}, rec.NumRows())
	defer erec.Release()
	require.Equal(t, "values differ in column s (field 2)", rowsum.Diff(want, digest(t, erec)))
}

func TestDigestRefusesOtherColumns(t *testing.T) {
	rec := table(t, 10, nil)
	defer rec.Release()
	var d rowsum.Digest
	require.NoError(t, d.Add(rec))
	fewer, err := rec.SetColumn(0, rec.Column(0))
	require.NoError(t, err)
	defer fewer.Release()
	require.NoError(t, d.Add(fewer))
	cut := array.NewRecordBatch(arrow.NewSchema(rec.Schema().Fields()[:3], nil), rec.Columns()[:3], rec.NumRows())
	defer cut.Release()
	require.ErrorContains(t, d.Add(cut), "batch has 3 columns, earlier batches 7")
}

func BenchmarkDigest(b *testing.B) {
	t := &testing.T{}
	rec := table(t, 100_000, nil)
	defer rec.Release()
	b.ReportAllocs()
	var d rowsum.Digest
	for b.Loop() {
		if err := d.Add(rec); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(d.Sum().Rows), "ns/row")
}

func decimalOf(v int64) decimal128.Num { return decimal128.FromI64(v) }
