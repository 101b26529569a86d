package control_test

import (
	"context"
	"fmt"
	"math"
	"math/rand/v2"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/apache/iceberg-go"
	"github.com/apache/iceberg-go/catalog"
	"github.com/apache/iceberg-go/table"
	"github.com/stretchr/testify/require"

	"github.com/floe-project/floe/analyzer/extract"
	"github.com/floe-project/floe/control"
	"github.com/floe-project/floe/control/store"
	"github.com/floe-project/floe/internal/oracle"
	"github.com/floe-project/floe/internal/testlake"
	"github.com/floe-project/floe/lake"
	"github.com/floe-project/floe/layout"
	"github.com/floe-project/floe/rewriter"
	"github.com/floe-project/floe/simulator"
)

// appendMixed appends a file of n rows written by iceberg-go (not floe): id ascending from
// start, or, when start is negative, uniform in [0, 32000) (rows like the ones the tree
// was learned on, arriving late); k uniform in [0, 1000), amount uniform in [0, 1000).
func appendMixed(t *testing.T, tbl *table.Table, rng *rand.Rand, start, n int) *table.Table {
	t.Helper()
	b := array.NewRecordBuilder(memory.DefaultAllocator, testlake.ArrowSchema(t, tbl))
	defer b.Release()
	for j := range n {
		id := int64(start + j)
		if start < 0 {
			id = rng.Int64N(32_000)
		}
		b.Field(0).(*array.Int64Builder).Append(id)
		b.Field(1).(*array.Int64Builder).Append(rng.Int64N(1000))
		b.Field(2).(*array.Float64Builder).Append(float64(rng.IntN(100_000)) / 100)
	}
	rec := b.NewRecordBatch()
	defer rec.Release()
	return testlake.Append(t, tbl, rec)
}

