package rpcmode

import (
	"cmp"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/pisces-agent/pisces/internal/ai"
	"github.com/pisces-agent/pisces/internal/core"
	"github.com/pisces-agent/pisces/internal/resources"
	"github.com/pisces-agent/pisces/internal/session"
	"github.com/pisces-agent/pisces/internal/task"
	"github.com/pisces-agent/pisces/rpc"
)

// oh-my-pi's wire. A connection switches to it with negotiate_protocol
// (protocol v2: frames over 1 MiB are chunked as well) or from the start with
// --rpc-compat omp (Options.OMP). On it:
//   - prompt and abort_and_prompt are answered without data once accepted
//     ({agentInvoked:false} when an extension command handled the prompt),
//     and each accepted prompt gets one prompt_result when the work it
//     started or joined is over;
//   - session_settled follows once nothing runs and nothing is queued;
//   - events take oh-my-pi's names and shapes: auto_compaction_* for
//     compaction_*, thinking_level_changed with thinkingLevel, message_update
//     with the cumulative message;
//   - get_state has isSettled; set_event_filter selects the session events.
//
// A connection that never asks keeps pi 1.5's wire byte for byte.

// ompState is the per-connection state of oh-my-pi's wire: the prompts whose
// prompt_result is owed, and what the events said about the run.
type ompState struct {
	mu          sync.Mutex
	filter      map[string]bool // nil: every event
	filterList  []string
	hasFilter   atomic.Bool // filter != nil (read without mu on pi's wire)
	agentStarts int
	running     bool // from agent_start to agent_settled
	pending     int  // queued messages (queue_changed)
	outcome     promptOutcome
	active      bool // work since the last session_settled
	// held counts prompts and abort_and_prompts between their answer and
	// the acceptance or refusal of their prompt: the session is not
	// settled then.
	held int
	open []*promptTicket
	// Message ids (messageId on message_start/update/end): minted in
	// order, whether or not the filter lets the frame through.
	messages int
	openIDs  []string
	// streamed are the messages of the run so far that went out in
	// message_end (an agent_end over 1 MiB leaves them out).
	streamed []ai.Message
	// The task tool's subagents under way (get_subagents) and the
	// subscription level (set_subagent_subscription).
	subagents     map[string]*rpc.SubagentSnapshot
	subagentLevel string
}

// messageID stamps message events as oh-my-pi does: message_start mints
// msg-<n>, updates carry the innermost open id, message_end closes it.
func (st *ompState) messageID(ev rpc.Event) string {
	switch ev.(type) {
	case *rpc.MessageStartEvent:
		st.messages++
		id := fmt.Sprintf("msg-%d", st.messages)
		st.openIDs = append(st.openIDs, id)
		return id
	case *rpc.MessageUpdateEvent:
		if n := len(st.openIDs); n > 0 {
			return st.openIDs[n-1]
		}
		st.messages++
		id := fmt.Sprintf("msg-%d", st.messages)
		st.openIDs = append(st.openIDs, id)
		return id
	case *rpc.MessageEndEvent:
		if n := len(st.openIDs); n > 0 {
			id := st.openIDs[n-1]
			st.openIDs = st.openIDs[:n-1]
			return id
		}
		st.messages++
		return fmt.Sprintf("msg-%d", st.messages)
	case *rpc.AgentEndEvent:
		st.openIDs = st.openIDs[:0]
	}
	return ""
}

// promptTicket is an accepted prompt whose prompt_result is owed.
type promptTicket struct {
	id string
	// startsAt is the agent_start count when the prompt started a run: it
	// owns the first run after that.
	startsAt int
	// waiting: the prompt was queued into a run; it is reported when a run
	// settles with the queue empty.
	waiting bool
}

type promptOutcome struct {
	status string
	err    *rpc.PromptResultError
}

// enableOMP puts the connection on oh-my-pi's wire (once).
func (s *Server) enableOMP() {
	if s.omp.Swap(true) {
		return
	}
	s.syncSnapshots()
}

