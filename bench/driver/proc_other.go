//go:build !unix

package driver

import (
	"os"
	"os/exec"
)

// ownGroup does nothing where there are no process groups.
func ownGroup(*exec.Cmd) {}

// killGroup ends the process itself.
func killGroup(pid int) {
	if p, err := os.FindProcess(pid); err == nil {
		p.Kill()
	}
}

// maxRSS is unknown here.
func maxRSS(*os.ProcessState) int64 { return 0 }
