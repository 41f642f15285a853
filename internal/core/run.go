package core

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"regexp"
	"slices"
	"strings"
	"sync/atomic"
	"time"

	"github.com/pisces-agent/pisces/internal/agent"
	"github.com/pisces-agent/pisces/internal/ai"
	"github.com/pisces-agent/pisces/internal/jsonx"
	"github.com/pisces-agent/pisces/internal/lazy"
	"github.com/pisces-agent/pisces/internal/prompt"
	"github.com/pisces-agent/pisces/internal/session"
	"github.com/pisces-agent/pisces/internal/tools"
	"github.com/pisces-agent/pisces/rpc"
)

// runState is one run in progress (from the prompt to agent_settled).
type runState struct {
	id      int64
	cancel  context.CancelFunc
	done    chan struct{}
	aborted atomic.Bool
	// abortMessage, when set, replaces the provider's "Request was
	// aborted" on the reply the abort cut short (AbortWith).
	abortMessage atomic.Pointer[string]
}

var runIDs atomic.Int64

// Prompt starts a run with text and images, or queues it while a run is
// going on (behavior "steer" or "followUp"; empty is an error then). It
// returns the disposition once the prompt is accepted.
func (s *Session) Prompt(text string, images []ai.Content, behavior string) (string, error) {
	return s.PromptThen(text, images, behavior, nil)
}

// PromptThen is Prompt with a function called with the disposition once the
// prompt is accepted and before the run emits anything (transports send
// their response there, so that it precedes agent_start).
func (s *Session) PromptThen(text string, images []ai.Content, behavior string, accepted func(string)) (string, error) {
	if accepted == nil {
		accepted = func(string) {}
	}
	// pi's order: an extension command runs at once (even while
	// streaming), then the input hook, then skill and template expansion.
	if name, args, ok := s.extensionCommand(text); ok {
		if _, err := s.hooks().RunCommand(context.Background(), name, args); err != nil {
			return "", err
		}
		accepted(DispositionHandled)
		return DispositionHandled, nil
	}
	if err := s.budgetError(); err != nil {
		return "", err
	}
	in := s.hooks().OnInput(context.Background(), text, "rpc")
	if in.Handled {
		accepted(DispositionHandled)
		return DispositionHandled, nil
	}
	if in.Text != "" {
		text = in.Text
	}
	msg := s.userMessage(s.expand(text), images)
	if !s.IsStreaming() && s.needsThresholdCompaction() {
		// pi checks the threshold before each prompt, before answering it.
		s.compact(context.Background(), ReasonThreshold, "", false)
	}
	s.mu.Lock()
	if s.compacting > 0 {
		s.mu.Unlock()
		return "", ErrCompacting
	}
	if s.run != nil {
		s.mu.Unlock()
		switch behavior {
		case BehaviorSteer:
			s.enqueue(&s.steering, msg, text)
			accepted(DispositionQueued)
			return DispositionQueued, nil
		case BehaviorFollowUp:
			s.enqueue(&s.followUp, msg, text)
			accepted(DispositionQueued)
			return DispositionQueued, nil
		case "":
			return "", ErrBusy
		default:
			return "", fmt.Errorf("invalid streamingBehavior %q: expected \"steer\" or \"followUp\"", behavior)
		}
	}
	if err := s.preflightLocked(); err != nil {
		s.mu.Unlock()
		return "", err
	}
	s.todos.ResetReminders()
	s.startRunLocked([]ai.Message{msg}, func() { accepted(DispositionStarted) })
	return DispositionStarted, nil
}

// InputMayWait reports whether steer and follow_up may wait before they
// return: an extension hooks input, and may ask the person something.
func (s *Session) InputMayWait() bool { return s.opts.Extensions.HandlesInput() }

