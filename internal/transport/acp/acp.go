// Package acp serves the Agent Client Protocol (ACP v1: JSON-RPC 2.0 over
// stdio, one message per line) for editors such as Zed, Neovim and Emacs
// (docs/acp.md). It is a thin adapter over the core: every ACP session is
// a live session of internal/sessions (one writer per session file, the
// same files as every other mode), driven through core.Session and
// translated from its events into session/update notifications. The wire
// side is the ACP Go SDK; what the SDK leaves unanswered (lines that are
// not JSON-RPC requests) is answered by the filter in frame.go.
package acp

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"sync"
	"time"

	sdk "github.com/coder/acp-go-sdk"

	"github.com/pisces-agent/pisces/internal/ai"
	"github.com/pisces-agent/pisces/internal/mcp"
	"github.com/pisces-agent/pisces/internal/models"
	"github.com/pisces-agent/pisces/internal/session"
	"github.com/pisces-agent/pisces/internal/sessions"
)

// ProtocolVersion is the ACP version served.
const ProtocolVersion = 1

// listPage is how many sessions one session/list answer holds.
const listPage = 50

// Options configure the ACP server.
type Options struct {
	// Sessions are the options of the session manager; Build makes the
	// core session of a store (the project of its cwd under its trust
	// decision). The server wraps each session's tools with its
	// permission gate through GateTools, which Build must call.
	Sessions sessions.Options
	// NewStore creates a new session store for the absolute directory cwd.
	NewStore func(cwd string) (*session.Session, error)
	// List returns every session the agent dir (and a configured session
	// folder) holds, newest first.
	List func() ([]session.Info, error)
	// Models is the registry the sessions use (model choices).
	Models *models.Registry
	// Ready says why no model can be called ("": one can): session/new,
	// session/load and session/prompt answer auth-required until it is "".
	Ready func() string
	// Reload reads the keys and models again (auth.json, models.json):
	// authenticate, and a session request while Ready says no, call it
	// before they ask Ready again. nil: nothing to reload.
	Reload func()
	// KeyHelp names the variables and files that give a provider its key
	// (the authentication method's description).
	KeyHelp string
	// TrustNote is the note shown when a session's project has resources
	// that are not loaded because no trust decision was made for it (""
	// when there is nothing to say); nil: none.
	TrustNote func(cwd string) string
	// MCP says that the editor's MCP servers (mcpServers) are connected
	// for their session: the core sessions have an MCP view (false with
	// --no-mcp: they are ignored, and initialize advertises no transport).
	MCP bool
	// Version is the agent's version in initialize.
	Version string
	// Log receives diagnostics (never stdout).
	Log io.Writer
}

// Server is one ACP connection over a pair of streams.
type Server struct {
	opts Options
	lw   *lineWriter
	conn *sdk.AgentSideConnection
	mgr  *sessions.Manager
	log  io.Writer

	reloadMu sync.Mutex // one reload of the keys at a time

	mu       sync.Mutex
	sessions map[string]*acpSession
	caps     sdk.ClientCapabilities
	closed   bool
	arrived  map[string]int // session/prompt requests read, by session
}

// New makes a server writing to out. Call Serve to read.
func New(out io.Writer, opts Options) *Server {
	if opts.Log == nil {
		opts.Log = os.Stderr
	}
	s := &Server{opts: opts, lw: &lineWriter{w: out, stopped: make(chan struct{})}, log: opts.Log, sessions: map[string]*acpSession{}, arrived: map[string]int{}}
	mo := opts.Sessions
	mo.Log = opts.Log
	s.mgr = sessions.New(mo)
	return s
}

// Serve reads messages from in until it ends or stop is closed, then
// aborts every run, closes the sessions (flushed, locks released) and
// returns: an editor that closed stdin is gone, its work is not finished.
func (s *Server) Serve(in io.Reader, stop <-chan struct{}) {
	pr, pw := io.Pipe()
	s.mu.Lock()
	s.conn = sdk.NewAgentSideConnection(agent{s}, s.lw, pr)
	s.mu.Unlock()
	// The SDK's logger is a plain field its goroutines read: it is set
	// before the first line reaches them (the filter starts after).
	s.conn.SetLogger(slog.New(slog.NewTextHandler(s.log, &slog.HandlerOptions{Level: slog.LevelWarn})))
	go filter(in, pw, s.lw, s.inOrder)
	select {
	case <-s.conn.Done():
	case <-stop:
	}
	pr.CloseWithError(errors.New("the server is stopping"))
	close(s.lw.stopped)
	s.shutdown()
}

