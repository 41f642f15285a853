package tools

import (
	"fmt"
	"os"
	"path/filepath"
	"testing"
)

// TestMain gives the package's tests a temporary directory of their own
// (TMPDIR) and fails the run when a test leaves a bash spill file
// (pisces-bash-*.log) in it: every test removes the files it makes.
func TestMain(m *testing.M) {
	dir, err := os.MkdirTemp("", "pisces-tools-test")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	os.Setenv("TMPDIR", dir)
	code := m.Run()
	if left, _ := filepath.Glob(filepath.Join(dir, "pisces-bash-*.log")); len(left) > 0 && code == 0 {
		fmt.Fprintf(os.Stderr, "tests left %d spill files behind: %v\n", len(left), left)
		code = 1
	}
	os.RemoveAll(dir)
	os.Exit(code)
}