// TestTreeKeptThroughAppends is issue 46's "later appends compacted into the tree keep the
// skip rate", on a real table: a plan rewrites it into a learned tree; iceberg-go appends
// a quarter more rows; health measures the drift and warns; a scheduled run by the
// table's policy (its layout the tree the table declares, no plan) routes the appended
// rows into the same leaves — too few to fill files of their own in each leaf, with the
// partition's files. Then more than rewriter.TreeAppendFilesPerLeaf files' worth a leaf
// is appended and routed alone, the files in the tree left as they are. Each time the
// files skipped for the workload, counted by iceberg-go's own planner, lose no more than
// 2 pp of what the plan's rewrite reached, DuckDB reads every row back, and the drift goes back to
// zero. Then a column the tree cuts on is dropped: the next compaction refuses, naming
// it, and health says so.
func TestTreeKeptThroughAppends(t *testing.T) {
	if testing.Short() {
		t.Skip("writes, plans and rewrites a real table several times")
	}
	ctx := t.Context()
	fx := plannedTree(t)
	w, st, id, treeLayout, rng, svc := fx.w, fx.st, fx.id, fx.layout, fx.rng, fx.svc
	queries := fx.queries
	var tbl *table.Table

	load := func() *table.Table {
		t.Helper()
		tbl, err := lake.LoadTable(ctx, w.Catalog, id)
		require.NoError(t, err)
		return tbl
	}
	skipped := func(tbl *table.Table) (float64, int) {
		t.Helper()
		m, err := simulator.Measure(ctx, tbl, queries)
		require.NoError(t, err)
		return m.SkippedPct, m.FilesTotal
	}
	health := func() lake.Health {
		t.Helper()
		h, err := svc.Health(ctx, id, control.HealthRequest{})
		require.NoError(t, err)
		return h
	}
	tbl = load()
	declared := tbl.Properties()[rewriter.PropLayout]
	require.NotEmpty(t, tbl.Properties()[rewriter.PropLayoutTree], "the plan's rewrite records its tree")
	inTree, filesInTree := skipped(tbl)
	h := health()
	require.NotNil(t, h.Metrics.LayoutDrift)
	require.Zero(t, h.Metrics.LayoutDrift.Files, "every file is in the tree")
	require.Equal(t, declared, h.Metrics.LayoutDrift.Layout)

	// A quarter more rows like the first, appended by iceberg-go in three files.
	for range 3 {
		tbl = appendMixed(t, tbl, rng, -1, 4000)
	}
	appendedSkip, filesAppended := skipped(tbl)
	h = health()
	d := h.Metrics.LayoutDrift
	require.NotNil(t, d)
	require.Equal(t, 3, d.Files)
	require.Equal(t, int64(12_000), d.Rows)
	require.InDelta(t, 12.0/44, d.RowsRatio, 1e-9)
	require.Equal(t, lake.Warning, h.Status)
	require.Contains(t, strings.Join(h.Reasons, "\n"), "layout drift: 27% of rows (3 of ")
	require.Contains(t, strings.Join(h.Reasons, "\n"), "re-clusters 3 files into the tree")
	want, err := oracle.ChecksumPreferDuckDB(ctx, tbl)
	require.NoError(t, err)

	// The daemon's path: the policy's layout is the tree the table declares, no plan.
	daemon := serviceOf(t, w, st, fmt.Sprintf("default:\n  allow_small_target_file_size: true\n  layout: %q\n", declared))
	run, err := daemon.Run(ctx, control.Request{Table: id, Trigger: control.TriggerScheduled})
	require.NoError(t, err)
	require.Empty(t, run.Decision.Plan, "no plan runs")
	compact := stepsOf(run.Run)[control.StepCompact]
	require.Equal(t, control.StatusDone, compact.Status, compact.Reason)
	require.Equal(t, declared, run.Decision.Layout.String())
	require.NotNil(t, compact.Report.Compact)
	cr := compact.Report.Compact
	// A quarter more rows is about two files' worth for each of the tree's leaves, fewer
	// than rewriter.TreeAppendFilesPerLeaf: routed alone, they would add a file to every
	// leaf that each query reading the leaf reads too, so the partition is rewritten
	// whole, into the same leaves.
	require.Len(t, cr.Plan.Groups, 1)
	require.Contains(t, strings.Join(cr.Plan.Groups[0].Reasons, "; "), "not spread thin across leaves")
	require.Equal(t, filesAppended, cr.FilesIn)

	tbl = load()
	got, err := oracle.ChecksumPreferDuckDB(ctx, tbl)
	require.NoError(t, err)
	require.Equal(t, want, got, "every row is kept")
	kept, filesKept := skipped(tbl)
	t.Logf("files skipped: %.1f%% of %d files in the tree, %.1f%% of %d after the append, %.1f%% of %d once compacted (%d files rewritten into %d)",
		inTree, filesInTree, appendedSkip, filesAppended, kept, filesKept, cr.FilesIn, cr.FilesOut)
	require.Less(t, appendedSkip, inTree-2, "the appended files are read by every query the tree served")
	// Kept, or bettered: the table has more files now, each leaf more of them, and a
	// query that reads a leaf skips a larger share of them (with each leaf's files its
	// own, 82.8% of 29 files became 84.8% of 38).
	require.GreaterOrEqual(t, kept, inTree-2, "compacted into the tree, the skip rate is kept")
	h = health()
	require.NotNil(t, h.Metrics.LayoutDrift)
	require.Zero(t, h.Metrics.LayoutDrift.Files, "drift back to zero")
	require.NotContains(t, strings.Join(h.Reasons, "\n"), "layout drift")
	require.Equal(t, declared, tbl.Properties()[rewriter.PropLayout])

	// Enough rows to fill more than rewriter.TreeAppendFilesPerLeaf files per leaf are
	// routed into the tree alone, the files already there kept.
	recorded, err := rewriter.RecordedTree(tbl.Metadata(), treeLayout)
	require.NoError(t, err)
	state, err := lake.LoadState(ctx, id, tbl, lake.LoadOptions{})
	require.NoError(t, err)
	var rows, size int64
	for _, f := range state.DataFiles {
		rows += f.Records
		size += f.SizeBytes
	}
	target, err := strconv.ParseInt(tbl.Properties()[lake.PropRewriteTargetFileSize], 10, 64)
	require.NoError(t, err)
	perFile := float64(target) * float64(rows) / float64(size)
	files := int(math.Ceil(rewriter.TreeAppendFilesPerLeaf * float64(recorded.Leaves()) * perFile * 1.2 / 4000))
	for range files {
		tbl = appendMixed(t, tbl, rng, -1, 4000)
	}
	want, err = oracle.ChecksumPreferDuckDB(ctx, tbl)
	require.NoError(t, err)
	run, err = daemon.Run(ctx, control.Request{Table: id, Trigger: control.TriggerScheduled})
	require.NoError(t, err)
	compact = stepsOf(run.Run)[control.StepCompact]
	require.Equal(t, control.StatusDone, compact.Status, compact.Reason)
	cr = compact.Report.Compact
	require.Equal(t, files, cr.FilesIn, "only the appended files are rewritten: %v", cr.Plan.Groups)
	require.Contains(t, strings.Join(cr.Plan.Groups[0].Reasons, "; "), "in the tree already, kept")
	tbl = load()
	got, err = oracle.ChecksumPreferDuckDB(ctx, tbl)
	require.NoError(t, err)
	require.Equal(t, want, got, "every row is kept")
	routed, filesRouted := skipped(tbl)
	t.Logf("%d leaves, ~%.0f rows a file: %d files appended (%d rows) routed alone into %d files; %.1f%% of %d files skipped",
		recorded.Leaves(), perFile, files, files*4000, cr.FilesOut, routed, filesRouted)
	require.GreaterOrEqual(t, routed, inTree-2, "routed into the tree, the skip rate is kept")
	require.Zero(t, health().Metrics.LayoutDrift.Files)

	// k is dropped: the tree cuts on it, so no compaction routes rows by it any more.
	tx := tbl.NewTransaction()
	u := tx.UpdateSchema(true, false)
	u.DeleteColumn([]string{"k"})
	require.NoError(t, u.Commit())
	_, err = tx.Commit(ctx)
	require.NoError(t, err)
	typed := treeLayout
	_, err = svc.Run(ctx, control.Request{Table: id, Steps: []string{control.StepCompact}, Layout: &typed})
	require.ErrorIs(t, err, rewriter.ErrStaleTree)
	require.ErrorContains(t, err, `"k"`)
	require.ErrorContains(t, err, "floe plan "+id.String())
	_, err = daemon.Run(ctx, control.Request{Table: id, Trigger: control.TriggerScheduled, Steps: []string{control.StepCompact}})
	require.ErrorIs(t, err, rewriter.ErrStaleTree, "the daemon's compaction refuses too, never another layout")
	h = health()
	require.NotNil(t, h.Metrics.LayoutDrift)
	require.Contains(t, h.Metrics.LayoutDrift.Problem, `"k"`)
	require.Contains(t, strings.Join(h.Reasons, "\n"), "cannot take new rows into its leaves")
}

