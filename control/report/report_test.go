package report_test

import (
	"bytes"
	"flag"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/floe-project/floe/control/report"
	"github.com/floe-project/floe/layout"
	"github.com/floe-project/floe/simulator"
)

var update = flag.Bool("update", false, "rewrite the golden files in testdata")

func ptr(v float64) *float64 { return &v }

func mustLayout(spec string) layout.Layout {
	l, err := layout.Parse(spec)
	if err != nil {
		panic(err)
	}
	return l
}

func ptrLayout(spec string) *layout.Layout {
	l := mustLayout(spec)
	return &l
}

// fixture is a lake-wide report of two tables: one with a recommendation,
// a pending plan and two runs, one whose only candidate pays back too
// slowly.
func fixture() report.Report {
	at := time.Date(2026, 11, 24, 12, 0, 0, 0, time.UTC)
	sh := func(status string, files int, small float64) *report.StepHealth {
		return &report.StepHealth{Status: status, DataFiles: files, SmallFileRatio: small, AvgFileSizeBytes: 40 << 10, Snapshots: 12, Manifests: 9}
	}
	events := report.Table{
		Table: "local.web.events", SnapshotID: 6184093270345120011, Queries: 1200, QueriesPerDay: 40, WindowDays: 30,
		DataBytes: 64 << 20, DataFiles: 960, TargetFileSizeBytes: 4 << 20, MaxPaybackDays: 30, MinGainPP: 5,
		Cost: report.CostModel{FileOpenBytes: 4 << 20, RewriteBytesPerVCPUSecond: 32 << 20},
		Health: report.Health{Status: "critical", Reasons: []string{"960 data files, 98% below 75% of the 4.0 MiB target"},
			DataFiles: 960, SmallFiles: 941, SmallFileRatio: 0.98, AvgFileSizeBytes: 68 << 10, Snapshots: 320, Manifests: 320, Partitions: 30, LastCompactionAgeSec: -1},
		Columns: []report.Column{
			{Column: "tenant_id", Score: 512.3, Share: 0.81, Queries: 980, OpMix: map[string]float64{"=": 0.7, "in": 0.3}, Reason: "equality on 81% of the workload"},
			{Column: "ts", Score: 120, Share: 0.4, Queries: 480, OpMix: map[string]float64{"between": 1}, Reason: "partitioned by day(ts): discounted"},
		},
		Candidates: []report.Candidate{
			{Layout: mustLayout("current"), Why: "the table as it is", SkippedPct: 4, BytesReadPct: 95, FilesAfter: 960, MeanFilesRead: 921.6, Verdict: "baseline"},
			{Layout: mustLayout("sort(tenant_id, ts) target 4MiB"), Why: "sort on the top columns", SkippedPct: 71.2, BytesReadPct: 27.5, ErrorPP: 2.1, BoundRatio: 1.36, BoxRatio: 1.04,
				FilesAfter: 16, RewriteBytes: 64 << 20, RewriteIOBytes: 120 << 20, RewriteVCPUHours: 0.001, GainPP: 67.2, MeanFilesRead: 4.6, FilesSavedPerQuery: 917,
				SavedBytesPerDay: 155649961574, PaybackDays: ptr(0.0008), Recommended: true, Verdict: "recommended"},
			{Layout: mustLayout("binpack target 4MiB"), Why: "fewer, larger files", SkippedPct: 3, BytesReadPct: 95, FilesAfter: 16, RewriteBytes: 64 << 20, RewriteIOBytes: 128 << 20,
				RewriteVCPUHours: 0.0011, GainPP: -1, MeanFilesRead: 15.5, FilesSavedPerQuery: 906.1, SavedBytesPerDay: 152017756570, PaybackDays: ptr(0.00088),
				Verdict: "not recommended: skips fewer files than sort(tenant_id, ts) target 4MiB"},
			{Layout: mustLayout("tree(tenant_id, ts, event_type) target 4MiB"), Why: "a tree of cuts learned from the workload", SkippedPct: 64.5, BytesReadPct: 33.1, ErrorPP: 3.4,
				BoundRatio: 1.6, BoxRatio: 1.21, FilesAfter: 16, RewriteBytes: 64 << 20, RewriteIOBytes: 120 << 20, RewriteVCPUHours: 0.001, GainPP: 60.5, MeanFilesRead: 5.7,
				FilesSavedPerQuery: 915.9, SavedBytesPerDay: 150000000000, PaybackDays: ptr(0.0009),
				Verdict: "not recommended: skips fewer files than sort(tenant_id, ts) target 4MiB", TreeExplanation: treeFixture(),
				RecordedTree: &simulator.RecordedProjection{Layout: mustLayout("tree(tenant_id, ts) target 4MiB"), TreeID: "3f0c9a7d21be4410", SkippedPct: 41.2, ErrorPP: 3.1,
					MeanFilesRead: 9.4, BoundRatio: 2.6, FilesAfter: 16, TreeExplanation: recordedTreeFixture()}},
		},
		Recommendation: report.Recommendation{Layout: ptrLayout("sort(tenant_id, ts) target 4MiB"), PlanID: "3f2a9c1b7d4e",
			Why: "the workload is projected to skip 71.2% of files", Next: "floe plan approve 3f2a9c1b7d4e"},
		Plans: []report.Plan{{ID: "3f2a9c1b7d4e", Layout: mustLayout("sort(tenant_id, ts) target 4MiB"), State: "proposed", SkippedPct: 71.2,
			CurrentSkippedPct: ptr(4), RewriteBytes: 64 << 20, CreatedBy: "carol", CreatedAt: at.Add(-time.Hour)}},
		Runs: []report.Run{
			{ID: "r2", Status: "done", StartedAt: at.Add(-24 * time.Hour), EndedAt: at.Add(-23 * time.Hour), Steps: []report.Step{
				{Step: "expire", Status: "done", Before: sh("critical", 900, 0.97), After: sh("critical", 900, 0.97)},
				{Step: "compact", Status: "failed"},
			}, Error: "compact: commit conflict"},
			{ID: "r1", Status: "done", StartedAt: at.Add(-48 * time.Hour), EndedAt: at.Add(-47 * time.Hour), Steps: []report.Step{
				{Step: "compact", Status: "done", Before: sh("critical", 800, 0.99), After: sh("healthy", 20, 0)},
			}, PlanID: "3f2a9c1b7d4e", Projection: &report.ProjectionCheck{Layout: mustLayout("sort(tenant_id, ts) target 4MiB"), ProjectedSkippedPct: 71.2,
				ErrorPP: 2.1, MeasuredSkippedPct: 70.4, DeltaPP: -0.8, WithinError: true,
				Summary: "plan 3f2a9c1b7d4e (sort(tenant_id, ts) target 4MiB): projected 71.2% ± 2.1 pp of files skipped, measured 70.4% on the rewritten table over 1200 queries (-0.8 pp): held"}},
		},
		FileSizes: report.NewHistogram("bytes", "today", "sort(tenant_id, ts) target 4MiB",
			[]int64{1 << 10, 3 << 10, 50 << 10, 60 << 10, 70 << 10, 200 << 10}, []int64{4 << 20, 4 << 20}),
		FilesRead: report.NewHistogram("files", "today", "sort(tenant_id, ts) target 4MiB", []int64{960, 960, 900, 30}, []int64{1, 2, 16, 0}),
		HealthHistory: []report.HealthPoint{
			{At: at.Add(-48 * time.Hour), RunID: "r1", When: "before", StepHealth: *sh("critical", 800, 0.99)},
			{At: at.Add(-47 * time.Hour), RunID: "r1", When: "after", StepHealth: *sh("healthy", 20, 0)},
			{At: at.Add(-24 * time.Hour), RunID: "r2", When: "before", StepHealth: *sh("critical", 900, 0.97)},
			{At: at.Add(-23 * time.Hour), RunID: "r2", When: "after", StepHealth: *sh("critical", 900, 0.97)},
		},
	}
	events.FileSizes.Note = "projected: 2 files of about 4.0 MiB each"
	events.FilesRead.Note = "each query replayed"
	orders := report.Table{
		Table: "local.sales.orders", SnapshotID: 42, Queries: 3, QueriesPerDay: 0.1, WindowDays: 30, DataBytes: 8 << 20, DataFiles: 4,
		MaxPaybackDays: 30, Cost: report.CostModel{FileOpenBytes: 4 << 20, USDPerTBScanned: 5, USDPerVCPUHour: 0.05, RewriteBytesPerVCPUSecond: 32 << 20},
		Health: report.Health{Status: "healthy", DataFiles: 4, AvgFileSizeBytes: 2 << 20, Snapshots: 4, Manifests: 4, LastCompactionAgeSec: 3600},
		Candidates: []report.Candidate{
			{Layout: mustLayout("current"), SkippedPct: 10, BytesReadPct: 90, FilesAfter: 4, MeanFilesRead: 3.6, Verdict: "baseline"},
			{Layout: mustLayout("sort(o_orderdate)"), SkippedPct: 50, BytesReadPct: 50, FilesAfter: 4, RewriteBytes: 8 << 20, RewriteIOBytes: 16 << 20,
				RewriteVCPUHours: 0.00014, GainPP: 40, MeanFilesRead: 2, FilesSavedPerQuery: 1.6, SavedBytesPerDay: 1006632.96,
				SavedUSDPerDay: ptr(0.000005), RewriteUSD: ptr(0.000091), PaybackDays: ptr(18.2), Verdict: "not recommended: pays back in 18.2 days, beyond max_payback 10.0 days"},
		},
		Recommendation: report.Recommendation{Why: "no candidate pays back its rewrite within max_payback 10.0 days"},
		Notes:          []string{"a note | with a pipe"},
	}
	return report.Report{
		GeneratedAt: at, SinceSeconds: 30 * 86400, Lake: true,
		Ranking: []report.Rank{
			{Table: "local.web.events", Health: "critical", Recommended: ptrLayout("sort(tenant_id, ts) target 4MiB"), GainPP: 67.2, SavedBytesPerDay: 155649961574, PaybackDays: ptr(0.0008), Queries: 1200,
				DataFiles: 4096, DataBytes: 1 << 30, SmallFiles: 3900, Runs: 3, NoOpRuns: 1, Detailed: true},
			{Table: "local.sales.orders", Health: "healthy", Queries: 3, DataFiles: 4, DataBytes: 8 << 20, Runs: 1, Detailed: true},
			{Table: "local.sales.returns", Health: "warning", DataFiles: 40, DataBytes: 4 << 20, SmallFiles: 40, Runs: 2, NoOpRuns: 2},
		},
		Tables: []report.Table{events, orders},
		Totals: &report.Totals{Tables: 3, Detailed: 2, Top: 2, DataFiles: 4140, DataBytes: 1<<30 + 12<<20, SmallFiles: 3940, Recommended: 1,
			SavedBytesPerDay: 155649961574, Runs: 6, NoOpRuns: 3, DeferredRuns: 1},
		Queue: &report.Queue{
			Budgets: []report.Budget{
				{Scope: "lake", Where: "floe.yaml:12", WindowSeconds: 86400, LimitBytes: 2 << 40, LimitVCPUH: 40, SpentBytes: 1 << 40, SpentVCPUH: 12.5,
					LeftBytes: ptrInt(1 << 40), LeftVCPUH: ptr(27.5)},
				{Scope: "local.sales", Where: "floe.yaml:20", WindowSeconds: 7 * 86400, LimitBytes: 100 << 30, SpentBytes: 100 << 30, LeftBytes: ptrInt(0)},
			},
			Deferred: []report.Deferral{{Table: "local.sales.returns", Runs: 1, RunID: "r-0003", At: at.Add(-time.Hour),
				Reason: "deferred: local.sales budget 100GiB per 7d: 100GiB spent, 0B left; needs 4MiB"}},
		},
	}
}

