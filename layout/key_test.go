package layout_test

import (
	"bytes"
	"cmp"
	"encoding/json"
	"fmt"
	"math"
	"math/rand/v2"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/decimal"
	"github.com/apache/arrow-go/v18/arrow/decimal128"
	"github.com/apache/arrow-go/v18/arrow/decimal256"
	"github.com/apache/arrow-go/v18/arrow/extensions"
	"github.com/apache/arrow-go/v18/arrow/float16"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/google/uuid"
	"github.com/stretchr/testify/require"

	"github.com/floe-project/floe/layout"
)

// colSpec describes one test column: its type, a value generator (nil means null), how to
// append a value to its builder, and the reference comparator of two non-null values.
type colSpec struct {
	name   string
	typ    arrow.DataType
	gen    func(r *rand.Rand) any
	append func(b array.Builder, v any)
	cmp    func(a, b any) int
}

func pick[T any](r *rand.Rand, special []T, random func() T) T {
	if r.IntN(3) == 0 {
		return random()
	}
	return special[r.IntN(len(special))]
}

func cmpFloat(a, b float64) int {
	an, bn := math.IsNaN(a), math.IsNaN(b)
	switch {
	case an && bn:
		return 0
	case an:
		return 1
	case bn:
		return -1
	}
	return cmp.Compare(a, b) // -0 == +0
}

var (
	testStrings = []string{"", "a", "a\x00", "a\x00\x00", "a\x00b", "a\x01", "ab", "abc", "b", "\xff", "\xff\x00", "zz", "héllo", "\x00", "\x00\xff"}
	nanNeg      = math.Float64frombits(0xfff8000000000001)
	testFloats  = []float64{math.NaN(), nanNeg, math.Inf(1), math.Inf(-1), 0, math.Copysign(0, -1), 1.5, -1.5,
		math.SmallestNonzeroFloat64, -math.SmallestNonzeroFloat64, math.MaxFloat64, -math.MaxFloat64, 1, -1}
)

func intSpec[T int8 | int16 | int32 | int64](name string, typ arrow.DataType, lo, hi T, app func(array.Builder, T)) colSpec {
	return colSpec{
		name: name, typ: typ,
		gen: func(r *rand.Rand) any {
			return pick(r, []T{lo, hi, 0, 1, ^T(0), lo + 1, hi - 1}, func() T { return T(r.Uint64()) })
		},
		append: func(b array.Builder, v any) { app(b, v.(T)) },
		cmp:    func(a, b any) int { return cmp.Compare(a.(T), b.(T)) },
	}
}

func uintSpec[T uint8 | uint16 | uint32 | uint64](name string, typ arrow.DataType, app func(array.Builder, T)) colSpec {
	return colSpec{
		name: name, typ: typ,
		gen: func(r *rand.Rand) any {
			return pick(r, []T{0, 1, ^T(0), ^T(0) >> 1, ^T(0)>>1 + 1}, func() T { return T(r.Uint64()) })
		},
		append: func(b array.Builder, v any) { app(b, v.(T)) },
		cmp:    func(a, b any) int { return cmp.Compare(a.(T), b.(T)) },
	}
}

func bytesSpec(name string, typ arrow.DataType, app func(array.Builder, string)) colSpec {
	return colSpec{
		name: name, typ: typ,
		gen: func(r *rand.Rand) any {
			return pick(r, testStrings, func() string {
				b := make([]byte, r.IntN(5))
				for i := range b {
					b[i] = []byte{0, 'a', 'b', 0xff}[r.IntN(4)]
				}
				return string(b)
			})
		},
		append: func(b array.Builder, v any) { app(b, v.(string)) },
		cmp:    func(a, b any) int { return cmp.Compare(a.(string), b.(string)) },
	}
}

func tsSpec(name string, unit arrow.TimeUnit, limit int64) colSpec {
	return colSpec{
		name: name, typ: &arrow.TimestampType{Unit: unit, TimeZone: "UTC"},
		gen: func(r *rand.Rand) any {
			return pick(r, []int64{-limit, limit, 0, -1, 1, 999, 1000, -999, -1000, -1001},
				func() int64 {
					if limit == math.MaxInt64 {
						return int64(r.Uint64())
					}
					return r.Int64N(2*limit) - limit
				})
		},
		append: func(b array.Builder, v any) { b.(*array.TimestampBuilder).Append(arrow.Timestamp(v.(int64))) },
		cmp:    func(a, b any) int { return cmp.Compare(a.(int64), b.(int64)) },
	}
}

