//go:build linux

package rewriter

import (
	"math/rand/v2"
	"slices"
	"testing"
	"unsafe"

	"github.com/stretchr/testify/require"
	"golang.org/x/sys/unix"
)

// residentPages counts the 4 KiB pages of a run buffer's memory that are
// resident (mincore(2)).
func residentPages[T runBuf](t *testing.T, s []T) int {
	t.Helper()
	size := int(unsafe.Sizeof(*new(T)))
	b := unsafe.Slice((*byte)(unsafe.Pointer(unsafe.SliceData(s[:1]))), cap(s)*size)
	vec := make([]byte, (len(b)+4095)/4096)
	// x/sys/unix has no wrapper for mincore.
	if _, _, errno := unix.Syscall(unix.SYS_MINCORE, uintptr(unsafe.Pointer(unsafe.SliceData(b))), uintptr(len(b)), uintptr(unsafe.Pointer(unsafe.SliceData(vec)))); errno != 0 {
		t.Fatalf("mincore: %v", errno)
	}
	n := 0
	for _, v := range vec {
		n += int(v & 1)
	}
	return n
}

// A run's mapped buffers that no run needs for a while, the radix sort's
// scratch once the run is sorted and a set kept for the next run, give
// their pages back where the kernel gives huge pages (and keep them where
// refaulting would cost a fault per 4 KiB), and still serve the next run.
func TestRunPoolIdleBuffersLeaveMemory(t *testing.T) {
	if !hugeSupported {
		t.Skip("run buffers are mapped on Linux only")
	}
	const rows = 200_000 // 8 MB of entries: mapped
	thp := hugePagesOn()
	p := &runPool{}
	r := p.newRun(rows, rows*8)
	rnd := rand.New(rand.NewPCG(7, 19))
	for i := range rows {
		r.ents = append(r.ents, rowEnt{p0: rnd.Uint64N(1 << 40), klen: 8, r: int32(i)})
	}
	r.n = rows
	require.NoError(t, r.sort())
	require.True(t, slices.IsSortedFunc(r.ents, func(a, b rowEnt) int { return compareEnts(nil, &a, &b) }), "entries not sorted")
	require.Positive(t, residentPages(t, r.ents), "sorted entries not resident")
	if thp {
		require.Zero(t, residentPages(t, r.spare), "the sort's scratch kept its pages")
	} else {
		require.Positive(t, residentPages(t, r.spare), "without huge pages the scratch keeps its pages")
	}

	ents := r.ents
	r.giveBack()
	if thp {
		require.Zero(t, residentPages(t, ents[:1]), "a kept set's entries kept their pages")
	} else {
		require.Equal(t, (cap(ents)*int(unsafe.Sizeof(rowEnt{}))+4095)/4096, residentPages(t, ents[:1]))
	}

	// The next run gets the same mapping back and fills it as before.
	next := p.newRun(rows, rows*8)
	require.Equal(t, unsafe.SliceData(ents[:1]), unsafe.SliceData(next.ents[:1]), "kept set not reused")
	for i := range rows {
		next.ents = append(next.ents, rowEnt{p0: uint64(rows - i), klen: 8, r: int32(i)})
	}
	next.n = rows
	require.NoError(t, next.sort())
	for i, e := range next.ents {
		require.Equal(t, uint64(i+1), e.p0, "entry %d of the next run", i)
	}
	next.giveBack()
	p.release()
	require.Zero(t, p.mapped())
}
