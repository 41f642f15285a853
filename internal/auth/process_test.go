package auth_test

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/pisces-agent/pisces/internal/auth"
	"github.com/pisces-agent/pisces/internal/auth/authtest"
	"github.com/pisces-agent/pisces/internal/testenv"
)

func TestMain(m *testing.M) {
	code := m.Run()
	testenv.Cleanup()
	os.Exit(code)
}

// These tests run separate processes on one auth.json: pisces binaries,
// and a Node.js script that takes the lock with proper-lockfile as pi
// does.

func piscesBinary(t *testing.T) string {
	t.Helper()
	bin, err := testenv.PiscesBinary()
	if err != nil {
		t.Fatal(err)
	}
	return bin
}

// writeExpiredLogin writes an auth.json whose Anthropic login has expired.
func writeExpiredLogin(t *testing.T, srv *authtest.Server) (dir, refresh string) {
	t.Helper()
	dir = t.TempDir()
	refresh = srv.IssueRefresh("anthropic")
	data := fmt.Sprintf(`{
  "openai": {"type": "api_key", "key": "sk-other"},
  "anthropic": {"type": "oauth", "refresh": %q, "access": "sk-ant-oat01-old", "expires": %d}
}`, refresh, time.Now().Add(-time.Minute).UnixMilli())
	if err := os.WriteFile(filepath.Join(dir, "auth.json"), []byte(data), 0o600); err != nil {
		t.Fatal(err)
	}
	return dir, refresh
}

// printToken starts `pisces auth print-bearer-token --provider anthropic`.
func printToken(t *testing.T, bin, dir, server string) (*exec.Cmd, *bytes.Buffer, *syncBuffer) {
	t.Helper()
	cmd := exec.Command(bin, "auth", "print-bearer-token", "--provider", "anthropic", "--agent-dir", dir)
	cmd.Env = append(os.Environ(), auth.ServerEnv+"="+server, "HOME="+dir)
	var out bytes.Buffer
	errb := &syncBuffer{changed: make(chan struct{}, 1)}
	cmd.Stdout, cmd.Stderr = &out, errb
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	return cmd, &out, errb
}

