package cli

import (
	"fmt"
	"os"
	"path/filepath"
	"sync"

	"github.com/pisces-agent/pisces/internal/core"
	"github.com/pisces-agent/pisces/internal/sessions"
	rpcmode "github.com/pisces-agent/pisces/internal/transport/rpc"
	"github.com/pisces-agent/pisces/rpc"
)

// fileLock is the lock of the file that the one session of stdio RPC,
// print or json mode writes (docs/sessions.md, "The lock beside the file"):
// the lock file beside it that web mode takes too, so that two processes
// never write one session file. It follows the session across
// new_session, switch_session, fork and clone. A new session's folder may
// not exist yet (it is made when the file is first written, as in pi): the
// lock is then taken at the first message_end (or agent_settled) that
// finds the folder.
type fileLock struct {
	mu       sync.Mutex
	sess     *core.Session
	unsub    func()
	lock     *sessions.Lock
	readOnly bool // the file is another process's: no lock to take
}

// readOnlyReason is what a session another process writes is told.
func readOnlyReason(path, holder string) string {
	return fmt.Sprintf("%s is open for writing in another process (%s): this view is read-only", path, holder)
}

// start takes the lock of sess's file. When another live process holds it,
// sess is detached from the file (it writes nothing) and the reason is
// returned.
func (fl *fileLock) start(sess *core.Session) (string, error) {
	fl.mu.Lock()
	defer fl.mu.Unlock()
	fl.sess = sess
	st := sess.Store()
	if !st.InMemory() && st.File() != "" && dirExists(st.File()) {
		l, holder, err := sessions.TryLock(st.File())
		if err != nil {
			return "", err
		}
		if l == nil {
			st.DetachFile()
			fl.readOnly = true
			fl.unsub = sess.Subscribe(fl.onEvent)
			return readOnlyReason(st.File(), holder), nil
		}
		fl.lock = l
	}
	fl.unsub = sess.Subscribe(fl.onEvent)
	return "", nil
}

func dirExists(file string) bool {
	fi, err := os.Stat(filepath.Dir(file))
	return err == nil && fi.IsDir()
}

// onEvent takes the lock of a new session's file once its folder exists.
// It runs in the event's order and only touches a lock file: it does not
// block.
func (fl *fileLock) onEvent(ev rpc.Event) {
	if t := ev.EventType(); t != rpc.EventMessageEnd && t != rpc.EventAgentSettled {
		return
	}
	fl.mu.Lock()
	defer fl.mu.Unlock()
	if fl.lock == nil && !fl.readOnly {
		fl.takeLocked()
	}
}

// takeLocked points the lock at the file the session writes now.
func (fl *fileLock) takeLocked() {
	st := fl.sess.Store()
	if st.InMemory() || st.File() == "" {
		fl.lock.Release()
		fl.lock = nil
		return
	}
	if fl.lock.Holds(st.File()) {
		return
	}
	fl.lock.Release()
	fl.lock = nil
	if dirExists(st.File()) {
		fl.lock, _, _ = sessions.TryLock(st.File())
	}
}

// follow moves the lock to the file the session writes now (a new one:
// nobody else can hold it), after new_session, fork or clone.
func (fl *fileLock) follow() {
	fl.mu.Lock()
	defer fl.mu.Unlock()
	fl.readOnly = false
	fl.takeLocked()
}

// holds reports whether the lock is that of path.
func (fl *fileLock) holds(path string) bool {
	fl.mu.Lock()
	defer fl.mu.Unlock()
	return fl.lock.Holds(path)
}

// replace makes l (taken by the caller) the lock.
func (fl *fileLock) replace(l *sessions.Lock) {
	fl.mu.Lock()
	defer fl.mu.Unlock()
	fl.lock.Release()
	fl.lock = l
	fl.readOnly = false
}

// release removes the lock file and stops following the session.
func (fl *fileLock) release() {
	fl.mu.Lock()
	unsub := fl.unsub
	fl.unsub = nil
	fl.mu.Unlock()
	// Outside fl.mu: unsubscribing waits for an event being delivered,
	// whose onEvent may be waiting for fl.mu.
	if unsub != nil {
		unsub()
	}
	fl.mu.Lock()
	defer fl.mu.Unlock()
	fl.lock.Release()
	fl.lock = nil
}

// lockedSessions is stdio's session policy (the session replaces its store
// in place, as without it) with the lock kept on the file written:
// switch_session to a file another process writes is refused, and after
// any move the session is writable again.
type lockedSessions struct{ fl *fileLock }

func (ls lockedSessions) NewSession(from *rpcmode.Hub, cwd, parent string) (*rpcmode.Hub, error) {
	if err := from.Session().NewSessionIn(cwd, parent); err != nil {
		return from, err
	}
	ls.moved(from)
	return from, nil
}

func (ls lockedSessions) Switch(from *rpcmode.Hub, path string) (*rpcmode.Hub, error) {
	fl := ls.fl
	if fl.holds(path) {
		return from, from.Session().SwitchSession(path)
	}
	l, holder, err := sessions.TryLock(path)
	if err != nil {
		return from, err
	}
	if l == nil {
		return from, fmt.Errorf("Session file is open for writing in another process (%s): %s", holder, path)
	}
	if err := from.Session().SwitchSession(path); err != nil {
		l.Release()
		return from, err
	}
	fl.replace(l)
	ls.moved(from)
	return from, nil
}

func (ls lockedSessions) Fork(from *rpcmode.Hub, entryID string) (*rpcmode.Hub, string, error) {
	text, err := from.Session().Fork(entryID)
	if err == nil {
		ls.moved(from)
	}
	return from, text, err
}

func (ls lockedSessions) Clone(from *rpcmode.Hub) (*rpcmode.Hub, error) {
	if err := from.Session().Clone(); err != nil {
		return from, err
	}
	ls.moved(from)
	return from, nil
}

// moved is called after the session moved to another file: the lock
// follows it, and a read-only view (of a file another process writes)
// becomes writable, the file being its own now.
func (ls lockedSessions) moved(h *rpcmode.Hub) {
	ls.fl.follow()
	h.SetReadOnly("")
}

func (lockedSessions) Release(*rpcmode.Hub) {}

// InPlace: the session replaces its store in place and announces it.
func (lockedSessions) InPlace() bool { return true }

// Writer refuses a file another process writes (rename_session,
// delete_session); the session's own file is checked by the core.
func (lockedSessions) Writer(path string) (*rpcmode.Hub, error) {
	if holder, ok := sessions.LockedElsewhere(path); ok {
		return nil, fmt.Errorf("Session file is open for writing in another process (%s): %s", holder, path)
	}
	return nil, nil
}
