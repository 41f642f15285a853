package task

import (
	"encoding/json"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/pisces-agent/pisces/internal/ai"
	"github.com/pisces-agent/pisces/rpc"
)

func TestNoControllerWithoutLimits(t *testing.T) {
	if c := NewController(ControllerOptions{Scope: ScopeSession, Limits: Limits{WarnAtRatio: 0.8}}); c != nil {
		t.Fatal("controller without limits")
	}
	var c *Controller // nil is usable
	c.Observe(&rpc.AgentStartEvent{})
	c.AddUsage(ai.Usage{Input: 1})
	c.AddSubagent()
	if ok, _ := c.Exceeded(); ok || c.PromptError() != nil || c.Snapshot().Status != "ok" {
		t.Error("nil controller")
	}
}

func TestBudgetWarningThenExceededFromTurns(t *testing.T) {
	rec := &recorder{}
	c := NewController(ControllerOptions{Scope: ScopeSession, Limits: Limits{TotalTokens: 24000, WarnAtRatio: 0.8}, Emit: rec.emit})
	turn := func(in, out int64, cost float64) {
		c.Observe(&rpc.TurnEndEvent{Message: &ai.AssistantMessage{Role: "assistant",
			Usage: ai.Usage{Input: in, Output: out, TotalTokens: in + out, Cost: ai.Cost{Total: cost}}}})
	}
	c.Observe(&rpc.AgentStartEvent{})
	c.Observe(&rpc.ToolExecutionStartEvent{ToolName: "read"})
	turn(19000, 309, 0.1)
	if got := rec.types(); len(got) != 1 || got[0] != "budget_warning" {
		t.Fatalf("after turn 1: %v", got)
	}
	turn(100, 100, 0.1) // still warning: no second warning for the same dimension
	if len(rec.all()) != 1 {
		t.Fatalf("repeated warning: %v", rec.types())
	}
	if err := c.PromptError(); err != nil {
		t.Fatal("exceeded too early")
	}
	turn(4000, 600, 0.1)
	turn(4000, 600, 0.1) // only one budget_exceeded
	c.Observe(&rpc.AgentEndEvent{})
	if got := strings.Join(rec.types(), ","); got != "budget_warning,budget_exceeded" {
		t.Fatalf("events: %s", got)
	}
	w := rec.all()[0].(*BudgetWarningEvent)
	if w.Scope != "session" || w.Snapshot.Status != "warning" || w.Snapshot.Reason != "total_tokens" || w.Snapshot.TotalTokens != 19309 || w.Snapshot.ToolCalls != 1 || w.Snapshot.InputTokens != 19000 {
		t.Errorf("warning: %+v", w)
	}
	x := rec.all()[1].(*BudgetExceededEvent)
	if x.Snapshot.Status != "exceeded" || x.Snapshot.Reason != "total_tokens" || x.Snapshot.TotalTokens != 24109 {
		t.Errorf("exceeded: %+v", x)
	}
	b, _ := rpc.EncodeEvent(x)
	if !strings.HasPrefix(string(b), `{"type":"budget_exceeded","scope":"session","snapshot":{"status":"exceeded","wallTimeMs":`) ||
		!strings.Contains(string(b), `"costUsd":0.30000000000000004,"toolCalls":1,"subagents":0,"reason":"total_tokens"}}`) {
		t.Errorf("wire: %s", b)
	}
	if err := c.PromptError(); err == nil || err.Error() != "Session budget exceeded (total_tokens)" {
		t.Errorf("prompt error: %v", err)
	}
}

func TestBudgetWarningOncePerDimension(t *testing.T) {
	rec := &recorder{}
	c := NewController(ControllerOptions{Scope: ScopeTask, Limits: Limits{InputTokens: 100, ToolCalls: 10, CostUsd: 1, WarnAtRatio: 0.5}, Emit: rec.emit})
	c.AddUsage(ai.Usage{Input: 60})
	c.AddToolCalls(5)
	c.AddToolCalls(1)
	c.AddUsage(ai.Usage{Input: 1, Cost: ai.Cost{Total: 0.6}})
	var reasons []string
	for _, ev := range rec.all() {
		w, ok := ev.(*BudgetWarningEvent)
		if !ok {
			t.Fatalf("unexpected %s", ev.EventType())
		}
		reasons = append(reasons, w.Snapshot.Reason)
	}
	if strings.Join(reasons, ",") != "input_tokens,tool_calls,cost" {
		t.Errorf("warnings: %v", reasons)
	}
	// Exceeded: the first exceeded dimension in the fixed order wins, and
	// no warnings follow.
	c.AddToolCalls(10)
	c.AddUsage(ai.Usage{Input: 100})
	evs := rec.all()
	if len(evs) != 4 {
		t.Fatalf("events: %v", rec.types())
	}
	if x := evs[3].(*BudgetExceededEvent); x.Snapshot.Reason != "tool_calls" {
		t.Errorf("reason: %s", x.Snapshot.Reason)
	}
	if ok, reason := c.Exceeded(); !ok || reason != "tool_calls" {
		t.Errorf("%v %s", ok, reason)
	}
	if s := c.Snapshot(); s.Status != "exceeded" || s.Reason != "tool_calls" {
		t.Errorf("snapshot: %+v", s)
	}
}

