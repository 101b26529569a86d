package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/floe-project/floe/control/config"
)

// floe config view prints the merged configuration — the embedded
// default, the file and the FLOE_ variables — with --sources saying where
// each value came from, -o json as rows; secrets never print.
func TestConfigView(t *testing.T) {
	dir := t.TempDir()
	file := "data_dir: " + filepath.Join(dir, "data") + `
catalogs:
  prod:
    type: rest
    uri: https://alice:pa55word@polaris.example.com/api/catalog
    s3.region: eu-west-1
log:
  format: json
`
	require.NoError(t, os.WriteFile(filepath.Join(dir, "floe.yaml"), []byte(file), 0o644))
	t.Setenv("FLOE_CATALOG__PROD__CREDENTIAL", "client:cred-s3cret")
	t.Setenv("FLOE_LOG_LEVEL", "info")

	out, errOut, code := run(t, dir, "config", "view", "--sources")
	require.Equal(t, exitOK, code, errOut)
	for _, want := range []string{
		"# the configuration floe runs with: " + filepath.Join(dir, "floe.yaml") + " over floe's embedded default",
		"\ncatalogs:\n  prod:\n",
		"    credential: \"****\"",
		"uri: https://alice:****@polaris.example.com/api/catalog",
		"# FLOE_CATALOG__PROD__CREDENTIAL\n",
		"# " + filepath.Join(dir, "floe.yaml") + ":6\n", // the file's path from the working directory
		"  level: info",
		"# FLOE_LOG_LEVEL\n",
		"  format: json",
		"  retention: 30d",
	} {
		require.Contains(t, out, want)
	}
	require.NotContains(t, out, "local", "the file names its catalogs: the demo's is gone")
	require.NotContains(t, out, "pa55word")
	require.NotContains(t, out, "cred-s3cret")

	out, errOut, code = run(t, dir, "config", "view", "-o", "json")
	require.Equal(t, exitOK, code, errOut)
	var rows []config.Setting
	require.NoError(t, json.Unmarshal([]byte(out), &rows))
	got := map[string]config.Setting{}
	for _, r := range rows {
		got[r.Key] = r
	}
	require.Equal(t, config.Setting{Key: "catalogs.prod.s3.region", Value: "eu-west-1", Source: filepath.Join(dir, "floe.yaml") + ":6"}, got["catalogs.prod.s3.region"])
	require.Equal(t, config.Setting{Key: "log.level", Value: "info", Source: "FLOE_LOG_LEVEL"}, got["log.level"])
	require.Equal(t, config.Setting{Key: "health.target_file_size", Value: "512MiB", Source: "default"}, got["health.target_file_size"])
	require.NotContains(t, out, "cred-s3cret")

	// Without --sources, no comments; a bad output is a usage error.
	out, _, code = run(t, dir, "config", "view")
	require.Equal(t, exitOK, code)
	require.NotContains(t, out, "floe.yaml:")
	_, errOut, code = run(t, dir, "config", "view", "-o", "table")
	require.Equal(t, exitUsage, code)
	require.Contains(t, errOut, `--output "table": want yaml or json`)
}

// floe config view with no file in an empty directory prints the embedded
// default and creates nothing; an invalid file is reported whole, exit 2.
func TestConfigViewCreatesNothing(t *testing.T) {
	dir := t.TempDir()
	t.Chdir(dir)
	io, out, errOut := testIO()
	f := newTestFactory(t, io)
	root := newRootCmd(f)
	root.SetArgs([]string{"config", "view"})
	require.Equal(t, exitOK, exitCode(io, root.ExecuteContext(t.Context())), errOut.String())
	require.Contains(t, out.String(), "floe's embedded default")
	require.Contains(t, out.String(), "default_catalog: local")
	entries, err := os.ReadDir(dir)
	require.NoError(t, err)
	require.Empty(t, entries)

	require.NoError(t, os.WriteFile(filepath.Join(dir, "floe.yaml"), []byte("plan: 5\nlog:\n  level: loud\n"), 0o644))
	_, errOut2, code := run(t, dir, "config", "view")
	require.Equal(t, exitUsage, code)
	require.Contains(t, errOut2, "floe.yaml:1: plan: want a mapping of keys (min_gain_pp), not the number 5")
	require.Contains(t, errOut2, "floe.yaml:3: log.level: \"loud\"")
	require.False(t, strings.Contains(errOut2, "Go struct"))
}
