package rewriter

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"sync/atomic"
	"testing"
	"time"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/apache/iceberg-go"
	"github.com/apache/iceberg-go/catalog"
	iceio "github.com/apache/iceberg-go/io"
	"github.com/apache/iceberg-go/table"
	"github.com/stretchr/testify/require"

	"github.com/floe-project/floe/internal/testlake"
	"github.com/floe-project/floe/lake"
	"github.com/floe-project/floe/layout"
)

// A rewrite whose output differs from its input by one byte, one value or
// one row fails before it commits: the table keeps its snapshot, the output
// files are kept and named, with an evidence record beside them.
//
// On a table of format version 3 the row lineage is content too: a row
// given another _row_id or _last_updated_sequence_number, or two rows that
// traded ids, fail the check the same way.
func TestContentCheckStopsATamperedRewrite(t *testing.T) {
	cases := []struct {
		name    string
		version int
		layout  string
		column  string
		tamper  func(arr arrow.Array, row int) bool
		diff    string
	}{
		{"one string byte", 2, "binpack", "s", flipStringByte, "values differ in column s"},
		{"one string byte, sorted", 2, "sort(id)", "s", flipStringByte, "values differ in column s"},
		{"one binary byte", 2, "zorder(id, n)", "b", flipStringByte, "values differ in column b"},
		{"one integer", 2, "hilbert(id, n)", "n", bumpInt, "values differ in column n"},
		{"one id", 2, "sort(n)", "id", bumpInt, "values differ in column id"},
		{"one row id", 3, "sort(n)", "_row_id", bumpInt, "values differ in column _row_id"},
		{"one sequence number", 3, "zorder(id, n)", "_last_updated_sequence_number", bumpInt, "values differ in column _last_updated_sequence_number"},
		{"two rows trade ids", 3, "binpack", "_row_id", swapNext, "every column holds the same values, but they are combined into other rows"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			tbl, ident := contentFixture(t, tc.version)
			st, err := lake.LoadState(t.Context(), ident, tbl, lake.LoadOptions{})
			require.NoError(t, err)
			snap := st.Current.SnapshotID
			l, err := layout.Parse(tc.layout)
			require.NoError(t, err)
			var tampered atomic.Int32
			opts := CompactOptions{Layout: l, TargetFileSizeBytes: 64 << 20, Commit: CommitOptions{Sleep: func(ctx context.Context, _ time.Duration) error { return ctx.Err() }}}
			opts.Group.tamper = func(p *pickBatch) {
				if tampered.Load() > 0 || len(p.spans) == 0 {
					return
				}
				c := p.sch.FieldIndices(tc.column)
				if len(c) == 0 {
					return // not a column the rewrite carries
				}
				sp := p.spans[len(p.spans)/2]
				if tc.tamper(p.cols[c[0]][sp.src], int(sp.row)) {
					tampered.Add(1)
				}
			}
			plan, err := PlanCompaction(st, opts)
			require.NoError(t, err)
			res, cerr := Compact(t.Context(), st, plan, opts)
			require.Equal(t, int32(1), tampered.Load(), "the tamper hook changed nothing")
			require.ErrorIs(t, cerr, ErrContentMismatch)
			require.ErrorIs(t, cerr, ErrInvariant)
			require.ErrorContains(t, cerr, tc.diff)
			require.Empty(t, res.Commits)
			require.NoError(t, tbl.Refresh(t.Context()))
			require.Equal(t, snap, tbl.CurrentSnapshot().SnapshotID, "nothing was committed")

			// The evidence: a record naming the output files, kept.
			fio, err := tbl.FS(t.Context())
			require.NoError(t, err)
			entries := storedUnder(t, fio, tbl.Location()+"/"+EvidenceDir)
			require.Len(t, entries, 1)
			body := readStored(t, fio, entries[0])
			var ev Evidence
			require.NoError(t, json.Unmarshal(body, &ev))
			require.Len(t, ev.Inputs, 6)
			require.NotEmpty(t, ev.Outputs)
			require.Equal(t, len(ev.Outputs), ev.OwnReads, "the check's own read took every output")
			require.False(t, ev.Check.Read.Equal(ev.Check.Written))
			require.Equal(t, int64(30_000), ev.Check.Read.Rows)
			for _, o := range ev.Outputs {
				readStored(t, fio, o.Path) // the evidence file is kept
				require.ErrorContains(t, cerr, o.Path, "the error names the output file")
			}
			require.ErrorContains(t, cerr, "evidence in "+tbl.Location())

			// Orphan removal keeps the evidence, whatever its age, though
			// the run that wrote the files is over.
			later := func() time.Time { return time.Now().Add(30 * 24 * time.Hour) }
			op, err := PlanOrphans(t.Context(), tbl, OrphanOptions{Now: later})
			require.NoError(t, err)
			require.Equal(t, len(ev.Outputs)+1, op.Evidence)
			for _, f := range op.Files {
				require.NotContains(t, f.Path, EvidenceDir)
				for _, o := range ev.Outputs {
					require.NotEqual(t, o.Path, f.Path, "evidence listed as an orphan")
				}
			}
		})
	}
}

