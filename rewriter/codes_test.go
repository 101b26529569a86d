package rewriter_test

import (
	"fmt"
	"math/rand/v2"
	"os"
	"slices"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/apache/arrow-go/v18/parquet"
	"github.com/apache/arrow-go/v18/parquet/file"
	"github.com/apache/arrow-go/v18/parquet/metadata"
	"github.com/apache/arrow-go/v18/parquet/pqarrow"
	"github.com/apache/iceberg-go"
	"github.com/apache/iceberg-go/catalog"
	sqlcat "github.com/apache/iceberg-go/catalog/sql"
	"github.com/apache/iceberg-go/table"
	"github.com/stretchr/testify/require"

	"github.com/floe-project/floe/layout"
	"github.com/floe-project/floe/rewriter"
)

// codedSchema has low-cardinality strings (status, country with nulls,
// kind), a high-cardinality one (note) and the key id.
var codedSchema = iceberg.NewSchema(0,
	iceberg.NestedField{ID: 1, Name: "id", Type: iceberg.PrimitiveTypes.Int64, Required: true},
	iceberg.NestedField{ID: 2, Name: "status", Type: iceberg.PrimitiveTypes.String, Required: true},
	iceberg.NestedField{ID: 3, Name: "country", Type: iceberg.PrimitiveTypes.String},
	iceberg.NestedField{ID: 4, Name: "note", Type: iceberg.PrimitiveTypes.String},
	iceberg.NestedField{ID: 5, Name: "kind", Type: iceberg.PrimitiveTypes.Binary},
)

// codedTable creates db.<name> with files of rows rows each; tag, when
// given, fills kind from file index i on.
func codedTable(t *testing.T, cat *sqlcat.Catalog, name string, files, rows int, props iceberg.Properties, kind func(file, row int) string) *table.Table {
	t.Helper()
	tbl, err := cat.CreateTable(t.Context(), table.Identifier{"db", name}, codedSchema, catalog.WithProperties(props))
	require.NoError(t, err)
	sch, err := table.SchemaToArrowSchema(tbl.Schema(), nil, false, false)
	require.NoError(t, err)
	statuses := []string{"new", "open", "closed", "on hold", "cancelled"}
	countries := []string{"fr", "de", "it", "es", "pl", "nl"}
	for f := range files {
		rnd := rand.New(rand.NewPCG(uint64(f), 7))
		b := array.NewRecordBuilder(memory.DefaultAllocator, sch)
		for i, p := range rnd.Perm(rows) {
			id := int64(f*rows + p)
			b.Field(0).(*array.Int64Builder).Append(id)
			b.Field(1).(*array.StringBuilder).Append(statuses[rnd.IntN(len(statuses))])
			if id%7 == 0 {
				b.Field(2).AppendNull()
			} else {
				b.Field(2).(*array.StringBuilder).Append(countries[rnd.IntN(len(countries))])
			}
			b.Field(3).(*array.StringBuilder).Append(fmt.Sprintf("note %x", rnd.Uint64()))
			b.Field(4).(*array.BinaryBuilder).Append([]byte(kind(f, i)))
		}
		tbl = appendBatch(t, tbl, b.NewRecordBatch())
		b.Release()
	}
	return tbl
}

// hiddenKeys hides a layout encoder's KeyColumns: the rewriter then codes
// no column, as for any keyer that does not say which columns it reads.
type hiddenKeys struct{ enc layout.Encoder }

func (h hiddenKeys) AppendKey(dst []byte, rec arrow.RecordBatch, row int) ([]byte, error) {
	return h.enc.AppendKey(dst, rec, row)
}

