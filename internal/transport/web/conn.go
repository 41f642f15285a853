package web

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/coder/websocket"

	"github.com/pisces-agent/pisces/internal/sessions"
	rpcmode "github.com/pisces-agent/pisces/internal/transport/rpc"
)

// wsConn is one WebSocket client.
type wsConn struct {
	s      *Server
	c      *websocket.Conn
	ctx    context.Context // cancelled to drop the connection at once
	cancel context.CancelFunc
	rpc    *rpcmode.Server

	closeOnce sync.Once
}

// serveConn runs one connection: the protocol's first frames (ready, the
// attached session), then one command per text frame until the client
// leaves or the server closes the connection. The session stays loaded
// for its other clients, and its work goes on without this one.
func (s *Server) serveConn(c *websocket.Conn, live *sessions.Live) {
	ctx, cancel := context.WithCancel(context.Background())
	wc := &wsConn{s: s, c: c, ctx: ctx, cancel: cancel}
	opts := s.opts.RPC
	opts.Sessions = managed{s}
	opts.MaxQueue = s.opts.MaxQueue
	opts.OnOverflow = func() {
		// Called while an event is being published: never wait here.
		go wc.close(websocket.StatusPolicyViolation, reasonSlow)
	}
	sink := &frameSink{conn: wc, timeout: s.opts.WriteTimeout}
	wc.rpc = rpcmode.NewConn(hubOf(live), sink, opts)
	s.mu.Lock()
	if s.closing {
		s.mu.Unlock()
		wc.rpc.Finish()
		c.Close(websocket.StatusGoingAway, reasonShutdown)
		cancel()
		return
	}
	s.conns[wc] = struct{}{}
	s.connsChangedLocked()
	s.mu.Unlock()
	defer func() {
		s.mu.Lock()
		delete(s.conns, wc)
		s.connsChangedLocked()
		s.mu.Unlock()
	}()

	wc.rpc.Start("switch")
	for {
		typ, data, err := c.Read(ctx)
		if err != nil {
			break
		}
		if typ != websocket.MessageText {
			wc.rpc.Refuse("binary frames are not accepted; send one JSON object per text frame")
			continue
		}
		if len(bytes.TrimSpace(data)) == 0 {
			continue
		}
		wc.rpc.Handle(data)
	}
	// The client is gone (or the server dropped it): the commands in
	// flight finish, the session is left to its other clients.
	wc.rpc.Finish()
	wc.close(websocket.StatusNormalClosure, "")
	cancel()
}

// close closes the connection with a reason; when the client does not
// take part in the closing handshake within a second, the connection is
// dropped.
func (wc *wsConn) close(code websocket.StatusCode, reason string) {
	wc.closeOnce.Do(func() {
		done := make(chan struct{})
		go func() {
			wc.c.Close(code, reason)
			close(done)
		}()
		t := time.NewTimer(time.Second)
		defer t.Stop()
		select {
		case <-done:
		case <-t.C:
			wc.cancel() // the reader's context: the connection is dropped
		}
	})
}

// frameSink turns the protocol's output (JSON objects each followed by
// LF, written in pieces) into one WebSocket text message per object. An
// object is collected first and then sent, so that the timeout measures
// only what the client takes: a message it has not accepted within the
// timeout ends the connection (a stalled client).
type frameSink struct {
	conn    *wsConn
	timeout time.Duration
	buf     []byte
	err     error
}

// maxKeptFrame bounds the buffer a sink keeps between frames.
const maxKeptFrame = 1 << 20

func (f *frameSink) Write(p []byte) (int, error) {
	if f.err != nil {
		return 0, f.err
	}
	n := len(p)
	for len(p) > 0 {
		i := bytes.IndexByte(p, '\n')
		if i < 0 {
			f.buf = append(f.buf, p...)
			break
		}
		f.buf = append(f.buf, p[:i]...)
		p = p[i+1:]
		if err := f.send(); err != nil {
			return 0, err
		}
	}
	return n, nil
}

// send writes the collected frame as one message.
func (f *frameSink) send() error {
	if len(f.buf) == 0 {
		return nil
	}
	ctx, cancel := context.WithTimeout(f.conn.ctx, f.timeout)
	err := f.conn.c.Write(ctx, websocket.MessageText, f.buf)
	cancel()
	if cap(f.buf) > maxKeptFrame {
		f.buf = nil
	} else {
		f.buf = f.buf[:0]
	}
	if err != nil {
		return f.fail(err)
	}
	return nil
}

