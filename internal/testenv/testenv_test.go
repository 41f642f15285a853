package testenv

import (
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"testing"
)

// fakeTB records how a helper ended the test; Skip and Fatal stop the
// goroutine as the real ones do.
type fakeTB struct {
	testing.TB
	skipped, failed string
}

func (f *fakeTB) Helper() {}
func (f *fakeTB) Skip(args ...any) {
	f.skipped = fmt.Sprint(args...)
	runtime.Goexit()
}
func (f *fakeTB) Fatal(args ...any) {
	f.failed = fmt.Sprint(args...)
	runtime.Goexit()
}
func (f *fakeTB) Fatalf(format string, args ...any) {
	f.failed = fmt.Sprintf(format, args...)
	runtime.Goexit()
}

// outcome runs fn with a fakeTB on its own goroutine.
func outcome(fn func(tb testing.TB)) *fakeTB {
	f := &fakeTB{}
	done := make(chan struct{})
	go func() {
		defer close(done)
		fn(f)
	}()
	<-done
	return f
}

func TestInCI(t *testing.T) {
	for v, want := range map[string]bool{"": false, "0": false, "false": false, "FALSE": false, "1": true, "true": true, "yes": true} {
		t.Setenv("CI", v)
		if got := InCI(); got != want {
			t.Errorf("CI=%q: InCI() = %v", v, got)
		}
	}
}

func TestUnavailableSkipsLocallyAndFailsInCI(t *testing.T) {
	t.Setenv("CI", "")
	f := outcome(func(tb testing.TB) { Unavailable(tb, "needs %s", "tmux") })
	if f.skipped != "needs tmux" || f.failed != "" {
		t.Errorf("locally: skipped %q, failed %q", f.skipped, f.failed)
	}
	t.Setenv("CI", "1")
	f = outcome(func(tb testing.TB) { Unavailable(tb, "needs %s", "tmux") })
	if f.skipped != "" || f.failed != "needs tmux (CI is set: a test may not skip because something is missing)" {
		t.Errorf("CI: skipped %q, failed %q", f.skipped, f.failed)
	}
}

func TestLookPath(t *testing.T) {
	dir := t.TempDir()
	tool := filepath.Join(dir, "pisces-test-tool")
	if err := os.WriteFile(tool, []byte("#!/bin/sh\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	t.Setenv("PATH", dir)
	t.Setenv("CI", "")
	var got string
	f := outcome(func(tb testing.TB) { got = LookPath(tb, "pisces-no-such-tool", "pisces-test-tool") })
	if runtime.GOOS != "windows" && (got != tool || f.skipped != "" || f.failed != "") {
		t.Errorf("found %q, skipped %q, failed %q", got, f.skipped, f.failed)
	}
	t.Setenv("CI", "true")
	f = outcome(func(tb testing.TB) { LookPath(tb, "pisces-no-such-tool", "pisces-nor-this") })
	if f.failed == "" || f.skipped != "" {
		t.Errorf("missing tool under CI: skipped %q, failed %q", f.skipped, f.failed)
	}
}

func TestUpdateRefusedInCI(t *testing.T) {
	t.Setenv("CI", "")
	var got bool
	if f := outcome(func(tb testing.TB) { got = Update(tb, true) }); !got || f.failed != "" {
		t.Errorf("locally: update %v, failed %q", got, f.failed)
	}
	t.Setenv("CI", "1")
	got = false
	if f := outcome(func(tb testing.TB) { got = Update(tb, false) }); got || f.failed != "" {
		t.Errorf("CI without -update: update %v, failed %q", got, f.failed)
	}
	if f := outcome(func(tb testing.TB) { got = Update(tb, true) }); f.failed == "" {
		t.Error("-update accepted under CI")
	}
}

func TestCheckBinary(t *testing.T) {
	dir := t.TempDir()
	exe := filepath.Join(dir, "pisces")
	plain := filepath.Join(dir, "plain")
	os.WriteFile(exe, []byte("#!/bin/sh\n"), 0o755)
	os.WriteFile(plain, []byte("x"), 0o644)
	if p, err := checkBinary(exe); err != nil || p != exe {
		t.Errorf("executable: %q %v", p, err)
	}
	bad := []string{dir, filepath.Join(dir, "missing")}
	if runtime.GOOS != "windows" {
		bad = append(bad, plain)
	}
	for _, p := range bad {
		if _, err := checkBinary(p); err == nil {
			t.Errorf("%s accepted", p)
		}
	}
}
