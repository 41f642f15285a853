//go:build linux

package cli_test

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/coder/websocket"

	"github.com/pisces-agent/pisces/internal/cli"
)

// pisces --mode web prints where it listens, serves the protocol with the
// token from the environment, and on SIGTERM aborts the work, closes the
// connections with a reason and exits within 3 s, leaving no child
// process (extensions, the user's shell command).
func TestWebModeServesAndStops(t *testing.T) {
	w := newWorld(t)
	const token = "a-token-of-the-owner-0123"
	t.Setenv("PISCES_WEB_TOKEN", token)
	outR, outW := io.Pipe()
	var stderr strings.Builder
	var stderrMu sync.Mutex
	exit := make(chan int, 1)
	go func() {
		code := cli.Main([]string{"--mode", "web", "--port", "0", "--agent-dir", w.agentDir, "--provider", "scripted",
			"--script", w.script, "--no-context-files", "-e", filepath.Join(exampleBins, "permission-gate")},
			cli.IO{Stdin: strings.NewReader(""), Stdout: outW, Stderr: lockedWriter{&stderr, &stderrMu}})
		outW.Close()
		exit <- code
	}()
	lines := bufio.NewScanner(outR)
	var ui, wsURL string
	for lines.Scan() {
		l := lines.Text()
		if v, ok := strings.CutPrefix(l, "UI: "); ok {
			ui = v
		}
		if v, ok := strings.CutPrefix(l, "WebSocket: "); ok {
			wsURL = v
			break
		}
	}
	go io.Copy(io.Discard, outR)
	if !strings.HasSuffix(ui, "/?token="+token) || !strings.HasPrefix(wsURL, "ws://127.0.0.1:") {
		t.Fatalf("start-up lines: UI %q, WebSocket %q", ui, wsURL)
	}
	resp, err := http.Get(strings.TrimSuffix(ui, "/?token="+token) + "/health")
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != 200 {
		t.Fatalf("/health: %d", resp.StatusCode)
	}

	ctx, cancel := context.WithTimeout(context.Background(), waitLimit)
	defer cancel()
	c, _, err := websocket.Dial(ctx, wsURL, &websocket.DialOptions{HTTPHeader: http.Header{"Authorization": {"Bearer " + token}}})
	if err != nil {
		t.Fatal(err)
	}
	defer c.CloseNow()
	read := func(pred func(map[string]any) bool) map[string]any {
		t.Helper()
		for {
			_, b, err := c.Read(ctx)
			if err != nil {
				t.Fatalf("reading: %v", err)
			}
			var m map[string]any
			json.Unmarshal(b, &m)
			if pred(m) {
				return m
			}
		}
	}
	read(func(m map[string]any) bool { return m["type"] == "ready" })
	c.Write(ctx, websocket.MessageText, []byte(`{"id":"b1","type":"bash","command":"echo started; sleep 60"}`))
	read(func(m map[string]any) bool { return m["type"] == "bash_execution_update" })
	children := childProcesses(t)
	t.Logf("child processes before SIGTERM: %v", children)
	if len(children) < 2 {
		t.Fatalf("expected the extension and the shell as children, found %v", children)
	}

	start := time.Now()
	if err := syscall.Kill(os.Getpid(), syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	select {
	case code := <-exit:
		if code != 143 {
			t.Errorf("exit %d, want 143", code)
		}
	case <-time.After(waitLimit):
		t.Fatal("pisces did not exit after SIGTERM")
	}
	if d := time.Since(start); d > 3*time.Second {
		t.Errorf("exit took %v", d)
	}
	var closeErr error
	for closeErr == nil {
		_, _, closeErr = c.Read(ctx)
	}
	var ce websocket.CloseError
	if !errors.As(closeErr, &ce) || ce.Code != websocket.StatusGoingAway || ce.Reason != "server shutting down" {
		t.Errorf("connection closed with %v", closeErr)
	}
	for _, pid := range children {
		if alive(pid) {
			t.Errorf("child process %d is left", pid)
		}
	}
}

// childProcesses lists the processes whose parent is this one, and their
// process groups' members.
func childProcesses(t *testing.T) []int {
	t.Helper()
	me := os.Getpid()
	entries, err := os.ReadDir("/proc")
	if err != nil {
		t.Skipf("no /proc: %v", err)
	}
	var out []int
	groups := map[int]bool{}
	type proc struct{ pid, ppid, pgrp int }
	var all []proc
	for _, e := range entries {
		pid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		b, err := os.ReadFile(filepath.Join("/proc", e.Name(), "stat"))
		if err != nil {
			continue
		}
		// pid (comm) state ppid pgrp ...
		s := string(b)
		f := strings.Fields(s[strings.LastIndexByte(s, ')')+1:])
		if len(f) < 3 {
			continue
		}
		ppid, _ := strconv.Atoi(f[1])
		pgrp, _ := strconv.Atoi(f[2])
		all = append(all, proc{pid, ppid, pgrp})
		if ppid == me && f[0] != "Z" {
			out = append(out, pid)
			groups[pgrp] = true
		}
	}
	for _, p := range all {
		if groups[p.pgrp] && p.ppid != me && p.pid != me {
			out = append(out, p.pid)
		}
	}
	return out
}

// alive reports a process that exists and is not a zombie.
func alive(pid int) bool {
	b, err := os.ReadFile(filepath.Join("/proc", strconv.Itoa(pid), "stat"))
	if err != nil {
		return false
	}
	s := string(b)
	f := strings.Fields(s[strings.LastIndexByte(s, ')')+1:])
	return len(f) > 0 && f[0] != "Z"
}
