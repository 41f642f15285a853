package ai

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"strings"
	"time"

	"github.com/pisces-agent/pisces/internal/jsonx"
)

// Builder assembles an assistant message from a provider's stream and emits
// the matching events. Providers call its methods as chunks arrive; it keeps
// the block indexes, accumulates text without quadratic copying and stamps
// the final message (stop reason, duration, cost).
type Builder struct {
	model   *Model
	emit    func(AssistantEvent)
	msg     *AssistantMessage
	bufs    []*strings.Builder // per content index: text, thinking or argument JSON
	open    []bool
	started time.Time
	done    bool
	// snapshot is b.Snapshot, bound once: a method value taken per event
	// would allocate a closure for every delta.
	snapshot func() *AssistantMessage
	// usage is the copy of msg.Usage the events share until it changes
	// (a copy per event would add 128 bytes to every delta).
	usage *Usage
}

// NewBuilder starts a message for model. emit may be nil.
func NewBuilder(model *Model, thinkingLevel string, emit func(AssistantEvent)) *Builder {
	if emit == nil {
		emit = func(AssistantEvent) {}
	}
	m := &AssistantMessage{
		Role:       RoleAssistant,
		Content:    []Content{},
		API:        model.API,
		Provider:   model.Provider,
		Model:      model.ID,
		StopReason: StopPending,
		Timestamp:  NowMs(),
	}
	if thinkingLevel != "" && thinkingLevel != "off" && model.Reasoning {
		m.ThinkingLevel = thinkingLevel
	}
	return &Builder{model: model, emit: emit, msg: m, started: time.Now()}
}

func (b *Builder) send(ev AssistantEvent) {
	if b.usage == nil || !sameUsage(b.usage, &b.msg.Usage) {
		u := b.msg.Usage
		b.usage = &u
	}
	ev.Usage = b.usage
	if b.snapshot == nil {
		b.snapshot = b.Snapshot
	}
	ev.Snapshot = b.snapshot
	b.emit(ev)
}

// Start emits the start event.
func (b *Builder) Start() { b.send(AssistantEvent{Type: EvStart}) }

// Message returns the message being built (without the text accumulated in
// open blocks); use Snapshot for a complete point-in-time copy.
func (b *Builder) Message() *AssistantMessage { return b.msg }

// Snapshot returns a copy of the message with every block's text so far.
func (b *Builder) Snapshot() *AssistantMessage {
	c := b.msg.Clone()
	for i := range c.Content {
		b.fill(&c.Content[i], i)
	}
	return c
}

func (b *Builder) fill(c *Content, i int) {
	if i >= len(b.bufs) || b.bufs[i] == nil {
		return
	}
	s := b.bufs[i].String()
	switch c.Type {
	case ContentText:
		c.Text = s
	case ContentThinking:
		c.Thinking = s
	case ContentToolCall:
		setArguments(c, s)
	}
}

func (b *Builder) begin(c Content) int {
	b.msg.Content = append(b.msg.Content, c)
	b.bufs = append(b.bufs, &strings.Builder{})
	b.open = append(b.open, true)
	return len(b.msg.Content) - 1
}

// BeginText opens a text block and returns its index.
func (b *Builder) BeginText() int {
	i := b.begin(Content{Type: ContentText})
	b.send(AssistantEvent{Type: EvTextStart, ContentIndex: i})
	return i
}

// BeginThinking opens a thinking block and returns its index.
func (b *Builder) BeginThinking() int {
	i := b.begin(Content{Type: ContentThinking})
	b.send(AssistantEvent{Type: EvThinkingStart, ContentIndex: i})
	return i
}

// BeginToolCall opens a toolCall block and returns its index.
func (b *Builder) BeginToolCall(id, name string) int {
	i := b.begin(Content{Type: ContentToolCall, ID: id, Name: name, Arguments: json.RawMessage("{}")})
	b.send(AssistantEvent{Type: EvToolCallStart, ContentIndex: i, ID: id, ToolName: name})
	return i
}

// Delta appends text (or raw argument JSON) to block i.
func (b *Builder) Delta(i int, s string) {
	if i < 0 || i >= len(b.bufs) {
		return
	}
	b.bufs[i].WriteString(s)
	t := EvTextDelta
	switch b.msg.Content[i].Type {
	case ContentThinking:
		t = EvThinkingDelta
	case ContentToolCall:
		t = EvToolCallDelta
	}
	b.send(AssistantEvent{Type: t, ContentIndex: i, Delta: s})
}

// SetSignature stores a text, thinking or thought signature on block i.
func (b *Builder) SetSignature(i int, sig string) {
	c := &b.msg.Content[i]
	switch c.Type {
	case ContentText:
		c.TextSignature = sig
	case ContentThinking:
		c.ThinkingSignature = sig
	case ContentToolCall:
		c.ThoughtSignature = sig
	}
}

