//go:build linux

package coldcache

import (
	"os"

	"golang.org/x/sys/unix"
)

// Drop writes the file out and drops it from the page cache.
func Drop(path string) error {
	f, err := os.Open(path)
	if err != nil {
		return err
	}
	defer f.Close()
	if err := f.Sync(); err != nil {
		return err
	}
	return unix.Fadvise(int(f.Fd()), 0, 0, unix.FADV_DONTNEED)
}
