package store_test

import (
	"errors"
	"fmt"
	"slices"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/floe-project/floe/control/store"
)

// TestClaimTables walks one database through a sequence of claims by two
// holders, each step at its own time.
func TestClaimTables(t *testing.T) {
	const lease = time.Minute
	tables := []string{"local.web.Events", "local.web.clicks", "local.sales.orders"}
	type step struct {
		name   string
		holder string
		tables []string
		limit  int
		at     time.Duration // after t0; the lease runs until at + lease
		want   []string
	}
	steps := []step{
		{"a claims two of three", "a", tables, 2, 0, tables[:2]},
		{"b gets the one left", "b", tables, 5, time.Second, tables[2:]},
		{"a renews its own, b's is not free", "a", tables, 5, 10 * time.Second, tables[:2]},
		{"other spelling, same table", "b", []string{"LOCAL.WEB.EVENTS"}, 1, 20 * time.Second, []string{}},
		{"not yet expired", "b", tables, 5, 70*time.Second - time.Nanosecond, tables[2:]},
		{"expired at 70s exactly: b takes over", "b", tables, 5, 70 * time.Second, tables},
		{"a gets nothing", "a", tables, 5, 71 * time.Second, []string{}},
		{"duplicates count once", "b", []string{"local.web.clicks", "LOCAL.web.clicks"}, 5, 72 * time.Second, []string{"local.web.clicks"}},
		{"new tables, in the caller's order", "a", []string{"c.n.z", "c.n.y", "c.n.x"}, 2, 73 * time.Second, []string{"c.n.z", "c.n.y"}},
		{"nothing asked", "a", nil, 1, 74 * time.Second, []string{}},
	}
	store.ForEachDriver(t, func(t *testing.T, db store.TestDB) {
		ctx := t.Context()
		s := db.Open(t)
		for _, st := range steps {
			now := t0.Add(st.at)
			got, err := s.ClaimTables(ctx, st.holder, st.tables, st.limit, now.Add(lease), now)
			require.NoError(t, err, st.name)
			require.Equal(t, st.want, got, st.name)
		}
		leases, err := s.TableLeases(ctx)
		require.NoError(t, err)
		byTable := map[string]store.TableLease{}
		for _, l := range leases {
			byTable[l.Table] = l
		}
		require.Len(t, leases, 5, "c.n.x was never claimed: %v", leases)
		require.Equal(t, store.TableLease{Table: "local.web.events", Holder: "b", AcquiredAt: t0.Add(70 * time.Second), ExpiresAt: t0.Add(70*time.Second + lease)},
			byTable["local.web.events"])
		require.Equal(t, store.TableLease{Table: "local.sales.orders", Holder: "b", AcquiredAt: t0.Add(time.Second), ExpiresAt: t0.Add(70*time.Second + lease)},
			byTable["local.sales.orders"], "a holder claiming its own lease keeps acquired_at")
	})
}

// TestClaimManyTables asks for more tables than a SQLite statement takes
// parameters.
func TestClaimManyTables(t *testing.T) {
	store.ForEachDriver(t, func(t *testing.T, db store.TestDB) {
		s := db.Open(t)
		tables := make([]string, 40000)
		for i := range tables {
			tables[i] = fmt.Sprintf("c.n.t%05d", i)
		}
		got, err := s.ClaimTables(t.Context(), "a", tables, 2, t0.Add(time.Minute), t0)
		require.NoError(t, err)
		require.Equal(t, tables[:2], got)
		got, err = s.ClaimTables(t.Context(), "b", tables, 3, t0.Add(time.Minute), t0)
		require.NoError(t, err)
		require.Equal(t, tables[2:5], got)
	})
}

func TestClaimTablesRefuses(t *testing.T) {
	store.ForEachDriver(t, func(t *testing.T, db store.TestDB) {
		s := db.Open(t)
		for _, tc := range []struct {
			name, holder string
			tables       []string
			limit        int
			until        time.Time
			want         string
		}{
			{"no holder", "", []string{"a.b.c"}, 1, t0.Add(time.Minute), "empty holder"},
			{"limit 0", "h", []string{"a.b.c"}, 0, t0.Add(time.Minute), "limit 0"},
			{"until now", "h", []string{"a.b.c"}, 1, t0, "is not after now"},
			{"empty table", "h", []string{"a.b.c", " "}, 1, t0.Add(time.Minute), "empty table name"},
		} {
			_, err := s.ClaimTables(t.Context(), tc.holder, tc.tables, tc.limit, tc.until, t0)
			require.ErrorContains(t, err, tc.want, tc.name)
		}
	})
}

