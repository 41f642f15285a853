package core

import (
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/pisces-agent/pisces/internal/ai"
	"github.com/pisces-agent/pisces/internal/task"
	"github.com/pisces-agent/pisces/rpc"
)

// conversation labels the messages of the current context after the
// system checkpoint.
func (h *harness) conversation() []string {
	var out []string
	for _, m := range h.s.Messages() {
		if m.MessageRole() != ai.RoleSystem {
			out = append(out, messageLabel(m))
		}
	}
	return out
}

func expectLabels(t *testing.T, what string, got, want []string) {
	t.Helper()
	if !sameStrings(got, want) {
		t.Fatalf("%s:\n got %q\nwant %q", what, got, want)
	}
}

// queueStates lists the queue_update events as "steering|followUp" texts.
func queueStates(evs []rpc.Event) []string {
	var out []string
	for _, ev := range only(evs, rpc.EventQueueUpdate) {
		q := ev.(*rpc.QueueUpdateEvent)
		s := ""
		for i, m := range q.Steering {
			if i > 0 {
				s += ","
			}
			s += m
		}
		s += "|"
		for i, m := range q.FollowUp {
			if i > 0 {
				s += ","
			}
			s += m
		}
		out = append(out, s)
	}
	return out
}

// Steering messages sent during a tool call, steering mode one-at-a-time
// (the default): one message per turn, in order.
func TestSteeringOneAtATime(t *testing.T) {
	h := newHarness(t, `{"turns":[
		{"content":[{"type":"toolCall","id":"a","name":"gate"}]},
		{"content":[{"type":"text","text":"took s1"}]},
		{"content":[{"type":"text","text":"took s2"}]}
	]}`, harnessOptions{gates: []string{"gate"}})
	h.prompt("go")
	h.gates["gate"].awaitStart(t)
	for _, m := range []string{"s1", "s2"} {
		if d, err := h.s.Steer(m, nil); err != nil || d != DispositionQueued {
			t.Fatalf("steer %s: %q, %v", m, d, err)
		}
	}
	h.gates["gate"].open()
	h.settle(0)

	expectLabels(t, "context", h.conversation(), []string{
		"user:go", "assistant:call gate", "toolResult:released",
		"user:s1", "assistant:took s1", "user:s2", "assistant:took s2",
	})
	expectLabels(t, "last user message of each model request", h.requests(), []string{"go", "s1", "s2"})
	expectLabels(t, "queue_update events", queueStates(h.rec.snapshot()), []string{"s1|", "s1,s2|", "s2|", "|"})
}

// Steering mode all: the whole queue goes in one turn.
func TestSteeringAll(t *testing.T) {
	h := newHarness(t, `{"turns":[
		{"content":[{"type":"toolCall","id":"a","name":"gate"}]},
		{"content":[{"type":"text","text":"took both"}]}
	]}`, harnessOptions{gates: []string{"gate"}})
	if err := h.s.SetSteeringMode(QueueAll); err != nil {
		t.Fatal(err)
	}
	h.prompt("go")
	h.gates["gate"].awaitStart(t)
	h.s.Steer("s1", nil)
	h.s.Steer("s2", nil)
	h.gates["gate"].open()
	h.settle(0)

	expectLabels(t, "context", h.conversation(), []string{
		"user:go", "assistant:call gate", "toolResult:released",
		"user:s1", "user:s2", "assistant:took both",
	})
	expectLabels(t, "queue_update events", queueStates(h.rec.snapshot()), []string{"s1|", "s1,s2|", "|"})
	if h.prov.Remaining() != 0 {
		t.Fatalf("%d scripted turns left", h.prov.Remaining())
	}
}

// Follow-ups queued while nothing runs are delivered by the next run, once
// the agent would otherwise stop: one per turn in one-at-a-time mode, all
// together in all mode.
func TestFollowUpModes(t *testing.T) {
	for _, tc := range []struct {
		mode     string
		script   string
		context  []string
		requests []string
	}{
		{QueueOneAtATime, `{"turns":[
			{"content":[{"type":"text","text":"a"}]},
			{"content":[{"type":"text","text":"b"}]},
			{"content":[{"type":"text","text":"c"}]}]}`,
			[]string{"user:go", "assistant:a", "user:f1", "assistant:b", "user:f2", "assistant:c"},
			[]string{"go", "f1", "f2"}},
		{QueueAll, `{"turns":[
			{"content":[{"type":"text","text":"a"}]},
			{"content":[{"type":"text","text":"b"}]}]}`,
			[]string{"user:go", "assistant:a", "user:f1", "user:f2", "assistant:b"},
			[]string{"go", "f2"}},
	} {
		t.Run(tc.mode, func(t *testing.T) {
			h := newHarness(t, tc.script, harnessOptions{})
			if err := h.s.SetFollowUpMode(tc.mode); err != nil {
				t.Fatal(err)
			}
			for _, m := range []string{"f1", "f2"} {
				if d, err := h.s.FollowUp(m, nil); err != nil || d != DispositionQueued {
					t.Fatalf("follow_up %s: %q, %v", m, d, err)
				}
			}
			if h.s.IsStreaming() {
				t.Fatal("a follow-up started a run")
			}
			h.prompt("go")
			h.settle(0)
			expectLabels(t, "context", h.conversation(), tc.context)
			expectLabels(t, "requests", h.requests(), tc.requests)
			if h.s.PendingCount() != 0 {
				t.Fatalf("%d messages still queued", h.s.PendingCount())
			}
			// One run: one agent_start, one agent_settled.
			evs := h.rec.snapshot()
			if n := len(only(evs, rpc.EventAgentStart)); n != 1 {
				t.Fatalf("%d agent_start events, want 1", n)
			}
		})
	}
}

