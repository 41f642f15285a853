package mcp

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"net/http"
	"os"
	"os/exec"
	"strings"
	"sync"
	"syscall"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/pisces-agent/pisces/internal/procgroup"
)

// Server states.
const (
	StateConnecting = "connecting"
	StateConnected  = "connected"
	StateFailed     = "failed"
	StateDisabled   = "disabled"
	StateClosed     = "closed"
)

// Stopping a stdio server: its stdin is closed, then its process group is
// sent SIGTERM after termGrace and SIGKILL after killGrace more (within
// the 3-second exit every mode keeps).
const (
	termGrace = 500 * time.Millisecond
	killGrace = time.Second
)

// OAuthNote is reported for a server whose entry has an oauth block.
const OAuthNote = "MCP OAuth is not supported yet; connected without it"

// Server is one configured MCP server and its connection.
type Server struct {
	cfg     *ServerConfig
	cwd     string // a stdio server's directory when its entry names none
	version string
	changed func(*Server)

	mu           sync.Mutex
	state        string
	lastErr      string
	conn         *conn
	tools        []*sdk.Tool
	schemas      map[string]json.RawMessage // the tools' input schemas as the server wrote them
	instructions string
	resources    bool
	everUp       bool // it connected once (a later loss is restarted once)
	restarted    bool // the one restart was used
	closed       bool
	started      bool
	ready        chan struct{} // closed when the current attempt settled
	cancelDial   func()        // ends the connection attempt under way
	dialing      chan struct{} // closed when that attempt has returned
}

// conn is one live connection.
type conn struct {
	session *sdk.ClientSession
	cmd     *exec.Cmd // stdio servers
	stdin   io.Closer
	exited  chan struct{} // closed when cmd has been waited for
	tap     *schemaTap
}

func newServer(cfg *ServerConfig, cwd, version string, changed func(*Server)) *Server {
	s := &Server{cfg: cfg, cwd: cwd, version: version, changed: changed, state: StateConnecting, ready: make(chan struct{})}
	if !cfg.Enabled {
		s.state = StateDisabled
		close(s.ready)
	}
	return s
}

// Config returns the server's configuration entry.
func (s *Server) Config() *ServerConfig { return s.cfg }

// Status is a server's state as listings show it.
type Status struct {
	Name         string
	Scope        string
	Exposure     string
	Description  string
	Command      string
	State        string
	Error        string
	Tools        []string // the server's own tool names
	Resources    bool
	Instructions string
	// Note says what of the entry is not honoured (an oauth block).
	Note string
}

// Status returns the server's current state.
func (s *Server) Status() Status {
	s.mu.Lock()
	defer s.mu.Unlock()
	st := Status{Name: s.cfg.Name, Scope: s.cfg.Scope, Exposure: s.cfg.Exposure, Description: s.cfg.Description,
		Command: s.cfg.CommandLine(), State: s.state, Error: s.lastErr, Resources: s.resources, Instructions: s.instructions}
	if s.cfg.OAuth {
		st.Note = OAuthNote
	}
	for _, t := range s.tools {
		st.Tools = append(st.Tools, t.Name)
	}
	return st
}

// start connects in the background, the first time it is called.
func (s *Server) start() {
	s.mu.Lock()
	first := !s.started && s.cfg.Enabled
	s.started = true
	s.mu.Unlock()
	if first {
		go s.connect()
	}
}

// Wait returns when the current connection attempt has settled or ctx is
// done.
func (s *Server) Wait(ctx context.Context) {
	s.mu.Lock()
	ready := s.ready
	s.mu.Unlock()
	select {
	case <-ready:
	case <-ctx.Done():
	}
}

func (s *Server) connect() {
	ctx, cancel := context.WithTimeout(context.Background(), s.cfg.Timeout)
	defer cancel()
	s.mu.Lock()
	if s.closed {
		// Closed before its first attempt: nobody waits for one.
		ready := s.ready
		s.mu.Unlock()
		closeOnce(ready)
		return
	}
	dialing := make(chan struct{})
	s.cancelDial, s.dialing = cancel, dialing
	s.mu.Unlock()
	defer close(dialing)
	c, tools, schemas, init, err := s.dial(ctx)
	s.mu.Lock()
	s.cancelDial, s.dialing = nil, nil
	if s.closed {
		ready := s.ready
		s.mu.Unlock()
		if c != nil {
			c.close()
		}
		close(ready)
		return
	}
	if err != nil {
		if ctx.Err() != nil {
			err = fmt.Errorf("timed out after %v", s.cfg.Timeout)
		}
		s.state, s.lastErr = StateFailed, err.Error()
	} else {
		s.state, s.lastErr, s.conn, s.tools, s.schemas, s.everUp = StateConnected, "", c, tools, schemas, true
		if init != nil {
			s.instructions = init.Instructions
			s.resources = init.Capabilities != nil && init.Capabilities.Resources != nil
		}
	}
	ready := s.ready
	s.mu.Unlock()
	// Watchers hear of the change before anyone waiting for the attempt
	// goes on: a warning about failed servers follows their events.
	s.changed(s)
	close(ready)
	if c != nil {
		go s.watch(c)
	}
}