// syncBuffer is a process's stderr that a test may read while it runs.
type syncBuffer struct {
	mu      sync.Mutex
	b       bytes.Buffer
	changed chan struct{}
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	select {
	case s.changed <- struct{}{}:
	default:
	}
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

// waitFor waits until the text has been written.
func (s *syncBuffer) waitFor(t *testing.T, text string) {
	t.Helper()
	deadline := time.After(2 * time.Minute)
	for !strings.Contains(s.String(), text) {
		select {
		case <-s.changed:
		case <-deadline:
			t.Fatalf("no %q in %q", text, s.String())
		}
	}
}

func storedLogin(t *testing.T, dir string) map[string]any {
	t.Helper()
	data, err := os.ReadFile(filepath.Join(dir, "auth.json"))
	if err != nil {
		t.Fatal(err)
	}
	var m map[string]map[string]any
	if err := json.Unmarshal(data, &m); err != nil {
		t.Fatalf("%v: %s", err, data)
	}
	if m["openai"]["key"] != "sk-other" {
		t.Errorf("another provider's entry changed: %v", m["openai"])
	}
	return m["anthropic"]
}

// TestTwoProcessesRefreshOnce: two pisces processes need the same expired
// token at once. The first refreshes under the lock (its answer is held
// until the second has started); the second waits for the lock and uses
// the token the first wrote. One refresh, one token, the rotated refresh
// token saved.
func TestTwoProcessesRefreshOnce(t *testing.T) {
	bin := piscesBinary(t)
	srv := authtest.New(t)
	dir, _ := writeExpiredLogin(t, srv)
	started := make(chan struct{})
	release := make(chan struct{})
	var once sync.Once
	srv.Set(func(s *authtest.Server) {
		s.BeforeRefresh = func(string) {
			once.Do(func() { close(started) })
			<-release
		}
	})
	c1, out1, err1 := printToken(t, bin, dir, srv.URL)
	select {
	case <-started:
	case <-time.After(2 * time.Minute):
		t.Fatalf("no refresh from the first process: %s", err1)
	}
	c2, out2, err2 := printToken(t, bin, dir, srv.URL)
	close(release)
	if err := c1.Wait(); err != nil {
		t.Fatalf("first: %v: %s", err, err1)
	}
	if err := c2.Wait(); err != nil {
		t.Fatalf("second: %v: %s", err, err2)
	}
	tok1, tok2 := strings.TrimSpace(out1.String()), strings.TrimSpace(out2.String())
	stored := storedLogin(t, dir)
	if tok1 == "sk-ant-oat01-old" || tok1 != tok2 || stored["access"] != tok1 {
		t.Fatalf("tokens %q %q, stored %v", tok1, tok2, stored)
	}
	if n := srv.Refreshes("anthropic"); n != 1 {
		t.Fatalf("%d refreshes", n)
	}
	if !srv.Live(stored["refresh"].(string)) {
		t.Fatal("the stored refresh token is not the live one")
	}
}

// node starts the lock holder script on file.
type nodeHolder struct {
	t     *testing.T
	cmd   *exec.Cmd
	in    io.WriteCloser
	lines *bufio.Scanner
}

func startNode(t *testing.T, file string) *nodeHolder {
	t.Helper()
	node := testenv.LookPath(t, "node")
	modules, _ := filepath.Abs(filepath.Join("testdata", "node", "node_modules"))
	if _, err := os.Stat(filepath.Join(modules, "proper-lockfile")); err != nil {
		testenv.Unavailable(t, "needs the npm package proper-lockfile (npm ci --prefix internal/auth/testdata/node)")
	}
	cmd := exec.Command(node, filepath.Join("testdata", "lockholder.js"), file)
	cmd.Env = append(os.Environ(), "NODE_PATH="+modules)
	cmd.Stderr = os.Stderr
	in, _ := cmd.StdinPipe()
	out, _ := cmd.StdoutPipe()
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	h := &nodeHolder{t: t, cmd: cmd, in: in, lines: bufio.NewScanner(out)}
	t.Cleanup(func() {
		in.Close()
		cmd.Process.Kill()
		cmd.Wait()
	})
	return h
}

// do sends a command and returns the answer line.
func (h *nodeHolder) do(cmd string) string {
	h.t.Helper()
	if _, err := io.WriteString(h.in, cmd+"\n"); err != nil {
		h.t.Fatal(err)
	}
	if !h.lines.Scan() {
		h.t.Fatalf("node ended before answering %q", cmd)
	}
	return h.lines.Text()
}

// TestLockSharedWithPi: pi (proper-lockfile) holds the lock and refreshes;
// pisces waits for it and uses pi's token without refreshing. Then pisces
// holds the lock during its refresh, and pi sees it locked.
func TestLockSharedWithPi(t *testing.T) {
	bin := piscesBinary(t)
	srv := authtest.New(t)
	dir, _ := writeExpiredLogin(t, srv)
	file := filepath.Join(dir, "auth.json")
	pi := startNode(t, file)

	if got := pi.do("lock"); got != "locked" {
		t.Fatalf("node lock: %s", got)
	}
	if _, err := os.Stat(file + ".lock"); err != nil {
		t.Fatalf("proper-lockfile's lock is not where pisces looks: %v", err)
	}
	cmd, out, errb := printToken(t, bin, dir, srv.URL)
	// pi's refresh: a token the fake vendor never issued, so a pisces that
	// ignored the lock would print another one.
	piEntry := fmt.Sprintf(`{"type":"oauth","refresh":"pi-refresh","access":"sk-ant-oat01-from-pi","expires":%d}`, time.Now().Add(time.Hour).UnixMilli())
	if got := pi.do("write anthropic " + piEntry); got != "written" {
		t.Fatalf("node write: %s", got)
	}
	if got := pi.do("unlock"); got != "unlocked" {
		t.Fatalf("node unlock: %s", got)
	}
	if err := cmd.Wait(); err != nil {
		t.Fatalf("pisces: %v: %s", err, errb)
	}
	if got := strings.TrimSpace(out.String()); got != "sk-ant-oat01-from-pi" || srv.Refreshes("anthropic") != 0 {
		t.Fatalf("pisces printed %q after %d refreshes", got, srv.Refreshes("anthropic"))
	}

	// Now pisces refreshes (its answer held): pi finds the file locked.
	os.WriteFile(file, []byte(fmt.Sprintf(`{"openai": {"type": "api_key", "key": "sk-other"}, "anthropic": {"type": "oauth", "refresh": %q, "access": "sk-ant-oat01-old", "expires": 1}}`, srv.IssueRefresh("anthropic"))), 0o600)
	started := make(chan struct{})
	release := make(chan struct{})
	var once sync.Once
	srv.Set(func(s *authtest.Server) {
		s.BeforeRefresh = func(string) {
			once.Do(func() { close(started) })
			<-release
		}
	})
	cmd, out, errb = printToken(t, bin, dir, srv.URL)
	select {
	case <-started:
	case <-time.After(2 * time.Minute):
		t.Fatalf("no refresh: %s", errb)
	}
	checked, locked := pi.do("check"), pi.do("lock")
	close(release)
	if err := cmd.Wait(); err != nil {
		t.Fatalf("pisces: %v: %s", err, errb)
	}
	if checked != "held" || locked != "ELOCKED" {
		t.Fatalf("while pisces refreshed, pi saw check=%s lock=%s", checked, locked)
	}
	if got := pi.do("check"); got != "free" {
		t.Fatalf("after pisces: %s", got)
	}
	if tok := strings.TrimSpace(out.String()); storedLogin(t, dir)["access"] != tok || srv.Refreshes("anthropic") != 1 {
		t.Fatalf("printed %q, stored %v", tok, storedLogin(t, dir))
	}
}

// TestStaleLockOfDeadPi: pi died holding the lock (killed: nothing
// removed it). Once the lock is older than pi's stale time, pisces takes
// it over and refreshes.
func TestStaleLockOfDeadPi(t *testing.T) {
	bin := piscesBinary(t)
	srv := authtest.New(t)
	dir, _ := writeExpiredLogin(t, srv)
	file := filepath.Join(dir, "auth.json")
	pi := startNode(t, file)
	if got := pi.do("lock"); got != "locked" {
		t.Fatalf("node lock: %s", got)
	}
	pi.cmd.Process.Kill()
	pi.cmd.Wait()
	lock, _ := filepath.EvalSymlinks(file)
	lock += ".lock"
	if _, err := os.Stat(lock); err != nil {
		t.Fatalf("the dead holder's lock is gone: %v", err)
	}
	// Its time, as if pi's stale time had passed since its last update.
	old := time.Now().Add(-auth.LockStale - 2*time.Second)
	os.Chtimes(lock, old, old)
	cmd, out, errb := printToken(t, bin, dir, srv.URL)
	if err := cmd.Wait(); err != nil {
		t.Fatalf("pisces: %v: %s", err, errb)
	}
	if tok := strings.TrimSpace(out.String()); tok == "sk-ant-oat01-old" || storedLogin(t, dir)["access"] != tok {
		t.Fatalf("printed %q", tok)
	}
	if _, err := os.Stat(lock); err == nil {
		t.Fatal("the lock was left behind")
	}
}

// TestSIGTERMDuringRefresh: a pisces process told to stop while its
// refresh is on the wire still saves the rotated token before it exits.
func TestSIGTERMDuringRefresh(t *testing.T) {
	if runtime.GOOS == "windows" {
		t.Skip("SIGTERM is a Unix signal")
	}
	bin := piscesBinary(t)
	srv := authtest.New(t)
	dir, _ := writeExpiredLogin(t, srv)
	started := make(chan struct{})
	release := make(chan struct{})
	var once sync.Once
	srv.Set(func(s *authtest.Server) {
		s.BeforeRefresh = func(string) {
			once.Do(func() { close(started) })
			<-release
		}
	})
	cmd, _, errb := printToken(t, bin, dir, srv.URL)
	select {
	case <-started:
	case <-time.After(2 * time.Minute):
		t.Fatalf("no refresh: %s", errb)
	}
	if err := cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	// The command has given up (its context ended) while the refresh is
	// still held by the server: only then does the answer come.
	errb.waitFor(t, "context canceled")
	close(release)
	cmd.Wait()
	stored := storedLogin(t, dir)
	if stored["access"] == "sk-ant-oat01-old" || !srv.Live(stored["refresh"].(string)) || srv.Refreshes("anthropic") != 1 {
		t.Fatalf("after SIGTERM: stored %v, %d refreshes; stderr %s", stored, srv.Refreshes("anthropic"), errb)
	}
}
