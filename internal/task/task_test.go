package task

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/pisces-agent/pisces/internal/ai"
	"github.com/pisces-agent/pisces/rpc"
)

func TestTwoItemsRunInParallel(t *testing.T) {
	rec := &recorder{}
	var started sync.WaitGroup
	started.Add(2)
	release := make(chan struct{})
	go func() { started.Wait(); close(release) }()
	var specs sync.Map
	sp := SpawnerFunc(func(ctx context.Context, spec SubagentSpec) SubagentOutcome {
		specs.Store(spec.TaskID, spec)
		started.Done()
		select {
		case <-release: // both are running at the same time
		case <-time.After(time.Minute):
			return SubagentOutcome{ExitCode: 1, Error: "items did not run in parallel"}
		}
		return SubagentOutcome{Result: json.RawMessage(`{"answer":"` + spec.TaskID + `"}`),
			Usage: ai.Usage{Input: 10, Output: 5, TotalTokens: 15, Cost: ai.Cost{Total: 0.01}}, ToolCalls: 2}
	})
	cwd := t.TempDir()
	tool := New(Options{Spawner: sp, Emit: rec.emit, Cwd: cwd, Settings: DefaultSettings(), ArtifactsDir: t.TempDir()})
	res, d := execute(t, tool, map[string]any{
		"agent":   "explore",
		"context": "We use Go.",
		"schema":  map[string]any{"properties": map[string]any{"answer": map[string]any{"type": "string"}}},
		"tasks": []map[string]any{
			{"id": "FindA", "description": "find a", "assignment": "Find A."},
			{"id": "FindB", "description": "find b", "assignment": "Find B."},
		},
	})
	if res.IsError {
		t.Fatalf("error result: %s", resultText(res))
	}
	if len(d.Results) != 2 {
		t.Fatalf("results: %+v", d.Results)
	}
	for i, want := range []string{"FindA", "FindB"} {
		r := d.Results[i]
		if r.TaskID != want || r.ID != []string{"0-FindA", "1-FindB"}[i] || r.ExitCode != 0 || r.Agent != "explore" || r.AgentSource != SourceBundled {
			t.Errorf("result %d: %+v", i, r)
		}
		if !strings.Contains(r.Output, `"answer": "`+want+`"`) || string(r.Result) != `{"answer":"`+want+`"}` {
			t.Errorf("output %d: %q / %s", i, r.Output, r.Result)
		}
		if r.Tokens != 15 || r.ToolCalls != 2 {
			t.Errorf("usage %d: %+v", i, r)
		}
	}
	if d.Usage == nil || d.Usage.TotalTokens != 30 {
		t.Errorf("total usage: %+v", d.Usage)
	}
	v, _ := specs.Load("FindA")
	spec := v.(SubagentSpec)
	if spec.Cwd != cwd || spec.Isolated || spec.ParentToolCallID != "call_1" || spec.Agent.Name != "explore" ||
		!strings.Contains(spec.Assignment, "We use Go.") || !strings.Contains(spec.Assignment, "Find A.") ||
		!strings.Contains(spec.Assignment, `"answer"`) || !strings.Contains(spec.Assignment, "submit_result") ||
		strings.Contains(spec.Assignment, "find a") {
		t.Errorf("spec: %+v", spec)
	}
	text := resultText(res)
	if !strings.Contains(text, "2 of 2 task(s) completed") || !strings.Contains(text, "## 0-FindA (explore): completed") {
		t.Errorf("text:\n%s", text)
	}
	// Events: a start and an end per item, each end after its start, tagged.
	starts := eventsOf[*SubagentStartEvent](rec.all())
	ends := eventsOf[*SubagentEndEvent](rec.all())
	if len(starts) != 2 || len(ends) != 2 {
		t.Fatalf("events: %v", rec.types())
	}
	for _, line := range rec.wire(t) {
		if !strings.Contains(line, `"parentToolCallId":"call_1"`) {
			t.Errorf("untagged event %s", line)
		}
	}
	if w := rec.wire(t)[0]; !strings.HasPrefix(w, `{"type":"subagent_start","id":"`) || !strings.Contains(w, `"agent":"explore","isolated":false`) {
		t.Errorf("wire: %s", w)
	}
	if st := tool.Stats(); st.Count != 2 || st.Tokens != 30 {
		t.Errorf("stats: %+v", st)
	}
	// Ids keep counting across calls.
	_, d2 := execute(t, tool, map[string]any{"agent": "explore", "tasks": []map[string]any{{"id": "FindA", "description": "", "assignment": "x"}}})
	if d2.Results[0].ID != "2-FindA" {
		t.Errorf("second call id: %s", d2.Results[0].ID)
	}
}

