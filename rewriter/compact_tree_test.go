package rewriter_test

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/apache/arrow-go/v18/parquet/file"
	"github.com/apache/arrow-go/v18/parquet/pqarrow"
	"github.com/apache/iceberg-go"
	"github.com/apache/iceberg-go/table"
	"github.com/stretchr/testify/require"

	"github.com/floe-project/floe/lake"
	"github.com/floe-project/floe/layout"
	"github.com/floe-project/floe/rewriter"
)

// TestCompactTree rewrites a table into a tree layout whose learned tree is handed in, as
// a plan hands the projection's: every row is kept, the layout is declared, and each of
// the tree's leaves (id < 10000, sorted by v, and the rest, sorted by id) fills files of
// its own but for the one file the writer cuts across the boundary. Without the tree, the
// compaction is refused before anything is read.
func TestCompactTree(t *testing.T) {
	ctx := context.Background()
	tt := fillTwins(t)
	st := tt.state(t, tt.tbl)
	l, err := layout.Parse("tree(id, v)")
	require.NoError(t, err)

	opts := rewriter.CompactOptions{Layout: l, TargetFileSizeBytes: 16 << 10, Commit: rewriter.CommitOptions{Sleep: instantSleep}}
	_, err = rewriter.Compact(ctx, st, rewriter.CompactPlan{}, opts)
	require.ErrorContains(t, err, "layout tree(id, v) needs its learned tree")

	sc, err := table.SchemaToArrowSchema(st.Metadata.CurrentSchema(), nil, true, false)
	require.NoError(t, err)
	opts.Tree = idTree(t, sc, 10000)
	plan, err := rewriter.PlanCompaction(st, opts)
	require.NoError(t, err)
	require.Len(t, plan.Groups, 2)
	res, err := rewriter.Compact(ctx, st, plan, opts)
	require.NoError(t, err)
	require.Empty(t, res.Skipped)
	tt.tbl = res.Table
	tt.requireSameRows(t)

	after := tt.state(t, tt.tbl)
	require.Equal(t, l.String(), after.Metadata.Properties()[rewriter.PropLayout])
	straddling := 0
	for _, f := range after.DataFiles {
		if f.PartitionKey != "region=eu" {
			continue
		}
		lo, hi := f.Lower[1].(iceberg.Int64Literal), f.Upper[1].(iceberg.Int64Literal)
		if lo < 10000 && hi >= 10000 {
			straddling++
		}
	}
	require.LessOrEqual(t, straddling, 1, "rows are grouped by leaf: only the file at the boundary holds both")
	again, err := rewriter.PlanCompaction(after, opts)
	require.NoError(t, err)
	require.Empty(t, again.Groups, "%s", groupSummary(again))
}

// int64Key is v's sort-key encoding as an int64 column's, as a tree cut holds it.
func int64Key(t *testing.T, v int64) []byte {
	t.Helper()
	b := array.NewInt64Builder(memory.DefaultAllocator)
	defer b.Release()
	b.Append(v)
	arr := b.NewArray()
	defer arr.Release()
	k, err := layout.ValueKey(arr, 0)
	require.NoError(t, err)
	return k
}

// idTree is the tree that cuts id < at: the rows below sorted by v, the rest by id.
func idTree(t *testing.T, sc *arrow.Schema, at int64) *layout.Tree {
	t.Helper()
	tree, err := layout.NewTree(sc, &layout.TreeNode{
		Cut:   &layout.TreeCut{Column: "id", Value: int64Key(t, at)},
		Left:  &layout.TreeNode{SortColumn: "v"},
		Right: &layout.TreeNode{SortColumn: "id"},
	})
	require.NoError(t, err)
	return tree
}