// PromptMayWait reports whether PromptThen may wait before it accepts the
// prompt: for an extension (an input hook or a command, which may ask the
// person something), or for a compaction due before the prompt (pi
// compacts at the threshold before it answers). A transport runs such a
// prompt where waiting does not stop it from reading further commands.
func (s *Session) PromptMayWait() bool {
	return s.InputMayWait() || !s.IsStreaming() && s.needsThresholdCompaction()
}

// Steer queues a steering message. As in pi, a message queued while no run
// is going on waits for the next run.
func (s *Session) Steer(text string, images []ai.Content) (string, error) {
	text, handled, err := s.queuedInput(text)
	if err != nil || handled {
		return DispositionHandled, err
	}
	s.enqueue(&s.steering, s.userMessage(s.expand(text), images), text)
	return DispositionQueued, nil
}

// FollowUp queues a follow-up message, delivered when the agent would
// otherwise stop.
func (s *Session) FollowUp(text string, images []ai.Content) (string, error) {
	text, handled, err := s.queuedInput(text)
	if err != nil || handled {
		return DispositionHandled, err
	}
	s.enqueue(&s.followUp, s.userMessage(s.expand(text), images), text)
	return DispositionQueued, nil
}

// queuedInput applies the checks and the input hook of steer and
// follow_up: no extension commands, the budget, then the hook.
func (s *Session) queuedInput(text string) (string, bool, error) {
	if _, _, ok := s.extensionCommand(text); ok {
		return "", false, ErrCommandWhileQueued
	}
	if err := s.budgetError(); err != nil {
		return "", false, err
	}
	in := s.hooks().OnInput(context.Background(), text, "rpc")
	if in.Handled {
		return "", true, nil
	}
	if in.Text != "" {
		text = in.Text
	}
	return text, false, nil
}

// preflightLocked checks that a run can start.
func (s *Session) preflightLocked() error {
	if s.model == nil {
		return ErrNoModel
	}
	if _, ok := s.opts.Models.Provider(s.model.Provider); !ok {
		return fmt.Errorf("No provider registered for %s", s.model.Provider)
	}
	if s.opts.APIKey == "" {
		if _, ok := s.opts.Models.Key(s.model.Provider); !ok {
			return s.opts.Models.MissingKeyError(s.model.Provider)
		}
	}
	return nil
}

func (s *Session) userMessage(text string, images []ai.Content) *ai.UserMessage {
	blocks := []ai.Content{ai.Text(text)}
	blocks = append(blocks, images...)
	return &ai.UserMessage{Role: ai.RoleUser, Content: ai.BlockContent(blocks...), Timestamp: ai.NowMs()}
}

func (s *Session) enqueue(q *[]*queued, msg *ai.UserMessage, text string) {
	s.mu.Lock()
	*q = append(*q, &queued{msg: msg, text: text})
	s.mu.Unlock()
	s.emitQueue()
}

// emitQueue publishes queue_update and queue_changed.
func (s *Session) emitQueue() {
	s.mu.Lock()
	st, fu := texts(s.steering), texts(s.followUp)
	s.mu.Unlock()
	s.emit(&rpc.QueueUpdateEvent{Steering: st, FollowUp: fu})
	s.emit(&rpc.QueueChangedEvent{PendingMessageCount: len(st) + len(fu)})
}

func texts(q []*queued) []string {
	out := make([]string, 0, len(q))
	for _, m := range q {
		out = append(out, m.text)
	}
	return out
}

// dequeue takes messages per the queue mode.
func (s *Session) dequeue(q *[]*queued, mode string) []ai.Message {
	s.mu.Lock()
	if len(*q) == 0 {
		s.mu.Unlock()
		return nil
	}
	n := 1
	if mode == QueueAll {
		n = len(*q)
	}
	taken := (*q)[:n]
	*q = append([]*queued(nil), (*q)[n:]...)
	s.mu.Unlock()
	out := make([]ai.Message, 0, len(taken))
	for _, m := range taken {
		m.msg.Timestamp = ai.NowMs()
		out = append(out, m.msg)
	}
	s.emitQueue()
	return out
}

