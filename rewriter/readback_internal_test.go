package rewriter

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"os"
	"strings"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/decimal128"
	"github.com/apache/arrow-go/v18/arrow/extensions"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/apache/arrow-go/v18/parquet/file"
	"github.com/apache/iceberg-go"
	"github.com/apache/iceberg-go/table"
	"github.com/google/uuid"
	"github.com/stretchr/testify/require"

	"github.com/floe-project/floe/internal/rowsum"
	"github.com/floe-project/floe/internal/testlake"
	"github.com/floe-project/floe/layout"
)

// allTypes is a schema with a column of every kind the check reads back:
// strings that stay dictionary-encoded (low) and strings that fall back to
// plain pages (high), binary, the numbers, decimals, times, uuid, fixed,
// and nested struct, list and map columns.
func allTypes() *iceberg.Schema {
	return iceberg.NewSchema(0,
		iceberg.NestedField{ID: 1, Name: "id", Type: iceberg.PrimitiveTypes.Int64, Required: true},
		iceberg.NestedField{ID: 2, Name: "low", Type: iceberg.PrimitiveTypes.String},
		iceberg.NestedField{ID: 3, Name: "high", Type: iceberg.PrimitiveTypes.String},
		iceberg.NestedField{ID: 4, Name: "bin", Type: iceberg.PrimitiveTypes.Binary},
		iceberg.NestedField{ID: 5, Name: "n", Type: iceberg.PrimitiveTypes.Int32},
		iceberg.NestedField{ID: 6, Name: "f", Type: iceberg.PrimitiveTypes.Float32},
		iceberg.NestedField{ID: 7, Name: "d", Type: iceberg.PrimitiveTypes.Float64},
		iceberg.NestedField{ID: 8, Name: "price", Type: iceberg.DecimalTypeOf(10, 2)},
		iceberg.NestedField{ID: 9, Name: "wide", Type: iceberg.DecimalTypeOf(38, 6)},
		iceberg.NestedField{ID: 10, Name: "ts", Type: iceberg.PrimitiveTypes.Timestamp},
		iceberg.NestedField{ID: 11, Name: "tstz", Type: iceberg.PrimitiveTypes.TimestampTz},
		iceberg.NestedField{ID: 12, Name: "day", Type: iceberg.PrimitiveTypes.Date},
		iceberg.NestedField{ID: 13, Name: "tm", Type: iceberg.PrimitiveTypes.Time},
		iceberg.NestedField{ID: 14, Name: "u", Type: iceberg.PrimitiveTypes.UUID},
		iceberg.NestedField{ID: 15, Name: "ok", Type: iceberg.PrimitiveTypes.Bool},
		iceberg.NestedField{ID: 16, Name: "fx", Type: iceberg.FixedTypeOf(4)},
		iceberg.NestedField{ID: 17, Name: "st", Type: &iceberg.StructType{FieldList: []iceberg.NestedField{
			{ID: 20, Name: "a", Type: iceberg.PrimitiveTypes.Int32},
			{ID: 21, Name: "b", Type: iceberg.PrimitiveTypes.String},
		}}},
		iceberg.NestedField{ID: 18, Name: "tags", Type: &iceberg.ListType{ElementID: 22, Element: iceberg.PrimitiveTypes.String}},
		iceberg.NestedField{ID: 19, Name: "props", Type: &iceberg.MapType{
			KeyID: 23, KeyType: iceberg.PrimitiveTypes.String,
			ValueID: 24, ValueType: iceberg.PrimitiveTypes.Int64,
		}},
	)
}

// genRows builds n rows of tbl's current schema, the rows of file f: every
// nullable value is null now and then, at every level.
func genRows(t *testing.T, tbl *table.Table, f, n int) arrow.RecordBatch {
	t.Helper()
	asc := testlake.ArrowSchema(t, tbl)
	b := array.NewRecordBuilder(memory.DefaultAllocator, asc)
	defer b.Release()
	for i := f * n; i < (f+1)*n; i++ {
		for c, fld := range asc.Fields() {
			appendValue(t, b.Field(c), fld, i, c)
		}
	}
	return b.NewRecordBatch()
}

