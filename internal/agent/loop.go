// Package agent runs the loop of one run: model turn → tool calls → next
// model turn, until the model stops and no queued message is waiting. It
// knows nothing of sessions or transports; the core wires it up.
package agent

import (
	"context"
	"encoding/json"
	"fmt"
	"runtime/debug"
	"sync"
	"time"

	"github.com/pisces-agent/pisces/internal/ai"
	"github.com/pisces-agent/pisces/internal/tools"
	"github.com/pisces-agent/pisces/rpc"
)

// Interrupt modes: how a steering message meets a running tool batch.
const (
	InterruptImmediate = "immediate" // remaining tool calls of the message are skipped
	InterruptWait      = "wait"      // the batch finishes; the message goes before the next model call
)

// SkippedText is the tool result of a call skipped for a steering message.
const SkippedText = "Skipped due to queued user message."

// Config is what one run needs. The functions are called from the run's
// goroutine only.
type Config struct {
	Provider      ai.Provider
	Model         *ai.Model
	ThinkingLevel string
	SystemPrompt  string
	Tools         []tools.Tool
	APIKey        string
	// InterruptMode returns the current interrupt mode (it may change while
	// the run goes on).
	InterruptMode func() string
	// Priority reports whether a model call asks for the provider's
	// priority processing (fast mode; nil: never).
	Priority func() bool
	// Steering dequeues the steering messages to deliver now (per the
	// steering mode), or nil.
	Steering func() []ai.Message
	// FollowUp dequeues follow-up messages, asked only when the agent would
	// otherwise stop.
	// Neither is asked once the run's context is cancelled: an aborted run
	// leaves the queues as they are.
	FollowUp func() []ai.Message
	// ConvertToLLM turns agent messages into what a provider understands.
	ConvertToLLM func([]ai.Message) []ai.Message
	// Emit receives every event, synchronously and in order.
	Emit func(rpc.Event)
	// LegacySnapshots fills MessageUpdateEvent.Partial (older wire).
	LegacySnapshots bool
	// NoInitialSteering: the prompts are steering messages the caller has
	// already taken, so the steering queue is not polled again before the
	// first model call (a one-at-a-time queue still gives one per turn).
	NoInitialSteering bool
	// Watch, when set, sees every streamed block event; returning true
	// interrupts the stream (a rule fired). Interrupted then gives the
	// messages to deliver before the model is asked again (the turn goes
	// on; it is not an abort).
	// With discard set, the interrupted answer leaves the model's context.
	Watch       func(ev ai.AssistantEvent) bool
	Interrupted func(partial *ai.AssistantMessage) (next []ai.Message, discard bool)
	// TurnStarted is called before each model call.
	TurnStarted func()
	// ToolsNow, when set, gives the tools of each model call after the
	// first (tools loaded during the run, such as those tool_search
	// finds, are declared from the next request on).
	ToolsNow func() []tools.Tool
	// AfterTurn, when set, gives messages to deliver after a completed
	// turn (its tool results included) before the model is asked again:
	// a stream rule that fired without interrupting.
	AfterTurn func() []ai.Message
}

// Result is what a run produced.
type Result struct {
	Messages []ai.Message         // every message of the run, in order
	Last     *ai.AssistantMessage // the last assistant message, if any
}

// Run executes one run over history with the prompt messages (which may be
// empty when continuing). It emits agent_start and everything up to the last
// turn_end; the caller emits agent_end (it decides willRetry).
func Run(ctx context.Context, cfg *Config, history []ai.Message, prompts []ai.Message) Result {
	r := &runner{cfg: cfg, ctx: ctx, context: append([]ai.Message(nil), history...)}
	r.emit(&rpc.AgentStartEvent{})
	r.emit(&rpc.TurnStartEvent{})
	for _, m := range prompts {
		r.deliver(m)
	}
	r.loop()
	return Result{Messages: r.produced, Last: r.last}
}

type runner struct {
	cfg      *Config
	ctx      context.Context
	context  []ai.Message
	produced []ai.Message
	last     *ai.AssistantMessage
	streamed bool // a model call was made (ToolsNow applies from the next)
}

func (r *runner) emit(ev rpc.Event) {
	rpc.SetType(ev)
	if r.cfg.Emit != nil {
		r.cfg.Emit(ev)
	}
}

