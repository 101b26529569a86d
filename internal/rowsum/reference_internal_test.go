package rowsum

import (
	"fmt"
	"math"
	"slices"
	"strings"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/extensions"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/cespare/xxhash/v2"
	"github.com/stretchr/testify/require"
)

// refValue is the hash of value i of a, one value at a time through
// arrow's accessors (Value, IsNull, GetValueIndex, ValueOffsets) and the
// library xxhash: the package documentation's definition written out
// plainly, against which the column-at-a-time hashArray is checked.
func refValue(t *testing.T, a arrow.Array, i int) uint64 {
	if a.IsNull(i) || a.DataType().ID() == arrow.NULL {
		return nullHash
	}
	str := func(b []byte) uint64 { return mix(xxhash.Sum64(b) ^ strTag + uint64(len(b))) }
	switch a := a.(type) {
	case *array.Boolean:
		if a.Value(i) {
			return mix(1 ^ boolTag)
		}
		return mix(0 ^ boolTag)
	case *array.Int8:
		return mix(uint64(int64(a.Value(i))) ^ intTag)
	case *array.Int16:
		return mix(uint64(int64(a.Value(i))) ^ intTag)
	case *array.Int32:
		return mix(uint64(int64(a.Value(i))) ^ intTag)
	case *array.Int64:
		return mix(uint64(a.Value(i)) ^ intTag)
	case *array.Uint8:
		return mix(uint64(a.Value(i)) ^ uintTag)
	case *array.Uint16:
		return mix(uint64(a.Value(i)) ^ uintTag)
	case *array.Uint32:
		return mix(uint64(a.Value(i)) ^ uintTag)
	case *array.Uint64:
		return mix(a.Value(i) ^ uintTag)
	case *array.Float32:
		return mix(math.Float64bits(float64(a.Value(i))) ^ fltTag)
	case *array.Float64:
		return mix(math.Float64bits(a.Value(i)) ^ fltTag)
	case *array.Date32:
		return mix(uint64(int64(a.Value(i))) ^ dayTag)
	case *array.Date64:
		return mix(uint64(int64(a.Value(i))/86_400_000) ^ dayTag)
	case *array.Timestamp:
		return instant(int64(a.Value(i)), a.DataType().(*arrow.TimestampType).Unit)
	case *array.Time32:
		return instant(int64(a.Value(i)), a.DataType().(*arrow.Time32Type).Unit)
	case *array.Time64:
		return instant(int64(a.Value(i)), a.DataType().(*arrow.Time64Type).Unit)
	case *array.Decimal128:
		v := a.Value(i)
		return combine(combine(decTag^uint64(a.DataType().(*arrow.Decimal128Type).Scale), uint64(v.HighBits())), v.LowBits())
	case *array.Decimal256:
		h := decTag ^ uint64(a.DataType().(*arrow.Decimal256Type).Scale)
		w := a.Value(i).Array()
		for j := 3; j >= 0; j-- {
			h = combine(h, w[j])
		}
		return h
	case *array.String:
		return str([]byte(a.Value(i)))
	case *array.LargeString:
		return str([]byte(a.Value(i)))
	case *array.StringView:
		return str([]byte(a.Value(i)))
	case *array.Binary:
		return str(a.Value(i))
	case *array.LargeBinary:
		return str(a.Value(i))
	case *array.BinaryView:
		return str(a.Value(i))
	case *array.FixedSizeBinary:
		return str(a.Value(i))
	case *array.Dictionary:
		return refValue(t, a.Dictionary(), a.GetValueIndex(i))
	case array.ExtensionArray:
		return refValue(t, a.Storage(), i)
	case *array.Struct:
		h := uint64(a.NumField())
		for f := range a.NumField() {
			h = combine(h, refValue(t, a.Field(f), i))
		}
		return h
	case array.ListLike:
		tag := uint64(listTag)
		if _, ok := a.(*array.Map); ok {
			tag = mapTag
		}
		lo, hi := a.ValueOffsets(i)
		h := combine(tag, uint64(hi-lo))
		for j := lo; j < hi; j++ {
			h = combine(h, refValue(t, a.ListValues(), int(j)))
		}
		return h
	default:
		return mix(str([]byte(a.ValueStr(i))) ^ otherTag ^ uint64(a.DataType().ID()))
	}
}

