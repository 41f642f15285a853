package cli

import (
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
)

const fGetPipeSz = 1032

func pipeBufSize(t *testing.T, f *os.File) int {
	t.Helper()
	rc, err := f.SyscallConn()
	if err != nil {
		t.Fatal(err)
	}
	var n uintptr
	var errno syscall.Errno
	rc.Control(func(fd uintptr) { n, _, errno = syscall.Syscall(syscall.SYS_FCNTL, fd, fGetPipeSz, 0) })
	if errno != 0 {
		t.Fatal(errno)
	}
	return int(n)
}

func TestGrowPipe(t *testing.T) {
	if b, err := os.ReadFile("/proc/sys/fs/pipe-max-size"); err != nil {
		t.Skip(err)
	} else if max, _ := strconv.Atoi(strings.TrimSpace(string(b))); max < pipeSize {
		t.Skipf("pipe-max-size is %d", max)
	}
	r, w, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	defer w.Close()
	before := pipeBufSize(t, w)
	growPipe(w)
	if got := pipeBufSize(t, w); got != pipeSize {
		t.Fatalf("pipe buffer %d after growPipe (was %d), want %d", got, before, pipeSize)
	}
	// Still usable, in both directions of the pair.
	if _, err := w.Write([]byte("x\n")); err != nil {
		t.Fatal(err)
	}
	buf := make([]byte, 2)
	if _, err := r.Read(buf); err != nil || string(buf) != "x\n" {
		t.Fatalf("read %q, %v", buf, err)
	}

	// Not a pipe: nothing happens.
	f, err := os.Create(filepath.Join(t.TempDir(), "out"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	growPipe(f)
	growPipe(&strings.Builder{})
}
