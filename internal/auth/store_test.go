package auth

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/pisces-agent/pisces/internal/auth/authtest"
)

const googleEntry = `{
  "google-gemini-cli": {
    "type": "oauth",
    "refresh": "g-refresh",
    "access": "g-access",
    "expires": 1700000000000,
    "projectId": "rising-fact-p41fc",
    "email": "a@example.com"
  },
  "openai": {
    "type": "api_key",
    "key": "OPENAI_KEY_VAR"
  }
}`

func TestSetKeepsOtherEntriesAndWritesLikePi(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "auth.json")
	if err := os.WriteFile(path, []byte("\ufeff"+googleEntry), 0o640); err != nil {
		t.Fatal(err)
	}
	s := Open(path, nil)
	c := &Credential{Type: TypeOAuth, Refresh: "r1", Access: "a1", Expires: 1800000000000}
	if err := s.Set(t.Context(), "anthropic", c); err != nil {
		t.Fatal(err)
	}
	got, _ := os.ReadFile(path)
	want := strings.TrimSuffix(googleEntry, "\n}") + `,
  "anthropic": {
    "type": "oauth",
    "refresh": "r1",
    "access": "a1",
    "expires": 1800000000000
  }
}`
	if string(got) != want {
		t.Fatalf("file:\n%s\nwant:\n%s", got, want)
	}
	if fi, _ := os.Stat(path); runtime.GOOS != "windows" && fi.Mode().Perm() != 0o640 {
		t.Errorf("mode %v: an existing file keeps its mode", fi.Mode().Perm())
	}
	// A refresh replaces the whole entry, in its place.
	if err := s.Set(t.Context(), "google-gemini-cli", &Credential{Type: TypeAPIKey, Key: "k"}); err != nil {
		t.Fatal(err)
	}
	got, _ = os.ReadFile(path)
	if !strings.HasPrefix(string(got), "{\n  \"google-gemini-cli\": {\n    \"type\": \"api_key\",\n    \"key\": \"k\"\n  },\n  \"openai\"") {
		t.Fatalf("file:\n%s", got)
	}
	if had, err := s.Delete(t.Context(), "openai"); !had || err != nil {
		t.Fatalf("delete: %v %v", had, err)
	}
	if had, err := s.Delete(t.Context(), "openai"); had || err != nil {
		t.Fatalf("second delete: %v %v", had, err)
	}
	names, _ := s.Names(t.Context())
	if strings.Join(names, ",") != "google-gemini-cli,anthropic" {
		t.Fatalf("names %v", names)
	}
}

func TestCreateModesAndSymlink(t *testing.T) {
	if runtime.GOOS == "windows" {
		t.Skip("modes and symbolic links as on Unix")
	}
	dir := filepath.Join(t.TempDir(), "agent")
	path := filepath.Join(dir, "auth.json")
	s := Open(path, nil)
	if err := s.Set(t.Context(), "openai", &Credential{Type: TypeAPIKey, Key: "k"}); err != nil {
		t.Fatal(err)
	}
	fi, _ := os.Stat(path)
	di, _ := os.Stat(dir)
	if fi.Mode().Perm() != 0o600 || di.Mode().Perm() != 0o700 {
		t.Fatalf("modes %v %v", fi.Mode().Perm(), di.Mode().Perm())
	}
	// auth.json as a symbolic link: written through it, the link stays,
	// and the lock is named after the real file.
	real := filepath.Join(t.TempDir(), "real-auth.json")
	if err := os.WriteFile(real, []byte(`{}`), 0o600); err != nil {
		t.Fatal(err)
	}
	link := filepath.Join(t.TempDir(), "auth.json")
	if err := os.Symlink(real, link); err != nil {
		t.Fatal(err)
	}
	if err := Open(link, nil).Set(t.Context(), "x", &Credential{Type: TypeAPIKey, Key: "v"}); err != nil {
		t.Fatal(err)
	}
	if li, _ := os.Lstat(link); li.Mode()&os.ModeSymlink == 0 {
		t.Fatal("the link was replaced")
	}
	if data, _ := os.ReadFile(real); !strings.Contains(string(data), `"key": "v"`) {
		t.Fatalf("real file %s", data)
	}
	lp, _ := lockPath(link)
	rp, _ := filepath.EvalSymlinks(real)
	if lp != rp+".lock" {
		t.Fatalf("lock %s, want %s.lock", lp, rp)
	}
}

