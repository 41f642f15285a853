// Package sessions is the session manager of surfaces that hold several
// sessions in one process (web mode, the terminal UI, ACP mode): it owns the map from
// session file to live core session. It opens a session once and hands the same live
// session to every viewer, keeps a session loaded while someone watches it
// or work is going on in it, unloads it a grace period after the last
// viewer left and the work stopped, and keeps one writer per session file:
// within the process by the map, across processes by a lock file beside
// the session file (lock.go). A later opener of a file another process
// writes gets a read-only view.
//
// The manager knows nothing of the protocol; a transport attaches its own
// per-session state with Options.OnLoad.
package sessions

import (
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sync"
	"time"

	"github.com/pisces-agent/pisces/internal/core"
	"github.com/pisces-agent/pisces/internal/extensions"
	"github.com/pisces-agent/pisces/internal/session"
)

// DefaultGrace is how long a session nobody watches and nothing runs in
// stays loaded (a page reload re-attaches to the same live session).
const DefaultGrace = 30 * time.Second

// busyRecheck is how often an unwatched session whose work goes on is
// looked at again (at least).
const busyRecheck = 250 * time.Millisecond

// BuildRequest asks for a core session over a store.
type BuildRequest struct {
	// Store is the session's store; its header's cwd is the project.
	Store *session.Session
	// From is the session the new one is opened from (new_session, fork,
	// clone, switch_session): its model and thinking level carry over
	// where the store records none. nil at start and for ?session=.
	From *core.Session
	// ReadOnly is set when another process writes the file (Store then
	// writes nothing).
	ReadOnly bool
	// Initial is set for the session the server starts with (Adopt): the
	// command line's model and thinking level apply to it as given.
	Initial bool
}

// Built is a core session and what was started for it.
type Built struct {
	Core *core.Session
	// Extensions are the session's own extensions (nil: none); the
	// transport connects their UI in OnLoad.
	Extensions *extensions.Host
	// Close releases what Build started besides the core (nil: nothing).
	Close func()
}

// Options configure a manager.
type Options struct {
	// Build makes the core session of a store: the project's settings,
	// resources, tools and extensions under its trust decision.
	Build func(BuildRequest) (*Built, error)
	// Resolve turns a session id (or a path) into a session file, as
	// --session does; nil accepts paths only.
	Resolve func(ref string) (string, error)
	// Grace is how long an unwatched, idle session stays loaded (0:
	// DefaultGrace; negative: unloaded at once).
	Grace time.Duration
	// OnLoad runs once for each live session before any viewer gets it
	// (a transport attaches its state in Live.Data).
	OnLoad func(*Live)
	// OnUnload runs after a live session was closed.
	OnUnload func(*Live)
	// Log receives diagnostics.
	Log io.Writer
}

// Live is a session loaded in the manager.
type Live struct {
	// Core is the session itself, shared by every viewer.
	Core *core.Session
	// Extensions are its own extensions (nil: none).
	Extensions *extensions.Host
	// Data is the transport's per-session state (set in OnLoad).
	Data any

	key      string
	readOnly string
	close    func()
	lock     *fileLock

	// guarded by Manager.mu
	viewers  int
	pinned   bool
	timer    *time.Timer
	unloaded bool
}

// ReadOnly says why the session is a read-only view ("" when this process
// writes it).
func (l *Live) ReadOnly() string { return l.readOnly }

// Key identifies the session in the manager: its file's canonical path,
// or "memory:<id>" for a session kept in memory.
func (l *Live) Key() string { return l.key }

// Manager holds the live sessions.
type Manager struct {
	opts Options

	mu      sync.Mutex
	live    map[string]*Live
	loading map[string]chan struct{} // being loaded or unloaded
	closed  bool
	changed chan struct{} // closed (and replaced) when a session loads or unloads
}

// ErrClosed is returned once the manager is shutting down.
var ErrClosed = errors.New("the server is shutting down")

// New creates a manager.
func New(opts Options) *Manager {
	if opts.Grace == 0 {
		opts.Grace = DefaultGrace
	}
	if opts.Log == nil {
		opts.Log = os.Stderr
	}
	return &Manager{opts: opts, live: map[string]*Live{}, loading: map[string]chan struct{}{}, changed: make(chan struct{})}
}

