package core

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"

	"github.com/pisces-agent/pisces/internal/ai"
	"github.com/pisces-agent/pisces/internal/session"
	"github.com/pisces-agent/pisces/rpc"
)

// Reasons of session_changed.
const (
	ChangeNew    = "new"
	ChangeSwitch = "switch"
	ChangeFork   = "fork"
	ChangeTree   = "tree"
	ChangeReload = "reload"
)

// sessionDir is where new session files of the current project go.
func (s *Session) sessionDir() string { return s.sessionDirFor(s.Cwd()) }

// sessionDirFor is the folder of the session files whose header names cwd:
// the configured session dir when there is one (it holds every project's
// sessions), else cwd's own folder under <agentDir>/sessions. A session
// file always lands in the folder of its own cwd, so that listings find it.
func (s *Session) sessionDirFor(cwd string) string {
	if s.opts.SessionDir != "" {
		return s.opts.SessionDir
	}
	return session.DirFor(s.opts.AgentDir, cwd)
}

// replaceStore installs a new store, closes the old one and announces it.
func (s *Session) replaceStore(st *session.Session, reason string) {
	s.replaceStoreCounted(st, reason, -1)
}

// replaceStoreCounted is replaceStore with the context's message count
// when the caller already knows it (-1: count it), so that opening a large
// session builds its context once.
func (s *Session) replaceStoreCounted(st *session.Session, reason string, count int) {
	s.mu.Lock()
	old := s.store
	s.store = st
	hadQueue := len(s.steering)+len(s.followUp) > 0
	s.steering, s.followUp = nil, nil
	s.pendingBash = nil
	s.mu.Unlock()
	if old != nil && old != st {
		if err := old.Close(); err != nil {
			s.logf("closing session: %v", err)
		}
	}
	if hadQueue {
		s.emitQueue()
	}
	s.emitSessionChangedCounted(reason, count)
}

func (s *Session) emitSessionChanged(reason string) { s.emitSessionChangedCounted(reason, -1) }

func (s *Session) emitSessionChangedCounted(reason string, count int) {
	s.emit(s.sessionChangedEvent(reason, count))
}

// SessionChangedEvent describes the current session as a session_changed
// event with reason, without publishing it: a surface that attaches one of
// its clients to a session that is already open tells that client alone.
func (s *Session) SessionChangedEvent(reason string) *rpc.SessionChangedEvent {
	ev := s.sessionChangedEvent(reason, -1)
	rpc.SetType(ev)
	return ev
}

func (s *Session) sessionChangedEvent(reason string, count int) *rpc.SessionChangedEvent {
	st := s.Store()
	if count < 0 {
		count = st.Info().MessageCount
	}
	ev := &rpc.SessionChangedEvent{
		Reason:       reason,
		SessionID:    st.ID(),
		SessionFile:  st.File(),
		SessionName:  st.Name(),
		MessageCount: count,
	}
	if id := st.LeafID(); id != "" {
		ev.LeafID = &id
	}
	return ev
}

// ErrCancelled reports a session action an extension cancelled.
var ErrCancelled = errors.New("cancelled by an extension")

// NewSession aborts any run and starts a new session.
func (s *Session) NewSession(parentSession string) error {
	return s.NewSessionIn("", parentSession)
}

// NewSessionIn aborts any run and starts a new session in the directory
// cwd ("" keeps the current one; otherwise an existing directory, made
// absolute). A new directory brings its own tools, context files and trust
// decision (a project nothing has decided yet is not trusted until
// ResolveTrust asks).
func (s *Session) NewSessionIn(cwd, parentSession string) error {
	return s.newSession(cwd, parentSession, "")
}

// NewSessionInDir aborts any run and starts a new session whose file is
// written in the session directory dir (created when missing) rather than
// the project's: oh-my-pi's open_session of a directory with no session.
func (s *Session) NewSessionInDir(dir string) error {
	abs, err := filepath.Abs(dir)
	if err != nil {
		return fmt.Errorf("Invalid session directory %q: %v", dir, err)
	}
	return s.newSession("", "", abs)
}

func (s *Session) newSession(cwd, parentSession, dir string) error {
	if cwd != "" {
		abs, err := filepath.Abs(cwd)
		if err != nil {
			return fmt.Errorf("Invalid working directory %q: %v", cwd, err)
		}
		if fi, err := os.Stat(abs); err != nil || !fi.IsDir() {
			return fmt.Errorf("Working directory does not exist or is not a directory: %s", abs)
		}
		cwd = abs
	}
	if !s.sessionBefore("switch", map[string]any{"reason": "new", "parentSession": parentSession}) {
		return ErrCancelled
	}
	s.Abort()
	moved := false
	if cwd != "" {
		moved = s.moveTo(cwd)
	}
	if moved {
		s.reloadProject()
	}
	if dir == "" {
		dir = s.sessionDir()
	}
	st, err := session.New(session.Options{Dir: dir, Cwd: s.Cwd(), InMemory: s.opts.InMemory, ParentSession: parentSession})
	if err != nil {
		return err
	}
	s.mu.Lock()
	level := s.thinking
	s.interruptMode = s.opts.Settings.InterruptMode()
	s.mu.Unlock()
	if _, err := st.AppendThinkingLevelChange(level); err != nil {
		return err
	}
	s.replaceStore(st, ChangeNew)
	s.resetTask()
	return nil
}

