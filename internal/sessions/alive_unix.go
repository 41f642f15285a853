//go:build unix

package sessions

import (
	"errors"
	"syscall"
)

// processAlive reports whether a process with this id exists (one of
// another user counts: signal 0 is then refused with EPERM).
func processAlive(pid int) bool {
	err := syscall.Kill(pid, 0)
	return err == nil || errors.Is(err, syscall.EPERM)
}
