package sessions

import (
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/pisces-agent/pisces/internal/core"
	"github.com/pisces-agent/pisces/internal/session"
)

const waitLimit = 30 * time.Second

func newManager(t *testing.T, grace time.Duration) (*Manager, string) {
	t.Helper()
	dir := t.TempDir()
	agentDir := filepath.Join(dir, "agent")
	m := New(Options{
		Grace: grace,
		Log:   io.Discard,
		Build: func(req BuildRequest) (*Built, error) {
			s, err := core.New(core.Options{AgentDir: agentDir, Cwd: req.Store.Cwd(), Store: req.Store,
				SessionDir: filepath.Join(dir, "sessions"), NoContextFiles: true, Log: io.Discard})
			if err != nil {
				return nil, err
			}
			return &Built{Core: s}, nil
		},
	})
	t.Cleanup(m.Close)
	return m, dir
}

func writeSession(t *testing.T, dir, name string) string {
	t.Helper()
	p := filepath.Join(dir, name)
	content := `{"type":"session","version":3,"id":"0199cccc-0000-7000-8000-00000000000` + strconv.Itoa(len(name)%10) + `","timestamp":"2026-01-01T00:00:00.000Z","cwd":"` + dir + `"}
{"type":"message","id":"cccc0001","parentId":null,"timestamp":"2026-01-01T00:00:01.000Z","message":{"role":"user","content":[{"type":"text","text":"hello"}],"timestamp":1767225601000}}
{"type":"thinking_level_change","id":"cccc0002","parentId":"cccc0001","timestamp":"2026-01-01T00:00:01.000Z","thinkingLevel":"off"}
`
	if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

func waitGone(t *testing.T, m *Manager, l *Live) {
	t.Helper()
	deadline := time.After(waitLimit)
	for {
		ch := m.Changed()
		m.mu.Lock()
		gone := m.live[l.key] == nil && m.loading[l.key] == nil
		m.mu.Unlock()
		if gone {
			return
		}
		select {
		case <-ch:
		case <-deadline:
			t.Fatalf("%s is still loaded", l.key)
		}
	}
}

// Two viewers of one file share one live session; it is unloaded (and its
// lock removed) once both left.
func TestOneLiveSessionPerFile(t *testing.T) {
	m, dir := newManager(t, -1)
	p := writeSession(t, dir, "a.jsonl")
	a, err := m.Open(p)
	if err != nil {
		t.Fatal(err)
	}
	b, err := m.Open(filepath.Join(dir, ".", "a.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	if a != b || a.ReadOnly() != "" {
		t.Fatalf("two live sessions for one file (%p, %p) or read-only %q", a, b, a.ReadOnly())
	}
	lock := lockPath(a.key)
	if h, ok := readLock(lock); !ok || h.pid != os.Getpid() {
		t.Fatalf("lock %s: %+v %v", lock, h, ok)
	}
	m.Release(a)
	if m.Lookup(p) == nil {
		t.Fatal("unloaded while a viewer is left")
	}
	m.Release(b)
	waitGone(t, m, a)
	if _, err := os.Stat(lock); !os.IsNotExist(err) {
		t.Fatalf("lock left: %v", err)
	}
	// Opened again, it is a fresh live session.
	c, err := m.Open(p)
	if err != nil || c == a {
		t.Fatalf("reopen: %v (same: %v)", err, c == a)
	}
}

// A file whose lock a live process holds opens read-only, and nothing is
// written to it; a stale lock is taken over.
func TestLocks(t *testing.T) {
	m, dir := newManager(t, time.Hour)
	host, _ := os.Hostname()

	held := writeSession(t, dir, "held.jsonl")
	os.WriteFile(lockPath(held), []byte(strconv.Itoa(os.Getppid())+"\n"+host+"\n"), 0o644)
	before, _ := os.ReadFile(held)
	l, err := m.Open(held)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(l.ReadOnly(), "pid "+strconv.Itoa(os.Getppid())) {
		t.Fatalf("read-only reason: %q", l.ReadOnly())
	}
	if err := l.Core.SetSessionName("renamed"); err != nil {
		t.Fatal(err)
	}
	if after, _ := os.ReadFile(held); string(after) != string(before) {
		t.Fatalf("a read-only view wrote the file:\n%s", after)
	}
	if who, ok := LockedElsewhere(held); !ok || !strings.Contains(who, strconv.Itoa(os.Getppid())) {
		t.Fatalf("LockedElsewhere: %q %v", who, ok)
	}

	other := writeSession(t, dir, "other-host.jsonl")
	os.WriteFile(lockPath(other), []byte("1\nsome-other-host\n"), 0o644)
	if l, err := m.Open(other); err != nil || !strings.Contains(l.ReadOnly(), "on some-other-host") {
		t.Fatalf("lock of another host: %v %q", err, l.ReadOnly())
	}

	// A process that has exited.
	cmd := exec.Command("go", "version")
	if err := cmd.Run(); err != nil {
		t.Skipf("cannot run a process: %v", err)
	}
	stale := writeSession(t, dir, "stale.jsonl")
	os.WriteFile(lockPath(stale), []byte(strconv.Itoa(cmd.Process.Pid)+"\n"+host+"\n"), 0o644)
	l, err = m.Open(stale)
	if err != nil || l.ReadOnly() != "" {
		t.Fatalf("stale lock: %v %q", err, l.ReadOnly())
	}
	if h, _ := readLock(lockPath(stale)); h.pid != os.Getpid() {
		t.Fatalf("stale lock not taken over: %+v", h)
	}
	// A lock with this process's id that it does not hold is stale too (a
	// restarted container reuses ids).
	mine := writeSession(t, dir, "mine.jsonl")
	os.WriteFile(lockPath(mine), []byte(strconv.Itoa(os.Getpid())+"\n"+host+"\n"), 0o644)
	if l, err := m.Open(mine); err != nil || l.ReadOnly() != "" {
		t.Fatalf("own stale lock: %v %q", err, l.ReadOnly())
	}

	// Close releases every lock this process holds, and only those.
	m.Close()
	for _, p := range []string{stale, mine} {
		if _, err := os.Stat(lockPath(p)); !os.IsNotExist(err) {
			t.Errorf("lock of %s left after Close: %v", p, err)
		}
	}
	if _, err := os.Stat(lockPath(held)); err != nil {
		t.Errorf("another process's lock was removed: %v", err)
	}
	if _, err := m.Open(held); err != ErrClosed {
		t.Errorf("open after Close: %v", err)
	}
}

// New sessions, forks and clones are sessions of their own with their own
// lock; the session they come from stays as it is.
func TestCreateForkClone(t *testing.T) {
	m, dir := newManager(t, time.Hour)
	src, err := m.Open(writeSession(t, dir, "src.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	n, err := m.Create(src, "", "")
	if err != nil {
		t.Fatal(err)
	}
	f, text, err := m.Fork(src, "cccc0001")
	if err != nil || text != "hello" {
		t.Fatalf("fork: %v %q", err, text)
	}
	c, err := m.Clone(src)
	if err != nil {
		t.Fatal(err)
	}
	seen := map[string]bool{src.Key(): true}
	for _, l := range []*Live{n, f, c} {
		if seen[l.Key()] {
			t.Fatalf("%s is not a session of its own", l.Key())
		}
		seen[l.Key()] = true
		if h, ok := readLock(lockPath(l.Key())); !ok || h.pid != os.Getpid() {
			t.Fatalf("no lock for %s", l.Key())
		}
	}
	if got := len(m.Live()); got != 4 {
		t.Fatalf("%d live sessions, want 4", got)
	}
	if _, err := m.Create(src, filepath.Join(dir, "missing"), ""); err == nil || !strings.Contains(err.Error(), "does not exist") {
		t.Fatalf("new session in a missing directory: %v", err)
	}
}

// An adopted session stays loaded unwatched until Unpin; then, with its
// one viewer gone, it is unloaded like any other (lock removed).
func TestUnpinnedAdoptedSessionUnloads(t *testing.T) {
	m, dir := newManager(t, -1)
	p := writeSession(t, dir, "adopted.jsonl")
	st, _, err := session.Open(p)
	if err != nil {
		t.Fatal(err)
	}
	l, err := m.Adopt(st)
	if err != nil {
		t.Fatal(err)
	}
	m.Acquire(l)
	m.Release(l)
	if m.Lookup(p) != l {
		t.Fatal("a pinned session was unloaded when its viewer left")
	}
	m.Acquire(l)
	m.Unpin(l)
	if m.Lookup(p) != l {
		t.Fatal("Unpin unloaded a watched session")
	}
	m.Release(l)
	waitGone(t, m, l)
	if _, err := os.Stat(lockPath(canonical(p))); !os.IsNotExist(err) {
		t.Errorf("lock file after unload: %v", err)
	}
}
