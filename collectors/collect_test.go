package collectors_test

import (
	"bytes"
	"compress/gzip"
	"context"
	"errors"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/floe-project/floe/collectors"
	"github.com/floe-project/floe/collectors/duckdb"
	"github.com/floe-project/floe/collectors/spark"
	"github.com/floe-project/floe/collectors/trino"
	"github.com/klauspost/compress/zstd"
	"github.com/stretchr/testify/require"
	"go.uber.org/goleak"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

var logs = filepath.Join("..", "testdata", "logs")

func parsers() []collectors.Parser {
	return []collectors.Parser{trino.EventParser{}, trino.RuntimeParser{}, spark.EventLogParser{},
		duckdb.LogParser{}, duckdb.ProfileParser{}, duckdb.HistoryParser{}, duckdb.DBParser{}}
}

func write(t *testing.T, path string, data []byte) {
	t.Helper()
	require.NoError(t, os.MkdirAll(filepath.Dir(path), 0o755))
	require.NoError(t, os.WriteFile(path, data, 0o644))
}

func gz(t *testing.T, b []byte) []byte {
	var buf bytes.Buffer
	w := gzip.NewWriter(&buf)
	_, err := w.Write(b)
	require.NoError(t, err)
	require.NoError(t, w.Close())
	return buf.Bytes()
}

func zst(t *testing.T, b []byte) []byte {
	w, err := zstd.NewWriter(nil)
	require.NoError(t, err)
	defer func() { require.NoError(t, w.Close()) }()
	return w.EncodeAll(b, nil)
}

func readAll(t *testing.T, in collectors.Input) string {
	t.Helper()
	rc, err := in.Open()
	require.NoError(t, err)
	b, err := io.ReadAll(rc)
	require.NoError(t, err)
	require.NoError(t, rc.Close())
	return string(b)
}

func TestOpen(t *testing.T) {
	dir := t.TempDir()
	a := filepath.Join(dir, "a")
	write(t, filepath.Join(a, "x.ndjson"), []byte("plain\n"))
	write(t, filepath.Join(a, "y.json.gz"), gz(t, []byte("gzipped\n")))
	write(t, filepath.Join(a, "z.zst"), zst(t, []byte("zstd\n")))
	write(t, filepath.Join(a, ".hidden", "skip.json"), []byte("{}"))
	write(t, filepath.Join(a, "lz4"), []byte("LZ4Block\x00\x00rest"))
	roll := filepath.Join(a, "eventlog_v2_app-1")
	write(t, filepath.Join(roll, "appstatus_app-1.inprogress"), nil)
	write(t, filepath.Join(roll, "events_10_app-1"), []byte("ten\n"))
	write(t, filepath.Join(roll, "events_2_app-1"), []byte("two"))
	write(t, filepath.Join(roll, "events_1_app-1.zstd"), zst(t, []byte("one\n")))

	ins, err := collectors.Open(t.Context(), []string{a, filepath.Join(a, "x.ndjson")})
	require.NoError(t, err)
	var names []string
	for _, in := range ins {
		names = append(names, filepath.Base(in.Name))
	}
	require.Equal(t, []string{"eventlog_v2_app-1", "lz4", "x.ndjson", "y.json.gz", "z.zst"}, names, "hidden dirs skipped, duplicates read once")

	tests := []struct {
		in   collectors.Input
		want string
	}{
		{ins[0], "one\ntwo\nten\n"},
		{ins[2], "plain\n"},
		{ins[3], "gzipped\n"},
		{ins[4], "zstd\n"},
	}
	for _, tc := range tests {
		t.Run(filepath.Base(tc.in.Name), func(t *testing.T) {
			require.Equal(t, tc.want, readAll(t, tc.in))
		})
	}
	require.True(t, ins[0].InProgress)
	require.Equal(t, []string{"events_1_app-1.zstd", "events_2_app-1", "events_10_app-1"}, []string{
		filepath.Base(ins[0].Parts[0]), filepath.Base(ins[0].Parts[1]), filepath.Base(ins[0].Parts[2])})
	rc, err := ins[1].Open()
	require.NoError(t, err)
	_, err = io.ReadAll(rc)
	require.ErrorContains(t, err, "lz4 block", "a damaged lz4-java stream is a read error")
	require.NoError(t, rc.Close())

	t.Run("glob", func(t *testing.T) {
		ins, err := collectors.Open(t.Context(), []string{filepath.Join(a, "*.ndjson")})
		require.NoError(t, err)
		require.Len(t, ins, 1)
		_, err = collectors.Open(t.Context(), []string{filepath.Join(a, "*.nothing")})
		require.ErrorContains(t, err, "no files match")
	})
	t.Run("compacted rolling log", func(t *testing.T) {
		roll := filepath.Join(dir, "eventlog_v2_app-2")
		write(t, filepath.Join(roll, "appstatus_app-2"), nil)
		write(t, filepath.Join(roll, "events_1_app-2"), []byte("old\n"))
		write(t, filepath.Join(roll, "events_2_app-2.compact"), []byte("compacted\n"))
		write(t, filepath.Join(roll, "events_3_app-2"), []byte("new\n"))
		ins, err := collectors.Open(t.Context(), []string{roll})
		require.NoError(t, err)
		require.Len(t, ins, 1)
		require.False(t, ins[0].InProgress)
		require.Equal(t, "compacted\nnew\n", readAll(t, ins[0]), "parts before the last compact file are replaced by it")
	})
	t.Run("missing", func(t *testing.T) {
		_, err := collectors.Open(t.Context(), []string{filepath.Join(dir, "nope")})
		require.ErrorIs(t, err, os.ErrNotExist)
	})
	t.Run("inprogress name", func(t *testing.T) {
		require.True(t, collectors.IsInProgress("/x/app-1.inprogress"))
		require.True(t, collectors.IsInProgress("app-1.inprogress.zstd"))
		require.False(t, collectors.IsInProgress("app-1.zstd"))
	})
}

func TestDetect(t *testing.T) {
	p, err := collectors.Detect(parsers(), "x.ndjson", []byte(`{"Event":"SparkListenerLogStart","Spark Version":"3.5.1"}`))
	require.NoError(t, err)
	require.Equal(t, "spark-eventlog", p.Source())
	_, err = collectors.Detect(parsers(), "notes.txt", []byte("hello"))
	require.ErrorIs(t, err, collectors.ErrUnrecognized)
	require.ErrorContains(t, err, "tried trino-event, trino-runtime, spark-eventlog, duckdb-log, duckdb-profile, duckdb-history, duckdb-db")
	_, err = collectors.ParserFor(parsers(), "nope")
	require.ErrorIs(t, err, collectors.ErrUnknownSource)
	p, err = collectors.ParserFor(parsers(), "DuckDB-Log")
	require.NoError(t, err)
	require.Equal(t, "duckdb-log", p.Source())
}

func collect(t *testing.T, opts collectors.CollectOptions, paths ...string) (collectors.Stats, []collectors.QueryEvent, error) {
	t.Helper()
	var evs []collectors.QueryEvent
	st, err := collectors.Collect(t.Context(), parsers(), opts, paths, func(e collectors.QueryEvent) error {
		evs = append(evs, e)
		return nil
	})
	return st, evs, err
}

func TestCollectTrinoDir(t *testing.T) {
	st, evs, err := collect(t, collectors.CollectOptions{}, filepath.Join(logs, "trino"))
	require.NoError(t, err)
	require.Equal(t, 12, st.Events)
	require.Len(t, evs, 12)
	require.Equal(t, 7, st.Duplicates, "Kafka redelivery, the same event in several files, the runtime export as CSV and JSON")
	require.Equal(t, 3, st.BadRecords)
	require.Len(t, st.Bad, 3)
	require.Equal(t, 2, st.Bad[0].Line)
	require.Len(t, st.Files, 6)
	bySource := map[string]int{}
	for _, f := range st.Files {
		bySource[f.Source] += f.Events
		require.Empty(t, f.Err)
		require.Positive(t, f.Bytes)
	}
	require.Equal(t, map[string]int{"trino-event": 8, "trino-runtime": 4}, bySource)
	seen := map[string]bool{}
	for _, e := range evs {
		k := e.Source + "/" + e.QueryID
		require.False(t, seen[k], "duplicate %s", k)
		seen[k] = true
	}
}

func TestCollectOnFile(t *testing.T) {
	var names []string
	_, _, err := collect(t, collectors.CollectOptions{OnFile: func(f collectors.FileStats) {
		names = append(names, filepath.Base(f.Name)+"="+f.Source)
	}}, filepath.Join(logs, "spark"))
	require.NoError(t, err)
	require.Equal(t, []string{"application_1714560000000_0042=spark-eventlog", "eventlog-2024-05-03--12-00.gz=spark-eventlog",
		"eventlog_v2_app-20240502093000-0007=spark-eventlog", "gen_fixtures.py=", "local-1714650000000.inprogress=spark-eventlog"}, names)
}

func TestCollectAllFixtures(t *testing.T) {
	st, _, err := collect(t, collectors.CollectOptions{}, logs)
	require.NoError(t, err)
	require.Positive(t, st.Events)
	for _, f := range st.Files {
		if strings.Contains(f.Name, string(filepath.Separator)+"bad"+string(filepath.Separator)) || f.Source == "" {
			continue
		}
		require.Empty(t, f.Err, f.Name)
	}
}

func TestCollectBadRecords(t *testing.T) {
	badFile := filepath.Join(logs, "trino", "bad", "http-events-bad.ndjson")
	t.Run("max bad", func(t *testing.T) {
		st, _, err := collect(t, collectors.CollectOptions{MaxBad: 1}, badFile)
		require.NoError(t, err)
		require.Equal(t, 3, st.BadRecords)
		require.Len(t, st.Bad, 1)
		require.Equal(t, badFile+":2: invalid JSON", st.Bad[0].Error()[:len(badFile)+16])
	})
	t.Run("strict", func(t *testing.T) {
		st, evs, err := collect(t, collectors.CollectOptions{Strict: true}, badFile)
		require.Error(t, err)
		var br collectors.BadRecord
		require.ErrorAs(t, err, &br)
		require.Equal(t, 2, br.Line)
		require.Len(t, evs, 1, "events before the bad record were passed on")
		require.Equal(t, 1, st.BadRecords)
	})

	kafka, err := os.ReadFile(filepath.Join(logs, "trino", "kafka-completed.ndjson"))
	require.NoError(t, err)
	cut := append(bytes.Clone(kafka), kafka[:120]...)
	dir := t.TempDir()
	tests := []struct {
		name      string
		file      string
		bad, tail int
	}{
		{"in progress tail is forgiven", "events.ndjson.inprogress", 0, 1},
		{"finished file tail is bad", "events.ndjson", 1, 0},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			path := filepath.Join(dir, tc.file)
			write(t, path, cut)
			st, _, err := collect(t, collectors.CollectOptions{Strict: tc.bad == 0}, path)
			require.NoError(t, err)
			require.Equal(t, tc.bad, st.BadRecords)
			require.Equal(t, tc.tail, st.TruncatedTails)
			require.Equal(t, 5, st.Events)
		})
	}
}

