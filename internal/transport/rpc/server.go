// Package rpcmode is the protocol of RPC mode, independent of its framing:
// the dispatch table onto the core, the ordered output of each connection
// (with delta merging), the extension UI and host tools, and the stdio
// JSONL framing (Serve). Other framings (web mode's WebSocket) create one
// Server per connection with NewConn and hand it one command at a time
// (Handle): one command table, any number of framings.
package rpcmode

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"sync"
	"sync/atomic"
	"time"

	"github.com/pisces-agent/pisces/internal/core"
	"github.com/pisces-agent/pisces/internal/extensions"
	"github.com/pisces-agent/pisces/rpc"
)

// Options configure a server.
type Options struct {
	// DeltaInterval merges deltas within this window (0 = never merge).
	DeltaInterval time.Duration
	// Legacy selects the older wire (--rpc-compat legacy).
	Legacy bool
	// OMP puts the connection on oh-my-pi's wire from the start (--rpc-compat
	// omp); otherwise negotiate_protocol does.
	OMP bool
	// Stderr receives diagnostics.
	Stderr io.Writer
	// OnReady, when set, runs in its own goroutine once the ready line is
	// queued (e.g. to ask the client something through the extension UI).
	OnReady func(*Server)
	// Sessions carries out the commands that open another session
	// (new_session, switch_session, fork, clone); nil replaces the
	// session's store in place, the one-client behaviour of stdio.
	Sessions Sessions
	// MaxQueue bounds the frames waiting for this client (after deltas
	// were merged); past it, or past QueueLimit bytes, OnOverflow runs
	// once and nothing more is queued. 0: no bound (stdio, whose one
	// client is the only reader: QueueLimit paces the run instead).
	MaxQueue int
	// OnOverflow is called (from the goroutine that queued the frame, which
	// must not wait) when the client cannot keep up with MaxQueue or
	// QueueLimit.
	OnOverflow func()
	// QueueLimit is how many bytes of output (about) may wait for a client
	// that does not read: past it the run waits for a client without
	// MaxQueue (stdio), and a client with MaxQueue is cut off as past
	// MaxQueue (web). 0 means DefaultQueueLimit, a negative value no limit.
	QueueLimit int64
}

// Server is the protocol side of one connection: its output queue, the
// session it is attached to and the commands it has in flight.
type Server struct {
	opts     Options
	w        *writer
	sessions Sessions

	mu        sync.Mutex
	hub       *Hub
	unsub     func()
	unpace    func() // leaves the session's pacers (see paced)
	detached  bool
	finishing bool        // Finish has begun: no new command starts
	overflow  atomic.Bool // past MaxQueue: nothing more is queued
	snapHub   *Hub        // the session asked for message snapshots

	omp   atomic.Bool // on oh-my-pi's wire (omp.go)
	v2    atomic.Bool // protocol v2 negotiated (frames over 1 MiB chunked)
	ompSt ompState

	loginRun *loginRun // the login this connection runs (login.go), under mu

	wg sync.WaitGroup
	// lane runs the quick commands one after another, in the order they
	// arrived.
	lane lane
	// cancellable tracks the running compact and navigate_tree commands:
	// an abort answers after those running when it arrived, so a client
	// sees the aborted command's answer first.
	cancellable inflight
	// logins tracks the running login command (login.go): abort cancels
	// it and answers after it.
	logins inflight
	// aborts counts abort commands: a login handed in before an abort
	// that had not started when the abort came is cancelled too.
	aborts atomic.Uint64
}

// New creates the stdio server for sess that writes to out: one client,
// one session, whose store commands such as switch_session replace in
// place.
func New(sess *core.Session, out io.Writer, opts Options) *Server {
	return NewConn(NewHub(sess, HubOptions{}), out, opts)
}

// NewConn creates a server for one connection to hub, writing its frames
// to out (each frame is one JSON object followed by LF). Nothing is
// written before Start (or Serve).
func NewConn(hub *Hub, out io.Writer, opts Options) *Server {
	if opts.Stderr == nil {
		opts.Stderr = io.Discard
	}
	w := newWriter(out, opts.DeltaInterval, opts.Stderr)
	if opts.QueueLimit != 0 {
		w.limit = opts.QueueLimit
	}
	s := &Server{opts: opts, w: w, sessions: opts.Sessions, hub: hub}
	if s.sessions == nil {
		s.sessions = inPlace{}
	}
	return s
}

