package control

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"time"

	"github.com/floe-project/floe/control/config"
	"github.com/floe-project/floe/control/policy"
	"github.com/floe-project/floe/control/store"
	"github.com/floe-project/floe/lake"
)

// historyRuns is how many of a table's newest runs its health, its
// triggers and its alerts judge it by (see [PolicyHealth]).
const historyRuns = 200

// passRecords are the state store's records one scheduling pass reads
// once and shares between its decisions, its alerts and its gauges: the
// tables on hold and the approved plans (one query each, at the start of
// the pass), and each table's newest runs (one query per table, at the
// first ask). A lake of 10,000 unchanged tables is then decided with one
// store read per table, not the seven it took when each use read its own.
//
// Each table's effective policy is resolved once a pass too
// ([passRecords.policy]): with policies read from the catalog (Polaris),
// resolving one is a request to it, and the decision, the triggers, the
// alerts and the gauges each asked for it.
//
// A table that runs during the pass is forgotten once its run ends
// ([passRecords.forget]), so its alerts and gauges read what the run
// recorded. Holds and plans changed by another process during the pass
// are seen by the next pass, as a table's changes are.
type passRecords struct {
	st  *store.Store
	cfg *config.Config

	mu       sync.Mutex
	held     map[string]Hold   // by lower-cased table
	approved map[string][]Plan // by lower-cased table, newest first
	runs     map[string][]Run  // by lower-cased table, newest first
	policies map[string]policyResult
}

// policyResult is a table's effective policy as [ResolvePolicy] gave it,
// or its error.
type policyResult struct {
	eff policy.Effective
	err error
}

// readPassRecords reads the holds and the approved plans of every table.
// With no store there are none.
func readPassRecords(ctx context.Context, cfg *config.Config, st *store.Store) (*passRecords, error) {
	r := &passRecords{st: st, cfg: cfg, held: map[string]Hold{}, approved: map[string][]Plan{}, runs: map[string][]Run{}, policies: map[string]policyResult{}}
	if st == nil {
		return r, nil
	}
	holds, err := st.TableHolds(ctx, false)
	if err != nil {
		return nil, fmt.Errorf("tables on hold: %w", err)
	}
	for _, h := range holds {
		r.held[strings.ToLower(h.Table)] = holdFromRecord(h)
	}
	plans, err := ListPlans(ctx, st, PlanFilter{State: PlanApproved})
	if err != nil {
		return nil, fmt.Errorf("approved plans: %w", err)
	}
	for _, p := range plans {
		k := strings.ToLower(p.Table)
		r.approved[k] = append(r.approved[k], p)
	}
	return r, nil
}

// hold is table id's hold, when it is halted.
func (r *passRecords) hold(id lake.Ident) (Hold, bool) {
	h, ok := r.held[strings.ToLower(id.String())]
	return h, ok
}

// approvedPlans are table id's approved plans, newest first.
func (r *passRecords) approvedPlans(id lake.Ident) []Plan {
	return r.approved[strings.ToLower(id.String())]
}

// tableRuns are table id's newest runs (at most [historyRuns]), newest
// first, read from the store at the first ask in the pass. Never nil.
func (r *passRecords) tableRuns(ctx context.Context, id lake.Ident) ([]Run, error) {
	k := strings.ToLower(id.String())
	r.mu.Lock()
	runs, ok := r.runs[k]
	r.mu.Unlock()
	if ok {
		return runs, nil
	}
	if r.st == nil {
		return []Run{}, nil
	}
	runs, err := ListRuns(ctx, r.st, id.String(), historyRuns)
	if err != nil {
		return nil, err
	}
	r.mu.Lock()
	r.runs[k] = runs
	r.mu.Unlock()
	return runs, nil
}

// policy is table id's effective policy ([ResolvePolicy]), resolved at the
// first ask in the pass; an error is kept too, so that a catalog that
// refuses is asked once a pass, not once a use.
func (r *passRecords) policy(ctx context.Context, id lake.Ident) (policy.Effective, error) {
	k := strings.ToLower(id.String())
	r.mu.Lock()
	res, ok := r.policies[k]
	r.mu.Unlock()
	if ok {
		return res.eff, res.err
	}
	res.eff, res.err = ResolvePolicy(ctx, r.cfg, id)
	if ctx.Err() != nil {
		return res.eff, res.err // a pass cut short is no answer to keep
	}
	r.mu.Lock()
	r.policies[k] = res
	r.mu.Unlock()
	return res.eff, res.err
}

// forget drops what the pass read of table's runs: it ran.
func (r *passRecords) forget(table string) {
	r.mu.Lock()
	delete(r.runs, strings.ToLower(table))
	r.mu.Unlock()
}

// lastSuccess is when the newest done run among runs (newest first, at
// most [historyRuns]) ended, and whether runs say: when the window is full
// and holds no done run, an older one may have.
func lastSuccess(runs []Run) (time.Time, bool) {
	var last time.Time
	for _, r := range runs {
		if r.Status == StatusDone && r.EndedAt.After(last) {
			last = r.EndedAt
		}
	}
	return last, !last.IsZero() || len(runs) < historyRuns
}