// fail records a failed write and closes the connection (a write that
// timed out has already dropped it).
func (f *frameSink) fail(err error) error {
	if errors.Is(err, context.DeadlineExceeded) {
		err = fmt.Errorf("%s: %w", reasonStalled, err)
		go f.conn.close(websocket.StatusPolicyViolation, reasonStalled)
	} else {
		go f.conn.close(websocket.StatusInternalError, "write failed")
	}
	f.err = err
	return err
}

// managed carries out new_session, switch_session, fork and clone in web
// mode: the connection moves to another session of the manager (opened
// once, shared by every connection on it); the session it leaves goes on
// for its other clients.
type managed struct{ s *Server }

func (m managed) from(h *rpcmode.Hub) (*sessions.Live, error) {
	l := m.s.liveOf(h)
	if l == nil {
		return nil, sessions.ErrClosed
	}
	return l, nil
}

func (m managed) NewSession(h *rpcmode.Hub, cwd, parent string) (*rpcmode.Hub, error) {
	from, err := m.from(h)
	if err != nil {
		return nil, err
	}
	l, err := m.s.manager.Create(from, cwd, parent)
	if err != nil {
		return nil, err
	}
	return hubOf(l), nil
}

func (m managed) Switch(h *rpcmode.Hub, path string) (*rpcmode.Hub, error) {
	from, err := m.from(h)
	if err != nil {
		return nil, err
	}
	l, err := m.s.manager.Switch(from, path)
	if err != nil {
		return nil, err
	}
	if l == from {
		// The session the connection is on: it stays, with one viewer.
		m.s.manager.Release(l)
	}
	return hubOf(l), nil
}

func (m managed) Fork(h *rpcmode.Hub, entryID string) (*rpcmode.Hub, string, error) {
	from, err := m.from(h)
	if err != nil {
		return nil, "", err
	}
	l, text, err := m.s.manager.Fork(from, entryID)
	if err != nil {
		return nil, "", err
	}
	return hubOf(l), text, nil
}

func (m managed) Clone(h *rpcmode.Hub) (*rpcmode.Hub, error) {
	from, err := m.from(h)
	if err != nil {
		return nil, err
	}
	l, err := m.s.manager.Clone(from)
	if err != nil {
		return nil, err
	}
	return hubOf(l), nil
}

func (m managed) Writer(path string) (*rpcmode.Hub, error) {
	if l := m.s.manager.Lookup(path); l != nil {
		return hubOf(l), nil
	}
	if holder, ok := sessions.LockedElsewhere(path); ok {
		return nil, fmt.Errorf("%s is open for writing in another process (%s)", path, holder)
	}
	return nil, nil
}

func (m managed) Release(h *rpcmode.Hub) {
	if l := m.s.liveOf(h); l != nil {
		m.s.manager.Release(l)
	}
}

// Shutdown stops the server: it stops accepting connections, aborts the
// runs of every session (tool process groups killed, user bash commands
// cancelled), flushes and closes the sessions (their extensions stopped),
// and closes the connections with a reason. It returns within about two
// seconds whatever the clients do.
func (s *Server) Shutdown() {
	s.stopOnce.Do(func() {
		s.mu.Lock()
		s.closing = true
		conns := make([]*wsConn, 0, len(s.conns))
		for c := range s.conns {
			conns = append(conns, c)
		}
		s.mu.Unlock()
		// Stop accepting; hijacked WebSocket connections are not waited for.
		s.listener.Close()
		ctx, cancel := context.WithTimeout(context.Background(), 500*time.Millisecond)
		s.httpSrv.Shutdown(ctx)
		cancel()
		s.manager.Close()
		// What the aborted runs reported goes out first (at most a second
		// per connection, all at once), then the closing frame.
		var wg sync.WaitGroup
		for _, c := range conns {
			wg.Add(1)
			go func() {
				defer wg.Done()
				flushed := make(chan struct{})
				go func() {
					c.rpc.Finish()
					close(flushed)
				}()
				t := time.NewTimer(time.Second)
				select {
				case <-flushed:
				case <-t.C:
				}
				t.Stop()
				c.close(websocket.StatusGoingAway, reasonShutdown)
			}()
		}
		wg.Wait()
		s.closeRoot()
		close(s.stopped)
	})
	<-s.stopped
}