// TestRenewReleaseLease: renewing records the run and extends the lease;
// a holder whose lease was taken over gets ErrLeaseLost; releasing frees
// the table at once and only for its holder.
func TestRenewReleaseLease(t *testing.T) {
	store.ForEachDriver(t, func(t *testing.T, db store.TestDB) {
		ctx := t.Context()
		s := db.Open(t)
		tbl := "local.web.events"
		got, err := s.ClaimTables(ctx, "host-a:1", []string{tbl}, 1, t0.Add(time.Minute), t0)
		require.NoError(t, err)
		require.Equal(t, []string{tbl}, got)

		require.NoError(t, s.RenewLease(ctx, "host-a:1", "LOCAL.web.events", "run-1", t0.Add(2*time.Minute)))
		leases, err := s.TableLeases(ctx)
		require.NoError(t, err)
		require.Equal(t, []store.TableLease{{Table: tbl, Holder: "host-a:1", RunID: "run-1", AcquiredAt: t0, ExpiresAt: t0.Add(2 * time.Minute)}}, leases)

		// Lapsed but not taken: the holder may still renew.
		require.NoError(t, s.RenewLease(ctx, "host-a:1", tbl, "run-1", t0.Add(3*time.Minute)))

		got, err = s.ClaimTables(ctx, "host-b:2", []string{tbl}, 1, t0.Add(10*time.Minute), t0.Add(3*time.Minute))
		require.NoError(t, err)
		require.Equal(t, []string{tbl}, got, "taken over at expiry")
		leases, err = s.TableLeases(ctx)
		require.NoError(t, err)
		require.Empty(t, leases[0].RunID, "the old holder's run is not the new holder's")

		err = s.RenewLease(ctx, "host-a:1", tbl, "run-1", t0.Add(4*time.Minute))
		require.ErrorIs(t, err, store.ErrLeaseLost)
		require.EqualError(t, err, "lease of table local.web.events lost by host-a:1: it is held by host-b:2 until 2026-05-01T12:10:00Z")
		var lost *store.LeaseLostError
		require.ErrorAs(t, err, &lost)
		require.Equal(t, "host-b:2", lost.CurrentHolder)

		require.NoError(t, s.ReleaseLease(ctx, "host-a:1", tbl), "not held: nothing to do")
		got, err = s.ClaimTables(ctx, "host-c:3", []string{tbl}, 1, t0.Add(time.Hour), t0.Add(4*time.Minute))
		require.NoError(t, err)
		require.Empty(t, got, "b still holds it")
		require.NoError(t, s.ReleaseLease(ctx, "host-b:2", tbl))
		leases, err = s.TableLeases(ctx)
		require.NoError(t, err)
		require.Empty(t, leases)
		err = s.RenewLease(ctx, "host-b:2", tbl, "", t0.Add(time.Hour))
		require.ErrorIs(t, err, store.ErrLeaseLost)
		require.ErrorContains(t, err, "no one holds it")
		got, err = s.ClaimTables(ctx, "host-c:3", []string{tbl}, 1, t0.Add(time.Hour), t0.Add(4*time.Minute))
		require.NoError(t, err)
		require.Equal(t, []string{tbl}, got, "free right after release")
	})
}

