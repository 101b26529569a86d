package rewriter_test

import (
	"errors"
	"fmt"
	"slices"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/apache/arrow-go/v18/parquet/file"
	"github.com/apache/iceberg-go"
	"github.com/apache/iceberg-go/table"
	"github.com/stretchr/testify/require"

	"github.com/floe-project/floe/internal/oracle"
	"github.com/floe-project/floe/internal/rowsum"
	"github.com/floe-project/floe/internal/testlake"
	"github.com/floe-project/floe/lake"
	"github.com/floe-project/floe/layout"
	"github.com/floe-project/floe/rewriter"
)

// lineageLayouts are the layouts every lineage test compacts into.
var lineageLayouts = []string{"binpack", "sort(n)", "zorder(id, n)", "hilbert(n, id)"}

// On a table of format version 3, a compaction in every layout keeps each
// live row's _row_id and _last_updated_sequence_number (spec, "Row
// Lineage"): rows whose files hold no lineage columns (the appends), rows
// whose file holds them (a copy-on-write delete's and an overwrite's
// rewrites), rows of files with deletion vectors, and the overwrite's new
// rows. Judged three ways: iceberg-go's scan, keyed by id, before and after;
// the output files read by a reader that is not iceberg-go's (DuckDB with
// the duckdb tag, else arrow-go's Parquet reader), whose every row must
// hold its lineage as columns; and the manifests, where the new files take
// first_row_id ranges of their own above every id the table had handed out.
// The format version stays 3.
func TestCompactKeepsRowLineage(t *testing.T) {
	for _, partitioned := range []bool{false, true} {
		for _, spec := range lineageLayouts {
			t.Run(fmt.Sprintf("partitioned=%v/%s", partitioned, spec), func(t *testing.T) {
				tbl, ident := lineageFixture(t, partitioned)
				st := loadState(t, ident, tbl)
				requireLineageShapes(t, st)
				before := scanLineage(t, tbl)
				require.Len(t, before, lineageFixtureRows)
				requireLineageMatches(t, before, fileLineage(t, st, true), "the files, read by another reader, before")

				after := compactLineage(t, st, spec)
				require.Equal(t, before, scanLineage(t, after.Table), "iceberg-go reads other lineage after the compaction")
				requireLineageMatches(t, before, fileLineage(t, after, false), "the output files, read by another reader")
				requireFreshRowIDRanges(t, st, after)
			})
		}
	}
}

// A table compacted twice, with appends and a deletion vector on the first
// compaction's output between the two, keeps every row's lineage through
// both, the appended rows' too.
func TestCompactTwiceKeepsRowLineage(t *testing.T) {
	for _, partitioned := range []bool{false, true} {
		t.Run(fmt.Sprintf("partitioned=%v", partitioned), func(t *testing.T) {
			tbl, ident := lineageFixture(t, partitioned)
			first := compactLineage(t, loadState(t, ident, tbl), "sort(n)")
			tbl = first.Table
			tx := tbl.NewTransaction()
			require.NoError(t, tx.SetProperties(iceberg.Properties{table.WriteDeleteModeKey: table.WriteModeMergeOnRead}))
			tbl, err := tx.Commit(t.Context())
			require.NoError(t, err)
			for f := range 5 {
				tbl = testlake.Append(t, tbl, lineageRows(t, tbl, 20_000+f*1_000, 1_000, 0))
			}
			// A merge-on-read delete of rows the first compaction wrote.
			tbl, err = tbl.Delete(t.Context(), iceberg.NewAnd(
				iceberg.GreaterThanEqual(iceberg.Reference("id"), int64(7_000)),
				iceberg.LessThan(iceberg.Reference("id"), int64(7_040))), nil)
			require.NoError(t, err)
			st := loadState(t, ident, tbl)
			requireDeleteKind(t, st, lake.DeletionVector)
			before := scanLineage(t, tbl)
			require.Len(t, before, lineageFixtureRows+5_000-40)

			second := compactLineage(t, st, "hilbert(n, id)")
			require.Equal(t, before, scanLineage(t, second.Table), "iceberg-go reads other lineage after the second compaction")
			requireLineageMatches(t, before, fileLineage(t, second, false), "the output files, read by another reader")
			requireFreshRowIDRanges(t, st, second)
		})
	}
}

