package mcp

import (
	"context"
	"fmt"
	"maps"
	"slices"
	"strings"
	"sync"
)

// Options configure a Manager.
type Options struct {
	AgentDir string   // <agentDir>/mcp.json
	Extra    []string // --mcp-config files
	Cwd      string   // the start directory: default cwd of global stdio servers
	Version  string   // the client version sent to servers
}

// Manager owns every server of a process: the global ones (the agent dir's
// file and --mcp-config files), shared by all sessions, and each trusted
// project's own, started the first time a session works in that project.
// Servers connect in the background.
type Manager struct {
	opts Options

	mu       sync.Mutex
	global   *group
	projects map[string]*group
	owned    map[*Server]bool // servers that belong to one session (Session.SetOwn)
	watchers map[int]func(*Server)
	nextID   int
	closed   bool

	closeOnce sync.Once
}

// group is the servers of one configuration (global, or one project's).
type group struct {
	cfg     *Config
	servers []*Server
}

// NewManager reads the global configuration; its servers start when a
// session first asks for them.
func NewManager(opts Options) *Manager {
	m := &Manager{opts: opts, projects: map[string]*group{}, owned: map[*Server]bool{}, watchers: map[int]func(*Server){}}
	cfg := Load(Files{AgentDir: opts.AgentDir, Extra: opts.Extra})
	m.global = m.startGroup(cfg, opts.Cwd)
	return m
}

func (m *Manager) startGroup(cfg *Config, cwd string) *group {
	g := &group{cfg: cfg}
	for _, sc := range cfg.Servers {
		g.servers = append(g.servers, newServer(sc, cwd, m.opts.Version, m.serverChanged))
	}
	return g
}

func (m *Manager) serverChanged(s *Server) {
	m.mu.Lock()
	ws := make([]func(*Server), 0, len(m.watchers))
	for _, id := range slices.Sorted(maps.Keys(m.watchers)) {
		ws = append(ws, m.watchers[id])
	}
	m.mu.Unlock()
	for _, w := range ws {
		w(s)
	}
}

// watch calls fn on every state or tool-list change of any server; the
// returned function stops it.
func (m *Manager) watch(fn func(*Server)) func() {
	m.mu.Lock()
	id := m.nextID
	m.nextID++
	m.watchers[id] = fn
	m.mu.Unlock()
	return func() {
		m.mu.Lock()
		delete(m.watchers, id)
		m.mu.Unlock()
	}
}

// Servers returns the servers a session in cwd sees: the global ones, and
// when the project is trusted its own (which win by name). They start
// connecting (in the background) the first time a session asks for them:
// a session that watches them first hears of every change.
func (m *Manager) Servers(cwd string, trusted bool) []*Server {
	out := m.servers(cwd, trusted)
	for _, s := range out {
		s.start()
	}
	return out
}

func (m *Manager) servers(cwd string, trusted bool) []*Server {
	m.mu.Lock()
	defer m.mu.Unlock()
	out := append([]*Server(nil), m.global.servers...)
	if !trusted || cwd == "" || m.closed {
		return out
	}
	g, ok := m.projects[cwd]
	if !ok {
		g = m.startGroup(Load(Files{Project: cwd}), cwd)
		m.projects[cwd] = g
	}
	return overlay(out, g.servers)
}

// overlay returns base with the servers of top added, a server of top
// replacing the one of base that has its name.
func overlay(base, top []*Server) []*Server {
	out := base
	for _, p := range top {
		replaced := false
		for i, s := range out {
			if s.cfg.Name == p.cfg.Name {
				out[i] = p
				replaced = true
			}
		}
		if !replaced {
			out = append(out, p)
		}
	}
	return out
}

// adopt makes a server that belongs to one session, stopped by Close with
// the others (nil once the manager is closed).
func (m *Manager) adopt(cfg *ServerConfig, cwd string) *Server {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.closed {
		return nil
	}
	srv := newServer(cfg, cwd, m.opts.Version, m.serverChanged)
	m.owned[srv] = true
	return srv
}

// drop stops servers of a session (all at the same time) and returns once
// they and their process groups are gone.
func (m *Manager) drop(list []*Server) {
	m.mu.Lock()
	for _, s := range list {
		delete(m.owned, s)
	}
	m.mu.Unlock()
	closeAll(list)
}

// closeAll closes servers at the same time and waits for all of them.
func closeAll(list []*Server) {
	var wg sync.WaitGroup
	for _, s := range list {
		wg.Add(1)
		go func() {
			defer wg.Done()
			s.close()
		}()
	}
	wg.Wait()
}

// Problems lists the configuration entries that were skipped (the global
// files', and those of the trusted project at cwd).
func (m *Manager) Problems(cwd string, trusted bool) []string {
	m.Servers(cwd, trusted)
	m.mu.Lock()
	defer m.mu.Unlock()
	out := append([]string(nil), m.global.cfg.Problems...)
	if g, ok := m.projects[cwd]; ok && trusted {
		out = append(out, g.cfg.Problems...)
	}
	return out
}

// AutoEnableCodemode reports the configuration's autoEnableCodemode.
func (m *Manager) AutoEnableCodemode() bool {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.global.cfg.AutoEnableCodemode
}

// Close stops every server (at the same time: the slowest bounds the
// wait, about 1.5 s). Callers at the same time all return once it is
// done.
func (m *Manager) Close() {
	m.closeOnce.Do(func() {
		m.mu.Lock()
		m.closed = true
		all := append([]*Server(nil), m.global.servers...)
		for _, g := range m.projects {
			all = append(all, g.servers...)
		}
		for s := range m.owned {
			all = append(all, s)
		}
		m.mu.Unlock()
		closeAll(all)
	})
}

// WaitSettled waits until every server in servers has settled its first
// attempt (connected or failed), each bounded by its timeout, or ctx ends.
func WaitSettled(ctx context.Context, servers []*Server) {
	for _, s := range servers {
		s.Wait(ctx)
	}
}

// AttentionMessage is the one warning a session shows when servers fail
// or an entry is not fully honoured ("" when there is nothing to say), as
// pi words it.
func AttentionMessage(servers []*Server) string {
	var b strings.Builder
	for _, s := range servers {
		st := s.Status()
		switch {
		case st.State == StateFailed && st.Note != "":
			fmt.Fprintf(&b, "\n  %s: failed: %s (%s)", st.Name, st.Error, st.Note)
		case st.State == StateFailed:
			fmt.Fprintf(&b, "\n  %s: failed: %s", st.Name, st.Error)
		case st.Note != "":
			fmt.Fprintf(&b, "\n  %s: %s", st.Name, st.Note)
		}
	}
	if b.Len() == 0 {
		return ""
	}
	return "MCP servers need attention:" + b.String() + "\nRun pisces mcp list (or /mcp in the terminal UI) to see them."
}