func TestConcurrencyLimit(t *testing.T) {
	var running, peak atomic.Int32
	// The first items wait until two run at once, so the limit is reached
	// whatever the scheduling; a third at the same time would raise peak.
	two := make(chan struct{})
	var twoOnce sync.Once
	sp := SpawnerFunc(func(ctx context.Context, spec SubagentSpec) SubagentOutcome {
		n := running.Add(1)
		for {
			p := peak.Load()
			if n <= p || peak.CompareAndSwap(p, n) {
				break
			}
		}
		if n >= 2 {
			twoOnce.Do(func() { close(two) })
		}
		select {
		case <-two:
		case <-time.After(time.Minute):
		}
		running.Add(-1)
		return submit("ok")
	})
	s := DefaultSettings()
	s.MaxConcurrency = 2
	tool := New(Options{ArtifactsDir: t.TempDir(), Spawner: sp, Cwd: t.TempDir(), Settings: s})
	var tasks []map[string]any
	for _, id := range []string{"A", "B", "C", "D", "E"} {
		tasks = append(tasks, map[string]any{"id": id, "description": id, "assignment": "do " + id})
	}
	_, d := execute(t, tool, map[string]any{"agent": "task", "tasks": tasks})
	if len(d.Results) != 5 || peak.Load() != 2 {
		t.Fatalf("peak %d, results %d", peak.Load(), len(d.Results))
	}
}

func TestPanicAndFailureBecomeItemFailures(t *testing.T) {
	rec := &recorder{}
	sp := SpawnerFunc(func(ctx context.Context, spec SubagentSpec) SubagentOutcome {
		switch spec.TaskID {
		case "Boom":
			panic("kaboom")
		case "Fail":
			return SubagentOutcome{ExitCode: 1, Error: "could not do it", Output: "partial notes"}
		}
		return submit("fine")
	})
	tool := New(Options{ArtifactsDir: t.TempDir(), Spawner: sp, Emit: rec.emit, Cwd: t.TempDir(), Settings: DefaultSettings()})
	res, d := execute(t, tool, map[string]any{"agent": "task", "tasks": []map[string]any{
		{"id": "Boom", "description": "", "assignment": "x"},
		{"id": "Fail", "description": "", "assignment": "x"},
		{"id": "Fine", "description": "", "assignment": "x"},
	}})
	if res.IsError {
		t.Fatal("one item succeeded; the result is not an error")
	}
	if r := d.Results[0]; r.ExitCode != 1 || !strings.Contains(r.Error, "kaboom") {
		t.Errorf("panic item: %+v", r)
	}
	if r := d.Results[1]; r.ExitCode != 1 || r.Error != "could not do it" || r.Output != "partial notes" {
		t.Errorf("failed item: %+v", r)
	}
	if r := d.Results[2]; r.ExitCode != 0 || r.Output != "fine" {
		t.Errorf("fine item: %+v", r)
	}
	if ends := eventsOf[*SubagentEndEvent](rec.all()); len(ends) != 3 {
		t.Errorf("ends: %v", rec.types())
	}
	text := resultText(res)
	if !strings.Contains(text, "failed (exit 1)") || !strings.Contains(text, "1 of 3") {
		t.Errorf("text:\n%s", text)
	}
}

