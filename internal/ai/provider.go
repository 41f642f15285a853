package ai

import (
	"context"
	"encoding/json"
	"fmt"
	"net/url"
	"strings"
	"time"

	"github.com/pisces-agent/pisces/internal/jsonx"
)

// ModelCost is a model's price in dollars per million tokens.
type ModelCost struct {
	Input      float64 `json:"input"`
	Output     float64 `json:"output"`
	CacheRead  float64 `json:"cacheRead"`
	CacheWrite float64 `json:"cacheWrite"`
}

// Model describes one model as pi's Model type does (the JSON of get_state,
// set_model and get_available_models).
type Model struct {
	ID            string            `json:"id"`
	Name          string            `json:"name"`
	API           string            `json:"api"`
	Provider      string            `json:"provider"`
	BaseURL       string            `json:"baseUrl"`
	Reasoning     bool              `json:"reasoning"`
	Input         []string          `json:"input"`
	Cost          ModelCost         `json:"cost"`
	ContextWindow int               `json:"contextWindow"`
	MaxTokens     int               `json:"maxTokens"`
	Headers       map[string]string `json:"headers,omitempty"`
	Compat        json.RawMessage   `json:"compat,omitempty"`
	// ThinkingLevels lists the levels above "off" the model supports beyond
	// pi's standard ones ("xhigh", "max"); empty means up to "high".
	ExtraThinkingLevels []string `json:"-"`
}

// CostOf prices a usage with the model's rates.
func (m *Model) CostOf(u Usage) Cost {
	c := Cost{
		Input:      float64(u.Input) * m.Cost.Input / 1e6,
		Output:     float64(u.Output) * m.Cost.Output / 1e6,
		CacheRead:  float64(u.CacheRead) * m.Cost.CacheRead / 1e6,
		CacheWrite: float64(u.CacheWrite) * m.Cost.CacheWrite / 1e6,
	}
	c.Total = c.Input + c.Output + c.CacheRead + c.CacheWrite
	return c
}

// Request is what the agent loop asks of a provider for one model turn.
type Request struct {
	Model         *Model
	SystemPrompt  string
	Messages      []Message // only user, assistant and toolResult (see ConvertToLLM)
	Tools         []ToolSpec
	ThinkingLevel string
	APIKey        string
	// MaxTokens caps the response (0 = the provider's default for the
	// model: min(model.MaxTokens, 32000)).
	MaxTokens int
	// ThinkingBudgets overrides the token budgets of the budget-based
	// thinking levels (settings thinkingBudgets: minimal, low, medium, high).
	ThinkingBudgets map[string]int
	// SessionID identifies the conversation (for providers' prompt caching).
	SessionID string
	// Priority asks for the provider's priority processing (fast mode);
	// only set when PriorityCapable(Model).
	Priority bool
}

// PriorityCapable reports whether requests to m can ask for priority
// processing: OpenAI's own API (service_tier "priority") through the Chat
// Completions or Responses adapter. Other providers and OpenAI-compatible
// servers have no such option Pisces can send.
func PriorityCapable(m *Model) bool {
	if m == nil || (m.API != "openai-completions" && m.API != "openai-responses") {
		return false
	}
	base := strings.TrimSpace(m.BaseURL)
	if base == "" {
		return true // the adapters' default is OpenAI's API
	}
	u, err := url.Parse(base)
	return err == nil && strings.EqualFold(u.Hostname(), "api.openai.com")
}

// ProviderError is a failed request as a provider reports it. Builder.Fail
// copies Status and RetryAfter onto the final message for the retry layer.
type ProviderError struct {
	Status     int           // HTTP status (0: no response, e.g. a cut connection)
	Message    string        // the provider's own message
	RetryAfter time.Duration // from a Retry-After header, when given
}

func (e *ProviderError) Error() string {
	if e.Status != 0 {
		return fmt.Sprintf("%d %s", e.Status, e.Message)
	}
	return e.Message
}

// Provider streams one model response.
//
// Stream must call emit for every event in order: "start" first, then the
// block events, then exactly one final "done" or "error" event whose Message
// is the finished assistant message. When ctx is cancelled the stream ends
// with an "error" event whose reason is "aborted". Stream returns the final
// message (the same one the last event carries).
type Provider interface {
	Stream(ctx context.Context, req *Request, emit func(AssistantEvent)) *AssistantMessage
}

