// Package compaction keeps long sessions inside the context window: token
// estimates, the cut point, summaries of the cut-off history (compaction)
// and of abandoned branches (branch summaries). It follows pi's rules
// (pi-facts §4) with prompts in our own words.
package compaction

import (
	"encoding/json"

	"github.com/pisces-agent/pisces/internal/ai"
)

// imageChars is what one image counts for in the chars/4 estimate.
const imageChars = 4800

// EstimateTokens estimates a message's tokens as ceil(chars/4).
func EstimateTokens(m ai.Message) int {
	chars := 0
	switch v := m.(type) {
	case *ai.UserMessage:
		chars = contentChars(v.Content.AsBlocks())
	case *ai.AssistantMessage:
		for _, c := range v.Content {
			switch c.Type {
			case ai.ContentText:
				chars += len(c.Text)
			case ai.ContentThinking:
				chars += len(c.Thinking)
			case ai.ContentToolCall:
				chars += len(c.Name) + len(compactJSON(c.Arguments))
			}
		}
	case *ai.ToolResultMessage:
		chars = contentChars(v.Content)
	case *ai.CustomMessage:
		chars = contentChars(v.Content.AsBlocks())
	case *ai.BashExecutionMessage:
		chars = len(v.Command) + len(v.Output)
	case *ai.BranchSummaryMessage:
		chars = len(v.Summary)
	case *ai.CompactionSummaryMessage:
		chars = len(v.Summary)
	case *ai.SystemMessage:
		chars = len(v.PromptText())
	}
	return (chars + 3) / 4
}

func contentChars(cs []ai.Content) int {
	n := 0
	for _, c := range cs {
		switch c.Type {
		case ai.ContentText:
			n += len(c.Text)
		case ai.ContentImage:
			n += imageChars
		}
	}
	return n
}

func compactJSON(raw json.RawMessage) string {
	if len(raw) == 0 {
		return "{}"
	}
	return string(raw)
}

// AssistantUsageTokens returns the context size an assistant message's
// usage reports, or 0 when it has none that counts (aborted, error, or all
// zero).
func AssistantUsageTokens(m *ai.AssistantMessage) int64 {
	if m.StopReason == ai.StopAborted || m.StopReason == ai.StopError {
		return 0
	}
	u := m.Usage
	if u.TotalTokens > 0 {
		return u.TotalTokens
	}
	return u.Input + u.Output + u.CacheRead + u.CacheWrite
}

// Usage is an estimate of the context's size: the last reported usage plus
// estimates of the messages after it.
type Usage struct {
	Tokens         int64 // UsageTokens + TrailingTokens
	UsageTokens    int64 // from the last assistant message with usage
	TrailingTokens int64 // estimated for the messages after it
	LastUsageIndex int   // index of that message in the list (-1: none)
}

// EstimateContext estimates the tokens of a context.
func EstimateContext(msgs []ai.Message) Usage {
	u := Usage{LastUsageIndex: -1}
	for i := len(msgs) - 1; i >= 0; i-- {
		if a, ok := msgs[i].(*ai.AssistantMessage); ok {
			if t := AssistantUsageTokens(a); t > 0 {
				u.UsageTokens = t
				u.LastUsageIndex = i
				break
			}
		}
	}
	for i := u.LastUsageIndex + 1; i < len(msgs); i++ {
		u.TrailingTokens += int64(EstimateTokens(msgs[i]))
	}
	u.Tokens = u.UsageTokens + u.TrailingTokens
	return u
}

// EstimateMessages estimates a context from its text alone (chars/4), as
// after a compaction, when no reported usage describes it yet.
func EstimateMessages(msgs []ai.Message) int64 {
	var n int64
	for _, m := range msgs {
		n += int64(EstimateTokens(m))
	}
	return n
}