// appendRows appends n rows as one file of tbl, the rows of file f, in
// batches of a quarter of them: a string column's dictionary can outgrow
// its page after a batch, and the writer writes the next ones plain.
func appendRows(t *testing.T, tbl *table.Table, f, n int) *table.Table {
	t.Helper()
	var recs []arrow.RecordBatch
	for q := range 4 {
		recs = append(recs, genRows(t, tbl, 4*f+q, n/4))
	}
	defer func() {
		for _, r := range recs {
			r.Release()
		}
	}()
	rdr, err := array.NewRecordReader(recs[0].Schema(), recs)
	require.NoError(t, err)
	defer rdr.Release()
	out, err := tbl.Append(t.Context(), rdr, nil)
	require.NoError(t, err)
	return out
}

// appendValue appends value i of field fld (the c-th) to b.
func appendValue(t *testing.T, b array.Builder, fld arrow.Field, i, c int) {
	if fld.Nullable && (i+3*c)%11 == 0 {
		b.AppendNull()
		return
	}
	switch b := b.(type) {
	case *array.Int64Builder:
		b.Append(int64(i)*7919 + int64(c))
	case *array.Int32Builder:
		b.Append(int32(i*31%1000 - 500))
	case *array.Float32Builder:
		b.Append(float32(i) / 3)
	case *array.Float64Builder:
		b.Append(float64(i) / 7)
	case *array.StringBuilder:
		switch fld.Name {
		case "low", "b":
			b.Append([]string{"eu-west", "us-east", "apac", "", "latam"}[i%5])
		default:
			b.Append(fmt.Sprintf("%s-%058d", fld.Name, i*37))
		}
	case *array.BinaryBuilder:
		b.Append([]byte{byte(i), byte(i >> 8), 0xff, byte(i % 7)})
	case *array.Decimal128Builder:
		b.Append(decimal128.FromI64(int64(i)*12345 - 99999))
	case *array.TimestampBuilder:
		b.Append(arrow.Timestamp(1_700_000_000_000_000 + int64(i)*1_000_003))
	case *array.Date32Builder:
		b.Append(arrow.Date32(19000 + i%400))
	case *array.Time64Builder:
		b.Append(arrow.Time64(int64(i) * 1_000_001 % 86_400_000_000))
	case *extensions.UUIDBuilder:
		var u uuid.UUID
		binary.BigEndian.PutUint64(u[8:], uint64(i)*0x9e3779b97f4a7c15)
		b.Append(u)
	case *array.FixedSizeBinaryBuilder:
		b.Append([]byte{byte(i >> 16), byte(i >> 8), byte(i), 0x5a})
	case *array.BooleanBuilder:
		b.Append(i%3 == 0)
	case *array.StructBuilder:
		b.Append(true)
		st := fld.Type.(*arrow.StructType)
		for k := range st.NumFields() {
			appendValue(t, b.FieldBuilder(k), st.Field(k), i+k, c+k+1)
		}
	case *array.MapBuilder:
		b.Append(true)
		mt := fld.Type.(*arrow.MapType)
		for j := range i % 3 {
			b.KeyBuilder().(*array.StringBuilder).Append(fmt.Sprintf("k%d", j))
			appendValue(t, b.ItemBuilder(), mt.ItemField(), i+j, c+j)
		}
	case *array.ListBuilder:
		b.Append(true)
		lt := fld.Type.(*arrow.ListType)
		for j := range i % 4 {
			appendValue(t, b.ValueBuilder(), lt.ElemField(), i+j, c+j)
		}
	default:
		t.Fatalf("no values for %s (%T)", fld.Type, b)
	}
}

