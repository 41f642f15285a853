package extensions

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"time"

	"github.com/pisces-agent/pisces/internal/fsx"
	"github.com/pisces-agent/pisces/internal/tools"
	"github.com/pisces-agent/pisces/rpc"
)

// DefaultTimeout bounds each hook call (and the handshake) when
// Options.Timeout (Options.HandshakeTimeout) is zero.
const DefaultTimeout = 10 * time.Second

// Restart policy: an extension that fails is restarted at most RestartLimit
// times within RestartWindow; the next failure disables it.
const (
	RestartLimit  = 3
	RestartWindow = time.Minute
)

// Options configure Load.
type Options struct {
	AgentDir string // <AgentDir>/extensions/ is always searched
	Cwd      string // working directory of the extensions; <Cwd>/.pisces/extensions/ when trusted
	// Paths are extra extensions: settings `extensions` and -e flags. A
	// path is an executable, or a directory (see docs/extensions.md).
	// Relative paths resolve against Cwd; a leading ~/ is the home dir.
	Paths          []string
	ProjectTrusted bool // load <Cwd>/.pisces/extensions/ only when true
	Actions        Actions
	UI             UI
	// Emit receives extension_error events. It may be called from any
	// goroutine. When nil, errors are written to Log.
	Emit    func(rpc.Event)
	Timeout time.Duration // per hook call; 0 means DefaultTimeout
	// HandshakeTimeout bounds the wait for an extension's register message,
	// at start and after each restart; 0 means Timeout. A short hook
	// timeout need not hold for starting a process.
	HandshakeTimeout time.Duration
	Log              io.Writer // extensions' stderr, prefixed; nil means os.Stderr

	// NoDiscovery (--no-extensions) skips <AgentDir>/extensions/ and
	// <Cwd>/.pisces/extensions/; Paths still load.
	NoDiscovery bool
}

// Host runs extensions and implements Hooks. A nil *Host is a valid Hooks
// with no extensions.
type Host struct {
	cwd, agentDir string
	timeout       time.Duration // per hook call
	handshake     time.Duration // for the register message
	log           io.Writer
	logMu         sync.Mutex

	mu      sync.RWMutex
	ui      UI
	actions Actions
	emit    func(rpc.Event)
	members []member
	closed  bool

	bg background // the goroutines serving extension processes
}

var _ Hooks = (*Host)(nil)

// member is one loaded extension, process or built-in.
type member interface {
	path() string
	hooks(hook string) bool
	// The hook methods return the extension's answer and whether it gave
	// one; failures have been reported and count as no answer.
	toolCall(ctx context.Context, id, name string, args json.RawMessage) (ToolCallDecision, bool)
	toolResult(ctx context.Context, id, name string, args json.RawMessage, res tools.Result) (tools.Result, bool)
	input(ctx context.Context, text, source string) (InputResult, bool)
	beforeAgentStart(ctx context.Context, systemPrompt string) (string, bool)
	sessionBefore(ctx context.Context, hook string, payload any) bool
	event(name string, ev rpc.Event)
	commands() []Command
	runCommand(ctx context.Context, name, args string) error
	tools() []tools.Tool
	close()
}

// Load discovers and starts the extensions: executables in
// <AgentDir>/extensions/, then <Cwd>/.pisces/extensions/ (trusted projects
// only), then Paths, in that order (which is also the order their hooks
// run in). Extensions that cannot be found or fail their handshake are
// reported in the returned errors and left out; the Host is never nil.
func Load(opts Options) (*Host, []error) {
	h := newHost(opts)
	found, errs := Discover(opts)
	paths := make([]string, len(found))
	for i, f := range found {
		paths[i] = f.Path
	}
	exts := make([]*procExt, len(paths))
	startErrs := make([]error, len(paths))
	var wg sync.WaitGroup
	for i, p := range paths {
		wg.Add(1)
		go func() {
			defer wg.Done()
			e := newProcExt(h, p)
			if err := e.startInitial(); err != nil {
				startErrs[i] = fmt.Errorf("extension %s: %w", p, err)
				return
			}
			exts[i] = e
		}()
	}
	wg.Wait()
	h.mu.Lock()
	for i, e := range exts {
		if e != nil {
			h.members = append(h.members, e)
		} else {
			errs = append(errs, startErrs[i])
		}
	}
	h.mu.Unlock()
	return h, errs
}

