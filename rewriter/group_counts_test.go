package rewriter_test

import (
	"context"
	"encoding/binary"
	"fmt"
	"io/fs"
	"path/filepath"
	"sort"
	"testing"
	"time"

	iceio "github.com/apache/iceberg-go/io"
	"github.com/apache/iceberg-go/table"
	"github.com/stretchr/testify/require"

	"github.com/floe-project/floe/internal/testlake"
	"github.com/floe-project/floe/layout"
	"github.com/floe-project/floe/rewriter"
)

// countsFixture is partition eu of four files of 10,000 rows (ids from 0,
// 10,000, 20,000 and 30,000) and one of 9,917 (ids from 40,000), and one
// file in us. Mutations go to both twins; damage on disk only to tbl's
// files.
func countsFixture(t *testing.T) *twinTables {
	t.Helper()
	tt := newTwinTables(t, nil)
	for i := range 4 {
		tt.appendBoth(t, i*10_000, 10_000, "eu")
	}
	tt.appendBoth(t, 40_000, 9_917, "eu")
	tt.appendBoth(t, 100_000, 5_000, "us")
	return tt
}

// euTasks plans tbl and returns the tasks of partition eu.
func euTasks(t *testing.T, tbl *table.Table) []table.FileScanTask {
	t.Helper()
	fresh := *tbl
	require.NoError(t, fresh.Refresh(context.Background()))
	groups, _ := partitionGroups(t, &fresh)
	require.Len(t, groups["eu"], 5)
	return groups["eu"]
}

// fileFrom returns the path of the data file among tasks whose smallest id
// is lo.
func fileFrom(t *testing.T, tasks []table.FileScanTask, lo int64) string {
	t.Helper()
	for _, task := range tasks {
		if b := task.File.LowerBoundValues()[1]; len(b) == 8 && int64(binary.LittleEndian.Uint64(b)) == lo {
			return task.File.FilePath()
		}
	}
	t.Fatalf("no data file starts at id %d", lo)
	return ""
}

// overwrite replaces the file at loc (a URI in w) with data.
func overwrite(t *testing.T, w *testlake.Warehouse, loc string, data []byte) {
	t.Helper()
	w.Plant(t, loc, data, time.Now())
}

// parquetFiles lists every Parquet file under the table's location,
// through the table's own IO.
func parquetFiles(t *testing.T, tbl *table.Table) []string {
	t.Helper()
	fio, err := tbl.FS(t.Context())
	require.NoError(t, err)
	lister, ok := fio.(iceio.ListableIO)
	require.True(t, ok, "the IO of %s cannot list", tbl.Location())
	var out []string
	err = lister.WalkDir(tbl.Location(), func(p string, d fs.DirEntry, err error) error {
		if err == nil && !d.IsDir() && filepath.Ext(p) == ".parquet" {
			out = append(out, p)
		}
		return err
	})
	require.NoError(t, err)
	sort.Strings(out)
	return out
}

func currentSnapshotID(t *testing.T, tbl *table.Table) int64 {
	t.Helper()
	fresh := *tbl
	require.NoError(t, fresh.Refresh(context.Background()))
	return fresh.CurrentSnapshot().SnapshotID
}

