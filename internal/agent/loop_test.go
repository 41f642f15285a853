package agent

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"slices"
	"strings"
	"testing"

	"github.com/pisces-agent/pisces/internal/ai"
	"github.com/pisces-agent/pisces/internal/ai/scripted"
	"github.com/pisces-agent/pisces/internal/tools"
	"github.com/pisces-agent/pisces/rpc"
)

// run is one agent.Run over the scripted provider with every event
// recorded. Steering and follow-up queues are plain slices the test (or a
// tool, or an event) fills; the loop takes all of a queue at once.
type run struct {
	t        *testing.T
	prov     *scripted.Provider
	cfg      *Config
	ctx      context.Context
	cancel   context.CancelFunc
	events   []rpc.Event
	steerQ   []ai.Message
	followQ  []ai.Message
	mode     string
	onEvent  func(ev rpc.Event)
	contexts [][]ai.Message // what each model call was given
	// polls records, for every call of Steering and FollowUp, its name,
	// whether the run was cancelled then, and the events seen so far.
	polls []poll
}

type poll struct {
	queue     string
	cancelled bool
	at        int
}

func newRun(t *testing.T, script string, ts ...tools.Tool) *run {
	t.Helper()
	p, err := scripted.Parse([]byte(script), "test")
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	t.Cleanup(cancel)
	r := &run{t: t, prov: p, ctx: ctx, cancel: cancel, mode: InterruptImmediate}
	r.cfg = &Config{
		Provider:      p,
		Model:         p.Model(),
		ThinkingLevel: "off",
		SystemPrompt:  "You are a test agent.",
		Tools:         ts,
		InterruptMode: func() string { return r.mode },
		Steering: func() []ai.Message {
			r.polls = append(r.polls, poll{"steering", ctx.Err() != nil, len(r.events)})
			q := r.steerQ
			r.steerQ = nil
			return q
		},
		FollowUp: func() []ai.Message {
			r.polls = append(r.polls, poll{"followUp", ctx.Err() != nil, len(r.events)})
			q := r.followQ
			r.followQ = nil
			return q
		},
		ConvertToLLM: func(msgs []ai.Message) []ai.Message {
			r.contexts = append(r.contexts, append([]ai.Message(nil), msgs...))
			return msgs
		},
		Emit: func(ev rpc.Event) {
			r.events = append(r.events, ev)
			if r.onEvent != nil {
				r.onEvent(ev)
			}
		},
	}
	return r
}

func (r *run) do(history []ai.Message, prompts ...string) Result {
	var ps []ai.Message
	for _, p := range prompts {
		ps = append(ps, user(p))
	}
	return Run(r.ctx, r.cfg, history, ps)
}

func user(text string) *ai.UserMessage {
	return &ai.UserMessage{Role: ai.RoleUser, Content: ai.BlockContent(ai.Text(text)), Timestamp: ai.NowMs()}
}

// label names an event compactly: "message_end:user:hi",
// "message_update:text_delta", "tool_execution_end:echo!" (! = isError).
func label(ev rpc.Event) string {
	switch e := ev.(type) {
	case *rpc.MessageStartEvent:
		return "message_start:" + msgLabel(e.Message)
	case *rpc.MessageEndEvent:
		return "message_end:" + msgLabel(e.Message)
	case *rpc.MessageUpdateEvent:
		return "message_update:" + e.AssistantMessageEvent.Type
	case *rpc.ToolExecutionStartEvent:
		return "tool_execution_start:" + e.ToolName
	case *rpc.ToolExecutionUpdateEvent:
		return "tool_execution_update:" + e.ToolName
	case *rpc.ToolExecutionEndEvent:
		if e.IsError {
			return "tool_execution_end:" + e.ToolName + "!"
		}
		return "tool_execution_end:" + e.ToolName
	}
	return ev.EventType()
}

