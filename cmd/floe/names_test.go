package main

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/apache/iceberg-go/table"
	"github.com/stretchr/testify/require"

	"github.com/floe-project/floe/control"
	"github.com/floe-project/floe/internal/testlake"
)

// dottedWarehouse is a config dir whose default catalog holds three flat
// tables whose names read alike once dots are joined: the table "a.b" of
// namespace db (local.db."a.b", 6 files), the table b of the nested
// namespace db.a (local.db.a.b, 2 files), and the table t of the namespace
// "x.y" (local."x.y".t, 5 files). iceberg-go's SQL catalog stores each
// apart.
func dottedWarehouse(t *testing.T) string {
	t.Helper()
	w := testlake.New(t)
	writeFlatTableAt(t, w, table.Identifier{"db", "a.b"}, 6, 40)
	writeFlatTableAt(t, w, table.Identifier{"db", "a", "b"}, 2, 40)
	writeFlatTableAt(t, w, table.Identifier{"x.y", "t"}, 5, 40)
	return warehouseConfig(t, w)
}

// trinoEvent is one Trino query-completed event reading schema.table with
// sql, at at.
func trinoEvent(id, schema, tbl, sql string, at time.Time) map[string]any {
	return map[string]any{
		"metadata": map[string]any{
			"queryId": id, "query": sql, "queryState": "FINISHED",
			"tables": []any{map[string]any{
				"catalog": "lake", "schema": schema, "table": tbl, "directlyReferenced": true,
				"columns": []any{map[string]any{"column": "id"}, map[string]any{"column": "tenant"}},
			}},
		},
		"statistics": map[string]any{"wallTime": "1.00s", "physicalInputBytes": 1000},
		"context":    map[string]any{"user": "alice", "catalog": "lake", "schema": schema, "queryType": "SELECT", "serverVersion": "478"},
		"createTime": at.UTC().Format(time.RFC3339), "endTime": at.Add(time.Second).UTC().Format(time.RFC3339),
	}
}

