package analyzer_test

import (
	"github.com/floe-project/floe/expr"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/floe-project/floe/analyzer"
	"github.com/floe-project/floe/collectors"
	"github.com/floe-project/floe/layout"
)

func rank(col string, score, share float64) analyzer.ColumnRank {
	return analyzer.ColumnRank{Table: "local.web.events", Column: col, Score: score, Share: share, PartitionDiscount: 1,
		OpMix: map[string]float64{"=": 1}}
}

func layouts(t *testing.T, cs []analyzer.Candidate) []string {
	t.Helper()
	out := make([]string, len(cs))
	for i, c := range cs {
		require.NoError(t, c.Layout.Validate())
		require.NotEmpty(t, c.Why)
		_, err := layout.Parse(c.Layout.String())
		require.NoError(t, err)
		out[i] = c.Layout.String()
	}
	return out
}

func TestCandidates(t *testing.T) {
	st := eventsTable(t, "events", nil)
	pruned := rank("country", 5, 0.6)
	pruned.Partitioned, pruned.PartitionDiscount = true, analyzer.DefaultPartitionDiscount
	cases := []struct {
		name  string
		ranks []analyzer.ColumnRank
		opts  analyzer.CandidateOptions
		want  []string
	}{
		{"no column qualifies", nil, analyzer.CandidateOptions{}, []string{"current", "binpack"}},
		{"one column", []analyzer.ColumnRank{rank("tenant_id", 3, 0.5)}, analyzer.CandidateOptions{},
			[]string{"sort(tenant_id)", "current", "binpack"}},
		{"two columns", []analyzer.ColumnRank{rank("tenant_id", 3, 0.5), rank("ts", 2, 0.4)}, analyzer.CandidateOptions{},
			[]string{"sort(tenant_id)", "sort(tenant_id, ts)", "zorder(tenant_id, ts)", "hilbert(tenant_id, ts)", "current", "binpack"}},
		{"three columns, order by score", []analyzer.ColumnRank{rank("ts", 2, 0.4), rank("event_type", 1, 0.3), rank("tenant_id", 3, 0.5), rank("country", 0.5, 0.2)}, analyzer.CandidateOptions{},
			[]string{"sort(tenant_id)", "sort(tenant_id, ts)", "zorder(tenant_id, ts)", "zorder(tenant_id, ts, event_type)",
				"hilbert(tenant_id, ts)", "hilbert(tenant_id, ts, event_type)", "current", "binpack"}},
		{"max columns", []analyzer.ColumnRank{rank("tenant_id", 3, 0.5), rank("ts", 2, 0.4), rank("event_type", 1, 0.3)}, analyzer.CandidateOptions{MaxColumns: 2},
			[]string{"sort(tenant_id)", "sort(tenant_id, ts)", "zorder(tenant_id, ts)", "hilbert(tenant_id, ts)", "current", "binpack"}},
		{"rare, useless, pruned and unknown columns are skipped", []analyzer.ColumnRank{
			pruned, rank("tenant_id", 3, 0.5), rank("ts", 2, 0.04), rank("event_type", 0, 0.9), rank("nope", 9, 0.9),
		}, analyzer.CandidateOptions{}, []string{"sort(tenant_id)", "current", "binpack"}},
		{"min share option", []analyzer.ColumnRank{rank("tenant_id", 3, 0.5), rank("ts", 2, 0.04)}, analyzer.CandidateOptions{MinShare: 0.01},
			[]string{"sort(tenant_id)", "sort(tenant_id, ts)", "zorder(tenant_id, ts)", "hilbert(tenant_id, ts)", "current", "binpack"}},
		{"exact z-order skips decimals", []analyzer.ColumnRank{rank("amount", 3, 0.5), rank("tenant_id", 2, 0.4), rank("ts", 1, 0.3)}, analyzer.CandidateOptions{},
			[]string{"sort(amount)", "sort(amount, tenant_id)", "zorder(tenant_id, ts)", "hilbert(amount, tenant_id)", "hilbert(amount, tenant_id, ts)", "current", "binpack"}},
		{"rank z-order takes decimals", []analyzer.ColumnRank{rank("amount", 3, 0.5), rank("tenant_id", 2, 0.4)}, analyzer.CandidateOptions{ZOrderMode: layout.ZOrderRank},
			[]string{"sort(amount)", "sort(amount, tenant_id)", "zorder(amount, tenant_id)", "hilbert(amount, tenant_id)", "current", "binpack"}},
		{"target file size", []analyzer.ColumnRank{rank("tenant_id", 3, 0.5)}, analyzer.CandidateOptions{TargetFileSizeBytes: 128 << 20},
			[]string{"sort(tenant_id) target 128MiB", "current", "binpack target 128MiB"}},
		{"tree over every qualifying column", []analyzer.ColumnRank{rank("ts", 2, 0.4), rank("event_type", 1, 0.3), rank("tenant_id", 3, 0.5), rank("country", 0.5, 0.2)}, analyzer.CandidateOptions{Tree: true},
			[]string{"sort(tenant_id)", "sort(tenant_id, ts)", "zorder(tenant_id, ts)", "zorder(tenant_id, ts, event_type)",
				"hilbert(tenant_id, ts)", "hilbert(tenant_id, ts, event_type)", "tree(tenant_id, ts, event_type, country)", "current", "binpack"}},
		{"no tree on one column", []analyzer.ColumnRank{rank("tenant_id", 3, 0.5), rank("ts", 2, 0.04)}, analyzer.CandidateOptions{Tree: true},
			[]string{"sort(tenant_id)", "current", "binpack"}},
		{"no tree on a column it cannot cut", []analyzer.ColumnRank{rank("amount", 3, 0.5), rank("tenant_id", 2, 0.4)}, analyzer.CandidateOptions{Tree: true},
			[]string{"sort(amount)", "sort(amount, tenant_id)", "hilbert(amount, tenant_id)", "current", "binpack"}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			require.Equal(t, tc.want, layouts(t, analyzer.Candidates(tc.ranks, st, tc.opts)))
		})
	}
}

