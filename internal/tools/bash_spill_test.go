//go:build unix

package tools

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"
)

// spillPath returns the spill file a bash result names, removing it when
// the test ends.
func spillPath(t *testing.T, r Result) string {
	t.Helper()
	m := regexp.MustCompile(`Full output: (\S+/pisces-bash-[0-9a-f]{16}\.log)`).FindStringSubmatch(text(r))
	if m == nil {
		t.Fatalf("no spill file named: %q", tail(text(r), 300))
	}
	t.Cleanup(func() { os.Remove(m[1]) })
	return m[1]
}

func tail(s string, n int) string { return s[max(0, len(s)-n):] }

// A command that prints more than the spill file keeps leaves the head and
// the newest tail on disk, with the dropped span marked in the file and in
// the result.
func TestBashSpillFileIsCapped(t *testing.T) {
	// 2,000,000 lines, 14.9 MB: three times what the file keeps
	r := bash(t, Env{Cwd: t.TempDir()}, "seq 1 2000000")
	got := mustText(t, r)
	p := spillPath(t, r)
	st, err := os.Stat(p)
	if err != nil {
		t.Fatal(err)
	}
	if max := int64(spillHeadBytes + spillTailBytes + 512); st.Size() > max {
		t.Fatalf("spill file has %d bytes, more than %d", st.Size(), max)
	}
	const total = 14888896 // bytes of seq 1 2000000
	dropped := total - spillHeadBytes - spillTailBytes
	wantNote := fmt.Sprintf("[Showing lines 1998002-2000001 of 2000001. Full output: %s (the middle %s was dropped; the file keeps the first 1.0MB and the last 4.0MB)]",
		p, FormatSize(dropped))
	if !strings.HasSuffix(got, wantNote) {
		t.Fatalf("note: %q\nwant %q", tail(got, 300), wantNote)
	}
	full := readFile(t, p)
	marker := fmt.Sprintf("\n\n[... %d bytes (%s) of output dropped here: the file keeps the first %s and the last %s ...]\n\n",
		dropped, FormatSize(dropped), FormatSize(spillHeadBytes), FormatSize(spillTailBytes))
	head, rest, ok := strings.Cut(full, marker)
	if !ok {
		t.Fatalf("no marker in the spill file (%d bytes)", len(full))
	}
	if len(head) != spillHeadBytes || !strings.HasPrefix(head, "1\n2\n3\n") {
		t.Fatalf("head: %d bytes, %q...", len(head), head[:20])
	}
	if len(rest) != spillTailBytes || !strings.HasSuffix(rest, "\n1999999\n2000000\n") {
		t.Fatalf("tail: %d bytes, ...%q", len(rest), tail(rest, 20))
	}
}

// The same with small limits, so the tail wraps many times and the layout
// can be checked byte for byte.
func TestBashSpillFileKeepsHeadAndNewestTail(t *testing.T) {
	defer func(h, tl int) { spillHeadBytes, spillTailBytes = h, tl }(spillHeadBytes, spillTailBytes)
	spillHeadBytes, spillTailBytes = 100_000, 300_001
	var want strings.Builder
	for i := 1; i <= 300000; i++ {
		fmt.Fprintf(&want, "%d\n", i)
	}
	r := bash(t, Env{Cwd: t.TempDir()}, "seq 1 300000")
	p := spillPath(t, r)
	w := want.String()
	dropped := len(w) - spillHeadBytes - spillTailBytes
	marker := fmt.Sprintf("\n\n[... %d bytes (%s) of output dropped here: the file keeps the first %s and the last %s ...]\n\n",
		dropped, FormatSize(dropped), FormatSize(spillHeadBytes), FormatSize(spillTailBytes))
	if got := readFile(t, p); got != w[:spillHeadBytes]+marker+w[len(w)-spillTailBytes:] {
		t.Fatalf("spill file: %d bytes, want %d", len(got), spillHeadBytes+len(marker)+spillTailBytes)
	}

	// output that fits is kept whole, without a marker
	spillHeadBytes, spillTailBytes = 100_000, 2_000_000
	r = bash(t, Env{Cwd: t.TempDir()}, "seq 1 300000")
	if got := readFile(t, spillPath(t, r)); got != w {
		t.Fatalf("spill file: %d bytes, want %d", len(got), len(w))
	}
	if strings.Contains(text(r), "dropped") {
		t.Fatalf("note: %q", tail(text(r), 200))
	}
}

