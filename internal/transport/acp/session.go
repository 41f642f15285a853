package acp

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"sync"

	sdk "github.com/coder/acp-go-sdk"

	"github.com/pisces-agent/pisces/internal/ai"
	"github.com/pisces-agent/pisces/internal/core"
	"github.com/pisces-agent/pisces/internal/mcp"
	"github.com/pisces-agent/pisces/internal/sessions"
	"github.com/pisces-agent/pisces/rpc"
)

// Session modes.
const (
	ModeAsk  = "ask"  // permission is requested before edit, write and bash
	ModeAuto = "auto" // no questions, as pi
)

// acpSession is one live session as this connection sees it: the core's
// events become session/update notifications written in order by one
// goroutine (the core's subscribers must not block); a prompt's response
// is written by that same goroutine's order, after its turn's updates.
type acpSession struct {
	srv   *Server
	id    string
	live  *sessions.Live
	core  *core.Session
	unsub func()
	q     *outQueue

	// promptMu orders the prompts handed to the core (and their
	// resubmission, see settled).
	promptMu sync.Mutex

	mu       sync.Mutex
	mode     string
	always   map[string]bool // tool name → allowed (true) or refused (false) for the session
	pending  []*waiter       // prompts whose user message has not started yet
	current  *waiter         // the prompt whose turn runs
	lastStop string          // stop reason of the latest assistant message
	lastRaw  string          // its provider's own stop reason
	// registered counts the prompts handled; those up to cancelUpTo
	// (the prompts read before a session/cancel) end cancelled.
	registered, cancelUpTo int
	toolInfo               map[string]toolDesc
	// allowedCalls are the tool calls the user allowed when an
	// extension's tool_call hook asked: the ask mode does not ask again.
	allowedCalls map[string]bool
	// extAlways holds "always" answers to extensions' questions about
	// tool calls, by tool name and question title.
	extAlways map[[2]string]bool
	results   map[string][]sdk.ToolCallContent // diffs of edit and write, by tool call
	detached  bool

	// life ends when the session is let go: it bounds the trust
	// question.
	life    context.Context
	endLife context.CancelFunc
	// terminals are the editor's terminals of running bash calls, by
	// tool call.
	terminals map[string]string
}

// waiter is one session/prompt waiting for its turn to end.
type waiter struct {
	done    chan struct{}
	stop    sdk.StopReason
	text    string
	images  []ai.Content
	queued  bool // the core queued it as a follow-up (guarded by promptMu)
	started bool // it started a run (guarded by promptMu)
	// ordinal is the prompt's place among the session's prompts: a
	// session/cancel cancels those up to acpSession.cancelUpTo.
	ordinal int
}

func newSession(s *Server, id string, live *sessions.Live, servers []*mcp.ServerConfig) *acpSession {
	as := &acpSession{
		srv: s, id: id, live: live, core: live.Core,
		q:            newOutQueue(),
		mode:         ModeAsk,
		always:       map[string]bool{},
		toolInfo:     map[string]toolDesc{},
		allowedCalls: map[string]bool{},
		extAlways:    map[[2]string]bool{},
		terminals:    map[string]string{},
		results:      map[string][]sdk.ToolCallContent{},
	}
	as.life, as.endLife = context.WithCancel(context.Background())
	go as.q.run()
	if el := s.caps.Elicitation; el != nil && el.Form != nil { // attach holds s.mu
		live.Core.SetTrustAsk(as.askTrust)
	}
	as.unsub = live.Core.Subscribe(as.onEvent)
	// The editor's servers first: the reports cover them.
	live.Core.MCP().SetOwn(servers)
	live.Core.StartMCPReports()
	if live.Extensions != nil {
		live.Extensions.SetUI(extensionUI{as})
	}
	return as
}