func TestRewriteGroupFailsWhenRowsDifferFromManifest(t *testing.T) {
	cases := []struct {
		name    string
		target  int64 // first id of the file replaced on disk
		source  int64 // first id of the file copied over it
		deletes bool  // delete ids 10,100-10,199 (100 rows of the 10,000-id file) first
		sort    bool
		chunk   int
		wantMsg string
	}{
		{name: "fewer rows,binpack,one chunk", target: 10_000, source: 40_000,
			wantMsg: "read 9917 rows, manifest record_count is 10000"},
		{name: "fewer rows,sort,one file per chunk", target: 20_000, source: 40_000, sort: true, chunk: 1,
			wantMsg: "read 9917 rows, manifest record_count is 10000"},
		{name: "more rows,binpack,chunks of 2 files", target: 40_000, source: 0, chunk: 2,
			wantMsg: "read 10000 rows, manifest record_count is 9917"},
		{name: "fewer rows under position deletes,sort", target: 10_000, source: 40_000, deletes: true, sort: true,
			wantMsg: "read 9817 rows, manifest record_count 10000 less its deletes allows 9900 to 10000"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			tt := countsFixture(t)
			if tc.deletes {
				tt.deleteBoth(t, 10_100, 10_200)
			}
			tasks := euTasks(t, tt.tbl)
			target, source := fileFrom(t, tasks, tc.target), fileFrom(t, tasks, tc.source)
			overwrite(t, tt.w, target, tt.w.Read(t, source))
			before, snap := parquetFiles(t, tt.tbl), currentSnapshotID(t, tt.tbl)

			opts := rewriter.GroupOptions{TempDir: t.TempDir(), ScanChunkFiles: tc.chunk}
			if tc.sort {
				opts.Keyer = int64Keyer{col: 0}
			}
			st := tt.state(t, tt.tbl)
			files, _, err := rewriter.RewriteGroup(t.Context(), st.Table, tasks, opts)
			t.Log(err)
			require.Error(t, err)
			require.Empty(t, files)
			require.ErrorIs(t, err, rewriter.ErrInputMismatch)
			require.ErrorIs(t, err, rewriter.ErrInvariant)
			require.ErrorContains(t, err, fmt.Sprintf("data file %s (partition region=eu): %s", target, tc.wantMsg))
			for _, task := range tasks {
				if p := task.File.FilePath(); p != target {
					require.NotContains(t, err.Error(), p, "only the damaged file is named")
				}
			}
			require.Equal(t, before, parquetFiles(t, tt.tbl), "the files written were removed")
			require.Equal(t, snap, currentSnapshotID(t, tt.tbl))
			requireEmptyDir(t, opts.TempDir)
		})
	}
}

func TestCompactFailsWhenRowsDifferFromManifest(t *testing.T) {
	for _, spec := range []string{"binpack", "sort(id)"} {
		t.Run(spec, func(t *testing.T) {
			tt := countsFixture(t)
			tasks := euTasks(t, tt.tbl)
			target := fileFrom(t, tasks, 30_000)
			overwrite(t, tt.w, target, tt.w.Read(t, fileFrom(t, tasks, 40_000)))
			snap := currentSnapshotID(t, tt.tbl)

			layout, err := layout.Parse(spec)
			require.NoError(t, err)
			st := tt.state(t, tt.tbl)
			opts := rewriter.CompactOptions{Layout: layout, TargetFileSizeBytes: 4 << 20, Partitions: []string{"region=eu"},
				Commit: rewriter.CommitOptions{Sleep: instantSleep}}
			plan, err := rewriter.PlanCompaction(st, opts)
			require.NoError(t, err)
			require.Len(t, plan.Groups, 1)
			require.Contains(t, plan.Groups[0].Paths, target)
			res, err := rewriter.Compact(t.Context(), st, plan, opts)
			t.Log(err)
			require.ErrorIs(t, err, rewriter.ErrInputMismatch)
			require.ErrorContains(t, err, fmt.Sprintf("data file %s (partition region=eu): read 9917 rows, manifest record_count is 10000", target))
			require.Empty(t, res.Commits)
			require.Equal(t, snap, currentSnapshotID(t, tt.tbl), "nothing was committed")
		})
	}
}

func TestRewriteGroupNamesUnreadableInput(t *testing.T) {
	damages := []struct {
		name   string
		damage func([]byte) []byte
	}{
		{name: "truncated to half", damage: func(b []byte) []byte { return b[:len(b)/2] }},
		{name: "tail cut", damage: func(b []byte) []byte { return b[:len(b)-3] }},
		{name: "empty", damage: func([]byte) []byte { return nil }},
		{name: "zeroed", damage: func(b []byte) []byte { return make([]byte, len(b)) }},
		{name: "bad magic", damage: func(b []byte) []byte {
			b = append([]byte(nil), b...)
			copy(b[len(b)-4:], "PARX")
			return b
		}},
		{name: "bit flip in a data page", damage: func(b []byte) []byte {
			b = append([]byte(nil), b...)
			b[len(b)/10] ^= 0x10 // caught by the page codec's checksum
			return b
		}},
		{name: "bit flip in footer length", damage: func(b []byte) []byte {
			b = append([]byte(nil), b...)
			b[len(b)-6] ^= 0x40 // third byte of the little-endian footer length
			return b
		}},
	}
	for _, d := range damages {
		for _, chunk := range []int{0, 1, -1} {
			direct := chunk < 0
			chunk = max(chunk, 0)
			t.Run(fmt.Sprintf("%s,chunk=%d,direct=%t", d.name, chunk, direct), func(t *testing.T) {
				tt := countsFixture(t)
				tasks := euTasks(t, tt.tbl)
				target := fileFrom(t, tasks, 20_000)
				overwrite(t, tt.w, target, d.damage(tt.w.Read(t, target)))
				before := parquetFiles(t, tt.tbl)

				st := tt.state(t, tt.tbl)
				opts := rewriter.GroupOptions{Keyer: int64Keyer{col: 0}, TempDir: t.TempDir(), ScanChunkFiles: chunk}
				if direct {
					opts.Keyer = sortByID(t, st.Table) // codes region: the rewriter reads the files itself
				}
				files, _, err := rewriter.RewriteGroup(t.Context(), st.Table, tasks, opts)
				t.Log(err)
				require.Error(t, err)
				require.Empty(t, files)
				require.ErrorContains(t, err, fmt.Sprintf("read data file %s (partition region=eu): ", target))
				for _, task := range tasks {
					if p := task.File.FilePath(); p != target {
						require.NotContains(t, err.Error(), p, "only the damaged file is named")
					}
				}
				require.Equal(t, before, parquetFiles(t, tt.tbl), "the files written were removed")
				requireEmptyDir(t, opts.TempDir)
			})
		}
	}
}