// The spill files of a tool set are deleted together (the session does it
// when it ends); those of the user's bash command too.
func TestSpillFilesAreRemoved(t *testing.T) {
	spills := &SpillFiles{}
	env := Env{Cwd: t.TempDir(), Spills: spills}
	p1 := spillPath(t, bash(t, env, "seq 1 100000"))
	res := RunUserBash(context.Background(), env, "seq 1 100000", nil)
	p2 := res.FullOutputPath
	t.Cleanup(func() { os.Remove(p2) })
	for _, p := range []string{p1, p2} {
		if _, err := os.Stat(p); err != nil {
			t.Fatalf("spill file missing before removal: %v", err)
		}
	}
	spills.RemoveAll()
	for _, p := range []string{p1, p2} {
		if _, err := os.Stat(p); !os.IsNotExist(err) {
			t.Fatalf("%s still exists (%v)", p, err)
		}
	}
	// removing again, or from a nil set, is harmless
	spills.RemoveAll()
	(*SpillFiles)(nil).RemoveAll()
}

// Abort ends bash whatever the command does: sleeping, or printing as fast
// as it can. The deadline is generous; the figure is logged.
func TestBashAbortLatency(t *testing.T) {
	for _, command := range []string{"sleep 1000", "cat /dev/zero", "yes", "yes | cat", "while :; do :; done"} {
		t.Run(command, func(t *testing.T) {
			ctx, cancel := context.WithCancel(context.Background())
			var once sync.Once
			started := make(chan struct{})
			done := make(chan Result, 1)
			go func() {
				tool, _ := ByName(Env{Cwd: t.TempDir()}, "bash")
				raw, _ := jsonArgs(map[string]any{"command": "echo started; " + command})
				r, _ := tool.Execute(ctx, Call{Args: raw, OnUpdate: func(Result) { once.Do(func() { close(started) }) }})
				done <- r
			}()
			select {
			case <-started:
			case <-time.After(toolDeadline):
				t.Fatal("no output from the command")
			}
			at := time.Now()
			cancel()
			select {
			case r := <-done:
				took := time.Since(at)
				t.Logf("%s: bash returned %v after abort", command, took)
				if !r.IsError || !strings.HasSuffix(text(r), "Command aborted") {
					t.Fatalf("result %q", tail(text(r), 200))
				}
				if strings.Contains(text(r), "Full output: ") {
					os.Remove(spillPathNoCleanup(text(r)))
				}
			case <-time.After(toolDeadline):
				t.Fatalf("bash still running %v after abort", toolDeadline)
			}
		})
	}
}

func spillPathNoCleanup(s string) string {
	m := regexp.MustCompile(`Full output: (\S+/pisces-bash-[0-9a-f]{16}\.log)`).FindStringSubmatch(s)
	if m == nil {
		return ""
	}
	return m[1]
}

// Putting the spill file in order at the end goes through a fresh file
// created exclusively: a symbolic link planted beside it under a name it
// could use (another user of $TMPDIR can see the spill file's name) is
// neither followed nor overwritten.
func TestSpillRearrangeIgnoresPlantedLinks(t *testing.T) {
	defer func(h, tl int) { spillHeadBytes, spillTailBytes = h, tl }(spillHeadBytes, spillTailBytes)
	spillHeadBytes, spillTailBytes = 10, 20
	s, err := newSpillFile(nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.Remove(s.path) })
	victim := filepath.Join(t.TempDir(), "victim")
	if err := os.WriteFile(victim, []byte("precious\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	planted := s.path + ".tmp"
	if err := os.Symlink(victim, planted); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.Remove(planted) })
	var out strings.Builder
	for i := range 20 {
		fmt.Fprintf(&out, "line %02d\n", i) // 160 bytes: the ring wraps
	}
	s.write([]byte(out.String()))
	s.close()
	if got := readFile(t, victim); got != "precious\n" {
		t.Fatalf("the planted link's target was overwritten: %q", got)
	}
	if fi, err := os.Lstat(planted); err != nil || fi.Mode()&os.ModeSymlink == 0 {
		t.Fatalf("the planted link was replaced: %v", err)
	}
	w := out.String()
	dropped := len(w) - spillHeadBytes - spillTailBytes
	marker := fmt.Sprintf("\n\n[... %d bytes (%s) of output dropped here: the file keeps the first %s and the last %s ...]\n\n",
		dropped, FormatSize(dropped), FormatSize(spillHeadBytes), FormatSize(spillTailBytes))
	if got := readFile(t, s.path); got != w[:spillHeadBytes]+marker+w[len(w)-spillTailBytes:] {
		t.Fatalf("spill file: %q", got)
	}
	if fi, err := os.Stat(s.path); err != nil || fi.Mode().Perm() != 0o600 {
		t.Fatalf("spill file mode: %v %v", fi.Mode(), err)
	}
	if left, _ := filepath.Glob(filepath.Join(filepath.Dir(s.path), "*"+filepath.Base(s.path)+"*")); len(left) != 2 { // the file and the planted link
		t.Fatalf("files left beside the spill file: %v", left)
	}
}