// A table of format version 3 without a delete file is planned from floe's
// own listing of its files (lake.State.ScanTasks), not iceberg-go's
// planner: those tasks must carry the lineage constants too, or every row
// would come out with a null _last_updated_sequence_number and a new
// _row_id.
func TestCompactKeepsRowLineageWithoutDeletes(t *testing.T) {
	for _, spec := range lineageLayouts {
		t.Run(spec, func(t *testing.T) {
			w := testlake.New(t)
			closeCatalog(t, w)
			tbl := w.CreateTable(t, "db", "t", lineageSchema, nil, iceberg.Properties{table.PropertyFormatVersion: "3"}, nil)
			for f := range 6 {
				tbl = testlake.Append(t, tbl, lineageRows(t, tbl, f*1_000, 1_000, 0))
			}
			st := loadState(t, lake.Ident{Catalog: w.Name, Namespace: []string{"db"}, Name: "t"}, tbl)
			require.Empty(t, st.DeleteFiles)
			before := scanLineage(t, tbl)
			after := compactLineage(t, st, spec)
			require.Equal(t, before, scanLineage(t, after.Table))
			requireLineageMatches(t, before, fileLineage(t, after, false), "the output files, read by another reader")
		})
	}
}

// A table upgraded from format version 2 to 3 keeps its lineage too. Once
// a snapshot is committed after the upgrade, iceberg-go has given the older
// files first_row_id ranges, and their rows keep the ids they inherit. Right
// after the upgrade they have none: such a row's _row_id is null (spec, "Row
// Lineage for Upgraded Tables"), so the compaction writes null and the row
// takes an id of the new file's own range, unique, while its
// _last_updated_sequence_number is kept.
func TestCompactKeepsRowLineageOfAnUpgradedTable(t *testing.T) {
	for _, appendAfter := range []bool{true, false} {
		t.Run(fmt.Sprintf("appended after the upgrade=%v", appendAfter), func(t *testing.T) {
			w := testlake.New(t)
			closeCatalog(t, w)
			tbl := w.CreateTable(t, "db", "t", lineageSchema, nil, iceberg.Properties{table.PropertyFormatVersion: "2"}, nil)
			for f := range 5 {
				tbl = testlake.Append(t, tbl, lineageRows(t, tbl, f*1_000, 1_000, 0))
			}
			tx := tbl.NewTransaction()
			require.NoError(t, tx.UpgradeFormatVersion(3))
			tbl, err := tx.Commit(t.Context())
			require.NoError(t, err)
			if appendAfter {
				tbl = testlake.Append(t, tbl, lineageRows(t, tbl, 5_000, 1_000, 0))
			}
			st := loadState(t, lake.Ident{Catalog: w.Name, Namespace: []string{"db"}, Name: "t"}, tbl)
			before := scanLineageOrNull(t, tbl)
			after := compactLineage(t, st, "sort(n)")
			got := scanLineage(t, after.Table)
			if appendAfter {
				require.Equal(t, before, got)
				return
			}
			ids := map[int64]bool{}
			for id, l := range before {
				require.Equal(t, int64(noRowID), l.RowID, "row %d had an id before any snapshot of version 3", id)
				require.Equal(t, l.LastUpdatedSequenceNumber, got[id].LastUpdatedSequenceNumber, "row %d", id)
				require.False(t, ids[got[id].RowID], "row id %d twice", got[id].RowID)
				ids[got[id].RowID] = true
			}
			require.Len(t, got, len(before))
		})
	}
}