// closeOnce closes ch unless it is closed already.
func closeOnce(ch chan struct{}) {
	select {
	case <-ch:
	default:
		close(ch)
	}
}

// watch marks the server failed when its connection ends by itself.
func (s *Server) watch(c *conn) {
	_ = c.session.Wait()
	s.mu.Lock()
	if s.conn != c || s.closed {
		s.mu.Unlock()
		return
	}
	s.conn = nil
	s.state, s.lastErr = StateFailed, "MCP connection closed"
	s.mu.Unlock()
	go c.close()
	s.changed(s)
}

func (s *Server) dial(ctx context.Context) (*conn, []*sdk.Tool, map[string]json.RawMessage, *sdk.InitializeResult, error) {
	client := sdk.NewClient(&sdk.Implementation{Name: "pisces", Version: s.version}, &sdk.ClientOptions{
		ToolListChangedHandler: func(context.Context, *sdk.ToolListChangedRequest) { go s.refreshTools() },
	})
	c := &conn{tap: newSchemaTap()}
	var t sdk.Transport
	if s.cfg.Transport == "http" {
		t = &sdk.StreamableClientTransport{Endpoint: s.cfg.URL, HTTPClient: &http.Client{Transport: tapTransport(headerTransport(s.cfg.Headers), c.tap)}, MaxRetries: -1}
	} else {
		cmd := exec.Command(s.cfg.Command, s.cfg.Args...)
		cmd.Dir = s.cfg.Cwd
		if cmd.Dir == "" {
			cmd.Dir = s.cwd
		}
		cmd.Env = os.Environ()
		for _, kv := range s.cfg.Env {
			cmd.Env = append(cmd.Env, kv[0]+"="+kv[1])
		}
		procgroup.Set(cmd)
		stdout, err := cmd.StdoutPipe()
		if err != nil {
			return nil, nil, nil, nil, err
		}
		stdin, err := cmd.StdinPipe()
		if err != nil {
			return nil, nil, nil, nil, err
		}
		if err := cmd.Start(); err != nil {
			return nil, nil, nil, nil, spawnError(s.cfg.Command, err)
		}
		c.cmd, c.stdin, c.exited = cmd, stdin, make(chan struct{})
		go func() {
			_ = cmd.Wait()
			close(c.exited)
		}()
		t = &sdk.IOTransport{Reader: io.NopCloser(c.tap.reader(stdout)), Writer: stdin, MaxLineLength: -1}
	}
	sess, err := client.Connect(ctx, t, nil)
	if err != nil {
		c.close()
		return nil, nil, nil, nil, connectError(err)
	}
	c.session = sess
	tools, schemas, err := c.listTools(ctx)
	if err != nil {
		c.close()
		return nil, nil, nil, nil, connectError(err)
	}
	return c, tools, schemas, sess.InitializeResult(), nil
}

// listTools lists the server's tools and their input schemas (raw JSON
// as the server wrote them, by the server's tool name).
func (c *conn) listTools(ctx context.Context) ([]*sdk.Tool, map[string]json.RawMessage, error) {
	var out []*sdk.Tool
	for t, err := range c.session.Tools(ctx, nil) {
		if err != nil {
			return nil, nil, err
		}
		out = append(out, t)
	}
	schemas := make(map[string]json.RawMessage, len(out))
	for _, t := range out {
		schemas[t.Name] = c.tap.schema(t)
	}
	return out, schemas, nil
}

func (s *Server) refreshTools() {
	s.mu.Lock()
	c := s.conn
	s.mu.Unlock()
	if c == nil {
		return
	}
	ctx, cancel := context.WithTimeout(context.Background(), s.cfg.Timeout)
	defer cancel()
	tools, schemas, err := c.listTools(ctx)
	if err != nil {
		return
	}
	s.mu.Lock()
	if s.conn == c {
		s.tools, s.schemas = tools, schemas
	}
	s.mu.Unlock()
	s.changed(s)
}

// spawnError words a failed start as pi does ("spawn CMD ENOENT").
func spawnError(command string, err error) error {
	if errors.Is(err, fs.ErrNotExist) || errors.Is(err, exec.ErrNotFound) {
		return fmt.Errorf("spawn %s ENOENT", command)
	}
	if errors.Is(err, fs.ErrPermission) {
		return fmt.Errorf("spawn %s EACCES", command)
	}
	return fmt.Errorf("spawn %s: %v", command, err)
}

func connectError(err error) error {
	msg := err.Error()
	if errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) || errors.Is(err, syscall.EPIPE) ||
		strings.Contains(msg, "closed") || strings.Contains(msg, "EOF") || strings.Contains(msg, "broken pipe") {
		return errors.New("MCP connection closed")
	}
	return err
}