// fileTasks are tasks of whole files, as readBack gives DigestTasks the
// files it leaves: no FirstRowID or DataSequenceNumber to inherit from.
func fileTasks(files []iceberg.DataFile) []table.FileScanTask {
	tasks := make([]table.FileScanTask, len(files))
	for i, f := range files {
		tasks[i] = table.FileScanTask{File: f, Start: 0, Length: f.FileSizeBytes()}
	}
	return tasks
}

// tableFiles are the data files of tbl's current snapshot.
func tableFiles(t *testing.T, tbl *table.Table) ([]table.FileScanTask, []iceberg.DataFile) {
	t.Helper()
	scan := tbl.Scan()
	defer scan.Close()
	tasks, err := scan.PlanFiles(t.Context())
	require.NoError(t, err)
	files := make([]iceberg.DataFile, len(tasks))
	for i, task := range tasks {
		files[i] = task.File
	}
	return tasks, files
}

// requireReadAlike digests files with the check's own read and with
// iceberg-go's scan, and requires the two Sums to be equal, column by
// column, and the own read to have taken every file. It returns the Sum.
func requireReadAlike(t *testing.T, tbl *table.Table, files []iceberg.DataFile) rowsum.Sum {
	t.Helper()
	want, err := DigestTasks(t.Context(), tbl, fileTasks(files), 2, 0)
	require.NoError(t, err)
	r, err := newCheckReader(t.Context(), tbl, 1000, false)
	require.NoError(t, err)
	require.NotNil(t, r)
	got, rest, err := r.digest(t.Context(), files, 2)
	require.NoError(t, err)
	require.Empty(t, rest, "files left to iceberg-go's scan")
	require.Equal(t, want, got)
	require.NotZero(t, got.Rows)
	return got
}

// The check's own read back digests a table's files as iceberg-go's scan
// does, column by column, on tables of every format version with a column
// of every type, before and after the schema evolved (a column dropped,
// one added, one renamed), for files iceberg-go wrote and files a rewrite
// wrote; the rewrite's content check passed with the own read reading
// every output.
func TestCheckReaderDigestsAsTheScan(t *testing.T) {
	for _, version := range []int{1, 2, 3} {
		t.Run(fmt.Sprintf("v%d", version), func(t *testing.T) {
			w := testlake.NewLocal(t)
			tbl := w.CreateTable(t, "db", "t", allTypes(), nil, iceberg.Properties{
				table.PropertyFormatVersion: fmt.Sprint(version),
				// A dictionary page high outgrows, and row groups of
				// their own dictionaries.
				table.ParquetDictSizeBytesKey: "65536",
				table.ParquetRowGroupLimitKey: "7000",
			}, nil)
			const rows = 20_000
			for f := range 2 {
				tbl = appendRows(t, tbl, f, rows)
			}
			_, files := tableFiles(t, tbl)
			requireReadAlike(t, tbl, files)
			require.Greater(t, rowGroups(t, files[0]), 1)

			// The strings: low is read as a dictionary, high fell back to
			// plain pages and is not.
			dict := dictLeaves(t, files[0])
			require.True(t, dict["low"], "low is all dictionary pages")
			require.False(t, dict["high"], "high has plain pages")

			tx := tbl.NewTransaction()
			u := tx.UpdateSchema(true, false)
			u.DeleteColumn([]string{"n"})
			u.AddColumn([]string{"added"}, iceberg.PrimitiveTypes.String, "", false, nil)
			u.RenameColumn([]string{"bin"}, "payload")
			require.NoError(t, u.Commit())
			tbl, err := tx.Commit(t.Context())
			require.NoError(t, err)
			tbl = appendRows(t, tbl, 2, rows)
			tasks, files := tableFiles(t, tbl)
			require.Len(t, files, 3)
			evolved := requireReadAlike(t, tbl, files)
			var names []string
			for _, c := range evolved.Columns {
				names = append(names, c.Name)
			}
			require.Contains(t, names, "payload")
			require.Contains(t, names, "added")
			require.NotContains(t, names, "n")

			// A rewrite's outputs, sorted by id; on v3 with the rows'
			// lineage, stored.
			l, err := layout.Parse("sort(id)")
			require.NoError(t, err)
			enc, err := layout.NewEncoder(l, testlake.ArrowSchema(t, tbl), layout.EncoderOptions{})
			require.NoError(t, err)
			outs, st, err := RewriteGroup(t.Context(), tbl, tasks, GroupOptions{Keyer: enc, TempDir: t.TempDir(), TargetFileSizeBytes: 1 << 20})
			require.NoError(t, err)
			require.Greater(t, len(outs), 1)
			require.True(t, st.Content.Read.Equal(st.Content.Written))
			written := requireReadAlike(t, tbl, outs)
			require.Equal(t, st.Content.Written, written)
			if version >= 3 {
				require.Contains(t, columnNames(written), "_row_id")
				require.Contains(t, columnNames(written), "_last_updated_sequence_number")
			}
		})
	}
}