// inOrder sees every message in the order it was read, before the SDK
// (which runs requests at once and notifications in a queue of their
// own, so a cancel could pass the prompt it follows, or the reverse). It
// counts the prompts of each session and handles session/cancel itself:
// a cancel applies to every prompt read before it, registered yet or not.
func (s *Server) inOrder(line []byte) bool {
	var m struct {
		ID     json.RawMessage `json:"id"`
		Method string          `json:"method"`
		Params json.RawMessage `json:"params"`
	}
	if json.Unmarshal(line, &m) != nil {
		return false
	}
	switch m.Method {
	case sdk.AgentMethodSessionPrompt:
		var p sdk.PromptRequest
		if m.ID == nil || json.Unmarshal(m.Params, &p) != nil || p.Validate() != nil {
			return false // the SDK answers it with an error
		}
		s.mu.Lock()
		if s.sessions[string(p.SessionId)] != nil {
			s.arrived[string(p.SessionId)]++
		}
		s.mu.Unlock()
	case sdk.AgentMethodSessionCancel:
		if m.ID != nil {
			return false
		}
		var p sdk.CancelNotification
		if json.Unmarshal(m.Params, &p) != nil || p.Validate() != nil {
			return true // a notification gets no answer
		}
		s.mu.Lock()
		as, n := s.sessions[string(p.SessionId)], s.arrived[string(p.SessionId)]
		s.mu.Unlock()
		if as != nil {
			as.cancel(n)
		}
		return true
	}
	return false
}

// shutdown aborts the runs and closes every session.
func (s *Server) shutdown() {
	s.mu.Lock()
	s.closed = true
	all := make([]*acpSession, 0, len(s.sessions))
	for _, as := range s.sessions {
		all = append(all, as)
	}
	s.sessions = map[string]*acpSession{}
	s.mu.Unlock()
	var wg sync.WaitGroup
	for _, as := range all {
		wg.Add(1)
		go func() {
			defer wg.Done()
			as.detach()
		}()
	}
	wg.Wait()
	s.mgr.Close()
}

func (s *Server) session(id string) *acpSession {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.sessions[id]
}

func (s *Server) clientCaps() sdk.ClientCapabilities {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.caps
}

// agent implements the SDK's Agent interface.
type agent struct{ s *Server }

var (
	_ sdk.Agent       = agent{}
	_ sdk.AgentLoader = agent{}
)

func invalidParams(format string, args ...any) error {
	return sdk.NewInvalidParams(map[string]any{"details": fmt.Sprintf(format, args...)})
}

// authRequired is the auth-required error while no model can be called
// (nil once one can). The keys are read again first when none was usable:
// a key the user stored since counts without a restart.
func (a agent) authRequired() error {
	if a.s.opts.Ready == nil {
		return nil
	}
	why := a.s.opts.Ready()
	if why != "" && a.s.opts.Reload != nil {
		a.s.reloadMu.Lock()
		if why = a.s.opts.Ready(); why != "" {
			a.s.opts.Reload()
			why = a.s.opts.Ready()
		}
		a.s.reloadMu.Unlock()
	}
	if why != "" {
		return sdk.NewAuthRequired(map[string]any{"details": why + ". " + a.s.opts.KeyHelp})
	}
	return nil
}

