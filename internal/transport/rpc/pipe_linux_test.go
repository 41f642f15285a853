package rpcmode

import (
	"bytes"
	"os"
	"syscall"
	"testing"
)

func pipeSize(t *testing.T, f *os.File) int {
	t.Helper()
	n, _, errno := syscall.Syscall(syscall.SYS_FCNTL, f.Fd(), 1032 /* F_GETPIPE_SZ */, 0)
	if errno != 0 {
		t.Fatal(errno)
	}
	return int(n)
}

func TestGrowPipe(t *testing.T) {
	r, w, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	defer w.Close()
	max, err := os.ReadFile("/proc/sys/fs/pipe-max-size")
	if err != nil || string(bytes.TrimSpace(max)) != "1048576" {
		t.Skipf("pipe-max-size is %q, not the default", max)
	}
	growPipe(w)
	if n := pipeSize(t, w); n != 1<<20 {
		t.Fatalf("pipe size %d after growPipe", n)
	}
	growPipe(&bytes.Buffer{}) // not a file: nothing to do
	f, err := os.CreateTemp(t.TempDir(), "x")
	if err != nil {
		t.Fatal(err)
	}
	growPipe(f) // not a pipe
	f.Close()
}
