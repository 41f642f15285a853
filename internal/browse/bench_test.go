package browse

import (
	"encoding/json"
	"fmt"
	"io"
	"path/filepath"
	"sync"
	"testing"

	"github.com/pisces-agent/pisces/internal/ai"
	"github.com/pisces-agent/pisces/internal/session"
)

// genChain appends n entries to a new session in dir through the session
// package's append API (a realistic mix: user prompts, assistant turns with
// a tool call, tool results, assistant answers, and now and then a label),
// then opens the file again as a client would find it.
func genChain(tb testing.TB, dir string, n int) *session.Session {
	tb.Helper()
	s, err := session.New(session.Options{Dir: dir, Cwd: "/home/u/proj"})
	if err != nil {
		tb.Fatal(err)
	}
	usage := ai.Usage{Input: 100, Output: 50, TotalTokens: 150}
	for i := 0; s.Len() < n; i++ {
		var m ai.Message
		switch i % 4 {
		case 0:
			m = &ai.UserMessage{Content: ai.BlockContent(ai.Text(fmt.Sprintf("Please look at file number %d and tell me what the function there does, in detail.", i)))}
		case 1:
			args, _ := json.Marshal(map[string]any{"command": fmt.Sprintf("grep -rn 'func' ./pkg%d | head -50", i)})
			m = &ai.AssistantMessage{Content: []ai.Content{
				{Type: ai.ContentThinking, Thinking: "Let me look at the code first."},
				{Type: ai.ContentToolCall, ID: fmt.Sprintf("call_%d", i), Name: "bash", Arguments: args},
			}, API: "openai-completions", Provider: "mock", Model: "mock-1", Usage: usage, StopReason: ai.StopToolUse}
		case 2:
			m = &ai.ToolResultMessage{ToolCallID: fmt.Sprintf("call_%d", i-1), ToolName: "bash", Content: []ai.Content{ai.Text("pkg/a.go:10: func A() {}\npkg/b.go:20: func B() {}\n")}}
		case 3:
			m = &ai.AssistantMessage{Content: []ai.Content{ai.Text("The function reads the configuration, validates it and returns the parsed value; errors are wrapped with the file name.")},
				API: "openai-completions", Provider: "mock", Model: "mock-1", Usage: usage, StopReason: ai.StopStop}
		}
		if _, err := s.AppendMessage(m); err != nil {
			tb.Fatal(err)
		}
		if i%1000 == 999 && s.Len() < n {
			if _, err := s.AppendLabel(s.LeafID(), fmt.Sprintf("checkpoint %d", i)); err != nil {
				tb.Fatal(err)
			}
		}
	}
	path := s.File()
	if err := s.Close(); err != nil {
		tb.Fatal(err)
	}
	s2, _, err := session.Open(path)
	if err != nil {
		tb.Fatal(err)
	}
	if s2.Len() != n {
		tb.Fatalf("generated %d entries, want %d", s2.Len(), n)
	}
	return s2
}

var (
	bench100kOnce sync.Once
	bench100k     *session.Session
	bench100kDir  string
)

func chain100k(b *testing.B) *session.Session {
	bench100kOnce.Do(func() {
		dir, err := mkTemp()
		if err != nil {
			b.Fatal(err)
		}
		bench100kDir = dir
		bench100k = genChain(b, filepath.Join(dir, "sessions"), 100_000)
	})
	return bench100k
}

// BenchmarkSessionTree100k measures get_session_tree's work on a
// 100000-entry linear session: building the projection and writing the
// JSON.
func BenchmarkSessionTree100k(b *testing.B) {
	s := chain100k(b)
	for _, o := range []struct {
		name string
		opts TreeOptions
	}{
		{"plain", TreeOptions{}},
		{"plain-flat", TreeOptions{Flat: true}},
		{"browse", TreeOptions{View: ViewBrowse, Home: "/home/u"}},
		{"browse-flat", TreeOptions{View: ViewBrowse, Flat: true, Home: "/home/u"}},
	} {
		b.Run(o.name, func(b *testing.B) {
			var size int
			for b.Loop() {
				res := SessionTree(s, o.opts)
				out, _ := res.MarshalJSON()
				size = len(out)
			}
			b.ReportMetric(float64(size), "bytes/op-out")
		})
		b.Run(o.name+"-stream", func(b *testing.B) {
			for b.Loop() {
				res := SessionTree(s, o.opts)
				_, _ = res.WriteTo(io.Discard)
			}
		})
	}
}

// BenchmarkRawTree100k measures get_tree (pi's raw form) on the same session.
func BenchmarkRawTree100k(b *testing.B) {
	s := chain100k(b)
	for _, flat := range []bool{false, true} {
		b.Run(fmt.Sprintf("flat=%v", flat), func(b *testing.B) {
			for b.Loop() {
				res := RawTree(s, flat)
				_, _ = res.MarshalJSON()
			}
		})
	}
}