// syncSnapshots asks the attached session for message_update snapshots
// while the connection is on oh-my-pi's wire, hands the request back to a
// session it left, and reads the run state of a session it joined.
func (s *Server) syncSnapshots() {
	s.mu.Lock()
	want := s.omp.Load() && !s.detached
	h, prev := s.hub, s.snapHub
	if (want && prev == h) || (!want && prev == nil) {
		s.mu.Unlock()
		return
	}
	if want {
		s.snapHub = h
	} else {
		s.snapHub = nil
	}
	s.mu.Unlock()
	if prev != nil {
		prev.sess.WantSnapshots(false)
	}
	if want {
		h.sess.WantSnapshots(true)
		running, pending := h.sess.IsStreaming(), h.sess.PendingCount()
		st := &s.ompSt
		st.mu.Lock()
		st.running, st.pending = running, pending
		st.mu.Unlock()
	}
}

// ompEvent writes an event on oh-my-pi's wire and tracks the run for the
// prompt results. It runs in the session's event order.
func (s *Server) ompEvent(ev rpc.Event) {
	st := &s.ompSt
	st.mu.Lock()
	defer st.mu.Unlock()
	id := st.messageID(ev)
	out := ompShape(ev)
	if e, ok := ev.(*rpc.AgentEndEvent); ok {
		if e.WillRetry || s.v2.Load() {
			out = &ompAgentEnd{AgentEndEvent: e, streamed: streamedPrefix(st.streamed, e.Messages)}
		}
		clear(st.streamed)
		st.streamed = st.streamed[:0]
	}
	if out != nil && (st.filter == nil || st.filter[out.EventType()]) && !s.full() {
		s.w.eventID(out, id)
		if e, ok := ev.(*rpc.MessageEndEvent); ok {
			st.streamed = append(st.streamed, e.Message)
		}
	}
	switch e := ev.(type) {
	case *rpc.AgentStartEvent:
		st.agentStarts++
		st.running, st.active = true, true
		clear(st.streamed)
		st.streamed = st.streamed[:0]
	case *rpc.AgentEndEvent:
		st.outcome = runOutcome(e.Messages)
	case *rpc.QueueChangedEvent:
		st.pending = e.PendingMessageCount
	case *rpc.AgentSettledEvent:
		st.running = false
		out := st.outcome
		if e.Aborted {
			out = promptOutcome{status: rpc.PromptAborted}
		}
		st.outcome = promptOutcome{}
		kept := st.open[:0]
		for _, t := range st.open {
			switch {
			case !t.waiting && st.agentStarts > t.startsAt, t.waiting && st.pending == 0:
				s.promptResult(t.id, true, out, st.pending == 0 && st.held == 0)
			default:
				kept = append(kept, t)
			}
		}
		clear(st.open[len(kept):])
		st.open = kept
		s.settledLocked()
	}
}

// settledLocked writes session_settled when there was work since the last
// one and nothing runs or waits in the queue.
func (s *Server) settledLocked() {
	st := &s.ompSt
	if st.active && !st.running && st.pending == 0 && st.held == 0 {
		st.active = false
		s.queueEvent(&rpc.SessionSettledEvent{Type: rpc.EventSessionSettled})
	}
}

func (s *Server) promptResult(id string, invoked bool, o promptOutcome, settled bool) {
	if o.status == "" {
		o.status = rpc.PromptCompleted
	}
	s.queueEvent(&rpc.PromptResultEvent{Type: rpc.EventPromptResult, ID: id, AgentInvoked: invoked, Status: o.status, Error: o.err, SessionSettled: settled})
}

// ompAccepted opens the ticket of a prompt the core accepted (its response
// was written before the prompt was tried, as oh-my-pi answers). It runs
// before the run it starts emits anything.
func (s *Server) ompAccepted(id, cmd, disposition string) {
	st := &s.ompSt
	st.mu.Lock()
	defer st.mu.Unlock()
	st.held--
	defer s.settledLocked()
	if disposition == core.DispositionHandled {
		// An extension command or input hook handled it: no run.
		s.promptResult(id, false, promptOutcome{status: rpc.PromptCompleted}, s.idleLocked())
		return
	}
	if disposition == core.DispositionStarted {
		// The run's agent_start follows: it counts as running already.
		st.running, st.active = true, true
		st.open = append(st.open, &promptTicket{id: id, startsAt: st.agentStarts})
		return
	}
	// Queued into a run; one that settled in the meantime already took it
	// (unless it is still queued, after an abort).
	if !st.running && st.pending == 0 {
		s.promptResult(id, true, promptOutcome{status: rpc.PromptCompleted}, true)
		return
	}
	st.open = append(st.open, &promptTicket{id: id, waiting: true})
}

