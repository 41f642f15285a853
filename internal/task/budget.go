package task

import (
	"fmt"
	"math"
	"sync"
	"time"

	"github.com/pisces-agent/pisces/internal/ai"
	"github.com/pisces-agent/pisces/rpc"
)

// Budget scopes.
const (
	ScopeSession  = "session"
	ScopeTask     = "task"
	ScopeSubagent = "subagent"
)

// Budget statuses.
const (
	BudgetOK       = "ok"
	BudgetWarning  = "warning"
	BudgetExceeded = "exceeded"
)

// Budget violation reasons, in the order they are checked.
const (
	ReasonWallTime     = "wall_time"
	ReasonInputTokens  = "input_tokens"
	ReasonOutputTokens = "output_tokens"
	ReasonTotalTokens  = "total_tokens"
	ReasonCost         = "cost"
	ReasonToolCalls    = "tool_calls"
	ReasonSubagents    = "subagents"
)

// AbortReasonBudgetExceeded is SubagentOutcome.AbortReason and the item's
// abortReason when a budget stopped or refused a subagent.
const AbortReasonBudgetExceeded = "budget_exceeded"

// Limits are the limits of one budget. A zero (or negative) limit means no
// limit for that dimension; WarnAtRatio is the fraction of a limit at which
// budget_warning fires (0 means DefaultWarnAtRatio).
type Limits struct {
	WallTimeMs   int64   `json:"maxWallTimeMs,omitempty"`
	InputTokens  int64   `json:"maxInputTokens,omitempty"`
	OutputTokens int64   `json:"maxOutputTokens,omitempty"`
	TotalTokens  int64   `json:"maxTotalTokens,omitempty"`
	CostUsd      float64 `json:"maxCostUsd,omitempty"`
	ToolCalls    int64   `json:"maxToolCalls,omitempty"`
	Subagents    int64   `json:"maxSubagents,omitempty"`
	WarnAtRatio  float64 `json:"warnAtRatio,omitempty"`
}

// Any reports whether at least one limit is set.
func (l Limits) Any() bool {
	return l.WallTimeMs > 0 || l.InputTokens > 0 || l.OutputTokens > 0 || l.TotalTokens > 0 ||
		l.CostUsd > 0 || l.ToolCalls > 0 || l.Subagents > 0
}

// BudgetSnapshot is the state of a budget as budget events carry it.
type BudgetSnapshot struct {
	Status       string  `json:"status"`
	WallTimeMs   int64   `json:"wallTimeMs"`
	InputTokens  int64   `json:"inputTokens"`
	OutputTokens int64   `json:"outputTokens"`
	TotalTokens  int64   `json:"totalTokens"`
	CostUsd      float64 `json:"costUsd"`
	ToolCalls    int64   `json:"toolCalls"`
	Subagents    int64   `json:"subagents"`
	Reason       string  `json:"reason,omitempty"`
}

// ControllerOptions configure a Controller.
type ControllerOptions struct {
	Scope  string // ScopeSession, ScopeTask or ScopeSubagent
	Limits Limits
	Emit   func(rpc.Event) // receives budget_warning and budget_exceeded
	// ID (the task item, for scope "subagent") and ParentToolCallID (the task
	// tool call) tag the events; both are optional.
	ID               string
	ParentToolCallID string
	Now              func() time.Time // for tests; time.Now when nil
}

// Controller tracks spending against one budget and emits budget_warning
// (once per dimension, when it reaches the warning ratio) and
// budget_exceeded (once, when any limit is reached). After that, Exceeded
// reports true until the controller is replaced.
//
// A nil *Controller is valid: it counts nothing and never reports exceeded,
// so callers need not check whether a limit was configured.
type Controller struct {
	opts  ControllerOptions
	ratio float64

	mu       sync.Mutex
	spent    BudgetSnapshot
	running  bool
	start    time.Time
	elapsed  int64 // wall time of the last finished run, ms
	timer    *time.Timer
	warned   map[string]bool
	exceeded string // the reason, once exceeded
	closed   bool

	queue    []rpc.Event // events waiting to be emitted, in order
	draining bool
}

