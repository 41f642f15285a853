package acp_test

import (
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"

	sdk "github.com/coder/acp-go-sdk"
	mcpsdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/pisces-agent/pisces/internal/mcp/mcptest"
)

// editorStdioServer is an editor's stdio MCP server: the test binary.
func editorStdioServer(t *testing.T, name string) sdk.McpServer {
	t.Helper()
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	return sdk.McpServer{Stdio: &sdk.McpServerStdio{Name: name, Command: exe, Args: []string{}, Env: []sdk.EnvVariable{{Name: "PISCES_TEST_MCP_SERVER", Value: "1"}}}}
}

// editorHTTPServer is an editor's streamable HTTP MCP server in the test
// process; the headers it receives go to seen.
func editorHTTPServer(t *testing.T, name string, seen chan<- http.Header) sdk.McpServer {
	h := mcpsdk.NewStreamableHTTPHandler(func(*http.Request) *mcpsdk.Server { return mcptest.Server() }, nil)
	ts := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		select {
		case seen <- r.Header.Clone():
		default:
		}
		h.ServeHTTP(w, r)
	}))
	t.Cleanup(func() {
		// The agent may still hold its stream open.
		ts.CloseClientConnections()
		ts.Close()
	})
	return sdk.McpServer{Http: &sdk.McpServerHttpInline{Type: "http", Name: name, Url: ts.URL, Headers: []sdk.HttpHeader{{Name: "X-Editor", Value: "zed"}}}}
}

const mcpScript = `{"turns":[
 {"content":[{"type":"toolCall","id":"m1","name":"mcp__ed__echo","arguments":{"message":"from stdio"}},{"type":"toolCall","id":"m2","name":"mcp__web__get_sum","arguments":{"a":2,"b":40}}]},
 {"content":[{"type":"text","text":"both answered"}]}
]}`

// The editor's MCP servers (stdio and HTTP) are connected for the session
// and their tools offered directly: a scripted call of each reaches the
// server, and its result comes back as the tool call's content.
func TestEditorMCPServers(t *testing.T) {
	dir := t.TempDir()
	agentDir, proj, script := setupDirs(t, dir, mcpScript)
	r := startBinary(t, dir, agentDir, proj, "--provider", "scripted", "--script", script)
	init := r.initialize()
	if mc := init.AgentCapabilities.McpCapabilities; !mc.Http || mc.Sse {
		t.Errorf("mcpCapabilities %+v: want http and not sse", mc)
	}
	seen := make(chan http.Header, 100)
	resp, err := r.conn.NewSession(r.ctx(), sdk.NewSessionRequest{Cwd: proj, McpServers: []sdk.McpServer{
		editorStdioServer(t, "ed"), editorHTTPServer(t, "web", seen),
	}})
	if err != nil {
		t.Fatalf("session/new: %v\nstderr:\n%s", err, r.stderr)
	}
	id := resp.SessionId
	if _, err := r.conn.SetSessionMode(r.ctx(), sdk.SetSessionModeRequest{SessionId: id, ModeId: "auto"}); err != nil {
		t.Fatal(err)
	}
	if stop := r.prompt(id, "use the editor's tools"); stop != sdk.StopReasonEndTurn {
		t.Errorf("stopReason %s", stop)
	}
	ups := r.ed.snapshot()
	for call, want := range map[string]string{"m1": "Echo: from stdio", "m2": `42`} {
		start, updates := toolUpdates(ups, call)
		checkStatuses(t, start, updates, sdk.ToolCallStatusCompleted)
		got := ""
		for _, u := range updates {
			got += contentText(u.Content)
		}
		if !strings.Contains(got, want) {
			t.Errorf("%s's content %q, want %q\nupdates:\n%s\nstderr:\n%s", call, got, want, dump(ups), r.stderr)
		}
	}
	select {
	case h := <-seen:
		if h.Get("X-Editor") != "zed" {
			t.Errorf("the HTTP server got headers %v, want the editor's X-Editor", h)
		}
	default:
		t.Error("the HTTP server was never called")
	}
}

// An SSE server is refused with an error naming it (initialize does not
// advertise SSE); the process goes on.
func TestEditorMCPServerSSERefused(t *testing.T) {
	r := startInProcess(t, "", `{"turns":[]}`)
	r.initialize()
	_, err := r.conn.NewSession(r.ctx(), sdk.NewSessionRequest{Cwd: r.proj, McpServers: []sdk.McpServer{
		{Sse: &sdk.McpServerSseInline{Type: "sse", Name: "old", Url: "http://127.0.0.1:1/sse", Headers: []sdk.HttpHeader{}}},
	}})
	var re *sdk.RequestError
	if !asRequestError(err, &re) || re.Code != -32602 {
		t.Fatalf("session/new with an SSE server: %v, want -32602", err)
	}
	if d := fmt.Sprint(re.Data); !strings.Contains(d, `"old"`) || !strings.Contains(d, "SSE") {
		t.Errorf("error data %v does not name the server and SSE", re.Data)
	}
	r.newSession("") // still serving
}

// An editor's server that cannot start is reported in the conversation.
func TestEditorMCPServerFailureNoted(t *testing.T) {
	r := startInProcess(t, "", `{"turns":[]}`)
	r.initialize()
	missing := filepath.Join(r.dir, "no-such-server")
	if _, err := r.conn.NewSession(r.ctx(), sdk.NewSessionRequest{Cwd: r.proj, McpServers: []sdk.McpServer{
		{Stdio: &sdk.McpServerStdio{Name: "gone", Command: missing, Args: []string{}, Env: []sdk.EnvVariable{}}},
	}}); err != nil {
		t.Fatal(err)
	}
	r.ed.waitFor(t, "a note about the failed server", func(ups []sdk.SessionNotification) bool {
		n := text(ups, "agent_message_chunk")
		return strings.Contains(n, "gone: failed") && strings.Contains(n, missing)
	})
}
