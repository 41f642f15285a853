package rpcmode

import (
	"io"
	"path/filepath"
	"testing"
	"time"

	"github.com/pisces-agent/pisces/internal/ai"
	"github.com/pisces-agent/pisces/internal/ai/scripted"
	"github.com/pisces-agent/pisces/internal/core"
	"github.com/pisces-agent/pisces/internal/models"
	"github.com/pisces-agent/pisces/internal/session"
	"github.com/pisces-agent/pisces/internal/settings"
)

// newScriptedCore is a session whose model plays script.
func newScriptedCore(t *testing.T, script string) *core.Session {
	t.Helper()
	dir := t.TempDir()
	p, err := scripted.Parse([]byte(script), "test")
	if err != nil {
		t.Fatal(err)
	}
	reg := models.NewRegistry()
	reg.Add(&models.ProviderEntry{Name: scripted.ProviderName, Provider: p, Models: []*ai.Model{p.Model()}, NoKey: true})
	st, err := settings.Load(filepath.Join(dir, "agent"), dir)
	if err != nil {
		t.Fatal(err)
	}
	store, err := session.New(session.Options{Cwd: dir, InMemory: true})
	if err != nil {
		t.Fatal(err)
	}
	s, err := core.New(core.Options{
		AgentDir: filepath.Join(dir, "agent"), Cwd: dir, Settings: st, Models: reg, Store: store,
		Model: p.Model(), NoContextFiles: true, Log: io.Discard, ActiveTools: []string{},
	})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	return s
}

// Two clients of one session, one on oh-my-pi's wire: it gets message_update
// with the cumulative message and a prompt_result; the other keeps pi 1.5's
// message_update (usage, no message) and gets no prompt_result, although
// the session now makes snapshots. After the oh-my-pi client leaves, the
// session stops making them.
func TestWiresShareASession(t *testing.T) {
	sess := newScriptedCore(t, `{"turns":[
		{"content":[{"type":"text","text":"abcdef"}],"chunks":["ab","cd","ef"]},
		{"content":[{"type":"text","text":"again"}]}
	]}`)
	h := NewHub(sess, HubOptions{Shared: true})
	defer h.Close()
	piR, piW := io.Pipe()
	pi := NewConn(h, piW, Options{})
	piOut := frames(t, piR)
	pi.Start("")
	ompR, ompW := io.Pipe()
	omp := NewConn(h, ompW, Options{})
	ompOut := frames(t, ompR)
	omp.Start("")
	next(t, piOut, "ready")
	next(t, ompOut, "ready")

	omp.Handle([]byte(`{"id":"n","type":"negotiate_protocol","protocolVersion":2}`))
	if r := next(t, ompOut, "response"); r["success"] != true {
		t.Fatalf("negotiate_protocol: %v", r)
	}
	omp.Handle([]byte(`{"id":"p1","type":"prompt","message":"hi"}`))

	u := next(t, ompOut, "message_update")
	if m, ok := u["message"].(map[string]any); !ok || m["role"] != "assistant" {
		t.Fatalf("oh-my-pi's message_update: %v", u)
	}
	if _, ok := u["usage"]; ok {
		t.Fatalf("oh-my-pi's message_update has pi's usage: %v", u)
	}
	r := next(t, ompOut, "prompt_result")
	if r["id"] != "p1" || r["status"] != "completed" {
		t.Fatalf("prompt_result: %v", r)
	}
	next(t, ompOut, "session_settled")

	for {
		var f map[string]any
		select {
		case m, ok := <-piOut:
			if !ok {
				t.Fatal("the pi client's output ended")
			}
			f = m
		case <-time.After(waitLimit):
			t.Fatal("the pi client got no agent_settled")
		}
		if f["type"] == "prompt_result" || f["type"] == "session_settled" {
			t.Fatalf("the pi client got %v", f)
		}
		if f["type"] == "message_update" {
			if _, ok := f["message"]; ok {
				t.Fatalf("pi's message_update has a message: %v", f)
			}
			if _, ok := f["usage"]; !ok {
				t.Fatalf("pi's message_update has no usage: %v", f)
			}
		}
		if f["type"] == "agent_settled" {
			break
		}
	}

	omp.Finish()
	ompW.Close()
	if n := sess.SnapshotViewers(); n != 0 {
		t.Fatalf("%d snapshot requests left after the client left", n)
	}
	pi.Finish()
	piW.Close()
}