// Hub returns the session this connection is attached to.
func (s *Server) Hub() *Hub {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.hub
}

// attach subscribes the connection to h's events, leaving the session it
// was on. With a reason, the connection alone is told with session_changed
// (it attached to a session that was already open, or that it opened for
// itself); a read-only view comes with a notice.
func (s *Server) attach(h *Hub, reason string) {
	s.mu.Lock()
	old := s.hub
	if s.detached {
		// The connection is closing: the session it was handed is given
		// back at once.
		s.mu.Unlock()
		if h != old {
			s.sessions.Release(h)
		}
		return
	}
	if old == h && s.unsub != nil {
		s.mu.Unlock()
		return
	}
	if s.unsub != nil {
		s.unsub()
	}
	if s.unpace != nil {
		s.unpace()
		s.unpace = nil
	}
	s.hub = h
	if reason != "" && !s.full() {
		s.w.event(h.sess.SessionChangedEvent(reason))
	}
	if ro := h.ReadOnly(); ro != "" && !s.full() {
		s.w.raw(uiRequest(newUIID(), "notify", map[string]any{"message": "Read-only session: " + ro, "notifyType": "warning"}))
	}
	s.unsub = h.sess.Subscribe(s.onEvent)
	h.sess.StartMCPReports()
	if s.paced() {
		// This client is the session's only reader (stdio): past the
		// queue's limit the run and the user bash command wait for it
		// (never the goroutine that reads commands, which keeps reading,
		// so abort and extension_ui_response get through).
		s.unpace = h.sess.Pace(s.w.waitRoom)
	}
	s.mu.Unlock()
	s.syncSnapshots()
	if old != nil && old != h {
		old.remove(s)
		s.sessions.Release(old)
	}
	h.add(s)
}

// detach leaves the session for good (the connection is closing).
func (s *Server) detach() {
	s.mu.Lock()
	h := s.hub
	if s.detached {
		s.mu.Unlock()
		return
	}
	s.detached = true
	run := s.loginRun
	if s.unsub != nil {
		s.unsub()
		s.unsub = nil
	}
	if s.unpace != nil {
		s.unpace()
		s.unpace = nil
	}
	s.mu.Unlock()
	if run != nil {
		// Nobody is left to answer the login's questions.
		run.cancel()
	}
	s.syncSnapshots()
	if h != nil {
		h.remove(s)
		s.sessions.Release(h)
	}
}

// UI returns the extension UI of the attached session (dialogs reach every
// client attached to it; the first answer counts).
func (s *Server) UI() extensions.UI { return s.Hub().ui }

// Start writes the ready line, announces the attached session to this
// client alone when reason is set (session_changed), and asks the
// session's clients about its project when nothing has decided its trust
// yet. Framings other than stdio call it once, before Handle.
func (s *Server) Start(reason string) {
	s.w.event(&rpc.ReadyEvent{Type: rpc.EventReady})
	h := s.Hub()
	s.attach(h, reason)
	if s.opts.OMP {
		s.enableOMP()
		s.commandsUpdate()
	}
	h.resolveTrust()
	if s.opts.OnReady != nil {
		go s.opts.OnReady(s)
	}
}