// ompFailed reports a prompt that could not start after its success was
// sent: a second response with the same id, then its prompt_result.
func (s *Server) ompFailed(id, cmd string, err error) {
	st := &s.ompSt
	st.mu.Lock()
	defer st.mu.Unlock()
	st.held--
	s.w.response(&rpc.Response{ID: id, Command: cmd, Error: err.Error()})
	s.promptResult(id, false, promptOutcome{status: rpc.PromptError, err: &rpc.PromptResultError{Message: err.Error()}}, s.idleLocked())
	s.settledLocked()
}

// ompPrompt runs a prompt or abort_and_prompt on oh-my-pi's wire: answered
// before it is tried, the session not settled from the answer until the
// prompt is accepted or refused (as oh-my-pi counts an admitted
// submission).
func (s *Server) ompPrompt(id, cmd string, try func(accepted func(string)) error) {
	st := &s.ompSt
	st.mu.Lock()
	st.held++
	st.mu.Unlock()
	s.w.response(&rpc.Response{ID: id, Command: cmd, Success: true})
	if err := try(func(d string) { s.ompAccepted(id, cmd, d) }); err != nil {
		s.ompFailed(id, cmd, err)
	}
}

// ompHeld reports prompts between their answer and their acceptance.
func (s *Server) ompHeld() bool {
	st := &s.ompSt
	st.mu.Lock()
	defer st.mu.Unlock()
	return st.held > 0
}

// idleLocked: no run, nothing queued, no abort_and_prompt between its
// abort and its prompt.
func (s *Server) idleLocked() bool {
	st := &s.ompSt
	return !st.running && st.pending == 0 && st.held == 0
}

// ompSessionChanged reports the prompts still open as aborted after the
// connection's session changed (their work will not be reported), then
// session_settled when the new session is idle.
func (s *Server) ompSessionChanged() {
	h := s.Hub()
	running, pending := h.sess.IsStreaming(), h.sess.PendingCount()
	st := &s.ompSt
	st.mu.Lock()
	defer st.mu.Unlock()
	st.running, st.pending = running, pending
	for _, t := range st.open {
		s.promptResult(t.id, true, promptOutcome{status: rpc.PromptAborted}, !running && pending == 0)
	}
	if len(st.open) > 0 {
		st.active = true
	}
	st.open = nil
	s.settledLocked()
}

// runOutcome reads how a run ended from its last assistant message.
func runOutcome(msgs ai.Messages) promptOutcome {
	for i := len(msgs) - 1; i >= 0; i-- {
		m, ok := msgs[i].(*ai.AssistantMessage)
		if !ok {
			continue
		}
		switch m.StopReason {
		case ai.StopError:
			msg := m.ErrorMessage
			if msg == "" {
				msg = "Provider request failed"
			}
			return promptOutcome{status: rpc.PromptError, err: &rpc.PromptResultError{
				Message: msg, Provider: m.Provider, Model: m.Model,
				HTTPStatus: m.ErrorStatus, Retryable: core.IsTransient(m),
			}}
		case ai.StopAborted:
			return promptOutcome{status: rpc.PromptAborted}
		}
		return promptOutcome{status: rpc.PromptCompleted}
	}
	return promptOutcome{status: rpc.PromptCompleted}
}

// ompShape maps an event to oh-my-pi's names and shapes (nil: not sent).
func ompShape(ev rpc.Event) rpc.Event {
	switch e := ev.(type) {
	case *rpc.CompactionStartEvent, *rpc.CompactionEndEvent:
		return legacyEvent(ev)
	case *rpc.ThinkingLevelChangedEvent:
		c := *e
		c.ThinkingLevel = c.Level
		return &c
	case *rpc.NotifyEvent:
		// Pisces' own notify (an MCP server that needs attention) is a
		// notice here.
		return &rpc.NoticeEvent{Type: rpc.EventNotice, Level: e.NotifyType, Message: e.Message, Source: rpc.NoticeSourceMCP}
	case *rpc.MessageUpdateEvent:
		if !e.Legacy {
			c := *e
			c.Legacy = true
			return &c
		}
	}
	return ev
}

// streamedPrefix counts the leading messages of a run's agent_end that
// went out in its message_end frames, in the same order.
func streamedPrefix(streamed []ai.Message, msgs ai.Messages) int {
	n := 0
	for n < len(streamed) && n < len(msgs) && streamed[n] == msgs[n] {
		n++
	}
	return n
}

