package rewriter

import (
	"testing"

	"github.com/apache/iceberg-go"
	"github.com/apache/iceberg-go/table"
	"github.com/stretchr/testify/require"
)

// testFile builds a manifest entry of content with count rows.
func testFile(t *testing.T, content iceberg.ManifestEntryContent, path string, count int64) iceberg.DataFile {
	t.Helper()
	b, err := iceberg.NewDataFileBuilder(*iceberg.UnpartitionedSpec, content, path, iceberg.ParquetFile, nil, nil, nil, count, 1000)
	require.NoError(t, err)
	return b.Build()
}

func TestLiveRowBounds(t *testing.T) {
	data := func(path string, n int64) iceberg.DataFile { return testFile(t, iceberg.EntryContentData, path, n) }
	pos := func(path string, n int64) iceberg.DataFile {
		return testFile(t, iceberg.EntryContentPosDeletes, path, n)
	}
	eq := func(path string, n int64) iceberg.DataFile {
		return testFile(t, iceberg.EntryContentEqDeletes, path, n)
	}
	shared := pos("shared-pos.parquet", 30)
	cases := []struct {
		name  string
		tasks []table.FileScanTask
		want  rowBounds
	}{
		{name: "no deletes: exact", tasks: []table.FileScanTask{
			{File: data("a", 10_000)}, {File: data("b", 9_917)},
		}, want: rowBounds{lo: 19_917, hi: 19_917}},
		{name: "own position deletes", tasks: []table.FileScanTask{
			{File: data("a", 10_000), DeleteFiles: []iceberg.DataFile{pos("a-pos-1", 100), pos("a-pos-2", 5)}},
			{File: data("b", 500)},
		}, want: rowBounds{lo: 10_395, hi: 10_500}},
		{name: "a shared position delete file counts once", tasks: []table.FileScanTask{
			{File: data("a", 1_000), DeleteFiles: []iceberg.DataFile{shared}},
			{File: data("b", 1_000), DeleteFiles: []iceberg.DataFile{shared}},
		}, want: rowBounds{lo: 1_970, hi: 2_000}},
		{name: "deletion vectors", tasks: []table.FileScanTask{
			{File: data("a", 1_000), DeletionVectorFiles: []iceberg.DataFile{pos("dv.puffin", 7)}},
			{File: data("b", 1_000), DeletionVectorFiles: []iceberg.DataFile{pos("dv.puffin", 3)}},
		}, want: rowBounds{lo: 1_990, hi: 2_000}},
		{name: "equality deletes: no lower bound for that file", tasks: []table.FileScanTask{
			{File: data("a", 1_000), EqualityDeleteFiles: []iceberg.DataFile{eq("eq", 1)}},
			{File: data("b", 600)},
		}, want: rowBounds{lo: 600, hi: 1_600}},
		{name: "lower bound stops at zero", tasks: []table.FileScanTask{
			{File: data("a", 10), DeleteFiles: []iceberg.DataFile{pos("big-pos", 1_000)}},
		}, want: rowBounds{lo: 0, hi: 10}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			got := liveRowBounds(tc.tasks)
			require.Equal(t, tc.want, got)
			require.True(t, got.allows(got.lo))
			require.True(t, got.allows(got.hi))
			require.False(t, got.allows(got.hi+1))
			if got.lo > 0 {
				require.False(t, got.allows(got.lo-1))
			}
		})
	}
}

func TestRowBoundsMismatch(t *testing.T) {
	cases := []struct {
		b    rowBounds
		n    int64
		want string
	}{
		{b: rowBounds{lo: 10_000, hi: 10_000}, n: 9_917, want: "read 9917 rows, manifest record_count is 10000"},
		{b: rowBounds{lo: 9_900, hi: 10_000}, n: 9_817, want: "read 9817 rows, manifest record_count 10000 less its deletes allows 9900 to 10000"},
	}
	for _, tc := range cases {
		t.Run(tc.want, func(t *testing.T) {
			require.Equal(t, tc.want, tc.b.mismatch(tc.n))
		})
	}
}

func TestCheckWritten(t *testing.T) {
	tasks := []table.FileScanTask{{File: testFile(t, iceberg.EntryContentData, "a", 10)}, {File: testFile(t, iceberg.EntryContentData, "b", 5)}}
	cases := []struct {
		name         string
		files        int64
		read, wrote  int64
		wantContains string
	}{
		{name: "all read, all written", files: 2, read: 15, wrote: 15},
		{name: "rows lost after the scan", files: 2, read: 15, wrote: 14, wantContains: "wrote 14 rows, read 15"},
		{name: "a chunk never checked", files: 1, read: 10, wrote: 10, wantContains: "read 1 of 2 input files"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			g := &groupReader{tasks: tasks}
			g.filesRead.Store(tc.files)
			g.rows.Store(tc.read)
			err := g.checkWritten(tc.wrote)
			if tc.wantContains == "" {
				require.NoError(t, err)
				return
			}
			require.ErrorIs(t, err, ErrInvariant)
			require.ErrorContains(t, err, tc.wantContains)
		})
	}
}
