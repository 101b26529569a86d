package rewriter

import (
	"bytes"
	"fmt"
	"sync"
	"testing"
	"unsafe"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/compute"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/apache/arrow-go/v18/parquet"
	"github.com/apache/arrow-go/v18/parquet/file"
	"github.com/apache/arrow-go/v18/parquet/pqarrow"
	"github.com/stretchr/testify/require"
)

// Every pool the package's tests make, through RewriteGroup too, poisons
// what is freed to it.
func init() { poisonFreedPages = true }

func TestClassSize(t *testing.T) {
	cases := []struct{ n, want int }{
		{32 << 10, 32 << 10},
		{32<<10 + 1, 40 << 10},
		{40 << 10, 40 << 10},
		{63 << 10, 64 << 10},
		{64<<10 + 1, 80 << 10},
		{1<<20 + 1, 1<<20 + 256<<10},
		{2 << 20, 2 << 20},
	}
	for _, tc := range cases {
		got := classSize(tc.n)
		require.Equal(t, tc.want, got, "classSize(%d)", tc.n)
		require.GreaterOrEqual(t, got, tc.n)
		require.LessOrEqual(t, got-tc.n, got/5, "waste over a fifth for %d", tc.n)
	}
}

func TestPagePoolZeroesReusesAndUnmaps(t *testing.T) {
	if !hugeSupported {
		t.Skip("the pool maps no memory on this system")
	}
	cases := []struct {
		name string
		size int
	}{
		{"small class", 48 << 10},
		{"largest slab class", 2 << 20},
		{"own mapping", 5<<20 + 123},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			p := newPagePool(false)
			b := p.Allocate(tc.size)
			require.Len(t, b, tc.size)
			require.Equal(t, tc.size, cap(b), "spare capacity handed out: kernels write into it")
			require.Zero(t, addrOf(b)%64, "not 64-byte aligned")
			require.True(t, allZero(b), "fresh block not zero")
			for i := range b {
				b[i] = byte(i)
			}
			// Growing within the block keeps the data; growing past it
			// moves the data to a new block.
			b = p.Reallocate(tc.size-1, b)
			within, whole := addrOf(b), len(p.block(b))
			require.Equal(t, tc.size-1, cap(b))
			b = p.Reallocate(whole, b)
			require.Equal(t, within, addrOf(b), "grown within its block, yet moved")
			require.Zero(t, b[tc.size-1], "grown in place over a byte written before, yet not zero")
			b = p.Reallocate(whole+1, b)
			require.NotEqual(t, within, addrOf(b), "grown past its block, yet not moved")
			for i := range tc.size - 1 {
				if b[i] != byte(i) {
					t.Fatalf("byte %d lost in Reallocate", i)
				}
			}
			p.Free(b)
			// A freed block comes back zeroed.
			c := p.Allocate(tc.size)
			require.True(t, allZero(c), "reused block not zero")
			p.Free(c)
			p.Free(c) // a second free is ignored
			d, e := p.Allocate(tc.size), p.Allocate(tc.size)
			require.NotEqual(t, addrOf(d), addrOf(e), "one block handed out twice")
			p.Free(d)
			p.Free(e)
			require.NoError(t, p.Close())
			require.Zero(t, p.mapped, "memory left mapped after Close")
			require.Positive(t, p.PeakMappedBytes())
		})
	}
}

// Cutting a buffer down to a smaller class moves it there: the data is
// kept, the new block is zero past it, and the old block is free again.
func TestPagePoolReallocateShrinks(t *testing.T) {
	if !hugeSupported {
		t.Skip("the pool maps no memory on this system")
	}
	cases := []struct {
		name      string
		from, to  int
		moves     bool
		pooledOut int // blocks of the pool out afterwards
	}{
		{"same class", 128 << 10, 120 << 10, false, 1},
		{"smaller class", 128 << 10, 64 << 10, true, 1},
		{"to the Go heap", 128 << 10, 20 << 10, true, 0},
		{"own mapping, a little", 5 << 20, 5<<20 - 100<<10, false, 1},
		{"own mapping to a slab", 5 << 20, 1 << 20, true, 1},
		{"own mapping to a smaller one", 8 << 20, 5 << 20, true, 1},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			p := newPagePool(false)
			b := p.Allocate(tc.from)
			for i := range b {
				b[i] = byte(i%251 + 1)
			}
			before := addrOf(b)
			b = p.Reallocate(tc.to, b)
			require.Len(t, b, tc.to)
			require.Equal(t, tc.moves, addrOf(b) != before, "moved")
			require.Equal(t, tc.pooledOut, p.out, "pool blocks out")
			for i := range b {
				if b[i] != byte(i%251+1) {
					t.Fatalf("byte %d lost in shrinking", i)
				}
			}
			if tc.moves {
				// Memory past the buffer, reachable by growing it
				// within its block again, is zero.
				grown := p.Reallocate(cap(b), b)
				require.True(t, allZero(grown[tc.to:]), "tail of the new block not zero")
				b = grown
			}
			p.Free(b)
			require.Zero(t, p.out)
			require.NoError(t, p.Close())
			require.Zero(t, p.mapped)
		})
	}
	t.Run("a buffer the pool did not hand out", func(t *testing.T) {
		p := newPagePool(false)
		foreign := make([]byte, 256<<10)
		require.Equal(t, addrOf(foreign), addrOf(p.Reallocate(40<<10, foreign)))
		require.NoError(t, p.Close())
	})
}

