package core

import (
	"errors"
	"slices"

	"github.com/pisces-agent/pisces/internal/ai"
	"github.com/pisces-agent/pisces/internal/tools"
)

// PromptView returns what the next model call would be given: the system
// prompt, one string per section, and the active tools (MCP tools and
// extension wrappers included).
func (s *Session) PromptView() (sections []string, active []tools.Tool) {
	own, all := s.activeOwnTools()
	active = s.withHooks(append(slices.Clone(own), s.activeMCPTools(all)...))
	text, secs := s.systemPrompt(active)
	for _, sec := range secs {
		if sec.Text != "" {
			sections = append(sections, sec.Text)
		}
	}
	if len(sections) == 0 && text != "" {
		sections = []string{text}
	}
	if sections == nil {
		sections = []string{}
	}
	return sections, active
}

// HasPendingAsyncWork reports work going on or waiting outside a run's
// own model turns: the task tool's subagents, a compaction, queued
// messages.
func (s *Session) HasPendingAsyncWork() bool {
	s.mu.Lock()
	busy := s.compacting > 0 || len(s.steering)+len(s.followUp) > 0
	tt := s.taskTool
	s.mu.Unlock()
	return busy || (tt != nil && tt.Running() > 0)
}

// TokensPerSecond is the output rate of the last assistant message in the
// context: its output tokens over its duration. ok is false when there is
// no such message, it reported no output tokens or its duration is under
// a tenth of a second (too short to measure).
func (s *Session) TokensPerSecond() (rate float64, ok bool) {
	msgs := s.Store().BuildContext().Messages
	for i := len(msgs) - 1; i >= 0; i-- {
		m, isA := msgs[i].(*ai.AssistantMessage)
		if !isA {
			continue
		}
		return OutputRate(m)
	}
	return 0, false
}

// OutputRate is one response's output tokens per second (see
// TokensPerSecond).
func OutputRate(m *ai.AssistantMessage) (float64, bool) {
	if m.Usage.Output <= 0 || m.DurationMs == nil || *m.DurationMs < 100 {
		return 0, false
	}
	return float64(m.Usage.Output) * 1000 / float64(*m.DurationMs), true
}

// ErrNoFastMode refuses fast mode for a model without priority processing.
var ErrNoFastMode = errors.New("Fast mode is unavailable for the current model.")

// FastMode reports whether fast mode is on (enabled) and whether the
// current model's calls ask for priority processing (active). Fast mode is
// kept for the session, not written to the session file.
func (s *Session) FastMode() (enabled, active bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.fastMode, s.fastMode && ai.PriorityCapable(s.model)
}

// SetFastMode turns fast mode on or off: model calls then ask for the
// provider's priority processing (OpenAI's service_tier "priority") when
// the model has it (ai.PriorityCapable); turning it on for a model without
// it is refused (ErrNoFastMode). It applies from the next model call.
func (s *Session) SetFastMode(on bool) (enabled, active bool, err error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if on && !ai.PriorityCapable(s.model) {
		return s.fastMode, false, ErrNoFastMode
	}
	s.fastMode = on
	return on, on && ai.PriorityCapable(s.model), nil
}