// Tables of format versions 1 and 2 have no row lineage: their compacted
// files hold only the table's columns, and the version stays.
func TestCompactWritesNoLineageBeforeV3(t *testing.T) {
	for _, version := range []int{1, 2} {
		t.Run(fmt.Sprintf("v%d", version), func(t *testing.T) {
			w := testlake.New(t)
			closeCatalog(t, w)
			tbl := w.CreateTable(t, "db", "t", lineageSchema, nil, iceberg.Properties{table.PropertyFormatVersion: fmt.Sprint(version)}, nil)
			for f := range 6 {
				tbl = testlake.Append(t, tbl, lineageRows(t, tbl, f*1_000, 1_000, 0))
			}
			st := loadState(t, lake.Ident{Catalog: w.Name, Namespace: []string{"db"}, Name: "t"}, tbl)
			before := rowSum(t, tbl)
			res := compact(t, st, "sort(n)")
			require.Equal(t, version, res.Table.Metadata().Version())
			require.Equal(t, before, rowSum(t, res.Table))
			after := loadState(t, st.Ident, res.Table)
			require.Len(t, after.DataFiles, 1)
			require.Equal(t, []int{1, 2, 3, 4}, parquetFieldIDs(t, res.Table, after.DataFiles[0].Path))
		})
	}
}

// lineageSchema is the schema of the lineage tests' tables.
var lineageSchema = iceberg.NewSchema(0,
	iceberg.NestedField{ID: 1, Name: "id", Type: iceberg.PrimitiveTypes.Int64, Required: true},
	iceberg.NestedField{ID: 2, Name: "region", Type: iceberg.PrimitiveTypes.String, Required: true},
	iceberg.NestedField{ID: 3, Name: "s", Type: iceberg.PrimitiveTypes.String},
	iceberg.NestedField{ID: 4, Name: "n", Type: iceberg.PrimitiveTypes.Int32},
)

// lineageFixtureRows is the live rows of [lineageFixture].
const lineageFixtureRows = 12_000 - 25 - 10 - 50

// lineageFixture is a table of format version 3 written by iceberg-go (with
// an identity partition on region when partitioned), whose rows take every
// way iceberg-go gives them lineage: 6 appends of 2,000 rows (ids 0 to
// 11,999, regions eu and us in turn), no lineage columns in their files;
// two merge-on-read deletes, each a deletion vector on one data file (ids
// 100-149 of eu, 2,500-2,519 of us); a copy-on-write delete (ids 4,000-4,099
// of eu), whose rewrite of the file holds the survivors' lineage as columns;
// and a copy-on-write overwrite of ids 6,000-6,009, new rows with new ids
// in a file beside the rewrite of the ones they replace.
func lineageFixture(t *testing.T, partitioned bool) (*table.Table, lake.Ident) {
	t.Helper()
	w := testlake.New(t)
	closeCatalog(t, w)
	var spec *iceberg.PartitionSpec
	if partitioned {
		s := iceberg.NewPartitionSpec(iceberg.PartitionField{SourceIDs: []int{2}, FieldID: 1000, Name: "region", Transform: iceberg.IdentityTransform{}})
		spec = &s
	}
	tbl := w.CreateTable(t, "db", "t", lineageSchema, spec, iceberg.Properties{
		table.PropertyFormatVersion: "3",
		table.WriteDeleteModeKey:    table.WriteModeMergeOnRead,
	}, nil)
	for f := range 6 {
		tbl = testlake.Append(t, tbl, lineageRows(t, tbl, f*2_000, 2_000, 0))
	}
	var err error
	between := func(region string, lo, hi int64) iceberg.BooleanExpression {
		return iceberg.NewAnd(iceberg.EqualTo(iceberg.Reference("region"), region),
			iceberg.NewAnd(iceberg.GreaterThanEqual(iceberg.Reference("id"), lo), iceberg.LessThan(iceberg.Reference("id"), hi)))
	}
	tbl, err = tbl.Delete(t.Context(), between("eu", 100, 150), nil)
	require.NoError(t, err)
	tbl, err = tbl.Delete(t.Context(), between("us", 2_500, 2_520), nil)
	require.NoError(t, err)

	tx := tbl.NewTransaction()
	require.NoError(t, tx.SetProperties(iceberg.Properties{table.WriteDeleteModeKey: table.WriteModeCopyOnWrite}))
	tbl, err = tx.Commit(t.Context())
	require.NoError(t, err)
	tbl, err = tbl.Delete(t.Context(), between("eu", 4_000, 4_100), nil)
	require.NoError(t, err)
	repl := lineageRows(t, tbl, 6_000, 10, -1)
	rdr, err := array.NewRecordReader(repl.Schema(), []arrow.RecordBatch{repl})
	require.NoError(t, err)
	defer rdr.Release()
	repl.Release()
	tbl, err = tbl.Overwrite(t.Context(), rdr, nil, table.WithOverwriteFilter(iceberg.NewAnd(
		iceberg.GreaterThanEqual(iceberg.Reference("id"), int64(6_000)), iceberg.LessThan(iceberg.Reference("id"), int64(6_010)))))
	require.NoError(t, err)
	require.Equal(t, 3, tbl.Metadata().Version())
	return tbl, lake.Ident{Catalog: w.Name, Namespace: []string{"db"}, Name: "t"}
}

