package rpc

import (
	"encoding/json"
	"reflect"
	"strconv"

	"github.com/pisces-agent/pisces/internal/ai"
	"github.com/pisces-agent/pisces/internal/jsonx"
)

// Message types shared with the session store and the agent loop.
type (
	Message                  = ai.Message
	Messages                 = ai.Messages
	Content                  = ai.Content
	UserContent              = ai.UserContent
	Usage                    = ai.Usage
	Cost                     = ai.Cost
	Model                    = ai.Model
	SystemMessage            = ai.SystemMessage
	UserMessage              = ai.UserMessage
	AssistantMessage         = ai.AssistantMessage
	ToolResultMessage        = ai.ToolResultMessage
	BashExecutionMessage     = ai.BashExecutionMessage
	CustomMessage            = ai.CustomMessage
	BranchSummaryMessage     = ai.BranchSummaryMessage
	CompactionSummaryMessage = ai.CompactionSummaryMessage
	AssistantMessageEvent    = ai.AssistantEvent
)

// Event is anything written on stdout that is not a response.
type Event interface {
	EventType() string
}

// SetType fills the Type member of an event struct from EventType, so that
// emitters cannot forget it. ev must be a pointer to a struct whose first
// field is Type.
func SetType(ev Event) {
	v := reflect.ValueOf(ev)
	if v.Kind() != reflect.Pointer || v.Elem().Kind() != reflect.Struct {
		return
	}
	f := v.Elem().Field(0)
	if f.Kind() == reflect.String && f.CanSet() && f.String() == "" {
		f.SetString(ev.EventType())
	}
}

// Event type names.
const (
	EventReady                = "ready"
	EventAgentStart           = "agent_start"
	EventAgentEnd             = "agent_end"
	EventAgentSettled         = "agent_settled"
	EventTurnStart            = "turn_start"
	EventTurnEnd              = "turn_end"
	EventMessageStart         = "message_start"
	EventMessageUpdate        = "message_update"
	EventMessageEnd           = "message_end"
	EventToolExecutionStart   = "tool_execution_start"
	EventToolExecutionUpdate  = "tool_execution_update"
	EventToolExecutionEnd     = "tool_execution_end"
	EventQueueUpdate          = "queue_update"
	EventQueueChanged         = "queue_changed"
	EventSessionChanged       = "session_changed"
	EventCompactionStart      = "compaction_start"
	EventCompactionEnd        = "compaction_end"
	EventAutoCompactionStart  = "auto_compaction_start"
	EventAutoCompactionEnd    = "auto_compaction_end"
	EventAutoRetryStart       = "auto_retry_start"
	EventAutoRetryEnd         = "auto_retry_end"
	EventBashExecutionUpdate  = "bash_execution_update"
	EventEntryAppended        = "entry_appended"
	EventSessionInfoChanged   = "session_info_changed"
	EventThinkingLevelChanged = "thinking_level_changed"
	EventExtensionError       = "extension_error"
	EventHookError            = "hook_error"
	EventTTSRTriggered        = "ttsr_triggered"

	EventSummarizationRetryScheduled    = "summarization_retry_scheduled"
	EventSummarizationRetryAttemptStart = "summarization_retry_attempt_start"
	EventSummarizationRetryFinished     = "summarization_retry_finished"
)

// Sources of summarization_retry_attempt_start.
const (
	SummarySourceCompaction    = "compaction"
	SummarySourceBranchSummary = "branchSummary"
)

// ReadyEvent is the first line of RPC mode.
// On stdio it advertises protocol v2 (oh-my-pi's wire, negotiated with
// negotiate_protocol); pi's clients ignore the extra members.
type ReadyEvent struct {
	Type                      string `json:"type"`
	ProtocolVersion           int    `json:"protocolVersion,omitempty"`
	SupportedProtocolVersions []int  `json:"supportedProtocolVersions,omitempty"`
	MaxFrameBytes             int    `json:"maxFrameBytes,omitempty"`
	MaxReassembledFrameBytes  int    `json:"maxReassembledFrameBytes,omitempty"`
}

// AgentStartEvent opens a run.
type AgentStartEvent struct {
	Type string `json:"type"`
}

