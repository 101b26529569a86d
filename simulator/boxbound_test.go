package simulator_test

import (
	"context"
	"fmt"
	"math"
	"slices"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/floe-project/floe/layout"
	"github.com/floe-project/floe/simulator"
)

// gridRows are 10,000 rows whose id and n are independent: id is the row's number and
// n = id mod 100, so every run of 100 ids holds each n once. ts moves with id: a
// minute a row, give or take a few.
func gridRows() []eventRow {
	rows := make([]eventRow, 10_000)
	for i := range rows {
		n := int32(i % 100)
		ts := baseTime.Add(time.Duration(i+(i*7)%5) * time.Minute)
		rows[i] = eventRow{id: int64(i), n: &n, ts: &ts}
	}
	return rows
}

// tsRanges are ranges of 100 minutes (about 1% of the rows).
func tsRanges(k int) []simulator.Query {
	var qs []simulator.Query
	for j := range k {
		lo := baseTime.Add(time.Duration(1000*j+1200) * time.Minute)
		qs = append(qs, simulator.Query{ID: fmt.Sprint("ts", j), Weight: 1, Filter: and(pred("ts", ">=", ts(lo)), pred("ts", "<", ts(lo.Add(100*time.Minute))))})
	}
	return qs
}

// Lookups of 100 ids (w = 1%, one run) and of one n (w = 1%, one run), none at either
// end of its column; off shifts them, for a second draw.
func idRanges(k, off int) []simulator.Query {
	var qs []simulator.Query
	for j := range k {
		lo := int64(1000*j + 700 + off)
		qs = append(qs, simulator.Query{ID: fmt.Sprint("id", j), Weight: 1, Filter: pred("id", "between", num(lo), num(lo+99))})
	}
	return qs
}

func nLookups(k, off int) []simulator.Query {
	var qs []simulator.Query
	for j := range k {
		qs = append(qs, simulator.Query{ID: fmt.Sprint("n", j), Weight: 1, Filter: pred("n", "=", num(int64(30+5*j+off)))})
	}
	return qs
}

func TestBoxBound(t *testing.T) {
	_, s := wholeSample(t, gridRows(), 4)
	const k = 16
	grid := append(idRanges(8, 0), nLookups(8, 0)...)
	// On the grid, an id range reads 16 × (1/4 + 1%) files and a lookup of one n,
	// whose rows fit in a file's span, 16 × 1/4.
	const idOnGrid, nOnGrid = k * (0.25 + 0.01), k * 0.25
	sID9 := math.Sqrt(9.0 / 8 / k)
	sN9 := 1 / (k * sID9)
	// Ranges of ts are ranges of id: sixteen ranges on one dimension to eight
	// lookups of n on the other (16·s_id = 8·s_n).
	sID16 := math.Sqrt(8.0 / 16 / k)
	sN16 := 1 / (k * sID16)
	orQuery := simulator.Query{ID: "or", Weight: 1, Filter: or(pred("id", "=", num(5000)), pred("n", "=", num(50)))}
	edge := func(w float64) simulator.Query {
		return simulator.Query{ID: "edge", Weight: w, Filter: pred("n", "=", num(0))}
	}
	for _, tc := range []struct {
		name      string
		queries   []simulator.Query
		want      float64 // mean files read
		wantSpans map[string]float64
		modeled   int
		slabs     []simulator.BoxSlab
	}{
		// One family: each file spans 1/16 of the ids, and a range of 1% of them
		// meets 1/16 + 1% of the files: 1 + 16 × 1%.
		{"one column", idRanges(8, 0), 1 + k*0.01, map[string]float64{"id": 1.0 / k}, 8, nil},
		// Two independent families share the 16 files: a √16 × √16 grid, where the
		// per-query bound is one file.
		{"two independent columns", grid, (idOnGrid + nOnGrid) / 2, map[string]float64{"id": 0.25, "n": 0.25}, 16, nil},
		// An OR across the columns is not priced: it counts its per-query bound.
		{"an OR across columns counts its bound", append(slices.Clone(grid), orQuery),
			(8*idOnGrid + 8*nOnGrid + 1) / 17, map[string]float64{"id": 0.25, "n": 0.25}, 16, nil},
		// A lookup of the least n fits a slab, a file of its own at the low end of
		// n; worth 10 queries, it saves more than the file the slab adds to each id
		// range, and is read in one file.
		{"a query at a column's end gets a slab", append(slices.Clone(grid), edge(10)),
			(8*(idOnGrid+1) + 8*nOnGrid + 10*1) / 26, map[string]float64{"id": 0.25, "n": 0.25}, 17, []simulator.BoxSlab{{Column: "n", Low: true, Files: 1}}},
		// Worth one query, the slab costs more than it saves: the lookup stays on the
		// grid, like any other n, and nine lookups of n to eight ranges of id narrow
		// the files' n a little (8·s_id = 9·s_n).
		{"and not when it saves less than it costs", append(slices.Clone(grid), edge(1)),
			k * (8*(sID9+0.01) + 9*sN9) / 17, map[string]float64{"id": sID9, "n": sN9}, 17, nil},
		// A range of ts is priced as the ids it spans: the files narrow on id are
		// narrow on ts, not a third dimension of the grid.
		{"a column that moves with another shares its spans", append(slices.Clone(grid), tsRanges(8)...),
			k * (16*(sID16+0.01) + 8*sN16) / 24, map[string]float64{"id": sID16, "n": sN16, "ts": 1}, 24, nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			b, err := s.BoxBound(tc.queries, k)
			require.NoError(t, err)
			require.InDelta(t, tc.want, b.MeanFiles, 0.005*tc.want, "mean files read")
			require.Equal(t, tc.modeled, b.Modeled, "queries priced")
			require.Equal(t, tc.slabs, b.Slabs, "slabs")
			require.Len(t, b.PerQuery, len(tc.queries))
			for c, want := range tc.wantSpans {
				require.InDelta(t, want, b.Spans[c], 0.005, "span of %s", c)
			}
		})
	}
}

