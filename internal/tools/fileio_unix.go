//go:build unix

package tools

import "syscall"

// openNonblock makes opening a FIFO return at once instead of waiting for a
// writer; it has no effect on regular files.
const openNonblock = syscall.O_NONBLOCK