// treeFixture is a real table planned and rewritten into a learned tree: the start of
// the tree tests.
type treeFixture struct {
	w       *testlake.Warehouse
	st      *store.Store
	id      lake.Ident
	layout  layout.Layout
	stmts   []string
	queries []simulator.Query
	// plan is the plan that was approved and run; want is DuckDB's checksum of the
	// table's rows before the run.
	plan control.Plan
	want oracle.Sum
	// rng appends rows like the table's (appendMixed).
	rng *rand.Rand
	svc *control.Service
}

// treeSpec is the table and workload of a [treeFixture].
type treeSpec struct {
	name   string // the table, in namespace db
	schema *iceberg.Schema
	// fill appends the table's rows, by iceberg-go.
	fill   func(tbl *table.Table) *table.Table
	stmts  []string // the workload, Trino SQL
	layout string
	// files is how many target files the table's bytes make.
	files int64
	// spec partitions the table; nil: unpartitioned.
	spec *iceberg.PartitionSpec
}

// plannedTree writes 32,000 rows in 8 files by iceberg-go, plans tree(id, k, amount)
// for a workload of id ranges, k lookups and the largest amounts (the plan's tree learned
// from it, at a sixteenth of the table a file), approves the plan and runs it.
func plannedTree(t *testing.T) treeFixture {
	t.Helper()
	return plannedTreeIn(t, nil)
}

// plannedTreeIn is [plannedTree] on a table partitioned by spec (nil: unpartitioned).
func plannedTreeIn(t *testing.T, spec *iceberg.PartitionSpec) treeFixture {
	t.Helper()
	rng := rand.New(rand.NewPCG(46, 3))
	qrng := rand.New(rand.NewPCG(7, 46))
	var stmts []string
	for range 6 {
		lo := qrng.IntN(30_500)
		stmts = append(stmts,
			fmt.Sprintf("SELECT * FROM db.mixed WHERE id BETWEEN %d AND %d", lo, lo+1500),
			fmt.Sprintf("SELECT * FROM db.mixed WHERE k = %d", qrng.IntN(1000)),
			fmt.Sprintf("SELECT * FROM db.mixed WHERE amount > %d", 985+qrng.IntN(10)))
	}
	fx := planTreeTable(t, treeSpec{name: "mixed", layout: "tree(id, k, amount)", files: 16, stmts: stmts, spec: spec,
		schema: iceberg.NewSchema(0,
			iceberg.NestedField{ID: 1, Name: "id", Type: iceberg.PrimitiveTypes.Int64, Required: true},
			iceberg.NestedField{ID: 2, Name: "k", Type: iceberg.PrimitiveTypes.Int64, Required: true},
			iceberg.NestedField{ID: 3, Name: "amount", Type: iceberg.PrimitiveTypes.Float64, Required: true}),
		fill: func(tbl *table.Table) *table.Table {
			for f := range 8 {
				tbl = appendMixed(t, tbl, rng, f*4000, 4000)
			}
			return tbl
		}})
	fx.rng = rng
	return fx
}

