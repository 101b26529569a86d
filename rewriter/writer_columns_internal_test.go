package rewriter

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"math/rand/v2"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/apache/arrow-go/v18/parquet"
	"github.com/apache/arrow-go/v18/parquet/compress"
	"github.com/apache/arrow-go/v18/parquet/file"
	"github.com/apache/arrow-go/v18/parquet/pqarrow"
	"github.com/stretchr/testify/require"
)

// nopCloser gives a bytes.Buffer the Close a Parquet sink needs.
type nopCloser struct{ *bytes.Buffer }

func (nopCloser) Close() error { return nil }

// TestColumnFileMatchesPqarrow writes the same batches through columnFile
// (columns encoded in parallel) and pqarrow.FileWriter and requires the
// same rows read back and the same footer statistics, row group by row
// group and column by column.
func TestColumnFileMatchesPqarrow(t *testing.T) {
	mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
	defer mem.AssertSize(t, 0)
	sch := arrow.NewSchema(gatherSchema.Fields()[:9], nil) // flat columns only
	props := parquet.NewWriterProperties(parquet.WithCompression(compress.Codecs.Zstd),
		parquet.WithDataPageVersion(parquet.DataPageV2), parquet.WithDictionaryFor("i32", false),
		parquet.WithAllocator(mem), parquet.WithStats(true))
	arrProps := pqarrow.NewArrowWriterProperties(pqarrow.WithAllocator(mem), pqarrow.WithStoreSchema())
	rnd := rand.New(rand.NewPCG(5, 6))
	var recs []arrow.RecordBatch
	for range 5 {
		full := gatherTestBatch(mem, rnd, 700)
		cols := full.Columns()[:9]
		recs = append(recs, array.NewRecordBatch(sch, cols, full.NumRows()))
		full.Release()
	}
	defer func() {
		for _, r := range recs {
			r.Release()
		}
	}()

	write := func(pf parquetFile) { writeParquet(t, pf, recs, 3) }
	var par, ref bytes.Buffer
	cf, err := newColumnFile(sch, nopCloser{&par}, props, arrProps, 3)
	require.NoError(t, err)
	require.NotNil(t, cf, "a flat schema is written by columnFile")
	write(cf)
	fw, err := pqarrow.NewFileWriter(sch, nopCloser{&ref}, props, arrProps)
	require.NoError(t, err)
	write(fw)

	requireSameParquet(t, mem, sch, par.Bytes(), ref.Bytes())
	gotRdr, err := file.NewParquetReader(bytes.NewReader(par.Bytes()))
	require.NoError(t, err)
	defer gotRdr.Close()
	require.Equal(t, 2, gotRdr.MetaData().NumRowGroups())
}

// writeParquet writes recs to pf, starting a new row group before recs[split],
// and closes it.
func writeParquet(t *testing.T, pf parquetFile, recs []arrow.RecordBatch, split int) {
	t.Helper()
	for i, r := range recs {
		if i == split {
			require.NoError(t, pf.NewBufferedRowGroupChecked())
		}
		require.NoError(t, pf.WriteBuffered(r))
	}
	require.NoError(t, pf.Close())
}

