package bench

import (
	"encoding/json"
	"os"
	"path/filepath"
	"runtime"
	"testing"

	"github.com/stretchr/testify/require"
)

func TestResultRecordsTheMachine(t *testing.T) {
	t.Setenv("FLOE_BENCH_RESULTS", t.TempDir())
	r := NewResult("probe")
	r.SetSpread("x", []float64{3, 1, 2})
	path, err := r.Write()
	require.NoError(t, err)
	b, err := os.ReadFile(path)
	require.NoError(t, err)
	var got map[string]any
	require.NoError(t, json.Unmarshal(b, &got))
	m := got["machine"].(map[string]any)
	for _, k := range []string{"cpu_model", "cpu_features", "cpu_family", "cores", "commit", "load_before", "load_after", "page_fault_us"} {
		require.Contains(t, m, k)
	}
	require.NotEmpty(t, m["cpu_model"])
	require.NotEmpty(t, m["cpu_family"])
	require.IsType(t, []any{}, m["cpu_features"], "a list, [] when the CPU has none floe names")
	require.Positive(t, m["cores"])
	require.Positive(t, m["page_fault_us"], "a first touch of fresh memory costs something")
	require.Equal(t, map[string]any{"x_median": 2.0, "x_min": 1.0, "x_max": 3.0}, got["figures"])
	require.Equal(t, filepath.Join(os.Getenv("FLOE_BENCH_RESULTS"), "probe.json"), path)
}

func TestCPUFamily(t *testing.T) {
	// The family follows the widest vector unit of this machine's
	// architecture; a feature of another architecture names nothing.
	cases := map[string]struct {
		features []string
		want     string
	}{
		"amd64": {[]string{"avx2", "bmi2", "avx512f", "avx512bw"}, "amd64-avx512"},
		"arm64": {[]string{"asimd", "sve"}, "arm64-sve"},
	}
	c, ok := cases[runtime.GOARCH]
	if !ok {
		t.Skipf("no case for %s", runtime.GOARCH)
	}
	require.Equal(t, c.want, cpuFamily(c.features))
	require.Equal(t, runtime.GOARCH, cpuFamily(nil))
	if runtime.GOARCH == "amd64" {
		require.Equal(t, "amd64-avx2", cpuFamily([]string{"avx2"}))
		require.Equal(t, "amd64", cpuFamily([]string{"asimd"}))
	}
}
