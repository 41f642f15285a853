// Package micro holds Go micro-benchmarks of Pisces' hot paths, importing
// the internal packages: JSONL framing and dispatch of RPC lines, event
// encoding, session append and load, and tree projection.
//
//	go test -run '^$' -bench . -benchmem ./bench/micro/
package micro

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"strings"
	"testing"

	oai "github.com/openai/openai-go/v3"
	"github.com/pisces-agent/pisces/bench/mockllm"
	"github.com/pisces-agent/pisces/bench/sessgen"
	"github.com/pisces-agent/pisces/internal/ai"
	"github.com/pisces-agent/pisces/internal/ai/anthropic"
	"github.com/pisces-agent/pisces/internal/ai/openai"
	"github.com/pisces-agent/pisces/internal/core"
	"github.com/pisces-agent/pisces/internal/session"
	rpcmode "github.com/pisces-agent/pisces/internal/transport/rpc"
	"github.com/pisces-agent/pisces/rpc"
)

// newCore returns a core session over an in-memory store.
func newCore(tb testing.TB) *core.Session {
	tb.Helper()
	dir := tb.TempDir()
	st, err := session.New(session.Options{InMemory: true, Cwd: dir})
	if err != nil {
		tb.Fatal(err)
	}
	s, err := core.New(core.Options{AgentDir: dir, Cwd: dir, Store: st, InMemory: true, NoContextFiles: true, Log: io.Discard})
	if err != nil {
		tb.Fatal(err)
	}
	return s
}

// serveLines runs the RPC server over input and returns the output size.
func serveLines(tb testing.TB, s *core.Session, input []byte) int {
	var out countWriter
	srv := rpcmode.New(s, &out, rpcmode.Options{Stderr: io.Discard})
	if err := srv.Serve(bytes.NewReader(input), nil); err != nil {
		tb.Fatal(err)
	}
	return int(out)
}

type countWriter int64

func (c *countWriter) Write(p []byte) (int, error) { *c += countWriter(len(p)); return len(p), nil }

// BenchmarkRPCFraming: 1000 command lines through the stdio adapter
// (line splitting, JSON validation, dispatch, response encoding, the
// ordered writer). "unknown" is framing + parse + an error response;
// "get_state" adds a real handler.
func BenchmarkRPCFraming(b *testing.B) {
	for _, c := range []struct{ name, line string }{
		{"unknown", `{"id":"x1","type":"no_such_command"}`},
		{"get_state", `{"id":"x1","type":"get_state"}`},
		{"get_last_assistant_text", `{"id":"x1","type":"get_last_assistant_text"}`},
	} {
		b.Run(c.name, func(b *testing.B) {
			s := newCore(b)
			input := bytes.Repeat([]byte(c.line+"\n"), 1000)
			b.SetBytes(int64(len(input)))
			b.ReportAllocs()
			for b.Loop() {
				if n := serveLines(b, s, input); n == 0 {
					b.Fatal("no output")
				}
			}
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/1000, "ns/line")
		})
	}
}

func assistant(text string) *ai.AssistantMessage {
	m, err := ai.DecodeMessage([]byte(fmt.Sprintf(`{"role":"assistant","content":[{"type":"text","text":%q}],"api":"openai-completions","provider":"mock","model":"mock-model","usage":{"input":100,"output":5000,"cacheRead":0,"cacheWrite":0,"totalTokens":5100,"cost":{"input":0,"output":0,"cacheRead":0,"cacheWrite":0,"total":0}},"stopReason":"stop","timestamp":1773614400000}`, text)))
	if err != nil {
		panic(err)
	}
	return m.(*ai.AssistantMessage)
}

// BenchmarkEncodeEvent: rpc.EncodeEvent of the frames of a streamed reply.
func BenchmarkEncodeEvent(b *testing.B) {
	long := strings.Repeat("w123 ", 5000)
	msg := assistant(long)
	cases := []struct {
		name string
		ev   func() rpc.Event
	}{
		{"text_delta", func() rpc.Event {
			return &rpc.MessageUpdateEvent{Usage: &msg.Usage, AssistantMessageEvent: ai.AssistantEvent{Type: ai.EvTextDelta, ContentIndex: 0, Delta: "w123 "}}
		}},
		{"text_delta_merged_5000", func() rpc.Event {
			return &rpc.MessageUpdateEvent{Usage: &msg.Usage, AssistantMessageEvent: ai.AssistantEvent{Type: ai.EvTextDelta, ContentIndex: 0, Delta: long}}
		}},
		{"message_end_25kB", func() rpc.Event { return &rpc.MessageEndEvent{Message: msg} }},
		{"agent_settled", func() rpc.Event { return &rpc.AgentSettledEvent{} }},
	}
	for _, c := range cases {
		b.Run(c.name, func(b *testing.B) {
			ev := c.ev()
			n := 0
			b.ReportAllocs()
			for b.Loop() {
				out, err := rpc.EncodeEvent(ev)
				if err != nil {
					b.Fatal(err)
				}
				n = len(out)
			}
			b.SetBytes(int64(n))
		})
	}
}

