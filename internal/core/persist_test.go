package core

import (
	"bytes"
	"encoding/json"
	"os"
	"sync"
	"testing"

	"github.com/pisces-agent/pisces/internal/ai"
	"github.com/pisces-agent/pisces/internal/session"
	"github.com/pisces-agent/pisces/rpc"
)

// lastLineID returns the id of the last entry written to a session file
// ("" when the file does not exist yet).
func lastLineID(t *testing.T, path string) string {
	b, err := os.ReadFile(path)
	if os.IsNotExist(err) {
		return ""
	}
	if err != nil {
		t.Error(err)
		return ""
	}
	lines := bytes.Split(bytes.TrimRight(b, "\n"), []byte("\n"))
	var e struct{ ID string }
	if err := json.Unmarshal(lines[len(lines)-1], &e); err != nil {
		t.Errorf("last line of the session file: %v", err)
	}
	return e.ID
}

// messageEntries labels the message entries of a store in file order.
func messageEntries(st *session.Session) []string {
	var out []string
	for _, e := range st.Entries() {
		if e.Type == session.TypeMessage {
			out = append(out, messageLabel(e.Message()))
		}
	}
	return out
}

// Every message is appended to the session file before its message_end is
// published, so entries are in message_end order; the user message comes
// before (and is the parent of) the assistant's; the file reopened gives
// the same context.
func TestEntriesAreWrittenInMessageEndOrder(t *testing.T) {
	h := newHarness(t, `{"turns":[
		{"content":[{"type":"toolCall","id":"a","name":"gate"}]},
		{"content":[{"type":"text","text":"steered"}]},
		{"content":[{"type":"text","text":"followed up"}]}
	]}`, harnessOptions{gates: []string{"gate"}})
	st := h.s.Store()
	file := st.File()

	var mu sync.Mutex
	var problems []string
	h.s.Subscribe(func(ev rpc.Event) {
		e, ok := ev.(*rpc.MessageEndEvent)
		if !ok {
			return
		}
		leaf := st.Leaf()
		mu.Lock()
		defer mu.Unlock()
		if leaf == nil || leaf.Message() != e.Message {
			problems = append(problems, messageLabel(e.Message)+": not the session's leaf at message_end")
			return
		}
		// The system checkpoint waits in memory until the first user
		// message creates the file; every other message is on disk.
		if e.Message.MessageRole() != ai.RoleSystem {
			if id := lastLineID(t, file); id != leaf.ID {
				problems = append(problems, messageLabel(e.Message)+": not the file's last line at message_end")
			}
		}
	})

	h.prompt("go")
	h.gates["gate"].awaitStart(t)
	h.s.Steer("steer", nil)
	h.s.FollowUp("follow", nil)
	h.gates["gate"].open()
	h.settle(0)

	mu.Lock()
	for _, p := range problems {
		t.Error(p)
	}
	mu.Unlock()
	ended := endedMessages(h.rec.snapshot())
	expectLabels(t, "message entries vs message_end events", messageEntries(st), ended)
	expectLabels(t, "message_end order", ended, []string{
		"system", "user:go", "assistant:call gate", "toolResult:released",
		"user:steer", "assistant:steered", "user:follow", "assistant:followed up",
	})

	// Each message's parent is the message before it: the user message is
	// written before the assistant's answer to it.
	var prev string
	for _, e := range st.Entries() {
		if e.Type != session.TypeMessage {
			continue
		}
		if prev != "" && e.Parent() != prev {
			t.Fatalf("%s: parent %q, want %q", messageLabel(e.Message()), e.Parent(), prev)
		}
		prev = e.ID
	}

	re, _, err := session.Open(file)
	if err != nil {
		t.Fatal(err)
	}
	defer re.Close()
	expectLabels(t, "reopened message entries", messageEntries(re), ended)
	if got, want := contextJSONOf(t, re.BuildContext().Messages), contextJSONOf(t, h.s.Messages()); got != want {
		t.Fatalf("reopened context differs:\n got %s\nwant %s", got, want)
	}
}

