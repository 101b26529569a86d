package lake_test

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/apache/iceberg-go"
	"github.com/stretchr/testify/require"

	"github.com/floe-project/floe/internal/testlake"
	"github.com/floe-project/floe/lake"
)

// TestHealthSmallFilesPerPartition: a partition whose whole data is one
// file below the target is as compact as merging can make it, so it is no
// small-file problem; a partition with two or more small files is.
func TestHealthSmallFilesPerPartition(t *testing.T) {
	w := testlake.New(t)
	spec := iceberg.NewPartitionSpec(iceberg.PartitionField{SourceIDs: []int{3}, FieldID: 1000, Name: "ts_day", Transform: iceberg.DayTransform{}})
	tbl := w.CreateTable(t, "db", "days", schema, &spec, nil, nil)
	sc := testlake.ArrowSchema(t, tbl)
	d0 := time.Date(2026, 11, 1, 0, 0, 0, 0, time.UTC)
	// Twelve days, one small file each: what a bin-pack of small day
	// partitions leaves.
	for d := range int64(12) {
		tbl = testlake.Append(t, tbl, batch(t, sc, d*100, d*100+99, "eu", d0.Add(time.Duration(d)*24*time.Hour)))
	}
	h, err := lake.ComputeHealth(loadState(t, w, tbl), lake.HealthOptions{Now: d0})
	require.NoError(t, err)
	require.Equal(t, 12, h.Metrics.DataFiles)
	require.Equal(t, 12, h.Metrics.Partitions)
	require.Zero(t, h.Metrics.SmallFiles, "one file per partition: nothing to merge")
	require.Zero(t, h.Metrics.SmallFileRatio)
	require.NotContains(t, fmt.Sprint(h.Reasons), "small files")

	// Three more files on the first day: four small files there can merge.
	for i := range int64(3) {
		tbl = testlake.Append(t, tbl, batch(t, sc, 5000+i*10, 5000+i*10+9, "eu", d0))
	}
	h, err = lake.ComputeHealth(loadState(t, w, tbl), lake.HealthOptions{Now: d0})
	require.NoError(t, err)
	require.Equal(t, 15, h.Metrics.DataFiles)
	require.Equal(t, 4, h.Metrics.SmallFiles)
	require.InDelta(t, 4.0/15, h.Metrics.SmallFileRatio, 1e-9)

	// Files a learned tree wrote are its own shape, not small: of the first
	// day's four, the two the caller says are in the tree leave two to merge.
	state := loadState(t, w, tbl)
	perDay := map[string]int{}
	for _, f := range state.DataFiles {
		perDay[f.PartitionKey]++
	}
	inTree := map[string]bool{}
	for _, f := range state.DataFiles {
		if perDay[f.PartitionKey] == 4 && len(inTree) < 2 {
			inTree[f.Path] = true
		}
	}
	require.Len(t, inTree, 2)
	h, err = lake.ComputeHealth(state, lake.HealthOptions{Now: d0, InTree: func(f lake.File) bool { return inTree[f.Path] }})
	require.NoError(t, err)
	require.Equal(t, 2, h.Metrics.SmallFiles)
}

