package lake_test

import (
	"context"
	"fmt"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/apache/iceberg-go"
	"github.com/apache/iceberg-go/catalog"
	"github.com/apache/iceberg-go/table"
	"github.com/stretchr/testify/require"

	"github.com/floe-project/floe/internal/testlake"
	"github.com/floe-project/floe/lake"
)

var schema = iceberg.NewSchema(0,
	iceberg.NestedField{ID: 1, Name: "id", Type: iceberg.PrimitiveTypes.Int64, Required: true},
	iceberg.NestedField{ID: 2, Name: "Region", Type: iceberg.PrimitiveTypes.String},
	iceberg.NestedField{ID: 3, Name: "ts", Type: iceberg.PrimitiveTypes.TimestampTz},
)

// batch builds rows with ids lo..hi inclusive, region r, all at day d.
func batch(t *testing.T, sc *arrow.Schema, lo, hi int64, region string, day time.Time) arrow.RecordBatch {
	t.Helper()
	b := array.NewRecordBuilder(memory.DefaultAllocator, sc)
	defer b.Release()
	for id := lo; id <= hi; id++ {
		b.Field(0).(*array.Int64Builder).Append(id)
		b.Field(1).(*array.StringBuilder).Append(region)
		ts, err := arrow.TimestampFromTime(day.Add(time.Duration(id)*time.Second), arrow.Microsecond)
		require.NoError(t, err)
		b.Field(2).(*array.TimestampBuilder).Append(ts)
	}
	return b.NewRecordBatch()
}

func loadState(t *testing.T, w *testlake.Warehouse, tbl *table.Table) *lake.State {
	t.Helper()
	id := lake.Ident{Catalog: w.Name, Namespace: tbl.Identifier()[:1], Name: tbl.Identifier()[1]}
	loaded, err := lake.LoadTable(context.Background(), w.Catalog, id)
	require.NoError(t, err)
	st, err := lake.LoadState(context.Background(), id, loaded, lake.LoadOptions{})
	require.NoError(t, err)
	return st
}

func summaryInt(t *testing.T, st *lake.State, key string) int {
	t.Helper()
	n, err := strconv.Atoi(st.Current.Summary.Properties[key])
	require.NoError(t, err, key)
	return n
}

func TestHealthOnKnownOverlaps(t *testing.T) {
	w := testlake.New(t)
	order, err := table.NewSortOrder(1, []table.SortField{{SourceIDs: []int{1}, Transform: iceberg.IdentityTransform{}, Direction: table.SortASC, NullOrder: table.NullsFirst}})
	require.NoError(t, err)
	tbl := w.CreateTable(t, "db", "t", schema, nil, iceberg.Properties{"write.target-file-size-bytes": "1048576"}, &order)
	sc := testlake.ArrowSchema(t, tbl)
	day := time.Date(2026, 11, 1, 0, 0, 0, 0, time.UTC)
	// Ranges on id: [0,9] [5,14] overlap; [20,29] [25,34] overlap; [40,49] alone.
	for _, r := range [][2]int64{{0, 9}, {5, 14}, {20, 29}, {25, 34}, {40, 49}} {
		tbl = testlake.Append(t, tbl, batch(t, sc, r[0], r[1], "eu", day))
	}
	st := loadState(t, w, tbl)
	now := time.Now()
	th := lake.DefaultThresholds()
	th.MinFilesForSmallFileCheck = 5
	h, err := lake.ComputeHealth(st, lake.HealthOptions{Now: now, Columns: []string{"region"}, Thresholds: &th})
	require.NoError(t, err)
	m := h.Metrics
	require.Equal(t, 5, m.DataFiles)
	require.Equal(t, summaryInt(t, st, "total-data-files"), m.DataFiles)
	require.Equal(t, int64(summaryInt(t, st, "total-records")), m.Records)
	require.Equal(t, int64(50), m.Records)
	require.Equal(t, 5, m.SmallFiles)
	require.InDelta(t, 1.0, m.SmallFileRatio, 1e-9)
	require.Equal(t, int64(1048576), m.TargetFileSizeBytes)
	require.Equal(t, 5, m.Snapshots)
	require.Equal(t, 5, m.Manifests)
	require.InDelta(t, 1.0, m.EntriesPerManifest, 1e-9)
	require.Equal(t, int64(-1), m.LastCompactionAgeSec)
	require.Equal(t, 1, m.Partitions)
	require.Len(t, m.Clustering, 2)
	// Sort-order column first, then the requested one, spelled as the schema does.
	id, region := m.Clustering[0], m.Clustering[1]
	require.Equal(t, "id", id.Column)
	require.Equal(t, 5, id.Files)
	require.InDelta(t, 1.8, id.AverageDepth, 1e-9)    // (2+2+2+2+1)/5
	require.InDelta(t, 0.8, id.AverageOverlaps, 1e-9) // (1+1+1+1+0)/5
	require.InDelta(t, 0.8, id.OverlapFraction, 1e-9)
	require.Equal(t, "Region", region.Column)
	// Every file holds only "eu": single-value files at one value do not
	// overlap (no layout could separate them), so depth 1.
	require.InDelta(t, 1.0, region.AverageDepth, 1e-9)
	require.InDelta(t, 0.0, region.AverageOverlaps, 1e-9)
	// 80% of files overlap on the sort column: a warning with the reason.
	require.Equal(t, lake.Critical, h.Status) // small files: 100%
	require.Contains(t, fmt.Sprint(h.Reasons), "small files: 5 of 5")
	require.Contains(t, fmt.Sprint(h.Reasons), "clustering: 80% of files overlap on sort column id")

	_, err = lake.ComputeHealth(st, lake.HealthOptions{Columns: []string{"nope"}})
	require.ErrorContains(t, err, `no column "nope"`)
}

