//go:build !linux

package rpcmode

import "io"

// growPipe is a Linux tuning (see pipe_linux.go).
func growPipe(io.Writer) {}

// pipeTryWrite is Linux's (see pipe_linux.go): elsewhere a write that
// must not wait cannot be made, so every frame goes through the queue.
func pipeTryWrite(io.Writer) func([]byte) (bool, error) { return nil }
