package bench

import (
	"encoding/json"
	"os"
	"path/filepath"
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
	for _, k := range []string{"cpu_model", "cores", "commit", "load_before", "load_after", "page_fault_us"} {
		require.Contains(t, m, k)
	}
	require.NotEmpty(t, m["cpu_model"])
	require.Positive(t, m["cores"])
	require.Positive(t, m["page_fault_us"], "a first touch of fresh memory costs something")
	require.Equal(t, map[string]any{"x_median": 2.0, "x_min": 1.0, "x_max": 3.0}, got["figures"])
	require.Equal(t, filepath.Join(os.Getenv("FLOE_BENCH_RESULTS"), "probe.json"), path)
}