func TestLoadStateCollapsesSplitTasks(t *testing.T) {
	w := testlake.New(t)
	// Tiny row groups and split size: iceberg-go plans several tasks per file.
	props := iceberg.Properties{"write.parquet.row-group-limit": "100", "read.split.target-size": "2048"}
	tbl := w.CreateTable(t, "db", "big", schema, nil, props, nil)
	sc := testlake.ArrowSchema(t, tbl)
	day := time.Date(2026, 11, 1, 0, 0, 0, 0, time.UTC)
	tbl = testlake.Append(t, tbl, batch(t, sc, 0, 4999, "us", day))
	tbl = testlake.Append(t, tbl, batch(t, sc, 5000, 9999, "eu", day))
	tasks, err := tbl.Scan().PlanFiles(context.Background())
	require.NoError(t, err)
	paths := map[string]bool{}
	for _, task := range tasks {
		paths[task.File.FilePath()] = true
	}
	require.Greater(t, len(tasks), len(paths), "the table must be split into several tasks per file for this test to mean anything")
	st := loadState(t, w, tbl)
	require.Len(t, st.DataFiles, len(paths))
	require.Equal(t, summaryInt(t, st, "total-data-files"), len(st.DataFiles))
	var records int64
	for _, f := range st.DataFiles {
		records += f.Records
		require.NotNil(t, f.Lower[1])
		require.NotNil(t, f.Upper[1])
	}
	require.Equal(t, int64(10000), records)
}

func TestHealthPartitionsDeletesAndSnapshots(t *testing.T) {
	w := testlake.New(t)
	spec := iceberg.NewPartitionSpec(iceberg.PartitionField{SourceIDs: []int{3}, FieldID: 1000, Name: "ts_day", Transform: iceberg.DayTransform{}})
	tbl := w.CreateTable(t, "db", "p", schema, &spec, iceberg.Properties{"write.delete.mode": "merge-on-read", "format-version": "2"}, nil)
	sc := testlake.ArrowSchema(t, tbl)
	d0 := time.Date(2026, 11, 1, 0, 0, 0, 0, time.UTC)
	// Day 0 gets 4 files, days 1 and 2 one each.
	for i := range int64(4) {
		tbl = testlake.Append(t, tbl, batch(t, sc, i*10, i*10+9, "eu", d0))
	}
	tbl = testlake.Append(t, tbl, batch(t, sc, 100, 109, "eu", d0.Add(24*time.Hour)))
	tbl = testlake.Append(t, tbl, batch(t, sc, 200, 209, "eu", d0.Add(48*time.Hour)))
	// A merge-on-read delete of one row writes a position delete file.
	tbl, err := tbl.Delete(context.Background(), iceberg.EqualTo(iceberg.Reference("id"), int64(5)), nil)
	require.NoError(t, err)

	st := loadState(t, w, tbl)
	h, err := lake.ComputeHealth(st, lake.HealthOptions{Now: time.Now()})
	require.NoError(t, err)
	m := h.Metrics
	require.Equal(t, summaryInt(t, st, "total-data-files"), m.DataFiles)
	require.Equal(t, summaryInt(t, st, "total-delete-files"), m.DeleteFiles)
	require.Equal(t, 6, m.DataFiles)
	require.Equal(t, 1, m.DeleteFiles)
	require.Equal(t, 1, m.PositionDeleteFiles+m.DeletionVectors)
	require.InDelta(t, 1.0/6, m.DeleteToDataRatio, 1e-9)
	require.Equal(t, 3, m.Partitions)
	require.InDelta(t, 4.0, m.PartitionFileSkew, 1e-9) // max 4 / median 1
	require.Equal(t, 7, m.Snapshots)
	keys := []string{}
	for _, p := range st.Partitions {
		keys = append(keys, p.Key)
	}
	require.Equal(t, []string{"ts_day=2026-11-01", "ts_day=2026-11-02", "ts_day=2026-11-03"}, keys)
	require.Equal(t, lake.Warning, h.Status)
	require.Contains(t, fmt.Sprint(h.Reasons), "delete files: 1 for 6 data files")
}

