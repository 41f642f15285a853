package sessions

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"strings"
)

// One writer per session file, across processes: the process that writes
// a session file holds a lock file beside it, ".<file name>.lock" (hidden,
// so that listings of session folders are unchanged), created with O_EXCL
// and holding the writer's process id and host name. A lock whose process
// is gone (same host, no such process) is stale and taken over; a lock of
// a live process, or of another host, makes the later opener a reader.
//
// The protocol is Pisces' own: pi takes no such lock, so a pi process
// writing the same file is not detected.

// fileLock is a lock file this process created.
type fileLock struct {
	path string
}

// lockHolder describes the process that holds a lock.
type lockHolder struct {
	pid  int
	host string
}

func (h lockHolder) String() string {
	if h.host != "" && h.host != hostname() {
		return fmt.Sprintf("pid %d on %s", h.pid, h.host)
	}
	return fmt.Sprintf("pid %d", h.pid)
}

// lockPath is the lock file of the session file path.
func lockPath(path string) string {
	return filepath.Join(filepath.Dir(path), "."+filepath.Base(path)+".lock")
}

func hostname() string {
	h, _ := os.Hostname()
	return h
}

// acquireLock takes the lock of the session file path. It returns the lock,
// or (nil, holder) when a live process holds it. ownedHere reports whether
// this process holds the lock of path through a live session; a lock with
// this process's id that it does not hold is a stale one of an earlier
// process that had the same id (a container restarted).
func acquireLock(path string, ownedHere bool) (*fileLock, *lockHolder, error) {
	lp := lockPath(path)
	if err := os.MkdirAll(filepath.Dir(lp), 0o755); err != nil {
		return nil, nil, err
	}
	content := []byte(strconv.Itoa(os.Getpid()) + "\n" + hostname() + "\n")
	for attempt := 0; attempt < 2; attempt++ {
		f, err := os.OpenFile(lp, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o644)
		if err == nil {
			_, werr := f.Write(content)
			cerr := f.Close()
			if werr != nil || cerr != nil {
				os.Remove(lp)
				return nil, nil, errors.Join(werr, cerr)
			}
			return &fileLock{path: lp}, nil, nil
		}
		if !errors.Is(err, fs.ErrExist) {
			return nil, nil, err
		}
		h, ok := readLock(lp)
		if !ok {
			// Unreadable or half written (its writer may be writing it
			// right now): a reader is the safe side.
			return nil, &lockHolder{}, nil
		}
		if h.host != hostname() {
			return nil, &h, nil
		}
		if h.pid == os.Getpid() {
			if ownedHere {
				return nil, &h, nil
			}
		} else if processAlive(h.pid) {
			return nil, &h, nil
		}
		// Stale: its process is gone. Remove it and try once more (another
		// process taking it over at the same moment wins the O_EXCL).
		if err := os.Remove(lp); err != nil && !errors.Is(err, fs.ErrNotExist) {
			return nil, nil, err
		}
	}
	h, _ := readLock(lp)
	return nil, &h, nil
}

// readLock reads a lock file's holder.
func readLock(lp string) (lockHolder, bool) {
	b, err := os.ReadFile(lp)
	if err != nil {
		return lockHolder{}, false
	}
	lines := strings.Split(strings.TrimSpace(string(b)), "\n")
	pid, err := strconv.Atoi(strings.TrimSpace(lines[0]))
	if err != nil || pid <= 0 {
		return lockHolder{}, false
	}
	h := lockHolder{pid: pid}
	if len(lines) > 1 {
		h.host = strings.TrimSpace(lines[1])
	}
	return h, true
}

// release removes the lock file, when it is still this process's.
func (l *fileLock) release() {
	if l == nil {
		return
	}
	if h, ok := readLock(l.path); ok && h.pid == os.Getpid() && h.host == hostname() {
		os.Remove(l.path)
	}
}

// LockedElsewhere reports whether another live process holds the lock of
// the session file path, and which one.
func LockedElsewhere(path string) (string, bool) {
	h, ok := readLock(lockPath(canonical(path)))
	if !ok {
		return "", false
	}
	if h.host == hostname() && (h.pid == os.Getpid() || !processAlive(h.pid)) {
		return "", false
	}
	return h.String(), true
}

// Lock is the lock of one session file, held by a surface that writes one
// session at a time (stdio RPC, print and json modes); web mode's sessions
// hold theirs through the Manager.
type Lock struct {
	path string // the session file (canonical)
	l    *fileLock
}

// TryLock takes the lock of the session file path. When another live
// process holds it, it returns no lock and who holds it ("pid 123", or
// "pid 123 on host"), and the caller must not write the file.
func TryLock(path string) (*Lock, string, error) {
	key := canonical(path)
	l, holder, err := acquireLock(key, false)
	if err != nil {
		return nil, "", fmt.Errorf("cannot lock %s: %v", path, err)
	}
	if holder != nil {
		return nil, holder.String(), nil
	}
	return &Lock{path: key, l: l}, "", nil
}

// Holds reports whether l is the lock of the session file path.
func (l *Lock) Holds(path string) bool {
	return l != nil && l.path == canonical(path)
}

// Release removes the lock file (nil: nothing to release).
func (l *Lock) Release() {
	if l != nil {
		l.l.release()
	}
}
