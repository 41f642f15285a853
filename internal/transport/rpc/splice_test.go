package rpcmode

import (
	"bytes"
	"encoding/json"
	"io"
	"strings"
	"testing"
	"time"

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

// Deltas merged while the client does not read (megabytes of them) are
// written in pieces too, as one delta holding them all.
func TestMergedDeltasOfMegabytes(t *testing.T) {
	for _, split := range []bool{false, true} {
		pr, pw := io.Pipe()
		w := newWriter(pw, time.Hour, io.Discard)
		w.event(&rpc.MessageStartEvent{Message: &ai.AssistantMessage{Role: ai.RoleAssistant}})
		w.event(&rpc.MessageUpdateEvent{AssistantMessageEvent: ai.AssistantEvent{Type: ai.EvTextStart}})
		var want strings.Builder
		for i := 0; i < 3000; i++ {
			d := strings.Repeat(`é "x" `, 100)
			if split && i == 1500 {
				d = "\x80" + d // starts inside a character: the deltas are joined
			}
			want.WriteString(d)
			w.event(&rpc.MessageUpdateEvent{AssistantMessageEvent: ai.AssistantEvent{Type: ai.EvTextDelta, Delta: d}})
		}
		w.event(&rpc.MessageUpdateEvent{AssistantMessageEvent: ai.AssistantEvent{Type: ai.EvTextEnd, Content: want.String()}})
		done := make(chan struct{})
		go func() { w.close(); pw.Close(); close(done) }()
		lines := parse(t, pr)
		<-done
		var got strings.Builder
		frames := 0
		for _, l := range lines {
			if l.AME.Type == ai.EvTextDelta {
				frames++
				got.WriteString(l.AME.Delta)
			}
		}
		// The one invalid byte is written as U+FFFD.
		if got.String() != strings.ToValidUTF8(want.String(), "\uFFFD") {
			t.Fatalf("split=%v: merged text differs (%d bytes, want %d)", split, got.Len(), want.Len())
		}
		if frames > 3 {
			t.Fatalf("split=%v: %d delta frames, want them merged", split, frames)
		}
	}
}
