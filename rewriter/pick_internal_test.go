package rewriter

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/decimal128"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/apache/arrow-go/v18/parquet"
	"github.com/apache/arrow-go/v18/parquet/compress"
	"github.com/apache/arrow-go/v18/parquet/pqarrow"
	"github.com/stretchr/testify/require"
)

// pickSchema has a column of every kind writePicked treats apart: gathered
// into the scratch (strings dense and dictionary-encoded, large strings,
// fixed widths of 4, 8, 3 and 16 bytes, the last two converted by pqarrow)
// and gathered into a new array (booleans, and a column with nulls in one
// source).
var pickSchema = arrow.NewSchema([]arrow.Field{
	{Name: "comment", Type: arrow.BinaryTypes.String},
	{Name: "mode", Type: arrow.BinaryTypes.String},
	{Name: "flag", Type: arrow.BinaryTypes.LargeString},
	{Name: "key", Type: arrow.PrimitiveTypes.Int64},
	{Name: "qty", Type: arrow.PrimitiveTypes.Int32},
	{Name: "price", Type: arrow.PrimitiveTypes.Float64},
	{Name: "day", Type: arrow.FixedWidthTypes.Date32},
	{Name: "fsb", Type: &arrow.FixedSizeBinaryType{ByteWidth: 3}},
	{Name: "dec", Type: &arrow.Decimal128Type{Precision: 20, Scale: 2}},
	{Name: "ok", Type: arrow.FixedWidthTypes.Boolean},
	{Name: "maybe", Type: arrow.PrimitiveTypes.Int64, Nullable: true},
}, nil)

func pickTestBatch(mem memory.Allocator, rnd *rand.Rand, n int, nulls bool) arrow.RecordBatch {
	b := array.NewRecordBuilder(mem, pickSchema)
	defer b.Release()
	modes := []string{"AIR", "MAIL", "RAIL", "SHIP", "TRUCK"}
	for i := range n {
		b.Field(0).(*array.StringBuilder).Append(fmt.Sprintf("c%d-%s", rnd.IntN(1<<20), string(make([]byte, rnd.IntN(30)))))
		b.Field(1).(*array.StringBuilder).Append(modes[rnd.IntN(len(modes))])
		b.Field(2).(*array.LargeStringBuilder).Append([]string{"A", "N", "R"}[rnd.IntN(3)])
		b.Field(3).(*array.Int64Builder).Append(rnd.Int64())
		b.Field(4).(*array.Int32Builder).Append(int32(1 + rnd.IntN(50)))
		b.Field(5).(*array.Float64Builder).Append(rnd.Float64() * 1000)
		b.Field(6).(*array.Date32Builder).Append(arrow.Date32(9000 + rnd.IntN(300)))
		b.Field(7).(*array.FixedSizeBinaryBuilder).Append([]byte{byte(i), byte(rnd.IntN(256)), 2})
		b.Field(8).(*array.Decimal128Builder).Append(decimal128.FromI64(int64(rnd.IntN(100000)) - 500))
		b.Field(9).(*array.BooleanBuilder).Append(rnd.IntN(2) == 0)
		if nulls && rnd.IntN(4) == 0 {
			b.Field(10).AppendNull()
		} else {
			b.Field(10).(*array.Int64Builder).Append(int64(i))
		}
	}
	return b.NewRecordBatch()
}

