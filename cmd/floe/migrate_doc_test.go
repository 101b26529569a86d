package main

import (
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// TestMigrateFromAirflowDoc keeps docs/migrate-from-airflow.md true: each
// policy it shows validates, and each floe command it shows — in its
// command blocks and its mapping table — names a verb and flags floe has,
// with values they accept.
func TestMigrateFromAirflowDoc(t *testing.T) {
	t.Parallel()
	doc, err := os.ReadFile(filepath.Join("..", "..", "docs", "migrate-from-airflow.md"))
	require.NoError(t, err)
	text := string(doc)

	// The policies name the catalog lake, as the DAG's Spark catalog is named.
	dir := t.TempDir()
	cfg := "data_dir: " + filepath.Join(dir, "data") + `
catalogs:
  lake:
    type: sql
    sql.driver: sqlite
    sql.dialect: sqlite
    uri: "{data_dir}/catalog.db"
    warehouse: "file://{data_dir}/warehouse"
`
	require.NoError(t, os.WriteFile(filepath.Join(dir, "floe.yaml"), []byte(cfg), 0o644))
	blocks := regexp.MustCompile("(?s)```yaml\n(.*?)```").FindAllStringSubmatch(text, -1)
	require.Len(t, blocks, 2, "the doc's policies")
	for i, b := range blocks {
		file := filepath.Join(dir, "policies.yaml")
		require.NoError(t, os.WriteFile(file, []byte(b[1]), 0o644))
		out, errOut, code := run(t, dir, "policy", "validate", file, "--offline")
		require.Equal(t, 0, code, "policy %d:\n%s\n%s%s", i+1, b[1], out, errOut)
	}

	var commands []string
	for _, b := range regexp.MustCompile("(?s)```sh\n(.*?)```").FindAllStringSubmatch(text, -1) {
		for _, line := range strings.Split(b[1], "\n") {
			line, _, _ = strings.Cut(line, "#")
			for _, c := range strings.Split(line, "&&") {
				if c = strings.TrimSpace(c); c != "" {
					commands = append(commands, c)
				}
			}
		}
	}
	for _, m := range regexp.MustCompile("`(floe [^`]+)`").FindAllStringSubmatch(text, -1) {
		commands = append(commands, m[1])
	}
	require.Greater(t, len(commands), 10, "the doc's commands")
	for _, c := range commands {
		args := strings.Fields(c)
		require.Equal(t, "floe", args[0], c)
		checkParses(t, "docs/migrate-from-airflow.md", args[1:])
	}
}