// AgentEndEvent closes a run with the messages it produced.
type AgentEndEvent struct {
	Type      string      `json:"type"`
	Messages  ai.Messages `json:"messages"`
	WillRetry bool        `json:"willRetry"`
	// MessageCount (oh-my-pi's wire, protocol v2) is set when a frame over
	// 1 MiB was shortened: Messages then leaves out the run's first
	// messages, those already sent in message_end, and MessageCount is the
	// run's whole count.
	MessageCount *int `json:"messageCount,omitempty"`
}

// AgentSettledEvent says nothing more is pending (retry, compaction, queue).
type AgentSettledEvent struct {
	Type    string `json:"type"`
	Aborted bool   `json:"aborted"`
}

// TurnStartEvent opens one model turn.
type TurnStartEvent struct {
	Type string `json:"type"`
}

// TurnEndEvent closes a turn with its assistant message and tool results.
type TurnEndEvent struct {
	Type        string                  `json:"type"`
	Message     ai.Message              `json:"message"`
	ToolResults []*ai.ToolResultMessage `json:"toolResults"`
}

// MarshalJSON writes toolResults as [] when empty.
func (e TurnEndEvent) MarshalJSON() ([]byte, error) {
	type alias TurnEndEvent
	if e.ToolResults == nil {
		e.ToolResults = []*ai.ToolResultMessage{}
	}
	return jsonx.Marshal(alias(e))
}

// MessageStartEvent announces a message.
type MessageStartEvent struct {
	Type    string     `json:"type"`
	Message ai.Message `json:"message"`
}

// MessageEndEvent finishes a message; its message is authoritative.
type MessageEndEvent struct {
	Type    string     `json:"type"`
	Message ai.Message `json:"message"`
}

// MessageUpdateEvent carries one streaming step of an assistant message.
// On pi 1.5's wire it is {type, usage, assistantMessageEvent}; with Legacy
// set it is the older {type, message, assistantMessageEvent{..., partial}}
// with point-in-time snapshots.
type MessageUpdateEvent struct {
	Type string
	// Usage is the message's usage as it stands at this event (nil is
	// written as zero usage). It is shared with other events and must not
	// be modified.
	Usage                 *ai.Usage
	AssistantMessageEvent ai.AssistantEvent
	// Legacy wire only: the message as it stands at this event.
	Partial *ai.AssistantMessage
	Legacy  bool
}

// MarshalJSON writes the event in the selected wire form (see appendJSON).
func (e MessageUpdateEvent) MarshalJSON() ([]byte, error) {
	ev := &e.AssistantMessageEvent
	return e.appendJSON(make([]byte, 0, 256+len(ev.Delta)+len(ev.Content)))
}

// appendJSON appends the event in the selected wire form to dst. The fast
// path appends the members with the hand-written encoders of internal/ai; a
// value they cannot write takes the reflective path (same bytes, same
// errors).
func (e *MessageUpdateEvent) appendJSON(dst []byte) ([]byte, error) {
	n := len(dst)
	if b, err := e.appendFast(dst); err == nil {
		return b, nil
	}
	b, err := e.marshalReflect()
	if err != nil {
		return dst[:n], err
	}
	return append(dst[:n], b...), nil
}

func (e *MessageUpdateEvent) appendFast(b []byte) ([]byte, error) {
	ev := &e.AssistantMessageEvent
	b = append(b, `{"type":"message_update",`...)
	var err error
	if e.Legacy {
		b = append(b, `"message":`...)
		if e.Partial == nil {
			b = append(b, "null"...)
		} else {
			b, err = e.Partial.AppendJSON(b)
		}
		if err == nil {
			b = append(b, `,"assistantMessageEvent":`...)
			b, err = ev.AppendWireJSON(b, e.Partial)
		}
	} else {
		b = append(b, `"usage":`...)
		if b, err = e.usage().AppendJSON(b); err == nil {
			b = append(b, `,"assistantMessageEvent":`...)
			b, err = ev.AppendWireJSON(b, nil)
		}
	}
	if err != nil {
		return nil, err
	}
	return append(b, '}'), nil
}

func (e *MessageUpdateEvent) marshalReflect() ([]byte, error) {
	if e.Legacy {
		ame, err := e.AssistantMessageEvent.WireJSON(e.Partial)
		if err != nil {
			return nil, err
		}
		return jsonx.Marshal(struct {
			Type                  string               `json:"type"`
			Message               *ai.AssistantMessage `json:"message"`
			AssistantMessageEvent json.RawMessage      `json:"assistantMessageEvent"`
		}{EventMessageUpdate, e.Partial, ame})
	}
	ame, err := e.AssistantMessageEvent.WireJSON(nil)
	if err != nil {
		return nil, err
	}
	return jsonx.Marshal(struct {
		Type                  string          `json:"type"`
		Usage                 ai.Usage        `json:"usage"`
		AssistantMessageEvent json.RawMessage `json:"assistantMessageEvent"`
	}{EventMessageUpdate, *e.usage(), ame})
}