func TestBadParameters(t *testing.T) {
	called := false
	sp := SpawnerFunc(func(ctx context.Context, spec SubagentSpec) SubagentOutcome { called = true; return submit("x") })
	notRepo := t.TempDir()
	s := verifySettings()
	s.Verification.Profiles = map[string]json.RawMessage{"bad": json.RawMessage(`"nope"`)}
	tool := New(Options{ArtifactsDir: t.TempDir(), Spawner: sp, Cwd: notRepo, Settings: s})
	disabled := New(Options{ArtifactsDir: t.TempDir(), Spawner: sp, Cwd: notRepo, Settings: DefaultSettings()})
	one := []map[string]any{{"id": "A", "description": "a", "assignment": "do a"}}
	cases := []struct {
		name string
		tool *Tool
		args any
		want string
	}{
		{"not an object", tool, `[1]`, "expected a JSON object"},
		{"missing agent", tool, map[string]any{"tasks": one}, `"agent" must be a string`},
		{"agent not a string", tool, map[string]any{"agent": 3, "tasks": one}, `"agent" must be a string`},
		{"tasks not an array", tool, map[string]any{"agent": "task", "tasks": "x"}, `"tasks" must be an array`},
		{"task not an object", tool, map[string]any{"agent": "task", "tasks": []any{"x"}}, "tasks[0] must be an object"},
		{"assignment not a string", tool, map[string]any{"agent": "task", "tasks": []any{map[string]any{"id": "A", "assignment": 1}}}, "tasks[0].assignment must be a string"},
		{"isolated not a boolean", tool, map[string]any{"agent": "task", "tasks": one, "isolated": "yes"}, `"isolated" must be a boolean`},
		{"schema not an object", tool, map[string]any{"agent": "task", "tasks": one, "schema": "x"}, `"schema" must be an object`},
		{"unknown agent", tool, map[string]any{"agent": "nobody", "tasks": one}, `Unknown agent "nobody". Available: explore, plan, reviewer, task.`},
		{"no tasks", tool, map[string]any{"agent": "task", "tasks": []any{}}, "No tasks provided."},
		{"missing ids", tool, map[string]any{"agent": "task", "tasks": []any{map[string]any{"assignment": "x"}, map[string]any{"id": "B", "assignment": "x"}, map[string]any{"id": " ", "assignment": "x"}}}, "Invalid tasks: Missing task ids at indexes: 0, 2"},
		{"duplicate ids", tool, map[string]any{"agent": "task", "tasks": []any{map[string]any{"id": "Foo", "assignment": "x"}, map[string]any{"id": "foo", "assignment": "x"}}}, "Duplicate task ids detected (case-insensitive): foo"},
		{"long id", tool, map[string]any{"agent": "task", "tasks": []any{map[string]any{"id": strings.Repeat("A", 49), "assignment": "x"}}}, "longer than 48"},
		{"missing assignment", tool, map[string]any{"agent": "task", "tasks": []any{map[string]any{"id": "A"}}}, "Missing assignment at indexes: 0"},
		{"verify without isolated", tool, map[string]any{"agent": "task", "tasks": one, "verify": true}, "Verification requires isolated task execution. Pass isolated: true or disable verify."},
		{"verify disabled", disabled, map[string]any{"agent": "task", "tasks": one, "isolated": true, "verify": true}, "Task verification is disabled"},
		{"verify true without a default profile", tool, map[string]any{"agent": "task", "tasks": one, "isolated": true, "verify": true}, "Verification requested but no verification profile or commands were provided."},
		{"unknown profile", tool, map[string]any{"agent": "task", "tasks": one, "isolated": true, "verify": "ci"}, `Unknown or invalid verification profile "ci".`},
		{"invalid profile", tool, map[string]any{"agent": "task", "tasks": one, "isolated": true, "verify": "bad"}, `Unknown or invalid verification profile "bad".`},
		{"lsp", tool, map[string]any{"agent": "task", "tasks": one, "isolated": true, "verify": map[string]any{"mode": "lsp", "commands": []any{}}}, "LSP-based task verification is not implemented yet"},
		{"no commands", tool, map[string]any{"agent": "task", "tasks": one, "isolated": true, "verify": map[string]any{"commands": []any{map[string]any{"name": " ", "command": "true"}}}}, "Verification requires at least one command."},
		{"bad onFailure", tool, map[string]any{"agent": "task", "tasks": one, "isolated": true, "verify": map[string]any{"commands": []any{map[string]any{"name": "a", "command": "true"}}, "onFailure": "explode"}}, `Invalid verify onFailure "explode"`},
		{"verify wrong type", tool, map[string]any{"agent": "task", "tasks": one, "isolated": true, "verify": 5}, "verify must be a boolean, a profile name or an object"},
		{"isolated outside a repository", tool, map[string]any{"agent": "task", "tasks": one, "isolated": true}, "Isolated task execution requires a git repository"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			res, d := execute(t, c.tool, c.args)
			if !res.IsError || !strings.Contains(resultText(res), c.want) {
				t.Errorf("got %v %q, want %q", res.IsError, resultText(res), c.want)
			}
			if d.Results == nil || len(d.Results) != 0 {
				t.Errorf("details: %+v", d)
			}
		})
	}
	if called {
		t.Error("a subagent ran for invalid parameters")
	}
	// verify:false is accepted on a non-isolated call.
	res, _ := execute(t, tool, map[string]any{"agent": "task", "tasks": one, "verify": false})
	if res.IsError || !called {
		t.Errorf("verify:false: %s", resultText(res))
	}
}