func allTypeSpecs() []colSpec {
	return []colSpec{
		intSpec("i8", arrow.PrimitiveTypes.Int8, int8(math.MinInt8), math.MaxInt8, func(b array.Builder, v int8) { b.(*array.Int8Builder).Append(v) }),
		intSpec("i16", arrow.PrimitiveTypes.Int16, int16(math.MinInt16), math.MaxInt16, func(b array.Builder, v int16) { b.(*array.Int16Builder).Append(v) }),
		intSpec("i32", arrow.PrimitiveTypes.Int32, int32(math.MinInt32), math.MaxInt32, func(b array.Builder, v int32) { b.(*array.Int32Builder).Append(v) }),
		intSpec("i64", arrow.PrimitiveTypes.Int64, int64(math.MinInt64), math.MaxInt64, func(b array.Builder, v int64) { b.(*array.Int64Builder).Append(v) }),
		uintSpec("u8", arrow.PrimitiveTypes.Uint8, func(b array.Builder, v uint8) { b.(*array.Uint8Builder).Append(v) }),
		uintSpec("u16", arrow.PrimitiveTypes.Uint16, func(b array.Builder, v uint16) { b.(*array.Uint16Builder).Append(v) }),
		uintSpec("u32", arrow.PrimitiveTypes.Uint32, func(b array.Builder, v uint32) { b.(*array.Uint32Builder).Append(v) }),
		uintSpec("u64", arrow.PrimitiveTypes.Uint64, func(b array.Builder, v uint64) { b.(*array.Uint64Builder).Append(v) }),
		intSpec("d32", arrow.FixedWidthTypes.Date32, int32(math.MinInt32), math.MaxInt32, func(b array.Builder, v int32) { b.(*array.Date32Builder).Append(arrow.Date32(v)) }),
		intSpec("d64", arrow.FixedWidthTypes.Date64, int64(math.MinInt64), math.MaxInt64, func(b array.Builder, v int64) { b.(*array.Date64Builder).Append(arrow.Date64(v)) }),
		intSpec("dec32", &arrow.Decimal32Type{Precision: 9, Scale: 2}, int32(-999999999), 999999999, func(b array.Builder, v int32) { b.(*array.Decimal32Builder).Append(decimal.Decimal32(v)) }),
		{
			name: "f64", typ: arrow.PrimitiveTypes.Float64,
			gen:    func(r *rand.Rand) any { return pick(r, testFloats, func() float64 { return r.NormFloat64() * 1e3 }) },
			append: func(b array.Builder, v any) { b.(*array.Float64Builder).Append(v.(float64)) },
			cmp:    func(a, b any) int { return cmpFloat(a.(float64), b.(float64)) },
		},
		{
			name: "f32", typ: arrow.PrimitiveTypes.Float32,
			gen: func(r *rand.Rand) any {
				return float32(pick(r, testFloats, func() float64 { return r.NormFloat64() * 1e3 }))
			},
			append: func(b array.Builder, v any) { b.(*array.Float32Builder).Append(v.(float32)) },
			cmp:    func(a, b any) int { return cmpFloat(float64(a.(float32)), float64(b.(float32))) },
		},
		{
			name: "f16", typ: arrow.FixedWidthTypes.Float16,
			gen: func(r *rand.Rand) any {
				return float16.New(float32(pick(r, []float64{0, math.Copysign(0, -1), 1, -1, 65504, -65504, math.Inf(1), math.NaN()},
					func() float64 { return r.NormFloat64() * 100 }))).Float32()
			},
			append: func(b array.Builder, v any) { b.(*array.Float16Builder).Append(float16.New(v.(float32))) },
			cmp:    func(a, b any) int { return cmpFloat(float64(a.(float32)), float64(b.(float32))) },
		},
		{
			name: "bool", typ: arrow.FixedWidthTypes.Boolean,
			gen:    func(r *rand.Rand) any { return r.IntN(2) == 1 },
			append: func(b array.Builder, v any) { b.(*array.BooleanBuilder).Append(v.(bool)) },
			cmp: func(a, b any) int {
				x, y := a.(bool), b.(bool)
				switch {
				case x == y:
					return 0
				case y:
					return -1
				}
				return 1
			},
		},
		bytesSpec("str", arrow.BinaryTypes.String, func(b array.Builder, v string) { b.(*array.StringBuilder).Append(v) }),
		bytesSpec("lstr", arrow.BinaryTypes.LargeString, func(b array.Builder, v string) { b.(*array.LargeStringBuilder).Append(v) }),
		bytesSpec("bin", arrow.BinaryTypes.Binary, func(b array.Builder, v string) { b.(*array.BinaryBuilder).Append([]byte(v)) }),
		bytesSpec("dict", &arrow.DictionaryType{IndexType: arrow.PrimitiveTypes.Int16, ValueType: arrow.BinaryTypes.String},
			func(b array.Builder, v string) {
				if err := b.(*array.BinaryDictionaryBuilder).AppendString(v); err != nil {
					panic(err)
				}
			}),
		tsSpec("ts_s", arrow.Second, 1e11),
		tsSpec("ts_ms", arrow.Millisecond, 1e14),
		tsSpec("ts_us", arrow.Microsecond, math.MaxInt64),
		tsSpec("ts_ns", arrow.Nanosecond, math.MaxInt64),
		{
			name: "dec128", typ: &arrow.Decimal128Type{Precision: 38, Scale: 4},
			gen: func(r *rand.Rand) any {
				return pick(r, []decimal128.Num{decimal128.New(0, 0), decimal128.New(-1, math.MaxUint64), decimal128.New(0, 1),
					decimal128.New(math.MinInt64, 0), decimal128.New(math.MaxInt64, math.MaxUint64), decimal128.New(-1, 0)},
					func() decimal128.Num { return decimal128.New(r.Int64N(5)-2, r.Uint64()) })
			},
			append: func(b array.Builder, v any) { b.(*array.Decimal128Builder).Append(v.(decimal128.Num)) },
			cmp:    func(a, b any) int { return a.(decimal128.Num).Cmp(b.(decimal128.Num)) },
		},
		{
			name: "dec256", typ: &arrow.Decimal256Type{Precision: 76, Scale: 0},
			gen: func(r *rand.Rand) any {
				return decimal256.New(uint64(r.Int64N(5)-2), r.Uint64()%3, r.Uint64(), r.Uint64())
			},
			append: func(b array.Builder, v any) { b.(*array.Decimal256Builder).Append(v.(decimal256.Num)) },
			cmp:    func(a, b any) int { return a.(decimal256.Num).Cmp(b.(decimal256.Num)) },
		},
		{
			name: "fsb", typ: &arrow.FixedSizeBinaryType{ByteWidth: 3},
			gen: func(r *rand.Rand) any {
				return string([]byte{byte(r.IntN(3)), byte(r.IntN(256)), []byte{0, 0xff}[r.IntN(2)]})
			},
			append: func(b array.Builder, v any) { b.(*array.FixedSizeBinaryBuilder).Append([]byte(v.(string))) },
			cmp:    func(a, b any) int { return cmp.Compare(a.(string), b.(string)) },
		},
		{
			name: "uuid", typ: extensions.NewUUIDType(),
			gen: func(r *rand.Rand) any {
				var u uuid.UUID
				for i := range u {
					u[i] = byte(r.IntN(4))
				}
				return u
			},
			append: func(b array.Builder, v any) { b.(*extensions.UUIDBuilder).Append(v.(uuid.UUID)) },
			cmp:    func(a, b any) int { ua, ub := a.(uuid.UUID), b.(uuid.UUID); return bytes.Compare(ua[:], ub[:]) },
		},
	}
}

