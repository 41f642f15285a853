package rpcmode

import (
	"github.com/pisces-agent/pisces/internal/ai"
	"github.com/pisces-agent/pisces/rpc"
)

// eventCost is about the number of bytes an event's line will take: the
// lengths of the texts it carries plus frameOverhead. It walks content
// blocks, never text, so it costs little next to encoding the event.
func eventCost(ev rpc.Event) int64 {
	n := frameOverhead
	switch e := ev.(type) {
	case *rpc.MessageUpdateEvent:
		a := &e.AssistantMessageEvent
		n += len(a.Delta) + len(a.Content)
		if a.ToolCall != nil {
			n += contentSize(a.ToolCall)
		}
		if e.Partial != nil {
			n += messageSize(e.Partial)
		}
	case *rpc.MessageStartEvent:
		n += messageSize(e.Message)
	case *rpc.MessageEndEvent:
		n += messageSize(e.Message)
	case *rpc.TurnEndEvent:
		n += messageSize(e.Message)
		for _, r := range e.ToolResults {
			n += messageSize(r)
		}
	case *rpc.AgentEndEvent:
		for _, m := range e.Messages {
			n += messageSize(m)
		}
	case *rpc.ToolExecutionStartEvent:
		n += len(e.Args)
	case *rpc.ToolExecutionUpdateEvent:
		n += len(e.Args) + blocksSize(e.PartialResult.Content) + len(e.PartialResult.Details)
	case *rpc.ToolExecutionEndEvent:
		n += blocksSize(e.Result.Content) + len(e.Result.Details)
	case *rpc.BashExecutionUpdateEvent:
		n += len(e.Delta)
	case *rpc.EntryAppendedEvent:
		n += len(e.Entry)
	}
	return int64(n)
}

// messageSize is about the length of a message's JSON: its texts.
func messageSize(m ai.Message) int {
	switch m := m.(type) {
	case nil:
		return 0
	case *ai.AssistantMessage:
		if m == nil {
			return 0
		}
		return 256 + blocksSize(m.Content) + len(m.ErrorMessage)
	case *ai.UserMessage:
		if m == nil {
			return 0
		}
		return 64 + userContentSize(m.Content)
	case *ai.SystemMessage:
		if m == nil {
			return 0
		}
		n := 64 + userContentSize(m.Content) + len(m.Sections)
		for _, t := range m.ToolsAdded {
			n += 64 + len(t.Name) + len(t.Description) + len(t.Parameters)
		}
		return n
	case *ai.ToolResultMessage:
		if m == nil {
			return 0
		}
		return 128 + blocksSize(m.Content) + len(m.Details) + len(m.NestedCalls)
	case *ai.BashExecutionMessage:
		if m == nil {
			return 0
		}
		return 128 + len(m.Command) + len(m.Output)
	case *ai.CustomMessage:
		if m == nil {
			return 0
		}
		return 128 + userContentSize(m.Content) + len(m.Details)
	case *ai.BranchSummaryMessage:
		if m == nil {
			return 0
		}
		return 96 + len(m.Summary)
	case *ai.CompactionSummaryMessage:
		if m == nil {
			return 0
		}
		return 96 + len(m.Summary)
	case *ai.UnknownMessage:
		if m == nil {
			return 0
		}
		return len(m.Raw)
	}
	return 256
}

func userContentSize(c ai.UserContent) int {
	if c.IsString {
		return len(c.Str)
	}
	return blocksSize(c.Blocks)
}

func blocksSize(bs []ai.Content) int {
	n := 0
	for i := range bs {
		n += contentSize(&bs[i])
	}
	return n
}

func contentSize(c *ai.Content) int {
	return 32 + len(c.Text) + len(c.TextSignature) + len(c.Thinking) + len(c.ThinkingSignature) +
		len(c.Data) + len(c.MimeType) + len(c.ID) + len(c.Name) + len(c.Arguments) +
		len(c.ThoughtSignature) + len(c.ArgumentsError)
}