// detach stops watching the session: its run is aborted (the editor let
// go of it), waiting prompts answer cancelled, the manager may unload it.
func (as *acpSession) detach() {
	as.mu.Lock()
	if as.detached {
		as.mu.Unlock()
		return
	}
	as.detached = true
	as.mu.Unlock()
	as.endLife()
	as.core.SetTrustAsk(nil)
	as.core.ClearQueue()
	as.core.Abort()
	// The editor's servers belong to this session: stopped with it.
	as.core.MCP().SetOwn(nil)
	as.unsub()
	as.mu.Lock()
	ws := as.takeWaitersLocked()
	as.mu.Unlock()
	as.q.close()
	for _, w := range ws {
		w.finish(sdk.StopReasonCancelled)
	}
	as.srv.mgr.Release(as.live)
}

// setServers replaces the editor's MCP servers of the session (those of
// a later session/load or session/resume).
func (as *acpSession) setServers(servers []*mcp.ServerConfig) {
	as.core.MCP().SetOwn(servers)
}

func (w *waiter) finish(stop sdk.StopReason) {
	w.stop = stop
	close(w.done)
}

func (as *acpSession) takeWaitersLocked() []*waiter {
	var ws []*waiter
	if as.current != nil {
		ws = append(ws, as.current)
	}
	ws = append(ws, as.pending...)
	as.current, as.pending = nil, nil
	return ws
}

// send queues one update for the client.
func (as *acpSession) send(u sdk.SessionUpdate) {
	conn := as.srv.conn
	n := sdk.SessionNotification{SessionId: sdk.SessionId(as.id), Update: u}
	as.q.push(func() { _ = conn.SessionUpdate(context.Background(), n) })
}

// flush returns once everything queued so far has been written.
func (as *acpSession) flush(ctx context.Context) error {
	done := make(chan struct{})
	as.q.push(func() { close(done) })
	select {
	case <-done:
		return nil
	case <-as.q.stopped:
		return errors.New("the session was closed")
	case <-ctx.Done():
		return ctx.Err()
	}
}

// prompt runs one prompt (queued as a follow-up while the session works)
// and returns how its turn ended. ordinal is its place among the
// session's prompts (register).
func (as *acpSession) prompt(ordinal int, text string, images []ai.Content) (sdk.StopReason, error) {
	w := &waiter{done: make(chan struct{}), text: text, images: images, ordinal: ordinal}
	as.promptMu.Lock()
	as.mu.Lock()
	if as.detached {
		as.mu.Unlock()
		as.promptMu.Unlock()
		return "", invalidParams("unknown sessionId %q", as.id)
	}
	if ordinal <= as.cancelUpTo {
		// A cancel read after this prompt came while it was being set up.
		as.mu.Unlock()
		as.promptMu.Unlock()
		return sdk.StopReasonCancelled, nil
	}
	as.pending = append(as.pending, w)
	as.mu.Unlock()
	disp, err := as.core.Prompt(text, images, core.BehaviorFollowUp)
	w.queued, w.started = disp == core.DispositionQueued, disp == core.DispositionStarted
	as.promptMu.Unlock()
	if err != nil || disp == core.DispositionHandled {
		as.mu.Lock()
		for i, p := range as.pending {
			if p == w {
				as.pending = append(as.pending[:i], as.pending[i+1:]...)
				break
			}
		}
		as.mu.Unlock()
		if errors.Is(err, core.ErrNoModel) {
			return "", sdk.NewAuthRequired(map[string]any{"details": err.Error()})
		}
		if err != nil {
			return "", err
		}
		// An extension command ran: its output, if any, is queued.
		if err := as.flush(context.Background()); err != nil {
			return sdk.StopReasonCancelled, nil
		}
		return sdk.StopReasonEndTurn, nil
	}
	select {
	case <-w.done:
		return w.stop, nil
	case <-as.srv.conn.Done():
		return sdk.StopReasonCancelled, nil
	}
}

// register counts a prompt in; true when a session/cancel read after it
// already cancelled it.
func (as *acpSession) register() (ordinal int, cancelled bool) {
	as.mu.Lock()
	defer as.mu.Unlock()
	as.registered++
	return as.registered, as.registered <= as.cancelUpTo
}

