package rewriter

import (
	"context"
	"fmt"
	"slices"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/apache/arrow-go/v18/parquet"
	"github.com/apache/arrow-go/v18/parquet/file"
	"github.com/apache/arrow-go/v18/parquet/pqarrow"
	"github.com/apache/iceberg-go"
	icebergio "github.com/apache/iceberg-go/io"
	"github.com/apache/iceberg-go/table"
)

// parquetFiles reads whole data files of a coded group with arrow-go's
// Parquet reader itself, so that the columns the group codes come as the
// files' dictionary indices (pqarrow's read-dictionary property, asked for
// a column only where all its data pages are dictionary-encoded, see
// dictPagesOnly): a string is then neither decoded nor hashed per row, only
// each dictionary value once (encodeColumn). iceberg-go's scan sets its own read properties and
// offers no way to ask for that.
//
// It reads only what needs none of the scan's work: a whole Parquet file no
// delete of any kind applies to, of a table of format version 2 or less
// (a v3 table's rows carry lineage, which a file may not hold and the scan
// then computes from the file's place in the table: see "Row lineage" in
// the package documentation), whose flat columns hold every column of the scan's
// schema by field id, each of the very Arrow type the scan gives (or a
// dictionary of it, where asked). Anything else — deletes, a column added
// after the file was written, a promoted type, a file without field ids,
// nested columns — is iceberg-go's to read, file by file as the group's
// reader meets it; the group's rows are checked per file either way.
type parquetFiles struct {
	schema    *arrow.Schema // the scan's batches'
	fs        icebergio.IO
	mem       memory.Allocator
	names     []string         // the scan's columns
	ids       []int            // their field ids
	types     []arrow.DataType // their types in the scan's batches
	batchRows int
	// parallel decodes a file's columns on goroutines of their own:
	// worth it when the group has cores to itself, not when RewriteGroups
	// runs a group per core (2.6% less CPU without, in six alternating
	// floe-only runs of bench/rewrite's partitioned sort; exploratory).
	parallel bool
	// readDict reports whether column i should come as a dictionary
	// array: inputCoder.readDict, consulted as each file is opened.
	readDict func(i int) bool
	// done counts the files read here (GroupStats.DirectReads).
	done int
}

// newParquetFiles prepares reads of tbl's files for batches of schema, the
// scan's, whose columns are proj's, decoding a file's columns in parallel
// when parallel is set; nil when the table's format version is
// 3 or more, or schema and proj disagree.
func newParquetFiles(ctx context.Context, tbl *table.Table, schema *arrow.Schema, proj *iceberg.Schema, mem memory.Allocator, batchRows int, parallel bool, readDict func(int) bool) (*parquetFiles, error) {
	if tbl.Metadata().Version() >= 3 || proj == nil || len(proj.Fields()) != schema.NumFields() {
		return nil, nil
	}
	fs, err := tbl.FS(ctx)
	if err != nil {
		return nil, fmt.Errorf("open file io of %s: %w", tbl.Location(), err)
	}
	p := &parquetFiles{schema: schema, fs: fs, mem: mem, batchRows: batchRows, parallel: parallel, readDict: readDict}
	for i, f := range proj.Fields() {
		if f.Name != schema.Field(i).Name || !flatType(schema.Field(i).Type) {
			return nil, nil
		}
		p.names = append(p.names, f.Name)
		p.ids = append(p.ids, f.ID)
		p.types = append(p.types, schema.Field(i).Type)
	}
	return p, nil
}

// takes reports whether t is a whole Parquet file no delete applies to.
func (p *parquetFiles) takes(t table.FileScanTask) bool {
	return len(t.DeleteFiles) == 0 && len(t.EqualityDeleteFiles) == 0 && len(t.DeletionVectorFiles) == 0 &&
		t.File.FileFormat() == iceberg.ParquetFile && t.Start == 0 && t.Length == t.File.FileSizeBytes()
}

