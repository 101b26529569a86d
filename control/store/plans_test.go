package store_test

import (
	"encoding/json"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/floe-project/floe/control/store"
)

func TestPlans(t *testing.T) {
	store.ForEachDriver(t, func(t *testing.T, db store.TestDB) {
		ctx := t.Context()
		s := db.Open(t)
		p := store.PlanRecord{ID: "p1", Table: "local.web.events", BaseSnapshot: 42, Layout: "sort(tenant_id, ts)",
			Projection: json.RawMessage(`{"files_skipped":0.71}`), State: "proposed", CreatedBy: "floe", CreatedAt: t0}
		ins, err := s.InsertPlan(ctx, p)
		require.NoError(t, err)
		require.True(t, ins)
		require.NoError(t, s.TransitionPlan(ctx, "p1", "proposed", "approved", "alice", t0.Add(time.Hour)))

		again := p
		again.State = "proposed"
		ins, err = s.InsertPlan(ctx, again)
		require.NoError(t, err)
		require.False(t, ins, "the same plan proposed again keeps its decision")
		got, err := s.Plan(ctx, "p1")
		require.NoError(t, err)
		require.Equal(t, "approved", got.State)
		require.Equal(t, "alice", got.DecidedBy)
		require.Equal(t, t0.Add(time.Hour), got.DecidedAt)
		require.JSONEq(t, `{"files_skipped":0.71}`, string(got.Projection))

		err = s.TransitionPlan(ctx, "p1", "proposed", "rejected", "bob", time.Time{})
		require.ErrorIs(t, err, store.ErrStateConflict)
		require.ErrorContains(t, err, "it is approved")
		require.ErrorIs(t, s.TransitionPlan(ctx, "nope", "proposed", "approved", "bob", time.Time{}), store.ErrNotFound)
		_, err = s.Plan(ctx, "nope")
		require.ErrorIs(t, err, store.ErrNotFound)

		_, err = s.InsertPlan(ctx, store.PlanRecord{ID: "p2", Table: "local.sales.orders", Layout: "zorder(a,b)", State: "proposed", CreatedAt: t0.Add(time.Minute)})
		require.NoError(t, err)
		for _, tc := range []struct {
			name string
			f    store.PlanFilter
			want []string
		}{
			{"all, newest first", store.PlanFilter{}, []string{"p2", "p1"}},
			{"table", store.PlanFilter{Table: "LOCAL.WEB.EVENTS"}, []string{"p1"}},
			{"state", store.PlanFilter{State: "proposed"}, []string{"p2"}},
		} {
			t.Run(tc.name, func(t *testing.T) {
				ps, err := s.Plans(ctx, tc.f)
				require.NoError(t, err)
				ids := []string{}
				for _, p := range ps {
					ids = append(ids, p.ID)
				}
				require.Equal(t, tc.want, ids)
			})
		}
	})
}

// TestTransitionPlanOnce races two approvers: exactly one wins.
func TestTransitionPlanOnce(t *testing.T) {
	store.ForEachDriver(t, func(t *testing.T, db store.TestDB) {
		ctx := t.Context()
		s := db.Open(t)
		_, err := s.InsertPlan(ctx, store.PlanRecord{ID: "p", Table: "local.web.events", Layout: "sort(a)", State: "proposed"})
		require.NoError(t, err)
		var wg sync.WaitGroup
		errs := make([]error, 2)
		for i, to := range []string{"approved", "rejected"} {
			wg.Go(func() { errs[i] = s.TransitionPlan(ctx, "p", "proposed", to, to+"-er", time.Time{}) })
		}
		wg.Wait()
		require.True(t, (errs[0] == nil) != (errs[1] == nil), "exactly one transition wins: %v", errs)
	})
}

func TestRuns(t *testing.T) {
	store.ForEachDriver(t, func(t *testing.T, db store.TestDB) {
		ctx := t.Context()
		s := db.Open(t)
		require.NoError(t, s.StartRun(ctx, store.RunRecord{ID: "r1", Table: "local.web.events", PlanID: "p1", Status: "running", StartedAt: t0}))
		require.NoError(t, s.PutRunStep(ctx, "r1", store.StepRecord{Step: "expire", Status: "running", Before: json.RawMessage(`{"snapshots":90}`), StartedAt: t0}))
		require.NoError(t, s.PutRunStep(ctx, "r1", store.StepRecord{Step: "expire", Status: "done", Before: json.RawMessage(`{"snapshots":90}`),
			After: json.RawMessage(`{"snapshots":5}`), StartedAt: t0, EndedAt: t0.Add(time.Second)}))
		require.NoError(t, s.PutRunStep(ctx, "r1", store.StepRecord{Step: "compact", Status: "failed", Error: "commit conflict",
			StartedAt: t0.Add(2 * time.Second), EndedAt: t0.Add(3 * time.Second)}))
		require.NoError(t, s.EndRun(ctx, "r1", "failed", "compact: commit conflict", t0.Add(3*time.Second)))
		require.NoError(t, s.StartRun(ctx, store.RunRecord{ID: "r2", Table: "local.sales.orders", Status: "running", Trigger: "api", Runner: "host-a:4242", StartedAt: t0.Add(time.Hour)}))
		require.ErrorIs(t, s.EndRun(ctx, "nope", "done", "", time.Time{}), store.ErrNotFound)

		r, err := s.Run(ctx, "r1")
		require.NoError(t, err)
		require.Equal(t, "failed", r.Status)
		require.Equal(t, "manual", r.Trigger, "a run started without a trigger is manual")
		require.Equal(t, "compact: commit conflict", r.Error)
		require.Equal(t, t0.Add(3*time.Second), r.EndedAt)
		require.Len(t, r.Steps, 2)
		require.Equal(t, "expire", r.Steps[0].Step)
		require.Equal(t, "done", r.Steps[0].Status, "a step recorded twice is replaced")
		require.JSONEq(t, `{"snapshots":5}`, string(r.Steps[0].After))
		require.Equal(t, "commit conflict", r.Steps[1].Error)
		_, err = s.Run(ctx, "nope")
		require.ErrorIs(t, err, store.ErrNotFound)

		all, err := s.Runs(ctx, "", 0)
		require.NoError(t, err)
		require.Len(t, all, 2)
		require.Equal(t, "r2", all[0].ID)
		require.Equal(t, "api", all[0].Trigger)
		require.Equal(t, "host-a:4242", all[0].Runner)
		require.Empty(t, all[1].Runner)
		require.True(t, all[0].EndedAt.IsZero())
		require.Empty(t, all[0].Steps)
		one, err := s.Runs(ctx, "Local.Web.Events", 1)
		require.NoError(t, err)
		require.Len(t, one, 1)
		require.Equal(t, "r1", one[0].ID)
	})
}

func TestPlanCounts(t *testing.T) {
	store.ForEachDriver(t, func(t *testing.T, db store.TestDB) {
		ctx := t.Context()
		s := db.Open(t)
		n, err := s.PlanCounts(ctx)
		require.NoError(t, err)
		require.Empty(t, n)
		for i, state := range []string{"proposed", "proposed", "rejected"} {
			_, err := s.InsertPlan(ctx, store.PlanRecord{ID: string(rune('a' + i)), Table: "local.web.events", Layout: "sort(id)", State: state, CreatedAt: t0})
			require.NoError(t, err)
		}
		n, err = s.PlanCounts(ctx)
		require.NoError(t, err)
		require.Equal(t, map[string]int{"proposed": 2, "rejected": 1}, n)
		require.NoError(t, s.Ping(ctx))
	})
}
