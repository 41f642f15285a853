package core

import (
	"testing"

	"github.com/pisces-agent/pisces/internal/ai"
	"github.com/pisces-agent/pisces/rpc"
)

// Abort with nothing running returns at once, emits nothing and keeps the
// queues.
func TestAbortWhileIdle(t *testing.T) {
	h := newHarness(t, `{"turns":[]}`, harnessOptions{})
	h.s.Steer("s", nil)
	h.s.FollowUp("f", nil)
	n := h.rec.len()
	h.s.Abort()
	if evs := h.rec.snapshot(); len(evs) != n {
		t.Fatalf("abort while idle emitted %v", typesOf(evs[n:]))
	}
	if st, fu := h.s.Queues(); !sameStrings(st, []string{"s"}) || !sameStrings(fu, []string{"f"}) {
		t.Fatalf("queues after abort: %q %q", st, fu)
	}
	if h.s.IsStreaming() {
		t.Fatal("streaming after abort")
	}
}

// Abort while the model streams: Abort returns after agent_end and
// agent_settled {aborted:true} were published; the partial answer is kept
// as an aborted message (in the context and the session file); the queues
// survive; the next prompt starts a fresh run.
func TestAbortWhileStreaming(t *testing.T) {
	h := newHarness(t, `{"turns":[
		{"content":[{"type":"text","text":"partial"}],"hang":true},
		{"content":[{"type":"text","text":"fresh"}]}
	]}`, harnessOptions{})
	h.prompt("go")
	h.rec.wait(t, 0, "text_end", func(ev rpc.Event) bool {
		u, ok := ev.(*rpc.MessageUpdateEvent)
		return ok && u.AssistantMessageEvent.Type == ai.EvTextEnd
	})
	h.s.FollowUp("later", nil)
	h.s.Abort()

	// Everything below was published before Abort returned.
	evs := h.rec.snapshot()
	tail := typesOf(only(evs, rpc.EventTurnEnd, rpc.EventAgentEnd, rpc.EventAgentSettled))
	expectLabels(t, "last run events", tail, []string{"turn_end", "agent_end", "agent_settled"})
	end := only(evs, rpc.EventAgentEnd)[0].(*rpc.AgentEndEvent)
	if end.WillRetry {
		t.Fatal("agent_end of an aborted run says willRetry")
	}
	if settled := only(evs, rpc.EventAgentSettled)[0].(*rpc.AgentSettledEvent); !settled.Aborted {
		t.Fatal("agent_settled of an aborted run says aborted:false")
	}
	if h.s.IsStreaming() {
		t.Fatal("still streaming after Abort returned")
	}
	last := h.s.Messages()[len(h.s.Messages())-1].(*ai.AssistantMessage)
	if last.StopReason != ai.StopAborted || ai.JoinText(last.Content, "") != "partial" {
		t.Fatalf("last message %+v, want the aborted partial answer", last)
	}
	if leaf := h.s.Store().Leaf(); leaf == nil || leaf.Message() != ai.Message(last) {
		t.Fatal("the aborted message is not the session's leaf")
	}
	if _, fu := h.s.Queues(); !sameStrings(fu, []string{"later"}) {
		t.Fatalf("follow-up queue after abort: %q", fu)
	}

	n := h.rec.len()
	h.s.ClearQueue()
	h.prompt("again")
	h.settle(n)
	expectLabels(t, "context", h.conversation(), []string{"user:go", "assistant!aborted", "user:again", "assistant:fresh"})
}