// ClearQueue empties both queues and returns what was removed.
func (s *Session) ClearQueue() (steering, followUp []string) {
	s.mu.Lock()
	steering, followUp = texts(s.steering), texts(s.followUp)
	had := len(s.steering)+len(s.followUp) > 0
	s.steering, s.followUp = nil, nil
	s.mu.Unlock()
	if had {
		s.emitQueue()
	}
	return steering, followUp
}

// PendingCount is the number of queued messages.
func (s *Session) PendingCount() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return len(s.steering) + len(s.followUp)
}

// Queues returns the queued texts.
func (s *Session) Queues() (steering, followUp []string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return texts(s.steering), texts(s.followUp)
}

// IsStreaming reports whether a run is going on.
func (s *Session) IsStreaming() bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.run != nil
}

// startRunLocked starts a run goroutine; s.mu must be held and is released.
func (s *Session) startRunLocked(prompts []ai.Message, accepted func()) {
	ctx, cancel := context.WithCancel(context.Background())
	r := &runState{id: runIDs.Add(1), cancel: cancel, done: make(chan struct{})}
	s.run = r
	bash := s.pendingBash
	s.pendingBash = nil
	s.mu.Unlock()
	for _, b := range bash {
		s.persist(b)
	}
	accepted()
	go s.runLoop(ctx, r, prompts)
}

// AbortWith is Abort with the error message the reply it cuts short is
// kept with (pi's interactive mode writes "Operation aborted"; the
// protocol's abort keeps the provider's "Request was aborted").
func (s *Session) AbortWith(message string) {
	s.mu.Lock()
	if r := s.run; r != nil && message != "" {
		r.abortMessage.Store(&message)
	}
	s.mu.Unlock()
	s.Abort()
}

// Abort stops the current run (and a pending retry) and returns once it has
// emitted agent_end and agent_settled. The queues are kept.
func (s *Session) Abort() {
	s.mu.Lock()
	r := s.run
	if r != nil {
		// Marked before the retry delay is cancelled: a run waiting in
		// that delay ends at once, and its agent_settled must say aborted.
		r.aborted.Store(true)
	}
	if s.retryCancel != nil {
		s.retryCancel()
	}
	s.mu.Unlock()
	s.cancelCompaction()
	if r == nil {
		// A manual compaction or branch summary answers once it stopped.
		s.mu.Lock()
		for s.compacting > 0 {
			s.compactIdleCond().Wait()
		}
		s.mu.Unlock()
		return
	}
	r.cancel()
	<-r.done
}

// WaitIdle blocks until no run is going on.
func (s *Session) WaitIdle() {
	s.mu.Lock()
	r := s.run
	s.mu.Unlock()
	if r != nil {
		<-r.done
	}
}

// AbortRetry cancels a pending retry delay.
func (s *Session) AbortRetry() {
	s.mu.Lock()
	if s.retryCancel != nil {
		s.retryCancel()
	}
	s.mu.Unlock()
}