// requireSameParquet requires two Parquet files of sch to hold the same rows
// and the same footer: row groups, and per column chunk the encodings, value
// count, null count and min/max statistics.
func requireSameParquet(t *testing.T, mem memory.Allocator, sch *arrow.Schema, got, want []byte) {
	t.Helper()
	read := func(b []byte) (arrow.Table, *file.Reader) {
		rdr, err := file.NewParquetReader(bytes.NewReader(b), file.WithReadProps(parquet.NewReaderProperties(mem)))
		require.NoError(t, err)
		fr, err := pqarrow.NewFileReader(rdr, pqarrow.ArrowReadProperties{BatchSize: 1 << 10}, mem)
		require.NoError(t, err)
		tbl, err := fr.ReadTable(t.Context())
		require.NoError(t, err)
		return tbl, rdr
	}
	gotTbl, gotRdr := read(got)
	defer gotTbl.Release()
	defer gotRdr.Close()
	wantTbl, wantRdr := read(want)
	defer wantTbl.Release()
	defer wantRdr.Close()
	require.True(t, array.TableEqual(wantTbl, gotTbl), "same rows")
	require.True(t, gotTbl.Schema().Equal(wantTbl.Schema()), "same stored schema: %s vs %s", gotTbl.Schema(), wantTbl.Schema())

	gm, wm := gotRdr.MetaData(), wantRdr.MetaData()
	require.Equal(t, wm.NumRows, gm.NumRows)
	require.Equal(t, wm.NumRowGroups(), gm.NumRowGroups())
	for rg := range wm.NumRowGroups() {
		for c := range sch.NumFields() {
			wc, err := wm.RowGroup(rg).ColumnChunk(c)
			require.NoError(t, err)
			gc, err := gm.RowGroup(rg).ColumnChunk(c)
			require.NoError(t, err)
			ws, err := wc.Statistics()
			require.NoError(t, err)
			gs, err := gc.Statistics()
			require.NoError(t, err)
			name := fmt.Sprintf("row group %d column %s", rg, sch.Field(c).Name)
			require.NotNil(t, gs, name)
			require.Equal(t, ws.NullCount(), gs.NullCount(), name)
			require.Equal(t, ws.HasMinMax(), gs.HasMinMax(), name)
			if ws.HasMinMax() {
				require.Equal(t, ws.EncodeMin(), gs.EncodeMin(), name)
				require.Equal(t, ws.EncodeMax(), gs.EncodeMax(), name)
			}
			require.Equal(t, wc.Encodings(), gc.Encodings(), name)
			require.Equal(t, wc.NumValues(), gc.NumValues(), name)
		}
	}
}

// TestColumnFileDeclinesNestedSchemas: a list column is left to pqarrow.
func TestColumnFileDeclinesNestedSchemas(t *testing.T) {
	var buf bytes.Buffer
	cf, err := newColumnFile(gatherSchema, nopCloser{&buf}, parquet.NewWriterProperties(), pqarrow.DefaultWriterProps(), 2)
	require.NoError(t, err)
	require.Nil(t, cf)
}