// buildRecord generates n rows for specs (about 15% nulls) and returns the record and the Go
// values (nil for null) per column.
func buildRecord(t testing.TB, r *rand.Rand, specs []colSpec, n int) (arrow.RecordBatch, [][]any) {
	t.Helper()
	fields := make([]arrow.Field, len(specs))
	for i, s := range specs {
		fields[i] = arrow.Field{Name: s.name, Type: s.typ, Nullable: true}
	}
	schema := arrow.NewSchema(fields, nil)
	b := array.NewRecordBuilder(memory.NewGoAllocator(), schema)
	defer b.Release()
	vals := make([][]any, len(specs))
	for i, s := range specs {
		vals[i] = make([]any, n)
		fb := b.Field(i)
		for row := range n {
			if r.IntN(100) < 15 {
				fb.AppendNull()
				continue
			}
			v := s.gen(r)
			vals[i][row] = v
			s.append(fb, v)
		}
	}
	rec := b.NewRecordBatch()
	t.Cleanup(rec.Release)
	return rec, vals
}

func sign(x int) int { return cmp.Compare(x, 0) }

// TestSortKeyMatchesComparator is the property test of the sort encoding: for random rows
// over every supported type, with nulls and both directions and nulls orders, comparing keys
// with bytes.Compare agrees with a direct comparator on every pair of rows.
func TestSortKeyMatchesComparator(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	specs := allTypeSpecs()
	const rows = 160
	rec, vals := buildRecord(t, r, specs, rows)

	// One column at a time, every direction and nulls order.
	for ci, s := range specs {
		for _, dir := range []layout.Column{{}, {Desc: true}, {NullsLast: true}, {Desc: true, NullsLast: true}} {
			dir.Name = s.name
			t.Run(fmt.Sprintf("col=%s,desc=%t,nullslast=%t", s.name, dir.Desc, dir.NullsLast), func(t *testing.T) {
				checkSortPairs(t, rec, specs, vals, []int{ci}, []layout.Column{dir}, rows)
			})
		}
	}
	// Random multi-column keys.
	for trial := range 40 {
		k := 2 + r.IntN(3)
		idx := r.Perm(len(specs))[:k]
		cols := make([]layout.Column, k)
		for i, ci := range idx {
			cols[i] = layout.Column{Name: specs[ci].name, Desc: r.IntN(2) == 1, NullsLast: r.IntN(2) == 1}
		}
		t.Run(fmt.Sprintf("trial=%d", trial), func(t *testing.T) {
			checkSortPairs(t, rec, specs, vals, idx, cols, rows)
		})
	}
}

