//go:build duckdb

package oracle_test

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/apache/arrow-go/v18/parquet/pqarrow"
	iceio "github.com/apache/iceberg-go/io"
	"github.com/stretchr/testify/require"

	"github.com/floe-project/floe/internal/oracle"
	"github.com/floe-project/floe/internal/testlake"
)

type row struct {
	id  int64
	s   string
	val *float64
}

var rowSchema = arrow.NewSchema([]arrow.Field{
	{Name: "id", Type: arrow.PrimitiveTypes.Int64},
	{Name: "s", Type: arrow.BinaryTypes.String},
	{Name: "v", Type: arrow.PrimitiveTypes.Float64, Nullable: true},
}, nil)

// writeRows writes rows to a new Parquet file and returns its path.
func writeRows(t *testing.T, dir, name string, rows []row) string {
	t.Helper()
	b := array.NewRecordBuilder(memory.DefaultAllocator, rowSchema)
	defer b.Release()
	for _, r := range rows {
		b.Field(0).(*array.Int64Builder).Append(r.id)
		b.Field(1).(*array.StringBuilder).Append(r.s)
		if r.val == nil {
			b.Field(2).AppendNull()
		} else {
			b.Field(2).(*array.Float64Builder).Append(*r.val)
		}
	}
	rec := b.NewRecordBatch()
	defer rec.Release()
	p := filepath.Join(dir, name)
	f, err := os.Create(p)
	require.NoError(t, err)
	w, err := pqarrow.NewFileWriter(rowSchema, f, nil, pqarrow.DefaultWriterProps())
	require.NoError(t, err)
	require.NoError(t, w.Write(rec))
	require.NoError(t, w.Close())
	return p
}

func fl(v float64) *float64 { return &v }

func genRows(n int) []row {
	out := make([]row, n)
	for i := range out {
		out[i] = row{id: int64(i), s: string(rune('a' + i%26)), val: fl(float64(i) / 3)}
		if i%5 == 0 {
			out[i].val = nil
		}
	}
	return out
}

func TestChecksumIsOrderIndependentAndCatchesChanges(t *testing.T) {
	dir := t.TempDir()
	rows := genRows(1000)
	one := writeRows(t, dir, "one.parquet", rows)
	rev := make([]row, len(rows))
	for i, r := range rows {
		rev[len(rows)-1-i] = r
	}
	split := []string{
		writeRows(t, dir, "a.parquet", rev[:300]),
		"file://" + writeRows(t, dir, "b.parquet", rev[300:700]),
		writeRows(t, dir, "c.parquet", rev[700:]),
	}
	// Iceberg writers put a partitioned table's files in col=value
	// directories; DuckDB must not read that as a column.
	partDir := filepath.Join(dir, "data", "id_bucket=3")
	require.NoError(t, os.MkdirAll(partDir, 0o755))
	inPartition := writeRows(t, partDir, "p.parquet", rows)
	changed := append([]row(nil), rows...)
	changed[17].s = "changed"
	// Same count and xor as rows[:4], different multiset: duplicates cancel
	// in the xor, not in the sum.
	dupA := []row{rows[0], rows[1], rows[1], rows[2]}
	dupB := []row{rows[0], rows[2], rows[3], rows[3]}

	ctx := t.Context()
	base, err := oracle.Checksum(ctx, iceio.LocalFS{}, []string{one})
	require.NoError(t, err)
	require.Equal(t, int64(1000), base.Rows)

	cases := []struct {
		name  string
		paths []string
		same  bool
	}{
		{name: "reordered-and-split", paths: split, same: true},
		{name: "in-a-partition-directory", paths: []string{inPartition}, same: true},
		{name: "one-value-changed", paths: []string{writeRows(t, dir, "changed.parquet", changed)}},
		{name: "row-dropped", paths: []string{writeRows(t, dir, "dropped.parquet", rows[1:])}},
		{name: "row-duplicated", paths: []string{one, writeRows(t, dir, "dup.parquet", rows[:1])}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			got, err := oracle.Checksum(ctx, iceio.LocalFS{}, tc.paths)
			require.NoError(t, err)
			if tc.same {
				require.Equal(t, base, got)
			} else {
				require.NotEqual(t, base, got)
			}
		})
	}

	a, err := oracle.Checksum(ctx, iceio.LocalFS{}, []string{writeRows(t, dir, "dupA.parquet", dupA)})
	require.NoError(t, err)
	b, err := oracle.Checksum(ctx, iceio.LocalFS{}, []string{writeRows(t, dir, "dupB.parquet", dupB)})
	require.NoError(t, err)
	require.Equal(t, a.Rows, b.Rows)
	require.Equal(t, a.Xor, b.Xor, "duplicates cancel in the xor")
	require.NotEqual(t, a.Sum, b.Sum, "but not in the sum")
}

