package main

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"runtime/debug"
	"strconv"
	"testing"
	"time"

	"github.com/spf13/cobra"
	"github.com/stretchr/testify/require"

	"github.com/floe-project/floe/control"
	"github.com/floe-project/floe/lake"
	"github.com/floe-project/floe/layout"
)

// run executes floe with args against a config in dir and returns stdout,
// stderr and the exit code, as Main would. The Go heap's soft limit, which
// a rewrite's --memory sets for its process, is restored for the tests
// that follow.
func run(t *testing.T, dir string, args ...string) (string, string, int) {
	t.Helper()
	defer debug.SetMemoryLimit(debug.SetMemoryLimit(-1))
	io, out, errOut := testIO()
	f := newFactory(io)
	root := newRootCmd(f)
	root.SetArgs(append([]string{"--config", filepath.Join(dir, "floe.yaml")}, args...))
	root.SetOut(out)
	root.SetErr(errOut)
	err := root.ExecuteContext(context.Background())
	if cerr := f.Close(); cerr != nil && err == nil {
		err = cerr
	}
	code := exitCode(io, err)
	return out.String(), errOut.String(), code
}

func writeConfig(t *testing.T) string {
	t.Helper()
	dir := t.TempDir()
	cfg := "data_dir: " + filepath.Join(dir, "data") + `
catalogs:
  local:
    type: sql
    sql.driver: sqlite
    sql.dialect: sqlite
    uri: "{data_dir}/catalog.db"
    warehouse: "file://{data_dir}/warehouse"
`
	require.NoError(t, os.WriteFile(filepath.Join(dir, "floe.yaml"), []byte(cfg), 0o644))
	return dir
}

func TestNewCmdsParseArgs(t *testing.T) {
	t.Parallel()
	io, _, _ := testIO()
	f := newTestFactory(t, io)
	for _, tc := range []struct {
		name    string
		cmd     func() (*cobra.Command, func() any)
		args    []string
		want    any
		wantErr string
	}{
		{
			name: "health",
			cmd: func() (*cobra.Command, func() any) {
				var got *healthOptions
				c := newHealthCmd(f, func(_ context.Context, o *healthOptions) error { got = o; return nil })
				return c, func() any { return []any{got.Tables, got.Columns, got.FailOn, got.Output} }
			},
			args: []string{"web.events", "--column", "tenant_id", "--fail-on", "critical", "-o", "json"},
			want: []any{[]string{"web.events"}, []string{"tenant_id"}, "critical", outputJSON},
		},
		{
			name: "health bad fail-on",
			cmd: func() (*cobra.Command, func() any) {
				return newHealthCmd(f, func(context.Context, *healthOptions) error { return nil }), nil
			},
			args:    []string{"--fail-on", "sometimes"},
			wantErr: "--fail-on",
		},
		{
			name: "bad output",
			cmd: func() (*cobra.Command, func() any) {
				return newTablesCmd(f, func(context.Context, *tablesOptions) error { return nil }), nil
			},
			args:    []string{"--output", "yaml"},
			wantErr: "unknown output format",
		},
		{
			name: "predicates",
			cmd: func() (*cobra.Command, func() any) {
				var got *predicatesOptions
				c := newPredicatesCmd(f, func(_ context.Context, o *predicatesOptions) error { got = o; return nil })
				return c, func() any { return []any{got.Dialect, got.File} }
			},
			args: []string{"--dialect", "spark", "q.sql"},
			want: []any{"spark", "q.sql"},
		},
		{
			name: "demo",
			cmd: func() (*cobra.Command, func() any) {
				var got *demoOptions
				c := newDemoCmd(f, func(_ context.Context, o *demoOptions) error { got = o; return nil })
				return c, func() any { return []any{got.Reset, got.EventCommits, got.Orders} }
			},
			args: []string{"--reset", "--event-commits", "12", "--orders", "50"},
			want: []any{true, 12, 50},
		},
		{
			name: "doctor",
			cmd: func() (*cobra.Command, func() any) {
				var got *doctorOptions
				c := newDoctorCmd(f, func(_ context.Context, o *doctorOptions) error { got = o; return nil })
				return c, func() any { return []any{got.Timeout, got.Write, got.Output} }
			},
			args: []string{"--timeout", "2s", "--write", "-o", "json"},
			want: []any{2 * time.Second, true, outputJSON},
		},
		{
			name: "doctor defaults",
			cmd: func() (*cobra.Command, func() any) {
				var got *doctorOptions
				c := newDoctorCmd(f, func(_ context.Context, o *doctorOptions) error { got = o; return nil })
				return c, func() any { return []any{got.Timeout, got.Write, got.Output} }
			},
			want: []any{control.DefaultDoctorTimeout, false, outputTable},
		},
		{
			name: "doctor zero timeout",
			cmd: func() (*cobra.Command, func() any) {
				return newDoctorCmd(f, func(context.Context, *doctorOptions) error { return nil }), nil
			},
			args:    []string{"--timeout", "0s"},
			wantErr: "--timeout 0s: want a positive duration",
		},
		{
			name: "doctor argument",
			cmd: func() (*cobra.Command, func() any) {
				return newDoctorCmd(f, func(context.Context, *doctorOptions) error { return nil }), nil
			},
			args:    []string{"local"},
			wantErr: `doctor takes no arguments, got "local"`,
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c, got := tc.cmd()
			c.SetArgs(tc.args)
			io2, _, _ := testIO()
			c.SetOut(io2.Out)
			c.SetErr(io2.ErrOut)
			err := c.Execute()
			if tc.wantErr != "" {
				require.ErrorContains(t, err, tc.wantErr)
				return
			}
			require.NoError(t, err)
			require.Equal(t, tc.want, got())
		})
	}
}

