package compaction

import (
	"context"
	"encoding/json"
	"path/filepath"
	"strings"
	"testing"

	"github.com/pisces-agent/pisces/internal/ai"
	"github.com/pisces-agent/pisces/internal/ai/scripted"
	"github.com/pisces-agent/pisces/internal/session"
)

func user(s string) *ai.UserMessage {
	return &ai.UserMessage{Role: ai.RoleUser, Content: ai.BlockContent(ai.Text(s)), Timestamp: 1}
}

func asst(text string, calls ...ai.Content) *ai.AssistantMessage {
	c := []ai.Content{ai.Text(text)}
	c = append(c, calls...)
	return &ai.AssistantMessage{Role: ai.RoleAssistant, Content: c, StopReason: ai.StopStop, Timestamp: 2}
}

func tcall(id, name, args string) ai.Content {
	return ai.Content{Type: ai.ContentToolCall, ID: id, Name: name, Arguments: json.RawMessage(args)}
}

func result(id, name, text string) *ai.ToolResultMessage {
	return &ai.ToolResultMessage{Role: ai.RoleToolResult, ToolCallID: id, ToolName: name, Content: []ai.Content{ai.Text(text)}, Timestamp: 3}
}

func build(t *testing.T, msgs ...ai.Message) *session.Session {
	t.Helper()
	s, err := session.New(session.Options{Dir: filepath.Join(t.TempDir()), Cwd: "/x", InMemory: true})
	if err != nil {
		t.Fatal(err)
	}
	for _, m := range msgs {
		if _, err := s.AppendMessage(m); err != nil {
			t.Fatal(err)
		}
	}
	return s
}

func TestEstimateTokens(t *testing.T) {
	if n := EstimateTokens(user("abcdefgh")); n != 2 {
		t.Fatalf("user: %d", n)
	}
	if n := EstimateTokens(user("abcdefghi")); n != 3 {
		t.Fatalf("ceil: %d", n)
	}
	img := &ai.UserMessage{Role: ai.RoleUser, Content: ai.BlockContent(ai.Image("xx", "image/png"))}
	if n := EstimateTokens(img); n != 1200 {
		t.Fatalf("image: %d", n)
	}
	if n := EstimateTokens(asst("", tcall("c", "read", `{"path":"a"}`))); n != (4+12+3)/4 {
		t.Fatalf("tool call: %d", n)
	}
}

func TestPrepareNeverCutsAtToolResult(t *testing.T) {
	long := strings.Repeat("x", 400) // 100 tokens
	s := build(t,
		user("first "+long),
		asst("looking", tcall("c1", "read", `{"path":"a.go"}`)),
		result("c1", "read", long),
		asst("editing", tcall("c2", "edit", `{"path":"b.go"}`)),
		result("c2", "edit", "ok"),
		asst("done"),
		user("second"),
		asst("answer"),
	)
	path := s.Branch(s.LeafID())
	p, err := Prepare(path, s.BuildContext().Messages, 110)
	if err != nil {
		t.Fatal(err)
	}
	kept := s.Entry(p.FirstKeptEntryID)
	if kept.Role() == ai.RoleToolResult {
		t.Fatal("cut before a tool result")
	}
	// The long read result is where the kept tokens run out; the cut moves
	// on to the next assistant message, so the edit stays in full.
	if a, ok := kept.Message().(*ai.AssistantMessage); !ok || ai.JoinText(a.Content, "") != "editing" {
		t.Fatalf("cut at %s %v", kept.Role(), kept.Message())
	}
	if strings.Join(p.ReadFiles, ",") != "a.go" || len(p.ModifiedFiles) != 0 {
		t.Fatalf("files %v %v", p.ReadFiles, p.ModifiedFiles)
	}
	// The cut falls inside the first turn: its start is the turn prefix.
	if !p.IsSplitTurn || len(p.TurnPrefix) != 3 || len(p.ToSummarize) != 0 {
		t.Fatalf("split %v prefix %d history %d", p.IsSplitTurn, len(p.TurnPrefix), len(p.ToSummarize))
	}
}

func TestPrepareSplitTurnAndErrors(t *testing.T) {
	long := strings.Repeat("y", 400)
	s := build(t, user("q"), asst(long), asst(long), asst("tail"))
	path := s.Branch(s.LeafID())
	p, err := Prepare(path, s.BuildContext().Messages, 50)
	if err != nil {
		t.Fatal(err)
	}
	if !p.IsSplitTurn || len(p.TurnPrefix) == 0 {
		t.Fatalf("expected a split turn: %+v", p)
	}
	small := build(t, user("hi"), asst("hello"))
	if _, err := Prepare(small.Branch(small.LeafID()), nil, 20000); err != ErrNothingToCompact {
		t.Fatalf("small: %v", err)
	}
	if _, err := small.AppendCompaction("s", "", 1, nil, false); err != nil {
		t.Fatal(err)
	}
	if _, err := Prepare(small.Branch(small.LeafID()), nil, 1); err != ErrAlreadyCompacted {
		t.Fatalf("compacted: %v", err)
	}
}

func TestSerialize(t *testing.T) {
	got := Serialize([]ai.Message{user("hi"), asst("ok", tcall("c", "bash", `{"command":"ls"}`)), result("c", "bash", strings.Repeat("z", 2100))})
	for _, want := range []string{"[User]: hi", "[Assistant]: ok", `[Assistant tool calls]: bash({"command":"ls"})`, "[Tool result]: ", "[... 100 more characters truncated]"} {
		if !strings.Contains(got, want) {
			t.Errorf("missing %q in\n%s", want, got)
		}
	}
}

func TestSummarizeWithScriptedModel(t *testing.T) {
	prov, _ := scripted.Parse([]byte(`{"turns":[{"content":[{"type":"text","text":"## Goal\nx"}]}]}`), "t")
	p := &Preparation{ToSummarize: []ai.Message{user("q"), asst("a")}, ReadFiles: []string{"r.go"}, ModifiedFiles: []string{}}
	sum, _, err := Summarize(context.Background(), Model{Provider: prov, Model: prov.Model()}, p, "", 16384)
	if err != nil {
		t.Fatal(err)
	}
	if sum != "## Goal\nx\n\n<read-files>\nr.go\n</read-files>" {
		t.Fatalf("summary %q", sum)
	}
	// An exhausted script is a summarization failure, named as such.
	if _, _, err := Summarize(context.Background(), Model{Provider: prov, Model: prov.Model()}, p, "", 16384); err == nil || !strings.HasPrefix(err.Error(), "Summarization failed: ") {
		t.Fatalf("err %v", err)
	}
}

func TestPrepareBranch(t *testing.T) {
	s := build(t, user("root q"), asst("root a"))
	fork := s.LeafID()
	s.AppendMessage(user("branch q"))
	s.AppendMessage(asst("branch a"))
	old := s.Branch(s.LeafID())
	target := s.Branch(fork)
	p := PrepareBranch(old, target, 100000)
	if p.CommonAncestorID != fork || len(p.Messages) != 2 {
		t.Fatalf("prep %+v", p)
	}
}