// ompAgentEnd is agent_end on oh-my-pi's wire: one that a retry follows is
// marked isTerminal:false (its run goes on); under protocol v2 one over
// 1 MiB leaves out the messages already sent in message_end (compacted).
type ompAgentEnd struct {
	*rpc.AgentEndEvent
	streamed int // leading messages that went out in message_end
}

func (e *ompAgentEnd) MarshalJSON() ([]byte, error) { return e.encode(e.AgentEndEvent) }

func (e *ompAgentEnd) encode(ev *rpc.AgentEndEvent) ([]byte, error) {
	b, err := rpc.AppendEvent(nil, ev)
	if err != nil || len(b) == 0 || !ev.WillRetry {
		return b, err
	}
	return append(b[:len(b)-1], `,"isTerminal":false}`...), nil
}

// compacted is the frame without the messages already sent, with the
// run's messageCount, as oh-my-pi sends an agent_end over 1 MiB.
func (e *ompAgentEnd) compacted() ([]byte, error) {
	c := *e.AgentEndEvent
	n := len(c.Messages)
	c.Messages = c.Messages[e.streamed:]
	c.MessageCount = &n
	return e.encode(&c)
}

// filtered reports an event set_event_filter keeps from this connection.
func (s *Server) filtered(typ string) bool {
	st := &s.ompSt
	if !st.hasFilter.Load() {
		return false
	}
	st.mu.Lock()
	defer st.mu.Unlock()
	return st.filter != nil && !st.filter[typ]
}

// piShape keeps pi 1.5's message_update for a connection on pi's wire when
// the session makes snapshots for another connection, and drops what only
// oh-my-pi's wire sends (nil).
func piShape(ev rpc.Event) rpc.Event {
	switch e := ev.(type) {
	case *rpc.MessageUpdateEvent:
		if e.Legacy {
			c := *e
			c.Legacy, c.Partial = false, nil
			return &c
		}
	case *rpc.NoticeEvent:
		return nil
	}
	return ev
}

func (s *call) negotiateProtocol(line []byte) (any, error) {
	var c struct {
		ID              string      `json:"id"`
		Type            string      `json:"type"`
		ProtocolVersion json.Number `json:"protocolVersion"`
	}
	if err := decode(line, &c); err != nil {
		return nil, err
	}
	if c.ProtocolVersion.String() != "2" {
		return nil, fmt.Errorf("Unsupported RPC protocol version: %s", c.ProtocolVersion)
	}
	b, _ := rpc.Marshal(rpc.ProtocolData{ProtocolVersion: rpc.ProtocolV2})
	// The switch happens right after this response: every later frame is
	// on the new wire, and the writer chunks frames from then on.
	s.w.response(&rpc.Response{ID: c.ID, Command: c.Type, Success: true, Data: b})
	s.w.chunkFromHere()
	s.v2.Store(true)
	if !s.omp.Load() {
		s.enableOMP()
		s.commandsUpdate()
	}
	return nil, errAnswered
}

func (s *call) availableCommands([]byte) (any, error) {
	return rpc.AvailableCommandsData{Commands: availableCommands(s.sess)}, nil
}

// commandsUpdate sends available_commands_update on oh-my-pi's wire.
func (s *Server) commandsUpdate() {
	if !s.omp.Load() {
		return
	}
	s.queueEvent(&rpc.AvailableCommandsUpdateEvent{Type: rpc.EventAvailableCommandsUpdate, Commands: availableCommands(s.Hub().sess)})
}

func availableCommands(sess *core.Session) []rpc.AvailableCommand {
	out := []rpc.AvailableCommand{}
	for _, c := range sess.Commands() {
		ac := rpc.AvailableCommand{Name: c.Name, Description: c.Description, Input: &rpc.CommandInput{Hint: "arguments"}}
		switch c.Source {
		case resources.SourceExtension:
			ac.Source = "extension"
		case resources.SourceSkill:
			ac.Source = "skill"
		default:
			ac.Source = "file"
		}
		out = append(out, ac)
	}
	return out
}

func (s *call) handoff(line []byte) (any, error) {
	var c rpc.HandoffCommand
	if err := decode(line, &c); err != nil {
		return nil, err
	}
	if _, err := s.sess.Handoff(c.CustomInstructions); err != nil {
		return nil, err
	}
	return rpc.HandoffData{}, nil
}

