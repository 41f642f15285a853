package cli

import (
	"strings"
	"sync/atomic"

	"github.com/pisces-agent/pisces/internal/core"
	"github.com/pisces-agent/pisces/internal/mcp"
)

// startMCP creates the process's MCP manager (its global servers start
// connecting in the background), unless --no-mcp.
func (env *environment) startMCP() {
	if env.args.NoMCP || env.mcp != nil {
		return
	}
	env.mcp = mcp.NewManager(mcp.Options{AgentDir: env.agentDir, Extra: env.args.MCPConfig, Cwd: env.cwd, Version: Version})
}

// closeMCP stops every MCP server (their process groups included).
func (env *environment) closeMCP() {
	if env.mcp != nil {
		env.mcp.Close()
	}
}

// mcpSession returns a core session's view of the MCP servers, and the
// function that ties it to the session once it exists (the view follows
// the session's directory and trust decision).
func (env *environment) mcpSession(cwd string, trusted bool) (*mcp.Session, func(*core.Session)) {
	if env.mcp == nil {
		return nil, func(*core.Session) {}
	}
	var owner atomic.Pointer[core.Session]
	ms := env.mcp.NewSession(mcp.SessionOptions{
		Where: func() (string, bool) {
			if s := owner.Load(); s != nil {
				return s.Cwd(), s.Trusted()
			}
			return cwd, trusted
		},
		Allow:    mcpAllow(env.args),
		Codemode: wantsCodemode(env.args.Tools) || wantsCodemode(env.settings.DefaultTools()),
	})
	return ms, func(s *core.Session) { owner.Store(s) }
}

// mcpAllow applies --tools and --exclude-tools to MCP tools as pi 1.5
// does: a --tools list keeps every MCP tool unless one of its entries
// starts with mcp__ (then only the MCP tools it names or matches);
// --exclude-tools removes what it names or matches.
func mcpAllow(a *Args) func(string) bool {
	var only *toolPattern
	if a.ToolsSet && len(a.Tools) > 0 && !isToolModifier(a.Tools[0]) {
		for _, t := range a.Tools {
			if strings.HasPrefix(t, "mcp__") {
				only = newToolPattern(a.Tools)
				break
			}
		}
	}
	exclude := newToolPattern(a.ExcludeTools)
	return func(name string) bool {
		if exclude.match(name) {
			return false
		}
		return only == nil || !strings.HasPrefix(name, "mcp__") || only.match(name)
	}
}

// isMCPToolName reports the names MCP tools and the MCP client's own tools
// have: --tools and --exclude-tools entries for them cannot be checked at
// start (the servers connect later).
func isMCPToolName(name string) bool {
	switch name {
	case mcp.ToolSearchName, mcp.ListResourcesName, mcp.ListResourceTemplatesName, mcp.ReadResourceName, "codemode":
		return true
	}
	return strings.HasPrefix(name, "mcp__")
}

// wantsCodemode reports a tool list that names codemode (+codemode, or
// codemode in an allowlist): the codemode tool is offered even without a
// codemode server.
func wantsCodemode(list []string) bool {
	for _, x := range list {
		if x == "codemode" || x == "+codemode" {
			return true
		}
	}
	return false
}
