package rewriter_test

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"iter"
	"math/rand/v2"
	"os"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/stretchr/testify/require"
	"go.uber.org/goleak"

	"github.com/floe-project/floe/rewriter"
)

func TestMain(m *testing.M) {
	goleak.VerifyTestMain(m)
}

// int64Keyer orders rows by one int64 column: big-endian with the sign bit
// flipped, so bytes.Compare agrees with integer order. Nulls sort first.
type int64Keyer struct{ col int }

func (k int64Keyer) AppendKey(dst []byte, rec arrow.RecordBatch, row int) ([]byte, error) {
	arr, ok := rec.Column(k.col).(*array.Int64)
	if !ok {
		return dst, fmt.Errorf("column %d is %s, not int64", k.col, rec.Column(k.col).DataType())
	}
	if arr.IsNull(row) {
		return append(dst, 0), nil
	}
	dst = append(dst, 1)
	return binary.BigEndian.AppendUint64(dst, uint64(arr.Value(row))^(1<<63)), nil
}

var sortSchema = arrow.NewSchema([]arrow.Field{
	{Name: "k", Type: arrow.PrimitiveTypes.Int64, Nullable: true},
	{Name: "seq", Type: arrow.PrimitiveTypes.Int64},
	{Name: "s", Type: arrow.BinaryTypes.String, Nullable: true},
	{Name: "l", Type: arrow.ListOf(arrow.PrimitiveTypes.Int32), Nullable: true},
}, nil)

// genBatches yields rows batches of size batch; k has duplicates and nulls,
// seq numbers the rows in input order.
func genBatches(mem memory.Allocator, rows, batch int, seed uint64) iter.Seq2[arrow.RecordBatch, error] {
	return func(yield func(arrow.RecordBatch, error) bool) {
		rnd := rand.New(rand.NewPCG(seed, 7))
		b := array.NewRecordBuilder(mem, sortSchema)
		defer b.Release()
		for start := 0; start < rows; start += batch {
			n := min(batch, rows-start)
			for i := range n {
				seq := int64(start + i)
				if rnd.IntN(50) == 0 {
					b.Field(0).AppendNull()
				} else {
					b.Field(0).(*array.Int64Builder).Append(rnd.Int64N(int64(rows/3+1)) - int64(rows/6))
				}
				b.Field(1).(*array.Int64Builder).Append(seq)
				if seq%7 == 0 {
					b.Field(2).AppendNull()
				} else {
					b.Field(2).(*array.StringBuilder).Append(fmt.Sprintf("payload-%d-%x", seq, rnd.Uint32()))
				}
				lb := b.Field(3).(*array.ListBuilder)
				lb.Append(true)
				for j := range int(seq % 3) {
					lb.ValueBuilder().(*array.Int32Builder).Append(int32(seq) + int32(j))
				}
			}
			if !yield(b.NewRecordBatch(), nil) {
				return
			}
		}
	}
}

type sortedRow struct {
	null bool
	k    int64
	seq  int64
	s    string
	l    string
}

func collect(t *testing.T, seq iter.Seq2[arrow.RecordBatch, error]) []sortedRow {
	t.Helper()
	var out []sortedRow
	for rec, err := range seq {
		require.NoError(t, err)
		require.True(t, rec.Schema().Equal(sortSchema), "output schema %s", rec.Schema())
		k := rec.Column(0).(*array.Int64)
		sq := rec.Column(1).(*array.Int64)
		s := rec.Column(2).(*array.String)
		l := rec.Column(3).(*array.List)
		for i := range int(rec.NumRows()) {
			r := sortedRow{null: k.IsNull(i), k: k.Value(i), seq: sq.Value(i), l: l.ValueStr(i)}
			if r.null {
				r.k = 0
			}
			if !s.IsNull(i) {
				r.s = s.Value(i)
			}
			out = append(out, r)
		}
		rec.Release()
	}
	return out
}

// checkSorted verifies order, stability and that every input row came out
// exactly once with its own payload.
func checkSorted(t *testing.T, rows []sortedRow, want int) {
	t.Helper()
	require.Len(t, rows, want)
	seen := make([]bool, want)
	for i, r := range rows {
		require.False(t, seen[r.seq], "row %d emitted twice", r.seq)
		seen[r.seq] = true
		if r.seq%7 != 0 {
			require.Contains(t, r.s, fmt.Sprintf("payload-%d-", r.seq))
		} else {
			require.Empty(t, r.s)
		}
		if i == 0 {
			continue
		}
		p := rows[i-1]
		switch {
		case p.null && !r.null:
		case p.null == r.null && p.k < r.k:
		case p.null == r.null && p.k == r.k:
			require.Less(t, p.seq, r.seq, "equal keys out of input order at %d", i)
		default:
			require.Failf(t, "out of order", "row %d (%v) after (%v)", i, r, p)
		}
	}
}

func requireEmptyDir(t *testing.T, dir string) {
	t.Helper()
	ents, err := os.ReadDir(dir)
	require.NoError(t, err)
	require.Empty(t, ents, "spill files left behind")
}

