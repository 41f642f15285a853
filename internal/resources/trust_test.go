package resources

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"sync"
	"testing"
	"time"
)

func boolPtr(b bool) *bool { return &b }

// asker records calls and answers as told.
type asker struct {
	mu               sync.Mutex
	calls            int
	asked            []string
	answer, answered bool
}

func (a *asker) ask(_ context.Context, project string) (bool, bool) {
	a.mu.Lock()
	defer a.mu.Unlock()
	a.calls++
	a.asked = append(a.asked, project)
	return a.answer, a.answered
}

// project returns a directory with a project resource.
func project(t *testing.T) string {
	t.Helper()
	p := t.TempDir()
	writeFiles(t, p, map[string]string{".pisces/prompts/x.md": "x"})
	return p
}

func TestTrustDecide(t *testing.T) {
	ctx := context.Background()
	agentDir := t.TempDir()
	start := project(t)

	// The flags win and are not stored; nobody is asked.
	a := &asker{answer: false, answered: true}
	if d, _ := NewTrustDecider(agentDir, boolPtr(true), start).Decide(ctx, start, a.ask); !d.Trusted || d.Source != TrustFromFlag || a.calls != 0 {
		t.Fatalf("--approve: %+v", d)
	}
	if d, _ := NewTrustDecider(agentDir, boolPtr(false), start).Decide(ctx, start, a.ask); d.Trusted || d.Source != TrustFromFlag || a.calls != 0 {
		t.Fatalf("--no-approve: %+v", d)
	}
	if _, ok := NewTrustStore(agentDir).Get(start); ok {
		t.Fatal("flag stored")
	}

	// No answer (timeout): refused, not stored; this process does not ask
	// again, the next one does.
	dec := NewTrustDecider(agentDir, nil, start)
	a = &asker{answered: false, answer: true}
	d, err := dec.Decide(ctx, start, a.ask)
	if err != nil || d.Trusted || d.Source != TrustNoAnswer || a.calls != 1 {
		t.Fatalf("timeout: %+v %v", d, err)
	}
	if d, _ := dec.Decide(ctx, start, a.ask); d.Source != TrustNoAnswer || a.calls != 1 {
		t.Fatalf("asked again in the same process: %+v", d)
	}
	if _, ok := NewTrustStore(agentDir).Get(start); ok {
		t.Fatal("timeout stored")
	}
	dec = NewTrustDecider(agentDir, nil, start)
	// Nobody to ask: refused, and a surface that can ask asks later.
	if d, _ := dec.Decide(ctx, start, nil); d.Trusted || d.Source != TrustCannotAsk {
		t.Fatalf("nil ask: %+v", d)
	}
	if _, ok := dec.Known(start); ok {
		t.Fatal("no-ask remembered")
	}

	// A real answer is stored, and used by other processes.
	a = &asker{answer: true, answered: true}
	d, err = dec.Decide(ctx, start, a.ask)
	if err != nil || !d.Trusted || d.Source != TrustFromAnswer {
		t.Fatalf("answer: %+v %v", d, err)
	}
	a2 := &asker{answer: false, answered: true}
	d, _ = NewTrustDecider(agentDir, nil, "").Decide(ctx, start, a2.ask)
	if !d.Trusted || d.Source != TrustFromStore || a2.calls != 0 {
		t.Fatalf("stored: %+v, asked %d", d, a2.calls)
	}
	// --no-approve still wins over the stored answer, without changing it.
	if d, _ := NewTrustDecider(agentDir, boolPtr(false), start).Decide(ctx, start, nil); d.Trusted {
		t.Fatal("flag over store")
	}
	if e, _ := NewTrustStore(agentDir).Get(start); !e.Trusted {
		t.Fatal("flag changed the store")
	}

	// A stored refusal is honoured.
	other := project(t)
	if d, _ := dec.Decide(ctx, other, (&asker{answer: false, answered: true}).ask); d.Trusted {
		t.Fatal("refusal")
	}
	if d, _ := dec.Decide(ctx, other, (&asker{answer: true, answered: true}).ask); d.Trusted || d.Source != TrustFromStore {
		t.Fatal("stored refusal not used")
	}
}