func TestBadEntries(t *testing.T) {
	path := filepath.Join(t.TempDir(), "auth.json")
	os.WriteFile(path, []byte(`{"a": {"type":"oauth","access":"x"}, "b": {"type":"weird"}, "c": {"type":"api_key","key":"k"}}`), 0o600)
	s := Open(path, nil)
	if _, err := s.Get(t.Context(), "a"); err == nil || !strings.Contains(err.Error(), "needs access, refresh and expires") {
		t.Errorf("a: %v", err)
	}
	if _, err := s.Get(t.Context(), "b"); err == nil || !strings.Contains(err.Error(), `unknown type "weird"`) {
		t.Errorf("b: %v", err)
	}
	if c, err := s.Get(t.Context(), "c"); err != nil || c.Key != "k" {
		t.Errorf("c: %v %v", c, err)
	}
}

// storeWith writes an auth.json with one OAuth entry of provider whose
// refresh token the fake server knows, expiring at exp.
func storeWith(t *testing.T, srv *authtest.Server, provider string, exp time.Time) (*Store, string) {
	t.Helper()
	path := filepath.Join(t.TempDir(), "auth.json")
	refresh := srv.IssueRefresh(provider)
	s := Open(path, &Options{Server: srv.URL})
	if err := s.Set(t.Context(), provider, &Credential{Type: TypeOAuth, Refresh: refresh, Access: "old-access", Expires: exp.UnixMilli()}); err != nil {
		t.Fatal(err)
	}
	return s, refresh
}

func TestTokenRefreshesNearExpiry(t *testing.T) {
	srv := authtest.New(t)
	// 20 minutes left: no refresh.
	s, _ := storeWith(t, srv, "anthropic", time.Now().Add(20*time.Minute))
	c, err := s.Token(t.Context(), "anthropic", 0)
	if err != nil || c.Access != "old-access" || srv.Refreshes("anthropic") != 0 {
		t.Fatalf("%+v %v", c, err)
	}
	// Asking for 30 minutes: refresh.
	c, err = s.Token(t.Context(), "anthropic", 30*time.Minute)
	if err != nil || c.Access == "old-access" || srv.Refreshes("anthropic") != 1 {
		t.Fatalf("%+v %v", c, err)
	}
	// Written to the file, with the rotated refresh token.
	again, _ := Open(s.Path(), nil).Get(t.Context(), "anthropic")
	if again.Access != c.Access || again.Refresh != c.Refresh || !srv.Live(c.Refresh) {
		t.Fatalf("stored %+v, returned %+v", again, c)
	}
	// 4 minutes left: inside the margin.
	s2, _ := storeWith(t, srv, "openai-codex", time.Now().Add(4*time.Minute))
	c, err = s2.Token(t.Context(), "openai-codex", 0)
	if err != nil || c.AccountID != "acct-123" || srv.Refreshes("openai-codex") != 1 {
		t.Fatalf("%+v %v", c, err)
	}
}

func TestFailedRefreshKeepsTheLogin(t *testing.T) {
	srv := authtest.New(t)
	s, refresh := storeWith(t, srv, "anthropic", time.Now().Add(-time.Hour))
	srv.Set(func(s *authtest.Server) { s.FailRefresh = true })
	_, err := s.Token(t.Context(), "anthropic", 0)
	var re *RefreshError
	if !errors.As(err, &re) || !strings.Contains(err.Error(), "OAuth refresh failed for anthropic") || !strings.Contains(err.Error(), "pisces auth login anthropic") {
		t.Fatalf("error %v", err)
	}
	c, _ := Open(s.Path(), nil).Get(t.Context(), "anthropic")
	if c == nil || c.Refresh != refresh {
		t.Fatalf("stored %+v", c)
	}
}

// TestRefreshUsesAnotherProcessesToken: a token refreshed by someone else
// while this store waited for the lock is used as it is.
func TestRefreshUsesAnotherProcessesToken(t *testing.T) {
	srv := authtest.New(t)
	s, _ := storeWith(t, srv, "anthropic", time.Now().Add(-time.Hour))
	other := Open(s.Path(), nil)
	l, err := acquireLock(t.Context(), s.Path(), LockStale, LockWait)
	if err != nil {
		t.Fatal(err)
	}
	done := make(chan *Credential)
	go func() {
		c, err := s.Token(context.Background(), "anthropic", 0)
		if err != nil {
			t.Error(err)
		}
		done <- c
	}()
	// While the lock is held, the other writer stores a fresh token.
	fresh := &Credential{Type: TypeOAuth, Refresh: "theirs", Access: "their-access", Expires: time.Now().Add(time.Hour).UnixMilli()}
	if err := other.updateLocked(l, func(f *authFile) (bool, error) { return true, f.set("anthropic", fresh) }); err != nil {
		t.Fatal(err)
	}
	l.release()
	c := <-done
	if c.Access != "their-access" || srv.Refreshes("anthropic") != 0 {
		t.Fatalf("got %+v after %d refreshes", c, srv.Refreshes("anthropic"))
	}
}

