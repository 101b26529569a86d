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
// query events.
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