// TestRewriteGroupCodesLowCardinalityStrings rewrites one table by a real
// layout encoder twice, with codes (the default) and without, spilling and
// in memory: the columns coded are the low-cardinality strings that are not
// layout keys, and both rewrites keep every row and write the same rows in
// the same order, with the coded columns dictionary-encoded.
func TestRewriteGroupCodesLowCardinalityStrings(t *testing.T) {
	kinds := []string{"click", "view", "buy"}
	cases := []struct {
		layout    string
		memory    int64
		wantCoded []string
		wantSpill bool
	}{
		{layout: "sort(id)", memory: 2 << 20, wantCoded: []string{"status", "country", "kind"}, wantSpill: true},
		{layout: "sort(kind, id)", wantCoded: []string{"status", "country"}},
		{layout: "zorder(id, kind)", memory: 2 << 20, wantCoded: []string{"status", "country"}, wantSpill: true},
	}
	cat := newCatalog(t)
	for i, tc := range cases {
		t.Run(tc.layout, func(t *testing.T) {
			ctx := t.Context()
			tbl := codedTable(t, cat, fmt.Sprintf("coded%d", i), 4, 6000, nil, func(f, r int) string { return kinds[(f+r)%3] })
			before := tableRows(t, tbl)
			sch, err := table.SchemaToArrowSchema(tbl.Schema(), nil, true, false)
			require.NoError(t, err)
			l, err := layout.Parse(tc.layout)
			require.NoError(t, err)
			enc, err := layout.NewEncoder(l, sch, layout.EncoderOptions{})
			require.NoError(t, err)

			var seqs [2][]string
			for run, keyer := range []rewriter.Keyer{enc, hiddenKeys{enc}} {
				tmp := t.TempDir()
				groups, _ := partitionGroups(t, tbl)
				files, st, err := rewriter.RewriteGroup(ctx, tbl, groups[""], rewriter.GroupOptions{
					Keyer: keyer, MemoryBytes: tc.memory, TempDir: tmp, TargetFileSizeBytes: 64 << 10,
				})
				require.NoError(t, err)
				requireEmptyDir(t, tmp)
				require.Equal(t, 1, st.Reads)
				if run == 0 {
					require.Equal(t, tc.wantCoded, st.CodedColumns)
					require.Equal(t, st.InputFiles, st.DirectReads, "files without deletes are read by the rewriter itself")
				} else {
					require.Empty(t, st.CodedColumns)
					require.Zero(t, st.DirectReads)
				}
				require.Equal(t, tc.wantSpill, st.Sort.SpilledRuns > 0, "spilled runs: %d", st.Sort.SpilledRuns)
				require.Greater(t, len(files), 1)
				for _, f := range files {
					seqs[run] = append(seqs[run], fileRows(t, localPath(f.FilePath()), tc.wantCoded)...)
				}
				require.Equal(t, before, sorted(seqs[run]), "run %d: rows changed", run)
			}
			if tc.layout == "sort(id)" {
				ids := make([]int64, len(seqs[0]))
				for i, r := range seqs[0] {
					_, err := fmt.Sscanf(r, "%d|", &ids[i])
					require.NoError(t, err)
				}
				require.True(t, slices.IsSorted(ids), "ids out of order")
			}
			require.Equal(t, seqs[1], seqs[0], "coded and uncoded rewrites wrote different rows or orders")
		})
	}
}

// TestRewriteGroupCodebookOverflowReadsAgain: a column that looks
// low-cardinality in every batch and outgrows a dictionary page over the group
// makes the group read again without codes; every row is kept, and the
// progress reported never goes back.
func TestRewriteGroupCodebookOverflowReadsAgain(t *testing.T) {
	ctx := t.Context()
	cat := newCatalog(t)
	// Each file holds four kinds of its own: low-cardinality in any
	// batch, and past the 100-byte dictionary page by the third file.
	tbl := codedTable(t, cat, "overflow", 4, 3000, iceberg.Properties{table.ParquetDictSizeBytesKey: "100"},
		func(f, r int) string { return fmt.Sprintf("kind-%d-%d", f, r%4) })
	before := tableRows(t, tbl)
	groups, _ := partitionGroups(t, tbl)
	var progress []int64
	files, st, err := rewriter.RewriteGroup(ctx, tbl, groups[""], rewriter.GroupOptions{
		Keyer: sortByID(t, tbl), TempDir: t.TempDir(), TargetFileSizeBytes: 64 << 10, ScanChunkFiles: 1,
		Progress: func(n int64) { progress = append(progress, n) },
	})
	require.NoError(t, err)
	require.Equal(t, 2, st.Reads, "read again without codes")
	require.Empty(t, st.CodedColumns)
	require.Zero(t, st.DirectReads, "the second read is iceberg-go's")
	var after []string
	for _, f := range files {
		after = append(after, fileRows(t, localPath(f.FilePath()), nil)...)
	}
	require.Equal(t, before, sorted(after))
	require.NotEmpty(t, progress)
	for i := 1; i < len(progress); i++ {
		require.Greater(t, progress[i], progress[i-1])
	}
	require.Equal(t, st.InputBytes, progress[len(progress)-1])
}

