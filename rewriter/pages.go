package rewriter

import (
	"fmt"
	"math/bits"
	"sync"
	"unsafe"

	"github.com/apache/arrow-go/v18/arrow/memory"
)

// PagePool is an [memory.Allocator] that serves a rewrite's large Arrow
// buffers from memory it maps itself, in transparent huge pages where the
// kernel allows (madvise(MADV_HUGEPAGE)), and takes each buffer back the
// moment its last reference releases it. Buffers under 32 KiB go to the Go
// heap.
//
// What it saves, against Arrow buffers on the Go heap:
//
//   - page faults: the Go heap faults in every 4 KiB page it grows into,
//     about the process's peak resident set once over, at 10-14 us a fault
//     on the benchmark VMs (bench.Machine.PageFaultMicros); a huge page is
//     one fault for 512 of them;
//   - garbage: a released Arrow buffer on the Go heap waits for the next
//     collection, so with GOGC=100 the heap holds up to twice the live
//     Arrow memory and collects more often; here a released buffer is
//     reused, or unmapped, at once, and a group that ends leaves its memory
//     to the next.
//
// Buffers of up to 2 MiB are carved from 2 MiB slabs of their size class
// (four classes per power of two, so a buffer wastes at most a fifth of its
// class); a slab is unmapped when its last buffer comes back. Larger
// buffers have a mapping each, unmapped when freed. A buffer cut down to a
// smaller class moves there (see [PagePool.Reallocate]), so that what
// arrow-go reserved and trimmed is given back. Memory is zero when
// handed out (Arrow relies on that, as it does on the Go allocator and on
// arrow-go's C allocator, which uses calloc): fresh mappings are zero, and a
// reused block is cleared.
//
// Frees of buffers the pool did not hand out (the Go heap's) and second
// frees of one are ignored, so a buffer freed twice is never handed out
// twice. A buffer used after its last release, which on the Go heap reads
// stale data harmlessly, here reads whatever the pool put there since; the
// rewriter's tests run on a pool that poisons every freed block
// (newPagePool) and check every row they wrote.
//
// Huge pages are the kernel's to give: with
// /sys/kernel/mm/transparent_hugepage/enabled at "never" the pool still
// reuses its blocks, in 4 KiB pages; with defrag at "madvise" (the usual
// default) a fault on a machine whose free memory is fragmented may
// compact memory first, which shows as system time (0.03 s to 0.9 s for
// 512 MiB in a standalone test on the benchmark VM, against 1.5 s in 4 KiB
// pages).
//
// Close unmaps what is left once every buffer is back; a pool with buffers
// still out keeps their mappings, so a leak stays a leak and never a fault.
// Off Linux the pool maps nothing and every buffer comes from the Go heap.
//
// It is safe for concurrent use.
type PagePool struct {
	mu     sync.Mutex
	slabs  map[int][]*pageSlab // class size → slabs with a free block
	empty  map[int]int         // class size → slabs with no block out
	blocks map[*byte]*pageBlock
	out    int   // blocks handed out and not freed
	mapped int64 // bytes mapped now
	peak   int64 // most bytes mapped at once
	poison bool
	small  memory.Allocator
}

// pageSlab is one 2 MiB mapping split into blocks of one class.
type pageSlab struct {
	mem    []byte
	class  int
	free   []*byte // blocks not handed out and already used once
	fresh  int     // blocks from this index on were never handed out
	used   int
	listed bool // in the pool's slabs list of its class
}

// pageBlock is a block handed out, or free in a slab.
type pageBlock struct {
	slab *pageSlab // nil for a large block with its own mapping
	mem  []byte    // the whole block (class size, or the large mapping)
	used bool
}

const (
	// poolMinBytes is the smallest buffer the pool serves; smaller ones
	// are left to the Go heap, where they cost neither a page each nor a
	// map entry.
	poolMinBytes = 32 << 10
	// hugePage is the x86-64 and arm64 transparent huge page size; every
	// mapping starts at a multiple of it.
	hugePage = 2 << 20
)

// NewPagePool returns an empty pool.
func NewPagePool() *PagePool { return newPagePool(poisonFreedPages) }

// poisonFreedPages makes every new pool poison the blocks freed to it. Only
// the package's tests set it (pages_internal_test.go), so that a buffer
// used after its release in any rewrite they check reads garbage and fails
// the check.
var poisonFreedPages bool