// TestColumnFileDictionaryColumns covers the columns columnFile holds as
// dictionary indices until the row group is flushed (see dictColumn): low-
// cardinality strings and fixed-width values, a column whose dictionary
// outgrows the page size limit mid row group, one with nulls in some
// batches, one written uncompressed. The file must match pqarrow's own,
// and its column chunks be cut into about as many data pages.
func TestColumnFileDictionaryColumns(t *testing.T) {
	mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
	defer mem.AssertSize(t, 0)
	sch := arrow.NewSchema([]arrow.Field{
		{Name: "mode", Type: arrow.BinaryTypes.String},
		{Name: "flag", Type: arrow.BinaryTypes.LargeString, Nullable: true},
		{Name: "qty", Type: arrow.PrimitiveTypes.Int32},
		{Name: "key", Type: arrow.PrimitiveTypes.Int64},
		{Name: "disc", Type: arrow.PrimitiveTypes.Float64},
		{Name: "day", Type: arrow.FixedWidthTypes.Date32},
		{Name: "ts", Type: arrow.FixedWidthTypes.Timestamp_us, Nullable: true},
		{Name: "word", Type: arrow.BinaryTypes.String}, // outgrows the dictionary limit
		{Name: "raw", Type: arrow.BinaryTypes.String},  // uncompressed: left dense
		{Name: "tod", Type: arrow.FixedWidthTypes.Time64us},
		{Name: "secs", Type: &arrow.TimestampType{Unit: arrow.Second}}, // pqarrow converts: left dense
	}, nil)
	props := parquet.NewWriterProperties(parquet.WithCompression(compress.Codecs.Zstd),
		parquet.WithCompressionFor("raw", compress.Codecs.Uncompressed),
		parquet.WithDictionaryDefault(true), parquet.WithDictionaryPageSizeLimit(3000),
		parquet.WithDataPageSize(16<<10), parquet.WithAllocator(mem), parquet.WithStats(true))
	arrProps := pqarrow.NewArrowWriterProperties(pqarrow.WithAllocator(mem), pqarrow.WithStoreSchema())
	modes := []string{"AIR", "MAIL", "RAIL", "SHIP", "TRUCK", "REG AIR", "FOB"}
	rnd := rand.New(rand.NewPCG(7, 8))
	var recs []arrow.RecordBatch
	defer func() {
		for _, r := range recs {
			r.Release()
		}
	}()
	row := 0
	for b := range 8 {
		bld := array.NewRecordBuilder(mem, sch)
		for range 3000 {
			row++
			bld.Field(0).(*array.StringBuilder).Append(modes[rnd.IntN(len(modes))])
			if b == 3 && rnd.IntN(9) == 0 { // one batch with nulls
				bld.Field(1).AppendNull()
				bld.Field(6).AppendNull()
			} else {
				bld.Field(1).(*array.LargeStringBuilder).Append([]string{"A", "N", "R"}[rnd.IntN(3)])
				bld.Field(6).(*array.TimestampBuilder).Append(arrow.Timestamp(rnd.IntN(40) * 1_000_000))
			}
			bld.Field(2).(*array.Int32Builder).Append(int32(1 + rnd.IntN(50)))
			bld.Field(3).(*array.Int64Builder).Append(int64(row / 16)) // runs, as a sorted column has
			bld.Field(4).(*array.Float64Builder).Append(float64(rnd.IntN(11)) / 100)
			bld.Field(5).(*array.Date32Builder).Append(arrow.Date32(9000 + rnd.IntN(300)))
			bld.Field(7).(*array.StringBuilder).Append(fmt.Sprintf("w%d", rnd.IntN(5000)))
			bld.Field(8).(*array.StringBuilder).Append(modes[rnd.IntN(3)])
			bld.Field(9).(*array.Time64Builder).Append(arrow.Time64(rnd.IntN(24) * 3_600_000_000))
			bld.Field(10).(*array.TimestampBuilder).Append(arrow.Timestamp(1_700_000_000 + rnd.IntN(30)))
		}
		recs = append(recs, bld.NewRecordBatch())
		bld.Release()
	}
	write := func(pf parquetFile) { writeParquet(t, pf, recs, 5) }
	var par, ref bytes.Buffer
	cf, err := newColumnFile(sch, nopCloser{&par}, props, arrProps, 3)
	require.NoError(t, err)
	require.NotNil(t, cf)
	for i, name := range []string{"mode", "flag", "qty", "key", "disc", "day", "ts", "word", "", "tod"} {
		if name != "" {
			require.NotNil(t, cf.dicts[i], "%s is held as dictionary indices", name)
		}
	}
	require.Nil(t, cf.dicts[8], "an uncompressed column is written densely")
	require.Nil(t, cf.dicts[10], "a column pqarrow converts is written densely")

	write(cf)
	fw, err := pqarrow.NewFileWriter(sch, nopCloser{&ref}, props, arrProps)
	require.NoError(t, err)
	write(fw)
	requireSameParquet(t, mem, sch, par.Bytes(), ref.Bytes())

	pages := func(b []byte) [][]int {
		rdr, err := file.NewParquetReader(bytes.NewReader(b))
		require.NoError(t, err)
		defer rdr.Close()
		var out [][]int
		for rg := range rdr.NumRowGroups() {
			var counts []int
			for c := range sch.NumFields() {
				pr, err := rdr.RowGroup(rg).GetColumnPageReader(c)
				require.NoError(t, err)
				n := 0
				for pr.Next() {
					if _, dict := pr.Page().(*file.DictionaryPage); !dict {
						n++
					}
				}
				require.NoError(t, pr.Err())
				counts = append(counts, n)
			}
			out = append(out, counts)
		}
		return out
	}
	got, want := pages(par.Bytes()), pages(ref.Bytes())
	for rg := range want {
		for c := range want[rg] {
			// pqarrow checks the page size after each write batch of a
			// call, and a call is a batch here; dictColumn writes whole
			// write batches. Page counts differ by those edges only.
			require.InDelta(t, want[rg][c], got[rg][c], 2, "data pages of row group %d column %s: %v vs %v", rg, sch.Field(c).Name, got, want)
		}
	}
	require.Greater(t, want[0][0], 2, "the test spans several pages per column chunk")

	// Page statistics are the page's own, not the dictionary's: "key"
	// ascends, so each page's range starts where the last one ended.
	rdr, err := file.NewParquetReader(bytes.NewReader(par.Bytes()))
	require.NoError(t, err)
	defer rdr.Close()
	pr, err := rdr.RowGroup(0).GetColumnPageReader(3)
	require.NoError(t, err)
	var lastMax int64 = -1
	var dictPages int
	for pr.Next() {
		pg, ok := pr.Page().(*file.DataPageV1)
		if !ok || parquet.Encoding(pg.Encoding()) != parquet.Encodings.RLEDict {
			continue
		}
		dictPages++
		st := pg.Statistics()
		require.True(t, st.HasMin && st.HasMax)
		lo, hi := int64(binary.LittleEndian.Uint64(st.Min)), int64(binary.LittleEndian.Uint64(st.Max))
		require.GreaterOrEqual(t, lo, lastMax, "page %d starts where the previous page ended", dictPages)
		require.GreaterOrEqual(t, hi, lo)
		lastMax = hi
	}
	require.NoError(t, pr.Err())
	require.Greater(t, dictPages, 1)
}