func TestLongOutputGoesToArtifacts(t *testing.T) {
	long := strings.Repeat("line of output\n", 1000)
	sp := SpawnerFunc(func(ctx context.Context, spec SubagentSpec) SubagentOutcome { return SubagentOutcome{Output: long} })
	dir := filepath.Join(t.TempDir(), "session")
	tool := New(Options{Spawner: sp, Cwd: t.TempDir(), Settings: DefaultSettings(), ArtifactsDir: dir})
	res, d := execute(t, tool, map[string]any{"agent": "task", "tasks": []map[string]any{{"id": "Big", "description": "", "assignment": "x"}}})
	r := d.Results[0]
	if !r.Truncated || r.OutputPath != filepath.Join(dir, "0-big.md") || len(r.Output) >= len(long) {
		t.Fatalf("result: truncated=%v path=%q len=%d", r.Truncated, r.OutputPath, len(r.Output))
	}
	if read(t, r.OutputPath) != strings.TrimSpace(long) {
		t.Error("artifact content differs")
	}
	if !strings.Contains(resultText(res), "the full text is in "+r.OutputPath) || d.ArtifactsDir != dir {
		t.Errorf("text does not reference the artifact")
	}
}

func TestCancelledCall(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	sp := SpawnerFunc(func(ctx context.Context, spec SubagentSpec) SubagentOutcome {
		cancel()
		<-ctx.Done()
		return SubagentOutcome{ExitCode: 1, Aborted: true}
	})
	s := DefaultSettings()
	s.MaxConcurrency = 1
	tool := New(Options{ArtifactsDir: t.TempDir(), Spawner: sp, Cwd: t.TempDir(), Settings: s})
	_, d := executeCtx(t, ctx, tool, map[string]any{"agent": "task", "tasks": []map[string]any{
		{"id": "A", "description": "", "assignment": "x"}, {"id": "B", "description": "", "assignment": "x"}}})
	for _, r := range d.Results {
		if !r.Aborted || r.AbortReason != "cancelled" || r.ExitCode == 0 {
			t.Errorf("%+v", r)
		}
	}
}