func TestChecksumLiveAppliesPositionDeletes(t *testing.T) {
	dir := t.TempDir()
	rows := genRows(100)
	data := writeRows(t, dir, "data.parquet", rows)
	delSchema := arrow.NewSchema([]arrow.Field{
		{Name: "file_path", Type: arrow.BinaryTypes.String},
		{Name: "pos", Type: arrow.PrimitiveTypes.Int64},
	}, nil)
	b := array.NewRecordBuilder(memory.DefaultAllocator, delSchema)
	defer b.Release()
	for _, pos := range []int64{3, 50} {
		b.Field(0).(*array.StringBuilder).Append("file://" + data)
		b.Field(1).(*array.Int64Builder).Append(pos)
	}
	rec := b.NewRecordBatch()
	defer rec.Release()
	dp := filepath.Join(dir, "deletes.parquet")
	f, err := os.Create(dp)
	require.NoError(t, err)
	w, err := pqarrow.NewFileWriter(delSchema, f, nil, pqarrow.DefaultWriterProps())
	require.NoError(t, err)
	require.NoError(t, w.Write(rec))
	require.NoError(t, w.Close())

	var kept []row
	for i, r := range rows {
		if i != 3 && i != 50 {
			kept = append(kept, r)
		}
	}
	want, err := oracle.Checksum(t.Context(), iceio.LocalFS{}, []string{writeRows(t, dir, "kept.parquet", kept)})
	require.NoError(t, err)
	got, err := oracle.ChecksumLive(t.Context(), iceio.LocalFS{}, []string{data}, []string{dp})
	require.NoError(t, err)
	require.Equal(t, want, got)
	require.Equal(t, int64(98), got.Rows)
}

func TestOrderViolations(t *testing.T) {
	dir := t.TempDir()
	rows := genRows(300)
	a := writeRows(t, dir, "a.parquet", rows[:100])
	b := writeRows(t, dir, "b.parquet", rows[100:])
	unsorted := append([]row{rows[5]}, rows[:5]...)
	cases := []struct {
		name  string
		paths []string
		keys  []string
		want  int64
	}{
		{name: "ordered", paths: []string{a, b}, keys: []string{"id"}, want: 0},
		{name: "files-swapped", paths: []string{b, a}, keys: []string{"id"}, want: 1},
		{name: "within-file", paths: []string{writeRows(t, dir, "u.parquet", unsorted)}, keys: []string{"id"}, want: 1},
		{name: "two-columns", paths: []string{a, b}, keys: []string{"s", "id"}, want: 11},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			got, err := oracle.OrderViolations(t.Context(), iceio.LocalFS{}, tc.paths, tc.keys...)
			require.NoError(t, err)
			require.Equal(t, tc.want, got)
		})
	}
}

func TestChecksumTableAppliesIcebergPositionDeletes(t *testing.T) {
	cat := newCatalog(t)
	ctx := t.Context()
	var but7 []int64
	for _, id := range seq(0, 300) {
		if id != 7 {
			but7 = append(but7, id)
		}
	}
	want, err := oracle.ChecksumTable(ctx, appendIDs(t, newTable(t, cat, "but7"), but7...))
	require.NoError(t, err)
	require.Equal(t, int64(299), want.Rows)

	tbl := appendIDs(t, newTable(t, cat, "all"), seq(0, 300)...)
	before, err := oracle.ChecksumTable(ctx, tbl)
	require.NoError(t, err)
	require.NotEqual(t, want, before)
	tbl = deleteID(t, tbl, 7)
	_, dels, err := oracle.LiveFiles(ctx, tbl)
	require.NoError(t, err)
	require.NotEmpty(t, dels)
	got, err := oracle.ChecksumTable(ctx, tbl)
	require.NoError(t, err)
	require.Equal(t, want, got)
}

// TestDuckDBReadsS3Tables reads a table on an S3 store, whose files DuckDB
// cannot open itself here, through downloaded copies: its Sums are those of
// the same rows on a local table, position deletes applied by location.
func TestDuckDBReadsS3Tables(t *testing.T) {
	ctx := t.Context()
	local := appendIDs(t, newTable(t, newCatalog(t), "local"), seq(0, 300)...)
	local = deleteID(t, local, 7)
	want, err := oracle.ChecksumTable(ctx, local)
	require.NoError(t, err)
	require.Equal(t, int64(299), want.Rows)

	w := testlake.NewS3(t)
	tbl := w.CreateTable(t, "db", "remote", tblSchema, nil, nil, nil)
	tbl = appendIDs(t, tbl, seq(0, 300)...)
	whole, err := oracle.ChecksumTable(ctx, tbl)
	require.NoError(t, err)
	require.Equal(t, int64(300), whole.Rows)
	tbl = deleteID(t, tbl, 7)
	require.Contains(t, tbl.Location(), "s3://")
	got, err := oracle.ChecksumTable(ctx, tbl)
	require.NoError(t, err)
	require.Equal(t, want, got)

	data, dels, err := oracle.LiveFiles(ctx, tbl)
	require.NoError(t, err)
	require.NotEmpty(t, dels)
	fio, err := tbl.FS(ctx)
	require.NoError(t, err)
	live, err := oracle.ChecksumLive(ctx, fio, data, dels)
	require.NoError(t, err)
	require.Equal(t, int64(299), live.Rows)
	all, err := oracle.Checksum(ctx, fio, data)
	require.NoError(t, err)
	require.Equal(t, whole, all)
	n, err := oracle.OrderViolations(ctx, fio, data, "id")
	require.NoError(t, err)
	require.Zero(t, n)

	_, err = oracle.Checksum(ctx, nil, data)
	require.ErrorContains(t, err, "no IO")
}
