package control

import (
	"errors"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/floe-project/floe/control/policy"
	"github.com/floe-project/floe/control/store"
	"github.com/floe-project/floe/rewriter"
)

// TestRankJobs: approved plans first, then the overdue (longest backlog
// first), then by gain per cost — a table whose steps cost no budget
// ahead — then files merged per byte, then name; a table without an
// estimate last.
func TestRankJobs(t *testing.T) {
	est := func(bytes int64, saved float64, merged int, backlog time.Duration) Estimate {
		return Estimate{RewriteBytes: bytes, RewriteVCPUHours: vcpuHours(rewriteIOBytes(bytes)), SavedBytesPerDay: saved, FilesMerged: merged,
			BacklogAge: backlog, MaxWait: 48 * time.Hour}
	}
	for _, tc := range []struct {
		name string
		in   []ranked
		want []string
	}{
		{"gain per cost", []ranked{
			{job: passJob{d: TableDecision{Table: "a"}}, est: est(100, 10, 5, 0)},
			{job: passJob{d: TableDecision{Table: "b"}}, est: est(100, 1000, 5, 0)},
			{job: passJob{d: TableDecision{Table: "c"}}, est: est(1000, 1000, 5, 0)},
		}, []string{"b", "c", "a"}},
		{"nobody queries: files merged per byte", []ranked{
			{job: passJob{d: TableDecision{Table: "a"}}, est: est(1000, 0, 5, 0)},
			{job: passJob{d: TableDecision{Table: "b"}}, est: est(1000, 0, 50, 0)},
			{job: passJob{d: TableDecision{Table: "c"}}, est: est(1000, 0, 50, 0)},
		}, []string{"b", "c", "a"}},
		{"classes before gain", []ranked{
			{job: passJob{d: TableDecision{Table: "gain"}}, est: est(1, 1e9, 5, 0)},
			{job: passJob{d: TableDecision{Table: "overdue-1d"}}, est: est(1000, 0, 5, 49*time.Hour)},
			{job: passJob{d: TableDecision{Table: "overdue-3d"}}, est: est(1000, 0, 5, 72*time.Hour)},
			{job: passJob{d: TableDecision{Table: "approved"}}, est: est(1e12, 0, 0, 0), class: RankApproved},
			{job: passJob{d: TableDecision{Table: "cheap"}}, est: Estimate{}},
			{job: passJob{d: TableDecision{Table: "unknown"}}, estError: errors.New("catalog down")},
		}, []string{"approved", "overdue-3d", "overdue-1d", "cheap", "gain", "unknown"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			for i := range tc.in {
				if tc.in[i].class == "" {
					tc.in[i].class = classOf(false, tc.in[i].est)
				}
			}
			rankJobs(tc.in)
			var got []string
			for _, r := range tc.in {
				got = append(got, r.job.d.Table)
			}
			require.Equal(t, tc.want, got)
		})
	}
}

// TestAdmit: a job starts when every budget it spends from can pay its
// estimate; an overdue one while every budget has anything left; an
// approved one and one that rewrites nothing always.
func TestAdmit(t *testing.T) {
	lake := func(limit, spent, bought int64) *BudgetUse {
		return &BudgetUse{LimitBytes: limit, SpentBytes: spent, BoughtBytes: bought,
			budget: policy.Budget{Bytes: limit, Window: 24 * time.Hour, Scope: policy.ScopeLake}}
	}
	cpu := &BudgetUse{LimitVCPUH: 1, SpentVCPUH: 0.9, budget: policy.Budget{CPUHours: 1, Window: time.Hour, Scope: "local.raw"}}
	needs := func(bytes int64) Estimate {
		return Estimate{RewriteBytes: bytes, RewriteVCPUHours: vcpuHours(rewriteIOBytes(bytes))}
	}
	for _, tc := range []struct {
		name  string
		class string
		e     Estimate
		uses  []*BudgetUse
		want  string
	}{
		{"fits", RankGain, needs(40 << 20), []*BudgetUse{lake(100<<20, 30<<20, 30<<20)}, ""},
		{"too big for what is left", RankGain, needs(50 << 20), []*BudgetUse{lake(100<<20, 30<<20, 30<<20)},
			"lake budget 100MiB per 1d: 60MiB spent, 40MiB left; needs 50MiB"},
		{"the namespace's budget too", RankGain, needs(8 << 30), []*BudgetUse{lake(100<<30, 0, 0), cpu},
			"namespace local.raw budget 1 vCPU-h per 1h: 0.90 vCPU-h spent, 0.10 left; needs 0.14"},
		{"overdue, something left", RankOverdue, needs(50 << 20), []*BudgetUse{lake(100<<20, 30<<20, 30<<20)}, ""},
		{"overdue, nothing left", RankOverdue, needs(50 << 20), []*BudgetUse{lake(100<<20, 100<<20, 0)},
			"lake budget 100MiB per 1d: spent (overdue tables start while any is left)"},
		{"approved", RankApproved, needs(1 << 40), []*BudgetUse{lake(100<<20, 100<<20, 0)}, ""},
		{"cheap steps only", RankGain, Estimate{}, []*BudgetUse{lake(100<<20, 100<<20, 0)}, ""},
		{"no budget", RankGain, needs(1 << 40), nil, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			require.Equal(t, tc.want, admit(tc.class, tc.e, tc.uses))
		})
	}
}