func TestDemoThenHealthMatchesSnapshotSummary(t *testing.T) {
	t.Parallel()
	dir := writeConfig(t)
	out, errOut, code := run(t, dir, demoArgs("--event-commits", "110", "--orders", "2000", "--queries", "400")...)
	require.Equal(t, 0, code, errOut)
	require.Contains(t, out, "local.web.events")
	require.Contains(t, out, "critical: small files")
	require.Contains(t, out, "snapshots: 110 retained")

	// The demo collected its logs; collecting them again stores nothing new.
	out, errOut, code = run(t, dir, "collect", filepath.Join(dir, "data", "logs"), "--force", "-o", "json")
	require.Equal(t, 0, code, errOut)
	var rep struct{ Events, Inserted, Duplicates, Bad int }
	require.NoError(t, json.Unmarshal([]byte(out), &rep))
	require.Positive(t, rep.Events)
	require.Zero(t, rep.Inserted)
	require.Zero(t, rep.Bad)
	require.Equal(t, rep.Events, rep.Duplicates)
	// Without --force every file is unchanged and skipped.
	out, _, code = run(t, dir, "collect", filepath.Join(dir, "data", "logs"), "-o", "json")
	require.Equal(t, 0, code)
	require.NoError(t, json.Unmarshal([]byte(out), &rep))
	require.Zero(t, rep.Events)

	out, errOut, code = run(t, dir, "queries", "--table", "web.events", "--since", sinceAsOf(), "-o", "json")
	require.Equal(t, 0, code, errOut)
	var stats []struct {
		Table      string `json:"table"`
		Queries    int    `json:"queries"`
		TopColumns []struct {
			Column string `json:"column"`
		} `json:"top_columns"`
	}
	require.NoError(t, json.Unmarshal([]byte(out), &stats))
	require.Len(t, stats, 1)
	require.Equal(t, "local.web.events", stats[0].Table)
	require.Positive(t, stats[0].Queries)
	var cols []string
	for _, c := range stats[0].TopColumns {
		cols = append(cols, c.Column)
	}
	require.Contains(t, cols, "tenant_id")

	// --events lists the most recent first.
	out, errOut, code = run(t, dir, "queries", "--table", "web.events", "--events", "--limit", "20", "-o", "json")
	require.Equal(t, 0, code, errOut)
	var evs []struct {
		StartTime time.Time `json:"start_time"`
	}
	require.NoError(t, json.Unmarshal([]byte(out), &evs))
	require.Len(t, evs, 20)
	for i := 1; i < len(evs); i++ {
		require.False(t, evs[i].StartTime.After(evs[i-1].StartTime), "event %d starts after event %d", i, i-1)
	}

	// analyze ranks tenant_id first on web.events (the demo workload's
	// dominant equality filter) and proposes layouts on it.
	out, errOut, code = run(t, dir, "analyze", "web.events", "--since", sinceAsOf(), "-o", "json")
	require.Equal(t, 0, code, errOut)
	var an []control.Analysis
	require.NoError(t, json.Unmarshal([]byte(out), &an))
	require.Len(t, an, 1)
	require.NotEmpty(t, an[0].Columns)
	require.Equal(t, "tenant_id", an[0].Columns[0].Column)
	var layouts []string
	for _, c := range an[0].Candidates {
		layouts = append(layouts, c.Layout.String())
	}
	require.Contains(t, layouts, "sort(tenant_id)")
	require.Contains(t, layouts, "current")
	require.Contains(t, layouts, "binpack")

	// simulate --layout current agrees with measure (iceberg-go's planning).
	out, errOut, code = run(t, dir, "simulate", "web.events", "--since", sinceAsOf(), "--layout", "current", "--layout", "sort(tenant_id)", "--target-file-size", "32KiB", "--allow-small-target-file-size", "-o", "json")
	require.Equal(t, 0, code, errOut)
	var sim struct {
		Table      string `json:"table"`
		Queries    int    `json:"queries"`
		Candidates []struct {
			Layout     layout.Layout `json:"layout"`
			FilesAfter int           `json:"files_after"`
			SkippedPct float64       `json:"skipped_pct"`
			ErrorPP    float64       `json:"error_pp"`
		} `json:"candidates"`
	}
	require.NoError(t, json.Unmarshal([]byte(out), &sim))
	require.Positive(t, sim.Queries)
	require.Len(t, sim.Candidates, 2)
	out, errOut, code = run(t, dir, "measure", "web.events", "--since", sinceAsOf(), "-o", "json")
	require.Equal(t, 0, code, errOut)
	var meas struct {
		FilesTotal int     `json:"files_total"`
		SkippedPct float64 `json:"skipped_pct"`
		Queries    []struct {
			ID           string `json:"id"`
			FilesScanned int    `json:"files_scanned"`
		} `json:"queries"`
	}
	require.NoError(t, json.Unmarshal([]byte(out), &meas))
	require.Len(t, meas.Queries, sim.Queries)
	require.Equal(t, meas.FilesTotal, sim.Candidates[0].FilesAfter)
	require.InDelta(t, meas.SkippedPct, sim.Candidates[0].SkippedPct, 1e-6)
	require.Greater(t, sim.Candidates[1].SkippedPct, sim.Candidates[0].SkippedPct, "sorting by the top filter column must skip more")

	// Running demo again without --reset refuses, with a usage-class hint.
	_, errOut, code = run(t, dir, demoArgs("--event-commits", "2", "--orders", "10")...)
	require.Equal(t, exitError, code)
	require.Contains(t, errOut, "--reset")

	out, errOut, code = run(t, dir, "health", "web.events", "--output", "json")
	require.Equal(t, 0, code, errOut)
	var hs []lake.Health
	require.NoError(t, json.Unmarshal([]byte(out), &hs))
	require.Len(t, hs, 1)
	h := hs[0]
	require.Equal(t, "local.web.events", h.Table)
	require.Contains(t, []lake.Status{lake.Warning, lake.Critical}, h.Status)

	// The table's own snapshot summary, read independently through tables.
	out, _, code = run(t, dir, "tables", "--output", "json")
	require.Equal(t, 0, code)
	var rows []tableRow
	require.NoError(t, json.Unmarshal([]byte(out), &rows))
	var events tableRow
	for _, r := range rows {
		if r.Table == "local.web.events" {
			events = r
		}
	}
	require.Equal(t, events.DataFiles, int64(h.Metrics.DataFiles))
	require.Equal(t, events.Records, h.Metrics.Records)
	require.Equal(t, events.SizeBytes, h.Metrics.DataBytes)
	require.Equal(t, int64(110*500), h.Metrics.Records)
	require.Equal(t, 110, h.Metrics.Snapshots)

	// total-delete-files of crm.accounts equals floe's delete-file count.
	out, _, code = run(t, dir, "health", "crm.accounts", "-o", "json")
	require.Equal(t, 0, code)
	require.NoError(t, json.Unmarshal([]byte(out), &hs))
	st := loadSummary(t, dir, "crm.accounts")
	require.Equal(t, st["total-delete-files"], strconv.Itoa(hs[0].Metrics.DeleteFiles))
	require.Equal(t, st["total-data-files"], strconv.Itoa(hs[0].Metrics.DataFiles))
	require.Positive(t, hs[0].Metrics.DeleteFiles)

	// --fail-on critical exits 3 when web.events is critical.
	_, errOut, code = run(t, dir, "health", "--fail-on", "warning")
	require.Equal(t, exitUnhealth, code)
	require.Contains(t, errOut, "local.web.events")

	// Unknown tables exit 4; bad names exit 2.
	_, _, code = run(t, dir, "health", "web.nope")
	require.Equal(t, exitNotFound, code)
	_, _, code = run(t, dir, "health", "nodots")
	require.Equal(t, exitUsage, code)
}

