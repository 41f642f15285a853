package extensions

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"github.com/pisces-agent/pisces/internal/procgroup"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/pisces-agent/pisces/internal/jsonx"
	"github.com/pisces-agent/pisces/internal/tools"
	"github.com/pisces-agent/pisces/rpc"
)

// Tunables (variables so that tests can shorten them).
var (
	stopGrace   = 2 * time.Second        // between closing stdin and killing
	exitGrace   = 500 * time.Millisecond // for the last output after an exit
	maxQueued   = 10000                  // unsent messages before an extension counts as hung
	maxQuoteLen = 120                    // of a garbage line in the error
)

// registration is what an extension declared in its handshake.
type registration struct {
	name     string
	tools    []toolSpec
	commands []commandSpec
	hooks    map[string]bool
	events   map[string]bool
}

// procExt is an extension running as a child process. It survives its
// processes: when one fails, the next is started (within the restart limit).
type procExt struct {
	h    *Host
	file string
	name string

	mu       sync.Mutex
	p        *proc         // the running process; nil while restarting or down
	ready    chan struct{} // non-nil while a restart is under way; closed when it ends
	reg      registration
	disabled bool
	closed   bool
	limit    limiter
	restarts int
}

func newProcExt(h *Host, file string) *procExt {
	return &procExt{h: h, file: file, name: filepath.Base(file)}
}

func (e *procExt) path() string { return e.file }

func (e *procExt) registration() registration {
	e.mu.Lock()
	defer e.mu.Unlock()
	return e.reg
}

func (e *procExt) hooks(hook string) bool {
	e.mu.Lock()
	defer e.mu.Unlock()
	return !e.disabled && e.reg.hooks[hook]
}

// startInitial starts the first process; a failure is returned, not
// reported, and there is no restart.
func (e *procExt) startInitial() error {
	p, reg, err := e.spawn(0)
	if err != nil {
		return err
	}
	e.mu.Lock()
	e.p, e.reg = p, reg
	e.mu.Unlock()
	return nil
}

// get returns the running process, waiting for a restart under way.
func (e *procExt) get(ctx context.Context) (*proc, error) {
	for {
		e.mu.Lock()
		switch {
		case e.closed:
			e.mu.Unlock()
			return nil, errClosed
		case e.disabled:
			e.mu.Unlock()
			return nil, errDisabled
		case e.p != nil:
			p := e.p
			e.mu.Unlock()
			return p, nil
		}
		ready := e.ready
		e.mu.Unlock()
		if ready == nil {
			return nil, errDisabled
		}
		select {
		case <-ready:
		case <-ctx.Done():
			return nil, ctx.Err()
		}
	}
}

// onFailure reports a failure of p (nil: a restart attempt that failed its
// handshake) and restarts the extension or, past the limit, disables it.
func (e *procExt) onFailure(p *proc, event string, err error) {
	e.h.reportError(e.file, event, err.Error())
	e.mu.Lock()
	if p != nil && e.p == p {
		e.p = nil
	}
	if e.closed || e.disabled {
		e.mu.Unlock()
		return
	}
	if e.limit.fail(time.Now()) {
		e.disabled = true
		ready := e.ready
		e.ready = nil
		e.mu.Unlock()
		if ready != nil {
			close(ready)
		}
		e.h.reportError(e.file, event, fmt.Sprintf("extension disabled: it failed again after %d restarts within %s", RestartLimit, RestartWindow))
		return
	}
	if e.ready == nil {
		e.ready = make(chan struct{})
	}
	e.restarts++
	n := e.restarts
	e.mu.Unlock()
	e.h.bg.Go(func() { e.restart(n) })
}

func (e *procExt) restart(n int) {
	p, reg, err := e.spawn(n)
	if err != nil {
		e.onFailure(nil, "init", fmt.Errorf("restart failed: %w", err))
		return
	}
	e.mu.Lock()
	if e.closed || e.disabled || p.hasFailed() {
		e.mu.Unlock()
		if e.closed || e.disabled {
			p.stop()
		}
		return
	}
	e.p, e.reg = p, reg
	ready := e.ready
	e.ready = nil
	e.mu.Unlock()
	if ready != nil {
		close(ready)
	}
}

func (e *procExt) close() {
	e.mu.Lock()
	e.closed = true
	p := e.p
	e.p = nil
	ready := e.ready
	e.ready = nil
	e.mu.Unlock()
	if ready != nil {
		close(ready)
	}
	if p != nil {
		p.stop()
	}
}