func (s *call) setFastMode(line []byte) (any, error) {
	var c rpc.SetFastModeCommand
	if err := decode(line, &c); err != nil {
		return nil, err
	}
	on, active, err := s.sess.SetFastMode(c.Enabled)
	if err != nil {
		return nil, err
	}
	return rpc.FastModeData{Enabled: on, Active: active}, nil
}

// trackSubagent keeps the subagents under way from the task tool's events
// and, with set_subagent_subscription progress, sends subagent_lifecycle.
func (s *Server) trackSubagent(ev rpc.Event) {
	var p rpc.SubagentLifecyclePayload
	switch e := ev.(type) {
	case *task.SubagentStartEvent:
		p = rpc.SubagentLifecyclePayload{ID: e.ID, Agent: e.Agent, AgentSource: e.AgentSource, Index: e.Index,
			Status: "started", Description: e.Description, ParentToolCallID: e.ParentToolCallID}
	case *task.SubagentEndEvent:
		status := "completed"
		switch {
		case e.Aborted:
			status = "aborted"
		case e.ExitCode != 0:
			status = "failed"
		}
		p = rpc.SubagentLifecyclePayload{ID: e.ID, Agent: e.Agent, AgentSource: e.AgentSource, Index: e.Index,
			Status: status, ParentToolCallID: e.ParentToolCallID}
	default:
		return
	}
	st := &s.ompSt
	st.mu.Lock()
	defer st.mu.Unlock()
	if p.Status == "started" {
		if st.subagents == nil {
			st.subagents = map[string]*rpc.SubagentSnapshot{}
		}
		e := ev.(*task.SubagentStartEvent)
		st.subagents[p.ID] = &rpc.SubagentSnapshot{ID: p.ID, Index: p.Index, Agent: p.Agent, AgentSource: p.AgentSource,
			Description: e.Description, Status: "running", Assignment: e.Assignment,
			LastUpdate: time.Now().UnixMilli(), ParentToolCallID: p.ParentToolCallID}
	} else {
		if d := st.subagents[p.ID]; d != nil {
			p.Description = d.Description
		}
		delete(st.subagents, p.ID)
	}
	if st.subagentLevel == rpc.SubagentsProgress {
		s.queueEvent(&rpc.SubagentLifecycleEvent{Type: rpc.EventSubagentLifecycle, Payload: p})
	}
}

func (s *call) setSubagentSubscription(line []byte) (any, error) {
	var c rpc.SetSubagentSubscriptionCommand
	if err := decode(line, &c); err != nil {
		return nil, err
	}
	switch c.Level {
	case rpc.SubagentsOff, rpc.SubagentsProgress:
	case rpc.SubagentsEvents:
		return nil, errors.New("Subagent event frames are not available: subscribe with level progress for subagent_lifecycle")
	default:
		return nil, fmt.Errorf("Invalid subagent subscription level: %s", c.Level)
	}
	st := &s.ompSt
	st.mu.Lock()
	st.subagentLevel = c.Level
	st.mu.Unlock()
	return rpc.SubagentSubscriptionData{Level: c.Level}, nil
}

func (s *call) getSubagents([]byte) (any, error) {
	st := &s.ompSt
	st.mu.Lock()
	out := make([]rpc.SubagentSnapshot, 0, len(st.subagents))
	for _, a := range st.subagents {
		out = append(out, *a)
	}
	st.mu.Unlock()
	slices.SortFunc(out, func(a, b rpc.SubagentSnapshot) int {
		return cmp.Or(cmp.Compare(a.Index, b.Index), strings.Compare(a.ID, b.ID))
	})
	return rpc.SubagentsData{Subagents: out}, nil
}

// getSubagentMessages answers as oh-my-pi does for a subagent without a
// session file: Pisces' subagents run in memory and keep none.
func (s *call) getSubagentMessages(line []byte) (any, error) {
	var c rpc.GetSubagentMessagesCommand
	if err := decode(line, &c); err != nil {
		return nil, err
	}
	switch {
	case c.SubagentID != "":
		return nil, fmt.Errorf("Unknown subagent or session file unavailable: %s (subagents run in memory, without a session file)", c.SubagentID)
	case c.SessionFile != "":
		return nil, errors.New("Unknown subagent session file (subagents run in memory, without a session file)")
	}
	return nil, errors.New("get_subagent_messages requires subagentId or sessionFile")
}

