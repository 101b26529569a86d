package control_test

import (
	"context"
	"fmt"
	"math/rand/v2"
	"slices"
	"testing"
	"time"

	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/apache/iceberg-go"
	"github.com/apache/iceberg-go/catalog"
	"github.com/stretchr/testify/require"

	"github.com/floe-project/floe/collectors"
	"github.com/floe-project/floe/control"
	"github.com/floe-project/floe/control/config"
	"github.com/floe-project/floe/control/policy"
	"github.com/floe-project/floe/control/store"
	"github.com/floe-project/floe/internal/testlake"
	"github.com/floe-project/floe/lake"
)

// smallFileTable creates table db.name of files small files of rows random
// int64s each (about 8 bytes a row in Parquet: random values do not
// compress), under a 4MiB target, one commit per file.
func smallFileTable(t *testing.T, w *testlake.Warehouse, name string, files, rows int, rng *rand.Rand) lake.Ident {
	t.Helper()
	schema := iceberg.NewSchema(0, iceberg.NestedField{ID: 1, Name: "v", Type: iceberg.PrimitiveTypes.Int64, Required: true})
	tbl := w.CreateTable(t, "db", name, schema, nil, iceberg.Properties{"write.target-file-size-bytes": fmt.Sprint(4 << 20)}, nil)
	sc := testlake.ArrowSchema(t, tbl)
	for range files {
		b := array.NewRecordBuilder(memory.DefaultAllocator, sc)
		for range rows {
			b.Field(0).(*array.Int64Builder).Append(rng.Int64())
		}
		rec := b.NewRecordBatch()
		b.Release()
		tbl = testlake.Append(t, tbl, rec)
		rec.Release()
	}
	return lake.Ident{Catalog: w.Name, Namespace: []string{"db"}, Name: name}
}

// queried stores n queries of table id, the first at first and one a
// minute after.
func queried(t *testing.T, st *store.Store, id lake.Ident, n int, first time.Time) {
	t.Helper()
	var evs []collectors.QueryEvent
	for i := range n {
		at := first.Add(time.Duration(i) * time.Minute)
		evs = append(evs, collectors.QueryEvent{Source: "trino-event", Engine: collectors.EngineTrino, QueryID: fmt.Sprintf("%s-%d", id.Name, i),
			StartTime: at, EndTime: at.Add(time.Second), State: collectors.StateSucceeded, StatementType: "SELECT",
			Tables: []collectors.TableAccess{{Catalog: id.Catalog, Namespace: id.NamespaceString(), Name: id.Name, Direct: true}}})
	}
	_, _, err := st.InsertEvents(t.Context(), evs)
	require.NoError(t, err)
}

// stepOf is the step called name of the run of table in pass, and whether
// the pass ran the table.
func stepOf(p control.Pass, table, name string) (control.Step, bool) {
	for _, r := range p.Runs {
		if r.Table != table {
			continue
		}
		for _, s := range r.Run.Steps {
			if s.Name == name {
				return s, true
			}
		}
		return control.Step{}, true
	}
	return control.Step{}, false
}

func decisionFor(t *testing.T, p control.Pass, table string) control.TableDecision {
	t.Helper()
	i := slices.IndexFunc(p.Decisions, func(d control.TableDecision) bool { return d.Table == table })
	require.GreaterOrEqual(t, i, 0, "no decision for %s", table)
	return p.Decisions[i]
}

