package rewriter_test

import (
	"os"
	"strings"
	"testing"

	"github.com/apache/arrow-go/v18/parquet/file"
	"github.com/stretchr/testify/require"

	"github.com/floe-project/floe/rewriter"
)

func TestWriterRollsFilesWithinTwentyPercent(t *testing.T) {
	cases := []struct {
		name   string
		target int64
		rows   int
	}{
		{name: "target=64KiB", target: 64 << 10, rows: 20_000},
		{name: "target=1MiB", target: 1 << 20, rows: 300_000},
		{name: "target=4MiB", target: 4 << 20, rows: 900_000},
	}
	cat := newCatalog(t)
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			tbl := createEvents(t, cat, "roll_"+strings.TrimPrefix(tc.name, "target="), false, nil)
			ctx := t.Context()
			w, err := rewriter.NewWriter(ctx, tbl, rewriter.WriterOptions{TargetFileSizeBytes: tc.target})
			require.NoError(t, err)
			for start := 0; start < tc.rows; start += 8192 {
				rec := eventRows(t, tbl, start, min(8192, tc.rows-start), "", 1)
				require.NoError(t, w.Write(ctx, rec))
				rec.Release()
			}
			files, err := w.Close()
			require.NoError(t, err)
			require.GreaterOrEqual(t, len(files), 4, "too little data for the test")
			var rows int64
			for i, df := range files {
				st, err := os.Stat(localPath(df.FilePath()))
				require.NoError(t, err)
				require.Equal(t, st.Size(), df.FileSizeBytes(), "file %d size", i)
				require.True(t, strings.HasPrefix(df.FilePath(), tbl.Location()+"/data/"), df.FilePath())
				if i < len(files)-1 {
					ratio := float64(df.FileSizeBytes()) / float64(tc.target)
					require.InDelta(t, 1.0, ratio, 0.2, "file %d of %d is %d bytes", i, len(files), df.FileSizeBytes())
				}
				rows += df.Count()
				// Full column statistics for the key column.
				require.Equal(t, df.Count(), df.ValueCounts()[1])
				require.Contains(t, df.LowerBoundValues(), 1)
				require.Contains(t, df.UpperBoundValues(), 5)
				require.LessOrEqual(t, len(df.UpperBoundValues()[5]), 16+1, "truncate(16) on strings")
				require.Nil(t, df.SortOrderID())
			}
			require.Equal(t, int64(tc.rows), rows)
			sizes := make([]int64, len(files))
			for i, df := range files {
				sizes[i] = df.FileSizeBytes()
			}
			t.Logf("target %d: file sizes %v", tc.target, sizes)
			st := w.Stats()
			require.Equal(t, len(files), st.Files)
			require.Contains(t, st.DictionaryColumns, "region")
			require.NotContains(t, st.DictionaryColumns, "payload")

			// Iceberg accepts the files: commit them and read them back.
			tx := tbl.NewTransaction()
			require.NoError(t, tx.AddDataFiles(ctx, files, nil))
			tbl, err = tx.Commit(ctx)
			require.NoError(t, err)
			require.Equal(t, int64(tc.rows), scanCount(ctx, t, tbl))
		})
	}
}

func TestWriterPartitionPathFieldIDsAndSortOrder(t *testing.T) {
	cat := newCatalog(t)
	tbl := createEvents(t, cat, "parted", true, nil)
	ctx := t.Context()
	sortID := 1
	w, err := rewriter.NewWriter(ctx, tbl, rewriter.WriterOptions{
		PartitionValues: map[int]any{1000: "eu"},
		SortOrderID:     &sortID,
	})
	require.NoError(t, err)
	rec := eventRows(t, tbl, 0, 5000, "eu", 2)
	require.NoError(t, w.Write(ctx, rec))
	rec.Release()
	files, err := w.Close()
	require.NoError(t, err)
	require.Len(t, files, 1)
	df := files[0]
	require.Contains(t, df.FilePath(), "/data/region=eu/")
	require.Equal(t, "eu", df.Partition()[1000])
	require.NotNil(t, df.SortOrderID())
	require.Equal(t, 1, *df.SortOrderID())
	require.Equal(t, int64(5000), df.Count())

	rdr, err := file.OpenParquetFile(localPath(df.FilePath()), false)
	require.NoError(t, err)
	defer rdr.Close()
	root := rdr.MetaData().Schema.Root()
	require.Equal(t, 5, root.NumFields())
	for i, f := range eventsSchema.Fields() {
		require.Equal(t, f.Name, root.Field(i).Name())
		require.Equal(t, int32(f.ID), root.Field(i).FieldID(), "field id of %s", f.Name)
	}

	tx := tbl.NewTransaction()
	require.NoError(t, tx.AddDataFiles(ctx, files, nil))
	tbl, err = tx.Commit(ctx)
	require.NoError(t, err)
	require.Equal(t, int64(5000), scanCount(ctx, t, tbl))
}

