//go:build unix

package acp_test

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	sdk "github.com/coder/acp-go-sdk"

	"github.com/pisces-agent/pisces/internal/procgroup"
)

// wrappedServer is an editor's stdio server behind a shell that outlives
// it (sh -c 'server; exec sleep 61'): only stopping its whole process
// group ends it. The shell's pid (the group's) is written to pidFile.
func wrappedServer(t *testing.T, name, pidFile string) sdk.McpServer {
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	script, _ := json.Marshal(`echo $$ > "` + pidFile + `.tmp" && mv "` + pidFile + `.tmp" "` + pidFile + `"; "` + exe + `"; exec sleep 61`)
	var line string
	_ = json.Unmarshal(script, &line)
	return sdk.McpServer{Stdio: &sdk.McpServerStdio{Name: name, Command: "/bin/sh", Args: []string{"-c", line},
		Env: []sdk.EnvVariable{{Name: "PISCES_TEST_MCP_SERVER", Value: "1"}}}}
}

// readPid waits for the file a wrapped server writes.
func readPid(t *testing.T, r *agentRun, pidFile string) int {
	t.Helper()
	deadline := time.Now().Add(waitLimit)
	for {
		if b, err := os.ReadFile(pidFile); err == nil {
			pid, err := strconv.Atoi(strings.TrimSpace(string(b)))
			if err != nil {
				t.Fatal(err)
			}
			return pid
		}
		if time.Now().After(deadline) {
			t.Fatalf("the MCP server did not start; stderr:\n%s", r.stderr)
		}
		time.Sleep(10 * time.Millisecond) // polling the file the server's shell writes
	}
}

// The editor's servers belong to their session: session/close stops the
// whole process group before it answers, and closing stdin ends the
// process within 3 s with no server left.
func TestEditorMCPServersStop(t *testing.T) {
	dir := t.TempDir()
	agentDir, proj, script := setupDirs(t, dir, `{"turns":[]}`)
	r := startBinary(t, dir, agentDir, proj, "--provider", "scripted", "--script", script)
	r.initialize()

	pid1 := filepath.Join(dir, "pid1")
	resp, err := r.conn.NewSession(r.ctx(), sdk.NewSessionRequest{Cwd: proj, McpServers: []sdk.McpServer{wrappedServer(t, "one", pid1)}})
	if err != nil {
		t.Fatalf("session/new: %v\nstderr:\n%s", err, r.stderr)
	}
	g1 := readPid(t, r, pid1)
	if _, err := r.conn.CloseSession(r.ctx(), sdk.CloseSessionRequest{SessionId: resp.SessionId}); err != nil {
		t.Fatalf("session/close: %v", err)
	}
	if procgroup.Alive(g1) {
		t.Errorf("session/close answered with its MCP server's process group %d alive", g1)
	}

	pid2 := filepath.Join(dir, "pid2")
	if _, err := r.conn.NewSession(r.ctx(), sdk.NewSessionRequest{Cwd: proj, McpServers: []sdk.McpServer{wrappedServer(t, "two", pid2)}}); err != nil {
		t.Fatalf("session/new: %v", err)
	}
	g2 := readPid(t, r, pid2)
	closeStdinAndWaitExit(t, r, 20*time.Second)
	if procgroup.Alive(g2) {
		t.Errorf("the process exited with its MCP server's process group %d alive", g2)
	}
}
