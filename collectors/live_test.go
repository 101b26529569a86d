package collectors_test

import (
	"bytes"
	"compress/gzip"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/klauspost/compress/zstd"
	"github.com/stretchr/testify/require"

	"github.com/floe-project/floe/collectors"
)

// What a live deployment hands floe: logs of applications that are still
// running, just started or crashed, and files written by other tools.

func sparkLog(t *testing.T) []byte {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(logs, "spark", "application_1714560000000_0042"))
	require.NoError(t, err)
	return b
}

// zstdUnclosed compresses b as a running Spark application's zstd codec
// leaves it: blocks flushed after every event, the frame never closed.
func zstdUnclosed(t *testing.T, b []byte) []byte {
	t.Helper()
	var buf bytes.Buffer
	w, err := zstd.NewWriter(&buf, zstd.WithEncoderConcurrency(1))
	require.NoError(t, err)
	for line := range bytes.SplitAfterSeq(b, []byte("\n")) {
		_, err := w.Write(line)
		require.NoError(t, err)
		require.NoError(t, w.Flush())
	}
	out := bytes.Clone(buf.Bytes())
	require.NoError(t, w.Close()) // release the encoder; the bytes above stay unclosed
	return out
}

func gzipCut(t *testing.T, b []byte) []byte {
	t.Helper()
	var buf bytes.Buffer
	w := gzip.NewWriter(&buf)
	for line := range bytes.SplitAfterSeq(b, []byte("\n")) {
		_, err := w.Write(line)
		require.NoError(t, err)
		require.NoError(t, w.Flush())
	}
	return bytes.Clone(buf.Bytes()) // no Close: no trailer
}

func queryIDs(evs []collectors.QueryEvent) []string {
	var ids []string
	for _, e := range evs {
		ids = append(ids, e.QueryID)
	}
	slices.Sort(ids)
	return ids
}

func TestRollingLogWithoutParts(t *testing.T) {
	dir := t.TempDir()
	write(t, filepath.Join(dir, "eventlog_v2_app-1", "appstatus_app-1.inprogress"), nil)
	require.NoError(t, os.MkdirAll(filepath.Join(dir, "eventlog_v2_app-2"), 0o755))
	write(t, filepath.Join(dir, "app-3"), sparkLog(t))

	ins, err := collectors.Open(t.Context(), []string{dir})
	require.NoError(t, err)
	require.Len(t, ins, 3)
	require.Contains(t, ins[1].Note, "only appstatus_app-1.inprogress")
	require.Contains(t, ins[2].Note, "empty directory")
	require.Empty(t, ins[1].Parts)

	st, evs, err := collect(t, collectors.CollectOptions{Strict: true}, dir)
	require.NoError(t, err, "a log without parts yet is no error, even when strict")
	require.Len(t, evs, 5, "the other application is collected")
	require.Equal(t, 2, st.Notes)
	require.Zero(t, st.BadRecords)
	require.NotEmpty(t, st.Files[1].Note)
	require.Empty(t, st.Files[1].Source)

	_, err = collectors.Open(t.Context(), []string{filepath.Join(dir, "eventlog_v2_app-2")})
	require.NoError(t, err, "named on its own, too")
}

func TestUnreadableDirectoryFailsAlone(t *testing.T) {
	if os.Geteuid() == 0 {
		t.Skip("root reads every directory")
	}
	dir := t.TempDir()
	write(t, filepath.Join(dir, "a", "app-1"), sparkLog(t))
	locked := filepath.Join(dir, "b")
	write(t, filepath.Join(locked, "app-2"), sparkLog(t))
	require.NoError(t, os.Chmod(locked, 0o000))
	t.Cleanup(func() { _ = os.Chmod(locked, 0o755) })

	st, evs, err := collect(t, collectors.CollectOptions{}, dir)
	require.NoError(t, err)
	require.Len(t, evs, 5)
	require.Equal(t, 1, st.BadRecords)
	_, _, err = collect(t, collectors.CollectOptions{Strict: true}, dir)
	require.ErrorIs(t, err, os.ErrPermission)
}