// deliver adds a message to the context with its start and end events.
func (r *runner) deliver(m ai.Message) {
	r.emit(&rpc.MessageStartEvent{Message: m})
	r.emit(&rpc.MessageEndEvent{Message: m})
	r.context = append(r.context, m)
	r.produced = append(r.produced, m)
}

// steering dequeues steering messages; a cancelled run takes none.
func (r *runner) steering() []ai.Message {
	if r.cfg.Steering == nil || r.ctx.Err() != nil {
		return nil
	}
	return r.cfg.Steering()
}

func (r *runner) interruptMode() string {
	if r.cfg.InterruptMode == nil {
		return InterruptImmediate
	}
	return r.cfg.InterruptMode()
}

func (r *runner) loop() {
	first := true
	var pending []ai.Message
	if !r.cfg.NoInitialSteering {
		pending = r.steering()
	}
	for {
		more := true
		for more || len(pending) > 0 {
			if !first {
				r.emit(&rpc.TurnStartEvent{})
			}
			first = false
			for _, m := range pending {
				r.deliver(m)
			}
			pending = nil

			msg, injected := r.stream()
			if injected != nil {
				// A stream rule interrupted the answer: the turn ends here
				// and a new one starts with the rule's message.
				r.emit(&rpc.TurnEndEvent{Message: msg})
				pending = injected
				more = false
				continue
			}
			if msg.StopReason == ai.StopError || msg.StopReason == ai.StopAborted {
				r.emit(&rpc.TurnEndEvent{Message: msg})
				return
			}
			calls := msg.ToolCalls()
			more = len(calls) > 0
			var results []*ai.ToolResultMessage
			var steered []ai.Message
			if more {
				results, steered = r.executeTools(calls)
			}
			r.emit(&rpc.TurnEndEvent{Message: msg, ToolResults: results})
			if len(steered) > 0 {
				pending = steered
			} else {
				pending = r.steering()
			}
			if r.cfg.AfterTurn != nil && r.ctx.Err() == nil {
				pending = append(r.cfg.AfterTurn(), pending...)
			}
		}
		if r.cfg.FollowUp != nil && r.ctx.Err() == nil {
			if f := r.cfg.FollowUp(); len(f) > 0 {
				pending = f
				continue
			}
		}
		return
	}
}

