package acp

import (
	sdk "github.com/coder/acp-go-sdk"

	"github.com/pisces-agent/pisces/internal/mcp"
)

// editorServers turns the mcpServers of session/new, session/load or
// session/resume into server entries that belong to the session: stdio
// and streamable HTTP, every tool exposed directly (the editor chose the
// servers). SSE, which initialize does not advertise, and a server with no
// name, no command or no URL are refused with an error naming it.
func editorServers(list []sdk.McpServer) ([]*mcp.ServerConfig, error) {
	var out []*mcp.ServerConfig
	seen := map[string]bool{}
	for i, s := range list {
		c := &mcp.ServerConfig{Scope: mcp.ScopeSession, Timeout: mcp.DefaultTimeout, Enabled: true, Exposure: mcp.ExposureDirect}
		switch {
		case s.Stdio != nil:
			c.Name, c.Transport, c.Command, c.Args = s.Stdio.Name, "stdio", s.Stdio.Command, s.Stdio.Args
			for _, e := range s.Stdio.Env {
				c.Env = append(c.Env, [2]string{e.Name, e.Value})
			}
			if c.Command == "" {
				return nil, invalidParams("mcpServers[%d] (%q): command is empty", i, c.Name)
			}
		case s.Http != nil:
			c.Name, c.Transport, c.URL = s.Http.Name, "http", s.Http.Url
			for _, h := range s.Http.Headers {
				c.Headers = append(c.Headers, [2]string{h.Name, h.Value})
			}
			if c.URL == "" {
				return nil, invalidParams("mcpServers[%d] (%q): url is empty", i, c.Name)
			}
		case s.Sse != nil:
			return nil, invalidParams("mcpServers[%d] (%q): the SSE transport is not supported (mcpCapabilities.sse is false); give the server's streamable HTTP endpoint with type \"http\"", i, s.Sse.Name)
		case s.Acp != nil:
			return nil, invalidParams("mcpServers[%d] (%q): MCP over ACP is not supported (mcpCapabilities.acp is false)", i, s.Acp.Name)
		default:
			return nil, invalidParams("mcpServers[%d]: not a stdio or http server", i)
		}
		if c.Name == "" {
			return nil, invalidParams("mcpServers[%d]: name is empty", i)
		}
		if seen[c.Name] {
			return nil, invalidParams("mcpServers[%d]: two servers are named %q", i, c.Name)
		}
		seen[c.Name] = true
		out = append(out, c)
	}
	return out, nil
}