// TestConcurrentTokenOneRefresh: many callers of one store and of two
// stores on the same file refresh once.
func TestConcurrentTokenOneRefresh(t *testing.T) {
	srv := authtest.New(t)
	s, _ := storeWith(t, srv, "anthropic", time.Now().Add(-time.Hour))
	stores := []*Store{s, Open(s.Path(), &Options{Server: srv.URL})}
	var wg sync.WaitGroup
	got := make([]string, 8)
	for i := range got {
		wg.Add(1)
		go func() {
			defer wg.Done()
			c, err := stores[i%2].Token(context.Background(), "anthropic", 0)
			if err != nil {
				t.Error(err)
				return
			}
			got[i] = c.Access
		}()
	}
	wg.Wait()
	for _, a := range got {
		if a != got[0] || a == "old-access" {
			t.Fatalf("tokens %v", got)
		}
	}
	if n := srv.Refreshes("anthropic"); n != 1 {
		t.Fatalf("%d refreshes", n)
	}
}

// TestRefreshSurvivesCancel: a caller that gives up does not stop a
// refresh already sent; its new tokens are written and Close waits.
func TestRefreshSurvivesCancel(t *testing.T) {
	srv := authtest.New(t)
	s, _ := storeWith(t, srv, "anthropic", time.Now().Add(-time.Hour))
	sent := make(chan struct{})
	release := make(chan struct{})
	srv.Set(func(s *authtest.Server) {
		s.BeforeRefresh = func(string) {
			close(sent)
			<-release
		}
	})
	ctx, cancel := context.WithCancel(context.Background())
	errc := make(chan error)
	go func() {
		_, err := s.Token(ctx, "anthropic", 0)
		errc <- err
	}()
	<-sent
	cancel()
	if err := <-errc; !errors.Is(err, context.Canceled) {
		t.Fatalf("error %v", err)
	}
	closed := make(chan struct{})
	go func() { s.Close(); close(closed) }()
	close(release)
	<-closed
	c, _ := Open(s.Path(), nil).Get(t.Context(), "anthropic")
	if c.Access == "old-access" || !srv.Live(c.Refresh) {
		t.Fatalf("stored %+v", c)
	}
}

func TestStaleLockIsTakenOver(t *testing.T) {
	path := filepath.Join(t.TempDir(), "auth.json")
	os.WriteFile(path, []byte(`{}`), 0o600)
	lp, _ := lockPath(path)
	if err := os.Mkdir(lp, 0o700); err != nil {
		t.Fatal(err)
	}
	// Fresh: not taken within a short wait.
	if _, err := acquireLock(t.Context(), path, LockStale, 200*time.Millisecond); err == nil || !strings.Contains(err.Error(), "locked by another process") {
		t.Fatalf("fresh lock: %v", err)
	}
	old := time.Now().Add(-LockStale - time.Second)
	os.Chtimes(lp, old, old)
	l, err := acquireLock(t.Context(), path, LockStale, time.Second)
	if err != nil {
		t.Fatalf("stale lock: %v", err)
	}
	if err := l.check(); err != nil {
		t.Fatal(err)
	}
	// Someone breaks it: the holder notices and writes nothing.
	os.Remove(lp)
	if err := Open(path, nil).updateLocked(l, func(f *authFile) (bool, error) { return true, f.set("x", &Credential{Type: TypeAPIKey, Key: "k"}) }); !errors.Is(err, ErrLockCompromised) {
		t.Fatalf("write after losing the lock: %v", err)
	}
	l.release()
	if data, _ := os.ReadFile(path); string(data) != "{}" {
		t.Fatalf("file %s", data)
	}
}

// TestReadDuringWrite: a reader that finds the file half-written (pi
// truncates, then writes) reads it again under the lock instead of
// reporting no key.
func TestReadDuringWrite(t *testing.T) {
	path := filepath.Join(t.TempDir(), "auth.json")
	os.WriteFile(path, []byte(`{"openai":{"type":"api_key","key":"k1"}}`), 0o600)
	l, err := acquireLock(t.Context(), path, LockStale, LockWait)
	if err != nil {
		t.Fatal(err)
	}
	os.WriteFile(path, []byte(`{"openai":{"type":"api_`), 0o600) // the writer is half-way
	got := make(chan *Credential)
	go func() {
		c, err := Open(path, nil).Get(context.Background(), "openai")
		if err != nil {
			t.Error(err)
		}
		got <- c
	}()
	// The reader sees the half-written file and waits for the lock (or,
	// late, the finished file): either way it gets the finished entry.
	os.WriteFile(path, []byte(`{"openai":{"type":"api_key","key":"k2"}}`), 0o600)
	l.release()
	if c := <-got; c == nil || c.Key != "k2" {
		t.Fatalf("got %+v", c)
	}
}
