package main_test

import (
	"bytes"
	"os"
	"os/exec"
	"sort"
	"strings"
	"testing"
)

// initWork lists Pisces' packages that still run code at program start,
// with what they build. Such code runs in every mode, and the page of the
// binary holding it (64 KB with the kernel's fault-around) stays resident
// (docs/performance.md, "Resident memory: where it goes"), so a new entry
// needs a reason; most package-level values can be a lazy.Value instead.
var initWork = map[string]string{
	"internal/jsonx":         "the string escaper's byte table",
	"internal/auth":          "Copilot's request headers (an exported map)",
	"internal/fetch":         "the blocked address ranges",
	"internal/session":       "the entry decoder's key sets and byte table",
	"internal/tools":         "the edit tool's and the path rules' string replacers",
	"internal/agent":         "its debug output's writer (os.Stderr)",
	"internal/transport/rpc": "the command dispatch table (every RPC session uses it)",
	"internal/tui":           "the key binding tables",
	"internal/cli":           "the subcommand and flag tables",
}

// The packages that run code at start-up are the known ones: GODEBUG's
// inittrace names every package whose initialisation does any work.
func TestPackagesWithInitWork(t *testing.T) {
	cmd := exec.Command(bin, "--version")
	cmd.Env = append(os.Environ(), "GODEBUG=inittrace=1")
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	if err := cmd.Run(); err != nil {
		t.Fatalf("pisces --version: %v\n%s", err, stderr.String())
	}
	const prefix = "github.com/pisces-agent/pisces/"
	seen := map[string]bool{}
	var unexpected []string
	for line := range strings.Lines(stderr.String()) {
		f := strings.Fields(line)
		if len(f) < 2 || f[0] != "init" {
			continue
		}
		pkg, ok := strings.CutPrefix(f[1], prefix)
		if !ok {
			continue
		}
		seen[pkg] = true
		if _, known := initWork[pkg]; !known {
			unexpected = append(unexpected, pkg)
		}
	}
	if len(seen) == 0 {
		t.Fatalf("no inittrace lines for Pisces' packages on stderr:\n%s", stderr.String())
	}
	if len(unexpected) > 0 {
		t.Errorf("these packages now run code at start-up: %s\n(make their package-level values lazy with internal/lazy, or add them to initWork with the reason)", strings.Join(unexpected, ", "))
	}
	var gone []string
	for pkg := range initWork {
		if !seen[pkg] {
			gone = append(gone, pkg)
		}
	}
	sort.Strings(gone)
	if len(gone) > 0 {
		t.Errorf("these packages no longer run code at start-up; remove them from initWork: %s", strings.Join(gone, ", "))
	}
}