func TestWriterRejectsBadOptions(t *testing.T) {
	cat := newCatalog(t)
	parted := createEvents(t, cat, "p", true, nil)
	flat := createEvents(t, cat, "f", false, nil)
	neg := -1
	cases := []struct {
		name string
		tbl  string
		opts rewriter.WriterOptions
		want []string
	}{
		{name: "negative", tbl: "f", opts: rewriter.WriterOptions{TargetFileSizeBytes: -1, RowGroupBytes: -1, MemoryBytes: -1, SortOrderID: &neg},
			want: []string{"target file size", "row group bytes", "memory bytes", "sort order id"}},
		{name: "unknown-partition-field", tbl: "p", opts: rewriter.WriterOptions{PartitionValues: map[int]any{1234: "x"}}, want: []string{"partition field id 1234"}},
		{name: "partition-on-unpartitioned", tbl: "f", opts: rewriter.WriterOptions{PartitionValues: map[int]any{1000: "x"}}, want: []string{"unpartitioned"}},
		{name: "row-lineage-before-v3", tbl: "f", opts: rewriter.WriterOptions{RowLineage: true}, want: []string{"row lineage needs format version 3, the table has 2"}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			tbl := flat
			if tc.tbl == "p" {
				tbl = parted
			}
			_, err := rewriter.NewWriter(t.Context(), tbl, tc.opts)
			for _, w := range tc.want {
				require.ErrorContains(t, err, w)
			}
		})
	}
}

// TestWriterTakesASmallTail: told how many rows are coming, the writer puts
// a remainder of a few percent of a file into the file before it (within
// layout.TailAllowance over the target) instead of a small file of its own,
// as Iceberg's rewrite does and the simulator projects; a larger remainder
// keeps its own file, and without the count every file closes at the target.
func TestWriterTakesASmallTail(t *testing.T) {
	const target = 64 << 10
	cat := newCatalog(t)
	ctx := t.Context()
	write := func(name string, rows, expected int) []int64 {
		t.Helper()
		tbl := createEvents(t, cat, name, false, nil)
		w, err := rewriter.NewWriter(ctx, tbl, rewriter.WriterOptions{TargetFileSizeBytes: target, ExpectedRows: int64(expected)})
		require.NoError(t, err)
		for start := 0; start < rows; start += 1024 {
			rec := eventRows(t, tbl, start, min(1024, rows-start), "", 1)
			require.NoError(t, w.Write(ctx, rec))
			rec.Release()
		}
		files, err := w.Close()
		require.NoError(t, err)
		var counts []int64
		var total int64
		for _, df := range files {
			counts = append(counts, df.Count())
			total += df.Count()
			require.LessOrEqual(t, float64(df.FileSizeBytes()), 1.25*target, "no file far past the target")
		}
		require.Equal(t, int64(rows), total)
		return counts
	}
	// The rows one file at the target takes, from a plain write.
	perFile := int(write("tail_probe", 20_000, 0)[0])
	small := 2*perFile + perFile/25 // a 4% remainder
	require.Len(t, write("tail_plain", small, 0), 3, "without a count the remainder is a file of its own")
	require.Len(t, write("tail_taken", small, small), 2, "a 4%% remainder joins the file before it")
	large := 2*perFile + perFile/2 // a 50% remainder
	require.Len(t, write("tail_kept", large, large), 3, "a half-file remainder keeps its own file")
}
