package rpcmode

import (
	"errors"
	"io"
	"os"
	"sync/atomic"
	"syscall"

	"golang.org/x/sys/unix"
)

// fSetPipeSz is F_SETPIPE_SZ (fcntl.h; not in package syscall).
const fSetPipeSz = 1031

// growPipe asks for a 1 MiB buffer when w is a pipe (Linux's default is
// 64 KiB, the most the unprivileged limit pipe-max-size allows is 1 MiB by
// default). A megabyte answer then crosses the pipe in 1 MiB steps rather
// than in 64 KiB ones, each of which waits for the reader to wake up and
// drain the pipe: half the time of a 7.5 MB list_sessions answer on a
// small VM. Nothing else changes: the bytes and their order are the same,
// and a failure (not a pipe, a lower limit) leaves the pipe as it is.
func growPipe(w io.Writer) {
	rc := pipeConn(w)
	if rc == nil {
		return
	}
	rc.Control(func(fd uintptr) {
		syscall.Syscall(syscall.SYS_FCNTL, fd, fSetPipeSz, 1<<20)
	})
}

// pipeConn returns the raw connection of w when w is a pipe.
func pipeConn(w io.Writer) syscall.RawConn {
	f, ok := w.(*os.File)
	if !ok {
		return nil
	}
	if fi, err := f.Stat(); err != nil || fi.Mode()&os.ModeNamedPipe == 0 {
		return nil
	}
	rc, err := f.SyscallConn()
	if err != nil {
		return nil
	}
	return rc
}

// pipeTryWrite returns, when w is a pipe, a function that writes a line
// of at most pipeAtomic bytes only if the pipe can take all of it at once:
// it never waits for the reader (pwritev2 with RWF_NOWAIT; a write of up
// to PIPE_BUF bytes to a pipe is all or nothing). It reports whether it
// wrote the line; err is a failure of the output met after a part of the
// line was written (not expected of a pipe). On a kernel that
// cannot write to a pipe without waiting it returns false every time. nil
// when w is not a pipe.
func pipeTryWrite(w io.Writer) func(b []byte) (bool, error) {
	rc := pipeConn(w)
	if rc == nil {
		return nil
	}
	var unsupported atomic.Bool
	return func(b []byte) (bool, error) {
		if unsupported.Load() || len(b) > pipeAtomic {
			return false, nil
		}
		var n int
		var err error
		if cerr := rc.Control(func(fd uintptr) {
			n, err = unix.Pwritev2(int(fd), [][]byte{b}, -1, unix.RWF_NOWAIT)
		}); cerr != nil {
			return false, nil
		}
		switch {
		case err == nil && n == len(b):
			return true, nil
		case err == nil && n > 0:
			// Not expected of a pipe (the write is atomic): the rest
			// goes after it, waiting if it has to.
			_, err = w.Write(b[n:])
			return true, err
		case errors.Is(err, unix.EOPNOTSUPP) || errors.Is(err, unix.EINVAL) || errors.Is(err, unix.ENOSYS):
			unsupported.Store(true)
		}
		// Nothing written (the pipe is full, or the write failed): the
		// writer's loop writes the line the ordinary way, and meets a
		// failure of the output (a client gone) as every write does.
		return false, nil
	}
}
