package main

import (
	"context"
	"encoding/json"
	"testing"

	"github.com/spf13/cobra"
	"github.com/stretchr/testify/require"

	"github.com/floe-project/floe/control"
	"github.com/floe-project/floe/internal/oracle"
	"github.com/floe-project/floe/lake"
	"github.com/floe-project/floe/layout"
)

func TestNewPlanCmdsParseArgs(t *testing.T) {
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
			name: "plan",
			cmd: func() (*cobra.Command, func() any) {
				var got *planOptions
				c := newPlanCmd(f, func(_ context.Context, o *planOptions) error { got = o; return nil })
				return c, func() any { return []any{got.Table, got.Layouts, got.By, got.ZOrderMode, got.Output} }
			},
			args: []string{"web.events", "--layout", "sort(a)", "--layout", "zorder(a, b)", "--by", "carol", "--zorder-mode", "rank", "-o", "json"},
			want: []any{"web.events", []string{"sort(a)", "zorder(a, b)"}, "carol", "rank", outputJSON},
		},
		{
			name: "plan needs a table",
			cmd: func() (*cobra.Command, func() any) {
				return newPlanCmd(f, func(context.Context, *planOptions) error { return nil }), nil
			},
			args:    []string{},
			wantErr: "plan needs TABLE; usage: plan TABLE",
		},
		{
			name: "plan approve",
			cmd: func() (*cobra.Command, func() any) {
				var got *planDecideOptions
				c := newPlanDecideCmd(f, "approve", func(_ context.Context, o *planDecideOptions) error { got = o; return nil })
				return c, func() any { return []any{got.Action, got.ID, got.By} }
			},
			args: []string{"abc123", "--by", "alice"},
			want: []any{"approve", "abc123", "alice"},
		},
		{
			name: "plan reject defaults --by to $USER",
			cmd: func() (*cobra.Command, func() any) {
				var got *planDecideOptions
				c := newPlanDecideCmd(f, "reject", func(_ context.Context, o *planDecideOptions) error { got = o; return nil })
				return c, func() any { return []any{got.Action, got.ID, got.By} }
			},
			args: []string{"abc123"},
			want: []any{"reject", "abc123", defaultBy()},
		},
		{
			name: "plan list by state",
			cmd: func() (*cobra.Command, func() any) {
				var got *planListOptions
				c := newPlanListCmd(f, "list [TABLE]", func(_ context.Context, o *planListOptions) error { got = o; return nil })
				return c, func() any { return []any{got.State, got.Output} }
			},
			args: []string{"--state", "approved", "-o", "json"},
			want: []any{"approved", outputJSON},
		},
		{
			name: "plan list bad state",
			cmd: func() (*cobra.Command, func() any) {
				return newPlanListCmd(f, "list [TABLE]", func(context.Context, *planListOptions) error { return nil }), nil
			},
			args:    []string{"--state", "pending"},
			wantErr: "--state",
		},
		{
			name: "optimize --plan without a table",
			cmd: func() (*cobra.Command, func() any) {
				var got *optimizeOptions
				c := newOptimizeCmd(f, func(_ context.Context, o *optimizeOptions) error { got = o; return nil })
				return c, func() any { return []any{got.PlanID, got.Table} }
			},
			args: []string{"--plan", "abc123"},
			want: []any{"abc123", ""},
		},
		{
			name: "optimize --plan excludes --layout",
			cmd: func() (*cobra.Command, func() any) {
				return newOptimizeCmd(f, func(context.Context, *optimizeOptions) error { return nil }), nil
			},
			args:    []string{"--plan", "abc123", "--layout", "sort(a)"},
			wantErr: "--plan and --layout are mutually exclusive",
		},
		{
			name: "optimize --plan must compact",
			cmd: func() (*cobra.Command, func() any) {
				return newOptimizeCmd(f, func(context.Context, *optimizeOptions) error { return nil }), nil
			},
			args:    []string{"--plan", "abc123", "--skip", "compact"},
			wantErr: "the compact step cannot be skipped when running a plan",
		},
		{
			name: "optimize needs a table or a plan",
			cmd: func() (*cobra.Command, func() any) {
				return newOptimizeCmd(f, func(context.Context, *optimizeOptions) error { return nil }), nil
			},
			args:    []string{},
			wantErr: "TABLE or --plan",
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
				var fe flagError
				require.ErrorAs(t, err, &fe, "a usage error exits 2")
				return
			}
			require.NoError(t, err)
			require.Equal(t, tc.want, got())
		})
	}
}

