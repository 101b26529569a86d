package extract_test

import (
	"bytes"
	"encoding/json"
	"flag"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/floe-project/floe/analyzer/extract"
)

var update = flag.Bool("update", false, "rewrite the expected JSON of the SQL corpus")

// corpusDir holds testdata/sql/<dialect>/*.sql, statements separated by
// "-- name: <name>" lines, with <file>.json holding the expected contract
// of every statement by name.
const corpusDir = "../../testdata/sql"

type corpusStmt struct {
	dialect extract.Dialect
	file    string
	name    string
	sql     string
}

// loadCorpus reads every statement of the regression corpus.
func loadCorpus(tb testing.TB) []corpusStmt {
	tb.Helper()
	files, err := filepath.Glob(filepath.Join(corpusDir, "*", "*.sql"))
	require.NoError(tb, err)
	require.NotEmpty(tb, files)
	var out []corpusStmt
	for _, f := range files {
		d, err := extract.ParseDialect(filepath.Base(filepath.Dir(f)))
		require.NoError(tb, err, f)
		b, err := os.ReadFile(f)
		require.NoError(tb, err)
		for _, s := range splitCorpus(string(b)) {
			s.dialect = d
			s.file = f
			out = append(out, s)
		}
	}
	return out
}

func splitCorpus(text string) []corpusStmt {
	var out []corpusStmt
	var cur *corpusStmt
	var body strings.Builder
	flush := func() {
		if cur != nil {
			cur.sql = strings.TrimSpace(body.String())
			out = append(out, *cur)
		}
		body.Reset()
	}
	for _, line := range strings.SplitAfter(text, "\n") {
		if rest, ok := strings.CutPrefix(strings.TrimSpace(line), "-- name:"); ok {
			flush()
			cur = &corpusStmt{name: strings.TrimSpace(rest)}
			continue
		}
		body.WriteString(line)
	}
	flush()
	return out
}

func TestCorpusGolden(t *testing.T) {
	stmts := loadCorpus(t)
	byFile := map[string][]corpusStmt{}
	for _, s := range stmts {
		byFile[s.file] = append(byFile[s.file], s)
	}
	files := make([]string, 0, len(byFile))
	for f := range byFile {
		files = append(files, f)
	}
	sort.Strings(files)
	for _, f := range files {
		golden := strings.TrimSuffix(f, ".sql") + ".json"
		got := map[string]extract.Contract{}
		seen := map[string]bool{}
		for _, s := range byFile[f] {
			require.False(t, seen[s.name], "duplicate statement name %s in %s", s.name, f)
			seen[s.name] = true
			got[s.name] = extract.Parse(s.dialect, s.sql).Contract()
		}
		if *update {
			var buf bytes.Buffer
			enc := json.NewEncoder(&buf)
			enc.SetIndent("", "  ")
			enc.SetEscapeHTML(false)
			require.NoError(t, enc.Encode(got))
			require.NoError(t, os.WriteFile(golden, buf.Bytes(), 0o644))
			continue
		}
		b, err := os.ReadFile(golden)
		require.NoError(t, err, "missing golden file; run go test -run TestCorpusGolden -update")
		want := map[string]extract.Contract{}
		require.NoError(t, json.Unmarshal(b, &want))
		for _, s := range byFile[f] {
			t.Run(filepath.Base(filepath.Dir(f))+"/"+filepath.Base(f)+"/"+s.name, func(t *testing.T) {
				w, ok := want[s.name]
				require.True(t, ok, "no expected output for %s", s.name)
				require.Equal(t, normalize(t, w), normalize(t, got[s.name]))
			})
		}
		require.Len(t, want, len(byFile[f]), "golden %s has entries for statements that no longer exist", golden)
	}
}

// normalize makes empty and nil slices compare equal after a JSON round trip.
func normalize(t *testing.T, c extract.Contract) extract.Contract {
	t.Helper()
	b, err := json.Marshal(c)
	require.NoError(t, err)
	var out extract.Contract
	require.NoError(t, json.Unmarshal(b, &out))
	return out
}
func TestCorpusSize(t *testing.T) {
	stmts := loadCorpus(t)
	perDialect := map[extract.Dialect]int{}
	for _, s := range stmts {
		perDialect[s.dialect]++
	}
	require.GreaterOrEqual(t, len(stmts), 150)
	for _, d := range []extract.Dialect{extract.Trino, extract.Athena, extract.Spark, extract.Snowflake, extract.DuckDB} {
		require.GreaterOrEqual(t, perDialect[d], 15, "dialect %s", d)
	}
}