// TestWritePickedMatchesGathered writes the same rows, picked at random from
// several sources, once as pickBatches and once copied into batches first
// (what the sorter did before), and requires byte-identical files: the
// scratch a column gathers into is an ordinary array to the encoder.
func TestWritePickedMatchesGathered(t *testing.T) {
	mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
	defer mem.AssertSize(t, 0)
	rnd := rand.New(rand.NewPCG(11, 12))
	var srcs []arrow.RecordBatch
	for i := range 6 {
		srcs = append(srcs, pickTestBatch(mem, rnd, 500+100*i, i == 2))
	}
	// Every row once, in chunks of 1 to 8 consecutive rows of one source
	// (a merge has such runs), the chunks shuffled.
	var chunks [][]rowRef
	for s, rec := range srcs {
		for lo := 0; lo < int(rec.NumRows()); {
			hi := min(lo+1+rnd.IntN(8), int(rec.NumRows()))
			var c []rowRef
			for r := lo; r < hi; r++ {
				c = append(c, rowRef{src: int32(s), row: int32(r)})
			}
			chunks = append(chunks, c)
			lo = hi
		}
	}
	rnd.Shuffle(len(chunks), func(i, j int) { chunks[i], chunks[j] = chunks[j], chunks[i] })
	var refs []rowRef
	for _, c := range chunks {
		refs = append(refs, c...)
	}
	var picks []*pickBatch
	for lo := 0; lo < len(refs); lo += 700 {
		part := refs[lo:min(lo+700, len(refs))]
		picks = append(picks, newPickBatch(pickSchema, srcs, appendSpans(nil, part), len(part)))
	}
	for _, s := range srcs {
		s.Release() // the picks hold what they need
	}

	props := parquet.NewWriterProperties(parquet.WithCompression(compress.Codecs.Zstd),
		parquet.WithDictionaryDefault(false), parquet.WithDictionaryFor("mode", true),
		parquet.WithDictionaryFor("flag", true), parquet.WithDictionaryFor("qty", true),
		parquet.WithDictionaryFor("day", true), parquet.WithDictionaryPageSizeLimit(1<<20),
		parquet.WithDataPageSize(8<<10), parquet.WithAllocator(mem), parquet.WithStats(true))
	arrProps := pqarrow.NewArrowWriterProperties(pqarrow.WithAllocator(mem), pqarrow.WithStoreSchema())
	var picked, gathered bytes.Buffer
	pf, err := newColumnFile(pickSchema, nopCloser{&picked}, props, arrProps, 3)
	require.NoError(t, err)
	gf, err := newColumnFile(pickSchema, nopCloser{&gathered}, props, arrProps, 3)
	require.NoError(t, err)
	for i, p := range picks {
		if i == 3 {
			require.NoError(t, pf.NewBufferedRowGroupChecked())
			require.NoError(t, gf.NewBufferedRowGroupChecked())
		}
		rec, err := p.record(t.Context(), mem, 2)
		require.NoError(t, err)
		require.NoError(t, gf.WriteBuffered(rec))
		rec.Release()
		require.NoError(t, pf.WritePicked(p))
		p.release()
	}
	require.NoError(t, pf.Close())
	require.NoError(t, gf.Close())

	used := 0
	for range cap(pf.scratch) {
		sc := <-pf.scratch
		if cap(sc.words) > 0 || cap(sc.data) > 0 {
			used++
		}
	}
	require.Positive(t, used, "columns were gathered into the scratch")
	require.True(t, bytes.Equal(gathered.Bytes(), picked.Bytes()), "picked rows make the same file (%d vs %d bytes)", picked.Len(), gathered.Len())
	requireSameParquet(t, mem, pickSchema, picked.Bytes(), gathered.Bytes())
}

// TestPickBatchSlice: slices name the right rows, hold their sources after
// the parent is released, and release everything in the end.
func TestPickBatchSlice(t *testing.T) {
	mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
	defer mem.AssertSize(t, 0)
	rnd := rand.New(rand.NewPCG(13, 14))
	a, b := pickTestBatch(mem, rnd, 50, false), pickTestBatch(mem, rnd, 50, false)
	srcs := []arrow.RecordBatch{a, b}
	spans := []span{{src: 1, row: 10, n: 5}, {src: 0, row: 3, n: 1}, {src: 1, row: 40, n: 10}}
	p := newPickBatch(pickSchema, srcs, spans, 16)
	keys := func(p *pickBatch) []int64 {
		rec, err := p.record(t.Context(), mem, 1)
		require.NoError(t, err)
		defer rec.Release()
		return append([]int64(nil), rec.Column(3).(*array.Int64).Int64Values()...)
	}
	all := keys(p)
	ka, kb := a.Column(3).(*array.Int64).Int64Values(), b.Column(3).(*array.Int64).Int64Values()
	want := append(append(append([]int64(nil), kb[10:15]...), ka[3]), kb[40:50]...)
	require.Equal(t, want, all)
	a.Release()
	b.Release()

	s := p.slice(4, 4) // the end of the first span, the single row, the start of the last
	require.Len(t, s.spans, 3)
	p.release()
	require.Equal(t, all[4:8], keys(s))
	two := s.slice(1, 2) // the single row and the start of the last span
	whole, ok := two.contiguous()
	two.release()
	require.False(t, ok)
	require.Nil(t, whole)
	tail := s.slice(3, 1)
	s.release()
	rec, ok := tail.contiguous()
	require.True(t, ok, "one span is a zero-copy slice")
	require.Equal(t, all[7:8], rec.Column(3).(*array.Int64).Int64Values())
	rec.Release()
	tail.release()
}

