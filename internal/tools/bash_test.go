//go:build unix

package tools

import (
	"context"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"
)

func bash(t *testing.T, env Env, command string) Result {
	t.Helper()
	return run(t, env, "bash", map[string]any{"command": command})
}

func TestBashBasics(t *testing.T) {
	dir := t.TempDir()
	env := Env{Cwd: dir}
	if got := mustText(t, bash(t, env, "echo hello")); got != "hello\n" {
		t.Fatalf("got %q", got)
	}
	got := mustText(t, bash(t, env, "echo out; echo err 1>&2"))
	if got != "out\nerr\n" {
		t.Fatalf("merged output %q", got)
	}
	if got := mustText(t, bash(t, env, "true")); got != "(no output)" {
		t.Fatalf("got %q", got)
	}
	wantError(t, bash(t, env, "echo oops; exit 3"), "oops\n\n\nCommand exited with code 3")
	wantError(t, bash(t, env, "exit 2"), "(no output)\n\nCommand exited with code 2")
	real, _ := filepath.EvalSymlinks(dir)
	if got := strings.TrimSpace(mustText(t, bash(t, env, "pwd -P"))); got != real {
		t.Fatalf("pwd %q want %q", got, real)
	}
	missing := filepath.Join(dir, "missing")
	wantError(t, bash(t, Env{Cwd: missing}, "true"), "Working directory does not exist: "+missing+"\nCannot execute bash commands.")
}

func TestBashEnvironment(t *testing.T) {
	dir := t.TempDir()
	agent := t.TempDir()
	writeFile(t, agent, "bin/pisces-test-tool", "#!/bin/sh\necho from-agent-bin\n")
	if err := os.Chmod(filepath.Join(agent, "bin/pisces-test-tool"), 0o755); err != nil {
		t.Fatal(err)
	}
	env := Env{Cwd: dir, AgentDir: agent, ExtraEnv: []string{"PISCES_TEST_X=extra"}, ShellCommandPrefix: "PFX=prefixed"}
	got := mustText(t, bash(t, env, `pisces-test-tool; echo "$PISCES_TEST_X $PFX"; echo "${PATH%%:*}"`))
	want := "from-agent-bin\nextra prefixed\n" + filepath.Join(agent, "bin") + "\n"
	if got != want {
		t.Fatalf("got %q want %q", got, want)
	}
	got = mustText(t, bash(t, Env{Cwd: dir, ShellPath: "/bin/sh"}, `echo "$0"`))
	if got != "/bin/sh\n" {
		t.Fatalf("shell $0 %q", got)
	}
	wantError(t, bash(t, Env{Cwd: dir, ShellPath: "/no/such/shell"}, "true"), "Custom shell path not found: /no/such/shell")
}

// The timeout (1.5 s: time enough for the shell to start and print on a
// busy machine) stops a command that would run for a minute.
func TestBashTimeout(t *testing.T) {
	start := time.Now()
	r := run(t, Env{Cwd: t.TempDir()}, "bash", map[string]any{"command": "echo start; sleep 60", "timeout": 1.5})
	wantError(t, r, "start\n\n\nCommand timed out after 1.5 seconds")
	if time.Since(start) > 30*time.Second {
		t.Fatal("timeout did not stop the command")
	}
}

// cancelOnOutput returns an OnUpdate that calls cancel once the streamed
// output contains want.
func cancelOnOutput(want string, cancel func()) func(Result) {
	var once sync.Once
	return func(r Result) {
		if strings.Contains(text(r), want) {
			once.Do(cancel)
		}
	}
}

func TestBashAbort(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	start := time.Now()
	r := runCtx(t, ctx, Env{Cwd: t.TempDir()}, "bash", map[string]any{"command": "echo partial; sleep 60"}, cancelOnOutput("partial", cancel))
	wantError(t, r, "partial\n\n\nCommand aborted")
	if time.Since(start) > 30*time.Second {
		t.Fatal("abort did not stop the command")
	}
	// already cancelled
	wantError(t, runCtx(t, ctx, Env{Cwd: t.TempDir()}, "bash", map[string]any{"command": "echo no"}, nil), "Command aborted")
}

var spillName = regexp.MustCompile(`Full output: (\S+/pisces-bash-[0-9a-f]{16}\.log)\]$`)