// arrow-go's record reader reserves twice a batch's values when the batch
// crosses a data page and trims the buffer when it hands it over; on the
// pool, the trimmed buffer must not keep the doubled block.
func TestPagePoolTrimsReaderBuffers(t *testing.T) {
	if !hugeSupported {
		t.Skip("the pool maps no memory on this system")
	}
	const rows, batch = 40_000, 8192
	sch := arrow.NewSchema([]arrow.Field{{Name: "v", Type: arrow.PrimitiveTypes.Int64, Nullable: true}}, nil)
	b := array.NewInt64Builder(memory.DefaultAllocator)
	for i := range rows {
		b.Append(int64(i) * 7919)
	}
	col := b.NewArray()
	b.Release()
	rec := array.NewRecordBatch(sch, []arrow.Array{col}, rows)
	col.Release()
	var buf bytes.Buffer
	// Small data pages, so that every batch crosses at least one.
	props := parquet.NewWriterProperties(parquet.WithDictionaryDefault(false), parquet.WithDataPageSize(20<<10))
	w, err := pqarrow.NewFileWriter(sch, &buf, props, pqarrow.DefaultWriterProps())
	require.NoError(t, err)
	require.NoError(t, w.Write(rec))
	require.NoError(t, w.Close())
	rec.Release()

	p := newPagePool(true)
	mem := memory.NewCheckedAllocator(p)
	pf, err := file.NewParquetReader(bytes.NewReader(buf.Bytes()), file.WithReadProps(parquet.NewReaderProperties(mem)))
	require.NoError(t, err)
	fr, err := pqarrow.NewFileReader(pf, pqarrow.ArrowReadProperties{BatchSize: batch}, mem)
	require.NoError(t, err)
	rr, err := fr.GetRecordReader(t.Context(), nil, nil)
	require.NoError(t, err)
	var held []arrow.RecordBatch
	next := int64(0)
	for rr.Next() {
		r := rr.RecordBatch()
		r.Retain()
		held = append(held, r)
		vals := r.Column(0).(*array.Int64)
		for i := range vals.Len() {
			require.Equal(t, (next+int64(i))*7919, vals.Value(i))
		}
		next += r.NumRows()
		data := r.Column(0).Data().Buffers()[1].Buf()
		require.LessOrEqual(t, cap(data), classSize(batch*8), "batch at row %d keeps a block of %d bytes", next, cap(data))
	}
	require.NoError(t, rr.Err())
	require.EqualValues(t, rows, next)
	rr.Release()
	for _, r := range held {
		r.Release()
	}
	require.NoError(t, pf.Close())
	mem.AssertSize(t, 0)
	require.NoError(t, p.Close())
}

func TestPagePoolLeavesSmallAndForeignBuffersToTheHeap(t *testing.T) {
	p := newPagePool(false)
	small := p.Allocate(1000)
	require.Len(t, small, 1000)
	foreign := make([]byte, 1<<20)
	p.Free(foreign) // not the pool's: ignored
	p.Free(small)
	require.Zero(t, p.out)
	require.Zero(t, p.mapped)
	require.NoError(t, p.Close())
}

func TestPagePoolPoisonsFreedBlocks(t *testing.T) {
	if !hugeSupported {
		t.Skip("the pool maps no memory on this system")
	}
	p := newPagePool(true)
	keep := p.Allocate(64 << 10) // keeps the slab mapped
	b := p.Allocate(64 << 10)
	b[0] = 1
	p.Free(b)
	// What a use after the last release would read.
	require.Equal(t, byte(0xa5), b[0])
	require.Equal(t, byte(0xa5), b[len(b)-1])
	p.Free(keep)
	require.NoError(t, p.Close())
}

func TestPagePoolCloseKeepsBuffersStillOut(t *testing.T) {
	if !hugeSupported {
		t.Skip("the pool maps no memory on this system")
	}
	p := newPagePool(false)
	b := p.Allocate(100 << 10)
	err := p.Close()
	require.ErrorContains(t, err, "1 Arrow buffers were never released")
	b[0] = 7 // still mapped
	p.Free(b)
	require.NoError(t, p.Close())
	require.Zero(t, p.mapped)
}