// BenchmarkSessionAppend: one message appended to a session file (one
// write of one line), after the file exists.
func BenchmarkSessionAppend(b *testing.B) {
	dir := b.TempDir()
	s, err := session.New(session.Options{Dir: dir, Cwd: dir})
	if err != nil {
		b.Fatal(err)
	}
	defer s.Close()
	user, _ := ai.DecodeMessage([]byte(`{"role":"user","content":[{"type":"text","text":"run the tests and fix what fails"}],"timestamp":1773614400000}`))
	reply := assistant(strings.Repeat("word ", 100))
	if _, err := s.AppendMessage(user); err != nil {
		b.Fatal(err)
	}
	b.ReportAllocs()
	for b.Loop() {
		if _, err := s.AppendMessage(reply); err != nil {
			b.Fatal(err)
		}
	}
}

func genFile(b *testing.B, o sessgen.Options) (string, int64) {
	b.Helper()
	p, err := sessgen.WriteFile(b.TempDir(), o)
	if err != nil {
		b.Fatal(err)
	}
	st, _ := os.Stat(p)
	return p, st.Size()
}

// BenchmarkSessionLoad: session.Open (+ BuildContext) of generated
// sessions.
func BenchmarkSessionLoad(b *testing.B) {
	for _, n := range []int{2000, 20000} {
		p, size := genFile(b, sessgen.Options{Entries: n, Seed: uint64(n)})
		b.Run(fmt.Sprintf("open_%d", n), func(b *testing.B) {
			b.SetBytes(size)
			b.ReportAllocs()
			for b.Loop() {
				s, _, err := session.Open(p)
				if err != nil || s.Len() != n {
					b.Fatal(err)
				}
			}
		})
		b.Run(fmt.Sprintf("context_only_%d", n), func(b *testing.B) {
			s, _, err := session.Open(p)
			if err != nil {
				b.Fatal(err)
			}
			b.ReportAllocs()
			for b.Loop() {
				if len(s.BuildContext().Messages) == 0 {
					b.Fatal("empty context")
				}
			}
		})
		b.Run(fmt.Sprintf("open_context_%d", n), func(b *testing.B) {
			b.SetBytes(size)
			b.ReportAllocs()
			for b.Loop() {
				s, _, err := session.Open(p)
				if err != nil {
					b.Fatal(err)
				}
				if len(s.BuildContext().Messages) == 0 {
					b.Fatal("empty context")
				}
			}
		})
	}
}

// BenchmarkTree: session.Tree (pi's get_tree projection) of a 100000
// entry session with side branches and labels, and of a linear 20000.
func BenchmarkTree(b *testing.B) {
	for _, o := range []sessgen.Options{
		{Entries: 20000, Seed: 3},
		{Entries: 100000, Seed: 4, BranchEvery: 500, LabelEvery: 1000},
	} {
		p, _ := genFile(b, o)
		s, _, err := session.Open(p)
		if err != nil {
			b.Fatal(err)
		}
		b.Run(fmt.Sprintf("entries_%d", o.Entries), func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				if len(s.Tree()) != 1 {
					b.Fatal("want one root")
				}
			}
		})
	}
}

// TestMicroSetup keeps the helpers honest under plain `go test`.
func TestMicroSetup(t *testing.T) {
	s := newCore(t)
	if n := serveLines(t, s, []byte(`{"id":"a","type":"get_state"}`+"\n")); n == 0 {
		t.Fatal("no output")
	}
	out, err := rpc.EncodeEvent(&rpc.MessageEndEvent{Message: assistant("hi")})
	if err != nil || !bytes.Contains(out, []byte(`"type":"message_end"`)) {
		t.Fatalf("%s %v", out, err)
	}
}

// BenchmarkProviderStream: one reply of 5000 text deltas from the mock
// server through Pisces' provider adapters (HTTP, SSE, chunk decoding,
// the message builder), without the agent loop or RPC output. The mock
// server runs in the same process and its cost is included.
func BenchmarkProviderStream(b *testing.B) {
	deltas := make([]string, 5000)
	for i := range deltas {
		deltas[i] = fmt.Sprintf("w%d ", i%1000)
	}
	srv, err := mockllm.Start(mockllm.Options{})
	if err != nil {
		b.Fatal(err)
	}
	defer srv.Close()
	srv.SetScript(mockllm.Script{Turns: []mockllm.Turn{{Deltas: deltas}}})
	for _, c := range []struct {
		api  string
		p    ai.Provider
		base string
	}{
		{"openai-completions", openai.NewCompletions(http.DefaultClient), srv.URL() + "/v1"},
		{"anthropic-messages", anthropic.New(), srv.URL()},
	} {
		b.Run(c.api, func(b *testing.B) {
			req := &ai.Request{
				Model:    &ai.Model{ID: "mock-model", API: c.api, Provider: "mock", BaseURL: c.base, ContextWindow: 128000, MaxTokens: 1000},
				Messages: []ai.Message{&ai.UserMessage{Role: ai.RoleUser, Content: ai.StringContent("go"), Timestamp: 1}},
				APIKey:   "k",
			}
			b.ReportAllocs()
			for b.Loop() {
				n := 0
				m := c.p.Stream(context.Background(), req, func(e ai.AssistantEvent) {
					if e.Type == ai.EvTextDelta {
						n++
					}
				})
				if n != 5000 || m.StopReason != "stop" {
					b.Fatalf("%d deltas, %s %s", n, m.StopReason, m.ErrorMessage)
				}
			}
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/5000, "ns/delta")
		})
	}
}