// Trust is decided per directory: --approve covers the start directory
// only, --no-approve every directory.
func TestTrustPerDirectory(t *testing.T) {
	ctx := context.Background()
	agentDir := t.TempDir()
	start, other := project(t), project(t)
	a := &asker{answer: false, answered: true}
	dec := NewTrustDecider(agentDir, boolPtr(true), start)
	if d, _ := dec.Decide(ctx, start, a.ask); !d.Trusted {
		t.Fatal("start dir under --approve")
	}
	if d, _ := dec.Decide(ctx, other, a.ask); d.Trusted || d.Source != TrustFromAnswer || a.calls != 1 || a.asked[0] != other {
		t.Fatalf("other dir under --approve: %+v, asked %v", d, a.asked)
	}
	dec = NewTrustDecider(t.TempDir(), boolPtr(false), start)
	if d, _ := dec.Decide(ctx, project(t), a.ask); d.Trusted || d.Source != TrustFromFlag || a.calls != 1 {
		t.Fatalf("other dir under --no-approve: %+v", d)
	}
}

// Questions about one directory asked at the same time share one answer.
func TestTrustConcurrentQuestions(t *testing.T) {
	dir := project(t)
	dec := NewTrustDecider(t.TempDir(), nil, "")
	release := make(chan struct{})
	started := make(chan struct{})
	var calls int
	ask := func(ctx context.Context, _ string) (bool, bool) {
		calls++
		close(started)
		<-release
		return true, true
	}
	first := make(chan TrustDecision)
	go func() {
		d, _ := dec.Decide(context.Background(), dir, ask)
		first <- d
	}()
	<-started
	second := make(chan TrustDecision)
	go func() {
		d, _ := dec.Decide(context.Background(), dir, ask)
		second <- d
	}()
	close(release)
	if d1, d2 := <-first, <-second; !d1.Trusted || !d2.Trusted || calls != 1 {
		t.Fatalf("%+v %+v, %d questions", d1, d2, calls)
	}
}

func TestTrustFile(t *testing.T) {
	agentDir := filepath.Join(t.TempDir(), "nested", "agent") // created on write
	project := t.TempDir()
	s := NewTrustStore(agentDir)
	fixed := time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)
	s.now = func() time.Time { return fixed }
	if err := s.Set(project, true); err != nil {
		t.Fatal(err)
	}
	data, err := os.ReadFile(filepath.Join(agentDir, TrustFileName))
	if err != nil {
		t.Fatal(err)
	}
	var f struct {
		Version  int
		Projects map[string]struct {
			Trusted bool
			Time    string
		}
	}
	if err := json.Unmarshal(data, &f); err != nil {
		t.Fatal(err)
	}
	e, ok := f.Projects[ProjectKey(project)]
	if f.Version != 1 || !ok || !e.Trusted || e.Time != "2026-03-01T12:00:00Z" {
		t.Errorf("file %s", data)
	}
	if st, err := os.Stat(s.Path()); err != nil || st.Mode().Perm() != 0o600 {
		t.Errorf("mode %v %v", st.Mode(), err)
	}

	// Relative and symlinked paths are the same project.
	link := filepath.Join(t.TempDir(), "link")
	if err := os.Symlink(project, link); err != nil {
		t.Fatal(err)
	}
	if e, ok := s.Get(link); !ok || !e.Trusted {
		t.Error("symlink not resolved")
	}
	if err := s.Forget(project); err != nil {
		t.Fatal(err)
	}
	if _, ok := s.Get(project); ok {
		t.Error("forgotten")
	}

	// A corrupt file reads as empty and is replaced on the next answer.
	if err := os.WriteFile(s.Path(), []byte("{garbage"), 0o600); err != nil {
		t.Fatal(err)
	}
	if _, ok := s.Get(project); ok {
		t.Error("corrupt file gave an answer")
	}
	if err := s.Set(project, false); err != nil {
		t.Fatal(err)
	}
	if e, ok := s.Get(project); !ok || e.Trusted {
		t.Error("after repair")
	}
	entries, keys, err := s.List()
	if err != nil || len(keys) != 1 || entries[keys[0]].Trusted {
		t.Errorf("List %v %v %v", entries, keys, err)
	}
}

func TestTrustConcurrentWriters(t *testing.T) {
	agentDir := t.TempDir()
	var wg sync.WaitGroup
	projects := make([]string, 10)
	for i := range projects {
		projects[i] = t.TempDir()
	}
	for _, p := range projects {
		wg.Add(1)
		go func() {
			defer wg.Done()
			// One store shared by goroutines: its mutex serialises the
			// read-modify-write, so no answer is lost.
			if err := sharedStore(agentDir).Set(p, true); err != nil {
				t.Error(err)
			}
		}()
	}
	wg.Wait()
	_, keys, err := sharedStore(agentDir).List()
	if err != nil || len(keys) != len(projects) {
		t.Errorf("%d of %d stored (%v)", len(keys), len(projects), err)
	}
}

var (
	storesMu sync.Mutex
	stores   = map[string]*TrustStore{}
)

