//go:build linux && (amd64 || arm64)

package main

import (
	"os"
	"syscall"
)

// dropCache writes the binary out and drops it from the page cache, so
// that its next start reads it from disk.
func dropCache(path string) error {
	f, err := os.Open(path)
	if err != nil {
		return err
	}
	defer f.Close()
	if err := f.Sync(); err != nil {
		return err
	}
	const fadvDontNeed = 4 // POSIX_FADV_DONTNEED
	if _, _, e := syscall.Syscall6(syscall.SYS_FADVISE64, f.Fd(), 0, 0, fadvDontNeed, 0, 0); e != 0 {
		return e
	}
	return nil
}
