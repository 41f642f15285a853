//go:build !linux

package session

import "time"

func statListFile(path string) (size, mtime int64, ok bool) { return osStatListFile(path) }

func readListFile(path string, buf []byte) (data []byte, size int64, modTime time.Time, ok bool, _ []byte) {
	return osReadListFile(path, buf)
}