func sharedStore(dir string) *TrustStore {
	storesMu.Lock()
	defer storesMu.Unlock()
	if s := stores[dir]; s != nil {
		return s
	}
	s := NewTrustStore(dir)
	stores[dir] = s
	return s
}

func TestHasProjectResources(t *testing.T) {
	ctx := context.Background()
	empty := t.TempDir()
	a := &asker{answer: true, answered: true}
	dec := NewTrustDecider(t.TempDir(), nil, "")
	if d, err := dec.Decide(ctx, empty, a.ask); err != nil || d.Source != TrustNotRequired || d.Trusted || a.calls != 0 {
		t.Fatalf("no resources: %+v", d)
	}
	// Every file under .pisces/ is a reason to ask; context files and
	// hidden files are not.
	for _, f := range []string{
		".pisces/extensions/gate.sh", ".pisces/prompts/p.md", ".pisces/skills/s/SKILL.md",
		".pisces/rules/r.md", ".pisces/agents/explore.md", ".pisces/settings.json",
		".pisces/mcp.json", ".pisces/SYSTEM.md", ".pisces/APPEND_SYSTEM.md", ".pisces/anything-else",
		".cursor/rules/r.mdc", ".clinerules",
		// pi's project directory: nothing loads from it, but it is a
		// reason to ask as .pisces/ is.
		".pi/extensions/gate.ts", ".pi/mcp.json", ".pi/settings.json", ".pi/prompts/p.md",
		".pi/agent/extensions/x.ts",
	} {
		dir := t.TempDir()
		writeFiles(t, dir, map[string]string{f: "x"})
		if !HasProjectResources(dir, "") {
			t.Errorf("%s is no reason to ask", f)
		}
	}
	if HasProjectResources("", "") {
		t.Error("no directory")
	}
	if _, cwd := fixture(t); !HasProjectResources(cwd, "") {
		t.Error("fixture project")
	}
	for _, f := range []string{"AGENTS.md", "CLAUDE.md", ".pisces/.hidden", ".pisces/prompts/.keep", ".pi/.hidden", ".pi/prompts/.keep"} {
		dir := t.TempDir()
		writeFiles(t, dir, map[string]string{f: "x"})
		if HasProjectResources(dir, "") {
			t.Errorf("%s is a reason to ask", f)
		}
	}
	// The agent dir (~/.pisces/agent when running in the home directory)
	// is not a project resource.
	home := t.TempDir()
	writeFiles(t, home, map[string]string{".pisces/agent/settings.json": "{}", ".pisces/agent/extensions/x": "x"})
	if HasProjectResources(home, filepath.Join(home, ".pisces", "agent")) {
		t.Error("the agent dir counted as project resources")
	}
	if !HasProjectResources(home, filepath.Join(t.TempDir(), "agent")) {
		t.Error("a repository's .pisces/agent is no reason to ask")
	}
	// Nor is pi's agent dir, ~/.pi/agent, in the home directory.
	t.Setenv("HOME", home)
	writeFiles(t, home, map[string]string{".pi/agent/settings.json": "{}", ".pi/agent/extensions/x.ts": "x"})
	if HasProjectResources(home, filepath.Join(home, ".pisces", "agent")) {
		t.Error("pi's agent dir counted as project resources")
	}
	writeFiles(t, home, map[string]string{".pi/mcp.json": "{}"})
	if !HasProjectResources(home, filepath.Join(home, ".pisces", "agent")) {
		t.Error("~/.pi/mcp.json beside pi's agent dir is no reason to ask")
	}
	if title, msg := TrustQuestion(home); title == "" || msg == "" {
		t.Error("question")
	}
}

func TestTrustedLoadEndToEnd(t *testing.T) {
	agentDir, cwd := fixture(t)
	never := func(context.Context, string) (bool, bool) { return false, false } // a client that never answers
	d, _ := NewTrustDecider(t.TempDir(), nil, "").Decide(context.Background(), cwd, never)
	set := Load(Options{AgentDir: agentDir, Cwd: cwd, Trusted: d.Trusted})
	for _, c := range set.Commands() {
		if c.SourceInfo.Scope == ScopeProject {
			t.Errorf("project command loaded without trust: %s", c.Name)
		}
	}
	d, _ = NewTrustDecider(t.TempDir(), boolPtr(true), cwd).Decide(context.Background(), cwd, nil)
	set = Load(Options{AgentDir: agentDir, Cwd: cwd, Trusted: d.Trusted})
	if set.Skills.Find("deploy") == nil {
		t.Error("project skill missing when trusted")
	}
}