// TestCompactTreeRecorded: a rewrite into a tree records the learned tree with the table
// (floe.layout.tree) in the commit of its files, and each snapshot names it; a later
// compaction with the tree read back from the table (as a policy's or scheduled one does,
// with no plan) routes the rows appended since into the same leaves and keeps every row:
// a few rows with the partition rewritten whole, many rows alone, the files in the tree
// kept; a rewrite into a tree learned afterwards rewrites every file; a
// rewrite into another layout removes the recorded tree; and dropping a column the tree
// sorts on makes the recorded tree fail to load with an error naming the column.
func TestCompactTreeRecorded(t *testing.T) {
	ctx := context.Background()
	tt := fillTwins(t)
	st := tt.state(t, tt.tbl)
	l, err := layout.Parse("tree(id, v)")
	require.NoError(t, err)
	sc, err := table.SchemaToArrowSchema(st.Metadata.CurrentSchema(), nil, true, false)
	require.NoError(t, err)
	tree := idTree(t, sc, 10000)
	opts := rewriter.CompactOptions{Layout: l, Tree: tree, TargetFileSizeBytes: 16 << 10, Commit: rewriter.CommitOptions{Sleep: instantSleep}}
	compact := func(st *lake.State, opts rewriter.CompactOptions) (rewriter.CompactPlan, rewriter.CompactResult) {
		t.Helper()
		plan, err := rewriter.PlanCompaction(st, opts)
		require.NoError(t, err)
		res, err := rewriter.Compact(ctx, st, plan, opts)
		require.NoError(t, err)
		require.Empty(t, res.Skipped)
		tt.tbl = res.Table
		tt.requireSameRows(t)
		return plan, res
	}
	compact(st, opts)

	after := tt.state(t, tt.tbl)
	want, err := tree.MarshalJSON()
	require.NoError(t, err)
	require.JSONEq(t, string(want), after.Metadata.Properties()[rewriter.PropLayoutTree], "the tree is recorded with the table")
	require.Equal(t, tree.Fingerprint(), after.Snapshots[len(after.Snapshots)-1].Summary[rewriter.PropLayoutTreeID])
	recorded, err := rewriter.RecordedTree(after.Metadata, l)
	require.NoError(t, err)
	require.NotNil(t, recorded)
	require.Equal(t, tree.Fingerprint(), recorded.Fingerprint(), "the tree read back is the tree written")
	other, err := layout.Parse("tree(id, v, region)")
	require.NoError(t, err)
	none, err := rewriter.RecordedTree(after.Metadata, other)
	require.NoError(t, err)
	require.Nil(t, none, "the table records no tree for a layout it does not declare")
	d := rewriter.LayoutDrift(after, l, recorded)
	require.Zero(t, d.Files)
	require.Equal(t, len(after.DataFiles), d.DataFiles)

	// Appended by iceberg-go, not floe: rows of both leaves, in two files, fewer than
	// TreeAppendFilesPerLeaf files' worth a leaf: the partition is rewritten whole.
	tt.appendBoth(t, -3000, 3000, "eu")
	tt.appendBoth(t, 30000, 3000, "eu")
	appended := tt.state(t, tt.tbl)
	d = rewriter.LayoutDrift(appended, l, recorded)
	require.Equal(t, 2, d.Files)
	require.Equal(t, int64(6000), d.Rows)
	opts.Tree = recorded
	plan, _ := compact(appended, opts)
	require.Len(t, plan.Groups, 1, "only the partition appended to: %s", groupSummary(plan))
	require.Equal(t, "region=eu", plan.Groups[0].Partition)
	require.Contains(t, strings.Join(plan.Groups[0].Reasons, "; "), "not spread thin across leaves")
	eu := 0
	for _, f := range appended.DataFiles {
		if f.PartitionKey == "region=eu" {
			eu++
		}
	}
	require.Equal(t, eu, plan.Groups[0].Files)
	compacted := tt.state(t, tt.tbl)
	require.Zero(t, rewriter.LayoutDrift(compacted, l, recorded).Files, "the appended rows are in the tree now")

	// Many more rows: routed into the leaves alone, the files in the tree kept.
	before := len(compacted.DataFiles)
	tt.appendBoth(t, -40000, 40000, "eu")
	tt.appendBoth(t, 30000, 40000, "eu")
	appended = tt.state(t, tt.tbl)
	plan, res := compact(appended, opts)
	require.Len(t, plan.Groups, 1, "only the partition appended to: %s", groupSummary(plan))
	require.Less(t, plan.Groups[0].Files, before/2+2, "the files in the tree are kept: %v", plan.Groups[0].Reasons)
	require.Contains(t, strings.Join(plan.Groups[0].Reasons, "; "), "in the tree already, kept")
	require.Positive(t, res.FilesOut)
	compacted = tt.state(t, tt.tbl)
	require.Zero(t, rewriter.LayoutDrift(compacted, l, recorded).Files, "the appended rows are in the tree now")
	// The appended rows are grouped by leaf, as a rewrite of the whole table groups them:
	// only the file the writer cuts across the boundary holds rows of both leaves.
	var fresh, straddling int
	for _, f := range compacted.DataFiles {
		if f.SnapshotID != compacted.Current.SnapshotID {
			continue
		}
		fresh++
		lo, hi := f.Lower[1].(iceberg.Int64Literal), f.Upper[1].(iceberg.Int64Literal)
		if lo < 10000 && hi >= 10000 {
			straddling++
		}
	}
	t.Logf("%d files in the tree, 2 files appended, rewritten into %d (%d straddle the cut)", before, fresh, straddling)
	require.GreaterOrEqual(t, fresh, 2)
	require.LessOrEqual(t, straddling, 1, "rows are routed to their leaves")
	// What is left are the small files at the end of each rewrite's run of leaves: the
	// next compaction merges them (two or more in a partition), and the one after has
	// nothing to do.
	again, err := rewriter.PlanCompaction(compacted, opts)
	require.NoError(t, err)
	for _, g := range again.Groups {
		require.NotContains(t, strings.Join(g.Reasons, "; "), " not in ", "%s", groupSummary(again))
		require.NotContains(t, strings.Join(g.Reasons, "; "), "unknown", "%s", groupSummary(again))
	}
	if len(again.Groups) > 0 {
		_, res := compact(compacted, opts)
		require.Positive(t, res.FilesIn)
		compacted = tt.state(t, tt.tbl)
		again, err = rewriter.PlanCompaction(compacted, opts)
		require.NoError(t, err)
	}
	require.Empty(t, again.Groups, "%s", groupSummary(again))

	// A tree learned afterwards on the same columns routes rows elsewhere: the files of
	// the recorded one are not in it.
	relearned := idTree(t, sc, 15000)
	require.NotEqual(t, tree.Fingerprint(), relearned.Fingerprint())
	ropts := opts
	ropts.Tree = relearned
	replan, err := rewriter.PlanCompaction(compacted, ropts)
	require.NoError(t, err)
	require.Len(t, replan.Groups, 2, "every partition is rewritten into the new tree")
	require.Equal(t, len(compacted.DataFiles), replan.InputFiles)

	// Another layout removes the recorded tree in the commit of its files.
	sortOpts := opts
	sortOpts.Layout, sortOpts.Tree = layout.Layout{Strategy: layout.StrategySort, Columns: []layout.Column{{Name: "id"}}}, nil
	compact(compacted, sortOpts)
	sorted := tt.state(t, tt.tbl)
	require.Equal(t, "sort(id)", sorted.Metadata.Properties()[rewriter.PropLayout])
	require.NotContains(t, sorted.Metadata.Properties(), rewriter.PropLayoutTree)
	gone, err := rewriter.RecordedTree(sorted.Metadata, l)
	require.NoError(t, err)
	require.Nil(t, gone)

	// Back in the tree, then v is dropped: the recorded tree sorts a leaf on it.
	compact(sorted, opts)
	tx := tt.tbl.NewTransaction()
	u := tx.UpdateSchema(true, false)
	u.DeleteColumn([]string{"v"})
	require.NoError(t, u.Commit())
	tt.tbl, err = tx.Commit(ctx)
	require.NoError(t, err)
	_, err = rewriter.RecordedTree(tt.tbl.Metadata(), l)
	require.ErrorIs(t, err, rewriter.ErrStaleTree)
	require.ErrorIs(t, err, rewriter.ErrInvalidOptions)
	require.ErrorContains(t, err, `"v"`)
	require.ErrorContains(t, err, "floe plan")
}

