//go:build !unix

package procgroup

import "errors"

// Terminate is not available without process groups.
func Terminate(int) error { return errors.New("no process groups") }

// KillGroup is not available without process groups.
func KillGroup(int) error { return errors.New("no process groups") }

// Alive is false without process groups (nothing to wait for).
func Alive(int) bool { return false }