func TestLoadTableMissingReadsAsOneSentence(t *testing.T) {
	w := testlake.New(t)
	id := lake.Ident{Catalog: "local", Namespace: []string{"web"}, Name: "nosuch"}
	_, err := lake.LoadTable(context.Background(), w.Catalog, id)
	require.EqualError(t, err, "no such table: local.web.nosuch")
	require.ErrorIs(t, err, lake.ErrNoSuchTable)
	require.ErrorIs(t, err, catalog.ErrNoSuchTable)
	var nst *lake.NoSuchTableError
	require.ErrorAs(t, err, &nst)
	require.Equal(t, id, nst.Table)
}

// TestHealthFreshnessSLA: a table whose last successful compaction is
// older than the policy's freshness SLA is warning, with the age and the
// SLA in the reason; a floe compaction that committed nothing counts.
func TestHealthFreshnessSLA(t *testing.T) {
	w := testlake.New(t)
	tbl := w.CreateTable(t, "db", "fresh", schema, nil, nil, nil)
	sc := testlake.ArrowSchema(t, tbl)
	tbl = testlake.Append(t, tbl, batch(t, sc, 0, 9, "eu", time.Date(2026, 11, 1, 0, 0, 0, 0, time.UTC)))
	st := loadState(t, w, tbl)
	var first time.Time
	for _, s := range st.Snapshots {
		if first.IsZero() || s.Timestamp.Before(first) {
			first = s.Timestamp
		}
	}
	now := first.Add(63 * time.Hour)
	th := lake.DefaultThresholds()
	th.FreshnessSLA = 48 * time.Hour
	tests := []struct {
		name string
		last time.Time
		want string
	}{
		// The one commit (small files) has waited since it was made.
		{"never compacted", time.Time{}, "warning: freshness: writes have waited 63 h for a compaction (never compacted), SLA 48 h"},
		{"stale", now.Add(-64 * time.Hour), "warning: freshness: writes have waited 63 h for a compaction (last compaction 64 h ago), SLA 48 h"},
		// A compaction since the commit covers it, however long ago.
		{"fresh", now.Add(-time.Hour), ""},
		{"covered long ago, nothing written since", now.Add(-62 * time.Hour), ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			h, err := lake.ComputeHealth(st, lake.HealthOptions{Now: now, Thresholds: &th, LastCompaction: tt.last})
			require.NoError(t, err)
			if tt.want == "" {
				for _, r := range h.Reasons {
					require.NotContains(t, r, "freshness")
				}
				return
			}
			require.Contains(t, h.Reasons, tt.want)
			require.Equal(t, lake.Warning, h.Status)
		})
	}
	// No SLA, no freshness reason.
	h, err := lake.ComputeHealth(st, lake.HealthOptions{Now: now})
	require.NoError(t, err)
	for _, r := range h.Reasons {
		require.NotContains(t, r, "freshness")
	}
}

// TestHealthOverlapOnTheLeadingSortColumn: files sorted by (Region, id)
// are ordered by Region across files; within one region every file spans
// its own ids, so their id ranges overlap by design. Only the leading
// column's overlap says the table drifted: floe's own sort(tenant_id,
// event_type) rewrite left the demo's web.events warning for good on its
// second column. The same files under the order (id, Region) overlap on
// the leading column and warn.
func TestHealthOverlapOnTheLeadingSortColumn(t *testing.T) {
	for _, tc := range []struct {
		name  string
		order []int // source ids of the sort order
		warn  string
	}{
		{"second column overlaps", []int{2, 1}, ""},
		{"leading column overlaps", []int{1, 2}, "clustering: 100% of files overlap on sort column id"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			w := testlake.New(t)
			var fields []table.SortField
			for _, id := range tc.order {
				fields = append(fields, table.SortField{SourceIDs: []int{id}, Transform: iceberg.IdentityTransform{}, Direction: table.SortASC, NullOrder: table.NullsFirst})
			}
			order, err := table.NewSortOrder(1, fields)
			require.NoError(t, err)
			tbl := w.CreateTable(t, "db", "t", schema, nil, iceberg.Properties{"write.target-file-size-bytes": "1048576"}, &order)
			sc := testlake.ArrowSchema(t, tbl)
			day := time.Date(2026, 11, 1, 0, 0, 0, 0, time.UTC)
			for _, region := range []string{"a", "b", "c", "d", "e"} {
				tbl = testlake.Append(t, tbl, batch(t, sc, 0, 9, region, day))
			}
			th := lake.DefaultThresholds()
			th.MinFilesForSmallFileCheck = 5
			h, err := lake.ComputeHealth(loadState(t, w, tbl), lake.HealthOptions{Thresholds: &th})
			require.NoError(t, err)
			require.Len(t, h.Metrics.Clustering, 2, "both columns are measured")
			var clustering []string
			for _, r := range h.Reasons {
				if strings.Contains(r, "clustering") {
					clustering = append(clustering, r)
				}
			}
			if tc.warn == "" {
				require.Empty(t, clustering, h.Reasons)
				return
			}
			require.Len(t, clustering, 1, h.Reasons)
			require.Contains(t, clustering[0], tc.warn)
		})
	}
}
