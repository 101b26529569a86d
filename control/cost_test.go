package control_test

import (
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/floe-project/floe/control"
	"github.com/floe-project/floe/control/policy"
	"github.com/floe-project/floe/control/report"
	"github.com/floe-project/floe/lake"
	"github.com/floe-project/floe/layout"
	"github.com/floe-project/floe/simulator"
)

// TestCostOf: the one cost function on made-up projections. A query pays
// its bytes and its files opened; a rewrite its bytes read and written
// (and in money its CPU); payback is the one over the other.
func TestCostOf(t *testing.T) {
	const mib = 1 << 20
	cur := simulator.Projection{Layout: mustLayout(t, "current"), BytesReadPct: 100, MeanFilesRead: 327}
	binpack := simulator.Projection{Layout: mustLayout(t, "binpack"), BytesReadPct: 100, MeanFilesRead: 1, RewriteBytes: 4 * mib, SizeRatio: 1}
	sorted := simulator.Projection{Layout: mustLayout(t, "sort(a)"), BytesReadPct: 10, MeanFilesRead: 1, RewriteBytes: 4 * mib, SizeRatio: 0.5}
	worse := simulator.Projection{Layout: mustLayout(t, "sort(b)"), BytesReadPct: 100, MeanFilesRead: 400, RewriteBytes: 4 * mib, SizeRatio: 1}
	tests := []struct {
		name  string
		model control.CostModel
		p     simulator.Projection
		// want: files and bytes saved per day, rewrite bytes, payback (-1: none)
		files, saved float64
		io           int64
		payback      float64
		usd          bool
	}{
		{"small files pay back by the files they stop opening", control.CostModel{}, binpack,
			326, 326 * 4 * mib * 10, 8 * mib, 8.0 * mib / (326 * 4 * mib * 10), false},
		{"bytes only: a binpack that reads the same bytes never pays back", control.CostModel{FileOpenBytes: -1}, binpack,
			326, 0, 8 * mib, -1, false},
		{"a file cost of 1 MiB", control.CostModel{FileOpenBytes: mib}, binpack,
			326, 326 * mib * 10, 8 * mib, 8.0 * mib / (326 * mib * 10), false},
		{"bytes and files saved add up; the rewrite writes what it compresses to", control.CostModel{}, sorted,
			326, (0.9*4*mib + 326*4*mib) * 10, 6 * mib, 6.0 * mib / ((0.9*4*mib + 326*4*mib) * 10), false},
		{"a layout that opens more files costs more: no payback", control.CostModel{}, worse,
			-73, -73 * 4 * mib * 10, 8 * mib, -1, false},
		{"priced: payback in money counts the rewrite's CPU", control.CostModel{USDPerTBScanned: 5, USDPerVCPUHour: 3600},
			binpack, 326, 326 * 4 * mib * 10, 8 * mib, -2, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			b := control.CostBasis{Model: tt.model, DataBytes: 4 * mib, QueriesPerDay: 10}
			c := b.Of(cur, tt.p)
			require.InDelta(t, tt.files, c.FilesSavedPerQuery, 1e-9)
			require.InDelta(t, tt.saved, c.SavedBytesPerDay, 1e-3)
			require.Equal(t, tt.io, c.RewriteIOBytes)
			require.InDelta(t, float64(tt.io)/control.RewriteBytesPerVCPUSecond/3600, c.RewriteVCPUHours, 1e-12)
			switch {
			case tt.payback == -1:
				require.Nil(t, c.PaybackDays)
				require.False(t, b.Pays(c))
			case tt.usd:
				require.NotNil(t, c.SavedUSDPerDay)
				require.NotNil(t, c.RewriteUSD)
				wantSaved := tt.saved / 1e12 * 5
				wantCost := float64(tt.io)/1e12*5 + c.RewriteVCPUHours*3600
				require.InDelta(t, wantSaved, *c.SavedUSDPerDay, 1e-12)
				require.InDelta(t, wantCost, *c.RewriteUSD, 1e-12)
				require.NotNil(t, c.PaybackDays)
				require.InDelta(t, wantCost/wantSaved, *c.PaybackDays, 1e-9)
				bytesOnly := float64(tt.io) / tt.saved
				require.Greater(t, *c.PaybackDays, bytesOnly, "the CPU, priced, lengthens the payback")
			default:
				require.Nil(t, c.SavedUSDPerDay, "no prices, no money")
				require.NotNil(t, c.PaybackDays)
				require.InDelta(t, tt.payback, *c.PaybackDays, 1e-12)
				require.True(t, b.Pays(c))
			}
		})
	}
}