// NewController returns a controller for limits, or nil when no limit is
// set (no controller, no budget events).
func NewController(opts ControllerOptions) *Controller {
	if !opts.Limits.Any() {
		return nil
	}
	if opts.Now == nil {
		opts.Now = time.Now
	}
	ratio := opts.Limits.WarnAtRatio
	if ratio <= 0 || ratio > 1 {
		ratio = DefaultWarnAtRatio
	}
	return &Controller{opts: opts, ratio: ratio, warned: map[string]bool{}}
}

// Scope returns the controller's scope.
func (c *Controller) Scope() string {
	if c == nil {
		return ""
	}
	return c.opts.Scope
}

// Observe counts a session event: agent_start starts the wall clock (it
// counts from the latest agent_start), agent_end stops it, turn_end adds
// the assistant message's usage and tool_execution_start one tool call.
// Other events, including subagent_* (the task tool reports subagents
// itself), are ignored. Call it from the session's event subscriber.
func (c *Controller) Observe(ev rpc.Event) {
	if c == nil || ev == nil {
		return
	}
	switch e := ev.(type) {
	case *rpc.AgentStartEvent:
		c.Start()
	case *rpc.AgentEndEvent:
		c.Stop()
	case *rpc.TurnEndEvent:
		if m, ok := e.Message.(*ai.AssistantMessage); ok && m != nil {
			c.AddUsage(m.Usage)
		}
	case *rpc.ToolExecutionStartEvent:
		c.AddToolCalls(1)
	}
}

// Start (re)starts the wall clock from now; it runs until Stop.
func (c *Controller) Start() {
	if c == nil {
		return
	}
	c.mu.Lock()
	c.running = true
	c.start = c.opts.Now()
	c.elapsed = 0
	c.armTimerLocked()
	c.mu.Unlock()
}

// Stop freezes the wall clock and stops the wall-time timer.
func (c *Controller) Stop() {
	if c == nil {
		return
	}
	c.mu.Lock()
	if c.running {
		c.elapsed = c.opts.Now().Sub(c.start).Milliseconds()
		c.running = false
	}
	if c.timer != nil {
		c.timer.Stop()
		c.timer = nil
	}
	c.mu.Unlock()
	c.Check()
}

// Close stops the timer for good; the controller keeps its counts.
func (c *Controller) Close() {
	if c == nil {
		return
	}
	c.Stop()
	c.mu.Lock()
	c.closed = true
	c.mu.Unlock()
}

func (c *Controller) armTimerLocked() {
	if c.timer != nil {
		c.timer.Stop()
		c.timer = nil
	}
	max := c.opts.Limits.WallTimeMs
	if max <= 0 || c.exceeded != "" || c.closed {
		return
	}
	interval := time.Duration(min(5000, int64(math.Ceil(float64(max)/10)))) * time.Millisecond
	var tick func()
	tick = func() {
		c.Check()
		c.mu.Lock()
		if c.running && c.exceeded == "" && !c.closed && c.timer != nil {
			c.timer.Reset(interval)
		}
		c.mu.Unlock()
	}
	c.timer = time.AfterFunc(interval, tick)
}

// AddUsage adds a model response's tokens and cost. Total tokens are the
// usage's totalTokens, or the sum of its parts when that is zero.
func (c *Controller) AddUsage(u ai.Usage) {
	if c == nil {
		return
	}
	total := u.TotalTokens
	if total == 0 {
		total = u.Input + u.Output + u.CacheRead + u.CacheWrite
	}
	c.mu.Lock()
	c.spent.InputTokens += u.Input
	c.spent.OutputTokens += u.Output
	c.spent.TotalTokens += total
	c.spent.CostUsd += u.Cost.Total
	c.mu.Unlock()
	c.Check()
}

// AddToolCalls adds n tool calls.
func (c *Controller) AddToolCalls(n int) {
	if c == nil || n == 0 {
		return
	}
	c.mu.Lock()
	c.spent.ToolCalls += int64(n)
	c.mu.Unlock()
	c.Check()
}

// AddSubagent counts one subagent spawn.
func (c *Controller) AddSubagent() {
	if c == nil {
		return
	}
	c.mu.Lock()
	c.spent.Subagents++
	c.mu.Unlock()
	c.Check()
}