// runLoop drives the agent loop until the run settles: retries, and queued
// messages that arrived after the loop's last look, start further passes.
func (s *Session) runLoop(ctx context.Context, r *runState, prompts []ai.Message) {
	defer func() {
		s.mu.Lock()
		s.run = nil
		s.mu.Unlock()
		r.cancel()
		s.emit(&rpc.AgentSettledEvent{Aborted: r.aborted.Load()})
		close(r.done)
	}()
	attempt := 0
	overflowTried := false
	steered := false // the prompts are steering messages already taken
	for {
		res := s.runOnce(ctx, prompts, steered)
		prompts, steered = nil, false
		last := res.Last
		aborted := ctx.Err() != nil || (last != nil && last.StopReason == ai.StopAborted)
		if aborted {
			r.aborted.Store(true)
		}
		retry, overflow := false, false
		var delay time.Duration
		if !aborted && last != nil && last.StopReason == ai.StopError {
			if isContextOverflow(last.ErrorMessage) && s.autoCompactionOn() {
				overflow = true
			} else if s.retryAllowed(last, attempt) {
				retry = true
				attempt++
				delay = s.retryDelay(attempt, last)
			}
		}
		s.emit(&rpc.AgentEndEvent{Messages: ai.Messages(res.Messages), WillRetry: retry || (overflow && !overflowTried)})
		if retry {
			// The delay is cancellable (abort_retry) from the moment
			// auto_retry_start announces it.
			rctx, cancel := s.armRetry(ctx)
			s.emit(&rpc.AutoRetryStartEvent{
				Attempt: attempt, MaxAttempts: s.opts.Settings.RetryMaxRetries(),
				DelayMs: delay.Milliseconds(), ErrorMessage: last.ErrorMessage,
			})
			s.hideFailed(last)
			if !s.waitRetry(rctx, cancel, attempt, delay) {
				return
			}
			continue
		}
		if attempt > 0 {
			ok := last != nil && last.StopReason != ai.StopError && !aborted
			ev := &rpc.AutoRetryEndEvent{Success: ok, Attempt: attempt}
			if !ok {
				if aborted {
					ev.FinalError = "Retry cancelled"
				} else if last != nil {
					ev.FinalError = last.ErrorMessage
				}
			}
			s.emit(ev)
			attempt = 0
		}
		if overflow {
			if overflowTried {
				s.emit(&rpc.CompactionStartEvent{Reason: ReasonOverflow})
				s.emit(&rpc.CompactionEndEvent{Reason: ReasonOverflow, ErrorMessage: overflowRecoveryFailed})
				return
			}
			overflowTried = true
			s.hideFailed(last)
			if _, err := s.compact(ctx, ReasonOverflow, "", true); err != nil || ctx.Err() != nil {
				if ctx.Err() != nil {
					r.aborted.Store(true)
				}
				return
			}
			continue
		}
		if aborted || ctx.Err() != nil {
			return
		}
		if s.needsThresholdCompaction() {
			s.compact(ctx, ReasonThreshold, "", false)
			if ctx.Err() != nil {
				r.aborted.Store(true)
				return
			}
		}
		// A message queued after the loop's last look (or left queued by a
		// run that ended in an error) still gets its turn, and it is what
		// the continuation starts with; open todo items get a reminder.
		prompts, steered = s.takeQueued()
		if len(prompts) == 0 {
			ev, text, ok := s.todos.NextReminder()
			if !ok {
				return
			}
			s.emit(ev)
			s.enqueue(&s.followUp, s.userMessage(text, nil), text)
			prompts, steered = s.takeQueued()
		}
	}
}

// takeQueued dequeues the messages a continuation of the run starts with,
// as pi's continue() does: the steering messages (per the steering mode;
// steered is then true), else the follow-ups (per the follow-up mode).
func (s *Session) takeQueued() (msgs []ai.Message, steered bool) {
	s.mu.Lock()
	steeringMode, followUpMode := s.steeringMode, s.followUpMode
	s.mu.Unlock()
	if m := s.dequeue(&s.steering, steeringMode); len(m) > 0 {
		return m, true
	}
	return s.dequeue(&s.followUp, followUpMode), false
}

func (s *Session) autoCompactionOn() bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.autoCompact
}

// hideFailed appends a context_edit that leaves a failed assistant message
// out of the context (as pi 1.5 does before a retry) and announces it.
func (s *Session) hideFailed(failed *ai.AssistantMessage) {
	st := s.Store()
	id := st.LeafID()
	if id == "" {
		return
	}
	e := st.Entry(id)
	if e == nil || e.Type != "message" || e.Message() != ai.Message(failed) {
		return
	}
	ce, err := st.AppendContextEdit(id, nil)
	if err != nil {
		s.logf("cannot write context_edit: %v", err)
		return
	}
	s.emit(&rpc.EntryAppendedEvent{Entry: json.RawMessage(ce.Raw)})
}

