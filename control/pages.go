package control

import (
	"context"

	"github.com/floe-project/floe/control/store"
)

// ListPlansPage lists at most limit (at least 1) of the stored plans that
// match f, newest first, after the cursor (nil: from the newest): one page
// of [ListPlans], read through the store's index with a limit.
func ListPlansPage(ctx context.Context, st *store.Store, f PlanFilter, after *store.PlanCursor, limit int) ([]Plan, error) {
	recs, err := st.PlansPage(ctx, store.PlanFilter{Table: f.Table, State: string(f.State)}, after, limit)
	if err != nil {
		return nil, err
	}
	return plansOf(recs)
}

// ListRunsPage lists at most limit (at least 1) runs of table
// (catalog.namespace.name; "" for all), newest first, after the cursor
// (nil: from the newest): one page of [ListRuns].
func ListRunsPage(ctx context.Context, st *store.Store, table string, after *store.RunCursor, limit int) ([]Run, error) {
	recs, err := st.RunsPage(ctx, table, after, limit)
	if err != nil {
		return nil, err
	}
	return runsOf(recs)
}
