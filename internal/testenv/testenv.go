// Package testenv is what the tests share about the environment they run
// in: whether they run under CI, the external tools a test needs, golden-file
// updates, and the pisces binary that end-to-end tests start.
//
// The convention (docs/testing.md): a test that needs something outside Go
// (a browser, tmux, an npm package, python3, git) may skip where that is
// missing on a developer's machine, but never under CI, where the missing
// tool is a failure. CI is on when the environment variable CI is set to
// anything but "", "0" or "false"; .ci/run sets CI=1.
package testenv

import (
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"testing"
)

// BinaryEnv names a pisces binary that end-to-end tests run instead of
// building their own (.ci/run builds it once for every test package). It
// must have been built from the tree under test.
const BinaryEnv = "PISCES_TEST_BINARY"

// InCI reports whether the tests run under CI (the CI environment variable).
func InCI() bool {
	switch strings.ToLower(strings.TrimSpace(os.Getenv("CI"))) {
	case "", "0", "false":
		return false
	}
	return true
}

// Unavailable ends a test that cannot run here: skipped on a developer's
// machine, failed under CI, where everything a test needs must be installed.
func Unavailable(t testing.TB, format string, args ...any) {
	t.Helper()
	msg := fmt.Sprintf(format, args...)
	if InCI() {
		t.Fatalf("%s (CI is set: a test may not skip because something is missing)", msg)
	}
	t.Skip(msg)
}

// LookPath returns the path of the first of names found on PATH. When none
// is found the test is Unavailable.
func LookPath(t testing.TB, names ...string) string {
	t.Helper()
	for _, n := range names {
		if p, err := exec.LookPath(n); err == nil {
			return p
		}
	}
	Unavailable(t, "needs %s on PATH", strings.Join(names, " or "))
	return ""
}

// Update reports whether a golden test should rewrite its expected output
// (its -update flag). Under CI the flag is refused: CI compares, it never
// rewrites. A golden test compares after writing too, so that a rewrite
// that does not reproduce its own output still fails.
func Update(t testing.TB, update bool) bool {
	t.Helper()
	if update && InCI() {
		t.Fatal("-update rewrites the expected output and is refused when CI is set")
	}
	return update
}

var (
	binOnce sync.Once
	binPath string
	binErr  error
)

// PiscesBinary returns the pisces binary for end-to-end tests: $PISCES_TEST_BINARY
// when set, otherwise cmd/pisces built once per test binary into a temporary
// directory (removed by Cleanup). It is the static release build
// (CGO_ENABLED=0, README): the binary users run, whose memory and timing
// figures the tests log, and whose packages .ci/run compiles once for vet
// and the benchmark harness too.
func PiscesBinary() (string, error) {
	binOnce.Do(func() {
		if p := os.Getenv(BinaryEnv); p != "" {
			binPath, binErr = checkBinary(p)
			return
		}
		dir, err := os.MkdirTemp("", "pisces-test-bin")
		if err != nil {
			binErr = err
			return
		}
		builtDir = dir
		name := "pisces"
		if runtime.GOOS == "windows" {
			name += ".exe"
		}
		p := filepath.Join(dir, name)
		cmd := exec.Command("go", "build", "-o", p, "github.com/pisces-agent/pisces/cmd/pisces")
		cmd.Env = append(os.Environ(), "CGO_ENABLED=0")
		if out, err := cmd.CombinedOutput(); err != nil {
			binErr = fmt.Errorf("building pisces: %v\n%s", err, out)
			return
		}
		binPath = p
	})
	return binPath, binErr
}

var builtDir string

// checkBinary accepts p when it is an executable file.
func checkBinary(p string) (string, error) {
	if fi, err := os.Stat(p); err != nil || fi.IsDir() || runtime.GOOS != "windows" && fi.Mode()&0o111 == 0 {
		return "", fmt.Errorf("%s=%s is not an executable file", BinaryEnv, p)
	}
	return p, nil
}

// Cleanup removes the binary PiscesBinary built, if any. TestMain calls it
// after m.Run.
func Cleanup() {
	if builtDir != "" {
		os.RemoveAll(builtDir)
	}
}

// LockedBuffer is a bytes.Buffer that several goroutines may write and
// read (a child process's stderr copied while the test reads it).
type LockedBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (l *LockedBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *LockedBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}
