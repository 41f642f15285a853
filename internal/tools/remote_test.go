package tools

import (
	"context"
	"errors"
	"path/filepath"
	"strings"
	"sync"
	"testing"
)

// fakeRunner runs nothing: it answers with out and code, or waits for ctx
// when block is set, and records what it was asked.
type fakeRunner struct {
	mu    sync.Mutex
	got   []RemoteCommand
	ids   []string
	out   string
	code  int
	err   error
	block bool
}

func (f *fakeRunner) RunCommand(ctx context.Context, callID string, c RemoteCommand) (string, int, error) {
	f.mu.Lock()
	f.got = append(f.got, c)
	f.ids = append(f.ids, callID)
	f.mu.Unlock()
	if f.block {
		<-ctx.Done()
		return f.out, -1, nil
	}
	return f.out, f.code, f.err
}

// bash with a CommandRunner hands it the shell command line and words its
// result as its own commands'.
func TestBashThroughRunner(t *testing.T) {
	dir := t.TempDir()
	f := &fakeRunner{out: "hello\n", code: 3}
	env := Env{Cwd: dir, ShellCommandPrefix: "set -e", AgentDir: "/agent", ExtraEnv: []string{"PISCES_X=1"}, Commands: f}
	wantError(t, run(t, env, "bash", map[string]any{"command": "echo hello; exit 3"}), "hello\n\n\nCommand exited with code 3")
	c := f.got[0]
	if len(c.Args) != 2 || c.Args[0] != "-c" || c.Args[1] != "set -e\necho hello; exit 3" || c.Cwd != dir || c.Shell == "" {
		t.Errorf("command %+v", c)
	}
	hasPath, hasExtra := false, false
	for _, kv := range c.Env {
		hasPath = hasPath || (strings.HasPrefix(kv, "PATH=") && strings.Contains(kv, filepath.Join("/agent", "bin")))
		hasExtra = hasExtra || kv == "PISCES_X=1"
	}
	if !hasPath || !hasExtra {
		t.Errorf("env %v: want PATH with the agent's bin and the extra variables", c.Env)
	}

	f.out, f.code = "", 0
	if got := mustText(t, run(t, env, "bash", map[string]any{"command": "true"})); got != "(no output)" {
		t.Errorf("got %q", got)
	}
	f.err = errors.New("the editor could not run the command: boom")
	wantError(t, run(t, env, "bash", map[string]any{"command": "x"}), "the editor could not run the command: boom")

	f.err, f.block, f.out = nil, true, "partial\n"
	wantError(t, run(t, env, "bash", map[string]any{"command": "sleep 9", "timeout": 0.05}), "partial\n\n\nCommand timed out after 0.05 seconds")
}
