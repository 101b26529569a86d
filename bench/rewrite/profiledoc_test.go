package rewrite_test

import (
	"bytes"
	"flag"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/floe-project/floe/bench"
	"github.com/floe-project/floe/bench/rewrite"
)

var updateProfileDoc = flag.Bool("update-profile-doc", false, "rewrite docs/rewriter-profile.md from bench/results/rewrite.json")

const (
	profileDocPath   = "../../docs/rewriter-profile.md"
	rewriteResultDoc = "../results/rewrite.json"
)

// TestProfileDocIsCurrent fails when docs/rewriter-profile.md is not what
// the committed bench/results/rewrite.json generates; -update-profile-doc
// rewrites it.
func TestProfileDocIsCurrent(t *testing.T) {
	f, err := os.Open(rewriteResultDoc)
	require.NoError(t, err)
	defer f.Close()
	res, err := rewrite.ReadResult(f)
	require.NoError(t, err)
	var got bytes.Buffer
	require.NoError(t, rewrite.WriteProfileDoc(&got, res))
	if *updateProfileDoc {
		require.NoError(t, os.WriteFile(profileDocPath, got.Bytes(), 0o644))
		return
	}
	want, err := os.ReadFile(profileDocPath)
	require.NoError(t, err, "generate it with: %s", rewrite.ProfileDocUpdate)
	require.Equal(t, string(want), got.String(), "%s is not what %s generates; run: %s",
		filepath.Base(profileDocPath), filepath.Base(rewriteResultDoc), rewrite.ProfileDocUpdate)
}