func TestBudgetWallTime(t *testing.T) {
	rec := &recorder{}
	var mu sync.Mutex
	now := time.Unix(1000, 0)
	clock := func() time.Time { mu.Lock(); defer mu.Unlock(); return now }
	advance := func(d time.Duration) { mu.Lock(); now = now.Add(d); mu.Unlock() }
	c := NewController(ControllerOptions{Scope: ScopeSession, Limits: Limits{WallTimeMs: 100}, Emit: rec.emit, Now: clock})
	defer c.Close()
	advance(time.Hour) // before agent_start nothing counts
	c.Observe(&rpc.AgentStartEvent{})
	advance(85 * time.Millisecond)
	// The timer (every 10 ms here) notices without any other event.
	waitFor(t, func() bool { return len(rec.all()) == 1 })
	if w := rec.all()[0].(*BudgetWarningEvent); w.Snapshot.Reason != "wall_time" || w.Snapshot.WallTimeMs != 85 {
		t.Errorf("warning: %+v", w)
	}
	advance(20 * time.Millisecond)
	waitFor(t, func() bool { return len(rec.all()) == 2 })
	if x := rec.all()[1].(*BudgetExceededEvent); x.Snapshot.Reason != "wall_time" || x.Snapshot.WallTimeMs != 105 {
		t.Errorf("exceeded: %+v", x)
	}
	c.Observe(&rpc.AgentEndEvent{})
	advance(time.Hour)
	if s := c.Snapshot(); s.WallTimeMs != 105 {
		t.Errorf("wall time after agent_end: %d", s.WallTimeMs)
	}
}

func TestBudgetWallTimeRestartsAtAgentStart(t *testing.T) {
	now := time.Unix(0, 0)
	c := NewController(ControllerOptions{Scope: ScopeSession, Limits: Limits{WallTimeMs: 1_000_000}, Now: func() time.Time { return now }})
	defer c.Close()
	c.Observe(&rpc.AgentStartEvent{})
	now = now.Add(500 * time.Millisecond)
	c.Observe(&rpc.AgentEndEvent{})
	now = now.Add(time.Hour)
	c.Observe(&rpc.AgentStartEvent{})
	now = now.Add(200 * time.Millisecond)
	if s := c.Snapshot(); s.WallTimeMs != 200 {
		t.Errorf("wall time: %d", s.WallTimeMs)
	}
}

func waitFor(t *testing.T, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatal("timed out waiting")
		}
		time.Sleep(5 * time.Millisecond)
	}
}

type mapSource map[string]any

func (m mapSource) Get(path string) (any, bool) { v, ok := m[path]; return v, ok }

func TestLoadSettings(t *testing.T) {
	s := LoadSettings(nil)
	if s.MaxConcurrency != 32 || s.Verification.MaxRetries != 1 || s.Verification.FailureContextLineLimit != 200 ||
		s.Verification.DefaultProfile != "" || s.Verification.RequireForIsolated || s.Verification.Enabled || s.Budget.Any() || s.Budget.WarnAtRatio != 0.8 {
		t.Errorf("defaults: %+v", s)
	}
	src := mapSource{
		"task.maxConcurrency":                       json.Number("4"),
		"task.verification.enabled":                 true,
		"task.verification.defaultProfile":          "ci",
		"task.verification.requireForIsolated":      true,
		"task.verification.maxRetries":              json.Number("2"),
		"task.verification.failureContextLineLimit": json.Number("50"),
		"task.verification.profiles":                map[string]any{"ci": map[string]any{"commands": []any{map[string]any{"name": "a", "command": "b", "timeoutMs": json.Number("10")}}}},
		"task.budget.maxTotalTokens":                json.Number("24000"),
		"task.budget.maxCostUsd":                    json.Number("1.5"),
		"task.budget.warnAtRatio":                   json.Number("0.5"),
		"task.budget.task.maxSubagents":             json.Number("3"),
		"task.budget.subagent.maxToolCalls":         float64(20),
		"task.budget.subagent.warnAtRatio":          "bad",
	}
	s = LoadSettings(src)
	v := s.Verification
	if s.MaxConcurrency != 4 || !v.Enabled || v.DefaultProfile != "ci" || !v.RequireForIsolated || v.MaxRetries != 2 || v.FailureContextLineLimit != 50 {
		t.Errorf("verification: %+v", v)
	}
	if string(v.Profiles["ci"]) != `{"commands":[{"command":"b","name":"a","timeoutMs":10}]}` {
		t.Errorf("profiles: %s", v.Profiles["ci"])
	}
	if s.Budget.TotalTokens != 24000 || s.Budget.CostUsd != 1.5 || s.Budget.WarnAtRatio != 0.5 {
		t.Errorf("budget: %+v", s.Budget)
	}
	if s.TaskBudget.Subagents != 3 || s.TaskBudget.WarnAtRatio != 0.5 || s.TaskBudget.TotalTokens != 0 {
		t.Errorf("task budget: %+v", s.TaskBudget)
	}
	if s.SubagentBudget.ToolCalls != 20 || s.SubagentBudget.WarnAtRatio != 0.5 {
		t.Errorf("subagent budget: %+v", s.SubagentBudget)
	}
}