func TestInProgressCompressedLogs(t *testing.T) {
	plain := sparkLog(t)
	full := zstdUnclosed(t, plain)
	lz := lz4Java(t, plain, 4<<10)
	sn := snappyJava(plain, 4<<10)
	gzc := gzipCut(t, plain)
	tests := []struct {
		name string
		file string
		data []byte
		all  bool // every event is complete in what was written
	}{
		{"zstd frame not closed", "app-1.zstd.inprogress", full, true},
		{"zstd cut mid-block", "app-1.zstd.inprogress", full[:len(full)*2/3], false},
		{"lz4 cut mid-block", "app-1.lz4.inprogress", lz[:len(lz)*2/3+7], false},
		{"lz4 without end block", "app-1.lz4.inprogress", lz[:len(lz)-21], true},
		{"snappy cut mid-chunk", "app-1.snappy.inprogress", sn[:len(sn)*2/3+3], false},
		{"gzip without trailer", "app-1.inprogress.gz", gzc, true},
		{"gzip cut", "app-1.inprogress.gz", gzc[:len(gzc)*2/3], false},
	}
	want := func() []string {
		dir := t.TempDir()
		write(t, filepath.Join(dir, "app-1"), plain)
		_, evs, err := collect(t, collectors.CollectOptions{Strict: true}, filepath.Join(dir, "app-1"))
		require.NoError(t, err)
		return queryIDs(evs)
	}()
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), tc.file)
			write(t, path, tc.data)
			st, evs, err := collect(t, collectors.CollectOptions{Strict: true}, path)
			require.NoError(t, err, "a log being written is read up to where the writer has got")
			require.Zero(t, st.BadRecords)
			require.NotEmpty(t, evs)
			require.Subset(t, want, queryIDs(evs))
			if tc.all {
				require.Equal(t, want, queryIDs(evs))
			}
			if !tc.all || strings.Contains(tc.name, "zstd") || strings.Contains(tc.name, "gzip") {
				require.Equal(t, 1, st.TruncatedTails)
				require.True(t, st.Files[0].TruncatedTail)
			}
			require.Empty(t, st.Files[0].Err)
		})
	}

	t.Run("finished file cut off is an error", func(t *testing.T) {
		path := filepath.Join(t.TempDir(), "app-1.zstd")
		write(t, path, full[:len(full)*2/3])
		st, evs, err := collect(t, collectors.CollectOptions{}, path)
		require.NoError(t, err)
		require.Equal(t, 1, st.BadRecords)
		require.Contains(t, st.Files[0].Err, "unexpected EOF")
		require.NotEmpty(t, evs, "the executions that ended before the cut are kept")
		_, _, err = collect(t, collectors.CollectOptions{Strict: true}, path)
		require.Error(t, err)
	})

	t.Run("rolling log in progress", func(t *testing.T) {
		roll := filepath.Join(t.TempDir(), "eventlog_v2_app-1")
		lines := bytes.SplitAfter(plain, []byte("\n"))
		first := bytes.Join(lines[:10], nil)
		rest := bytes.Join(lines[10:], nil)
		write(t, filepath.Join(roll, "appstatus_app-1.inprogress"), nil)
		write(t, filepath.Join(roll, "events_1_app-1.zstd"), zst(t, first))
		unclosed := zstdUnclosed(t, rest)
		write(t, filepath.Join(roll, "events_2_app-1.zstd"), unclosed[:len(unclosed)-5])
		st, evs, err := collect(t, collectors.CollectOptions{Strict: true}, roll)
		require.NoError(t, err)
		require.NotEmpty(t, evs)
		require.Equal(t, 1, st.TruncatedTails)

		// A cut in a part before the last one is damage, not progress.
		write(t, filepath.Join(roll, "events_1_app-1.zstd"), zst(t, first)[:20])
		_, _, err = collect(t, collectors.CollectOptions{Strict: true}, roll)
		require.Error(t, err)
	})
}

func TestNestedCompression(t *testing.T) {
	path := filepath.Join(t.TempDir(), "app-1.zst.gz")
	write(t, path, gz(t, zst(t, sparkLog(t))))
	st, evs, err := collect(t, collectors.CollectOptions{Strict: true}, path)
	require.NoError(t, err)
	require.Len(t, evs, 5)
	require.Equal(t, "spark-eventlog", st.Files[0].Source)
}

func TestFilesOtherToolsWrite(t *testing.T) {
	kafka, err := os.ReadFile(filepath.Join(logs, "trino", "kafka-completed.ndjson"))
	require.NoError(t, err)
	dir := t.TempDir()
	write(t, filepath.Join(dir, "bom.ndjson"), append([]byte("\ufeff"), kafka...))
	write(t, filepath.Join(dir, "blank.json"), []byte(" \n\t\r\n  \n"))
	write(t, filepath.Join(dir, "bom-blank.json"), []byte("\ufeff\n"))
	st, evs, err := collect(t, collectors.CollectOptions{Strict: true}, dir)
	require.NoError(t, err)
	require.Len(t, evs, 5, "NDJSON after a byte order mark is detected and read")
	require.Zero(t, st.BadRecords, "white space only is nothing to collect, like an empty file")
}

func TestBadRecordsPerFile(t *testing.T) {
	dir := t.TempDir()
	var b strings.Builder
	b.WriteString(`{"Event":"SparkListenerLogStart","Spark Version":"3.5.3"}` + "\n")
	for range 8 {
		b.WriteString("{broken\n")
	}
	write(t, filepath.Join(dir, "a"), []byte(b.String()))
	write(t, filepath.Join(dir, "b"), []byte(b.String()))
	st, _, err := collect(t, collectors.CollectOptions{}, dir)
	require.NoError(t, err)
	require.Equal(t, 16, st.BadRecords)
	require.Len(t, st.Bad, 2*collectors.DefaultMaxBadPerFile, "a few of each file, so one file does not hide the other")
	require.Equal(t, 8, st.Files[0].BadRecords)
	require.Equal(t, filepath.Join(dir, "b"), st.Bad[len(st.Bad)-1].File)

	st, _, err = collect(t, collectors.CollectOptions{MaxBadPerFile: -1}, dir)
	require.NoError(t, err)
	require.Len(t, st.Bad, 16)
}