// runOnce runs the agent loop once over the current context. steered says
// that the prompts were taken from the steering queue (it is not polled
// again before the first model call).
func (s *Session) runOnce(ctx context.Context, prompts []ai.Message, steered bool) agent.Result {
	s.mu.Lock()
	model, level, store := s.model, s.thinking, s.store
	legacy := s.opts.LegacyWire || s.snapshotViewers.Load() > 0
	s.mu.Unlock()
	entry, _ := s.opts.Models.Provider(model.Provider)
	key := s.opts.APIKey
	if key == "" {
		key, _ = s.opts.Models.Key(model.Provider)
	}
	s.waitMCP(ctx)
	own, allOwn := s.activeOwnTools()
	active := s.withHooks(append(slices.Clone(own), s.activeMCPTools(allOwn)...))
	// Later model calls of the run keep its own tools and see the MCP
	// tools as they are then (those tool_search loaded, servers that
	// connected or went away).
	toolsNow := func() []tools.Tool {
		return s.withHooks(append(slices.Clone(own), s.activeMCPTools(allOwn)...))
	}
	sysText, sections := s.systemPrompt(active)
	if extra := s.hooks().BeforeAgentStart(ctx, sysText); extra != "" {
		sysText += "\n\n" + extra
	}
	history := store.BuildContext().Messages
	if sm := s.systemMessageIfChanged(history, sections, active); sm != nil {
		prompts = append([]ai.Message{sm}, prompts...)
	}
	cfg := &agent.Config{
		Provider:      entry.Provider,
		Model:         model,
		ThinkingLevel: level,
		SystemPrompt:  sysText,
		Tools:         active,
		APIKey:        key,
		InterruptMode: func() string {
			s.mu.Lock()
			defer s.mu.Unlock()
			return s.interruptMode
		},
		Priority: func() bool {
			s.mu.Lock()
			defer s.mu.Unlock()
			return s.fastMode
		},
		Steering: func() []ai.Message {
			s.mu.Lock()
			mode := s.steeringMode
			s.mu.Unlock()
			return s.dequeue(&s.steering, mode)
		},
		FollowUp: func() []ai.Message {
			s.mu.Lock()
			mode := s.followUpMode
			s.mu.Unlock()
			return s.dequeue(&s.followUp, mode)
		},
		ConvertToLLM: session.ConvertToLLM,
		Emit: func(ev rpc.Event) {
			s.onAgentEvent(ev)
			s.pace(ctx)
		},
		LegacySnapshots:   legacy,
		NoInitialSteering: steered,
		ToolsNow:          toolsNow,
	}
	if tt := s.newTTSR(); tt != nil {
		names := map[int]string{}
		cfg.TurnStarted = func() {
			tt.mu.Lock()
			tt.matcher.NextTurn()
			tt.matcher.BeginStream()
			tt.mu.Unlock()
			clear(names)
		}
		cfg.Watch = func(ev ai.AssistantEvent) bool { return tt.watch(ev, names) }
		cfg.Interrupted = func(p *ai.AssistantMessage) ([]ai.Message, bool) { return s.ttsrInterrupted(tt, p) }
		cfg.AfterTurn = func() []ai.Message { return s.ttsrAfterTurn(tt) }
	}
	return agent.Run(ctx, cfg, history, prompts)
}

// onAgentEvent persists finished messages, then publishes the event.
func (s *Session) onAgentEvent(ev rpc.Event) {
	if e, ok := ev.(*rpc.MessageEndEvent); ok {
		if am, ok := e.Message.(*ai.AssistantMessage); ok && am.StopReason == ai.StopAborted && am.ErrorMessage == "Request was aborted" {
			s.mu.Lock()
			r := s.run
			s.mu.Unlock()
			if r != nil {
				if m := r.abortMessage.Load(); m != nil {
					am.ErrorMessage = *m
				}
			}
		}
		s.persist(e.Message)
	}
	s.emit(ev)
}

