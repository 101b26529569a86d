package main

import (
	"context"
	"encoding/json"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/floe-project/floe/control/store"
)

func TestNewResumeCmdParsesArgs(t *testing.T) {
	t.Parallel()
	io, _, _ := testIO()
	f := newTestFactory(t, io)
	for _, tc := range []struct {
		name    string
		args    []string
		want    []any
		wantErr string
	}{
		{name: "table", args: []string{"web.events", "--note", "restored", "--by", "ana"}, want: []any{"web.events", "ana", "restored", false, false}},
		{name: "list", args: []string{"--list", "--all", "-o", "json"}, want: []any{"", defaultBy(), "", true, true}},
		{name: "nothing", wantErr: "resume needs TABLE, or --list"},
		{name: "both", args: []string{"web.events", "--list"}, wantErr: "mutually exclusive"},
		{name: "all alone", args: []string{"web.events", "--all"}, wantErr: "--all goes with --list"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var got *resumeOptions
			c := newResumeCmd(f, func(_ context.Context, o *resumeOptions) error { got = o; return nil })
			c.SetArgs(tc.args)
			io2, _, _ := testIO()
			c.SetOut(io2.Out)
			c.SetErr(io2.ErrOut)
			err := c.Execute()
			if tc.wantErr != "" {
				require.ErrorContains(t, err, tc.wantErr)
				require.Equal(t, exitUsage, classify(err))
				return
			}
			require.NoError(t, err)
			require.Equal(t, tc.want, []any{got.Table, got.By, got.Note, got.List, got.All})
		})
	}
}

// TestResumeAHaltedTable: a halted table refuses every verb that would
// change it, saying why and how to resume; floe resume lists and resumes
// it, recorded with who did it; then the verbs run it again.
func TestResumeAHaltedTable(t *testing.T) {
	t.Parallel()
	dir := flatWarehouse(t, 4, 20)
	// A run of it failed an invariant check (the control package's tests
	// make one fail for real; here the hold it leaves is placed as such).
	io, _, _ := testIO()
	f := newFactory(io)
	f.ConfigPath = filepath.Join(dir, "floe.yaml")
	st, err := f.Store(t.Context())
	require.NoError(t, err)
	held := time.Date(2026, 11, 29, 10, 15, 0, 0, time.UTC)
	_, placed, err := st.HoldTable(t.Context(), store.HoldRecord{Table: "local.db.flat", RunID: "20261129T101500Z-3fa9c2d1",
		Reason: "rewriter: invariant violated: values differ in column tenant", HeldAt: held})
	require.NoError(t, err)
	require.True(t, placed)
	require.NoError(t, f.Close())

	for _, args := range [][]string{{"optimize", "db.flat"}, {"compact", "db.flat"}, {"expire", "db.flat"}, {"optimize", "db.flat", "--dry-run"}} {
		out, errOut, code := run(t, dir, args...)
		require.Equal(t, exitError, code, "%v: %s%s", args, out, errOut)
		require.Contains(t, errOut, "local.db.flat is halted since 2026-11-29T10:15:00Z", args)
		require.Contains(t, errOut, "run 20261129T101500Z-3fa9c2d1", args)
		require.Contains(t, errOut, "floe resume local.db.flat", args)
		require.NotContains(t, errOut, "decide local.db.flat:", "the sentence stands alone")
	}
	out, errOut, code := run(t, dir, "runs", "db.flat", "-o", "json")
	require.Equal(t, 0, code, errOut)
	require.JSONEq(t, "[]", out, "no run was recorded")

	out, errOut, code = run(t, dir, "resume", "--list")
	require.Equal(t, 0, code, errOut)
	require.Contains(t, out, "local.db.flat")
	require.Contains(t, out, "values differ in column tenant")

	out, errOut, code = run(t, dir, "resume", "db.flat", "--by", "ana", "--note", "checked the table")
	require.Equal(t, 0, code, errOut)
	require.Contains(t, out, "resumed local.db.flat")
	out, errOut, code = run(t, dir, "resume", "db.flat")
	require.Equal(t, exitError, code, out)
	require.Contains(t, errOut, "not halted")

	out, errOut, code = run(t, dir, "resume", "--list")
	require.Equal(t, 0, code, errOut)
	require.Contains(t, out, "no table is halted")
	out, errOut, code = run(t, dir, "resume", "--list", "--all", "-o", "json")
	require.Equal(t, 0, code, errOut)
	var holds []struct {
		Table     string `json:"table"`
		ResumedBy string `json:"resumed_by"`
		Note      string `json:"note"`
	}
	require.NoError(t, json.Unmarshal([]byte(out), &holds))
	require.Len(t, holds, 1)
	require.Equal(t, "ana", holds[0].ResumedBy, "recorded as who resumed it")
	require.Equal(t, "checked the table", holds[0].Note)

	out, errOut, code = run(t, dir, "optimize", "db.flat")
	require.Equal(t, 0, code, "%s%s", out, errOut)
}