func (a agent) Initialize(_ context.Context, p sdk.InitializeRequest) (sdk.InitializeResponse, error) {
	a.s.mu.Lock()
	a.s.caps = p.ClientCapabilities
	a.s.mu.Unlock()
	desc := a.s.opts.KeyHelp
	return sdk.InitializeResponse{
		ProtocolVersion: ProtocolVersion,
		AgentInfo:       &sdk.Implementation{Name: "pisces", Title: sdk.Ptr("Pisces"), Version: a.s.opts.Version},
		AgentCapabilities: sdk.AgentCapabilities{
			LoadSession:        true,
			PromptCapabilities: sdk.PromptCapabilities{Image: true, EmbeddedContext: true},
			// Stdio is always accepted; plain SSE is not (as in mcp.json).
			McpCapabilities: sdk.McpCapabilities{Http: a.s.opts.MCP},
			SessionCapabilities: sdk.SessionCapabilities{
				List:   &sdk.SessionListCapabilities{},
				Close:  &sdk.SessionCloseCapabilities{},
				Resume: &sdk.SessionResumeCapabilities{},
			},
		},
		AuthMethods: []sdk.AuthMethod{{Agent: &sdk.AuthMethodAgent{
			Id:          "api-key",
			Name:        "API key",
			Description: &desc,
		}}},
	}, nil
}

func (a agent) Authenticate(context.Context, sdk.AuthenticateRequest) (sdk.AuthenticateResponse, error) {
	if err := a.authRequired(); err != nil {
		return sdk.AuthenticateResponse{}, err
	}
	return sdk.AuthenticateResponse{}, nil
}

// checkCwd refuses a cwd that is not an absolute path of a directory.
func checkCwd(cwd string) error {
	if !filepath.IsAbs(cwd) {
		return invalidParams("cwd must be an absolute path, got %q", cwd)
	}
	fi, err := os.Stat(cwd)
	if err != nil || !fi.IsDir() {
		return invalidParams("cwd %s is not a directory", cwd)
	}
	return nil
}

// editorMCP checks the editor's MCP servers of a session request and
// returns their entries (nil with --no-mcp: a line on stderr says they
// are not connected).
func (a agent) editorMCP(servers []sdk.McpServer) ([]*mcp.ServerConfig, error) {
	cfgs, err := editorServers(servers)
	if err != nil {
		return nil, err
	}
	if !a.s.opts.MCP && len(cfgs) > 0 {
		fmt.Fprintf(a.s.log, "pisces: acp: %d MCP server(s) given by the editor are not connected: MCP is off (--no-mcp)\n", len(cfgs))
		return nil, nil
	}
	return cfgs, nil
}

func (a agent) NewSession(_ context.Context, p sdk.NewSessionRequest) (sdk.NewSessionResponse, error) {
	if err := checkCwd(p.Cwd); err != nil {
		return sdk.NewSessionResponse{}, err
	}
	if err := a.authRequired(); err != nil {
		return sdk.NewSessionResponse{}, err
	}
	servers, err := a.editorMCP(p.McpServers)
	if err != nil {
		return sdk.NewSessionResponse{}, err
	}
	st, err := a.s.opts.NewStore(filepath.Clean(p.Cwd))
	if err != nil {
		return sdk.NewSessionResponse{}, err
	}
	live, err := a.s.mgr.Start(st)
	if err != nil {
		return sdk.NewSessionResponse{}, err
	}
	as, err := a.s.attach(live, servers)
	if err != nil {
		return sdk.NewSessionResponse{}, err
	}
	// The commands follow the response: before it the client does not
	// know the session.
	a.s.lw.afterResponse(as.id, as.announce)
	return sdk.NewSessionResponse{
		SessionId:     sdk.SessionId(as.id),
		ConfigOptions: as.configOptions(),
		Modes:         as.modeState(),
	}, nil
}

// open attaches the stored session id (the editor's sessionId), loaded in
// cwd, with the editor's MCP servers (they replace the ones given before
// when the session is open already).
func (a agent) open(id, cwd string, mcpServers []sdk.McpServer) (*acpSession, bool, error) {
	if err := checkCwd(cwd); err != nil {
		return nil, false, err
	}
	servers, err := a.editorMCP(mcpServers)
	if err != nil {
		return nil, false, err
	}
	if as := a.s.session(id); as != nil {
		as.setServers(servers)
		return as, false, nil
	}
	path, err := a.s.findSession(id)
	if err != nil {
		return nil, false, err
	}
	live, err := a.s.mgr.Open(path)
	if err != nil {
		return nil, false, err
	}
	as, err := a.s.attach(live, servers)
	return as, true, err
}