// lineageRows builds n rows of tbl's schema with ids from start, regions eu
// and us in turn, n set from the id (plus bump).
func lineageRows(t *testing.T, tbl *table.Table, start, n, bump int) arrow.RecordBatch {
	t.Helper()
	b := array.NewRecordBuilder(memory.DefaultAllocator, testlake.ArrowSchema(t, tbl))
	defer b.Release()
	for i := start; i < start+n; i++ {
		b.Field(0).(*array.Int64Builder).Append(int64(i))
		b.Field(1).(*array.StringBuilder).Append([]string{"eu", "us"}[i%2])
		if i%11 == 3 {
			b.Field(2).AppendNull()
		} else {
			b.Field(2).(*array.StringBuilder).Append(fmt.Sprintf("s-%d", i%23))
		}
		b.Field(3).(*array.Int32Builder).Append(int32(i*7919%1_000 + bump))
	}
	return b.NewRecordBatch()
}

// requireLineageShapes checks that the fixture has what it promises: live
// deletion vectors, and files with and without lineage columns.
func requireLineageShapes(t *testing.T, st *lake.State) {
	t.Helper()
	requireDeleteKind(t, st, lake.DeletionVector)
	var with, without int
	for _, f := range st.DataFiles {
		if slices.Contains(parquetFieldIDs(t, st.Table, f.Path), oracle.RowIDFieldID) {
			with++
		} else {
			without++
		}
	}
	require.NotZero(t, with, "no data file holds lineage columns")
	require.NotZero(t, without, "every data file holds lineage columns")
}

func requireDeleteKind(t *testing.T, st *lake.State, kind lake.DeleteKind) {
	t.Helper()
	for _, d := range st.DeleteFiles {
		if d.DeleteKind == kind {
			return
		}
	}
	require.Failf(t, "no live delete file", "of kind %s", kind)
}

func loadState(t *testing.T, ident lake.Ident, tbl *table.Table) *lake.State {
	t.Helper()
	st, err := lake.LoadState(t.Context(), ident, tbl, lake.LoadOptions{})
	require.NoError(t, err)
	return st
}

// compact rewrites every partition of st that needs it into layout spec,
// in files of up to 64 MiB, and checks that every commit passed its
// content check.
func compact(t *testing.T, st *lake.State, spec string) rewriter.CompactResult {
	t.Helper()
	l, err := layout.Parse(spec)
	require.NoError(t, err)
	opts := rewriter.CompactOptions{Layout: l, TargetFileSizeBytes: 64 << 20, Commit: rewriter.CommitOptions{Sleep: instantSleep}}
	plan, err := rewriter.PlanCompaction(st, opts)
	require.NoError(t, err)
	require.NotEmpty(t, plan.Groups)
	res, err := rewriter.Compact(t.Context(), st, plan, opts)
	require.NoError(t, err)
	require.NotEmpty(t, res.Commits)
	for _, c := range res.Commits {
		require.NotZero(t, c.Content.Read.Rows, "every commit carries its content check")
		require.True(t, c.Content.Read.Equal(c.Content.Written))
	}
	return res
}

// compactLineage compacts st into spec, checks the content check covered
// the lineage columns and the format version stayed 3, and returns the
// table's state after.
func compactLineage(t *testing.T, st *lake.State, spec string) *lake.State {
	t.Helper()
	res := compact(t, st, spec)
	require.Equal(t, 3, res.Table.Metadata().Version())
	for _, c := range res.Commits {
		var names []string
		for _, col := range c.Content.Read.Columns {
			names = append(names, col.Name)
		}
		require.Contains(t, names, iceberg.RowIDColumnName, "the content check compares the row ids")
		require.Contains(t, names, iceberg.LastUpdatedSequenceNumberColumnName, "the content check compares the sequence numbers")
	}
	return loadState(t, st.Ident, res.Table)
}

