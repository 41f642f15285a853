//go:build unix

package procgroup

import "syscall"

// Terminate sends SIGTERM to the process group led by pid.
func Terminate(pid int) error { return syscall.Kill(-pid, syscall.SIGTERM) }

// KillGroup sends SIGKILL to the process group led by pid.
func KillGroup(pid int) error { return syscall.Kill(-pid, syscall.SIGKILL) }

// Alive reports whether any process of the group led by pid is left
// (zombies, dead and waiting for a parent to reap them, do not count
// where that can be told).
func Alive(pid int) bool {
	if syscall.Kill(-pid, 0) != nil {
		return false
	}
	return liveMember(pid)
}
