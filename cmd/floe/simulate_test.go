package main

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/floe-project/floe/control"
	"github.com/floe-project/floe/control/config"
	"github.com/floe-project/floe/lake"
	"github.com/floe-project/floe/layout"
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
		{"thin", simulator.Projection{Layout: layout.Layout{Strategy: layout.StrategySort, Columns: []layout.Column{{Name: "a"}}}, FilesAfter: 8, SkippedPct: 40, SampleThin: true, SampleNote: "sample too thin: 3.0 sampled rows per projected file"},
			[]string{"thin*", "* sort(a): sample too thin: 3.0 sampled rows per projected file"}, []string{" 0.0 "}},
		{"bound", simulator.Projection{Layout: layout.Layout{Strategy: layout.StrategyCurrent}, FilesAfter: 8, SkippedPct: 21.9, ErrorPP: 0, BoundRatio: 1.25},
			[]string{"1.25x", "READ/BOUND"}, []string{"thin*"}},
		{"no bound", simulator.Projection{Layout: layout.Layout{Strategy: layout.StrategyBinpack}, FilesAfter: 8, ErrorPP: 0.4},
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

// TestSimulatePrintsTarget: simulate says which target file size its
// candidates were cut at and where it comes from — floe's default for a
// table that sets none, the policy's target_file_size, --target-file-size
// — in text and JSON.
func TestSimulatePrintsTarget(t *testing.T) {
	dir := flatWarehouse(t, 4, 50)
	sql := filepath.Join(t.TempDir(), "w.sql")
	require.NoError(t, os.WriteFile(sql, []byte("SELECT * FROM db.flat WHERE id = 7;\n"), 0o644))
	for _, tc := range []struct {
		name   string
		policy string
		args   []string
		bytes  int64
		source string
	}{
		{"default", "", nil, simulator.DefaultTargetFileSizeBytes, "floe's default"},
		{"policy", "default: {target_file_size: 64MiB}", nil, 64 << 20, "the policy's target_file_size"},
		{"flag", "default: {target_file_size: 64MiB}", []string{"--target-file-size", "32MiB"}, 32 << 20, "--target-file-size"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := dir
			if tc.policy != "" {
				cfg, err := os.ReadFile(filepath.Join(dir, "floe.yaml"))
				require.NoError(t, err)
				dir = t.TempDir()
				require.NoError(t, os.WriteFile(filepath.Join(dir, "floe.yaml"), append(cfg, "policies:\n  "+tc.policy+"\n"...), 0o644))
			}
			base := append([]string{"simulate", "db.flat", "--workload", sql, "--layout", "binpack"}, tc.args...)
			io, out, errOut := testIO()
			require.Equal(t, 0, runWith(t, io, dir, append(base, "--output", "json")...), errOut.String())
			var res simulator.SimulateResult
			require.NoError(t, json.Unmarshal(out.Bytes(), &res))
			require.Equal(t, tc.bytes, res.TargetFileSizeBytes)
			require.Contains(t, res.TargetSource, tc.source)
			require.Equal(t, tc.bytes, res.Candidates[len(res.Candidates)-1].TargetFileSizeBytes)

			io, out, errOut = testIO()
			require.Equal(t, 0, runWith(t, io, dir, base...), errOut.String())
			require.Contains(t, out.String(), "target file size: "+config.FormatSize(tc.bytes)+", from "+tc.source)
		})
	}
}
