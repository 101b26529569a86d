package duckdb_test

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/floe-project/floe/collectors"
	"github.com/floe-project/floe/collectors/collectortest"
	"github.com/floe-project/floe/collectors/duckdb"
)

func readFx(t *testing.T, name string) []byte {
	t.Helper()
	b, err := os.ReadFile(fx(name))
	require.NoError(t, err)
	return b
}

// longSQL replaces the fixture's SQL with one of more than 64 KiB, as a
// generated IN list makes them.
func longSQL(t *testing.T, profile []byte, old string) ([]byte, string) {
	t.Helper()
	var b strings.Builder
	b.WriteString("SELECT order_id FROM orders WHERE customer_id IN (")
	for i := range 20000 {
		if i > 0 {
			b.WriteString(", ")
		}
		b.WriteString("100000")
	}
	b.WriteString(")")
	require.Greater(t, b.Len(), collectors.DetectBytes)
	out := bytes.Replace(profile, []byte(old), []byte(b.String()), 1)
	require.NotEqual(t, profile, out)
	return out, b.String()
}

func TestProfileWithLongSQL(t *testing.T) {
	tests := []struct{ file, sql string }{
		{"profile-1x-a.json", workload[0]},
		{"profile-2x.json", "SELECT * FROM lake.sales.orders WHERE customer_id = 3 AND order_date BETWEEN TIMESTAMP '2024-02-01' AND TIMESTAMP '2024-02-10'"},
	}
	for _, tc := range tests {
		t.Run(tc.file, func(t *testing.T) {
			data, sql := longSQL(t, readFx(t, tc.file), tc.sql)
			require.True(t, duckdb.ProfileParser{}.Detect(tc.file, data[:collectors.DetectBytes]), "detected on the head alone")
			path := filepath.Join(t.TempDir(), tc.file)
			require.NoError(t, os.WriteFile(path, data, 0o644))
			var evs []collectors.QueryEvent
			st, err := collectors.Collect(t.Context(), []collectors.Parser{duckdb.LogParser{}, duckdb.ProfileParser{}, duckdb.HistoryParser{}},
				collectors.CollectOptions{Strict: true}, []string{path}, func(e collectors.QueryEvent) error { evs = append(evs, e); return nil })
			require.NoError(t, err)
			require.Equal(t, "duckdb-profile", st.Files[0].Source)
			require.Len(t, evs, 1)
			require.Equal(t, sql, evs[0].SQL)
		})
	}
	t.Run("not every long JSON", func(t *testing.T) {
		head := []byte(`{"query_name": "short", "other": "` + strings.Repeat("x", collectors.DetectBytes) + `"`)[:collectors.DetectBytes]
		require.False(t, duckdb.ProfileParser{}.Detect("f.json", head), "the text ended inside the head without the profile's keys")
	})
}

func TestAppendedProfiles(t *testing.T) {
	a, b := readFx(t, "profile-1x-a.json"), readFx(t, "profile-2x.json")
	path := filepath.Join(t.TempDir(), "profile.json")
	require.NoError(t, os.WriteFile(path, bytes.Join([][]byte{a, b, a}, []byte("\n")), 0o644))
	evs, bad := collectortest.Parse(t, duckdb.ProfileParser{}, path)
	require.Empty(t, bad)
	require.Len(t, evs, 3, "every document of the file is read")
	require.Equal(t, workload[0], evs[0].SQL)
	require.Equal(t, workload[0], evs[2].SQL)
	require.NotEqual(t, evs[0].QueryID, evs[2].QueryID, "the same query profiled twice")
}

func TestProfileBadRecordLine(t *testing.T) {
	data := bytes.Replace(readFx(t, "profile-1x-a.json"), []byte(`"rows_returned": 67,`), []byte(`"rows_returned": 67`), 1)
	path := filepath.Join(t.TempDir(), "profile.json")
	require.NoError(t, os.WriteFile(path, data, 0o644))
	_, bad := collectortest.Parse(t, duckdb.ProfileParser{}, path)
	require.Len(t, bad, 1)
	require.Equal(t, 7, bad[0].Line, "the line after the missing comma")
	require.True(t, strings.HasPrefix(bad[0].Error(), path+":7: invalid JSON"), bad[0].Error())
}