// session returns a live session, reconnecting once (per server life) when
// a connection that was up has gone.
func (s *Server) session(ctx context.Context) (*sdk.ClientSession, error) {
	s.mu.Lock()
	if s.conn != nil {
		c := s.conn
		s.mu.Unlock()
		return c.session, nil
	}
	if s.closed || s.state == StateDisabled {
		s.mu.Unlock()
		return nil, fmt.Errorf("server %s is %s", s.cfg.Name, s.state)
	}
	if s.state == StateConnecting {
		ready := s.ready
		s.mu.Unlock()
		select {
		case <-ready:
		case <-ctx.Done():
			return nil, ctx.Err()
		}
		return s.session(ctx)
	}
	if !s.everUp || s.restarted {
		err := s.lastErr
		s.mu.Unlock()
		return nil, fmt.Errorf("server %s %s: %s", s.cfg.Name, s.state, err)
	}
	s.restarted = true
	s.state = StateConnecting
	s.ready = make(chan struct{})
	s.mu.Unlock()
	s.changed(s)
	s.connect()
	return s.session(ctx)
}

// close stops the connection and the server's processes.
func (s *Server) close() {
	s.mu.Lock()
	if s.closed {
		s.mu.Unlock()
		return
	}
	s.closed = true
	c := s.conn
	s.conn = nil
	if s.state != StateDisabled {
		s.state = StateClosed
	}
	cancel, dialing := s.cancelDial, s.dialing
	s.mu.Unlock()
	if cancel != nil {
		// A connection under way is given up, and its process stopped,
		// before close returns.
		cancel()
		<-dialing
	}
	if c != nil {
		c.close()
	}
}

// close ends a connection: for a stdio server, its stdin is closed, then
// its whole process group gets SIGTERM and finally SIGKILL (a server behind
// a shell wrapper leaves nothing behind).
func (c *conn) close() {
	if c.cmd == nil {
		if c.session != nil {
			_ = c.session.Close()
		}
		return
	}
	_ = c.stdin.Close()
	done := make(chan struct{})
	if c.session != nil {
		go func() {
			_ = c.session.Close()
			close(done)
		}()
	} else {
		close(done)
	}
	pid := c.cmd.Process.Pid
	timer := time.NewTimer(termGrace)
	defer timer.Stop()
	select {
	case <-c.exited:
	case <-timer.C:
	}
	if procgroup.Alive(pid) {
		_ = procgroup.Terminate(pid)
		waitGroupGone(pid, c.exited, killGrace)
	}
	if procgroup.Alive(pid) {
		_ = procgroup.KillGroup(pid)
	}
	procgroup.Kill(c.cmd)
	<-c.exited
	// The session's own goroutines end with its connection: close returns
	// once they are gone (bounded, like the process's exit).
	select {
	case <-done:
	case <-time.After(killGrace):
	}
}

// waitGroupGone waits up to d for the process group to empty. The leader's
// exit is an event; the others are looked for every few milliseconds (a
// group has no exit notification).
func waitGroupGone(pid int, exited <-chan struct{}, d time.Duration) {
	deadline := time.Now().Add(d)
	for time.Now().Before(deadline) {
		select {
		case <-exited:
		case <-time.After(10 * time.Millisecond):
		}
		if !procgroup.Alive(pid) {
			return
		}
	}
}

// headerTransport adds the configured headers to every request.
func headerTransport(headers [][2]string) http.RoundTripper {
	if len(headers) == 0 {
		return http.DefaultTransport
	}
	return roundTripper(func(r *http.Request) (*http.Response, error) {
		r = r.Clone(r.Context())
		for _, h := range headers {
			r.Header.Set(h[0], h[1])
		}
		return http.DefaultTransport.RoundTrip(r)
	})
}

// tapTransport shows the tap every response body.
func tapTransport(next http.RoundTripper, tap *schemaTap) http.RoundTripper {
	return roundTripper(func(r *http.Request) (*http.Response, error) {
		resp, err := next.RoundTrip(r)
		if err == nil && resp.Body != nil {
			resp.Body = tapBody{tapReader: tap.reader(resp.Body), c: resp.Body}
		}
		return resp, err
	})
}

type roundTripper func(*http.Request) (*http.Response, error)

func (f roundTripper) RoundTrip(r *http.Request) (*http.Response, error) { return f(r) }

type sdkTool = sdk.Tool

func (s *Server) snapshot() snapshot {
	s.mu.Lock()
	defer s.mu.Unlock()
	return snapshot{state: s.state, tools: s.tools, schemas: s.schemas, resources: s.resources,
		restartable: s.state == StateFailed && s.everUp && !s.restarted && !s.closed}
}

// settled reports whether the server's first attempt is over (connected,
// failed, disabled or closed).
func (s *Server) settled() bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.state != StateConnecting
}
