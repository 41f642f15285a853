package rpcmode

import (
	"bytes"
	"encoding/json"
	"io"
	"strings"
	"testing"

	"github.com/pisces-agent/pisces/internal/ai"
	"github.com/pisces-agent/pisces/rpc"
)

// Frames of megabytes are written in pieces, and the bytes are exactly
// those of the frame encoded at once.
func TestLargeFramesWrittenInPiecesUnchanged(t *testing.T) {
	long := func(seed string) string {
		return strings.Repeat(seed+` "q" <b> & \ é 😀 `+"\n\t\x01\u2028", spliceMin/30+1) + "\xff\xed\xa0\x80"
	}
	short := "short"
	user := &ai.UserMessage{Role: ai.RoleUser, Content: ai.StringContent(long("prompt")), Timestamp: 1}
	blocks := &ai.UserMessage{Role: ai.RoleUser, Content: ai.BlockContent(ai.Text(long("a")), ai.Image(long("img"), "image/png")), Timestamp: 2}
	asst := &ai.AssistantMessage{Role: ai.RoleAssistant, Content: []ai.Content{
		{Type: ai.ContentThinking, Thinking: long("think")}, ai.Text(long("answer")),
		{Type: ai.ContentToolCall, ID: "c1", Name: "write", Arguments: json.RawMessage(`{"x":1}`)},
	}, StopReason: ai.StopToolUse, Timestamp: 3}
	tool := &ai.ToolResultMessage{Role: ai.RoleToolResult, ToolCallID: "c1", ToolName: "write",
		Content: []ai.Content{ai.Text(long("out")), ai.Text(short)}, Details: json.RawMessage(`{"d":"\u2028"}`), Timestamp: 4}
	bash := &ai.BashExecutionMessage{Role: ai.RoleBashExecution, Command: "cat", Output: long("bash"), Timestamp: 5}
	sum := &ai.CompactionSummaryMessage{Role: ai.RoleCompactionSummary, Summary: long("sum"), Timestamp: 6}
	legacyPartial := asst.Clone()
	events := []rpc.Event{
		&rpc.MessageStartEvent{Message: user},
		&rpc.MessageEndEvent{Message: blocks},
		&rpc.MessageEndEvent{Message: asst},
		&rpc.TurnEndEvent{Message: asst, ToolResults: []*ai.ToolResultMessage{tool, nil}},
		&rpc.AgentEndEvent{Messages: ai.Messages{user, blocks, asst, tool, bash, sum, nil}},
		&rpc.ToolExecutionEndEvent{ToolCallID: "c1", ToolName: "write", Result: rpc.ToolResultPayload{Content: tool.Content}},
		&rpc.ToolExecutionUpdateEvent{ToolCallID: "c1", ToolName: "write", Args: json.RawMessage(`{}`), PartialResult: rpc.ToolResultPayload{Content: tool.Content}},
		&rpc.MessageUpdateEvent{AssistantMessageEvent: ai.AssistantEvent{Type: ai.EvTextEnd, Content: long("end")}},
		&rpc.MessageUpdateEvent{AssistantMessageEvent: ai.AssistantEvent{Type: ai.EvTextDelta, Delta: long("delta")}},
		&rpc.MessageUpdateEvent{AssistantMessageEvent: ai.AssistantEvent{Type: ai.EvTextEnd, Content: long("end")}, Partial: legacyPartial, Legacy: true},
	}
	var want bytes.Buffer
	for _, ev := range events {
		b, err := rpc.AppendEvent(nil, ev)
		if err != nil {
			t.Fatal(err)
		}
		want.Write(b)
		want.WriteByte('\n')
	}
	var out bytes.Buffer
	w := newWriter(&out, 0, io.Discard)
	for _, ev := range events {
		w.event(ev)
	}
	w.close()
	if out.String() != want.String() {
		gotLines, wantLines := strings.Split(out.String(), "\n"), strings.Split(want.String(), "\n")
		for i := range wantLines {
			if i >= len(gotLines) || gotLines[i] != wantLines[i] {
				t.Fatalf("line %d differs (%T)", i, events[min(i, len(events)-1)])
			}
		}
		t.Fatal("output differs")
	}
	// The frames were large enough to be spliced.
	for _, ev := range events {
		if c := eventCost(ev); c < spliceMin {
			t.Errorf("%T counts %d bytes, below the splicing size", ev, c)
		}
	}
	if w.sp == nil {
		t.Fatal("no frame was written in pieces")
	}
}