func TestCollectErrors(t *testing.T) {
	dir := t.TempDir()
	notes := filepath.Join(dir, "notes.txt")
	write(t, notes, []byte("hello"))
	write(t, filepath.Join(dir, "empty.json"), nil)
	kafka := filepath.Join(logs, "trino", "kafka-completed.ndjson")

	t.Run("unrecognized", func(t *testing.T) {
		st, _, err := collect(t, collectors.CollectOptions{}, dir)
		require.NoError(t, err)
		require.Equal(t, 1, st.BadRecords, "empty files are skipped, unknown ones reported")
		require.Contains(t, st.Bad[0].Reason, "tried trino-event")
		_, _, err = collect(t, collectors.CollectOptions{Strict: true}, notes)
		require.ErrorIs(t, err, collectors.ErrUnrecognized)
	})
	t.Run("forced source", func(t *testing.T) {
		st, _, err := collect(t, collectors.CollectOptions{Source: "trino-runtime"}, kafka)
		require.NoError(t, err)
		require.Equal(t, 6, st.BadRecords, "every line lacks query_id")
		require.Equal(t, "trino-runtime", st.Files[0].Source)
		_, _, err = collect(t, collectors.CollectOptions{Source: "oracle"}, kafka)
		require.ErrorIs(t, err, collectors.ErrUnknownSource)
	})
	t.Run("sink error stops", func(t *testing.T) {
		stop := errors.New("store full")
		n := 0
		_, err := collectors.Collect(t.Context(), parsers(), collectors.CollectOptions{}, []string{kafka}, func(collectors.QueryEvent) error {
			n++
			return stop
		})
		require.ErrorIs(t, err, stop)
		require.Equal(t, 1, n)
	})
	t.Run("cancelled", func(t *testing.T) {
		ctx, cancel := context.WithCancel(t.Context())
		cancel()
		_, err := collectors.Collect(ctx, parsers(), collectors.CollectOptions{}, []string{kafka}, func(collectors.QueryEvent) error { return nil })
		require.ErrorIs(t, err, context.Canceled)
	})
}
