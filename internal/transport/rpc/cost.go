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
	case *ompAgentEnd:
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

// messageSize is about the length of a message's JSON.
func messageSize(m ai.Message) int { return ai.ApproxSize(m) }

func blocksSize(bs []ai.Content) int { return ai.ContentSizeHint(bs) }

func contentSize(c *ai.Content) int { return ai.ContentSizeHint([]ai.Content{*c}) }