// Serve writes the ready line, then reads commands until in ends or stop is
// closed. Each command runs in its own goroutine (as pi does), so a long
// bash or compact does not hold up get_state; responses may come out of
// order and carry the request's id. Serve returns after every command has
// been answered and the output is flushed.
func (s *Server) Serve(in io.Reader, stop <-chan struct{}) error {
	h := s.Hub()
	// stdio advertises protocol v2 (oh-my-pi's client negotiates it).
	s.w.event(&rpc.ReadyEvent{
		Type: rpc.EventReady, ProtocolVersion: 1, SupportedProtocolVersions: []int{1, rpc.ProtocolV2},
		MaxFrameBytes: rpc.MaxFrameBytes, MaxReassembledFrameBytes: rpc.MaxReassembledFrameBytes,
	})
	s.attach(h, "")
	if s.opts.OMP {
		s.enableOMP()
		s.commandsUpdate()
	}
	// The client is the person who decides project trust: an undecided
	// project is asked about right after ready (a yes reloads).
	h.sess.SetTrustAsk(h.AskTrust)
	h.resolveTrust()
	if s.opts.OnReady != nil {
		go s.opts.OnReady(s)
	}
	// The reading goroutine handles each line itself (a quick command is
	// answered without a hand-over to another goroutine); Handle never
	// makes it wait for another line. Serve returns on stop even while a
	// read is blocked: the goroutine then handles nothing more.
	var handling sync.Mutex
	stopped := false
	readErr := make(chan error, 1)
	go func() {
		readErr <- readLines(in, func(line []byte) bool {
			handling.Lock()
			defer handling.Unlock()
			if stopped {
				return false
			}
			s.Handle(line)
			return true
		})
	}()
	var err error
	eof := false
	select {
	case err = <-readErr:
		handling.Lock()
		eof = !stopped
		handling.Unlock()
	case <-stop:
		// A command being handled is handed in completely (its
		// goroutine counted) before the wait below; later lines are
		// dropped.
		handling.Lock()
		stopped = true
		handling.Unlock()
	}
	// A login waits for its client, who is gone.
	s.cancelLogin()
	if eof {
		s.wg.Wait()
	} else {
		// A shutdown: the commands in flight were aborted with the run;
		// their answers get a moment, as the output does below.
		waitWithin(&s.wg, ShutdownFlush)
	}
	// Nobody is left to answer a trust question still open (an answer
	// already read is kept and stored).
	h = s.Hub()
	h.sess.SetTrustAsk(nil)
	h.closeTrust()
	if eof {
		// stdin ended: the running work finishes and is reported first.
		h.sess.WaitIdle()
	}
	s.detach()
	if eof {
		s.w.close()
	} else {
		// Over stdio the client may have stopped reading: the process
		// must still exit (within 3 s of a signal), so the queued output
		// gets ShutdownFlush to go out and the rest is left behind.
		s.w.closeWithin(ShutdownFlush)
	}
	return err
}

// ShutdownFlush is how long Serve, stopped by a shutdown, waits for the
// commands in flight and then for the queued output to be written.
const ShutdownFlush = time.Second

// waitWithin waits for wg, at most d.
func waitWithin(wg *sync.WaitGroup, d time.Duration) {
	done := make(chan struct{})
	go func() {
		wg.Wait()
		close(done)
	}()
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-done:
	case <-t.C:
	}
}

// Refuse answers a frame that is not a command at all (a binary
// WebSocket frame) with a parse error.
func (s *Server) Refuse(reason string) {
	s.w.response(&rpc.Response{Command: "parse", Error: "Failed to parse command: " + reason})
}

// Finish ends a connection that a framing other than stdio served: it
// leaves the session (whose work goes on), waits for the commands in
// flight to be answered and flushes the output. Commands handed in later
// are dropped; calling it again waits for the same.
func (s *Server) Finish() {
	s.mu.Lock()
	s.finishing = true
	s.mu.Unlock()
	s.detach()
	s.wg.Wait()
	s.w.close()
}

// Close waits for the output to drain.
func (s *Server) Close() { s.w.close() }

func (s *Server) onEvent(ev rpc.Event) {
	s.trackSubagent(ev)
	if s.omp.Load() {
		s.ompEvent(ev)
		return
	}
	if s.opts.Legacy {
		ev = legacyEvent(ev)
		if ev == nil {
			return
		}
	} else {
		ev = piShape(ev)
	}
	if ev == nil {
		return
	}
	if s.filtered(ev.EventType()) {
		return
	}
	s.queueEvent(ev)
}

// queueEvent queues an event for this client, unless it can no longer keep
// up (MaxQueue).
func (s *Server) queueEvent(ev rpc.Event) {
	if s.full() {
		return
	}
	s.w.event(ev)
}

// queueRaw queues pre-encoded JSON for this client (extension UI and host
// tool requests), unless it can no longer keep up.
func (s *Server) queueRaw(b []byte) {
	if s.full() {
		return
	}
	s.w.raw(b)
}

