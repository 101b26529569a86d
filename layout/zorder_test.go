package layout_test

import (
	"bytes"
	"cmp"
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/extensions"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/google/uuid"
	"github.com/stretchr/testify/require"

	"github.com/floe-project/floe/layout"
)

// Bit patterns named as in Iceberg's TestZOrderByteUtil.
const (
	IIIIIIII = 255
	IOIOIOIO = 170
	OIOIOIOI = 85
	OOOOIIII = 15
	OOOOOOOI = 1
	OOOOOOOO = 0
)

// TestInterleaveBitsIcebergVectors reproduces testInterleaveEmptyBits, testInterleaveFullBits
// and testInterleaveMixedBits of Iceberg's core/src/test/java/org/apache/iceberg/util/
// TestZOrderByteUtil.java.
func TestInterleaveBitsIcebergVectors(t *testing.T) {
	tests := []struct {
		name    string
		columns [][]byte
		size    int
		want    []byte
	}{
		{
			"empty bits",
			[][]byte{make([]byte, 10), make([]byte, 10), make([]byte, 10), make([]byte, 10)},
			40, make([]byte, 40),
		},
		{
			"full bits",
			[][]byte{{IIIIIIII, IIIIIIII}, {IIIIIIII}, {}, {IIIIIIII, IIIIIIII, IIIIIIII}},
			6, []byte{IIIIIIII, IIIIIIII, IIIIIIII, IIIIIIII, IIIIIIII, IIIIIIII},
		},
		{
			"mixed bits",
			[][]byte{
				{OOOOOOOI, IIIIIIII, OOOOOOOO, OOOOIIII},
				{OOOOOOOI, OOOOOOOO, IIIIIIII},
				{OOOOOOOI},
				{OOOOOOOI},
			},
			9, []byte{OOOOOOOO, OOOOOOOO, OOOOOOOO, OOOOIIII, IOIOIOIO, IOIOIOIO, OIOIOIOI, OIOIOIOI, OOOOIIII},
		},
		{"size capped at the input", [][]byte{{IIIIIIII}, {IIIIIIII}}, 5, []byte{IIIIIIII, IIIIIIII}},
		{"truncated output", [][]byte{{IIIIIIII, 0}, {0, IIIIIIII}}, 3, []byte{IOIOIOIO, IOIOIOIO, OIOIOIOI}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := layout.InterleaveBits([]byte("pre"), tt.columns, tt.size)
			require.Equal(t, append([]byte("pre"), tt.want...), got)
		})
	}
}

// bitString and interleaveStrings port the string-based reference of Iceberg's
// testInterleaveRandomExamples: either both algorithms are identically wrong or both right.
func bitString(b []byte) string {
	var s strings.Builder
	for _, c := range b {
		fmt.Fprintf(&s, "%08b", c)
	}
	return s.String()
}

func interleaveStrings(strs []string) string {
	var out strings.Builder
	total := 0
	for _, s := range strs {
		total += len(s)
	}
	for i := 0; out.Len() < total; i++ {
		for _, s := range strs {
			if i < len(s) {
				out.WriteByte(s[i])
			}
		}
	}
	return out.String()
}

// referenceInterleave interleaves through the string reference and packs the first size bytes.
func referenceInterleave(cols [][]byte, size int) []byte {
	strs := make([]string, len(cols))
	for i, c := range cols {
		strs[i] = bitString(c)
	}
	bits := interleaveStrings(strs)
	out := make([]byte, size)
	for i := range size * 8 {
		if bits[i] == '1' {
			out[i/8] |= 0x80 >> (i % 8)
		}
	}
	return out
}

func TestInterleaveBitsRandomExamples(t *testing.T) {
	r := rand.New(rand.NewPCG(42, 42))
	for range 1000 {
		n := r.IntN(9) + 1
		cols := make([][]byte, n)
		total := 0
		sameLen := r.IntN(2) == 0
		length := r.IntN(100) + 1
		for i := range cols {
			if !sameLen {
				length = r.IntN(100) + 1
			}
			cols[i] = make([]byte, length)
			for j := range cols[i] {
				cols[i][j] = byte(r.Uint32())
			}
			total += len(cols[i])
		}
		size := total
		if r.IntN(4) == 0 {
			size = r.IntN(total) + 1
		}
		require.Equal(t, bitString(referenceInterleave(cols, size)), bitString(layout.InterleaveBits(nil, cols, size)))
	}
}

