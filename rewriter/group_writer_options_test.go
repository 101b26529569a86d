package rewriter_test

import (
	"runtime"
	"testing"

	"github.com/apache/iceberg-go/table"
	"github.com/stretchr/testify/require"

	"github.com/floe-project/floe/rewriter"
)

// TestGroupOptionsWriterOptions checks the writer options a group's
// rewrite uses, as another writer of the group's rows gets them: the
// group's partition and records, an eighth of the budget, the files of
// one partition; and the refusals.
func TestGroupOptionsWriterOptions(t *testing.T) {
	ctx := t.Context()
	cat := newCatalog(t)
	tbl := createEvents(t, cat, "wopts", true, nil)
	for c := range 2 {
		tbl = appendBatch(t, tbl, eventRows(t, tbl, c*3000, 3000, "", uint64(c)))
	}
	groups, order := partitionGroups(t, tbl)
	require.Greater(t, len(order), 1)
	opts := rewriter.GroupOptions{TargetFileSizeBytes: 1 << 20, MemoryBytes: 8 << 20, Parallelism: 3, NameTag: "floor"}
	for _, k := range order {
		tasks := groups[k]
		w, err := opts.WriterOptions(tbl, tasks)
		require.NoError(t, err)
		var records int64
		for _, task := range tasks {
			records += task.File.Count()
		}
		require.Equal(t, records, w.ExpectedRows)
		require.Equal(t, int64(1<<20), w.TargetFileSizeBytes)
		require.Equal(t, int64(1<<20), w.MemoryBytes, "an eighth of the group's budget")
		require.Equal(t, 3, w.Parallelism)
		require.Equal(t, "floor", w.NameTag)
		require.Nil(t, w.Allocator)
		require.Equal(t, k, w.PartitionValues[1000], "the group's partition")

		// Written through a Writer, the rows land in the group's partition.
		scan := tbl.Scan()
		_, records2, err := scan.ReadTasks(ctx, tasks)
		require.NoError(t, err)
		wr, err := rewriter.NewWriter(ctx, tbl, w)
		require.NoError(t, err)
		for rec, err := range records2 {
			require.NoError(t, err)
			require.NoError(t, wr.Write(ctx, rec))
			rec.Release()
		}
		files, err := wr.Close()
		require.NoError(t, err)
		scan.Close()
		require.NotEmpty(t, files)
		var rows int64
		for _, f := range files {
			require.Equal(t, k, f.Partition()[1000])
			rows += f.Count()
		}
		require.Equal(t, records, rows)
		require.NoError(t, wr.Abort())
	}

	alloc := rewriter.NewTrackingAllocator(nil)
	withAlloc := opts
	withAlloc.Allocator = alloc
	w, err := withAlloc.WriterOptions(tbl, groups[order[0]])
	require.NoError(t, err)
	require.Same(t, alloc, w.Allocator)

	_, err = opts.WriterOptions(tbl, nil)
	require.ErrorContains(t, err, "no tasks")
	var mixed []table.FileScanTask
	for _, k := range order[:2] {
		mixed = append(mixed, groups[k]...)
	}
	_, err = opts.WriterOptions(tbl, mixed)
	require.ErrorContains(t, err, "group spans partitions")
	bad := opts
	bad.MemoryBytes = 1000
	_, err = bad.WriterOptions(tbl, groups[order[0]])
	require.ErrorContains(t, err, "memory bytes")
}

// TestGroupOptionsShare checks how RewriteGroups splits its options
// between the groups it runs at once.
func TestGroupOptionsShare(t *testing.T) {
	procs := runtime.GOMAXPROCS(0)
	alloc := rewriter.NewTrackingAllocator(nil)
	cases := []struct {
		name        string
		opts        rewriter.GroupOptions
		groups      int
		workers     int
		memoryBytes int64
	}{
		{"fewer groups than parallelism", rewriter.GroupOptions{Parallelism: 4, MemoryBytes: 64 << 20}, 2, 2, 32 << 20},
		{"more groups than parallelism", rewriter.GroupOptions{Parallelism: 4, MemoryBytes: 64 << 20}, 10, 4, 16 << 20},
		{"no groups", rewriter.GroupOptions{Parallelism: 4, MemoryBytes: 64 << 20}, 0, 1, 64 << 20},
		{"at least 1 MiB each", rewriter.GroupOptions{Parallelism: 4, MemoryBytes: 2 << 20}, 4, 4, 1 << 20},
		{"unbounded", rewriter.GroupOptions{Parallelism: 2, Allocator: alloc}, 5, 2, 0},
		{"default parallelism", rewriter.GroupOptions{MemoryBytes: 64 << 20}, 100, procs, 64 << 20 / int64(procs)},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			per, workers := tc.opts.Share(tc.groups)
			require.Equal(t, tc.workers, workers)
			require.Equal(t, tc.memoryBytes, per.MemoryBytes)
			require.Equal(t, max(procs/workers, 1), per.Parallelism)
			require.Nil(t, per.Allocator, "each group tracks its own")
		})
	}
}