func ptrInt(v int64) *int64 { return &v }

// treeFixture explains a tree of 9 leaves whose top 4 cuts are shown: the
// root's two sides are cut again, and the right side of its left cut once
// more; the root's right side is a set cut, and a string literal in it holds
// markup, which every rendering must escape.
func treeFixture() *layout.TreeExplanation {
	return &layout.TreeExplanation{Leaves: 9, Depth: 4, RowsPerLeaf: layout.RowsPerLeaf{Min: 52_000, Median: 110_000, Max: 190_000},
		Cuts: []layout.TreeCutExplanation{
			{Predicate: "tenant_id < 40", Column: "tenant_id", Parent: -1, RowsLeft: 500_000, RowsRight: 480_000, LeavesLeft: 4, LeavesRight: 5,
				QueryShare: 0.62, QueryShareLeft: 0.31, QueryShareRight: 0.31},
			{Predicate: "ts < '2026-11-10 00:00:00'", Column: "ts", Depth: 1, Parent: 0, Side: "left", RowsLeft: 210_000, RowsRight: 290_000, LeavesLeft: 1, LeavesRight: 3,
				QueryShare: 0.18, QueryShareLeft: 0.1, QueryShareRight: 0.08},
			{Predicate: "event_type IN ('<click>', 'purchase')", Column: "event_type", Depth: 1, Parent: 0, Side: "right", RowsLeft: 300_000, RowsRight: 180_000, LeavesLeft: 3, LeavesRight: 2,
				QueryShare: 0.004, QueryShareLeft: 0.004},
			{Predicate: "ts <= '2026-11-20 06:00:00'", Column: "ts", Depth: 2, Parent: 1, Side: "right", RowsLeft: 100_000, RowsRight: 190_000, LeavesLeft: 2, LeavesRight: 1,
				QueryShare: 0.05, QueryShareLeft: 0.05},
		}}
}

