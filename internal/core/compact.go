package core

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/pisces-agent/pisces/internal/ai"
	"github.com/pisces-agent/pisces/internal/compaction"
	"github.com/pisces-agent/pisces/internal/jsonx"
	"github.com/pisces-agent/pisces/internal/session"
	"github.com/pisces-agent/pisces/rpc"
)

// Compaction reasons.
const (
	ReasonManual    = "manual"
	ReasonThreshold = "threshold"
	ReasonOverflow  = "overflow"
)

// CompactResult is the result of a compaction (the protocol's type).
type CompactResult = rpc.CompactionResult

// ErrOverflowRecovery is reported when a compact-and-retry did not help.
const overflowRecoveryFailed = "Context overflow recovery failed after one compact-and-retry attempt. Try reducing context or switching to a larger-context model."

// summaryModel is the provider and model summaries are written with, and
// their retry policy; source and reason are what summarization_retry_*
// events name (rpc.SummarySource*, the compaction's reason).
func (s *Session) summaryModel(source, reason string) (compaction.Model, error) {
	s.mu.Lock()
	m, level := s.model, s.thinking
	s.mu.Unlock()
	if m == nil {
		return compaction.Model{}, ErrNoModel
	}
	entry, ok := s.opts.Models.Provider(m.Provider)
	if !ok {
		return compaction.Model{}, fmt.Errorf("No provider registered for %s", m.Provider)
	}
	key := s.opts.APIKey
	if key == "" {
		key, _ = s.opts.Models.Key(m.Provider)
	}
	return compaction.Model{Provider: entry.Provider, Model: m, APIKey: key, ThinkingLevel: level,
		Retry: &summaryRetry{s: s, source: source, reason: reason}}, nil
}

// summaryRetry retries failed summary calls as runs are retried: transient
// failures (retryAllowed), while auto-retry is on and retry.maxRetries
// allows, after the same backoff. Each retry is announced with
// summarization_retry_scheduled, then summarization_retry_attempt_start
// when the call is made again; summarization_retry_finished closes them.
// The delay ends early when the summary is cancelled (abort).
type summaryRetry struct {
	s              *Session
	source, reason string
	scheduled      bool
}

func (r *summaryRetry) Again(ctx context.Context, failed *ai.AssistantMessage, attempt int) bool {
	s := r.s
	if !s.retryAllowed(failed, attempt-1) {
		return false
	}
	delay := s.retryDelay(attempt, failed)
	r.scheduled = true
	s.emit(&rpc.SummarizationRetryScheduledEvent{
		Attempt: attempt, MaxAttempts: s.opts.Settings.RetryMaxRetries(),
		DelayMs: delay.Milliseconds(), ErrorMessage: failed.ErrorMessage,
	})
	t := time.NewTimer(delay)
	defer t.Stop()
	select {
	case <-t.C:
	case <-ctx.Done():
		return false
	}
	s.emit(&rpc.SummarizationRetryAttemptStartEvent{Source: r.source, Reason: r.reason})
	return true
}

func (r *summaryRetry) Finished() {
	if r.scheduled {
		r.scheduled = false
		r.s.emit(&rpc.SummarizationRetryFinishedEvent{})
	}
}

// Compact aborts a running turn and compacts the session (the RPC compact
// command).
func (s *Session) Compact(customInstructions string) (*CompactResult, error) {
	if !s.sessionBefore("compact", map[string]any{"customInstructions": customInstructions}) {
		return nil, ErrCancelled
	}
	s.Abort()
	return s.compact(context.Background(), ReasonManual, customInstructions, false)
}

// compact runs one compaction with its start and end events. A manual
// compaction reports its errors; automatic ones report them in
// compaction_end only.
func (s *Session) compact(parent context.Context, reason, custom string, willRetry bool) (*CompactResult, error) {
	ctx, cancel := context.WithCancel(parent)
	defer cancel()
	s.beginCompacting(cancel)
	defer s.endCompacting()
	// Nothing to do (too small, already compacted) is an answer, not a
	// compaction: no events.
	prep, err := s.prepareCompaction()
	if err != nil {
		return nil, err
	}
	s.emit(&rpc.CompactionStartEvent{Reason: reason})
	res, err := s.doCompact(ctx, prep, reason, custom)
	end := &rpc.CompactionEndEvent{Reason: reason}
	switch {
	case err == nil:
		end.Result = jsonx.MustMarshal(res)
		end.WillRetry = willRetry
	case errors.Is(err, context.Canceled) || ctx.Err() != nil:
		end.Aborted = true
		err = errors.New("Compaction aborted")
	default:
		end.ErrorMessage = err.Error()
	}
	s.emit(end)
	return res, err
}

