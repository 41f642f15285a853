package mcp

import (
	"context"
	"encoding/json"
	"reflect"
	"sync"
	"time"

	"github.com/pisces-agent/pisces/internal/codemode"
	"github.com/pisces-agent/pisces/internal/tools"
)

// Names of the tools the MCP client adds beside the servers' own.
const (
	ToolSearchName            = "tool_search"
	ListResourcesName         = "list_mcp_resources"
	ListResourceTemplatesName = "list_mcp_resource_templates"
	ReadResourceName          = "read_mcp_resource"
)

const (
	// attentionBound bounds the wait for the servers to settle before the
	// failure warning (each is bounded by its own timeout too).
	attentionBound = 5 * time.Minute
	// searchLimit is the most tools one tool_search loads.
	searchLimit = 10
	// resultLimit is the size past which a result's text is cut in the
	// middle.
	resultLimit = 20 * 1024
)

// SessionOptions configure a session's view of the servers.
type SessionOptions struct {
	// Where returns the session's directory and its trust decision now
	// (sessions move between projects; trust may be decided later).
	Where func() (cwd string, trusted bool)
	// Allow filters tool names by --tools/--exclude-tools (nil: all).
	Allow func(name string) bool
	// Codemode offers the codemode tool even without a codemode server
	// (+codemode in --tools or defaultTools).
	Codemode bool
}

// Session is one core session's view of the manager's servers: which
// tools it offers, which of them tool_search loaded, which the client
// turned on or off.
type Session struct {
	m    *Manager
	opts SessionOptions

	codemode *codemode.Tool

	// ownMu orders SetOwn calls.
	ownMu sync.Mutex

	mu       sync.Mutex
	own      []*Server        // the session's own servers (SetOwn)
	loaded   map[string]bool  // loaded by tool_search
	override map[string]bool  // set_active_tools decisions on MCP tools
	reported map[*Server]bool // settled servers the warnings have covered
}

// NewSession returns a session's view of m.
func (m *Manager) NewSession(opts SessionOptions) *Session {
	s := &Session{m: m, opts: opts, loaded: map[string]bool{}, override: map[string]bool{}, reported: map[*Server]bool{}}
	s.codemode = codemode.New(s.codemodeFunctions)
	return s
}

// codemodeFunctions are the tools a codemode program can call: the
// codemode-exposed tools of the connected servers.
func (s *Session) codemodeFunctions() []codemode.Function {
	var out []codemode.Function
	for _, e := range s.Entries() {
		if e.Exposure == ExposureCodemode && e.Server != "" {
			st := e.Tool.(*serverTool)
			out = append(out, codemode.Function{Tool: e.Tool, Server: e.Server, Name: st.tool.Name})
		}
	}
	return out
}

// Servers returns the servers the session sees.
func (s *Session) Servers() []*Server {
	if s == nil {
		return nil
	}
	cwd, trusted := s.opts.Where()
	out := s.m.Servers(cwd, trusted)
	s.mu.Lock()
	own := s.own
	s.mu.Unlock()
	return overlay(out, own)
}

// SetOwn sets the servers that belong to this session alone (the ones an
// ACP editor gives with a session): they connect in the background (a
// stdio server in the session's directory when its entry names none),
// beside the global and project servers, and an own server replaces one
// of theirs with the same name. A server whose entry is the same as
// before keeps its connection; the others are stopped, their process
// groups included, before SetOwn returns. SetOwn(nil) stops them all (a
// session that closes); the manager's Close stops them too.
func (s *Session) SetOwn(cfgs []*ServerConfig) {
	if s == nil {
		return
	}
	s.ownMu.Lock()
	defer s.ownMu.Unlock()
	cwd, _ := s.opts.Where()
	s.mu.Lock()
	old := s.own
	s.mu.Unlock()
	kept := map[*Server]bool{}
	var next []*Server
	for _, c := range cfgs {
		var same *Server
		for _, o := range old {
			if !kept[o] && reflect.DeepEqual(o.cfg, c) {
				same = o
				break
			}
		}
		if same != nil {
			kept[same] = true
			next = append(next, same)
			continue
		}
		if srv := s.m.adopt(c, cwd); srv != nil {
			next = append(next, srv)
		}
	}
	var stop []*Server
	for _, o := range old {
		if !kept[o] {
			stop = append(stop, o)
		}
	}
	s.mu.Lock()
	s.own = next
	s.mu.Unlock()
	for _, srv := range next {
		srv.start()
	}
	s.m.drop(stop)
}

// Watch calls fn on every change of a server's state or tools; the
// returned function stops it.
func (s *Session) Watch(fn func(Status)) func() {
	return s.m.watch(func(srv *Server) {
		for _, x := range s.Servers() {
			if x == srv {
				fn(srv.Status())
				return
			}
		}
	})
}

// WaitDirect waits for the servers whose tools may be directly exposed to
// settle their connection (each bounded by its timeout), or ctx.
func (s *Session) WaitDirect(ctx context.Context) {
	for _, srv := range s.Servers() {
		if srv.cfg.directTools() {
			srv.Wait(ctx)
		}
	}
}

