package control

import (
	"context"
	"fmt"
	"slices"

	"github.com/floe-project/floe/control/store"
	"github.com/floe-project/floe/lake"
	"github.com/floe-project/floe/layout"
	"github.com/floe-project/floe/simulator"
)

// ProjectOptions configure [Project].
type ProjectOptions struct {
	// Layouts are the layouts to project; none means the analyzer's
	// candidates for the table ([Analyze] over Workload.Since).
	Layouts []layout.Layout
	// WithCurrent adds the current layout, first, when Layouts don't name
	// it: the baseline a plan is compared with.
	WithCurrent bool
	// Workload is the queries to replay.
	Workload WorkloadOptions
	// ZOrderMode is the z-order key. Default: Iceberg-exact.
	ZOrderMode layout.ZOrderMode
	// Seed seeds the sample.
	Seed uint64
	// TargetFileSizeBytes, when positive, is the file size every layout but
	// current rewrites to. Zero: the table's own target.
	TargetFileSizeBytes int64
}

// Projections is what [Project] returns: the workload replayed and one
// projection per layout, in order.
type Projections struct {
	Table lake.Ident
	// State is the table as projected from.
	State       *lake.State
	Workload    Workload
	ZOrderMode  layout.ZOrderMode
	Projections []simulator.Projection
}

// Project replays the table's workload against each layout without moving
// any data: candidates → projections, the common core of simulate, plan and
// an adaptive trigger. st holds the collected queries; it may be nil only
// when both opts.Workload.SQL and opts.Layouts are given. Without a workload
// file and with no collected query of the table it returns a
// [*NoQueriesError].
func Project(ctx context.Context, st *store.Store, state *lake.State, opts ProjectOptions) (Projections, error) {
	id := state.Ident
	res := Projections{Table: id, State: state, ZOrderMode: opts.ZOrderMode}
	w, err := LoadWorkload(ctx, st, id, opts.Workload)
	if err != nil {
		return res, err
	}
	res.Workload = w
	if opts.Workload.SQL == nil && len(w.Queries) == 0 {
		return res, &NoQueriesError{Table: id, Since: opts.Workload.Since}
	}
	layouts := slices.Clone(opts.Layouts)
	if len(layouts) == 0 {
		if st == nil {
			return res, fmt.Errorf("simulate %s: no layouts and no state store to find candidates in", id)
		}
		a, err := Analyze(ctx, st, state, AnalyzeOptions{Since: opts.Workload.Since, Now: opts.Workload.Now})
		if err != nil {
			return res, err
		}
		for _, c := range a.Candidates {
			l, err := layout.Parse(c.Layout)
			if err != nil {
				return res, err
			}
			layouts = append(layouts, l)
		}
	}
	if opts.WithCurrent && !slices.ContainsFunc(layouts, func(l layout.Layout) bool { return l.Strategy == layout.StrategyCurrent }) {
		layouts = append([]layout.Layout{{Strategy: layout.StrategyCurrent}}, layouts...)
	}
	if opts.TargetFileSizeBytes > 0 {
		for i := range layouts {
			if layouts[i].Strategy != layout.StrategyCurrent {
				layouts[i].TargetFileSizeBytes = opts.TargetFileSizeBytes
			}
		}
	}
	res.Projections, err = simulator.Project(ctx, state, layouts, w.Queries,
		simulator.ProjectOptions{ZOrderMode: opts.ZOrderMode, Sample: simulator.SampleOptions{Seed: opts.Seed}})
	if err != nil {
		return res, fmt.Errorf("simulate %s: %w", id, err)
	}
	return res, nil
}
