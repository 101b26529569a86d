package control

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/floe-project/floe/control/config"
	"github.com/floe-project/floe/control/policy"
	"github.com/floe-project/floe/control/store"
)

// DefaultPruneInterval is how often the daemon prunes the state store's
// query events ([PruneTelemetry]) and runs ([PruneRuns]).
const DefaultPruneInterval = time.Hour

// PruneOptions configure [PruneTelemetry].
type PruneOptions struct {
	// Retention is how long raw events are kept. Zero means
	// [config.DefaultTelemetryRetention]; negative is invalid.
	Retention time.Duration
	// History is how long folded events are kept. Zero means
	// [config.DefaultTelemetryHistory], or Retention when that is longer;
	// shorter than Retention is invalid.
	History time.Duration
	// Now is the clock. Default: time.Now.
	Now func() time.Time
}

// PruneResult is what one [PruneTelemetry] did, and the store's size
// after it.
type PruneResult struct {
	// Before is the retention's cutoff: raw events that started before it
	// were folded.
	Before  time.Time `json:"before"`
	Folded  int       `json:"folded"`
	Deleted int       `json:"deleted"`
	// HistoryBefore is the history's cutoff: folded events that started
	// before it were deleted, FoldedDeleted of them, and with them
	// ShapesDeleted shapes no other folded event had.
	HistoryBefore time.Time  `json:"history_before"`
	FoldedDeleted int        `json:"folded_deleted"`
	ShapesDeleted int        `json:"shapes_deleted"`
	Size          store.Size `json:"size"`
}

// PruneTelemetry keeps the state store within its configured window. It
// folds every raw query event that started more than Retention ago into
// what ranking and projection read of it, and deletes the raw event
// ([store.Store.PruneEvents]); [Analyze], [LoadWorkload] and [QueryStats]
// read raw and folded events together ([store.Store.WorkloadEvents]), so
// their results do not change. Then it deletes every folded event that
// started more than History ago ([store.Store.DeleteFolded]): the store
// holds at most Retention of raw events and History of folded ones,
// however many queries arrive. The daemon calls it every
// [DefaultPruneInterval]; it is idempotent.
func PruneTelemetry(ctx context.Context, st *store.Store, o PruneOptions) (PruneResult, error) {
	if err := o.validate(); err != nil {
		return PruneResult{}, fmt.Errorf("prune telemetry: %w", err)
	}
	now := nowFunc(o.Now)()
	r := PruneResult{Before: now.Add(-o.Retention).UTC(), HistoryBefore: now.Add(-o.History).UTC()}
	var err error
	r.Folded, r.Deleted, err = st.PruneEvents(ctx, r.Before)
	if err != nil {
		return r, fmt.Errorf("prune telemetry before %s: %w", r.Before.Format(time.RFC3339), err)
	}
	r.FoldedDeleted, r.ShapesDeleted, err = st.DeleteFolded(ctx, r.HistoryBefore)
	if err != nil {
		return r, fmt.Errorf("prune telemetry history before %s: %w", r.HistoryBefore.Format(time.RFC3339), err)
	}
	if r.Size, err = st.Size(ctx); err != nil {
		return r, fmt.Errorf("prune telemetry: %w", err)
	}
	return r, nil
}

// validate fills in the defaults of o and reports every problem at once.
func (o *PruneOptions) validate() error {
	var errs []error
	if o.Retention < 0 {
		errs = append(errs, fmt.Errorf("retention %s is negative", o.Retention))
	}
	if o.History < 0 {
		errs = append(errs, fmt.Errorf("history %s is negative", o.History))
	}
	if o.Retention == 0 {
		o.Retention = config.DefaultTelemetryRetention
	}
	if o.History == 0 {
		o.History = max(config.DefaultTelemetryHistory, o.Retention)
	}
	if o.History > 0 && o.Retention > 0 && o.History < o.Retention {
		errs = append(errs, fmt.Errorf("history %s is shorter than the retention %s", policy.FormatDuration(o.History), policy.FormatDuration(o.Retention)))
	}
	return errors.Join(errs...)
}

// RunPruneOptions configure [PruneRuns].
type RunPruneOptions struct {
	// Retention is how long the record of a run that ended is kept
	// (server.run_retention). Zero means
	// [config.DefaultServerRunRetention]; negative is invalid.
	Retention time.Duration
	// Now is the clock. Default: time.Now.
	Now func() time.Time
}

// RunPruneResult is what one [PruneRuns] did.
type RunPruneResult struct {
	// Before is the retention's cutoff: runs that ended before it were
	// deleted, Deleted of them, unless a table's history needs them.
	Before  time.Time `json:"before"`
	Deleted int       `json:"deleted"`
}

// PruneRuns keeps the run history within its retention: it deletes every
// run (with its steps) that ended more than Retention ago, except the runs
// what floe reads of a table's history needs whatever their age
// ([store.Store.PruneRuns]): its newest successful run ([Service.LastSuccess],
// the floe_last_successful_run_timestamp_seconds gauge) and newest failed
// run; the failed and abandoned runs since its last success (the failures
// alert counts them in a row and dates the alert from the oldest); for
// each step, the newest run in which it ran to the end (the last
// compaction freshness and health count from, the last orphan listing
// adaptive mode times the next one by, the no-op compaction a trigger
// backs off from: see [HistoryOf]); and the run an active hold names. The
// run history then grows with the tables, not with time, and the queries
// of a table's runs stay short. The daemon calls it beside
// [PruneTelemetry]; it is idempotent.
func PruneRuns(ctx context.Context, st *store.Store, o RunPruneOptions) (RunPruneResult, error) {
	if o.Retention < 0 {
		return RunPruneResult{}, fmt.Errorf("prune runs: retention %s is negative", o.Retention)
	}
	if o.Retention == 0 {
		o.Retention = config.DefaultServerRunRetention
	}
	r := RunPruneResult{Before: nowFunc(o.Now)().Add(-o.Retention).UTC()}
	n, err := st.PruneRuns(ctx, r.Before)
	r.Deleted = n
	if err != nil {
		return r, fmt.Errorf("prune runs that ended before %s: %w", r.Before.Format(time.RFC3339), err)
	}
	return r, nil
}

// HistoryNote is what a person reading the queries of a window since
// long (a verb's --since) should know when it reaches past the telemetry
// history: that the queries older than history are deleted
// ([PruneTelemetry]), so the window holds fewer than it spans. It is ""
// when the window is within the history, or since is 0 (all the queries
// kept).
func HistoryNote(since, history time.Duration) string {
	if since <= 0 || history <= 0 || since <= history {
		return ""
	}
	h := policy.FormatDuration(history)
	return fmt.Sprintf("--since %s reaches past telemetry.history (%s): queries that started more than %s ago are deleted from the state store, so this window holds only the last %s",
		policy.FormatDuration(since), h, h, h)
}
