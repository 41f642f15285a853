package cli

import (
	"io"
	"os"
	"syscall"
)

// fSetPipeSz is F_SETPIPE_SZ (linux/fcntl.h).
const fSetPipeSz = 1031

// pipeSize is what RPC mode asks for its stdout pipe: the largest size an
// unprivileged process gets by default (/proc/sys/fs/pipe-max-size).
const pipeSize = 1 << 20

// growPipe enlarges the kernel buffer of w when it is a pipe. With the
// default 64 kB, a multi-megabyte answer (list_sessions, get_session_tree,
// get_messages) crosses the pipe in 64 kB steps, each a wake-up of the
// reader and of the writer; 1 MB halves the time a client takes to
// receive 18 MB on a 2-CPU machine (docs/performance.md). Failure (not a
// pipe, a lowered limit) leaves the buffer as it was.
func growPipe(w io.Writer) {
	f, ok := w.(*os.File)
	if !ok {
		return
	}
	fi, err := f.Stat()
	if err != nil || fi.Mode()&os.ModeNamedPipe == 0 {
		return
	}
	// Through SyscallConn, not Fd, which would switch the file to
	// blocking mode.
	if rc, err := f.SyscallConn(); err == nil {
		rc.Control(func(fd uintptr) {
			syscall.Syscall(syscall.SYS_FCNTL, fd, fSetPipeSz, pipeSize)
		})
	}
}
