package control

import (
	"cmp"
	"context"
	"fmt"
	"slices"

	"github.com/floe-project/floe/control/store"
	"github.com/floe-project/floe/lake"
	"github.com/floe-project/floe/layout"
	"github.com/floe-project/floe/rewriter"
	"github.com/floe-project/floe/simulator"
)

// ProjectOptions configure [Project].
type ProjectOptions struct {
	// Layouts are the layouts to project; none means the analyzer's
	// candidates for the workload: ranked from Workload.SQL's statements
	// when given, else from the collected queries ([Analyze] over
	// Workload.Since).
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
	// current rewrites to, unless the layout names its own target
	// ("sort(a) target 64MiB"), which wins. Zero: the table's own target.
	TargetFileSizeBytes int64
	// TargetSource says where TargetFileSizeBytes comes from, for
	// [Projections.TargetSource] (such as "--target-file-size" or "policy
	// target_file_size"). Default: "requested".
	TargetSource string
	// TreeCache, when set, keeps the trees learned for tree candidates, so
	// that projecting the same table for the same workload again (the
	// daemon's next pass) reuses them ([simulator.ProjectOptions.TreeCache]).
	TreeCache *simulator.TreeCache
}

// Projections is what [Project] returns: the workload replayed and one
// projection per layout, in order.
type Projections struct {
	Table lake.Ident
	// State is the table as projected from.
	State      *lake.State
	Workload   Workload
	ZOrderMode layout.ZOrderMode
	// TargetFileSizeBytes is the file size every layout without a target
	// of its own was projected at, and TargetSource where it comes from:
	// ProjectOptions' (with its TargetSource), the table's
	// write.target-file-size-bytes, or floe's default.
	TargetFileSizeBytes int64
	TargetSource        string
	Projections         []simulator.Projection
}

// Project replays the table's workload against each layout without moving
// any data: candidates → projections, the common core of simulate, plan and
// an adaptive trigger. A table that records a learned tree has it projected
// beside every tree layout's re-learned one
// ([simulator.Projection.RecordedTree]). st holds the collected queries; it
// may be nil only when both opts.Workload.SQL and opts.Layouts are given.
// Without a workload
// file and with no collected query of the table it returns a
// [*NoQueriesError]. Each layout is checked against the table's schema
// first ([rewriter.CheckLayout]): a column it lacks or cannot order by is
// an error wrapping [rewriter.ErrInvalidOptions].
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
		if layouts, err = candidateLayouts(ctx, st, state, opts, w); err != nil {
			return res, err
		}
	}
	if opts.WithCurrent && !slices.ContainsFunc(layouts, func(l layout.Layout) bool { return l.Strategy == layout.StrategyCurrent }) {
		layouts = append([]layout.Layout{{Strategy: layout.StrategyCurrent}}, layouts...)
	}
	res.TargetFileSizeBytes, res.TargetSource = effectiveTarget(state, opts)
	if opts.TargetFileSizeBytes > 0 {
		for i := range layouts {
			if layouts[i].Strategy != layout.StrategyCurrent && layouts[i].TargetFileSizeBytes == 0 {
				layouts[i].TargetFileSizeBytes = opts.TargetFileSizeBytes
			}
		}
	}
	for _, l := range layouts {
		if err := rewriter.CheckLayout(state.Metadata.CurrentSchema(), l, opts.ZOrderMode); err != nil {
			return res, fmt.Errorf("simulate %s: %w", id, err)
		}
	}
	res.Projections, err = simulator.Project(ctx, state, layouts, w.Queries,
		simulator.ProjectOptions{ZOrderMode: opts.ZOrderMode, Sample: simulator.SampleOptions{Seed: opts.Seed}, TreeCache: opts.TreeCache,
			Recorded: recordedTreeOf(state)})
	if err != nil {
		return res, fmt.Errorf("simulate %s: %w", id, err)
	}
	return res, nil
}

// effectiveTarget is the file size layouts without their own target are
// projected (and rewritten) at, and where it comes from.
func effectiveTarget(state *lake.State, opts ProjectOptions) (int64, string) {
	if opts.TargetFileSizeBytes > 0 {
		return opts.TargetFileSizeBytes, cmp.Or(opts.TargetSource, "requested")
	}
	if n := state.TargetFileSizeBytes(0); n > 0 {
		return n, "the table's write.target-file-size-bytes"
	}
	return simulator.DefaultTargetFileSizeBytes, "floe's default (the table sets no write.target-file-size-bytes)"
}
