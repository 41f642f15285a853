// Package auth owns auth.json, the file of API keys and subscription
// logins that Pisces shares with pi: reading it, logging in and out,
// refreshing OAuth tokens under pi's lock so that the two programs never
// lose each other's rotated tokens, and the login flows of the providers
// (Anthropic, OpenAI Codex, GitHub Copilot). docs/auth.md describes it.
package auth

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"sync"
	"time"
)

// Store is one auth.json. It is safe for concurrent use; separate
// processes coordinate through the file lock.
type Store struct {
	path string
	opts *Options

	mu      sync.Mutex
	cache   *authFile
	rev     revision
	flights map[string]*flight

	// closing ends lock waits of refreshes when the process stops;
	// pending counts refreshes whose result is not written yet.
	closing context.Context
	stop    context.CancelFunc
	pending sync.WaitGroup
}

type flight struct {
	done chan struct{}
	cred *Credential
	err  error
}

// revision tells whether the file changed since it was read.
type revision struct {
	exists bool
	size   int64
	mtime  time.Time
}

func statRevision(path string) (revision, error) {
	fi, err := os.Stat(path)
	if errors.Is(err, fs.ErrNotExist) {
		return revision{}, nil
	}
	if err != nil {
		return revision{}, err
	}
	return revision{exists: true, size: fi.Size(), mtime: fi.ModTime()}, nil
}

// RefreshMargin is how long before its expiry a token is refreshed (on
// top of the margin each provider takes off when it stores expires).
const RefreshMargin = 5 * time.Minute

// RefreshTimeout bounds one refresh call to a vendor; once sent, the call
// is never cancelled, so that a rotated token is saved.
const RefreshTimeout = 15 * time.Second

// Open returns the store of the auth.json at path (which need not exist).
// opts may be nil.
func Open(path string, opts *Options) *Store {
	if opts == nil {
		opts = &Options{}
	}
	ctx, cancel := context.WithCancel(context.Background())
	return &Store{path: path, opts: opts, flights: map[string]*flight{}, closing: ctx, stop: cancel}
}

// Path is the file's path.
func (s *Store) Path() string { return s.path }

// Options are the store's flow options.
func (s *Store) Options() *Options { return s.opts }

// Close waits for refreshes already sent to be written (each is bounded
// by RefreshTimeout) and gives up those still waiting for the lock.
func (s *Store) Close() {
	s.stop()
	s.pending.Wait()
}

// load returns the file's content, reading it again when it changed. A
// file that does not parse, or changed while it was read (pi truncates,
// then writes), is read again under the lock.
func (s *Store) load(ctx context.Context) (*authFile, error) {
	// s.mu guards the cache only: it is never held while waiting for the
	// file lock, whose holder takes s.mu once it has written the file.
	s.mu.Lock()
	rev, err := statRevision(s.path)
	if err != nil {
		s.mu.Unlock()
		return nil, err
	}
	if s.cache != nil && rev == s.rev {
		f := s.cache
		s.mu.Unlock()
		return f, nil
	}
	s.mu.Unlock()
	var f *authFile
	if !rev.exists {
		f = &authFile{}
	} else {
		data, rerr := os.ReadFile(s.path)
		after, _ := statRevision(s.path)
		// An empty file is one being written (pi creates it as "{}").
		empty := len(bytes.TrimSpace(data)) == 0
		if rerr == nil && after == rev && !empty {
			f, err = parseAuthFile(data)
		}
		if rerr != nil || after != rev || empty || err != nil {
			// Being written: read it under the lock.
			l, lerr := acquireLock(ctx, s.path, LockStale, LockWait)
			if lerr != nil {
				if err != nil {
					return nil, fmt.Errorf("%s: %v", s.path, err)
				}
				return nil, lerr
			}
			defer l.release()
			if rev, err = statRevision(s.path); err != nil {
				return nil, err
			}
			data, err := os.ReadFile(s.path)
			if err != nil {
				return nil, err
			}
			if f, err = parseAuthFile(data); err != nil {
				return nil, fmt.Errorf("%s: %v", s.path, err)
			}
		}
	}
	s.mu.Lock()
	s.cache, s.rev = f, rev
	s.mu.Unlock()
	return f, nil
}

// Get returns a provider's stored credential (nil when none is stored).
func (s *Store) Get(ctx context.Context, provider string) (*Credential, error) {
	f, err := s.load(ctx)
	if err != nil {
		return nil, err
	}
	c, err := f.get(provider)
	if err != nil {
		return nil, fmt.Errorf("%s: %v", s.path, err)
	}
	return c, nil
}

// Names lists the providers that have an entry.
func (s *Store) Names(ctx context.Context) ([]string, error) {
	f, err := s.load(ctx)
	if err != nil {
		return nil, err
	}
	out := make([]string, 0, len(f.entries))
	for _, e := range f.entries {
		out = append(out, e.name)
	}
	return out, nil
}

// update runs fn on the file's current content under the lock and writes
// the result in place (creating the file, 0600 in a 0700 directory, when
// missing). Nothing is written when fn fails or the lock was lost.
func (s *Store) update(ctx context.Context, fn func(f *authFile) (bool, error)) error {
	if err := ensureFile(s.path); err != nil {
		return err
	}
	l, err := acquireLock(ctx, s.path, LockStale, LockWait)
	if err != nil {
		return err
	}
	defer l.release()
	return s.updateLocked(l, fn)
}

