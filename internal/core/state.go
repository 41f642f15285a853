package core

import (
	"encoding/json"
	"fmt"
	"strings"

	"github.com/pisces-agent/pisces/internal/agent"
	"github.com/pisces-agent/pisces/internal/ai"
	"github.com/pisces-agent/pisces/internal/jsonx"
	"github.com/pisces-agent/pisces/internal/models"
	"github.com/pisces-agent/pisces/internal/session"
	"github.com/pisces-agent/pisces/internal/settings"
	"github.com/pisces-agent/pisces/rpc"
)

// State is a snapshot of the session for get_state.
type State struct {
	Model               *ai.Model
	ThinkingLevel       string
	IsStreaming         bool
	IsCompacting        bool
	SteeringMode        string
	FollowUpMode        string
	InterruptMode       string
	SessionFile         string
	SessionID           string
	SessionName         string
	AutoCompaction      bool
	AutoRetry           bool
	MessageCount        int
	PendingMessageCount int
}

// State returns the current state.
func (s *Session) State() State {
	s.mu.Lock()
	st := State{
		Model:               s.model,
		ThinkingLevel:       s.thinking,
		IsStreaming:         s.run != nil,
		IsCompacting:        s.compacting > 0,
		SteeringMode:        s.steeringMode,
		FollowUpMode:        s.followUpMode,
		InterruptMode:       s.interruptMode,
		AutoCompaction:      s.autoCompact,
		AutoRetry:           s.autoRetry,
		PendingMessageCount: len(s.steering) + len(s.followUp),
	}
	store := s.store
	s.mu.Unlock()
	st.SessionFile = store.File()
	st.SessionID = store.ID()
	st.SessionName = store.Name()
	st.MessageCount = store.Info().MessageCount
	return st
}

// Messages returns the current context messages (the leaf path after
// compaction), as get_messages answers.
func (s *Session) Messages() []ai.Message {
	return s.Store().BuildContext().Messages
}

// SetModel switches to provider/id among the available models.
func (s *Session) SetModel(provider, id string) (*ai.Model, error) {
	m, ok := s.opts.Models.Find(provider, id)
	if !ok {
		return nil, fmt.Errorf("Model not found: %s/%s", provider, id)
	}
	if _, ok := s.opts.Models.Key(provider); !ok && s.opts.APIKey == "" {
		return nil, fmt.Errorf("No API key for %s/%s", provider, id)
	}
	s.applyModel(m)
	return m, nil
}

// applyModel records a model change and re-clamps the thinking level.
func (s *Session) applyModel(m *ai.Model) {
	s.mu.Lock()
	s.model = m
	old := s.thinking
	s.thinking = models.Clamp(m, s.thinking)
	level := s.thinking
	store := s.store
	s.mu.Unlock()
	if _, err := store.AppendModelChange(m.Provider, m.ID); err != nil {
		s.logf("cannot write model_change: %v", err)
	}
	if level != old {
		if _, err := store.AppendThinkingLevelChange(level); err != nil {
			s.logf("cannot write thinking_level_change: %v", err)
		}
		s.emit(&rpc.ThinkingLevelChangedEvent{Level: level})
	}
}

// CycleModel moves to the next model of the scope (--models) or of all
// available models. It returns nil when there is at most one.
func (s *Session) CycleModel() (m *ai.Model, level string, scoped bool) {
	list := s.opts.ScopedModels
	scoped = len(list) > 0
	if !scoped {
		list = s.opts.Models.Available()
	}
	if len(list) <= 1 {
		return nil, "", scoped
	}
	cur := s.Model()
	next := list[0]
	for i, c := range list {
		if cur != nil && c.Provider == cur.Provider && c.ID == cur.ID {
			next = list[(i+1)%len(list)]
			break
		}
	}
	s.applyModel(next)
	return next, s.ThinkingLevel(), scoped
}

