package session

import (
	"syscall"
	"time"
)

// The listing reads thousands of small files: straight system calls cost
// four per file (open, fstat, read, close) where os.Open and File.Stat
// cost nine (os.Open also tries the poller on a regular file: fcntl four
// times and a failing epoll_ctl), which is a tenth of a first listing.
// The results are those of osStatListFile and osReadListFile.

// statListFile returns the size and mtime (Unix nanoseconds) of path; ok
// is false when it cannot be stat'ed or is not a regular file.
func statListFile(path string) (size, mtime int64, ok bool) {
	var st syscall.Stat_t
	if err := retryEINTR(func() error { return syscall.Stat(path, &st) }); err != nil || st.Mode&syscall.S_IFMT != syscall.S_IFREG {
		return 0, 0, false
	}
	return st.Size, time.Unix(int64(st.Mtim.Sec), int64(st.Mtim.Nsec)).UnixNano(), true
}

// readListFile reads the regular file path whole (its size when opened)
// into buf, grown when too small. ok is false when it cannot be opened or
// read, is not a regular file, or reads empty while its size was not 0.
func readListFile(path string, buf []byte) (data []byte, size int64, modTime time.Time, ok bool, _ []byte) {
	var fd int
	err := retryEINTR(func() (err error) {
		fd, err = syscall.Open(path, syscall.O_RDONLY|syscall.O_CLOEXEC, 0)
		return err
	})
	if err != nil {
		return nil, 0, time.Time{}, false, buf
	}
	defer syscall.Close(fd)
	var st syscall.Stat_t
	if err := retryEINTR(func() error { return syscall.Fstat(fd, &st) }); err != nil || st.Mode&syscall.S_IFMT != syscall.S_IFREG {
		return nil, 0, time.Time{}, false, buf
	}
	size, modTime = st.Size, time.Unix(int64(st.Mtim.Sec), int64(st.Mtim.Nsec))
	buf = growListBuf(buf, size)
	n := 0
	for n < int(size) {
		k, err := syscall.Read(fd, buf[n:size])
		if err == syscall.EINTR {
			continue
		}
		if err != nil {
			return nil, 0, time.Time{}, false, buf
		}
		if k == 0 {
			break // the file got shorter: read what there is
		}
		n += k
	}
	if n == 0 && size > 0 {
		return nil, 0, time.Time{}, false, buf // io.ReadFull's io.EOF
	}
	return buf[:n], size, modTime, true, buf
}

func retryEINTR(f func() error) error {
	for {
		if err := f(); err != syscall.EINTR {
			return err
		}
	}
}
