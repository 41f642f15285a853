package task

import (
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/pisces-agent/pisces/internal/testenv"
	"github.com/pisces-agent/pisces/internal/tools"
	"github.com/pisces-agent/pisces/rpc"
)

// recorder collects emitted events.
type recorder struct {
	mu     sync.Mutex
	events []rpc.Event
}

func (r *recorder) emit(ev rpc.Event) {
	r.mu.Lock()
	r.events = append(r.events, ev)
	r.mu.Unlock()
}

func (r *recorder) all() []rpc.Event {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]rpc.Event(nil), r.events...)
}

func (r *recorder) types() []string {
	var out []string
	for _, ev := range r.all() {
		out = append(out, ev.EventType())
	}
	return out
}

// wire returns the events as JSON lines.
func (r *recorder) wire(t *testing.T) []string {
	t.Helper()
	var out []string
	for _, ev := range r.all() {
		b, err := rpc.EncodeEvent(ev)
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, string(b))
	}
	return out
}

func mustJSON(t *testing.T, v any) json.RawMessage {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func execute(t *testing.T, tool *Tool, args any) (tools.Result, Details) {
	t.Helper()
	return executeCtx(t, context.Background(), tool, args)
}

func executeCtx(t *testing.T, ctx context.Context, tool *Tool, args any) (tools.Result, Details) {
	t.Helper()
	var raw json.RawMessage
	if s, ok := args.(string); ok {
		raw = json.RawMessage(s)
	} else {
		raw = mustJSON(t, args)
	}
	res, err := tool.Execute(ctx, tools.Call{ID: "call_1", Args: raw})
	if err != nil {
		t.Fatal(err)
	}
	var d Details
	if len(res.Details) > 0 {
		if err := json.Unmarshal(res.Details, &d); err != nil {
			t.Fatalf("details: %v\n%s", err, res.Details)
		}
	}
	return res, d
}

func resultText(r tools.Result) string {
	var b strings.Builder
	for _, c := range r.Content {
		b.WriteString(c.Text)
	}
	return b.String()
}

// submit is an outcome with a string result.
func submit(s string) SubagentOutcome {
	return SubagentOutcome{Result: json.RawMessage(`"` + s + `"`)}
}

func requireGit(t *testing.T) {
	t.Helper()
	testenv.LookPath(t, "git")
}

func run(t *testing.T, dir string, name string, args ...string) string {
	t.Helper()
	cmd := exec.Command(name, args...)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "GIT_AUTHOR_NAME=t", "GIT_AUTHOR_EMAIL=t@example.com",
		"GIT_COMMITTER_NAME=t", "GIT_COMMITTER_EMAIL=t@example.com", "GIT_CONFIG_NOSYSTEM=1")
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("%s %v: %v\n%s", name, args, err, out)
	}
	return string(out)
}

func write(t *testing.T, path, content string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
}

func read(t *testing.T, path string) string {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// newRepo makes a git repository with one commit.
func newRepo(t *testing.T) string {
	t.Helper()
	requireGit(t)
	dir := t.TempDir()
	run(t, dir, "git", "init", "-q", "-b", "main")
	write(t, filepath.Join(dir, "a.txt"), "one\ntwo\nthree\n")
	write(t, filepath.Join(dir, "sub", "b.txt"), "bee\n")
	write(t, filepath.Join(dir, ".gitignore"), "*.log\n")
	run(t, dir, "git", "add", "-A")
	run(t, dir, "git", "commit", "-q", "-m", "init")
	return dir
}

// assertClean checks that no worktree or branch was left behind.
func assertClean(t *testing.T, repo string) {
	t.Helper()
	list := run(t, repo, "git", "worktree", "list", "--porcelain")
	if n := strings.Count(list, "worktree "); n != 1 {
		t.Errorf("worktrees left behind:\n%s", list)
	}
	branches := strings.TrimSpace(run(t, repo, "git", "branch", "--list", "--format=%(refname:short)"))
	if branches != "main" {
		t.Errorf("branches: %q", branches)
	}
	entries, _ := os.ReadDir(filepath.Join(repo, ".git", "worktrees"))
	if len(entries) != 0 {
		t.Errorf(".git/worktrees not empty: %v", entries)
	}
}

func verifySettings() Settings {
	s := DefaultSettings()
	s.Verification.Enabled = true
	return s
}

func eventsOf[T rpc.Event](evs []rpc.Event) []T {
	var out []T
	for _, ev := range evs {
		if e, ok := ev.(T); ok {
			out = append(out, e)
		}
	}
	return out
}
