package session

import (
	"syscall"
	"unsafe"
)

// adviseHuge asks the kernel to back the memory of s with transparent huge
// pages where it is allowed to ("madvise" mode), before s is first
// written. Loading a big session writes megabytes of fresh memory (the
// file's bytes, the entries), and on a virtual machine a fault per 4 kB
// page costs more than the copying and parsing; with 2 MB pages there are
// a few hundred times fewer. Only the whole 2 MB pages inside s are
// advised; the advice is a hint, and its failure changes nothing.
func adviseHuge[T any](s []T) {
	const huge = 2 << 20
	var zero T
	n := uintptr(cap(s)) * unsafe.Sizeof(zero)
	if n < 2*huge {
		return
	}
	p := uintptr(unsafe.Pointer(unsafe.SliceData(s[:1])))
	start := (p + huge - 1) &^ (huge - 1)
	end := (p + n) &^ (huge - 1)
	if end <= start {
		return
	}
	syscall.Syscall(syscall.SYS_MADVISE, start, end-start, 14 /* MADV_HUGEPAGE */)
}

// hugeSlice returns a new slice of n zero elements whose memory is advised
// to use huge pages as far as it holds whole ones. With aligned, it is laid
// out to start on a huge page boundary, so that all of it can use them:
// up to 2 MB of address space before the boundary is allocated but never
// written (for the file's bytes, which the collector does not scan, and
// the entries of a load, one allocation per load).
func hugeSlice[T any](n int, aligned bool) []T {
	const huge = 2 << 20
	var zero T
	size := unsafe.Sizeof(zero)
	if uintptr(n)*size < huge/2 {
		return make([]T, n)
	}
	if !aligned {
		s := make([]T, n)
		adviseHuge(s)
		return s
	}
	slack := int(2*huge/size) + 1
	s := make([]T, n+slack)
	base := uintptr(unsafe.Pointer(unsafe.SliceData(s)))
	skip := int((((base + huge - 1) &^ (huge - 1)) - base + size - 1) / size)
	s = s[skip : skip+n : len(s)]
	adviseHuge(s)
	return s[:n:n]
}
