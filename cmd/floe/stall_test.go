package main

import (
	"context"
	"net/url"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/floe-project/floe/internal/testlake"
	"github.com/floe-project/floe/lake"
)

// TestVerbsFailWithinIOTimeoutOnAStalledStore: with the object store
// accepting connections and answering nothing, every verb that touches it
// fails within a few of the catalog's floe.io-timeout, exits non-zero and
// names the store; nothing is committed.
// Before the bound, each waited for the store to answer again.
func TestVerbsFailWithinIOTimeoutOnAStalledStore(t *testing.T) {
	const timeout = 500 * time.Millisecond
	w := testlake.NewS3(t)
	writeFlatTable(t, w, "flat", 6, 200)
	dir := t.TempDir()
	// The last lines of the config are catalog local's properties: one more.
	writeWarehouseConfig(t, dir, w, "    "+lake.PropIOTimeout+": "+timeout.String()+"\n")
	before := func() int64 {
		tbl, err := w.Catalog.LoadTable(context.Background(), []string{"db", "flat"})
		require.NoError(t, err)
		return tbl.CurrentSnapshot().SnapshotID
	}()
	u, err := url.Parse(w.S3.URL)
	require.NoError(t, err)
	store := "object store " + u.Host + " of catalog local"

	for _, args := range [][]string{
		{"health", "db.flat"},
		{"compact", "db.flat"},
		{"expire", "db.flat"},
		{"orphans", "db.flat"},
		{"rewrite-manifests", "db.flat"},
		{"simulate", "db.flat", "--layout", "sort(id)"},
		{"doctor", "--timeout", "2s"},
	} {
		t.Run(args[0], func(t *testing.T) {
			w.S3.Stall(time.Minute)
			defer w.S3.Stall(0)
			start := time.Now()
			out, errOut, code := run(t, dir, args...)
			took := time.Since(start)
			require.NotEqual(t, 0, code, errOut)
			require.Less(t, took, 20*timeout, "%s held by the stalled store: %s", args[0], errOut)
			if args[0] == "doctor" {
				// doctor's store checks are bounded by --timeout and name
				// the store's location in its report.
				require.Contains(t, out, "s3://"+testlake.S3Bucket+"/warehouse", out)
				return
			}
			require.Contains(t, errOut, store, errOut)
			require.Contains(t, errOut, "no progress within "+timeout.String(), errOut)
		})
	}

	// The store answers again: nothing was committed, and no run started
	// (each verb failed loading the table, before a run is recorded).
	out, errOut, code := run(t, dir, "runs", "db.flat", "-o", "json")
	require.Equal(t, 0, code, errOut)
	require.JSONEq(t, "[]", out)
	tbl, err := w.Catalog.LoadTable(context.Background(), []string{"db", "flat"})
	require.NoError(t, err)
	require.Equal(t, before, tbl.CurrentSnapshot().SnapshotID, "nothing committed")
}
