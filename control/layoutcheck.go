package control

import (
	"context"
	"fmt"
	"math"

	"github.com/apache/iceberg-go/catalog"

	"github.com/floe-project/floe/control/store"
	"github.com/floe-project/floe/lake"
	"github.com/floe-project/floe/layout"
)

// LayoutCheck is floe keeping its word: once a compaction into a plan's
// layout has committed, the run measures the same table's workload on the
// files it wrote, with iceberg-go's planning rules ([MeasureQueries]), and
// records what it measured beside what the plan projected. floe runs, the
// report, the dashboard and the floe_projection_error_pp metric show it,
// so that a projection that drifts is caught by floe before a user does.
type LayoutCheck struct {
	// PlanID and Layout are the plan the compaction ran.
	PlanID string        `json:"plan_id"`
	Layout layout.Layout `json:"layout"`
	// Queries is how many queries were measured: the table's collected
	// workload at the time of the check (the window a projection uses).
	Queries int `json:"queries"`
	// ProjectedSkippedPct and ErrorPP are the plan's projection of files
	// skipped and its error bar.
	ProjectedSkippedPct float64 `json:"projected_skipped_pct"`
	ErrorPP             float64 `json:"error_pp"`
	// MeasuredSkippedPct is what the queries skip on the table after the
	// compaction.
	MeasuredSkippedPct float64 `json:"measured_skipped_pct"`
	// DeltaPP is MeasuredSkippedPct − ProjectedSkippedPct.
	DeltaPP float64 `json:"delta_pp"`
	// WithinError says |DeltaPP| is at most the error bar, or 2 pp when the
	// bar is narrower (the accuracy floe's projections are held to).
	WithinError bool `json:"within_error"`
	// Error says why the measurement could not be made (the compaction
	// stands either way); the other figures are then zero.
	Error string `json:"error,omitempty"`
}

// ProjectionTolerancePP is the least error a [LayoutCheck] allows: a
// projection within 2 pp of what is measured keeps its word.
const ProjectionTolerancePP = 2.0

// checkLayout measures, after the compaction of a plan, the table's
// workload on its new files against the plan's projection pp.
func checkLayout(ctx context.Context, cat catalog.Catalog, st *store.Store, id lake.Ident, planID string, pp PlanProjection, opts WorkloadOptions) *LayoutCheck {
	c := &LayoutCheck{PlanID: planID, Layout: pp.Layout, ProjectedSkippedPct: pp.SkippedPct, ErrorPP: pp.ErrorPP}
	fail := func(err error) *LayoutCheck {
		c.Error = fmt.Sprintf("measure %s after the rewrite: %v", id, err)
		return c
	}
	if st == nil {
		return fail(fmt.Errorf("no state store to read the workload from"))
	}
	tbl, err := lake.LoadTable(ctx, cat, id)
	if err != nil {
		return fail(err)
	}
	res, w, err := Measure(ctx, st, id, tbl, opts)
	if err != nil {
		return fail(err)
	}
	if len(w.Queries) == 0 {
		return fail(fmt.Errorf("no collected queries"))
	}
	c.Queries = len(w.Queries)
	c.MeasuredSkippedPct = res.SkippedPct
	c.DeltaPP = res.SkippedPct - pp.SkippedPct
	c.WithinError = math.Abs(c.DeltaPP) <= max(pp.ErrorPP, ProjectionTolerancePP)
	return c
}

// compacted reports whether a compaction step's report committed files:
// the native rewriter's commits, or a distributed engine's replace.
func compacted(r StepReport) bool {
	switch {
	case r.Compact != nil:
		return len(r.Compact.Commits) > 0
	case r.Engine != nil:
		return !r.Engine.Verified.NothingToDo && r.Engine.Verified.FilesAdded > 0
	}
	return false
}

// Summary is the check in one line for people, as floe runs, the report
// and the dashboard print it.
func (c LayoutCheck) Summary() string {
	if c.Error != "" {
		return fmt.Sprintf("plan %s (%s): projection not checked: %s", c.PlanID, c.Layout, c.Error)
	}
	verdict := "held"
	if !c.WithinError {
		verdict = fmt.Sprintf("missed: beyond its error of ±%.1f pp (at least %.0f pp)", c.ErrorPP, ProjectionTolerancePP)
	}
	return fmt.Sprintf("plan %s (%s): projected %.1f%% ± %.1f pp of files skipped, measured %.1f%% on the rewritten table over %d queries (%+.1f pp): %s",
		c.PlanID, c.Layout, c.ProjectedSkippedPct, c.ErrorPP, c.MeasuredSkippedPct, c.Queries, c.DeltaPP, verdict)
}
