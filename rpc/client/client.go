// Package client is a typed Go client for `pisces --mode rpc` (and any
// server speaking pi's RPC protocol as Pisces does).
//
// Start runs a pisces process and waits for its {"type":"ready"} line;
// NewClient wraps any reader/writer pair. Every command of package rpc has a
// method that sends it with a fresh id, waits for the response with that id
// and decodes its data into the rpc payload type. A response with
// success:false comes back as a *CommandError.
//
// Events arrive on Events(). The reader goroutine never blocks on a slow
// consumer: events wait in a queue of up to EventQueueLimit entries (see
// WithEventQueueLimit); when it is full the oldest queued event is dropped
// and DroppedEvents counts it. PromptAndWait does not depend on that queue:
// it collects the events of its run on its own, without limit.
//
// Requests are safe for concurrent use; responses are matched by id, so
// they may arrive in any order.
//
// NegotiateProtocol switches the connection to protocol v2, oh-my-pi's wire
// (docs/rpc.md): PromptAndWait then waits for the prompt's prompt_result,
// and frames the server splits into rpc_chunk lines are put back together
// before they are dispatched.
package client

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"strconv"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/pisces-agent/pisces/rpc"
)

// EventQueueLimit is the default number of events kept for a consumer of
// Events() that falls behind.
const EventQueueLimit = 1 << 16

// DefaultGracePeriod is how long Close waits after closing stdin before it
// sends SIGTERM, and again before SIGKILL.
const DefaultGracePeriod = 5 * time.Second

// ErrClosed is returned for requests on a connection that has ended.
var ErrClosed = errors.New("pisces rpc: connection closed")

// CommandError is a response with success:false.
type CommandError struct {
	// Command is the response's command member (the command as sent, or
	// "parse").
	Command string
	// Message is the response's error member.
	Message string
	// Code is the response's code member (oh-my-pi's wire:
	// rpc.CodeSessionBusy, rpc.CodeStaleCursor), "" when there is none.
	Code string
}

func (e *CommandError) Error() string {
	return fmt.Sprintf("pisces rpc: %s: %s", e.Command, e.Message)
}

// Option configures a Client.
type Option func(*options)

type options struct {
	timeout      time.Duration
	waitReady    bool
	queueLimit   int
	grace        time.Duration
	stderr       io.Writer
	env          []string
	dir          string
	readyTimeout time.Duration
}

// WithTimeout bounds every request whose context has no deadline (0, the
// default: no bound beyond the context).
func WithTimeout(d time.Duration) Option { return func(o *options) { o.timeout = d } }

// WithWaitForReady makes requests wait until the server's {"type":"ready"}
// line has arrived before they are written (NewClient; Start always waits).
func WithWaitForReady() Option { return func(o *options) { o.waitReady = true } }

// WithEventQueueLimit sets how many undelivered events are kept for
// Events() before the oldest is dropped; n <= 0 keeps all of them (the
// queue then grows without bound while nobody reads Events()).
func WithEventQueueLimit(n int) Option { return func(o *options) { o.queueLimit = n } }

// WithGracePeriod sets how long Close waits for the process to exit after
// closing stdin, and after SIGTERM, before escalating.
func WithGracePeriod(d time.Duration) Option { return func(o *options) { o.grace = d } }

// WithStderr sends the process's stderr to w (Start; default: discarded,
// though the last few KiB are kept for error messages).
func WithStderr(w io.Writer) Option { return func(o *options) { o.stderr = w } }

// WithEnv sets the process's environment (Start; default: inherited).
func WithEnv(env []string) Option { return func(o *options) { o.env = env } }

// WithDir sets the process's working directory (Start).
func WithDir(dir string) Option { return func(o *options) { o.dir = dir } }

// WithReadyTimeout bounds how long Start waits for the ready line when ctx
// has no deadline (default 30s).
func WithReadyTimeout(d time.Duration) Option { return func(o *options) { o.readyTimeout = d } }

// Client is a connection to one RPC server.
type Client struct {
	opts options
	r    io.Reader
	w    io.WriteCloser
	wmu  sync.Mutex

	cmd     *exec.Cmd
	stdout  *os.File
	stderr  *tailBuffer
	exited  chan struct{} // closed when the process has been waited for
	waitErr error

	seq     atomic.Uint64
	mu      sync.Mutex
	pending map[string]chan *rpc.Response
	subs    map[*subscriber]struct{}
	readErr error

	ready     chan struct{}
	readyOnce sync.Once
	done      chan struct{} // closed when the reader has finished

	omp    atomic.Bool // NegotiateProtocol succeeded: oh-my-pi's wire
	chunks chunkReader // rpc_chunk reassembly (reader goroutine only)

	queue     *eventQueue
	events    chan Event
	closing   chan struct{}
	closeOnce sync.Once
	closeErr  error
}

