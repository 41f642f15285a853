//go:build unix

package procgroup

import (
	"os/exec"
	"syscall"
)

// Set makes cmd the leader of a new process group (call before Start).
func Set(cmd *exec.Cmd) {
	if cmd.SysProcAttr == nil {
		cmd.SysProcAttr = &syscall.SysProcAttr{}
	}
	cmd.SysProcAttr.Setpgid = true
}

func killGroup(pid int) error { return syscall.Kill(-pid, syscall.SIGKILL) }

// SignalNumber is the signal that ended a process (0 when none).
func SignalNumber(ee *exec.ExitError) int {
	if ws, ok := ee.Sys().(syscall.WaitStatus); ok && ws.Signaled() {
		return int(ws.Signal())
	}
	return 0
}
