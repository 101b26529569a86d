package control

import (
	"strings"

	"github.com/floe-project/floe/lake"
	"github.com/floe-project/floe/layout"
	"github.com/floe-project/floe/rewriter"
	"github.com/floe-project/floe/simulator"
)

// emptyProjection stands for a plan proposed without queries to project
// with: the policy fixed the layout, no projection justifies it.
func emptyProjection(l layout.Layout) simulator.Projection {
	return simulator.Projection{Layout: l}
}

func planGain(p Plan) float64 {
	if p.Projection.CurrentSkippedPct == nil {
		return p.Projection.SkippedPct
	}
	return p.Projection.SkippedPct - *p.Projection.CurrentSkippedPct
}

// declares reports whether the table declares layout l already: its sort
// order for a sort, its floe.layout property for the others.
func declares(state *lake.State, l layout.Layout) bool {
	md := state.Metadata
	if l.Strategy == layout.StrategySort {
		have, err := layout.Parse("sort(" + lake.SortOrderText(md.SortOrder(), md.CurrentSchema()) + ")")
		return err == nil && strings.EqualFold(have.String(), l.String())
	}
	have, err := layout.Parse(md.Properties().Get(rewriter.PropLayout, ""))
	return err == nil && strings.EqualFold(have.String(), l.String())
}
