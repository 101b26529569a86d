package control

import (
	"cmp"
	"container/heap"
	"context"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/floe-project/floe/control/policy"
	"github.com/floe-project/floe/control/report"
	"github.com/floe-project/floe/control/store"
	"github.com/floe-project/floe/lake"
)

// reportRunsPage is how many runs a lake report reads at a time while it
// counts a table's runs in the window.
const reportRunsPage = 200

// ReportLake gathers the lake-wide report over the tables ids, loading
// each with load and analysing it alone: one table's state and projections
// are held at a time, then dropped, so the report's memory grows with the
// top opts.Top sections and a small ranking row per table, not with the
// lake. Every table gets its ranking row (expected gain, data, small-file
// backlog, runs and no-op runs in the window); the first opts.Top of the
// ranking (every table when 0) their full section, as [Report] writes one;
// [report.Totals] sum every table. The queue lists each budget the tables
// spend from (opts.Budgets) with what the recorded rewrites spent in its
// window and what is left, and the tables whose rewrites a budget deferred
// in the report's window. It reads only.
//
// The report's window is opts.Since before the clock (every recorded run
// when 0): the runs started in it are counted, and a run counts as a
// no-op when it ran to the end and changed nothing ([NoOpRun]).
func ReportLake(ctx context.Context, st *store.Store, ids []lake.Ident, load func(context.Context, lake.Ident) (*lake.State, error), opts ReportOptions) (report.Report, error) {
	if opts.Top < 0 {
		return report.Report{}, fmt.Errorf("report: top %d: want 0 (every table) or more", opts.Top)
	}
	now := nowFunc(opts.Now)()
	opts.Now = func() time.Time { return now }
	if opts.Runs <= 0 {
		opts.Runs = DefaultReportRuns
	}
	r := report.Report{GeneratedAt: now.UTC(), SinceSeconds: int64(opts.Since / time.Second), Lake: true,
		Ranking: make([]report.Rank, 0, len(ids)), Totals: &report.Totals{Top: opts.Top}}
	var from time.Time
	if opts.Since > 0 {
		from = now.Add(-opts.Since)
	}
	top := &sections{}
	l := &ledger{st: st, now: now, uses: map[string]*BudgetUse{}, spend: map[time.Duration][]store.TableSpend{}}
	deferred := []report.Deferral{}
	for _, id := range ids {
		state, err := load(ctx, id)
		if err != nil {
			return r, err
		}
		t, err := reportTable(ctx, st, state, opts, now)
		if err != nil {
			return r, err
		}
		k := rankOf(t)
		tally, err := tallyRuns(ctx, st, t.Table, from)
		if err != nil {
			return r, fmt.Errorf("report %s: %w", id, err)
		}
		k.Runs, k.NoOpRuns = tally.runs, tally.noop
		if tally.deferral != nil {
			deferred = append(deferred, *tally.deferral)
		}
		if err := spendFrom(ctx, l, id, opts.Budgets); err != nil {
			return r, fmt.Errorf("report %s: budget: %w", id, err)
		}
		addTotals(r.Totals, k, tally)
		r.Ranking = append(r.Ranking, k)
		heap.Push(top, section{rank: k, table: t})
		if opts.Top > 0 && top.Len() > opts.Top {
			heap.Pop(top)
		}
	}
	slices.SortStableFunc(r.Ranking, compareRank)
	slices.SortStableFunc(*top, func(a, b section) int { return compareRank(a.rank, b.rank) })
	r.Tables = make([]report.Table, 0, top.Len())
	shown := make(map[string]bool, top.Len())
	for _, s := range *top {
		r.Tables = append(r.Tables, s.table)
		shown[s.table.Table] = true
	}
	for i := range r.Ranking {
		r.Ranking[i].Detailed = shown[r.Ranking[i].Table]
	}
	r.Totals.Detailed = len(r.Tables)
	deferred, err := withUnrunDeferrals(ctx, st, deferred, from)
	if err != nil {
		return r, err
	}
	slices.SortFunc(deferred, func(a, b report.Deferral) int {
		return cmp.Or(b.At.Compare(a.At), strings.Compare(a.Table, b.Table))
	})
	r.Queue = &report.Queue{Budgets: reportBudgets(l), Deferred: deferred}
	return r, nil
}

// withUnrunDeferrals adds to deferred (read from the runs) the passes that
// deferred a table without a run in the window ([store.Store.NoteDeferrals]):
// a table no run names is added; one a run names counts them, and takes
// their reason when a pass deferred it after its newest run.
func withUnrunDeferrals(ctx context.Context, st *store.Store, deferred []report.Deferral, from time.Time) ([]report.Deferral, error) {
	if st == nil {
		return deferred, nil
	}
	recs, err := st.Deferrals(ctx, from)
	if err != nil {
		return nil, fmt.Errorf("report the deferrals: %w", err)
	}
	at := map[string]int{}
	for i, d := range deferred {
		at[strings.ToLower(d.Table)] = i
	}
	for _, r := range recs {
		i, ok := at[strings.ToLower(r.Table)]
		if !ok {
			deferred = append(deferred, report.Deferral{Table: r.Table, Passes: r.Passes, At: r.LastAt, Reason: r.Reason})
			continue
		}
		d := &deferred[i]
		d.Passes = r.Passes
		if r.LastAt.After(d.At) {
			d.At, d.Reason, d.RunID = r.LastAt, r.Reason, ""
		}
	}
	return deferred, nil
}

