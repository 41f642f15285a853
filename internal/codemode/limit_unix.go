//go:build unix

package codemode

import "syscall"

// limitMemory caps the process's address space.
func limitMemory(n uint64) {
	_ = syscall.Setrlimit(syscall.RLIMIT_DATA, &syscall.Rlimit{Cur: n, Max: n})
}