func (s *call) setEventFilter(line []byte) (any, error) {
	bad := errors.New("events must be null or an array of non-empty event type strings")
	var c struct {
		Events json.RawMessage `json:"events"`
	}
	if err := decode(line, &c); err != nil || len(c.Events) == 0 {
		return nil, bad
	}
	st := &s.ompSt
	if string(c.Events) == "null" {
		st.mu.Lock()
		st.filter, st.filterList = nil, nil
		st.hasFilter.Store(false)
		st.mu.Unlock()
		return rpc.EventFilterData{}, nil
	}
	var events []string
	if json.Unmarshal(c.Events, &events) != nil || events == nil {
		return nil, bad
	}
	f := map[string]bool{}
	list := []string{}
	for _, e := range events {
		if e == "" {
			return nil, bad
		}
		if !f[e] {
			f[e] = true
			list = append(list, e)
		}
	}
	st.mu.Lock()
	st.filter, st.filterList = f, list
	st.hasFilter.Store(true)
	st.mu.Unlock()
	return rpc.EventFilterData{Events: &list}, nil
}

// Paging of get_messages_page, as oh-my-pi pages: a cursor names the
// session, its leaf and its message count, so that a page of another
// state is refused (stale_cursor) rather than mixed in.
const (
	defaultPageLimit = 100
	maxPageLimit     = 256
	maxPageBytes     = 768 << 10
)

type pageCursor struct {
	Version      int     `json:"version"`
	SessionID    string  `json:"sessionId"`
	LeafID       *string `json:"leafId"`
	MessageCount int     `json:"messageCount"`
	Offset       int     `json:"offset"`
}

var errStaleCursor = &codedError{msg: "RPC message cursor is stale", code: rpc.CodeStaleCursor}

// codedError is a failure whose response carries a code.
type codedError struct{ msg, code string }

func (e *codedError) Error() string { return e.msg }

func (s *call) messagesPage(line []byte) (any, error) {
	var c rpc.GetMessagesPageCommand
	if err := decode(line, &c); err != nil {
		return nil, err
	}
	if st := s.sess.State(); st.IsStreaming || st.IsCompacting {
		return nil, &codedError{msg: "Cannot page messages while the session is changing", code: rpc.CodeSessionBusy}
	}
	limit := defaultPageLimit
	if c.Limit != nil {
		limit = *c.Limit
	}
	if limit < 1 || limit > maxPageLimit {
		return nil, fmt.Errorf("RPC message page limit must be between 1 and %d", maxPageLimit)
	}
	store := s.sess.Store()
	arr, err := store.MessagesJSON()
	if err != nil {
		return nil, err
	}
	msgs := arr.Elements()
	snap := pageCursor{Version: 1, SessionID: store.ID(), LeafID: leafOf(store), MessageCount: len(msgs)}
	offset := 0
	if c.Cursor != "" {
		cur, err := decodeCursor(c.Cursor)
		if err != nil {
			return nil, err
		}
		if cur.SessionID != snap.SessionID || !sameLeaf(cur.LeafID, snap.LeafID) || cur.MessageCount != snap.MessageCount {
			return nil, errStaleCursor
		}
		offset = cur.Offset
	}
	body := []byte(`{"messages":[`)
	n, size := 0, 2
	for offset+n < len(msgs) && n < limit {
		m := msgs[offset+n]
		add := len(m)
		if n > 0 {
			add++
		}
		if n > 0 && size+add > maxPageBytes {
			break
		}
		if n > 0 {
			body = append(body, ',')
		}
		body = append(body, m...)
		size += add
		n++
	}
	body = append(body, ']')
	if next := offset + n; next < len(msgs) {
		snap.Offset = next
		cb, _ := json.Marshal(snap)
		body = append(body, `,"nextCursor":`...)
		body, _ = appendJSONString(body, base64.RawURLEncoding.EncodeToString(cb))
	}
	body = append(body, fmt.Sprintf(`,"totalMessages":%d}`, len(msgs))...)
	return json.RawMessage(body), nil
}

func appendJSONString(b []byte, s string) ([]byte, error) {
	q, err := json.Marshal(s)
	return append(b, q...), err
}

func sameLeaf(a, b *string) bool {
	if a == nil || b == nil {
		return a == b
	}
	return *a == *b
}

