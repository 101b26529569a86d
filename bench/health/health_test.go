// Package health benchmarks floe's table health on a large table: 50,000
// data files written by 2,000 commits (so 2,000 snapshots and manifests),
// against iceberg-go's own scan planning over the same metadata.
package health_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"testing"
	"time"

	"github.com/apache/iceberg-go"
	"github.com/apache/iceberg-go/table"
	"github.com/stretchr/testify/require"

	"github.com/floe-project/floe/bench"
	"github.com/floe-project/floe/internal/testlake"
	"github.com/floe-project/floe/lake"
)

var schema = iceberg.NewSchema(0,
	iceberg.NestedField{ID: 1, Name: "id", Type: iceberg.PrimitiveTypes.Int64, Required: true},
	iceberg.NestedField{ID: 2, Name: "tenant_id", Type: iceberg.PrimitiveTypes.Int32, Required: true},
	iceberg.NestedField{ID: 3, Name: "ts", Type: iceberg.PrimitiveTypes.TimestampTz, Required: true},
)

func lit(t testing.TB, l iceberg.Literal) []byte {
	b, err := l.MarshalBinary()
	require.NoError(t, err)
	return b
}

// build commits `commits` snapshots of `perCommit` metadata-only data files
// each (health reads manifests, never data files, so none are written).
func build(b *testing.B, commits, perCommit int) *table.Table {
	w := testlake.New(b)
	spec := iceberg.NewPartitionSpec(iceberg.PartitionField{SourceIDs: []int{3}, FieldID: 1000, Name: "ts_day", Transform: iceberg.DayTransform{}})
	// Manifest merging keeps each commit's duplicate-file validation from
	// reading every earlier manifest (quadratic in commits otherwise); the
	// table still has one snapshot per commit.
	tbl := w.CreateTable(b, "bench", "events", schema, &spec, iceberg.Properties{
		"format-version": "2", "commit.manifest-merge.enabled": "true", "commit.manifest.min-count-to-merge": "50",
	}, nil)
	ctx := context.Background()
	day0 := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	var id int64
	for c := range commits {
		day := int32(day0.Unix()/86400) + int32(c/100)
		files := make([]iceberg.DataFile, 0, perCommit)
		for f := range perCommit {
			bld, err := iceberg.NewDataFileBuilder(spec, iceberg.EntryContentData,
				fmt.Sprintf("%s/data/ts_day=%d/c%05d-f%03d.parquet", tbl.Location(), day, c, f), iceberg.ParquetFile,
				map[int]any{1000: day}, nil, nil, 1000, 64<<10)
			require.NoError(b, err)
			lo := int64(day)*86400_000_000 + int64(f)*1_000_000
			bld.LowerBoundValues(map[int][]byte{1: lit(b, iceberg.Int64Literal(id)), 2: lit(b, iceberg.Int32Literal(int32(f%50))), 3: lit(b, iceberg.TimestampLiteral(lo))})
			bld.UpperBoundValues(map[int][]byte{1: lit(b, iceberg.Int64Literal(id+999)), 2: lit(b, iceberg.Int32Literal(int32(f%50+10))), 3: lit(b, iceberg.TimestampLiteral(lo+3_600_000_000))})
			bld.NullValueCounts(map[int]int64{1: 0, 2: 0, 3: 0})
			files = append(files, bld.Build())
			id += 1000
		}
		tx := tbl.NewTransaction()
		require.NoError(b, tx.AddDataFiles(ctx, files, nil))
		var err error
		tbl, err = tx.Commit(ctx)
		require.NoError(b, err)
		if (c+1)%250 == 0 {
			b.Logf("built %d/%d commits", c+1, commits)
		}
	}
	return tbl
}

func envInt(name string, def int) int {
	if v, err := strconv.Atoi(os.Getenv(name)); err == nil && v > 0 {
		return v
	}
	return def
}

func BenchmarkHealth(b *testing.B) {
	// FLOE_BENCH_COMMITS and FLOE_BENCH_FILES_PER_COMMIT override the
	// shape: building 2,000 snapshots through iceberg-go's SQL catalog is
	// slow and memory-hungry (every commit rewrites the whole metadata).
	commits, perCommit := envInt("FLOE_BENCH_COMMITS", 2000), envInt("FLOE_BENCH_FILES_PER_COMMIT", 25)
	if testing.Short() {
		commits, perCommit = 40, 25
	}
	start := time.Now()
	tbl := build(b, commits, perCommit)
	buildTime := time.Since(start)
	ctx := context.Background()
	id := lake.Ident{Catalog: "local", Namespace: []string{"bench"}, Name: "events"}
	var floeTimes, planTimes []time.Duration
	var h lake.Health
	const rounds = 3
	b.ResetTimer()
	for b.Loop() {
		floeTimes, planTimes = nil, nil
		for range rounds {
			t0 := time.Now()
			st, err := lake.LoadState(ctx, id, tbl, lake.LoadOptions{})
			require.NoError(b, err)
			h, err = lake.ComputeHealth(st, lake.HealthOptions{Columns: []string{"tenant_id", "ts"}})
			require.NoError(b, err)
			floeTimes = append(floeTimes, time.Since(t0))

			t0 = time.Now()
			tasks, err := tbl.Scan().PlanFiles(ctx)
			require.NoError(b, err)
			require.Len(b, tasks, commits*perCommit)
			planTimes = append(planTimes, time.Since(t0))
		}
	}
	b.StopTimer()
	require.Equal(b, commits*perCommit, h.Metrics.DataFiles)
	require.Equal(b, commits, h.Metrics.Snapshots)
	fm, pm := bench.Median(floeTimes), bench.Median(planTimes)
	b.ReportMetric(float64(h.Metrics.DataFiles), "files")
	b.ReportMetric(fm.Seconds(), "health_s")
	b.ReportMetric(pm.Seconds()/fm.Seconds(), "planfiles/health")
	r := bench.NewResult("health")
	r.Params["data_files"] = h.Metrics.DataFiles
	r.Params["snapshots"] = h.Metrics.Snapshots
	r.Params["manifests"] = h.Metrics.Manifests
	r.Params["rounds"] = rounds
	r.Figures["floe_health_median_s"] = fm.Seconds()
	r.Figures["icebergo_planfiles_median_s"] = pm.Seconds()
	r.Figures["planfiles_over_health_ratio"] = pm.Seconds() / fm.Seconds()
	r.Figures["table_build_s"] = buildTime.Seconds()
	r.Notes = append(r.Notes, "health = LoadState (every manifest once, in parallel, bounds decoded) + ComputeHealth with clustering on 2 columns; peer = iceberg-go Scan().PlanFiles() over the same snapshot")
	if testing.Short() {
		r.Name = "health-short"
	}
	path, err := r.Write()
	require.NoError(b, err)
	fmt.Fprintf(os.Stderr, "health: %d files, %d snapshots: floe median %.3fs, iceberg-go PlanFiles median %.3fs (ratio %.2f×); wrote %s\n",
		h.Metrics.DataFiles, h.Metrics.Snapshots, fm.Seconds(), pm.Seconds(), pm.Seconds()/fm.Seconds(), filepath.Base(path))
}