// planTreeTable creates and fills spec's table, plans spec's tree layout for its
// workload at a target of 1/spec.files of the table's bytes, approves the plan and runs
// it through control.Service.
func planTreeTable(t *testing.T, spec treeSpec) treeFixture {
	t.Helper()
	ctx := t.Context()
	w := testlake.New(t)
	if c, ok := w.Catalog.(catalog.Closer); ok {
		t.Cleanup(func() { require.NoError(t, c.Close()) })
	}
	tbl := spec.fill(w.CreateTable(t, "db", spec.name, spec.schema, spec.spec, nil, nil))
	id := lake.Ident{Catalog: w.Name, Namespace: []string{"db"}, Name: spec.name}
	st := openStore(t)
	state, err := lake.LoadState(ctx, id, tbl, lake.LoadOptions{})
	require.NoError(t, err)
	var bytes int64
	for _, f := range state.DataFiles {
		bytes += f.SizeBytes
	}
	trino, err := extract.ParseDialect("trino")
	require.NoError(t, err)
	treeLayout, err := layout.Parse(spec.layout)
	require.NoError(t, err)
	prop, err := control.PlanBest(ctx, w.Catalog, st, state, control.PlanOptions{By: "ana", Force: true, Project: control.ProjectOptions{
		Layouts: []layout.Layout{treeLayout}, Seed: 1, TargetFileSizeBytes: bytes/spec.files + 1,
		Workload: control.WorkloadOptions{SQL: strings.NewReader(strings.Join(spec.stmts, ";\n")), SQLName: "q.sql", Dialect: trino},
	}})
	require.NoError(t, err)
	require.NotNil(t, prop.Plan)
	require.Equal(t, layout.StrategyTree, prop.Plan.Layout.Strategy)
	require.NotEmpty(t, prop.Plan.Projection.Tree)
	require.Nil(t, prop.Plan.Projection.RecordedTree, "the table records no tree yet")
	queries := prop.Projections.Workload.Queries
	require.Len(t, queries, len(spec.stmts))
	_, err = control.ApprovePlan(ctx, st, prop.Plan.ID, "bo", time.Now())
	require.NoError(t, err)
	want, err := oracle.ChecksumPreferDuckDB(ctx, tbl)
	require.NoError(t, err)

	svc := serviceOf(t, w, st, "default:\n  allow_small_target_file_size: true\n")
	planned, err := svc.Run(ctx, control.Request{Table: id, PlanID: prop.Plan.ID, Steps: []string{control.StepCompact}})
	require.NoError(t, err)
	compact := stepsOf(planned.Run)[control.StepCompact]
	require.Equal(t, control.StatusDone, compact.Status, compact.Reason)
	return treeFixture{w: w, st: st, id: id, layout: treeLayout, stmts: spec.stmts, queries: queries, plan: *prop.Plan, want: want, svc: svc}
}

// openStore is a state store in memory, closed when the test ends.
func openStore(t *testing.T) *store.Store {
	t.Helper()
	st, err := store.Open(context.Background(), ":memory:")
	require.NoError(t, err)
	t.Cleanup(func() { require.NoError(t, st.Close()) })
	return st
}