// paced reports whether the session's run waits for this client past the
// queue's limit: a client without MaxQueue (stdio's one client). A client
// with MaxQueue is disconnected instead (web), and never holds up a run
// that other clients watch.
func (s *Server) paced() bool { return s.opts.MaxQueue <= 0 && s.w.limit > 0 }

// full reports a client past MaxQueue frames or past the queue's byte
// limit, calling OnOverflow the first time. Only a client with MaxQueue
// (web) can be full; it gets nothing more and is disconnected.
func (s *Server) full() bool {
	if s.opts.MaxQueue <= 0 {
		return false
	}
	if s.overflow.Load() {
		return true
	}
	if frames, bytes := s.w.backlog(); frames < s.opts.MaxQueue && (s.w.limit <= 0 || bytes <= s.w.limit) {
		return false
	}
	if s.overflow.CompareAndSwap(false, true) && s.opts.OnOverflow != nil {
		s.opts.OnOverflow()
	}
	return true
}

// respond queues a response for this client.
func (s *Server) respond(r *rpc.Response, body streamedData) {
	s.w.respond(r, body)
}

// readLines splits in on LF only, strips one trailing CR, and hands every
// non-empty line to fn. There is no line-length limit; a final line without
// LF is still handled.
func readLines(in io.Reader, fn func([]byte) bool) error {
	br := bufio.NewReaderSize(in, 64<<10)
	for {
		line, err := br.ReadBytes('\n')
		if len(line) > 0 {
			line = bytes.TrimSuffix(line, []byte("\n"))
			line = bytes.TrimSuffix(line, []byte("\r"))
			if len(bytes.TrimSpace(line)) > 0 {
				if !fn(line) {
					return nil
				}
			}
		}
		if err != nil {
			if errors.Is(err, io.EOF) {
				return nil
			}
			return err
		}
	}
}

// call is one command as its handler sees it: the connection, and the
// session the connection was attached to when the command arrived (a
// command that moves the connection changes what later commands see, not
// what this one does).
type call struct {
	*Server
	hub  *Hub
	sess *core.Session
	obj  map[string]any // the line, decoded and checked (checkFields)
	// aborts is the connection's abort count when the command arrived.
	aborts uint64
	// cutShort are the compact and navigate_tree commands, and logins,
	// that were running when an abort or abort_branch_summary arrived:
	// it answers after them.
	cutShort []chan struct{}
}

