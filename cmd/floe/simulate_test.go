package main

import (
	"bytes"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/floe-project/floe/control"
	"github.com/floe-project/floe/lake"
	"github.com/floe-project/floe/simulator"
)

// TestSimulateRenderThinAndBound: a projection whose sample is too thin says so
// instead of printing ± 0.0, and every projection prints files read ÷ the bound.
func TestSimulateRenderThinAndBound(t *testing.T) {
	for _, tc := range []struct {
		name string
		p    simulator.Projection
		want []string
		not  []string
	}{
		{"thin", simulator.Projection{Layout: "sort(a)", FilesAfter: 8, SkippedPct: 40, SampleThin: true, SampleNote: "sample too thin: 3.0 sampled rows per projected file"},
			[]string{"thin*", "* sort(a): sample too thin: 3.0 sampled rows per projected file"}, []string{" 0.0 "}},
		{"bound", simulator.Projection{Layout: "current", FilesAfter: 8, SkippedPct: 21.9, ErrorPP: 0, BoundRatio: 1.25},
			[]string{"1.25x", "READ/BOUND"}, []string{"thin*"}},
		{"no bound", simulator.Projection{Layout: "binpack", FilesAfter: 8, ErrorPP: 0.4},
			[]string{" - ", "0.4"}, []string{"thin*"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var out bytes.Buffer
			io := &IOStreams{In: &bytes.Buffer{}, Out: &out, ErrOut: &out}
			pr := control.Projections{Table: lake.Ident{Namespace: []string{"web"}, Name: "events"}, State: &lake.State{}, Projections: []simulator.Projection{tc.p}}
			require.NoError(t, renderSimulate(io, outputTable, pr, false))
			for _, w := range tc.want {
				require.Contains(t, out.String(), w)
			}
			for _, n := range tc.not {
				require.NotContains(t, out.String(), n)
			}
		})
	}
}