func TestSorterSortsStablyWithinBudget(t *testing.T) {
	cases := []struct {
		name        string
		rows, batch int
		memory      int64
		fanIn       int
		wantSpill   bool
		wantPasses  int // -1: any
	}{
		{name: "in-memory", rows: 5000, batch: 700, memory: 0},
		{name: "fits-budget", rows: 2000, batch: 500, memory: 64 << 20},
		{name: "spills", rows: 60000, batch: 1000, memory: 4 << 20, wantSpill: true},
		{name: "intermediate-passes", rows: 60000, batch: 1000, memory: 1 << 20, fanIn: 2, wantSpill: true, wantPasses: -1},
		{name: "odd-fan-in", rows: 60000, batch: 1000, memory: 1 << 20, fanIn: 3, wantSpill: true, wantPasses: -1},
		{name: "one-row-batches", rows: 3000, batch: 1, memory: 256 << 10, wantSpill: true, wantPasses: -1},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			mem := rewriter.NewTrackingAllocator(nil)
			s, err := rewriter.NewSorter(int64Keyer{col: 0}, rewriter.SortOptions{
				MemoryBytes: tc.memory, TempDir: dir, FanIn: tc.fanIn, Allocator: mem,
			})
			require.NoError(t, err)
			rows := collect(t, s.Sort(t.Context(), sortSchema, genBatches(mem, tc.rows, tc.batch, 1)))
			checkSorted(t, rows, tc.rows)
			st := s.Stats()
			require.Equal(t, int64(tc.rows), st.Rows)
			require.Equal(t, tc.wantSpill, st.SpilledRuns > 0, "stats %+v", st)
			if tc.wantPasses >= 0 {
				require.Equal(t, tc.wantPasses, st.MergePasses, "stats %+v", st)
			} else {
				require.Positive(t, st.MergePasses, "stats %+v", st)
			}
			if tc.memory > 0 {
				require.LessOrEqual(t, mem.PeakBytes(), tc.memory, "peak Arrow bytes over budget; stats %+v", st)
			}
			require.Zero(t, mem.CurrentBytes(), "Arrow memory leaked")
			requireEmptyDir(t, dir)
		})
	}
}

// TestSorterFirstRunTakesHalfTheBudget checks the first run's share: an
// input of about a third of the budget (more than the quarter later runs
// get) sorts without spilling, one of about two thirds spills, and both stay
// within the budget.
func TestSorterFirstRunTakesHalfTheBudget(t *testing.T) {
	const rows, batch = 40_000, 1000
	// What the sorter accounts for the input: its Arrow buffers, and per row
	// a 9-byte key and a 40-byte entry.
	probe := rewriter.NewTrackingAllocator(nil)
	var recs []arrow.RecordBatch
	for rec, err := range genBatches(probe, rows, batch, 3) {
		require.NoError(t, err)
		recs = append(recs, rec)
	}
	input := probe.CurrentBytes() + rows*(9+40)
	for _, r := range recs {
		r.Release()
	}
	cases := []struct {
		name      string
		memory    int64
		wantSpill bool
	}{
		{name: "a-third-of-the-budget", memory: input * 3, wantSpill: false},
		{name: "two-thirds-of-the-budget", memory: input * 3 / 2, wantSpill: true},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			mem := rewriter.NewTrackingAllocator(nil)
			s, err := rewriter.NewSorter(int64Keyer{col: 0}, rewriter.SortOptions{MemoryBytes: tc.memory, TempDir: dir, Allocator: mem})
			require.NoError(t, err)
			got := collect(t, s.Sort(t.Context(), sortSchema, genBatches(mem, rows, batch, 3)))
			checkSorted(t, got, rows)
			st := s.Stats()
			require.Equal(t, tc.wantSpill, st.SpilledRuns > 0, "input %d bytes, budget %d; stats %+v", input, tc.memory, st)
			require.LessOrEqual(t, mem.PeakBytes(), tc.memory, "peak Arrow bytes over budget; stats %+v", st)
			requireEmptyDir(t, dir)
		})
	}
}