func newHost(opts Options) *Host {
	h := &Host{
		cwd: opts.Cwd, agentDir: opts.AgentDir, timeout: opts.Timeout, handshake: opts.HandshakeTimeout, log: opts.Log,
		ui: opts.UI, actions: opts.Actions, emit: opts.Emit,
	}
	if h.timeout <= 0 {
		h.timeout = DefaultTimeout
	}
	if h.handshake <= 0 {
		h.handshake = h.timeout
	}
	if h.log == nil {
		h.log = os.Stderr
	}
	if h.cwd == "" {
		h.cwd, _ = os.Getwd()
	}
	return h
}

// Where an extension was found (Found.Scope).
const (
	ScopeUser    = "user"    // <AgentDir>/extensions/
	ScopeProject = "project" // <Cwd>/.pisces/extensions/
	ScopePath    = "path"    // one of Options.Paths
)

// Found is an extension executable Discover found.
type Found struct {
	Path  string // the executable
	Scope string // ScopeUser, ScopeProject or ScopePath
	Given string // for ScopePath: the Options.Paths entry it came from
}

// Discover lists the extension executables Load would start, in load
// order, without duplicates and without starting them; errors name the
// paths that could not be used.
func Discover(opts Options) ([]Found, []error) {
	var found, errs = []Found{}, []error{}
	seen := map[string]bool{}
	scope, given := "", ""
	add := func(p string) {
		key := p
		if r, err := filepath.EvalSymlinks(p); err == nil {
			key = r
		}
		if !seen[key] {
			seen[key] = true
			found = append(found, Found{Path: p, Scope: scope, Given: given})
		}
	}
	scan := func(dir string, mustExist bool) {
		entries, err := os.ReadDir(dir)
		if err != nil {
			if mustExist || !os.IsNotExist(err) {
				errs = append(errs, fmt.Errorf("extensions: %w", err))
			}
			return
		}
		for _, ent := range entries {
			if strings.HasPrefix(ent.Name(), ".") {
				continue
			}
			p := filepath.Join(dir, ent.Name())
			if ep, ok := entryPoint(p); ok {
				add(ep)
			}
		}
	}
	if opts.AgentDir != "" && !opts.NoDiscovery {
		scope = ScopeUser
		scan(filepath.Join(opts.AgentDir, "extensions"), false)
	}
	if opts.ProjectTrusted && opts.Cwd != "" && !opts.NoDiscovery {
		scope = ScopeProject
		scan(filepath.Join(opts.Cwd, ".pisces", "extensions"), false)
	}
	scope = ScopePath
	for _, p := range opts.Paths {
		given = p
		p, err := expandPath(p, opts.Cwd)
		if err != nil {
			errs = append(errs, fmt.Errorf("extension %w", err))
			continue
		}
		fi, err := os.Stat(p)
		if err != nil {
			errs = append(errs, fmt.Errorf("extension %s: %w", p, err))
			continue
		}
		if fi.IsDir() {
			if ep, ok := entryPoint(p); ok {
				add(ep)
			} else {
				scan(p, true)
			}
			continue
		}
		if !isExecutable(fi) {
			errs = append(errs, fmt.Errorf("extension %s: not executable", p))
			continue
		}
		add(p)
	}
	return found, errs
}

// entryPoint returns the executable a directory entry stands for: the file
// itself, or for a directory an executable named like the directory or
// "main" inside it.
func entryPoint(p string) (string, bool) {
	fi, err := os.Stat(p)
	if err != nil {
		return "", false
	}
	if !fi.IsDir() {
		return p, isExecutable(fi)
	}
	for _, name := range []string{filepath.Base(p), "main"} {
		c := filepath.Join(p, name)
		if fi, err := os.Stat(c); err == nil && !fi.IsDir() && isExecutable(fi) {
			return c, true
		}
	}
	return "", false
}

func isExecutable(fi os.FileInfo) bool { return fi.Mode().IsRegular() && fi.Mode().Perm()&0o111 != 0 }

// expandPath resolves an explicit extension path: a leading ~/ is the home
// directory (an error without one: the path is not tried relative to cwd),
// other relative paths resolve against cwd.
func expandPath(p, cwd string) (string, error) {
	p, err := fsx.ExpandHome(p)
	if err != nil {
		return "", err
	}
	if !filepath.IsAbs(p) && cwd != "" {
		p = filepath.Join(cwd, p)
	}
	return filepath.Clean(p), nil
}