// Attention waits for every server to settle, then returns the warning
// about those that failed and were not reported yet ("" when none).
func (s *Session) Attention(ctx context.Context) string {
	servers := s.Servers()
	ctx, cancel := context.WithTimeout(ctx, attentionBound)
	defer cancel()
	WaitSettled(ctx, servers)
	return s.Unreported()
}

// Unreported returns the warning about the servers that have settled
// since the last warning and failed ("" when none): each server is
// reported once (a project's servers start when it is trusted, after the
// first warning).
func (s *Session) Unreported() string {
	servers := s.Servers()
	var fresh []*Server
	s.mu.Lock()
	for _, srv := range servers {
		if !s.reported[srv] && srv.settled() {
			s.reported[srv] = true
			fresh = append(fresh, srv)
		}
	}
	s.mu.Unlock()
	return AttentionMessage(fresh)
}

// Entry is one tool the session can offer, with where it comes from.
type Entry struct {
	Tool     tools.Tool
	Server   string // "" for the client's own tools (tool_search, resources)
	Exposure string
	Active   bool // offered to the model now
}

// Entries returns the tools the session can offer now: the tools of the
// connected servers that are not hidden, and tool_search and the resource
// tools when they apply.
func (s *Session) Entries() []Entry {
	if s == nil {
		return nil
	}
	servers := s.Servers()
	s.mu.Lock()
	defer s.mu.Unlock()
	var out []Entry
	seen := map[string]bool{}
	searchable := false
	resources := false
	hasCodemode := false
	for _, srv := range servers {
		st := srv.snapshot()
		up := st.state == StateConnected || st.restartable
		if !up && st.state != StateConnecting {
			continue
		}
		if srv.cfg.Exposure == ExposureDeferred || srv.cfg.Exposure == ExposureCodemode {
			searchable = true
		}
		for _, te := range srv.cfg.ToolExposure {
			if te.Exposure == ExposureDeferred || te.Exposure == ExposureCodemode {
				searchable = true
			}
		}
		if !up {
			continue
		}
		if st.resources {
			resources = true
		}
		for _, t := range st.tools {
			exp := srv.cfg.ExposureOf(t.Name)
			name := ToolName(srv.cfg.Name, t.Name)
			if exp == ExposureHidden || seen[name] || !s.allowed(name) {
				continue
			}
			seen[name] = true
			if exp == ExposureCodemode {
				hasCodemode = true
			}
			active := exp == ExposureDirect || s.loaded[name]
			if o, ok := s.override[name]; ok {
				active = o
			}
			out = append(out, Entry{Tool: newServerTool(srv, t, name, st.schemas[t.Name]), Server: srv.cfg.Name, Exposure: exp, Active: active})
		}
	}
	add := func(t tools.Tool) {
		if !s.allowed(t.Name()) {
			return
		}
		active := true
		if o, ok := s.override[t.Name()]; ok {
			active = o
		}
		out = append(out, Entry{Tool: t, Active: active})
	}
	if resources {
		for _, t := range resourceTools(s) {
			add(t)
		}
	}
	if searchable {
		add(&searchTool{s: s})
	}
	if hasCodemode || s.opts.Codemode || s.m.AutoEnableCodemode() {
		add(s.codemode)
	}
	return out
}

func (s *Session) allowed(name string) bool { return s.opts.Allow == nil || s.opts.Allow(name) }

// SetActive records the client's choice for the MCP tools it names
// (active) and the other MCP tools offered now (inactive).
func (s *Session) SetActive(offered []string, active map[string]bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, n := range offered {
		s.override[n] = active[n]
	}
}

// load marks tools loaded by tool_search.
func (s *Session) load(names []string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, n := range names {
		s.loaded[n] = true
		delete(s.override, n)
	}
}

// PromptSection is the mcp_servers section of the system prompt: the
// servers that are not directly exposed, with their exposure and
// instructions ("" when there are none).
func (s *Session) PromptSection() string {
	var lines []string
	for _, srv := range s.Servers() {
		st := srv.Status()
		if st.State != StateConnected || srv.cfg.Exposure == ExposureDirect || srv.cfg.Exposure == ExposureHidden {
			continue
		}
		how := st.Exposure
		if how == ExposureDeferred {
			how = ToolSearchName
		}
		line := "- mcp__" + sanitize(st.Name) + " (" + how + ")"
		desc := st.Instructions
		if desc == "" {
			desc = st.Description
		}
		if desc != "" {
			line += ": " + desc
		}
		lines = append(lines, line)
	}
	if len(lines) == 0 {
		return ""
	}
	out := "<mcp_servers>\nThese MCP servers are connected; their tools are not declared directly. Call the tools of a (codemode) server from a codemode program; find and load any server's tools with tool_search.\n"
	for _, l := range lines {
		out += l + "\n"
	}
	return out + "</mcp_servers>"
}

type snapshot struct {
	state     string
	tools     []*sdkTool
	schemas   map[string]json.RawMessage
	resources bool
	// restartable: it went away after connecting and is restarted on
	// its next use (its tools stay offered until then).
	restartable bool
}

// Problems lists the configuration entries that were skipped.
func (s *Session) Problems() []string {
	cwd, trusted := s.opts.Where()
	return s.m.Problems(cwd, trusted)
}