// Start runs the pisces binary at path with `--mode rpc` and args appended
// (the caller passes the other flags, e.g. --provider, --no-session), and
// waits for its ready line. ctx bounds the start-up only; the process lives
// until Close.
func Start(ctx context.Context, path string, args ...string) (*Client, error) {
	return StartWith(ctx, nil, path, args...)
}

// StartWith is Start with options.
func StartWith(ctx context.Context, opts []Option, path string, args ...string) (*Client, error) {
	o := defaults(opts)
	cmd := exec.Command(path, append([]string{"--mode", "rpc"}, args...)...)
	cmd.Env = o.env
	cmd.Dir = o.dir
	tail := &tailBuffer{max: 8 << 10}
	if o.stderr != nil {
		cmd.Stderr = io.MultiWriter(o.stderr, tail)
	} else {
		cmd.Stderr = tail
	}
	stdin, err := cmd.StdinPipe()
	if err != nil {
		return nil, err
	}
	// stdout is our own pipe rather than StdoutPipe, so that the process
	// can be waited for while the reader still drains its output (and a
	// grandchild holding the pipe cannot stop Close).
	pr, pw, err := os.Pipe()
	if err != nil {
		stdin.Close()
		return nil, err
	}
	cmd.Stdout = pw
	// The stderr copy must not keep Wait waiting on a grandchild either.
	cmd.WaitDelay = time.Second
	err = cmd.Start()
	pw.Close()
	if err != nil {
		pr.Close()
		stdin.Close()
		return nil, err
	}
	c := newClient(pr, stdin, o)
	c.cmd = cmd
	c.stdout = pr
	c.stderr = tail
	c.exited = make(chan struct{})
	go func() {
		c.waitErr = cmd.Wait()
		close(c.exited)
	}()
	if _, ok := ctx.Deadline(); !ok && o.readyTimeout > 0 {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, o.readyTimeout)
		defer cancel()
	}
	if err := c.WaitReady(ctx); err != nil {
		c.kill()
		if s := tail.String(); s != "" {
			err = fmt.Errorf("%w; stderr:\n%s", err, s)
		}
		return nil, err
	}
	return c, nil
}

// NewClient wraps a connection: r carries the server's output, w takes
// commands. It does not wait for the ready line; use WaitReady or
// WithWaitForReady for that. Close closes w (and r, if it is an io.Closer,
// when the server does not end its output within the grace period).
func NewClient(r io.Reader, w io.WriteCloser, opts ...Option) *Client {
	return newClient(r, w, defaults(opts))
}

func defaults(opts []Option) options {
	o := options{queueLimit: EventQueueLimit, grace: DefaultGracePeriod, readyTimeout: 30 * time.Second}
	for _, f := range opts {
		f(&o)
	}
	return o
}

func newClient(r io.Reader, w io.WriteCloser, o options) *Client {
	c := &Client{
		opts:    o,
		r:       r,
		w:       w,
		pending: map[string]chan *rpc.Response{},
		subs:    map[*subscriber]struct{}{},
		ready:   make(chan struct{}),
		done:    make(chan struct{}),
		queue:   newEventQueue(o.queueLimit),
		events:  make(chan Event),
		closing: make(chan struct{}),
	}
	go c.read()
	go c.pump()
	return c
}

// Events returns the channel of events (every line that is not a response,
// except the ready line). Responses no request waits for (a second response
// of the legacy wire, an answer after its request timed out, a parse error
// without id) are delivered here as well, with Type "response". The channel
// is closed once the connection has ended and every queued event was
// received, or when Close returns (undelivered events are then discarded).
func (c *Client) Events() <-chan Event { return c.events }

// DroppedEvents reports how many events were dropped because the consumer
// of Events() fell more than the queue limit behind.
func (c *Client) DroppedEvents() uint64 { return c.queue.droppedCount() }

// Ready is closed when the ready line has arrived.
func (c *Client) Ready() <-chan struct{} { return c.ready }

// Done is closed when the server's output has ended.
func (c *Client) Done() <-chan struct{} { return c.done }

// Err returns why the output ended (nil for a clean EOF or while it has not
// ended).
func (c *Client) Err() error {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.readErr
}

// WaitReady waits for the ready line.
func (c *Client) WaitReady(ctx context.Context) error {
	select {
	case <-c.ready:
		return nil
	default:
	}
	select {
	case <-c.ready:
		return nil
	case <-c.done:
		select {
		case <-c.ready:
			return nil
		default:
		}
		if err := c.Err(); err != nil {
			return fmt.Errorf("pisces rpc: output ended before the ready line: %w", err)
		}
		return fmt.Errorf("pisces rpc: output ended before the ready line")
	case <-ctx.Done():
		return fmt.Errorf("pisces rpc: waiting for the ready line: %w", ctx.Err())
	}
}