// msgLabel names a message by role and text ("assistant:hello",
// "assistant!aborted", "toolResult:echo!" for an error result).
func msgLabel(m ai.Message) string {
	switch v := m.(type) {
	case *ai.UserMessage:
		return "user:" + v.Content.PlainText()
	case *ai.AssistantMessage:
		switch v.StopReason {
		case ai.StopError, ai.StopAborted, "pending":
			return "assistant!" + v.StopReason
		}
		var parts []string
		for _, c := range v.Content {
			if c.Type == ai.ContentToolCall {
				parts = append(parts, "call "+c.Name)
			} else if c.Type == ai.ContentText {
				parts = append(parts, c.Text)
			}
		}
		return "assistant:" + strings.Join(parts, "+")
	case *ai.ToolResultMessage:
		if v.IsError {
			return "toolResult:" + v.ToolName + "!"
		}
		return "toolResult:" + v.ToolName
	}
	return m.MessageRole()
}

func labelsOf(evs []rpc.Event) []string {
	out := make([]string, 0, len(evs))
	for _, ev := range evs {
		out = append(out, label(ev))
	}
	return out
}

func msgLabels(msgs []ai.Message) []string {
	out := make([]string, 0, len(msgs))
	for _, m := range msgs {
		out = append(out, msgLabel(m))
	}
	return out
}

func expectSeq(t *testing.T, what string, got, want []string) {
	t.Helper()
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Fatalf("%s:\n got %q\nwant %q", what, got, want)
	}
}

// fromFirst returns labels from the first one that starts with prefix.
func fromFirst(labels []string, prefix string) []string {
	for i, l := range labels {
		if strings.HasPrefix(l, prefix) {
			return labels[i:]
		}
	}
	return nil
}

func countOf(evs []rpc.Event, typ string) int {
	n := 0
	for _, ev := range evs {
		if ev.EventType() == typ {
			n++
		}
	}
	return n
}

// echoTool returns its "text" argument and reports one partial result.
type echoTool struct {
	name  string
	calls []string // the call ids, in order
	// during, when set, runs inside Execute (a test acts mid-call).
	during func()
}

func (e *echoTool) Name() string        { return e.name }
func (e *echoTool) Description() string { return "Echoes text." }
func (e *echoTool) Parameters() json.RawMessage {
	return json.RawMessage(`{"type":"object","properties":{"text":{"type":"string"}}}`)
}

func (e *echoTool) Execute(ctx context.Context, call tools.Call) (tools.Result, error) {
	e.calls = append(e.calls, call.ID)
	var args struct{ Text string }
	if err := json.Unmarshal(call.Args, &args); err != nil {
		return tools.ErrorResult("bad arguments: " + err.Error()), nil
	}
	if call.OnUpdate != nil {
		call.OnUpdate(tools.TextResult("partial " + args.Text))
	}
	if e.during != nil {
		e.during()
	}
	return tools.TextResult("echo " + args.Text), nil
}

// failTool fails in the way its name says: an error result, a Go error,
// or a panic.
type failTool struct{ name string }

func (f failTool) Name() string                { return f.name }
func (f failTool) Description() string         { return "Fails." }
func (f failTool) Parameters() json.RawMessage { return json.RawMessage(`{"type":"object"}`) }
func (f failTool) Execute(ctx context.Context, call tools.Call) (tools.Result, error) {
	switch f.name {
	case "errresult":
		return tools.ErrorResult("it failed"), nil
	case "goerror":
		return tools.Result{}, errors.New("disk on fire")
	default:
		panic("boom")
	}
}

// blockTool runs until the run is cancelled; started, when set, is called
// once it runs.
type blockTool struct{ started func() }

func (blockTool) Name() string                { return "block" }
func (blockTool) Description() string         { return "Blocks until cancelled." }
func (blockTool) Parameters() json.RawMessage { return json.RawMessage(`{"type":"object"}`) }
func (b blockTool) Execute(ctx context.Context, call tools.Call) (tools.Result, error) {
	if b.started != nil {
		b.started()
	}
	<-ctx.Done()
	return tools.ErrorResult("block aborted"), nil
}

