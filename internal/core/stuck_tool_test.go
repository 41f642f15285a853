package core

import (
	"context"
	"encoding/json"
	"io"
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

// stuckTool ignores its context: it returns only when release is closed,
// and then reports progress, as a misbehaving extension tool might.
type stuckTool struct {
	started chan struct{}
	release chan struct{}
	once    sync.Once
}

func (t *stuckTool) Name() string        { return "stuck" }
func (t *stuckTool) Description() string { return "never stops" }
func (t *stuckTool) Parameters() json.RawMessage {
	return json.RawMessage(`{"type":"object","properties":{}}`)
}
func (t *stuckTool) Execute(ctx context.Context, call tools.Call) (tools.Result, error) {
	t.once.Do(func() { close(t.started) })
	<-t.release
	call.OnUpdate(tools.TextResult("late update"))
	return tools.TextResult("late result"), nil
}

// A tool that ignores the abort cannot keep the run from ending: the run
// gives up on it after a bounded wait, reports it aborted, and nothing the
// tool does afterwards reaches the events.
func TestAbortEndsTheRunWhenAToolIgnoresIt(t *testing.T) {
	dir := t.TempDir()
	p, err := scripted.Parse([]byte(`{"turns":[{"content":[{"type":"toolCall","name":"stuck","arguments":{}}]}]}`), "test")
	if err != nil {
		t.Fatal(err)
	}
	reg := models.NewRegistry()
	reg.Add(&models.ProviderEntry{Name: scripted.ProviderName, Provider: p, Models: []*ai.Model{p.Model()}, NoKey: true})
	st, err := settings.Load(filepath.Join(dir, "agent"), dir)
	if err != nil {
		t.Fatal(err)
	}
	store, err := session.New(session.Options{Dir: filepath.Join(dir, "sessions"), Cwd: dir})
	if err != nil {
		t.Fatal(err)
	}
	tool := &stuckTool{started: make(chan struct{}), release: make(chan struct{})}
	s, err := New(Options{
		AgentDir: filepath.Join(dir, "agent"), Cwd: dir, Settings: st, Models: reg, Store: store,
		Model: p.Model(), NoContextFiles: true, Log: io.Discard,
		Tools: []tools.Tool{tool}, ActiveTools: []string{"stuck"},
	})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	var releaseOnce sync.Once
	release := func() { releaseOnce.Do(func() { close(tool.release) }) }
	defer release() // before Close, should the test fail early
	var mu sync.Mutex
	var events []string
	settled := false
	s.Subscribe(func(ev rpc.Event) {
		b, _ := json.Marshal(ev)
		mu.Lock()
		defer mu.Unlock()
		if settled {
			events = append(events, "AFTER SETTLED: "+string(b))
			return
		}
		events = append(events, string(b))
		if strings.Contains(string(b), `"type":"agent_settled"`) {
			settled = true
		}
	})
	if _, err := s.Prompt("go", nil, ""); err != nil {
		t.Fatal(err)
	}
	select {
	case <-tool.started:
	case <-time.After(30 * time.Second):
		t.Fatal("the tool never started")
	}
	aborted := make(chan time.Duration, 1)
	start := time.Now()
	go func() { s.Abort(); aborted <- time.Since(start) }()
	select {
	case took := <-aborted:
		t.Logf("abort returned after %v with the tool still running", took)
	case <-time.After(30 * time.Second):
		t.Fatal("abort did not return while the tool ignored it")
	}
	mu.Lock()
	all := strings.Join(events, "\n")
	mu.Unlock()
	if !strings.Contains(all, `"type":"tool_execution_end"`) || !strings.Contains(all, `Tool execution aborted`) {
		t.Fatalf("no aborted tool result:\n%s", all)
	}

	// The tool wakes up later: its update and result go nowhere.
	release()
	s.WaitIdle()
	s.Close()
	mu.Lock()
	defer mu.Unlock()
	for _, e := range events {
		if strings.Contains(e, "late") {
			t.Fatalf("the abandoned tool's output reached the events: %s", e)
		}
	}
}
