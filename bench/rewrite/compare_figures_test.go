package rewrite_test

import (
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/floe-project/floe/bench/rewrite"
)

// TestComparableFigures checks the figures a result records beside the
// wall-time ratio: CPU per million rows, the output size ratio, and the
// per-rep throughput ratios pairing each floe run with the DuckDB run of
// the same rep.
func TestComparableFigures(t *testing.T) {
	run := func(wall, cpu time.Duration, rows, out int64) rewrite.Measure {
		return rewrite.Measure{Wall: wall, CPU: cpu, Rows: rows, OutputBytes: out}
	}
	cases := []struct {
		name      string
		r         rewrite.LayoutResult
		cpuPerM   float64
		outRatio  float64
		repRatios []float64
	}{
		{
			name: "two reps",
			r: rewrite.LayoutResult{
				Floe:       run(10*time.Second, 25*time.Second, 10_000_000, 103),
				DuckDB:     run(20*time.Second, 40*time.Second, 10_000_000, 100),
				FloeRuns:   []rewrite.Measure{run(10*time.Second, 0, 10_000_000, 0), run(8*time.Second, 0, 10_000_000, 0)},
				DuckDBRuns: []rewrite.Measure{run(20*time.Second, 0, 10_000_000, 0), run(24*time.Second, 0, 10_000_000, 0)},
			},
			cpuPerM: 2.5, outRatio: 1.03, repRatios: []float64{2, 3},
		},
		{
			name:    "floe only",
			r:       rewrite.LayoutResult{Floe: run(time.Second, 3*time.Second, 2_000_000, 10), FloeRuns: []rewrite.Measure{run(time.Second, 0, 2_000_000, 0)}},
			cpuPerM: 1.5,
		},
		{name: "no rows"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			require.InDelta(t, tc.cpuPerM, tc.r.Floe.CPUPerMillionRows(), 1e-9)
			require.InDelta(t, tc.outRatio, tc.r.OutputBytesRatio(), 1e-9)
			got := tc.r.RunRatios()
			require.Len(t, got, len(tc.repRatios))
			for i := range got {
				require.InDelta(t, tc.repRatios[i], got[i], 1e-9)
			}
		})
	}
}