// call sends a request to the extension and waits for the reply. timed
// requests (hooks) fail, and the process is restarted, when no reply comes
// within the host timeout; an error reply to them is reported here.
func (e *procExt) call(ctx context.Context, method, event string, params any, timed bool, onUpdate func(json.RawMessage)) (json.RawMessage, error) {
	p, err := e.get(ctx)
	if err != nil {
		return nil, err
	}
	res, err := p.request(ctx, method, event, params, timed, onUpdate)
	var re *remoteError
	if errors.As(err, &re) && timed {
		// An error answer to a hook is the extension's problem; to a tool
		// or a command it is their outcome, returned to the caller.
		e.h.reportError(e.file, event, re.msg)
	}
	return res, err
}

// decode reads a reply into v, reporting a malformed one.
func (e *procExt) decode(event string, raw json.RawMessage, v any) bool {
	if isAbsent(raw) {
		return true
	}
	if err := json.Unmarshal(raw, v); err != nil {
		e.h.reportError(e.file, event, "invalid reply: "+err.Error())
		return false
	}
	return true
}

func (e *procExt) toolCall(ctx context.Context, id, name string, args json.RawMessage) (ToolCallDecision, bool) {
	raw, err := e.call(ctx, HookToolCall, HookToolCall, toolCallParams{id, name, normalizeArgs(args)}, true, nil)
	var r toolCallReply
	if err != nil || isAbsent(raw) || !e.decode(HookToolCall, raw, &r) {
		return ToolCallDecision{}, false
	}
	if r.Block {
		return ToolCallDecision{Block: true, Reason: r.Reason}, true
	}
	if isAbsent(r.Args) {
		return ToolCallDecision{}, true
	}
	if !isObject(r.Args) {
		e.h.reportError(e.file, HookToolCall, "invalid reply: args must be an object")
		return ToolCallDecision{}, false
	}
	return ToolCallDecision{Args: r.Args}, true
}

func (e *procExt) toolResult(ctx context.Context, id, name string, args json.RawMessage, res tools.Result) (tools.Result, bool) {
	raw, err := e.call(ctx, HookToolResult, HookToolResult, toolResultParams{id, name, normalizeArgs(args), toWire(res)}, true, nil)
	var r resultReply
	if err != nil || isAbsent(raw) || !e.decode(HookToolResult, raw, &r) || r.empty() {
		return res, false
	}
	out, err := r.apply(res)
	if err != nil {
		e.h.reportError(e.file, HookToolResult, "invalid reply: "+err.Error())
		return res, false
	}
	return out, true
}

func (e *procExt) input(ctx context.Context, text, source string) (InputResult, bool) {
	raw, err := e.call(ctx, HookInput, HookInput, inputParams{text, source}, true, nil)
	var r inputReply
	if err != nil || isAbsent(raw) || !e.decode(HookInput, raw, &r) {
		return InputResult{}, false
	}
	switch r.Action {
	case "handled":
		return InputResult{Handled: true}, true
	case "", "continue", "transform":
		if r.Text == nil {
			return InputResult{}, false
		}
		return InputResult{Text: *r.Text}, true
	}
	e.h.reportError(e.file, HookInput, fmt.Sprintf("invalid reply: unknown action %q", r.Action))
	return InputResult{}, false
}

func (e *procExt) beforeAgentStart(ctx context.Context, systemPrompt string) (string, bool) {
	raw, err := e.call(ctx, HookBeforeAgentStart, HookBeforeAgentStart, beforeAgentStartParams{systemPrompt}, true, nil)
	var r beforeAgentStartReply
	if err != nil || isAbsent(raw) || !e.decode(HookBeforeAgentStart, raw, &r) {
		return "", false
	}
	return r.AppendSystemPrompt, r.AppendSystemPrompt != ""
}

func (e *procExt) sessionBefore(ctx context.Context, hook string, payload any) bool {
	params := payload
	if params == nil {
		params = struct{}{}
	}
	if _, err := json.Marshal(params); err != nil {
		params = struct{}{}
	}
	raw, err := e.call(ctx, hook, hook, params, true, nil)
	var r cancelReply
	if err != nil || isAbsent(raw) || !e.decode(hook, raw, &r) {
		return false
	}
	return r.Cancel
}

