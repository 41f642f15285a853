package client_test

import (
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/pisces-agent/pisces/internal/auth"
	"github.com/pisces-agent/pisces/internal/auth/authtest"
	"github.com/pisces-agent/pisces/internal/testenv"
)

// TestOMPClient drives pisces with oh-my-pi's own RpcClient
// (@oh-my-pi/pi-coding-agent from npm, run by Bun from npm): start with
// host tools (protocol v2 negotiated), promptAndWait, waitForSettled, a bash
// tool turn, the host tool round trip, steer and follow-up, abort,
// abortAndPrompt, getMessages (paged), model and thinking level, available
// commands, compact, new and switch session, branch, frames over 1 MiB (sent
// as rpc_chunk), session events, logins (a device code and a browser's
// callback, against a local server speaking the vendors' wire)
// (testdata/omp/drive.ts says what each step checks). .ci/omp-client
// installs the client into PISCES_OMP_CLIENT_DIR (CI) or the user's cache
// folder; without npm or the registry the test is skipped (fails under CI).
func TestOMPClient(t *testing.T) {
	testenv.LookPath(t, "npm")
	bash := testenv.LookPath(t, "bash")
	dir := os.Getenv("PISCES_OMP_CLIENT_DIR")
	if dir == "" {
		cache, err := os.UserCacheDir()
		if err != nil {
			testenv.Unavailable(t, "no folder for oh-my-pi's client: %v (set PISCES_OMP_CLIENT_DIR)", err)
		}
		dir = filepath.Join(cache, "pisces-test", "omp-client")
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
	defer cancel()
	install := exec.CommandContext(ctx, bash, filepath.Join("..", "..", ".ci", "omp-client"), dir)
	if out, err := install.CombinedOutput(); err != nil {
		testenv.Unavailable(t, "needs oh-my-pi's RpcClient from npm (.ci/omp-client %s): %v\n%s", dir, err, out)
	}
	driver, err := os.ReadFile(filepath.Join("testdata", "omp", "drive.ts"))
	if err != nil {
		t.Fatal(err)
	}
	// The driver sits beside node_modules so that its imports resolve.
	drive := filepath.Join(dir, "drive.ts")
	if err := os.WriteFile(drive, driver, 0o644); err != nil {
		t.Fatal(err)
	}

	work := t.TempDir()
	gate := filepath.Join(work, "gate")
	turn := func(content ...map[string]any) map[string]any { return map[string]any{"content": content} }
	say := func(s string) map[string]any { return map[string]any{"type": "text", "text": s} }
	call := func(id, name string, args map[string]any) map[string]any {
		return map[string]any{"type": "toolCall", "id": id, "name": name, "arguments": args}
	}
	script, _ := json.Marshal(map[string]any{"turns": []any{
		turn(say("hi there")),
		turn(call("c1", "bash", map[string]any{"command": "echo from-bash"})),
		turn(say("bash done")),
		turn(call("c2", "echo_host", map[string]any{"text": "ping"})),
		turn(say("host done")),
		turn(call("c3", "bash", map[string]any{"command": "until [ -e " + gate + " ]; do sleep 0.01; done"})),
		turn(say("steered")),
		turn(say("followed")),
		turn(call("c4", "bash", map[string]any{"command": "sleep 30"})),
		turn(call("c5", "bash", map[string]any{"command": "sleep 30"})),
		turn(say("instead done")),
		turn(say("## Goal\nTest oh-my-pi's client.")),
		turn(say("big done")),
	}})
	scriptPath := filepath.Join(work, "script.json")
	if err := os.WriteFile(scriptPath, script, 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.MkdirAll(filepath.Join(work, "agent"), 0o755); err != nil {
		t.Fatal(err)
	}
	// A small kept tail, so that compact has something to summarise.
	if err := os.WriteFile(filepath.Join(work, "agent", "settings.json"), []byte(`{"compaction":{"keepRecentTokens":5}}`), 0o644); err != nil {
		t.Fatal(err)
	}

	run := exec.CommandContext(ctx, filepath.Join(dir, "node_modules", ".bin", "bun"), drive)
	run.Dir = dir
	// The logins talk to a local server speaking the vendors' wire.
	vendor := authtest.New(t)
	vendor.Set(func(s *authtest.Server) { s.Interval, s.Pending = 1, 1 })
	run.Env = append(os.Environ(), "PISCES="+piscesBin, "WORK="+work, "SCRIPT="+scriptPath, "GATE="+gate,
		auth.ServerEnv+"="+vendor.URL, "GITHUB_TOKEN=", "GH_TOKEN=", "COPILOT_GITHUB_TOKEN=")
	out, err := run.CombinedOutput()
	lines := strings.Split(strings.TrimSpace(string(out)), "\n")
	if err != nil || lines[len(lines)-1] != "ok" {
		t.Fatalf("oh-my-pi's client against pisces: %v\n%s", err, out)
	}
	t.Logf("%d steps passed", strings.Count(string(out), "step: "))
}