func TestIsolatedPatchAppliesToParent(t *testing.T) {
	repo := newRepo(t)
	// Uncommitted parent changes: a tracked edit and an untracked file.
	write(t, filepath.Join(repo, "a.txt"), "one\nTWO\nthree\n")
	write(t, filepath.Join(repo, "notes", "untracked.md"), "draft\n")
	write(t, filepath.Join(repo, "ignored.log"), "noise\n")
	rec := &recorder{}
	var wtDir string
	sp := SpawnerFunc(func(ctx context.Context, spec SubagentSpec) SubagentOutcome {
		wtDir = spec.Cwd
		if got := read(t, filepath.Join(spec.Cwd, "a.txt")); got != "one\nTWO\nthree\n" {
			return SubagentOutcome{ExitCode: 1, Error: "worktree lacks the tracked change: " + got}
		}
		if got := read(t, filepath.Join(spec.Cwd, "notes", "untracked.md")); got != "draft\n" {
			return SubagentOutcome{ExitCode: 1, Error: "worktree lacks the untracked file"}
		}
		if _, err := os.Stat(filepath.Join(spec.Cwd, "ignored.log")); err == nil {
			return SubagentOutcome{ExitCode: 1, Error: "ignored file copied"}
		}
		write(t, filepath.Join(spec.Cwd, "a.txt"), "one\nTWO\nthree\nfour\n")
		write(t, filepath.Join(spec.Cwd, "notes", "untracked.md"), "draft\nmore\n")
		write(t, filepath.Join(spec.Cwd, "new", "file.go"), "package x\n")
		os.Remove(filepath.Join(spec.Cwd, "sub", "b.txt"))
		write(t, filepath.Join(spec.Cwd, "build.log"), "ignored output\n")
		return submit("edited")
	})
	arts := t.TempDir()
	tool := New(Options{Spawner: sp, Emit: rec.emit, Cwd: repo, Settings: DefaultSettings(), ArtifactsDir: arts})
	res, d := execute(t, tool, map[string]any{"agent": "task", "isolated": true,
		"tasks": []map[string]any{{"id": "Edit", "description": "edit", "assignment": "edit things"}}})
	r := d.Results[0]
	if res.IsError || r.ExitCode != 0 {
		t.Fatalf("%s", resultText(res))
	}
	if r.PatchPath != filepath.Join(arts, "0-edit.patch") || r.Patch == "" || r.Patch != read(t, r.PatchPath) {
		t.Fatalf("patch: %q %q", r.PatchPath, r.Patch)
	}
	if strings.Contains(r.Patch, "TWO") && !strings.Contains(r.Patch, " TWO") {
		t.Errorf("patch re-applies the parent's own change:\n%s", r.Patch)
	}
	if strings.Contains(r.Patch, "build.log") {
		t.Errorf("patch has an ignored file:\n%s", r.Patch)
	}
	if !strings.Contains(resultText(res), "git apply "+r.PatchPath) {
		t.Errorf("text:\n%s", resultText(res))
	}
	if _, err := os.Stat(wtDir); !os.IsNotExist(err) {
		t.Errorf("worktree directory left behind: %s", wtDir)
	}
	assertClean(t, repo)
	// The patch applies to the parent's tree as it is (with its own changes).
	run(t, repo, "git", "apply", "--check", r.PatchPath)
	run(t, repo, "git", "apply", r.PatchPath)
	if got := read(t, filepath.Join(repo, "a.txt")); got != "one\nTWO\nthree\nfour\n" {
		t.Errorf("a.txt after apply: %q", got)
	}
	if got := read(t, filepath.Join(repo, "notes", "untracked.md")); got != "draft\nmore\n" {
		t.Errorf("untracked.md after apply: %q", got)
	}
	if got := read(t, filepath.Join(repo, "new", "file.go")); got != "package x\n" {
		t.Errorf("new file: %q", got)
	}
	if _, err := os.Stat(filepath.Join(repo, "sub", "b.txt")); !os.IsNotExist(err) {
		t.Error("deleted file still present")
	}
	if w := rec.wire(t); len(w) != 2 || !strings.Contains(w[0], `"isolated":true`) {
		t.Errorf("events: %v", w)
	}
}

