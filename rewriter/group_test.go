package rewriter_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"testing"

	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/decimal128"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/apache/iceberg-go"
	"github.com/apache/iceberg-go/table"
	"github.com/stretchr/testify/require"

	"github.com/floe-project/floe/internal/oracle"
	"github.com/floe-project/floe/rewriter"
)

func TestRewriteGroupSortsEveryPartitionAndKeepsRows(t *testing.T) {
	cases := []struct {
		name        string
		partitioned bool
		memory      int64
		keyer       bool
		props       iceberg.Properties
		wantSpill   bool
		wantSplit   bool
		chunk       int // ScanChunkFiles
	}{
		{name: "sort,partitioned,memory=2MiB", partitioned: true, memory: 2 << 20, keyer: true, wantSpill: true},
		{name: "sort,unpartitioned,unbounded", keyer: true},
		{name: "binpack,partitioned,chunks of 2 files", partitioned: true, chunk: 2},
		{
			name: "sort,split-tasks,chunks of 3 files", keyer: true, memory: 4 << 20, wantSpill: true, wantSplit: true, chunk: 3,
			props: iceberg.Properties{
				table.ParquetRowGroupLimitKey: "1000",
				"read.split.target-size":      "16384",
			},
		},
	}
	cat := newCatalog(t)
	for i, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			ctx := t.Context()
			tbl := createEvents(t, cat, "events"+string(rune('a'+i)), tc.partitioned, tc.props)
			const commits, rows = 5, 12000
			for c := range commits {
				tbl = appendBatch(t, tbl, eventRows(t, tbl, c*rows, rows, "", uint64(c)))
			}
			before, err := oracle.ChecksumIceberg(ctx, tbl)
			require.NoError(t, err)
			require.Equal(t, int64(commits*rows), before.Rows)

			tmp := t.TempDir()
			opts := rewriter.GroupOptions{TargetFileSizeBytes: 256 << 10, MemoryBytes: tc.memory, TempDir: tmp, ScanChunkFiles: tc.chunk}
			if tc.keyer {
				// The layout is the Iceberg sort order "id asc": record it.
				order, err := table.NewSortOrder(1, []table.SortField{{
					SourceIDs: []int{1}, Transform: iceberg.IdentityTransform{}, Direction: table.SortASC, NullOrder: table.NullsFirst,
				}})
				require.NoError(t, err)
				tx := tbl.NewTransaction()
				require.NoError(t, tx.ReplaceSortOrder(order))
				tbl, err = tx.Commit(ctx)
				require.NoError(t, err)
				id := tbl.SortOrder().OrderID()
				opts.Keyer, opts.SortOrderID = int64Keyer{col: 0}, &id
			}
			res := rewriteTable(t, tbl, opts)

			after, err := oracle.ChecksumIceberg(ctx, res.tbl)
			require.NoError(t, err)
			require.Equal(t, before, after, "rows changed by the rewrite")
			requireEmptyDir(t, tmp)

			var spilled, inTasks, inFiles int
			var outRows int64
			for _, st := range res.stats {
				t.Logf("group: tasks=%d files=%d rows=%d out=%d files/%d B spilled=%d runs passes=%d peak=%d B in %s",
					st.InputTasks, st.InputFiles, st.Rows, st.OutputFiles, st.OutputBytes, st.Sort.SpilledRuns, st.Sort.MergePasses, st.PeakArrowBytes, st.Duration)
				spilled += st.Sort.SpilledRuns
				inTasks += st.InputTasks
				inFiles += st.InputFiles
				outRows += st.Rows
				if tc.memory > 0 {
					require.LessOrEqual(t, st.PeakArrowBytes, tc.memory, "peak Arrow bytes over budget: %+v", st)
				}
			}
			require.Equal(t, int64(commits*rows), outRows)
			require.Equal(t, tc.wantSpill, spilled > 0)
			require.Equal(t, tc.wantSplit, inTasks > inFiles, "tasks %d files %d", inTasks, inFiles)
			if tc.partitioned {
				require.Len(t, res.files, len(regions))
			}
			// sort_order_id as committed, read back from the new manifests.
			committed, _ := partitionGroups(t, res.tbl)
			for _, tasks := range committed {
				for _, task := range tasks {
					if tc.keyer {
						require.NotNil(t, task.File.SortOrderID())
						require.Equal(t, 1, *task.File.SortOrderID())
					} else if id := task.File.SortOrderID(); id != nil {
						require.Zero(t, *id, "bin-pack output claims a sort order")
					}
				}
			}
			for part, files := range res.files {
				if tc.keyer {
					requireGloballyOrdered(t, files)
				}
				for _, f := range files {
					if tc.keyer {
						require.NotNil(t, f.SortOrderID())
						require.Equal(t, 1, *f.SortOrderID())
					} else {
						require.Nil(t, f.SortOrderID())
					}
					if part != "" {
						require.Equal(t, part, f.Partition()[1000])
					}
				}
			}
		})
	}
}

