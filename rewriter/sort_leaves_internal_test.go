package rewriter

import (
	"context"
	"encoding/binary"
	"fmt"
	"iter"
	"math/rand/v2"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/stretchr/testify/require"
)

// leafKeys keys a row as a tree encoder does: the leaf number, 4 bytes big-endian (here
// x ÷ 1000), then the leaf's sort key (here y).
type leafKeys struct{}

func (leafKeys) AppendKey(dst []byte, rec arrow.RecordBatch, row int) ([]byte, error) {
	x := rec.Column(0).(*array.Int64).Value(row)
	y := rec.Column(1).(*array.Int64).Value(row)
	dst = binary.BigEndian.AppendUint32(dst, uint32(x/1000))
	return binary.BigEndian.AppendUint64(dst, uint64(y)^1<<63), nil
}

// TestSortCutsBatchesAtLeaves sorts rows of seven leaves by leaf keys, in memory (one
// run, copied in key order) and under a budget that spills runs and merges them: with
// SortOptions.leaves every batch yielded holds rows of one leaf, tagged with it, the
// leaves come in order, and the sort's count of each leaf's rows is the rows yielded
// for it. Without it, batches are cut at BatchRows alone and carry no leaf.
func TestSortCutsBatchesAtLeaves(t *testing.T) {
	sch := arrow.NewSchema([]arrow.Field{{Name: "x", Type: arrow.PrimitiveTypes.Int64}, {Name: "y", Type: arrow.PrimitiveTypes.Int64}}, nil)
	rng := rand.New(rand.NewPCG(46, 7))
	const batches, rows = 40, 5000
	xs := make([][]int64, batches)
	for b := range xs {
		for range rows {
			xs[b] = append(xs[b], rng.Int64N(7000))
		}
	}
	input := func() iter.Seq2[arrow.RecordBatch, error] {
		return func(yield func(arrow.RecordBatch, error) bool) {
			for b := range xs {
				bx := array.NewInt64Builder(memory.DefaultAllocator)
				by := array.NewInt64Builder(memory.DefaultAllocator)
				for i, x := range xs[b] {
					bx.Append(x)
					by.Append(int64((b*rows + i) * 7919 % 100003))
				}
				cx, cy := bx.NewArray(), by.NewArray()
				bx.Release()
				by.Release()
				rec := array.NewRecordBatch(sch, []arrow.Array{cx, cy}, int64(len(xs[b])))
				cx.Release()
				cy.Release()
				if !yield(rec, nil) {
					return
				}
			}
		}
	}
	for _, mem := range []int64{0, 1 << 20} {
		for _, leaves := range []bool{true, false} {
			t.Run(fmt.Sprintf("memory=%d/leaves=%v", mem, leaves), func(t *testing.T) {
				so := SortOptions{MemoryBytes: mem, TempDir: t.TempDir(), Parallelism: 2}
				so.leaves = leaves
				s, err := NewSorter(leafKeys{}, so)
				require.NoError(t, err)
				got := map[int]int64{}
				last, straddling, n := -1, 0, 0
				for p, err := range s.sortRows(context.Background(), sch, input()) {
					require.NoError(t, err)
					rec, err := p.record(context.Background(), memory.DefaultAllocator, 1)
					require.NoError(t, err)
					xcol := rec.Column(0).(*array.Int64)
					first := int(xcol.Value(0) / 1000)
					for i := range xcol.Len() {
						leaf := int(xcol.Value(i) / 1000)
						require.GreaterOrEqual(t, leaf, last, "leaves in order")
						last = leaf
						got[leaf]++
					}
					if first != last {
						straddling++
					}
					if leaves {
						require.Equal(t, first, last, "batch %d holds leaves %d to %d", n, first, last)
						require.Equal(t, int32(first), p.leaf)
					} else {
						require.Equal(t, int32(-1), p.leaf)
					}
					rec.Release()
					p.release()
					n++
				}
				if mem > 0 {
					require.Positive(t, s.Stats().SpilledRuns, "the budget spills runs, which are merged")
				} else {
					require.Zero(t, s.Stats().SpilledRuns)
				}
				var total int64
				for _, c := range got {
					total += c
				}
				require.Equal(t, int64(batches*rows), total)
				if leaves {
					require.Len(t, s.leafRows, 7)
					for leaf, c := range s.leafRows {
						require.Equal(t, got[leaf], c, "leaf %d", leaf)
					}
				} else {
					require.Nil(t, s.leafRows)
					require.Positive(t, straddling, "without leaves, batches run across them")
				}
			})
		}
	}
}