func be(u uint64) []byte { return bigEndian(u) }

func zeros(n int) []byte { return make([]byte, n) }

func pad(b []byte, n int) []byte { return append(b, make([]byte, n-len(b))...) }

// oneRow builds a one-row record with column "v" (the value, or null if v is nil) and column
// "k", an int64 0 whose Iceberg contribution is 80 00 00 00 00 00 00 00.
func oneRow(t *testing.T, typ arrow.DataType, v any) arrow.RecordBatch {
	t.Helper()
	schema := arrow.NewSchema([]arrow.Field{{Name: "v", Type: typ, Nullable: true}, {Name: "k", Type: arrow.PrimitiveTypes.Int64}}, nil)
	b := array.NewRecordBuilder(memory.NewGoAllocator(), schema)
	defer b.Release()
	fb := b.Field(0)
	if v == nil {
		fb.AppendNull()
	} else {
		switch fb := fb.(type) {
		case *array.Int8Builder:
			fb.Append(v.(int8))
		case *array.Int16Builder:
			fb.Append(v.(int16))
		case *array.Int32Builder:
			fb.Append(v.(int32))
		case *array.Int64Builder:
			fb.Append(v.(int64))
		case *array.Uint32Builder:
			fb.Append(v.(uint32))
		case *array.Float32Builder:
			fb.Append(v.(float32))
		case *array.Float64Builder:
			fb.Append(v.(float64))
		case *array.BooleanBuilder:
			fb.Append(v.(bool))
		case *array.StringBuilder:
			fb.Append(v.(string))
		case *array.BinaryBuilder:
			fb.Append(v.([]byte))
		case *array.FixedSizeBinaryBuilder:
			fb.Append(v.([]byte))
		case *array.Date32Builder:
			fb.Append(arrow.Date32(v.(int32)))
		case *array.Date64Builder:
			fb.Append(arrow.Date64(v.(int64)))
		case *array.TimestampBuilder:
			fb.Append(arrow.Timestamp(v.(int64)))
		case *extensions.UUIDBuilder:
			fb.Append(v.(uuid.UUID))
		case *array.BinaryDictionaryBuilder:
			require.NoError(t, fb.AppendString(v.(string)))
		default:
			t.Fatalf("no builder case for %T", fb)
		}
	}
	b.Field(1).(*array.Int64Builder).Append(0)
	rec := b.NewRecordBatch()
	t.Cleanup(rec.Release)
	return rec
}

