package core

import (
	"encoding/json"
	"io"
	"path/filepath"
	"testing"

	"github.com/pisces-agent/pisces/internal/ai"
	"github.com/pisces-agent/pisces/internal/ai/scripted"
	"github.com/pisces-agent/pisces/internal/models"
	"github.com/pisces-agent/pisces/internal/session"
	"github.com/pisces-agent/pisces/internal/settings"
)

func newTestSession(t *testing.T, script string) (*Session, string) {
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
	if err := st.Set(settings.Global, "compaction.keepRecentTokens", 5); err != nil {
		t.Fatal(err)
	}
	store, err := session.New(session.Options{Dir: filepath.Join(dir, "sessions"), Cwd: dir})
	if err != nil {
		t.Fatal(err)
	}
	s, err := New(Options{
		AgentDir: filepath.Join(dir, "agent"), Cwd: dir, Settings: st, Models: reg, Store: store,
		Model: p.Model(), NoContextFiles: true, Log: io.Discard, ActiveTools: []string{},
	})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	return s, dir
}

func contextJSON(t *testing.T, msgs []ai.Message) string {
	t.Helper()
	b, err := json.Marshal(ai.Messages(msgs))
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// A navigated tree, labels and a compaction written by Pisces give the same
// context when the file is reopened.
func TestReopenedSessionHasTheSameContext(t *testing.T) {
	s, _ := newTestSession(t, `{"turns":[
		{"content":[{"type":"text","text":"first answer"}]},
		{"content":[{"type":"text","text":"second answer"}]},
		{"content":[{"type":"text","text":"third answer"}]},
		{"content":[{"type":"text","text":"## Goal\nsummary of the start"}]}
	]}`)
	for _, p := range []string{"one", "two", "three"} {
		if _, err := s.Prompt(p, nil, ""); err != nil {
			t.Fatal(err)
		}
		s.WaitIdle()
	}
	st := s.Store()
	var userTwo, asstTwo string
	for _, e := range st.Entries() {
		if um, ok := e.Message().(*ai.UserMessage); ok && um.Content.PlainText() == "two" {
			userTwo = e.ID
		}
		if am, ok := e.Message().(*ai.AssistantMessage); ok && ai.JoinText(am.Content, "") == "second answer" {
			asstTwo = e.ID
		}
	}
	// Go back to the second answer (abandoning "three"), label it, compact.
	if _, err := s.NavigateTree(asstTwo, NavigateOptions{Label: "checkpoint"}); err != nil {
		t.Fatal(err)
	}
	if err := s.SetLabel(userTwo, "the second question"); err != nil {
		t.Fatal(err)
	}
	if _, err := s.Compact(""); err != nil {
		t.Fatal(err)
	}
	live := s.Messages()
	if len(live) == 0 {
		t.Fatal("empty context")
	}
	if _, ok := live[1].(*ai.CompactionSummaryMessage); !ok {
		t.Fatalf("expected the compaction summary after the system checkpoint, got %T", live[1])
	}
	for _, m := range live {
		if a, ok := m.(*ai.AssistantMessage); ok && ai.JoinText(a.Content, "") == "third answer" {
			t.Fatal("the abandoned branch is still in the context")
		}
	}
	re, _, err := session.Open(st.File())
	if err != nil {
		t.Fatal(err)
	}
	defer re.Close()
	if got, want := contextJSON(t, re.BuildContext().Messages), contextJSON(t, live); got != want {
		t.Fatalf("reopened context differs:\n got %s\nwant %s", got, want)
	}
	if re.Labels()[userTwo] != "the second question" || re.Labels()[asstTwo] != "checkpoint" {
		t.Fatalf("labels %v", re.Labels())
	}
}

// Abort keeps the queues; clear_queue empties them.
func TestAbortKeepsQueues(t *testing.T) {
	s, _ := newTestSession(t, `{"turns":[{"content":[{"type":"text","text":"x"}],"hang":true}]}`)
	if _, err := s.Prompt("go", nil, ""); err != nil {
		t.Fatal(err)
	}
	if _, err := s.FollowUp("later", nil); err != nil {
		t.Fatal(err)
	}
	s.Abort()
	if s.IsStreaming() || s.PendingCount() != 1 {
		t.Fatalf("streaming %v, pending %d", s.IsStreaming(), s.PendingCount())
	}
	st, fu := s.ClearQueue()
	if len(st) != 0 || len(fu) != 1 || fu[0] != "later" || s.PendingCount() != 0 {
		t.Fatalf("cleared %v %v", st, fu)
	}
}