// TestLedgerCountsTheWindowOfEachScope: a budget's account counts what the
// recorded rewrites spent in its own window — the lake's every table's, a
// namespace's its tables' only.
func TestLedgerCountsTheWindowOfEachScope(t *testing.T) {
	ctx := t.Context()
	st, err := store.Open(ctx, ":memory:")
	require.NoError(t, err)
	t.Cleanup(func() { require.NoError(t, st.Close()) })
	now := time.Date(2026, 11, 24, 12, 0, 0, 0, time.UTC)
	for i, r := range []struct {
		table string
		ago   time.Duration
		bytes int64
	}{
		{"local.raw.a", time.Hour, 10 << 20},
		{"local.raw.b", 30 * time.Hour, 20 << 20},
		{"local.web.c", 2 * time.Hour, 40 << 20},
		{"local.RAW.d", 3 * time.Hour, 80 << 20},
	} {
		id := string(rune('a' + i))
		require.NoError(t, st.StartRun(ctx, store.RunRecord{ID: id, Table: r.table, Status: "running", StartedAt: now.Add(-r.ago - time.Minute)}))
		require.NoError(t, st.PutRunStep(ctx, id, store.StepRecord{Step: StepCompact, Status: "done", RewrittenBytes: r.bytes, RewriteCPUMillis: r.bytes / 1000}))
		require.NoError(t, st.EndRun(ctx, id, "done", "", now.Add(-r.ago)))
	}
	l := &ledger{st: st, now: now, uses: map[string]*BudgetUse{}, spend: map[time.Duration][]store.TableSpend{}}
	for _, tc := range []struct {
		budget policy.Budget
		spent  int64
	}{
		{policy.Budget{Bytes: 1 << 30, Window: 24 * time.Hour, Scope: policy.ScopeLake}, (10 + 40 + 80) << 20},
		{policy.Budget{Bytes: 1 << 30, Window: 48 * time.Hour, Scope: "local.raw"}, (10 + 20 + 80) << 20},
		{policy.Budget{Bytes: 1 << 30, Window: 90 * time.Minute, Scope: "local.web"}, 0},
	} {
		u, err := l.use(ctx, tc.budget)
		require.NoError(t, err)
		require.Equal(t, tc.spent, u.SpentBytes, tc.budget.Scope)
		require.InDelta(t, float64(tc.spent)/1000/3600/1000, u.SpentVCPUH, 1e-6, tc.budget.Scope)
	}
}

// TestStepSpend: a step spends the bytes it read to rewrite them, and the
// CPU of what it read and wrote at RewriteBytesPerVCPUSecond; steps that
// rewrite no data spend nothing.
func TestStepSpend(t *testing.T) {
	for _, tc := range []struct {
		name         string
		r            StepReport
		bytes, cpuMs int64
	}{
		{"compaction", StepReport{Compact: &rewriter.CompactResult{BytesIn: 64 << 20, BytesOut: 32 << 20}}, 64 << 20, 3000},
		{"delete rewrite's compaction", StepReport{Deletes: &rewriter.DeleteRewriteResult{Compact: &rewriter.CompactResult{BytesIn: 32 << 20, BytesOut: 32 << 20}}}, 32 << 20, 2000},
		{"delete files merged only", StepReport{Deletes: &rewriter.DeleteRewriteResult{}}, 0, 0},
		{"an engine's rewrite", StepReport{Engine: &DistributedReport{EngineReport: &rewriter.EngineReport{Metrics: map[string]int64{"rewritten_bytes_count": 16 << 20}}}}, 16 << 20, 1000},
		{"a plan", StepReport{CompactPlan: &rewriter.CompactPlan{InputBytes: 1 << 30}}, 0, 0},
		{"an expiry", StepReport{Expire: &rewriter.ExpireResult{}}, 0, 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			bytes, cpu := tc.r.spend()
			require.Equal(t, tc.bytes, bytes)
			require.Equal(t, tc.cpuMs, cpu)
		})
	}
}
