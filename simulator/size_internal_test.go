package simulator

import (
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/stretchr/testify/require"

	"github.com/floe-project/floe/lake"
)

func int32Array(vals []int32) *array.Int32 {
	b := array.NewInt32Builder(memory.DefaultAllocator)
	defer b.Release()
	b.AppendValues(vals, nil)
	return b.NewInt32Array()
}

// TestDenseBytesPerRow checks the density extrapolation against the real thing: the
// bytes per row of a full column, estimated from a 1-in-10 sample of it.
func TestDenseBytesPerRow(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	const n, every = 200_000, 10
	fld := arrow.Field{Name: "c", Type: arrow.PrimitiveTypes.Int32}
	tests := []struct {
		name   string
		domain int32
		sorted bool
		// lo, hi bound estimate / truth.
		lo, hi float64
	}{
		// Runs double with density: the sample has runs of 20, the table of 200.
		{name: "sorted, 1000 values", domain: 1000, sorted: true, lo: 0.5, hi: 2},
		{name: "sorted, 50 values", domain: 50, sorted: true, lo: 0.5, hi: 2},
		// No locality: about the same bytes per row (the dictionary page amortizes better
		// over more rows, which the fit slightly overdoes).
		{name: "random, 1000 values", domain: 1000, lo: 0.8, hi: 1.15},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			vals := make([]int32, n)
			for i := range vals {
				vals[i] = rng.Int32N(tc.domain)
			}
			if tc.sorted {
				slices.Sort(vals)
			}
			full := int32Array(vals)
			defer full.Release()
			truth, err := denseBytesPerRow(coded{col: full, dict: true}, fld, nil, 1)
			require.NoError(t, err)
			var sampled []int32
			for i := 0; i < n; i += every {
				sampled = append(sampled, vals[i])
			}
			sample := int32Array(sampled)
			defer sample.Release()
			naive, err := denseBytesPerRow(coded{col: sample, dict: true}, fld, nil, 1)
			require.NoError(t, err)
			est, err := denseBytesPerRow(coded{col: sample, dict: true}, fld, nil, 1.0/every)
			require.NoError(t, err)
			t.Logf("bytes/row: table %.4f, sample as is %.4f, extrapolated %.4f", truth, naive, est)
			require.GreaterOrEqual(t, est/truth, tc.lo)
			require.LessOrEqual(t, est/truth, tc.hi)
			if tc.sorted {
				require.Less(t, est/truth, naive/truth, "extrapolation moves towards the table")
			}
		})
	}
}

// TestPlainBytesPerRow checks the plain columns' model against the real thing: the
// bytes per row of a full column written plain, estimated from a 1-in-20 sample of it,
// for time-ordered timestamps with a tenth late (which a sparse sample as it is makes
// look far larger than they are), the same values in no order, and amounts in cents
// sorted and not.
func TestPlainBytesPerRow(t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 8))
	const n, every = 200_000, 20
	ts := make([]int64, n)
	at := int64(1_767_225_600_000_000)
	for i := range ts {
		at += rng.Int64N(2 * 8_640_000) // an event every 8.6 s on average
		ts[i] = at
		if rng.IntN(10) == 0 {
			ts[i] -= rng.Int64N(86_400_000_000)
		}
	}
	shuffled := slices.Clone(ts)
	rng.Shuffle(n, func(i, j int) { shuffled[i], shuffled[j] = shuffled[j], shuffled[i] })
	amounts := make([]float64, n)
	for i := range amounts {
		amounts[i] = math.Round(math.Exp(rng.NormFloat64()*1.2+3)*100) / 100
	}
	sortedAmounts := slices.Clone(amounts)
	slices.Sort(sortedAmounts)
	mem := memory.DefaultAllocator
	ints := func(v []int64) arrow.Array {
		return buildArray(array.NewInt64Builder(mem), v, func(x int64) int64 { return x })
	}
	floats := func(v []float64) arrow.Array {
		return buildArray(array.NewFloat64Builder(mem), v, func(x float64) float64 { return x })
	}
	every20 := func(a arrow.Array) arrow.Array {
		rows := make([]int32, 0, n/every)
		for i := 0; i < n; i += every {
			rows = append(rows, int32(i))
		}
		out, err := takeRows(a, rows)
		require.NoError(t, err)
		return out
	}
	for _, tc := range []struct {
		name string
		col  arrow.Array
	}{
		{"time-ordered", ints(ts)},
		{"time in no order", ints(shuffled)},
		{"amounts", floats(amounts)},
		{"amounts sorted", floats(sortedAmounts)},
	} {
		t.Run(tc.name, func(t *testing.T) {
			defer tc.col.Release()
			fld := arrow.Field{Name: "c", Type: tc.col.DataType()}
			whole := make([]int32, n)
			truthBytes, err := encodedBytes(coded{col: tc.col}, fld, identity(n))
			require.NoError(t, err)
			truth := float64(truthBytes) / n
			sample := every20(tc.col)
			defer sample.Release()
			m := sample.Len()
			asIs, err := encodedBytes(coded{col: sample}, fld, identity(m))
			require.NoError(t, err)
			est, ok, err := plainBytesPerRow(coded{col: sample}, fld, identity(m), whole[:m], 1.0/every, 1)
			require.NoError(t, err)
			require.True(t, ok)
			t.Logf("bytes/row: table %.3f, sample as is %.3f, filled in %.3f", truth, float64(asIs)/float64(m), est)
			require.InDelta(t, 1, est/truth, 0.10, "filled in within 10%% of the table's bytes per row")
		})
	}
}