// TestBudgetBuysTheHighestGainFirst: three tables with the same small-file
// backlog (ten 160KB files each, about 1.6MB to rewrite) whose queries
// differ — a_cold none, b_warm 5 a day, c_hot 50 a day — under a lake
// budget of 2MiB a day, which pays for one compaction. Listing order would
// compact a_cold; the pass compacts c_hot, the most scan saved per byte
// rewritten, and defers the others with the budget's reason (their cheap
// steps still run). A day later the window has forgotten c_hot's spend and
// b_warm is bought; a_cold, deferred again, runs once its backlog has
// waited its freshness SLA (48h), although the budget left is less than it
// needs.
func TestBudgetBuysTheHighestGainFirst(t *testing.T) {
	w := testlake.New(t)
	if c, ok := w.Catalog.(catalog.Closer); ok {
		t.Cleanup(func() { require.NoError(t, c.Close()) })
	}
	rng := rand.New(rand.NewPCG(45, 1))
	cold := smallFileTable(t, w, "a_cold", 10, 20_000, rng)
	warm := smallFileTable(t, w, "b_warm", 10, 20_000, rng)
	hot := smallFileTable(t, w, "c_hot", 10, 20_000, rng)
	st, err := store.Open(t.Context(), ":memory:")
	require.NoError(t, err)
	t.Cleanup(func() { require.NoError(t, st.Close()) })

	set, err := policy.ParseFile("floe.yaml", []byte("default:\n  layout: none\n  budget: {bytes: 2MiB, window: 24h}\n"))
	require.NoError(t, err)
	cfg := &config.Config{Catalogs: map[string]config.Props{w.Name: {}}, Policies: set}
	c := &clock{t: time.Now().UTC()}
	start := c.Now()
	s := control.NewScheduler(control.SchedulerOptions{Config: cfg, Store: st, Now: c.Now,
		Catalog: func(context.Context, string) (catalog.Catalog, error) { return w.Catalog, nil }})
	queried(t, st, hot, 50, start.Add(-24*time.Hour))
	queried(t, st, warm, 5, start.Add(-24*time.Hour))

	// Pass 1: c_hot is bought; the others wait.
	p, err := s.RunPass(t.Context())
	require.NoError(t, err)
	require.Empty(t, p.Errors)
	hd, wd, cd := decisionFor(t, p, hot.String()), decisionFor(t, p, warm.String()), decisionFor(t, p, cold.String())
	for i, d := range []control.TableDecision{hd, wd, cd} {
		require.True(t, d.Due, d.Table)
		require.NotNil(t, d.Rank, d.Table)
		require.Equal(t, i+1, d.Rank.Position, "%s: the rank by gain per cost", d.Table)
		require.Equal(t, control.RankGain, d.Rank.Class)
		require.Equal(t, 10, d.Rank.FilesMerged+1, "%s: ten files become one", d.Table)
		require.Greater(t, d.Rank.RewriteBytes, int64(1<<20), d.Table)
	}
	require.InDelta(t, 50.0, hd.Rank.QueriesPerDay, 1)
	require.InDelta(t, 5.0, wd.Rank.QueriesPerDay, 0.1)
	require.Zero(t, cd.Rank.SavedBytesPerDay, "nobody reads a_cold")
	require.Empty(t, hd.Deferred)
	for _, d := range []control.TableDecision{wd, cd} {
		require.Regexp(t, `^deferred: lake budget 2MiB per 1d: 1\.\d MiB spent, \d+ KiB left; needs 1\.\d MiB$`, d.Deferred, d.Table)
	}
	compact, ran := stepOf(p, hot.String(), control.StepCompact)
	require.True(t, ran)
	require.Equal(t, control.StatusDone, compact.Status, "c_hot compacted")
	for _, id := range []lake.Ident{warm, cold} {
		compact, ran := stepOf(p, id.String(), control.StepCompact)
		require.True(t, ran, "%s: its orphan listing, never done, still runs", id)
		require.Equal(t, control.StatusSkipped, compact.Status, id.String())
		require.Equal(t, decisionFor(t, p, id.String()).Deferred, compact.Reason, "the run records why")
		orphans, _ := stepOf(p, id.String(), control.StepOrphans)
		require.Equal(t, control.StatusDone, orphans.Status, id.String())
	}
	require.Len(t, p.Budgets, 1)
	b := p.Budgets[0]
	require.Equal(t, policy.ScopeLake, b.Scope)
	require.Zero(t, b.SpentBytes, "nothing spent before the first pass")
	require.Equal(t, []string{hot.String()}, b.Bought)
	require.Equal(t, []string{warm.String(), cold.String()}, b.Deferred)
	require.Equal(t, hd.Rank.RewriteBytes, b.BoughtBytes)

	// An hour later both still wait, and now nothing else of them is due
	// (their orphan listing is fresh): no run says so, the store does, for
	// the lake report's queue.
	c.Add(time.Hour)
	p, err = s.RunPass(t.Context())
	require.NoError(t, err)
	require.Empty(t, p.Errors)
	require.Empty(t, p.Runs)
	defs, err := st.Deferrals(t.Context(), time.Time{})
	require.NoError(t, err)
	require.Len(t, defs, 2)
	for i, id := range []lake.Ident{cold, warm} {
		require.Equal(t, id.String(), defs[i].Table)
		require.Equal(t, 1, defs[i].Passes)
		require.Equal(t, decisionFor(t, p, id.String()).Deferred, defs[i].Reason)
	}

	// Pass 2, a day and an hour after pass 1: c_hot's spend left the window.
	c.Add(24 * time.Hour)
	p, err = s.RunPass(t.Context())
	require.NoError(t, err)
	require.Empty(t, p.Errors)
	hd = decisionFor(t, p, hot.String())
	require.True(t, hd.Due, "its orphan listing is a day old")
	require.Zero(t, hd.Rank.RewriteBytes, "c_hot is compacted: only cheap steps are due")
	require.Nil(t, hd.Rank.GainPerCost)
	require.Equal(t, 1, hd.Rank.Position, "what costs no budget goes first")
	require.Zero(t, p.Budgets[0].SpentBytes, "c_hot's run ended 25h ago: out of the 24h window")
	compact, _ = stepOf(p, warm.String(), control.StepCompact)
	require.Equal(t, control.StatusDone, compact.Status, "b_warm bought")
	require.NotEmpty(t, decisionFor(t, p, cold.String()).Deferred)
	require.Equal(t, control.RankGain, decisionFor(t, p, cold.String()).Rank.Class)
	defs, err = st.Deferrals(t.Context(), time.Time{})
	require.NoError(t, err)
	require.Len(t, defs, 1, "b_warm's streak ended when it was bought")
	require.Equal(t, cold.String(), defs[0].Table)

	// Pass 3: 48h after a_cold's first small file, its backlog is overdue;
	// b_warm's spend, 23h old, leaves less than a_cold needs, and a_cold
	// runs ahead of the rank anyway.
	c.Add(23 * time.Hour)
	p, err = s.RunPass(t.Context())
	require.NoError(t, err)
	require.Empty(t, p.Errors)
	cd = decisionFor(t, p, cold.String())
	require.Equal(t, control.RankOverdue, cd.Rank.Class)
	require.GreaterOrEqual(t, cd.Rank.BacklogAge, 48*time.Hour)
	require.Greater(t, p.Budgets[0].SpentBytes, int64(1<<20), "b_warm's spend is in the window")
	require.Greater(t, cd.Rank.RewriteBytes, 2<<20-p.Budgets[0].SpentBytes, "more than the budget left")
	require.Empty(t, cd.Deferred)
	compact, _ = stepOf(p, cold.String(), control.StepCompact)
	require.Equal(t, control.StatusDone, compact.Status, "a_cold no longer starves")
}