func (e *procExt) event(name string, ev rpc.Event) {
	e.mu.Lock()
	p := e.p
	sub := !e.disabled && (e.reg.events[name] || e.reg.events[eventNameAllSubscriptions])
	e.mu.Unlock()
	if p == nil || !sub {
		return
	}
	p.send(eventMsg{Type: msgEvent, Name: name, Event: ev})
}

func (e *procExt) commands() []Command {
	e.mu.Lock()
	defer e.mu.Unlock()
	if e.disabled {
		return nil
	}
	var out []Command
	for _, c := range e.reg.commands {
		out = append(out, Command{Name: c.Name, Description: c.Description, ExtensionPath: e.file})
	}
	return out
}

func (e *procExt) runCommand(ctx context.Context, name, args string) error {
	event := "command:" + name
	_, err := e.call(ctx, methodRunCommand, event, runCommandParams{name, args}, false, nil)
	switch {
	case err == nil:
		return nil
	case errors.Is(err, errFailed), errors.Is(err, errDisabled), errors.Is(err, errClosed):
		return fmt.Errorf("extension %s: command /%s failed: %w", e.name, name, err)
	}
	return err
}

func (e *procExt) tools() []tools.Tool {
	e.mu.Lock()
	defer e.mu.Unlock()
	if e.disabled {
		return nil
	}
	var out []tools.Tool
	for _, t := range e.reg.tools {
		out = append(out, &procTool{e: e, spec: t})
	}
	return out
}

// procTool is a tool that runs in an extension process.
type procTool struct {
	e    *procExt
	spec toolSpec
}

func (t *procTool) Name() string        { return t.spec.Name }
func (t *procTool) Description() string { return t.spec.Description }
func (t *procTool) Parameters() json.RawMessage {
	if isAbsent(t.spec.Parameters) {
		return json.RawMessage(`{"type":"object","properties":{}}`)
	}
	return t.spec.Parameters
}

// Execute runs the tool in the extension. Partial results the extension
// sends arrive at call.OnUpdate. Failures of the extension become error
// results, so the agent carries on.
func (t *procTool) Execute(ctx context.Context, call tools.Call) (tools.Result, error) {
	event := "tool:" + t.spec.Name
	var onUpdate func(json.RawMessage)
	if call.OnUpdate != nil {
		onUpdate = func(raw json.RawMessage) {
			var r resultReply
			if json.Unmarshal(raw, &r) != nil {
				return
			}
			if partial, err := r.apply(tools.Result{}); err == nil {
				call.OnUpdate(partial)
			}
		}
	}
	raw, err := t.e.call(ctx, methodExecuteTool, event, toolCallParams{call.ID, t.spec.Name, normalizeArgs(call.Args)}, false, onUpdate)
	if err != nil {
		var re *remoteError
		switch {
		case ctx.Err() != nil:
			return tools.ErrorResult("Tool aborted"), nil
		case errors.As(err, &re):
			return tools.ErrorResult(re.msg), nil
		}
		return tools.ErrorResult(fmt.Sprintf("Extension %s failed while running %s: %v", t.e.name, t.spec.Name, err)), nil
	}
	var r resultReply
	if !t.e.decode(event, raw, &r) {
		return tools.ErrorResult("Extension " + t.e.name + " returned an invalid result"), nil
	}
	res, err := r.apply(tools.Result{Content: nil})
	if err != nil {
		t.e.h.reportError(t.e.file, event, "invalid reply: "+err.Error())
		return tools.ErrorResult("Extension " + t.e.name + " returned an invalid result"), nil
	}
	return res, nil
}

// ---- one process ----

// watchdog tells whether a timed request is overdue. While the extension
// waits for Pisces (a dialog is open), the clock stops; it restarts from
// the moment Pisces answered.
type watchdog struct {
	busy atomic.Int32
	last atomic.Int64 // UnixNano of the last answer to the extension
}

func (w *watchdog) enter() { w.busy.Add(1) }
func (w *watchdog) leave() {
	w.last.Store(time.Now().UnixNano())
	w.busy.Add(-1)
}

// remaining is how long a request sent at start may still wait.
func (w *watchdog) remaining(start time.Time, d time.Duration) time.Duration {
	if w.busy.Load() > 0 {
		return d
	}
	ref := start
	if last := time.Unix(0, w.last.Load()); last.After(ref) {
		ref = last
	}
	return d - time.Since(ref)
}