// TestCompactTreeTooLarge: a tree whose JSON would not fit the table property is refused
// before anything is read, naming the bound.
func TestCompactTreeTooLarge(t *testing.T) {
	tt := fillTwins(t)
	st := tt.state(t, tt.tbl)
	sc, err := table.SchemaToArrowSchema(st.Metadata.CurrentSchema(), nil, true, false)
	require.NoError(t, err)
	small := wideTree(t, sc, 6)
	data, err := small.MarshalJSON()
	require.NoError(t, err)
	require.Less(t, len(data), rewriter.MaxTreePropertyBytes)
	l, err := layout.Parse("tree(id, v)")
	require.NoError(t, err)
	_, err = rewriter.PlanCompaction(st, rewriter.CompactOptions{Layout: l, Tree: small})
	require.NoError(t, err, "64 leaves fit")

	big := wideTree(t, sc, 12)
	data, err = big.MarshalJSON()
	require.NoError(t, err)
	require.Greater(t, len(data), rewriter.MaxTreePropertyBytes)
	_, err = rewriter.PlanCompaction(st, rewriter.CompactOptions{Layout: l, Tree: big})
	require.ErrorIs(t, err, rewriter.ErrInvalidOptions)
	require.ErrorContains(t, err, "4096 leaves")
	require.ErrorContains(t, err, "floe.layout.tree")
}