// TestIcebergZOrderContributions checks the ordered bytes of each type against values worked
// out by hand from ZOrderByteUtils and SparkZOrderUDF, through the whole encoder: the key must
// equal Iceberg's interleave of the expected contribution with that of the int64 0.
func TestIcebergZOrderContributions(t *testing.T) {
	utc := &arrow.TimestampType{Unit: arrow.Microsecond, TimeZone: "UTC"}
	tests := []struct {
		name   string
		typ    arrow.DataType
		v      any
		varLen int
		want   []byte
	}{
		{"int32 1", arrow.PrimitiveTypes.Int32, int32(1), 0, be(0x8000000000000001)},
		{"int32 -1", arrow.PrimitiveTypes.Int32, int32(-1), 0, be(0x7FFFFFFFFFFFFFFF)},
		{"int8 min widened to long", arrow.PrimitiveTypes.Int8, int8(-128), 0, be(0x7FFFFFFFFFFFFF80)},
		{"int16 300", arrow.PrimitiveTypes.Int16, int16(300), 0, be(0x800000000000012C)},
		{"int64 min", arrow.PrimitiveTypes.Int64, int64(math.MinInt64), 0, be(0)},
		{"uint32 max as long", arrow.PrimitiveTypes.Uint32, uint32(math.MaxUint32), 0, be(0x80000000FFFFFFFF)},
		{"null int is 8 zero bytes", arrow.PrimitiveTypes.Int64, nil, 0, zeros(8)},
		{"double 1.0", arrow.PrimitiveTypes.Float64, 1.0, 0, be(0xBFF0000000000000)},
		{"double -1.0", arrow.PrimitiveTypes.Float64, -1.0, 0, be(0x400FFFFFFFFFFFFF)},
		{"double +0", arrow.PrimitiveTypes.Float64, 0.0, 0, be(0x8000000000000000)},
		{"double -0 keeps its sign", arrow.PrimitiveTypes.Float64, math.Copysign(0, -1), 0, be(0x7FFFFFFFFFFFFFFF)},
		{"double NaN canonical", arrow.PrimitiveTypes.Float64, math.Float64frombits(0xFFF0000000000001), 0, be(0xFFF8000000000000)},
		{"double +Inf", arrow.PrimitiveTypes.Float64, math.Inf(1), 0, be(0xFFF0000000000000)},
		{"float 1.5 widened to double", arrow.PrimitiveTypes.Float32, float32(1.5), 0, be(0xBFF8000000000000)},
		{"bool true is 0x81", arrow.FixedWidthTypes.Boolean, true, 0, be(0x8100000000000000)},
		{"bool false", arrow.FixedWidthTypes.Boolean, false, 0, zeros(8)},
		{"bool null", arrow.FixedWidthTypes.Boolean, nil, 0, zeros(8)},
		{"string padded", arrow.BinaryTypes.String, "ab", 0, pad([]byte("ab"), 8)},
		{"string truncated", arrow.BinaryTypes.String, "abcdefghij", 0, []byte("abcdefgh")},
		{"string multibyte char that does not fit is dropped", arrow.BinaryTypes.String, "abcdefgé", 0, pad([]byte("abcdefg"), 8)},
		{"string multibyte", arrow.BinaryTypes.String, "héllo wörld", 0, []byte("h\xc3\xa9llo w")},
		{"string 4-byte char dropped whole", arrow.BinaryTypes.String, "abcde😀", 0, pad([]byte("abcde"), 8)},
		{"string invalid utf-8 becomes U+FFFD", arrow.BinaryTypes.String, "a\xffb", 0, pad([]byte("a\xef\xbf\xbdb"), 8)},
		{"string null", arrow.BinaryTypes.String, nil, 0, zeros(8)},
		{"string var-length 3", arrow.BinaryTypes.String, "abcdef", 3, []byte("abc")},
		{"string var-length 16", arrow.BinaryTypes.String, "abcdefghij", 16, pad([]byte("abcdefghij"), 16)},
		{"dictionary string", &arrow.DictionaryType{IndexType: arrow.PrimitiveTypes.Int8, ValueType: arrow.BinaryTypes.String}, "xyz", 0, pad([]byte("xyz"), 8)},
		{"binary filled", arrow.BinaryTypes.Binary, []byte{1, 2, 3}, 0, pad([]byte{1, 2, 3}, 8)},
		{"binary truncated", arrow.BinaryTypes.Binary, []byte{1, 2, 3, 4, 5, 6, 7, 8, 9, 10}, 0, []byte{1, 2, 3, 4, 5, 6, 7, 8}},
		{"fixed binary", &arrow.FixedSizeBinaryType{ByteWidth: 4}, []byte{9, 8, 7, 6}, 0, pad([]byte{9, 8, 7, 6}, 8)},
		{"date32 as day number", arrow.FixedWidthTypes.Date32, int32(19000), 0, be(0x8000000000004A38)},
		{"date32 before epoch", arrow.FixedWidthTypes.Date32, int32(-1), 0, be(0x7FFFFFFFFFFFFFFF)},
		{"date64 floors to days", arrow.FixedWidthTypes.Date64, int64(-1), 0, be(0x7FFFFFFFFFFFFFFF)},
		{"date64 day 2", arrow.FixedWidthTypes.Date64, int64(2*86_400_000 + 5), 0, be(0x8000000000000002)},
		{"timestamptz as seconds", utc, int64(1_500_000), 0, be(0x8000000000000001)},
		{"timestamptz floors negative", utc, int64(-1), 0, be(0x7FFFFFFFFFFFFFFF)},
		{"timestamptz ns as seconds", &arrow.TimestampType{Unit: arrow.Nanosecond, TimeZone: "Europe/Paris"}, int64(3_999_999_999), 0, be(0x8000000000000003)},
		{"timestamp ntz as micros", &arrow.TimestampType{Unit: arrow.Microsecond}, int64(1_500_000), 0, be(0x80000000_0016E360)},
		{"timestamp ntz ms as micros", &arrow.TimestampType{Unit: arrow.Millisecond}, int64(-2), 0, be(uint64(1<<63 - 2000))},
		{"timestamp ntz ns floors to micros", &arrow.TimestampType{Unit: arrow.Nanosecond}, int64(-1), 0, be(0x7FFFFFFFFFFFFFFF)},
		{"uuid as its string", extensions.NewUUIDType(), uuid.MustParse("123E4567-E89B-12D3-A456-426614174000"), 0, []byte("123e4567")},
		{"uuid string var-length 10", extensions.NewUUIDType(), uuid.MustParse("123e4567-e89b-12d3-a456-426614174000"), 10, []byte("123e4567-e")},
	}
	kContribution := be(0x8000000000000000)
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			rec := oneRow(t, tt.typ, tt.v)
			enc, err := layout.NewEncoder(layout.Layout{Strategy: layout.StrategyZOrder, Columns: []layout.Column{{Name: "v"}, {Name: "k"}}},
				rec.Schema(), layout.EncoderOptions{VarLengthContribution: tt.varLen})
			require.NoError(t, err)
			got, err := enc.AppendKey(nil, rec, 0)
			require.NoError(t, err)
			cols := [][]byte{tt.want, kContribution}
			require.Equal(t, referenceInterleave(cols, len(tt.want)+8), got)
		})
	}
}

