//go:build !unix

package procgroup

import (
	"errors"
	"os/exec"
)

// Set does nothing where process groups are not available.
func Set(*exec.Cmd) {}

func killGroup(int) error { return errors.New("no process groups") }

// SignalNumber is always 0 here.
func SignalNumber(*exec.ExitError) int { return 0 }