// TestBoxBoundHoldsAgainstLayouts projects real layouts of the grid rows for a draw of
// the two independent families: none reads fewer files than the box model allows at
// its file count, and the best comes within a small factor of it. The tree learns on
// another draw, as a recommendation does: on the very queries it learned from it can
// put every cut in a gap between them, which no layout can do for queries to come.
func TestBoxBoundHoldsAgainstLayouts(t *testing.T) {
	_, s := wholeSample(t, gridRows(), 4)
	train := append(idRanges(8, 0), nLookups(8, 0)...)
	qs := append(idRanges(8, 333), nLookups(8, 4)...)
	best := math.Inf(1)
	for _, spec := range []string{"sort(id)", "sort(n)", "sort(n, id)", "zorder(id, n)", "hilbert(id, n)", "tree(id, n)"} {
		l, err := layout.Parse(spec)
		require.NoError(t, err)
		p, err := simulator.ProjectSample(s, l, qs, s.TableBytes/16, simulator.ProjectOptions{TreeWorkload: train})
		require.NoError(t, err)
		b, err := s.BoxBound(qs, p.FilesAfter)
		require.NoError(t, err)
		t.Logf("%-16s %2d files: reads %.2f, box model %.2f, per-query bound %.2f", spec, p.FilesAfter, p.MeanFilesRead, b.MeanFiles, p.MeanBoundFiles)
		require.GreaterOrEqual(t, p.MeanFilesRead, 0.95*b.MeanFiles, "%s reads fewer files than the box model allows", spec)
		best = min(best, p.MeanFilesRead/b.MeanFiles)
	}
	require.Less(t, best, 1.5, "the best layout comes near the model")
}

// TestProjectCarriesTheBoxModel: every projection of Project carries the box model
// at its own file count, the same figure BoxBound gives for the sample it took.
func TestProjectCarriesTheBoxModel(t *testing.T) {
	st, _ := wholeSample(t, gridRows(), 4)
	qs := append(idRanges(8, 333), nLookups(8, 4)...)
	var ls []layout.Layout
	for _, spec := range []string{"current", "sort(id)", "hilbert(id, n)"} {
		l, err := layout.Parse(spec)
		require.NoError(t, err)
		l.TargetFileSizeBytes = 4 << 10
		ls = append(ls, l)
	}
	ps, err := simulator.Project(context.Background(), st, ls, qs, simulator.ProjectOptions{})
	require.NoError(t, err)
	for _, p := range ps {
		require.Positive(t, p.MeanBoxFiles, "%s", p.Layout)
		require.InDelta(t, p.MeanFilesRead/p.MeanBoxFiles, p.BoxRatio, 1e-9, "%s", p.Layout)
		t.Logf("%-16s %3d files: reads %.2f, box %.2f (%.2fx), bound %.2fx", p.Layout, p.FilesAfter, p.MeanFilesRead, p.MeanBoxFiles, p.BoxRatio, p.BoundRatio)
	}
	// Sorting on one of two independent columns reads far more than the grid would.
	require.Greater(t, ps[1].BoxRatio, 1.5, "sort(id)")
}