// TestIcebergZOrderLegacyFloatBytes covers releases before Iceberg PR #17071, whose sign mask
// was (bits >> 31) | Long.MIN_VALUE: for 1.0 the mask is 0x800000007fe00000 (the PR's example).
func TestIcebergZOrderLegacyFloatBytes(t *testing.T) {
	tests := []struct {
		name string
		typ  arrow.DataType
		v    any
		want []byte
	}{
		{"double 1.0", arrow.PrimitiveTypes.Float64, 1.0, be(0x3FF0000000000000 ^ 0x800000007FE00000)},
		{"double -1.0", arrow.PrimitiveTypes.Float64, -1.0, be(0xBFF0000000000000 ^ 0xFFFFFFFF7FE00000)},
		{"float 1.5 widened", arrow.PrimitiveTypes.Float32, float32(1.5), be(0x3FF8000000000000 ^ 0x800000007FF00000)},
		{"NaN", arrow.PrimitiveTypes.Float64, math.NaN(), be(0x7FF8000000000000 ^ 0x80000000FFF00000)},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			rec := oneRow(t, tt.typ, tt.v)
			enc, err := layout.NewEncoder(layout.Layout{Strategy: layout.StrategyZOrder, Columns: []layout.Column{{Name: "v"}, {Name: "k"}}},
				rec.Schema(), layout.EncoderOptions{IcebergLegacyFloatBytes: true})
			require.NoError(t, err)
			got, err := enc.AppendKey(nil, rec, 0)
			require.NoError(t, err)
			require.Equal(t, referenceInterleave([][]byte{tt.want, be(1 << 63)}, 16), got)
		})
	}
}

func TestIcebergZOrderMaxOutputBytes(t *testing.T) {
	rec := oneRow(t, arrow.BinaryTypes.String, "abcdefghijklmnop")
	l := layout.Layout{Strategy: layout.StrategyZOrder, Columns: []layout.Column{{Name: "v"}, {Name: "k"}}}
	for _, max := range []int{1, 5, 16, 24, 100} {
		t.Run(fmt.Sprint(max), func(t *testing.T) {
			enc, err := layout.NewEncoder(l, rec.Schema(), layout.EncoderOptions{VarLengthContribution: 16, MaxOutputBytes: max})
			require.NoError(t, err)
			got, err := enc.AppendKey(nil, rec, 0)
			require.NoError(t, err)
			want := referenceInterleave([][]byte{[]byte("abcdefghijklmnop"), be(1 << 63)}, min(max, 24))
			require.Equal(t, want, got)
		})
	}
}