// BenchmarkMockStream: the mock's 5000-delta stream read by a bare HTTP
// client, the floor under BenchmarkProviderStream.
func BenchmarkMockStream(b *testing.B) {
	deltas := make([]string, 5000)
	for i := range deltas {
		deltas[i] = fmt.Sprintf("w%d ", i%1000)
	}
	srv, err := mockllm.Start(mockllm.Options{})
	if err != nil {
		b.Fatal(err)
	}
	defer srv.Close()
	srv.SetScript(mockllm.Script{Turns: []mockllm.Turn{{Deltas: deltas}}})
	for b.Loop() {
		resp, err := http.Post(srv.URL()+"/v1/chat/completions", "application/json", strings.NewReader(`{"model":"m","messages":[]}`))
		if err != nil {
			b.Fatal(err)
		}
		io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
	}
}

// BenchmarkChunkDecode: one Chat Completions text chunk decoded by the
// openai-go SDK type Pisces uses, against a minimal encoding/json struct
// (what a hand-written decoder would at most cost).
func BenchmarkChunkDecode(b *testing.B) {
	chunk := []byte(`{"id":"chatcmpl-mock","object":"chat.completion.chunk","created":1773614400,"model":"mock-model","choices":[{"index":0,"delta":{"content":"w123 "},"finish_reason":null}]}`)
	b.Run("openai-go", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			var c oai.ChatCompletionChunk
			if err := c.UnmarshalJSON(chunk); err != nil || c.Choices[0].Delta.Content != "w123 " {
				b.Fatal(err)
			}
		}
	})
	b.Run("minimal-struct", func(b *testing.B) {
		type delta struct {
			Content          *string `json:"content"`
			ReasoningContent *string `json:"reasoning_content"`
			ToolCalls        []struct {
				Index    int    `json:"index"`
				ID       string `json:"id"`
				Function struct {
					Name      string `json:"name"`
					Arguments string `json:"arguments"`
				} `json:"function"`
			} `json:"tool_calls"`
		}
		type chunkT struct {
			ID      string `json:"id"`
			Choices []struct {
				Index        int     `json:"index"`
				Delta        delta   `json:"delta"`
				FinishReason *string `json:"finish_reason"`
			} `json:"choices"`
			Usage *struct {
				PromptTokens     int `json:"prompt_tokens"`
				CompletionTokens int `json:"completion_tokens"`
			} `json:"usage"`
		}
		b.ReportAllocs()
		for b.Loop() {
			var c chunkT
			if err := json.Unmarshal(chunk, &c); err != nil || *c.Choices[0].Delta.Content != "w123 " {
				b.Fatal(err)
			}
		}
	})
}

// BenchmarkRPCSession: the session commands a client sends after opening
// a big session, one line each through the stdio adapter (parse,
// dispatch, handler, the writer, an output that only counts): the
// switch_session to a 20000-entry file (opening it), then get_messages and
// get_entries of it (the answers streamed from the entries' lines).
func BenchmarkRPCSession(b *testing.B) {
	p, size := genFile(b, sessgen.Options{Entries: 20000, Seed: 6, Cwd: b.TempDir()})
	s := newCore(b)
	if err := s.SwitchSession(p); err != nil {
		b.Fatal(err)
	}
	for _, c := range []struct{ name, line string }{
		{"switch_session_20000", fmt.Sprintf(`{"id":"s","type":"switch_session","sessionPath":%q}`, p)},
		{"get_messages_20000", `{"id":"m","type":"get_messages"}`},
		{"get_entries_20000", `{"id":"e","type":"get_entries"}`},
	} {
		b.Run(c.name, func(b *testing.B) {
			input := []byte(c.line + "\n")
			n := 0
			b.ReportAllocs()
			for b.Loop() {
				n = serveLines(b, s, input)
			}
			if c.name == "switch_session_20000" {
				b.SetBytes(size)
			} else {
				b.SetBytes(int64(n))
			}
		})
	}
}

// BenchmarkEncodeMessages: the get_messages answer of a 20000-entry
// session (rpc.Marshal of the context's messages, as the handler does).
func BenchmarkEncodeMessages(b *testing.B) {
	p, _ := genFile(b, sessgen.Options{Entries: 20000, Seed: 5})
	s, _, err := session.Open(p)
	if err != nil {
		b.Fatal(err)
	}
	msgs := s.BuildContext().Messages
	n := 0
	b.ReportAllocs()
	for b.Loop() {
		out, err := rpc.Marshal(rpc.MessagesData{Messages: msgs})
		if err != nil {
			b.Fatal(err)
		}
		n = len(out)
	}
	b.SetBytes(int64(n))
}