func checkSortPairs(t *testing.T, rec arrow.RecordBatch, specs []colSpec, vals [][]any, idx []int, cols []layout.Column, rows int) {
	t.Helper()
	l := layout.Layout{Strategy: layout.StrategySort, Columns: cols}
	enc, err := layout.NewEncoder(l, rec.Schema(), layout.EncoderOptions{})
	require.NoError(t, err)
	keys := make([][]byte, rows)
	for row := range rows {
		keys[row], err = enc.AppendKey(nil, rec, row)
		require.NoError(t, err)
	}
	ref := func(x, y int) int {
		for i, ci := range idx {
			a, b := vals[ci][x], vals[ci][y]
			var c int
			switch {
			case a == nil && b == nil:
				c = 0
			case a == nil:
				c = -1
				if cols[i].NullsLast {
					c = 1
				}
			case b == nil:
				c = 1
				if cols[i].NullsLast {
					c = -1
				}
			default:
				c = specs[ci].cmp(a, b)
				if cols[i].Desc {
					c = -c
				}
			}
			if c != 0 {
				return c
			}
		}
		return 0
	}
	for x := range rows {
		for y := range rows {
			want := sign(ref(x, y))
			got := sign(bytes.Compare(keys[x], keys[y]))
			if got != want {
				require.Failf(t, "key order differs from comparator", "layout %s rows %d/%d: values %v vs %v: keys %x vs %x: got %d want %d",
					l, x, y, rowVals(vals, idx, x), rowVals(vals, idx, y), keys[x], keys[y], got, want)
			}
		}
	}
}

func rowVals(vals [][]any, idx []int, row int) []any {
	out := make([]any, len(idx))
	for i, ci := range idx {
		out[i] = vals[ci][row]
	}
	return out
}