var zeroUsage ai.Usage

func (e *MessageUpdateEvent) usage() *ai.Usage {
	if e.Usage == nil {
		return &zeroUsage
	}
	return e.Usage
}

// ToolResultPayload is a tool's result as events carry it.
type ToolResultPayload struct {
	Content []ai.Content    `json:"content"`
	Details json.RawMessage `json:"details,omitempty"`
	// StructuredContent is an MCP tool's structured result (pi 1.5).
	StructuredContent json.RawMessage `json:"structuredContent,omitempty"`
}

// MarshalJSON writes content as [] when empty.
func (p ToolResultPayload) MarshalJSON() ([]byte, error) {
	type alias ToolResultPayload
	if p.Content == nil {
		p.Content = []ai.Content{}
	}
	return jsonx.Marshal(alias(p))
}

// ToolExecutionStartEvent announces a tool call.
type ToolExecutionStartEvent struct {
	Type       string          `json:"type"`
	ToolCallID string          `json:"toolCallId"`
	ToolName   string          `json:"toolName"`
	Args       json.RawMessage `json:"args"`
	// ParentToolCallID is set on a call another tool (codemode) made.
	ParentToolCallID string `json:"parentToolCallId,omitempty"`
}

// ToolExecutionUpdateEvent carries the accumulated partial result.
type ToolExecutionUpdateEvent struct {
	Type          string            `json:"type"`
	ToolCallID    string            `json:"toolCallId"`
	ToolName      string            `json:"toolName"`
	Args          json.RawMessage   `json:"args"`
	PartialResult ToolResultPayload `json:"partialResult"`
}

// ToolExecutionEndEvent carries the final result.
type ToolExecutionEndEvent struct {
	Type       string            `json:"type"`
	ToolCallID string            `json:"toolCallId"`
	ToolName   string            `json:"toolName"`
	Result     ToolResultPayload `json:"result"`
	IsError    bool              `json:"isError"`
	DurationMs *int64            `json:"durationMs,omitempty"`
	// ParentToolCallID is set on a call another tool (codemode) made.
	ParentToolCallID string `json:"parentToolCallId,omitempty"`
}

// QueueUpdateEvent lists the queued steering and follow-up texts.
type QueueUpdateEvent struct {
	Type     string   `json:"type"`
	Steering []string `json:"steering"`
	FollowUp []string `json:"followUp"`
}

// QueueChangedEvent reports the number of queued messages.
type QueueChangedEvent struct {
	Type                string `json:"type"`
	PendingMessageCount int    `json:"pendingMessageCount"`
}

// SessionChangedEvent follows new, switch, fork, clone, tree and reload.
type SessionChangedEvent struct {
	Type         string  `json:"type"`
	Reason       string  `json:"reason"`
	SessionID    string  `json:"sessionId"`
	SessionFile  string  `json:"sessionFile,omitempty"`
	SessionName  string  `json:"sessionName,omitempty"`
	MessageCount int     `json:"messageCount"`
	LeafID       *string `json:"leafId"`
}

// AutoRetryStartEvent announces a retry after a failed model call.
type AutoRetryStartEvent struct {
	Type         string `json:"type"`
	Attempt      int    `json:"attempt"`
	MaxAttempts  int    `json:"maxAttempts"`
	DelayMs      int64  `json:"delayMs"`
	ErrorMessage string `json:"errorMessage"`
}

// AutoRetryEndEvent ends a retry sequence.
type AutoRetryEndEvent struct {
	Type       string `json:"type"`
	Success    bool   `json:"success"`
	Attempt    int    `json:"attempt"`
	FinalError string `json:"finalError,omitempty"`
}

// SummarizationRetryScheduledEvent announces that a summary model call (of
// a compaction or a branch summary) failed with a transient error and will
// be made again after DelayMs.
type SummarizationRetryScheduledEvent struct {
	Type         string `json:"type"`
	Attempt      int    `json:"attempt"`
	MaxAttempts  int    `json:"maxAttempts"`
	DelayMs      int64  `json:"delayMs"`
	ErrorMessage string `json:"errorMessage"`
}