// A text-only turn: agent_start, turn_start, the prompt's message_start/end,
// the assistant's message_start, its updates and message_end, turn_end.
// Run leaves agent_end to its caller (the caller decides willRetry).
func TestTextTurnEventsInOrder(t *testing.T) {
	r := newRun(t, `{"turns":[{"content":[{"type":"text","text":"hello"}],"chunks":["hel","lo"]}]}`)
	history := []ai.Message{user("earlier")}
	res := r.do(history, "hi")

	expectSeq(t, "events", labelsOf(r.events), []string{
		"agent_start", "turn_start",
		"message_start:user:hi", "message_end:user:hi",
		"message_start:assistant!pending",
		"message_update:text_start", "message_update:text_delta", "message_update:text_delta", "message_update:text_end",
		"message_end:assistant:hello",
		"turn_end",
	})
	var deltas []string
	for _, ev := range r.events {
		if u, ok := ev.(*rpc.MessageUpdateEvent); ok && u.AssistantMessageEvent.Type == ai.EvTextDelta {
			deltas = append(deltas, u.AssistantMessageEvent.Delta)
		}
	}
	expectSeq(t, "text deltas", deltas, []string{"hel", "lo"})
	te := r.events[len(r.events)-1].(*rpc.TurnEndEvent)
	if te.Message != ai.Message(res.Last) || len(te.ToolResults) != 0 {
		t.Fatalf("turn_end carries %v with %d tool results, want the last message and none", te.Message, len(te.ToolResults))
	}
	if res.Last == nil || res.Last.StopReason != ai.StopStop {
		t.Fatalf("last message %+v, want stopReason stop", res.Last)
	}
	// The result lists what the run produced, not the history.
	expectSeq(t, "produced", msgLabels(res.Messages), []string{"user:hi", "assistant:hello"})
	// The model saw the history and the prompt.
	if len(r.contexts) != 1 {
		t.Fatalf("%d model calls, want 1", len(r.contexts))
	}
	expectSeq(t, "model context", msgLabels(r.contexts[0]), []string{"user:earlier", "user:hi"})
	if countOf(r.events, rpc.EventAgentEnd) != 0 {
		t.Fatal("Run emitted agent_end; its caller does")
	}
}

// A tool-call turn: the tool runs between the assistant's message_end and
// turn_end (tool_execution_start/update/end, then the toolResult message),
// turn_end carries the results, and the next turn gives the model the
// results.
func TestToolTurnThenNextTurn(t *testing.T) {
	echo := &echoTool{name: "echo"}
	r := newRun(t, `{"turns":[
		{"content":[{"type":"toolCall","id":"c1","name":"echo","arguments":{"text":"ping"}}]},
		{"content":[{"type":"text","text":"done"}]}
	]}`, echo)
	res := r.do(nil, "go")

	expectSeq(t, "events", labelsOf(r.events), []string{
		"agent_start", "turn_start",
		"message_start:user:go", "message_end:user:go",
		"message_start:assistant!pending",
		"message_update:toolcall_start", "message_update:toolcall_delta", "message_update:toolcall_end",
		"message_end:assistant:call echo",
		"tool_execution_start:echo", "tool_execution_update:echo", "tool_execution_end:echo",
		"message_start:toolResult:echo", "message_end:toolResult:echo",
		"turn_end",
		"turn_start",
		"message_start:assistant!pending",
		"message_update:text_start", "message_update:text_delta", "message_update:text_end",
		"message_end:assistant:done",
		"turn_end",
	})
	for _, ev := range r.events {
		switch e := ev.(type) {
		case *rpc.ToolExecutionStartEvent:
			if e.ToolCallID != "c1" || string(e.Args) != `{"text":"ping"}` {
				t.Fatalf("tool_execution_start %+v", e)
			}
		case *rpc.ToolExecutionEndEvent:
			if e.ToolCallID != "c1" || e.IsError || ai.JoinText(e.Result.Content, "") != "echo ping" || e.DurationMs == nil {
				t.Fatalf("tool_execution_end %+v", e)
			}
		}
	}
	firstEnd := r.events[14].(*rpc.TurnEndEvent)
	if len(firstEnd.ToolResults) != 1 || firstEnd.ToolResults[0].ToolCallID != "c1" ||
		ai.JoinText(firstEnd.ToolResults[0].Content, "") != "echo ping" {
		t.Fatalf("first turn_end results %+v", firstEnd.ToolResults)
	}
	expectSeq(t, "tool calls", echo.calls, []string{"c1"})
	if len(r.contexts) != 2 {
		t.Fatalf("%d model calls, want 2", len(r.contexts))
	}
	expectSeq(t, "second model context", msgLabels(r.contexts[1]),
		[]string{"user:go", "assistant:call echo", "toolResult:echo"})
	expectSeq(t, "produced", msgLabels(res.Messages),
		[]string{"user:go", "assistant:call echo", "toolResult:echo", "assistant:done"})
}

