package rewrite_test

import (
	"context"
	"os"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/apache/arrow-go/v18/parquet/file"
	"github.com/apache/arrow-go/v18/parquet/pqarrow"
	"github.com/stretchr/testify/require"

	"github.com/floe-project/floe/bench/rewrite"
)

// readParquet reads a file's Arrow schema (with its field ids) and rows.
func readParquet(t *testing.T, path string) (*arrow.Schema, int64) {
	t.Helper()
	pf, err := file.OpenParquetFile(path, false)
	require.NoError(t, err)
	defer pf.Close()
	fr, err := pqarrow.NewFileReader(pf, pqarrow.ArrowReadProperties{BatchSize: 4096}, memory.DefaultAllocator)
	require.NoError(t, err)
	rr, err := fr.GetRecordReader(context.Background(), nil, nil)
	require.NoError(t, err)
	defer rr.Release()
	var n int64
	for rr.Next() {
		n += rr.RecordBatch().NumRows()
	}
	require.NoError(t, rr.Err())
	return rr.Schema(), n
}

// TestFloorWritesTheInput runs the floor engine in floe's child, on an
// unpartitioned and a partitioned table: its files, read back, hold the
// input's columns (names, types, field ids) and rows, one group per
// partition, and a small target cuts several files as floe's writer would.
func TestFloorWritesTheInput(t *testing.T) {
	for _, tc := range []struct {
		name       string
		partitions int
	}{{"unpartitioned", 0}, {"partitioned", 3}} {
		t.Run(tc.name, func(t *testing.T) {
			ctx := t.Context()
			ds, err := rewrite.PrepareDataset(ctx, rewrite.DatasetOptions{Dir: t.TempDir(), Rows: 30_000, Files: 6, Seed: 11, Partitions: tc.partitions})
			require.NoError(t, err)
			inSchema, _ := readParquet(t, ds.Paths[0])
			var inRows int64
			for _, p := range ds.Paths {
				_, n := readParquet(t, p)
				inRows += n
			}
			require.Equal(t, ds.Rows, inRows)

			res, u, err := rewrite.Run(ctx, floeExe(t), rewrite.Job{
				Engine: rewrite.EngineFloor, Layout: "sort(l_shipdate)", Warehouse: ds.Dir, TempDir: t.TempDir(),
				MemoryBytes: 8 << 20, TargetFileSizeBytes: 64 << 10,
			})
			require.NoError(t, err)
			t.Cleanup(func() {
				for _, p := range res.Files {
					require.NoError(t, os.Remove(p))
				}
			})
			require.Equal(t, ds.Rows, res.Rows)
			require.Positive(t, u.CPU)
			require.Positive(t, res.PeakArrowBytes)
			require.Len(t, res.Groups, max(tc.partitions, 1), "one group per partition")
			require.Greater(t, len(res.Files), len(res.Groups), "a 64 KiB target cuts several files")
			var outRows int64
			for i, p := range res.Files {
				sch, n := readParquet(t, p)
				require.True(t, inSchema.Equal(sch), "file %s: schema %s, input %s", p, sch, inSchema)
				require.Equal(t, res.FileRows[i], n)
				outRows += n
			}
			require.Equal(t, ds.Rows, outRows)
			in, err := rewrite.Checksum(ctx, ds.Paths)
			require.NoError(t, err)
			out, err := rewrite.Checksum(ctx, res.Files)
			require.NoError(t, err)
			require.Equal(t, in, out, "the floor writes every input row once")
		})
	}
}
