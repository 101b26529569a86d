package ingest_test

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/klauspost/compress/zstd"
	"github.com/stretchr/testify/require"

	"github.com/floe-project/floe/collectors"
	"github.com/floe-project/floe/collectors/ingest"
	"github.com/floe-project/floe/control/store"
	"github.com/floe-project/floe/expr"
)

// zstdFlushed compresses lines as a running Spark application's zstd
// codec writes them: flushed after each line, the frame not closed.
func zstdFlushed(t *testing.T, lines []string) []byte {
	t.Helper()
	var buf bytes.Buffer
	w, err := zstd.NewWriter(&buf, zstd.WithEncoderConcurrency(1))
	require.NoError(t, err)
	for _, l := range lines {
		_, err := w.Write([]byte(l + "\n"))
		require.NoError(t, err)
		require.NoError(t, w.Flush())
	}
	out := bytes.Clone(buf.Bytes())
	require.NoError(t, w.Close())
	return out
}

// TestRunLiveSparkHistory collects a Spark history directory as a live
// cluster leaves it: a rolling log of an application that has not written
// events yet, and a running application's zstd log whose frame is open.
// Nothing fails; the running query is picked up finished next time.
func TestRunLiveSparkHistory(t *testing.T) {
	ctx := t.Context()
	l := newLake(t)
	st := openStore(t)
	b, err := os.ReadFile(filepath.Join("testdata", "spark-app-20260501120000-0001"))
	require.NoError(t, err)
	lines := splitLines(b)
	dir := t.TempDir()
	require.NoError(t, os.MkdirAll(filepath.Join(dir, "eventlog_v2_app-2"), 0o755))
	require.NoError(t, os.WriteFile(filepath.Join(dir, "eventlog_v2_app-2", "appstatus_app-2.inprogress"), nil, 0o644))
	path := filepath.Join(dir, "app-20260501120000-0001.zstd.inprogress")
	require.NoError(t, os.WriteFile(path, zstdFlushed(t, lines[:3]), 0o644))

	opts := l.options(dir)
	opts.Strict = true
	rep, err := ingest.Run(ctx, opts, st)
	require.NoError(t, err)
	require.Equal(t, 1, rep.Inserted)
	require.Zero(t, rep.Bad)
	require.Len(t, rep.Files, 2)
	require.Contains(t, rep.Files[1].Note, "appstatus_app-2.inprogress")
	require.True(t, rep.Files[0].TruncatedTail)
	evs, err := st.Queries(ctx, store.QueryFilter{})
	require.NoError(t, err)
	require.Equal(t, collectors.StateUnknown, evs[0].State)

	require.NoError(t, os.WriteFile(path, zstdFlushed(t, lines), 0o644))
	rep, err = ingest.Run(ctx, opts, st)
	require.NoError(t, err)
	require.Equal(t, 1, rep.Inserted, "the finished execution replaces the running one")
	evs, err = st.Queries(ctx, store.QueryFilter{})
	require.NoError(t, err)
	require.Len(t, evs, 1)
	require.Equal(t, collectors.StateSucceeded, evs[0].State)
}

// TestRunCapsLongSQL keeps at most MaxSQLBytes of a generated statement's
// text, marked truncated, while its predicates come from the whole text.
func TestRunCapsLongSQL(t *testing.T) {
	ctx := t.Context()
	l := newLake(t)
	st := openStore(t)
	var b strings.Builder
	b.WriteString("SELECT * FROM iceberg.web.events WHERE tenant_id IN (")
	for i := range 20000 {
		if i > 0 {
			b.WriteString(", ")
		}
		fmt.Fprintf(&b, "%d", 1000000+i)
	}
	b.WriteString(") AND region = 'é'")
	sql := b.String()
	ev := `{"metadata":{"queryId":"q1","query":"` + sql + `","queryState":"FINISHED"},"statistics":{"wallTime":1.0},` +
		`"context":{"user":"u","catalog":"iceberg","schema":"web","serverVersion":"478"},"createTime":"2024-05-01T12:00:00Z","endTime":"2024-05-01T12:00:01Z"}`
	dir := t.TempDir()
	require.NoError(t, os.WriteFile(filepath.Join(dir, "e.ndjson"), []byte(ev+"\n"), 0o644))
	opts := l.options(dir)
	opts.MaxSQLBytes = 64 << 10
	rep, err := ingest.Run(ctx, opts, st)
	require.NoError(t, err)
	require.Equal(t, 1, rep.Inserted)
	require.Contains(t, rep.Warnings, "SQL text longer than 65536 bytes truncated (its predicates were read from the whole text)")
	evs, err := st.Queries(ctx, store.QueryFilter{})
	require.NoError(t, err)
	require.Len(t, evs, 1)
	e := evs[0]
	require.True(t, e.SQLTruncated)
	require.LessOrEqual(t, len(e.SQL), 64<<10)
	require.Equal(t, sql[:len(e.SQL)], e.SQL)
	require.True(t, utf8.ValidString(e.SQL))
	var leaves []*expr.Pred
	var walk func(n *expr.Node)
	walk = func(n *expr.Node) {
		if n == nil {
			return
		}
		if n.Pred != nil {
			leaves = append(leaves, n.Pred)
		}
		for _, c := range n.Children {
			walk(c)
		}
	}
	walk(e.Tables[0].Filter)
	require.Len(t, leaves, 2, "the predicate after the cut is kept")
	require.Len(t, leaves[0].Values, 20000)
}