// zorderOrderingCase ports the ordering tests of TestZOrderByteUtil (testIntOrdering,
// testLongOrdering, testShortOrdering, testTinyOrdering, testFloatOrdering,
// testDoubleOrdering, testStringOrdering, testByteTruncateOrFill): the bytes of a column
// order like its values. Interleaving with a constant second column keeps that order, so it
// is checked on whole keys.
func TestIcebergZOrderOrdering(t *testing.T) {
	r := rand.New(rand.NewPCG(42, 7))
	const n = 400
	type gen struct {
		typ   arrow.DataType
		value func() any
		cmp   func(a, b any) int
		opts  layout.EncoderOptions
	}
	javaDoubleCompare := func(a, b float64) int {
		// Double.compare: -0.0 < 0.0 and NaN is the largest.
		if math.IsNaN(a) || math.IsNaN(b) {
			return cmp.Compare(boolInt(math.IsNaN(a)), boolInt(math.IsNaN(b)))
		}
		if a == 0 && b == 0 {
			return cmp.Compare(boolInt(!math.Signbit(a)), boolInt(!math.Signbit(b)))
		}
		return cmp.Compare(a, b)
	}
	letters := []rune("abcxyzé€😀")
	gens := map[string]gen{
		"int":  {arrow.PrimitiveTypes.Int32, func() any { return int32(r.Uint32()) }, func(a, b any) int { return cmp.Compare(a.(int32), b.(int32)) }, layout.EncoderOptions{}},
		"long": {arrow.PrimitiveTypes.Int64, func() any { return int64(r.Uint64()) }, func(a, b any) int { return cmp.Compare(a.(int64), b.(int64)) }, layout.EncoderOptions{}},
		"short": {arrow.PrimitiveTypes.Int16, func() any { return int16(r.Uint32()) },
			func(a, b any) int { return cmp.Compare(a.(int16), b.(int16)) }, layout.EncoderOptions{}},
		"tiny": {arrow.PrimitiveTypes.Int8, func() any { return int8(r.Uint32()) }, func(a, b any) int { return cmp.Compare(a.(int8), b.(int8)) }, layout.EncoderOptions{}},
		"float": {arrow.PrimitiveTypes.Float32, func() any {
			return float32(pickFloat(r))
		}, func(a, b any) int { return javaDoubleCompare(float64(a.(float32)), float64(b.(float32))) }, layout.EncoderOptions{}},
		"double": {arrow.PrimitiveTypes.Float64, func() any { return pickFloat(r) },
			func(a, b any) int { return javaDoubleCompare(a.(float64), b.(float64)) }, layout.EncoderOptions{}},
		"string": {arrow.BinaryTypes.String, func() any {
			s := make([]rune, 1+r.IntN(20))
			for i := range s {
				s[i] = letters[r.IntN(len(letters))]
			}
			return string(s)
		}, func(a, b any) int { return cmp.Compare(a.(string), b.(string)) }, layout.EncoderOptions{VarLengthContribution: 128}},
		"bytes": {arrow.BinaryTypes.Binary, func() any {
			b := make([]byte, 1+r.IntN(100))
			for i := range b {
				b[i] = byte(r.Uint32())
			}
			// No trailing zeros: zero-filling makes them tie with the shorter array.
			if b[len(b)-1] == 0 {
				b[len(b)-1] = 1
			}
			return b
		}, func(a, b any) int { return bytes.Compare(a.([]byte), b.([]byte)) }, layout.EncoderOptions{VarLengthContribution: 128}},
	}
	for name, g := range gens {
		t.Run(name, func(t *testing.T) {
			schema := arrow.NewSchema([]arrow.Field{{Name: "v", Type: g.typ}, {Name: "k", Type: arrow.PrimitiveTypes.Int64}}, nil)
			b := array.NewRecordBuilder(memory.NewGoAllocator(), schema)
			defer b.Release()
			vals := make([]any, n)
			for i := range n {
				vals[i] = g.value()
				switch fb := b.Field(0).(type) {
				case *array.Int8Builder:
					fb.Append(vals[i].(int8))
				case *array.Int16Builder:
					fb.Append(vals[i].(int16))
				case *array.Int32Builder:
					fb.Append(vals[i].(int32))
				case *array.Int64Builder:
					fb.Append(vals[i].(int64))
				case *array.Float32Builder:
					fb.Append(vals[i].(float32))
				case *array.Float64Builder:
					fb.Append(vals[i].(float64))
				case *array.StringBuilder:
					fb.Append(vals[i].(string))
				case *array.BinaryBuilder:
					fb.Append(vals[i].([]byte))
				}
				b.Field(1).(*array.Int64Builder).Append(12345)
			}
			rec := b.NewRecordBatch()
			defer rec.Release()
			enc, err := layout.NewEncoder(layout.Layout{Strategy: layout.StrategyZOrder, Columns: []layout.Column{{Name: "v"}, {Name: "k"}}}, schema, g.opts)
			require.NoError(t, err)
			keys := make([][]byte, n)
			for i := range n {
				keys[i], err = enc.AppendKey(nil, rec, i)
				require.NoError(t, err)
			}
			for i := range n {
				for j := range n {
					require.Equal(t, sign(g.cmp(vals[i], vals[j])), sign(bytes.Compare(keys[i], keys[j])), "%v vs %v", vals[i], vals[j])
				}
			}
		})
	}
}