// planJSON is the part of a plan's JSON the tests read.
type planJSON struct {
	ID           string `json:"id"`
	Table        string `json:"table"`
	BaseSnapshot int64  `json:"base_snapshot_id,string"`
	Layout       struct {
		Spec                string `json:"spec"`
		Strategy            string `json:"strategy"`
		TargetFileSizeBytes int64  `json:"target_file_size_bytes"`
	} `json:"layout"`
	State      control.PlanState `json:"state"`
	CreatedBy  string            `json:"created_by"`
	DecidedBy  string            `json:"decided_by"`
	Projection struct {
		Layout            layout.Layout `json:"layout"`
		SkippedPct        float64       `json:"skipped_pct"`
		CurrentSkippedPct *float64      `json:"current_skipped_pct"`
		FilesAfter        int           `json:"files_after"`
		RewriteBytes      int64         `json:"rewrite_bytes"`
	} `json:"projection"`
}

func TestPlanApproveOptimizeFlow(t *testing.T) {
	t.Parallel()
	dir := writeConfig(t)
	_, errOut, code := run(t, dir, demoArgs("--event-commits", "30", "--orders", "400", "--queries", "60")...)
	require.Equal(t, 0, code, errOut)
	sum := func() oracle.Sum {
		s, err := oracle.ChecksumIceberg(context.Background(), loadEvents(t, dir).Table)
		require.NoError(t, err)
		return s
	}
	before := sum()

	// Plan: sorting by the workload's top filter column beats bin-packing.
	out, errOut, code := run(t, dir, "plan", "web.events", "--since", sinceAsOf(), "--layout", "binpack", "--layout", "sort(tenant_id)",
		"--target-file-size", "32KiB", "--allow-small-target-file-size", "--by", "carol", "-o", "json")
	require.Equal(t, 0, code, errOut)
	var p planJSON
	require.NoError(t, json.Unmarshal([]byte(out), &p))
	require.Len(t, p.ID, 12)
	require.Equal(t, "local.web.events", p.Table)
	require.Equal(t, "sort(tenant_id) target 32768", p.Layout.Spec, "32KiB in the layout's canonical text")
	require.Equal(t, "sort", p.Layout.Strategy)
	require.Equal(t, int64(32768), p.Layout.TargetFileSizeBytes)
	require.Equal(t, control.PlanProposed, p.State)
	require.Equal(t, "carol", p.CreatedBy)
	require.Positive(t, p.BaseSnapshot)
	require.Equal(t, p.Layout.Spec, p.Projection.Layout.String())
	require.NotNil(t, p.Projection.CurrentSkippedPct)
	require.Greater(t, p.Projection.SkippedPct, *p.Projection.CurrentSkippedPct)
	require.Positive(t, p.Projection.FilesAfter)
	require.Positive(t, p.Projection.RewriteBytes)

	// The same plan again is the same plan; the text output says what next.
	out, errOut, code = run(t, dir, "plan", "web.events", "--since", sinceAsOf(), "--layout", "binpack", "--layout", "sort(tenant_id)", "--target-file-size", "32KiB", "--allow-small-target-file-size")
	require.Equal(t, 0, code, errOut)
	require.Contains(t, out, "plan "+p.ID+": proposed")
	require.Contains(t, out, "floe plan approve "+p.ID)

	// Bin-packing skips no more files than the partitioned layout of today: nothing
	// to gain, so nothing is proposed, and that is not an error.
	out, errOut, code = run(t, dir, "plan", "web.events", "--since", sinceAsOf(), "--layout", "binpack", "--target-file-size", "32KiB", "--allow-small-target-file-size", "-o", "json")
	require.Equal(t, 0, code, errOut)
	var none struct {
		Proposed bool          `json:"proposed"`
		Best     layout.Layout `json:"best"`
		Reason   string        `json:"reason"`
	}
	require.NoError(t, json.Unmarshal([]byte(out), &none), out)
	require.False(t, none.Proposed)
	require.Equal(t, layout.StrategyBinpack, none.Best.Strategy)
	require.Contains(t, none.Reason, "--force")

	out, errOut, code = run(t, dir, "plan", "list", "-o", "json")
	require.Equal(t, 0, code, errOut)
	var list []planJSON
	require.NoError(t, json.Unmarshal([]byte(out), &list))
	require.Len(t, list, 1)
	require.Equal(t, p.ID, list[0].ID)
	out, errOut, code = run(t, dir, "plans", "web.events", "--state", "approved", "-o", "json")
	require.Equal(t, 0, code, errOut)
	require.NoError(t, json.Unmarshal([]byte(out), &list))
	require.Empty(t, list)

	// Not approved yet: refused, nothing runs.
	_, errOut, code = run(t, dir, "optimize", "--plan", p.ID)
	require.Equal(t, exitError, code)
	require.Contains(t, errOut, "approve it first: floe plan approve "+p.ID)
	// Unknown ids exit 4; flags that the plan fixes exit 2.
	for _, args := range [][]string{{"plan", "show", "nope"}, {"plan", "approve", "nope"}, {"optimize", "--plan", "nope"}} {
		_, _, code = run(t, dir, args...)
		require.Equal(t, exitNotFound, code, "%v", args)
	}
	_, _, code = run(t, dir, "optimize", "--plan", p.ID, "--layout", "binpack")
	require.Equal(t, exitUsage, code)
	_, _, code = run(t, dir, "optimize", "sales.orders", "--plan", p.ID)
	require.Equal(t, exitUsage, code)

	out, errOut, code = run(t, dir, "plan", "approve", p.ID, "--by", "alice", "-o", "json")
	require.Equal(t, 0, code, errOut)
	require.NoError(t, json.Unmarshal([]byte(out), &p))
	require.Equal(t, control.PlanApproved, p.State)
	require.Equal(t, "alice", p.DecidedBy)
	_, errOut, code = run(t, dir, "plan", "reject", p.ID)
	require.Equal(t, exitError, code, "a plan is decided once")
	require.Contains(t, errOut, "it is approved")

	out, errOut, code = run(t, dir, "optimize", "web.events", "--plan", p.ID, "--expire-older-than", "1s", "-o", "json")
	require.Equal(t, 0, code, errOut)
	r := runResultOf(t, []byte(out)).Run
	require.Equal(t, control.StatusDone, r.Status)
	require.Equal(t, p.ID, r.PlanID)
	require.Len(t, r.Steps, 5, "expire, orphans, compact, deletes, manifests")
	require.Equal(t, "alice", r.Approvals[0].By, "the run rests on alice's approval of the plan")
	require.Equal(t, before, sum(), "running the plan changed the rows")

	out, errOut, code = run(t, dir, "plan", "show", p.ID, "-o", "json")
	require.Equal(t, 0, code, errOut)
	require.NoError(t, json.Unmarshal([]byte(out), &p))
	require.Equal(t, control.PlanDone, p.State)
	require.Equal(t, "alice", p.DecidedBy)
	out, errOut, code = run(t, dir, "runs", "web.events", "-o", "json")
	require.Equal(t, 0, code, errOut)
	var runs []struct {
		ID     string `json:"id"`
		PlanID string `json:"plan_id"`
	}
	require.NoError(t, json.Unmarshal([]byte(out), &runs))
	require.Len(t, runs, 1)
	require.Equal(t, r.ID, runs[0].ID)
	require.Equal(t, p.ID, runs[0].PlanID)

	// The compaction wrote the plan's layout: the table now sorts by
	// tenant_id, and every data file was written in that order.
	state := loadEvents(t, dir)
	var sortCols []string
	for _, sf := range state.Metadata.SortOrder().Fields() {
		name, ok := state.Metadata.CurrentSchema().FindColumnName(sf.SourceIDs[0])
		require.True(t, ok)
		sortCols = append(sortCols, name)
	}
	require.Equal(t, []string{"tenant_id"}, sortCols)
	for _, df := range state.DataFiles {
		require.NotNil(t, df.SortOrderID, df.Path)
		require.Equal(t, state.Metadata.SortOrder().OrderID(), *df.SortOrderID, df.Path)
	}

	// A table floe has just optimized comes back healthy on what the
	// rewrite fixed: its files are judged against the target they were
	// written for (below the 4MiB floor, so health is told the small
	// target is meant), and files sorted by tenant_id do not overlap on it.
	out, errOut, code = run(t, dir, "health", "web.events", "--column", "tenant_id", "--allow-small-target-file-size", "-o", "json")
	require.Equal(t, 0, code, errOut)
	var hs []struct {
		Metrics struct {
			TargetFileSizeBytes int64 `json:"target_file_size_bytes"`
			Clustering          []struct {
				Column       string  `json:"column"`
				AverageDepth float64 `json:"average_depth"`
			} `json:"clustering"`
		} `json:"metrics"`
		Reasons []string `json:"reasons"`
	}
	require.NoError(t, json.Unmarshal([]byte(out), &hs), out)
	require.Len(t, hs, 1)
	require.Equal(t, int64(32<<10), hs[0].Metrics.TargetFileSizeBytes)
	for _, r := range hs[0].Reasons {
		require.NotContains(t, r, "small files")
		require.NotContains(t, r, "clustering")
	}
	require.NotEmpty(t, hs[0].Metrics.Clustering)
	for _, c := range hs[0].Metrics.Clustering {
		require.Equal(t, "tenant_id", c.Column)
		require.InDelta(t, 1.0, c.AverageDepth, 0.05, "a table just sorted by tenant_id")
	}

	// Done plans don't run again.
	_, errOut, code = run(t, dir, "optimize", "--plan", p.ID)
	require.Equal(t, exitError, code)
	require.Contains(t, errOut, "only an approved plan runs")
}

// loadEvents loads the demo's web.events table as it is now.
func loadEvents(t *testing.T, dir string) *lake.State {
	t.Helper()
	io, _, _ := testIO()
	f := newTestFactory(t, io)
	f.ConfigPath = dir + "/floe.yaml"
	id, err := f.ResolveTable("web.events")
	require.NoError(t, err)
	st, err := loadState(context.Background(), f, id)
	require.NoError(t, err)
	return st
}
