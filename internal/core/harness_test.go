package core

import (
	"context"
	"encoding/json"
	"io"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/pisces-agent/pisces/internal/ai"
	"github.com/pisces-agent/pisces/internal/ai/scripted"
	"github.com/pisces-agent/pisces/internal/models"
	"github.com/pisces-agent/pisces/internal/session"
	"github.com/pisces-agent/pisces/internal/settings"
	"github.com/pisces-agent/pisces/internal/tools"
	"github.com/pisces-agent/pisces/rpc"
)

// waitLimit bounds every wait of these tests: generous, so that a loaded
// two-core machine running -race still passes.
const waitLimit = 30 * time.Second

// harness is a core session over the scripted provider, with every event
// it publishes recorded.
type harness struct {
	t     *testing.T
	s     *Session
	prov  *scripted.Provider
	dir   string
	log   string // the scripted provider's request log
	rec   *recorder
	gates map[string]*gateTool
}

type harnessOptions struct {
	settings map[string]any // global settings, dotted keys
	gates    []string       // names of gate tools to add and activate
}

// newHarness starts a session whose model is the scripted provider playing
// script (a JSON object without requestLog: the harness sets it).
func newHarness(t *testing.T, script string, o harnessOptions) *harness {
	t.Helper()
	dir := t.TempDir()
	logPath := filepath.Join(dir, "requests.jsonl")
	var sc map[string]json.RawMessage
	if err := json.Unmarshal([]byte(script), &sc); err != nil {
		t.Fatalf("script: %v", err)
	}
	sc["requestLog"], _ = json.Marshal(logPath)
	b, _ := json.Marshal(sc)
	p, err := scripted.Parse(b, "test")
	if err != nil {
		t.Fatal(err)
	}
	reg := models.NewRegistry()
	reg.Add(&models.ProviderEntry{Name: scripted.ProviderName, Provider: p, Models: []*ai.Model{p.Model()}, NoKey: true})
	agentDir := filepath.Join(dir, "agent")
	st, err := settings.Load(agentDir, dir)
	if err != nil {
		t.Fatal(err)
	}
	for k, v := range o.settings {
		if err := st.Set(settings.Global, k, v); err != nil {
			t.Fatal(err)
		}
	}
	store, err := session.New(session.Options{Dir: filepath.Join(dir, "sessions"), Cwd: dir})
	if err != nil {
		t.Fatal(err)
	}
	h := &harness{t: t, prov: p, dir: dir, log: logPath, rec: newRecorder(), gates: map[string]*gateTool{}}
	var ts []tools.Tool
	active := []string{}
	for _, name := range o.gates {
		g := newGateTool(name)
		h.gates[name] = g
		ts = append(ts, g)
		active = append(active, name)
	}
	s, err := New(Options{
		AgentDir: agentDir, Cwd: dir, Settings: st, Models: reg, Store: store,
		Model: p.Model(), NoContextFiles: true, Log: io.Discard,
		Tools: ts, ActiveTools: active,
	})
	if err != nil {
		t.Fatal(err)
	}
	h.s = s
	s.Subscribe(h.rec.add)
	t.Cleanup(func() {
		for _, g := range h.gates {
			g.releaseAll()
		}
		s.Close()
	})
	return h
}

// prompt starts a run and fails the test when it is refused.
func (h *harness) prompt(text string) {
	h.t.Helper()
	d, err := h.s.Prompt(text, nil, "")
	if err != nil {
		h.t.Fatalf("prompt %q: %v", text, err)
	}
	if d != DispositionStarted {
		h.t.Fatalf("prompt %q: disposition %q, want %q", text, d, DispositionStarted)
	}
}

// settle waits for the next agent_settled after the events already seen
// from index from, and returns its index.
func (h *harness) settle(from int) int {
	h.t.Helper()
	return h.rec.waitType(h.t, rpc.EventAgentSettled, from)
}

// requests returns the scripted provider's request log: for every model
// request, the text of the last user message in its context.
func (h *harness) requests() []string {
	h.t.Helper()
	b, err := os.ReadFile(h.log)
	if err != nil {
		if os.IsNotExist(err) {
			return nil
		}
		h.t.Fatal(err)
	}
	var out []string
	for _, line := range strings.Split(strings.TrimSpace(string(b)), "\n") {
		var r struct {
			LastUser string `json:"lastUser"`
		}
		if err := json.Unmarshal([]byte(line), &r); err != nil {
			h.t.Fatalf("request log line %q: %v", line, err)
		}
		out = append(out, r.LastUser)
	}
	return out
}

// recorder keeps every event in order and lets a test wait for one.
type recorder struct {
	mu     sync.Mutex
	events []rpc.Event
	at     []time.Time
	wake   chan struct{}
}

func newRecorder() *recorder { return &recorder{wake: make(chan struct{}, 1)} }