// Handle parses one command (a line of stdin, a WebSocket text frame) and
// dispatches it. It never waits for a run, a dialog answer or another
// command: commands that may wait run in their own goroutines.
func (s *Server) Handle(line []byte) {
	obj, ok := parseCommandObject(line)
	if !ok {
		if obj, ok = s.parseFailure(line); !ok {
			return
		}
	}
	id, idErr := idOf(obj)
	typ, hasType := obj["type"]
	t, isString := typ.(string)
	switch {
	case idErr != nil:
		s.w.response(&rpc.Response{Command: strOr(t, "parse"), Error: idErr.Error()})
		return
	case !hasType:
		s.w.response(&rpc.Response{ID: id, Command: "parse", Error: `Missing field "type": expected a string naming the command`})
		return
	case !isString:
		s.w.response(&rpc.Response{ID: id, Command: "parse", Error: fmt.Sprintf(`Invalid field "type": expected a string, got %s`, jsonKind(typ))})
		return
	}
	h := s.Hub()
	if t == "host_tool_update" || t == "host_tool_result" {
		h.host.deliver(t, line, s)
		return
	}
	if t == rpc.TypeExtensionUIResponse {
		// Routed to the pending dialog (this connection's login, else the
		// session's); an unknown or late id is ignored without a
		// response, as pi does.
		if !s.deliverLogin(line) {
			h.ui.deliver(line, s)
		}
		return
	}
	hd, ok := handlers[t]
	if !ok {
		s.w.response(&rpc.Response{ID: id, Command: t, Error: "Unknown command: " + t})
		return
	}
	if err := checkFields(t, obj); err != nil {
		s.w.response(&rpc.Response{ID: id, Command: t, Error: err.Error()})
		return
	}
	if ro := h.ReadOnly(); ro != "" && !readOnlyCommands[t] {
		s.w.response(&rpc.Response{ID: id, Command: t, Error: "Read-only session: " + ro})
		return
	}
	if t == rpc.CmdAbort {
		s.aborts.Add(1)
	}
	c := &call{Server: s, hub: h, sess: h.sess, obj: obj, aborts: s.aborts.Load()}
	switch t {
	case rpc.CmdAbort:
		c.cutShort = append(s.cancellable.now(), s.logins.now()...)
	case rpc.CmdAbortBranchSummary:
		c.cutShort = s.cancellable.now()
	}
	if !slowCommands[t] {
		// Quick commands are answered in the order they arrived: at once
		// on this goroutine when none is waiting, else after the ones
		// ahead of them. One that may wait for a person (an extension's
		// input hook or command, which may open a dialog) or for a
		// compaction runs on the lane's own goroutine, so that this one
		// goes on reading (the dialog's answer, an abort).
		var mayWait bool
		switch t {
		case rpc.CmdPrompt:
			mayWait = c.sess.PromptMayWait()
		case rpc.CmdSteer, rpc.CmdQueueMessage, rpc.CmdFollowUp:
			mayWait = c.sess.InputMayWait()
		}
		s.inOrder(mayWait, func() {
			if resp, body := c.run(hd, t, id, line); resp != nil {
				s.w.respond(resp, body)
			}
		})
		return
	}
	s.mu.Lock()
	if s.finishing {
		s.mu.Unlock()
		return
	}
	s.wg.Add(1)
	s.mu.Unlock()
	var ended func() // the command is no longer running (inflight)
	switch t {
	case rpc.CmdCompact, rpc.CmdNavigateTree:
		ended = s.cancellable.start()
	case rpc.CmdLogin:
		ended = s.logins.start()
	}
	go func() {
		defer s.wg.Done()
		resp, body := c.run(hd, t, id, line)
		if resp != nil {
			s.w.respond(resp, body)
		}
		if resp != nil && resp.Success && (t == rpc.CmdSwitchSession || t == rpc.CmdNewSession) {
			// The session may be in another project now: one nothing has
			// decided yet is asked about after the response.
			s.Hub().resolveTrust()
		}
		if ended != nil {
			ended()
		}
	}()
}

// inflight tracks the running commands of a kind (compact and
// navigate_tree; login), so that an abort answers after the ones it cut
// short. It is not a sync.WaitGroup: the reading goroutine starts a
// command whenever a line asks for one, also while an abort waits or
// before that wait has returned, which a WaitGroup forbids (an Add from
// zero concurrent with a Wait is a data race and may panic; the race
// detector caught it in testdata/rpc/summary_abort.txtar). An abort waits
// for the commands running when it arrived (now), never for one that
// started after it.
type inflight struct {
	mu      sync.Mutex
	running map[chan struct{}]struct{}
}

// start counts a command that begins; done is called when it has ended.
func (f *inflight) start() (done func()) {
	ch := make(chan struct{})
	f.mu.Lock()
	if f.running == nil {
		f.running = map[chan struct{}]struct{}{}
	}
	f.running[ch] = struct{}{}
	f.mu.Unlock()
	return func() {
		f.mu.Lock()
		delete(f.running, ch)
		f.mu.Unlock()
		close(ch)
	}
}

// now returns the commands running now, for waitAll.
func (f *inflight) now() []chan struct{} {
	f.mu.Lock()
	defer f.mu.Unlock()
	if len(f.running) == 0 {
		return nil
	}
	list := make([]chan struct{}, 0, len(f.running))
	for ch := range f.running {
		list = append(list, ch)
	}
	return list
}

// waitAll returns once every command of list has ended.
func waitAll(list []chan struct{}) {
	for _, ch := range list {
		<-ch
	}
}

// lane orders a connection's quick commands: each runs after the one
// before it has answered.
type lane struct {
	mu      sync.Mutex
	running bool     // a command of the lane is running
	queue   []func() // commands waiting for it
}

