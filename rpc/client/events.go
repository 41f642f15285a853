package client

import (
	"encoding/json"
	"fmt"
	"reflect"

	"github.com/pisces-agent/pisces/internal/ai"
	"github.com/pisces-agent/pisces/rpc"
)

// Event is one line of the server's output that is not the answer to a
// request: its type member and the line itself.
type Event struct {
	Type string
	Raw  json.RawMessage
}

// Decode decodes the event into its struct of package rpc (for example
// *rpc.MessageEndEvent), see DecodeEvent.
func (e Event) Decode() (rpc.Event, error) { return DecodeEvent(e.Raw) }

// Unmarshal decodes the raw line into v with encoding/json.
func (e Event) Unmarshal(v any) error { return json.Unmarshal(e.Raw, v) }

// Message decodes the message member of message_start, message_end and
// turn_end (a *rpc.UserMessage, *rpc.AssistantMessage, ... by its role).
func (e Event) Message() (rpc.Message, error) {
	var w struct {
		Message json.RawMessage `json:"message"`
	}
	if err := json.Unmarshal(e.Raw, &w); err != nil {
		return nil, err
	}
	if len(w.Message) == 0 || string(w.Message) == "null" {
		return nil, fmt.Errorf("pisces rpc: %s event has no message", e.Type)
	}
	return ai.DecodeMessage(w.Message)
}

// DecodeAs decodes e and asserts its type, e.g.
// DecodeAs[*rpc.ToolExecutionEndEvent](ev).
func DecodeAs[T rpc.Event](e Event) (T, error) {
	var zero T
	v, err := e.Decode()
	if err != nil {
		return zero, err
	}
	t, ok := v.(T)
	if !ok {
		return zero, fmt.Errorf("pisces rpc: %s event decodes to %T, not %T", e.Type, v, zero)
	}
	return t, nil
}

// UnknownEvent is an event of a type this package does not know.
type UnknownEvent struct {
	Type string
	Raw  json.RawMessage
}

// EventType returns the event's type member.
func (e *UnknownEvent) EventType() string { return e.Type }

// eventTypes maps event names to their structs.
var eventTypes = func() map[string]reflect.Type {
	m := map[string]reflect.Type{}
	for _, e := range rpc.Events() {
		m[e.Name] = reflect.TypeOf(e.Event).Elem()
	}
	return m
}()

// DecodeEvent decodes one event line into its struct of package rpc.
// Messages are decoded by role (rpc.Message holds a *rpc.UserMessage,
// *rpc.AssistantMessage, ...). message_update is decoded from either wire
// form: on the legacy wire Legacy is set and Partial holds the snapshot.
// auto_compaction_start/end decode into the compaction structs with their
// Type kept; an unknown type gives an *UnknownEvent.
func DecodeEvent(raw []byte) (rpc.Event, error) {
	var head struct {
		Type string `json:"type"`
	}
	if err := json.Unmarshal(raw, &head); err != nil {
		return nil, err
	}
	switch head.Type {
	case rpc.EventMessageStart, rpc.EventMessageEnd:
		var w struct {
			Type    string          `json:"type"`
			Message json.RawMessage `json:"message"`
		}
		if err := json.Unmarshal(raw, &w); err != nil {
			return nil, err
		}
		m, err := decodeMessage(w.Message)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", head.Type, err)
		}
		if head.Type == rpc.EventMessageStart {
			return &rpc.MessageStartEvent{Type: w.Type, Message: m}, nil
		}
		return &rpc.MessageEndEvent{Type: w.Type, Message: m}, nil
	case rpc.EventTurnEnd:
		var w struct {
			Type        string                  `json:"type"`
			Message     json.RawMessage         `json:"message"`
			ToolResults []*ai.ToolResultMessage `json:"toolResults"`
		}
		if err := json.Unmarshal(raw, &w); err != nil {
			return nil, err
		}
		m, err := decodeMessage(w.Message)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", head.Type, err)
		}
		return &rpc.TurnEndEvent{Type: w.Type, Message: m, ToolResults: w.ToolResults}, nil
	case rpc.EventMessageUpdate:
		return decodeMessageUpdate(raw)
	}
	t, ok := eventTypes[head.Type]
	if !ok {
		return &UnknownEvent{Type: head.Type, Raw: append(json.RawMessage(nil), raw...)}, nil
	}
	v := reflect.New(t).Interface().(rpc.Event)
	if err := json.Unmarshal(raw, v); err != nil {
		return nil, fmt.Errorf("%s: %w", head.Type, err)
	}
	return v, nil
}

func decodeMessage(raw json.RawMessage) (ai.Message, error) {
	if len(raw) == 0 || string(raw) == "null" {
		return nil, nil
	}
	return ai.DecodeMessage(raw)
}

// decodeMessageUpdate reads both wire forms of message_update.
func decodeMessageUpdate(raw []byte) (*rpc.MessageUpdateEvent, error) {
	var w struct {
		Type    string               `json:"type"`
		Usage   *ai.Usage            `json:"usage"`
		Message *ai.AssistantMessage `json:"message"`
		AME     struct {
			Type         string               `json:"type"`
			ContentIndex int                  `json:"contentIndex"`
			Delta        string               `json:"delta"`
			Content      string               `json:"content"`
			ToolCall     *ai.Content          `json:"toolCall"`
			ID           string               `json:"id"`
			ToolName     string               `json:"toolName"`
			Reason       string               `json:"reason"`
			Message      *ai.AssistantMessage `json:"message"`
			Error        *ai.AssistantMessage `json:"error"`
			Partial      *ai.AssistantMessage `json:"partial"`
		} `json:"assistantMessageEvent"`
	}
	if err := json.Unmarshal(raw, &w); err != nil {
		return nil, fmt.Errorf("message_update: %w", err)
	}
	var has struct {
		Message json.RawMessage `json:"message"`
	}
	json.Unmarshal(raw, &has)
	ev := &rpc.MessageUpdateEvent{
		Type: w.Type,
		AssistantMessageEvent: ai.AssistantEvent{
			Type:         w.AME.Type,
			ContentIndex: w.AME.ContentIndex,
			Delta:        w.AME.Delta,
			Content:      w.AME.Content,
			ToolCall:     w.AME.ToolCall,
			ID:           w.AME.ID,
			ToolName:     w.AME.ToolName,
			Reason:       w.AME.Reason,
			Message:      w.AME.Message,
		},
		Partial: w.Message,
		Legacy:  len(has.Message) > 0,
	}
	if w.AME.Error != nil {
		ev.AssistantMessageEvent.Message = w.AME.Error
	}
	if ev.Partial == nil {
		ev.Partial = w.AME.Partial
	}
	if w.Usage != nil {
		ev.Usage = w.Usage
	} else if ev.Partial != nil {
		ev.Usage = &ev.Partial.Usage
	} else {
		ev.Usage = &ai.Usage{}
	}
	ev.AssistantMessageEvent.Usage = ev.Usage
	return ev, nil
}

// AssistantText returns the text of the last assistant message among the
// message_end events of events ("" if there is none).
func AssistantText(events []Event) string {
	for i := len(events) - 1; i >= 0; i-- {
		if events[i].Type != rpc.EventMessageEnd {
			continue
		}
		m, err := events[i].Message()
		if err != nil {
			continue
		}
		if am, ok := m.(*ai.AssistantMessage); ok {
			return ai.JoinText(am.Content, "")
		}
	}
	return ""
}