func TestIsolatedFromSubdirectoryAndNoChanges(t *testing.T) {
	repo := newRepo(t)
	var cwd string
	sp := SpawnerFunc(func(ctx context.Context, spec SubagentSpec) SubagentOutcome {
		cwd = spec.Cwd
		if _, err := os.Stat(filepath.Join(spec.Cwd, "b.txt")); err != nil {
			return SubagentOutcome{ExitCode: 1, Error: "not in the subdirectory"}
		}
		return submit("looked around")
	})
	tool := New(Options{ArtifactsDir: t.TempDir(), Spawner: sp, Cwd: filepath.Join(repo, "sub"), Settings: DefaultSettings()})
	res, d := execute(t, tool, map[string]any{"agent": "explore", "isolated": true,
		"tasks": []map[string]any{{"id": "Look", "description": "", "assignment": "look"}}})
	r := d.Results[0]
	if r.ExitCode != 0 || r.PatchPath != "" || r.Patch != "" || filepath.Base(cwd) != "sub" {
		t.Fatalf("%+v cwd=%s", r, cwd)
	}
	if !strings.Contains(resultText(res), "Patch: none (no changes)") {
		t.Errorf("text:\n%s", resultText(res))
	}
	assertClean(t, repo)
}

func TestWorktreeCleanupOnFailurePanicAndCancel(t *testing.T) {
	repo := newRepo(t)
	var mu sync.Mutex
	var dirs []string
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	sp := SpawnerFunc(func(ctx context.Context, spec SubagentSpec) SubagentOutcome {
		mu.Lock()
		dirs = append(dirs, spec.Cwd)
		mu.Unlock()
		write(t, filepath.Join(spec.Cwd, "a.txt"), "changed by "+spec.TaskID)
		switch spec.TaskID {
		case "Panics":
			panic("subagent exploded")
		case "Fails":
			return SubagentOutcome{ExitCode: 2, Error: "gave up"}
		case "Cancelled":
			cancel()
			<-ctx.Done()
			return SubagentOutcome{ExitCode: 1, Aborted: true, AbortReason: "cancelled"}
		}
		return submit("ok")
	})
	s := DefaultSettings()
	s.MaxConcurrency = 1
	tool := New(Options{ArtifactsDir: t.TempDir(), Spawner: sp, Cwd: repo, Settings: s})
	_, d := executeCtx(t, ctx, tool, map[string]any{"agent": "task", "isolated": true, "tasks": []map[string]any{
		{"id": "Panics", "description": "", "assignment": "x"},
		{"id": "Fails", "description": "", "assignment": "x"},
		{"id": "Cancelled", "description": "", "assignment": "x"},
	}})
	if r := d.Results[0]; r.ExitCode != 1 || !strings.Contains(r.Error, "subagent exploded") || r.PatchPath != "" {
		t.Errorf("panic: %+v", r)
	}
	if r := d.Results[1]; r.ExitCode != 2 || r.PatchPath != "" {
		t.Errorf("fail: %+v", r)
	}
	if r := d.Results[2]; !r.Aborted || r.PatchPath != "" {
		t.Errorf("cancel: %+v", r)
	}
	for _, dir := range dirs {
		if _, err := os.Stat(dir); !os.IsNotExist(err) {
			t.Errorf("left behind: %s", dir)
		}
	}
	assertClean(t, repo)
	if got := read(t, filepath.Join(repo, "a.txt")); got != "one\ntwo\nthree\n" {
		t.Errorf("parent tree changed: %q", got)
	}
}

func TestIsolatedRepoWithoutCommits(t *testing.T) {
	requireGit(t)
	dir := t.TempDir()
	run(t, dir, "git", "init", "-q")
	tool := New(Options{ArtifactsDir: t.TempDir(), Spawner: SpawnerFunc(func(context.Context, SubagentSpec) SubagentOutcome { return submit("x") }), Cwd: dir, Settings: DefaultSettings()})
	res, _ := execute(t, tool, map[string]any{"agent": "task", "isolated": true, "tasks": []map[string]any{{"id": "A", "description": "", "assignment": "x"}}})
	if !res.IsError || !strings.Contains(resultText(res), "at least one commit") {
		t.Errorf("%s", resultText(res))
	}
}

