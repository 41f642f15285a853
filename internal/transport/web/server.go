// Package web is web mode: an HTTP server with the RPC protocol on a
// WebSocket (/ws, one JSON object per text frame: the commands, responses
// and events of stdio RPC, dispatched by the same command table), the
// static files of a browser UI at / and a health check at /health.
//
// Each connection is attached to one session of the session manager
// (internal/sessions); several connections may share one. Everything a
// connection reads about the user's work (the WebSocket) needs the
// server's token; docs/web.md describes the security model.
package web

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"net"
	"net/http"
	"os"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/coder/websocket"

	"github.com/pisces-agent/pisces/internal/sessions"
	rpcmode "github.com/pisces-agent/pisces/internal/transport/rpc"
)

// Defaults of the per-connection output bounds.
const (
	// DefaultMaxQueue is how many frames (after deltas were merged) may
	// wait for a client before it is disconnected as too slow.
	DefaultMaxQueue = 8192
	// DefaultWriteTimeout is how long one frame may take to reach a
	// client before it is disconnected as stalled.
	DefaultWriteTimeout = 60 * time.Second
	// MaxFrame bounds a frame a client sends (a prompt with images).
	MaxFrame = 64 << 20
)

// Close reasons (RFC 6455 status codes with a reason a person can read).
const (
	reasonShutdown = "server shutting down"
	reasonSlow     = "client too slow: its output queue is full"
	reasonStalled  = "client stalled: a frame was not read in time"
)

// Options configure a server.
type Options struct {
	// Host and Port are where to listen (Port 0 picks a free port).
	Host string
	Port int
	// Token is the access token; NoToken runs without one (loopback only).
	Token   string
	NoToken bool
	// AllowedOrigins are browser origins allowed besides the server's own
	// (a TLS proxy's https://… origin).
	AllowedOrigins []string
	// UIDir serves another build of a UI (--serve-ui); "" serves UI.
	UIDir string
	// UI is the built-in UI (nil: none in this build; "/" then explains
	// how to use --serve-ui or connect a client).
	UI fs.FS

	// Sessions configures the session manager (Build, Resolve, Grace;
	// OnLoad and OnUnload are the server's).
	Sessions sessions.Options
	// RPC configures each connection's protocol (delta merging, the
	// legacy wire, diagnostics); Sessions, MaxQueue and OnOverflow are
	// set by the server.
	RPC rpcmode.Options
	// MaxQueue and WriteTimeout bound a client's output (0: defaults).
	MaxQueue     int
	WriteTimeout time.Duration
	// Log receives diagnostics.
	Log io.Writer
}

// Server is a running web mode server.
type Server struct {
	opts    Options
	manager *sessions.Manager
	def     *sessions.Live
	port    int
	ui      fs.FS
	root    *os.Root

	httpSrv  *http.Server
	listener net.Listener

	mu       sync.Mutex
	hubs     map[*rpcmode.Hub]*hubEntry
	conns    map[*wsConn]struct{}
	connsCh  chan struct{} // closed (and replaced) when a client comes or goes
	closing  bool
	stopOnce sync.Once
	stopped  chan struct{} // closed when Shutdown has finished
	stopReq  chan struct{} // closed when an extension asked to shut down
	reqOnce  sync.Once
}

// New creates a server: it opens the UI directory, listens, and has adopt
// load the default session into the server's session manager (with
// sessions.Manager.Adopt). The address it listens on is Addr; Serve
// accepts connections.
func New(opts Options, adopt func(*sessions.Manager) (*sessions.Live, error)) (*Server, error) {
	if opts.Log == nil {
		opts.Log = os.Stderr
	}
	if opts.MaxQueue <= 0 {
		opts.MaxQueue = DefaultMaxQueue
	}
	if opts.WriteTimeout <= 0 {
		opts.WriteTimeout = DefaultWriteTimeout
	}
	if opts.NoToken && !IsLoopbackHost(opts.Host) {
		return nil, fmt.Errorf("--web-no-token is refused with the non-loopback host %s", opts.Host)
	}
	if !opts.NoToken && opts.Token == "" {
		return nil, errors.New("web mode needs a token")
	}
	s := &Server{
		opts:    opts,
		hubs:    map[*rpcmode.Hub]*hubEntry{},
		conns:   map[*wsConn]struct{}{},
		connsCh: make(chan struct{}),
		stopped: make(chan struct{}),
		stopReq: make(chan struct{}),
		ui:      opts.UI,
	}
	if opts.UIDir != "" {
		root, err := os.OpenRoot(opts.UIDir)
		if err != nil {
			return nil, fmt.Errorf("--serve-ui: %v", err)
		}
		s.root = root
		s.ui = root.FS()
	}
	mo := opts.Sessions
	mo.OnLoad = s.onLoad
	mo.OnUnload = s.onUnload
	if mo.Log == nil {
		mo.Log = opts.Log
	}
	s.manager = sessions.New(mo)
	ln, err := net.Listen("tcp", net.JoinHostPort(opts.Host, strconv.Itoa(opts.Port)))
	if err != nil {
		s.closeRoot()
		return nil, err
	}
	s.listener = ln
	s.port = ln.Addr().(*net.TCPAddr).Port
	def, err := adopt(s.manager)
	if err != nil {
		ln.Close()
		s.closeRoot()
		return nil, err
	}
	s.def = def
	s.httpSrv = &http.Server{
		Handler:           s,
		ReadHeaderTimeout: 10 * time.Second,
	}
	return s, nil
}