// scanLineage reads the live rows' lineage through iceberg-go's scan, by
// id, requiring every row to have it.
func scanLineage(t *testing.T, tbl *table.Table) map[int64]oracle.Lineage {
	t.Helper()
	out := scanLineageOrNull(t, tbl)
	for id, l := range out {
		require.NotEqual(t, noRowID, l.RowID, "row %d has no _row_id", id)
	}
	return out
}

// noRowID stands for a null _row_id in [scanLineageOrNull]: row ids are
// never negative.
const noRowID = -1

// scanLineageOrNull is [scanLineage] with a null _row_id read as noRowID.
func scanLineageOrNull(t *testing.T, tbl *table.Table) map[int64]oracle.Lineage {
	t.Helper()
	scan := tbl.Scan(table.WithRowLineage(), table.WithSelectedFields("id"))
	defer scan.Close()
	sch, it, err := scan.ToArrowRecords(t.Context())
	require.NoError(t, err)
	col := func(name string) int {
		idx := sch.FieldIndices(name)
		require.Len(t, idx, 1, "column %s", name)
		return idx[0]
	}
	id, rid, seq := col("id"), col(iceberg.RowIDColumnName), col(iceberg.LastUpdatedSequenceNumberColumnName)
	out := map[int64]oracle.Lineage{}
	for rec, err := range it {
		require.NoError(t, err)
		ids, rids, seqs := rec.Column(id).(*array.Int64), rec.Column(rid).(*array.Int64), rec.Column(seq).(*array.Int64)
		for i := range ids.Len() {
			require.False(t, seqs.IsNull(i), "row %d has no _last_updated_sequence_number", ids.Value(i))
			_, dup := out[ids.Value(i)]
			require.False(t, dup, "id %d twice", ids.Value(i))
			l := oracle.Lineage{RowID: noRowID, LastUpdatedSequenceNumber: seqs.Value(i)}
			if !rids.IsNull(i) {
				l.RowID = rids.Value(i)
			}
			out[ids.Value(i)] = l
		}
		rec.Release()
	}
	return out
}

// fileLineage reads the lineage of every row of st's data files (deletes
// not applied) with a reader other than iceberg-go's (see fileLineageOf),
// inheriting a value a row does not hold from its manifest entry when
// inherit is set, else requiring every row to hold its own.
func fileLineage(t *testing.T, st *lake.State, inherit bool) map[int64]oracle.Lineage {
	t.Helper()
	files := make([]oracle.LineageFile, len(st.DataFiles))
	for i, f := range st.DataFiles {
		files[i] = oracle.LineageFile{Path: f.Path}
		if inherit {
			seq := f.SequenceNumber
			files[i].FirstRowID, files[i].DataSequenceNumber = f.DataFile.FirstRowID(), &seq
		}
	}
	fio, err := st.Table.FS(t.Context())
	require.NoError(t, err)
	return fileLineageOf(t, fio, files)
}

// requireLineageMatches checks that the rows of files hold, by id, the
// lineage the live rows of want have, and that files hold no more rows than
// want (the rows a deletion vector removed are in files, but not in want,
// while the vector is live).
func requireLineageMatches(t *testing.T, want, files map[int64]oracle.Lineage, what string) {
	t.Helper()
	got := make(map[int64]oracle.Lineage, len(want))
	for id := range want {
		l, ok := files[id]
		require.True(t, ok, "%s: live row %d not found", what, id)
		got[id] = l
	}
	require.Equal(t, want, got, what)
}

