package auth

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"math/rand/v2"
	"os"
	"path/filepath"
	"runtime"
	"sync"
	"time"
)

// The lock on auth.json is the one pi takes (the npm package
// proper-lockfile): a directory named "<realpath of the file>.lock",
// created with mkdir (atomic) and removed with rmdir. Its modification time
// says the holder is alive: the holder sets it when it takes the lock and
// every LockStale/2 after, and anyone may delete a lock directory whose
// time is older than LockStale. A holder that finds the time is not the one
// it last set (or the directory gone) has lost the lock and writes nothing.
const (
	// LockStale is the age past which a lock directory is taken over.
	LockStale = 30 * time.Second
	// LockWait bounds the wait for a lock another process holds.
	LockWait = 30 * time.Second
)

// ErrLockCompromised means the lock was taken over or removed while held:
// nothing may be written.
var ErrLockCompromised = errors.New("the lock on auth.json was taken over by another process")

// fileLock is a held lock.
type fileLock struct {
	dir  string
	stop chan struct{}
	done chan struct{}

	mu     sync.Mutex
	mtime  time.Time // the time last set on dir
	coarse bool      // the file system keeps whole seconds only
	lost   error
}

// lockPath is the lock directory of file (which must exist): its real path
// plus ".lock", so that every alias of the file shares one lock.
func lockPath(file string) (string, error) {
	real, err := filepath.EvalSymlinks(file)
	if err != nil {
		return "", err
	}
	abs, err := filepath.Abs(real)
	if err != nil {
		return "", err
	}
	return abs + ".lock", nil
}

// acquireLock takes the lock of file, waiting up to wait (pi's retry
// delays: min(10·2ⁿ, 1000) ms times a random factor in [1, 2)). A lock
// older than stale is removed and taken. ctx cancels the wait.
func acquireLock(ctx context.Context, file string, stale, wait time.Duration) (*fileLock, error) {
	dir, err := lockPath(file)
	if err != nil {
		return nil, err
	}
	deadline := time.Now().Add(wait)
	permRetries := 0
	for n := 0; ; n++ {
		ok, err := tryLock(dir, stale)
		// On Windows a directory being removed refuses access for a
		// moment: pi retries that too, at most 5 times.
		if err != nil && runtime.GOOS == "windows" && errors.Is(err, fs.ErrPermission) && permRetries < 5 {
			permRetries++
			ok, err = false, nil
		}
		if err != nil {
			return nil, fmt.Errorf("locking %s: %w", file, err)
		}
		if ok {
			l := &fileLock{dir: dir, stop: make(chan struct{}), done: make(chan struct{})}
			if err := l.touch(true); err != nil {
				os.Remove(dir)
				return nil, fmt.Errorf("locking %s: %w", file, err)
			}
			go l.keepAlive(stale / 2)
			return l, nil
		}
		delay := time.Duration(min(10<<min(n, 10), 1000)) * time.Millisecond
		delay = time.Duration(float64(delay) * (1 + rand.Float64()))
		if time.Now().Add(delay).After(deadline) {
			return nil, fmt.Errorf("auth.json is locked by another process (%s); waited %v", dir, wait)
		}
		t := time.NewTimer(delay)
		select {
		case <-ctx.Done():
			t.Stop()
			return nil, ctx.Err()
		case <-t.C:
		}
	}
}

// tryLock makes the lock directory, taking over a stale one. It reports
// false when a live lock is held by someone else.
func tryLock(dir string, stale time.Duration) (bool, error) {
	for range 3 {
		err := os.Mkdir(dir, 0o777)
		if err == nil {
			return true, nil
		}
		if !errors.Is(err, fs.ErrExist) {
			return false, err
		}
		fi, err := os.Stat(dir)
		if errors.Is(err, fs.ErrNotExist) {
			continue // released meanwhile
		}
		if err != nil {
			return false, err
		}
		if time.Since(fi.ModTime()) <= stale {
			return false, nil
		}
		// Stale: remove it and try again (another process may win).
		if err := os.Remove(dir); err != nil && !errors.Is(err, fs.ErrNotExist) {
			return false, err
		}
	}
	return false, nil
}

// touch sets the lock directory's time to now (first: to the next whole
// second plus 5 ms, which also shows whether the file system keeps
// milliseconds), after checking that the time is still the one last set.
func (l *fileLock) touch(first bool) error {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.lost != nil {
		return l.lost
	}
	if !first {
		if err := l.checkLocked(); err != nil {
			return err
		}
	}
	now := time.Now()
	t := now
	if first {
		t = now.Truncate(time.Second).Add(time.Second + 5*time.Millisecond)
	} else if l.coarse {
		t = now.Truncate(time.Second)
	}
	if err := os.Chtimes(l.dir, t, t); err != nil {
		l.lost = ErrLockCompromised
		return l.lost
	}
	if first {
		fi, err := os.Stat(l.dir)
		if err != nil {
			l.lost = ErrLockCompromised
			return l.lost
		}
		l.coarse = fi.ModTime().Nanosecond() == 0
	}
	l.mtime = t
	if l.coarse {
		l.mtime = t.Truncate(time.Second)
	}
	return nil
}

// checkLocked reports whether the lock is still ours. l.mu is held.
func (l *fileLock) checkLocked() error {
	if l.lost != nil {
		return l.lost
	}
	fi, err := os.Stat(l.dir)
	if err != nil || !sameTime(fi.ModTime(), l.mtime, l.coarse) {
		l.lost = ErrLockCompromised
	}
	return l.lost
}

func sameTime(a, b time.Time, coarse bool) bool {
	if coarse {
		return a.Unix() == b.Unix()
	}
	return a.UnixMilli() == b.UnixMilli()
}

// check reports whether the lock is still held (nil) or was lost.
func (l *fileLock) check() error {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.checkLocked()
}

func (l *fileLock) keepAlive(every time.Duration) {
	defer close(l.done)
	t := time.NewTicker(every)
	defer t.Stop()
	for {
		select {
		case <-l.stop:
			return
		case <-t.C:
			if l.touch(false) != nil {
				return
			}
		}
	}
}

// release stops the upkeep and removes the lock directory, unless the lock
// was lost (then the directory is someone else's).
func (l *fileLock) release() {
	close(l.stop)
	<-l.done
	if l.check() == nil {
		os.Remove(l.dir)
	}
}
