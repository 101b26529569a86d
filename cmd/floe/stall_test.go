package main

import (
	"context"
	"encoding/json"
	"net/http"
	"net/url"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/floe-project/floe/internal/testlake"
	"github.com/floe-project/floe/lake"
	"github.com/floe-project/floe/rewriter"
)

// TestVerbsFailWithinIOTimeoutOnAStalledStore: with the object store
// accepting connections and answering nothing, every verb that touches it
// fails within a few of the catalog's floe.io-timeout, exits non-zero and
// names the store; nothing is committed.
// Before the bound, each waited for the store to answer again.
func TestVerbsFailWithinIOTimeoutOnAStalledStore(t *testing.T) {
	t.Parallel()
	const timeout = stallTimeout
	w, dir, store := stallLake(t, timeout)
	before := snapshotOf(t, w)

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
	require.Equal(t, before, snapshotOf(t, w), "nothing committed")
}

// stallTimeout is the floe.io-timeout of the stall tests.
const stallTimeout = 500 * time.Millisecond

// stallLake is db.flat on the in-process S3 store, in a config dir whose
// catalog local has floe.io-timeout timeout, and the name errors give the
// store.
func stallLake(t *testing.T, timeout time.Duration) (w *testlake.Warehouse, dir, store string) {
	t.Helper()
	w = testlake.NewS3(t)
	writeFlatTable(t, w, "flat", 6, 200)
	dir = t.TempDir()
	// The last lines of the config are catalog local's properties: one more.
	writeWarehouseConfig(t, dir, w, "    "+lake.PropIOTimeout+": "+timeout.String()+"\n")
	u, err := url.Parse(w.S3.URL)
	require.NoError(t, err)
	return w, dir, "object store " + u.Host + " of catalog local"
}

// snapshotOf is db.flat's current snapshot id.
func snapshotOf(t *testing.T, w *testlake.Warehouse) int64 {
	t.Helper()
	tbl, err := w.Catalog.LoadTable(context.Background(), []string{"db", "flat"})
	require.NoError(t, err)
	return tbl.CurrentSnapshot().SnapshotID
}

// TestCompactStalledMidRunFailsAndIsRecorded: the store stops answering
// once the run has written its lease, mid-run. The compaction fails within
// a few floe.io-timeouts, exits non-zero naming the store, records a failed
// run that names it too, and commits nothing.
func TestCompactStalledMidRunFailsAndIsRecorded(t *testing.T) {
	t.Parallel()
	const timeout = stallTimeout
	w, dir, store := stallLake(t, timeout)
	before := snapshotOf(t, w)

	var leased atomic.Bool
	w.S3.StallAfter(func(r *http.Request) bool {
		if r.Method == http.MethodPut && strings.Contains(r.URL.Path, "/"+rewriter.LeaseDir+"/") {
			leased.Store(true)
			return true
		}
		return false
	}, time.Minute)
	defer w.S3.Stall(0)
	start := time.Now()
	_, errOut, code := run(t, dir, "compact", "db.flat", "--layout", "sort(id)")
	took := time.Since(start)
	require.True(t, leased.Load(), "the run never wrote its lease: %s", errOut)
	require.NotEqual(t, 0, code, errOut)
	require.Less(t, took, 20*timeout, "compact held by the stalled store: %s", errOut)
	require.Contains(t, errOut, store, errOut)
	w.S3.Stall(0)

	out, errOut, code := run(t, dir, "runs", "db.flat", "-o", "json")
	require.Equal(t, 0, code, errOut)
	var runs []struct {
		Status string `json:"status"`
		Error  string `json:"error"`
	}
	require.NoError(t, json.Unmarshal([]byte(out), &runs), out)
	require.Len(t, runs, 1, out)
	require.Equal(t, "failed", runs[0].Status, out)
	require.Contains(t, runs[0].Error, store, out)
	require.Equal(t, before, snapshotOf(t, w), "nothing committed")
}
