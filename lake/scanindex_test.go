package lake_test

import (
	"context"
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"testing"
	"time"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/apache/iceberg-go"
	"github.com/apache/iceberg-go/table"
	"github.com/stretchr/testify/require"

	"github.com/floe-project/floe/internal/testlake"
	"github.com/floe-project/floe/lake"
)

var scanSchema = iceberg.NewSchema(0,
	iceberg.NestedField{ID: 1, Name: "id", Type: iceberg.PrimitiveTypes.Int64, Required: true},
	iceberg.NestedField{ID: 2, Name: "region", Type: iceberg.PrimitiveTypes.String},
	iceberg.NestedField{ID: 3, Name: "ts", Type: iceberg.PrimitiveTypes.TimestampTz},
	iceberg.NestedField{ID: 4, Name: "score", Type: iceberg.PrimitiveTypes.Float64},
	iceberg.NestedField{ID: 5, Name: "n", Type: iceberg.PrimitiveTypes.Int32},
)

var (
	scanDay0    = time.Date(2026, 3, 1, 0, 0, 0, 0, time.UTC)
	scanRegions = []string{"eu", "emea", "us", "us-east", "apac"}
)

// scanBatch writes rows lo..hi; every knob is chosen per batch so files
// differ in ranges, null counts and NaN counts.
func scanBatch(t *testing.T, sc *arrow.Schema, b, lo, hi int) arrow.RecordBatch {
	t.Helper()
	bld := array.NewRecordBuilder(memory.DefaultAllocator, sc)
	defer bld.Release()
	for id := lo; id <= hi; id++ {
		bld.Field(0).(*array.Int64Builder).Append(int64(id))
		switch r := (id + b) % 7; {
		case r == 6 && b%3 == 0:
			bld.Field(1).AppendNull()
		default:
			bld.Field(1).(*array.StringBuilder).Append(scanRegions[(r+b)%len(scanRegions)])
		}
		if b == 5 && id%4 == 0 {
			bld.Field(2).AppendNull() // a null day(ts) partition
		} else {
			ts := scanDay0.Add(time.Duration(b%4)*24*time.Hour + time.Duration(id%97)*time.Minute + time.Duration(b)*time.Hour)
			v, err := arrow.TimestampFromTime(ts, arrow.Microsecond)
			require.NoError(t, err)
			bld.Field(2).(*array.TimestampBuilder).Append(v)
		}
		switch {
		case b == 3: // all null
			bld.Field(3).AppendNull()
		case b == 7: // all NaN
			bld.Field(3).(*array.Float64Builder).Append(math.NaN())
		case b%2 == 0 && id%11 == 0:
			bld.Field(3).(*array.Float64Builder).Append(math.NaN())
		case id%13 == 0:
			bld.Field(3).AppendNull()
		default:
			bld.Field(3).(*array.Float64Builder).Append(float64(id%50) + float64(b)/10)
		}
		if b%2 == 1 {
			bld.Field(4).AppendNull()
		} else {
			bld.Field(4).(*array.Int32Builder).Append(int32(id % 17 * (b + 1)))
		}
	}
	return bld.NewRecordBatch()
}

// scanTable builds a table of several partitions and files: appends under
// spec day(ts), identity(region); a copy-on-write delete (rewritten files,
// deleted entries); the spec evolved with bucket(4, id); more appends; and a
// merge-on-read delete (position delete files).
func scanTable(t *testing.T) *table.Table {
	t.Helper()
	w := testlake.New(t)
	spec := iceberg.NewPartitionSpec(
		iceberg.PartitionField{SourceIDs: []int{3}, FieldID: 1000, Name: "ts_day", Transform: iceberg.DayTransform{}},
		iceberg.PartitionField{SourceIDs: []int{2}, FieldID: 1001, Name: "region", Transform: iceberg.IdentityTransform{}},
	)
	tbl := w.CreateTable(t, "db", "scan", scanSchema, &spec, iceberg.Properties{"format-version": "2"}, nil)
	ctx := context.Background()
	sc := testlake.ArrowSchema(t, tbl)
	appendBatch := func(b int) {
		rec := scanBatch(t, sc, b, b*150, b*150+120+b*7)
		defer rec.Release()
		tbl = testlake.Append(t, tbl, rec)
	}
	for b := range 8 {
		appendBatch(b)
	}
	var err error
	tbl, err = tbl.Delete(ctx, iceberg.LessThan(iceberg.Reference("id"), int64(200)), nil)
	require.NoError(t, err)

	tx := tbl.NewTransaction()
	require.NoError(t, tx.UpdateSpec(true).AddField("id", iceberg.BucketTransform{NumBuckets: 4}, "id_bucket").Commit())
	require.NoError(t, tx.SetProperties(iceberg.Properties{table.WriteDeleteModeKey: table.WriteModeMergeOnRead}))
	tbl, err = tx.Commit(ctx)
	require.NoError(t, err)
	for b := 8; b < 12; b++ {
		appendBatch(b)
	}
	tbl, err = tbl.Delete(ctx, iceberg.EqualTo(iceberg.Reference("id"), int64(1300)), nil)
	require.NoError(t, err)
	return tbl
}