// sliceSource yields batches already in memory.
type sliceSource struct{ recs []arrow.RecordBatch }

func (s *sliceSource) next() (arrow.RecordBatch, error) {
	if len(s.recs) == 0 {
		return nil, nil
	}
	r := s.recs[0]
	s.recs = s.recs[1:]
	return r, nil
}

func (s *sliceSource) close() {
	for _, r := range s.recs {
		r.Release()
	}
	s.recs = nil
}

// TestMergerFillsBatches: merged batches are full however small the runs'
// batches are (they used to end at every used-up batch), in key order,
// stable, and nothing is leaked.
func TestMergerFillsBatches(t *testing.T) {
	mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
	defer mem.AssertSize(t, 0)
	sch := arrow.NewSchema([]arrow.Field{
		{Name: "run", Type: arrow.PrimitiveTypes.Int64},
		{Name: keyColumn, Type: arrow.BinaryTypes.Binary},
	}, nil)
	rnd := rand.New(rand.NewPCG(15, 16))
	const runs, perRun = 5, 200
	var srcs []batchSource
	for r := range runs {
		keys := make([]uint64, perRun)
		for i := range keys {
			keys[i] = uint64(rnd.IntN(300))
		}
		slices.Sort(keys)
		src := &sliceSource{}
		for lo := 0; lo < perRun; {
			hi := min(lo+1+rnd.IntN(7), perRun) // batches of 1 to 7 rows
			b := array.NewRecordBuilder(mem, sch)
			for _, k := range keys[lo:hi] {
				b.Field(0).(*array.Int64Builder).Append(int64(r))
				var kb [8]byte
				binary.BigEndian.PutUint64(kb[:], k)
				b.Field(1).(*array.BinaryBuilder).Append(kb[:])
			}
			src.recs = append(src.recs, b.NewRecordBatch())
			b.Release()
			lo = hi
		}
		srcs = append(srcs, src)
	}
	m, err := newMerger(t.Context(), srcs, 64, 2, mem)
	require.NoError(t, err)
	var sizes []int
	var lastKey uint64
	lastRun := int64(-1)
	for {
		p, err := m.nextPick()
		require.NoError(t, err)
		if p == nil {
			break
		}
		sizes = append(sizes, p.n)
		rec, err := p.record(t.Context(), mem, 2)
		require.NoError(t, err)
		p.release()
		run, keys := rec.Column(0).(*array.Int64), rec.Column(1).(*array.Binary)
		for i := range int(rec.NumRows()) {
			k := binary.BigEndian.Uint64(keys.Value(i))
			require.True(t, k > lastKey || (k == lastKey && run.Value(i) >= lastRun), "row %d out of order", i)
			lastKey, lastRun = k, run.Value(i)
		}
		rec.Release()
	}
	m.release()
	for _, s := range srcs {
		s.close()
	}
	total := 0
	for i, n := range sizes {
		total += n
		if i < len(sizes)-1 {
			require.Equal(t, 64, n, "batch %d of %v is full", i, sizes)
		}
	}
	require.Equal(t, runs*perRun, total)
}