// wideTree is a balanced tree of depth levels cutting id at evenly spaced values.
func wideTree(t *testing.T, sc *arrow.Schema, depth int) *layout.Tree {
	t.Helper()
	var build func(lo, hi int64, d int) *layout.TreeNode
	build = func(lo, hi int64, d int) *layout.TreeNode {
		if d == 0 {
			return &layout.TreeNode{SortColumn: "v"}
		}
		mid := (lo + hi) / 2
		b := array.NewInt64Builder(memory.DefaultAllocator)
		b.Append(mid)
		arr := b.NewArray()
		b.Release()
		cut, err := layout.ValueKey(arr, 0)
		arr.Release()
		require.NoError(t, err)
		return &layout.TreeNode{Cut: &layout.TreeCut{Column: "id", Value: cut}, Left: build(lo, mid, d-1), Right: build(mid, hi, d-1), Rows: 1000}
	}
	tree, err := layout.NewTree(sc, build(0, 1<<20, depth))
	require.NoError(t, err)
	return tree
}

// TestCompactTreeFilesAtLeaves rewrites a real table into a tree of three leaves whose
// rows fill no whole number of files (in one partition about 1 and 2.3 files' bytes, in
// the other 0.2 and 1.8), with the memory unbounded and bounded so that the sort spills
// and merges: every file written holds the rows of one leaf only (read back and keyed
// again by the tree's encoder), a leaf's files hold equal rows (to the row) rather than
// full files and a small rest, as many as make a file nearest the target size (within
// one: the writer counts from the bytes per row measured on the rows before), and the
// table keeps every row (DuckDB's checksum against a twin given the same appends).
func TestCompactTreeFilesAtLeaves(t *testing.T) {
	for _, mem := range []int64{0, 1 << 20} {
		t.Run(fmt.Sprintf("memory=%d", mem), func(t *testing.T) {
			ctx := context.Background()
			tt := fillTwins(t)
			st := tt.state(t, tt.tbl)
			l, err := layout.Parse("tree(id, v)")
			require.NoError(t, err)
			sc, err := table.SchemaToArrowSchema(st.Metadata.CurrentSchema(), nil, true, false)
			require.NoError(t, err)
			// eu holds ids 0-19999 (1200-1299 deleted), us 100000-111999.
			tree, err := layout.NewTree(sc, &layout.TreeNode{
				Cut:  &layout.TreeCut{Column: "id", Value: int64Key(t, 6300)},
				Left: &layout.TreeNode{SortColumn: "v"},
				Right: &layout.TreeNode{
					Cut:   &layout.TreeCut{Column: "id", Value: int64Key(t, 100700)},
					Left:  &layout.TreeNode{SortColumn: "v"},
					Right: &layout.TreeNode{SortColumn: "id"},
				},
			})
			require.NoError(t, err)
			opts := rewriter.CompactOptions{Layout: l, Tree: tree, TargetFileSizeBytes: 16 << 10,
				Commit: rewriter.CommitOptions{Sleep: instantSleep}}
			opts.Group.MemoryBytes = mem
			plan, err := rewriter.PlanCompaction(st, opts)
			require.NoError(t, err)
			res, err := rewriter.Compact(ctx, st, plan, opts)
			require.NoError(t, err)
			require.Empty(t, res.Skipped)
			tt.tbl = res.Table
			tt.requireSameRows(t)

			after := tt.state(t, tt.tbl)
			type leafKey struct {
				part string
				leaf int
			}
			files := map[leafKey][]lake.File{}
			for _, f := range after.DataFiles {
				leaves := fileLeaves(t, tt.tbl, f.Path, l, tree)
				require.Len(t, leaves, 1, "%s holds rows of leaves %v", f.Path, leaves)
				for leaf := range leaves {
					k := leafKey{f.PartitionKey, leaf}
					files[k] = append(files[k], f)
				}
			}
			for k, fs := range files {
				var rows, sizes []int64
				var lo, hi int64
				for i, f := range fs {
					rows = append(rows, f.Records)
					sizes = append(sizes, f.SizeBytes)
					if i == 0 || f.Records < lo {
						lo = f.Records
					}
					hi = max(hi, f.Records)
				}
				t.Logf("%s leaf %d: %d files of %v rows, %v bytes", k.part, k.leaf, len(fs), rows, sizes)
				// Equal rows: the files after the first split what is left
				// equally; the first may differ by what its estimate of bytes
				// per row was off before its first row group was flushed.
				require.LessOrEqual(t, float64(hi), float64(lo)+1, "%s leaf %d: %v rows", k.part, k.leaf, rows)
				// As many as make a file nearest the target, but for what the
				// writer's bytes per row, measured on the rows before, missed.
				var bytes int64
				for _, b := range sizes {
					bytes += b
				}
				want := layout.LeafFilesFor(float64(bytes), float64(opts.TargetFileSizeBytes))
				require.InDelta(t, want, len(fs), 1, "%s leaf %d: %v bytes", k.part, k.leaf, sizes)
			}
			require.Len(t, files, 4, "two leaves in eu, two in us")
			require.Greater(t, len(files[leafKey{"region=eu", 1}]), 1, "a leaf of more than a file's rows is split")
		})
	}
}

