package extract_test

import (
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/floe-project/floe/analyzer/extract"
)

// The decision-support corpus: testdata/sql/<dialect>/decision_support.sql,
// whose statements carry "-- want: table column op" lines written by
// reading the SQL ("join" for a side of an equi-join), over the tables of
// testdata/sql/decision_support_ddl.sql.
const (
	dsFile = "decision_support.sql"
	dsDDL  = corpusDir + "/decision_support_ddl.sql"
)

// dsStmt is one statement of the decision-support corpus with what it
// should yield.
type dsStmt struct {
	corpusStmt
	want []string
}

func loadDecisionSupport(tb testing.TB) (map[extract.Dialect][]dsStmt, *extract.SchemaMap) {
	tb.Helper()
	ddl, err := os.ReadFile(dsDDL)
	require.NoError(tb, err)
	schemas, warns := extract.ReadDDL(extract.Trino, string(ddl))
	require.Empty(tb, warns)
	out := map[extract.Dialect][]dsStmt{}
	for _, s := range loadCorpus(tb) {
		if filepath.Base(s.file) != dsFile {
			continue
		}
		st := dsStmt{corpusStmt: s}
		for _, line := range strings.Split(s.sql, "\n") {
			if w, ok := strings.CutPrefix(strings.TrimSpace(line), "-- want:"); ok {
				st.want = append(st.want, strings.Join(strings.Fields(w), " "))
			}
		}
		require.NotEmpty(tb, st.want, "%s: %s has no want lines", s.file, s.name)
		out[s.dialect] = append(out[s.dialect], st)
	}
	return out, schemas
}

// triples are the (table, column, op) a result attributes: its predicates
// and both sides of its joins (op "join"); "*" tables are not attributed.
func triples(r extract.Result) map[string]bool {
	got := map[string]bool{}
	for _, p := range r.Predicates {
		if p.Table != "*" {
			got[p.Table+" "+p.Column+" "+string(p.Op)] = true
		}
	}
	for _, j := range r.Joins {
		for _, c := range []extract.ColumnRef{j.Left, j.Right} {
			if c.Table != "*" {
				got[c.Table+" "+c.Column+" join"] = true
			}
		}
	}
	return got
}

// recall is the share of wanted triples found, and the misses.
func recall(stmts []dsStmt, opts extract.Options) (float64, []string) {
	found, total := 0, 0
	var misses []string
	for _, s := range stmts {
		got := triples(extract.ParseWith(s.dialect, s.sql, opts))
		for _, w := range s.want {
			total++
			if got[w] {
				found++
			} else {
				misses = append(misses, s.name+": "+w)
			}
		}
	}
	if total == 0 {
		return 0, nil
	}
	return float64(found) / float64(total), misses
}

// TestDecisionSupportRecall requires every wanted (table, column, op) of
// the corpus with its DDL, and records how much the extractor finds
// without it.
func TestDecisionSupportRecall(t *testing.T) {
	byDialect, schemas := loadDecisionSupport(t)
	dialects := make([]string, 0, len(byDialect))
	for d := range byDialect {
		dialects = append(dialects, string(d))
	}
	sort.Strings(dialects)
	require.Equal(t, []string{"duckdb", "spark", "trino"}, dialects)
	for _, name := range dialects {
		d := extract.Dialect(name)
		stmts := byDialect[d]
		require.GreaterOrEqual(t, len(stmts), 8, name)
		got, misses := recall(stmts, extract.Options{Schemas: schemas})
		require.Empty(t, misses, "%s with the DDL", name)
		require.Equal(t, 1.0, got)
		bare, _ := recall(stmts, extract.Options{})
		t.Logf("%s: recall %.3f with the DDL, %.3f without", name, got, bare)
		require.Less(t, bare, 0.6, "%s: the corpus is meant to need the schema", name)
	}
}