// SetThinkingLevel sets the level, clamped to the model. A
// thinking_level_change entry is written only when the level changes.
func (s *Session) SetThinkingLevel(level string) (string, error) {
	if !models.ValidThinkingLevel(level) {
		return "", fmt.Errorf("Invalid thinking level %q: expected one of %s", level, strings.Join(models.ThinkingLevels, ", "))
	}
	s.mu.Lock()
	level = models.Clamp(s.model, level)
	changed := level != s.thinking
	s.thinking = level
	store := s.store
	s.mu.Unlock()
	if changed {
		if _, err := store.AppendThinkingLevelChange(level); err != nil {
			s.logf("cannot write thinking_level_change: %v", err)
		}
	}
	s.emit(&rpc.ThinkingLevelChangedEvent{Level: level})
	return level, nil
}

// CycleThinkingLevel moves to the next supported level; "" when the model
// has no reasoning.
func (s *Session) CycleThinkingLevel() string {
	s.mu.Lock()
	m, cur := s.model, s.thinking
	s.mu.Unlock()
	if m == nil || !m.Reasoning {
		return ""
	}
	levels := models.LevelsFor(m)
	next := levels[0]
	for i, l := range levels {
		if l == cur {
			next = levels[(i+1)%len(levels)]
		}
	}
	l, _ := s.SetThinkingLevel(next)
	return l
}

// AvailableThinkingLevels lists the levels of the current model.
func (s *Session) AvailableThinkingLevels() []string { return models.LevelsFor(s.Model()) }

func validQueueMode(mode string) error {
	if mode != QueueAll && mode != QueueOneAtATime {
		return fmt.Errorf("Invalid mode %q: expected \"all\" or \"one-at-a-time\"", mode)
	}
	return nil
}

// SetSteeringMode sets how many steering messages a turn takes.
func (s *Session) SetSteeringMode(mode string) error {
	if err := validQueueMode(mode); err != nil {
		return err
	}
	s.mu.Lock()
	s.steeringMode = mode
	s.mu.Unlock()
	return s.persistSetting("steeringMode", mode)
}

// SetFollowUpMode sets how many follow-ups a turn takes.
func (s *Session) SetFollowUpMode(mode string) error {
	if err := validQueueMode(mode); err != nil {
		return err
	}
	s.mu.Lock()
	s.followUpMode = mode
	s.mu.Unlock()
	return s.persistSetting("followUpMode", mode)
}

// SetInterruptMode sets how steering meets a running tool batch. The mode
// belongs to the session: it is recorded in the session file (not in
// settings.json) and comes back when the session is opened again.
func (s *Session) SetInterruptMode(mode string) error {
	if !validInterruptMode(mode) {
		return fmt.Errorf("Invalid mode %q: expected \"immediate\" or \"wait\"", mode)
	}
	s.mu.Lock()
	changed := mode != s.interruptMode
	s.interruptMode = mode
	store := s.store
	s.mu.Unlock()
	if changed {
		return s.recordInterruptMode(store, mode, true)
	}
	return nil
}

func validInterruptMode(m string) bool {
	return m == agent.InterruptImmediate || m == agent.InterruptWait
}

// interruptModeCustomType is the custom entry that records a session's
// interrupt mode: {"type":"custom","customType":"pisces.interrupt-mode",
// "data":{"mode":"wait"},…}. The latest one in the file wins.
const interruptModeCustomType = "pisces.interrupt-mode"

type interruptModeData struct {
	Mode string `json:"mode"`
}

// storedInterruptMode is the interrupt mode recorded in a session file.
func storedInterruptMode(st *session.Session) (string, bool) {
	entries := st.Entries()
	for i := len(entries) - 1; i >= 0; i-- {
		e := entries[i]
		if e.Type != session.TypeCustom || e.CustomType != interruptModeCustomType {
			continue
		}
		var d interruptModeData
		if json.Unmarshal(e.Data, &d) == nil && validInterruptMode(d.Mode) {
			return d.Mode, true
		}
	}
	return "", false
}

// sessionInterruptMode is the mode a session file starts with: the one it
// records, else the settings' interruptMode (default immediate).
func (s *Session) sessionInterruptMode(st *session.Session) string {
	if m, ok := storedInterruptMode(st); ok {
		return m
	}
	return s.opts.Settings.InterruptMode()
}