// TestCodedEncodesAsDense checks that the size model's coded form of a string
// column writes the bytes the column written densely does, up to page headers,
// in any row order and subset (a layout's order, every other row of it), nulls included;
// and that a column whose distinct values would crowd the dictionary page is
// left dense.
func TestCodedEncodesAsDense(t *testing.T) {
	rng := rand.New(rand.NewPCG(5, 6))
	const n = 50_000
	tests := []struct {
		name    string
		domain  int
		width   int
		nulls   float64
		sorted  bool
		isCoded bool
	}{
		{name: "7 values", domain: 7, width: 8, isCoded: true},
		{name: "7 values sorted", domain: 7, width: 8, sorted: true, isCoded: true},
		{name: "300 values with nulls", domain: 300, width: 12, nulls: 0.1, isCoded: true},
		{name: "2000 values sorted", domain: 2000, width: 20, sorted: true, isCoded: true},
		{name: "2000 values", domain: 2000, width: 20, isCoded: true},
		{name: "7 values sorted with nulls", domain: 7, width: 8, nulls: 0.1, sorted: true, isCoded: true},
		{name: "2000 values sorted with nulls", domain: 2000, width: 20, nulls: 0.02, sorted: true, isCoded: true},
		{name: "too many distinct bytes", domain: 40_000, width: 40, isCoded: false},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			b := array.NewStringBuilder(memory.DefaultAllocator)
			vals := make([]string, n)
			for i := range vals {
				vals[i] = fmt.Sprintf("%0*d", tc.width, rng.IntN(tc.domain))
			}
			if tc.sorted {
				slices.Sort(vals)
			}
			for _, v := range vals {
				if rng.Float64() < tc.nulls {
					b.AppendNull()
					continue
				}
				b.Append(v)
			}
			col := b.NewArray()
			b.Release()
			defer col.Release()
			c, err := newCoded(col)
			require.NoError(t, err)
			defer c.release()
			c.dict = true // compared as the rewriter writes a dictionary column
			require.Equal(t, tc.isCoded, c.values != nil)
			fld := arrow.Field{Name: "s", Type: arrow.BinaryTypes.String, Nullable: true}
			perm := rng.Perm(n)
			if tc.sorted {
				slices.Sort(perm) // the column's own order: long runs
			}
			rows := make([]int32, len(perm))
			for i, p := range perm {
				rows[i] = int32(p)
			}
			half := make([]int32, 0, n/2)
			for i := 0; i < n; i += 2 {
				half = append(half, rows[i])
			}
			for _, rs := range [][]int32{rows, half, rows[:1]} {
				dense, err := encodedBytes(coded{col: col, dict: true}, fld, rs)
				require.NoError(t, err)
				got, err := encodedBytes(c, fld, rs)
				require.NoError(t, err)
				// The writer cuts a dense dictionary column's data pages by raw
				// value bytes (1 MiB) and a dictionary array's by index bytes, so
				// the dense column may take a few more page headers; nothing else
				// differs.
				require.LessOrEqual(t, got, dense, "%d rows", len(rs))
				require.InDelta(t, dense, got, 0.005*float64(dense)+256, "%d rows", len(rs))
			}
		})
	}
}

// TestFileOverhead checks the per-file overhead fitted from today's files: the
// intercept of bytes against rows where rows vary, the footer the manifests show
// otherwise, and never more than the smallest file.
func TestFileOverhead(t *testing.T) {
	files := func(over, perRow int64, rows ...int64) []lake.File {
		out := make([]lake.File, len(rows))
		for i, r := range rows {
			out[i] = lake.File{Records: r, SizeBytes: over + perRow*r}
		}
		return out
	}
	tests := []struct {
		name  string
		files []lake.File
		want  float64
	}{
		{name: "rows vary: the intercept", files: files(6000, 10, 100, 1000, 5000, 20000), want: 6000},
		{name: "equal rows: not determined, no footer known", files: files(6000, 10, 1000, 1000, 1000), want: 0},
		{name: "two files: not determined", files: files(6000, 10, 100, 5000), want: 0},
		{name: "no files", want: 0},
		{name: "empty files ignored", files: append(files(6000, 10, 100, 1000, 5000), lake.File{}), want: 6000},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			require.InDelta(t, tc.want, fileOverhead(tc.files), 1e-6)
		})
	}
}