// Abort while a tool runs: the tool's context is cancelled, the run ends
// with an aborted assistant message and no model call, and a steering
// message that arrived during the tool stays queued (it goes with the
// next prompt).
func TestAbortWhileToolRunsKeepsSteering(t *testing.T) {
	h := newHarness(t, `{"turns":[
		{"content":[{"type":"toolCall","id":"a","name":"gate"}]},
		{"content":[{"type":"text","text":"after the abort"}]}
	]}`, harnessOptions{gates: []string{"gate"}})
	h.prompt("go")
	h.gates["gate"].awaitStart(t)
	h.s.Steer("redirect", nil)
	h.s.Abort()

	expectLabels(t, "context", h.conversation(), []string{
		"user:go", "assistant:call gate", "toolResult:gate aborted", "assistant!aborted",
	})
	if st, _ := h.s.Queues(); !sameStrings(st, []string{"redirect"}) {
		t.Fatalf("steering queue after abort: %q, want [redirect]", st)
	}
	expectLabels(t, "requests", h.requests(), []string{"go"})
	if settled := only(h.rec.snapshot(), rpc.EventAgentSettled); len(settled) != 1 || !settled[0].(*rpc.AgentSettledEvent).Aborted {
		t.Fatal("want one agent_settled {aborted:true}")
	}

	n := h.rec.len()
	h.prompt("again")
	h.settle(n)
	expectLabels(t, "context", h.conversation(), []string{
		"user:go", "assistant:call gate", "toolResult:gate aborted", "assistant!aborted",
		"user:again", "user:redirect", "assistant:after the abort",
	})
}

// AbortAndPrompt stops the running run (its agent_settled comes first) and
// starts the new prompt.
func TestAbortAndPrompt(t *testing.T) {
	h := newHarness(t, `{"turns":[
		{"content":[{"type":"text","text":"partial"}],"hang":true},
		{"content":[{"type":"text","text":"redirected"}]}
	]}`, harnessOptions{})
	h.prompt("go")
	h.rec.waitType(t, rpc.EventMessageUpdate, 0)
	var order []string
	d, err := h.s.AbortAndPrompt("instead", nil, func(d string) {
		order = append(order, "accepted:"+d)
	})
	if err != nil || d != DispositionStarted {
		t.Fatalf("abort_and_prompt: %q %v", d, err)
	}
	first := h.settle(0)
	h.settle(first + 1)
	evs := h.rec.snapshot()
	expectLabels(t, "run events", typesOf(only(evs, rpc.EventAgentStart, rpc.EventAgentSettled)),
		[]string{"agent_start", "agent_settled", "agent_start", "agent_settled"})
	settled := only(evs, rpc.EventAgentSettled)
	if !settled[0].(*rpc.AgentSettledEvent).Aborted || settled[1].(*rpc.AgentSettledEvent).Aborted {
		t.Fatal("want the first run aborted and the second not")
	}
	expectLabels(t, "accepted", order, []string{"accepted:started"})
	expectLabels(t, "context", h.conversation(), []string{"user:go", "assistant!aborted", "user:instead", "assistant:redirected"})
}

// AbortWith keeps the cut reply with its own error message (the terminal
// UI's "Operation aborted"); Abort keeps the provider's.
func TestAbortWithMessage(t *testing.T) {
	h := newHarness(t, `{"turns":[
		{"content":[{"type":"text","text":"partial"}],"hang":true},
		{"content":[{"type":"text","text":"again"}],"hang":true}
	]}`, harnessOptions{})
	for _, c := range []struct{ with, want string }{{"Operation aborted", "Operation aborted"}, {"", "Request was aborted"}} {
		n := len(h.rec.snapshot())
		h.prompt("go")
		h.rec.wait(t, n, "text_end", func(ev rpc.Event) bool {
			u, ok := ev.(*rpc.MessageUpdateEvent)
			return ok && u.AssistantMessageEvent.Type == ai.EvTextEnd
		})
		if c.with != "" {
			h.s.AbortWith(c.with)
		} else {
			h.s.Abort()
		}
		msgs := h.s.Messages()
		last := msgs[len(msgs)-1].(*ai.AssistantMessage)
		if last.StopReason != ai.StopAborted || last.ErrorMessage != c.want {
			t.Errorf("AbortWith(%q): stored %q %q, want aborted %q", c.with, last.StopReason, last.ErrorMessage, c.want)
		}
		ends := only(h.rec.snapshot()[n:], rpc.EventMessageEnd)
		if got := ends[len(ends)-1].(*rpc.MessageEndEvent).Message.(*ai.AssistantMessage).ErrorMessage; got != c.want {
			t.Errorf("message_end says %q, want %q", got, c.want)
		}
	}
}
