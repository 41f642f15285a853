package core

import (
	"fmt"
	"slices"
	"strings"

	"github.com/pisces-agent/pisces/internal/task"
	"github.com/pisces-agent/pisces/internal/tools"
)

// DefaultActiveTools names the tools a session offers the model unless
// --tools, --no-tools, settings defaultTools or set_active_tools say
// otherwise: pi's four built-ins, then the task and todo_write tools (the
// pisces fork's headline feature; pi 1.5 declares only the four).
func DefaultActiveTools() []string {
	return append(slices.Clone(tools.DefaultActive), task.Name, task.TodoWriteName)
}

// AllTools returns every tool that can be activated: the session's own,
// then the MCP tools offered now.
func (s *Session) AllTools() []tools.Tool {
	s.mu.Lock()
	own := s.tools
	s.mu.Unlock()
	all := slices.Clone(own)
	for _, e := range s.mcpEntries(own) {
		all = append(all, e.Tool)
	}
	return all
}

// ActiveToolNames returns the names of the active tools, in tool order.
func (s *Session) ActiveToolNames() []string {
	out := []string{}
	for _, t := range s.activeTools() {
		out = append(out, t.Name())
	}
	return out
}

// SetActiveTools activates exactly the named tools (MCP tools offered now
// included: the choice on each of them holds for the session). Unknown
// names are an error naming them, and nothing changes. The new set applies from the next
// prompt (a run in progress keeps the tools it started with).
func (s *Session) SetActiveTools(names []string) error {
	all := s.AllTools()
	known := map[string]bool{}
	for _, t := range all {
		known[t.Name()] = true
	}
	var unknown []string
	for _, n := range names {
		if !known[n] {
			unknown = append(unknown, n)
		}
	}
	if len(unknown) > 0 {
		return fmt.Errorf("Unknown tool(s): %s (available: %s)", strings.Join(unknown, ", "), strings.Join(toolNames(all), ", "))
	}
	s.mu.Lock()
	own := s.tools
	s.mu.Unlock()
	var offered []string
	on := map[string]bool{}
	for _, e := range s.mcpEntries(own) {
		offered = append(offered, e.Tool.Name())
	}
	active := []string{}
	for _, n := range names {
		if slices.Contains(offered, n) {
			on[n] = true
		} else {
			active = append(active, n)
		}
	}
	if s.opts.MCP != nil {
		s.opts.MCP.SetActive(offered, on)
	}
	s.mu.Lock()
	s.active = active
	s.mu.Unlock()
	return nil
}

func toolNames(ts []tools.Tool) []string {
	out := make([]string, 0, len(ts))
	for _, t := range ts {
		out = append(out, t.Name())
	}
	return out
}

// SetHostTools replaces the tools the client executes (set_host_tools):
// they join the tool set, active, from the next prompt. A name that a
// built-in or extension tool already has is refused.
func (s *Session) SetHostTools(host []tools.Tool) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	old := map[string]bool{}
	for _, t := range s.hostTools {
		old[t.Name()] = true
	}
	var base []tools.Tool
	for _, t := range s.tools {
		if !old[t.Name()] {
			base = append(base, t)
		}
	}
	for _, h := range host {
		for _, t := range base {
			if t.Name() == h.Name() {
				return fmt.Errorf("Host tool %q clashes with a tool Pisces already has", h.Name())
			}
		}
	}
	var active []string
	for _, n := range s.active {
		if !old[n] {
			active = append(active, n)
		}
	}
	for _, h := range host {
		active = append(active, h.Name())
	}
	s.hostTools = host
	s.tools = append(base, host...)
	s.active = active
	return nil
}