// inOrder runs fn after the quick commands handed in before it: at once
// on the calling goroutine when none is running or waiting and fn will
// not wait (mayWait false), else on the lane's goroutine, which runs the
// queue in order while the caller goes on.
func (s *Server) inOrder(mayWait bool, fn func()) {
	l := &s.lane
	l.mu.Lock()
	if !l.running && !mayWait {
		l.running = true
		l.mu.Unlock()
		fn()
		l.mu.Lock()
		if len(l.queue) == 0 {
			l.running = false
			l.mu.Unlock()
			return
		}
		// Another goroutine handed commands in meanwhile (framings
		// other than stdio may): they run on the lane's goroutine.
		l.mu.Unlock()
		s.drainLane()
		return
	}
	l.queue = append(l.queue, fn)
	if l.running {
		l.mu.Unlock()
		return
	}
	l.running = true
	l.mu.Unlock()
	s.drainLane()
}

// drainLane starts the lane's goroutine, which runs the queued commands
// until none is left (the caller set running). Commands handed in after
// Finish has begun are dropped.
func (s *Server) drainLane() {
	s.mu.Lock()
	if s.finishing {
		s.mu.Unlock()
		s.lane.mu.Lock()
		s.lane.queue = nil
		s.lane.running = false
		s.lane.mu.Unlock()
		return
	}
	s.wg.Add(1)
	s.mu.Unlock()
	go func() {
		defer s.wg.Done()
		l := &s.lane
		for {
			l.mu.Lock()
			if len(l.queue) == 0 {
				l.running = false
				l.mu.Unlock()
				return
			}
			fn := l.queue[0]
			l.queue[0] = nil
			l.queue = l.queue[1:]
			l.mu.Unlock()
			fn()
		}
	}()
}

// parseFailure decodes a line that is not exactly one JSON object with
// json.Decoder, whose errors word the response; it answers and returns
// false, or returns the object when there was one after all.
func (s *Server) parseFailure(line []byte) (map[string]any, bool) {
	var v any
	dec := json.NewDecoder(bytes.NewReader(line))
	dec.UseNumber()
	if err := dec.Decode(&v); err != nil {
		s.w.response(&rpc.Response{Command: "parse", Error: "Failed to parse command: " + err.Error()})
		return nil, false
	}
	if dec.More() {
		// Keep the id of a readable first object, so the client can match.
		id := ""
		if obj, ok := v.(map[string]any); ok {
			id, _ = idOf(obj)
		}
		s.w.response(&rpc.Response{ID: id, Command: "parse", Error: "Failed to parse command: unexpected data after the JSON object (one command per line)"})
		return nil, false
	}
	obj, ok := v.(map[string]any)
	if !ok {
		s.w.response(&rpc.Response{Command: "parse", Error: fmt.Sprintf("Failed to parse command: expected a JSON object, got %s", jsonKind(v))})
		return nil, false
	}
	return obj, true
}

// slowCommands may wait (for a run to stop, a shell command, a model call):
// they run concurrently, as pi runs every command, and their responses may
// overtake or follow others. Everything else answers at once, in order.
var slowCommands = map[string]bool{
	rpc.CmdAbort:              true,
	rpc.CmdAbortAndPrompt:     true,
	rpc.CmdAbortBranchSummary: true,
	rpc.CmdBash:               true,
	rpc.CmdNewSession:         true,
	rpc.CmdSwitchSession:      true,
	rpc.CmdFork:               true,
	rpc.CmdBranch:             true,
	rpc.CmdClone:              true,
	rpc.CmdCompact:            true,
	rpc.CmdHandoff:            true,
	rpc.CmdNavigateTree:       true,
	rpc.CmdAbortBash:          true,
	rpc.CmdGetTree:            true,
	rpc.CmdGetSessionTree:     true,
	rpc.CmdListSessions:       true,
	rpc.CmdExportHTML:         true,
	rpc.CmdListDirectory:      true,
	rpc.CmdOpenSession:        true,
	rpc.CmdLogin:              true,
	rpc.CmdLogout:             true,
}