func columnNames(s rowsum.Sum) []string {
	var names []string
	for _, c := range s.Columns {
		names = append(names, c.Name)
	}
	return names
}

// dictLeaves reports, by column name, which top-level string columns of f
// the check reads as dictionaries.
func dictLeaves(t *testing.T, f iceberg.DataFile) map[string]bool {
	t.Helper()
	rdr, err := file.OpenParquetFile(localPath(f.FilePath()), false)
	require.NoError(t, err)
	defer rdr.Close()
	out := map[string]bool{}
	pqs := rdr.MetaData().Schema
	for leaf := range pqs.NumColumns() {
		c := pqs.Column(leaf)
		if len(c.ColumnPath()) == 1 {
			out[c.Name()] = dictPagesOnly(rdr, leaf)
		}
	}
	return out
}

func localPath(loc string) string { return strings.TrimPrefix(loc, "file://") }

// A file changed on disk after it was written — a byte of its dictionary
// page, a string in a plain page, an integer — no longer digests as the
// rows it held: the check's own read sees the change (and iceberg-go's
// scan, reading the same bytes, sees the same).
func TestCheckReaderSeesFilesChangedOnDisk(t *testing.T) {
	sc := iceberg.NewSchema(0,
		iceberg.NestedField{ID: 1, Name: "id", Type: iceberg.PrimitiveTypes.Int64, Required: true},
		iceberg.NestedField{ID: 2, Name: "low", Type: iceberg.PrimitiveTypes.String},
		iceberg.NestedField{ID: 3, Name: "high", Type: iceberg.PrimitiveTypes.String},
	)
	const rows = 20_000
	for _, tc := range []struct {
		name   string
		find   func(t *testing.T, data []byte, f iceberg.DataFile) int // offset of a byte to flip
		column string
	}{
		{"a byte of the dictionary page", func(t *testing.T, data []byte, f iceberg.DataFile) int {
			lo, hi := chunkRange(t, f, 1)
			i := bytes.Index(data[lo:hi], []byte("us-east"))
			require.GreaterOrEqual(t, i, 0, "us-east in the dictionary page")
			return lo + i + 3
		}, "low"},
		{"a string in a plain page", func(t *testing.T, data []byte, f iceberg.DataFile) int {
			v := fmt.Sprintf("high-%058d", (rows-17)*37)
			require.Equal(t, 1, bytes.Count(data, []byte(v)))
			return bytes.Index(data, []byte(v)) + 20
		}, "high"},
		{"an integer", func(t *testing.T, data []byte, f iceberg.DataFile) int {
			v := binary.LittleEndian.AppendUint64(nil, uint64(rows/2)*7919)
			require.Equal(t, 1, bytes.Count(data, v))
			return bytes.Index(data, v) + 1
		}, "id"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			w := testlake.NewLocal(t)
			tbl := w.CreateTable(t, "db", "t", sc, nil, iceberg.Properties{
				table.PropertyFormatVersion:   "2",
				table.ParquetCompressionKey:   "uncompressed",
				table.ParquetDictSizeBytesKey: "65536",
			}, nil)
			tbl = appendRows(t, tbl, 0, rows)
			_, files := tableFiles(t, tbl)
			require.Len(t, files, 1)
			require.False(t, dictLeaves(t, files[0])["high"])
			require.True(t, dictLeaves(t, files[0])["low"])
			before := requireReadAlike(t, tbl, files)

			p := localPath(files[0].FilePath())
			data, err := os.ReadFile(p)
			require.NoError(t, err)
			data[tc.find(t, data, files[0])] ^= 0x01
			require.NoError(t, os.WriteFile(p, data, 0o644))

			after := requireReadAlike(t, tbl, files)
			require.Equal(t, "values differ in column "+tc.column, rowsum.Diff(before, after))
		})
	}
}

