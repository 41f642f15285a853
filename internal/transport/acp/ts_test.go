package acp_test

import (
	"bytes"
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
	"time"

	"github.com/pisces-agent/pisces/internal/testenv"
)

// sdkPackage is the TypeScript SDK editors use; .ci/run installs it.
const sdkPackage = "@agentclientprotocol/sdk@2.4.0"

// TestTypeScriptSDKEditor drives the pisces binary with the official
// TypeScript SDK as the editor (testdata/ts_editor.mjs): initialize, new,
// a prompt whose tool call asks permission, a config change, a cancelled
// prompt, then session/load in a new process, and in a third the editor's
// MCP server and terminals. That SDK drops updates that
// do not validate against the schema without a word, so the script
// compares the updates on the wire with those the SDK delivered.
func TestTypeScriptSDKEditor(t *testing.T) {
	node := testenv.LookPath(t, "node")
	modules := os.Getenv("PISCES_NODE_MODULES")
	if modules == "" {
		testenv.Unavailable(t, "needs the npm package %s: install it (npm install --prefix DIR %s) and set PISCES_NODE_MODULES to DIR/node_modules (.ci/run does)", sdkPackage, sdkPackage)
	}
	entry := filepath.Join(modules, "@agentclientprotocol", "sdk", "dist", "v1", "stable", "acp.js")
	if _, err := os.Stat(entry); err != nil {
		testenv.Unavailable(t, "needs the npm package %s in %s: %v", sdkPackage, modules, err)
	}
	bin, err := testenv.PiscesBinary()
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	agentDir, proj, script1 := setupDirs(t, dir, `{"turns":[
 {"content":[{"type":"thinking","thinking":"a note, then"},{"type":"toolCall","id":"w1","name":"write","arguments":{"path":"note.txt","content":"hello\n"}}]},
 {"content":[{"type":"text","text":"written"}]},
 {"content":[{"type":"text","text":"thinking long"}],"hang":true},
 {"content":[{"type":"text","text":"after the cancel"}]}
]}`)
	script2 := filepath.Join(dir, "script2.json")
	if err := os.WriteFile(script2, []byte(`{"turns":[{"content":[{"type":"text","text":"yes"}]}]}`), 0o644); err != nil {
		t.Fatal(err)
	}
	script3 := filepath.Join(dir, "script3.json")
	if err := os.WriteFile(script3, []byte(`{"turns":[
 {"content":[{"type":"toolCall","id":"m1","name":"mcp__ed__echo","arguments":{"message":"from the editor"}},{"type":"toolCall","id":"t1","name":"bash","arguments":{"command":"echo in the terminal"}}]},
 {"content":[{"type":"text","text":"both done"}]}
]}`), 0o644); err != nil {
		t.Fatal(err)
	}
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, node, filepath.Join("testdata", "ts_editor.mjs"), entry, bin, agentDir, proj, script1, script2, script3, exe)
	cmd.Env = cleanEnv()
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	err = cmd.Run()
	t.Logf("report: %s", bytes.TrimSpace(stdout.Bytes()))
	if err != nil {
		t.Fatalf("the TypeScript editor failed: %v\nstdout:\n%s\nstderr:\n%s", err, stdout.String(), stderr.String())
	}
}