func boolInt(b bool) int {
	if b {
		return 1
	}
	return 0
}

// pickFloat draws ordinary doubles and the adjacent pairs of Iceberg's
// floatingPointOrderedBytesPreservesOrderOfAdjacentValues.
func pickFloat(r *rand.Rand) float64 {
	special := []float64{-921614.125, -921614.0625, -1.6001329423771755e213, -1.600132804916327e213,
		5.716890676284865e-207, 5.7168911255697246e-207, -math.SmallestNonzeroFloat64, 0, math.Copysign(0, -1),
		math.SmallestNonzeroFloat64, -math.MaxFloat64, math.MaxFloat64, -1, 1, math.NaN(), math.Inf(1), math.Inf(-1)}
	if r.IntN(2) == 0 {
		return special[r.IntN(len(special))]
	}
	return r.NormFloat64() * math.Pow(10, float64(r.IntN(40)-20))
}

// TestIcebergZOrderRawWidthProblem shows why rank normalization exists: with Iceberg's raw
// bytes, a date (about 15 significant bits) interleaved with a wide integer behaves like a sort
// on the wide integer, while rank z-order splits on both columns.
func TestIcebergZOrderRawWidthProblem(t *testing.T) {
	const side = 64
	schema := arrow.NewSchema([]arrow.Field{{Name: "day", Type: arrow.FixedWidthTypes.Date32}, {Name: "id", Type: arrow.PrimitiveTypes.Int64}}, nil)
	b := array.NewRecordBuilder(memory.NewGoAllocator(), schema)
	defer b.Release()
	for d := range side {
		for i := range side {
			b.Field(0).(*array.Date32Builder).Append(arrow.Date32(19000 + d))
			b.Field(1).(*array.Int64Builder).Append(int64(i) * 1_000_000_007)
		}
	}
	rec := b.NewRecordBatch()
	defer rec.Release()
	q, err := layout.FitQuantiles([]arrow.RecordBatch{rec}, []string{"day", "id"}, side)
	require.NoError(t, err)
	l := layout.Layout{Strategy: layout.StrategyZOrder, Columns: []layout.Column{{Name: "day"}, {Name: "id"}}}

	// Fraction of the first quarter of rows (in key order) whose day is in the lower half.
	firstQuarterLowDays := func(mode layout.ZOrderMode) float64 {
		enc, err := layout.NewEncoder(l, schema, layout.EncoderOptions{ZOrderMode: mode, Quantiles: q})
		require.NoError(t, err)
		rows := make([]int, side*side)
		keys := make([][]byte, side*side)
		for i := range rows {
			rows[i] = i
			keys[i], err = enc.AppendKey(nil, rec, i)
			require.NoError(t, err)
		}
		slices.SortStableFunc(rows, func(x, y int) int { return bytes.Compare(keys[x], keys[y]) })
		low := 0
		for _, row := range rows[:len(rows)/4] {
			if row/side < side/2 {
				low++
			}
		}
		return float64(low) / float64(len(rows)/4)
	}
	require.InDelta(t, 0.5, firstQuarterLowDays(layout.ZOrderIcebergExact), 0.01, "raw bytes: the wide id column dominates, days are spread evenly")
	require.InDelta(t, 1.0, firstQuarterLowDays(layout.ZOrderRank), 0.001, "rank: the first quarter is the low-day, low-id quadrant")
}