func (s *Server) closeRoot() {
	if s.root != nil {
		s.root.Close()
	}
}

// Manager returns the session manager.
func (s *Server) Manager() *sessions.Manager { return s.manager }

// Default returns the default session (new connections attach to it).
func (s *Server) Default() *sessions.Live { return s.def }

// Addr is the address the server listens on.
func (s *Server) Addr() net.Addr { return s.listener.Addr() }

// Port is the port the server listens on.
func (s *Server) Port() int { return s.port }

// ShutdownRequested is closed when an extension asked Pisces to shut down.
func (s *Server) ShutdownRequested() <-chan struct{} { return s.stopReq }

// Serve accepts connections until Shutdown. It returns nil after a
// shutdown.
func (s *Server) Serve() error {
	err := s.httpSrv.Serve(s.listener)
	if errors.Is(err, http.ErrServerClosed) {
		return nil
	}
	return err
}

// hubEntry is a loaded session as the server tracks it.
type hubEntry struct {
	live *sessions.Live
	done chan struct{} // closed when the session is unloaded
}

// onLoad gives a newly loaded session its hub: events, the extension UI
// (dialogs to every client on the session) and project trust questions go
// through it. An extension's request to shut down stops the server, as it
// ends the process in the other modes.
func (s *Server) onLoad(l *sessions.Live) {
	hub := rpcmode.NewHub(l.Core, rpcmode.HubOptions{Shared: true, ReadOnly: l.ReadOnly()})
	l.Core.SetTrustAsk(hub.AskTrust)
	if l.Extensions != nil {
		l.Extensions.SetUI(hub.UI())
	}
	l.Data = hub
	e := &hubEntry{live: l, done: make(chan struct{})}
	s.mu.Lock()
	s.hubs[hub] = e
	s.mu.Unlock()
	go func() {
		select {
		case <-l.Core.ShutdownRequested():
			fmt.Fprintf(s.opts.Log, "pisces: an extension of session %s asked to shut down\n", l.Key())
			s.reqOnce.Do(func() { close(s.stopReq) })
		case <-e.done:
		}
	}()
}

func (s *Server) onUnload(l *sessions.Live) {
	hub := hubOf(l)
	hub.Close()
	s.mu.Lock()
	e := s.hubs[hub]
	delete(s.hubs, hub)
	s.mu.Unlock()
	if e != nil {
		close(e.done)
	}
}

func hubOf(l *sessions.Live) *rpcmode.Hub { return l.Data.(*rpcmode.Hub) }

// liveOf returns the session of a hub.
func (s *Server) liveOf(h *rpcmode.Hub) *sessions.Live {
	s.mu.Lock()
	defer s.mu.Unlock()
	if e := s.hubs[h]; e != nil {
		return e.live
	}
	return nil
}