// AssistantEvent is one step of a streamed assistant message
// (pi's AssistantMessageEvent).
type AssistantEvent struct {
	Type         string
	ContentIndex int
	Delta        string
	Content      string   // text_end, thinking_end: the whole block text
	ToolCall     *Content // toolcall_end
	ID           string   // toolcall_start
	ToolName     string   // toolcall_start
	Reason       string   // done, error
	// Usage is the message's usage as it stands at this event. It is shared
	// by the events sent while the usage stays the same and must not be
	// modified; events from a Builder always have it.
	Usage *Usage
	// Snapshot, when set, returns a complete copy of the message as it stands
	// at this event. It is valid only during the emit call.
	Snapshot func() *AssistantMessage
	// Message is the message as it stands after this event (for done and
	// error: the final message). Providers hand out a fresh snapshot.
	Message *AssistantMessage
}

// Assistant event types.
const (
	EvStart         = "start"
	EvTextStart     = "text_start"
	EvTextDelta     = "text_delta"
	EvTextEnd       = "text_end"
	EvThinkingStart = "thinking_start"
	EvThinkingDelta = "thinking_delta"
	EvThinkingEnd   = "thinking_end"
	EvToolCallStart = "toolcall_start"
	EvToolCallDelta = "toolcall_delta"
	EvToolCallEnd   = "toolcall_end"
	EvDone          = "done"
	EvError         = "error"
)

// IsDelta reports whether the event is a *_delta event.
func (e AssistantEvent) IsDelta() bool {
	return e.Type == EvTextDelta || e.Type == EvThinkingDelta || e.Type == EvToolCallDelta
}

// WireJSON writes the event as pi 1.5 sends it (no partial). With partial
// non-nil the older wire's "partial" member is added (legacy clients).
func (e AssistantEvent) WireJSON(partial *AssistantMessage) ([]byte, error) {
	if fast() {
		if b, err := e.AppendWireJSON(make([]byte, 0, 64+len(e.Delta)+len(e.Content)), partial); err == nil {
			return b, nil
		}
	}
	type start struct {
		Type    string            `json:"type"`
		Partial *AssistantMessage `json:"partial,omitempty"`
	}
	type block struct {
		Type         string            `json:"type"`
		ContentIndex int               `json:"contentIndex"`
		Partial      *AssistantMessage `json:"partial,omitempty"`
	}
	type tcStart struct {
		Type         string            `json:"type"`
		ContentIndex int               `json:"contentIndex"`
		ID           string            `json:"id"`
		ToolName     string            `json:"toolName"`
		Partial      *AssistantMessage `json:"partial,omitempty"`
	}
	type delta struct {
		Type         string            `json:"type"`
		ContentIndex int               `json:"contentIndex"`
		Delta        string            `json:"delta"`
		Partial      *AssistantMessage `json:"partial,omitempty"`
	}
	type end struct {
		Type         string            `json:"type"`
		ContentIndex int               `json:"contentIndex"`
		Content      string            `json:"content"`
		Partial      *AssistantMessage `json:"partial,omitempty"`
	}
	type tcEnd struct {
		Type         string            `json:"type"`
		ContentIndex int               `json:"contentIndex"`
		ToolCall     *Content          `json:"toolCall"`
		Partial      *AssistantMessage `json:"partial,omitempty"`
	}
	type done struct {
		Type    string            `json:"type"`
		Reason  string            `json:"reason"`
		Message *AssistantMessage `json:"message"`
	}
	type errEv struct {
		Type   string            `json:"type"`
		Reason string            `json:"reason"`
		Error  *AssistantMessage `json:"error"`
	}
	var v any
	switch e.Type {
	case EvStart:
		v = start{e.Type, partial}
	case EvTextStart, EvThinkingStart:
		v = block{e.Type, e.ContentIndex, partial}
	case EvToolCallStart:
		v = tcStart{e.Type, e.ContentIndex, e.ID, e.ToolName, partial}
	case EvTextDelta, EvThinkingDelta, EvToolCallDelta:
		v = delta{e.Type, e.ContentIndex, e.Delta, partial}
	case EvTextEnd, EvThinkingEnd:
		v = end{e.Type, e.ContentIndex, e.Content, partial}
	case EvToolCallEnd:
		v = tcEnd{e.Type, e.ContentIndex, e.ToolCall, partial}
	case EvDone:
		v = done{e.Type, e.Reason, e.Message}
	default:
		v = errEv{e.Type, e.Reason, e.Message}
	}
	return jsonx.Marshal(v)
}

// NowMs is the current time in Unix milliseconds.
func NowMs() int64 { return time.Now().UnixMilli() }