// TestCutsCountOverhead checks that a partition of small files, each mostly its
// own overhead, is projected into the files its rows fill once each output file
// pays the overhead once: five files of 9,000 bytes, 6,000 of them overhead, hold
// 15,000 bytes of rows and fit one file of 40,000, where their 45,000 bytes today
// would make two.
func TestCutsCountOverhead(t *testing.T) {
	s := &Sample{Partitions: []string{"d=1", "d=2"}, PartitionBytes: []int64{45_000, 100_000}, PartitionRows: []int64{5000, 30_000},
		PartitionFiles: []int{5, 1}, fileOverhead: 6000}
	c := s.cuts(1, 40_000)
	require.Equal(t, 1, c[0].files)
	require.Equal(t, 3, c[1].files, "94,000 bytes of rows in files of 34,000")
	// Written: (15,000 + 6,000) + (94,000 + 3 × 6,000) of 145,000 today.
	require.InDelta(t, (21_000.0+112_000)/145_000, s.writtenRatio(1, 40_000, c), 1e-9)
	s.fileOverhead = 0
	require.Equal(t, 2, s.cuts(1, 40_000)[0].files, "without the overhead: today's bytes")
}

// TestLeafCutsSplitEachLeaf checks a tree's cut: in a partition of 100,000 bytes of rows
// (10 sampled rows, files of 40,000) whose leaves hold 2, 5 and 3 of the sampled rows,
// the leaves of three quarters of a file or more are their own files, as many as make a
// file nearest the target (50,000: one of 1.25 targets beats two of 0.63; 30,000: one),
// each file its leaf's share split equally, and the first (20,000 bytes today, half a
// file) is packed as small leaves are; a partition without sampled rows is cut as a
// sort's; the size model's bytes move the counts leaf by leaf (2.5 times the bytes:
// 50,000 in the packed first leaf is two files cut at the target, 125,000 in the middle
// one three of 1.04 targets, 75,000 in the last two of 0.94).
func TestLeafCutsSplitEachLeaf(t *testing.T) {
	s := &Sample{Partitions: []string{"d=1", "d=2"}, PartitionBytes: []int64{100_000, 90_000}, PartitionRows: []int64{1000, 900},
		PartitionFiles: []int{4, 3}, Rows: 10, rowPart: make([]int32, 10)}
	rowLeaf := []int32{0, 0, 1, 1, 1, 1, 1, 2, 2, 2}
	perm := identity(10)
	leaves := s.leafRows(perm, rowLeaf)
	require.Equal(t, [][]leafRowCount{{{0, 2}, {1, 5}, {2, 3}}, nil}, leaves)
	c := s.leafCuts(1, 40_000, leaves)
	require.Equal(t, []leafCut{{0, 0, 1, 0.2}, {1, 1, 1, 0.5}, {2, 2, 1, 0.3}}, c[0].leaves)
	require.Equal(t, 3, c[0].files)
	require.Nil(t, c[1].leaves)
	require.Equal(t, s.cuts(1, 40_000)[1], c[1], "no sampled rows: cut as a sort's")
	big := s.leafCuts(2.5, 40_000, leaves)[0]
	require.Equal(t, []int{2, 3, 2}, []int{big.leaves[0].files, big.leaves[1].files, big.leaves[2].files})
	require.Equal(t, 7, big.files)
	var shares []float64
	for j := range big.files {
		shares = append(shares, big.fileShare(j))
	}
	require.InDeltaSlice(t, []float64{0.1, 0.1, 0.5 / 3, 0.5 / 3, 0.5 / 3, 0.15, 0.15}, shares, 1e-12)
}

// TestLeafCutsPackSmallLeaves: leaves of less than three quarters of a file in a
// partition (a tree learned on the whole table, sliced by day) are packed with their
// neighbours, in leaf order, into files cut at the target size, not written one small
// file each: of leaves of 10,000, 10,000, 10,000, 50,000 and 20,000 bytes at 40,000 a
// file, the first three are one file, the fourth its own, the last one more.
func TestLeafCutsPackSmallLeaves(t *testing.T) {
	s := &Sample{Partitions: []string{"d=1"}, PartitionBytes: []int64{100_000}, PartitionRows: []int64{1000},
		PartitionFiles: []int{4}, Rows: 10, rowPart: make([]int32, 10)}
	rowLeaf := []int32{0, 1, 2, 3, 3, 3, 3, 3, 4, 4}
	c := s.leafCuts(1, 40_000, s.leafRows(identity(10), rowLeaf))[0]
	require.Len(t, c.leaves, 3)
	for i, want := range []leafCut{{0, 2, 1, 0.3}, {3, 3, 1, 0.5}, {4, 4, 1, 0.2}} {
		got := c.leaves[i]
		require.Equal(t, [3]int{int(want.leaf), int(want.last), want.files}, [3]int{int(got.leaf), int(got.last), got.files}, "segment %d", i)
		require.InDelta(t, want.share, got.share, 1e-12, "segment %d", i)
	}
	require.Equal(t, 3, c.files)
}
