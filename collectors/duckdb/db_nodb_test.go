//go:build !duckdb

package duckdb_test

import (
	"bytes"
	"os"
	"path/filepath"
	"testing"

	"github.com/floe-project/floe/collectors"
	"github.com/floe-project/floe/collectors/duckdb"
	"github.com/stretchr/testify/require"
)

func TestDBWithoutTag(t *testing.T) {
	head := make([]byte, 4096)
	copy(head[8:], "DUCK")
	path := filepath.Join(t.TempDir(), "queries.duckdb")
	require.NoError(t, os.WriteFile(path, head, 0o644))

	p := duckdb.DBParser{}
	require.True(t, p.Detect("queries.duckdb", head))
	require.False(t, p.Detect("x.csv", []byte("context_id,timestamp,type,log_level,message\n")))
	err := p.Parse(t.Context(), path, bytes.NewReader(head), func(collectors.QueryEvent) error { return nil }, func(collectors.BadRecord) error { return nil })
	require.ErrorIs(t, err, duckdb.ErrNoDuckDB)
	require.ErrorContains(t, err, "reading .duckdb files needs floe built with -tags duckdb")

	st, err := collectors.Collect(t.Context(), []collectors.Parser{duckdb.LogParser{}, p}, collectors.CollectOptions{}, []string{path}, func(collectors.QueryEvent) error { return nil })
	require.NoError(t, err)
	require.Equal(t, 1, st.BadRecords)
	require.Contains(t, st.Files[0].Err, "-tags duckdb")
}