// TestTreeOwnSmallFilesAreNotBacklog: a tree writes files below the small-file size by
// design (in a partitioned table each partition holds a slice of every leaf; slices below
// a file are packed with their neighbours and a run of them ends in a small file), and a
// compaction into the tree leaves them as they are. Health does not count them as small,
// so the daemon's small-file trigger does not start a compaction that has nothing to do.
// Small files another writer appends still count and fire it; with layout: auto and no
// collected queries, the compaction keeps the tree the table declares (bin-pack would
// merge the tree's own files with the appended ones) and routes the new rows into it.
func TestTreeOwnSmallFilesAreNotBacklog(t *testing.T) {
	if testing.Short() {
		t.Skip("writes, plans and rewrites a real table")
	}
	ctx := t.Context()
	spec := iceberg.NewPartitionSpec(iceberg.PartitionField{SourceIDs: []int{2}, FieldID: 1000, Name: "k_bucket", Transform: iceberg.BucketTransform{NumBuckets: 3}})
	fx := plannedTreeIn(t, &spec)
	tbl, err := lake.LoadTable(ctx, fx.w.Catalog, fx.id)
	require.NoError(t, err)
	declared := tbl.Properties()[rewriter.PropLayout]
	target, err := strconv.ParseInt(tbl.Properties()[lake.PropRewriteTargetFileSize], 10, 64)
	require.NoError(t, err)
	// rawSmall counts small files by size alone, the rule health applied before.
	rawSmall := func(tbl *table.Table) int {
		t.Helper()
		state, err := lake.LoadState(ctx, fx.id, tbl, lake.LoadOptions{})
		require.NoError(t, err)
		small, _ := lake.SizeCutoffs(target)
		n := 0
		for _, f := range state.DataFiles {
			if f.SizeBytes < small {
				n++
			}
		}
		return n
	}
	inTree := rawSmall(tbl)
	require.GreaterOrEqual(t, inTree, 2, "the tree writes small files of its own")

	daemon := serviceOf(t, fx.w, fx.st, "default:\n  allow_small_target_file_size: true\n  layout: auto\n  triggers: {small_file_ratio: 0.05, delete_ratio: 0, clustering_depth: 0}\n")
	h, err := daemon.Health(ctx, fx.id, control.HealthRequest{})
	require.NoError(t, err)
	require.Zero(t, h.Metrics.SmallFiles, "%d small files are the tree's own", inTree)
	require.NotContains(t, strings.Join(h.Reasons, "\n"), "small files")
	run, err := daemon.Run(ctx, control.Request{Table: fx.id, Trigger: control.TriggerScheduled})
	require.NoError(t, err)
	compact := stepsOf(run.Run)[control.StepCompact]
	require.Equal(t, control.StatusNotDue, compact.Status, compact.Reason)
	require.Contains(t, compact.Reason, "small-file ratio 0.00")

	// Small files appended by iceberg-go (each append one file per partition) are not
	// the tree's: they count, and fire the trigger.
	const appends = 5
	tbl, err = lake.LoadTable(ctx, fx.w.Catalog, fx.id) // the run rewrote its manifests
	require.NoError(t, err)
	for range appends {
		tbl = appendMixed(t, tbl, fx.rng, -1, 300)
	}
	appended := rawSmall(tbl) - inTree
	require.Equal(t, 3*appends, appended)
	want, err := oracle.ChecksumPreferDuckDB(ctx, tbl)
	require.NoError(t, err)
	h, err = daemon.Health(ctx, fx.id, control.HealthRequest{})
	require.NoError(t, err)
	require.Equal(t, appended, h.Metrics.SmallFiles)
	require.Equal(t, appended, h.Metrics.LayoutDrift.Files)
	// The scheduler budgets the run by what the compaction into the tree reads, not by
	// what a bin-pack would.
	est, err := daemon.Estimate(ctx, fx.id, "")
	require.NoError(t, err)
	run, err = daemon.Run(ctx, control.Request{Table: fx.id, Trigger: control.TriggerScheduled})
	require.NoError(t, err)
	require.Equal(t, declared, run.Decision.Layout.String(), "layout: auto keeps the tree the table declares")
	require.Contains(t, run.Decision.LayoutReason, "no queries collected for the table yet: keeps the layout the table declares")
	compact = stepsOf(run.Run)[control.StepCompact]
	require.Equal(t, control.StatusDone, compact.Status, compact.Reason)
	require.NotNil(t, compact.Report.Compact)
	require.Equal(t, compact.Report.Compact.BytesIn, est.RewriteBytes, "the estimate plans the compaction the run does")

	tbl, err = lake.LoadTable(ctx, fx.w.Catalog, fx.id)
	require.NoError(t, err)
	got, err := oracle.ChecksumPreferDuckDB(ctx, tbl)
	require.NoError(t, err)
	require.Equal(t, want, got, "every row is kept")
	require.Equal(t, declared, tbl.Properties()[rewriter.PropLayout])
	h, err = daemon.Health(ctx, fx.id, control.HealthRequest{})
	require.NoError(t, err)
	require.Zero(t, h.Metrics.LayoutDrift.Files, "the appended rows are routed into the tree")
	require.Zero(t, h.Metrics.SmallFiles)
}