// TestWriteProfileDoc generates the document from a made-up result with a
// floor and phases, and from one without (as results before the floor
// were): it quotes the machine, the engines side by side, the phases, and
// orders where floe's CPU above the floor goes.
func TestWriteProfileDoc(t *testing.T) {
	res := bench.Result{
		Name: "rewrite", When: time.Date(2026, 12, 7, 10, 0, 0, 0, time.UTC), GoVersion: "go1.26.8",
		Machine: bench.Machine{
			CPUModel: "Intel(R) Xeon(R) Platinum 8375C CPU @ 2.90GHz", CPUFeatures: []string{"avx2", "bmi2", "avx512f"},
			CPUFamily: "amd64-avx512", Cores: 2, Commit: "0123456789abcdef0123-dirty", LoadBefore: 0.4, LoadAfter: 1.1,
		},
		Params: map[string]any{
			"rows": float64(10_000_000), "files": float64(400), "reps": float64(3),
			"memory_bytes": float64(512 << 20), "target_file_size_bytes": float64(128 << 20),
			"layouts": []any{"sort(l_shipdate, l_orderkey)", "zorder(l_shipdate, l_partkey)"},
		},
		Figures: map[string]float64{},
	}
	s := rewrite.Slug("sort(l_shipdate, l_orderkey)")
	for k, v := range map[string]float64{
		"floe.wall_s": 15, "floe.cpu_s_per_mrows": 2.6, "floe.peak_rss_mib": 400, "floe.output_bytes": 250 << 20, "floe.files": 2,
		"floor.wall_s": 6, "floor.cpu_s_per_mrows": 1.0, "floor.peak_rss_mib": 200, "floor.output_bytes": 300 << 20, "floor.files": 3,
		"duckdb.wall_s": 16, "duckdb.cpu_s_per_mrows": 2.2, "duckdb.peak_rss_mib": 3800, "duckdb.output_bytes": 245 << 20, "duckdb.files": 2,
		"throughput_ratio": 1.07, rewrite.FloorCPURatioKey: 2.6, rewrite.FloorWallRatioKey: 2.5,
	} {
		res.Figures[s+"."+k] = v
	}
	floePhases := map[rewrite.Phase]float64{rewrite.PhaseDecode: 0.5, rewrite.PhaseKey: 0.2, rewrite.PhaseSort: 0.6, rewrite.PhaseGather: 0.3,
		rewrite.PhaseEncode: 0.3, rewrite.PhaseCompress: 0.3, rewrite.PhaseVerify: 0.3, rewrite.PhaseOther: 0.1}
	floorPhases := map[rewrite.Phase]float64{rewrite.PhaseDecode: 0.4, rewrite.PhaseEncode: 0.35, rewrite.PhaseCompress: 0.2, rewrite.PhaseOther: 0.05}
	for _, p := range rewrite.Phases {
		res.Figures[rewrite.PhaseFigureKey(s, "floe", p)] = floePhases[p]
		res.Figures[rewrite.PhaseFigureKey(s, rewrite.EngineKeyFloor, p)] = floorPhases[p]
	}
	z := rewrite.Slug("zorder(l_shipdate, l_partkey)")
	res.Figures[z+".floe.cpu_s_per_mrows"] = 2.9
	res.Figures[z+".floe.wall_s"] = 17
	// Walls only, as to say the floor's own throughput against DuckDB's.
	res.Figures[z+".floor.wall_s"] = 10
	res.Figures[z+".duckdb.wall_s"] = 18

	var b bytes.Buffer
	require.NoError(t, rewrite.WriteProfileDoc(&b, res))
	doc := b.String()
	for _, want := range []string{
		"| CPU | Intel(R) Xeon(R) Platinum 8375C CPU @ 2.90GHz |",
		"| vector extensions | avx2, bmi2, avx512f |",
		"| CPU family | amd64-avx512 |",
		"at commit `0123456789ab-dirty`",
		"| floe's memory budget, target file size | 512 MiB, 128 MiB |",
		"## sort(l_shipdate, l_orderkey)",
		"| floe | 15.00 | 2.60 | 400 | 250.0 | 2 |",
		"| floor | 6.00 | 1.00 | 200 | 300.0 | 3 |",
		"| DuckDB | 16.00 | 2.20 | 3800 | 245.0 | 2 |",
		"floe's throughput is 1.07× DuckDB's; its CPU per row 1.18× DuckDB's.",
		"floe takes 2.60× the floor's CPU per row (above the 1.3× target) and 2.50× its wall time.",
		"| rows, input files | 10,000,000, 400 |",
		"| sort(l_shipdate, l_orderkey) | 2.60× | 1.07× | 2.67× |",
		"| zorder(l_shipdate, l_partkey) | – | – | 1.80× |",
		// The floor's throughput over DuckDB's says how near the floor 2× needs floe, or that it cannot.
		"2× is out of reach here for zorder(l_shipdate, l_partkey) (the floor at 1.80×).",
		"floe's wall time would have to be within 1.33× of the floor's on sort(l_shipdate, l_orderkey) (the floor at 2.67×).",
		"| decode | 0.500 | 0.400 | +0.100 |",
		"| encode | 0.300 | 0.350 | -0.050 |",
		"| **total** | **2.600** | **1.000** | **+1.600** |",
		// 1.65 above the floor in the phases where floe spends more.
		"sort 0.600 (36%), gather 0.300 (18%), verify 0.300 (18%), key_encoding 0.200 (12%), decode 0.100 (6%), compression 0.100 (6%), other 0.050 (3%).",
		"## zorder(l_shipdate, l_partkey)",
		"This result has no floor figures",
	} {
		require.Contains(t, doc, want)
	}
	require.NotContains(t, doc, "other work shared the CPU", "load below the core count")
	require.Less(t, strings.Index(doc, "## sort"), strings.Index(doc, "## zorder"))

	// A result of an older bench: no features, a loaded machine.
	res.Machine.CPUFeatures, res.Machine.CPUFamily, res.Machine.LoadAfter = nil, "", 3.5
	b.Reset()
	require.NoError(t, rewrite.WriteProfileDoc(&b, res))
	require.Contains(t, b.String(), "| vector extensions | not recorded in this result |")
	require.Contains(t, b.String(), "other work shared the CPU")
}