// TestCostModelOf: the policy's cost keys become the model; the built-in
// policy counts 4 MiB a file, and 0 counts bytes only.
func TestCostModelOf(t *testing.T) {
	cur := simulator.Projection{Layout: mustLayout(t, "current"), BytesReadPct: 100, MeanFilesRead: 10}
	p := simulator.Projection{Layout: mustLayout(t, "binpack"), BytesReadPct: 100, MeanFilesRead: 1, RewriteBytes: 1 << 20, SizeRatio: 1}
	def := policy.Default()
	b := control.CostBasis{Model: control.CostModelOf(def), DataBytes: 1 << 20, QueriesPerDay: 1}
	require.InDelta(t, 9*float64(control.DefaultFileOpenBytes), b.Of(cur, p).SavedBytesPerDay, 1e-9)

	off := def
	off.Cost.FileOpenBytes = 0
	b.Model = control.CostModelOf(off)
	require.Zero(t, b.Of(cur, p).SavedBytesPerDay)

	// max_payback bounds what pays.
	b = control.CostBasis{Model: control.CostModelOf(def), DataBytes: 1 << 20, QueriesPerDay: 1, MaxPayback: time.Hour}
	c := b.Of(cur, p) // 2 MiB of rewrite against 36 MiB a day: 80 minutes
	require.NotNil(t, c.PaybackDays)
	require.False(t, b.Pays(c))
	b.MaxPayback = 2 * time.Hour
	require.True(t, b.Pays(c))
}

// TestChoosePlanCountsCost: with a cost basis, a compaction that skips no
// more files than today but opens fewer of them is chosen for what it
// saves; one whose rewrite does not pay back is not; one that skips fewer
// files than today beyond its error is not, whatever it saves.
func TestChoosePlanCountsCost(t *testing.T) {
	cur := simulator.Projection{Layout: mustLayout(t, "current"), SkippedPct: 0, BytesReadPct: 100, MeanFilesRead: 327, FilesAfter: 327}
	binpack := simulator.Projection{Layout: mustLayout(t, "binpack"), SkippedPct: 0, BytesReadPct: 100, MeanFilesRead: 1, FilesAfter: 1, RewriteBytes: 4 << 20, SizeRatio: 1}
	tests := []struct {
		name     string
		projs    []simulator.Projection
		basis    *control.CostBasis
		gain     bool
		byCost   bool
		best     string
		contains string
	}{
		{"without a cost basis: no gain in files skipped, no plan", []simulator.Projection{cur, binpack}, nil, false, false, "binpack", "not projected to skip more"},
		{"small files: binpack pays back", []simulator.Projection{cur, binpack},
			&control.CostBasis{DataBytes: 4 << 20, QueriesPerDay: 10}, true, true, "binpack", ""},
		{"no queries: nothing pays back", []simulator.Projection{cur, binpack},
			&control.CostBasis{DataBytes: 4 << 20, QueriesPerDay: 0}, false, false, "binpack", ""},
		{"a sort that skips more but never pays back loses to a binpack that does", []simulator.Projection{cur, binpack,
			{Layout: mustLayout(t, "sort(a)"), SkippedPct: 40, ErrorPP: 1, BytesReadPct: 60, MeanFilesRead: 300, FilesAfter: 500, RewriteBytes: 1 << 40, SizeRatio: 1}},
			&control.CostBasis{DataBytes: 4 << 20, QueriesPerDay: 10}, true, true, "binpack", ""},
		{"a binpack that loses skipping is not chosen for its files", []simulator.Projection{
			{Layout: mustLayout(t, "current"), SkippedPct: 90, BytesReadPct: 10, MeanFilesRead: 32.7, FilesAfter: 327},
			{Layout: mustLayout(t, "binpack"), SkippedPct: 0, BytesReadPct: 100, MeanFilesRead: 1, FilesAfter: 1, RewriteBytes: 4 << 20, SizeRatio: 1}},
			&control.CostBasis{DataBytes: 4 << 20, QueriesPerDay: 10}, false, false, "binpack", "worse"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c, err := control.ChoosePlan(tt.projs, control.ChooseOptions{MinGainPP: 5, Cost: tt.basis})
			require.NoError(t, err)
			require.Equal(t, tt.gain, c.Gain, c.Reason("t"))
			require.Equal(t, tt.byCost, c.ByCost)
			require.Equal(t, tt.best, c.Best.Layout.String())
			require.Contains(t, c.Reason("t"), tt.contains)
			if tt.basis != nil {
				require.NotNil(t, c.Cost)
			}
		})
	}
}