func TestSessionBudgetRefusesSpawns(t *testing.T) {
	rec := &recorder{}
	s := DefaultSettings()
	s.MaxConcurrency = 1
	s.Budget.Subagents = 1
	session := NewController(ControllerOptions{Scope: ScopeSession, Limits: s.Budget, Emit: rec.emit})
	runs := 0
	sp := SpawnerFunc(func(ctx context.Context, spec SubagentSpec) SubagentOutcome { runs++; return submit("done") })
	tool := New(Options{ArtifactsDir: t.TempDir(), Spawner: sp, Emit: rec.emit, Cwd: t.TempDir(), Settings: s, SessionBudget: session})
	_, d := execute(t, tool, map[string]any{"agent": "task", "tasks": []map[string]any{
		{"id": "First", "description": "", "assignment": "x"}, {"id": "Second", "description": "", "assignment": "x"}}})
	if runs != 1 {
		t.Fatalf("runs: %d", runs)
	}
	if r := d.Results[0]; r.ExitCode != 0 || r.Aborted {
		t.Errorf("first: %+v", r)
	}
	r := d.Results[1]
	if !r.Aborted || r.AbortReason != "budget_exceeded" || r.ExitCode != 1 || r.Error != "Budget exceeded (subagents)" {
		t.Errorf("second: %+v", r)
	}
	// Order: start, budget_exceeded (the spawn reached the limit), end; no
	// start or end for the refused item.
	want := []string{"budget_exceeded", "subagent_start", "subagent_end"}
	if got := rec.types(); strings.Join(got, ",") != strings.Join(want, ",") {
		t.Errorf("events: %v", got)
	}
	if err := session.PromptError(); err == nil || err.Error() != "Session budget exceeded (subagents)" {
		t.Errorf("prompt error: %v", err)
	}
}

func TestTaskBudgetFromUsage(t *testing.T) {
	rec := &recorder{}
	s := DefaultSettings()
	s.MaxConcurrency = 1
	s.TaskBudget.TotalTokens = 100
	sp := SpawnerFunc(func(ctx context.Context, spec SubagentSpec) SubagentOutcome {
		return SubagentOutcome{Result: json.RawMessage(`"ok"`), Usage: ai.Usage{Input: 40, Output: 5, TotalTokens: 45}}
	})
	tool := New(Options{ArtifactsDir: t.TempDir(), Spawner: sp, Emit: rec.emit, Cwd: t.TempDir(), Settings: s})
	_, d := execute(t, tool, map[string]any{"agent": "task", "tasks": []map[string]any{
		{"id": "A", "description": "", "assignment": "x"}, {"id": "B", "description": "", "assignment": "x"},
		{"id": "C", "description": "", "assignment": "x"}, {"id": "D", "description": "", "assignment": "x"}}})
	// A: 45, B: 90 (warning), C: 135 (exceeded), D refused.
	got := []string{}
	for _, r := range d.Results {
		got = append(got, statusLabel(r))
	}
	if strings.Join(got, ",") != "completed,completed,completed,aborted (budget exceeded)" {
		t.Errorf("statuses: %v", got)
	}
	w := eventsOf[*BudgetWarningEvent](rec.all())
	x := eventsOf[*BudgetExceededEvent](rec.all())
	if len(w) != 1 || len(x) != 1 {
		t.Fatalf("events: %v", rec.types())
	}
	if w[0].Scope != "task" || w[0].Snapshot.Status != "warning" || w[0].Snapshot.Reason != "total_tokens" || w[0].Snapshot.TotalTokens != 90 || w[0].ParentToolCallID != "call_1" {
		t.Errorf("warning: %+v", w[0])
	}
	if x[0].Snapshot.Status != "exceeded" || x[0].Snapshot.TotalTokens != 135 || x[0].Snapshot.Subagents != 3 {
		t.Errorf("exceeded: %+v", x[0])
	}
	wantOrder := "subagent_start,subagent_end,subagent_start,budget_warning,subagent_end,subagent_start,budget_exceeded,subagent_end"
	if got := strings.Join(rec.types(), ","); got != wantOrder {
		t.Errorf("order:\n%s\nwant\n%s", got, wantOrder)
	}
}