func TestRewriteGroupDoesNotResurrectDeletedRows(t *testing.T) {
	ctx := t.Context()
	cat := newCatalog(t)
	tbl := createEvents(t, cat, "deletes", true, iceberg.Properties{"write.delete.mode": "merge-on-read"})
	for c := range 4 {
		tbl = appendBatch(t, tbl, eventRows(t, tbl, c*5000, 5000, "", uint64(c)))
	}
	var err error
	tbl, err = tbl.Delete(ctx, iceberg.LessThan(iceberg.Reference("amount"), 500.0), nil)
	require.NoError(t, err)
	_, dels, err := oracle.LiveFiles(ctx, tbl)
	require.NoError(t, err)
	require.NotEmpty(t, dels, "expected position delete files")
	before, err := oracle.ChecksumIceberg(ctx, tbl)
	require.NoError(t, err)
	require.Less(t, before.Rows, int64(20000))

	// One file per ReadTasks call: deletes still apply file by file.
	res := rewriteTable(t, tbl, rewriter.GroupOptions{Keyer: int64Keyer{col: 0}, MemoryBytes: 2 << 20, TempDir: t.TempDir(), ScanChunkFiles: 1})
	after, err := oracle.ChecksumIceberg(ctx, res.tbl)
	require.NoError(t, err)
	require.Equal(t, before, after)
	_, dels, err = oracle.LiveFiles(ctx, res.tbl)
	require.NoError(t, err)
	require.Empty(t, dels, "dead position deletes were removed with their data files")
}

func TestRewriteGroupFailureLeavesNothingBehind(t *testing.T) {
	cat := newCatalog(t)
	tbl := createEvents(t, cat, "cancel", false, nil)
	for c := range 3 {
		tbl = appendBatch(t, tbl, eventRows(t, tbl, c*20000, 20000, "", uint64(c)))
	}
	groups, _ := partitionGroups(t, tbl)
	dataDir := filepath.Join(localPath(tbl.Location()), "data")
	countFiles := func() int {
		n := 0
		require.NoError(t, filepath.WalkDir(dataDir, func(_ string, d os.DirEntry, err error) error {
			if err == nil && !d.IsDir() {
				n++
			}
			return err
		}))
		return n
	}
	existing := countFiles()

	cases := []struct {
		name  string
		keyer rewriter.Keyer
		ctx   func() (context.Context, context.CancelFunc)
	}{
		{name: "cancelled", keyer: int64Keyer{col: 0}, ctx: func() (context.Context, context.CancelFunc) {
			ctx, cancel := context.WithCancel(t.Context())
			cancel()
			return ctx, cancel
		}},
		{name: "keyer-fails", keyer: int64Keyer{col: 2}, ctx: func() (context.Context, context.CancelFunc) {
			return context.WithCancel(t.Context())
		}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			ctx, cancel := tc.ctx()
			defer cancel()
			tmp := t.TempDir()
			files, _, err := rewriter.RewriteGroup(ctx, tbl, groups[""], rewriter.GroupOptions{
				Keyer: tc.keyer, MemoryBytes: 1 << 20, TempDir: tmp, TargetFileSizeBytes: 128 << 10,
			})
			require.Error(t, err)
			require.Nil(t, files)
			requireEmptyDir(t, tmp)
			require.Equal(t, existing, countFiles(), "new data files left behind")
		})
	}
}

func TestRewriteGroupRejectsBadInput(t *testing.T) {
	cat := newCatalog(t)
	tbl := createEvents(t, cat, "bad", true, nil)
	tbl = appendBatch(t, tbl, eventRows(t, tbl, 0, 300, "", 1))
	groups, order := partitionGroups(t, tbl)
	require.Len(t, order, 3)
	neg := -1
	cases := []struct {
		name  string
		tasks []table.FileScanTask
		opts  rewriter.GroupOptions
		want  []string
	}{
		{name: "spans-partitions", tasks: append(append([]table.FileScanTask(nil), groups["eu"]...), groups["us"]...), want: []string{"spans partitions"}},
		{name: "bad-options", tasks: groups["eu"], opts: rewriter.GroupOptions{
			TargetFileSizeBytes: -1, MemoryBytes: 1000, Parallelism: -1, ScanBatchRows: -1, ScanChunkFiles: -1, SortOrderID: &neg, TempDir: "/nonexistent/dir",
		}, want: []string{"target file size", "1 MiB", "parallelism", "scan batch rows", "scan chunk files", "sort order id", "temp dir"}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			_, _, err := rewriter.RewriteGroup(t.Context(), tbl, tc.tasks, tc.opts)
			for _, w := range tc.want {
				require.ErrorContains(t, err, w)
			}
		})
	}
}