// Every way a tool can fail becomes a result with isError that the model
// sees on its next turn: an error result, a Go error, a panic, a tool that
// does not exist.
func TestToolFailuresBecomeErrorResults(t *testing.T) {
	old := debugOut
	debugOut = io.Discard
	t.Cleanup(func() { debugOut = old })
	r := newRun(t, `{"turns":[
		{"content":[
			{"type":"toolCall","id":"a","name":"errresult"},
			{"type":"toolCall","id":"b","name":"goerror"},
			{"type":"toolCall","id":"c","name":"panics"},
			{"type":"toolCall","id":"d","name":"nosuchtool"}
		]},
		{"content":[{"type":"text","text":"I see the failures"}]}
	]}`, failTool{"errresult"}, failTool{"goerror"}, failTool{"panics"})
	res := r.do(nil, "go")

	want := map[string]string{
		"a": "it failed",
		"b": "disk on fire",
		"c": "Tool panics failed: boom",
		"d": "Tool nosuchtool not found",
	}
	ends := 0
	for _, ev := range r.events {
		if e, ok := ev.(*rpc.ToolExecutionEndEvent); ok {
			ends++
			if !e.IsError || ai.JoinText(e.Result.Content, "") != want[e.ToolCallID] {
				t.Errorf("tool_execution_end %s: isError %v, %q; want an error %q", e.ToolCallID, e.IsError, ai.JoinText(e.Result.Content, ""), want[e.ToolCallID])
			}
		}
	}
	if ends != 4 {
		t.Fatalf("%d tool_execution_end events, want 4", ends)
	}
	if len(r.contexts) != 2 {
		t.Fatalf("%d model calls, want 2 (the loop goes on after failed tools)", len(r.contexts))
	}
	var results []string
	for _, m := range r.contexts[1] {
		if tr, ok := m.(*ai.ToolResultMessage); ok {
			if !tr.IsError {
				t.Errorf("result of %s is not an error", tr.ToolCallID)
			}
			results = append(results, tr.ToolCallID+"="+ai.JoinText(tr.Content, ""))
		}
	}
	expectSeq(t, "results the model saw", results, []string{
		"a=it failed", "b=disk on fire", "c=Tool panics failed: boom", "d=Tool nosuchtool not found",
	})
	if res.Last.StopReason != ai.StopStop {
		t.Fatalf("last stopReason %q", res.Last.StopReason)
	}
}

