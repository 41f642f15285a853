//go:build unix

package main_test

import (
	"bufio"
	"encoding/json"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

// stopDeadline bounds what these tests wait for: far above the figures
// they log (tens of milliseconds to a few seconds on a loaded 2-core VM
// under -race), so that they fail only when something hangs.
const stopDeadline = 30 * time.Second

// rpcProc is a pisces --mode rpc process with its output read line by line.
type rpcProc struct {
	t      *testing.T
	cmd    *exec.Cmd
	stdin  io.WriteCloser
	lines  chan string
	exited chan struct{}
	err    error
}

func startRPC(t *testing.T, env []string, args ...string) *rpcProc {
	t.Helper()
	dir := t.TempDir()
	cmd := exec.Command(bin, append([]string{"--agent-dir", dir, "--session-dir", filepath.Join(dir, "s"), "--mode", "rpc"}, args...)...)
	cmd.Env = append(os.Environ(), env...)
	stdin, _ := cmd.StdinPipe()
	stdout, _ := cmd.StdoutPipe()
	cmd.Stderr = io.Discard
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	p := &rpcProc{t: t, cmd: cmd, stdin: stdin, lines: make(chan string, 1<<16), exited: make(chan struct{})}
	go func() {
		sc := bufio.NewScanner(stdout)
		sc.Buffer(nil, 1<<26)
		for sc.Scan() {
			p.lines <- sc.Text()
		}
		close(p.lines)
		p.err = cmd.Wait()
		close(p.exited)
	}()
	t.Cleanup(func() {
		cmd.Process.Kill()
		<-p.exited
	})
	p.waitFor(`"type":"ready"`)
	return p
}

func (p *rpcProc) send(line string) {
	if _, err := io.WriteString(p.stdin, line+"\n"); err != nil {
		p.t.Fatalf("writing %s: %v", line, err)
	}
}

// waitFor returns the first line that contains every one of subs.
func (p *rpcProc) waitFor(subs ...string) string {
	p.t.Helper()
	return p.waitForWithin(stopDeadline, subs...)
}

func (p *rpcProc) waitForWithin(d time.Duration, subs ...string) string {
	p.t.Helper()
	deadline := time.After(d)
	for {
		select {
		case l, ok := <-p.lines:
			if !ok {
				p.t.Fatalf("the process ended before %q", subs)
			}
			all := true
			for _, s := range subs {
				all = all && strings.Contains(l, s)
			}
			if all {
				return l
			}
		case <-deadline:
			p.t.Fatalf("no %q within %v", subs, d)
		}
	}
}

// exit waits for the process to end and returns its exit code, the lines it
// wrote until then, and how long it took.
func (p *rpcProc) exit() (int, []string, time.Duration) {
	p.t.Helper()
	start := time.Now()
	var rest []string
	deadline := time.After(stopDeadline)
	for {
		select {
		case l, ok := <-p.lines:
			if ok {
				rest = append(rest, l)
				continue
			}
			<-p.exited
			code := 0
			if ee, ok := p.err.(*exec.ExitError); ok {
				code = ee.ExitCode()
			} else if p.err != nil {
				p.t.Fatal(p.err)
			}
			return code, rest, time.Since(start)
		case <-deadline:
			p.t.Fatalf("the process has not exited after %v", stopDeadline)
		}
	}
}

// peakRSS is the process's peak resident memory so far, in MiB (VmHWM; 0
// where /proc is not available). The rusage of the exited process is no
// use: on Linux it carries over the parent's peak from before the exec.
func (p *rpcProc) peakRSS() float64 {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(p.cmd.Process.Pid) + "/status")
	if err != nil {
		return 0
	}
	for _, l := range strings.Split(string(b), "\n") {
		if f := strings.Fields(l); len(f) >= 2 && f[0] == "VmHWM:" {
			kb, _ := strconv.Atoi(f[1])
			return float64(kb) / 1024
		}
	}
	return 0
}

