// Package health benchmarks floe's table health on a large table: 50,000
// data files in 2,000 append snapshots (one manifest each, written directly),
// against iceberg-go's own scan planning over the same metadata.
package health_test

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/apache/iceberg-go"
	iceio "github.com/apache/iceberg-go/io"
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

// build writes the table's history directly, as an append-only table
// would have it after `commits` commits of `perCommit` metadata-only data
// files each (health reads manifests, never data files, so none are
// written): one manifest per snapshot, and each snapshot's manifest list
// naming every manifest so far. The snapshots go to the catalog in one
// commit; committing them one by one through iceberg-go rewrites the whole
// metadata each time, which at 2,000 commits does not finish here.
func build(b *testing.B, commits, perCommit int) *table.Table {
	w := testlake.New(b)
	spec := iceberg.NewPartitionSpec(iceberg.PartitionField{SourceIDs: []int{3}, FieldID: 1000, Name: "ts_day", Transform: iceberg.DayTransform{}})
	tbl := w.CreateTable(b, "bench", "events", schema, &spec, iceberg.Properties{"format-version": "2"}, nil)
	ctx := context.Background()
	fsys, err := tbl.FS(ctx)
	require.NoError(b, err)
	wfs, ok := fsys.(iceio.WriteFileIO)
	require.True(b, ok, "table IO %T cannot write", fsys)
	meta := tbl.Metadata()
	spec, schemaID := meta.PartitionSpec(), meta.CurrentSchema().ID
	metaDir := strings.TrimSuffix(tbl.Location(), "/") + "/metadata"
	write := func(path string, fn func(io.Writer) error) {
		f, err := wfs.Create(path)
		require.NoError(b, err)
		bw := bufio.NewWriterSize(f, 256<<10)
		require.NoError(b, fn(bw))
		require.NoError(b, bw.Flush())
		require.NoError(b, f.Close())
	}

	day0 := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	// Timestamps may not precede the table's creation by more than a
	// minute, so the history is stamped from now on, 1 ms apart.
	ts0 := time.Now().UnixMilli()
	manifests := make([]iceberg.ManifestFile, 0, commits)
	updates := make([]table.Update, 0, commits+1)
	var id, totalRecords int64
	var parent *int64
	for c := range commits {
		snapID, seq := int64(c+1), int64(c+1)
		day := int32(day0.Unix()/86400) + int32(c/100)
		entries := make([]iceberg.ManifestEntry, 0, perCommit)
		var added int64
		for f := range perCommit {
			bld, err := iceberg.NewDataFileBuilder(spec, iceberg.EntryContentData,
				fmt.Sprintf("%s/data/ts_day=%d/c%05d-f%03d.parquet", tbl.Location(), day, c, f), iceberg.ParquetFile,
				map[int]any{1000: day}, nil, nil, 1000, 64<<10)
			require.NoError(b, err)
			lo := int64(day)*86400_000_000 + int64(f)*1_000_000
			bld.LowerBoundValues(map[int][]byte{1: lit(b, iceberg.Int64Literal(id)), 2: lit(b, iceberg.Int32Literal(int32(f%50))), 3: lit(b, iceberg.TimestampLiteral(lo))})
			bld.UpperBoundValues(map[int][]byte{1: lit(b, iceberg.Int64Literal(id+999)), 2: lit(b, iceberg.Int32Literal(int32(f%50+10))), 3: lit(b, iceberg.TimestampLiteral(lo+3_600_000_000))})
			bld.NullValueCounts(map[int]int64{1: 0, 2: 0, 3: 0})
			df := bld.Build()
			entries = append(entries, iceberg.NewManifestEntry(iceberg.EntryStatusADDED, &snapID, &seq, &seq, df))
			added += df.Count()
			id += 1000
		}
		totalRecords += added

		path := fmt.Sprintf("%s/m%05d-%d.avro", metaDir, c, snapID)
		var mf iceberg.ManifestFile
		write(path, func(out io.Writer) (err error) {
			mf, err = iceberg.WriteManifest(path, out, 2, spec, meta.CurrentSchema(), snapID, entries)
			return err
		})
		// The list writer assigns a sequence number only to the manifest its
		// own snapshot adds, and not in place, so later lists need the
		// manifest with its number already set.
		manifests = append(manifests, iceberg.NewManifestFile(2, mf.FilePath(), mf.Length(), mf.PartitionSpecID(), snapID).
			SequenceNum(seq, seq).Content(iceberg.ManifestContentData).
			AddedFiles(mf.AddedDataFiles()).AddedRows(mf.AddedRows()).Partitions(mf.Partitions()).Build())

		listPath := fmt.Sprintf("%s/snap-%d-%d.avro", metaDir, snapID, c)
		write(listPath, func(out io.Writer) error {
			return iceberg.WriteManifestList(2, out, snapID, parent, &seq, 0, manifests)
		})
		sid := schemaID
		updates = append(updates, table.NewAddSnapshotUpdate(&table.Snapshot{
			SnapshotID: snapID, ParentSnapshotID: parent, SequenceNumber: seq,
			TimestampMs: ts0 + int64(c), ManifestList: listPath, SchemaID: &sid,
			Summary: &table.Summary{Operation: table.OpAppend, Properties: iceberg.Properties{
				"added-data-files": strconv.Itoa(perCommit),
				"added-records":    strconv.FormatInt(added, 10),
				"total-data-files": strconv.Itoa((c + 1) * perCommit),
				"total-records":    strconv.FormatInt(totalRecords, 10),
			}},
		}))
		parent = &snapID
		if (c+1)%250 == 0 {
			b.Logf("wrote %d/%d snapshots", c+1, commits)
		}
	}
	updates = append(updates, table.NewSetSnapshotRefUpdate(table.MainBranch, *parent, table.BranchRef, 0, 0, 0))
	// The catalog applies the updates to a table.MetadataBuilder from the
	// current metadata (which checks that sequence numbers increase and
	// that each parent exists) and writes the metadata once.
	reqs := []table.Requirement{table.AssertTableUUID(meta.TableUUID()), table.AssertRefSnapshotID(table.MainBranch, nil)}
	_, _, err = w.Catalog.CommitTable(ctx, tbl.Identifier(), reqs, updates)
	require.NoError(b, err)
	tbl, err = w.Catalog.LoadTable(ctx, tbl.Identifier())
	require.NoError(b, err)
	return tbl
}

