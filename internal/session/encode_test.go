package session

import (
	"encoding/json"
	"math"
	"strings"
	"testing"

	"github.com/pisces-agent/pisces/internal/ai"
	"github.com/pisces-agent/pisces/internal/jsonx"
)

// Message entries are appended by hand; they must be the bytes (or the
// failure) of the reflective encoder.
func TestEncodeMessageEntryMatchesReflective(t *testing.T) {
	parent := "p\u2028<1>"
	d := int64(7)
	long := strings.Repeat("w1 \"é\u2029\\ ", 3000)
	msgs := []ai.Message{
		nil,
		(*ai.AssistantMessage)(nil),
		&ai.AssistantMessage{Role: ai.RoleAssistant, Content: []ai.Content{ai.Text(long), {Type: ai.ContentThinking, Thinking: "t\x00", ThinkingSignature: "s"},
			{Type: ai.ContentToolCall, ID: "c1", Name: "bash", Arguments: json.RawMessage(` { "command" : "echo \u2028" } `)}},
			API: "openai-completions", Provider: "mock", Model: "m", StopReason: ai.StopStop, Timestamp: 3, DurationMs: &d,
			Extra: jsonx.Extra{{Key: "x", Value: json.RawMessage(`[1, 2]`)}}},
		&ai.AssistantMessage{Usage: ai.Usage{Cost: ai.Cost{Total: math.NaN()}}},
		&ai.AssistantMessage{Content: []ai.Content{{Type: ai.ContentToolCall, Arguments: json.RawMessage(`{bad`)}}},
		&ai.UserMessage{Role: ai.RoleUser, Content: ai.StringContent("hi <b>\u2028"), Timestamp: 1},
		&ai.ToolResultMessage{Role: ai.RoleToolResult, ToolCallID: "c1", Content: []ai.Content{ai.Text("out")}, Details: json.RawMessage(`{ "a" : 1 }`)},
	}
	for i, m := range msgs {
		for _, p := range []*string{nil, &parent} {
			e := &Entry{Type: TypeMessage, ID: "id\"1", ParentID: p, Timestamp: "2026-11-22T00:00:00.000Z"}
			e.setMessage(m, nil)
			want, werr := jsonx.MarshalReflect(messageEntryJSON{e.Type, e.ID, e.ParentID, e.Timestamp, e.Message()})
			gerr := encode(e)
			if werr != nil || gerr != nil {
				if werr == nil || gerr == nil || werr.Error() != gerr.Error() {
					t.Fatalf("message %d: reflective error %v, fast error %v", i, werr, gerr)
				}
				continue
			}
			if string(e.Raw) != string(want) {
				t.Fatalf("message %d:\nreflective %s\nfast       %s", i, want, e.Raw)
			}
		}
	}
}