// refSum is the Sum of rec row by row from refValue.
func refSum(t *testing.T, rec arrow.RecordBatch) Sum {
	var d Digest
	require.NoError(t, d.bind(rec.Schema()))
	s := Sum{Rows: rec.NumRows(), Columns: slices.Clone(d.cols)}
	for i := range int(rec.NumRows()) {
		h := uint64(rowSeed)
		for k, c := range d.order {
			v := refValue(t, rec.Column(c), i)
			s.Columns[k].Sum += v
			h = combine(h, v)
		}
		h = mix(h ^ rowSalt)
		s.Sum += h
		s.Xor ^= h
	}
	return s
}

// everyType is a batch of n rows with a column of every type the digest
// handles, each with nulls (a different pattern per column), strings and
// binaries holding empty values as well as nulls, and nested columns whose
// children have nulls of their own.
func everyType(t *testing.T, n int) arrow.RecordBatch {
	t.Helper()
	mem := memory.DefaultAllocator
	type col struct {
		name string
		dt   arrow.DataType
		val  func(i int) string // a JSON value; "" for null
	}
	num := func(i int) string { return fmt.Sprint((i*7919)%2001 - 1000) }
	unum := func(i int) string { return fmt.Sprint((i * 7919) % 251) }
	str := func(i int) string {
		if i%5 == 1 {
			return `""`
		}
		return fmt.Sprintf("%q", strings.Repeat("v", i%41)+fmt.Sprint(i%9))
	}
	cols := []col{
		{"bool", arrow.FixedWidthTypes.Boolean, func(i int) string { return fmt.Sprint(i%3 == 0) }},
		{"i8", arrow.PrimitiveTypes.Int8, func(i int) string { return fmt.Sprint(i%200 - 100) }},
		{"i16", arrow.PrimitiveTypes.Int16, num},
		{"i32", arrow.PrimitiveTypes.Int32, num},
		{"i64", arrow.PrimitiveTypes.Int64, num},
		{"u8", arrow.PrimitiveTypes.Uint8, unum},
		{"u16", arrow.PrimitiveTypes.Uint16, unum},
		{"u32", arrow.PrimitiveTypes.Uint32, unum},
		{"u64", arrow.PrimitiveTypes.Uint64, unum},
		{"f32", arrow.PrimitiveTypes.Float32, func(i int) string { return fmt.Sprint(float32(i) / 8) }},
		{"f64", arrow.PrimitiveTypes.Float64, func(i int) string { return fmt.Sprint(float64(i) / 3) }},
		{"date32", arrow.FixedWidthTypes.Date32, func(i int) string { return fmt.Sprintf(`"2026-01-%02d"`, i%28+1) }},
		{"date64", arrow.FixedWidthTypes.Date64, func(i int) string { return fmt.Sprintf(`"2026-02-%02d"`, i%28+1) }},
		{"ts_us", arrow.FixedWidthTypes.Timestamp_us, func(i int) string { return fmt.Sprint(int64(i) * 1_000_001) }},
		{"ts_ns", arrow.FixedWidthTypes.Timestamp_ns, func(i int) string { return fmt.Sprint(int64(i) * 1_000_000_000) }},
		{"time32", arrow.FixedWidthTypes.Time32ms, func(i int) string { return fmt.Sprint(i * 1000) }},
		{"time64", arrow.FixedWidthTypes.Time64us, func(i int) string { return fmt.Sprint(i * 3) }},
		{"dec128", &arrow.Decimal128Type{Precision: 20, Scale: 3}, func(i int) string { return fmt.Sprintf(`"%d.%03d"`, i*977-30000, i%1000) }},
		{"dec256", &arrow.Decimal256Type{Precision: 50, Scale: 4}, func(i int) string { return fmt.Sprintf(`"-%d.%04d"`, i*i*31, i%10000) }},
		{"string", arrow.BinaryTypes.String, str},
		{"large_string", arrow.BinaryTypes.LargeString, str},
		{"string_view", arrow.BinaryTypes.StringView, str},
		{"binary", arrow.BinaryTypes.Binary, func(i int) string { return `"` + strings.Repeat("QUJD", i%3) + `"` }},
		{"large_binary", arrow.BinaryTypes.LargeBinary, func(i int) string { return `"` + strings.Repeat("eHl6", i%4) + `"` }},
		{"binary_view", arrow.BinaryTypes.BinaryView, func(i int) string { return `"` + strings.Repeat("AAEC", i%7) + `"` }},
		{"fixed", &arrow.FixedSizeBinaryType{ByteWidth: 3}, func(i int) string { return `"` + []string{"AAAA", "AQID", "/v7+"}[i%3] + `"` }},
		{"dict8", &arrow.DictionaryType{IndexType: arrow.PrimitiveTypes.Int8, ValueType: arrow.BinaryTypes.String}, func(i int) string { return []string{`"eu"`, `"us"`, `""`, `"apac"`}[i%4] }},
		{"dict16", &arrow.DictionaryType{IndexType: arrow.PrimitiveTypes.Uint16, ValueType: arrow.PrimitiveTypes.Int64}, func(i int) string { return fmt.Sprint(i % 6) }},
		{"dict32", &arrow.DictionaryType{IndexType: arrow.PrimitiveTypes.Int32, ValueType: arrow.BinaryTypes.Binary}, func(i int) string { return []string{`"AA=="`, `""`}[i%2] }},
		{"struct", arrow.StructOf(arrow.Field{Name: "x", Type: arrow.PrimitiveTypes.Int32, Nullable: true}, arrow.Field{Name: "y", Type: arrow.BinaryTypes.String, Nullable: true}),
			func(i int) string {
				if i%4 == 2 {
					return `{"x": null, "y": ""}`
				}
				return fmt.Sprintf(`{"x": %d, "y": %q}`, i%5, fmt.Sprint(i%3))
			}},
		{"list", arrow.ListOf(arrow.PrimitiveTypes.Float64), func(i int) string {
			return "[" + strings.TrimSuffix(strings.Repeat(fmt.Sprint(i)+", null, ", i%3), ", ") + "]"
		}},
		{"large_list", arrow.LargeListOf(arrow.BinaryTypes.String), func(i int) string { return fmt.Sprintf(`["a", %q]`, fmt.Sprint(i%4)) }},
		{"map", arrow.MapOf(arrow.BinaryTypes.String, arrow.PrimitiveTypes.Int32), func(i int) string {
			return fmt.Sprintf(`[{"key": "k%d", "value": %d}]`, i%2, i%3)
		}},
		{"uuid", extensions.NewUUIDType(), func(i int) string { return fmt.Sprintf(`"00000000-0000-0000-0000-%012d"`, i%5) }},
		{"duration", arrow.FixedWidthTypes.Duration_ms, func(i int) string { return fmt.Sprint(i * 250) }},
		{"null", arrow.Null, func(int) string { return "" }},
	}
	fields := make([]arrow.Field, len(cols))
	arrs := make([]arrow.Array, len(cols))
	for c, col := range cols {
		fields[c] = arrow.Field{Name: col.name, Type: col.dt, Nullable: true}
		vals := make([]string, n)
		for i := range vals {
			if v := col.val(i); v != "" && (i+c)%(c%5+3) != 0 {
				vals[i] = v
			} else {
				vals[i] = "null"
			}
		}
		arr, _, err := array.FromJSON(mem, col.dt, strings.NewReader("["+strings.Join(vals, ",")+"]"))
		require.NoError(t, err, "column %s", col.name)
		require.Equal(t, col.dt.ID(), arr.DataType().ID(), "column %s", col.name)
		arrs[c] = arr
	}
	rec := array.NewRecordBatch(arrow.NewSchema(fields, nil), arrs, int64(n))
	for _, a := range arrs {
		a.Release()
	}
	return rec
}

// The column-at-a-time digest gives what the plain row-by-row definition
// gives, on every type, with and without an array offset (a slice starting
// off a byte boundary of the validity bitmap).
func TestDigestMatchesRowWiseReference(t *testing.T) {
	rec := everyType(t, 300)
	defer rec.Release()
	for _, cut := range [][2]int64{{0, 300}, {3, 300}, {13, 250}, {8, 16}, {299, 300}} {
		t.Run(fmt.Sprintf("rows %d-%d", cut[0], cut[1]), func(t *testing.T) {
			part := rec.NewSlice(cut[0], cut[1])
			defer part.Release()
			var d Digest
			require.NoError(t, d.Add(part))
			want, got := refSum(t, part), d.Sum()
			require.Equal(t, want, got, "%s", Diff(want, got))
		})
	}
	// Every column's sum is its own: no column hashes as all nulls.
	var d Digest
	require.NoError(t, d.Add(rec))
	seen := map[uint64]string{}
	for _, c := range d.Sum().Columns {
		if c.Name == "null" {
			continue
		}
		require.NotContains(t, seen, c.Sum, "column %s sums as %s does", c.Name, seen[c.Sum])
		seen[c.Sum] = c.Name
	}
}