// recordedTreeFixture explains the tree a table records: one cut, two leaves.
func recordedTreeFixture() *layout.TreeExplanation {
	return &layout.TreeExplanation{Leaves: 2, Depth: 1, RowsPerLeaf: layout.RowsPerLeaf{Min: 400_000, Median: 490_000, Max: 580_000},
		Cuts: []layout.TreeCutExplanation{
			{Predicate: "tenant_id < 25", Column: "tenant_id", Parent: -1, RowsLeft: 400_000, RowsRight: 580_000, LeavesLeft: 1, LeavesRight: 1,
				QueryShare: 0.4, QueryShareLeft: 0.2, QueryShareRight: 0.2},
		}}
}

func golden(t *testing.T, name string, got []byte) {
	t.Helper()
	path := filepath.Join("testdata", name)
	if *update {
		require.NoError(t, os.WriteFile(path, got, 0o644))
	}
	want, err := os.ReadFile(path)
	require.NoError(t, err, "run with -update to create %s", path)
	require.Equal(t, string(want), string(got), "%s differs; after a deliberate change: go test ./control/report -update", path)
}

func TestMarkdownGolden(t *testing.T) {
	var b bytes.Buffer
	require.NoError(t, report.Markdown(&b, fixture()))
	golden(t, "report.md", b.Bytes())
}

func TestJSONGolden(t *testing.T) {
	var b bytes.Buffer
	require.NoError(t, report.JSON(&b, fixture()))
	golden(t, "report.json", b.Bytes())
}

// An empty report still holds [] for every list.
func TestJSONEmptyLists(t *testing.T) {
	var b bytes.Buffer
	require.NoError(t, report.JSON(&b, report.Report{Tables: []report.Table{{Table: "a.b.c"}}}))
	require.NotContains(t, b.String(), "null,")
	require.Contains(t, b.String(), `"candidates": []`)
	require.Contains(t, b.String(), `"snapshot_id": "0"`)
}
