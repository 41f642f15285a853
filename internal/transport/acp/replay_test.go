package acp_test

import (
	"strings"
	"testing"

	sdk "github.com/coder/acp-go-sdk"

	"github.com/pisces-agent/pisces/internal/ai"
	"github.com/pisces-agent/pisces/internal/session"
)

// TestLoadAfterCompaction: session/load of a compacted session replays
// the summary as an agent message, then the kept entries (a user's shell
// command as an execute tool call with its final status), and nothing of
// what the compaction replaced.
func TestLoadAfterCompaction(t *testing.T) {
	dir := t.TempDir()
	r := startInProcess(t, dir, `{"turns":[]}`)
	st, err := session.New(session.Options{Dir: session.DirFor(r.agent, r.proj), Cwd: r.proj})
	if err != nil {
		t.Fatal(err)
	}
	user := func(text string) *session.Entry {
		e, err := st.AppendMessage(&ai.UserMessage{Role: ai.RoleUser, Content: ai.StringContent(text), Timestamp: 1})
		if err != nil {
			t.Fatal(err)
		}
		return e
	}
	assistant := func(text string) {
		if _, err := st.AppendMessage(&ai.AssistantMessage{Role: ai.RoleAssistant, Content: []ai.Content{ai.Text(text)}, StopReason: ai.StopStop, Timestamp: 2}); err != nil {
			t.Fatal(err)
		}
	}
	user("old question")
	assistant("old answer")
	kept := user("kept question")
	assistant("kept answer")
	if _, err := st.AppendCompaction("summary of the old part", kept.ID, 1000, nil, false); err != nil {
		t.Fatal(err)
	}
	exit := 1
	if _, err := st.AppendMessage(&ai.BashExecutionMessage{Role: ai.RoleBashExecution, Command: "false", Output: "oops\n", ExitCode: &exit, Timestamp: 3}); err != nil {
		t.Fatal(err)
	}
	user("after")
	assistant("after answer")
	id := st.ID()
	if err := st.Close(); err != nil {
		t.Fatal(err)
	}

	r.initialize()
	if _, err := r.conn.LoadSession(r.ctx(), sdk.LoadSessionRequest{SessionId: sdk.SessionId(id), Cwd: r.proj, McpServers: []sdk.McpServer{}}); err != nil {
		t.Fatalf("session/load: %v", err)
	}
	ups := r.ed.snapshot()
	var got []string
	for _, u := range ups {
		switch {
		case u.Update.UserMessageChunk != nil:
			got = append(got, "user: "+u.Update.UserMessageChunk.Content.Text.Text)
		case u.Update.AgentMessageChunk != nil:
			got = append(got, "agent: "+u.Update.AgentMessageChunk.Content.Text.Text)
		case u.Update.ToolCall != nil:
			tc := u.Update.ToolCall
			got = append(got, "tool: "+string(tc.Kind)+" "+tc.Title+" "+string(tc.Status)+" "+strings.TrimSpace(contentText(tc.Content)))
		}
	}
	want := []string{
		"agent: summary of the old part",
		"user: kept question",
		"agent: kept answer",
		"tool: execute false failed oops",
		"user: after",
		"agent: after answer",
	}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("replay:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
}
