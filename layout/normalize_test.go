package layout_test

import (
	"encoding/json"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/stretchr/testify/require"

	"github.com/floe-project/floe/layout"
)

// int64Record builds a record with one nullable int64 column per name; nil entries are nulls.
func int64Record(t testing.TB, names []string, cols ...[]*int64) arrow.RecordBatch {
	t.Helper()
	fields := make([]arrow.Field, len(names))
	for i, n := range names {
		fields[i] = arrow.Field{Name: n, Type: arrow.PrimitiveTypes.Int64, Nullable: true}
	}
	b := array.NewRecordBuilder(memory.NewGoAllocator(), arrow.NewSchema(fields, nil))
	defer b.Release()
	for i, col := range cols {
		fb := b.Field(i).(*array.Int64Builder)
		for _, v := range col {
			if v == nil {
				fb.AppendNull()
			} else {
				fb.Append(*v)
			}
		}
	}
	rec := b.NewRecordBatch()
	t.Cleanup(rec.Release)
	return rec
}

func ints(vs ...int64) []*int64 {
	out := make([]*int64, len(vs))
	for i := range vs {
		out[i] = &vs[i]
	}
	return out
}

func span(lo, hi int64) []*int64 {
	var vs []int64
	for v := lo; v < hi; v++ {
		vs = append(vs, v)
	}
	return ints(vs...)
}

func TestFitQuantilesUniform(t *testing.T) {
	rec := int64Record(t, []string{"a"}, span(0, 1000))
	q, err := layout.FitQuantiles([]arrow.RecordBatch{rec}, []string{"A"}, 10)
	require.NoError(t, err)
	require.Equal(t, []string{"a"}, q.Columns())
	n, ok := q.Buckets("a")
	require.True(t, ok)
	require.Equal(t, 10, n)
	probe := int64Record(t, []string{"a"}, append(ints(-5, 0, 99, 100, 101, 550, 899, 900, 999, 5000), nil))
	want := []int{0, 0, 0, 1, 1, 5, 8, 9, 9, 9}
	for row, w := range want {
		got, null, err := q.Bucket("a", probe, row)
		require.NoError(t, err)
		require.False(t, null)
		require.Equal(t, w, got, "row %d", row)
	}
	_, null, err := q.Bucket("a", probe, len(want))
	require.NoError(t, err)
	require.True(t, null)
}

func TestFitQuantilesTiesAndNulls(t *testing.T) {
	// 900 copies of 7, plus 0…99 and 50 nulls: the heavy value gets a single bucket.
	var vals []*int64
	for range 900 {
		vals = append(vals, ints(7)...)
	}
	vals = append(vals, span(0, 100)...)
	for range 50 {
		vals = append(vals, nil)
	}
	rec := int64Record(t, []string{"a"}, vals)
	// Split the sample in two records to exercise multi-record fitting.
	q, err := layout.FitQuantiles([]arrow.RecordBatch{rec.NewSlice(0, 500), rec.NewSlice(500, rec.NumRows())}, []string{"a"}, 20)
	require.NoError(t, err)
	// Sorted, the sample is 0…6, 901 sevens, 8…99: the rank boundaries 50, 100, … 900 are all
	// 7 and collapse into one; rank 950 is 50. So the buckets are [min,7) [7,50) [50,max].
	n, _ := q.Buckets("a")
	require.Equal(t, 3, n, "equal boundaries collapse")
	probe := int64Record(t, []string{"a"}, ints(6, 7, 8, 49, 50, 99))
	var got []int
	for row := range 6 {
		b, null, err := q.Bucket("a", probe, row)
		require.NoError(t, err)
		require.False(t, null)
		got = append(got, b)
	}
	require.Equal(t, []int{0, 1, 1, 1, 2, 2}, got)
}

