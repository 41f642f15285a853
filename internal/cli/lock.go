package cli

import (
	"fmt"
	"sync"

	"github.com/pisces-agent/pisces/internal/core"
	"github.com/pisces-agent/pisces/internal/sessions"
	rpcmode "github.com/pisces-agent/pisces/internal/transport/rpc"
)

// fileLock is the lock of the file that the one session of stdio RPC,
// print or json mode writes (docs/sessions.md, "Locks"): the lock file
// beside it that web mode takes too, so that two processes never write one
// session file. It follows the session across new_session, switch_session,
// fork and clone.
type fileLock struct {
	mu   sync.Mutex
	lock *sessions.Lock
}

// readOnlyReason is what a session another process writes is told.
func readOnlyReason(path, holder string) string {
	return fmt.Sprintf("%s is open for writing in another process (%s): this view is read-only", path, holder)
}

// start takes the lock of sess's file. When another live process holds it,
// sess is detached from the file (it writes nothing) and the reason is
// returned.
func (fl *fileLock) start(sess *core.Session) (string, error) {
	st := sess.Store()
	if st.InMemory() || st.File() == "" {
		return "", nil
	}
	l, holder, err := sessions.TryLock(st.File())
	if err != nil {
		return "", err
	}
	if l == nil {
		st.DetachFile()
		return readOnlyReason(st.File(), holder), nil
	}
	fl.mu.Lock()
	fl.lock = l
	fl.mu.Unlock()
	return "", nil
}

// follow moves the lock to the file sess writes now (a new one: nobody
// else can hold it), after new_session, fork or clone.
func (fl *fileLock) follow(sess *core.Session) {
	st := sess.Store()
	fl.mu.Lock()
	defer fl.mu.Unlock()
	if st.InMemory() || st.File() == "" {
		fl.lock.Release()
		fl.lock = nil
		return
	}
	if fl.lock.Holds(st.File()) {
		return
	}
	l, _, _ := sessions.TryLock(st.File())
	fl.lock.Release()
	fl.lock = l
}

// release removes the lock file.
func (fl *fileLock) release() {
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
	fl.mu.Lock()
	same := fl.lock.Holds(path)
	fl.mu.Unlock()
	if same {
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
	fl.mu.Lock()
	fl.lock.Release()
	fl.lock = l
	fl.mu.Unlock()
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
	ls.fl.follow(h.Session())
	h.SetReadOnly("")
}

func (lockedSessions) Release(*rpcmode.Hub) {}

// Writer refuses a file another process writes (rename_session,
// delete_session); the session's own file is checked by the core.
func (lockedSessions) Writer(path string) (*rpcmode.Hub, error) {
	if holder, ok := sessions.LockedElsewhere(path); ok {
		return nil, fmt.Errorf("Session file is open for writing in another process (%s): %s", holder, path)
	}
	return nil, nil
}