// TestHealthJudgesSmallFilesByTheFloor: a table whose target is a few
// hundred bytes (a size written without its unit) gets one-row files;
// judged by its own target they are not small, so health used to call
// the table healthy. Below the floor the judgment uses the floor, unless
// the small target was accepted on purpose.
func TestHealthJudgesSmallFilesByTheFloor(t *testing.T) {
	w := testlake.New(t)
	tbl := w.CreateTable(t, "db", "tiny", schema, nil, iceberg.Properties{"write.target-file-size-bytes": "512"}, nil)
	sc := testlake.ArrowSchema(t, tbl)
	d0 := time.Date(2026, 11, 1, 0, 0, 0, 0, time.UTC)
	for i := range int64(20) {
		tbl = testlake.Append(t, tbl, batch(t, sc, i, i, "eu", d0))
	}
	st := loadState(t, w, tbl)
	for _, f := range st.DataFiles {
		require.Equal(t, int64(1), f.Records)
		require.Greater(t, f.SizeBytes, int64(384), "a one-row file is not below 75%% of 512 bytes")
	}
	h, err := lake.ComputeHealth(st, lake.HealthOptions{Now: d0})
	require.NoError(t, err)
	require.Equal(t, int64(512), h.Metrics.TargetFileSizeBytes)
	require.Equal(t, 20, h.Metrics.SmallFiles)
	require.Equal(t, lake.Critical, h.Status)
	require.Contains(t, fmt.Sprint(h.Reasons), "small files: 20 of 20 data files (100%) are below 75% of 4MiB (the floor: the table's 512B target is below it)")

	h, err = lake.ComputeHealth(st, lake.HealthOptions{Now: d0, AllowSmallTarget: true})
	require.NoError(t, err)
	require.Zero(t, h.Metrics.SmallFiles, "accepted on purpose: judged by the target as it is")
	require.Equal(t, lake.Healthy, h.Status, h.Reasons)
}

// TestHealthLayoutDrift: the drift a caller measured from the table's recorded tree is
// reported with its share of the table's rows, and warns, naming the command that
// re-clusters it, from health.layout_drift.warning on; a tree that no longer fits the
// schema warns whatever the share.
func TestHealthLayoutDrift(t *testing.T) {
	w := testlake.New(t)
	tbl := w.CreateTable(t, "db", "drift", schema, nil, nil, nil)
	sc := testlake.ArrowSchema(t, tbl)
	d0 := time.Date(2026, 11, 1, 0, 0, 0, 0, time.UTC)
	for i := range int64(4) {
		tbl = testlake.Append(t, tbl, batch(t, sc, i*100, i*100+99, "eu", d0))
	}
	st := loadState(t, w, tbl)
	for _, tc := range []struct {
		name   string
		drift  lake.LayoutDrift
		ratio  float64
		reason string // "" for none
	}{
		{name: "below the threshold", drift: lake.LayoutDrift{Layout: "tree(id)", Files: 1, Rows: 60, Command: "floe compact t --layout 'tree(id)'"}, ratio: 0.15},
		{name: "at the threshold", drift: lake.LayoutDrift{Layout: "tree(id)", Files: 1, Rows: 80, Command: "floe compact t --layout 'tree(id)'"}, ratio: 0.2,
			reason: "warning: layout drift: 20% of rows (1 of 4 data files) are not in the table's tree(id) (threshold 20%), and queries cannot skip them by its leaves; floe compact t --layout 'tree(id)' re-clusters 1 file into the tree"},
		{name: "stale tree", drift: lake.LayoutDrift{Layout: "tree(id)", Problem: `column "id" is gone`}, ratio: 0,
			reason: `warning: layout drift: the table's tree(id) cannot take new rows into its leaves: column "id" is gone`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			d := tc.drift
			h, err := lake.ComputeHealth(st, lake.HealthOptions{Now: d0, LayoutDrift: &d, TargetFileSizeBytes: 1024})
			require.NoError(t, err)
			require.NotNil(t, h.Metrics.LayoutDrift)
			require.InDelta(t, tc.ratio, h.Metrics.LayoutDrift.RowsRatio, 1e-9)
			var drift []string
			for _, r := range h.Reasons {
				if strings.Contains(r, "layout drift") {
					drift = append(drift, r)
				}
			}
			if tc.reason == "" {
				require.Empty(t, drift)
				return
			}
			require.Equal(t, []string{tc.reason}, drift)
			require.Equal(t, lake.Warning, h.Status)
		})
	}
	h, err := lake.ComputeHealth(st, lake.HealthOptions{Now: d0})
	require.NoError(t, err)
	require.Nil(t, h.Metrics.LayoutDrift, "no tree recorded, nothing measured")
}