func TestSorterRemovesSpillFiles(t *testing.T) {
	errInput := errors.New("input broke")
	cases := []struct {
		name  string
		input func(mem memory.Allocator) iter.Seq2[arrow.RecordBatch, error]
		run   func(t *testing.T, ctx context.Context, cancel context.CancelFunc, seq iter.Seq2[arrow.RecordBatch, error])
	}{
		{
			name: "consumer-stops-early",
			input: func(mem memory.Allocator) iter.Seq2[arrow.RecordBatch, error] {
				return genBatches(mem, 40000, 1000, 2)
			},
			run: func(t *testing.T, _ context.Context, _ context.CancelFunc, seq iter.Seq2[arrow.RecordBatch, error]) {
				for rec, err := range seq {
					require.NoError(t, err)
					rec.Release()
					break
				}
			},
		},
		{
			name: "cancelled-during-merge",
			input: func(mem memory.Allocator) iter.Seq2[arrow.RecordBatch, error] {
				return genBatches(mem, 40000, 1000, 3)
			},
			run: func(t *testing.T, _ context.Context, cancel context.CancelFunc, seq iter.Seq2[arrow.RecordBatch, error]) {
				var got error
				for rec, err := range seq {
					if err != nil {
						got = err
						break
					}
					rec.Release()
					cancel()
				}
				require.ErrorIs(t, got, context.Canceled)
			},
		},
		{
			name: "input-fails-after-spilling",
			input: func(mem memory.Allocator) iter.Seq2[arrow.RecordBatch, error] {
				return func(yield func(arrow.RecordBatch, error) bool) {
					n := 0
					for rec, err := range genBatches(mem, 40000, 1000, 4) {
						if n == 30 {
							rec.Release()
							yield(nil, errInput)
							return
						}
						n++
						if !yield(rec, err) {
							return
						}
					}
				}
			},
			run: func(t *testing.T, _ context.Context, _ context.CancelFunc, seq iter.Seq2[arrow.RecordBatch, error]) {
				var got error
				for rec, err := range seq {
					if err != nil {
						got = err
						break
					}
					rec.Release()
				}
				require.ErrorIs(t, got, errInput)
			},
		},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			mem := rewriter.NewTrackingAllocator(nil)
			s, err := rewriter.NewSorter(int64Keyer{col: 0}, rewriter.SortOptions{MemoryBytes: 1 << 20, TempDir: dir, Allocator: mem})
			require.NoError(t, err)
			ctx, cancel := context.WithCancel(t.Context())
			defer cancel()
			tc.run(t, ctx, cancel, s.Sort(ctx, sortSchema, tc.input(mem)))
			requireEmptyDir(t, dir)
			require.Zero(t, mem.CurrentBytes(), "Arrow memory leaked")
		})
	}
}

func TestSortOptionsValidate(t *testing.T) {
	file := t.TempDir() + "/f"
	require.NoError(t, os.WriteFile(file, nil, 0o600))
	cases := []struct {
		name string
		opts rewriter.SortOptions
		want []string
	}{
		{name: "zero", opts: rewriter.SortOptions{}},
		{name: "all-bad", opts: rewriter.SortOptions{MemoryBytes: -1, BatchRows: -2, FanIn: 1, TempDir: file},
			want: []string{"memory bytes", "batch rows", "fan-in", "not a directory"}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			err := tc.opts.Validate()
			if len(tc.want) == 0 {
				require.NoError(t, err)
				return
			}
			require.Error(t, err)
			for _, w := range tc.want {
				require.ErrorContains(t, err, w)
			}
		})
	}
	_, err := rewriter.NewSorter(nil, rewriter.SortOptions{})
	require.ErrorContains(t, err, "keyer is nil")
}

func TestSorterRejectsBatchOfOtherTypes(t *testing.T) {
	other := arrow.NewSchema([]arrow.Field{{Name: "k", Type: arrow.PrimitiveTypes.Int32}}, nil)
	b := array.NewRecordBuilder(memory.DefaultAllocator, other)
	defer b.Release()
	b.Field(0).(*array.Int32Builder).Append(1)
	input := func(yield func(arrow.RecordBatch, error) bool) {
		yield(b.NewRecordBatch(), nil)
	}
	s, err := rewriter.NewSorter(int64Keyer{col: 0}, rewriter.SortOptions{TempDir: t.TempDir()})
	require.NoError(t, err)
	var got error
	for rec, err := range s.Sort(t.Context(), sortSchema, input) {
		if err != nil {
			got = err
			break
		}
		rec.Release()
	}
	require.ErrorContains(t, got, "input batch has 1 columns")
}

// TestSorterReusesRunBuffers sorts inputs of different sizes and budgets one
// after another with one RunBuffers, as a RewriteGroups worker does: buffers
// left by a larger, a spilling or a smaller sort must never leak rows or keys
// into the next one.
func TestSorterReusesRunBuffers(t *testing.T) {
	bufs := &rewriter.RunBuffers{}
	defer bufs.Release()
	for i, tc := range []struct {
		rows, batch int
		memory      int64
	}{
		{rows: 20_000, batch: 1000},
		{rows: 3000, batch: 700},
		{rows: 60_000, batch: 1000, memory: 4 << 20},
		{rows: 500, batch: 100},
		{rows: 20_000, batch: 900, memory: 64 << 20},
	} {
		dir := t.TempDir()
		mem := rewriter.NewTrackingAllocator(nil)
		s, err := rewriter.NewSorter(int64Keyer{col: 0}, rewriter.SortOptions{
			MemoryBytes: tc.memory, TempDir: dir, Allocator: mem, Buffers: bufs, ExpectedRows: int64(tc.rows),
		})
		require.NoError(t, err)
		rows := collect(t, s.Sort(t.Context(), sortSchema, genBatches(mem, tc.rows, tc.batch, uint64(i+1))))
		checkSorted(t, rows, tc.rows)
		require.Zero(t, mem.CurrentBytes(), "sort %d: Arrow memory leaked", i)
		requireEmptyDir(t, dir)
	}
}