// cancel is session/cancel, read after the session's first arrived
// prompts: those answer cancelled (one not handled yet when it is), the
// run of one is aborted, and the queued ones are taken out of the core's
// queue; a prompt read after the cancel goes on. It never blocks (the
// reading side calls it): the work is done on another goroutine.
func (as *acpSession) cancel(arrived int) {
	as.mu.Lock()
	as.cancelUpTo = max(as.cancelUpTo, arrived)
	_, some := as.cancellableLocked()
	as.mu.Unlock()
	if some {
		go as.cancelWork()
	}
}

// cancellableLocked says whether the current prompt is cancelled and
// whether any waiting prompt is.
func (as *acpSession) cancellableLocked() (current, some bool) {
	current = as.current != nil && as.current.ordinal <= as.cancelUpTo
	some = current
	for _, w := range as.pending {
		some = some || w.ordinal <= as.cancelUpTo
	}
	return current, some
}

// cancelWork aborts the run of a cancelled prompt and ends the cancelled
// prompts no run ends; the prompts after them go back to the core.
// promptMu is held throughout: no prompt is handed to the core between
// the look at the state and the abort.
func (as *acpSession) cancelWork() {
	as.promptMu.Lock()
	defer as.promptMu.Unlock()
	as.mu.Lock()
	abort, some := as.cancellableLocked()
	for _, w := range as.pending {
		// A cancelled prompt whose run started before its message did.
		abort = abort || (w.started && w.ordinal <= as.cancelUpTo)
	}
	as.mu.Unlock()
	if !some {
		return
	}
	as.core.ClearQueue() // the prompts after the cancelled ones are handed back below
	if abort {
		as.core.Abort() // settled ends the run's prompts
	}
	as.mu.Lock()
	var ws, keep []*waiter
	for _, w := range as.pending {
		if w.ordinal <= as.cancelUpTo {
			ws = append(ws, w)
		} else {
			keep = append(keep, w)
		}
	}
	as.pending = keep
	as.mu.Unlock()
	for _, w := range ws {
		as.q.push(func() { w.finish(sdk.StopReasonCancelled) })
	}
	as.resubmitLocked()
}

// onEvent translates one core event; it runs in the core's event order
// and never blocks.
func (as *acpSession) onEvent(ev rpc.Event) {
	switch e := ev.(type) {
	case *rpc.MessageStartEvent:
		if _, ok := e.Message.(*ai.UserMessage); ok {
			as.userStarted()
		}
	case *rpc.MessageUpdateEvent:
		switch e.AssistantMessageEvent.Type {
		case ai.EvTextDelta:
			if d := e.AssistantMessageEvent.Delta; d != "" {
				as.send(sdk.UpdateAgentMessageText(d))
			}
		case ai.EvThinkingDelta:
			if d := e.AssistantMessageEvent.Delta; d != "" {
				as.send(sdk.UpdateAgentThoughtText(d))
			}
		}
	case *rpc.MessageEndEvent:
		if m, ok := e.Message.(*ai.AssistantMessage); ok {
			as.mu.Lock()
			as.lastStop, as.lastRaw = m.StopReason, m.RawStopReason
			as.mu.Unlock()
			if m.StopReason == ai.StopError && m.ErrorMessage != "" {
				as.send(sdk.UpdateAgentMessageText("\n\nError: " + m.ErrorMessage))
			}
		}
	case *rpc.ToolExecutionStartEvent:
		d := describeTool(e.ToolName, e.Args, as.core.Cwd())
		as.mu.Lock()
		as.toolInfo[e.ToolCallID] = d
		as.mu.Unlock()
		as.send(d.start(e.ToolCallID, sdk.ToolCallStatusPending, e.Args, nil))
	case *rpc.ToolExecutionUpdateEvent:
		as.mu.Lock()
		_, inTerminal := as.terminals[e.ToolCallID]
		as.mu.Unlock()
		if txt := textOf(e.PartialResult.Content); txt != "" && !inTerminal {
			as.send(sdk.UpdateToolCall(sdk.ToolCallId(e.ToolCallID),
				sdk.WithUpdateContent([]sdk.ToolCallContent{sdk.ToolContent(sdk.TextBlock(txt))})))
		}
	case *rpc.ToolExecutionEndEvent:
		as.mu.Lock()
		diffs := as.results[e.ToolCallID]
		delete(as.results, e.ToolCallID)
		term, inTerminal := as.terminals[e.ToolCallID]
		delete(as.terminals, e.ToolCallID)
		delete(as.toolInfo, e.ToolCallID)
		delete(as.allowedCalls, e.ToolCallID)
		as.mu.Unlock()
		if inTerminal {
			// The editor shows the command's output in its terminal.
			as.send(finalUpdate(e.ToolCallID, nil, e.IsError, []sdk.ToolCallContent{sdk.ToolTerminalRef(term)}))
		} else {
			as.send(finalUpdate(e.ToolCallID, e.Result.Content, e.IsError, diffs))
		}
		if e.ToolName == "todo_write" && !e.IsError {
			if plan, ok := planOf(e.Result.Details); ok {
				as.send(plan)
			}
		}
	case *rpc.NotifyEvent:
		// The MCP servers' failures.
		as.note(strings.Join(strings.Fields(e.Message), " "))
	case *rpc.AgentSettledEvent:
		as.settled(e.Aborted)
	}
}