func TestCandidatesFromRank(t *testing.T) {
	st := eventsTable(t, "events", nil)
	sr := collectors.EvidenceScanReport
	events := []collectors.QueryEvent{
		event(st, "q1", and(pred("tenant_id", expr.OpEq, num("150")), pred("ts", expr.OpGtEq, ts("2026-11-03 00:00:00"))), sr),
		event(st, "q2", pred("tenant_id", expr.OpIn, num("5"), num("105")), sr),
		event(st, "q3", pred("country", expr.OpIsNotNull), sr),
	}
	ranks, err := analyzer.Rank(st.Ident, st, events, analyzer.RankOptions{Now: now})
	require.NoError(t, err)
	cs := analyzer.Candidates(ranks, st, analyzer.CandidateOptions{})
	require.Equal(t, []string{"sort(tenant_id)", "sort(tenant_id, ts)", "zorder(tenant_id, ts)", "hilbert(tenant_id, ts)", "current", "binpack"}, layouts(t, cs))
	require.Contains(t, cs[0].Why, "tenant_id carries")
	// Without a state every ranked column is taken as it is.
	require.Len(t, analyzer.Candidates(ranks, nil, analyzer.CandidateOptions{}), 6)
}

func TestCandidateOptions(t *testing.T) {
	d := analyzer.DefaultCandidateOptions()
	require.NoError(t, d.Validate())
	require.Equal(t, analyzer.DefaultMinShare, d.MinShare)
	require.Equal(t, analyzer.DefaultMaxCandidateColumns, d.MaxColumns)
	err := analyzer.CandidateOptions{MinShare: 2, MaxColumns: 9, PrunedDiscount: -1, TargetFileSizeBytes: -1}.Validate()
	for _, want := range []string{"min share 2", "max columns 9", "pruned discount -1", "target file size -1"} {
		require.ErrorContains(t, err, want)
	}
	r := analyzer.DefaultRankOptions()
	require.NoError(t, r.Validate())
	require.Equal(t, analyzer.DefaultHalfLife, r.HalfLife)
	require.Equal(t, 0.9, r.EvidenceWeights[collectors.EvidenceSQL])
}