// SetUI sets the client side of the extension UI (for a transport created
// after Load).
func (h *Host) SetUI(ui UI) {
	if h == nil {
		return
	}
	h.mu.Lock()
	h.ui = ui
	h.mu.Unlock()
}

// SetActions sets the session actions (for a core created after Load).
func (h *Host) SetActions(a Actions) {
	if h == nil {
		return
	}
	h.mu.Lock()
	h.actions = a
	h.mu.Unlock()
}

// SetEmit sets the receiver of extension_error events.
func (h *Host) SetEmit(emit func(rpc.Event)) {
	if h == nil {
		return
	}
	h.mu.Lock()
	h.emit = emit
	h.mu.Unlock()
}

// Paths lists the loaded extensions in load order (built-ins as
// "builtin:<name>").
func (h *Host) Paths() []string {
	var out []string
	for _, m := range h.snapshot() {
		out = append(out, m.path())
	}
	return out
}

// Close stops every extension process (closing its stdin, then killing it
// after a grace period). Hooks on a closed Host do nothing.
func (h *Host) Close() error {
	if h == nil {
		return nil
	}
	h.mu.Lock()
	if h.closed {
		h.mu.Unlock()
		return nil
	}
	h.closed = true
	ms := h.members
	h.mu.Unlock()
	var wg sync.WaitGroup
	for _, m := range ms {
		wg.Add(1)
		go func() { defer wg.Done(); m.close() }()
	}
	wg.Wait()
	if !h.bg.Wait(closeWait) {
		h.logf("pisces: extensions: some extension process did not end within %s of being stopped\n", closeWait)
	}
	return nil
}

func (h *Host) snapshot() []member {
	if h == nil {
		return nil
	}
	h.mu.RLock()
	defer h.mu.RUnlock()
	if h.closed {
		return nil
	}
	return h.members
}

func (h *Host) getUI() UI {
	h.mu.RLock()
	defer h.mu.RUnlock()
	return h.ui
}

func (h *Host) getActions() Actions {
	h.mu.RLock()
	defer h.mu.RUnlock()
	return h.actions
}

// reportError emits extension_error (or logs it without an Emit).
func (h *Host) reportError(path, event, msg string) {
	h.mu.RLock()
	emit := h.emit
	h.mu.RUnlock()
	if emit != nil {
		emit(&rpc.ExtensionErrorEvent{Type: rpc.EventExtensionError, ExtensionPath: path, Event: event, Error: msg})
		return
	}
	h.logf("pisces: extension %s: %s: %s\n", path, event, msg)
}

func (h *Host) logf(format string, args ...any) {
	h.logMu.Lock()
	defer h.logMu.Unlock()
	fmt.Fprintf(h.log, format, args...)
}

func (h *Host) logLine(prefix string, line []byte) {
	h.logMu.Lock()
	defer h.logMu.Unlock()
	buf := make([]byte, 0, len(prefix)+len(line)+1)
	buf = append(buf, prefix...)
	buf = append(buf, line...)
	buf = append(buf, '\n')
	_, _ = h.log.Write(buf)
}

// ---- Hooks ----

// OnToolCall asks the tool_call hooks in load order. A block stops the
// chain; changed arguments are passed to the next extension.
func (h *Host) OnToolCall(ctx context.Context, toolCallID, toolName string, args json.RawMessage) ToolCallDecision {
	var changed json.RawMessage
	ctx = withToolCall(ctx, ToolCallRef{ID: toolCallID, Name: toolName, Args: args})
	for _, m := range h.snapshot() {
		if !m.hooks(HookToolCall) {
			continue
		}
		d, ok := m.toolCall(ctx, toolCallID, toolName, args)
		if !ok {
			continue
		}
		if d.Block {
			return ToolCallDecision{Block: true, Reason: d.Reason}
		}
		if d.Args != nil {
			args, changed = d.Args, d.Args
		}
	}
	return ToolCallDecision{Args: changed}
}

// ToolCallRef names the tool call a tool_call hook is asked about.
type ToolCallRef struct {
	ID   string
	Name string
	Args json.RawMessage
}

type toolCallKey struct{}

func withToolCall(ctx context.Context, ref ToolCallRef) context.Context {
	return context.WithValue(ctx, toolCallKey{}, ref)
}

