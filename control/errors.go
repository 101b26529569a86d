package control

import (
	"errors"
	"fmt"
	"time"

	"github.com/floe-project/floe/control/store"
	"github.com/floe-project/floe/lake"
)

// ErrStalePlan is returned (wrapped) by [Optimize] with a PlanID when the
// table has moved past the plan's base snapshot in a way the plan's
// projection no longer describes (see [CheckPlan]). The plan is then stored
// as stale; propose a new one from the table as it is. Test with errors.Is.
var ErrStalePlan = errors.New("stale plan")

// PlanStateError is returned by [ApprovePlan], [RejectPlan] and [Optimize]
// with a PlanID when the plan is not in the state the action needs — it was
// decided or run already, or (for a run) not approved yet. It matches
// [store.ErrStateConflict] under errors.Is; use errors.As for the details.
type PlanStateError struct {
	// ID is the plan's id.
	ID string
	// Action is what was asked: approve, reject or run.
	Action string
	// State is the plan's state when the action was refused.
	State PlanState
	// Table is the plan's table, for the re-plan hint of a stale plan.
	Table string
}

// Error says what the plan's state is and, where there is one, what to do
// next.
func (e *PlanStateError) Error() string {
	switch {
	case e.Action == "run" && e.State == PlanProposed:
		return fmt.Sprintf("plan %s is proposed, approve it first: floe plan approve %s", e.ID, e.ID)
	case e.Action == "run" && e.State == PlanStale:
		return fmt.Sprintf("plan %s is stale: the table changed since it was planned; re-plan: floe plan %s", e.ID, ShellArg(e.Table))
	case e.Action == "run" && e.State == PlanRunning:
		return fmt.Sprintf("plan %s is already running", e.ID)
	case e.Action == "run":
		return fmt.Sprintf("plan %s is %s; only an approved plan runs", e.ID, e.State)
	}
	return fmt.Sprintf("%s plan %s: it is %s; only a proposed plan can be approved or rejected (and a failed one approved again)", e.Action, e.ID, e.State)
}

// Is reports whether target is [store.ErrStateConflict].
func (e *PlanStateError) Is(target error) bool { return target == store.ErrStateConflict }

// ErrNothingToPlan is returned (wrapped) by [ChoosePlan] and [PlanBest]
// when no layout other than current was projected, so there is no
// candidate to choose. It is the caller's input that is wrong: name a
// layout other than current. Test with errors.Is.
var ErrNothingToPlan = errors.New("nothing to plan: name a layout other than current")

// ErrNoQueries is matched by the [*NoQueriesError] that [Project] and
// [PlanBest] return when they were given no workload file and no query of
// the table was collected: a projection of no queries says nothing. Test
// with errors.Is.
var ErrNoQueries = errors.New("no queries collected")

// NoQueriesError says that no query of Table was collected (within Since
// when it is set) and how to get some.
type NoQueriesError struct {
	Table lake.Ident
	// Since is the window that was searched; 0 means all collected queries.
	Since time.Duration
}

func (e *NoQueriesError) Error() string {
	within := ""
	if e.Since > 0 {
		within = " in the last " + formatWindow(e.Since)
	}
	return fmt.Sprintf("no queries of %s collected%s; run 'floe collect PATH…' first, or pass --workload FILE of SQL statements", e.Table, within)
}

// Is reports whether target is [ErrNoQueries].
func (e *NoQueriesError) Is(target error) bool { return target == ErrNoQueries }

// formatWindow prints a duration as the CLI's flags take it: 30d, 12h, 90m.
func formatWindow(d time.Duration) string {
	switch {
	case d%(24*time.Hour) == 0:
		return fmt.Sprintf("%dd", d/(24*time.Hour))
	case d%time.Hour == 0:
		return fmt.Sprintf("%dh", d/time.Hour)
	case d%time.Minute == 0:
		return fmt.Sprintf("%dm", d/time.Minute)
	}
	return d.String()
}

// ErrHalted is matched by the [*HaltedError] that [Service.Run],
// [Service.DryRun], [Service.Decide] and [Service.Queue] return for a table
// on hold: a run of it failed an invariant check (rewriter.ErrInvariant),
// and nothing changes it until a person resumes it ([Service.Resume]).
// Test with errors.Is.
var ErrHalted = errors.New("table halted")

// HaltedError says which table is halted, since when and why, and how to
// resume it.
type HaltedError struct {
	Hold Hold
}

func (e *HaltedError) Error() string {
	h := e.Hold
	run := ""
	if h.RunID != "" {
		run = " run " + h.RunID
	}
	return fmt.Sprintf("%s is halted since %s:%s failed a check that must never fail (%s); floe runs nothing on it until a person inspects the table (floe runs %s) and resumes it: floe resume %s",
		h.Table, h.HeldAt.UTC().Format(time.RFC3339), run, h.Reason, ShellArg(h.Table), ShellArg(h.Table))
}

// Is reports whether target is [ErrHalted].
func (e *HaltedError) Is(target error) bool { return target == ErrHalted }

// ErrNotHalted is returned (wrapped) by [Service.Resume] for a table that
// is not halted: there is nothing to resume. Test with errors.Is.
var ErrNotHalted = errors.New("table not halted")

// ErrQueueStopped is returned (wrapped) by [Scheduler.Enqueue] once the
// scheduler's run queue stopped: the [Daemon] is stopping. Nothing was
// recorded; ask again once the daemon runs. Test with errors.Is.
var ErrQueueStopped = errors.New("run queue stopped")

// ErrNoSuchSource is returned (wrapped) by [Sources.Collect] for a name
// telemetry.sources does not hold. Test with errors.Is.
var ErrNoSuchSource = errors.New("no such telemetry source")