// userStarted moves the next waiting prompt to the front: the prompt
// before it has ended its turn. A user message nobody waits for (a todo
// reminder) belongs to the current prompt's turn.
func (as *acpSession) userStarted() {
	as.mu.Lock()
	if len(as.pending) == 0 {
		as.mu.Unlock()
		return
	}
	prev := as.current
	as.current = as.pending[0]
	as.pending = as.pending[1:]
	stop := stopReason(as.lastStop, as.lastRaw)
	as.mu.Unlock()
	if prev != nil {
		as.q.push(func() { prev.finish(stop) })
	}
}

// settled ends the turn of the current prompt: the run is over (an
// aborted run ends it cancelled, and the cancelled prompts queued behind
// it too). A prompt the core queued just as its run was ending is left in
// the queue with no run to take it: it is handed to the core again.
func (as *acpSession) settled(aborted bool) {
	as.mu.Lock()
	stop := stopReason(as.lastStop, as.lastRaw)
	if aborted {
		stop = sdk.StopReasonCancelled
	}
	var ws []*waiter
	if as.current != nil {
		ws = append(ws, as.current)
		as.current = nil
	}
	if aborted {
		var keep []*waiter
		for _, w := range as.pending {
			if w.ordinal <= as.cancelUpTo {
				ws = append(ws, w)
			} else {
				keep = append(keep, w)
			}
		}
		as.pending = keep
	}
	left := len(as.pending) > 0
	as.mu.Unlock()
	as.sendUsage()
	for _, w := range ws {
		as.q.push(func() { w.finish(stop) })
	}
	if left {
		go as.resubmit()
	}
}

// resubmit hands the prompts stranded in the core's queue to the core
// again, in order, unless a run is going on (it takes the queue itself).
func (as *acpSession) resubmit() {
	as.promptMu.Lock()
	defer as.promptMu.Unlock()
	as.resubmitLocked()
}

// resubmitLocked is resubmit with promptMu held.
func (as *acpSession) resubmitLocked() {
	if as.core.Busy() {
		return
	}
	as.mu.Lock()
	var stranded []*waiter
	for _, w := range as.pending {
		if w.queued {
			stranded = append(stranded, w)
		}
	}
	as.mu.Unlock()
	if len(stranded) == 0 {
		return
	}
	as.core.ClearQueue()
	for _, w := range stranded {
		disp, err := as.core.Prompt(w.text, w.images, core.BehaviorFollowUp)
		w.queued, w.started = disp == core.DispositionQueued, disp == core.DispositionStarted
		if err != nil {
			fmt.Fprintf(as.srv.log, "pisces: acp: a queued prompt could not start: %v\n", err)
			as.mu.Lock()
			for i, p := range as.pending {
				if p == w {
					as.pending = append(as.pending[:i], as.pending[i+1:]...)
					break
				}
			}
			as.mu.Unlock()
			as.q.push(func() { w.finish(sdk.StopReasonEndTurn) })
		}
	}
}