func loadSummary(t *testing.T, dir, name string) map[string]string {
	t.Helper()
	io, _, _ := testIO()
	f := newTestFactory(t, io)
	f.ConfigPath = filepath.Join(dir, "floe.yaml")
	id, err := f.ResolveTable(name)
	require.NoError(t, err)
	cat, err := f.Catalog(context.Background(), id.Catalog)
	require.NoError(t, err)
	tbl, err := lake.LoadTable(context.Background(), cat, id)
	require.NoError(t, err)
	return tbl.Metadata().CurrentSnapshot().Summary.Properties
}

func TestPredicatesCommand(t *testing.T) {
	t.Parallel()
	io, out, _ := testIO()
	io.In = stringsReader("SELECT count(*) FROM web.events e WHERE e.tenant_id IN (1, 2) AND date_trunc('day', ts) >= DATE '2026-11-01'")
	f := newTestFactory(t, io)
	require.NoError(t, runPredicates(context.Background(), &predicatesOptions{f: f, Dialect: "trino", Output: outputJSON}))
	var got struct {
		Tables []struct {
			Namespace, Name, Alias string
		} `json:"tables"`
		Predicates []struct {
			Table, Column, Op, Transform string
			Values                       []string
		} `json:"predicates"`
		Warnings []string `json:"warnings"`
	}
	require.NoError(t, json.Unmarshal(out.Bytes(), &got))
	require.Len(t, got.Tables, 1)
	require.Equal(t, "events", got.Tables[0].Name)
	require.Equal(t, "e", got.Tables[0].Alias)
	require.Len(t, got.Predicates, 2)
	require.Equal(t, "tenant_id", got.Predicates[0].Column)
	require.Equal(t, "in", got.Predicates[0].Op)
	require.Equal(t, []string{"1", "2"}, got.Predicates[0].Values)
	require.Equal(t, "ts", got.Predicates[1].Column)
	require.Equal(t, "day", got.Predicates[1].Transform)
	require.NotNil(t, got.Warnings)
}