func TestRewriteGroupsRunsGroupsConcurrently(t *testing.T) {
	ctx := t.Context()
	cat := newCatalog(t)
	tbl := createEvents(t, cat, "groups", true, nil)
	for c := range 3 {
		tbl = appendBatch(t, tbl, eventRows(t, tbl, c*6000, 6000, "", uint64(c)))
	}
	before, err := oracle.ChecksumIceberg(ctx, tbl)
	require.NoError(t, err)
	duckBefore := duckSum(t, tbl)
	groups, order := partitionGroups(t, tbl)
	var in [][]table.FileScanTask
	for _, k := range order {
		in = append(in, groups[k])
	}
	pages := rewriter.NewPagePool()
	results := rewriter.RewriteGroups(ctx, tbl, in, rewriter.GroupOptions{Keyer: int64Keyer{col: 0}, MemoryBytes: 6 << 20, Parallelism: 2, TempDir: t.TempDir(), Pages: pages})
	require.Len(t, results, len(in))
	require.Positive(t, pages.PeakMappedBytes(), "the groups' large buffers did not come from the pool")
	require.NoError(t, pages.Close(), "Arrow buffers left unreleased")
	tx := tbl.NewTransaction()
	rw := tx.NewRewrite(nil)
	files := make(map[string][]iceberg.DataFile)
	for i, r := range results {
		require.NoError(t, r.Err)
		files[order[i]] = r.Files
		requireGloballyOrdered(t, r.Files)
		require.LessOrEqual(t, r.Stats.PeakArrowBytes, int64(3<<20))
		for _, task := range rewriter.CollapseTasks(in[i]) {
			rw.DeleteFile(task.File)
		}
		for _, f := range r.Files {
			rw.AddDataFile(f)
		}
	}
	require.NoError(t, rw.Commit(ctx))
	tbl, err = tx.Commit(ctx)
	require.NoError(t, err)
	after, err := oracle.ChecksumIceberg(ctx, tbl)
	require.NoError(t, err)
	require.Equal(t, before, after)
	checkWithDuckDB(t, duckBefore, tbl, files, true)
}

func TestRewriteGroupNestedColumns(t *testing.T) {
	ctx := t.Context()
	cat := newCatalog(t)
	sch := iceberg.NewSchema(0,
		iceberg.NestedField{ID: 1, Name: "id", Type: iceberg.PrimitiveTypes.Int64, Required: true},
		iceberg.NestedField{ID: 2, Name: "tags", Type: &iceberg.ListType{ElementID: 5, Element: iceberg.PrimitiveTypes.String, ElementRequired: false}},
		iceberg.NestedField{ID: 3, Name: "geo", Type: &iceberg.StructType{FieldList: []iceberg.NestedField{
			{ID: 6, Name: "lat", Type: iceberg.PrimitiveTypes.Float64},
			{ID: 7, Name: "city", Type: iceberg.PrimitiveTypes.String},
		}}},
		iceberg.NestedField{ID: 4, Name: "price", Type: iceberg.DecimalTypeOf(10, 2)},
	)
	tbl, err := cat.CreateTable(ctx, table.Identifier{"db", "nested"}, sch)
	require.NoError(t, err)
	asch, err := table.SchemaToArrowSchema(tbl.Schema(), nil, false, false)
	require.NoError(t, err)
	for c := range 3 {
		b := array.NewRecordBuilder(memory.DefaultAllocator, asch)
		for i := range 3000 {
			id := int64((i*7919 + c*13) % 9000)
			b.Field(0).(*array.Int64Builder).Append(id)
			lb := b.Field(1).(*array.ListBuilder)
			if id%5 == 0 {
				lb.AppendNull()
			} else {
				lb.Append(true)
				for j := range int(id % 3) {
					lb.ValueBuilder().(*array.StringBuilder).Append(fmt.Sprintf("t%d", j))
				}
			}
			sb := b.Field(2).(*array.StructBuilder)
			sb.Append(true)
			sb.FieldBuilder(0).(*array.Float64Builder).Append(float64(id) / 100)
			sb.FieldBuilder(1).(*array.StringBuilder).Append(fmt.Sprintf("city-%d", id%17))
			b.Field(3).(*array.Decimal128Builder).Append(decimal128.FromI64(id * 3))
		}
		tbl = appendBatch(t, tbl, b.NewRecordBatch())
		b.Release()
	}
	before, err := oracle.ChecksumIceberg(ctx, tbl)
	require.NoError(t, err)
	res := rewriteTable(t, tbl, rewriter.GroupOptions{Keyer: int64Keyer{col: 0}, MemoryBytes: 1 << 20, TempDir: t.TempDir()})
	after, err := oracle.ChecksumIceberg(ctx, res.tbl)
	require.NoError(t, err)
	require.Equal(t, before, after)
	requireGloballyOrdered(t, res.files[""])
}

// TestHeapLimit: the soft heap limit sits a quarter and 256 MiB above the
// budget, and an unbounded budget sets none.
func TestHeapLimit(t *testing.T) {
	for _, tc := range []struct{ budget, want int64 }{
		{0, 0},
		{-1, 0},
		{512 << 20, 896 << 20},
		{4 << 30, 5<<30 + 256<<20},
	} {
		require.Equal(t, tc.want, rewriter.HeapLimit(tc.budget), "budget %d", tc.budget)
	}
}