func TestSortKeyExactBytes(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 4))
	specs := []colSpec{allTypeSpecs()[3], allTypeSpecs()[15]} // i64, str
	rec, vals := buildRecord(t, r, specs, 50)
	enc, err := layout.NewEncoder(layout.Layout{Strategy: layout.StrategySort, Columns: []layout.Column{
		{Name: "I64"}, {Name: "str", Desc: true, NullsLast: true},
	}}, rec.Schema(), layout.EncoderOptions{})
	require.NoError(t, err)
	require.Equal(t, []string{"i64", "str"}, enc.KeyColumns())
	for row := range 50 {
		var want []byte
		if v := vals[0][row]; v == nil {
			want = append(want, 0x00)
		} else {
			want = append(want, 0x01)
			want = append(want, bigEndian(uint64(v.(int64))^1<<63)...)
		}
		if v := vals[1][row]; v == nil {
			want = append(want, 0xFF)
		} else {
			part := []byte{0x01}
			for _, c := range []byte(v.(string)) {
				part = append(part, c)
				if c == 0 {
					part = append(part, 0xFF)
				}
			}
			part = append(part, 0, 0)
			for i := range part {
				part[i] = ^part[i]
			}
			want = append(want, part...)
		}
		prefix := []byte("keep")
		got, err := enc.AppendKey(prefix, rec, row)
		require.NoError(t, err)
		require.Equal(t, append([]byte("keep"), want...), got, "row %d", row)
	}
}

func bigEndian(u uint64) []byte {
	b := make([]byte, 8)
	for i := range 8 {
		b[i] = byte(u >> (56 - 8*i))
	}
	return b
}

func TestNewEncoderErrors(t *testing.T) {
	schema := arrow.NewSchema([]arrow.Field{
		{Name: "a", Type: arrow.PrimitiveTypes.Int64},
		{Name: "Amount", Type: &arrow.Decimal128Type{Precision: 10, Scale: 2}},
		{Name: "ts", Type: &arrow.TimestampType{Unit: arrow.Microsecond}},
		{Name: "t", Type: arrow.FixedWidthTypes.Time64us},
		{Name: "l", Type: arrow.ListOf(arrow.PrimitiveTypes.Int64)},
		{Name: "x", Type: arrow.PrimitiveTypes.Int64},
		{Name: "X", Type: arrow.PrimitiveTypes.Int64},
		{Name: "Ab", Type: arrow.PrimitiveTypes.Int64},
		{Name: "aB", Type: arrow.PrimitiveTypes.Int64},
	}, nil)
	tests := []struct {
		name   string
		layout string
		opts   layout.EncoderOptions
		is     error
		msg    string
	}{
		{"missing column", "sort(a, nope, zip)", layout.EncoderOptions{}, layout.ErrColumnNotFound, `"nope" (schema has a, Amount, ts, t, l, x, X, Ab, aB)`},
		{"exact match wins", "sort(a, X, Ab)", layout.EncoderOptions{}, nil, ""},
		{"ambiguous case-insensitive", "sort(ab)", layout.EncoderOptions{}, nil, `column "ab" is ambiguous: "Ab" and "aB" both match`},
		{"list in sort", "sort(l)", layout.EncoderOptions{}, layout.ErrUnsupportedType, `column "l": unsupported column type: list`},
		{"decimal in iceberg zorder", "zorder(a, amount)", layout.EncoderOptions{}, layout.ErrUnsupportedType, "use rank z-order (ZOrderRank)"},
		{"ntz in iceberg zorder", "zorder(a, ts)", layout.EncoderOptions{}, nil, ""},
		{"time in iceberg zorder", "zorder(a, t)", layout.EncoderOptions{}, layout.ErrUnsupportedType, "time64[us] is not one of the types"},
		{"nulls last in iceberg zorder", "zorder(a nulls last, x)", layout.EncoderOptions{}, nil, "nulls last cannot be expressed in Iceberg-exact z-order"},
		{"rank without quantiles", "zorder(a, x)", layout.EncoderOptions{ZOrderMode: layout.ZOrderRank}, nil, "needs EncoderOptions.Quantiles"},
		{"hilbert without quantiles", "hilbert(a, x)", layout.EncoderOptions{}, nil, "needs EncoderOptions.Quantiles"},
		{"negative var length", "zorder(a, x)", layout.EncoderOptions{VarLengthContribution: -1}, nil, "must not be negative"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			l, err := layout.Parse(tt.layout)
			require.NoError(t, err)
			_, err = layout.NewEncoder(l, schema, tt.opts)
			if tt.msg == "" {
				require.NoError(t, err)
				return
			}
			require.ErrorContains(t, err, tt.msg)
			if tt.is != nil {
				require.ErrorIs(t, err, tt.is)
			}
		})
	}
	t.Run("invalid layout", func(t *testing.T) {
		_, err := layout.NewEncoder(layout.Layout{Strategy: layout.StrategyZOrder, Columns: []layout.Column{{Name: "a"}}}, schema, layout.EncoderOptions{})
		require.ErrorIs(t, err, layout.ErrInvalidLayout)
	})
}

