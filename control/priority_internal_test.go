package control

import (
	"context"
	"encoding/json"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/floe-project/floe/control/store"
	"github.com/floe-project/floe/lake"
	"github.com/floe-project/floe/rewriter"
)

// The partitions whose groups were skipped in a table's previous
// compaction are the next run's priority (CompactOptions.Priority).
func TestLostPartitionsFromThePreviousRun(t *testing.T) {
	ctx := context.Background()
	st, err := store.Open(ctx, ":memory:")
	require.NoError(t, err)
	t.Cleanup(func() { require.NoError(t, st.Close()) })
	id := lake.Ident{Catalog: "c", Namespace: []string{"db"}, Name: "t"}

	got, err := lostPartitions(ctx, st, id, "now")
	require.NoError(t, err)
	require.Empty(t, got, "no previous run")

	report := func(skipped ...string) json.RawMessage {
		res := rewriter.CompactResult{}
		for _, s := range skipped {
			res.Skipped = append(res.Skipped, rewriter.SkippedGroup{Name: s, Err: rewriter.ErrStaleGroup})
		}
		b, err := json.Marshal(map[string]any{"report": res})
		require.NoError(t, err)
		return b
	}
	start := time.Date(2026, 11, 24, 12, 0, 0, 0, time.UTC)
	for i, skipped := range [][]string{{"region=eu"}, {"region=us", "region=ap"}} {
		rid := []string{"old", "newer"}[i]
		require.NoError(t, st.StartRun(ctx, store.RunRecord{ID: rid, Table: id.String(), Status: string(StatusDone), StartedAt: start.Add(time.Duration(i) * time.Hour)}))
		require.NoError(t, st.PutRunStep(ctx, rid, store.StepRecord{Step: StepCompact, Status: string(StatusDone), After: report(skipped...)}))
	}
	got, err = lostPartitions(ctx, st, id, "now")
	require.NoError(t, err)
	require.Equal(t, []string{"region=us", "region=ap"}, got, "the newest earlier compaction's losers")
}