// persist appends a message to the session store.
func (s *Session) persist(m ai.Message) {
	st := s.Store()
	if _, err := st.AppendMessage(m); err != nil {
		s.logf("cannot write to the session file: %v", err)
		// Reported once until a write succeeds again (oh-my-pi's wire
		// shows it; pi's drops it).
		if !s.persistFailing.Swap(true) {
			detail := strings.Join(strings.Fields(err.Error()), " ")
			s.emit(&rpc.NoticeEvent{Level: rpc.NoticeError, Source: rpc.NoticeSourcePersistence,
				Message: "Session persistence failed: " + detail + ". The message was not recorded in the session."})
		}
		return
	}
	s.persistFailing.Store(false)
}

// systemMessageIfChanged returns a system message (pi 1.5's checkpoint)
// when the context has none or its prompt sections or tools differ. Text an
// extension adds before the run goes to the model but, as pi's forced
// prompts, not into the message.
func (s *Session) systemMessageIfChanged(history []ai.Message, sections []prompt.Section, active []tools.Tool) *ai.SystemMessage {
	var last *ai.SystemMessage
	for _, m := range history {
		if sm, ok := m.(*ai.SystemMessage); ok {
			last = sm
		}
	}
	specs := make([]ai.ToolSpec, 0, len(active))
	for _, t := range active {
		specs = append(specs, ai.ToolSpec{Name: t.Name(), Description: t.Description(), Parameters: t.Parameters()})
	}
	secs := sectionsJSON(sections)
	if last != nil && bytes.Equal(last.Sections, secs) && sameTools(last.ToolsAdded, specs) {
		return nil
	}
	// As in pi, the prompt is in the sections and the content is empty.
	return &ai.SystemMessage{
		Role:       ai.RoleSystem,
		Content:    ai.StringContent(""),
		Sections:   secs,
		Timestamp:  ai.NowMs(),
		ToolsAdded: specs,
	}
}

func sameTools(a, b []ai.ToolSpec) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i].Name != b[i].Name || a[i].Description != b[i].Description {
			return false
		}
	}
	return true
}

func sectionsJSON(sections []prompt.Section) json.RawMessage {
	if len(sections) == 0 {
		return nil
	}
	var sb strings.Builder
	sb.WriteByte('{')
	for i, sec := range sections {
		if i > 0 {
			sb.WriteByte(',')
		}
		sb.Write(jsonx.MustMarshal(sec.Name))
		sb.WriteByte(':')
		sb.Write(jsonx.MustMarshal(sec.Text))
	}
	sb.WriteByte('}')
	return json.RawMessage(sb.String())
}

// retryablePattern is compiled when first needed (only failed turns use
// it; compiling at start-up cost ~50 kB of garbage before the first reply).
var retryablePattern = lazy.Value[*regexp.Regexp]{New: func() *regexp.Regexp {
	return regexp.MustCompile(`(?i)overloaded|rate.?limit|too many requests|\b429\b|\b500\b|\b502\b|\b503\b|\b504\b|\b529\b|service.?unavailable|server.?error|internal.?error|connection.?(error|reset|refused)|fetch failed|timed? ?out|other side closed|terminated|upstream.?connect|reset before headers|retry delay|stream (cut|ended)|unexpected EOF`)
}}

// retryAllowed reports whether a failed message should be retried: a
// transient failure (429, 5xx, overloaded, a cut connection) while retries
// are enabled and left, and no provider-requested delay beyond the maximum.
func (s *Session) retryAllowed(m *ai.AssistantMessage, attempt int) bool {
	s.mu.Lock()
	enabled := s.autoRetry
	s.mu.Unlock()
	if !enabled || attempt >= s.opts.Settings.RetryMaxRetries() {
		return false
	}
	if max := time.Duration(s.opts.Settings.RetryMaxDelayMs()) * time.Millisecond; m.RetryAfter > max {
		return false
	}
	return IsTransient(m)
}