func TestAppendKeyRejectsForeignRecords(t *testing.T) {
	r := rand.New(rand.NewPCG(5, 6))
	specs := allTypeSpecs()
	rec, _ := buildRecord(t, r, specs[:4], 10) // i8, i16, i32, i64
	other, _ := buildRecord(t, r, []colSpec{specs[4], specs[5], specs[6], specs[7]}, 10)
	enc, err := layout.NewEncoder(layout.Layout{Strategy: layout.StrategySort, Columns: []layout.Column{{Name: "i64"}}}, rec.Schema(), layout.EncoderOptions{})
	require.NoError(t, err)

	_, err = enc.AppendKey(nil, other, 0)
	require.ErrorIs(t, err, layout.ErrSchemaMismatch)
	_, err = enc.AppendKey(nil, rec, 10)
	require.ErrorIs(t, err, layout.ErrSchemaMismatch)
	_, err = enc.AppendKey(nil, rec, -1)
	require.ErrorIs(t, err, layout.ErrSchemaMismatch)
	_, err = enc.AppendKey(nil, nil, 0)
	require.ErrorIs(t, err, layout.ErrSchemaMismatch)

	// A record with an equal but distinct schema is accepted.
	same := array.NewRecordBatch(arrow.NewSchema(rec.Schema().Fields(), nil), rec.Columns(), rec.NumRows())
	defer same.Release()
	k1, err := enc.AppendKey(nil, rec, 3)
	require.NoError(t, err)
	k2, err := enc.AppendKey(nil, same, 3)
	require.NoError(t, err)
	require.Equal(t, k1, k2)

	// Once a schema has passed, the encoder remembers it, yet still checks
	// the rows of its records and rejects every other schema.
	_, err = enc.AppendKey(nil, same, 10)
	require.ErrorIs(t, err, layout.ErrSchemaMismatch)
	_, err = enc.AppendKey(nil, other, 0)
	require.ErrorIs(t, err, layout.ErrSchemaMismatch)
	k3, err := enc.AppendKey(nil, same, 3)
	require.NoError(t, err)
	require.Equal(t, k1, k3)
}

func TestBinpackAndCurrentKeysAreEmpty(t *testing.T) {
	r := rand.New(rand.NewPCG(7, 8))
	rec, _ := buildRecord(t, r, allTypeSpecs()[:2], 5)
	for _, s := range []string{"binpack", "current"} {
		t.Run(s, func(t *testing.T) {
			l, err := layout.Parse(s)
			require.NoError(t, err)
			enc, err := layout.NewEncoder(l, rec.Schema(), layout.EncoderOptions{})
			require.NoError(t, err)
			require.Empty(t, enc.KeyColumns())
			k, err := enc.AppendKey([]byte{9}, rec, 4)
			require.NoError(t, err)
			require.Equal(t, []byte{9}, k)
			_, err = enc.AppendKey(nil, rec, 5)
			require.ErrorIs(t, err, layout.ErrSchemaMismatch)
		})
	}
}