// ToolCallOf returns the tool call a dialog is about: a UI's Dialog gets
// it in its context when a tool_call hook asks (a Go extension's hook
// through the context it was given, a process extension's through the
// request's parentId naming the hook call).
func ToolCallOf(ctx context.Context) (ToolCallRef, bool) {
	ref, ok := ctx.Value(toolCallKey{}).(ToolCallRef)
	return ref, ok
}

// OnToolResult passes the result through the tool_result hooks in load
// order, each seeing the previous one's result.
func (h *Host) OnToolResult(ctx context.Context, toolCallID, toolName string, args json.RawMessage, result tools.Result) (tools.Result, bool) {
	changed := false
	for _, m := range h.snapshot() {
		if !m.hooks(HookToolResult) {
			continue
		}
		if r, ok := m.toolResult(ctx, toolCallID, toolName, args, result); ok {
			result, changed = r, true
		}
	}
	return result, changed
}

// OnInput passes the prompt through the input hooks in load order; a
// transformation goes to the next extension, handling stops the chain.
func (h *Host) OnInput(ctx context.Context, text, source string) InputResult {
	for _, m := range h.snapshot() {
		if !m.hooks(HookInput) {
			continue
		}
		r, ok := m.input(ctx, text, source)
		if !ok {
			continue
		}
		if r.Handled {
			return InputResult{Handled: true, Text: text}
		}
		text = r.Text
	}
	return InputResult{Text: text}
}

// BeforeAgentStart collects the text the before_agent_start hooks add to
// the system prompt, joined by blank lines. Each extension sees the prompt
// with the earlier additions.
func (h *Host) BeforeAgentStart(ctx context.Context, systemPrompt string) string {
	var parts []string
	current := systemPrompt
	for _, m := range h.snapshot() {
		if !m.hooks(HookBeforeAgentStart) {
			continue
		}
		add, ok := m.beforeAgentStart(ctx, current)
		if !ok || strings.TrimSpace(add) == "" {
			continue
		}
		parts = append(parts, add)
		current = current + "\n\n" + add
	}
	return strings.Join(parts, "\n\n")
}

// SessionBefore asks the session_before_<kind> hooks; the first cancel
// wins.
func (h *Host) SessionBefore(ctx context.Context, kind string, payload any) bool {
	hook := "session_before_" + kind
	for _, m := range h.snapshot() {
		if m.hooks(hook) && m.sessionBefore(ctx, hook, payload) {
			return true
		}
	}
	return false
}

// Event forwards ev to the extensions subscribed to its type. It never
// blocks on an extension.
func (h *Host) Event(ev rpc.Event) {
	if ev == nil {
		return
	}
	name := ev.EventType()
	for _, m := range h.snapshot() {
		m.event(name, ev)
	}
}

// HandlesInput reports whether an extension hooks input or registers a
// slash command: handling a prompt may then wait for an extension, and
// through it for a person answering a dialog. Nil-safe.
func (h *Host) HandlesInput() bool {
	for _, m := range h.snapshot() {
		if m.hooks(HookInput) || len(m.commands()) > 0 {
			return true
		}
	}
	return false
}

// Commands lists the extensions' slash commands; when two extensions
// register the same name, the first in load order wins.
func (h *Host) Commands() []Command {
	var out []Command
	seen := map[string]bool{}
	for _, m := range h.snapshot() {
		for _, c := range m.commands() {
			if !seen[c.Name] {
				seen[c.Name] = true
				out = append(out, c)
			}
		}
	}
	return out
}

// RunCommand runs the extension command name (without its slash).
func (h *Host) RunCommand(ctx context.Context, name, args string) (bool, error) {
	name = strings.TrimPrefix(name, "/")
	for _, m := range h.snapshot() {
		for _, c := range m.commands() {
			if c.Name == name {
				return true, m.runCommand(ctx, name, args)
			}
		}
	}
	return false, nil
}

// Tools lists the extensions' tools; when two extensions register the same
// name, the first in load order wins.
func (h *Host) Tools() []tools.Tool {
	var out []tools.Tool
	seen := map[string]bool{}
	for _, m := range h.snapshot() {
		for _, t := range m.tools() {
			if !seen[t.Name()] {
				seen[t.Name()] = true
				out = append(out, t)
			}
		}
	}
	return out
}

// ---- UI and actions, shared by process and built-in extensions ----

// isDialogMethod tells the UI methods that wait for an answer.
func isDialogMethod(ui string) bool {
	switch ui {
	case "select", "confirm", "input", "editor":
		return true
	}
	return false
}

