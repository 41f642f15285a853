package rpcmode

import (
	"io"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/pisces-agent/pisces/internal/auth"
	"github.com/pisces-agent/pisces/internal/auth/authtest"
	"github.com/pisces-agent/pisces/internal/core"
	"github.com/pisces-agent/pisces/internal/models"
	"github.com/pisces-agent/pisces/internal/session"
)

// A login's questions go to the connection that asked, not to the other
// clients of the session, and that connection's end cancels the login.
func TestLoginBelongsToItsConnection(t *testing.T) {
	srv := authtest.New(t)
	dir := t.TempDir()
	agentDir := filepath.Join(dir, "agent")
	store := auth.Open(filepath.Join(agentDir, "auth.json"), &auth.Options{Server: srv.URL})
	reg, errs := models.Load(models.LoadOptions{AgentDir: agentDir, Auth: store, Env: func(string) string { return "" }})
	if len(errs) > 0 {
		t.Logf("models: %v", errs)
	}
	st, err := session.New(session.Options{Cwd: dir, InMemory: true})
	if err != nil {
		t.Fatal(err)
	}
	sess, err := core.New(core.Options{AgentDir: agentDir, Cwd: dir, Store: st, NoContextFiles: true, Log: io.Discard, Models: reg})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { sess.Close() })
	h := NewHub(sess, HubOptions{Shared: true})
	defer h.Close()

	ar, aw := io.Pipe()
	a := NewConn(h, aw, Options{})
	aOut := frames(t, ar)
	a.Start("")
	br, bw := io.Pipe()
	b := NewConn(h, bw, Options{})
	bOut := frames(t, br)
	b.Start("")
	defer b.Finish()

	a.Handle([]byte(`{"id":"l","type":"login","providerId":"github-copilot"}`))
	q := next(t, aOut, "extension_ui_request")
	if q["method"] != "input" || q["providerId"] != "github-copilot" || !strings.Contains(q["title"].(string), "Enterprise") {
		t.Fatalf("the login's question: %v", q)
	}
	b.Handle([]byte(`{"id":"s","type":"get_state"}`))
	for {
		var m map[string]any
		ok := true
		select {
		case m, ok = <-bOut:
			if !ok {
				t.Fatal("the other client's output ended")
			}
		case <-time.After(waitLimit):
			t.Fatal("no answer to get_state")
		}
		if m["type"] == "extension_ui_request" {
			t.Fatalf("the other client got the login's request %v", m)
		}
		if m["type"] == "response" && m["id"] == "s" {
			break
		}
	}

	done := make(chan struct{})
	go func() { a.Finish(); close(done) }()
	resp := next(t, aOut, "response")
	if resp["id"] != "l" || resp["success"] != false || !strings.Contains(resp["error"].(string), "cancelled") {
		t.Fatalf("the login's response after the connection ended: %v", resp)
	}
	<-done
}