// chunkRange is the byte range of column leaf's chunk in f's first row
// group, from its dictionary page (if any) to its end.
func chunkRange(t *testing.T, f iceberg.DataFile, leaf int) (int, int) {
	t.Helper()
	rdr, err := file.OpenParquetFile(localPath(f.FilePath()), false)
	require.NoError(t, err)
	defer rdr.Close()
	cc, err := rdr.MetaData().RowGroup(0).ColumnChunk(leaf)
	require.NoError(t, err)
	lo := cc.DataPageOffset()
	if cc.HasDictionaryPage() {
		lo = cc.DictionaryPageOffset()
	}
	return int(lo), int(lo + cc.TotalCompressedSize())
}

func rowGroups(t *testing.T, f iceberg.DataFile) int {
	t.Helper()
	rdr, err := file.OpenParquetFile(localPath(f.FilePath()), false)
	require.NoError(t, err)
	defer rdr.Close()
	return rdr.NumRowGroups()
}

// A file the check's own read does not take — here one written before a
// field was added to a struct, which iceberg-go projects — is read by
// iceberg-go's scan, and readBack's digest of both kinds of file together
// is the scan's of them all.
func TestReadBackLeavesEvolvedStructsToTheScan(t *testing.T) {
	w := testlake.NewLocal(t)
	sc := iceberg.NewSchema(0,
		iceberg.NestedField{ID: 1, Name: "id", Type: iceberg.PrimitiveTypes.Int64, Required: true},
		iceberg.NestedField{ID: 2, Name: "low", Type: iceberg.PrimitiveTypes.String},
		iceberg.NestedField{ID: 3, Name: "st", Type: &iceberg.StructType{FieldList: []iceberg.NestedField{
			{ID: 4, Name: "a", Type: iceberg.PrimitiveTypes.Int32},
		}}},
	)
	tbl := w.CreateTable(t, "db", "t", sc, nil, iceberg.Properties{table.PropertyFormatVersion: "2"}, nil)
	tbl = appendRows(t, tbl, 0, 4000)
	tx := tbl.NewTransaction()
	u := tx.UpdateSchema(true, false)
	u.AddColumn([]string{"st", "b"}, iceberg.PrimitiveTypes.String, "", false, nil)
	require.NoError(t, u.Commit())
	tbl, err := tx.Commit(t.Context())
	require.NoError(t, err)
	tbl = appendRows(t, tbl, 1, 4000)
	_, files := tableFiles(t, tbl)
	require.Len(t, files, 2)

	want, err := DigestTasks(t.Context(), tbl, fileTasks(files), 1, 0)
	require.NoError(t, err)
	got, own, err := readBack(t.Context(), tbl, files, 2, 2, 0)
	require.NoError(t, err)
	require.Equal(t, 1, own, "the own read takes the file of the current schema only")
	require.Equal(t, want, got)
	require.Equal(t, int64(8000), got.Rows)
}
