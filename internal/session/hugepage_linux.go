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

// hugeSlice returns a new slice of n zero elements laid out so that, as
// far as it goes, its memory starts on a huge page boundary and is
// advised to use huge pages (the address space before the boundary is
// allocated but never touched).
func hugeSlice[T any](n int) []T {
	const huge = 2 << 20
	var zero T
	size := unsafe.Sizeof(zero)
	if uintptr(n)*size < huge/2 {
		return make([]T, n)
	}
	slack := int(2*huge/size) + 1
	s := make([]T, n+slack)
	base := uintptr(unsafe.Pointer(unsafe.SliceData(s)))
	skip := int((((base + huge - 1) &^ (huge - 1)) - base + size - 1) / size)
	s = s[skip : skip+n : len(s)]
	adviseHuge(s)
	return s[:n:n]
}