// ServeHTTP routes: /health, /ws, and the UI's static files.
func (s *Server) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	upgrade := isUpgrade(r)
	switch {
	case r.URL.Path == "/ws":
		s.serveWS(w, r)
		return
	case upgrade:
		http.Error(w, "Not Found: the WebSocket is at /ws", http.StatusNotFound)
		return
	case r.URL.Path == "/health":
		s.serveHealth(w, r)
		return
	}
	if r.Method != http.MethodGet && r.Method != http.MethodHead {
		w.Header().Set("Allow", "GET, HEAD")
		http.Error(w, "Method Not Allowed", http.StatusMethodNotAllowed)
		return
	}
	if r.URL.Query().Has("token") {
		// Loading the page with the token: keep it in a cookie and drop it
		// from the address (history, screenshots, the Referer of links).
		if !s.opts.NoToken && tokenEqual(r.URL.Query().Get("token"), s.opts.Token) {
			http.SetCookie(w, &http.Cookie{
				Name:     s.cookieName(),
				Value:    s.opts.Token,
				Path:     "/",
				HttpOnly: true,
				SameSite: http.SameSiteStrictMode,
			})
		}
		w.Header().Set("Cache-Control", "no-store")
		w.Header().Set("Referrer-Policy", "no-referrer")
		http.Redirect(w, r, withoutToken(r.URL), http.StatusSeeOther)
		return
	}
	if s.ui == nil {
		s.servePlaceholder(w, r)
		return
	}
	s.serveUI(w, r, s.ui)
}

func isUpgrade(r *http.Request) bool {
	return headerHas(r.Header, "Connection", "upgrade") && headerHas(r.Header, "Upgrade", "websocket")
}

func headerHas(h http.Header, key, token string) bool {
	for _, v := range h.Values(key) {
		for _, t := range strings.Split(v, ",") {
			if strings.EqualFold(strings.TrimSpace(t), token) {
				return true
			}
		}
	}
	return false
}

// clients returns the number of connected clients and a channel closed
// when that changes.
func (s *Server) clients() (int, <-chan struct{}) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return len(s.conns), s.connsCh
}

func (s *Server) connsChangedLocked() {
	close(s.connsCh)
	s.connsCh = make(chan struct{})
}

func (s *Server) serveHealth(w http.ResponseWriter, r *http.Request) {
	if r.Method != http.MethodGet && r.Method != http.MethodHead {
		w.Header().Set("Allow", "GET, HEAD")
		http.Error(w, "Method Not Allowed", http.StatusMethodNotAllowed)
		return
	}
	s.mu.Lock()
	n := len(s.conns)
	s.mu.Unlock()
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("Cache-Control", "no-store")
	fmt.Fprintf(w, `{"status":"ok","clients":%d}`, n)
}

// serveWS checks a WebSocket handshake (origin, host, token) and serves
// the connection.
func (s *Server) serveWS(w http.ResponseWriter, r *http.Request) {
	if !isUpgrade(r) {
		// A page cannot see why its handshake was refused; a plain GET
		// tells it whether it holds a valid token (401) or not (426).
		if !s.authorized(r) {
			http.Error(w, "Unauthorized: a valid token is needed (?token=, Authorization: Bearer, or the cookie set by opening the UI address Pisces printed)", http.StatusUnauthorized)
			return
		}
		http.Error(w, "Upgrade Required: /ws is a WebSocket", http.StatusUpgradeRequired)
		return
	}
	if !s.originAllowed(r) {
		http.Error(w, "Forbidden: origin "+r.Header.Get("Origin")+" is not allowed (--web-allowed-origin)", http.StatusForbidden)
		return
	}
	if s.opts.NoToken && !s.loopbackHost(r) {
		http.Error(w, "Forbidden: without a token, only a loopback Host with this server's port is accepted", http.StatusForbidden)
		return
	}
	if !s.authorized(r) {
		w.Header().Set("WWW-Authenticate", `Bearer realm="pisces"`)
		http.Error(w, "Unauthorized: a valid token is needed (?token=, Authorization: Bearer, or the cookie set by opening the UI address Pisces printed)", http.StatusUnauthorized)
		return
	}
	s.mu.Lock()
	closing := s.closing
	s.mu.Unlock()
	if closing {
		http.Error(w, "Service Unavailable: "+reasonShutdown, http.StatusServiceUnavailable)
		return
	}
	// The session: ?session=<id or path>; else the one the address of the
	// page that connects names (a cookie the page's load set), when it
	// still opens; else the default one.
	var live *sessions.Live
	if ref := r.URL.Query().Get("session"); ref != "" {
		l, err := s.manager.Open(ref)
		if err != nil {
			http.Error(w, "Not Found: "+err.Error(), http.StatusNotFound)
			return
		}
		live = l
	} else if ref := s.pageSession(r); ref != "" {
		if l, err := s.manager.Open(ref); err == nil {
			live = l
		}
	}
	if live == nil {
		s.manager.Acquire(s.def)
		live = s.def
	}
	c, err := websocket.Accept(w, r, &websocket.AcceptOptions{InsecureSkipVerify: true})
	if err != nil {
		s.manager.Release(live)
		return
	}
	c.SetReadLimit(MaxFrame)
	s.serveConn(c, live)
}
