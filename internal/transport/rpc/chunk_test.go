package rpcmode

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"io"
	"strings"
	"testing"

	"github.com/pisces-agent/pisces/internal/ai"
	"github.com/pisces-agent/pisces/rpc"
)

// TestChunkedFrames: under protocol v2 a frame whose line would pass 1 MiB
// goes out as rpc_chunk lines that put back together give the frame; a
// smaller one goes out whole; before the switch nothing is chunked.
func TestChunkedFrames(t *testing.T) {
	var out bytes.Buffer
	w := newWriter(&out, 0, io.Discard)
	big := json.RawMessage(`{"text":"` + strings.Repeat("é", 700_000) + `"}`) // 1.4 MB
	w.respond(&rpc.Response{ID: "before", Command: "get_messages", Success: true, Data: big}, nil)
	w.chunkFromHere()
	w.respond(&rpc.Response{ID: "small", Command: "get_state", Success: true, Data: json.RawMessage(`{}`)}, nil)
	w.respond(&rpc.Response{ID: "big", Command: "get_messages", Success: true, Data: big}, nil)
	w.event(&rpc.SessionSettledEvent{})
	w.close()

	lines := strings.Split(strings.TrimSuffix(out.String(), "\n"), "\n")
	want, _ := (&rpc.Response{ID: "big", Command: "get_messages", Success: true, Data: big}).MarshalJSON()
	if lines[0] != string(mustJSON(t, rpc.Response{ID: "before", Command: "get_messages", Success: true, Data: big})) {
		t.Fatalf("the frame before the switch was not written whole")
	}
	if lines[1] != `{"id":"small","type":"response","command":"get_state","success":true,"data":{}}` {
		t.Fatalf("small frame: %s", lines[1])
	}
	var whole []byte
	n := 0
	for _, l := range lines[2:] {
		if len(l)+1 > rpc.MaxFrameBytes {
			t.Fatalf("a line of %d bytes under protocol v2", len(l)+1)
		}
		var c rpc.RPCChunkEvent
		if err := json.Unmarshal([]byte(l), &c); err != nil || c.Type != rpc.EventRPCChunk {
			break
		}
		if c.ChunkID != "rpc-1" || c.Index != n || c.ByteLength != len(want) {
			t.Fatalf("chunk %d: %+v", n, c)
		}
		b, err := base64.StdEncoding.DecodeString(c.Data)
		if err != nil || len(b) > rpc.ChunkDataBytes {
			t.Fatalf("chunk %d: %d bytes, %v", n, len(b), err)
		}
		whole = append(whole, b...)
		n++
		if n == c.Count {
			break
		}
	}
	if n < 2 || !bytes.Equal(whole, want) {
		t.Fatalf("%d chunks put together give %d bytes, want the frame's %d", n, len(whole), len(want))
	}
	if last := lines[len(lines)-1]; last != `{"type":"session_settled"}` || len(lines) != 2+n+1 {
		t.Fatalf("after the chunks: %d lines, last %s", len(lines), last)
	}
}

// TestChunkLimit: past 64 MiB a response becomes an error response with its
// id, another frame an rpc_frame_error naming its type.
func TestChunkLimit(t *testing.T) {
	huge := make([]byte, rpc.MaxReassembledFrameBytes+1)
	got := chunkLine(huge, 1, "response", &rpc.Response{ID: "r1", Command: "get_messages"})
	if len(got) != 1 || string(got[0]) != `{"id":"r1","type":"response","command":"get_messages","success":false,"error":"RPC response exceeded the transport limit"}` {
		t.Fatalf("response: %s", got)
	}
	got = chunkLine(huge, 2, "agent_end", nil)
	if len(got) != 1 || string(got[0]) != `{"type":"rpc_frame_error","originalType":"agent_end","error":"RPC frame exceeded the transport limit"}` {
		t.Fatalf("event: %s", got)
	}
}

func mustJSON(t *testing.T, v any) []byte {
	t.Helper()
	b, err := rpc.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// TestAgentEndCompacted: under protocol v2 an agent_end over 1 MiB leaves
// out its leading messages that went out in message_end and says how many
// the run had (messageCount); one under 1 MiB is sent whole, without
// messageCount; a run's messages that were not all sent are kept from the
// first one that was not.
func TestAgentEndCompacted(t *testing.T) {
	big := &ai.UserMessage{Content: ai.UserContent{IsString: true, Str: strings.Repeat("x", 1_200_000)}}
	small := &ai.UserMessage{Content: ai.UserContent{IsString: true, Str: "hi"}}
	reply := &ai.AssistantMessage{Content: []ai.Content{ai.Text("ok")}, StopReason: ai.StopStop}
	unsent := &ai.UserMessage{Content: ai.UserContent{IsString: true, Str: "not sent"}}
	msgs := ai.Messages{big, reply}
	if n := streamedPrefix([]ai.Message{big, reply}, msgs); n != 2 {
		t.Fatalf("streamedPrefix = %d, want 2", n)
	}
	if n := streamedPrefix([]ai.Message{big, reply}, ai.Messages{big, unsent, reply}); n != 1 {
		t.Fatalf("streamedPrefix with a message not sent = %d, want 1", n)
	}
	var out bytes.Buffer
	w := newWriter(&out, 0, io.Discard)
	w.chunkFromHere()
	w.event(&ompAgentEnd{AgentEndEvent: &rpc.AgentEndEvent{Messages: msgs}, streamed: 2})
	w.event(&ompAgentEnd{AgentEndEvent: &rpc.AgentEndEvent{Messages: ai.Messages{small, reply}}, streamed: 2})
	w.event(&ompAgentEnd{AgentEndEvent: &rpc.AgentEndEvent{Messages: ai.Messages{big, unsent, reply}, WillRetry: true}, streamed: 1})
	w.close()
	lines := strings.Split(strings.TrimSuffix(out.String(), "\n"), "\n")
	if len(lines) != 3 {
		t.Fatalf("%d lines, want 3 (no chunks)", len(lines))
	}
	if want := `{"type":"agent_end","messages":[],"willRetry":false,"messageCount":2}`; lines[0] != want {
		t.Fatalf("compacted agent_end:\n%s\nwant\n%s", lines[0], want)
	}
	if strings.Contains(lines[1], "messageCount") || !strings.Contains(lines[1], `"content":"hi"`) {
		t.Fatalf("small agent_end: %s", lines[1])
	}
	var third struct {
		Messages     []json.RawMessage `json:"messages"`
		MessageCount int               `json:"messageCount"`
		IsTerminal   *bool             `json:"isTerminal"`
	}
	if err := json.Unmarshal([]byte(lines[2]), &third); err != nil || len(third.Messages) != 2 || third.MessageCount != 3 || third.IsTerminal == nil || *third.IsTerminal {
		t.Fatalf("partly sent agent_end: %s (%v)", lines[2], err)
	}
}