// FuzzSortKey checks the sort encoding on two arbitrary (int64, string, float64) rows against
// the comparator, in the direction and nulls order the fuzzer picks.
func FuzzSortKey(f *testing.F) {
	f.Add(int64(1), "a", 1.5, int64(1), "a\x00", -0.0, uint8(0))
	f.Add(int64(-1), "", math.NaN(), int64(0), "\x00", math.Inf(1), uint8(7))
	f.Add(int64(math.MinInt64), "ab", 0.0, int64(math.MaxInt64), "a", math.Copysign(0, -1), uint8(3))
	f.Fuzz(func(t *testing.T, i1 int64, s1 string, f1 float64, i2 int64, s2 string, f2 float64, flags uint8) {
		schema := arrow.NewSchema([]arrow.Field{
			{Name: "i", Type: arrow.PrimitiveTypes.Int64, Nullable: true},
			{Name: "s", Type: arrow.BinaryTypes.String, Nullable: true},
			{Name: "f", Type: arrow.PrimitiveTypes.Float64, Nullable: true},
		}, nil)
		b := array.NewRecordBuilder(memory.NewGoAllocator(), schema)
		defer b.Release()
		b.Field(0).(*array.Int64Builder).AppendValues([]int64{i1, i2}, []bool{flags&64 == 0, true})
		b.Field(1).(*array.StringBuilder).AppendValues([]string{s1, s2}, []bool{true, flags&128 == 0})
		b.Field(2).(*array.Float64Builder).AppendValues([]float64{f1, f2}, nil)
		rec := b.NewRecordBatch()
		defer rec.Release()
		cols := []layout.Column{
			{Name: "i", Desc: flags&1 != 0, NullsLast: flags&2 != 0},
			{Name: "s", Desc: flags&4 != 0, NullsLast: flags&8 != 0},
			{Name: "f", Desc: flags&16 != 0, NullsLast: flags&32 != 0},
		}
		enc, err := layout.NewEncoder(layout.Layout{Strategy: layout.StrategySort, Columns: cols}, schema, layout.EncoderOptions{})
		require.NoError(t, err)
		k1, err := enc.AppendKey(nil, rec, 0)
		require.NoError(t, err)
		k2, err := enc.AppendKey(nil, rec, 1)
		require.NoError(t, err)
		nulls := [][2]bool{{flags&64 != 0, false}, {false, flags&128 != 0}, {false, false}}
		cmps := []int{cmp.Compare(i1, i2), cmp.Compare(s1, s2), cmpFloat(f1, f2)}
		want := 0
		for c := range cols {
			var r int
			switch n := nulls[c]; {
			case n[0] && n[1]:
			case n[0] || n[1]:
				r = 1
				if n[0] != cols[c].NullsLast {
					r = -1
				}
			default:
				r = cmps[c]
				if cols[c].Desc {
					r = -r
				}
			}
			if r != 0 {
				want = r
				break
			}
		}
		require.Equal(t, want, sign(bytes.Compare(k1, k2)), "keys %x %x", k1, k2)
	})
}

func TestZOrderModeText(t *testing.T) {
	for in, want := range map[string]layout.ZOrderMode{
		"": layout.ZOrderIcebergExact, "Iceberg-Exact": layout.ZOrderIcebergExact, "iceberg": layout.ZOrderIcebergExact,
		"exact": layout.ZOrderIcebergExact, " RANK ": layout.ZOrderRank,
	} {
		got, err := layout.ParseZOrderMode(in)
		require.NoError(t, err, in)
		require.Equal(t, want, got, in)
	}
	_, err := layout.ParseZOrderMode("hilbert")
	require.EqualError(t, err, `unknown z-order mode "hilbert" (want iceberg-exact or rank)`)

	var cfg struct {
		Mode layout.ZOrderMode `json:"mode"`
	}
	require.NoError(t, json.Unmarshal([]byte(`{"mode":"rank"}`), &cfg))
	require.Equal(t, layout.ZOrderRank, cfg.Mode)
	out, err := json.Marshal(cfg)
	require.NoError(t, err)
	require.JSONEq(t, `{"mode":"rank"}`, string(out))
	require.Error(t, json.Unmarshal([]byte(`{"mode":"curvy"}`), &cfg))
	_, err = layout.ZOrderMode(7).MarshalText()
	require.Error(t, err)
	require.Equal(t, "ZOrderMode(7)", layout.ZOrderMode(7).String())
}