// IsTransient reports whether a failed model call is of the kind auto-retry
// retries: a timeout, conflict, rate limit or server error, or a message
// that names an overload or a network failure (never a context overflow).
func IsTransient(m *ai.AssistantMessage) bool {
	if isContextOverflow(m.ErrorMessage) {
		return false
	}
	switch st := m.ErrorStatus; {
	case st == 408 || st == 409 || st == 429 || st >= 500:
		return true
	case st >= 400:
		return false
	}
	return retryablePattern.Get().MatchString(m.ErrorMessage)
}

// retryDelay is the backoff for an attempt (base·2^(n-1), capped), or the
// provider's Retry-After when that is longer.
func (s *Session) retryDelay(attempt int, m *ai.AssistantMessage) time.Duration {
	base := time.Duration(s.opts.Settings.RetryBaseDelayMs()) * time.Millisecond
	d := base << (attempt - 1)
	max := time.Duration(s.opts.Settings.RetryMaxDelayMs()) * time.Millisecond
	if max > 0 && d > max {
		d = max
	}
	if m != nil && d > localRefusedMaxDelay && refusedLocally(m, s.Model()) {
		d = localRefusedMaxDelay
	}
	if m != nil && m.RetryAfter > d {
		d = m.RetryAfter
	}
	return d
}

// localRefusedMaxDelay bounds the wait before retrying a server on this
// machine that refused the connection: nothing listens on its port yet, so
// only a server that is just starting can answer a retry, and a server
// that is not running is reported within a few seconds.
const localRefusedMaxDelay = time.Second

// refusedLocally reports a failure to connect to a server on this machine.
func refusedLocally(m *ai.AssistantMessage, model *ai.Model) bool {
	return m.ErrorStatus == 0 && model != nil && ai.IsLoopbackURL(model.BaseURL) &&
		strings.Contains(m.ErrorMessage, "connection refused")
}

// armRetry makes the coming retry delay cancellable by AbortRetry (and by
// Abort, through ctx).
func (s *Session) armRetry(ctx context.Context) (context.Context, context.CancelFunc) {
	rctx, cancel := context.WithCancel(ctx)
	s.mu.Lock()
	s.retryCancel = cancel
	s.mu.Unlock()
	return rctx, cancel
}

// waitRetry sleeps before a retry, over the context armRetry gave. It
// returns false when the retry was cancelled (abort or abort_retry).
func (s *Session) waitRetry(rctx context.Context, cancel context.CancelFunc, attempt int, delay time.Duration) bool {
	defer func() {
		s.mu.Lock()
		s.retryCancel = nil
		s.mu.Unlock()
		cancel()
	}()
	cancelled := func() bool {
		s.emit(&rpc.AutoRetryEndEvent{Success: false, Attempt: attempt, FinalError: "Retry cancelled"})
		return false
	}
	if rctx.Err() != nil {
		return cancelled()
	}
	t := time.NewTimer(delay)
	defer t.Stop()
	select {
	case <-t.C:
		return true
	case <-rctx.Done():
		return cancelled()
	}
}

var overflowPattern = lazy.Value[*regexp.Regexp]{New: func() *regexp.Regexp {
	return regexp.MustCompile(`(?i)prompt is too long|input is too long for requested model|exceeds the context window|input token count.*exceeds the maximum|maximum prompt length is \d+|reduce the length of the messages|maximum context length is \d+ tokens|exceeds the limit of \d+|exceeds the available context size|greater than the context length|context window exceeds limit|exceeded model token limit|context[_ ]length[_ ]exceeded|too many tokens`)
}}

// isContextOverflow reports whether an error message says the context was
// too long for the model.
func isContextOverflow(msg string) bool { return overflowPattern.Get().MatchString(msg) }

// AbortAndPrompt aborts the current run (if any) and starts a new one with
// the message; no other prompt can slip in between.
func (s *Session) AbortAndPrompt(text string, images []ai.Content, accepted func(string)) (string, error) {
	s.promptMu.Lock()
	defer s.promptMu.Unlock()
	s.Abort()
	return s.PromptThen(text, images, "", accepted)
}
