package core

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"slices"

	"github.com/pisces-agent/pisces/internal/mcp"
	"github.com/pisces-agent/pisces/internal/prompt"
	"github.com/pisces-agent/pisces/internal/tools"
	"github.com/pisces-agent/pisces/rpc"
)

// MCP returns the session's view of the MCP servers (nil when MCP is off).
func (s *Session) MCP() *mcp.Session { return s.opts.MCP }

// StartMCPReports begins reporting the MCP servers to subscribers (and
// starts them): each change of a server as mcp_server_changed, and once,
// when the servers the session started with have settled, a warning
// listing those that failed. A surface calls it once it has subscribed, so
// that it sees the warning; later calls do nothing.
func (s *Session) StartMCPReports() { s.mcpOnce.Do(s.startMCPReports) }

func (s *Session) startMCPReports() {
	m := s.opts.MCP
	if m == nil {
		return
	}
	// Watch first, then start the servers (Servers does): every change
	// of theirs is reported.
	// A project's servers start later, once it is trusted: the watch
	// stays for them too.
	stop := m.Watch(func(st mcp.Status) { s.emit(&rpc.MCPServerChangedEvent{Server: MCPServerInfo(st)}) })
	ctx, cancel := context.WithCancel(context.Background())
	s.mu.Lock()
	s.mcpStop = func() {
		cancel()
		stop()
	}
	s.mu.Unlock()
	if len(m.Servers()) == 0 {
		return
	}
	go func() {
		if msg := m.Attention(ctx); msg != "" && ctx.Err() == nil {
			s.notifyMCP(msg)
		}
	}()
}

func (s *Session) notifyMCP(msg string) {
	s.emit(&rpc.NotifyEvent{ID: newNotifyID(), Method: "notify", Message: msg, NotifyType: "warning"})
}

func newNotifyID() string {
	var b [8]byte
	_, _ = rand.Read(b[:])
	return hex.EncodeToString(b[:])
}

// MCPServerInfo is a server's status as the protocol shows it.
func MCPServerInfo(st mcp.Status) rpc.MCPServerInfo {
	names := st.Tools
	if names == nil {
		names = []string{}
	}
	return rpc.MCPServerInfo{Name: st.Name, Scope: st.Scope, State: st.State, Exposure: st.Exposure,
		Description: st.Description, Command: st.Command, ToolCount: len(st.Tools), Tools: names,
		Resources: st.Resources, Error: st.Error, Note: st.Note}
}

// MCPStatus describes the session's MCP servers (nil when MCP is off).
func (s *Session) MCPStatus() *rpc.MCPStatusData {
	m := s.opts.MCP
	d := &rpc.MCPStatusData{Servers: []rpc.MCPServerInfo{}, Problems: []string{}}
	if m == nil {
		return d
	}
	for _, srv := range m.Servers() {
		d.Servers = append(d.Servers, MCPServerInfo(srv.Status()))
	}
	if p := m.Problems(); len(p) > 0 {
		d.Problems = p
	}
	return d
}

// MCPTool is an MCP tool offered now, with its server and exposure.
type MCPTool struct {
	Tool     tools.Tool
	Server   string
	Exposure string
	Active   bool
}

// mcpEntries returns the MCP tools offered now, leaving out names a tool
// of the session already has.
func (s *Session) mcpEntries(own []tools.Tool) []mcp.Entry {
	if s.opts.MCP == nil {
		return nil
	}
	var out []mcp.Entry
	for _, e := range s.opts.MCP.Entries() {
		if !slices.ContainsFunc(own, func(t tools.Tool) bool { return t.Name() == e.Tool.Name() }) {
			out = append(out, e)
		}
	}
	return out
}

// MCPTools returns the MCP tools offered now (for get_tools).
func (s *Session) MCPTools() []MCPTool {
	s.mu.Lock()
	own := s.tools
	s.mu.Unlock()
	var out []MCPTool
	for _, e := range s.mcpEntries(own) {
		out = append(out, MCPTool{Tool: e.Tool, Server: e.Server, Exposure: e.Exposure, Active: e.Active})
	}
	return out
}

// mcpSection is the mcp_servers prompt section, when servers that are not
// directly exposed are connected.
func (s *Session) mcpSection() []prompt.Section {
	if s.opts.MCP == nil {
		return nil
	}
	if t := s.opts.MCP.PromptSection(); t != "" {
		return []prompt.Section{{Name: "mcp_servers", Text: t}}
	}
	return nil
}

// waitMCP waits, inside a run, for the servers whose tools are directly
// exposed to settle (each bounded by its timeout), so that the first
// prompt sees their tools, and reports failures not reported yet.
func (s *Session) waitMCP(ctx context.Context) {
	if s.opts.MCP == nil {
		return
	}
	s.opts.MCP.WaitDirect(ctx)
	// Servers that failed since the last warning (a project's, started
	// once it was trusted) are reported here, before the run starts.
	if msg := s.opts.MCP.Unreported(); msg != "" {
		s.notifyMCP(msg)
	}
}