func BenchmarkHealth(b *testing.B) {
	// FLOE_BENCH_COMMITS and FLOE_BENCH_FILES_PER_COMMIT override the
	// shape (snapshots, and data files per snapshot).
	commits, perCommit := bench.EnvInt(b, "FLOE_BENCH_COMMITS", 2000), bench.EnvInt(b, "FLOE_BENCH_FILES_PER_COMMIT", 25)
	if testing.Short() {
		commits, perCommit = 40, 25
	}
	r := bench.NewResult("health") // the machine's load before the build
	start := time.Now()
	tbl := build(b, commits, perCommit)
	buildTime := time.Since(start)
	ctx := context.Background()
	id := lake.Ident{Catalog: "local", Namespace: []string{"bench"}, Name: "events"}
	var floeTimes, planTimes []time.Duration
	var h lake.Health
	const rounds = 5
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
	require.Equal(b, commits, h.Metrics.Manifests)
	fm, pm := bench.Median(floeTimes), bench.Median(planTimes)
	b.ReportMetric(float64(h.Metrics.DataFiles), "files")
	b.ReportMetric(fm.Seconds(), "health_s")
	b.ReportMetric(pm.Seconds()/fm.Seconds(), "planfiles/health")
	r.Params["data_files"] = h.Metrics.DataFiles
	r.Params["snapshots"] = h.Metrics.Snapshots
	r.Params["manifests"] = h.Metrics.Manifests
	r.Params["rounds"] = rounds
	r.Params["files_per_snapshot"] = perCommit
	r.SetSpread("floe_health_s", seconds(floeTimes))
	r.SetSpread("icebergo_planfiles_s", seconds(planTimes))
	r.Figures["planfiles_over_health_ratio"] = pm.Seconds() / fm.Seconds()
	r.Figures["table_build_s"] = buildTime.Seconds()
	r.Notes = append(r.Notes, "table written directly (one manifest per snapshot, each manifest list naming every manifest so far) and committed to the SQL catalog once; table_build_s is that writing",
		"health = LoadState (every manifest once, in parallel, bounds decoded) + ComputeHealth with clustering on 2 columns; peer = iceberg-go Scan().PlanFiles() over the same snapshot")
	if testing.Short() {
		r.Name = "health-short"
	}
	path, err := r.Write()
	require.NoError(b, err)
	fmt.Fprintf(os.Stderr, "health: %d files, %d snapshots (built in %.1fs): floe median %.3fs, iceberg-go PlanFiles median %.3fs (ratio %.2f×); wrote %s\n",
		h.Metrics.DataFiles, h.Metrics.Snapshots, buildTime.Seconds(), fm.Seconds(), pm.Seconds(), pm.Seconds()/fm.Seconds(), filepath.Base(path))
}

func seconds(ds []time.Duration) []float64 {
	xs := make([]float64, len(ds))
	for i, d := range ds {
		xs[i] = d.Seconds()
	}
	return xs
}