// A provider error ends the run after that turn: no further model call,
// and follow-ups are not taken (they stay queued for the caller).
func TestProviderErrorEndsTheRun(t *testing.T) {
	r := newRun(t, `{"turns":[
		{"error":{"status":400,"message":"bad request"}},
		{"content":[{"type":"text","text":"never"}]}
	]}`)
	r.followQ = []ai.Message{user("later")}
	res := r.do(nil, "go")
	if res.Last == nil || res.Last.StopReason != ai.StopError || res.Last.ErrorMessage != "400 bad request" {
		t.Fatalf("last %+v, want the error message", res.Last)
	}
	expectSeq(t, "events", labelsOf(r.events), []string{
		"agent_start", "turn_start", "message_start:user:go", "message_end:user:go",
		"message_start:assistant!pending", "message_end:assistant!error", "turn_end",
	})
	if r.prov.Remaining() != 1 {
		t.Fatalf("%d scripted turns left, want 1", r.prov.Remaining())
	}
	if len(r.followQ) != 1 {
		t.Fatal("the follow-up was taken by a run that ended in an error")
	}
}

// Cancelling while the model streams ends the run at once: the message
// keeps what was streamed, has stopReason aborted, and is the last one;
// no further turn starts and no queue is polled after the cancel.
func TestCancelMidStream(t *testing.T) {
	r := newRun(t, `{"turns":[
		{"content":[{"type":"text","text":"partial"}],"hang":true},
		{"content":[{"type":"text","text":"never"}]}
	]}`)
	r.followQ = []ai.Message{user("later")}
	r.onEvent = func(ev rpc.Event) {
		if u, ok := ev.(*rpc.MessageUpdateEvent); ok && u.AssistantMessageEvent.Type == ai.EvTextEnd {
			r.steerQ = []ai.Message{user("steer after cancel")}
			r.cancel()
		}
	}
	res := r.do(nil, "go")

	if res.Last == nil || res.Last.StopReason != ai.StopAborted || ai.JoinText(res.Last.Content, "") != "partial" {
		t.Fatalf("last %+v, want the aborted message with the streamed text", res.Last)
	}
	got := labelsOf(r.events)
	expectSeq(t, "events after the assistant's message_end", got[len(got)-2:], []string{"message_end:assistant!aborted", "turn_end"})
	if n := countOf(r.events, rpc.EventTurnStart); n != 1 {
		t.Fatalf("%d turn_start events, want 1", n)
	}
	if r.prov.Remaining() != 1 {
		t.Fatalf("%d scripted turns left, want 1 (no model call after the cancel)", r.prov.Remaining())
	}
	for _, p := range r.polls {
		if p.cancelled {
			t.Fatalf("the %s queue was polled after the cancel", p.queue)
		}
	}
	if len(r.steerQ) != 1 || len(r.followQ) != 1 {
		t.Fatalf("queues after the cancel: %d steering, %d follow-up; want both kept", len(r.steerQ), len(r.followQ))
	}
}

// A cancel that comes after the last answer was complete (stopReason stop)
// still leaves the queues alone: the follow-up is not delivered.
func TestCancelAfterTheLastAnswer(t *testing.T) {
	r := newRun(t, `{"turns":[
		{"content":[{"type":"text","text":"done"}]},
		{"content":[{"type":"text","text":"never"}]}
	]}`)
	r.followQ = []ai.Message{user("later")}
	r.onEvent = func(ev rpc.Event) {
		if e, ok := ev.(*rpc.MessageEndEvent); ok && e.Message.MessageRole() == ai.RoleAssistant {
			r.cancel()
		}
	}
	res := r.do(nil, "go")
	expectSeq(t, "produced", msgLabels(res.Messages), []string{"user:go", "assistant:done"})
	if len(r.followQ) != 1 {
		t.Fatal("the follow-up was taken after the cancel")
	}
	for _, p := range r.polls {
		if p.cancelled {
			t.Fatalf("the %s queue was polled after the cancel", p.queue)
		}
	}
}