// waitWatched waits for done, ctx or the watchdog's timeout. It returns
// ctx.Err(), errTimeout or nil.
func waitWatched(ctx context.Context, done <-chan struct{}, dead <-chan struct{}, w *watchdog, d time.Duration) error {
	start := time.Now()
	timer := time.NewTimer(d)
	defer timer.Stop()
	for {
		select {
		case <-done:
			return nil
		case <-dead:
			return errFailed
		case <-ctx.Done():
			return ctx.Err()
		case <-timer.C:
			if rem := w.remaining(start, d); rem > 0 {
				timer.Reset(rem)
				continue
			}
			return errTimeout
		}
	}
}

var errTimeout = errors.New("timed out")

type pending struct {
	// toolCall is the tool call a tool_call hook is asked about (its
	// dialogs are tied to it); nil for other requests.
	toolCall *ToolCallRef
	method   string
	event    string
	reply    chan reply // buffered
	done     chan struct{}
	onUpdate func(json.RawMessage)
}

type reply struct {
	result json.RawMessage
	err    error
}

type proc struct {
	e      *procExt
	cmd    *exec.Cmd
	out    *outQueue
	wd     watchdog
	ctx    context.Context // lives as long as the process
	cancel context.CancelFunc

	stdout *os.File
	stderr *os.File

	mu       sync.Mutex
	calls    map[string]*pending
	seq      int64
	ready    bool // handshake done
	failed   bool
	stopping bool

	regCh      chan *wireIn
	serial     chan wireIn
	dead       chan struct{}
	deadErr    error
	exited     chan struct{}
	readerDone chan struct{}
	stderrDone chan struct{}
	failOnce   sync.Once
}

// spawn starts a process and performs the handshake.
func (e *procExt) spawn(restarts int) (*proc, registration, error) {
	h := e.h
	cmd := exec.Command(e.file)
	cmd.Dir = h.cwd
	cmd.Env = append(os.Environ(), "PISCES_EXTENSION_PROTOCOL="+strconv.Itoa(ProtocolVersion))
	procgroup.Set(cmd)
	stdin, err := cmd.StdinPipe()
	if err != nil {
		return nil, registration{}, err
	}
	outR, outW, err := os.Pipe()
	if err != nil {
		return nil, registration{}, err
	}
	errR, errW, err := os.Pipe()
	if err != nil {
		outR.Close()
		outW.Close()
		return nil, registration{}, err
	}
	cmd.Stdout, cmd.Stderr = outW, errW
	if err := cmd.Start(); err != nil {
		stdin.Close()
		outR.Close()
		outW.Close()
		errR.Close()
		errW.Close()
		return nil, registration{}, err
	}
	outW.Close()
	errW.Close()

	ctx, cancel := context.WithCancel(context.Background())
	p := &proc{
		e: e, cmd: cmd, out: newOutQueue(), ctx: ctx, cancel: cancel, stdout: outR, stderr: errR,
		calls: map[string]*pending{}, regCh: make(chan *wireIn, 1), serial: make(chan wireIn, 1024),
		dead: make(chan struct{}), exited: make(chan struct{}), readerDone: make(chan struct{}),
		stderrDone: make(chan struct{}),
	}
	bg := &h.bg
	bg.Go(p.copyStderr)
	bg.Go(func() { p.readLoop(outR) })
	bg.Go(p.waitLoop)
	bg.Go(func() { p.writeLoop(stdin) })
	bg.Go(p.serialLoop)

	ui := h.getUI()
	p.send(initMsg{
		Type: msgInit, ProtocolVersion: ProtocolVersion, ExtensionPath: e.file,
		Cwd: h.cwd, AgentDir: h.agentDir, HasUI: ui != nil && ui.Available(), Restarts: restarts,
	})
	timer := time.NewTimer(h.handshake)
	defer timer.Stop()
	var msg *wireIn
	select {
	case msg = <-p.regCh:
	case <-p.dead:
		return nil, registration{}, p.deadErr
	case <-timer.C:
		err := fmt.Errorf("no register message within %s", h.handshake)
		p.fail("init", err)
		return nil, registration{}, err
	}
	reg, err := buildRegistration(msg)
	if err != nil {
		p.fail("init", err)
		return nil, registration{}, err
	}
	for _, w := range reg.warnings {
		h.logf("pisces: extension %s: %s\n", e.file, w)
	}
	p.mu.Lock()
	if p.failed {
		p.mu.Unlock()
		<-p.dead
		return nil, registration{}, p.deadErr
	}
	p.ready = true
	p.mu.Unlock()
	return p, reg.registration, nil
}

