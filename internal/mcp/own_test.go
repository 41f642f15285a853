package mcp

import (
	"os"
	"strings"
	"testing"
	"time"

	"github.com/pisces-agent/pisces/internal/procgroup"
	"github.com/pisces-agent/pisces/internal/tools"
)

// ownStdio is a session server running the test binary over stdio.
func ownStdio(t *testing.T, name string) *ServerConfig {
	t.Helper()
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	return &ServerConfig{Name: name, Scope: ScopeSession, Transport: "stdio", Command: exe,
		Env: [][2]string{{"PISCES_TEST_MCP_SERVER", "1"}}, Timeout: DefaultTimeout, Enabled: true, Exposure: ExposureDirect}
}

// A session's own servers (an ACP editor's) are offered beside the global
// ones, only to that session; an unchanged entry keeps its connection; a
// dropped one is stopped with its process before SetOwn returns.
func TestSessionOwnServers(t *testing.T) {
	m, s := newManager(t, `"glob":`+stdioEntry(t, `"exposure":"direct"`))
	other := m.NewSession(SessionOptions{Where: func() (string, bool) { return t.TempDir(), false }})
	httpURL := httpServer(t, nil)
	own := []*ServerConfig{ownStdio(t, "ed"),
		{Name: "web", Scope: ScopeSession, Transport: "http", URL: httpURL, Timeout: DefaultTimeout, Enabled: true, Exposure: ExposureDirect}}
	s.SetOwn(own)
	settle(t, s)
	es := s.Entries()
	for _, name := range []string{"mcp__glob__echo", "mcp__ed__echo", "mcp__web__echo"} {
		e, ok := entry(es, name)
		if !ok || !e.Active {
			t.Fatalf("%s not offered and active: %+v", name, e)
		}
	}
	if r := call(t, mustEntry(t, es, "mcp__ed__echo").Tool, `{"message":"hi"}`); r.IsError || !strings.Contains(resultText(r), "Echo: hi") {
		t.Errorf("own stdio server's echo: %+v", r)
	}
	if r := call(t, mustEntry(t, es, "mcp__web__echo").Tool, `{"message":"there"}`); r.IsError || !strings.Contains(resultText(r), "Echo: there") {
		t.Errorf("own HTTP server's echo: %+v", r)
	}
	settle(t, other)
	if _, ok := entry(other.Entries(), "mcp__ed__echo"); ok {
		t.Error("another session sees this session's server")
	}
	var ed *Server
	for _, srv := range s.Servers() {
		if srv.cfg.Name == "ed" {
			ed = srv
		}
	}
	ed.mu.Lock()
	pid := ed.conn.cmd.Process.Pid
	ed.mu.Unlock()

	// The same entries again: the same connection.
	s.SetOwn([]*ServerConfig{ownStdio(t, "ed")})
	if got := s.Servers(); len(got) != 2 || got[1] != ed {
		t.Fatalf("an unchanged entry was restarted or lost: %v", got)
	}
	if st := ed.Status(); st.State != StateConnected {
		t.Errorf("kept server is %s", st.State)
	}
	// None: stopped, its process group gone, before SetOwn returns.
	start := time.Now()
	s.SetOwn(nil)
	t.Logf("stopped in %v", time.Since(start))
	if procgroup.Alive(pid) {
		t.Errorf("the server's process group %d is still alive", pid)
	}
	if _, ok := entry(s.Entries(), "mcp__ed__echo"); ok {
		t.Error("a dropped server's tool is still offered")
	}
	if _, ok := entry(s.Entries(), "mcp__glob__echo"); !ok {
		t.Error("the global server went with the session's")
	}
}

// The manager's Close stops the servers sessions still own; SetOwn after
// it starts nothing.
func TestCloseStopsOwnServers(t *testing.T) {
	m, s := newManager(t, "")
	s.SetOwn([]*ServerConfig{ownStdio(t, "ed")})
	settle(t, s)
	srv := s.Servers()[0]
	srv.mu.Lock()
	pid := srv.conn.cmd.Process.Pid
	srv.mu.Unlock()
	m.Close()
	if procgroup.Alive(pid) {
		t.Errorf("the server's process group %d is still alive after Close", pid)
	}
	s.SetOwn([]*ServerConfig{ownStdio(t, "late")})
	for _, x := range s.Servers() {
		if x.cfg.Name == "late" {
			t.Error("a server was made after Close")
		}
	}
}

func mustEntry(t *testing.T, es []Entry, name string) Entry {
	t.Helper()
	e, ok := entry(es, name)
	if !ok {
		t.Fatalf("no tool %s", name)
	}
	return e
}

func resultText(r tools.Result) string {
	var b strings.Builder
	for _, c := range r.Content {
		b.WriteString(c.Text)
	}
	return b.String()
}
