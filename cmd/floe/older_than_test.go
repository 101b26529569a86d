package main

import (
	"context"
	"regexp"
	"testing"
	"time"

	"github.com/apache/iceberg-go"
	"github.com/spf13/cobra"
	"github.com/stretchr/testify/require"

	"github.com/floe-project/floe/lake"
	"github.com/floe-project/floe/rewriter"
)

// "Zero means zero": an explicit --older-than 0 is zero, an unset flag is
// the default, and the cut-off printed is the one used.

func TestOlderThanFlagsParse(t *testing.T) {
	t.Parallel()
	io, _, _ := testIO()
	f := newTestFactory(t, io)
	type age struct {
		OlderThan time.Duration
		Set       bool
	}
	expire := func() (*cobra.Command, func() any) {
		var got *expireOptions
		c := newExpireCmd(f, func(_ context.Context, o *expireOptions) error { got = o; return nil })
		return c, func() any { return age{got.OlderThan, got.OlderThanSet} }
	}
	orphans := func() (*cobra.Command, func() any) {
		var got *orphansOptions
		c := newOrphansCmd(f, func(_ context.Context, o *orphansOptions) error { got = o; return nil })
		return c, func() any { return age{got.OlderThan, got.OlderThanSet} }
	}
	optimize := func() (*cobra.Command, func() any) {
		var got *optimizeOptions
		c := newOptimizeCmd(f, func(_ context.Context, o *optimizeOptions) error { got = o; return nil })
		return c, func() any { return []age{{got.OlderThan, got.OlderThanSet}, {got.OrphanAge, got.OrphanAgeSet}} }
	}
	for _, tc := range []struct {
		name    string
		cmd     func() (*cobra.Command, func() any)
		args    []string
		want    any
		wantErr string
	}{
		{name: "expire unset", cmd: expire, args: []string{"t"}, want: age{}},
		{name: "expire 0s", cmd: expire, args: []string{"t", "--older-than", "0s"}, want: age{0, true}},
		{name: "expire 3d", cmd: expire, args: []string{"t", "--older-than", "3d"}, want: age{72 * time.Hour, true}},
		{name: "orphans unset", cmd: orphans, args: []string{"t"}, want: age{}},
		{name: "orphans 0s", cmd: orphans, args: []string{"t", "--older-than", "0s", "--force"}, want: age{0, true}},
		{name: "orphans --dry-run", cmd: orphans, args: []string{"t", "--dry-run"}, want: age{}},
		{name: "orphans --apply --dry-run", cmd: orphans, args: []string{"t", "--apply", "--dry-run"}, wantErr: "mutually exclusive"},
		{name: "optimize unset", cmd: optimize, args: []string{"t"}, want: []age{{}, {}}},
		{
			name: "optimize 0s", cmd: optimize, args: []string{"t", "--expire-older-than", "0s", "--orphan-older-than", "0s"},
			want: []age{{0, true}, {0, true}},
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

// textCutoff is the cut-off a text report printed.
func textCutoff(t *testing.T, out, before string) time.Time {
	t.Helper()
	m := regexp.MustCompile(before + ` (\S+Z)`).FindStringSubmatch(out)
	require.NotNil(t, m, "no cut-off after %q in %q", before, out)
	c, err := time.Parse(time.RFC3339, m[1])
	require.NoError(t, err)
	return c
}

func TestOlderThanZeroMeansZero(t *testing.T) {
	t.Parallel()
	dir := writeConfig(t)
	_, errOut, code := run(t, dir, demoArgs("--event-commits", "3", "--orders", "10", "--queries", "10")...)
	require.Equal(t, 0, code, errOut)
	const day = 24 * time.Hour
	// Both outputs of one invocation print the same cut-off; allow for the
	// time the command takes and the text's whole seconds.
	near := func(t *testing.T, want, got time.Time) {
		t.Helper()
		require.WithinDuration(t, want, got, time.Minute)
	}

	t.Run("orphans", func(t *testing.T) {
		for _, tc := range []struct {
			name string
			args []string
			age  time.Duration
		}{
			{"zero,force", []string{"--older-than", "0s", "--force"}, 0},
			{"unset", nil, rewriter.DefaultOrphanAge},
			{"48h", []string{"--older-than", "48h"}, 48 * time.Hour},
		} {
			t.Run(tc.name, func(t *testing.T) {
				args := append([]string{"orphans", "web.events", "--dry-run"}, tc.args...)
				out, errOut, code := run(t, dir, append(args, "-o", "json")...)
				require.Equal(t, 0, code, errOut)
				plan := dryRunOf(t, []byte(out)).Steps[0].Orphans
				require.NotNil(t, plan, out)
				near(t, time.Now().Add(-tc.age), plan.Cutoff)
				out, errOut, code = run(t, dir, args...)
				require.Equal(t, 0, code, errOut)
				near(t, plan.Cutoff, textCutoff(t, out, "modified before"))
				require.NotContains(t, out, "older than 0s")
			})
		}
		// Zero is below the 24h floor: refused without --force, as 1h is.
		for _, age := range []string{"0s", "0", "1h"} {
			_, errOut, code := run(t, dir, "orphans", "web.events", "--older-than", age)
			require.Equal(t, exitUsage, code, "--older-than %s without --force", age)
			require.Contains(t, errOut, "24h safety floor")
		}
		_, _, code := run(t, dir, "optimize", "web.events", "--orphan-older-than", "0s", "--dry-run")
		require.Equal(t, exitUsage, code, "optimize has no --force: 0s is refused")
	})

	t.Run("expire", func(t *testing.T) {
		plan := func(out string) *rewriter.ExpirePlan {
			t.Helper()
			p := dryRunOf(t, []byte(out)).Steps[0].Expire
			require.NotNil(t, p, out)
			return p
		}
		out, errOut, code := run(t, dir, "expire", "web.events", "--older-than", "0s", "--dry-run", "-o", "json")
		require.Equal(t, 0, code, errOut)
		e := plan(out)
		near(t, time.Now(), e.Cutoff)
		require.NotEmpty(t, e.Snapshots, "every snapshot but the newest is older than now")
		require.Equal(t, 1, e.Retained, "--retain-last 1 still keeps the newest")
		out, errOut, code = run(t, dir, "expire", "web.events", "--older-than", "0s", "--dry-run")
		require.Equal(t, 0, code, errOut)
		near(t, e.Cutoff, textCutoff(t, out, "older than"))

		// Unset: the table's max snapshot age (5 days by default); the demo's
		// snapshots are all younger.
		out, errOut, code = run(t, dir, "expire", "web.events", "--dry-run", "-o", "json")
		require.Equal(t, 0, code, errOut)
		e = plan(out)
		near(t, time.Now().Add(-5*day), e.Cutoff)
		require.Empty(t, e.Snapshots)

		// --retain-last unset: the table's history.expire.min-snapshots-to-keep
		// decides; an explicit 0 is refused.
		setTableProperty(t, dir, "web.events", "history.expire.min-snapshots-to-keep", "3")
		out, errOut, code = run(t, dir, "expire", "web.events", "--older-than", "0s", "--dry-run", "-o", "json")
		require.Equal(t, 0, code, errOut)
		require.Equal(t, 3, plan(out).Retained, "the table keeps its 3 newest")
		for _, args := range [][]string{{"expire", "web.events", "--retain-last", "0"}, {"optimize", "web.events", "--retain-last", "0", "--dry-run"}} {
			_, errOut, code = run(t, dir, args...)
			require.Equal(t, exitUsage, code, "%v", args)
			require.Contains(t, errOut, "--retain-last must be at least 1")
		}

		// The real run says how many snapshots remain, as the dry run did.
		out, errOut, code = run(t, dir, "expire", "web.events", "--older-than", "0s", "--retain-last", "2", "--dry-run")
		require.Equal(t, 0, code, errOut)
		require.Contains(t, out, "(keeping 2)")
		out, errOut, code = run(t, dir, "expire", "web.events", "--older-than", "0s", "--retain-last", "2")
		require.Equal(t, 0, code, errOut)
		require.Contains(t, out, "(2 retained)")
	})
}

// setTableProperty sets a table property through the catalog.
func setTableProperty(t *testing.T, dir, name, key, value string) {
	t.Helper()
	cat, id, _ := openDemoTable(t, dir, name)
	tbl, err := lake.LoadTable(context.Background(), cat, id)
	require.NoError(t, err)
	tx := tbl.NewTransaction()
	require.NoError(t, tx.SetProperties(iceberg.Properties{key: value}))
	_, err = tx.Commit(context.Background())
	require.NoError(t, err)
}
