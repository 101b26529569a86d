package control

import (
	"time"

	"github.com/floe-project/floe/lake"
)

// HealthOptions configure [Health].
type HealthOptions struct {
	// TargetFileSizeBytes is the target for tables without
	// write.target-file-size-bytes.
	TargetFileSizeBytes int64
	// Columns are measured for clustering besides the sort-order columns.
	Columns []string
	// Named says the caller named the table: a column it lacks is then an
	// error. Otherwise (the table is one of all the catalogs' tables) the
	// columns apply where they exist.
	Named bool
	// Now is the clock. Default: time.Now.
	Now func() time.Time
}

// Health measures and classifies the table in state.
func Health(state *lake.State, opts HealthOptions) (lake.Health, error) {
	cols := opts.Columns
	if !opts.Named {
		cols = nil
		for _, c := range opts.Columns {
			if _, _, ok := state.FieldID(c); ok {
				cols = append(cols, c)
			}
		}
	}
	return lake.ComputeHealth(state, lake.HealthOptions{TargetFileSizeBytes: opts.TargetFileSizeBytes, Columns: cols, Now: nowFunc(opts.Now)()})
}