// SetRedacted marks thinking block i as redacted.
func (b *Builder) SetRedacted(i int) { b.msg.Content[i].Redacted = true }

// End closes block i and emits its end event.
func (b *Builder) End(i int) {
	if i < 0 || i >= len(b.open) || !b.open[i] {
		return
	}
	b.open[i] = false
	c := &b.msg.Content[i]
	b.fill(c, i)
	b.bufs[i] = nil
	switch c.Type {
	case ContentText:
		b.send(AssistantEvent{Type: EvTextEnd, ContentIndex: i, Content: c.Text})
	case ContentThinking:
		b.send(AssistantEvent{Type: EvThinkingEnd, ContentIndex: i, Content: c.Thinking})
	case ContentToolCall:
		tc := *c
		b.send(AssistantEvent{Type: EvToolCallEnd, ContentIndex: i, ToolCall: &tc})
	}
}

// SetUsage records token counts; the cost is computed from the model.
func (b *Builder) SetUsage(u Usage) {
	u.TotalTokens = u.Input + u.Output + u.CacheRead + u.CacheWrite
	u.Cost = b.model.CostOf(u)
	b.msg.Usage = u
}

// SetResponseID records the provider's response id.
func (b *Builder) SetResponseID(id string) { b.msg.ResponseID = id }

// SetRawStopReason records the provider's own stop reason.
func (b *Builder) SetRawStopReason(s string) { b.msg.RawStopReason = s }

func (b *Builder) finish() *AssistantMessage {
	for i := range b.open {
		if b.open[i] {
			b.End(i)
		}
	}
	d := time.Since(b.started).Milliseconds()
	b.msg.DurationMs = &d
	b.done = true
	return b.msg
}

// Done ends the stream successfully with stopReason (stop, length, toolUse).
func (b *Builder) Done(stopReason string) *AssistantMessage {
	if stopReason == "" {
		stopReason = StopStop
	}
	b.msg.StopReason = stopReason
	m := b.finish()
	b.send(AssistantEvent{Type: EvDone, Reason: stopReason, Message: m})
	return m
}

// Fail ends the stream with an error. A cancelled ctx makes it "aborted".
func (b *Builder) Fail(ctx context.Context, err error) *AssistantMessage {
	reason := StopError
	msg := ""
	if err != nil {
		msg = err.Error()
	}
	if ctx != nil && ctx.Err() != nil || errors.Is(err, context.Canceled) {
		reason = StopAborted
		msg = "Request was aborted"
	}
	// Unclosed blocks keep what arrived so far, without end events.
	for i := range b.open {
		if b.open[i] {
			b.open[i] = false
			b.fill(&b.msg.Content[i], i)
		}
	}
	var pe *ProviderError
	if reason == StopError && errors.As(err, &pe) {
		b.msg.ErrorStatus = pe.Status
		b.msg.RetryAfter = pe.RetryAfter
	}
	b.msg.StopReason = reason
	b.msg.ErrorMessage = msg
	m := b.finish()
	b.send(AssistantEvent{Type: EvError, Reason: reason, Message: m})
	return m
}

// Finished reports whether Done or Fail was called.
func (b *Builder) Finished() bool { return b.done }

// setArguments parses the accumulated argument text of a tool call. Text
// that is not a JSON object leaves arguments {} and sets argumentsError.
func setArguments(c *Content, s string) {
	t := strings.TrimSpace(s)
	if t == "" {
		c.Arguments = json.RawMessage("{}")
		c.ArgumentsError = ""
		return
	}
	var obj map[string]json.RawMessage
	if err := json.Unmarshal([]byte(t), &obj); err != nil || obj == nil {
		c.Arguments = json.RawMessage("{}")
		if err != nil {
			c.ArgumentsError = "Invalid tool arguments JSON: " + err.Error()
		} else {
			c.ArgumentsError = "Tool arguments are not a JSON object"
		}
		return
	}
	var buf bytes.Buffer
	_ = json.Compact(&buf, []byte(t))
	c.Arguments = json.RawMessage(buf.Bytes())
	c.ArgumentsError = ""
}

// sameUsage reports whether a and b hold the same counts, cost and unknown
// fields (the same Extra slice).
func sameUsage(a, b *Usage) bool {
	return a.Input == b.Input && a.Output == b.Output && a.CacheRead == b.CacheRead &&
		a.CacheWrite == b.CacheWrite && a.TotalTokens == b.TotalTokens &&
		a.Cost.Input == b.Cost.Input && a.Cost.Output == b.Cost.Output &&
		a.Cost.CacheRead == b.Cost.CacheRead && a.Cost.CacheWrite == b.Cost.CacheWrite &&
		a.Cost.Total == b.Cost.Total && sameExtra(a.Extra, b.Extra) && sameExtra(a.Cost.Extra, b.Cost.Extra)
}

func sameExtra(a, b jsonx.Extra) bool {
	return len(a) == len(b) && (len(a) == 0 || &a[0] == &b[0])
}