// requireFreshRowIDRanges checks the new files' manifest entries after a
// compaction of before into after: every added file's inherited
// first_row_id range starts at or above the next-row-id before, ranges do
// not overlap, and the table's next-row-id moved past them all. Row ids
// the files hold as columns win over the range on read; the range only
// keeps any row id a reader inherits unique.
func requireFreshRowIDRanges(t *testing.T, before, after *lake.State) {
	t.Helper()
	old := map[string]bool{}
	for _, f := range before.DataFiles {
		old[f.Path] = true
	}
	next := before.Table.Metadata().NextRowID()
	end := next
	type span struct{ lo, hi int64 }
	var spans []span
	for _, f := range after.DataFiles {
		if old[f.Path] {
			continue
		}
		first := f.DataFile.FirstRowID()
		require.NotNil(t, first, "%s has no first_row_id", f.Path)
		require.GreaterOrEqual(t, *first, next, "%s: first_row_id below the next-row-id before the commit", f.Path)
		for _, s := range spans {
			require.False(t, *first < s.hi && s.lo < *first+f.Records, "%s: row id range overlaps another new file's", f.Path)
		}
		spans = append(spans, span{*first, *first + f.Records})
		end = max(end, *first+f.Records)
	}
	require.NotEmpty(t, spans)
	require.GreaterOrEqual(t, after.Table.Metadata().NextRowID(), end)
}

// parquetFieldIDs lists the field ids of the top-level columns of tbl's
// Parquet file at loc, in file order.
func parquetFieldIDs(t *testing.T, tbl *table.Table, loc string) []int {
	t.Helper()
	rdr := openTableParquet(t, tbl, loc)
	defer func() { require.NoError(t, rdr.Close()) }()
	root := rdr.MetaData().Schema.Root()
	ids := make([]int, root.NumFields())
	for i := range root.NumFields() {
		ids[i] = int(root.Field(i).FieldID())
	}
	return ids
}

// openTableParquet opens tbl's Parquet file at loc with arrow-go's reader,
// through the table's own IO.
func openTableParquet(t testing.TB, tbl *table.Table, loc string) *file.Reader {
	t.Helper()
	fio, err := tbl.FS(t.Context())
	require.NoError(t, err)
	f, err := fio.Open(loc)
	require.NoError(t, err)
	rdr, err := file.NewParquetReader(f)
	if err != nil {
		require.NoError(t, errors.Join(err, f.Close()))
	}
	return rdr
}

// DigestTasks, which floe's check of a distributed engine's compaction
// reads with, digests the row lineage of a table of format version 3: a
// rewrite that keeps it (iceberg-go's own RewriteDataFiles) digests as its
// input did, and one that writes the same rows as new ones (an overwrite of
// the whole table) differs in the lineage columns alone.
func TestDigestTasksComparesRowLineage(t *testing.T) {
	// The live rows of every file, as control's check reads the files a
	// compaction replaced and added.
	digest := func(t *testing.T, tbl *table.Table) rowsum.Sum {
		t.Helper()
		s, err := rewriter.DigestTasks(t.Context(), tbl, liveTasks(t, tbl), 2, 0)
		require.NoError(t, err)
		return s
	}
	t.Run("kept", func(t *testing.T) {
		tbl, _ := lineageFixture(t, false)
		before := digest(t, tbl)
		res, err := tbl.RewriteDataFiles(t.Context(), []table.CompactionTaskGroup{{Tasks: liveTasks(t, tbl)}}, table.RewriteDataFilesOptions{})
		require.NoError(t, err)
		require.Equal(t, "", rowsum.Diff(before, digest(t, res.Table)))
		require.Equal(t, scanLineage(t, tbl), scanLineage(t, res.Table), "iceberg-go's own rewrite keeps the lineage")
	})
	t.Run("lost", func(t *testing.T) {
		tbl, _ := lineageFixture(t, false)
		before := digest(t, tbl)
		scan := tbl.Scan()
		rows, err := scan.ToArrowTable(t.Context())
		require.NoError(t, err)
		require.NoError(t, scan.Close())
		defer rows.Release()
		after, err := tbl.OverwriteTable(t.Context(), rows, 1_000, nil)
		require.NoError(t, err)
		diff := rowsum.Diff(before, digest(t, after))
		require.Equal(t, "values differ in column _last_updated_sequence_number, _row_id", diff)
	})
}

// liveTasks plans a scan of every live data file of tbl, one task a file.
func liveTasks(t *testing.T, tbl *table.Table) []table.FileScanTask {
	t.Helper()
	scan := tbl.Scan()
	defer func() { require.NoError(t, scan.Close()) }()
	tasks, err := scan.PlanFiles(t.Context())
	require.NoError(t, err)
	return rewriter.CollapseTasks(tasks)
}
