// Package procgroup starts commands in their own process group and kills
// the whole group, so that nothing a tool, an extension or a verification
// command started survives it. Where there are no process groups
// (Windows), the process alone is killed.
package procgroup

import "os/exec"

// Kill kills cmd's process group (or the process), if it started.
func Kill(cmd *exec.Cmd) {
	if cmd.Process == nil {
		return
	}
	if err := killGroup(cmd.Process.Pid); err != nil {
		_ = cmd.Process.Kill()
	}
}
