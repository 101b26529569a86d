package pqdict_test

import (
	"encoding/binary"
	"fmt"
	"math/rand/v2"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/decimal128"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/stretchr/testify/require"

	"github.com/floe-project/floe/internal/pqdict"
)

func TestScaledDistinctRatio(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	ints := func(n int, domain int64) *array.Int64 {
		b := array.NewInt64Builder(memory.DefaultAllocator)
		defer b.Release()
		for range n {
			b.Append(rng.Int64N(domain))
		}
		return b.NewInt64Array()
	}
	tests := []struct {
		name     string
		n        int
		domain   int64
		rows     int64
		min, max float64
	}{
		// 2,500 values look unique in 2,000 rows, but a 100k-row row group repeats them.
		{name: "bounded domain scaled up", n: 2000, domain: 2500, rows: 100_000, min: 0.01, max: 0.3},
		{name: "bounded domain at batch scale", n: 2000, domain: 2500, rows: 2000, min: 0.5, max: 0.8},
		// A key-like column stays unique at any scale.
		{name: "unique keys", n: 2000, domain: 1 << 60, rows: 100_000, min: 0.95, max: 1},
		{name: "few values", n: 2000, domain: 7, rows: 100_000, min: 0, max: 0.01},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			arr := ints(tc.n, tc.domain)
			defer arr.Release()
			r, ok := pqdict.ScaledDistinctRatio(arr, tc.rows)
			require.True(t, ok)
			require.GreaterOrEqual(t, r, tc.min)
			require.LessOrEqual(t, r, tc.max)
		})
	}
}

// TestScaledDistinctRatioCountsValues checks that every type is counted by
// its values: the ratio of a column is the ratio of its printed values, for
// whole and sliced arrays, with nulls, and for a dictionary array whose
// dictionary repeats no value but whose indices do.
func TestScaledDistinctRatioCountsValues(t *testing.T) {
	mem := memory.NewCheckedAllocator(memory.DefaultAllocator)
	defer mem.AssertSize(t, 0)
	rng := rand.New(rand.NewPCG(3, 4))
	const n = 4000
	vals := make([]int64, n)
	for i := range vals {
		vals[i] = rng.Int64N(1500) - 700 // a bounded domain: values repeat
	}
	null := func(i int) bool { return i%9 == 4 }
	build := func(b array.Builder, put func(i int)) arrow.Array {
		defer b.Release()
		for i := range n {
			if null(i) {
				b.AppendNull()
			} else {
				put(i)
			}
		}
		return b.NewArray()
	}
	dec := &arrow.Decimal128Type{Precision: 12, Scale: 2}
	fsb := &arrow.FixedSizeBinaryType{ByteWidth: 8}
	ts := &arrow.TimestampType{Unit: arrow.Microsecond}
	columns := map[string]func() arrow.Array{
		"int32": func() arrow.Array {
			b := array.NewInt32Builder(mem)
			return build(b, func(i int) { b.Append(int32(vals[i])) })
		},
		"int64": func() arrow.Array {
			b := array.NewInt64Builder(mem)
			return build(b, func(i int) { b.Append(vals[i] << 40) })
		},
		"float64": func() arrow.Array {
			b := array.NewFloat64Builder(mem)
			return build(b, func(i int) { b.Append(float64(vals[i]) / 8) })
		},
		"decimal128": func() arrow.Array {
			b := array.NewDecimal128Builder(mem, dec)
			return build(b, func(i int) { b.Append(decimal128.FromI64(vals[i] * 1001)) })
		},
		"date32": func() arrow.Array {
			b := array.NewDate32Builder(mem)
			return build(b, func(i int) { b.Append(arrow.Date32(vals[i] + 9000)) })
		},
		"timestamp": func() arrow.Array {
			b := array.NewTimestampBuilder(mem, ts)
			return build(b, func(i int) { b.Append(arrow.Timestamp(vals[i] * 1_000_003)) })
		},
		"fixed_size_binary": func() arrow.Array {
			b := array.NewFixedSizeBinaryBuilder(mem, fsb)
			return build(b, func(i int) { b.Append(binary.BigEndian.AppendUint64(nil, uint64(vals[i]))) })
		},
		"binary": func() arrow.Array {
			b := array.NewBinaryBuilder(mem, arrow.BinaryTypes.Binary)
			return build(b, func(i int) { b.Append(fmt.Appendf(nil, "b%d", vals[i])) })
		},
		"large_string": func() arrow.Array {
			b := array.NewLargeStringBuilder(mem)
			return build(b, func(i int) { b.Append(fmt.Sprintf("s%d", vals[i])) })
		},
		"dictionary": func() arrow.Array {
			b := array.NewDictionaryBuilder(mem, &arrow.DictionaryType{IndexType: arrow.PrimitiveTypes.Int32, ValueType: arrow.BinaryTypes.String}).(*array.BinaryDictionaryBuilder)
			return build(b, func(i int) { _ = b.AppendString(fmt.Sprintf("d%d", vals[i]%40)) })
		},
	}
	for name, column := range columns {
		t.Run(name, func(t *testing.T) {
			arr := column()
			defer arr.Release()
			sliced := array.NewSlice(arr, 37, 3037)
			defer sliced.Release()
			for _, a := range []arrow.Array{arr, sliced} {
				printed := printedValues(mem, a)
				for _, rows := range []int64{int64(a.Len()), 100_000} {
					got, ok := pqdict.ScaledDistinctRatio(a, rows)
					require.True(t, ok)
					want, ok := pqdict.ScaledDistinctRatio(printed, rows)
					require.True(t, ok)
					require.InDelta(t, want, got, 1e-12, "%d of %d rows, at a row group of %d", a.Len(), arr.Len(), rows)
				}
				printed.Release()
			}
		})
	}
}

// printedValues returns a's values as strings (ValueStr), nulls kept.
func printedValues(mem memory.Allocator, a arrow.Array) arrow.Array {
	b := array.NewStringBuilder(mem)
	defer b.Release()
	for i := range a.Len() {
		if a.IsNull(i) {
			b.AppendNull()
		} else {
			b.Append(a.ValueStr(i))
		}
	}
	return b.NewArray()
}