// read parses the server's output line by line (LF-separated, one trailing
// CR stripped, no length limit).
func (c *Client) read() {
	br := bufio.NewReaderSize(c.r, 64<<10)
	var err error
	for {
		var line []byte
		line, err = br.ReadBytes('\n')
		line = bytes.TrimSuffix(bytes.TrimSuffix(line, []byte("\n")), []byte("\r"))
		if len(bytes.TrimSpace(line)) > 0 {
			c.dispatch(line)
		}
		if err != nil {
			break
		}
	}
	if errors.Is(err, io.EOF) {
		err = nil
	}
	c.mu.Lock()
	c.readErr = err
	pending := c.pending
	c.pending = nil
	subs := c.subs
	c.subs = nil
	c.mu.Unlock()
	for _, ch := range pending {
		close(ch)
	}
	for s := range subs {
		s.close()
	}
	c.queue.close()
	close(c.done)
}

func (c *Client) dispatch(line []byte) {
	var head struct {
		Type string `json:"type"`
		ID   string `json:"id"`
	}
	if json.Unmarshal(line, &head) != nil {
		return // not a protocol line; nothing can be done with it
	}
	if head.Type == rpc.EventRPCChunk {
		// Protocol v2 splits frames over 1 MiB: the frame is handled once
		// its last piece is in.
		if whole := c.chunks.add(line); whole != nil {
			c.dispatch(whole)
		}
		return
	}
	raw := json.RawMessage(append([]byte(nil), line...))
	switch head.Type {
	case rpc.EventReady:
		c.readyOnce.Do(func() { close(c.ready) })
		return
	case "response":
		var resp rpc.Response
		if json.Unmarshal(raw, &resp) == nil && resp.ID != "" {
			c.mu.Lock()
			ch, ok := c.pending[resp.ID]
			if ok {
				delete(c.pending, resp.ID)
			}
			c.mu.Unlock()
			if ok {
				ch <- &resp // buffered
				return
			}
		}
	}
	ev := Event{Type: head.Type, Raw: raw}
	c.mu.Lock()
	for s := range c.subs {
		s.add(ev)
	}
	c.mu.Unlock()
	c.queue.push(ev)
}

// pump moves queued events to the Events channel.
func (c *Client) pump() {
	defer close(c.events)
	for {
		ev, ok := c.queue.pop(c.closing)
		if !ok {
			return
		}
		select {
		case c.events <- ev:
		case <-c.closing:
			return
		}
	}
}

// Call sends any command and returns its response. cmd is a command struct
// of package rpc (or anything that encodes to a JSON object with a type
// member); an id is added when it has none. A success:false response is
// returned as a *CommandError together with the response.
func (c *Client) Call(ctx context.Context, cmd any) (*rpc.Response, error) {
	b, err := rpc.Marshal(cmd)
	if err != nil {
		return nil, err
	}
	var head struct {
		Type *string         `json:"type"`
		ID   json.RawMessage `json:"id"`
	}
	if err := json.Unmarshal(b, &head); err != nil {
		return nil, fmt.Errorf("pisces rpc: a command must be a JSON object: %w", err)
	}
	if head.Type == nil {
		return nil, fmt.Errorf("pisces rpc: a command needs a type")
	}
	var id string
	switch {
	case len(head.ID) == 0:
		id = c.newID()
		idJSON, _ := json.Marshal(id)
		if bytes.Equal(bytes.TrimSpace(b[1:]), []byte("}")) {
			b = []byte(`{"id":` + string(idJSON) + `}`)
		} else {
			b = append([]byte(`{"id":`+string(idJSON)+`,`), b[1:]...)
		}
	case string(head.ID) == "null":
		id = c.newID()
		var m map[string]json.RawMessage
		if err := json.Unmarshal(b, &m); err != nil {
			return nil, err
		}
		m["id"], _ = json.Marshal(id)
		if b, err = rpc.Marshal(m); err != nil {
			return nil, err
		}
	default:
		if err := json.Unmarshal(head.ID, &id); err != nil {
			return nil, fmt.Errorf("pisces rpc: the id of a command must be a string")
		}
	}
	return c.roundTrip(ctx, *head.Type, id, b)
}

func (c *Client) newID() string {
	return "go-" + strconv.FormatUint(c.seq.Add(1), 10)
}