// --schema reads CREATE TABLE statements and attributes unqualified columns
// of a comma FROM list; the text output names self-join sides by alias.
func TestPredicatesSchema(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	ddl := filepath.Join(dir, "schema.sql")
	require.NoError(t, os.WriteFile(ddl, []byte(`CREATE TABLE store_sales (ss_sold_date_sk INT, ss_item_sk INT);
CREATE TABLE date_dim (d_date_sk INT, d_year INT);`), 0o644))
	io, out, errOut := testIO()
	io.In = stringsReader(`SELECT * FROM store_sales s1, store_sales s2, date_dim
WHERE s1.ss_sold_date_sk = d_date_sk AND s1.ss_item_sk = s2.ss_item_sk AND d_year = 2000`)
	f := newTestFactory(t, io)
	require.NoError(t, runPredicates(context.Background(), &predicatesOptions{f: f, Dialect: "spark", Schema: ddl}))
	require.Empty(t, errOut.String())
	require.Regexp(t, `date_dim\s+d_year\s+=\s+2000`, out.String())
	require.Contains(t, out.String(), "store_sales s1.ss_item_sk")
	require.Contains(t, out.String(), "store_sales s2.ss_item_sk")
	require.Error(t, runPredicates(context.Background(), &predicatesOptions{f: f, Dialect: "spark", Schema: ddl, Catalog: true}))
}

func TestParseDuration(t *testing.T) {
	t.Parallel()
	for in, want := range map[string]string{"30d": "720h0m0s", "12h": "12h0m0s", "1d12h": "36h0m0s", "90m": "1h30m0s"} {
		d, err := parseDuration(in)
		require.NoError(t, err, in)
		require.Equal(t, want, d.String(), in)
	}
	for _, bad := range []string{"", "d", "xd", "3w", "1d2x"} {
		_, err := parseDuration(bad)
		require.Error(t, err, bad)
	}
}