// recordInterruptMode appends the mode's custom entry, announced with
// entry_appended when announce is set (a change on the current session; a
// session being set up records it silently, as its other setup entries).
func (s *Session) recordInterruptMode(st *session.Session, mode string, announce bool) error {
	e, err := st.AppendCustom(interruptModeCustomType, json.RawMessage(jsonx.MustMarshal(interruptModeData{Mode: mode})))
	if err != nil {
		return fmt.Errorf("the interrupt mode is in force but could not be saved: %v", err)
	}
	if announce {
		s.emit(&rpc.EntryAppendedEvent{Entry: json.RawMessage(e.Raw)})
	}
	return nil
}

// keepInterruptMode carries the current interrupt mode into a session made
// from the current one (fork, clone), recording it when the new file would
// otherwise start with another.
func (s *Session) keepInterruptMode(st *session.Session) {
	s.mu.Lock()
	mode := s.interruptMode
	s.mu.Unlock()
	if s.sessionInterruptMode(st) != mode {
		if err := s.recordInterruptMode(st, mode, false); err != nil {
			s.logf("%v", err)
		}
	}
}

// SetAutoCompaction turns automatic compaction on or off.
func (s *Session) SetAutoCompaction(on bool) error {
	s.mu.Lock()
	s.autoCompact = on
	s.mu.Unlock()
	return s.persistSetting("compaction.enabled", on)
}

// SetAutoRetry turns automatic retry on or off.
func (s *Session) SetAutoRetry(on bool) error {
	s.mu.Lock()
	s.autoRetry = on
	s.mu.Unlock()
	return s.persistSetting("retry.enabled", on)
}

// persistSetting writes a setting to the global settings file, as pi 1.5
// does for the queue modes and the compaction and retry switches (the model
// and the thinking level are recorded in the session only). The change is
// in force even when the file cannot be written; the error says why.
func (s *Session) persistSetting(path string, value any) error {
	if s.opts.AgentDir == "" {
		return nil
	}
	if err := s.opts.Settings.Set(settings.Global, path, value); err != nil {
		return fmt.Errorf("the setting is in force but could not be saved: %v", err)
	}
	return nil
}

// SetSessionName names the session (a session_info entry).
func (s *Session) SetSessionName(name string) error {
	name = strings.TrimSpace(strings.ReplaceAll(strings.ReplaceAll(name, "\r\n", " "), "\n", " "))
	if name == "" {
		return fmt.Errorf("Session name cannot be empty")
	}
	if _, err := s.Store().AppendSessionInfo(name); err != nil {
		return err
	}
	s.emit(&rpc.SessionInfoChangedEvent{Name: name})
	return nil
}

// LastAssistantText returns the joined text of the last assistant message
// that is not an empty abort, trimmed; ok is false when there is none.
func (s *Session) LastAssistantText() (string, bool) {
	msgs := s.Messages()
	for i := len(msgs) - 1; i >= 0; i-- {
		a, isA := msgs[i].(*ai.AssistantMessage)
		if !isA {
			continue
		}
		if a.StopReason == ai.StopAborted && len(a.Content) == 0 {
			continue
		}
		t := strings.TrimSpace(ai.JoinText(a.Content, ""))
		if t == "" {
			return "", false
		}
		return t, true
	}
	return "", false
}

// Stats is get_session_stats.
type Stats struct {
	SessionFile       string
	SessionID         string
	UserMessages      int
	AssistantMessages int
	ToolCalls         int
	ToolResults       int
	TotalMessages     int
	Tokens            ai.Usage
	Cost              float64
}

// Stats aggregates over every entry of the session file (pi v84), usage
// entries included (pi 1.5).
func (s *Session) Stats() Stats {
	store := s.Store()
	st := Stats{SessionFile: store.File(), SessionID: store.ID()}
	entries := store.Entries()
	session.DecodeMessages(entries)
	for _, e := range entries {
		switch e.Type {
		case "message":
			st.TotalMessages++
			switch m := e.Message().(type) {
			case *ai.UserMessage:
				st.UserMessages++
			case *ai.AssistantMessage:
				st.AssistantMessages++
				st.ToolCalls += len(m.ToolCalls())
				st.Tokens.Add(m.Usage)
			case *ai.ToolResultMessage:
				st.ToolResults++
			}
		case "usage":
			if e.Usage != nil {
				st.Tokens.Add(*e.Usage)
			}
		}
	}
	st.Cost = st.Tokens.Cost.Total
	return st
}

func clampFor(m *ai.Model, level string) string { return models.Clamp(m, level) }