// canonical is the key of a session file: absolute, with symbolic links
// resolved as far as the path exists (a new session's file does not yet).
func canonical(path string) string {
	abs, err := filepath.Abs(path)
	if err != nil {
		return filepath.Clean(path)
	}
	if r, err := filepath.EvalSymlinks(abs); err == nil {
		return r
	}
	if d, err := filepath.EvalSymlinks(filepath.Dir(abs)); err == nil {
		return filepath.Join(d, filepath.Base(abs))
	}
	return abs
}

func keyOf(st *session.Session) string {
	if f := st.File(); f != "" {
		return canonical(f)
	}
	return "memory:" + st.ID()
}

// Adopt loads the server's default session over an open store (the one
// --session, --continue or a new session gave at start). It stays loaded
// until Close, watched or not.
func (m *Manager) Adopt(st *session.Session) (*Live, error) {
	l, err := m.loadInitial(st, nil, true)
	if err != nil {
		return nil, err
	}
	m.mu.Lock()
	l.pinned = true
	l.viewers-- // pinned, not watched
	m.mu.Unlock()
	return l, nil
}

// Unpin lets a session Adopt loaded be unloaded like any other once nobody
// watches it and its work has stopped (a surface with one viewer that
// moves between sessions: the terminal UI).
func (m *Manager) Unpin(l *Live) {
	m.mu.Lock()
	defer m.mu.Unlock()
	l.pinned = false
	m.armLocked(l)
}

// Start registers a new store (a surface's new session that is not opened
// from another one) with one viewer, taking its lock; the build's model
// and thinking level are the command line's.
func (m *Manager) Start(st *session.Session) (*Live, error) {
	return m.load(st, nil)
}

// Acquire adds a viewer to a live session.
func (m *Manager) Acquire(l *Live) {
	m.mu.Lock()
	defer m.mu.Unlock()
	l.viewers++
	if l.timer != nil {
		l.timer.Stop()
		l.timer = nil
	}
}

// Release removes a viewer. A session nobody watches is unloaded once the
// grace period has passed with no viewer and no work going on.
func (m *Manager) Release(l *Live) {
	m.mu.Lock()
	defer m.mu.Unlock()
	l.viewers--
	m.armLocked(l)
}

func (m *Manager) armLocked(l *Live) {
	if l.viewers > 0 || l.pinned || l.unloaded || m.closed {
		return
	}
	if l.timer != nil {
		l.timer.Stop()
	}
	grace := max(m.opts.Grace, 0)
	l.timer = time.AfterFunc(grace, func() { m.expire(l) })
}

// expire unloads l unless it is watched again or busy (then it looks
// again after another grace period).
func (m *Manager) expire(l *Live) {
	m.mu.Lock()
	if l.viewers > 0 || l.pinned || l.unloaded || m.closed {
		m.mu.Unlock()
		return
	}
	l.timer = nil
	if l.Core.Busy() {
		// Work goes on with nobody watching: look again later.
		l.timer = time.AfterFunc(max(m.opts.Grace, busyRecheck), func() { m.expire(l) })
		m.mu.Unlock()
		return
	}
	l.unloaded = true
	delete(m.live, l.key)
	done := make(chan struct{})
	m.loading[l.key] = done // an opener of the same file waits for the close
	m.mu.Unlock()
	m.unload(l)
	m.mu.Lock()
	delete(m.loading, l.key)
	close(done)
	m.changedLocked()
	m.mu.Unlock()
}

func (m *Manager) unload(l *Live) {
	if err := l.Core.Close(); err != nil {
		fmt.Fprintf(m.opts.Log, "pisces: closing session %s: %v\n", l.key, err)
	}
	if l.close != nil {
		l.close()
	}
	l.lock.release()
	if m.opts.OnUnload != nil {
		m.opts.OnUnload(l)
	}
}

func (m *Manager) changedLocked() {
	close(m.changed)
	m.changed = make(chan struct{})
}

// Changed returns a channel closed the next time a session has been
// loaded or unloaded (closed, its lock released).
func (m *Manager) Changed() <-chan struct{} {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.changed
}

// Live returns the live sessions.
func (m *Manager) Live() []*Live {
	m.mu.Lock()
	defer m.mu.Unlock()
	out := make([]*Live, 0, len(m.live))
	for _, l := range m.live {
		out = append(out, l)
	}
	return out
}