// A steering message queued while nothing runs goes with the next prompt,
// before the first model call.
func TestSteeringQueuedWhileIdle(t *testing.T) {
	h := newHarness(t, `{"turns":[{"content":[{"type":"text","text":"a"}]}]}`, harnessOptions{})
	h.s.Steer("context first", nil)
	h.prompt("go")
	h.settle(0)
	expectLabels(t, "context", h.conversation(), []string{"user:go", "user:context first", "assistant:a"})
	expectLabels(t, "requests", h.requests(), []string{"context first"})
}

// A prompt while a run is going on needs a streaming behaviour: none is
// refused with ErrBusy, steer and followUp queue it, anything else is an
// error. Queued prompts are delivered like steer and follow_up.
func TestPromptWhileStreaming(t *testing.T) {
	h := newHarness(t, `{"turns":[
		{"content":[{"type":"toolCall","id":"a","name":"gate"}]},
		{"content":[{"type":"text","text":"b"}]},
		{"content":[{"type":"text","text":"c"}]}
	]}`, harnessOptions{gates: []string{"gate"}})
	h.prompt("go")
	h.gates["gate"].awaitStart(t)
	if _, err := h.s.Prompt("refused", nil, ""); !errors.Is(err, ErrBusy) {
		t.Fatalf("prompt without behaviour while streaming: %v, want ErrBusy", err)
	}
	if _, err := h.s.Prompt("odd", nil, "sometimes"); err == nil {
		t.Fatal("an unknown streaming behaviour was accepted")
	}
	if d, err := h.s.Prompt("later", nil, BehaviorFollowUp); err != nil || d != DispositionQueued {
		t.Fatalf("followUp prompt: %q %v", d, err)
	}
	if d, err := h.s.Prompt("now", nil, BehaviorSteer); err != nil || d != DispositionQueued {
		t.Fatalf("steer prompt: %q %v", d, err)
	}
	if st, fu := h.s.Queues(); !sameStrings(st, []string{"now"}) || !sameStrings(fu, []string{"later"}) {
		t.Fatalf("queues %q %q", st, fu)
	}
	h.gates["gate"].open()
	h.settle(0)
	expectLabels(t, "context", h.conversation(), []string{
		"user:go", "assistant:call gate", "toolResult:released",
		"user:now", "assistant:b", "user:later", "assistant:c",
	})
}

// Interrupt mode immediate (the default) skips the calls after the one
// during which a steering message arrived; wait runs the whole batch.
func TestInterruptModes(t *testing.T) {
	script := `{"turns":[
		{"content":[{"type":"toolCall","id":"a","name":"gate"},{"type":"toolCall","id":"b","name":"gate"}]},
		{"content":[{"type":"text","text":"ok"}]}
	]}`
	t.Run("immediate", func(t *testing.T) {
		h := newHarness(t, script, harnessOptions{gates: []string{"gate"}})
		if st := h.s.State(); st.InterruptMode != "immediate" {
			t.Fatalf("default interrupt mode %q", st.InterruptMode)
		}
		h.prompt("go")
		g := h.gates["gate"]
		if id := g.awaitStart(t); id != "a" {
			t.Fatalf("first call %q", id)
		}
		h.s.Steer("stop", nil)
		g.open()
		h.settle(0)
		expectLabels(t, "context", h.conversation(), []string{
			"user:go", "assistant:call gate+call gate",
			"toolResult:released", "toolResult:Skipped due to queued user message.",
			"user:stop", "assistant:ok",
		})
		select {
		case id := <-g.started:
			t.Fatalf("call %s ran after the steering message", id)
		default:
		}
	})
	t.Run("wait", func(t *testing.T) {
		h := newHarness(t, script, harnessOptions{gates: []string{"gate"}})
		if err := h.s.SetInterruptMode("wait"); err != nil {
			t.Fatal(err)
		}
		h.prompt("go")
		g := h.gates["gate"]
		g.awaitStart(t)
		h.s.Steer("then stop", nil)
		g.open()
		if id := g.awaitStart(t); id != "b" {
			t.Fatalf("second call %q", id)
		}
		g.open()
		h.settle(0)
		expectLabels(t, "context", h.conversation(), []string{
			"user:go", "assistant:call gate+call gate",
			"toolResult:released", "toolResult:released",
			"user:then stop", "assistant:ok",
		})
	})
	t.Run("invalid", func(t *testing.T) {
		h := newHarness(t, script, harnessOptions{})
		if err := h.s.SetInterruptMode("sometimes"); err == nil {
			t.Fatal("an unknown interrupt mode was accepted")
		}
		if err := h.s.SetSteeringMode("sometimes"); err == nil {
			t.Fatal("an unknown steering mode was accepted")
		}
	})
}

