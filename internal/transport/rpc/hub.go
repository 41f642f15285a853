package rpcmode

import (
	"context"
	"sync"
	"sync/atomic"
	"time"

	"github.com/pisces-agent/pisces/internal/core"
	"github.com/pisces-agent/pisces/internal/extensions"
)

// HubOptions configure a hub.
type HubOptions struct {
	// Shared marks a session that may have several clients or none (web
	// mode): with no client attached, trust questions are not asked, and a
	// dialog without a timeout of its own ends after Unattended.
	Shared bool
	// Unattended is how long a dialog without a timeout waits while no
	// client is attached (Shared only; 0: DefaultUnattended).
	Unattended time.Duration
	// ReadOnly says why the session is a read-only view ("": writable);
	// commands that would change it are refused with this reason.
	ReadOnly string
}

// DefaultUnattended is how long a dialog without a timeout of its own (an
// editor) waits in a shared session that has no client attached, before
// it resolves as cancelled: no run waits forever for a page nobody has
// open.
const DefaultUnattended = 5 * time.Minute

// Hub is one session as the protocol sees it: the clients attached to it,
// which all receive its events, and the extension UI and host tools that
// reach them all (the first answer wins; the others are told the request
// is settled).
type Hub struct {
	sess *core.Session
	opts HubOptions
	ui   *uiBridge
	host *hostBridge

	mu      sync.Mutex
	conns   []*Server
	changed chan struct{} // closed (and replaced) when a client attaches or leaves

	// trustCtx bounds the trust questions of this session (cancelled when
	// it closes: nobody is left to answer); trustWG counts them, and
	// trustClosed (under trustMu) stops new ones once closeTrust waits, so
	// that no Add from zero overlaps the group's Wait.
	trustCtx    context.Context
	trustCancel context.CancelFunc
	trustWG     sync.WaitGroup
	trustMu     sync.Mutex
	trustClosed bool

	readOnly atomic.Pointer[string] // why the session is read-only ("": writable)
}

// NewHub creates the hub of a session.
func NewHub(sess *core.Session, opts HubOptions) *Hub {
	if opts.Unattended <= 0 {
		opts.Unattended = DefaultUnattended
	}
	h := &Hub{sess: sess, opts: opts, changed: make(chan struct{})}
	h.readOnly.Store(&opts.ReadOnly)
	h.ui = newUIBridge(h)
	h.host = newHostBridge(h)
	h.trustCtx, h.trustCancel = context.WithCancel(context.Background())
	return h
}

// Session returns the core session.
func (h *Hub) Session() *core.Session { return h.sess }

// UI returns the session's extension UI: dialogs go to every attached
// client.
func (h *Hub) UI() extensions.UI { return h.ui }

// ReadOnly says why the session is read-only ("" when it is not).
func (h *Hub) ReadOnly() string { return *h.readOnly.Load() }

// SetReadOnly changes why the session is read-only ("": it is writable
// now). The one session of stdio, which moves between files in place,
// becomes writable when it moves from a file another process writes to
// one of its own.
func (h *Hub) SetReadOnly(reason string) { h.readOnly.Store(&reason) }

// Close ends what the hub started: the trust questions still open are
// cancelled, and nobody can ask through it any more.
func (h *Hub) Close() {
	h.sess.SetTrustAsk(nil)
	h.closeTrust()
}

// add attaches a client; it is sent the requests still waiting for an
// answer, so that it can give it.
func (h *Hub) add(s *Server) {
	h.mu.Lock()
	h.conns = append(h.conns, s)
	h.changedLocked()
	h.mu.Unlock()
	for _, raw := range h.ui.pendingRequests() {
		s.queueRaw(raw)
	}
	for _, raw := range h.host.pendingRequests() {
		s.queueRaw(raw)
	}
}

// remove detaches a client.
func (h *Hub) remove(s *Server) {
	h.mu.Lock()
	defer h.mu.Unlock()
	for i, c := range h.conns {
		if c == s {
			h.conns = append(h.conns[:i:i], h.conns[i+1:]...)
			h.changedLocked()
			return
		}
	}
}

func (h *Hub) changedLocked() {
	close(h.changed)
	h.changed = make(chan struct{})
}

// count returns the number of attached clients.
func (h *Hub) count() int {
	h.mu.Lock()
	defer h.mu.Unlock()
	return len(h.conns)
}

// watch returns the number of attached clients and a channel closed when
// that changes.
func (h *Hub) watch() (int, <-chan struct{}) {
	h.mu.Lock()
	defer h.mu.Unlock()
	return len(h.conns), h.changed
}

// broadcast queues pre-encoded JSON for every attached client.
func (h *Hub) broadcast(raw []byte) {
	for _, s := range h.clients() {
		s.queueRaw(raw)
	}
}

// others queues pre-encoded JSON for every attached client but one.
func (h *Hub) others(except *Server, raw func() []byte) {
	for _, s := range h.clients() {
		if s != except {
			s.queueRaw(raw())
		}
	}
}

func (h *Hub) clients() []*Server {
	h.mu.Lock()
	defer h.mu.Unlock()
	return append([]*Server(nil), h.conns...)
}