// isNotifyMethod tells the fire-and-forget UI methods.
func isNotifyMethod(ui string) bool {
	switch ui {
	case "notify", "setStatus", "setWidget", "setTitle", "set_editor_text":
		return true
	}
	return false
}

// dialog runs a UI dialog, resolving to a cancelled answer when no client
// can answer.
func (h *Host) dialog(ctx context.Context, method string, params map[string]any, timeout time.Duration) UIResponse {
	ui := h.getUI()
	if ui == nil || !ui.Available() || ctx.Err() != nil {
		return UIResponse{Cancelled: true}
	}
	if params == nil {
		params = map[string]any{}
	}
	if timeout > 0 {
		params["timeout"] = timeout.Milliseconds()
	}
	return ui.Dialog(ctx, method, params, timeout)
}

func (h *Host) notify(method string, params map[string]any) {
	ui := h.getUI()
	if ui == nil {
		return
	}
	if params == nil {
		params = map[string]any{}
	}
	ui.Notify(method, params)
}

// serve answers a request from an extension: "ui.<method>" or an action.
// The result is JSON-encodable.
func (h *Host) serve(ctx context.Context, method string, raw json.RawMessage) (any, error) {
	if ui, ok := strings.CutPrefix(method, "ui."); ok {
		params := map[string]any{}
		if !isAbsent(raw) {
			if err := json.Unmarshal(raw, &params); err != nil {
				return nil, fmt.Errorf("%s: params must be an object", method)
			}
		}
		switch {
		case isDialogMethod(ui):
			var timeout time.Duration
			if ms, ok := params["timeout"].(float64); ok && ms > 0 && ui != "editor" {
				timeout = time.Duration(ms * float64(time.Millisecond))
			}
			delete(params, "timeout")
			return dialogReply(ui, h.dialog(ctx, ui, params, timeout)), nil
		case isNotifyMethod(ui):
			h.notify(ui, params)
			return struct{}{}, nil
		}
		return nil, fmt.Errorf("unknown UI method %q", ui)
	}
	var p struct {
		Text       string          `json:"text"`
		DeliverAs  string          `json:"deliverAs"`
		CustomType string          `json:"customType"`
		Data       json.RawMessage `json:"data"`
		Name       string          `json:"name"`
	}
	if !isAbsent(raw) {
		if err := json.Unmarshal(raw, &p); err != nil {
			return nil, fmt.Errorf("%s: %v", method, err)
		}
	}
	a := h.getActions()
	known := map[string]bool{"send_message": true, "append_entry": true, "set_session_name": true, "shutdown": true}
	if !known[method] {
		return nil, fmt.Errorf("unknown method %q", method)
	}
	if a == nil {
		return nil, fmt.Errorf("%s: no session to act on", method)
	}
	var err error
	switch method {
	case "send_message":
		err = a.SendMessage(p.Text, p.DeliverAs)
	case "append_entry":
		if p.CustomType == "" {
			return nil, fmt.Errorf("append_entry: customType is required")
		}
		if isAbsent(p.Data) {
			p.Data = json.RawMessage("null")
		}
		err = a.AppendCustomEntry(p.CustomType, p.Data)
	case "set_session_name":
		err = a.SetSessionName(p.Name)
	case "shutdown":
		a.Shutdown()
	}
	if err != nil {
		return nil, err
	}
	return struct{}{}, nil
}

// dialogReply is the wire form of a dialog answer.
func dialogReply(method string, r UIResponse) map[string]any {
	out := map[string]any{}
	switch {
	case r.Cancelled:
		out["cancelled"] = true
		if method == "confirm" {
			out["confirmed"] = false
		}
	case method == "confirm":
		out["confirmed"] = r.Confirmed != nil && *r.Confirmed
	case r.Value != nil:
		out["value"] = *r.Value
	default:
		out["cancelled"] = true
	}
	return out
}

// limiter counts failures within RestartWindow.
type limiter struct{ times []time.Time }

// fail records a failure and reports whether the limit is exceeded (the
// extension must be disabled).
func (l *limiter) fail(now time.Time) bool {
	kept := l.times[:0]
	for _, t := range l.times {
		if now.Sub(t) < RestartWindow {
			kept = append(kept, t)
		}
	}
	l.times = kept
	if len(l.times) >= RestartLimit {
		return true
	}
	l.times = append(l.times, now)
	return false
}
