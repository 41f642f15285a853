package main_test

import (
	"bufio"
	"encoding/json"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"
)

// lockProc is a pisces --mode rpc process driven line by line.
type lockProc struct {
	t     *testing.T
	cmd   *exec.Cmd
	in    io.WriteCloser
	lines chan map[string]any
	done  chan struct{}
}

func startLockRPC(t *testing.T, agentDir string, args ...string) *lockProc {
	t.Helper()
	cmd := exec.Command(bin, append([]string{"--agent-dir", agentDir, "--mode", "rpc"}, args...)...)
	in, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	p := &lockProc{t: t, cmd: cmd, in: in, lines: make(chan map[string]any, 1000), done: make(chan struct{})}
	go func() {
		sc := bufio.NewScanner(out)
		sc.Buffer(nil, 64<<20)
		for sc.Scan() {
			var m map[string]any
			if json.Unmarshal(sc.Bytes(), &m) == nil {
				p.lines <- m
			}
		}
		close(p.lines)
	}()
	go func() { cmd.Wait(); close(p.done) }()
	t.Cleanup(func() {
		in.Close()
		select {
		case <-p.done:
		case <-time.After(60 * time.Second):
			cmd.Process.Kill()
			<-p.done
		}
	})
	return p
}

// next returns the next output line that matches.
func (p *lockProc) next(what string, match func(map[string]any) bool) map[string]any {
	p.t.Helper()
	timeout := time.After(60 * time.Second)
	for {
		select {
		case m, ok := <-p.lines:
			if !ok {
				p.t.Fatalf("waiting for %s: the process ended", what)
			}
			if match(m) {
				return m
			}
		case <-timeout:
			p.t.Fatalf("waiting for %s: no such line within 60 s", what)
		}
	}
}

// call sends a command with an id and returns its response.
func (p *lockProc) call(id, line string) map[string]any {
	p.t.Helper()
	if _, err := io.WriteString(p.in, line+"\n"); err != nil {
		p.t.Fatal(err)
	}
	return p.next("the response "+id, func(m map[string]any) bool { return m["type"] == "response" && m["id"] == id })
}

