package rewriter

import (
	"encoding/binary"
	"errors"
	"iter"
	"math/rand/v2"
	"testing"
	"unsafe"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/stretchr/testify/require"
)

var runBufsSchema = arrow.NewSchema([]arrow.Field{
	{Name: "k", Type: arrow.PrimitiveTypes.Int64},
	{Name: "seq", Type: arrow.PrimitiveTypes.Int64},
}, nil)

// seqKeyer keys a row by (k, seq), so every key is distinct and the order
// is known, and pads the keys of rows from seq long on with zero bytes:
// keys that grow halfway through the input outgrow the arena reserved from
// the first batches, which the run must take over from the Keyer's append.
// failAt, when positive, fails the key of that seq.
type seqKeyer struct{ long, failAt int64 }

func (k seqKeyer) AppendKey(dst []byte, rec arrow.RecordBatch, row int) ([]byte, error) {
	key := rec.Column(0).(*array.Int64).Value(row)
	seq := rec.Column(1).(*array.Int64).Value(row)
	if k.failAt > 0 && seq == k.failAt {
		return dst, errors.New("keyer failed on purpose")
	}
	dst = binary.BigEndian.AppendUint64(dst, uint64(key)^(1<<63))
	dst = binary.BigEndian.AppendUint64(dst, uint64(seq))
	if seq >= k.long {
		dst = append(dst, make([]byte, 40)...)
	}
	return dst, nil
}

func runBufsBatches(mem memory.Allocator, rows, batch int, seed uint64) iter.Seq2[arrow.RecordBatch, error] {
	return func(yield func(arrow.RecordBatch, error) bool) {
		rnd := rand.New(rand.NewPCG(seed, 11))
		b := array.NewRecordBuilder(mem, runBufsSchema)
		defer b.Release()
		for start := 0; start < rows; start += batch {
			for i := range min(batch, rows-start) {
				b.Field(0).(*array.Int64Builder).Append(rnd.Int64N(int64(rows/4+1)) - int64(rows/8))
				b.Field(1).(*array.Int64Builder).Append(int64(start + i))
			}
			if !yield(b.NewRecordBatch(), nil) {
				return
			}
		}
	}
}

// TestRunBuffersMappedAndReleased sorts, with one RunBuffers, inputs whose
// entries, radix scratch, keys and spans are large enough to be mapped (1 MiB and
// more), whose keys grow past what the arena reserved, that spill, and that
// fail halfway: each sort's output is every row once in (k, seq) order, the
// RunBuffers keeps at most two runs' buffers mapped between sorts, and
// Release unmaps them all.
func TestRunBuffersMappedAndReleased(t *testing.T) {
	bufs := &RunBuffers{}
	for i, tc := range []struct {
		name   string
		rows   int
		memory int64
		keyer  seqKeyer
		fails  bool
	}{
		// First, so that its runs after the first get fresh mapped buffers.
		{name: "spilling, fresh buffers", rows: 400_000, memory: 32 << 20, keyer: seqKeyer{long: 1 << 62}},
		{name: "in memory, keys grow", rows: 120_000, keyer: seqKeyer{long: 60_000}},
		{name: "spilling", rows: 150_000, memory: 8 << 20, keyer: seqKeyer{long: 1 << 62}},
		{name: "fails halfway", rows: 120_000, keyer: seqKeyer{long: 1 << 62, failAt: 70_000}, fails: true},
		{name: "spilling, keys grow", rows: 150_000, memory: 12 << 20, keyer: seqKeyer{long: 100_000}},
		{name: "smaller, after larger", rows: 30_000, keyer: seqKeyer{long: 1 << 62}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			mem := NewTrackingAllocator(nil)
			s, err := NewSorter(tc.keyer, SortOptions{
				MemoryBytes: tc.memory, TempDir: t.TempDir(), Allocator: mem, Buffers: bufs, BatchRows: 4096,
			})
			require.NoError(t, err)
			var (
				n       int
				prevK   int64
				prevSeq int64 = -1
				seen          = make([]bool, tc.rows)
				sortErr error
			)
			for rec, err := range s.Sort(t.Context(), runBufsSchema, runBufsBatches(mem, tc.rows, 5000, uint64(i+1))) {
				if err != nil {
					sortErr = err
					break
				}
				ks, seqs := rec.Column(0).(*array.Int64), rec.Column(1).(*array.Int64)
				for r := range int(rec.NumRows()) {
					k, seq := ks.Value(r), seqs.Value(r)
					require.False(t, seen[seq], "row %d twice", seq)
					seen[seq] = true
					if n > 0 {
						require.True(t, k > prevK || (k == prevK && seq > prevSeq), "row %d (%d, %d) after (%d, %d)", n, k, seq, prevK, prevSeq)
					}
					prevK, prevSeq = k, seq
					n++
				}
				rec.Release()
			}
			if tc.fails {
				require.ErrorContains(t, sortErr, "keyer failed on purpose")
			} else {
				require.NoError(t, sortErr)
				require.Equal(t, tc.rows, n)
			}
			require.Zero(t, mem.CurrentBytes(), "Arrow memory leaked")
			if hugeSupported {
				require.LessOrEqual(t, bufs.pool.mapped(), 8, "mappings kept between sorts: at most two runs' keys, entries, scratch and spans")
			}
		})
	}
	if hugeSupported {
		require.Positive(t, bufs.pool.mapped(), "the large sorts should have left mapped buffers for the next")
	}
	bufs.Release()
	require.Zero(t, bufs.pool.mapped(), "Release left mappings")
	require.Empty(t, bufs.pool.free)
}