// Lookup returns the live session of a session file (nil when it is not
// loaded).
func (m *Manager) Lookup(path string) *Live {
	k := canonical(path)
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.live[k]
}

// Open attaches a viewer to a session given by id or path (?session=): a
// live one when it is loaded, else its file is opened.
func (m *Manager) Open(ref string) (*Live, error) {
	m.mu.Lock()
	for _, l := range m.live {
		if l.Core.Store().ID() == ref {
			l.viewers++
			if l.timer != nil {
				l.timer.Stop()
				l.timer = nil
			}
			m.mu.Unlock()
			return l, nil
		}
	}
	m.mu.Unlock()
	path := ref
	if m.opts.Resolve != nil {
		p, err := m.opts.Resolve(ref)
		if err != nil {
			return nil, err
		}
		path = p
	}
	if _, err := os.Stat(path); err != nil {
		return nil, fmt.Errorf("Session file not found: %s", path)
	}
	return m.openFile(path, nil)
}

// Switch attaches a viewer of from to the session file path (switch_session):
// the live session when it is loaded, else the file is opened. The
// extensions of from may cancel (core.ErrCancelled). from itself keeps
// running for its other viewers.
func (m *Manager) Switch(from *Live, path string) (*Live, error) {
	if _, err := os.Stat(path); err != nil {
		return nil, fmt.Errorf("Session file not found: %s", path)
	}
	if !from.Core.AllowSessionChange("switch", map[string]any{"reason": "switch", "targetSessionFile": path}) {
		return nil, core.ErrCancelled
	}
	return m.openFile(path, from.Core)
}

// Create starts a new session (new_session) in the directory cwd ("": the
// directory of from), with a viewer.
func (m *Manager) Create(from *Live, cwd, parentSession string) (*Live, error) {
	if cwd == "" {
		cwd = from.Core.Cwd()
	} else {
		abs, err := filepath.Abs(cwd)
		if err != nil {
			return nil, fmt.Errorf("Invalid working directory %q: %v", cwd, err)
		}
		if fi, err := os.Stat(abs); err != nil || !fi.IsDir() {
			return nil, fmt.Errorf("Working directory does not exist or is not a directory: %s", abs)
		}
		cwd = abs
	}
	if !from.Core.AllowSessionChange("switch", map[string]any{"reason": "new", "parentSession": parentSession}) {
		return nil, core.ErrCancelled
	}
	st, err := session.New(session.Options{Dir: from.Core.SessionDirFor(cwd), Cwd: cwd, InMemory: from.Core.InMemory(), ParentSession: parentSession})
	if err != nil {
		return nil, err
	}
	return m.load(st, from.Core)
}

// Fork starts a new session holding the path of from up to the parent of
// the user message entryID (fork), with a viewer; it returns that message's
// text. from keeps running for its other viewers.
func (m *Manager) Fork(from *Live, entryID string) (*Live, string, error) {
	if !from.Core.AllowSessionChange("fork", map[string]any{"entryId": entryID, "position": "before"}) {
		return nil, "", core.ErrCancelled
	}
	st, text, err := from.Core.ForkStore(entryID)
	if err != nil {
		return nil, "", err
	}
	l, err := m.load(st, from.Core)
	return l, text, err
}

// Clone copies the current branch of from into a new session (clone), with
// a viewer.
func (m *Manager) Clone(from *Live) (*Live, error) {
	if !from.Core.AllowSessionChange("fork", map[string]any{"entryId": from.Core.Store().LeafID(), "position": "at"}) {
		return nil, core.ErrCancelled
	}
	st, err := from.Core.CloneStore()
	if err != nil {
		return nil, err
	}
	return m.load(st, from.Core)
}

// openFile returns the live session of path with one more viewer, loading
// it when needed.
func (m *Manager) openFile(path string, from *core.Session) (*Live, error) {
	key := canonical(path)
	for {
		m.mu.Lock()
		if m.closed {
			m.mu.Unlock()
			return nil, ErrClosed
		}
		if l := m.live[key]; l != nil {
			l.viewers++
			if l.timer != nil {
				l.timer.Stop()
				l.timer = nil
			}
			m.mu.Unlock()
			return l, nil
		}
		if ch := m.loading[key]; ch != nil {
			m.mu.Unlock()
			<-ch
			continue
		}
		done := make(chan struct{})
		m.loading[key] = done
		m.mu.Unlock()
		l, err := m.loadFile(path, key, from)
		m.mu.Lock()
		delete(m.loading, key)
		close(done)
		if err == nil {
			if m.closed {
				m.mu.Unlock()
				m.unload(l)
				return nil, ErrClosed
			}
			m.live[key] = l
			m.changedLocked()
		}
		m.mu.Unlock()
		return l, err
	}
}