// randFilter draws a predicate tree over every column and operation floe's
// filters use (and NaN tests and prefix matches), with AND, OR and NOT up to
// the given depth.
func randFilter(r *rand.Rand, depth int) iceberg.BooleanExpression {
	if depth > 0 && r.IntN(3) > 0 {
		switch r.IntN(5) {
		case 0, 1:
			return iceberg.NewAnd(randFilter(r, depth-1), randFilter(r, depth-1))
		case 2, 3:
			return iceberg.NewOr(randFilter(r, depth-1), randFilter(r, depth-1))
		default:
			return iceberg.NewNot(randFilter(r, depth-1))
		}
	}
	ops := []iceberg.Operation{iceberg.OpEQ, iceberg.OpNEQ, iceberg.OpLT, iceberg.OpLTEQ, iceberg.OpGT, iceberg.OpGTEQ}
	var col string
	var lit func() iceberg.Literal
	switch r.IntN(5) {
	case 0:
		col, lit = "id", func() iceberg.Literal { return iceberg.NewLiteral(int64(r.IntN(1900) - 20)) }
	case 1:
		col = "region"
		lit = func() iceberg.Literal {
			if r.IntN(4) == 0 {
				return iceberg.NewLiteral([]string{"a", "e", "em", "u", "us-", "zz"}[r.IntN(6)])
			}
			return iceberg.NewLiteral(scanRegions[r.IntN(len(scanRegions))])
		}
	case 2:
		col = "ts"
		lit = func() iceberg.Literal {
			d := scanDay0.Add(time.Duration(r.IntN(6*24*60)-24*60) * time.Minute)
			return iceberg.NewLiteral(iceberg.Timestamp(d.UnixMicro()))
		}
	case 3:
		col, lit = "score", func() iceberg.Literal { return iceberg.NewLiteral(float64(r.IntN(60)) - 5 + r.Float64()) }
	default:
		col, lit = "n", func() iceberg.Literal { return iceberg.NewLiteral(int32(r.IntN(220))) }
	}
	ref := iceberg.Reference(col)
	switch k := r.IntN(10); {
	case k == 0:
		if r.IntN(2) == 0 {
			return iceberg.IsNull(ref)
		}
		return iceberg.NotNull(ref)
	case k == 1 && col == "score":
		if r.IntN(2) == 0 {
			return iceberg.IsNaN(ref)
		}
		return iceberg.NotNaN(ref)
	case k == 1 && col == "region":
		p := []string{"e", "em", "us", "us-e", "a", "x"}[r.IntN(6)]
		if r.IntN(2) == 0 {
			return iceberg.StartsWith(ref, p)
		}
		return iceberg.NotStartsWith(ref, p)
	case k <= 3:
		n := 1 + r.IntN(5)
		if r.IntN(8) == 0 {
			n = 250 // past iceberg-go's 200-value limit on bound checks
		}
		lits := make([]iceberg.Literal, n)
		for i := range lits {
			lits[i] = lit()
		}
		op := iceberg.OpIn
		if r.IntN(3) == 0 {
			op = iceberg.OpNotIn
		}
		return iceberg.SetPredicate(op, ref, lits)
	}
	return iceberg.LiteralPredicate(ops[r.IntN(len(ops))], ref, lit())
}

func plannedPaths(t *testing.T, tbl *table.Table, filter iceberg.BooleanExpression) []string {
	t.Helper()
	tasks, err := tbl.Scan(table.WithRowFilter(filter)).PlanFiles(context.Background())
	require.NoError(t, err, filter)
	var out []string
	for _, task := range tasks {
		out = append(out, task.File.FilePath())
	}
	slices.Sort(out)
	return slices.Compact(out)
}