// newPagePool returns an empty pool; with poison, every freed block is
// filled with 0xa5 bytes, so a read after the last release reads garbage
// that a test checking its rows sees.
func newPagePool(poison bool) *PagePool {
	return &PagePool{
		slabs:  map[int][]*pageSlab{},
		empty:  map[int]int{},
		blocks: map[*byte]*pageBlock{},
		poison: poison,
		small:  memory.DefaultAllocator,
	}
}

// classSize rounds n up to its size class: for 2^k < n ≤ 2^(k+1), the
// multiples of 2^(k-2).
func classSize(n int) int {
	e := bits.Len(uint(n - 1)) // 2^(e-1) < n ≤ 2^e
	step := 1 << max(e-3, 0)
	return (n + step - 1) &^ (step - 1)
}

// Allocate implements [memory.Allocator]. The buffer's capacity is its
// length, as arrow-go's own allocators hand them out: arrow-go's kernels
// take cap(buffer.Buf()) for room they may write into (the binary Take and
// Filter kernels do, through their buffer builders' reserve), but copy only
// up to len, so with spare capacity behind the length a value that crossed
// it was cut short and the bytes left zero, and the next one panicked on a
// slice past the length. The block's real size is the pool's to know
// ([PagePool.Reallocate] grows into it).
func (p *PagePool) Allocate(size int) []byte {
	b, clean := p.take(size)
	if !clean {
		clear(b)
	}
	return b[:size:size]
}

// take hands out a block of at least size bytes, whole (len is the block's
// size); clean reports memory still zero. Where the pool serves no such
// buffer, or cannot map one, the block comes from the Go heap.
func (p *PagePool) take(size int) (b []byte, clean bool) {
	if size < poolMinBytes || !hugeSupported {
		return p.small.Allocate(size), true
	}
	var err error
	p.mu.Lock()
	if class := classSize(size); class <= hugePage {
		b, clean, err = p.takeSmall(class)
	} else {
		b, err = p.takeLarge(size)
		clean = true
	}
	p.mu.Unlock()
	if err != nil {
		// Mapping failed (address space, a limit): the Go heap serves it.
		return p.small.Allocate(size), true
	}
	return b, clean
}

// Reallocate implements [memory.Allocator]. Growing past the block moves
// the buffer to a larger one. Shrinking it to a smaller class moves it too,
// which arrow-go's readers rely on to give back what they reserved: a
// primitive column's record reader reserves the next power of two of the
// values it may read, so a batch of 8,192 rows that crosses a page boundary
// reserves 16,384 values and trims the buffer when the batch is done
// (ReleaseValues: memory.Buffer.Resize). Kept in place, every fixed-width
// column of a scanned batch held twice its size: in bench/rewrite's
// partitioned shape, 81 MB of the two groups' runs at once.
func (p *PagePool) Reallocate(size int, b []byte) []byte {
	whole := p.block(b)
	if whole == nil {
		// The Go heap's, as arrow-go's Go allocator handles it.
		if size <= cap(b) {
			return b[:size]
		}
		nb := p.Allocate(size)
		copy(nb, b)
		return nb
	}
	if c := len(whole); size <= c {
		if p.shrinks(size, c) {
			nb, clean := p.take(size)
			n := copy(nb, b[:min(size, len(b))])
			if !clean {
				clear(nb[n:])
			}
			p.Free(b)
			return nb[:size:size]
		}
		if size > len(b) {
			// Growing in place into what an earlier, longer use of
			// the buffer may have left there: memory handed out is
			// zero.
			clear(whole[len(b):size])
		}
		return whole[:size:size]
	}
	nb := p.Allocate(size)
	copy(nb, b)
	p.Free(b)
	return nb
}

// shrinks reports whether a pool block of capacity c, cut down to size
// bytes, belongs in a smaller block: a smaller class, the Go heap, or, for
// a block over 2 MiB, one at least an eighth smaller.
func (p *PagePool) shrinks(size, c int) bool {
	switch {
	case !hugeSupported || c < poolMinBytes || size >= c:
		return false
	case size < poolMinBytes:
		return true
	case c <= hugePage:
		return classSize(size) < c
	default:
		return size <= hugePage || (size+4095)&^4095 <= c-c/8
	}
}

