//go:build unix

package main_test

import (
	"bufio"
	"bytes"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

// A signal aborts the run, kills the tool's process group and exits 143
// (SIGTERM) or 129 (SIGHUP); the session file keeps every entry.
func TestRPCSignalsKillToolsAndExit(t *testing.T) {
	for sig, want := range map[syscall.Signal]int{syscall.SIGTERM: 143, syscall.SIGHUP: 129} {
		t.Run(sig.String(), func(t *testing.T) {
			dir := t.TempDir()
			pidFile := filepath.Join(dir, "pid")
			script := writeScript(t, `{"turns":[{"content":[{"type":"toolCall","name":"bash","arguments":{"command":"sleep 60 & echo $! > `+pidFile+`; wait"}}]}]}`)
			cmd := exec.Command(bin, "--agent-dir", dir, "--session-dir", filepath.Join(dir, "s"), "--mode", "rpc", "--script", script)
			stdin, _ := cmd.StdinPipe()
			stdout, _ := cmd.StdoutPipe()
			cmd.Stderr = io.Discard
			if err := cmd.Start(); err != nil {
				t.Fatal(err)
			}
			defer cmd.Process.Kill()
			sc := bufio.NewScanner(stdout)
			sc.Buffer(nil, 1<<24)
			sc.Scan() // ready
			io.WriteString(stdin, `{"id":"p","type":"prompt","message":"sleep"}`+"\n")
			for sc.Scan() {
				if strings.Contains(sc.Text(), `"type":"tool_execution_start"`) {
					break
				}
			}
			var pid int
			for deadline := time.Now().Add(time.Minute); pid == 0; time.Sleep(20 * time.Millisecond) {
				b, _ := os.ReadFile(pidFile)
				if pid, _ = strconv.Atoi(strings.TrimSpace(string(b))); pid == 0 && time.Now().After(deadline) {
					t.Fatal("the tool never started its child")
				}
			}
			cmd.Process.Signal(sig)
			go io.Copy(io.Discard, stdout)
			err := cmd.Wait()
			ee, ok := err.(*exec.ExitError)
			if !ok || ee.ExitCode() != want {
				t.Fatalf("exit %v, want %d", err, want)
			}
			// The child must be gone (or a zombie awaiting a reaper).
			deadline := time.Now().Add(30 * time.Second)
			for alive(pid) && time.Now().Before(deadline) {
				time.Sleep(20 * time.Millisecond)
			}
			if alive(pid) {
				t.Fatalf("process %d of the tool's group survived", pid)
			}
			files, _ := filepath.Glob(filepath.Join(dir, "s", "*.jsonl"))
			if len(files) != 1 {
				t.Fatalf("session files: %v", files)
			}
			b, _ := os.ReadFile(files[0])
			if !strings.Contains(string(b), `"role":"toolResult"`) || !bytes.HasSuffix(b, []byte("\n")) {
				t.Fatalf("session file lacks the aborted tool result:\n%s", b)
			}
		})
	}
}

// alive reports whether pid runs (a zombie counts as dead).
func alive(pid int) bool {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return syscall.Kill(pid, 0) == nil && runtime.GOOS != "linux"
	}
	f := strings.Fields(string(b))
	return len(f) > 2 && f[2] != "Z"
}
