package simulator_test

import (
	"fmt"
	"github.com/floe-project/floe/expr"
	"math/rand/v2"
	"testing"
	"time"

	"github.com/apache/iceberg-go"
	"github.com/apache/iceberg-go/table"
	"github.com/floe-project/floe/lake"
	"github.com/floe-project/floe/simulator"
	"github.com/stretchr/testify/require"
)

var benchSchema = iceberg.NewSchema(0,
	iceberg.NestedField{ID: 1, Name: "a", Type: iceberg.PrimitiveTypes.Int64},
	iceberg.NestedField{ID: 2, Name: "b", Type: iceberg.PrimitiveTypes.Float64},
	iceberg.NestedField{ID: 3, Name: "ts", Type: iceberg.PrimitiveTypes.Timestamp},
	iceberg.NestedField{ID: 4, Name: "s", Type: iceberg.PrimitiveTypes.String},
)

const benchDomain = 1_000_000

// benchCandidate builds n files laid out with column lead tight (files cover consecutive
// slices of its domain) and the other columns spread over a share of theirs, the way a
// sort or a curve on lead leaves them.
func benchCandidate(tb testing.TB, rng *rand.Rand, n, lead int) *lake.State {
	md, err := table.NewMetadata(benchSchema, iceberg.UnpartitionedSpec, table.UnsortedSortOrder, "file:///bench", nil)
	require.NoError(tb, err)
	st := &lake.State{Metadata: md, DataFiles: make([]lake.File, n)}
	for i := range st.DataFiles {
		lo, up := map[int]iceberg.Literal{}, map[int]iceberg.Literal{}
		for c := 1; c <= 4; c++ {
			var l, h int64
			if c == lead {
				l, h = int64(i)*benchDomain/int64(n), int64(i+1)*benchDomain/int64(n)-1
			} else {
				w := int64(rng.IntN(benchDomain/4) + benchDomain/50)
				l = rng.Int64N(benchDomain - w)
				h = l + w
			}
			switch c {
			case 1:
				lo[c], up[c] = iceberg.Int64Literal(l), iceberg.Int64Literal(h)
			case 2:
				lo[c], up[c] = iceberg.Float64Literal(float64(l)/10), iceberg.Float64Literal(float64(h)/10)
			case 3:
				lo[c], up[c] = iceberg.TimestampLiteral(l*1e6), iceberg.TimestampLiteral(h*1e6)
			case 4:
				lo[c], up[c] = iceberg.StringLiteral(fmt.Sprintf("k%07d", l)), iceberg.StringLiteral(fmt.Sprintf("k%07d", h))
			}
		}
		st.DataFiles[i] = lake.File{
			Path: fmt.Sprintf("f%d", i), SizeBytes: 128 << 20, Records: 1_000_000, Lower: lo, Upper: up,
			NullCounts: map[int]int64{1: 0, 2: 0, 3: 0, 4: 0}, ValueCounts: map[int]int64{1: 1e6, 2: 1e6, 3: 1e6, 4: 1e6},
		}
	}
	return st
}

// benchQuery draws a range, equality, IN or OR filter on one to three columns.
func benchQuery(rng *rand.Rand) *expr.Node {
	leaf := func() *expr.Node {
		c := rng.IntN(4)
		v := rng.Int64N(benchDomain)
		w := rng.Int64N(benchDomain / 20)
		switch c {
		case 0:
			if rng.IntN(4) == 0 {
				return pred("a", "in", num(v), num(rng.Int64N(benchDomain)), num(rng.Int64N(benchDomain)))
			}
			return pred("a", "between", num(v), num(v+w))
		case 1:
			return pred("b", ">=", fnum(float64(v)/10))
		case 2:
			t0 := time.Unix(v, 0).UTC()
			return and(pred("ts", ">=", ts(t0)), pred("ts", "<", ts(t0.Add(time.Duration(w)*time.Second))))
		default:
			return pred("s", "=", str(fmt.Sprintf("k%07d", v)))
		}
	}
	k := 1 + rng.IntN(3)
	kids := make([]*expr.Node, k)
	for i := range kids {
		kids[i] = leaf()
	}
	if k == 1 {
		return kids[0]
	}
	if rng.IntN(4) == 0 {
		return or(kids...)
	}
	return and(kids...)
}

// BenchmarkReplay replays a workload against several candidate layouts' files, the
// simulator's hot loop. The target is 100,000 queries × 10,000 files × 6
// candidates in at most 30 s on one core; run with -benchtime=1x -cpu=1.
func BenchmarkReplay(b *testing.B) {
	for _, sz := range []struct{ queries, files, candidates int }{
		{1_000, 10_000, 6},
		{10_000, 10_000, 6},
		{100_000, 10_000, 6},
	} {
		b.Run(fmt.Sprintf("queries=%d,files=%d,candidates=%d", sz.queries, sz.files, sz.candidates), func(b *testing.B) {
			rng := rand.New(rand.NewPCG(1, 2))
			states := make([]*lake.State, sz.candidates)
			for i := range states {
				states[i] = benchCandidate(b, rng, sz.files, 1+i%4)
			}
			qs := make([]simulator.Query, sz.queries)
			for i := range qs {
				qs[i] = simulator.Query{ID: fmt.Sprint(i), Weight: 1, Filter: benchQuery(rng)}
			}
			var skipped float64
			b.ReportAllocs()
			b.ResetTimer()
			cpu0 := cpuSeconds()
			for b.Loop() {
				skipped = 0
				for _, st := range states {
					skipped += simulator.ProjectCurrent(st, qs).SkippedPct
				}
			}
			cpuPerOp := (cpuSeconds() - cpu0) / float64(b.N)
			perOp := b.Elapsed().Seconds() / float64(b.N)
			pairs := float64(sz.queries) * float64(sz.files) * float64(sz.candidates)
			b.ReportMetric(pairs/perOp, "query·files/s")
			b.ReportMetric(perOp*(1e5*1e4*6)/pairs, "s/100k·10k·6")
			// On a shared machine wall time includes waiting for a core; CPU time does not.
			b.ReportMetric(cpuPerOp*(1e5*1e4*6)/pairs, "cpu_s/100k·10k·6")
			b.ReportMetric(skipped/float64(sz.candidates), "skipped_pct")
		})
	}
}