// fileLeaves reads the data file at path and returns the tree's leaves its rows are
// routed to, keyed again by the tree layout's encoder, with their rows.
func fileLeaves(t *testing.T, tbl *table.Table, path string, l layout.Layout, tree *layout.Tree) map[int]int {
	t.Helper()
	fio, err := tbl.FS(t.Context())
	require.NoError(t, err)
	in, err := fio.Open(path) // through the table's IO: the warehouse may be on S3
	require.NoError(t, err)
	pf, err := file.NewParquetReader(in)
	require.NoError(t, err)
	defer func() { require.NoError(t, pf.Close()) }()
	fr, err := pqarrow.NewFileReader(pf, pqarrow.ArrowReadProperties{BatchSize: 4096}, memory.DefaultAllocator)
	require.NoError(t, err)
	rr, err := fr.GetRecordReader(t.Context(), nil, nil)
	require.NoError(t, err)
	defer rr.Release()
	out := map[int]int{}
	var enc layout.Encoder
	var buf []byte
	for rr.Next() {
		rec := rr.RecordBatch()
		if enc == nil {
			enc, err = layout.NewEncoder(l, rec.Schema(), layout.EncoderOptions{Tree: tree})
			require.NoError(t, err)
		}
		for row := range int(rec.NumRows()) {
			buf, err = enc.AppendKey(buf[:0], rec, row)
			require.NoError(t, err)
			leaf, ok := layout.LeafOfKey(buf)
			require.True(t, ok)
			out[leaf]++
		}
	}
	require.NoError(t, rr.Err())
	return out
}

