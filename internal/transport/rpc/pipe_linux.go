package rpcmode

import (
	"io"
	"os"
	"syscall"
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
	f, ok := w.(*os.File)
	if !ok {
		return
	}
	if fi, err := f.Stat(); err != nil || fi.Mode()&os.ModeNamedPipe == 0 {
		return
	}
	rc, err := f.SyscallConn()
	if err != nil {
		return
	}
	rc.Control(func(fd uintptr) {
		syscall.Syscall(syscall.SYS_FCNTL, fd, fSetPipeSz, 1<<20)
	})
}
