package rewriter

import (
	"fmt"
	"syscall"
	"unsafe"
)

// hugeSupported: the pool maps its own memory here.
const hugeSupported = true

// mapHuge maps n bytes (whole 4 KiB pages) of anonymous memory aligned
// to hugePage and asks for transparent huge pages over it. The kernel
// honours MADV_HUGEPAGE when
// /sys/kernel/mm/transparent_hugepage/enabled is "always" or "madvise"; with
// "never" the mapping is ordinary pages, and still reused.
func mapHuge(n int) ([]byte, error) {
	m, err := syscall.Mmap(-1, 0, n+hugePage, syscall.PROT_READ|syscall.PROT_WRITE, syscall.MAP_ANON|syscall.MAP_PRIVATE)
	if err != nil {
		return nil, fmt.Errorf("map %d bytes: %w", n, err)
	}
	base := uintptr(unsafe.Pointer(unsafe.SliceData(m)))
	head := int((hugePage - base%hugePage) % hugePage)
	if head > 0 {
		if err := munmap(m[:head]); err != nil {
			return nil, err
		}
	}
	if tail := m[head+n:]; len(tail) > 0 {
		if err := munmap(tail); err != nil {
			return nil, err
		}
	}
	m = m[head : head+n : head+n]
	_ = syscall.Madvise(m, madvHugepage) // advisory: an error leaves small pages
	return m, nil
}

// madvHugepage is MADV_HUGEPAGE, which package syscall does not name.
const madvHugepage = 14

func unmapHuge(m []byte) error { return munmap(m) }

// munmap unmaps part of a mapping; syscall.Munmap only takes whole ones.
func munmap(b []byte) error {
	_, _, errno := syscall.Syscall(syscall.SYS_MUNMAP, uintptr(unsafe.Pointer(unsafe.SliceData(b))), uintptr(len(b)), 0)
	if errno != 0 {
		return fmt.Errorf("unmap %d bytes: %w", len(b), errno)
	}
	return nil
}