func TestFitQuantilesEdgeCases(t *testing.T) {
	allNull := int64Record(t, []string{"a", "b"}, []*int64{nil, nil}, ints(1, 2))
	q, err := layout.FitQuantiles([]arrow.RecordBatch{allNull}, []string{"a", "b"}, 0)
	require.NoError(t, err)
	n, _ := q.Buckets("a")
	require.Equal(t, 1, n, "no non-null values: one bucket")
	n, _ = q.Buckets("b")
	require.Equal(t, 2, n)
	_, ok := q.Buckets("zzz")
	require.False(t, ok)

	str := func() arrow.RecordBatch {
		b := array.NewRecordBuilder(memory.NewGoAllocator(), arrow.NewSchema([]arrow.Field{{Name: "a", Type: arrow.BinaryTypes.String}}, nil))
		defer b.Release()
		b.Field(0).(*array.StringBuilder).AppendValues([]string{"x", "y"}, nil)
		rec := b.NewRecordBatch()
		t.Cleanup(rec.Release)
		return rec
	}()
	tests := []struct {
		name    string
		samples []arrow.RecordBatch
		cols    []string
		buckets int
		msg     string
	}{
		{"too many buckets", []arrow.RecordBatch{allNull}, []string{"a"}, layout.MaxQuantileBuckets + 1, "buckets 65537 out of range"},
		{"negative buckets", []arrow.RecordBatch{allNull}, []string{"a"}, -1, "out of range"},
		{"no columns", []arrow.RecordBatch{allNull}, nil, 4, "no columns"},
		{"no samples", nil, []string{"a"}, 4, "no sample records"},
		{"missing column", []arrow.RecordBatch{allNull}, []string{"a", "c"}, 4, `column not found: "c"`},
		{"duplicate column", []arrow.RecordBatch{allNull}, []string{"a", "A"}, 4, `duplicate column "A"`},
		{"types differ between samples", []arrow.RecordBatch{allNull, str}, []string{"a"}, 4, `column "a" is utf8 in sample 1 but int64 in sample 0`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := layout.FitQuantiles(tt.samples, tt.cols, tt.buckets)
			require.ErrorContains(t, err, tt.msg)
		})
	}

	t.Run("bucket of a record with another type", func(t *testing.T) {
		_, _, err := q.Bucket("b", str, 0)
		require.ErrorIs(t, err, layout.ErrColumnNotFound)
		strAsA := str
		_, _, err = q.Bucket("a", strAsA, 0)
		require.ErrorIs(t, err, layout.ErrSchemaMismatch)
		_, _, err = q.Bucket("b", allNull, 2)
		require.ErrorIs(t, err, layout.ErrSchemaMismatch)
	})
}

func TestEncoderRejectsQuantilesOfAnotherType(t *testing.T) {
	rec := int64Record(t, []string{"a", "b"}, span(0, 10), span(0, 10))
	q, err := layout.FitQuantiles([]arrow.RecordBatch{rec}, []string{"a", "b"}, 4)
	require.NoError(t, err)
	schema := arrow.NewSchema([]arrow.Field{{Name: "a", Type: arrow.PrimitiveTypes.Int32}, {Name: "b", Type: arrow.PrimitiveTypes.Int64}, {Name: "c", Type: arrow.PrimitiveTypes.Int64}}, nil)
	l, err := layout.Parse("hilbert(a, b, c)")
	require.NoError(t, err)
	_, err = layout.NewEncoder(l, schema, layout.EncoderOptions{Quantiles: q})
	require.ErrorContains(t, err, `quantiles of column "a" were fitted on int64, schema has int32`)
	require.ErrorContains(t, err, `no quantiles for column "c"`)
}

func TestFitQuantilesStrings(t *testing.T) {
	build := func(vals []string) arrow.RecordBatch {
		b := array.NewRecordBuilder(memory.NewGoAllocator(), arrow.NewSchema([]arrow.Field{{Name: "s", Type: arrow.BinaryTypes.String}}, nil))
		defer b.Release()
		b.Field(0).(*array.StringBuilder).AppendValues(vals, nil)
		rec := b.NewRecordBatch()
		t.Cleanup(rec.Release)
		return rec
	}
	var sample []string
	for c := 'a'; c <= 'z'; c++ {
		for range 10 {
			sample = append(sample, string(c))
		}
	}
	q, err := layout.FitQuantiles([]arrow.RecordBatch{build(sample)}, []string{"s"}, 26)
	require.NoError(t, err)
	n, _ := q.Buckets("s")
	require.Equal(t, 26, n)
	probe := build([]string{"", "a", "a\x00", "az", "b", "m", "mm", "z", "zzz"})
	want := []int{0, 0, 0, 0, 1, 12, 12, 25, 25}
	for row, w := range want {
		got, _, err := q.Bucket("s", probe, row)
		require.NoError(t, err)
		require.Equal(t, w, got, "row %d", row)
	}
}