func (s *Store) updateLocked(l *fileLock, fn func(f *authFile) (bool, error)) error {
	data, err := os.ReadFile(s.path)
	if err != nil {
		return err
	}
	f, err := parseAuthFile(data)
	if err != nil {
		return fmt.Errorf("%s: %v (fix or remove the file)", s.path, err)
	}
	changed, err := fn(f)
	if err != nil || !changed {
		return err
	}
	out, err := f.encode()
	if err != nil {
		return err
	}
	if err := l.check(); err != nil {
		return err
	}
	if err := writeInPlace(s.path, out); err != nil {
		return err
	}
	s.mu.Lock()
	s.cache, s.rev = nil, revision{}
	s.mu.Unlock()
	return nil
}

// Set stores a provider's credential, replacing its whole entry; the other
// entries stay as they are.
func (s *Store) Set(ctx context.Context, provider string, c *Credential) error {
	return s.update(ctx, func(f *authFile) (bool, error) { return true, f.set(provider, c) })
}

// Delete removes a provider's entry; it reports whether there was one.
func (s *Store) Delete(ctx context.Context, provider string) (bool, error) {
	if rev, err := statRevision(s.path); err != nil || !rev.exists {
		return false, err
	}
	had := false
	err := s.update(ctx, func(f *authFile) (bool, error) {
		had = f.find(provider) >= 0
		return had, f.set(provider, nil)
	})
	return had, err
}

// needsRefresh is pi's rule: refresh when less than max(RefreshMargin,
// minValid) is left.
func (s *Store) needsRefresh(c *Credential, minValid time.Duration) bool {
	return s.opts.now().Add(max(RefreshMargin, minValid)).UnixMilli() >= c.Expires
}

// RefreshError is a refresh that failed; the stored login is kept.
type RefreshError struct {
	Provider string
	Err      error
}

func (e *RefreshError) Error() string {
	return fmt.Sprintf("OAuth refresh failed for %s: %v; log in again with `pisces auth login %s`", e.Provider, e.Err, e.Provider)
}

func (e *RefreshError) Unwrap() error { return e.Err }

// Token returns a provider's credential, with its OAuth access token
// refreshed first when less than max(RefreshMargin, minValid) of it is
// left. The refresh follows the protocol pi follows: under the lock,
// after reading the file again (another process may have refreshed
// already: its token is used), writing the new entry before the lock is
// released. ctx ends the wait, not a refresh already sent: that one
// completes and is written (Close waits for it). nil, nil when nothing is
// stored.
func (s *Store) Token(ctx context.Context, provider string, minValid time.Duration) (*Credential, error) {
	c, err := s.Get(ctx, provider)
	if err != nil || !c.IsOAuth() || !s.needsRefresh(c, minValid) {
		return c, err
	}
	p, ok := Lookup(provider)
	if !ok {
		return nil, fmt.Errorf("%s: %s has an OAuth login Pisces cannot refresh; log in with pi or store an API key", s.path, provider)
	}
	s.mu.Lock()
	fl := s.flights[provider]
	if fl == nil {
		fl = &flight{done: make(chan struct{})}
		s.flights[provider] = fl
		s.pending.Add(1)
		go func() {
			defer s.pending.Done()
			fl.cred, fl.err = s.refresh(p, minValid)
			s.mu.Lock()
			delete(s.flights, provider)
			s.mu.Unlock()
			close(fl.done)
		}()
	}
	s.mu.Unlock()
	select {
	case <-fl.done:
		return fl.cred, fl.err
	case <-ctx.Done():
		return nil, ctx.Err()
	}
}

// refresh runs under the lock, detached from any caller.
func (s *Store) refresh(p Provider, minValid time.Duration) (*Credential, error) {
	l, err := acquireLock(s.closing, s.path, LockStale, LockWait)
	if err != nil {
		return nil, &RefreshError{Provider: p.ID(), Err: err}
	}
	defer l.release()
	var out *Credential
	var rerr error
	err = s.updateLocked(l, func(f *authFile) (bool, error) {
		c, err := f.get(p.ID())
		if err != nil {
			return false, err
		}
		if !c.IsOAuth() || !s.needsRefresh(c, minValid) {
			out = c // logged out, replaced, or refreshed by another process
			return false, nil
		}
		ctx, cancel := context.WithTimeout(context.Background(), RefreshTimeout)
		defer cancel()
		nc, err := p.Refresh(ctx, s.opts, c)
		if err != nil {
			rerr = err
			return false, nil
		}
		out = nc
		return true, f.set(p.ID(), nc)
	})
	if rerr != nil {
		return nil, &RefreshError{Provider: p.ID(), Err: rerr}
	}
	if err != nil {
		return nil, &RefreshError{Provider: p.ID(), Err: err}
	}
	if out != nil && out.IsOAuth() && s.needsRefresh(out, minValid) && minValid > RefreshMargin {
		return out, &RefreshError{Provider: p.ID(), Err: fmt.Errorf("the new token is valid for less than %v", minValid)}
	}
	return out, nil
}

// Login runs a provider's login flow and stores the result.
func (s *Store) Login(ctx context.Context, provider string, ui *LoginUI) (*Credential, error) {
	p, ok := Lookup(provider)
	if !ok {
		return nil, fmt.Errorf("unknown login provider %q (known: %s)", provider, knownIDs())
	}
	c, err := p.Login(ctx, s.opts, ui)
	if err != nil {
		return nil, err
	}
	if err := s.Set(context.WithoutCancel(ctx), provider, c); err != nil {
		return nil, fmt.Errorf("logged in, but cannot save the login: %w", err)
	}
	return c, nil
}

func knownIDs() string {
	out := ""
	for i, p := range Providers() {
		if i > 0 {
			out += ", "
		}
		out += p.ID()
	}
	return out
}