func (s *Session) prepareCompaction() (*compaction.Preparation, error) {
	st := s.Store()
	leaf := st.LeafID()
	if leaf == "" {
		return nil, compaction.ErrNothingToCompact
	}
	return compaction.Prepare(st.Branch(leaf), st.BuildContext().Messages, s.opts.Settings.KeepRecentTokens())
}

func (s *Session) doCompact(ctx context.Context, prep *compaction.Preparation, reason, custom string) (*CompactResult, error) {
	st := s.Store()
	sc := st.BuildContext()
	m, err := s.summaryModel(rpc.SummarySourceCompaction, reason)
	if err != nil {
		return nil, err
	}
	summary, usage, err := compaction.Summarize(ctx, m, prep, custom, s.opts.Settings.ReserveTokens())
	if err != nil {
		return nil, err
	}
	if ctx.Err() != nil {
		return nil, context.Canceled
	}
	details := &compaction.Details{ReadFiles: prep.ReadFiles, ModifiedFiles: prep.ModifiedFiles}
	var sys *ai.SystemMessage
	for _, msg := range sc.Messages {
		if sm, ok := msg.(*ai.SystemMessage); ok {
			sys = sm
		}
	}
	if sys != nil {
		c := *sys
		c.Timestamp = ai.NowMs()
		sys = &c
	}
	if _, err := st.AppendCompactionEntry(session.Compaction{
		Summary:          summary,
		FirstKeptEntryID: prep.FirstKeptEntryID,
		TokensBefore:     prep.TokensBefore,
		Details:          json.RawMessage(jsonx.MustMarshal(details)),
		Usage:            usage,
		SystemMessage:    sys,
	}); err != nil {
		return nil, err
	}
	after := compaction.EstimateMessages(st.BuildContext().Messages)
	return &CompactResult{
		Summary:              summary,
		FirstKeptEntryID:     prep.FirstKeptEntryID,
		TokensBefore:         prep.TokensBefore,
		EstimatedTokensAfter: after,
		Details:              jsonx.MustMarshal(details),
		Usage:                usage,
	}, nil
}

// beginCompacting marks a compaction or branch summary as running: get_state
// reports isCompacting, prompts are refused, abort cancels it and waits.
func (s *Session) beginCompacting(cancel context.CancelFunc) {
	s.mu.Lock()
	s.compacting++
	s.compactCancels = append(s.compactCancels, cancel)
	s.mu.Unlock()
}

// compactIdleCond returns the condition Abort waits on for running
// compactions to stop (a WaitGroup would be reused: a compaction may
// begin while an abort's wait is returning). Called with s.mu held.
func (s *Session) compactIdleCond() *sync.Cond {
	if s.compactIdle == nil {
		s.compactIdle = sync.NewCond(&s.mu)
	}
	return s.compactIdle
}

func (s *Session) endCompacting() {
	s.mu.Lock()
	s.compacting--
	if s.compacting == 0 {
		s.compactCancels = s.compactCancels[:0]
		s.compactIdleCond().Broadcast()
	}
	s.mu.Unlock()
}

// cancelCompaction stops a running compaction (abort does this too).
func (s *Session) cancelCompaction() {
	s.mu.Lock()
	cs := append([]context.CancelFunc(nil), s.compactCancels...)
	s.mu.Unlock()
	for _, c := range cs {
		c()
	}
}

// needsThresholdCompaction reports whether the context has grown past the
// window minus the reserve, judged by the last assistant message after the
// latest compaction.
func (s *Session) needsThresholdCompaction() bool {
	s.mu.Lock()
	enabled, m := s.autoCompact, s.model
	s.mu.Unlock()
	if !enabled || m == nil || m.ContextWindow <= 0 {
		return false
	}
	st := s.Store()
	limit := int64(m.ContextWindow - s.opts.Settings.ReserveTokens())
	if belowThreshold(st, limit) {
		return false
	}
	sc := st.BuildContext()
	msgs := sc.Messages
	var last *ai.AssistantMessage
	lastIdx := -1
	for i := len(msgs) - 1; i >= 0; i-- {
		if a, ok := msgs[i].(*ai.AssistantMessage); ok {
			last, lastIdx = a, i
			break
		}
	}
	if last == nil || last.StopReason == ai.StopAborted || !afterLatestCompaction(st, sc.EntryIDs[lastIdx]) {
		return false
	}
	var tokens int64
	if last.StopReason == ai.StopError {
		tokens = compaction.EstimateContext(msgs).Tokens
	} else {
		tokens = compaction.AssistantUsageTokens(last)
	}
	return tokens > limit
}