// stream asks the provider for one assistant message and emits its events.
// When a watcher interrupts it, the messages to deliver next come back too
// (non-nil, possibly empty).
func (r *runner) stream() (*ai.AssistantMessage, []ai.Message) {
	llm := r.context
	if r.cfg.ConvertToLLM != nil {
		llm = r.cfg.ConvertToLLM(r.context)
	}
	if r.cfg.ToolsNow != nil && r.streamed {
		r.cfg.Tools = r.cfg.ToolsNow()
	}
	r.streamed = true
	specs := make([]ai.ToolSpec, 0, len(r.cfg.Tools))
	for _, t := range r.cfg.Tools {
		specs = append(specs, tools.Spec(t))
	}
	req := &ai.Request{
		Model:         r.cfg.Model,
		SystemPrompt:  r.cfg.SystemPrompt,
		Messages:      llm,
		Tools:         specs,
		ThinkingLevel: r.cfg.ThinkingLevel,
		APIKey:        r.cfg.APIKey,
	}
	if r.cfg.Priority != nil {
		req.Priority = r.cfg.Priority() && ai.PriorityCapable(r.cfg.Model)
	}
	if r.cfg.TurnStarted != nil {
		r.cfg.TurnStarted()
	}
	sctx, scancel := context.WithCancel(r.ctx)
	defer scancel()
	interrupted := false
	started := false
	final := func() (m *ai.AssistantMessage) {
		defer func() {
			if p := recover(); p != nil {
				m = nil
				fmt.Fprintf(debugOut, "pisces: provider panic: %v\n%s", p, debug.Stack())
			}
		}()
		return r.cfg.Provider.Stream(sctx, req, func(ev ai.AssistantEvent) {
			switch ev.Type {
			case ai.EvStart:
				started = true
				var snap *ai.AssistantMessage
				if ev.Snapshot != nil {
					snap = ev.Snapshot()
				}
				r.emit(&rpc.MessageStartEvent{Message: snap})
			case ai.EvDone, ai.EvError:
				// message_end follows below with the final message.
			default:
				up := &rpc.MessageUpdateEvent{Usage: ev.Usage, AssistantMessageEvent: ev, Legacy: r.cfg.LegacySnapshots}
				if r.cfg.LegacySnapshots && ev.Snapshot != nil {
					up.Partial = ev.Snapshot()
				}
				up.AssistantMessageEvent.Snapshot = nil
				r.emit(up)
				if !interrupted && r.cfg.Watch != nil && r.cfg.Watch(ev) {
					interrupted = true
					scancel()
				}
			}
		})
	}()
	if final == nil {
		final = &ai.AssistantMessage{
			Role: ai.RoleAssistant, Content: []ai.Content{}, API: r.cfg.Model.API,
			Provider: r.cfg.Model.Provider, Model: r.cfg.Model.ID,
			StopReason: ai.StopError, ErrorMessage: "provider failed unexpectedly", Timestamp: ai.NowMs(),
		}
	}
	if !started {
		r.emit(&rpc.MessageStartEvent{Message: final})
	}
	if interrupted && r.ctx.Err() == nil {
		final.StopReason = ai.StopAborted
		if final.ErrorMessage == "" || final.ErrorMessage == "Request was aborted" {
			final.ErrorMessage = "Interrupted by a stream rule"
		}
	}
	r.emit(&rpc.MessageEndEvent{Message: final})
	r.context = append(r.context, final)
	r.produced = append(r.produced, final)
	r.last = final
	if interrupted && r.ctx.Err() == nil {
		var next []ai.Message
		if r.cfg.Interrupted != nil {
			var discard bool
			next, discard = r.cfg.Interrupted(final)
			if discard {
				r.context = r.context[:len(r.context)-1]
			}
		}
		if next == nil {
			next = []ai.Message{}
		}
		return final, next
	}
	return final, nil
}

// executeTools runs the calls in order. In immediate interrupt mode a
// steering message that arrives during a call skips the calls after it.
func (r *runner) executeTools(calls []ai.Content) ([]*ai.ToolResultMessage, []ai.Message) {
	var results []*ai.ToolResultMessage
	var steered []ai.Message
	for _, tc := range calls {
		var res *ai.ToolResultMessage
		if len(steered) > 0 {
			res = r.skip(tc)
		} else {
			res = r.execute(tc)
		}
		results = append(results, res)
		if len(steered) == 0 && r.interruptMode() == InterruptImmediate {
			steered = r.steering()
		}
	}
	return results, steered
}

func (r *runner) findTool(name string) tools.Tool {
	for _, t := range r.cfg.Tools {
		if t.Name() == name {
			return t
		}
	}
	return nil
}

func (r *runner) skip(tc ai.Content) *ai.ToolResultMessage {
	args := argsOf(tc)
	r.emit(&rpc.ToolExecutionStartEvent{ToolCallID: tc.ID, ToolName: tc.Name, Args: args})
	res := tools.ErrorResult(SkippedText)
	return r.finish(tc, res, 0)
}

func (r *runner) execute(tc ai.Content) *ai.ToolResultMessage {
	args := argsOf(tc)
	r.emit(&rpc.ToolExecutionStartEvent{ToolCallID: tc.ID, ToolName: tc.Name, Args: args})
	start := time.Now()
	var res tools.Result
	switch t := r.findTool(tc.Name); {
	case r.ctx.Err() != nil:
		res = tools.ErrorResult("Tool execution aborted")
	case t == nil:
		res = tools.ErrorResult(fmt.Sprintf("Tool %s not found", tc.Name))
	case tc.ArgumentsError != "":
		res = tools.ErrorResult(tc.ArgumentsError)
	default:
		res = r.run(t, tc, args)
	}
	return r.finish(tc, res, time.Since(start).Milliseconds())
}

// abandonGrace is how long a cancelled run waits for a tool to return. The
// built-in tools return within milliseconds of a cancel (bash within about
// a second when a process outside its group holds its output open); a tool
// that ignores the cancel is given up on after this, so that no tool can
// keep a run from ending.
const abandonGrace = 2 * time.Second

