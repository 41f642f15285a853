package resources

import (
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
	calls            int
	answer, answered bool
}

func (a *asker) ask() (bool, bool) {
	a.calls++
	return a.answer, a.answered
}

func TestTrustDecide(t *testing.T) {
	agentDir := t.TempDir()
	project := t.TempDir()
	s := NewTrustStore(agentDir)

	// The flag wins and is not stored; nobody is asked.
	a := &asker{answer: false, answered: true}
	if !s.Decide(project, boolPtr(true), a.ask) || a.calls != 0 {
		t.Fatal("--approve")
	}
	if s.Decide(project, boolPtr(false), a.ask) || a.calls != 0 {
		t.Fatal("--no-approve")
	}
	if _, ok := s.Get(project); ok {
		t.Fatal("flag stored")
	}

	// No answer (timeout): refused, not remembered; the next run asks again.
	a = &asker{answered: false, answer: true}
	d, err := s.DecideDetailed(project, nil, a.ask)
	if err != nil || d.Trusted || d.Source != TrustNoAnswer || a.calls != 1 {
		t.Fatalf("timeout: %+v %v", d, err)
	}
	if _, ok := s.Get(project); ok {
		t.Fatal("timeout stored")
	}
	// Nobody to ask: refused.
	if d, _ := s.DecideDetailed(project, nil, nil); d.Trusted || d.Source != TrustCannotAsk {
		t.Fatalf("nil ask: %+v", d)
	}

	// A real answer is remembered, also across store instances.
	a = &asker{answer: true, answered: true}
	d, err = s.DecideDetailed(project, nil, a.ask)
	if err != nil || !d.Trusted || d.Source != TrustFromAnswer {
		t.Fatalf("answer: %+v %v", d, err)
	}
	a2 := &asker{answer: false, answered: true}
	d, _ = NewTrustStore(agentDir).DecideDetailed(project, nil, a2.ask)
	if !d.Trusted || d.Source != TrustFromStore || a2.calls != 0 {
		t.Fatalf("stored: %+v, asked %d", d, a2.calls)
	}
	// The flag still wins over the stored answer, without changing it.
	if s.Decide(project, boolPtr(false), nil) {
		t.Fatal("flag over store")
	}
	if e, _ := s.Get(project); !e.Trusted {
		t.Fatal("flag changed the store")
	}

	// A stored refusal is honoured.
	other := t.TempDir()
	if s.Decide(other, nil, (&asker{answer: false, answered: true}).ask) {
		t.Fatal("refusal")
	}
	if s.Decide(other, nil, (&asker{answer: true, answered: true}).ask) {
		t.Fatal("stored refusal not used")
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

func TestDecideFor(t *testing.T) {
	s := NewTrustStore(t.TempDir())
	empty := t.TempDir()
	a := &asker{answer: true, answered: true}
	d, err := s.DecideFor(empty, nil, a.ask)
	if err != nil || d.Source != TrustNotRequired || d.Trusted || a.calls != 0 {
		t.Fatalf("no resources: %+v", d)
	}
	if d, _ := s.DecideFor(empty, boolPtr(true), nil); !d.Trusted || d.Source != TrustFromFlag {
		t.Fatalf("flag: %+v", d)
	}
	proj := t.TempDir()
	writeFiles(t, proj, map[string]string{".pisces/extensions/gate.sh": "#!/bin/sh\n"})
	d, _ = s.DecideFor(proj, nil, a.ask)
	if !d.Trusted || d.Source != TrustFromAnswer || a.calls != 1 {
		t.Fatalf("with resources: %+v", d)
	}
	if title, msg := TrustQuestion(proj); title == "" || msg == "" {
		t.Error("question")
	}
}

func TestTrustedLoadEndToEnd(t *testing.T) {
	agentDir, cwd := fixture(t)
	s := NewTrustStore(t.TempDir())
	trusted := s.Decide(cwd, nil, func() (bool, bool) { return false, false }) // a client that never answers
	set := Load(Options{AgentDir: agentDir, Cwd: cwd, Trusted: trusted})
	for _, c := range set.Commands() {
		if c.SourceInfo.Scope == ScopeProject {
			t.Errorf("project command loaded without trust: %s", c.Name)
		}
	}
	trusted = s.Decide(cwd, boolPtr(true), nil)
	set = Load(Options{AgentDir: agentDir, Cwd: cwd, Trusted: trusted})
	if set.Skills.Find("deploy") == nil {
		t.Error("project skill missing when trusted")
	}
}
