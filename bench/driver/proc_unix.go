//go:build unix

package driver

import (
	"os"
	"os/exec"
	"runtime"
	"syscall"
)

// ownGroup starts the agent in its own process group, so that it and its
// tools' children can be ended together.
func ownGroup(cmd *exec.Cmd) { cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true} }

// killGroup ends the process group of pid.
func killGroup(pid int) { syscall.Kill(-pid, syscall.SIGKILL) }

// maxRSS is the peak resident set size of an exited process, in bytes.
func maxRSS(ps *os.ProcessState) int64 {
	ru, ok := ps.SysUsage().(*syscall.Rusage)
	if !ok {
		return 0
	}
	if runtime.GOOS == "darwin" {
		return int64(ru.Maxrss) // bytes on macOS
	}
	return int64(ru.Maxrss) << 10 // kilobytes elsewhere
}
