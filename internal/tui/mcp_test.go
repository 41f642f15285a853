package tui

import (
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/charmbracelet/x/ansi"
	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/pisces-agent/pisces/internal/core"
	"github.com/pisces-agent/pisces/internal/mcp"
	"github.com/pisces-agent/pisces/internal/mcp/mcptest"
)

// A working server (the in-test MCP server over HTTP) and one whose
// command does not exist: the failure is noted once in the transcript,
// and /mcp lists both with state, tool count, exposure and the error.
func TestMCPStatusAndNotice(t *testing.T) {
	h := sdk.NewStreamableHTTPHandler(func(*http.Request) *sdk.Server { return mcptest.Server() }, nil)
	ts := httptest.NewServer(h)
	t.Cleanup(ts.Close)
	var mgr *mcp.Manager
	d := newDriverWith(t, replyScript, nil, driverSetup{core: func(agentDir string, o *core.Options) {
		if mgr == nil {
			if err := os.MkdirAll(agentDir, 0o755); err != nil {
				t.Fatal(err)
			}
			cfg := `{"mcpServers": {
  "good": {"url": "` + ts.URL + `", "exposure": "direct"},
  "bad": {"command": "/nonexistent/mcp-server-for-a-test"}
}}`
			if err := os.WriteFile(filepath.Join(agentDir, "mcp.json"), []byte(cfg), 0o644); err != nil {
				t.Fatal(err)
			}
			mgr = mcp.NewManager(mcp.Options{AgentDir: agentDir, Cwd: o.Cwd, Version: "test"})
			t.Cleanup(mgr.Close)
		}
		cwd := o.Cwd
		o.MCP = mgr.NewSession(mcp.SessionOptions{Where: func() (string, bool) { return cwd, false }})
	}})
	d.waitFor("the MCP notice", d.contains("MCP servers need attention"))
	s := d.screen()
	if !strings.Contains(s, "bad: failed") || strings.Contains(s, "good: failed") {
		t.Fatalf("notice:\n%s", s)
	}
	d.typeText("/mcp")
	d.key("enter")
	d.waitFor("the server list", func() bool {
		s := d.screen()
		return strings.Contains(s, "MCP servers") && strings.Contains(s, "connected, 6 tools (direct, global)")
	})
	s = d.screen()
	if !strings.Contains(s, "bad   failed: spawn /nonexistent/mcp-server-for-a-test ENOENT (codemode") {
		t.Fatalf("/mcp list:\n%s", s)
	}
	// enter: the selected server's details in the transcript.
	d.key("enter")
	if d.m.overlay != nil {
		t.Fatal("the list is still open")
	}
	s = d.screen()
	if !strings.Contains(s, "MCP server good: connected, 6 tools (direct, global)") || !strings.Contains(s, "tools: big, echo, exit, fail, get-sum, meet") {
		t.Fatalf("details:\n%s", s)
	}
	d.typeText("/mcp")
	d.key("enter")
	d.key("down")
	d.key("enter")
	if s := ansi.Strip(d.m.Transcript(200)); !strings.Contains(s, "MCP server bad: failed: spawn /nonexistent/mcp-server-for-a-test ENOENT (codemode, global)") {
		t.Fatalf("details:\n%s", s)
	}
	// The notice is there once.
	if n := strings.Count(d.m.Transcript(80), "MCP servers need attention"); n != 1 {
		t.Fatalf("the notice is shown %d times", n)
	}
}
