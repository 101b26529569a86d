package rewriter

import (
	"bytes"
	"fmt"
	"os"
	"unsafe"

	"golang.org/x/sys/unix"
)

// hugeSupported: the pool maps its own memory here.
const hugeSupported = true

// mapHuge maps n bytes (whole 4 KiB pages) of anonymous memory aligned to
// hugePage and asks for transparent huge pages over it. The kernel honours
// MADV_HUGEPAGE when /sys/kernel/mm/transparent_hugepage/enabled is
// "always" or "madvise"; with "never" the mapping is ordinary pages, and
// still reused.
//
// It maps with unix.MmapPtr, not syscall.Mmap: syscall.Mmap records every
// mapping in a table of its own until syscall.Munmap of the whole mapping,
// and the pool unmaps the unaligned ends at once and blocks one by one, so
// a long-lived floe serve would grow that table without end.
func mapHuge(n int) ([]byte, error) {
	p, err := unix.MmapPtr(-1, 0, nil, uintptr(n+hugePage), unix.PROT_READ|unix.PROT_WRITE, unix.MAP_ANON|unix.MAP_PRIVATE)
	if err != nil {
		return nil, fmt.Errorf("map %d bytes: %w", n, err)
	}
	head := int((hugePage - uintptr(p)%hugePage) % hugePage)
	if head > 0 {
		if err := unix.MunmapPtr(p, uintptr(head)); err != nil {
			return nil, fmt.Errorf("unmap %d bytes: %w", head, err)
		}
	}
	base := unsafe.Add(p, head)
	if tail := hugePage - head; tail > 0 {
		if err := unix.MunmapPtr(unsafe.Add(base, n), uintptr(tail)); err != nil {
			return nil, fmt.Errorf("unmap %d bytes: %w", tail, err)
		}
	}
	m := unsafe.Slice((*byte)(base), n)
	_ = unix.Madvise(m, unix.MADV_HUGEPAGE) // advisory: an error leaves small pages
	return m, nil
}

func unmapHuge(m []byte) error {
	if err := unix.MunmapPtr(unsafe.Pointer(unsafe.SliceData(m)), uintptr(len(m))); err != nil {
		return fmt.Errorf("unmap %d bytes: %w", len(m), err)
	}
	return nil
}

// dropPages gives the pages of m back to the kernel and keeps the mapping:
// the next touch faults in zeroed memory, a whole huge page at a time
// where the mapping has them.
func dropPages(m []byte) {
	if len(m) > 0 {
		_ = unix.Madvise(m, unix.MADV_DONTNEED) // advisory: an error leaves the pages resident
	}
}

// hugePagesOn reports whether the kernel gives transparent huge pages to
// mappings that ask for them (/sys/kernel/mm/transparent_hugepage/enabled
// at "always" or "madvise").
func hugePagesOn() bool {
	b, err := os.ReadFile("/sys/kernel/mm/transparent_hugepage/enabled")
	if err != nil {
		return false
	}
	return bytes.Contains(b, []byte("[always]")) || bytes.Contains(b, []byte("[madvise]"))
}