// fileRows reads a Parquet file's rows in order, one string per row, and
// checks that the columns named are dictionary-encoded in every row group.
func fileRows(t *testing.T, path string, dictCols []string) []string {
	t.Helper()
	pf := openParquet(t, path)
	for _, name := range dictCols {
		for rg, cm := range columnChunks(t, pf, name) {
			require.True(t, cm.HasDictionaryPage(), "%s: column %s of row group %d has no dictionary", path, name, rg)
		}
	}
	fr, err := pqarrow.NewFileReader(pf, pqarrow.ArrowReadProperties{BatchSize: 4096}, memory.DefaultAllocator)
	require.NoError(t, err)
	rr, err := fr.GetRecordReader(t.Context(), nil, nil)
	require.NoError(t, err)
	defer rr.Release()
	var out []string
	for rr.Next() {
		out = append(out, rowStrings(rr.RecordBatch())...)
	}
	require.NoError(t, rr.Err())
	return out
}

// tableRows reads every row of tbl through iceberg-go's scan, as fileRows
// spells them, sorted.
func tableRows(t *testing.T, tbl *table.Table) []string {
	t.Helper()
	_, it, err := tbl.Scan().ToArrowRecords(t.Context())
	require.NoError(t, err)
	var out []string
	for rec, err := range it {
		require.NoError(t, err)
		out = append(out, rowStrings(rec)...)
		rec.Release()
	}
	return sorted(out)
}

func rowStrings(rec arrow.RecordBatch) []string {
	out := make([]string, rec.NumRows())
	for r := range out {
		for c := range int(rec.NumCols()) {
			out[r] += rec.Column(c).ValueStr(r) + "|"
		}
	}
	return out
}

func sorted(rows []string) []string {
	out := slices.Clone(rows)
	slices.Sort(out)
	return out
}

// TestRewriteGroupReadsEvolvedFiles rewrites tables whose schema changed
// between appends. Renamed and moved columns are found by field id, so
// every file is read by the rewriter itself; a file written before a column
// was added, or with a type since promoted, is left to iceberg-go's scan,
// which fills and converts. Either way every row is kept.
func TestRewriteGroupReadsEvolvedFiles(t *testing.T) {
	cases := []struct {
		name       string
		evolve     func(u *table.UpdateSchema)
		wantDirect int
	}{
		{name: "rename and move", wantDirect: 4, evolve: func(u *table.UpdateSchema) {
			u.RenameColumn([]string{"status"}, "state").MoveFirst([]string{"note"})
		}},
		{name: "add and promote", wantDirect: 2, evolve: func(u *table.UpdateSchema) {
			u.AddColumn([]string{"extra"}, iceberg.PrimitiveTypes.String, "", false, nil).
				UpdateColumn([]string{"n"}, table.ColumnUpdate{FieldType: iceberg.Optional[iceberg.Type]{Val: iceberg.PrimitiveTypes.Int64, Valid: true}})
		}},
	}
	cat := newCatalog(t)
	for i, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			ctx := t.Context()
			sch := iceberg.NewSchema(0,
				iceberg.NestedField{ID: 1, Name: "id", Type: iceberg.PrimitiveTypes.Int64, Required: true},
				iceberg.NestedField{ID: 2, Name: "status", Type: iceberg.PrimitiveTypes.String},
				iceberg.NestedField{ID: 3, Name: "n", Type: iceberg.PrimitiveTypes.Int32},
				iceberg.NestedField{ID: 4, Name: "note", Type: iceberg.PrimitiveTypes.String},
			)
			tbl, err := cat.CreateTable(ctx, table.Identifier{"db", fmt.Sprintf("evolved%d", i)}, sch)
			require.NoError(t, err)
			for f := range 4 {
				if f == 2 {
					tx := tbl.NewTransaction()
					u := tx.UpdateSchema(true, false)
					tc.evolve(u)
					require.NoError(t, u.Commit())
					tbl, err = tx.Commit(ctx)
					require.NoError(t, err)
				}
				tbl = appendBatch(t, tbl, anyRows(t, tbl, f, 2000))
			}
			before := tableRows(t, tbl)
			groups, _ := partitionGroups(t, tbl)
			files, st, err := rewriter.RewriteGroup(ctx, tbl, groups[""], rewriter.GroupOptions{
				Keyer: sortByID(t, tbl), TempDir: t.TempDir(), TargetFileSizeBytes: 64 << 10,
			})
			require.NoError(t, err)
			require.Equal(t, tc.wantDirect, st.DirectReads)
			require.NotEmpty(t, st.CodedColumns)
			var after []string
			for _, f := range files {
				after = append(after, fileRows(t, localPath(f.FilePath()), nil)...)
			}
			require.Equal(t, before, sorted(after))
		})
	}
}