// One writer per session file across processes: a second process on a file
// that an rpc process writes gets a read-only view (rpc mode) or is refused
// (print mode); a clone is its own, writable; the lock goes when its
// process ends.
func TestSessionFileLockAcrossProcesses(t *testing.T) {
	agentDir := t.TempDir()
	script := writeScript(t, `{"turns":[{"content":[{"type":"text","text":"ok"}]}]}`)
	if _, stderr, code := runIn(t, agentDir, "", "--provider", "scripted", "--script", script, "first"); code != 0 {
		t.Fatalf("creating the session: exit %d\n%s", code, stderr)
	}
	files, _ := filepath.Glob(filepath.Join(agentDir, "sessions", "*", "*.jsonl"))
	if len(files) != 1 {
		t.Fatalf("session files: %v", files)
	}
	file := files[0]
	lock := filepath.Join(filepath.Dir(file), "."+filepath.Base(file)+".lock")
	if _, err := os.Stat(lock); !os.IsNotExist(err) {
		t.Fatalf("the print run left its lock behind: %v", err)
	}

	a := startLockRPC(t, agentDir, "--session", file, "--provider", "scripted", "--script", script)
	a.next("ready", func(m map[string]any) bool { return m["type"] == "ready" })
	a.call("s", `{"id":"s","type":"get_state"}`)
	b, err := os.ReadFile(lock)
	if err != nil || !strings.HasPrefix(string(b), strconv.Itoa(a.cmd.Process.Pid)+"\n") {
		t.Fatalf("lock file of the rpc process: %q, %v", b, err)
	}
	before, _ := os.ReadFile(file)

	// Print mode would append: refused, naming the writer.
	_, stderr, code := runIn(t, agentDir, "", "--session", file, "--provider", "scripted", "--script", script, "again")
	if code != 1 || !strings.Contains(stderr, "open for writing in another process (pid "+strconv.Itoa(a.cmd.Process.Pid)+")") || !strings.Contains(stderr, "--fork") {
		t.Fatalf("print mode on a locked file: exit %d\n%s", code, stderr)
	}

	// rpc mode: a read-only view with a notice; a clone is writable.
	c := startLockRPC(t, agentDir, "--session", file, "--provider", "scripted", "--script", script)
	n := c.next("the read-only notice", func(m map[string]any) bool { return m["type"] == "extension_ui_request" && m["method"] == "notify" })
	if msg, _ := n["message"].(string); !strings.Contains(msg, "Read-only session") {
		t.Fatalf("notice: %v", n)
	}
	if r := c.call("1", `{"id":"1","type":"prompt","message":"write here"}`); r["success"] != false || !strings.Contains(r["error"].(string), "Read-only session") {
		t.Fatalf("prompt on the read-only view: %v", r)
	}
	if r := c.call("2", `{"id":"2","type":"clone"}`); r["success"] != true {
		t.Fatalf("clone: %v", r)
	}
	if r := c.call("3", `{"id":"3","type":"prompt","message":"in the copy"}`); r["success"] != true {
		t.Fatalf("prompt in the clone: %v", r)
	}
	c.next("the clone's run to end", func(m map[string]any) bool { return m["type"] == "agent_settled" })
	st := c.call("4", `{"id":"4","type":"get_state"}`)
	clone, _ := st["data"].(map[string]any)["sessionFile"].(string)
	if clone == "" || clone == file {
		t.Fatalf("the clone's file: %q", clone)
	}
	c.in.Close()
	<-c.done
	after, _ := os.ReadFile(file)
	if string(after) != string(before) {
		t.Errorf("the read-only view changed the file another process writes")
	}
	if _, err := os.Stat(filepath.Join(filepath.Dir(clone), "."+filepath.Base(clone)+".lock")); !os.IsNotExist(err) {
		t.Errorf("the clone's lock outlived its process: %v", err)
	}

	// The writer ends: its lock goes with it.
	a.in.Close()
	<-a.done
	if _, err := os.Stat(lock); !os.IsNotExist(err) {
		t.Errorf("the lock outlived the rpc process: %v", err)
	}
}

// A new session's folder is made when its file is first written: the lock
// is taken then, and removed when the process ends.
func TestNewSessionTakesItsLockOnceWritten(t *testing.T) {
	agentDir := t.TempDir()
	script := writeScript(t, `{"turns":[{"content":[{"type":"text","text":"ok"}]}]}`)
	p := startLockRPC(t, agentDir, "--provider", "scripted", "--script", script)
	p.next("ready", func(m map[string]any) bool { return m["type"] == "ready" })
	if files, _ := filepath.Glob(filepath.Join(agentDir, "sessions", "*")); len(files) != 0 {
		t.Fatalf("session folders before anything was written: %v", files)
	}
	if r := p.call("1", `{"id":"1","type":"prompt","message":"hi"}`); r["success"] != true {
		t.Fatalf("prompt: %v", r)
	}
	p.next("the run's end", func(m map[string]any) bool { return m["type"] == "agent_settled" })
	file, _ := p.call("2", `{"id":"2","type":"get_state"}`)["data"].(map[string]any)["sessionFile"].(string)
	lock := filepath.Join(filepath.Dir(file), "."+filepath.Base(file)+".lock")
	if b, err := os.ReadFile(lock); err != nil || !strings.HasPrefix(string(b), strconv.Itoa(p.cmd.Process.Pid)+"\n") {
		t.Fatalf("lock beside the new session's file %s: %q, %v", file, b, err)
	}
	p.in.Close()
	<-p.done
	if _, err := os.Stat(lock); !os.IsNotExist(err) {
		t.Errorf("the lock outlived the process: %v", err)
	}
}