// read yields the rows of t's file in batches of the scan's columns, the
// ones readDict names as dictionary arrays, and returns how many it read.
// handled is false, with nothing yielded, when the file's columns are not
// the scan's as parquetFiles requires; stopped is true when yield asked to
// stop.
func (p *parquetFiles) read(ctx context.Context, t table.FileScanTask, yield func(arrow.RecordBatch) bool) (rows int64, handled, stopped bool, err error) {
	f, err := p.fs.Open(t.File.FilePath())
	if err != nil {
		return 0, false, false, err
	}
	defer f.Close()
	rdr, err := file.NewParquetReader(f, file.WithReadProps(parquet.NewReaderProperties(p.mem)))
	if err != nil {
		return 0, false, false, err
	}
	defer rdr.Close()

	pqs := rdr.MetaData().Schema
	leafOf := make(map[int]int, pqs.NumColumns())
	for i := range pqs.NumColumns() {
		c := pqs.Column(i)
		if c.MaxRepetitionLevel() != 0 || len(c.ColumnPath()) != 1 {
			return 0, false, false, nil // nested: iceberg-go's
		}
		if id := int(c.SchemaNode().FieldID()); id >= 0 {
			leafOf[id] = i
		}
	}
	leaves := make([]int, len(p.ids))
	props := pqarrow.ArrowReadProperties{BatchSize: int64(p.batchRows), Parallel: p.parallel}
	dict := make([]bool, len(p.ids))
	for i, id := range p.ids {
		leaf, ok := leafOf[id]
		if !ok {
			return 0, false, false, nil // written before the column, or without ids
		}
		leaves[i] = leaf
		if p.readDict != nil && p.readDict(i) && dictPagesOnly(rdr, leaf) {
			dict[i] = true
			props.SetReadDict(leaf, true)
		}
	}
	fr, err := pqarrow.NewFileReader(rdr, props, p.mem)
	if err != nil {
		return 0, false, false, err
	}
	fsch, err := fr.Schema()
	if err != nil {
		return 0, false, false, err
	}
	if fsch.NumFields() != pqs.NumColumns() {
		return 0, false, false, nil
	}
	for i, leaf := range leaves {
		got := fsch.Field(leaf).Type
		d, isDict := got.(*arrow.DictionaryType)
		if isDict != dict[i] {
			return 0, false, false, nil
		}
		if isDict {
			got = d.ValueType
		}
		if !arrow.TypeEqual(got, p.types[i]) {
			return 0, false, false, nil // another type than the scan's: iceberg-go converts it
		}
	}
	// The reader returns the columns in the file's order.
	sorted := slices.Clone(leaves)
	slices.Sort(sorted)
	sorted = slices.Compact(sorted)
	if len(sorted) != len(leaves) {
		return 0, false, false, nil // one field id twice
	}
	pos := make([]int, len(leaves))
	for i, leaf := range leaves {
		pos[i], _ = slices.BinarySearch(sorted, leaf)
	}
	rr, err := fr.GetRecordReader(ctx, sorted, nil)
	if err != nil {
		return 0, false, false, err
	}
	defer rr.Release()
	fields := make([]arrow.Field, len(leaves))
	cols := make([]arrow.Array, len(leaves))
	for rr.Next() {
		rec := rr.RecordBatch()
		for i := range leaves {
			cols[i] = rec.Column(pos[i])
			fields[i] = arrow.Field{Name: p.names[i], Type: cols[i].DataType(), Nullable: true}
		}
		out := array.NewRecordBatch(arrow.NewSchema(fields, nil), cols, rec.NumRows())
		rows += out.NumRows()
		if !yield(out) {
			return rows, true, true, nil
		}
	}
	if err := rr.Err(); err != nil {
		return rows, true, false, err
	}
	return rows, true, false, nil
}

// Parquet page types (PageType in parquet.thrift), as the footer's page
// encoding stats give them.
const (
	pageTypeData   = 0
	pageTypeDataV2 = 3
)

// dictPagesOnly reports whether every data page of leaf, in every row group
// of rdr, is dictionary-encoded, as the footer's page encoding stats say.
// Only such a column is asked for as a dictionary: arrow-go reads one that
// fell back to plain pages (a high-cardinality column past the dictionary
// page limit, say) by hashing every plain value into a dictionary, which
// costs more than reading its values. A writer that records no stats gets
// its values read.
func dictPagesOnly(rdr *file.Reader, leaf int) bool {
	md := rdr.MetaData()
	for rg := range md.NumRowGroups() {
		cc, err := md.RowGroup(rg).ColumnChunk(leaf)
		if err != nil || !cc.HasDictionaryPage() {
			return false
		}
		stats := cc.EncodingStats()
		if len(stats) == 0 {
			return false
		}
		for _, st := range stats {
			if pt := int(st.PageType); (pt == pageTypeData || pt == pageTypeDataV2) &&
				st.Encoding != parquet.Encodings.RLEDict && st.Encoding != parquet.Encodings.PlainDict {
				return false
			}
		}
	}
	return true
}
