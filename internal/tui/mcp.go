package tui

import (
	"fmt"
	"strings"

	tea "charm.land/bubbletea/v2"

	"github.com/pisces-agent/pisces/rpc"
)

// mcpState is a server's state as `pisces mcp list` writes it.
func mcpState(s rpc.MCPServerInfo) string {
	switch s.State {
	case "connected":
		n := fmt.Sprintf("%d tools", s.ToolCount)
		if s.ToolCount == 1 {
			n = "1 tool"
		}
		return "connected, " + n
	case "failed":
		return "failed: " + s.Error
	}
	return s.State
}

// mcpItems are the rows of the /mcp list.
func mcpItems(d *rpc.MCPStatusData) []item {
	var out []item
	for _, s := range d.Servers {
		out = append(out, item{label: s.Name, desc: mcpState(s) + " (" + s.Exposure + ", " + s.Scope + ")", value: s.Name})
	}
	return out
}

// cmdMCP lists the session's MCP servers: state, tool count, exposure,
// scope; the list follows their changes, and enter writes a server's
// details (command, tools, last error) into the transcript.
func (m *Model) cmdMCP(string) tea.Cmd {
	d := m.sess.MCPStatus()
	if len(d.Servers) == 0 {
		msg := "No MCP servers (mcp.json in the agent dir; a trusted project's .pi/mcp.json or .pisces/mcp.json; --mcp-config)"
		for _, p := range d.Problems {
			msg += "\n" + p
		}
		m.info(msg)
		return nil
	}
	p := &picker{title: "MCP servers", rows: 8, items: mcpItems(d)}
	p.help = "enter shows a server's details · escape closes"
	if len(d.Problems) > 0 {
		p.help = strings.Join(d.Problems, "\n") + "\n" + p.help
	}
	p.refresh = func(m *Model) {
		if d := m.sess.MCPStatus(); len(d.Servers) > 0 {
			sel := p.selected
			p.items = mcpItems(d)
			p.selected = min(sel, len(p.items)-1)
		}
	}
	p.onSelect = func(m *Model, it item) tea.Cmd {
		for _, s := range m.sess.MCPStatus().Servers {
			if s.Name == it.value.(string) {
				m.info(mcpDetails(s))
			}
		}
		return nil
	}
	m.overlay = p
	return nil
}

// mcpDetails is a server's entry of `pisces mcp list`.
func mcpDetails(s rpc.MCPServerInfo) string {
	lines := []string{fmt.Sprintf("MCP server %s: %s (%s, %s)", s.Name, mcpState(s), s.Exposure, s.Scope)}
	if s.Description != "" {
		lines = append(lines, "  "+s.Description)
	}
	if s.Note != "" {
		lines = append(lines, "  note: "+s.Note)
	}
	lines = append(lines, "  "+s.Command)
	if len(s.Tools) > 0 {
		lines = append(lines, "  tools: "+strings.Join(s.Tools, ", "))
	}
	if s.Resources {
		lines = append(lines, "  offers resources")
	}
	return strings.Join(lines, "\n")
}