func (a agent) LoadSession(ctx context.Context, p sdk.LoadSessionRequest) (sdk.LoadSessionResponse, error) {
	if err := a.authRequired(); err != nil {
		return sdk.LoadSessionResponse{}, err
	}
	as, _, err := a.open(string(p.SessionId), p.Cwd, p.McpServers)
	if err != nil {
		return sdk.LoadSessionResponse{}, err
	}
	as.replay()
	as.announce()
	if err := as.flush(ctx); err != nil {
		return sdk.LoadSessionResponse{}, err
	}
	return sdk.LoadSessionResponse{ConfigOptions: as.configOptions(), Modes: as.modeState()}, nil
}

func (a agent) ResumeSession(_ context.Context, p sdk.ResumeSessionRequest) (sdk.ResumeSessionResponse, error) {
	if err := a.authRequired(); err != nil {
		return sdk.ResumeSessionResponse{}, err
	}
	as, _, err := a.open(string(p.SessionId), p.Cwd, p.McpServers)
	if err != nil {
		return sdk.ResumeSessionResponse{}, err
	}
	return sdk.ResumeSessionResponse{ConfigOptions: as.configOptions(), Modes: as.modeState()}, nil
}

func (a agent) CloseSession(_ context.Context, p sdk.CloseSessionRequest) (sdk.CloseSessionResponse, error) {
	a.s.mu.Lock()
	as := a.s.sessions[string(p.SessionId)]
	delete(a.s.sessions, string(p.SessionId))
	delete(a.s.arrived, string(p.SessionId))
	a.s.mu.Unlock()
	if as == nil {
		return sdk.CloseSessionResponse{}, invalidParams("unknown sessionId %q", p.SessionId)
	}
	as.detach()
	return sdk.CloseSessionResponse{}, nil
}

func (a agent) ListSessions(_ context.Context, p sdk.ListSessionsRequest) (sdk.ListSessionsResponse, error) {
	want := ""
	if p.Cwd != nil {
		if !filepath.IsAbs(*p.Cwd) {
			return sdk.ListSessionsResponse{}, invalidParams("cwd must be an absolute path, got %q", *p.Cwd)
		}
		want = filepath.Clean(*p.Cwd)
	}
	start := 0
	if p.Cursor != nil {
		n, err := strconv.Atoi(*p.Cursor)
		if err != nil || n < 0 {
			return sdk.ListSessionsResponse{}, invalidParams("unknown cursor %q", *p.Cursor)
		}
		start = n
	}
	infos, err := a.s.opts.List()
	if err != nil {
		return sdk.ListSessionsResponse{}, err
	}
	var list []sdk.SessionInfo
	for _, i := range infos {
		if i.Cwd == "" || !filepath.IsAbs(i.Cwd) || (want != "" && filepath.Clean(i.Cwd) != want) {
			continue
		}
		title := i.Name
		if title == "" {
			title = i.FirstMessage
		}
		list = append(list, sdk.SessionInfo{
			SessionId: sdk.SessionId(i.ID),
			Cwd:       i.Cwd,
			Title:     sdk.Ptr(oneLine(title, 120)),
			UpdatedAt: sdk.Ptr(i.Modified.UTC().Format(time.RFC3339)),
		})
	}
	resp := sdk.ListSessionsResponse{Sessions: []sdk.SessionInfo{}}
	if start > len(list) {
		start = len(list)
	}
	end := min(start+listPage, len(list))
	resp.Sessions = append(resp.Sessions, list[start:end]...)
	if end < len(list) {
		resp.NextCursor = sdk.Ptr(strconv.Itoa(end))
	}
	return resp, nil
}