// SummarizationRetryAttemptStartEvent announces the retried summary call:
// Source "compaction" with the compaction's Reason, or "branchSummary"
// (no reason).
type SummarizationRetryAttemptStartEvent struct {
	Type   string `json:"type"`
	Source string `json:"source"`
	Reason string `json:"reason,omitempty"`
}

// SummarizationRetryFinishedEvent ends the retries of a summary call,
// whether it finally succeeded, failed or was aborted.
type SummarizationRetryFinishedEvent struct {
	Type string `json:"type"`
}

// CompactionStartEvent announces a compaction (auto_compaction_start on the
// legacy wire).
type CompactionStartEvent struct {
	Type   string `json:"type"`
	Reason string `json:"reason"`
}

// CompactionEndEvent ends a compaction.
type CompactionEndEvent struct {
	Type         string          `json:"type"`
	Reason       string          `json:"reason"`
	Result       json.RawMessage `json:"result,omitempty"`
	Aborted      bool            `json:"aborted"`
	WillRetry    bool            `json:"willRetry"`
	ErrorMessage string          `json:"errorMessage,omitempty"`
}

// BashExecutionUpdateEvent streams the output of the RPC bash command.
type BashExecutionUpdateEvent struct {
	Type  string `json:"type"`
	ID    string `json:"id,omitempty"`
	Delta string `json:"delta"`
}

// EntryAppendedEvent reports a session entry written outside the message flow.
type EntryAppendedEvent struct {
	Type  string          `json:"type"`
	Entry json.RawMessage `json:"entry"`
}

// SessionInfoChangedEvent reports a new session name.
type SessionInfoChangedEvent struct {
	Type string `json:"type"`
	Name string `json:"name,omitempty"`
}

// ThinkingLevelChangedEvent reports a new thinking level.
type ThinkingLevelChangedEvent struct {
	Type  string `json:"type"`
	Level string `json:"level"`
	// ThinkingLevel repeats Level on oh-my-pi's wire (its name there).
	ThinkingLevel string `json:"thinkingLevel,omitempty"`
}

// ExtensionErrorEvent reports a failing extension (hook_error on the legacy
// wire, with hookPath).
type ExtensionErrorEvent struct {
	Type          string `json:"type"`
	ExtensionPath string `json:"extensionPath"`
	Event         string `json:"event"`
	Error         string `json:"error"`
}

// TTSRTriggeredEvent reports stream rules that fired: the stream was
// interrupted and the rules' content was added as a hidden message. Rules
// are the rule objects as the pisces implementation sends them.
type TTSRTriggeredEvent struct {
	Type  string          `json:"type"`
	Rules json.RawMessage `json:"rules"`
}

func (*TTSRTriggeredEvent) EventType() string        { return EventTTSRTriggered }
func (*ReadyEvent) EventType() string                { return EventReady }
func (*AgentStartEvent) EventType() string           { return EventAgentStart }
func (*AgentEndEvent) EventType() string             { return EventAgentEnd }
func (*AgentSettledEvent) EventType() string         { return EventAgentSettled }
func (*TurnStartEvent) EventType() string            { return EventTurnStart }
func (*TurnEndEvent) EventType() string              { return EventTurnEnd }
func (*MessageStartEvent) EventType() string         { return EventMessageStart }
func (*MessageUpdateEvent) EventType() string        { return EventMessageUpdate }
func (*MessageEndEvent) EventType() string           { return EventMessageEnd }
func (*ToolExecutionStartEvent) EventType() string   { return EventToolExecutionStart }
func (*ToolExecutionUpdateEvent) EventType() string  { return EventToolExecutionUpdate }
func (*ToolExecutionEndEvent) EventType() string     { return EventToolExecutionEnd }
func (*QueueUpdateEvent) EventType() string          { return EventQueueUpdate }
func (*QueueChangedEvent) EventType() string         { return EventQueueChanged }
func (*SessionChangedEvent) EventType() string       { return EventSessionChanged }
func (*AutoRetryStartEvent) EventType() string       { return EventAutoRetryStart }
func (*AutoRetryEndEvent) EventType() string         { return EventAutoRetryEnd }
func (*CompactionStartEvent) EventType() string      { return EventCompactionStart }
func (*CompactionEndEvent) EventType() string        { return EventCompactionEnd }
func (*BashExecutionUpdateEvent) EventType() string  { return EventBashExecutionUpdate }
func (*EntryAppendedEvent) EventType() string        { return EventEntryAppended }
func (*SessionInfoChangedEvent) EventType() string   { return EventSessionInfoChanged }
func (*ThinkingLevelChangedEvent) EventType() string { return EventThinkingLevelChanged }
func (*ExtensionErrorEvent) EventType() string       { return EventExtensionError }
func (*SummarizationRetryScheduledEvent) EventType() string {
	return EventSummarizationRetryScheduled
}
func (*SummarizationRetryAttemptStartEvent) EventType() string {
	return EventSummarizationRetryAttemptStart
}
func (*SummarizationRetryFinishedEvent) EventType() string { return EventSummarizationRetryFinished }