// readOnlyCommands are the commands a read-only view of a session (a file
// another process writes) answers: reading it, and leaving it for another
// session (a fork or clone of it is a new file of this process's own).
var readOnlyCommands = map[string]bool{
	rpc.CmdGetState:                   true,
	rpc.CmdGetMessages:                true,
	rpc.CmdGetAvailableModels:         true,
	rpc.CmdGetAvailableThinkingLevels: true,
	rpc.CmdGetSessionStats:            true,
	rpc.CmdGetForkMessages:            true,
	rpc.CmdGetBranchMessages:          true,
	rpc.CmdGetEntries:                 true,
	rpc.CmdGetTree:                    true,
	rpc.CmdGetLastAssistantText:       true,
	rpc.CmdGetContextUsage:            true,
	rpc.CmdGetSessionTree:             true,
	rpc.CmdListSessions:               true,
	rpc.CmdGetTools:                   true,
	rpc.CmdMCPStatus:                  true,
	rpc.CmdGetCommands:                true,
	rpc.CmdExportHTML:                 true,
	rpc.CmdListDirectory:              true,
	rpc.CmdNewSession:                 true,
	rpc.CmdSwitchSession:              true,
	rpc.CmdFork:                       true,
	rpc.CmdBranch:                     true,
	rpc.CmdClone:                      true,
	rpc.CmdAbort:                      true,
	rpc.CmdAbortBash:                  true,
	rpc.CmdNegotiateProtocol:          true,
	rpc.CmdGetAvailableCommands:       true,
	rpc.CmdGetMessagesPage:            true,
	rpc.CmdSetEventFilter:             true,
	rpc.CmdOpenSession:                true,
	rpc.CmdGetLoginProviders:          true,
	rpc.CmdLogin:                      true,
	rpc.CmdLogout:                     true,
}

// streamedData is response data that writes itself out in pieces instead
// of being held in one buffer (list_sessions: megabytes of per-session
// fragments, kept encoded between calls).
type streamedData interface {
	json.Marshaler
	io.WriterTo
	SizeHint() int // about the length of the JSON
}

// run calls a handler, turning errors and panics into error responses. A
// handler's streamedData comes back as body (resp.Data is then empty).
func (c *call) run(h handler, t, id string, line []byte) (resp *rpc.Response, body streamedData) {
	defer func() {
		if p := recover(); p != nil {
			fmt.Fprintf(c.opts.Stderr, "pisces: %s handler panicked: %v\n", t, p)
			resp, body = &rpc.Response{ID: id, Command: t, Error: fmt.Sprintf("Internal error while handling %s", t)}, nil
		}
	}()
	data, err := h(c, line)
	if err == errAnswered {
		return nil, nil
	}
	if err != nil {
		r := &rpc.Response{ID: id, Command: t, Error: err.Error()}
		var ce *codedError
		if errors.As(err, &ce) {
			r.Code = ce.code
		}
		return r, nil
	}
	r := &rpc.Response{ID: id, Command: t, Success: true}
	if sd, ok := data.(streamedData); ok {
		return r, sd
	}
	if raw, ok := data.(json.RawMessage); ok {
		r.Data = raw // already encoded (large answers are written once)
	} else if data != nil {
		b, err := rpc.Marshal(data)
		if err != nil {
			return &rpc.Response{ID: id, Command: t, Error: "cannot encode the response: " + err.Error()}, nil
		}
		r.Data = b
	}
	return r, nil
}

func idOf(obj map[string]any) (string, error) {
	v, ok := obj["id"]
	if !ok || v == nil {
		return "", nil
	}
	switch x := v.(type) {
	case string:
		return x, nil
	case json.Number:
		// Echoed as a string would change its type; refuse clearly.
		return "", fmt.Errorf(`Invalid field "id": expected a string, got number`)
	default:
		return "", fmt.Errorf(`Invalid field "id": expected a string, got %s`, jsonKind(v))
	}
}

func strOr(s, def string) string {
	if s == "" {
		return def
	}
	return s
}

func jsonKind(v any) string {
	switch v.(type) {
	case nil:
		return "null"
	case bool:
		return "boolean"
	case json.Number, float64:
		return "number"
	case string, longString:
		return "string"
	case []any:
		return "array"
	case map[string]any:
		return "object"
	}
	return "unknown"
}