func TestSubagentBudgetIsPassedOn(t *testing.T) {
	s := DefaultSettings()
	s.SubagentBudget.ToolCalls = 7
	var got *Limits
	sp := SpawnerFunc(func(ctx context.Context, spec SubagentSpec) SubagentOutcome {
		got = spec.Budget
		return SubagentOutcome{ExitCode: 1, Aborted: true, AbortReason: AbortReasonBudgetExceeded, Error: "Budget exceeded (tool_calls)"}
	})
	tool := New(Options{ArtifactsDir: t.TempDir(), Spawner: sp, Cwd: t.TempDir(), Settings: s})
	_, d := execute(t, tool, map[string]any{"agent": "task", "tasks": []map[string]any{{"id": "A", "description": "", "assignment": "x"}}})
	if got == nil || got.ToolCalls != 7 {
		t.Fatalf("budget: %+v", got)
	}
	if r := d.Results[0]; !r.Aborted || r.AbortReason != "budget_exceeded" {
		t.Errorf("%+v", r)
	}
	// No subagent budget configured: nil.
	tool = New(Options{ArtifactsDir: t.TempDir(), Spawner: sp, Cwd: t.TempDir(), Settings: DefaultSettings()})
	execute(t, tool, map[string]any{"agent": "task", "tasks": []map[string]any{{"id": "A", "description": "", "assignment": "x"}}})
	if got != nil {
		t.Errorf("budget without limits: %+v", got)
	}
}

func TestProgressUpdates(t *testing.T) {
	sp := SpawnerFunc(func(ctx context.Context, spec SubagentSpec) SubagentOutcome { return submit("x") })
	tool := New(Options{ArtifactsDir: t.TempDir(), Spawner: sp, Cwd: t.TempDir(), Settings: DefaultSettings()})
	var mu sync.Mutex
	var updates []Progress
	args := mustJSON(t, map[string]any{"agent": "task", "tasks": []map[string]any{{"id": "A", "description": "", "assignment": "x"}, {"id": "B", "description": "", "assignment": "x"}}})
	_, err := tool.Execute(context.Background(), toolsCall(args, func(p Progress) {
		mu.Lock()
		updates = append(updates, p)
		mu.Unlock()
	}))
	if err != nil {
		t.Fatal(err)
	}
	if len(updates) < 3 || updates[0].Progress[0].Status != "pending" {
		t.Fatalf("updates: %+v", updates)
	}
	last := updates[len(updates)-1]
	for _, p := range last.Progress {
		if p.Status != "completed" {
			t.Errorf("last progress: %+v", last)
		}
	}
}

func TestEventsEncodeWithTypeFirst(t *testing.T) {
	for _, ev := range []rpc.Event{&SubagentStartEvent{ID: "0-A", Agent: "task"}, &BudgetWarningEvent{Scope: "session"}, &TodoReminderEvent{}} {
		b, err := rpc.EncodeEvent(ev)
		if err != nil || !strings.HasPrefix(string(b), `{"type":"`+ev.EventType()+`"`) {
			t.Errorf("%s: %s %v", ev.EventType(), b, err)
		}
	}
}

func TestDeclarationAndOddOutcomes(t *testing.T) {
	sp := SpawnerFunc(func(ctx context.Context, spec SubagentSpec) SubagentOutcome {
		if spec.TaskID == "Invalid" {
			return SubagentOutcome{Result: json.RawMessage(`{not json`)}
		}
		return SubagentOutcome{Aborted: true} // aborted with exit code 0: still a failure
	})
	tool := New(Options{ArtifactsDir: t.TempDir(), Spawner: sp, Cwd: t.TempDir(), Settings: DefaultSettings()})
	if tool.Name() != "task" || !json.Valid(tool.Parameters()) || !strings.Contains(tool.Description(), "- explore: ") {
		t.Fatal("declaration")
	}
	_, d := execute(t, tool, map[string]any{"agent": "task", "tasks": []map[string]any{
		{"id": "Invalid", "description": "", "assignment": "x"}, {"id": "Aborted", "description": "", "assignment": "x"}}})
	if r := d.Results[0]; r.ExitCode != 0 || r.Output != "{not json" || r.Result != nil {
		t.Errorf("%+v", r)
	}
	if r := d.Results[1]; r.ExitCode != 1 || !r.Aborted {
		t.Errorf("%+v", r)
	}
}