type checkedRegistration struct {
	registration
	warnings []string
}

func buildRegistration(m *wireIn) (checkedRegistration, error) {
	var r checkedRegistration
	if m.ProtocolVersion != 0 && m.ProtocolVersion != ProtocolVersion {
		return r, fmt.Errorf("unsupported protocol version %d (Pisces speaks %d)", m.ProtocolVersion, ProtocolVersion)
	}
	r.name = m.Name
	r.hooks = map[string]bool{}
	r.events = map[string]bool{}
	for _, hk := range m.Hooks {
		if isKnownHook(hk) {
			r.hooks[hk] = true
		} else {
			r.warnings = append(r.warnings, fmt.Sprintf("unknown hook %q ignored", hk))
		}
	}
	for _, ev := range m.Events {
		r.events[ev] = true
	}
	seen := map[string]bool{}
	for _, t := range m.Tools {
		if t.Name == "" || seen[t.Name] {
			return r, fmt.Errorf("invalid registration: tool name %q empty or repeated", t.Name)
		}
		if !isAbsent(t.Parameters) && !isObject(t.Parameters) {
			return r, fmt.Errorf("invalid registration: parameters of tool %q must be a JSON Schema object", t.Name)
		}
		seen[t.Name] = true
		r.tools = append(r.tools, t)
	}
	seen = map[string]bool{}
	for _, c := range m.Commands {
		c.Name = trimSlash(c.Name)
		if c.Name == "" || seen[c.Name] {
			return r, fmt.Errorf("invalid registration: command name %q empty or repeated", c.Name)
		}
		seen[c.Name] = true
		r.commands = append(r.commands, c)
	}
	return r, nil
}

func trimSlash(s string) string {
	if len(s) > 0 && s[0] == '/' {
		return s[1:]
	}
	return s
}

func (p *proc) hasFailed() bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.failed
}

// send queues a message; an extension that stops reading is failed.
func (p *proc) send(v any) {
	b, err := jsonx.Marshal(v)
	if err != nil {
		p.e.h.logf("pisces: extension %s: cannot encode message: %v\n", p.e.file, err)
		return
	}
	if !p.out.push(append(b, '\n')) {
		p.fail(p.currentEvent("input"), fmt.Errorf("not reading its input (%d messages queued)", maxQueued))
	}
}

// request sends a request and waits for its reply.
func (p *proc) request(ctx context.Context, method, event string, params any, timed bool, onUpdate func(json.RawMessage)) (json.RawMessage, error) {
	c := &pending{method: method, event: event, reply: make(chan reply, 1), done: make(chan struct{}), onUpdate: onUpdate}
	if method == HookToolCall {
		if ref, ok := ToolCallOf(ctx); ok {
			c.toolCall = &ref
		}
	}
	p.mu.Lock()
	if p.failed {
		p.mu.Unlock()
		return nil, errFailed
	}
	p.seq++
	id := strconv.FormatInt(p.seq, 10)
	p.calls[id] = c
	p.mu.Unlock()
	defer p.finish(id)

	p.send(requestMsg{Type: msgRequest, ID: id, Method: method, Params: params})

	d := p.e.h.timeout
	if !timed {
		d = 1<<63 - 1
	}
	replied := make(chan struct{})
	var r reply
	go func() {
		select {
		case r = <-c.reply:
			close(replied)
		case <-c.done:
		}
	}()
	switch err := waitWatched(ctx, replied, p.dead, &p.wd, d); {
	case err == nil:
		if r.err != nil {
			return nil, r.err
		}
		return r.result, nil
	case errors.Is(err, errTimeout):
		p.fail(event, fmt.Errorf("no reply to %s within %s", method, d))
		return nil, errFailed
	case errors.Is(err, errFailed):
		return nil, errFailed
	default:
		p.send(cancelMsg{Type: msgCancel, ID: id})
		return nil, err
	}
}

// finish forgets a request.
func (p *proc) finish(id string) {
	p.mu.Lock()
	c := p.calls[id]
	delete(p.calls, id)
	p.mu.Unlock()
	if c != nil {
		close(c.done)
	}
}

