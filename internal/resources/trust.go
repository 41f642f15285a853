package resources

import (
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
	TrustNotRequired TrustSource = "none"    // nothing project-local to trust (see DecideFor)
)

// TrustDecision is the outcome of DecideDetailed.
type TrustDecision struct {
	Trusted bool
	Source  TrustSource
}

// Decide says whether project's local resources may load in this run:
//
//  1. approveFlag (--approve true, --no-approve false) wins for this run
//     and is not stored;
//  2. otherwise a remembered answer;
//  3. otherwise ask (nil: refuse): a real answer (answered true) is
//     remembered; no answer — a timeout, a cancelled dialog, a client that
//     never replies — counts as refusal and is not remembered, so the next
//     run asks again.
//
// Global resources in the agent dir need no decision. A failure to store
// the answer does not change it (see DecideDetailed for the error).
func (s *TrustStore) Decide(project string, approveFlag *bool, ask func() (answer bool, answered bool)) bool {
	d, _ := s.DecideDetailed(project, approveFlag, ask)
	return d.Trusted
}

// DecideDetailed is Decide, also reporting how the decision was reached
// and any error storing the answer.
func (s *TrustStore) DecideDetailed(project string, approveFlag *bool, ask func() (answer bool, answered bool)) (TrustDecision, error) {
	if approveFlag != nil {
		return TrustDecision{*approveFlag, TrustFromFlag}, nil
	}
	if e, ok := s.Get(project); ok {
		return TrustDecision{e.Trusted, TrustFromStore}, nil
	}
	if ask == nil {
		return TrustDecision{false, TrustCannotAsk}, nil
	}
	answer, answered := ask()
	if !answered {
		return TrustDecision{false, TrustNoAnswer}, nil
	}
	return TrustDecision{answer, TrustFromAnswer}, s.Set(project, answer)
}

// DecideFor is DecideDetailed preceded by HasProjectResources: a project
// without project-local resources is not asked about: Source
// TrustNotRequired and Trusted false (there is nothing to load; a reload
// that finds new project resources should decide again), unless a flag
// was given.
func (s *TrustStore) DecideFor(cwd string, approveFlag *bool, ask func() (bool, bool)) (TrustDecision, error) {
	if !HasProjectResources(cwd) {
		if approveFlag != nil {
			return TrustDecision{*approveFlag, TrustFromFlag}, nil
		}
		return TrustDecision{false, TrustNotRequired}, nil
	}
	return s.DecideDetailed(cwd, approveFlag, ask)
}

// TrustQuestion is suggested text for the confirm dialog that asks.
func TrustQuestion(project string) (title, message string) {
	return "Trust this project?",
		"The project " + project + " has its own Pisces resources (.pisces/ extensions, settings, prompts, skills or rules, or other tools' rule files). " +
			"Extensions run code on this machine. Load them only if you trust the project's authors. Your answer is remembered."
}