// Cancelling while a tool runs: the running tool sees the cancelled
// context, the calls after it are not run ("Tool execution aborted"), every
// call still gets a result, and the run ends with an aborted assistant
// message in a turn that asks no model. Queues are not touched.
func TestCancelMidTool(t *testing.T) {
	echo := &echoTool{name: "echo"}
	r := newRun(t, `{"turns":[
		{"content":[
			{"type":"toolCall","id":"a","name":"block"},
			{"type":"toolCall","id":"b","name":"echo","arguments":{"text":"x"}}
		]},
		{"content":[{"type":"text","text":"never"}]}
	]}`)
	r.cfg.Tools = []tools.Tool{blockTool{started: func() {
		// A steering message arrives with the abort.
		r.steerQ = []ai.Message{user("redirect")}
		r.cancel()
	}}, echo}
	res := r.do(nil, "go")

	expectSeq(t, "events after the assistant's message", fromFirst(labelsOf(r.events), "tool_execution_start:"), []string{
		"tool_execution_start:block", "tool_execution_end:block!",
		"message_start:toolResult:block!", "message_end:toolResult:block!",
		"tool_execution_start:echo", "tool_execution_end:echo!",
		"message_start:toolResult:echo!", "message_end:toolResult:echo!",
		"turn_end",
		"turn_start", "message_start:assistant!pending", "message_end:assistant!aborted", "turn_end",
	})
	if len(echo.calls) != 0 {
		t.Fatalf("the call after the cancel ran: %v", echo.calls)
	}
	var texts []string
	for _, m := range res.Messages {
		if tr, ok := m.(*ai.ToolResultMessage); ok {
			texts = append(texts, ai.JoinText(tr.Content, ""))
		}
	}
	expectSeq(t, "results", texts, []string{"block aborted", "Tool execution aborted"})
	if res.Last == nil || res.Last.StopReason != ai.StopAborted {
		t.Fatalf("last %+v, want stopReason aborted", res.Last)
	}
	if r.prov.Remaining() != 1 {
		t.Fatalf("%d scripted turns left, want 1 (no model call after the cancel)", r.prov.Remaining())
	}
	if len(r.steerQ) != 1 {
		t.Fatal("the steering message queued with the abort was taken by the aborted run")
	}
	for _, p := range r.polls {
		if p.cancelled {
			t.Fatalf("the %s queue was polled after the cancel", p.queue)
		}
	}
}

// Interrupt mode immediate: a steering message that arrives during a tool
// call skips the remaining calls of that assistant message (each still
// gets start and end events and the error result "Skipped due to queued
// user message."), and is delivered in the next turn before the model call.
func TestSteeringImmediateSkipsRemainingCalls(t *testing.T) {
	echo := &echoTool{name: "echo"}
	r := newRun(t, `{"turns":[
		{"content":[
			{"type":"toolCall","id":"a","name":"echo","arguments":{"text":"1"}},
			{"type":"toolCall","id":"b","name":"echo","arguments":{"text":"2"}},
			{"type":"toolCall","id":"c","name":"echo","arguments":{"text":"3"}}
		]},
		{"content":[{"type":"text","text":"redirected"}]}
	]}`, echo)
	echo.during = func() {
		if len(echo.calls) == 1 {
			r.steerQ = []ai.Message{user("stop that")}
		}
	}
	res := r.do(nil, "go")

	expectSeq(t, "executed calls", echo.calls, []string{"a"})
	expectSeq(t, "events after the assistant's message", fromFirst(labelsOf(r.events), "tool_execution_start:"), []string{
		"tool_execution_start:echo", "tool_execution_update:echo", "tool_execution_end:echo",
		"message_start:toolResult:echo", "message_end:toolResult:echo",
		"tool_execution_start:echo", "tool_execution_end:echo!",
		"message_start:toolResult:echo!", "message_end:toolResult:echo!",
		"tool_execution_start:echo", "tool_execution_end:echo!",
		"message_start:toolResult:echo!", "message_end:toolResult:echo!",
		"turn_end",
		"turn_start",
		"message_start:user:stop that", "message_end:user:stop that",
		"message_start:assistant!pending",
		"message_update:text_start", "message_update:text_delta", "message_update:text_end",
		"message_end:assistant:redirected", "turn_end",
	})
	for _, m := range res.Messages {
		if tr, ok := m.(*ai.ToolResultMessage); ok && tr.ToolCallID != "a" {
			if got := ai.JoinText(tr.Content, ""); got != SkippedText || !tr.IsError {
				t.Fatalf("skipped call %s: %q isError %v", tr.ToolCallID, got, tr.IsError)
			}
		}
	}
	expectSeq(t, "second model context", msgLabels(r.contexts[1]), []string{
		"user:go", "assistant:call echo+call echo+call echo",
		"toolResult:echo", "toolResult:echo!", "toolResult:echo!", "user:stop that",
	})
}