func TestRewriteGroupPassesWithDeletes(t *testing.T) {
	cases := []struct {
		name     string
		deletes  func(t *testing.T, tt *twinTables)
		chunk    int
		wantRows int64
	}{
		{name: "no deletes", wantRows: 49_917},
		{name: "position deletes in two files", chunk: 0, wantRows: 49_917 - 300, deletes: func(t *testing.T, tt *twinTables) {
			tt.deleteBoth(t, 10_100, 10_200)
			tt.deleteBoth(t, 40_000, 40_200)
		}},
		{name: "position deletes spanning files,one file per chunk", chunk: 1, wantRows: 49_917 - 2_000, deletes: func(t *testing.T, tt *twinTables) {
			tt.deleteBoth(t, 9_000, 11_000)
		}},
		{name: "equality deletes", wantRows: 49_917 - 3, deletes: func(t *testing.T, tt *twinTables) {
			tt.tbl = eqDeleteFresh(t, tt.tbl, "eu", 5, 15_000, 45_000)
			tt.twin = eqDeleteFresh(t, tt.twin, "eu", 5, 15_000, 45_000)
		}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			tt := countsFixture(t)
			if tc.deletes != nil {
				tc.deletes(t, tt)
			}
			st := tt.state(t, tt.tbl)
			for _, keyer := range []rewriter.Keyer{nil, int64Keyer{col: 0}, sortByID(t, st.Table)} {
				opts := rewriter.GroupOptions{TempDir: t.TempDir(), ScanChunkFiles: tc.chunk, Keyer: keyer}
				tasks := euTasks(t, tt.tbl)
				files, stats, err := rewriter.RewriteGroup(t.Context(), st.Table, tasks, opts)
				require.NoError(t, err)
				if _, ok := keyer.(layout.Encoder); ok {
					// A layout keyer names its columns: region is coded, and
					// the files no delete applies to are read directly.
					require.Equal(t, []string{"region"}, stats.CodedColumns)
					plain := 0
					for _, task := range tasks {
						if len(task.DeleteFiles)+len(task.EqualityDeleteFiles)+len(task.DeletionVectorFiles) == 0 {
							plain++
						}
					}
					require.Equal(t, plain, stats.DirectReads)
				} else {
					require.Empty(t, stats.CodedColumns)
					require.Zero(t, stats.DirectReads)
				}
				require.Equal(t, tc.wantRows, stats.Rows)
				require.Equal(t, tc.wantRows, stats.Writer.Rows)
				var n int64
				for _, f := range files {
					n += f.Count()
					tt.w.Remove(t, f.FilePath())
				}
				require.Equal(t, tc.wantRows, n)
			}
		})
	}
}

// sortByID is the layout encoder of sort(id) for tbl: unlike int64Keyer it
// names its key columns, so the group codes its other low-cardinality
// strings and reads the files no delete applies to itself.
func sortByID(t *testing.T, tbl *table.Table) layout.Encoder {
	t.Helper()
	sch, err := table.SchemaToArrowSchema(tbl.Schema(), nil, true, false)
	require.NoError(t, err)
	l, err := layout.Parse("sort(id)")
	require.NoError(t, err)
	enc, err := layout.NewEncoder(l, sch, layout.EncoderOptions{})
	require.NoError(t, err)
	return enc
}
