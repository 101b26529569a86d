package configtest

import (
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/floe-project/floe/control/config"
	"github.com/floe-project/floe/internal/testlake"
)

// Load writes and loads a floe.yaml whose default catalog, local, is w,
// with more YAML after it (policies, server, alerts), read with no
// environment.
func Load(t testing.TB, w *testlake.Warehouse, more string) *config.Config {
	t.Helper()
	var y strings.Builder
	y.WriteString("default_catalog: local\ncatalogs:\n  local:\n")
	keys := make([]string, 0, len(w.Props))
	for k := range w.Props {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		fmt.Fprintf(&y, "    %s: %q\n", k, w.Props[k])
	}
	y.WriteString(more)
	dir := t.TempDir()
	path := filepath.Join(dir, "floe.yaml")
	require.NoError(t, os.WriteFile(path, []byte(y.String()), 0o644))
	cfg, err := config.Load(config.Options{Path: path, WorkDir: dir, Getenv: func(string) string { return "" }, Environ: func() []string { return nil }})
	require.NoError(t, err)
	return cfg
}