// TestCompactTreePacksSmallLeaves: a tree learned on a whole table slices each leaf by
// partition, and a leaf's slice may be far below a file. Such leaves are packed with
// their neighbours into files cut at the target size (layout.LeafPacked), as the
// simulator projects, instead of one small file each: a tree of leaves a quarter of a
// file each writes about the files a sort does, most holding several leaves, and no
// more than one file of each partition is below three quarters of the target.
func TestCompactTreePacksSmallLeaves(t *testing.T) {
	ctx := context.Background()
	tt := fillTwins(t)
	st := tt.state(t, tt.tbl)
	l, err := layout.Parse("tree(id, v)")
	require.NoError(t, err)
	sc, err := table.SchemaToArrowSchema(st.Metadata.CurrentSchema(), nil, true, false)
	require.NoError(t, err)
	const target = 16 << 10
	var bytes, rows int64
	for _, f := range st.DataFiles {
		bytes += f.SizeBytes
		rows += f.Records
	}
	perLeaf := int64(float64(target) / (float64(bytes) / float64(rows)) / 4) // ids a leaf: a quarter of a file
	var cuts []int64
	for id := perLeaf; id < 20_000; id += perLeaf {
		cuts = append(cuts, id)
	}
	for id := 100_000 + perLeaf; id < 112_000; id += perLeaf {
		cuts = append(cuts, id)
	}
	var build func(cs []int64) *layout.TreeNode
	build = func(cs []int64) *layout.TreeNode {
		if len(cs) == 0 {
			return &layout.TreeNode{SortColumn: "v"}
		}
		m := len(cs) / 2
		return &layout.TreeNode{Cut: &layout.TreeCut{Column: "id", Value: int64Key(t, cs[m])}, Left: build(cs[:m]), Right: build(cs[m+1:])}
	}
	tree, err := layout.NewTree(sc, build(cuts))
	require.NoError(t, err)
	t.Logf("%d leaves of about %d ids, %.0f bytes a row today", tree.Leaves(), perLeaf, float64(bytes)/float64(rows))
	opts := rewriter.CompactOptions{Layout: l, Tree: tree, TargetFileSizeBytes: target, Commit: rewriter.CommitOptions{Sleep: instantSleep}}
	plan, err := rewriter.PlanCompaction(st, opts)
	require.NoError(t, err)
	res, err := rewriter.Compact(ctx, st, plan, opts)
	require.NoError(t, err)
	tt.tbl = res.Table
	tt.requireSameRows(t)

	after := tt.state(t, tt.tbl)
	files, small, shared := map[string]int{}, map[string]int{}, 0
	for _, f := range after.DataFiles {
		files[f.PartitionKey]++
		if f.SizeBytes < target*3/4 {
			small[f.PartitionKey]++
		}
		if len(fileLeaves(t, tt.tbl, f.Path, l, tree)) >= 3 {
			shared++
		}
	}
	t.Logf("files by partition %v, small %v, %d of %d holding three leaves or more", files, small, shared, len(after.DataFiles))
	require.Greater(t, tree.Leaves(), 3*len(after.DataFiles), "several leaves a file, not a file a leaf")
	require.Greater(t, shared, len(after.DataFiles)/2, "most files hold several whole leaves")
	for part, n := range small {
		require.LessOrEqual(t, n, 1, "partition %s: only a run's last file is small", part)
	}

	// Small files in the tree are its own shape: compacted again, their rows would land
	// in the same small files, run after run. Judged at twice the largest file's size,
	// every file is small, yet nothing in the tree is picked; a sort would pick them all.
	var largest int64
	for _, f := range after.DataFiles {
		largest = max(largest, f.SizeBytes)
	}
	again := opts
	again.TargetFileSizeBytes = 2 * largest
	replan, err := rewriter.PlanCompaction(after, again)
	require.NoError(t, err)
	require.Empty(t, replan.Groups, "small files in the tree are not rewritten")
	sortL, err := layout.Parse("sort(id)")
	require.NoError(t, err)
	bySort, err := rewriter.PlanCompaction(after, rewriter.CompactOptions{Layout: sortL, TargetFileSizeBytes: 2 * largest})
	require.NoError(t, err)
	require.NotEmpty(t, bySort.Groups, "the same small files, not in a sort, are")
}