// roundTrip writes one command line and waits for the response with id.
func (c *Client) roundTrip(ctx context.Context, typ, id string, line []byte) (*rpc.Response, error) {
	if _, ok := ctx.Deadline(); !ok && c.opts.timeout > 0 {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, c.opts.timeout)
		defer cancel()
	}
	if c.opts.waitReady {
		if err := c.WaitReady(ctx); err != nil {
			return nil, err
		}
	}
	ch := make(chan *rpc.Response, 1)
	c.mu.Lock()
	if c.pending == nil {
		c.mu.Unlock()
		return nil, c.closedErr()
	}
	if _, dup := c.pending[id]; dup {
		c.mu.Unlock()
		return nil, fmt.Errorf("pisces rpc: id %q is already waiting for a response", id)
	}
	c.pending[id] = ch
	c.mu.Unlock()
	forget := func() {
		c.mu.Lock()
		if c.pending != nil {
			delete(c.pending, id)
		}
		c.mu.Unlock()
	}
	if err := c.write(line); err != nil {
		forget()
		return nil, err
	}
	select {
	case resp, ok := <-ch:
		if !ok {
			return nil, c.closedErr()
		}
		if !resp.Success {
			return resp, &CommandError{Command: resp.Command, Message: resp.Error, Code: resp.Code}
		}
		return resp, nil
	case <-ctx.Done():
		forget()
		return nil, fmt.Errorf("pisces rpc: %s: %w", typ, ctx.Err())
	}
}

func (c *Client) closedErr() error {
	if err := c.Err(); err != nil {
		return fmt.Errorf("%w: %v", ErrClosed, err)
	}
	return ErrClosed
}

func (c *Client) write(line []byte) error {
	c.wmu.Lock()
	defer c.wmu.Unlock()
	select {
	case <-c.closing:
		return ErrClosed
	default:
	}
	buf := make([]byte, 0, len(line)+1)
	buf = append(append(buf, line...), '\n')
	if _, err := c.w.Write(buf); err != nil {
		return fmt.Errorf("%w: %v", ErrClosed, err)
	}
	return nil
}

// Close ends the connection: it closes stdin, waits up to the grace period
// for the process to exit, then sends SIGTERM, waits again, then SIGKILL.
// It returns the process's exit error, if any (an *exec.ExitError with
// status 143 after SIGTERM). For a client made by NewClient it closes w and
// waits up to the grace period for the output to end (closing r if it is an
// io.Closer and the output does not end). Close is idempotent.
func (c *Client) Close() error {
	c.closeOnce.Do(func() {
		// Not under wmu: closing the pipe also ends a write that is blocked.
		close(c.closing)
		err := c.w.Close()
		if c.cmd == nil {
			select {
			case <-c.done:
			case <-time.After(c.opts.grace):
				if rc, ok := c.r.(io.Closer); ok {
					rc.Close()
				}
			}
			c.closeErr = err
			return
		}
		if !c.waitExit(c.opts.grace) {
			c.cmd.Process.Signal(syscall.SIGTERM)
			if !c.waitExit(c.opts.grace) {
				c.cmd.Process.Kill()
				<-c.exited
			}
		}
		c.finishOutput()
		c.closeErr = c.waitErr
	})
	return c.closeErr
}

// finishOutput lets the reader take what the exited process wrote, and
// closes the pipe if something else still holds its write end.
func (c *Client) finishOutput() {
	t := time.NewTimer(c.opts.grace)
	defer t.Stop()
	select {
	case <-c.done:
	case <-t.C:
		c.stdout.Close()
		<-c.done
		return
	}
	c.stdout.Close()
}

func (c *Client) waitExit(d time.Duration) bool {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-c.exited:
		return true
	case <-t.C:
		return false
	}
}

// kill stops a process that failed to start up.
func (c *Client) kill() {
	c.closeOnce.Do(func() {
		close(c.closing)
		c.w.Close()
		c.cmd.Process.Kill()
		<-c.exited
		c.stdout.Close()
		<-c.done
		c.closeErr = c.waitErr
	})
}

// Stderr returns the last few KiB the process wrote to stderr (Start only).
func (c *Client) Stderr() string {
	if c.stderr == nil {
		return ""
	}
	return c.stderr.String()
}

// PID returns the process id (0 for NewClient).
func (c *Client) PID() int {
	if c.cmd == nil || c.cmd.Process == nil {
		return 0
	}
	return c.cmd.Process.Pid
}

// tailBuffer keeps the last max bytes written to it.
type tailBuffer struct {
	mu  sync.Mutex
	max int
	buf []byte
}

func (t *tailBuffer) Write(p []byte) (int, error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.buf = append(t.buf, p...)
	if len(t.buf) > t.max {
		t.buf = append([]byte(nil), t.buf[len(t.buf)-t.max:]...)
	}
	return len(p), nil
}

func (t *tailBuffer) String() string {
	t.mu.Lock()
	defer t.mu.Unlock()
	return string(t.buf)
}