func decodeCursor(s string) (pageCursor, error) {
	bad := errors.New("Invalid RPC message cursor")
	var c pageCursor
	if len(s) > 2048 {
		return c, bad
	}
	b, err := base64.RawURLEncoding.DecodeString(s)
	if err != nil || json.Unmarshal(b, &c) != nil || c.Version != 1 || c.SessionID == "" || c.Offset < 0 || c.Offset > c.MessageCount {
		return c, bad
	}
	return c, nil
}

// openSession continues the newest non-empty session of a session
// directory, or starts a session there; nothing happens when that session
// is already the current one.
func (s *call) openSession(line []byte) (any, error) {
	var c rpc.OpenSessionCommand
	if err := decode(line, &c); err != nil {
		return nil, err
	}
	if strings.TrimSpace(c.SessionDir) == "" {
		return nil, errors.New(`Invalid field "sessionDir": expected the path of a session folder, got ""`)
	}
	cur := s.sess.Store()
	if cur.File() == "" {
		return nil, errors.New("open_session requires session persistence (omit --no-session)")
	}
	p, err := s.resolvePath(c.SessionDir)
	if err != nil {
		return nil, err
	}
	if fi, err := os.Stat(p); err == nil && !fi.IsDir() {
		return nil, fmt.Errorf("Session directory is not a directory: %s", p)
	}
	infos, err := session.List(p, "")
	if err != nil && !errors.Is(err, os.ErrNotExist) {
		return nil, err
	}
	latest := ""
	for _, in := range infos { // newest first
		if in.MessageCount > 0 {
			latest = in.Path
			break
		}
	}
	same := func(a, b string) bool { return filepath.Clean(a) == filepath.Clean(b) }
	already := false
	if latest != "" {
		already = same(cur.File(), latest)
	} else {
		already = same(filepath.Dir(cur.File()), p) && cur.Info().MessageCount == 0
	}
	if !already {
		var h *Hub
		var err error
		switch {
		case latest != "":
			h, err = s.sessions.Switch(s.hub, latest)
		default:
			if ip, ok := s.sessions.(InPlacer); !ok || !ip.InPlace() {
				return nil, errors.New("open_session of a directory without sessions is only available on stdio")
			}
			h, err = s.hub, s.sess.NewSessionInDir(p)
			if mf, ok := s.sessions.(MoveFollower); ok && err == nil {
				mf.Moved(h)
			}
		}
		if err != nil {
			if err == core.ErrCancelled {
				st := s.sess.Store()
				return rpc.OpenSessionData{Cancelled: true, SessionID: st.ID(), SessionFile: st.File()}, nil
			}
			return nil, err
		}
		reason := core.ChangeSwitch
		if latest == "" {
			reason = core.ChangeNew
		}
		s.moved(h, reason)
		s.sessionChanged()
	}
	st := s.Hub().sess.Store()
	return rpc.OpenSessionData{Resumed: latest != "", SessionID: st.ID(), SessionFile: st.File()}, nil
}

// chunkLine splits a frame (without its LF) into rpc_chunk lines, or
// replaces it with an overflow frame past the reassembly limit.
func chunkLine(b []byte, seq int64, typ string, resp *rpc.Response) [][]byte {
	if len(b) > rpc.MaxReassembledFrameBytes {
		if resp != nil {
			r := rpc.Response{ID: resp.ID, Command: resp.Command, Error: "RPC response exceeded the transport limit"}
			out, _ := r.MarshalJSON()
			return [][]byte{out}
		}
		out, _ := rpc.Marshal(&rpc.RPCFrameErrorEvent{Type: rpc.EventRPCFrameError, OriginalType: typ, Error: "RPC frame exceeded the transport limit"})
		return [][]byte{out}
	}
	count := (len(b) + rpc.ChunkDataBytes - 1) / rpc.ChunkDataBytes
	id := fmt.Sprintf("rpc-%d", seq)
	lines := make([][]byte, 0, count)
	for i := 0; i < count; i++ {
		end := min((i+1)*rpc.ChunkDataBytes, len(b))
		var sb strings.Builder
		fmt.Fprintf(&sb, `{"type":"rpc_chunk","chunkId":%q,"index":%d,"count":%d,"byteLength":%d,"data":"`, id, i, count, len(b))
		enc := base64.NewEncoder(base64.StdEncoding, &sb)
		enc.Write(b[i*rpc.ChunkDataBytes : end])
		enc.Close()
		sb.WriteString(`"}`)
		lines = append(lines, []byte(sb.String()))
	}
	return lines
}
