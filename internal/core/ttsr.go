package core

import (
	"encoding/json"
	"sync"

	"github.com/pisces-agent/pisces/internal/ai"
	"github.com/pisces-agent/pisces/internal/jsonx"
	"github.com/pisces-agent/pisces/internal/resources"
	"github.com/pisces-agent/pisces/internal/session"
	"github.com/pisces-agent/pisces/rpc"
)

// Stream rules ("time-traveling stream rules" in the pisces fork): a
// rule with a condition watches the model's streamed text, thinking and
// tool-call arguments; when it matches, the stream is interrupted, the
// rule's content is added as a hidden message, and the turn goes on.

// ttsrCustomType marks the hidden message carrying an injected rule.
const ttsrCustomType = "ttsr-injection"

type ttsrState struct {
	mu      sync.Mutex
	matcher *resources.Matcher
	fired   []resources.Trigger
	later   []*resources.Rule // rules that fired without interrupting
}

// newTTSR builds the matcher for the session's stream rules (nil when there
// are none or the feature is off), restoring which rules were injected.
func (s *Session) newTTSR() *ttsrState {
	set := s.resourceSet()
	if set == nil {
		return nil
	}
	rules := set.Rules.Stream()
	cfg := resources.TTSRSettingsFrom(s.opts.Settings)
	if len(rules) == 0 || !cfg.Enabled {
		return nil
	}
	var state resources.InjectedState
	for _, e := range s.Store().Entries() {
		if e.Type == session.TypeCustom {
			state.ApplyEntry(e.CustomType, e.Data)
		}
	}
	return &ttsrState{matcher: resources.NewMatcher(rules, cfg, state)}
}

// watch feeds one streamed event; true interrupts the stream.
func (t *ttsrState) watch(ev ai.AssistantEvent, toolNames map[int]string) bool {
	var d resources.Delta
	switch ev.Type {
	case ai.EvTextDelta:
		d = resources.Delta{Kind: resources.StreamText, Index: ev.ContentIndex, Text: ev.Delta}
	case ai.EvThinkingDelta:
		d = resources.Delta{Kind: resources.StreamThinking, Index: ev.ContentIndex, Text: ev.Delta}
	case ai.EvToolCallStart:
		toolNames[ev.ContentIndex] = ev.ToolName
		return false
	case ai.EvToolCallDelta:
		d = resources.Delta{Kind: resources.StreamToolCall, Index: ev.ContentIndex, ToolName: toolNames[ev.ContentIndex], Text: ev.Delta}
	default:
		return false
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	interrupt := false
	for _, tr := range t.matcher.Feed(d) {
		if tr.Interrupt {
			t.fired = append(t.fired, tr)
			interrupt = true
		} else {
			t.later = append(t.later, tr.Rule)
		}
	}
	return interrupt
}

// afterTurn injects the rules that fired without interrupting (their
// interruptMode kept the stream going) once the turn is complete.
func (s *Session) ttsrAfterTurn(t *ttsrState) []ai.Message {
	t.mu.Lock()
	rules := t.later
	t.later = nil
	state := t.matcher.State()
	t.mu.Unlock()
	if len(rules) == 0 {
		return nil
	}
	return s.ttsrInject(rules, state)
}

// interrupted emits ttsr_triggered, records the injection and returns the
// hidden message carrying the rules; discard says whether the interrupted
// answer leaves the context (ttsr.contextMode).
func (s *Session) ttsrInterrupted(t *ttsrState, partial *ai.AssistantMessage) ([]ai.Message, bool) {
	t.mu.Lock()
	rules := resources.TriggerRules(t.fired)
	t.fired = nil
	state := t.matcher.State()
	discard := t.matcher.Settings().ContextMode != resources.ContextKeep
	t.mu.Unlock()
	if len(rules) == 0 {
		return nil, false
	}
	if discard {
		s.hideFailed(partial)
	}
	return s.ttsrInject(rules, state), discard
}

// ttsrInject announces fired rules, records them as injected and returns
// the hidden message carrying them.
func (s *Session) ttsrInject(rules []*resources.Rule, state resources.InjectedState) []ai.Message {
	s.emit(&rpc.TTSRTriggeredEvent{Rules: jsonx.MustMarshal(rules)})
	st := s.Store()
	if e, err := st.AppendCustom(resources.InjectedCustomType, json.RawMessage(jsonx.MustMarshal(state))); err == nil {
		s.emit(&rpc.EntryAppendedEvent{Entry: json.RawMessage(e.Raw)})
	}
	msg := &ai.CustomMessage{
		Role: ai.RoleCustom, CustomType: ttsrCustomType,
		Content: ai.StringContent(resources.InterruptionText(rules...)),
		Display: false, Details: json.RawMessage(jsonx.MustMarshal(resources.Details(rules...))),
		Timestamp: ai.NowMs(),
	}
	return []ai.Message{msg}
}