// EncodeEvent writes an event as one JSON object (no newline).
func EncodeEvent(ev Event) ([]byte, error) {
	switch ev.(type) {
	case *MessageStartEvent, *MessageEndEvent, *TurnEndEvent, *AgentEndEvent:
		return AppendEvent(nil, ev)
	}
	SetType(ev)
	return jsonx.Marshal(ev)
}

// AppendEvent appends what EncodeEvent returns to dst. message_update (the
// event of every streamed delta), message_start, message_end, turn_end and
// agent_end (which carry whole messages) are written by hand-written
// encoders into dst's spare capacity; a value those cannot write takes the
// reflective path, with the same bytes or error.
func AppendEvent(dst []byte, ev Event) ([]byte, error) {
	SetType(ev)
	switch e := ev.(type) {
	case *MessageUpdateEvent:
		if e != nil {
			return jsonx.AppendWith(dst, ev, e.appendJSON)
		}
	case *MessageStartEvent:
		if e != nil {
			return jsonx.AppendWith(dst, ev, e.appendJSON)
		}
	case *MessageEndEvent:
		if e != nil {
			return jsonx.AppendWith(dst, ev, e.appendJSON)
		}
	case *TurnEndEvent:
		if e != nil {
			return jsonx.AppendWith(dst, ev, e.appendJSON)
		}
	case *AgentEndEvent:
		if e != nil {
			return jsonx.AppendWith(dst, ev, e.appendJSON)
		}
	}
	b, err := jsonx.Marshal(ev)
	if err != nil {
		return dst, err
	}
	return append(dst, b...), nil
}

// appendMessageEvent appends {"type":typ,"message":m}, the form of
// message_start and message_end.
func appendMessageEvent(b []byte, typ string, m ai.Message) ([]byte, error) {
	b = append(b, `{"type":`...)
	b = jsonx.AppendString(b, typ)
	b = append(b, `,"message":`...)
	b, err := ai.AppendMessage(b, m)
	if err != nil {
		return nil, err
	}
	return append(b, '}'), nil
}

func (e *MessageStartEvent) appendJSON(b []byte) ([]byte, error) {
	return appendMessageEvent(b, e.Type, e.Message)
}

func (e *MessageEndEvent) appendJSON(b []byte) ([]byte, error) {
	return appendMessageEvent(b, e.Type, e.Message)
}

func (e *TurnEndEvent) appendJSON(b []byte) ([]byte, error) {
	b, err := appendMessageEvent(b, e.Type, e.Message)
	if err != nil {
		return nil, err
	}
	b = append(b[:len(b)-1], `,"toolResults":[`...)
	for i, tr := range e.ToolResults {
		if i > 0 {
			b = append(b, ',')
		}
		if tr == nil {
			b = append(b, "null"...)
			continue
		}
		r, err := jsonx.Marshal(tr)
		if err != nil {
			return nil, err
		}
		b = append(b, r...)
	}
	return append(b, "]}"...), nil
}

func (e *AgentEndEvent) appendJSON(b []byte) ([]byte, error) {
	b = append(b, `{"type":`...)
	b = jsonx.AppendString(b, e.Type)
	b = append(b, `,"messages":`...)
	b, err := ai.AppendMessages(b, e.Messages)
	if err != nil {
		return nil, err
	}
	b = append(b, `,"willRetry":`...)
	b = jsonx.AppendBool(b, e.WillRetry)
	if e.MessageCount != nil {
		b = append(b, `,"messageCount":`...)
		b = strconv.AppendInt(b, int64(*e.MessageCount), 10)
	}
	return append(b, '}'), nil
}

// Marshal encodes a protocol value as JSON.stringify would.
func Marshal(v any) ([]byte, error) { return jsonx.Marshal(v) }
