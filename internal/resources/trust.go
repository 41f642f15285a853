package resources

import (
	"context"
	"encoding/json"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"sync"
	"time"

	"github.com/pisces-agent/pisces/internal/fsx"
)

// TrustFileName is the trust store's file in the agent dir.
const TrustFileName = "trust.json"

// TrustEntry is the remembered answer for one project.
type TrustEntry struct {
	Trusted bool      `json:"trusted"`
	Time    time.Time `json:"time"`
}

// trustFile is the JSON layout of trust.json.
type trustFile struct {
	Version  int                   `json:"version"`
	Projects map[string]TrustEntry `json:"projects"`
}

// TrustStore remembers, per absolute project path, whether the user trusts
// the project's local resources. It is persisted in <agentDir>/trust.json
// (written atomically, mode 0600; re-read before each write, so answers
// written earlier by other Pisces processes are kept — two processes
// writing at the same instant may still lose one answer, which is then
// asked again). Safe for concurrent use within a process.
type TrustStore struct {
	mu   sync.Mutex
	path string
	now  func() time.Time
}

// NewTrustStore returns the store of agentDir.
func NewTrustStore(agentDir string) *TrustStore {
	return &TrustStore{path: filepath.Join(agentDir, TrustFileName), now: time.Now}
}

// Path is the store's file.
func (s *TrustStore) Path() string { return s.path }

// ProjectKey is the key a project is stored under: its absolute, cleaned
// path with symbolic links resolved when possible.
func ProjectKey(project string) string {
	p, err := filepath.Abs(project)
	if err != nil {
		p = filepath.Clean(project)
	}
	if r, err := filepath.EvalSymlinks(p); err == nil {
		p = r
	}
	return p
}

func (s *TrustStore) read() (trustFile, error) {
	f := trustFile{Version: 1, Projects: map[string]TrustEntry{}}
	data, err := os.ReadFile(s.path)
	if errors.Is(err, fs.ErrNotExist) {
		return f, nil
	}
	if err != nil {
		return f, err
	}
	if err := json.Unmarshal(data, &f); err != nil {
		return trustFile{Version: 1, Projects: map[string]TrustEntry{}}, err
	}
	if f.Projects == nil {
		f.Projects = map[string]TrustEntry{}
	}
	return f, nil
}

// Get returns the remembered answer for project (ok false: none, or the
// file is unreadable).
func (s *TrustStore) Get(project string) (TrustEntry, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	f, err := s.read()
	if err != nil {
		return TrustEntry{}, false
	}
	e, ok := f.Projects[ProjectKey(project)]
	return e, ok
}

// Set remembers an answer for project.
func (s *TrustStore) Set(project string, trusted bool) error {
	return s.update(func(f *trustFile) {
		f.Projects[ProjectKey(project)] = TrustEntry{Trusted: trusted, Time: s.now().UTC()}
	})
}

// Forget removes the answer for project.
func (s *TrustStore) Forget(project string) error {
	return s.update(func(f *trustFile) { delete(f.Projects, ProjectKey(project)) })
}

// List returns the remembered projects, sorted by path.
func (s *TrustStore) List() (map[string]TrustEntry, []string, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	f, err := s.read()
	keys := make([]string, 0, len(f.Projects))
	for k := range f.Projects {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return f.Projects, keys, err
}

func (s *TrustStore) update(change func(*trustFile)) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	f, err := s.read()
	if err != nil && !errors.As(err, new(*json.SyntaxError)) && !errors.As(err, new(*json.UnmarshalTypeError)) {
		return err // unreadable (not merely corrupt): do not overwrite it
	}
	change(&f)
	f.Version = 1
	data, err := json.MarshalIndent(f, "", "  ")
	if err != nil {
		return err
	}
	if err := os.MkdirAll(filepath.Dir(s.path), 0o700); err != nil {
		return err
	}
	return fsx.WriteFile(s.path, append(data, '\n'), 0o600)
}

// TrustSource says how a trust decision was reached.
type TrustSource string

const (
	TrustFromFlag    TrustSource = "flag"    // --approve / --no-approve; not stored
	TrustFromStore   TrustSource = "stored"  // a remembered answer
	TrustFromAnswer  TrustSource = "answer"  // the user answered now; stored
	TrustNoAnswer    TrustSource = "timeout" // asked, no answer (timeout, cancelled): refused, not stored
	TrustCannotAsk   TrustSource = "no-ask"  // nobody to ask: refused, not stored
	TrustNotRequired TrustSource = "none"    // nothing project-local to trust (see HasProjectResources)
)

// TrustDecision is the outcome of a trust decision.
type TrustDecision struct {
	Trusted bool
	Source  TrustSource
}

