package rewriter

import (
	"bytes"
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

	write := func(pf parquetFile) {
		for i, r := range recs {
			if i == 3 {
				require.NoError(t, pf.NewBufferedRowGroupChecked())
			}
			require.NoError(t, pf.WriteBuffered(r))
		}
		require.NoError(t, pf.Close())
	}
	var par, ref bytes.Buffer
	cf, err := newColumnFile(sch, nopCloser{&par}, props, arrProps, 3)
	require.NoError(t, err)
	require.NotNil(t, cf, "a flat schema is written by columnFile")
	write(cf)
	fw, err := pqarrow.NewFileWriter(sch, nopCloser{&ref}, props, arrProps)
	require.NoError(t, err)
	write(fw)

	read := func(b []byte) (arrow.Table, *file.Reader) {
		rdr, err := file.NewParquetReader(bytes.NewReader(b), file.WithReadProps(parquet.NewReaderProperties(mem)))
		require.NoError(t, err)
		fr, err := pqarrow.NewFileReader(rdr, pqarrow.ArrowReadProperties{BatchSize: 1 << 10}, mem)
		require.NoError(t, err)
		tbl, err := fr.ReadTable(t.Context())
		require.NoError(t, err)
		return tbl, rdr
	}
	gotTbl, gotRdr := read(par.Bytes())
	defer gotTbl.Release()
	defer gotRdr.Close()
	wantTbl, wantRdr := read(ref.Bytes())
	defer wantTbl.Release()
	defer wantRdr.Close()
	require.True(t, array.TableEqual(wantTbl, gotTbl), "same rows")
	require.True(t, gotTbl.Schema().Equal(wantTbl.Schema()), "same stored schema: %s vs %s", gotTbl.Schema(), wantTbl.Schema())

	gm, wm := gotRdr.MetaData(), wantRdr.MetaData()
	require.Equal(t, wm.NumRows, gm.NumRows)
	require.Equal(t, wm.NumRowGroups(), gm.NumRowGroups())
	require.Equal(t, 2, gm.NumRowGroups())
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