// Snapshot returns the current spending with its status and reason.
func (c *Controller) Snapshot() BudgetSnapshot {
	if c == nil {
		return BudgetSnapshot{Status: BudgetOK}
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	s, _ := c.snapshotLocked()
	return s
}

// Exceeded reports whether budget_exceeded fired, with its reason.
func (c *Controller) Exceeded() (bool, string) {
	if c == nil {
		return false, ""
	}
	c.Check()
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.exceeded != "", c.exceeded
}

// PromptError is the error a prompt (or abort_and_prompt, steer, follow_up)
// fails with after the session's budget was exceeded, nil before.
func (c *Controller) PromptError() error {
	if ok, reason := c.Exceeded(); ok {
		return fmt.Errorf("Session budget exceeded (%s)", reason)
	}
	return nil
}

type dimension struct {
	reason string
	value  float64
	limit  float64
}

func (c *Controller) dimensionsLocked(s BudgetSnapshot) []dimension {
	l := c.opts.Limits
	return []dimension{
		{ReasonWallTime, float64(s.WallTimeMs), float64(l.WallTimeMs)},
		{ReasonInputTokens, float64(s.InputTokens), float64(l.InputTokens)},
		{ReasonOutputTokens, float64(s.OutputTokens), float64(l.OutputTokens)},
		{ReasonTotalTokens, float64(s.TotalTokens), float64(l.TotalTokens)},
		{ReasonCost, s.CostUsd, l.CostUsd},
		{ReasonToolCalls, float64(s.ToolCalls), float64(l.ToolCalls)},
		{ReasonSubagents, float64(s.Subagents), float64(l.Subagents)},
	}
}

// snapshotLocked computes the snapshot and the dimensions at warning level.
func (c *Controller) snapshotLocked() (BudgetSnapshot, []string) {
	s := c.spent
	s.WallTimeMs = c.elapsed
	if c.running {
		s.WallTimeMs = c.opts.Now().Sub(c.start).Milliseconds()
	}
	s.Status = BudgetOK
	var firstExceeded, firstWarning string
	var warnings []string
	for _, d := range c.dimensionsLocked(s) {
		if d.limit <= 0 {
			continue
		}
		switch {
		case d.value >= d.limit:
			if firstExceeded == "" {
				firstExceeded = d.reason
			}
		case d.value >= d.limit*c.ratio:
			if firstWarning == "" {
				firstWarning = d.reason
			}
			warnings = append(warnings, d.reason)
		}
	}
	switch {
	case c.exceeded != "":
		s.Status, s.Reason = BudgetExceeded, c.exceeded
	case firstExceeded != "":
		s.Status, s.Reason = BudgetExceeded, firstExceeded
	case firstWarning != "":
		s.Status, s.Reason = BudgetWarning, firstWarning
	}
	return s, warnings
}

// Check evaluates the limits and emits any event that is due. The counting
// methods call it; the wall-time timer calls it while a run is going.
func (c *Controller) Check() {
	if c == nil {
		return
	}
	var events []rpc.Event
	c.mu.Lock()
	if c.exceeded == "" {
		s, warnings := c.snapshotLocked()
		if s.Status == BudgetExceeded {
			c.exceeded = s.Reason
			if c.timer != nil {
				c.timer.Stop()
				c.timer = nil
			}
			events = append(events, &BudgetExceededEvent{Scope: c.opts.Scope, Snapshot: s,
				ID: c.opts.ID, ParentToolCallID: c.opts.ParentToolCallID})
		} else {
			for _, r := range warnings {
				if c.warned[r] {
					continue
				}
				c.warned[r] = true
				ws := s
				ws.Reason = r
				events = append(events, &BudgetWarningEvent{Scope: c.opts.Scope, Snapshot: ws,
					ID: c.opts.ID, ParentToolCallID: c.opts.ParentToolCallID})
			}
		}
	}
	// Events leave in the order they were decided, by one caller at a time;
	// a caller that arrives while another is emitting (or from inside Emit)
	// only queues its events.
	c.queue = append(c.queue, events...)
	if c.draining {
		c.mu.Unlock()
		return
	}
	c.draining = true
	defer func() {
		c.draining = false
		c.mu.Unlock()
	}()
	for len(c.queue) > 0 {
		ev := c.queue[0]
		c.queue = c.queue[1:]
		c.mu.Unlock()
		func() {
			defer c.mu.Lock() // re-taken even if Emit panics
			emitTo(c.opts.Emit, ev)
		}()
	}
}