func (r *recorder) add(ev rpc.Event) {
	r.mu.Lock()
	r.events = append(r.events, ev)
	r.at = append(r.at, time.Now())
	r.mu.Unlock()
	select {
	case r.wake <- struct{}{}:
	default:
	}
}

// snapshot returns the events so far.
func (r *recorder) snapshot() []rpc.Event {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]rpc.Event(nil), r.events...)
}

func (r *recorder) len() int {
	r.mu.Lock()
	defer r.mu.Unlock()
	return len(r.events)
}

// time returns when event i was published.
func (r *recorder) time(i int) time.Time {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.at[i]
}

// wait returns the index of the first event at or after from that match
// accepts, waiting for it up to waitLimit.
func (r *recorder) wait(t *testing.T, from int, what string, match func(rpc.Event) bool) int {
	t.Helper()
	deadline := time.NewTimer(waitLimit)
	defer deadline.Stop()
	for {
		r.mu.Lock()
		for i := from; i < len(r.events); i++ {
			if match(r.events[i]) {
				r.mu.Unlock()
				return i
			}
		}
		r.mu.Unlock()
		select {
		case <-r.wake:
		case <-deadline.C:
			t.Fatalf("no %s within %v; events: %s", what, waitLimit, typesOf(r.snapshot()))
			return -1
		}
	}
}

func (r *recorder) waitType(t *testing.T, typ string, from int) int {
	t.Helper()
	return r.wait(t, from, typ, func(ev rpc.Event) bool { return ev.EventType() == typ })
}

// typesOf lists event types, for messages and for order assertions.
func typesOf(evs []rpc.Event) []string {
	out := make([]string, 0, len(evs))
	for _, ev := range evs {
		out = append(out, ev.EventType())
	}
	return out
}

// only keeps the events of the given types.
func only(evs []rpc.Event, types ...string) []rpc.Event {
	keep := map[string]bool{}
	for _, t := range types {
		keep[t] = true
	}
	var out []rpc.Event
	for _, ev := range evs {
		if keep[ev.EventType()] {
			out = append(out, ev)
		}
	}
	return out
}

// messageLabel names a message by role and text, e.g. "user:hi",
// "assistant:answer", "toolResult:released", "assistant!aborted".
func messageLabel(m ai.Message) string {
	switch v := m.(type) {
	case *ai.UserMessage:
		return "user:" + v.Content.PlainText()
	case *ai.AssistantMessage:
		if v.StopReason == ai.StopError || v.StopReason == ai.StopAborted {
			return "assistant!" + v.StopReason
		}
		var parts []string
		for _, c := range v.Content {
			switch c.Type {
			case ai.ContentText:
				parts = append(parts, c.Text)
			case ai.ContentToolCall:
				parts = append(parts, "call "+c.Name)
			}
		}
		return "assistant:" + strings.Join(parts, "+")
	case *ai.ToolResultMessage:
		return "toolResult:" + ai.JoinText(v.Content, "")
	case *ai.SystemMessage:
		return "system"
	}
	return m.MessageRole()
}

// endedMessages labels the messages of the message_end events.
func endedMessages(evs []rpc.Event) []string {
	var out []string
	for _, ev := range evs {
		if e, ok := ev.(*rpc.MessageEndEvent); ok {
			out = append(out, messageLabel(e.Message))
		}
	}
	return out
}

func labels(msgs []ai.Message) []string {
	out := make([]string, 0, len(msgs))
	for _, m := range msgs {
		out = append(out, messageLabel(m))
	}
	return out
}

func sameStrings(a, b []string) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

// gateTool is a tool that runs until the test releases it or the run is
// cancelled: it lets a test act while a tool call is in progress.
type gateTool struct {
	name    string
	started chan string // the call id, when a call starts
	release chan struct{}
	once    sync.Once
}

func newGateTool(name string) *gateTool {
	return &gateTool{name: name, started: make(chan string, 16), release: make(chan struct{}, 16)}
}

func (g *gateTool) Name() string        { return g.name }
func (g *gateTool) Description() string { return "Waits until released." }
func (g *gateTool) Parameters() json.RawMessage {
	return json.RawMessage(`{"type":"object","properties":{}}`)
}

func (g *gateTool) Execute(ctx context.Context, call tools.Call) (tools.Result, error) {
	g.started <- call.ID
	select {
	case <-g.release:
		return tools.TextResult("released"), nil
	case <-ctx.Done():
		return tools.ErrorResult("gate aborted"), nil
	}
}

// open lets one waiting (or future) call finish.
func (g *gateTool) open() { g.release <- struct{}{} }

// releaseAll lets every call finish (cleanup).
func (g *gateTool) releaseAll() { g.once.Do(func() { close(g.release) }) }

// awaitStart waits until a call of the tool has started.
func (g *gateTool) awaitStart(t *testing.T) string {
	t.Helper()
	select {
	case id := <-g.started:
		return id
	case <-time.After(waitLimit):
		t.Fatalf("tool %s did not start within %v", g.name, waitLimit)
		return ""
	}
}