// currentEvent names the hook being waited for, for error reports.
func (p *proc) currentEvent(def string) string {
	p.mu.Lock()
	defer p.mu.Unlock()
	best := int64(-1)
	ev := def
	for id, c := range p.calls {
		n, _ := strconv.ParseInt(id, 10, 64)
		if best < 0 || n < best {
			best, ev = n, c.event
		}
	}
	if !p.ready {
		return "init"
	}
	return ev
}

// fail ends the process after a failure; once ready, the failure is
// reported and the extension restarted.
func (p *proc) fail(event string, err error) {
	p.failOnce.Do(func() {
		p.mu.Lock()
		p.failed = true
		report := p.ready && !p.stopping
		p.deadErr = err
		p.mu.Unlock()
		procgroup.Kill(p.cmd)
		p.cancel()
		p.out.close()
		p.stdout.Close()
		if report {
			p.e.onFailure(p, event, err)
		}
		close(p.dead)
	})
}

// stop ends the process on purpose: stdin is closed, and the process is
// killed if it has not exited after a grace period.
func (p *proc) stop() {
	p.mu.Lock()
	p.stopping = true
	p.mu.Unlock()
	p.out.close()
	select {
	case <-p.exited:
	case <-time.After(stopGrace):
	}
	p.fail("shutdown", errors.New("stopped"))
}

func (p *proc) waitLoop() {
	err := p.cmd.Wait()
	close(p.exited)
	grace := time.NewTimer(exitGrace)
	defer grace.Stop()
	select {
	case <-p.readerDone:
	case <-grace.C:
	}
	// A child the extension left behind may hold its stderr open: what it
	// wrote by now is copied, then the pipe is closed so that the copy ends.
	late := time.NewTimer(exitGrace)
	defer late.Stop()
	select {
	case <-p.stderrDone:
	case <-late.C:
		p.stderr.Close()
	}
	msg := "exited"
	var ee *exec.ExitError
	switch {
	case errors.As(err, &ee):
		msg = "exited: " + ee.Error()
	case err != nil:
		msg = "exited: " + err.Error()
	default:
		msg = "exited with status 0"
	}
	p.fail(p.currentEvent("exit"), errors.New(msg))
}

func (p *proc) readLoop(r io.Reader) {
	defer close(p.readerDone)
	br := bufio.NewReaderSize(r, 64*1024)
	for {
		line, err := br.ReadBytes('\n')
		if len(line) > 0 {
			line = bytes.TrimRight(line, "\r\n")
			if len(bytes.TrimSpace(line)) > 0 && !p.handleLine(line) {
				return
			}
		}
		if err != nil {
			if p.hasFailed() {
				return
			}
			select {
			case <-p.exited: // waitLoop reports the exit
			case <-time.After(exitGrace):
				p.fail(p.currentEvent("output"), errors.New("closed its standard output"))
			}
			return
		}
	}
}

// handleLine processes one line of the extension's stdout; false stops
// reading.
func (p *proc) handleLine(line []byte) bool {
	var m wireIn
	if err := json.Unmarshal(line, &m); err != nil || m.Type == "" {
		q := string(line)
		if len(q) > maxQuoteLen {
			q = q[:maxQuoteLen] + "…"
		}
		p.fail(p.currentEvent("output"), fmt.Errorf("invalid output (not a JSON message): %q", q))
		return false
	}
	p.mu.Lock()
	ready := p.ready
	p.mu.Unlock()
	if !ready {
		if m.Type != msgRegister {
			p.fail("init", fmt.Errorf("expected a register message, got %q", m.Type))
			return false
		}
		select {
		case p.regCh <- &m:
		default:
		}
		return true
	}
	switch m.Type {
	case msgResponse:
		id := decodeID(m.ID)
		p.mu.Lock()
		c := p.calls[id]
		p.mu.Unlock()
		if c == nil {
			return true // late or unknown: ignored
		}
		r := reply{result: m.Result}
		if !isAbsent(m.Error) {
			r.err = &remoteError{decodeError(m.Error)}
		}
		select {
		case c.reply <- r:
		default:
		}
	case msgToolUpdate:
		id := decodeID(m.ID)
		p.mu.Lock()
		c := p.calls[id]
		p.mu.Unlock()
		if c != nil && c.onUpdate != nil && !isAbsent(m.PartialResult) {
			c.onUpdate(m.PartialResult)
		}
	case msgRequest:
		if ui, ok := strings.CutPrefix(m.Method, "ui."); ok && isDialogMethod(ui) {
			// Dialogs wait for the user: each on its own goroutine, with the
			// hook clock stopped (from now, before the next line is read).
			p.wd.enter()
			p.e.h.bg.Go(func() {
				defer p.wd.leave()
				p.serve(m)
			})
			return true
		}
		// The rest (notifications, actions) is served in order.
		select {
		case p.serial <- m:
		case <-p.ctx.Done():
		}
	case msgRegister:
		p.e.h.logf("pisces: extension %s: register after the handshake ignored\n", p.e.file)
	default:
		p.e.h.logf("pisces: extension %s: unknown message type %q ignored\n", p.e.file, m.Type)
	}
	return true
}