// toolTurns is a script whose first turn calls the tools and whose second
// answers "done".
func toolTurns(t *testing.T, calls ...map[string]any) string {
	var content []map[string]any
	for _, c := range calls {
		content = append(content, map[string]any{"type": "toolCall", "name": c["name"], "arguments": c["arguments"]})
	}
	b, err := json.Marshal(map[string]any{"turns": []any{
		map[string]any{"content": content},
		map[string]any{"content": []any{map[string]any{"type": "text", "text": "done"}}},
	}})
	if err != nil {
		t.Fatal(err)
	}
	return writeScript(t, string(b))
}

func call(name string, args map[string]any) map[string]any {
	return map[string]any{"name": name, "arguments": args}
}

// Reading /dev/zero, a FIFO without a writer or a socket, editing or
// searching them, does not hang the run: with stdin closed after the prompt
// the run finishes and the process exits 0, as docs/rpc.md says.
func TestRPCSpecialFilesDoNotKeepTheRunFromEnding(t *testing.T) {
	dir := t.TempDir()
	fifo := filepath.Join(dir, "fifo")
	if err := syscall.Mkfifo(fifo, 0o644); err != nil {
		t.Skipf("mkfifo: %v", err)
	}
	script := toolTurns(t,
		call("read", map[string]any{"path": "/dev/zero"}),
		call("read", map[string]any{"path": fifo}),
		call("edit", map[string]any{"path": fifo, "edits": []any{map[string]any{"oldText": "a", "newText": "b"}}}),
		call("grep", map[string]any{"pattern": "x", "path": "/dev/zero"}),
		call("grep", map[string]any{"pattern": "x", "path": dir}),
		call("write", map[string]any{"path": fifo, "content": "x"}),
	)
	p := startRPC(t, nil, "--no-session", "--tools", "read,edit,grep,write", "--script", script)
	p.send(`{"id":"p","type":"prompt","message":"go"}`)
	p.stdin.Close()
	code, out, took := p.exit()
	t.Logf("exited %v after stdin EOF", took)
	if code != 0 {
		t.Fatalf("exit %d", code)
	}
	all := strings.Join(out, "\n")
	if n := strings.Count(all, `"type":"tool_execution_end"`); n != 6 {
		t.Fatalf("%d tool results:\n%s", n, all)
	}
	if n := strings.Count(all, "Not a regular file: "); n < 5 {
		t.Fatalf("%d refusals:\n%s", n, all)
	}
	if !strings.Contains(all, `"type":"agent_settled"`) || !strings.Contains(all, `"text":"done"`) {
		t.Fatalf("the run did not finish:\n%s", all)
	}
}

