package main

import (
	"context"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/floe-project/floe/control"
	"github.com/floe-project/floe/internal/oracle"
	"github.com/floe-project/floe/lake"
	"github.com/floe-project/floe/rewriter"
)

// TestRewriteDeletesVerb: floe rewrite-deletes on the demo's merge-on-read
// table (crm.accounts, position deletes written by iceberg-go): the dry run
// says what the run then does and changes nothing, the run merges the
// delete files, records the step with its report, and leaves the live rows
// (the oracle applies the deletes itself) and the format version as they
// were; a second run finds nothing to do. Bad flags exit 2.
func TestRewriteDeletesVerb(t *testing.T) {
	t.Parallel()
	dir := writeConfig(t)
	_, errOut, code := run(t, dir, demoArgs("--event-commits", "3", "--orders", "20", "--queries", "20")...)
	require.Equal(t, 0, code, errOut)
	state := func() (oracle.Sum, *lake.State) {
		io, _, _ := testIO()
		f := newTestFactory(t, io)
		f.ConfigPath = dir + "/floe.yaml"
		id, err := f.ResolveTable("crm.accounts")
		require.NoError(t, err)
		cat, err := f.Catalog(context.Background(), id.Catalog)
		require.NoError(t, err)
		tbl, err := lake.LoadTable(context.Background(), cat, id)
		require.NoError(t, err)
		s, err := oracle.ChecksumApplied(context.Background(), tbl)
		require.NoError(t, err)
		st, err := lake.LoadState(context.Background(), id, tbl, lake.LoadOptions{})
		require.NoError(t, err)
		return s, st
	}
	before, st := state()
	require.GreaterOrEqual(t, len(st.DeleteFiles), 2, "the demo leaves position delete files")

	out, errOut, code := run(t, dir, "rewrite-deletes", "crm.accounts", "--dry-run", "-o", "json")
	require.Equal(t, 0, code, errOut)
	dry := dryRunOf(t, []byte(out))
	require.Len(t, dry.Steps, 1)
	require.Equal(t, control.StepDeletes, dry.Steps[0].Step)
	plan := dry.Steps[0].Deletes
	require.NotNil(t, plan)
	require.NotEmpty(t, plan.Actions)
	require.Equal(t, rewriter.DeleteActionMerge, plan.Actions[0].Kind)
	_, after := state()
	require.Equal(t, st.Metadata.CurrentSnapshot().SnapshotID, after.Metadata.CurrentSnapshot().SnapshotID, "a dry run changes nothing")

	out, errOut, code = run(t, dir, "rewrite-deletes", "crm.accounts", "--dry-run")
	require.Equal(t, 0, code, errOut)
	require.Contains(t, out, "local.crm.accounts (format 2): would maintain")
	require.Contains(t, out, "merge")

	out, errOut, code = run(t, dir, "rewrite-deletes", "crm.accounts", "-o", "json")
	require.Equal(t, 0, code, errOut)
	res := runResultOf(t, []byte(out))
	require.Len(t, res.Run.Steps, 1)
	rep := reportOf(t, res, control.StepDeletes)
	require.NotNil(t, rep.Deletes)
	require.Equal(t, len(plan.Actions), len(rep.Deletes.Plan.Actions), "the run does what the dry run said")
	for i, a := range plan.Actions {
		require.Equal(t, a.Kind, rep.Deletes.Plan.Actions[i].Kind)
		require.ElementsMatch(t, a.Deletes, rep.Deletes.Plan.Actions[i].Deletes)
	}
	sum, after := state()
	require.Equal(t, before, sum, "live rows, deletes applied by the oracle")
	require.Less(t, len(after.DeleteFiles), len(st.DeleteFiles))
	require.Equal(t, st.Metadata.Version(), after.Metadata.Version())

	out, errOut, code = run(t, dir, "rewrite-deletes", "crm.accounts")
	require.Equal(t, 0, code, errOut)
	require.Contains(t, out, "no delete to maintain")

	_, _, code = run(t, dir, "rewrite-deletes", "crm.accounts", "--equality-delete-ratio", "2")
	require.Equal(t, exitUsage, code)
	out, _, code = run(t, dir, "rewrite-deletes", "--help")
	require.Equal(t, 0, code)
	require.Contains(t, out, "floe rewrite-deletes crm.accounts --dry-run")
}