// TestClaimTablesConcurrently has two stores on one database (two
// processes) claim 50 tables from four goroutines in a loop, with limit 3
// and leases that lapse quickly on a shared logical clock, renewing what
// they got. Every successful claim or renewal holds the table over
// [now, until); the intervals of different holders of a table never
// overlap, leases that lapsed are taken over, and a renewal after a
// takeover fails with ErrLeaseLost.
func TestClaimTablesConcurrently(t *testing.T) {
	store.ForEachDriver(t, func(t *testing.T, db store.TestDB) {
		ctx := t.Context()
		stores := []*store.Store{db.Open(t), db.Open(t)}
		var tables []string
		for i := range 50 {
			tables = append(tables, fmt.Sprintf("cat.ns.t%02d", i))
		}
		const (
			perStore   = 2
			iterations = 40
			lease      = 6 // ticks
		)
		var tick atomic.Int64
		at := func(n int64) time.Time { return t0.Add(time.Duration(n) * time.Millisecond) }

		type interval struct {
			holder     string
			start, end int64
		}
		var (
			mu        sync.Mutex
			held      = map[string][]interval{}
			takeovers int
			lost      atomic.Int64
		)
		record := func(table, holder string, start int64) {
			mu.Lock()
			defer mu.Unlock()
			if iv := held[table]; len(iv) > 0 && iv[len(iv)-1].holder != holder {
				takeovers++
			}
			held[table] = append(held[table], interval{holder, start, start + lease})
		}

		var wg sync.WaitGroup
		errs := make(chan error, len(stores)*perStore)
		for si, s := range stores {
			for g := range perStore {
				holder := fmt.Sprintf("host-%d:%d", si, g)
				wg.Go(func() {
					for i := range iterations {
						off := (i*7 + (si*perStore+g)*13) % len(tables)
						order := append(slices.Clone(tables[off:]), tables[:off]...)
						now := tick.Add(1)
						got, err := s.ClaimTables(ctx, holder, order, 3, at(now+lease), at(now))
						if err != nil {
							errs <- err
							return
						}
						if len(got) > 3 {
							errs <- fmt.Errorf("%s claimed %d tables with limit 3", holder, len(got))
							return
						}
						for _, tbl := range got {
							record(tbl, holder, now)
						}
						for _, tbl := range got {
							now := tick.Add(1)
							err := s.RenewLease(ctx, holder, tbl, fmt.Sprintf("run-%s-%d", holder, i), at(now+lease))
							switch {
							case err == nil:
								record(tbl, holder, now)
							case errors.Is(err, store.ErrLeaseLost):
								lost.Add(1)
							default:
								errs <- err
								return
							}
						}
					}
				})
			}
		}
		wg.Wait()
		close(errs)
		for err := range errs {
			require.NoError(t, err)
		}
		for tbl, ivs := range held {
			for i, a := range ivs {
				for _, b := range ivs[i+1:] {
					if a.holder != b.holder && a.start < b.end && b.start < a.end {
						t.Fatalf("%s held by %s over [%d, %d) and by %s over [%d, %d)", tbl, a.holder, a.start, a.end, b.holder, b.start, b.end)
					}
				}
			}
		}
		require.Positive(t, takeovers, "lapsed leases are taken over")
		t.Logf("%d takeovers, %d renewals refused after a takeover", takeovers, lost.Load())

		// Deterministically: a takeover makes the old holder's renewal fail.
		now := tick.Add(1) + 1000
		got, err := stores[0].ClaimTables(ctx, "host-0:0", tables[:1], 1, at(now+lease), at(now))
		require.NoError(t, err)
		require.Equal(t, tables[:1], got)
		got, err = stores[1].ClaimTables(ctx, "host-1:0", tables[:1], 1, at(now+2*lease), at(now+lease))
		require.NoError(t, err)
		require.Equal(t, tables[:1], got)
		require.ErrorIs(t, stores[0].RenewLease(ctx, "host-0:0", tables[0], "", at(now+3*lease)), store.ErrLeaseLost)
	})
}

// TestTransitionPlanAcrossStores races the same plan transition from two
// stores on one database (two processes): exactly one wins each time, and
// the other gets ErrStateConflict.
func TestTransitionPlanAcrossStores(t *testing.T) {
	store.ForEachDriver(t, func(t *testing.T, db store.TestDB) {
		ctx := t.Context()
		stores := []*store.Store{db.Open(t), db.Open(t)}
		for i := range 20 {
			id := fmt.Sprintf("p%d", i)
			_, err := stores[0].InsertPlan(ctx, store.PlanRecord{ID: id, Table: "local.web.events", Layout: "sort(a)", State: "proposed"})
			require.NoError(t, err)
			var (
				wg    sync.WaitGroup
				start = make(chan struct{})
				errs  = make([]error, 2)
			)
			for k, s := range stores {
				wg.Go(func() {
					<-start
					errs[k] = s.TransitionPlan(ctx, id, "proposed", "running", fmt.Sprintf("replica-%d", k), t0)
				})
			}
			close(start)
			wg.Wait()
			require.True(t, (errs[0] == nil) != (errs[1] == nil), "exactly one wins: %v", errs)
			for _, err := range errs {
				if err != nil {
					require.ErrorIs(t, err, store.ErrStateConflict)
				}
			}
			p, err := stores[1].Plan(ctx, id)
			require.NoError(t, err)
			require.Equal(t, "running", p.State)
		}
	})
}
