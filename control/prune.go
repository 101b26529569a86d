package control

import (
	"context"
	"fmt"
	"time"

	"github.com/floe-project/floe/control/config"
	"github.com/floe-project/floe/control/store"
)

// DefaultPruneInterval is how often the daemon prunes the state store's
// raw query events.
const DefaultPruneInterval = time.Hour

// PruneOptions configure [PruneTelemetry].
type PruneOptions struct {
	// Retention is how long raw events are kept. Zero means
	// [config.DefaultTelemetryRetention]; negative is invalid.
	Retention time.Duration
	// Now is the clock. Default: time.Now.
	Now func() time.Time
}

// PruneResult is what one [PruneTelemetry] did, and the store's size
// after it.
type PruneResult struct {
	// Before is the cutoff: raw events that started before it were folded.
	Before  time.Time  `json:"before"`
	Folded  int        `json:"folded"`
	Deleted int        `json:"deleted"`
	Size    store.Size `json:"size"`
}

// PruneTelemetry keeps the state store within its retention: it folds
// every raw query event that started more than Retention ago into what
// ranking and projection read of it, and deletes the raw event
// ([store.Store.PruneEvents]). [Analyze], [LoadWorkload] and [QueryStats]
// read raw and folded events together ([store.Store.WorkloadEvents]), so
// their results do not change. The daemon calls it every
// [DefaultPruneInterval]; it is idempotent.
func PruneTelemetry(ctx context.Context, st *store.Store, o PruneOptions) (PruneResult, error) {
	if o.Retention < 0 {
		return PruneResult{}, fmt.Errorf("prune telemetry: retention %s is negative", o.Retention)
	}
	if o.Retention == 0 {
		o.Retention = config.DefaultTelemetryRetention
	}
	r := PruneResult{Before: nowFunc(o.Now)().Add(-o.Retention).UTC()}
	var err error
	r.Folded, r.Deleted, err = st.PruneEvents(ctx, r.Before)
	if err != nil {
		return r, fmt.Errorf("prune telemetry before %s: %w", r.Before.Format(time.RFC3339), err)
	}
	if r.Size, err = st.Size(ctx); err != nil {
		return r, fmt.Errorf("prune telemetry: %w", err)
	}
	return r, nil
}