// belowThreshold tells cheaply, from the entries between the leaf and the
// latest compaction, that no threshold compaction is due: the last
// assistant message there (the last one of the context) used at most
// limit tokens, was aborted, or there is none. False means that the
// context has to be built to tell (a failed reply's context is estimated).
// A prompt checks this before it is answered, so it must not decode the
// branch.
func belowThreshold(st *session.Session, limit int64) bool {
	for e := st.Leaf(); e != nil; e = st.Entry(e.Parent()) {
		if e.Type == session.TypeCompaction {
			return true
		}
		if e.Role() != ai.RoleAssistant {
			continue
		}
		a, ok := e.Message().(*ai.AssistantMessage)
		if !ok || a.StopReason == ai.StopError {
			return false
		}
		return a.StopReason == ai.StopAborted || compaction.AssistantUsageTokens(a) <= limit
	}
	return true
}

// ContextUsage is get_context_usage's answer; Known is false when no usage
// has been reported since the last compaction. Estimated is true instead
// on a branch without compaction and without reported usage (a new
// session, a provider that reports none): Tokens and Percent are then the
// estimate from the text, which is what pi answers there.
type ContextUsage struct {
	Known          bool
	Estimated      bool
	Tokens         int64
	ContextWindow  int
	Percent        float64
	UsageTokens    int64
	TrailingTokens int64
	LastUsageIndex int
}

// ContextUsage estimates how full the context window is.
func (s *Session) ContextUsage() ContextUsage {
	m := s.Model()
	st := s.Store()
	sc := st.BuildContext()
	msgs := sc.Messages
	u := compaction.EstimateContext(msgs)
	cu := ContextUsage{LastUsageIndex: u.LastUsageIndex}
	if m != nil {
		cu.ContextWindow = m.ContextWindow
	}
	// Usage reported before the latest compaction no longer describes the
	// context.
	switch {
	case u.LastUsageIndex < 0 && !branchCompacted(st):
		cu.Estimated = true
	case u.LastUsageIndex < 0 || !afterLatestCompaction(st, sc.EntryIDs[u.LastUsageIndex]):
		return cu
	default:
		cu.Known = true
	}
	cu.Tokens, cu.UsageTokens, cu.TrailingTokens = u.Tokens, u.UsageTokens, u.TrailingTokens
	if cu.ContextWindow > 0 {
		cu.Percent = float64(u.Tokens) * 100 / float64(cu.ContextWindow)
	}
	return cu
}

// branchCompacted reports whether the current branch holds a compaction.
func branchCompacted(st *session.Session) bool {
	leaf := st.LeafID()
	if leaf == "" {
		return false
	}
	for _, e := range st.Branch(leaf) {
		if e.Type == session.TypeCompaction {
			return true
		}
	}
	return false
}

// afterLatestCompaction reports whether entry id comes after the latest
// compaction on the current branch (a kept message from before it reports
// usage that no longer describes the context).
func afterLatestCompaction(st *session.Session, id string) bool {
	if id == "" {
		return false
	}
	leaf := st.LeafID()
	if leaf == "" {
		return false
	}
	for _, e := range slices.Backward(st.Branch(leaf)) {
		if e.ID == id {
			return true
		}
		if e.Type == session.TypeCompaction {
			return false
		}
	}
	return false
}

// HandoffFocus is what a handoff asks of the summary, ahead of the
// client's own instructions.
const HandoffFocus = "Write the summary as a handoff document for whoever continues this work without the conversation: the goal, what was done and decided, the current state (files, commands, results), open problems and the next steps."

// Handoff replaces the history before the kept recent messages with a
// handoff document written by the model (oh-my-pi's handoff): a compaction
// whose summary is asked to be such a document, with customInstructions
// added. It is refused while a run goes on, and when there is nothing to
// hand off.
func (s *Session) Handoff(customInstructions string) (*CompactResult, error) {
	if s.IsStreaming() {
		return nil, errors.New("Cannot hand off while a response is in progress")
	}
	focus := HandoffFocus
	if c := strings.TrimSpace(customInstructions); c != "" {
		focus += " " + c
	}
	if !s.sessionBefore("compact", map[string]any{"customInstructions": focus}) {
		return nil, ErrCancelled
	}
	res, err := s.compact(context.Background(), ReasonManual, focus, false)
	switch {
	case errors.Is(err, compaction.ErrNothingToCompact):
		return nil, errors.New("Nothing to hand off (no messages yet)")
	case errors.Is(err, compaction.ErrAlreadyCompacted):
		return nil, errors.New("Nothing to hand off (already compacted)")
	}
	return res, err
}