// abort is answered promptly whatever the running tool does; the figures
// are logged (docs/security.md records them).
func TestRPCAbortIsAnsweredWhileToolsRun(t *testing.T) {
	dir := t.TempDir()
	sparse := filepath.Join(dir, "sparse.bin")
	f, err := os.Create(sparse)
	if err != nil {
		t.Fatal(err)
	}
	if err := f.Truncate(1 << 40); err != nil { // 1 TiB, takes no space
		t.Skipf("sparse file: %v", err)
	}
	f.Close()
	// one 16 MiB line: grep matches lines that long as a stream (seconds)
	long := filepath.Join(dir, "long.txt")
	if err := os.WriteFile(long, []byte(strings.Repeat("x", 16<<20)+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	cases := map[string]map[string]any{
		"bash cat /dev/zero": call("bash", map[string]any{"command": "cat /dev/zero"}),
		"bash yes":           call("bash", map[string]any{"command": "yes"}),
		"bash sleep":         call("bash", map[string]any{"command": "sleep 1000"}),
		"read 1 TiB":         call("read", map[string]any{"path": sparse}),
		"grep 16 MiB line":   call("grep", map[string]any{"pattern": "y$", "path": long}),
	}
	for name, c := range cases {
		t.Run(name, func(t *testing.T) {
			p := startRPC(t, nil, "--no-session", "--tools", "read,bash,grep", "--script", toolTurns(t, c))
			p.send(`{"id":"p","type":"prompt","message":"go"}`)
			p.waitFor(`"type":"tool_execution_start"`)
			start := time.Now()
			p.send(`{"id":"a","type":"abort"}`)
			p.waitFor(`"id":"a"`, `"type":"response"`)
			took := time.Since(start)
			p.stdin.Close()
			code, _, _ := p.exit()
			t.Logf("%s: abort answered after %v", name, took)
			if code != 0 {
				t.Fatalf("exit %d", code)
			}
			if took > 10*time.Second {
				t.Fatalf("abort took %v", took)
			}
		})
	}
}

// SIGTERM ends the process while a tool reads or prints without end; the
// figure is logged (the rule is 3 s).
func TestRPCSigtermEndsEndlessTools(t *testing.T) {
	dir := t.TempDir()
	sparse := filepath.Join(dir, "sparse.bin")
	f, err := os.Create(sparse)
	if err != nil {
		t.Fatal(err)
	}
	if err := f.Truncate(1 << 40); err != nil {
		t.Skipf("sparse file: %v", err)
	}
	f.Close()
	cases := map[string]map[string]any{
		"bash cat /dev/zero": call("bash", map[string]any{"command": "cat /dev/zero"}),
		"read 1 TiB":         call("read", map[string]any{"path": sparse}),
	}
	for name, c := range cases {
		t.Run(name, func(t *testing.T) {
			p := startRPC(t, nil, "--tools", "read,bash", "--script", toolTurns(t, c))
			p.send(`{"id":"p","type":"prompt","message":"go"}`)
			p.waitFor(`"type":"tool_execution_start"`)
			start := time.Now()
			p.cmd.Process.Signal(syscall.SIGTERM)
			code, _, _ := p.exit()
			took := time.Since(start)
			t.Logf("%s: exited %v after SIGTERM", name, took)
			if code != 143 {
				t.Fatalf("exit %d, want 143", code)
			}
			if took > 10*time.Second {
				t.Fatalf("exit took %v", took)
			}
		})
	}
}

// read and grep over huge inputs, run to the end, keep the process small:
// read scans the first 1 GiB of a 1 TiB file, grep matches a 16 MiB line as
// a stream. The figure is logged (docs/security.md records it).
func TestRPCHugeFilesKeepMemoryBounded(t *testing.T) {
	dir := t.TempDir()
	sparse := filepath.Join(dir, "sparse.bin")
	f, err := os.Create(sparse)
	if err != nil {
		t.Fatal(err)
	}
	if err := f.Truncate(1 << 40); err != nil {
		t.Skipf("sparse file: %v", err)
	}
	f.Close()
	long := filepath.Join(dir, "long.txt")
	if err := os.WriteFile(long, []byte(strings.Repeat("x", 16<<20)+"y\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	p := startRPC(t, nil, "--no-session", "--tools", "read,grep", "--script", toolTurns(t,
		call("read", map[string]any{"path": sparse}),
		call("grep", map[string]any{"pattern": "y$", "path": long}),
	))
	start := time.Now()
	p.send(`{"id":"p","type":"prompt","message":"go"}`)
	read := p.waitForWithin(5*time.Minute, `"type":"tool_execution_end"`, `"toolName":"read"`)
	grep := p.waitForWithin(5*time.Minute, `"type":"tool_execution_end"`, `"toolName":"grep"`)
	p.waitFor(`"type":"agent_settled"`)
	took := time.Since(start)
	rss := p.peakRSS()
	t.Logf("read of 1 TiB + grep of a 16 MiB line: %v, peak RSS %.0f MiB", took, rss)
	if !strings.Contains(read, "is more than 1.0GB, exceeds 50.0KB limit") {
		t.Fatalf("read: %.300s", read)
	}
	if !strings.Contains(grep, "long.txt:1: xxx") {
		t.Fatalf("grep: %.300s", grep)
	}
	if rss > 200 {
		t.Fatalf("peak RSS %.0f MiB", rss)
	}
	p.stdin.Close()
	if code, _, _ := p.exit(); code != 0 {
		t.Fatalf("exit %d", code)
	}
}

var spillRe = regexp.MustCompile(`Full output: (\S+/pisces-bash-[0-9a-f]{16}\.log)`)

// The bash tool's spill files are gone once the process has exited, after
// stdin EOF and after SIGTERM.
func TestSpillFilesAreDeletedAtExit(t *testing.T) {
	for _, how := range []string{"eof", "sigterm"} {
		t.Run(how, func(t *testing.T) {
			tmp := t.TempDir()
			command := "seq 1 100000"
			if how == "sigterm" {
				command += "; sleep 1000"
			}
			p := startRPC(t, []string{"TMPDIR=" + tmp}, "--no-session", "--script",
				toolTurns(t, call("bash", map[string]any{"command": command})))
			p.send(`{"id":"p","type":"prompt","message":"go"}`)
			var path string
			if how == "eof" {
				p.stdin.Close()
				_, out, _ := p.exit()
				if m := spillRe.FindStringSubmatch(strings.Join(out, "\n")); m != nil {
					path = m[1]
				}
			} else {
				// an update names the file once the output is past 50 KB
				l := p.waitFor(`"type":"tool_execution_update"`, `pisces-bash-`)
				if m := regexp.MustCompile(`"fullOutputPath":"([^"]+)"`).FindStringSubmatch(l); m != nil {
					path = m[1]
				}
				p.cmd.Process.Signal(syscall.SIGTERM)
				p.exit()
			}
			if path == "" || !strings.HasPrefix(path, tmp) {
				t.Fatalf("no spill file named in %s (path %q)", tmp, path)
			}
			left, _ := filepath.Glob(filepath.Join(tmp, "pisces-bash-*"))
			if len(left) > 0 {
				t.Fatalf("left behind: %v", left)
			}
		})
	}
}

// SIGTERM ends the process within its few seconds even when the client has
// stopped reading stdout: the closing events of the aborted run (each
// carrying megabytes of streamed text, more than a pipe holds) get a
// moment to go out, and the process exits without them. The figure is
// logged (docs/security.md records it).
func TestRPCSigtermWithAStalledClient(t *testing.T) {
	script, err := json.Marshal(map[string]any{"chunkSize": 1000, "turns": []any{map[string]any{
		"content": []any{map[string]any{"type": "text", "text": strings.Repeat("0123456789", 2_000_000)}}, // 20 MB
		"hang":    true,
	}}})
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	cmd := exec.Command(bin, "--agent-dir", dir, "--no-session", "--mode", "rpc", "--no-tools", "--script", writeScript(t, string(script)))
	stdin, _ := cmd.StdinPipe()
	stdout, _ := cmd.StdoutPipe()
	cmd.Stderr = io.Discard
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	exited := make(chan error, 1)
	go func() { exited <- cmd.Wait() }()
	t.Cleanup(func() {
		cmd.Process.Kill()
		<-exited
	})
	io.WriteString(stdin, `{"id":"p","type":"prompt","message":"go"}`+"\n")
	// Read until 2 MB of text has streamed, then stop reading.
	br := bufio.NewReaderSize(stdout, 1<<20)
	streamed := 0
	for streamed < 2<<20 {
		line, err := br.ReadBytes('\n')
		if err != nil {
			t.Fatalf("stdout ended after %d bytes of text: %v", streamed, err)
		}
		var ev struct {
			AME struct {
				Delta string `json:"delta"`
			} `json:"assistantMessageEvent"`
		}
		if json.Unmarshal(line, &ev) == nil {
			streamed += len(ev.AME.Delta)
		}
	}
	start := time.Now()
	cmd.Process.Signal(syscall.SIGTERM)
	select {
	case err := <-exited:
		took := time.Since(start)
		t.Logf("exited %v after SIGTERM, stdout not read", took)
		ee, ok := err.(*exec.ExitError)
		if !ok || ee.ExitCode() != 143 {
			t.Fatalf("exit: %v, want 143", err)
		}
		if took > 10*time.Second {
			t.Fatalf("exit took %v", took)
		}
		exited <- err // for the cleanup
	case <-time.After(stopDeadline):
		t.Fatalf("the process has not exited %v after SIGTERM with stdout not read", stopDeadline)
	}
}