func TestBashTruncationByLines(t *testing.T) {
	r := bash(t, Env{Cwd: t.TempDir()}, "for i in $(seq 1 3000); do echo line $i; done")
	got := mustText(t, r)
	if !strings.HasPrefix(got, "line 1002\n") {
		t.Fatalf("start %q", got[:20])
	}
	m := spillName.FindStringSubmatch(got)
	if m == nil || !strings.Contains(got, "line 3000\n\n\n[Showing lines 1002-3001 of 3001. Full output: ") {
		t.Fatalf("notice: %q", got[len(got)-120:])
	}
	removeSpill(t, m[1])
	full := readFile(t, m[1])
	if !strings.HasPrefix(full, "line 1\nline 2\n") || !strings.HasSuffix(full, "line 3000\n") {
		t.Fatalf("spill file content wrong (%d bytes)", len(full))
	}
	d := decodeDetails(t, r)
	if d["fullOutputPath"] != m[1] || d["truncation"].(map[string]any)["truncatedBy"] != "lines" {
		t.Fatalf("details %v", d)
	}
}

func TestBashTruncationByBytesSpills(t *testing.T) {
	// 5000 lines of 51 bytes: 255000 bytes, more than the rolling buffer
	r := bash(t, Env{Cwd: t.TempDir()}, "yes 01234567890123456789012345678901234567890123456789 | head -n 5000")
	got := mustText(t, r)
	m := spillName.FindStringSubmatch(got)
	if m == nil {
		t.Fatalf("no spill file named: %q", got[len(got)-150:])
	}
	removeSpill(t, m[1])
	// 51200 bytes hold the final empty line and 1003 lines of 51 bytes
	if !strings.Contains(got, "\n\n[Showing lines 3998-5001 of 5001 (50.0KB limit). Full output: ") {
		t.Fatalf("notice: %q", got[len(got)-150:])
	}
	if full := readFile(t, m[1]); len(full) != 255000 {
		t.Fatalf("spill file has %d bytes", len(full))
	}
	if len(got) > DEFAULT_MAX_BYTES+300 {
		t.Fatalf("result is %d bytes", len(got))
	}

	// one line longer than the limit
	got = mustText(t, bash(t, Env{Cwd: t.TempDir()}, "head -c 60000 /dev/zero | tr '\\0' x"))
	m = spillName.FindStringSubmatch(got)
	if m == nil || !strings.HasSuffix(got, "\n\n[Showing last 50.0KB of line 1 (line is 58.6KB). Full output: "+m[1]+"]") {
		t.Fatalf("partial notice: %q", got[len(got)-150:])
	}
	removeSpill(t, m[1])
}

// removeSpill removes a spill file when the test ends.
func removeSpill(t *testing.T, path string) {
	t.Cleanup(func() { os.Remove(path) })
}

func TestBashStreamsUpdates(t *testing.T) {
	// The command prints a line, then waits on a fifo until the test has
	// seen that line in an update: each update holds one more line.
	dir := t.TempDir()
	if err := syscall.Mkfifo(filepath.Join(dir, "next"), 0o600); err != nil {
		t.Fatal(err)
	}
	seen := make(chan string, 16)
	var updates []string // written by OnUpdate, read after Execute returns
	onUpdate := func(r Result) {
		updates = append(updates, text(r))
		seen <- text(r)
	}
	// The test holds one end of the fifo open, for reading and writing, the
	// whole time; each "go" line waits in the pipe until the command's next
	// read takes it. (A writer opened per line raced with the command: a
	// read that opened while the last writer was still closing saw end of
	// file.)
	fifo, err := os.OpenFile(filepath.Join(dir, "next"), os.O_RDWR, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer fifo.Close()
	written := make(chan struct{})
	go func() {
		defer close(written)
		for range seen {
			if _, err := fifo.WriteString("go\n"); err != nil {
				t.Error(err)
				return
			}
		}
	}()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	r := runCtx(t, ctx, Env{Cwd: dir}, "bash",
		map[string]any{"command": "for i in 1 2 3 4; do echo $i; read x < next; done"}, onUpdate)
	close(seen)
	<-written
	if got := mustText(t, r); got != "1\n2\n3\n4\n" {
		t.Fatalf("final %q", got)
	}
	if want := []string{"1\n", "1\n2\n", "1\n2\n3\n", "1\n2\n3\n4\n"}; !slices.Equal(updates, want) {
		t.Fatalf("updates %q, want %q", updates, want)
	}

	// lots of output arrives in many chunks but updates stay throttled
	n := 0
	start := time.Now()
	r = runCtx(t, context.Background(), Env{Cwd: t.TempDir()}, "bash",
		map[string]any{"command": "for i in $(seq 1 20); do seq 1 2000; sleep 0.02; done"}, func(Result) { n++ })
	if max := int(time.Since(start)/updateInterval) + 2; n > max {
		t.Fatalf("%d updates in %v, want at most %d", n, time.Since(start), max)
	}
	if m := spillName.FindStringSubmatch(mustText(t, r)); m != nil {
		removeSpill(t, m[1])
	} else {
		t.Errorf("40,000 lines were not spilled: %q", text(r)[len(text(r))-150:])
	}
}