// anyRows builds n rows of file f for tbl's current schema: ids from f*n,
// a few values per string column but note, counters in n.
func anyRows(t *testing.T, tbl *table.Table, f, n int) arrow.RecordBatch {
	t.Helper()
	sch, err := table.SchemaToArrowSchema(tbl.Schema(), nil, false, false)
	require.NoError(t, err)
	b := array.NewRecordBuilder(memory.DefaultAllocator, sch)
	defer b.Release()
	rnd := rand.New(rand.NewPCG(uint64(f), 3))
	for r, p := range rnd.Perm(n) {
		for c, fld := range sch.Fields() {
			switch fb := b.Field(c).(type) {
			case *array.Int64Builder:
				if fld.Name == "id" {
					fb.Append(int64(f*n + p))
				} else {
					fb.Append(int64(r % 100))
				}
			case *array.Int32Builder:
				fb.Append(int32(r % 100))
			case *array.StringBuilder:
				switch fld.Name {
				case "note":
					fb.Append(fmt.Sprintf("note %x", rnd.Uint64()))
				default:
					fb.Append([]string{"a", "b", "c"}[rnd.IntN(3)])
				}
			default:
				t.Fatalf("anyRows: column %s of %s", fld.Name, fld.Type)
			}
		}
	}
	return b.NewRecordBatch()
}

// TestRewriteGroupCodesPlainEncodedInput: input files whose string columns
// fell back to plain pages (written with a tiny dictionary page) are still
// read by the rewriter itself, those columns as values, which the group
// codes by hashing; nothing is lost and the output dictionary-encodes them.
func TestRewriteGroupCodesPlainEncodedInput(t *testing.T) {
	ctx := t.Context()
	cat := newCatalog(t)
	tbl := codedTable(t, cat, "plainin", 4, 6000, iceberg.Properties{table.ParquetDictSizeBytesKey: "8"},
		func(f, r int) string { return []string{"click", "view", "buy"}[(f+r)%3] })
	// The premise: status has plain data pages in the input.
	groups, _ := partitionGroups(t, tbl)
	require.True(t, hasPlainDataPage(t, localPath(groups[""][0].File.FilePath()), "status"))
	tx := tbl.NewTransaction()
	require.NoError(t, tx.SetProperties(iceberg.Properties{table.ParquetDictSizeBytesKey: fmt.Sprint(table.ParquetDictSizeBytesDefault)}))
	tbl, err := tx.Commit(ctx)
	require.NoError(t, err)

	before := tableRows(t, tbl)
	groups, _ = partitionGroups(t, tbl)
	files, st, err := rewriter.RewriteGroup(ctx, tbl, groups[""], rewriter.GroupOptions{
		Keyer: sortByID(t, tbl), TempDir: t.TempDir(), TargetFileSizeBytes: 64 << 10,
	})
	require.NoError(t, err)
	require.Equal(t, 4, st.DirectReads)
	require.Equal(t, []string{"status", "country", "kind"}, st.CodedColumns)
	var after []string
	for _, f := range files {
		after = append(after, fileRows(t, localPath(f.FilePath()), st.CodedColumns)...)
	}
	require.Equal(t, before, sorted(after))
}

// hasPlainDataPage reports whether the column named has a data page that is
// not dictionary-encoded in the Parquet file at path.
func hasPlainDataPage(t *testing.T, path, column string) bool {
	t.Helper()
	for _, cm := range columnChunks(t, openParquet(t, path), column) {
		for _, st := range cm.EncodingStats() {
			if pt := int(st.PageType); (pt == 0 || pt == 3) && st.Encoding != parquet.Encodings.RLEDict && st.Encoding != parquet.Encodings.PlainDict {
				return true
			}
		}
	}
	return false
}

// openParquet opens the Parquet file at path for the rest of the test.
func openParquet(t *testing.T, path string) *file.Reader {
	t.Helper()
	f, err := os.Open(path)
	require.NoError(t, err)
	pf, err := file.NewParquetReader(f)
	require.NoError(t, err)
	t.Cleanup(func() { require.NoError(t, pf.Close()) })
	return pf
}

// columnChunks returns the chunks of the column named, one per row group.
func columnChunks(t *testing.T, pf *file.Reader, column string) []*metadata.ColumnChunkMetaData {
	t.Helper()
	var out []*metadata.ColumnChunkMetaData
	for rg := range pf.NumRowGroups() {
		meta := pf.MetaData().RowGroup(rg)
		for c := range meta.NumColumns() {
			cm, err := meta.ColumnChunk(c)
			require.NoError(t, err)
			if cm.PathInSchema().String() == column {
				out = append(out, cm)
			}
		}
	}
	require.Len(t, out, pf.NumRowGroups(), "column %s", column)
	return out
}