// run calls a tool, turning a Go error or a panic into an error result. It
// returns "Tool execution aborted" for a tool still running abandonGrace
// after the run was cancelled; that tool's later updates and result are
// dropped.
func (r *runner) run(t tools.Tool, tc ai.Content, args json.RawMessage) tools.Result {
	var mu sync.Mutex
	abandoned := false
	done := make(chan tools.Result, 1)
	go func() {
		var res tools.Result
		defer func() {
			if p := recover(); p != nil {
				fmt.Fprintf(debugOut, "pisces: tool %s panicked: %v\n%s", tc.Name, p, debug.Stack())
				res = tools.ErrorResult(fmt.Sprintf("Tool %s failed: %v", tc.Name, p))
			}
			done <- res
		}()
		out, err := t.Execute(r.ctx, tools.Call{
			ID:        tc.ID,
			Args:      args,
			RunNested: r.nested(tc.ID, &mu, &abandoned),
			OnUpdate: func(p tools.Result) {
				mu.Lock()
				defer mu.Unlock()
				if abandoned {
					return
				}
				r.emit(&rpc.ToolExecutionUpdateEvent{
					ToolCallID: tc.ID, ToolName: tc.Name, Args: args,
					PartialResult: rpc.ToolResultPayload{Content: p.Content, Details: p.Details},
				})
			},
		})
		if err != nil {
			out = tools.ErrorResult(err.Error())
		}
		res = out
	}()
	select {
	case res := <-done:
		return res
	case <-r.ctx.Done():
	}
	timer := time.NewTimer(abandonGrace)
	defer timer.Stop()
	select {
	case res := <-done:
		return res
	case <-timer.C:
	}
	mu.Lock()
	abandoned = true
	mu.Unlock()
	select {
	case res := <-done: // it finished just now
		return res
	default:
	}
	fmt.Fprintf(debugOut, "pisces: tool %s still running %v after the abort; the run goes on without it\n", tc.Name, abandonGrace)
	return tools.ErrorResult("Tool execution aborted")
}

func (r *runner) finish(tc ai.Content, res tools.Result, ms int64) *ai.ToolResultMessage {
	d := ms
	r.emit(&rpc.ToolExecutionEndEvent{
		ToolCallID: tc.ID, ToolName: tc.Name,
		Result:  rpc.ToolResultPayload{Content: res.Content, Details: res.Details, StructuredContent: res.StructuredContent},
		IsError: res.IsError, DurationMs: &d,
	})
	msg := &ai.ToolResultMessage{
		Role: ai.RoleToolResult, ToolCallID: tc.ID, ToolName: tc.Name,
		Content: res.Content, Details: res.Details, IsError: res.IsError,
		DurationMs: &d, Timestamp: ai.NowMs(), NestedCalls: res.NestedCalls,
	}
	r.deliver(msg)
	return msg
}

func argsOf(tc ai.Content) json.RawMessage {
	if len(tc.Arguments) == 0 {
		return json.RawMessage("{}")
	}
	return tc.Arguments
}

// nested returns the RunNested of the call parent: each nested call is
// announced with tool_execution_start and _end events naming the parent
// (nothing is emitted once the parent was abandoned).
func (r *runner) nested(parent string, mu *sync.Mutex, abandoned *bool) func(ctx context.Context, id, name string, args json.RawMessage, run func(context.Context) tools.Result) tools.Result {
	emit := func(ev rpc.Event) {
		mu.Lock()
		defer mu.Unlock()
		if !*abandoned {
			r.emit(ev)
		}
	}
	return func(ctx context.Context, id, name string, args json.RawMessage, run func(context.Context) tools.Result) tools.Result {
		emit(&rpc.ToolExecutionStartEvent{ToolCallID: id, ToolName: name, Args: args, ParentToolCallID: parent})
		start := time.Now()
		res := run(ctx)
		d := time.Since(start).Milliseconds()
		emit(&rpc.ToolExecutionEndEvent{
			ToolCallID: id, ToolName: name,
			Result:  rpc.ToolResultPayload{Content: res.Content, Details: res.Details, StructuredContent: res.StructuredContent},
			IsError: res.IsError, DurationMs: &d, ParentToolCallID: parent,
		})
		return res
	}
}