// TestVerbsAddressDottedNames: every verb reads the quoted form of a
// table name (db."a.b", "x.y".t) and acts on that table only, never on
// the table whose dotted path reads the same (db.a.b); the canonical form
// is what verbs print and what runs, plans and queries are kept under.
func TestVerbsAddressDottedNames(t *testing.T) {
	t.Parallel()
	dir := dottedWarehouse(t)
	const dotted, nested, dottedNS = `local.db."a.b"`, "local.db.a.b", `local."x.y".t`

	out, errOut, code := run(t, dir, "tables", "-o", "json")
	require.Equal(t, 0, code, errOut)
	var tables []struct {
		Table     string `json:"table"`
		DataFiles int    `json:"data_files"`
	}
	require.NoError(t, json.Unmarshal([]byte(out), &tables))
	files := map[string]int{}
	for _, tb := range tables {
		files[tb.Table] = tb.DataFiles
	}
	require.Equal(t, map[string]int{dotted: 6, nested: 2, dottedNS: 5}, files)

	health := func(name string) (string, int) {
		t.Helper()
		out, errOut, code := run(t, dir, "health", name, "-o", "json")
		require.Equal(t, 0, code, errOut)
		var hs []struct {
			Table   string `json:"table"`
			Metrics struct {
				DataFiles int `json:"data_files"`
			} `json:"metrics"`
		}
		require.NoError(t, json.Unmarshal([]byte(out), &hs))
		require.Len(t, hs, 1)
		return hs[0].Table, hs[0].Metrics.DataFiles
	}
	for _, tc := range []struct {
		arg, table string
		files      int
	}{
		{`db."a.b"`, dotted, 6},
		{`local.db."a.b"`, dotted, 6},
		{`"db"."a.b"`, dotted, 6},
		{"db.a.b", nested, 2},
		{`"x.y".t`, dottedNS, 5},
	} {
		name, n := health(tc.arg)
		require.Equal(t, tc.table, name, tc.arg)
		require.Equal(t, tc.files, n, tc.arg)
	}
	// Bad names are usage errors that say what is wrong.
	_, errOut, code = run(t, dir, "health", `db."a.b`)
	require.Equal(t, exitUsage, code)
	require.Contains(t, errOut, "unbalanced quote")
	_, errOut, code = run(t, dir, "health", `db.a"b`)
	require.Equal(t, exitUsage, code)
	require.Contains(t, errOut, `quote the whole part, doubling the quote ("a""b")`)
	// The namespace x.y that is not "x.y" holds no table t.
	_, errOut, code = run(t, dir, "health", "x.y.t")
	require.Equal(t, exitNotFound, code, errOut)

	// Queries collected for each table are kept apart.
	at := time.Now().Add(-time.Hour)
	events := []any{
		trinoEvent("q1", "db", "a.b", `SELECT id FROM lake.db."a.b" WHERE id < 50`, at),
		trinoEvent("q2", "db", "a.b", `SELECT id FROM lake.db."a.b" WHERE id BETWEEN 100 AND 120`, at.Add(time.Minute)),
		trinoEvent("q3", "db.a", "b", `SELECT id FROM lake.db.a.b WHERE tenant = 'acme'`, at.Add(2*time.Minute)),
		// Trino writes the namespace "x.y" as it writes the nested x.y;
		// the catalog has only the former.
		trinoEvent("q4", "x.y", "t", `SELECT id FROM lake."x.y".t WHERE id = 3`, at.Add(3*time.Minute)),
	}
	logs := filepath.Join(t.TempDir(), "trino.json")
	b, err := json.Marshal(events)
	require.NoError(t, err)
	require.NoError(t, os.WriteFile(logs, b, 0o644))
	_, errOut, code = run(t, dir, "collect", "--source", "trino-event", logs)
	require.Equal(t, 0, code, errOut)
	out, errOut, code = run(t, dir, "queries", "-o", "json")
	require.Equal(t, 0, code, errOut)
	var stats []struct {
		Table   string `json:"table"`
		Queries int    `json:"queries"`
	}
	require.NoError(t, json.Unmarshal([]byte(out), &stats))
	counts := map[string]int{}
	for _, s := range stats {
		counts[s.Table] = s.Queries
	}
	require.Equal(t, map[string]int{dotted: 2, nested: 1, dottedNS: 1}, counts)
	for arg, want := range map[string]int{`db."a.b"`: 2, "db.a.b": 1, `local.db."a.b"`: 2, `"x.y".t`: 1} {
		out, errOut, code = run(t, dir, "queries", "--table", arg, "-o", "json")
		require.Equal(t, 0, code, errOut)
		stats = nil
		require.NoError(t, json.Unmarshal([]byte(out), &stats))
		require.Len(t, stats, 1, arg)
		require.Equal(t, want, stats[0].Queries, arg)
	}

	out, errOut, code = run(t, dir, "queries", "--table", `db."a.b"`, "--events")
	require.Equal(t, 0, code, errOut)
	require.Contains(t, out, dotted)
	require.NotContains(t, out, "local.db.a.b")

	// simulate and plan replay the dotted table's own queries.
	out, errOut, code = run(t, dir, "simulate", `db."a.b"`, "--layout", "sort(id)", "-o", "json")
	require.Equal(t, 0, code, errOut)
	var sim struct {
		Table   string `json:"table"`
		Queries int    `json:"queries"`
	}
	require.NoError(t, json.Unmarshal([]byte(out), &sim))
	require.Equal(t, dotted, sim.Table)
	require.Equal(t, 2, sim.Queries)
	out, errOut, code = run(t, dir, "plan", `db."a.b"`, "--layout", "sort(id)", "--force", "-o", "json")
	require.Equal(t, 0, code, errOut)
	var plan struct {
		ID    string `json:"id"`
		Table string `json:"table"`
	}
	require.NoError(t, json.Unmarshal([]byte(out), &plan))
	require.Equal(t, dotted, plan.Table)
	for arg, want := range map[string]int{`db."a.b"`: 1, "db.a.b": 0} {
		out, errOut, code = run(t, dir, "plan", "list", arg, "-o", "json")
		require.Equal(t, 0, code, errOut)
		var plans []map[string]any
		require.NoError(t, json.Unmarshal([]byte(out), &plans))
		require.Len(t, plans, want, arg)
	}

	// optimize runs the approved plan on the dotted table and leaves its
	// look-alike be; compact rewrites the table of the dotted namespace.
	_, errOut, code = run(t, dir, "plan", "approve", plan.ID)
	require.Equal(t, 0, code, errOut)
	out, errOut, code = run(t, dir, "optimize", "--plan", plan.ID, "-o", "json")
	require.Equal(t, 0, code, errOut)
	opt := runResultOf(t, []byte(out))
	require.Equal(t, dotted, opt.Table)
	require.Equal(t, control.StatusDone, opt.Run.Status)
	_, n := health(`db."a.b"`)
	require.Equal(t, 1, n)
	_, n = health("db.a.b")
	require.Equal(t, 2, n, "the nested table was not touched")
	out, errOut, code = run(t, dir, "compact", `"x.y".t`, "-o", "json")
	require.Equal(t, 0, code, errOut)
	cs := runResultOf(t, []byte(out))
	require.Equal(t, dottedNS, cs.Table)
	step, ok := stepOf(cs.Run, "compact")
	require.True(t, ok)
	require.Equal(t, 5, step.Before.Metrics.DataFiles)
	require.NotNil(t, step.After, out)
	require.Equal(t, 1, step.After.Metrics.DataFiles)

	out, errOut, code = run(t, dir, "optimize", `"x.y".t`, "-o", "json")
	require.Equal(t, 0, code, errOut)
	require.Equal(t, dottedNS, runResultOf(t, []byte(out)).Table)

	// runs: each table's own, under its canonical name.
	for arg, want := range map[string]int{`db."a.b"`: 1, "db.a.b": 0, `"x.y".t`: 2} {
		out, errOut, code = run(t, dir, "runs", arg, "-o", "json")
		require.Equal(t, 0, code, errOut)
		var runs []struct {
			Table string `json:"table"`
		}
		require.NoError(t, json.Unmarshal([]byte(out), &runs))
		require.Len(t, runs, want, arg)
		for _, r := range runs {
			id, err := newTestResolver(t, dir)(arg)
			require.NoError(t, err)
			require.Equal(t, id, r.Table, arg)
		}
	}
	out, errOut, code = run(t, dir, "runs")
	require.Equal(t, 0, code, errOut)
	require.Contains(t, out, dotted)
	require.Contains(t, out, dottedNS)
	require.NotContains(t, strings.ReplaceAll(out, dotted, ""), nested, fmt.Sprintf("no run of %s:\n%s", nested, out))
}

// newTestResolver resolves a table argument as the verbs do, to its
// canonical text.
func newTestResolver(t *testing.T, dir string) func(string) (string, error) {
	t.Helper()
	io, _, _ := testIO()
	f := newTestFactory(t, io)
	f.ConfigPath = filepath.Join(dir, "floe.yaml")
	return func(name string) (string, error) {
		id, err := f.ResolveTable(name)
		return id.String(), err
	}
}