// A follow-up still queued when a run ends in an error (not retried) gets
// its turn: the continuation starts with it, and the failed request is not
// sent again.
func TestQueuedFollowUpAfterAnError(t *testing.T) {
	h := newHarness(t, `{"turns":[
		{"error":{"status":400,"message":"bad request"}},
		{"content":[{"type":"text","text":"answer"}]}
	]}`, harnessOptions{})
	h.s.FollowUp("later", nil)
	h.prompt("go")
	h.settle(0)
	expectLabels(t, "requests", h.requests(), []string{"go", "later"})
	expectLabels(t, "context", h.conversation(), []string{"user:go", "assistant!error", "user:later", "assistant:answer"})
	evs := h.rec.snapshot()
	expectLabels(t, "run events", typesOf(only(evs, rpc.EventAgentStart, rpc.EventAgentEnd, rpc.EventAgentSettled)),
		[]string{"agent_start", "agent_end", "agent_start", "agent_end", "agent_settled"})
}

// clear_queue returns and removes what was queued, and reports the empty
// queue; with nothing queued it reports nothing.
func TestClearQueue(t *testing.T) {
	h := newHarness(t, `{"turns":[]}`, harnessOptions{})
	h.s.Steer("s", nil)
	h.s.FollowUp("f", nil)
	if h.s.PendingCount() != 2 || h.s.State().PendingMessageCount != 2 {
		t.Fatalf("pending %d", h.s.PendingCount())
	}
	st, fu := h.s.ClearQueue()
	if !sameStrings(st, []string{"s"}) || !sameStrings(fu, []string{"f"}) || h.s.PendingCount() != 0 {
		t.Fatalf("cleared %q %q, %d left", st, fu, h.s.PendingCount())
	}
	n := h.rec.len()
	if st, fu := h.s.ClearQueue(); len(st)+len(fu) != 0 {
		t.Fatalf("second clear returned %q %q", st, fu)
	}
	evs := h.rec.snapshot()
	if len(evs) != n {
		t.Fatalf("clearing an empty queue emitted %v", typesOf(evs[n:]))
	}
	expectLabels(t, "queue_update events", queueStates(evs), []string{"s|", "s|f", "|"})
	var counts []int
	for _, ev := range only(evs, rpc.EventQueueChanged) {
		counts = append(counts, ev.(*rpc.QueueChangedEvent).PendingMessageCount)
	}
	if len(counts) != 3 || counts[0] != 1 || counts[1] != 2 || counts[2] != 0 {
		t.Fatalf("queue_changed counts %v, want [1 2 0]", counts)
	}
}

// Open todo items when a run would settle: a todo_reminder event, then a
// continuation whose first model call already has the reminder (up to
// task.MaxTodoReminders times); the items stay open here, so every
// reminder is used.
func TestTodoReminderGoesBeforeTheModelCall(t *testing.T) {
	h := newHarness(t, `{"turns":[
		{"content":[{"type":"text","text":"a"}]},
		{"content":[{"type":"text","text":"b"}]},
		{"content":[{"type":"text","text":"c"}]},
		{"content":[{"type":"text","text":"d"}]}
	]}`, harnessOptions{})
	if _, err := h.s.Todos().Set([]task.TodoPhase{{Name: "plan", Tasks: []task.TodoItem{{Content: "write tests"}}}}); err != nil {
		t.Fatal(err)
	}
	h.prompt("go")
	h.settle(0)
	reqs := h.requests()
	if len(reqs) != 1+task.MaxTodoReminders || reqs[0] != "go" {
		t.Fatalf("requests %q", reqs)
	}
	for i, r := range reqs[1:] {
		if !strings.HasPrefix(r, "<system-reminder>\nYour plan still has 1 open item(s)") ||
			!strings.Contains(r, fmt.Sprintf("(Reminder %d of %d)", i+1, task.MaxTodoReminders)) {
			t.Fatalf("request %d's last user message is %q, want reminder %d", i+2, r, i+1)
		}
	}
	evs := h.rec.snapshot()
	var order []string
	for _, ev := range evs {
		switch ev.EventType() {
		case rpc.EventAgentStart, rpc.EventAgentSettled, task.EventTodoReminder:
			order = append(order, ev.EventType())
		}
	}
	expectLabels(t, "events", order, []string{
		"agent_start", "todo_reminder", "agent_start", "todo_reminder", "agent_start",
		"todo_reminder", "agent_start", "agent_settled",
	})
}