// Arrow builders and arrays on the pool, from several goroutines at once
// (under -race too), each checking its own values after the others freed
// theirs.
func TestPagePoolUnderArrowConcurrently(t *testing.T) {
	p := newPagePool(true)
	mem := memory.NewCheckedAllocator(p)
	var wg sync.WaitGroup
	for g := range 4 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for round := range 20 {
				b := array.NewInt64Builder(mem)
				sb := array.NewStringBuilder(mem)
				n := 10_000 + 997*round
				for i := range n {
					b.Append(int64(g*1_000_000 + i))
					sb.Append(string(rune('a' + (i+g)%26)))
				}
				ints, strs := b.NewInt64Array(), sb.NewStringArray()
				b.Release()
				sb.Release()
				for i := range n {
					if ints.Value(i) != int64(g*1_000_000+i) || strs.Value(i) != string(rune('a'+(i+g)%26)) {
						t.Errorf("goroutine %d round %d: row %d corrupted", g, round, i)
						break
					}
				}
				ints.Release()
				strs.Release()
			}
		}()
	}
	wg.Wait()
	mem.AssertSize(t, 0)
	require.NoError(t, p.Close())
	require.Zero(t, p.mapped)
}

// arrow-go's Take and Filter kernels reserve a binary column's output from
// the mean value length (rounded down) and write up to cap(buffer.Buf())
// before they reserve more, copying only up to its len: with a pool block's
// spare capacity behind the length, the values past the estimate came out
// as NULs (or the kernel panicked past the length). This is how iceberg-go
// applies position deletes, so it runs on every rewrite of an input with
// deletes. Values of 4 and 13 bytes (mean 4.9, estimated as 4) over about
// 8,200 rows put the output between the estimate (just over 32 KiB) and
// its block (40 KiB).
func TestPagePoolUnderTakeAndFilterKernels(t *testing.T) {
	for _, kernel := range []string{"take", "filter"} {
		for _, typ := range []arrow.DataType{arrow.BinaryTypes.String, arrow.BinaryTypes.Binary, arrow.BinaryTypes.LargeString} {
			for _, n := range []int{8_210, 8_400, 20_000} {
				t.Run(fmt.Sprintf("%s/%s/rows=%d", kernel, typ, n), func(t *testing.T) {
					takeOrFilterOnPool(t, kernel, typ, n)
				})
			}
		}
	}
}

func takeOrFilterOnPool(t *testing.T, kernel string, typ arrow.DataType, n int) {
	p := newPagePool(true)
	alloc := memory.NewCheckedAllocator(p)
	b := array.NewBuilder(alloc, typ)
	want := make([]string, 0, n)
	keep := array.NewBooleanBuilder(alloc)
	idx := array.NewInt64Builder(alloc)
	for i := range n {
		size := 4
		if i%10 == 9 {
			size = 13
		}
		v := string(bytes.Repeat([]byte{byte('a' + i%26)}, size))
		switch bb := b.(type) {
		case *array.StringBuilder:
			bb.Append(v)
		case *array.LargeStringBuilder:
			bb.Append(v)
		case *array.BinaryBuilder:
			bb.Append([]byte(v))
		}
		deleted := i%1000 == 7
		keep.Append(!deleted)
		if !deleted {
			idx.Append(int64(i))
			want = append(want, v)
		}
	}
	vals, mask, take := b.NewArray(), keep.NewBooleanArray(), idx.NewInt64Array()
	b.Release()
	keep.Release()
	idx.Release()
	ctx := compute.WithAllocator(t.Context(), alloc)
	var (
		out arrow.Array
		err error
	)
	if kernel == "take" {
		out, err = compute.TakeArray(ctx, vals, take)
	} else {
		out, err = compute.FilterArray(ctx, vals, mask, *compute.DefaultFilterOptions())
	}
	require.NoError(t, err)
	require.Equal(t, len(want), out.Len())
	for i, w := range want {
		var got string
		switch o := out.(type) {
		case *array.String:
			got = o.Value(i)
		case *array.LargeString:
			got = o.Value(i)
		case *array.Binary:
			got = string(o.Value(i))
		}
		if got != w {
			t.Fatalf("value %d of %d: got %q, want %q", i, len(want), got, w)
		}
	}
	for _, a := range []arrow.Array{vals, mask, take, out} {
		a.Release()
	}
	alloc.AssertSize(t, 0)
	require.NoError(t, p.Close())
}

func addrOf(b []byte) uintptr { return uintptr(unsafe.Pointer(unsafe.SliceData(b))) }

func allZero(b []byte) bool {
	return bytes.Count(b, []byte{0}) == len(b)
}