// storedUnder lists the files under the location dir through fio, as
// locations fio opens.
func storedUnder(t *testing.T, fio iceio.IO, dir string) []string {
	t.Helper()
	lister, ok := fio.(iceio.ListableIO)
	require.True(t, ok, "the IO of %s cannot list", dir)
	var out []string
	require.NoError(t, lister.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err == nil && !d.IsDir() {
			out = append(out, p)
		}
		return err
	}))
	return out
}

// readStored reads the file at loc through fio.
func readStored(t *testing.T, fio iceio.IO, loc string) []byte {
	t.Helper()
	f, err := fio.Open(loc)
	require.NoError(t, err, "read %s", loc)
	body, err := io.ReadAll(f)
	require.NoError(t, errors.Join(err, f.Close()))
	return body
}

// flipStringByte changes one byte of the value at row of a string or binary
// column (or of the dictionary value it points at).
func flipStringByte(arr arrow.Array, row int) bool {
	if d, ok := arr.(*array.Dictionary); ok {
		return flipStringByte(d.Dictionary(), d.GetValueIndex(row))
	}
	type offsets interface{ ValueOffset(int) int }
	a, ok := arr.(offsets)
	if !ok || arr.IsNull(row) {
		return false
	}
	data := arr.Data().Buffers()[2].Bytes()
	data[a.ValueOffset(row)] ^= 0x20
	return true
}

// bumpInt adds one to the value at row of an integer column.
func bumpInt(arr arrow.Array, row int) bool {
	switch a := arr.(type) {
	case *array.Int64:
		a.Int64Values()[row]++
	case *array.Int32:
		a.Int32Values()[row]++
	default:
		return false
	}
	return true
}

// swapNext swaps the value at row of an int64 column with the next row's.
func swapNext(arr arrow.Array, row int) bool {
	a, ok := arr.(*array.Int64)
	if !ok || row+1 >= a.Len() || a.IsNull(row) || a.IsNull(row+1) {
		return false
	}
	v := a.Int64Values()
	v[row], v[row+1] = v[row+1], v[row]
	return v[row] != v[row+1]
}

// contentFixture is an unpartitioned table of format version version with
// 6 appends of 5,000 rows, one data file each, written by iceberg-go.
func contentFixture(t *testing.T, version int) (*table.Table, lake.Ident) {
	t.Helper()
	w := testlake.New(t)
	if c, ok := w.Catalog.(catalog.Closer); ok {
		t.Cleanup(func() { require.NoError(t, c.Close()) })
	}
	sc := iceberg.NewSchema(0,
		iceberg.NestedField{ID: 1, Name: "id", Type: iceberg.PrimitiveTypes.Int64, Required: true},
		iceberg.NestedField{ID: 2, Name: "region", Type: iceberg.PrimitiveTypes.String, Required: true},
		iceberg.NestedField{ID: 3, Name: "s", Type: iceberg.PrimitiveTypes.String},
		iceberg.NestedField{ID: 4, Name: "b", Type: iceberg.PrimitiveTypes.Binary},
		iceberg.NestedField{ID: 5, Name: "n", Type: iceberg.PrimitiveTypes.Int32},
	)
	tbl := w.CreateTable(t, "db", "t", sc, nil, iceberg.Properties{table.PropertyFormatVersion: fmt.Sprint(version)}, nil)
	require.Equal(t, version, tbl.Metadata().Version())
	asc := testlake.ArrowSchema(t, tbl)
	for f := range 6 {
		b := array.NewRecordBuilder(memory.DefaultAllocator, asc)
		for i := f * 5000; i < (f+1)*5000; i++ {
			b.Field(0).(*array.Int64Builder).Append(int64(i))
			b.Field(1).(*array.StringBuilder).Append([]string{"eu", "us", "apac"}[i%3])
			b.Field(2).(*array.StringBuilder).Append(fmt.Sprintf("value-%08d", i))
			b.Field(3).(*array.BinaryBuilder).Append([]byte{byte(i), byte(i >> 8), 0xff})
			b.Field(4).(*array.Int32Builder).Append(int32(i * 7 % 1009))
		}
		rec := b.NewRecordBatch()
		b.Release()
		tbl = testlake.Append(t, tbl, rec)
		rec.Release()
	}
	return tbl, lake.Ident{Catalog: w.Name, Namespace: []string{"db"}, Name: "t"}
}

// Reading back decodes as many files at once as the budget has room for,
// counted from the outputs' sizes (the target size), not the inputs'.
func TestReadWorkers(t *testing.T) {
	for _, tc := range []struct {
		name    string
		maxFile int64
		par     int
		memory  int64
		want    int
	}{
		{"unbounded", 128 << 20, 4, 0, 4},
		{"small files fit", 256 << 10, 2, 512 << 20, 2},
		{"target-size outputs do not", 128 << 20, 2, 512 << 20, 1},
		{"a large budget holds them", 128 << 20, 2, 16 << 30, 2},
	} {
		t.Run(tc.name, func(t *testing.T) {
			require.Equal(t, tc.want, readWorkers(tc.maxFile, tc.par, tc.memory))
		})
	}
}
