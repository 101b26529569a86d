package rewriter_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/apache/iceberg-go"
	"github.com/stretchr/testify/require"

	"github.com/floe-project/floe/internal/testlake"
	"github.com/floe-project/floe/rewriter"
)

// TestOrphansSkipDirectoryMarkers: on S3, the empty objects consoles and
// Hadoop create as folders (keys ending in "/") are directories, as on
// local disk, not orphans: they were listed under a doubled path (…/x/x),
// "deleted" and found again on every run (issue 42). An old orphan beside
// them is deleted once.
func TestOrphansSkipDirectoryMarkers(t *testing.T) {
	ctx := t.Context()
	w := testlake.NewS3(t)
	schema := iceberg.NewSchema(0, iceberg.NestedField{ID: 1, Name: "id", Type: iceberg.PrimitiveTypes.Int64, Required: true})
	tbl := w.CreateTable(t, "web", "events", schema, nil, nil, nil)
	b := array.NewInt64Builder(memory.DefaultAllocator)
	b.AppendValues([]int64{1, 2, 3}, nil)
	col := b.NewArray()
	defer col.Release()
	rec := array.NewRecordBatch(testlake.ArrowSchema(t, tbl), []arrow.Array{col}, 3)
	defer rec.Release()
	tbl = testlake.Append(t, tbl, rec)

	now := time.Now()
	old := now.Add(-10 * 24 * time.Hour)
	markers := []string{tbl.Location() + "/data/x/", tbl.Location() + "/data/"}
	for _, m := range markers {
		w.Plant(t, m, nil, old)
	}
	stray := tbl.Location() + "/data/x/stray.parquet"
	w.Plant(t, stray, []byte("stray"), old)

	opts := rewriter.OrphanOptions{Now: func() time.Time { return now }}
	plan, err := rewriter.PlanOrphans(ctx, tbl, opts)
	require.NoError(t, err)
	var got []string
	for _, f := range plan.Files {
		got = append(got, f.Path)
		require.NotContains(t, f.Path, "/x/x", "a directory marker listed under a doubled path")
	}
	require.Equal(t, []string{stray}, got)
	res, err := rewriter.DeleteOrphans(ctx, tbl, plan, 2)
	require.NoError(t, err)
	require.Equal(t, []string{stray}, res.Deleted)
	require.False(t, w.Exists(t, stray))
	for _, m := range markers {
		require.True(t, w.Exists(t, m), "marker %s is left alone", m)
	}

	again, err := rewriter.PlanOrphans(ctx, tbl, opts)
	require.NoError(t, err)
	require.Empty(t, again.Files, "nothing is found again")
	require.False(t, strings.HasSuffix(tbl.Location(), "/"))
}

// TestCancelledRunReleasesLeaseOnS3: a run whose context is cancelled
// (Ctrl-C, SIGTERM, a daemon cancel) still renews and deletes its lease
// file: an object store's IO keeps the context it was opened with, and the
// release used the run's (issue 42: "HeadObject, context canceled").
func TestCancelledRunReleasesLeaseOnS3(t *testing.T) {
	w := testlake.NewS3(t)
	schema := iceberg.NewSchema(0, iceberg.NestedField{ID: 1, Name: "id", Type: iceberg.PrimitiveTypes.Int64, Required: true})
	tbl := w.CreateTable(t, "web", "events", schema, nil, nil, nil)
	ctx, cancel := context.WithCancel(t.Context())
	lease, err := rewriter.AcquireLease(ctx, tbl, rewriter.LeaseOptions{Table: "web.events", Operation: "compact"})
	require.NoError(t, err)
	path := lease.Record().Path
	require.True(t, w.Exists(t, path))
	cancel()
	require.NoError(t, lease.Release())
	require.False(t, w.Exists(t, path), "the cancelled run's lease is deleted")
	leases, err := rewriter.Leases(t.Context(), tbl)
	require.NoError(t, err)
	require.Empty(t, leases)
}