// SwitchSession aborts any run and opens another session file, restoring
// its model (when available) and thinking level. A session of another
// directory moves the session there, with that directory's trust decision
// (a project nothing has decided yet is not trusted until ResolveTrust
// asks).
func (s *Session) SwitchSession(path string) error {
	if _, err := os.Stat(path); err != nil {
		return fmt.Errorf("Session file not found: %s", path)
	}
	if !s.sessionBefore("switch", map[string]any{"reason": "switch", "targetSessionFile": path}) {
		return ErrCancelled
	}
	s.Abort()
	st, rep, err := session.Open(path)
	if err != nil {
		return err
	}
	if rep.Skipped > 0 {
		s.logf("%s: skipped %d unreadable line(s)", path, rep.Skipped)
	}
	if cwd := st.Cwd(); cwd != "" {
		if _, err := os.Stat(cwd); err != nil {
			st.Close()
			return fmt.Errorf("Stored session working directory does not exist: %s\nSession file: %s\nCurrent working directory: %s", cwd, path, s.Cwd())
		}
		if s.moveTo(cwd) {
			s.reloadProject()
		}
	}
	count := s.restoreFrom(st)
	s.replaceStoreCounted(st, ChangeSwitch, count)
	return nil
}

// moveTo makes cwd the session's project: tools, bash, context files,
// per-project listings and the trust decision follow (a session of another
// project was opened). A project nothing has decided yet is not trusted.
func (s *Session) moveTo(cwd string) bool {
	d, _ := s.opts.Trust.Known(cwd)
	s.mu.Lock()
	defer s.mu.Unlock()
	if cwd == s.cwd {
		return false
	}
	s.cwd = cwd
	if s.opts.ToolsFor != nil {
		s.tools = s.withTaskTools(s.opts.ToolsFor(cwd))
	}
	s.trusted = d.Trusted
	return true
}

// reloadProject reads the project settings and resources of the current
// directory again, as its trust decision allows (no event: the caller
// announces the change).
func (s *Session) reloadProject() {
	if err := s.opts.Settings.SetProject(s.projectSettingsDir()); err != nil {
		s.logf("%v", err)
	}
	s.loadResources()
}

// restoreFrom takes the model and thinking level recorded on the session's
// leaf path, and the session's interrupt mode; it returns the number of
// context messages.
func (s *Session) restoreFrom(st *session.Session) int {
	c := st.Info()
	hasLevel := st.HasEntryType(session.TypeThinkingLevelChange)
	mode := s.sessionInterruptMode(st)
	s.mu.Lock()
	defer s.mu.Unlock()
	s.interruptMode = mode
	if c.Provider != "" {
		if m, ok := s.opts.Models.Find(c.Provider, c.ModelID); ok {
			if _, ok := s.opts.Models.Key(m.Provider); ok {
				s.model = m
			}
		}
	}
	if hasLevel {
		s.thinking = clampFor(s.model, c.ThinkingLevel)
	} else {
		s.thinking = clampFor(s.model, s.opts.Settings.DefaultThinkingLevel())
		if _, err := st.AppendThinkingLevelChange(s.thinking); err != nil {
			s.logf("cannot write thinking_level_change: %v", err)
		}
	}
	return c.MessageCount
}

// Fork aborts any run and starts a new session holding the path up to the
// parent of the user message entryID; it returns that message's text.
func (s *Session) Fork(entryID string) (string, error) {
	if !s.sessionBefore("fork", map[string]any{"entryId": entryID, "position": "before"}) {
		return "", ErrCancelled
	}
	s.Abort()
	st, text, err := s.ForkStore(entryID)
	if err != nil {
		return "", err
	}
	s.replaceStore(st, ChangeFork)
	return text, nil
}

// ForkStore creates the session Fork switches to — the path up to the
// parent of the user message entryID, in a new file of the project's
// session folder, with this session's interrupt mode — and returns it with
// that message's text, leaving this session as it is (no hook, no abort):
// a surface that keeps this session open for others opens the fork as a
// session of its own.
func (s *Session) ForkStore(entryID string) (*session.Session, string, error) {
	old := s.Store()
	e := old.Entry(entryID)
	if e == nil || e.Type != "message" {
		return nil, "", fmt.Errorf("Invalid entry ID for forking")
	}
	um, ok := e.Message().(*ai.UserMessage)
	if !ok {
		return nil, "", fmt.Errorf("Invalid entry ID for forking")
	}
	st, err := old.Fork(entryID, s.sessionDirFor(old.Cwd()))
	if err != nil {
		return nil, "", err
	}
	s.keepInterruptMode(st)
	return st, um.Content.PlainText(), nil
}

// Clone aborts any run and copies the current branch into a new session.
func (s *Session) Clone() error {
	if !s.sessionBefore("fork", map[string]any{"entryId": s.Store().LeafID(), "position": "at"}) {
		return ErrCancelled
	}
	s.Abort()
	st, err := s.CloneStore()
	if err != nil {
		return err
	}
	s.replaceStore(st, ChangeFork)
	return nil
}

// CloneStore creates the session Clone switches to (the current branch in
// a new file, with this session's interrupt mode), leaving this session as
// it is (see ForkStore).
func (s *Session) CloneStore() (*session.Session, error) {
	old := s.Store()
	st, err := old.Clone(s.sessionDirFor(old.Cwd()))
	if err != nil {
		return nil, err
	}
	s.keepInterruptMode(st)
	return st, nil
}

// ForkMessage is one user message that can be forked from.
type ForkMessage struct {
	EntryID string
	Text    string
}

// ForkMessages lists every user message of the file, across branches.
func (s *Session) ForkMessages() []ForkMessage {
	var users []*session.Entry
	for _, e := range s.Store().Entries() {
		if e.Role() == ai.RoleUser {
			users = append(users, e)
		}
	}
	session.DecodeMessages(users)
	var out []ForkMessage
	for _, e := range users {
		if um, ok := e.Message().(*ai.UserMessage); ok {
			if t := um.Content.PlainText(); t != "" {
				out = append(out, ForkMessage{EntryID: e.ID, Text: t})
			}
		}
	}
	return out
}
