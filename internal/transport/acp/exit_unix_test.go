//go:build unix

package acp_test

import (
	"errors"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	sdk "github.com/coder/acp-go-sdk"
)

// TestStdinEOFEndsProcess closes stdin while a tool runs a long command:
// the editor is gone, so the run is aborted, the process exits at once and
// leaves no child behind.
func TestStdinEOFEndsProcess(t *testing.T) {
	dir := t.TempDir()
	pidFile := filepath.Join(dir, "pid")
	agentDir, proj, script := setupDirs(t, dir, `{"turns":[
 {"content":[{"type":"toolCall","id":"long","name":"bash","arguments":{"command":"echo $$ > `+pidFile+`.tmp && mv `+pidFile+`.tmp `+pidFile+` && exec sleep 120"}}]},
 {"content":[{"type":"text","text":"never"}]}
]}`)
	r := startBinary(t, dir, agentDir, proj, "--provider", "scripted", "--script", script)
	r.initialize()
	id := r.newSession("auto")
	go func() {
		_, _ = r.conn.Prompt(r.ctx(), sdk.PromptRequest{SessionId: id, Prompt: []sdk.ContentBlock{sdk.TextBlock("sleep")}})
	}()
	// The command has started once its pid is in the file.
	var pid int
	deadline := time.Now().Add(waitLimit)
	for {
		b, err := os.ReadFile(pidFile)
		if err == nil {
			pid, err = strconv.Atoi(strings.TrimSpace(string(b)))
			if err != nil {
				t.Fatal(err)
			}
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the command did not start; stderr:\n%s", r.stderr)
		}
		time.Sleep(10 * time.Millisecond) // polling the file the command writes
	}
	// The command would hold the run for two minutes; 3 s is the promise,
	// the bound leaves room for a loaded machine.
	closeStdinAndWaitExit(t, r, 20*time.Second)
	deadline = time.Now().Add(waitLimit)
	for {
		err := syscall.Kill(pid, 0)
		if errors.Is(err, syscall.ESRCH) {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the tool's process %d is still alive after the agent exited", pid)
		}
		time.Sleep(10 * time.Millisecond) // the orphan is reaped by init
	}
}

// closeStdinAndWaitExit closes the agent's stdin and waits for the process
// to end, failing when that takes longer than bound (its exit code stays
// in r.done).
func closeStdinAndWaitExit(t *testing.T, r *agentRun, bound time.Duration) {
	t.Helper()
	closed := time.Now()
	r.stdin.Close()
	select {
	case code := <-r.done:
		r.done <- code
		elapsed := time.Since(closed)
		t.Logf("exited %v after stdin closed (code %d)", elapsed, code)
		if elapsed > bound {
			t.Errorf("took %v to exit", elapsed)
		}
	case <-time.After(waitLimit):
		t.Fatal("the process did not end after stdin closed")
	}
}