// Interrupt mode wait: the whole batch runs; the steering message is
// delivered after turn_end, before the next model call.
func TestSteeringWaitRunsTheWholeBatch(t *testing.T) {
	echo := &echoTool{name: "echo"}
	r := newRun(t, `{"turns":[
		{"content":[
			{"type":"toolCall","id":"a","name":"echo","arguments":{"text":"1"}},
			{"type":"toolCall","id":"b","name":"echo","arguments":{"text":"2"}}
		]},
		{"content":[{"type":"text","text":"both ran"}]}
	]}`, echo)
	r.mode = InterruptWait
	echo.during = func() {
		if len(echo.calls) == 1 {
			r.steerQ = []ai.Message{user("then this")}
		}
	}
	r.do(nil, "go")

	expectSeq(t, "executed calls", echo.calls, []string{"a", "b"})
	got := labelsOf(r.events)
	i := len(got) - 12
	expectSeq(t, "events after the batch", got[i:], []string{
		"message_start:toolResult:echo", "message_end:toolResult:echo",
		"turn_end", "turn_start",
		"message_start:user:then this", "message_end:user:then this",
		"message_start:assistant!pending",
		"message_update:text_start", "message_update:text_delta", "message_update:text_end",
		"message_end:assistant:both ran", "turn_end",
	})
}

// Steering messages already queued when the run starts go in the first
// turn, after the prompt; with NoInitialSteering (the prompts are steering
// messages the caller took) the queue is first polled after that turn.
func TestSteeringQueuedBeforeTheRun(t *testing.T) {
	t.Run("polled", func(t *testing.T) {
		r := newRun(t, `{"turns":[{"content":[{"type":"text","text":"a"}]}]}`)
		r.steerQ = []ai.Message{user("also")}
		r.do(nil, "go")
		expectSeq(t, "first model context", msgLabels(r.contexts[0]), []string{"user:go", "user:also"})
	})
	t.Run("not polled", func(t *testing.T) {
		r := newRun(t, `{"turns":[{"content":[{"type":"text","text":"a"}]},{"content":[{"type":"text","text":"b"}]}]}`)
		r.cfg.NoInitialSteering = true
		r.steerQ = []ai.Message{user("next")}
		r.do(nil, "first")
		if len(r.contexts) != 2 {
			t.Fatalf("%d model calls, want 2", len(r.contexts))
		}
		expectSeq(t, "first model context", msgLabels(r.contexts[0]), []string{"user:first"})
		expectSeq(t, "second model context", msgLabels(r.contexts[1]), []string{"user:first", "assistant:a", "user:next"})
	})
}

