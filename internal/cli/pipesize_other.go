//go:build !linux

package cli

import "io"

func growPipe(io.Writer) {}
