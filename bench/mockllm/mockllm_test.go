package mockllm

import (
	"context"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/pisces-agent/pisces/internal/ai"
	"github.com/pisces-agent/pisces/internal/ai/anthropic"
	"github.com/pisces-agent/pisces/internal/ai/openai"
)

// The mock is checked against Pisces' own provider adapters: what they
// read from it must be what the script says.

func startMock(t *testing.T, sc Script) *Server {
	t.Helper()
	s, err := Start(Options{IdleTimeout: time.Minute})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(s.Close)
	s.SetScript(sc)
	return s
}

type api struct {
	name string
	p    ai.Provider
	base func(*Server) string
}

func apis() []api {
	return []api{
		{"openai-completions", openai.NewCompletions(http.DefaultClient), func(s *Server) string { return s.URL() + "/v1" }},
		{"anthropic-messages", anthropic.New(), func(s *Server) string { return s.URL() }},
	}
}

func stream(t *testing.T, a api, s *Server, msgs []ai.Message) (*ai.AssistantMessage, []ai.AssistantEvent) {
	t.Helper()
	if msgs == nil {
		msgs = []ai.Message{&ai.UserMessage{Role: ai.RoleUser, Content: ai.StringContent("hi"), Timestamp: 1}}
	}
	var evs []ai.AssistantEvent
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	m := a.p.Stream(ctx, &ai.Request{
		Model:    &ai.Model{ID: "mock-model", API: a.name, Provider: "mock", BaseURL: a.base(s), ContextWindow: 128000, MaxTokens: 1000},
		Messages: msgs,
		Tools:    []ai.ToolSpec{{Name: "bash", Description: "run", Parameters: []byte(`{"type":"object","properties":{"command":{"type":"string"}}}`)}},
		APIKey:   "k",
	}, func(e ai.AssistantEvent) { evs = append(evs, e) })
	return m, evs
}

func count(evs []ai.AssistantEvent, typ string) int {
	n := 0
	for _, e := range evs {
		if e.Type == typ {
			n++
		}
	}
	return n
}

func TestTextThinkingAndToolCalls(t *testing.T) {
	for _, a := range apis() {
		t.Run(a.name, func(t *testing.T) {
			s := startMock(t, Script{Turns: []Turn{{
				Thinking: "let me think about it", ThinkingChunks: 4,
				Text: "Hello there, world.", TextChunks: 7,
				ToolCalls:   []ToolCall{{Name: "bash", Arguments: `{"command":"echo hello"}`, ArgChunks: 5}},
				InputTokens: 321, OutputTokens: 45,
			}}})
			m, evs := stream(t, a, s, nil)
			if m.StopReason != "toolUse" || m.ErrorMessage != "" {
				t.Fatalf("stop %q error %q", m.StopReason, m.ErrorMessage)
			}
			var text, thinking string
			var calls []ai.Content
			for _, c := range m.Content {
				switch c.Type {
				case ai.ContentText:
					text += c.Text
				case ai.ContentThinking:
					thinking += c.Thinking
				case ai.ContentToolCall:
					calls = append(calls, c)
				}
			}
			if text != "Hello there, world." {
				t.Errorf("text %q", text)
			}
			if thinking != "let me think about it" {
				t.Errorf("thinking %q", thinking)
			}
			if len(calls) != 1 || calls[0].Name != "bash" || !strings.Contains(string(calls[0].Arguments), "echo hello") {
				t.Errorf("calls %+v", calls)
			}
			if n := count(evs, ai.EvTextDelta); n != 7 {
				t.Errorf("%d text deltas, want 7", n)
			}
			if m.Usage.Input != 321 || m.Usage.Output != 45 {
				t.Errorf("usage %+v", m.Usage)
			}
		})
	}
}

func TestManyDeltas(t *testing.T) {
	deltas := make([]string, 5000)
	for i := range deltas {
		deltas[i] = "w "
	}
	for _, a := range apis() {
		t.Run(a.name, func(t *testing.T) {
			s := startMock(t, Script{Turns: []Turn{{Deltas: deltas}}})
			m, evs := stream(t, a, s, nil)
			if m.StopReason != "stop" {
				t.Fatalf("stop %q %s", m.StopReason, m.ErrorMessage)
			}
			if n := count(evs, ai.EvTextDelta); n != 5000 {
				t.Fatalf("%d deltas", n)
			}
		})
	}
}

func TestFailures(t *testing.T) {
	for _, a := range apis() {
		t.Run(a.name+"/status", func(t *testing.T) {
			s := startMock(t, Script{Turns: []Turn{{Status: 400, ErrorMessage: "bad mock"}}})
			m, _ := stream(t, a, s, nil)
			if m.StopReason != "error" || !strings.Contains(m.ErrorMessage, "bad mock") || m.ErrorStatus != 400 {
				t.Fatalf("stop %q error %q status %d", m.StopReason, m.ErrorMessage, m.ErrorStatus)
			}
		})
		t.Run(a.name+"/cut", func(t *testing.T) {
			s := startMock(t, Script{Turns: []Turn{{Text: strings.Repeat("x", 100), TextChunks: 50, CutAfter: 10}}})
			m, _ := stream(t, a, s, nil)
			if m.StopReason != "error" {
				t.Fatalf("a cut stream ended with %q", m.StopReason)
			}
		})
	}
}

func TestTurnChoiceAndSequential(t *testing.T) {
	user := &ai.UserMessage{Role: ai.RoleUser, Content: ai.StringContent("go"), Timestamp: 1}
	for _, a := range apis() {
		t.Run(a.name, func(t *testing.T) {
			s := startMock(t, Script{Turns: []Turn{
				{ToolCalls: []ToolCall{{ID: "call_1", Name: "bash", Arguments: `{"command":"echo hello"}`}}},
				{Text: "done"},
			}})
			m1, _ := stream(t, a, s, []ai.Message{user})
			if m1.StopReason != "toolUse" {
				t.Fatalf("first turn %q %s", m1.StopReason, m1.ErrorMessage)
			}
			res := &ai.ToolResultMessage{Role: ai.RoleToolResult, ToolCallID: m1.ToolCalls()[0].ID, ToolName: "bash", Content: []ai.Content{ai.Text("hello\n")}, Timestamp: 2}
			m2, _ := stream(t, a, s, []ai.Message{user, m1, res})
			if m2.StopReason != "stop" || len(m2.Content) != 1 || m2.Content[0].Text != "done" {
				t.Fatalf("second turn %+v", m2)
			}
			s.SetScript(Script{Sequential: true, Turns: []Turn{{Status: 529}, {Text: "again"}}})
			if m, _ := stream(t, a, s, []ai.Message{user}); m.StopReason != "error" {
				t.Fatalf("sequential 1: %q", m.StopReason)
			}
			if m, _ := stream(t, a, s, []ai.Message{user}); m.StopReason != "stop" {
				t.Fatalf("sequential 2: %q %s", m.StopReason, m.ErrorMessage)
			}
			if s.Requests() != 4 {
				t.Fatalf("%d requests", s.Requests())
			}
		})
	}
}

func TestLoopbackOnlyAndIdleStop(t *testing.T) {
	if _, err := Start(Options{Addr: "0.0.0.0:0"}); err == nil {
		t.Fatal("a non-loopback address was accepted")
	}
	s, err := Start(Options{IdleTimeout: 50 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	select {
	case <-s.Done():
	case <-time.After(time.Minute):
		s.Close()
		t.Fatal("the idle server did not stop by itself")
	}
}