// sendUsage reports how full the context window is and the session's
// cost so far.
func (as *acpSession) sendUsage() {
	u := as.core.ContextUsage()
	if u.ContextWindow <= 0 {
		return
	}
	upd := &sdk.SessionUsageUpdate{Size: u.ContextWindow, Used: int(u.Tokens)}
	total := 0.0
	for _, m := range as.core.Messages() {
		if am, ok := m.(*ai.AssistantMessage); ok {
			total += am.Usage.Cost.Total
		}
	}
	upd.Cost = &sdk.Cost{Amount: total, Currency: "USD"}
	as.send(sdk.SessionUpdate{UsageUpdate: upd})
}

// stopReason is how a turn ended for ACP, from the last assistant
// message's stop reason and its provider's own (raw) one: a model that
// refused to answer (Anthropic's refusal, OpenAI's content_filter,
// Gemini's safety stops) ended in an error whose raw reason says so.
func stopReason(stop, raw string) sdk.StopReason {
	switch stop {
	case ai.StopLength:
		return sdk.StopReasonMaxTokens
	case ai.StopAborted:
		return sdk.StopReasonCancelled
	}
	switch raw {
	case "refusal", "content_filter", "SAFETY", "RECITATION", "PROHIBITED_CONTENT", "BLOCKLIST", "SPII", "IMAGE_SAFETY":
		return sdk.StopReasonRefusal
	}
	return sdk.StopReasonEndTurn
}

// announceCommands sends the session's commands (templates, skills,
// extension commands).
func (as *acpSession) announceCommands() {
	cmds := []sdk.AvailableCommand{}
	seen := map[string]bool{}
	for _, c := range as.core.Commands() {
		if c.Name == "" || seen[c.Name] {
			continue
		}
		seen[c.Name] = true
		cmds = append(cmds, sdk.AvailableCommand{
			Name:        c.Name,
			Description: oneLine(c.Description, 200),
			Input:       &sdk.AvailableCommandInput{Unstructured: &sdk.UnstructuredCommandInput{Hint: "arguments"}},
		})
	}
	as.send(sdk.SessionUpdate{AvailableCommandsUpdate: &sdk.SessionAvailableCommandsUpdate{AvailableCommands: cmds}})
}

// outQueue runs queued functions in order on one goroutine.
type outQueue struct {
	mu      sync.Mutex
	items   []func()
	wake    chan struct{}
	stopped chan struct{}
	closed  bool
}

func newOutQueue() *outQueue {
	return &outQueue{wake: make(chan struct{}, 1), stopped: make(chan struct{})}
}

func (q *outQueue) push(f func()) {
	q.mu.Lock()
	if q.closed {
		q.mu.Unlock()
		return
	}
	q.items = append(q.items, f)
	q.mu.Unlock()
	select {
	case q.wake <- struct{}{}:
	default:
	}
}

// close runs what is queued, then stops the goroutine.
func (q *outQueue) close() {
	q.mu.Lock()
	if q.closed {
		q.mu.Unlock()
		return
	}
	q.closed = true
	q.mu.Unlock()
	select {
	case q.wake <- struct{}{}:
	default:
	}
}

func (q *outQueue) run() {
	defer close(q.stopped)
	for {
		q.mu.Lock()
		items := q.items
		q.items = nil
		closed := q.closed
		q.mu.Unlock()
		for _, f := range items {
			f()
		}
		if len(items) > 0 {
			continue
		}
		if closed {
			return
		}
		<-q.wake
	}
}

// rawJSON is args as a value for rawInput (nil when not an object).
func rawJSON(args json.RawMessage) any {
	if len(args) == 0 || args[0] != '{' {
		return nil
	}
	return args
}
