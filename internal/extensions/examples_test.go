package extensions

import (
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/pisces-agent/pisces/internal/testenv"
)

// examplesDir is examples/extensions/ of the repository.
func examplesDir(t *testing.T) string {
	t.Helper()
	_, file, _, _ := runtime.Caller(0)
	return filepath.Join(filepath.Dir(file), "..", "..", "examples", "extensions")
}

func TestExamplePermissionGate(t *testing.T) {
	goTool := testenv.LookPath(t, "go")
	dir := t.TempDir()
	bin := filepath.Join(dir, "agent", "extensions", "permission-gate", "permission-gate")
	build := exec.Command(goTool, "build", "-o", bin, ".")
	build.Dir = filepath.Join(examplesDir(t), "permission-gate")
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("build: %v\n%s", err, out)
	}
	// Found by discovery, as a directory extension.
	e := loadPaths(t, dir, 5*time.Second)
	if len(e.errs) != 0 || !slices.Equal(e.h.Paths(), []string{bin}) {
		t.Fatalf("%v %v", e.errs, e.h.Paths())
	}
	ctx := context.Background()

	// Harmless: no dialog.
	if d := e.h.OnToolCall(ctx, "1", "bash", bashArgs("ls -la")); d.Block {
		t.Errorf("ls blocked: %+v", d)
	}
	if d := e.h.OnToolCall(ctx, "2", "read", json.RawMessage(`{"path":"x"}`)); d.Block {
		t.Errorf("read blocked: %+v", d)
	}
	// Destructive, refused by the user.
	e.ui.answer = confirmWith(false)
	d := e.h.OnToolCall(ctx, "3", "bash", bashArgs("rm -rf build"))
	if !d.Block || !strings.Contains(d.Reason, "recursive forced delete") {
		t.Errorf("rm -rf: %+v", d)
	}
	// Destructive, allowed.
	e.ui.answer = confirmWith(true)
	if d := e.h.OnToolCall(ctx, "4", "bash", bashArgs("git push --force origin main")); d.Block {
		t.Errorf("allowed push blocked: %+v", d)
	}
	dialogs, _ := e.ui.got()
	if !slices.Equal(dialogs, []string{"confirm Allow recursive forced delete? 1m0s", "confirm Allow force push? 1m0s"}) {
		t.Errorf("dialogs %q", dialogs)
	}
	// Without a client that can answer, destructive commands are blocked.
	e.ui.available = false
	if d := e.h.OnToolCall(ctx, "5", "bash", bashArgs("rm -r -f /tmp/x")); !d.Block {
		t.Errorf("no UI: %+v", d)
	}
	for _, cmd := range []string{"rm -fr x", "rm -Rf x", "sudo reboot", "git reset --hard HEAD~3", "git push -f"} {
		if d := e.h.OnToolCall(ctx, "6", "bash", bashArgs(cmd)); !d.Block {
			t.Errorf("%q not gated", cmd)
		}
	}
	for _, cmd := range []string{"rm file.txt", "git push origin main", "rm -r build", "git status --force-color"} {
		if d := e.h.OnToolCall(ctx, "7", "bash", bashArgs(cmd)); d.Block {
			t.Errorf("%q gated", cmd)
		}
	}
	if errs := e.rec.all(); len(errs) != 0 {
		t.Errorf("errors %v", errs)
	}
}

func TestExampleProtectedPaths(t *testing.T) {
	testenv.LookPath(t, "python3")
	script := filepath.Join(examplesDir(t), "protected-paths", "protected-paths.py")
	fi, err := os.Stat(script)
	if err != nil || fi.Mode().Perm()&0o111 == 0 {
		t.Fatalf("%s missing or not executable: %v", script, err)
	}
	dir := t.TempDir()
	// -e DIR: a directory without an entry point loads every executable in it.
	e := loadPaths(t, dir, 5*time.Second, filepath.Dir(script))
	if len(e.errs) != 0 || len(e.h.Paths()) != 1 {
		t.Fatalf("%v %v", e.errs, e.h.Paths())
	}
	ctx := context.Background()
	for _, c := range []struct {
		tool, path string
		block      bool
	}{
		{"write", ".env", true},
		{"edit", "config/.env.local", true},
		{"write", ".git/config", true},
		{"edit", filepath.Join(dir, ".git", "hooks", "pre-commit"), true},
		{"write", "keys/server.pem", true},
		{"write", "src/main.go", false},
		{"edit", "README.md", false},
		{"read", ".env", false},
	} {
		args, _ := json.Marshal(map[string]string{"path": c.path, "content": "x"})
		d := e.h.OnToolCall(ctx, "1", c.tool, args)
		if d.Block != c.block {
			t.Errorf("%s %s: %+v", c.tool, c.path, d)
		}
		if d.Block && !strings.Contains(d.Reason, "is protected") {
			t.Errorf("reason %q", d.Reason)
		}
	}
	waitFor(t, "notifications", func() bool { _, n := e.ui.got(); return len(n) == 5 })
	_, notes := e.ui.got()
	if notes[0] != `notify {"message":"Blocked write of .env","notifyType":"warning"}` {
		t.Errorf("notes %q", notes)
	}
	if errs := e.rec.all(); len(errs) != 0 {
		t.Errorf("errors %v", errs)
	}
}