func matchedPaths(t *testing.T, ix *lake.ScanIndex, filter iceberg.BooleanExpression) []string {
	t.Helper()
	ids, err := ix.Match(filter)
	require.NoError(t, err, filter)
	var out []string
	for _, i := range ids {
		out = append(out, ix.Files()[i])
	}
	slices.Sort(out)
	return out
}

func TestScanIndexAgreesWithPlanFiles(t *testing.T) {
	ctx := context.Background()
	tbl := scanTable(t)
	ix, err := lake.LoadScanIndex(ctx, tbl, lake.ScanIndexOptions{})
	require.NoError(t, err)

	// The table is what the test claims: several specs, files, partitions,
	// delete files and deleted entries.
	st, err := lake.LoadState(ctx, lake.Ident{Catalog: "local", Namespace: []string{"db"}, Name: "scan"}, tbl, lake.LoadOptions{})
	require.NoError(t, err)
	require.Len(t, ix.Files(), len(st.DataFiles))
	require.GreaterOrEqual(t, len(st.DataFiles), 60)
	require.GreaterOrEqual(t, len(st.Partitions), 20)
	require.NotEmpty(t, st.DeleteFiles)
	require.Len(t, tbl.Metadata().PartitionSpecs(), 2)
	require.Equal(t, plannedPaths(t, tbl, iceberg.AlwaysTrue{}), matchedPaths(t, ix, iceberg.AlwaysTrue{}))

	r := rand.New(rand.NewPCG(13, 1))
	pruned, differ := 0, 0
	const trees = 400
	for i := range trees {
		f := randFilter(r, 3)
		want := plannedPaths(t, tbl, f)
		got := matchedPaths(t, ix, f)
		require.Equal(t, want, got, "tree %d: %s", i, f)
		if len(want) < len(ix.Files()) {
			pruned++
		}
		if len(want) > 0 && len(want) < len(ix.Files()) {
			differ++
		}
	}
	// The trees exercise pruning, not only "all" or "none".
	require.Greater(t, pruned, trees/3)
	require.Greater(t, differ, trees/4)
}

func TestScanIndexRejectsWhatPlanFilesRejects(t *testing.T) {
	ctx := context.Background()
	tbl := scanTable(t)
	ix, err := lake.LoadScanIndex(ctx, tbl, lake.ScanIndexOptions{})
	require.NoError(t, err)
	f := iceberg.EqualTo(iceberg.Reference("nosuch"), int64(1))
	_, err = ix.Match(f)
	require.Error(t, err)
	_, perr := tbl.Scan(table.WithRowFilter(f)).PlanFiles(ctx)
	require.Error(t, perr)
}

func TestScanIndexEmptyTable(t *testing.T) {
	w := testlake.New(t)
	tbl := w.CreateTable(t, "db", "empty", scanSchema, nil, nil, nil)
	ix, err := lake.LoadScanIndex(context.Background(), tbl, lake.ScanIndexOptions{})
	require.NoError(t, err)
	require.Empty(t, ix.Files())
	got, err := ix.Match(iceberg.EqualTo(iceberg.Reference("id"), int64(1)))
	require.NoError(t, err)
	require.Empty(t, got)
}