func TestQuantilesRoundTripJSON(t *testing.T) {
	rec := int64Record(t, []string{"a", "b"}, span(0, 1000), append(span(0, 999), nil))
	q, err := layout.FitQuantiles([]arrow.RecordBatch{rec}, []string{"a", "b"}, 16)
	require.NoError(t, err)
	data, err := json.Marshal(q)
	require.NoError(t, err)

	loaded, err := layout.UnmarshalQuantiles(data, rec.Schema())
	require.NoError(t, err)
	require.Equal(t, q.Columns(), loaded.Columns())
	l, err := layout.Parse("hilbert(a, b)")
	require.NoError(t, err)
	e1, err := layout.NewEncoder(l, rec.Schema(), layout.EncoderOptions{Quantiles: q})
	require.NoError(t, err)
	e2, err := layout.NewEncoder(l, rec.Schema(), layout.EncoderOptions{Quantiles: loaded})
	require.NoError(t, err)
	for row := range int(rec.NumRows()) {
		k1, err := e1.AppendKey(nil, rec, row)
		require.NoError(t, err)
		k2, err := e2.AppendKey(nil, rec, row)
		require.NoError(t, err)
		require.Equal(t, k1, k2)
	}

	t.Run("errors", func(t *testing.T) {
		other := arrow.NewSchema([]arrow.Field{{Name: "A", Type: arrow.PrimitiveTypes.Int32}}, nil)
		_, err := layout.UnmarshalQuantiles(data, other)
		require.ErrorContains(t, err, `column "a" was fitted as int64, schema has int32`)
		require.ErrorContains(t, err, `column not found: "b"`)
		_, err = layout.UnmarshalQuantiles([]byte(`{"columns":[]}`), rec.Schema())
		require.ErrorContains(t, err, "no columns")
		_, err = layout.UnmarshalQuantiles([]byte(`{`), rec.Schema())
		require.ErrorContains(t, err, "load quantiles")
		fp := arrow.PrimitiveTypes.Int64.Fingerprint()
		bad := `{"columns":[{"name":"a","type":"int64","fingerprint":"` + fp + `","bounds":["AAAAAAAAAAI=","AAAAAAAAAAE="]}]}`
		_, err = layout.UnmarshalQuantiles([]byte(bad), rec.Schema())
		require.ErrorContains(t, err, "not increasing")
		short := `{"columns":[{"name":"a","type":"int64","fingerprint":"` + fp + `","bounds":["AAE="]}]}`
		_, err = layout.UnmarshalQuantiles([]byte(short), rec.Schema())
		require.ErrorContains(t, err, "a boundary of 2 bytes for a 8-byte type")
	})
}

// FuzzUnmarshalQuantiles feeds arbitrary plan-file content to UnmarshalQuantiles: it must
// fail cleanly or yield quantiles that encode keys without error.
func FuzzUnmarshalQuantiles(f *testing.F) {
	rec := int64Record(f, []string{"a", "b"}, span(0, 50), span(0, 50))
	q, err := layout.FitQuantiles([]arrow.RecordBatch{rec}, []string{"a", "b"}, 8)
	require.NoError(f, err)
	good, err := json.Marshal(q)
	require.NoError(f, err)
	f.Add(good)
	f.Add([]byte(`{"columns":[{"name":"a","fingerprint":"x","bounds":[]}]}`))
	f.Add([]byte(`{"columns":null}`))
	l, err := layout.Parse("zorder(a, b)")
	require.NoError(f, err)
	f.Fuzz(func(t *testing.T, data []byte) {
		loaded, err := layout.UnmarshalQuantiles(data, rec.Schema())
		if err != nil {
			return
		}
		enc, err := layout.NewEncoder(l, rec.Schema(), layout.EncoderOptions{ZOrderMode: layout.ZOrderRank, Quantiles: loaded})
		if err != nil {
			return // e.g. only one of the two columns persisted
		}
		for row := range int(rec.NumRows()) {
			_, err := enc.AppendKey(nil, rec, row)
			require.NoError(t, err)
		}
	})
}

func BenchmarkFitQuantiles(b *testing.B) {
	rec := benchRecord(b, 100_000)
	b.ReportAllocs()
	n := 0
	for b.Loop() {
		_, err := layout.FitQuantiles([]arrow.RecordBatch{rec}, []string{"shipdate", "orderkey", "shipmode"}, layout.DefaultQuantileBuckets)
		if err != nil {
			b.Fatal(err)
		}
		n++
	}
	b.ReportMetric(float64(n)*float64(rec.NumRows())*3/b.Elapsed().Seconds(), "values/s")
}
