// Command pisces is a headless coding agent that speaks pi's RPC protocol.
package main

import (
	"os"

	"github.com/pisces-agent/pisces/internal/cli"
)

func main() {
	os.Exit(cli.Main(os.Args[1:], cli.IO{
		Stdin:       os.Stdin,
		Stdout:      os.Stdout,
		Stderr:      os.Stderr,
		StdinIsTTY:  cli.IsTerminal(os.Stdin),
		StdoutIsTTY: cli.IsTerminal(os.Stdout),
	}))
}
