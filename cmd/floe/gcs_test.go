package main

import (
	"context"
	"encoding/json"
	"net/http"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/floe-project/floe/internal/testlake"
	"github.com/floe-project/floe/internal/testlake/gcslake"
	"github.com/floe-project/floe/lake"
	"github.com/floe-project/floe/rewriter"
)

// TestVerbsOnGCS: on a gs:// warehouse (the in-process GCS server), floe
// tables lists the table, floe health judges it and floe compact rewrites
// it through floe's GCS IO; the compacted table's data files, read from
// the server's backend, hold every row. Then the store stops answering
// once a compaction has written its lease: the run fails within a few
// floe.io-timeouts naming the store, is recorded as failed, and commits
// nothing.
func TestVerbsOnGCS(t *testing.T) {
	t.Parallel()
	const files, rows = 6, 200
	w, g := gcslake.New(t)
	writeFlatTable(t, w, "flat", files, rows)
	dir := t.TempDir()
	writeWarehouseConfig(t, dir, w, "    "+lake.PropIOTimeout+": "+stallTimeout.String()+"\n")

	out, errOut, code := run(t, dir, "tables")
	require.Equal(t, 0, code, errOut)
	require.Contains(t, out, "local.db.flat", out)

	out, errOut, code = run(t, dir, "health", "db.flat", "-o", "json")
	require.Equal(t, 0, code, errOut)
	var hs []lake.Health
	require.NoError(t, json.Unmarshal([]byte(out), &hs), out)
	require.Len(t, hs, 1, out)
	require.Equal(t, files, hs[0].Metrics.DataFiles, out)
	require.EqualValues(t, files*rows, hs[0].Metrics.Records, out)

	_, errOut, code = run(t, dir, "compact", "db.flat", "--layout", "sort(id)", "--target-file-size", "4MiB")
	require.Equal(t, 0, code, errOut)
	st := flatState(t, w)
	require.Less(t, len(st.DataFiles), files, "compacted")
	var n, sum, want int64
	for _, f := range st.DataFiles {
		fn, fs := testlake.SumFirstColumn(t, g.Get(t, f.Path))
		n, sum = n+fn, sum+fs
	}
	for i := range files {
		for j := range rows {
			want += int64((files-i)*rows + j)
		}
	}
	require.EqualValues(t, files*rows, n, "rows of the compacted table, read from the store")
	require.Equal(t, want, sum, "ids of the compacted table, read from the store")

	// The store stalls once the next run has written its lease.
	before := snapshotOf(t, w)
	var leased atomic.Bool
	g.StallAfter(func(r *http.Request) bool {
		// An upload names its object in the query.
		if strings.Contains(r.URL.Query().Get("name"), "/"+rewriter.LeaseDir+"/") {
			leased.Store(true)
			return true
		}
		return false
	}, time.Minute)
	defer g.Stall(0)
	start := time.Now()
	_, errOut, code = run(t, dir, "compact", "db.flat", "--layout", "sort(tenant, id)", "--target-file-size", "4MiB")
	took := time.Since(start)
	require.True(t, leased.Load(), "the run never wrote its lease: %s", errOut)
	require.NotEqual(t, 0, code, errOut)
	require.Less(t, took, 20*stallTimeout, "compact held by the stalled store: %s", errOut)
	store := "object store " + strings.TrimPrefix(g.URL, "http://") + " of catalog local"
	require.Contains(t, errOut, store, errOut)
	require.Contains(t, errOut, "no progress within "+stallTimeout.String(), errOut)
	g.Stall(0)

	out, errOut, code = run(t, dir, "runs", "db.flat", "-o", "json")
	require.Equal(t, 0, code, errOut)
	var runs []struct {
		Status string `json:"status"`
		Error  string `json:"error"`
	}
	require.NoError(t, json.Unmarshal([]byte(out), &runs), out)
	require.NotEmpty(t, runs, out)
	require.Equal(t, "failed", runs[0].Status, out)
	require.Contains(t, runs[0].Error, store, out)
	require.Equal(t, before, snapshotOf(t, w), "nothing committed")
}

// flatState is db.flat's state as floe reads it.
func flatState(t *testing.T, w *testlake.Warehouse) *lake.State {
	t.Helper()
	ctx := context.Background()
	id := lake.Ident{Catalog: w.Name, Namespace: []string{"db"}, Name: "flat"}
	tbl, err := lake.LoadTable(ctx, w.Catalog, id)
	require.NoError(t, err)
	st, err := lake.LoadState(ctx, id, tbl, lake.LoadOptions{})
	require.NoError(t, err)
	return st
}