// Follow-ups are asked for only when the agent would otherwise stop (not
// after a tool turn, and after steering is empty); each is delivered in a
// new turn, and the run ends when none is left.
func TestFollowUpOnlyWhenTheAgentWouldStop(t *testing.T) {
	echo := &echoTool{name: "echo"}
	r := newRun(t, `{"turns":[
		{"content":[{"type":"toolCall","id":"a","name":"echo","arguments":{"text":"1"}}]},
		{"content":[{"type":"text","text":"first done"}]},
		{"content":[{"type":"text","text":"steered"}]},
		{"content":[{"type":"text","text":"followed up"}]}
	]}`, echo)
	r.followQ = []ai.Message{user("and then")}
	steered := false
	r.onEvent = func(ev rpc.Event) {
		// A steering message arrives as the second answer ends: it goes
		// before the follow-up.
		if e, ok := ev.(*rpc.MessageEndEvent); ok && msgLabel(e.Message) == "assistant:first done" && !steered {
			steered = true
			r.steerQ = []ai.Message{user("steer")}
		}
	}
	res := r.do(nil, "go")

	expectSeq(t, "produced", msgLabels(res.Messages), []string{
		"user:go", "assistant:call echo", "toolResult:echo", "assistant:first done",
		"user:steer", "assistant:steered",
		"user:and then", "assistant:followed up",
	})
	// The follow-up queue was asked twice: once after "steered" (the first
	// time the agent would have stopped) and once after "followed up".
	var asked []string
	for _, p := range r.polls {
		if p.queue == "followUp" {
			asked = append(asked, msgLabel(r.events[p.at-1].(*rpc.TurnEndEvent).Message))
		}
	}
	expectSeq(t, "turns after which follow-ups were asked for", asked, []string{"assistant:steered", "assistant:followed up"})
	if n := countOf(r.events, rpc.EventTurnStart); n != 4 {
		t.Fatalf("%d turns, want 4", n)
	}
}

// panicProvider panics inside Stream, as a broken adapter might.
type panicProvider struct{}

func (panicProvider) Stream(ctx context.Context, req *ai.Request, emit func(ai.AssistantEvent)) *ai.AssistantMessage {
	panic("adapter bug")
}

// A provider that panics gives an error message (the run survives).
func TestProviderPanicBecomesAnError(t *testing.T) {
	old := debugOut
	debugOut = io.Discard
	t.Cleanup(func() { debugOut = old })
	r := newRun(t, `{"turns":[]}`)
	r.cfg.Provider = panicProvider{}
	res := r.do(nil, "go")
	if res.Last == nil || res.Last.StopReason != ai.StopError || res.Last.ErrorMessage != "provider failed unexpectedly" {
		t.Fatalf("last %+v", res.Last)
	}
	expectSeq(t, "events", labelsOf(r.events), []string{
		"agent_start", "turn_start", "message_start:user:go", "message_end:user:go",
		"message_start:assistant!error", "message_end:assistant!error", "turn_end",
	})
}

// priorityProbe records Request.Priority of each model call.
type priorityProbe struct {
	ai.Provider
	got []bool
}

func (p *priorityProbe) Stream(ctx context.Context, req *ai.Request, emit func(ai.AssistantEvent)) *ai.AssistantMessage {
	p.got = append(p.got, req.Priority)
	return p.Provider.Stream(ctx, req, emit)
}

// TestPriority: a model call asks for priority processing when Priority
// says so at that call and the model has it; never for a model without it.
func TestPriority(t *testing.T) {
	r := newRun(t, `{"turns":[
		{"content":[{"type":"toolCall","id":"c1","name":"echo","arguments":{"text":"x"}}]},
		{"content":[{"type":"text","text":"done"}]},
		{"content":[{"type":"text","text":"again"}]}]}`, &echoTool{name: "echo"})
	probe := &priorityProbe{Provider: r.cfg.Provider}
	r.cfg.Provider = probe
	on := true
	r.cfg.Priority = func() bool { v := on; on = false; return v } // on for the first call only
	m := *r.cfg.Model
	m.API, m.BaseURL = "openai-responses", "https://api.openai.com/v1"
	r.cfg.Model = &m
	r.do(nil, "go")
	on = true
	r.cfg.Model = r.prov.Model() // scripted: no priority processing
	r.do(nil, "again")
	if want := []bool{true, false, false}; !slices.Equal(probe.got, want) {
		t.Fatalf("Priority per call = %v, want %v", probe.got, want)
	}
}
