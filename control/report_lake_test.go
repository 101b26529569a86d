package control_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/apache/iceberg-go"
	"github.com/stretchr/testify/require"

	"github.com/floe-project/floe/control"
	"github.com/floe-project/floe/control/policy"
	"github.com/floe-project/floe/control/report"
	"github.com/floe-project/floe/lake"
	"github.com/floe-project/floe/rewriter"
)

// A lake report streams its tables: every table gets its ranking row and
// counts in the totals, only the top N by expected gain get a full
// section, in the ranking's order; the runs of the window are counted,
// those that changed nothing as no-op runs, those a budget deferred in the
// queue beside the budget's spend.
func TestReportLakeTopTotalsAndQueue(t *testing.T) {
	ctx := context.Background()
	now := time.Date(2026, 11, 24, 12, 0, 0, 0, time.UTC)
	clock := func() time.Time { return now }

	// Four tables of the same data: the expected gain of each is its query
	// rate times one query's saving, so 6, 4, 2 and 0 queries rank them.
	pl := setupPlan(t)
	tables := []*planLake{pl}
	for _, name := range []string{"p2", "p3", "p4"} {
		o := &planLake{w: pl.w, st: pl.st, id: lake.Ident{Catalog: pl.id.Catalog, Namespace: []string{"db"}, Name: name}}
		schema := pl.table(t).Schema()
		pl.w.CreateTable(t, "db", name, schema, nil, iceberg.Properties{"write.target-file-size-bytes": "16384"}, nil)
		for i := range 8 {
			o.appendRows(t, func(j int) int64 { return int64(j*8 + i) }, 4000)
		}
		tables = append(tables, o)
	}
	for i, q := range []int{6, 4, 2, 0} {
		var at []time.Time
		for j := range q {
			at = append(at, now.Add(-time.Duration(j+1)*time.Minute))
		}
		tables[i].collected(t, at...)
	}

	// p4's runs: a compaction that rewrote its files (it spends the
	// budget); a run whose every step was skipped, its rewrites deferred by
	// a budget (a no-op); and a no-op run older than the window.
	p4 := tables[3]
	all := map[string]bool{control.StepExpire: true, control.StepOrphans: true, control.StepCompact: true, control.StepDeletes: true, control.StepManifests: true}
	at := func(t time.Time) func() time.Time { return func() time.Time { return t } }
	_, err := control.Optimize(ctx, pl.w.Catalog, pl.st, p4.id, control.OptimizeOptions{Skip: all, Now: at(now.Add(-40 * 24 * time.Hour))})
	require.NoError(t, err)
	compacted, err := control.Optimize(ctx, pl.w.Catalog, pl.st, p4.id, control.OptimizeOptions{
		Skip:    map[string]bool{control.StepExpire: true, control.StepOrphans: true, control.StepDeletes: true, control.StepManifests: true},
		Compact: rewriter.CompactOptions{TargetFileSizeBytes: 1 << 20}, Now: at(now.Add(-2 * time.Hour)),
	})
	require.NoError(t, err)
	var rewritten int64
	for _, s := range compacted.Steps {
		if s.Name == control.StepCompact {
			require.Equal(t, control.StatusDone, s.Status)
			require.NotEqual(t, s.Before.SnapshotID, s.After.SnapshotID, "the compaction committed")
		}
	}
	spend, err := pl.st.Spend(ctx, now.Add(-24*time.Hour))
	require.NoError(t, err)
	require.Len(t, spend, 1)
	rewritten = spend[0].RewrittenBytes
	require.Positive(t, rewritten)
	why := control.DeferredPrefix + "lake budget 1MiB per 24h: 1MiB spent, 0B left"
	deferred, err := control.Optimize(ctx, pl.w.Catalog, pl.st, p4.id, control.OptimizeOptions{
		Skip: all, SkipReasons: map[string]string{control.StepCompact: why, control.StepDeletes: why}, Now: at(now.Add(-time.Hour)),
	})
	require.NoError(t, err)
	require.True(t, control.NoOpRun(deferred))
	require.False(t, control.NoOpRun(compacted))
	// Passes that deferred tables without a run: p3 twice (no run names
	// it), p4 once after its deferred run; p2's streak is older than the
	// window.
	unrunWhy := control.DeferredPrefix + "lake budget 1MiB per 24h: 1MiB spent, 0B left; needs 2MiB"
	require.NoError(t, pl.st.NoteDeferrals(ctx, map[string]string{tables[1].id.String(): "old reason"}, now.Add(-40*24*time.Hour)))
	require.NoError(t, pl.st.NoteDeferrals(ctx, map[string]string{tables[2].id.String(): unrunWhy}, now.Add(-50*time.Minute)))
	require.NoError(t, pl.st.NoteDeferrals(ctx, map[string]string{tables[2].id.String(): unrunWhy, p4.id.String(): unrunWhy}, now.Add(-30*time.Minute)))

	loaded := []string{}
	load := func(_ context.Context, id lake.Ident) (*lake.State, error) {
		loaded = append(loaded, id.Name)
		for _, tb := range tables {
			if tb.id.Name == id.Name {
				return tb.state(t), nil
			}
		}
		t.Fatalf("no table %s", id)
		return nil, nil
	}
	// p4 first: the listing's order is not the ranking's.
	ids := []lake.Ident{p4.id, tables[2].id, pl.id, tables[1].id}
	budget := policy.Budget{Scope: policy.ScopeLake, Bytes: 1 << 30, Window: 24 * time.Hour, Where: "floe.yaml:3"}
	opts := control.ReportOptions{Since: 30 * 24 * time.Hour, Now: clock, Seed: 1, TargetFileSizeBytes: 8 << 10, Top: 2,
		Budgets: func(lake.Ident) (policy.Budget, policy.Budget, error) { return budget, policy.Budget{}, nil }}
	r, err := control.ReportLake(ctx, pl.st, ids, load, opts)
	require.NoError(t, err)
	require.Equal(t, []string{"p4", "p3", "p", "p2"}, loaded, "each table loaded once, in the listing's order")
	require.True(t, r.Lake)

	// The ranking: every table, by expected gain.
	names := func(ks []report.Rank) []string {
		out := []string{}
		for _, k := range ks {
			out = append(out, k.Table)
		}
		return out
	}
	require.Equal(t, []string{pl.id.String(), tables[1].id.String(), tables[2].id.String(), p4.id.String()}, names(r.Ranking))
	for _, k := range r.Ranking[:3] {
		require.NotNil(t, k.Recommended, k.Table)
	}
	require.Nil(t, r.Ranking[3].Recommended, "no queries, nothing to gain")
	// The same data and rewrite: the saving is linear in the query rate.
	require.InDelta(t, 3.0, r.Ranking[0].SavedBytesPerDay/r.Ranking[2].SavedBytesPerDay, 1e-6)
	require.InDelta(t, 2.0, r.Ranking[1].SavedBytesPerDay/r.Ranking[2].SavedBytesPerDay, 1e-6)

	// The top two have sections, in the ranking's order; the others none.
	require.Len(t, r.Tables, 2)
	require.Equal(t, pl.id.String(), r.Tables[0].Table)
	require.Equal(t, tables[1].id.String(), r.Tables[1].Table)
	require.Equal(t, []bool{true, true, false, false}, []bool{r.Ranking[0].Detailed, r.Ranking[1].Detailed, r.Ranking[2].Detailed, r.Ranking[3].Detailed})

	// Totals count every table, those without a section too.
	tot := r.Totals
	require.NotNil(t, tot)
	require.Equal(t, 4, tot.Tables)
	require.Equal(t, 2, tot.Detailed)
	require.Equal(t, 2, tot.Top)
	files, bytes, small := 0, int64(0), 0
	for _, tb := range tables {
		s := tb.state(t)
		files += len(s.DataFiles)
		for _, f := range s.DataFiles {
			bytes += f.SizeBytes
		}
	}
	for _, k := range r.Ranking {
		small += k.SmallFiles
	}
	require.Equal(t, files, tot.DataFiles)
	require.Equal(t, bytes, tot.DataBytes)
	require.Equal(t, small, tot.SmallFiles)
	require.Positive(t, small)
	require.Equal(t, 3, tot.Recommended)
	require.InDelta(t, r.Ranking[0].SavedBytesPerDay+r.Ranking[1].SavedBytesPerDay+r.Ranking[2].SavedBytesPerDay, tot.SavedBytesPerDay, 1e-6)

	// p4's runs of the window: the compaction and the deferred no-op; the
	// one of 40 days ago is outside.
	require.Equal(t, 2, r.Ranking[3].Runs)
	require.Equal(t, 1, r.Ranking[3].NoOpRuns)
	require.Equal(t, 2, tot.Runs)
	require.Equal(t, 1, tot.NoOpRuns)
	require.Equal(t, 1, tot.DeferredRuns)

	// The queue: the lake budget's spend is the compaction's, and p4 was
	// deferred.
	require.NotNil(t, r.Queue)
	require.Len(t, r.Queue.Budgets, 1)
	b := r.Queue.Budgets[0]
	require.Equal(t, policy.ScopeLake, b.Scope)
	require.Equal(t, "floe.yaml:3", b.Where)
	require.Equal(t, int64(86400), b.WindowSeconds)
	require.Equal(t, rewritten, b.SpentBytes)
	require.NotNil(t, b.LeftBytes)
	require.Equal(t, int64(1<<30)-rewritten, *b.LeftBytes)
	require.Nil(t, b.LeftVCPUH, "no CPU bound")
	require.Len(t, r.Queue.Deferred, 2)
	d := r.Queue.Deferred[0]
	require.Equal(t, tables[2].id.String(), d.Table, "the newest deferral first; then by name")
	require.Zero(t, d.Runs)
	require.Equal(t, 2, d.Passes)
	d = r.Queue.Deferred[1]
	require.Equal(t, p4.id.String(), d.Table)
	require.Equal(t, "", d.RunID, "a pass without a run deferred it last")
	require.Equal(t, 1, d.Runs)
	require.Equal(t, 1, d.Passes)
	require.Equal(t, now.Add(-30*time.Minute), d.At)
	require.Equal(t, unrunWhy, d.Reason)

	// Rendered: the totals, the queue and the note on the sections left
	// out.
	var md, page strings.Builder
	require.NoError(t, report.Markdown(&md, r))
	require.NoError(t, report.HTML(&page, r))
	for _, out := range []string{md.String(), page.String()} {
		require.Contains(t, out, "4 tables: ")
		require.Contains(t, out, "2 runs in the window, 1 of them no-op")
		require.Contains(t, out, "Maintenance queue")
		require.Contains(t, out, unrunWhy)
		require.Contains(t, out, "Passes without a run")
		require.Contains(t, out, "Full sections follow for the first 2 of the 4 tables (--top 2)")
	}
	require.NotContains(t, page.String(), `href="#t-`+strings.ReplaceAll(p4.id.String(), ".", "-")+`"`, "no link to a section left out")

	// Top 0: every table's section.
	opts.Top = 0
	loaded = loaded[:0]
	r, err = control.ReportLake(ctx, pl.st, ids, load, opts)
	require.NoError(t, err)
	require.Len(t, r.Tables, 4)
	require.Equal(t, names(r.Ranking), func() []string {
		out := []string{}
		for _, tb := range r.Tables {
			out = append(out, tb.Table)
		}
		return out
	}())

	opts.Top = -1
	_, err = control.ReportLake(ctx, pl.st, ids, load, opts)
	require.ErrorContains(t, err, "top -1")
}
