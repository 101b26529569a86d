package layout_test

import (
	"strings"
	"testing"
	"time"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/decimal128"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/stretchr/testify/require"

	"github.com/floe-project/floe/layout"
)

// TestFormatValueKey encodes one value of each type as a tree cut holds it and prints
// it back as a person writes it.
func TestFormatValueKey(t *testing.T) {
	day := func(s string) arrow.Date32 {
		d, err := time.Parse(time.DateOnly, s)
		require.NoError(t, err)
		return arrow.Date32(d.Unix() / 86400)
	}
	ts := time.Date(2026, 11, 3, 12, 30, 0, 250_000_000, time.UTC)
	cases := []struct {
		name   string
		dt     arrow.DataType
		append func(b array.Builder)
		want   string
	}{
		{"int64", arrow.PrimitiveTypes.Int64, func(b array.Builder) { b.(*array.Int64Builder).Append(-42) }, "-42"},
		{"int32", arrow.PrimitiveTypes.Int32, func(b array.Builder) { b.(*array.Int32Builder).Append(2000) }, "2000"},
		{"int8", arrow.PrimitiveTypes.Int8, func(b array.Builder) { b.(*array.Int8Builder).Append(-128) }, "-128"},
		{"uint16", arrow.PrimitiveTypes.Uint16, func(b array.Builder) { b.(*array.Uint16Builder).Append(65535) }, "65535"},
		{"date", arrow.FixedWidthTypes.Date32, func(b array.Builder) { b.(*array.Date32Builder).Append(day("1995-03-01")) }, "1995-03-01"},
		{"date before 1970", arrow.FixedWidthTypes.Date32, func(b array.Builder) { b.(*array.Date32Builder).Append(day("1969-12-31")) }, "1969-12-31"},
		{"timestamp", &arrow.TimestampType{Unit: arrow.Microsecond, TimeZone: "UTC"}, func(b array.Builder) {
			b.(*array.TimestampBuilder).Append(arrow.Timestamp(ts.UnixMicro()))
		}, "'2026-11-03 12:30:00.25'"},
		{"timestamp ns", &arrow.TimestampType{Unit: arrow.Nanosecond}, func(b array.Builder) {
			b.(*array.TimestampBuilder).Append(arrow.Timestamp(ts.UnixNano() + 7))
		}, "'2026-11-03 12:30:00.250000007'"},
		{"float64", arrow.PrimitiveTypes.Float64, func(b array.Builder) { b.(*array.Float64Builder).Append(-90.5) }, "-90.5"},
		{"float32", arrow.PrimitiveTypes.Float32, func(b array.Builder) { b.(*array.Float32Builder).Append(0.25) }, "0.25"},
		{"bool", arrow.FixedWidthTypes.Boolean, func(b array.Builder) { b.(*array.BooleanBuilder).Append(true) }, "true"},
		{"decimal", &arrow.Decimal128Type{Precision: 10, Scale: 2}, func(b array.Builder) {
			b.(*array.Decimal128Builder).Append(decimal128.FromI64(-12345))
		}, "-123.45"},
		{"string", arrow.BinaryTypes.String, func(b array.Builder) { b.(*array.StringBuilder).Append("o'brien\x00x") }, "'o''brien\x00x'"},
		{"binary", arrow.BinaryTypes.Binary, func(b array.Builder) { b.(*array.BinaryBuilder).Append([]byte{0x0a, 0x00, 0x1b}) }, "X'0a001b'"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			b := array.NewBuilder(memory.DefaultAllocator, c.dt)
			defer b.Release()
			c.append(b)
			arr := b.NewArray()
			defer arr.Release()
			key, err := layout.ValueKey(arr, 0)
			require.NoError(t, err)
			got, err := layout.FormatValueKey(c.dt, key)
			require.NoError(t, err)
			require.Equal(t, c.want, got)
		})
	}
	_, err := layout.FormatValueKey(arrow.PrimitiveTypes.Int64, []byte{1, 2})
	require.Error(t, err, "a key of the wrong width")
	_, err = layout.FormatValueKey(arrow.BinaryTypes.String, []byte("abc"))
	require.Error(t, err, "a string key without its terminator")
}

// TestTreeCutPredicate prints a tree's cuts with the cut column's type.
func TestTreeCutPredicate(t *testing.T) {
	schema := arrow.NewSchema([]arrow.Field{{Name: "L_ShipDate", Type: arrow.FixedWidthTypes.Date32}, {Name: "kind", Type: arrow.BinaryTypes.String}}, nil)
	b := array.NewDate32Builder(memory.DefaultAllocator)
	defer b.Release()
	b.Append(arrow.Date32(9190)) // 1995-03-01
	arr := b.NewArray()
	defer arr.Release()
	v, err := layout.ValueKey(arr, 0)
	require.NoError(t, err)
	cut := layout.TreeCut{Column: "l_shipdate", Value: v}
	tr, err := layout.NewTree(schema, &layout.TreeNode{Cut: &cut, Left: &layout.TreeNode{SortColumn: "kind"}, Right: &layout.TreeNode{SortColumn: "kind"}})
	require.NoError(t, err)
	got, err := tr.CutPredicate(cut)
	require.NoError(t, err)
	require.Equal(t, "l_shipdate < 1995-03-01", got)
	cut.Inclusive = true
	got, err = tr.CutPredicate(cut)
	require.NoError(t, err)
	require.Equal(t, "l_shipdate <= 1995-03-01", got)
	_, err = tr.CutPredicate(layout.TreeCut{Column: "other", Value: v})
	require.Error(t, err)
}

func TestFormatCountAndShare(t *testing.T) {
	for n, want := range map[int64]string{0: "0", 9999: "9999", 12345: "12.3k", 480_000: "480k", 3_140_000: "3.14M", 59_986_052: "60.0M", 2_500_000_000: "2.50B", -12345: "-12.3k"} {
		require.Equal(t, want, layout.FormatCount(n), n)
	}
	for s, want := range map[float64]string{0: "0%", 0.004: "<1%", 0.5: "50%", 1.0 / 6: "17%", 1: "100%"} {
		require.Equal(t, want, layout.FormatShare(s), s)
	}
	e := layout.TreeExplanation{Leaves: 1, RowsPerLeaf: layout.RowsPerLeaf{Min: 5, Median: 5, Max: 5}}
	require.Equal(t, "1 leaf, 0 levels deep; 5 to 5 rows a leaf (median 5)", e.Summary())
	require.False(t, strings.Contains(e.Summary(), "leaves"))
}
