package rewriter_test

import (
	"context"
	"sync"
	"testing"
	"time"

	"github.com/apache/iceberg-go"
	"github.com/stretchr/testify/require"

	"github.com/floe-project/floe/internal/testlake"
	"github.com/floe-project/floe/lake"
	"github.com/floe-project/floe/rewriter"
)

// TestCompactStopsWhenItsLeaseLapsed: the store stalls before a run's
// commit for longer than the lease's TTL (on the lease's clock), so every
// renewal in between fails; then it answers again and renewals would get
// through. The lease lapsed meanwhile and another floe may have taken the
// table for free: the run must stop before the commit, saying so, with
// nothing committed, instead of renewing the lapsed lease and committing.
func TestCompactStopsWhenItsLeaseLapsed(t *testing.T) {
	ctx := t.Context()
	const ttl = time.Hour // on the injected clock
	w := testlake.NewS3(t)
	spec := iceberg.NewPartitionSpec(iceberg.PartitionField{SourceIDs: []int{2}, FieldID: 1000, Name: "region", Transform: iceberg.IdentityTransform{}})
	w.CreateTable(t, "db", "events", commitSchema, &spec, nil, nil)
	// Renewals that hit the stall fail within a fraction of a second.
	cat := w.Reopen(t, map[string]string{lake.PropIOTimeout: "300ms"})
	id := lake.Ident{Catalog: w.Name, Namespace: []string{"db"}, Name: "events"}
	tbl, err := lake.LoadTable(ctx, cat, id)
	require.NoError(t, err)
	for i := range 6 {
		tbl = appendFresh(t, tbl, i*10, 10, "eu")
	}
	before := tbl.CurrentSnapshot().SnapshotID
	st, err := lake.LoadState(ctx, id, tbl, lake.LoadOptions{})
	require.NoError(t, err)

	var mu sync.Mutex
	now := time.Date(2026, 5, 1, 12, 0, 0, 0, time.UTC)
	clock := func() time.Time { mu.Lock(); defer mu.Unlock(); return now }
	renewEvery := 20 * time.Millisecond
	opts := rewriter.CompactOptions{TargetFileSizeBytes: 4 << 20,
		Lease:  rewriter.LeaseOptions{TTL: ttl, RenewEvery: renewEvery, Now: clock},
		Commit: rewriter.CommitOptions{Sleep: instantSleep},
		Pause: func(_ context.Context, point string) {
			if point != rewriter.PauseBeforeCommit(1) {
				return
			}
			w.S3.Stall(time.Minute)
			mu.Lock()
			now = now.Add(2 * ttl)
			mu.Unlock()
			time.Sleep(time.Second) // renewals stall and time out
			w.S3.Stall(0)
			time.Sleep(20 * renewEvery) // and would get through again
		}}
	plan, err := rewriter.PlanCompaction(st, opts)
	require.NoError(t, err)
	require.Len(t, plan.Groups, 1)
	res, err := rewriter.Compact(ctx, st, plan, opts)
	require.ErrorIs(t, err, rewriter.ErrLeaseLost)
	require.ErrorContains(t, err, "lapsed at 2026-05-01T13:00:00Z")
	require.ErrorContains(t, err, "another floe may have taken the table")
	require.Empty(t, res.Commits)

	fresh, err := lake.LoadTable(ctx, cat, id)
	require.NoError(t, err)
	require.Equal(t, before, fresh.CurrentSnapshot().SnapshotID, "nothing committed")
	leases, err := rewriter.Leases(ctx, fresh)
	require.NoError(t, err)
	require.Empty(t, leases, "the run's lease file is removed all the same")
}

// TestLeaseRenewalAfterLapseDoesNotRevive: a renewal that completes after
// the lease's expiry passed leaves the lease lapsed, and the renewals stop.
func TestLeaseRenewalAfterLapseDoesNotRevive(t *testing.T) {
	ctx := t.Context()
	w := testlake.NewS3(t)
	tbl := w.CreateTable(t, "db", "events", commitSchema, nil, nil, nil)
	var mu sync.Mutex
	now := time.Date(2026, 5, 1, 12, 0, 0, 0, time.UTC)
	clock := func() time.Time { mu.Lock(); defer mu.Unlock(); return now }
	lease, err := rewriter.AcquireLease(ctx, tbl, rewriter.LeaseOptions{RunID: "run-a", TTL: time.Minute, RenewEvery: 10 * time.Millisecond, Now: clock})
	require.NoError(t, err)
	t.Cleanup(func() { require.NoError(t, lease.Release()) })
	require.NoError(t, lease.Check())

	mu.Lock()
	now = now.Add(time.Hour)
	mu.Unlock()
	time.Sleep(100 * time.Millisecond) // renewals would succeed: the store answers
	err = lease.Check()
	require.ErrorIs(t, err, rewriter.ErrLeaseLost)
	require.ErrorContains(t, err, "lapsed at 2026-05-01T12:01:00Z (no renewal since)")
	require.Equal(t, time.Date(2026, 5, 1, 12, 1, 0, 0, time.UTC), lease.Record().ExpiresAt)

	mu.Lock()
	now = now.Add(-time.Hour) // even back inside the old TTL it stays lapsed
	mu.Unlock()
	require.ErrorIs(t, lease.Check(), rewriter.ErrLeaseLost)
	leases, err := rewriter.Leases(ctx, tbl)
	require.NoError(t, err)
	require.Len(t, leases, 1)
	require.Equal(t, time.Date(2026, 5, 1, 12, 1, 0, 0, time.UTC), leases[0].ExpiresAt, "the lapsed lease's file is not renewed")
}