// block returns the whole block b starts if the pool handed it out, nil
// for the Go heap's buffers. A pool buffer is never shorter than
// poolMinBytes (a shorter one moves to the Go heap), so shorter ones are
// not looked up.
func (p *PagePool) block(b []byte) []byte {
	if cap(b) < poolMinBytes || !hugeSupported {
		return nil
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	if blk := p.blocks[unsafe.SliceData(b)]; blk != nil && blk.used {
		return blk.mem
	}
	return nil
}

// Free implements [memory.Allocator].
func (p *PagePool) Free(b []byte) {
	if cap(b) < poolMinBytes || !hugeSupported {
		return
	}
	addr := unsafe.SliceData(b)
	p.mu.Lock()
	defer p.mu.Unlock()
	blk := p.blocks[addr]
	if blk == nil || !blk.used {
		return
	}
	blk.used = false
	p.out--
	s := blk.slab
	if s == nil {
		delete(p.blocks, addr)
		p.unmap(blk.mem)
		return
	}
	if p.poison {
		for i := range blk.mem {
			blk.mem[i] = 0xa5
		}
	}
	s.used--
	if s.used == 0 {
		// One empty slab a class is kept, so that a class whose buffers
		// come and go one at a time does not map and fault a slab each
		// time.
		if p.empty[s.class] > 0 {
			p.dropSlab(s)
			return
		}
		p.empty[s.class]++
	}
	s.free = append(s.free, addr)
	if !s.listed {
		s.listed = true
		p.slabs[s.class] = append(p.slabs[s.class], s)
	}
}

// takeSmall hands out a block of class from a slab with one free, mapping
// a new slab when none has; clean reports a block never handed out (still
// zero from the kernel).
func (p *PagePool) takeSmall(class int) (b []byte, clean bool, err error) {
	list := p.slabs[class]
	for len(list) > 0 {
		s := list[len(list)-1]
		var addr *byte
		switch {
		case len(s.free) > 0:
			addr = s.free[len(s.free)-1]
			s.free = s.free[:len(s.free)-1]
		case s.fresh < len(s.mem)/class:
			addr = &s.mem[s.fresh*class]
			s.fresh++
			clean = true
		}
		if addr == nil {
			s.listed = false
			list = list[:len(list)-1]
			continue
		}
		p.slabs[class] = list
		blk := p.blocks[addr]
		if blk == nil {
			blk = &pageBlock{slab: s, mem: unsafe.Slice(addr, class)}
			p.blocks[addr] = blk
		}
		blk.used = true
		if s.used == 0 {
			p.empty[class]--
		}
		s.used++
		p.out++
		return blk.mem, clean, nil
	}
	p.slabs[class] = list
	m, err := p.mapHuge(hugePage)
	if err != nil {
		return nil, false, err
	}
	s := &pageSlab{mem: m, class: class, listed: true}
	p.slabs[class] = append(list, s)
	p.empty[class]++
	return p.takeSmall(class)
}

// takeLarge maps a block of its own for a buffer over 2 MiB, rounded up to
// whole 4 KiB pages (only the huge pages it covers entirely are huge).
func (p *PagePool) takeLarge(size int) ([]byte, error) {
	m, err := p.mapHuge((size + 4095) &^ 4095)
	if err != nil {
		return nil, err
	}
	blk := &pageBlock{mem: m, used: true}
	p.blocks[unsafe.SliceData(m)] = blk
	p.out++
	return m, nil
}

// dropSlab unmaps a slab none of whose blocks is handed out.
func (p *PagePool) dropSlab(s *pageSlab) {
	for i := range s.fresh {
		delete(p.blocks, &s.mem[i*s.class])
	}
	if s.listed {
		list := p.slabs[s.class]
		for i, o := range list {
			if o == s {
				p.slabs[s.class] = append(list[:i], list[i+1:]...)
				break
			}
		}
	}
	p.unmap(s.mem)
}

func (p *PagePool) mapHuge(n int) ([]byte, error) {
	m, err := mapHuge(n)
	if err != nil {
		return nil, err
	}
	p.mapped += int64(len(m))
	p.peak = max(p.peak, p.mapped)
	return m, nil
}

// unmap returns a mapping to the kernel. An error (which munmap gives only
// for an address it never mapped) leaves the memory mapped and unused.
func (p *PagePool) unmap(m []byte) {
	if unmapHuge(m) == nil {
		p.mapped -= int64(len(m))
	}
}

// PeakMappedBytes reports the most memory the pool had mapped at once.
func (p *PagePool) PeakMappedBytes() int64 {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.peak
}

// Close unmaps the pool's memory once every buffer is back. With buffers
// still out it unmaps nothing and says how many there are.
func (p *PagePool) Close() error {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.out > 0 {
		return fmt.Errorf("page pool: %d Arrow buffers were never released; %d bytes stay mapped", p.out, p.mapped)
	}
	for class, list := range p.slabs {
		for _, s := range list {
			s.listed = false
			p.dropSlab(s)
		}
		delete(p.slabs, class)
	}
	clear(p.empty)
	return nil
}