// TestBitsTable: every key put is found with its id, absent keys are not,
// across growth and reset.
func TestBitsTable(t *testing.T) {
	rnd := rand.New(rand.NewPCG(9, 10))
	var tb bitsTable
	for round := range 3 {
		want := map[uint64]int32{}
		for i := range 5000 {
			k := rnd.Uint64() >> uint(rnd.IntN(64)) // small and large keys, zero among them
			if _, ok := want[k]; ok {
				continue
			}
			_, found := tb.get(k)
			require.False(t, found, "round %d: %d not put yet", round, k)
			tb.put(k, int32(i))
			want[k] = int32(i)
		}
		for k, id := range want {
			got, ok := tb.get(k)
			require.True(t, ok)
			require.Equal(t, id, got)
		}
		tb.reset()
		_, found := tb.get(0)
		require.False(t, found, "empty after reset")
	}
}

// TestColumnFileReportsEncodingErrors: a column fails to encode on its own
// goroutine; the error comes back from a later call, and Close releases
// everything.
func TestColumnFileReportsEncodingErrors(t *testing.T) {
	mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
	defer mem.AssertSize(t, 0)
	sch := arrow.NewSchema([]arrow.Field{{Name: "a", Type: arrow.PrimitiveTypes.Int64}, {Name: "b", Type: arrow.PrimitiveTypes.Int32}}, nil)
	props := parquet.NewWriterProperties(parquet.WithAllocator(mem), parquet.WithDictionaryDefault(false))
	arrProps := pqarrow.NewArrowWriterProperties(pqarrow.WithAllocator(mem))
	var buf bytes.Buffer
	cf, err := newColumnFile(sch, nopCloser{&buf}, props, arrProps, 2)
	require.NoError(t, err)
	// Column b holds int64 values where the Parquet column is int32.
	bad := arrow.NewSchema([]arrow.Field{{Name: "a", Type: arrow.PrimitiveTypes.Int64}, {Name: "b", Type: arrow.PrimitiveTypes.Int64}}, nil)
	bld := array.NewRecordBuilder(mem, bad)
	defer bld.Release()
	bld.Field(0).(*array.Int64Builder).AppendValues([]int64{1, 2, 3}, nil)
	bld.Field(1).(*array.Int64Builder).AppendValues([]int64{1, 2, 3}, nil)
	rec := bld.NewRecordBatch()
	defer rec.Release()
	var werr error
	for range 20 {
		if werr = cf.WriteBuffered(rec); werr != nil {
			break
		}
	}
	if werr == nil {
		werr = cf.NewBufferedRowGroupChecked()
	}
	require.ErrorContains(t, werr, "column b")
	require.Error(t, cf.Close())
}