// synthTable commits metadata-only data files (PlanFiles reads manifests,
// never data files) whose metrics take every shape a manifest may hold,
// including ones iceberg-go's writer never produces: missing value, null or
// NaN counts, missing or NaN bounds, all-null and all-NaN columns, empty
// files, null partition values.
func synthTable(t *testing.T, seed uint64) *table.Table {
	t.Helper()
	w := testlake.New(t)
	spec := iceberg.NewPartitionSpec(
		iceberg.PartitionField{SourceIDs: []int{3}, FieldID: 1000, Name: "ts_day", Transform: iceberg.DayTransform{}},
		iceberg.PartitionField{SourceIDs: []int{2}, FieldID: 1001, Name: "region", Transform: iceberg.IdentityTransform{}},
	)
	tbl := w.CreateTable(t, "db", "synth", scanSchema, &spec, iceberg.Properties{"format-version": "2"}, nil)
	r := rand.New(rand.NewPCG(seed, 2))
	enc := func(l iceberg.Literal) []byte {
		b, err := l.MarshalBinary()
		require.NoError(t, err)
		return b
	}
	day0 := int32(scanDay0.Unix() / 86400)
	strs := []string{"a", "apac", "e", "em", "emea", "eu", "u", "us", "us-east", "zz"}
	ctx := context.Background()
	for c := range 6 {
		var files []iceberg.DataFile
		for f := range 20 {
			part := map[int]any{1000: day0 + int32(r.IntN(5)), 1001: strs[r.IntN(len(strs))]}
			if r.IntN(8) == 0 {
				part[1000] = nil
			}
			if r.IntN(8) == 0 {
				part[1001] = nil
			}
			count := int64(1 + r.IntN(1000))
			if r.IntN(20) == 0 {
				count = 0
			}
			bld, err := iceberg.NewDataFileBuilder(spec, iceberg.EntryContentData,
				fmt.Sprintf("%s/data/c%d-f%02d.parquet", tbl.Location(), c, f), iceberg.ParquetFile, part, nil, nil, count, 4096)
			require.NoError(t, err)
			values, nulls, nans := map[int]int64{}, map[int]int64{}, map[int]int64{}
			lower, upper := map[int][]byte{}, map[int][]byte{}
			for id := 1; id <= 5; id++ {
				if r.IntN(7) > 0 {
					values[id] = count
				}
				switch r.IntN(6) {
				case 0: // unknown
				case 1:
					nulls[id] = count // all null
				case 2:
					nulls[id] = int64(r.IntN(int(count) + 1))
				default:
					nulls[id] = 0
				}
				if id == 4 {
					switch r.IntN(5) {
					case 0: // unknown
					case 1:
						nans[id] = count // all NaN
					case 2:
						nans[id] = 1
					default:
						nans[id] = 0
					}
				}
				if r.IntN(6) == 0 {
					continue // no bounds
				}
				var lo, hi iceberg.Literal
				switch id {
				case 1:
					a := int64(r.IntN(1900) - 20)
					lo, hi = iceberg.Int64Literal(a), iceberg.Int64Literal(a+int64(r.IntN(300)))
				case 2:
					a, b := strs[r.IntN(len(strs))], strs[r.IntN(len(strs))]
					if a > b {
						a, b = b, a
					}
					lo, hi = iceberg.StringLiteral(a), iceberg.StringLiteral(b)
				case 3:
					a := scanDay0.Add(time.Duration(r.IntN(5*24*60)) * time.Minute).UnixMicro()
					lo, hi = iceberg.TimestampLiteral(a), iceberg.TimestampLiteral(a+int64(r.IntN(2*86400))*1_000_000)
				case 4:
					a := float64(r.IntN(60)) - 5
					lo, hi = iceberg.Float64Literal(a), iceberg.Float64Literal(a+float64(r.IntN(20)))
					switch r.IntN(8) {
					case 0:
						lo = iceberg.Float64Literal(math.NaN())
					case 1:
						hi = iceberg.Float64Literal(math.NaN())
					}
				case 5:
					a := int32(r.IntN(220))
					lo, hi = iceberg.Int32Literal(a), iceberg.Int32Literal(a+int32(r.IntN(50)))
				}
				if r.IntN(10) > 0 {
					lower[id] = enc(lo)
				}
				if r.IntN(10) > 0 {
					upper[id] = enc(hi)
				}
			}
			bld.ValueCounts(values).LowerBoundValues(lower).UpperBoundValues(upper).NaNValueCounts(nans)
			if r.IntN(10) > 0 { // sometimes no null counts at all
				bld.NullValueCounts(nulls)
			}
			files = append(files, bld.Build())
		}
		tx := tbl.NewTransaction()
		require.NoError(t, tx.AddDataFiles(ctx, files, nil))
		var err error
		tbl, err = tx.Commit(ctx)
		require.NoError(t, err)
	}
	return tbl
}

func TestScanIndexAgreesWithPlanFilesOnAnyMetrics(t *testing.T) {
	for _, seed := range []uint64{1, 2} {
		t.Run(fmt.Sprintf("seed=%d", seed), func(t *testing.T) {
			tbl := synthTable(t, seed)
			ix, err := lake.LoadScanIndex(context.Background(), tbl, lake.ScanIndexOptions{})
			require.NoError(t, err)
			require.Len(t, ix.Files(), 120)
			r := rand.New(rand.NewPCG(seed, 99))
			for i := range 400 {
				f := randFilter(r, 3)
				require.Equal(t, plannedPaths(t, tbl, f), matchedPaths(t, ix, f), "tree %d: %s", i, f)
			}
		})
	}
}