// loadFile opens the file of key and builds its session (viewers 1).
func (m *Manager) loadFile(path, key string, from *core.Session) (*Live, error) {
	lock, holder, err := acquireLock(key, false)
	if err != nil {
		return nil, fmt.Errorf("cannot lock %s: %v", path, err)
	}
	readOnly := ""
	if holder != nil {
		readOnly = fmt.Sprintf("%s is open for writing in another process (%s): this view is read-only", path, holder)
	}
	st, rep, err := session.Open(path)
	if err != nil {
		lock.release()
		return nil, err
	}
	_ = rep // skipped lines are reported by session.Open
	if cwd := st.Cwd(); cwd != "" {
		if _, err := os.Stat(cwd); err != nil {
			st.Close()
			lock.release()
			return nil, fmt.Errorf("Stored session working directory does not exist: %s\nSession file: %s", cwd, path)
		}
	}
	if readOnly != "" {
		st.DetachFile()
	}
	return m.build(st, key, lock, readOnly, from, false)
}

// load registers a new store (new_session, fork, clone, the default
// session) with one viewer, taking its lock.
func (m *Manager) load(st *session.Session, from *core.Session) (*Live, error) {
	return m.loadInitial(st, from, false)
}

func (m *Manager) loadInitial(st *session.Session, from *core.Session, initial bool) (*Live, error) {
	key := keyOf(st)
	var lock *fileLock
	readOnly := ""
	if !st.InMemory() && st.File() != "" {
		l, holder, err := acquireLock(key, false)
		if err != nil {
			st.Close()
			return nil, fmt.Errorf("cannot lock %s: %v", st.File(), err)
		}
		lock = l
		if holder != nil {
			readOnly = fmt.Sprintf("%s is open for writing in another process (%s): this view is read-only", st.File(), holder)
			st.DetachFile()
		}
	}
	l, err := m.build(st, key, lock, readOnly, from, initial)
	if err != nil {
		return nil, err
	}
	m.mu.Lock()
	if m.closed {
		m.mu.Unlock()
		m.unload(l)
		return nil, ErrClosed
	}
	m.live[key] = l
	m.changedLocked()
	m.mu.Unlock()
	return l, nil
}

// build makes the core session and runs OnLoad (viewers 1).
func (m *Manager) build(st *session.Session, key string, lock *fileLock, readOnly string, from *core.Session, initial bool) (*Live, error) {
	b, err := m.opts.Build(BuildRequest{Store: st, From: from, ReadOnly: readOnly != "", Initial: initial})
	if err != nil {
		st.Close()
		lock.release()
		return nil, err
	}
	l := &Live{Core: b.Core, Extensions: b.Extensions, key: key, readOnly: readOnly, close: b.Close, lock: lock, viewers: 1}
	if m.opts.OnLoad != nil {
		m.opts.OnLoad(l)
	}
	return l, nil
}

// Close stops everything: the runs of every live session are aborted
// (tool process groups killed, user bash commands cancelled) in parallel,
// then the sessions are closed (flushed) and their locks released. Later
// opens fail with ErrClosed.
func (m *Manager) Close() {
	m.mu.Lock()
	m.closed = true
	ls := make([]*Live, 0, len(m.live))
	for _, l := range m.live {
		if l.timer != nil {
			l.timer.Stop()
			l.timer = nil
		}
		l.unloaded = true
		ls = append(ls, l)
	}
	m.live = map[string]*Live{}
	m.changedLocked()
	pending := make([]chan struct{}, 0, len(m.loading))
	for _, ch := range m.loading {
		pending = append(pending, ch)
	}
	m.mu.Unlock()
	var wg sync.WaitGroup
	for _, l := range ls {
		wg.Add(1)
		go func() {
			defer wg.Done()
			l.Core.AbortBash()
			l.Core.Abort()
			m.unload(l)
		}()
	}
	wg.Wait()
	for _, ch := range pending {
		<-ch
	}
}