func contextJSONOf(t *testing.T, msgs []ai.Message) string {
	t.Helper()
	b, err := json.Marshal(ai.Messages(msgs))
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// A retried failure stays in the file, followed by the context_edit that
// hides it and the retried answer; an aborted answer is written too. The
// file reopened gives the live context.
func TestRetryAndAbortArePersisted(t *testing.T) {
	h := newHarness(t, `{"turns":[
		{"error":{"status":529,"message":"overloaded"}},
		{"content":[{"type":"text","text":"recovered"}]},
		{"content":[{"type":"text","text":"cut short"}],"hang":true}
	]}`, harnessOptions{settings: map[string]any{"retry.baseDelayMs": 1}})
	h.prompt("one")
	n := h.settle(0) + 1
	h.prompt("two")
	h.rec.wait(t, n, "text_end", func(ev rpc.Event) bool {
		u, ok := ev.(*rpc.MessageUpdateEvent)
		return ok && u.AssistantMessageEvent.Type == ai.EvTextEnd
	})
	h.s.Abort()

	st := h.s.Store()
	var kinds []string
	for _, e := range st.Entries() {
		switch e.Type {
		case session.TypeMessage:
			kinds = append(kinds, messageLabel(e.Message()))
		case "context_edit":
			kinds = append(kinds, "context_edit")
		}
	}
	expectLabels(t, "entries", kinds, []string{
		"system", "user:one", "assistant!error", "context_edit", "assistant:recovered",
		"user:two", "assistant!aborted",
	})
	expectLabels(t, "context", h.conversation(), []string{"user:one", "assistant:recovered", "user:two", "assistant!aborted"})
	re, _, err := session.Open(st.File())
	if err != nil {
		t.Fatal(err)
	}
	defer re.Close()
	if got, want := contextJSONOf(t, re.BuildContext().Messages), contextJSONOf(t, h.s.Messages()); got != want {
		t.Fatalf("reopened context differs:\n got %s\nwant %s", got, want)
	}
}

// Session events: set_session_name → session_info_changed and a
// session_info entry; set_thinking_level → thinking_level_changed and an
// entry when the level changes; new_session → the queues are emptied
// (queue_update) and session_changed {reason:"new"} names the new session
// before NewSession returns.
func TestSessionEvents(t *testing.T) {
	h := newHarness(t, `{"turns":[{"content":[{"type":"text","text":"a"}]}]}`, harnessOptions{})
	h.prompt("go")
	h.settle(0)
	old := h.s.Store()
	oldFile := old.File()

	n := h.rec.len()
	if err := h.s.SetSessionName("  my session \n"); err != nil {
		t.Fatal(err)
	}
	if _, err := h.s.SetThinkingLevel("high"); err != nil {
		t.Fatal(err)
	}
	evs := h.rec.snapshot()[n:]
	expectLabels(t, "events", typesOf(evs), []string{"session_info_changed", "thinking_level_changed"})
	if name := evs[0].(*rpc.SessionInfoChangedEvent).Name; name != "my session" || old.Name() != "my session" {
		t.Fatalf("session name %q / %q", name, old.Name())
	}
	if lvl := evs[1].(*rpc.ThinkingLevelChangedEvent).Level; lvl != "high" {
		t.Fatalf("thinking level %q", lvl)
	}
	re, _, err := session.Open(oldFile)
	if err != nil {
		t.Fatal(err)
	}
	if re.Name() != "my session" || re.BuildContext().ThinkingLevel != "high" {
		t.Fatalf("reopened: name %q, thinking level %q", re.Name(), re.BuildContext().ThinkingLevel)
	}
	re.Close()

	h.s.FollowUp("pending", nil)
	n = h.rec.len()
	if err := h.s.NewSession(""); err != nil {
		t.Fatal(err)
	}
	evs = h.rec.snapshot()[n:]
	expectLabels(t, "new_session events", typesOf(evs), []string{"queue_update", "queue_changed", "session_changed"})
	sc := evs[2].(*rpc.SessionChangedEvent)
	st := h.s.Store()
	if sc.Reason != "new" || sc.SessionID != st.ID() || sc.SessionID == old.ID() || sc.MessageCount != 0 {
		t.Fatalf("session_changed %+v (new id %s, old %s)", sc, st.ID(), old.ID())
	}
	if h.s.PendingCount() != 0 || len(h.s.Messages()) != 0 {
		t.Fatalf("after new_session: %d queued, %d messages", h.s.PendingCount(), len(h.s.Messages()))
	}
}
