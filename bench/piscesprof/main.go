// Command piscesprof is Pisces (cmd/pisces) with profiling for the
// benchmarks: it writes a CPU profile to $PISCES_CPUPROFILE and a heap
// profile to $PISCES_MEMPROFILE (when set) as the process exits. rpcbench
// -profile DIR builds and runs it instead of cmd/pisces.
package main

import (
	"fmt"
	"os"
	"runtime"
	"runtime/pprof"

	"github.com/pisces-agent/pisces/internal/cli"
)

func main() {
	if p := os.Getenv("PISCES_CPUPROFILE"); p != "" {
		f, err := os.Create(p)
		if err != nil {
			fmt.Fprintln(os.Stderr, "piscesprof:", err)
			os.Exit(2)
		}
		if err := pprof.StartCPUProfile(f); err != nil {
			fmt.Fprintln(os.Stderr, "piscesprof:", err)
			os.Exit(2)
		}
	}
	code := cli.Main(os.Args[1:], cli.IO{
		Stdin:      os.Stdin,
		Stdout:     os.Stdout,
		Stderr:     os.Stderr,
		StdinIsTTY: cli.IsTerminal(os.Stdin),
	})
	if os.Getenv("PISCES_CPUPROFILE") != "" {
		pprof.StopCPUProfile()
	}
	if p := os.Getenv("PISCES_MEMPROFILE"); p != "" {
		if f, err := os.Create(p); err == nil {
			runtime.GC()
			pprof.Lookup("allocs").WriteTo(f, 0)
			f.Close()
		}
	}
	os.Exit(code)
}
