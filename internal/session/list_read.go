package session

import (
	"errors"
	"io"
	"os"
	"time"
)

// osStatListFile is statListFile through package os (list_read_linux.go
// has it in straight system calls): the size and mtime (Unix nanoseconds)
// of path; ok is false when it cannot be stat'ed or is not a regular file.
func osStatListFile(path string) (size, mtime int64, ok bool) {
	fi, err := os.Stat(path)
	if err != nil || !fi.Mode().IsRegular() {
		return 0, 0, false
	}
	return fi.Size(), fi.ModTime().UnixNano(), true
}

// osReadListFile is readListFile through package os: it reads the regular
// file path whole (its size when opened) into buf, grown when too small;
// ok is false when it cannot be opened or read, is not a regular file, or
// reads empty while its size was not 0.
func osReadListFile(path string, buf []byte) (data []byte, size int64, modTime time.Time, ok bool, _ []byte) {
	f, err := os.Open(path)
	if err != nil {
		return nil, 0, time.Time{}, false, buf
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil || !fi.Mode().IsRegular() {
		return nil, 0, time.Time{}, false, buf
	}
	size, modTime = fi.Size(), fi.ModTime()
	buf = growListBuf(buf, size)
	n, err := io.ReadFull(f, buf[:size])
	if err != nil && !errors.Is(err, io.ErrUnexpectedEOF) {
		return nil, 0, time.Time{}, false, buf
	}
	return buf[:n], size, modTime, true, buf
}
