package control_test

import (
	"context"
	"fmt"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/apache/iceberg-go"
	"github.com/apache/iceberg-go/catalog"
	"github.com/stretchr/testify/require"

	"github.com/floe-project/floe/analyzer/extract"
	"github.com/floe-project/floe/control"
	"github.com/floe-project/floe/internal/testlake"
	"github.com/floe-project/floe/lake"
	"github.com/floe-project/floe/layout"
)

// candidateTable writes 8 files of 4,000 rows in arrival order: id ascending, k
// uniform in [0, 1000), amount uniform in [0, 1000).
func candidateTable(t *testing.T) (*lake.State, int64) {
	t.Helper()
	w := testlake.New(t)
	if c, ok := w.Catalog.(catalog.Closer); ok {
		t.Cleanup(func() { require.NoError(t, c.Close()) })
	}
	schema := iceberg.NewSchema(0,
		iceberg.NestedField{ID: 1, Name: "id", Type: iceberg.PrimitiveTypes.Int64, Required: true},
		iceberg.NestedField{ID: 2, Name: "k", Type: iceberg.PrimitiveTypes.Int64, Required: true},
		iceberg.NestedField{ID: 3, Name: "amount", Type: iceberg.PrimitiveTypes.Float64, Required: true})
	tbl := w.CreateTable(t, "db", "c", schema, nil, nil, nil)
	rng := rand.New(rand.NewPCG(46, 2))
	b := array.NewRecordBuilder(memory.DefaultAllocator, testlake.ArrowSchema(t, tbl))
	defer b.Release()
	for f := range 8 {
		for j := range 4000 {
			b.Field(0).(*array.Int64Builder).Append(int64(f*4000 + j))
			b.Field(1).(*array.Int64Builder).Append(rng.Int64N(1000))
			b.Field(2).(*array.Float64Builder).Append(float64(rng.IntN(100_000)) / 100)
		}
		rec := b.NewRecordBatch()
		tbl = testlake.Append(t, tbl, rec)
		rec.Release()
	}
	st, err := lake.LoadState(context.Background(), lake.Ident{Catalog: w.Name, Namespace: []string{"db"}, Name: "c"}, tbl, lake.LoadOptions{})
	require.NoError(t, err)
	var bytes int64
	for _, f := range st.DataFiles {
		bytes += f.SizeBytes
	}
	return st, bytes
}

// projectSQL projects the candidates the SQL workload's own filters propose, at 16 files.
func projectSQL(t *testing.T, st *lake.State, bytes int64, sql string) (control.Projections, control.Choice) {
	t.Helper()
	trino, err := extract.ParseDialect("trino")
	require.NoError(t, err)
	res, err := control.Project(context.Background(), nil, st, control.ProjectOptions{
		WithCurrent: true, Seed: 1, TargetFileSizeBytes: bytes/16 + 1,
		Workload: control.WorkloadOptions{SQL: strings.NewReader(sql), SQLName: "q.sql", Dialect: trino},
	})
	require.NoError(t, err)
	c, err := control.ChoosePlan(res.Projections, control.ChooseOptions{State: st})
	require.NoError(t, err)
	for _, p := range res.Projections {
		t.Logf("%-40s %5.1f%% skipped ± %.1f, %d files, bound ratio %.2f", p.Layout, p.SkippedPct, p.ErrorPP, p.FilesAfter, p.BoundRatio)
	}
	return res, c
}

// TestCandidateTreeRecommended projects the candidates of a workload that filters on
// three columns: ranges of id (which a sort on id serves), lookups of k, and amount >
// 990, true of 1% of the rows, which no sort or curve gathers. A tree over the three is
// proposed beside the sorts and curves, and, judged by the same projection, it is the
// one recommended.
func TestCandidateTreeRecommended(t *testing.T) {
	if testing.Short() {
		t.Skip("writes a real table and projects every candidate")
	}
	st, bytes := candidateTable(t)
	rng := rand.New(rand.NewPCG(7, 46))
	var stmts []string
	for range 6 {
		lo := rng.IntN(30_000)
		stmts = append(stmts,
			fmt.Sprintf("SELECT * FROM db.c WHERE id BETWEEN %d AND %d", lo, lo+1500),
			fmt.Sprintf("SELECT * FROM db.c WHERE k = %d", rng.IntN(1000)),
			fmt.Sprintf("SELECT * FROM db.c WHERE amount > %d", 985+rng.IntN(10)))
	}
	res, c := projectSQL(t, st, bytes, strings.Join(stmts, ";\n"))
	var tree, bestOther float64
	for _, p := range res.Projections {
		switch p.Layout.Strategy {
		case layout.StrategyTree:
			var cols []string
			for _, c := range p.Layout.Columns {
				cols = append(cols, c.Name)
			}
			require.ElementsMatch(t, []string{"id", "k", "amount"}, cols, "every filtered column")
			require.NotEmpty(t, p.Tree)
			tree = p.SkippedPct
		case layout.StrategyCurrent:
		default:
			bestOther = max(bestOther, p.SkippedPct)
		}
	}
	require.Positive(t, tree, "a tree is among the candidates")
	require.Greater(t, tree, bestOther+5, "the tree skips more than the best sort or curve")
	require.True(t, c.Gain)
	require.Equal(t, layout.StrategyTree, c.Best.Layout.Strategy, "the tree is recommended")
}

// TestCandidateNoTreeOnOneColumn projects the candidates of a workload that filters on
// one column: a tree over one column is a sort, and none is proposed.
func TestCandidateNoTreeOnOneColumn(t *testing.T) {
	if testing.Short() {
		t.Skip("writes a real table and projects every candidate")
	}
	st, bytes := candidateTable(t)
	var stmts []string
	for i := range 10 {
		stmts = append(stmts, fmt.Sprintf("SELECT * FROM db.c WHERE id BETWEEN %d AND %d", i*3000, i*3000+1500))
	}
	res, c := projectSQL(t, st, bytes, strings.Join(stmts, ";\n"))
	for _, p := range res.Projections {
		require.NotEqual(t, layout.StrategyTree, p.Layout.Strategy, p.Layout.String())
	}
	require.Equal(t, "sort(id)", strings.Fields(c.Best.Layout.String())[0])
}
