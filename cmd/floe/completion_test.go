package main

import (
	"context"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/floe-project/floe/control/store"
)

// complete runs cobra's hidden __complete command, as a shell's completion
// script does, and returns the candidates and the directive line.
func complete(t *testing.T, dir string, args ...string) ([]string, string) {
	t.Helper()
	io, out, errOut := testIO()
	code := runWith(t, io, dir, append([]string{"__complete"}, args...)...)
	require.Equal(t, 0, code, errOut.String())
	lines := strings.Split(strings.TrimRight(out.String(), "\n"), "\n")
	require.NotEmpty(t, lines)
	return lines[:len(lines)-1], lines[len(lines)-1]
}

func TestCompletion(t *testing.T) {
	t.Parallel()
	dir := flatWarehouse(t, 2, 10)
	// A plan in the state store, as 'floe plan' stores it.
	io, _, _ := testIO()
	f := newFactory(io)
	f.ConfigPath = filepath.Join(dir, "floe.yaml")
	st, err := f.Store(context.Background())
	require.NoError(t, err)
	_, err = st.InsertPlan(context.Background(), store.PlanRecord{ID: "p-3fa9c2d1", Table: "local.db.flat", Layout: "sort(id)", State: "proposed", CreatedAt: time.Now()})
	require.NoError(t, err)
	require.NoError(t, f.Close())

	for _, tc := range []struct {
		name string
		args []string
		want []string
	}{
		{"shells", []string{"completion", ""}, []string{"bash", "fish", "powershell", "zsh"}},
		{"table argument", []string{"compact", ""}, []string{"db.flat"}},
		{"table prefix", []string{"health", "db.f"}, []string{"db.flat"}},
		{"one table only", []string{"compact", "db.flat", ""}, nil},
		{"layout keywords", []string{"compact", "db.flat", "--layout", ""}, []string{"sort(", "zorder(", "hilbert(", "binpack"}},
		{"layout keyword prefix", []string{"simulate", "db.flat", "--layout", "z"}, []string{"zorder("}},
		{"layout columns", []string{"compact", "db.flat", "--layout", "sort("}, []string{"sort(id", "sort(tenant"}},
		{"second layout column", []string{"plan", "db.flat", "--layout", "zorder(id, t"}, []string{"zorder(id, tenant"}},
		{"plan id argument", []string{"plan", "show", ""}, []string{"p-3fa9c2d1\tproposed local.db.flat sort(id)"}},
		{"plan id flag", []string{"optimize", "--plan", "p-"}, []string{"p-3fa9c2d1\tproposed local.db.flat sort(id)"}},
		{"table flag", []string{"queries", "--table", ""}, []string{"db.flat"}},
		{"init catalog types, not catalogs", []string{"init", "--catalog", ""}, []string{"rest", "glue", "hive", "sql"}},
		{"init storages", []string{"init", "--storage", ""}, []string{"s3", "gcs", "azure", "local"}},
		{"config view outputs", []string{"config", "view", "-o", ""}, []string{"yaml", "json"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, directive := complete(t, dir, tc.args...)
			var cands []string
			for _, g := range got {
				if !strings.HasPrefix(g, "_activeHelp_") {
					cands = append(cands, g)
				}
			}
			if tc.name == "shells" {
				var names []string
				for _, c := range cands {
					name, _, _ := strings.Cut(c, "\t")
					names = append(names, name)
				}
				cands = names
			}
			require.Equal(t, tc.want, cands, "directive %s", directive)
		})
	}

	io, out, errOut := testIO()
	require.Equal(t, 0, runWith(t, io, dir, "completion", "bash"), errOut.String())
	require.Contains(t, out.String(), "__start_floe")
}
