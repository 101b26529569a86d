package main

import (
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// A REST catalog that accepts connections and never answers must not hang
// floe: its calls run out of their floe.timeout, it is reported, and the
// other catalogs' tables are still listed.
func TestTablesReportsUnansweringCatalog(t *testing.T) {
	t.Parallel()
	hang := make(chan struct{})
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		select {
		case <-r.Context().Done():
		case <-hang:
		}
	}))
	defer srv.Close()
	defer close(hang)

	dir := writeConfig(t)
	_, errOut, code := run(t, dir, demoArgs("--event-commits", "2", "--orders", "10", "--queries", "10")...)
	require.Equal(t, 0, code, errOut)
	cfg, err := os.ReadFile(filepath.Join(dir, "floe.yaml"))
	require.NoError(t, err)
	cfg = append(cfg, []byte(`  stuck:
    type: rest
    uri: `+srv.URL+`
    floe.timeout: 300ms
default_catalog: local
`)...)
	require.NoError(t, os.WriteFile(filepath.Join(dir, "floe.yaml"), cfg, 0o644))

	start := time.Now()
	out, errOut, code := run(t, dir, "tables")
	require.Less(t, time.Since(start), 20*time.Second, "the stuck catalog hung floe")
	require.Equal(t, exitError, code, errOut)
	require.Contains(t, out, "local.web.events")
	require.Contains(t, errOut, "catalog stuck")
	require.Contains(t, errOut, "no answer within 300ms")
	require.True(t, strings.Contains(errOut, "floe.timeout"), errOut)
}