// TrustAsk asks the person at a surface (an RPC client's confirm dialog, a
// terminal prompt, a web or editor dialog) whether to trust the project's
// own resources. answered is false when nobody answered: a timeout, a
// cancelled dialog, ctx done. A surface where nobody can answer has no
// TrustAsk (nil).
type TrustAsk func(ctx context.Context, project string) (answer, answered bool)

// TrustDecider decides, per directory, whether a project's own resources
// may load in this process. One decider serves every session of a process,
// whatever directory each is opened in:
//
//  1. a directory without project resources (HasProjectResources) needs no
//     decision: not trusted, nothing to load (TrustNotRequired) — except
//     the start directory under --approve;
//  2. --no-approve refuses every directory for this run; --approve trusts
//     the directory Pisces was started in, for this run (neither is
//     stored; other directories are decided as below);
//  3. otherwise a remembered answer (<agentDir>/trust.json);
//  4. otherwise the outcome of an earlier question in this process;
//  5. otherwise the person is asked through the surface's TrustAsk (nil:
//     refused, TrustCannotAsk, and asked again when a surface that can ask
//     decides). A real answer is stored; no answer counts as refusal for
//     the rest of the process and is not stored, so the next run asks
//     again. Questions about one directory asked at the same time share
//     one answer.
//
// Global resources in the agent dir need no decision. Safe for concurrent
// use.
type TrustDecider struct {
	store    *TrustStore
	agentDir string
	flag     *bool
	start    string // ProjectKey of the start directory (for --approve)

	mu       sync.Mutex
	outcomes map[string]TrustDecision // answers of this process not in the store
	pending  map[string]*pendingAsk
}

type pendingAsk struct {
	done chan struct{}
	d    TrustDecision
	err  error
}

// NewTrustDecider returns the decider of a process whose agent dir is
// agentDir, started in startDir with the --approve (true) / --no-approve
// (false) flag, or none (nil).
func NewTrustDecider(agentDir string, flag *bool, startDir string) *TrustDecider {
	d := &TrustDecider{
		store: NewTrustStore(agentDir), agentDir: agentDir, flag: flag,
		outcomes: map[string]TrustDecision{}, pending: map[string]*pendingAsk{},
	}
	if startDir != "" {
		d.start = ProjectKey(startDir)
	}
	return d
}

// Store is the decider's trust store.
func (d *TrustDecider) Store() *TrustStore { return d.store }

// Known returns the decision for dir when it can be made without asking
// (rules 1 to 4); ok is false when the person must be asked.
func (d *TrustDecider) Known(dir string) (TrustDecision, bool) {
	key := ProjectKey(dir)
	if d.flag != nil && (!*d.flag || key == d.start) {
		return TrustDecision{*d.flag, TrustFromFlag}, true
	}
	if !HasProjectResources(dir, d.agentDir) {
		return TrustDecision{false, TrustNotRequired}, true
	}
	if e, ok := d.store.Get(dir); ok {
		return TrustDecision{e.Trusted, TrustFromStore}, true
	}
	d.mu.Lock()
	defer d.mu.Unlock()
	if o, ok := d.outcomes[key]; ok {
		return o, true
	}
	return TrustDecision{}, false
}

// Decide returns the decision for dir, asking through ask when it is not
// Known. The error reports an answer that could not be stored (the answer
// still holds for this process).
func (d *TrustDecider) Decide(ctx context.Context, dir string, ask TrustAsk) (TrustDecision, error) {
	if dec, ok := d.Known(dir); ok {
		return dec, nil
	}
	if ask == nil {
		return TrustDecision{false, TrustCannotAsk}, nil
	}
	key := ProjectKey(dir)
	d.mu.Lock()
	if p, ok := d.pending[key]; ok {
		d.mu.Unlock()
		select {
		case <-p.done:
			return p.d, p.err
		case <-ctx.Done():
			return TrustDecision{false, TrustNoAnswer}, nil
		}
	}
	p := &pendingAsk{done: make(chan struct{})}
	d.pending[key] = p
	d.mu.Unlock()

	answer, answered := ask(ctx, dir)
	if answered {
		p.d = TrustDecision{answer, TrustFromAnswer}
		p.err = d.store.Set(dir, answer)
	} else {
		p.d = TrustDecision{false, TrustNoAnswer}
	}
	d.mu.Lock()
	if !answered || p.err != nil {
		d.outcomes[key] = p.d
	}
	delete(d.pending, key)
	d.mu.Unlock()
	close(p.done)
	return p.d, p.err
}

// TrustQuestion is the text of the question every surface asks.
func TrustQuestion(project string) (title, message string) {
	return "Trust this project?",
		"The project " + project + " has its own agent resources (.pisces/ or .pi/ extensions, settings, prompts, agents, skills or rules, or other tools' rule files). " +
			"Extensions run code on this machine. Load them only if you trust the project's authors. Your answer is remembered."
}