// TestSmallFilesPayBack: on a real table of eight small files whose
// queries skip none of them, binpack skips no more files than today but
// each query opens one file instead of eight: counted at the per-file
// cost it pays back, and plan proposes it; counted in bytes only (the old
// cost model, cost.file_open_bytes: 0) it never pays back and nothing is
// proposed. The report states the same payback the choice used.
func TestSmallFilesPayBack(t *testing.T) {
	ctx := t.Context()
	// Row j of every file has id j*8+file: every file spans every id.
	pl := setupPlan(t)
	now := time.Date(2026, 11, 24, 12, 0, 0, 0, time.UTC)
	clock := func() time.Time { return now }
	pl.collected(t, now.Add(-time.Hour), now.Add(-2*time.Hour), now.Add(-3*time.Hour))
	binpack, err := layout.Parse("binpack")
	require.NoError(t, err)
	project := control.ProjectOptions{Layouts: []layout.Layout{binpack}, Seed: 1, Workload: control.WorkloadOptions{Now: clock}}

	bytesOnly := policy.Default()
	bytesOnly.Cost.FileOpenBytes = 0
	for _, tc := range []struct {
		name    string
		p       policy.Policy
		propose bool
	}{
		{"per-file cost", policy.Default(), true},
		{"bytes only", bytesOnly, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p := tc.p
			prop, err := control.PlanBest(ctx, pl.w.Catalog, pl.st, pl.state(t), control.PlanOptions{
				Project: project, By: "carol", Now: clock, MinGainPP: control.DefaultMinGainPP, Policy: &p,
			})
			require.NoError(t, err)
			ch := prop.Choice
			require.Equal(t, "binpack", ch.Best.Layout.String())
			require.InDelta(t, ch.Current.SkippedPct, ch.Best.SkippedPct, 1e-9, "binpack skips what today's layout skips")
			require.InDelta(t, 8.0, ch.Current.MeanFilesRead, 1e-9)
			require.Less(t, ch.Best.MeanFilesRead, 8.0)
			require.NotNil(t, ch.Cost)
			require.Equal(t, tc.propose, prop.Plan != nil, ch.Reason(pl.id.String()))
			require.Equal(t, tc.propose, ch.ByCost)
			require.Equal(t, tc.propose, ch.Cost.PaybackDays != nil)

			// The report reckons the same payback for the same table.
			r, err := control.Report(ctx, pl.st, []*lake.State{pl.state(t)}, control.ReportOptions{
				Now: clock, Seed: 1, MinGainPP: control.DefaultMinGainPP,
				Policy: func(lake.Ident) (policy.Policy, error) { return p, nil },
			})
			require.NoError(t, err)
			var got *report.Candidate
			for i, c := range r.Tables[0].Candidates {
				if c.Layout.Strategy == layout.StrategyBinpack {
					got = &r.Tables[0].Candidates[i]
				}
			}
			require.NotNil(t, got)
			if !tc.propose {
				require.Nil(t, got.PaybackDays)
				require.Contains(t, got.Verdict, "never pays back")
				return
			}
			require.NotNil(t, got.PaybackDays)
			require.InDelta(t, *ch.Cost.PaybackDays, *got.PaybackDays, 1e-9)
			require.InDelta(t, ch.Cost.SavedBytesPerDay, got.SavedBytesPerDay, 1e-6)
		})
	}
}
