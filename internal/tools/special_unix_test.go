//go:build unix

package tools

import (
	"context"
	"net"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"syscall"
	"testing"
)

// specialFiles makes a FIFO and a listening unix socket in dir and returns
// them with /dev/zero, keyed by the kind the tools should name.
func specialFiles(t *testing.T, dir string) map[string]string {
	t.Helper()
	fifo := filepath.Join(dir, "fifo")
	if err := syscall.Mkfifo(fifo, 0o644); err != nil {
		t.Skipf("mkfifo: %v", err)
	}
	sock := filepath.Join(dir, "sock")
	l, err := net.Listen("unix", sock)
	if err != nil {
		t.Skipf("unix socket: %v", err)
	}
	t.Cleanup(func() { l.Close() })
	return map[string]string{
		"a named pipe (FIFO)": fifo,
		"a socket":            sock,
		"a character device":  "/dev/zero",
	}
}

// Reading, editing, searching or writing a device, a FIFO or a socket is
// refused at once with a clear error instead of blocking (a FIFO without a
// writer) or reading forever (/dev/zero).
func TestSpecialFilesAreRefused(t *testing.T) {
	dir := t.TempDir()
	env := Env{Cwd: dir}
	for kind, p := range specialFiles(t, dir) {
		calls := []struct {
			tool string
			args map[string]any
			verb string
		}{
			{"read", map[string]any{"path": p}, "read reads"},
			{"edit", map[string]any{"path": p, "edits": []map[string]string{{"oldText": "a", "newText": "b"}}}, "edit edits"},
			{"grep", map[string]any{"pattern": "x", "path": p}, "grep searches"},
			{"write", map[string]any{"path": p, "content": "x"}, "write writes"},
		}
		for _, c := range calls {
			r, _ := within(t, context.Background(), env, c.tool, c.args)
			want := "Not a regular file: " + p + " is " + kind + ". " + c.verb + " regular files only."
			if c.tool == "write" {
				want = "Not a regular file: " + p + " is " + kind + ". write writes to regular files only."
			}
			wantError(t, r, want)
		}
	}
	// a symbolic link to a device is judged by what it points to
	link := filepath.Join(dir, "zero-link")
	if err := os.Symlink("/dev/zero", link); err != nil {
		t.Fatal(err)
	}
	r, _ := within(t, context.Background(), env, "read", map[string]any{"path": "zero-link"})
	wantError(t, r, "Not a regular file: "+link+" is a character device. read reads regular files only.")
}

// grep and find walk past devices, FIFOs and sockets (including an ignore
// file that is a FIFO) and report the regular files.
func TestSearchSkipsSpecialFiles(t *testing.T) {
	dir := t.TempDir()
	specialFiles(t, dir)
	if err := syscall.Mkfifo(filepath.Join(dir, ".ignore"), 0o644); err != nil {
		t.Fatal(err)
	}
	sub := filepath.Join(dir, "sub")
	writeFile(t, dir, "sub/a.txt", "needle\n")
	if err := syscall.Mkfifo(filepath.Join(sub, ".gitignore"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink("/dev/zero", filepath.Join(dir, "zero-link")); err != nil {
		t.Fatal(err)
	}
	env := Env{Cwd: dir}
	r, _ := within(t, context.Background(), env, "grep", map[string]any{"pattern": "needle"})
	if got := mustText(t, r); got != "sub/a.txt:1: needle" {
		t.Fatalf("grep: %q", got)
	}
	r, _ = within(t, context.Background(), env, "find", map[string]any{"pattern": "*"})
	if got := mustText(t, r); got != "sub/\nsub/a.txt\nzero-link" {
		t.Fatalf("find: %q", got)
	}
}

// /proc files are regular files whose size is 0: read reads them (up to its
// limits) rather than trusting the size.
func TestReadProcFile(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("/proc")
	}
	r, _ := within(t, context.Background(), Env{Cwd: "/"}, "read", map[string]any{"path": "/proc/self/status"})
	if got := mustText(t, r); !strings.Contains(got, "Name:") || !strings.Contains(got, "VmRSS:") {
		t.Fatalf("got %q", got)
	}
}