// rankOf is table t's ranking row.
func rankOf(t report.Table) report.Rank {
	k := report.Rank{Table: t.Table, Health: t.Health.Status, Queries: t.Queries, DataFiles: t.DataFiles, DataBytes: t.DataBytes,
		SmallFiles: t.Health.SmallFiles}
	for _, c := range t.Candidates {
		if c.Recommended {
			l := c.Layout
			k.Recommended, k.GainPP, k.SavedBytesPerDay, k.PaybackDays = &l, c.GainPP, c.SavedBytesPerDay, c.PaybackDays
		}
	}
	return k
}

// compareRank orders ranking rows: the most scan bytes saved a day
// first, then the most gain, then by name.
func compareRank(a, b report.Rank) int {
	return cmp.Or(cmp.Compare(b.SavedBytesPerDay, a.SavedBytesPerDay), cmp.Compare(b.GainPP, a.GainPP), strings.Compare(a.Table, b.Table))
}

// section is a table's full section with its ranking row.
type section struct {
	rank  report.Rank
	table report.Table
}

// sections is a heap of sections with the one ranked last on top, so
// that popping it keeps the best ranked.
type sections []section

func (h sections) Len() int           { return len(h) }
func (h sections) Less(i, j int) bool { return compareRank(h[i].rank, h[j].rank) > 0 }
func (h sections) Swap(i, j int)      { h[i], h[j] = h[j], h[i] }
func (h *sections) Push(x any)        { *h = append(*h, x.(section)) }
func (h *sections) Pop() any {
	old := *h
	x := old[len(old)-1]
	old[len(old)-1] = section{}
	*h = old[:len(old)-1]
	return x
}

// runTally is what a lake report counts of a table's runs in its window.
type runTally struct {
	runs, noop, deferred int
	deferral             *report.Deferral
}

// tallyRuns counts table's runs started at or after from (every run when
// from is zero), newest first a page at a time: the no-op ones, and the
// ones a budget deferred, with the newest deferral's reason.
func tallyRuns(ctx context.Context, st *store.Store, table string, from time.Time) (runTally, error) {
	var (
		t     runTally
		after *store.RunCursor
	)
	for {
		runs, err := ListRunsPage(ctx, st, table, after, reportRunsPage)
		if err != nil {
			return t, err
		}
		for _, r := range runs {
			if !from.IsZero() && r.StartedAt.Before(from) {
				return t, nil
			}
			t.runs++
			if NoOpRun(r) {
				t.noop++
			}
			if why := DeferredReason(r); why != "" {
				t.deferred++
				if t.deferral == nil {
					t.deferral = &report.Deferral{Table: table, RunID: r.ID, At: r.StartedAt.UTC(), Reason: why}
				}
				t.deferral.Runs = t.deferred
			}
		}
		if len(runs) < reportRunsPage {
			return t, nil
		}
		last := runs[len(runs)-1]
		after = &store.RunCursor{StartedAt: last.StartedAt, ID: last.ID}
	}
}

// addTotals counts table row k and its runs into t.
func addTotals(t *report.Totals, k report.Rank, runs runTally) {
	t.Tables++
	t.DataFiles += k.DataFiles
	t.DataBytes += k.DataBytes
	t.SmallFiles += k.SmallFiles
	if k.Recommended != nil {
		t.Recommended++
		t.SavedBytesPerDay += k.SavedBytesPerDay
	}
	t.Runs += runs.runs
	t.NoOpRuns += runs.noop
	t.DeferredRuns += runs.deferred
}

// spendFrom opens, in l, the accounts of the budgets table id spends from.
func spendFrom(ctx context.Context, l *ledger, id lake.Ident, budgets func(lake.Ident) (policy.Budget, policy.Budget, error)) error {
	if budgets == nil {
		return nil
	}
	lakeBudget, nsBudget, err := budgets(id)
	if err != nil {
		return err
	}
	for _, b := range []policy.Budget{lakeBudget, nsBudget} {
		if b.IsZero() {
			continue
		}
		if _, err := l.use(ctx, b); err != nil {
			return err
		}
	}
	return nil
}

// reportBudgets are l's accounts as the report shows them, the lake's
// first, then by scope.
func reportBudgets(l *ledger) []report.Budget {
	out := make([]report.Budget, 0, len(l.order))
	for _, key := range l.order {
		u := l.uses[key]
		b := report.Budget{Scope: u.Scope, Where: u.Where, WindowSeconds: u.WindowSeconds, LimitBytes: u.LimitBytes, LimitVCPUH: u.LimitVCPUH,
			SpentBytes: u.SpentBytes, SpentVCPUH: u.SpentVCPUH}
		if u.LimitBytes > 0 {
			left := max(u.LimitBytes-u.SpentBytes, 0)
			b.LeftBytes = &left
		}
		if u.LimitVCPUH > 0 {
			left := max(u.LimitVCPUH-u.SpentVCPUH, 0)
			b.LeftVCPUH = &left
		}
		out = append(out, b)
	}
	slices.SortStableFunc(out, func(a, b report.Budget) int {
		return cmp.Or(cmp.Compare(b2i(a.Scope != policy.ScopeLake), b2i(b.Scope != policy.ScopeLake)), strings.Compare(a.Scope, b.Scope))
	})
	return out
}