// TestRunPoolGrowAndMove covers the buffer moves on their own: growth keeps
// the contents and unmaps the old mapping, a key arena an append moved to
// the Go heap comes back into a mapping, and small buffers stay on the heap.
func TestRunPoolGrowAndMove(t *testing.T) {
	if !hugeSupported {
		t.Skip("run buffers are mapped on Linux only")
	}
	p := &runPool{}
	small := makeRunBuf[rowEnt](p, 100)
	require.Zero(t, p.mapped(), "a small buffer is the Go heap's")
	ents := makeRunBuf[rowEnt](p, runMapMin/int(unsafe.Sizeof(rowEnt{}))+1)
	require.Equal(t, 1, p.mapped())
	for i := range cap(ents) {
		ents = append(ents, rowEnt{r: int32(i)})
	}
	ents = growRunBuf(p, ents, 10)
	require.Equal(t, 1, p.mapped(), "growth unmaps the old mapping")
	for i, e := range ents {
		require.Equal(t, int32(i), e.r, "entry %d after growth", i)
	}
	keys := makeRunBuf[byte](p, runMapMin)
	keys = append(keys, make([]byte, cap(keys))...)
	moved := append(keys, 1) // past cap: the Go heap's copy
	keys = p.movedKeys(keys, moved)
	require.Equal(t, 2, p.mapped(), "the old arena unmapped, the moved one mapped again")
	require.Equal(t, len(moved), len(keys))
	require.Equal(t, byte(1), keys[len(keys)-1])
	require.GreaterOrEqual(t, cap(keys), 2*len(moved)-1)
	p.put(runBufs{ents: ents, keys: keys, spare: small})
	require.Equal(t, 2, p.mapped(), "a set given back is kept")
	p.put(runBufs{ents: makeRunBuf[rowEnt](p, runMapMin), keys: makeRunBuf[byte](p, runMapMin)})
	require.Equal(t, 4, p.mapped(), "a second set given back is kept")
	p.put(runBufs{ents: makeRunBuf[rowEnt](p, runMapMin)})
	require.Equal(t, 4, p.mapped(), "a third set given back is unmapped")
	p.release()
	require.Zero(t, p.mapped())
}