func (a agent) SetSessionConfigOption(_ context.Context, p sdk.SetSessionConfigOptionRequest) (sdk.SetSessionConfigOptionResponse, error) {
	if p.ValueId == nil {
		return sdk.SetSessionConfigOptionResponse{}, invalidParams("the model and thought_level options take a value id")
	}
	as := a.s.session(string(p.ValueId.SessionId))
	if as == nil {
		return sdk.SetSessionConfigOptionResponse{}, invalidParams("unknown sessionId %q", p.ValueId.SessionId)
	}
	if err := as.setOption(string(p.ValueId.ConfigId), string(p.ValueId.Value)); err != nil {
		return sdk.SetSessionConfigOptionResponse{}, err
	}
	return sdk.SetSessionConfigOptionResponse{ConfigOptions: as.configOptions()}, nil
}

func (a agent) SetSessionMode(_ context.Context, p sdk.SetSessionModeRequest) (sdk.SetSessionModeResponse, error) {
	as := a.s.session(string(p.SessionId))
	if as == nil {
		return sdk.SetSessionModeResponse{}, invalidParams("unknown sessionId %q", p.SessionId)
	}
	if err := as.setMode(string(p.ModeId)); err != nil {
		return sdk.SetSessionModeResponse{}, err
	}
	return sdk.SetSessionModeResponse{}, nil
}

func (a agent) Prompt(ctx context.Context, p sdk.PromptRequest) (sdk.PromptResponse, error) {
	as := a.s.session(string(p.SessionId))
	if as == nil {
		return sdk.PromptResponse{}, invalidParams("unknown sessionId %q", p.SessionId)
	}
	ordinal, cancelled := as.register()
	if cancelled {
		return sdk.PromptResponse{StopReason: sdk.StopReasonCancelled}, nil
	}
	if err := a.authRequired(); err != nil {
		return sdk.PromptResponse{}, err
	}
	text, images, err := promptInput(p.Prompt)
	if err != nil {
		return sdk.PromptResponse{}, err
	}
	stop, err := as.prompt(ordinal, text, images)
	if err != nil {
		return sdk.PromptResponse{}, err
	}
	return sdk.PromptResponse{StopReason: stop}, nil
}

// Cancel is never reached: session/cancel is handled as it is read
// (Server.inOrder).
func (a agent) Cancel(context.Context, sdk.CancelNotification) error { return nil }

// findSession is the file of the session whose id is exactly id.
func (s *Server) findSession(id string) (string, error) {
	for _, l := range s.mgr.Live() {
		if l.Core.Store().ID() == id && l.Core.Store().File() != "" {
			return l.Core.Store().File(), nil
		}
	}
	infos, err := s.opts.List()
	if err != nil {
		return "", err
	}
	for _, i := range infos {
		if i.ID == id {
			return i.Path, nil
		}
	}
	return "", invalidParams("unknown sessionId %q", id)
}

// attach makes the ACP session of a live session this connection now
// watches (the manager counted this connection as a viewer), with the
// editor's MCP servers.
func (s *Server) attach(live *sessions.Live, servers []*mcp.ServerConfig) (*acpSession, error) {
	id := live.Core.Store().ID()
	s.mu.Lock()
	if s.closed {
		s.mu.Unlock()
		s.mgr.Release(live)
		return nil, sessions.ErrClosed
	}
	if as := s.sessions[id]; as != nil {
		s.mu.Unlock()
		s.mgr.Release(live) // already watched by this connection
		as.setServers(servers)
		return as, nil
	}
	as := newSession(s, id, live, servers)
	s.sessions[id] = as
	s.arrived[id] = 0 // counted per attachment, as the session counts them
	s.mu.Unlock()
	return as, nil
}

// sortedModels are the models a session can switch to: the available
// ones, and the session's own.
func (s *Server) sortedModels(current *ai.Model) []*ai.Model {
	var out []*ai.Model
	seen := map[string]bool{}
	if s.opts.Models != nil {
		for _, m := range s.opts.Models.Available() {
			k := m.Provider + "/" + m.ID
			if !seen[k] {
				seen[k] = true
				out = append(out, m)
			}
		}
	}
	if current != nil && !seen[current.Provider+"/"+current.ID] {
		out = append(out, current)
	}
	sort.SliceStable(out, func(i, j int) bool {
		if out[i].Provider != out[j].Provider {
			return out[i].Provider < out[j].Provider
		}
		return out[i].ID < out[j].ID
	})
	return out
}
