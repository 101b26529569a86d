package control

import (
	"fmt"
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

// recordedTree gives a compaction into a tree layout that has no learned
// tree — the policy's layout, one typed at the CLI, the table's own in a
// scheduled run: anything but a plan, which carries its tree — the tree
// the table recorded when it was rewritten into that layout
// ([rewriter.RecordedTree]), so that rows appended since are routed into
// the same leaves. A table that records no tree for the layout is left to
// the compaction's own refusal (it needs a plan); a recorded tree that no
// longer fits the schema is an error naming the column, never another
// layout in its place.
func recordedTree(t *Table, co *rewriter.CompactOptions) error {
	if co.Layout.Strategy != layout.StrategyTree || co.Tree != nil || t.State == nil {
		return nil
	}
	tree, err := rewriter.RecordedTree(t.State.Metadata, co.Layout)
	if err != nil {
		return fmt.Errorf("%w: re-plan it: floe plan %s", err, ShellArg(t.Ident.String()))
	}
	co.Tree = tree
	return nil
}

// recordedTreeOf is the tree state's table records for the tree layout it
// declares, to project beside a re-learned tree
// ([simulator.ProjectOptions.Recorded]); nil when it declares no tree
// layout, records no tree for it, or records one that no longer fits the
// schema (health says so: [treeDrift]).
func recordedTreeOf(state *lake.State) *simulator.RecordedTree {
	l, ok := declaredTree(state)
	if !ok {
		return nil
	}
	tree, err := rewriter.RecordedTree(state.Metadata, l)
	if err != nil || tree == nil {
		return nil
	}
	return &simulator.RecordedTree{Layout: l, Tree: tree}
}

// declaredTree is the tree layout state's table declares (floe.layout), if
// it declares one.
func declaredTree(state *lake.State) (layout.Layout, bool) {
	l, ok := declaredLayout(state)
	return l, ok && l.Strategy == layout.StrategyTree
}

// keptLayout is the layout a compaction by policy keeps state's table in
// when no plan changes it: the layout a floe rewrite declared on the table
// (which a person or the policy approved), with its recorded tree for a
// tree layout; bin-pack when the table declares none, or declared a sort
// whose Iceberg sort order another writer has changed since (the table's
// own order is not floe's to revert). Bin-pack would merge a sorted
// table's appends unsorted, and a learned tree's own small files (a leaf's
// slice, the end of a run of packed leaves) with them, undoing the leaves
// the table was rewritten into. The error says why a declared tree cannot
// route rows (its record no longer fits the schema, or is missing).
func keptLayout(state *lake.State) (layout.Layout, *layout.Tree, error) {
	binpack := layout.Layout{Strategy: layout.StrategyBinpack}
	l, ok := declaredLayout(state)
	if !ok || !declares(state, l) {
		return binpack, nil, nil
	}
	if l.Strategy != layout.StrategyTree {
		return l, nil, nil
	}
	tree, err := rewriter.RecordedTree(state.Metadata, l)
	if err == nil && tree == nil {
		err = fmt.Errorf("the table declares %s but records no tree for it", l)
	}
	if err != nil {
		return binpack, nil, err
	}
	return l, tree, nil
}

// declaredLayout is the layout a floe rewrite declared on state's table
// (floe.layout: a sort, a curve or a tree), if it declares one. Bin-pack
// declares none.
func declaredLayout(state *lake.State) (layout.Layout, bool) {
	if state == nil || state.Metadata == nil {
		return layout.Layout{}, false
	}
	l, err := layout.Parse(state.Metadata.Properties().Get(rewriter.PropLayout, ""))
	if err != nil || l.Strategy == layout.StrategyBinpack || l.Strategy == layout.StrategyCurrent {
		return layout.Layout{}, false
	}
	return l, true
}

// treeDrift is how far the table in state has drifted from the tree it
// records, and which of its files that tree wrote: nil and nil when it
// declares no tree layout or records no tree for it (then there is
// nothing to measure against); only a Problem when the tree no longer
// fits the schema.
func treeDrift(state *lake.State) (*lake.LayoutDrift, func(lake.File) bool) {
	l, ok := declaredTree(state)
	if !ok {
		return nil, nil
	}
	tree, err := rewriter.RecordedTree(state.Metadata, l)
	if err != nil {
		return &lake.LayoutDrift{Layout: l.String(), Problem: fmt.Sprintf("%v: re-plan it: floe plan %s", err, ShellArg(state.Ident.String()))}, nil
	}
	if tree == nil {
		return nil, nil
	}
	in := rewriter.InLayout(state, l, tree)
	d := rewriter.DriftOf(state, in)
	return &lake.LayoutDrift{Layout: l.String(), Files: d.Files, Rows: d.Rows, Bytes: d.Bytes,
		Command: "floe compact " + ShellArg(state.Ident.String()) + " --layout " + ShellArg(l.String())}, in
}