// serialLoop serves the extension's non-dialog requests in order.
func (p *proc) serialLoop() {
	for {
		select {
		case m := <-p.serial:
			p.serve(m)
		case <-p.ctx.Done():
			return
		}
	}
}

// serve answers a request of the extension.
func (p *proc) serve(m wireIn) {
	ctx := p.ctx
	if m.ParentID != "" {
		p.mu.Lock()
		parent := p.calls[m.ParentID]
		p.mu.Unlock()
		var cancel context.CancelFunc
		ctx, cancel = context.WithCancel(ctx)
		defer cancel()
		if parent == nil {
			cancel()
		} else {
			if parent.toolCall != nil {
				// A dialog of a tool_call hook is about that call.
				ctx = withToolCall(ctx, *parent.toolCall)
			}
			go func() {
				select {
				case <-parent.done:
					cancel()
				case <-ctx.Done():
				}
			}()
		}
	}
	res, err := p.e.h.serve(ctx, m.Method, m.Params)
	if isAbsent(m.ID) {
		if err != nil {
			p.e.h.logf("pisces: extension %s: %s: %v\n", p.e.file, m.Method, err)
		}
		return
	}
	resp := responseMsg{Type: msgResponse, ID: m.ID, Result: res}
	if err != nil {
		resp.Result, resp.Error = nil, err.Error()
	}
	p.send(resp)
}

func (p *proc) copyStderr() {
	r := p.stderr
	defer close(p.stderrDone)
	defer r.Close()
	prefix := "[" + p.e.name + "] "
	br := bufio.NewReader(r)
	for {
		line, err := br.ReadBytes('\n')
		if len(line) > 0 {
			p.e.h.logLine(prefix, bytes.TrimRight(line, "\r\n"))
		}
		if err != nil {
			return
		}
	}
}

func (p *proc) writeLoop(w io.WriteCloser) {
	defer w.Close()
	for {
		msgs, closed := p.out.take()
		for _, b := range msgs {
			if _, err := w.Write(b); err != nil {
				// The process is gone or closed its stdin; waitLoop or a
				// timeout reports it.
				p.out.discard()
				return
			}
		}
		if closed {
			return
		}
	}
}

// outQueue is the unbounded (up to maxQueued) queue of messages to write.
type outQueue struct {
	mu     sync.Mutex
	buf    [][]byte
	wake   chan struct{}
	closed bool
	dead   bool
}

func newOutQueue() *outQueue { return &outQueue{wake: make(chan struct{}, 1)} }

func (q *outQueue) push(b []byte) bool {
	q.mu.Lock()
	defer q.mu.Unlock()
	if q.closed || q.dead {
		return true
	}
	if len(q.buf) >= maxQueued {
		return false
	}
	q.buf = append(q.buf, b)
	select {
	case q.wake <- struct{}{}:
	default:
	}
	return true
}

// take waits for messages; closed is true once the queue is closed and
// drained.
func (q *outQueue) take() ([][]byte, bool) {
	for {
		q.mu.Lock()
		if len(q.buf) > 0 || q.closed {
			msgs := q.buf
			q.buf = nil
			closed := q.closed && len(msgs) == 0
			q.mu.Unlock()
			if len(msgs) > 0 || closed {
				return msgs, closed
			}
			continue
		}
		q.mu.Unlock()
		<-q.wake
	}
}

func (q *outQueue) close() {
	q.mu.Lock()
	q.closed = true
	q.mu.Unlock()
	select {
	case q.wake <- struct{}{}:
	default:
	}
}

func (q *outQueue) discard() {
	q.mu.Lock()
	q.dead = true
	q.buf = nil
	q.mu.Unlock()
}
