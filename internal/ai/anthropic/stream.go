package anthropic

import (
	"context"

	sdk "github.com/anthropics/anthropic-sdk-go"

	"github.com/pisces-agent/pisces/internal/ai"
)

// redactedText is the thinking text of a redacted_thinking block, as pi
// shows it; the encrypted data is kept as the block's signature.
const redactedText = "[Reasoning redacted]"

// streamState maps Anthropic's stream events onto a Builder.
type streamState struct {
	b          *ai.Builder
	blocks     map[int64]int // Anthropic block index → message content index
	usage      ai.Usage
	stopReason string // Anthropic's stop_reason
	started    bool   // message_start seen
	stopped    bool   // message_stop seen
	// toolName maps a called tool's name back to the request's (nil:
	// as it is).
	toolName func(string) string
}

func newStreamState(b *ai.Builder) *streamState {
	return &streamState{b: b, blocks: map[int64]int{}}
}

func (s *streamState) handle(ev sdk.MessageStreamEventUnion) {
	b := s.b
	switch ev.Type {
	case "message_start":
		s.started = true
		if ev.Message.ID != "" {
			b.SetResponseID(ev.Message.ID)
		}
		u := ev.Message.Usage
		s.usage.Input = u.InputTokens
		s.usage.Output = u.OutputTokens
		s.usage.CacheRead = u.CacheReadInputTokens
		s.usage.CacheWrite = u.CacheCreationInputTokens
		b.SetUsage(s.usage)

	case "content_block_start":
		cb := ev.ContentBlock
		switch cb.Type {
		case "text":
			i := b.BeginText()
			s.blocks[ev.Index] = i
			if cb.Text != "" {
				b.Delta(i, cb.Text)
			}
		case "thinking":
			i := b.BeginThinking()
			s.blocks[ev.Index] = i
			if cb.Thinking != "" {
				b.Delta(i, cb.Thinking)
			}
			if cb.Signature != "" {
				b.SetSignature(i, cb.Signature)
			}
		case "redacted_thinking":
			i := b.BeginThinking()
			s.blocks[ev.Index] = i
			b.SetRedacted(i)
			b.SetSignature(i, cb.Data)
			b.Delta(i, redactedText)
		case "tool_use":
			name := cb.Name
			if s.toolName != nil {
				name = s.toolName(name)
			}
			i := b.BeginToolCall(cb.ID, name)
			s.blocks[ev.Index] = i
			// The input of a streamed tool_use starts as {} and arrives
			// as input_json_delta; a non-empty start input is kept.
			if raw := cb.JSON.Input.Raw(); raw != "" && raw != "{}" && raw != "null" {
				b.Delta(i, raw)
			}
		}
		// Server tools and their results are not part of pi's messages.

	case "content_block_delta":
		i, ok := s.blocks[ev.Index]
		if !ok {
			return
		}
		d := ev.Delta
		switch d.Type {
		case "text_delta":
			b.Delta(i, d.Text)
		case "thinking_delta":
			b.Delta(i, d.Thinking)
		case "input_json_delta":
			if d.PartialJSON != "" {
				b.Delta(i, d.PartialJSON)
			}
		case "signature_delta":
			b.SetSignature(i, signatureSoFar(b, i)+d.Signature)
		}

	case "content_block_stop":
		if i, ok := s.blocks[ev.Index]; ok {
			b.End(i)
			delete(s.blocks, ev.Index)
		}

	case "message_delta":
		if r := string(ev.Delta.StopReason); r != "" {
			s.stopReason = r
		}
		u := ev.Usage
		if u.JSON.InputTokens.Valid() {
			s.usage.Input = u.InputTokens
		}
		if u.JSON.OutputTokens.Valid() {
			s.usage.Output = u.OutputTokens
		}
		if u.JSON.CacheReadInputTokens.Valid() {
			s.usage.CacheRead = u.CacheReadInputTokens
		}
		if u.JSON.CacheCreationInputTokens.Valid() {
			s.usage.CacheWrite = u.CacheCreationInputTokens
		}
		b.SetUsage(s.usage)

	case "message_stop":
		s.stopped = true
	}
}

// signatureSoFar is the signature already stored on block i (signatures
// may arrive in several signature_delta events).
func signatureSoFar(b *ai.Builder, i int) string {
	c := b.Message().Content
	if i < 0 || i >= len(c) {
		return ""
	}
	switch c[i].Type {
	case ai.ContentThinking:
		return c[i].ThinkingSignature
	case ai.ContentText:
		return c[i].TextSignature
	}
	return ""
}

// finish ends a stream that closed without an error.
func (s *streamState) finish(ctx context.Context) *ai.AssistantMessage {
	b := s.b
	if !s.stopped && s.stopReason == "" {
		msg := "stream ended unexpectedly: no message_stop event"
		if !s.started {
			msg = "stream ended unexpectedly: no events"
		}
		return b.Fail(ctx, &ai.ProviderError{Message: msg})
	}
	b.SetRawStopReason(s.stopReason)
	switch s.stopReason {
	case "end_turn", "stop_sequence", "pause_turn", "":
		return b.Done(ai.StopStop)
	case "max_tokens", "model_context_window_exceeded":
		return b.Done(ai.StopLength)
	case "tool_use":
		return b.Done(ai.StopToolUse)
	case "refusal":
		return b.Fail(ctx, errorf("The model refused to respond (stop reason: refusal)"))
	default:
		return b.Fail(ctx, errorf("Unhandled stop reason: %s", s.stopReason))
	}
}
