package control_test

import (
	"fmt"
	"math"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/apache/iceberg-go"
	"github.com/apache/iceberg-go/table"
	"github.com/stretchr/testify/require"

	"github.com/floe-project/floe/internal/oracle"
	"github.com/floe-project/floe/internal/testlake"
	"github.com/floe-project/floe/lake"
	"github.com/floe-project/floe/rewriter"
	"github.com/floe-project/floe/simulator"
)

// appendCodes appends a file of n rows written by iceberg-go: id uniform in [0, 160000)
// (not in arrival order, which a sort on code would keep within each code), code 200
// three rows in four, else 100 or 500, amount uniform in [0, 1000).
func appendCodes(t *testing.T, tbl *table.Table, rng *rand.Rand, n int) *table.Table {
	t.Helper()
	b := array.NewRecordBuilder(memory.DefaultAllocator, testlake.ArrowSchema(t, tbl))
	defer b.Release()
	for range n {
		code := int32(200)
		switch rng.IntN(8) {
		case 0:
			code = 100
		case 1:
			code = 500
		}
		b.Field(0).(*array.Int64Builder).Append(rng.Int64N(160_000))
		b.Field(1).(*array.Int32Builder).Append(code)
		b.Field(2).(*array.Float64Builder).Append(float64(rng.IntN(100_000)) / 100)
	}
	rec := b.NewRecordBatch()
	defer rec.Release()
	return testlake.Append(t, tbl, rec)
}

// TestTreeSetCutRewritten plans, approves and runs the rewrite of a real table into a
// tree whose root is a set cut, through control.Service as the CLI and the daemon do.
// The workload ranges over id and asks for the codes 100 and 500, which lie on both
// sides of 200 (three rows in four): the tree learned for it cuts `code IN (100, 500)`,
// and after the rewrite every file of the other side holds code 200 alone, so the code
// queries skip them. DuckDB reads the same rows back, the table records the tree with
// its set, and the files skipped that iceberg-go's own planner counts on the rewritten
// table are within 2 pp of the projection.
func TestTreeSetCutRewritten(t *testing.T) {
	if testing.Short() {
		t.Skip("writes, plans and rewrites a real table")
	}
	ctx := t.Context()
	// The workload: ranges of id, and the codes around 200, named together and apart.
	qrng := rand.New(rand.NewPCG(7, 46))
	var stmts []string
	for range 16 {
		lo := qrng.IntN(150_000)
		stmts = append(stmts, fmt.Sprintf("SELECT * FROM db.codes WHERE id BETWEEN %d AND %d", lo, lo+10_000))
	}
	for range 2 {
		stmts = append(stmts,
			"SELECT * FROM db.codes WHERE code IN (100, 500)",
			"SELECT count(*) FROM db.codes WHERE code = 100",
			fmt.Sprintf("SELECT * FROM db.codes WHERE code = 500 AND amount > %d", qrng.IntN(500)))
	}
	rng := rand.New(rand.NewPCG(46, 7))
	fx := planTreeTable(t, treeSpec{name: "codes", layout: "tree(id, code)", files: 24, stmts: stmts,
		schema: iceberg.NewSchema(0,
			iceberg.NestedField{ID: 1, Name: "id", Type: iceberg.PrimitiveTypes.Int64, Required: true},
			iceberg.NestedField{ID: 2, Name: "code", Type: iceberg.PrimitiveTypes.Int32, Required: true},
			iceberg.NestedField{ID: 3, Name: "amount", Type: iceberg.PrimitiveTypes.Float64, Required: true}),
		fill: func(tbl *table.Table) *table.Table {
			for range 8 {
				tbl = appendCodes(t, tbl, rng, 20_000)
			}
			return tbl
		}})
	w, id, treeLayout, queries := fx.w, fx.id, fx.layout, fx.queries
	p := fx.plan.Projection
	require.NotNil(t, p.TreeExplanation)
	require.NotEmpty(t, p.TreeExplanation.Cuts)
	root := p.TreeExplanation.Cuts[0]
	require.Equal(t, "code IN (100, 500)", root.Predicate, "%s", strings.Join(p.TreeExplanation.Lines(0), "\n"))

	tbl, err := lake.LoadTable(ctx, w.Catalog, id)
	require.NoError(t, err)
	got, err := oracle.ChecksumPreferDuckDB(ctx, tbl)
	require.NoError(t, err)
	require.Equal(t, fx.want, got, "every row is kept")
	recorded, err := rewriter.RecordedTree(tbl.Metadata(), treeLayout)
	require.NoError(t, err)
	require.NotNil(t, recorded)
	require.Len(t, recorded.Root().Cut.Set, 2, "the table records the set cut")

	// The files of the right side hold code 200 alone; the others 100 to 500.
	after, err := lake.LoadState(ctx, id, tbl, lake.LoadOptions{})
	require.NoError(t, err)
	only200 := 0
	for _, f := range after.DataFiles {
		lo, hi := f.Lower[2].(iceberg.Int32Literal), f.Upper[2].(iceberg.Int32Literal)
		if lo == 200 && hi == 200 {
			only200++
		}
	}
	require.GreaterOrEqual(t, only200, len(after.DataFiles)/2, "of %d files", len(after.DataFiles))

	m, err := simulator.Measure(ctx, tbl, queries)
	require.NoError(t, err)
	t.Logf("%s\nprojected %.2f%% of %d files skipped, measured %.2f%% of %d (%d files hold code 200 alone)",
		strings.Join(p.TreeExplanation.Lines(0), "\n"), p.SkippedPct, p.FilesAfter, m.SkippedPct, m.FilesTotal, only200)
	require.LessOrEqual(t, math.Abs(m.SkippedPct-p.SkippedPct), 2.0, "projected within 2 pp of iceberg-go's planner")
}
