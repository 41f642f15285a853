package extensions

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"time"

	"github.com/pisces-agent/pisces/internal/tools"
	"github.com/pisces-agent/pisces/rpc"
)

// Extension is an extension written in Go: built into Pisces or added by a
// program that embeds it. It has the same powers as a process extension
// (docs/extensions.md): Setup registers tools, commands, hooks and event
// handlers on api, and may keep api to use the UI and the session actions
// later.
//
// Hooks run under the same rules as the protocol's: each call is bounded by
// the host timeout (the clock stops while a dialog opened through api is
// waiting), a panic or a timeout produces extension_error and the default
// answer, and after RestartLimit failures within RestartWindow the extension
// is disabled.
type Extension interface {
	// Name identifies the extension; its extensionPath is "builtin:<Name>".
	Name() string
	// Setup registers what the extension provides. An error leaves the
	// extension out.
	Setup(api *API) error
}

// NewExtension makes an Extension from a name and a setup function.
func NewExtension(name string, setup func(api *API) error) Extension {
	return funcExtension{name, setup}
}

type funcExtension struct {
	name  string
	setup func(*API) error
}

func (f funcExtension) Name() string         { return f.name }
func (f funcExtension) Setup(api *API) error { return f.setup(api) }

// ToolCallEvent is what a Go tool_call hook receives.
type ToolCallEvent struct {
	ToolCallID string
	ToolName   string
	Args       json.RawMessage // the current arguments object
}

// ToolResultEvent is what a Go tool_result hook receives.
type ToolResultEvent struct {
	ToolCallID string
	ToolName   string
	Args       json.RawMessage
	Result     tools.Result
}

// AddBuiltin adds a Go extension after those Load started; its hooks run
// after theirs, in the order of AddBuiltin calls.
func (h *Host) AddBuiltin(ext Extension) (err error) {
	if h == nil {
		return errors.New("extensions: AddBuiltin on a nil Host")
	}
	b := &builtinExt{h: h, name: ext.Name()}
	api := &API{b: b}
	defer func() {
		if r := recover(); r != nil {
			err = fmt.Errorf("extension %s: setup panicked: %v", b.path(), r)
		}
	}()
	if err := ext.Setup(api); err != nil {
		return fmt.Errorf("extension %s: %w", b.path(), err)
	}
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.closed {
		return errClosed
	}
	h.members = append(h.members, b)
	return nil
}

// API is what a Go extension registers with and calls back through.
// Registration methods are meant for Setup; the others may be used at any
// time, from any goroutine.
type API struct{ b *builtinExt }

// Cwd is the working directory of the session.
func (a *API) Cwd() string { return a.b.h.cwd }

// AgentDir is the agent directory.
func (a *API) AgentDir() string { return a.b.h.agentDir }

// RegisterTool adds a tool the model can call.
func (a *API) RegisterTool(t tools.Tool) {
	a.b.mu.Lock()
	defer a.b.mu.Unlock()
	a.b.toolList = append(a.b.toolList, &builtinTool{b: a.b, t: t})
}

// RegisterCommand adds the slash command /name.
func (a *API) RegisterCommand(name, description string, run func(ctx context.Context, args string) error) {
	a.b.mu.Lock()
	defer a.b.mu.Unlock()
	name = trimSlash(name)
	a.b.cmds = append(a.b.cmds, builtinCommand{Command{Name: name, Description: description, ExtensionPath: a.b.path()}, run})
}

// OnToolCall adds a tool_call hook. Return Block to refuse the call, or
// Args to replace the arguments; the zero decision lets the call go on.
func (a *API) OnToolCall(fn func(ctx context.Context, e ToolCallEvent) ToolCallDecision) {
	a.b.add(func(hs *builtinHooks) { hs.toolCall = append(hs.toolCall, fn) })
}

// OnToolResult adds a tool_result hook; return ok=true with the new result
// to replace it.
func (a *API) OnToolResult(fn func(ctx context.Context, e ToolResultEvent) (tools.Result, bool)) {
	a.b.add(func(hs *builtinHooks) { hs.toolResult = append(hs.toolResult, fn) })
}

// OnInput adds an input hook. Return Handled to consume the prompt, or the
// text to go on with; the zero InputResult leaves the text unchanged.
func (a *API) OnInput(fn func(ctx context.Context, text, source string) InputResult) {
	a.b.add(func(hs *builtinHooks) { hs.input = append(hs.input, fn) })
}

// OnBeforeAgentStart adds a before_agent_start hook returning text to
// append to the system prompt ("" for none).
func (a *API) OnBeforeAgentStart(fn func(ctx context.Context, systemPrompt string) string) {
	a.b.add(func(hs *builtinHooks) { hs.beforeAgentStart = append(hs.beforeAgentStart, fn) })
}

// OnSessionBefore adds a hook for session_before_<kind> (kind: "switch",
// "fork", "tree", "compact"); return true to cancel the action.
func (a *API) OnSessionBefore(fn func(ctx context.Context, kind string, payload any) (cancel bool)) {
	a.b.add(func(hs *builtinHooks) { hs.sessionBefore = append(hs.sessionBefore, fn) })
}

// OnEvent adds a handler for every agent and session event. It runs on the
// core's goroutine and must return quickly.
func (a *API) OnEvent(fn func(ev rpc.Event)) {
	a.b.add(func(hs *builtinHooks) { hs.event = append(hs.event, fn) })
}

// HasUI reports whether a client can answer dialogs.
func (a *API) HasUI() bool {
	ui := a.b.h.getUI()
	return ui != nil && ui.Available()
}

// Dialog opens a UI dialog (select, confirm, input, editor) and waits for
// the answer, the timeout (0: none) or ctx. Without a client it is
// cancelled at once.
func (a *API) Dialog(ctx context.Context, method string, params map[string]any, timeout time.Duration) UIResponse {
	a.b.wd.enter()
	defer a.b.wd.leave()
	return a.b.h.dialog(ctx, method, params, timeout)
}

// Confirm asks a yes/no question; false when cancelled or timed out.
func (a *API) Confirm(ctx context.Context, title, message string, timeout time.Duration) bool {
	r := a.Dialog(ctx, "confirm", map[string]any{"title": title, "message": message}, timeout)
	return !r.Cancelled && r.Confirmed != nil && *r.Confirmed
}

// Select offers options; ok=false when cancelled or timed out.
func (a *API) Select(ctx context.Context, title string, options []string, timeout time.Duration) (string, bool) {
	r := a.Dialog(ctx, "select", map[string]any{"title": title, "options": options}, timeout)
	return value(r)
}

// Input asks for a line of text; ok=false when cancelled or timed out.
func (a *API) Input(ctx context.Context, title, placeholder string, timeout time.Duration) (string, bool) {
	p := map[string]any{"title": title}
	if placeholder != "" {
		p["placeholder"] = placeholder
	}
	return value(a.Dialog(ctx, "input", p, timeout))
}

// Editor asks for multi-line text; ok=false when cancelled.
func (a *API) Editor(ctx context.Context, title, prefill string) (string, bool) {
	p := map[string]any{"title": title}
	if prefill != "" {
		p["prefill"] = prefill
	}
	return value(a.Dialog(ctx, "editor", p, 0))
}

func value(r UIResponse) (string, bool) {
	if r.Cancelled || r.Value == nil {
		return "", false
	}
	return *r.Value, true
}

// Notify shows a message; notifyType is "info", "warning", "error" or "".
func (a *API) Notify(message, notifyType string) {
	p := map[string]any{"message": message}
	if notifyType != "" {
		p["notifyType"] = notifyType
	}
	a.b.h.notify("notify", p)
}

// SetStatus sets (text != "") or clears a status entry.
func (a *API) SetStatus(key, text string) {
	p := map[string]any{"statusKey": key}
	if text != "" {
		p["statusText"] = text
	}
	a.b.h.notify("setStatus", p)
}

// SetWidget sets (lines != nil) or clears a widget; placement is
// "aboveEditor", "belowEditor" or "".
func (a *API) SetWidget(key string, lines []string, placement string) {
	p := map[string]any{"widgetKey": key}
	if lines != nil {
		p["widgetLines"] = lines
	}
	if placement != "" {
		p["widgetPlacement"] = placement
	}
	a.b.h.notify("setWidget", p)
}

// SetTitle sets the client's window title.
func (a *API) SetTitle(title string) { a.b.h.notify("setTitle", map[string]any{"title": title}) }

// SetEditorText puts text in the client's editor.
func (a *API) SetEditorText(text string) {
	a.b.h.notify("set_editor_text", map[string]any{"text": text})
}

// SendMessage sends a user message (deliverAs "steer" or "followUp" while
// the agent runs).
func (a *API) SendMessage(text, deliverAs string) error {
	act := a.b.h.getActions()
	if act == nil {
		return errors.New("send_message: no session to act on")
	}
	return act.SendMessage(text, deliverAs)
}

// AppendEntry writes a custom entry with JSON-encodable data.
func (a *API) AppendEntry(customType string, data any) error {
	act := a.b.h.getActions()
	if act == nil {
		return errors.New("append_entry: no session to act on")
	}
	raw, err := json.Marshal(data)
	if err != nil {
		return err
	}
	return act.AppendCustomEntry(customType, raw)
}

// SetSessionName names the session.
func (a *API) SetSessionName(name string) error {
	act := a.b.h.getActions()
	if act == nil {
		return errors.New("set_session_name: no session to act on")
	}
	return act.SetSessionName(name)
}

// Shutdown asks Pisces to flush the sessions and exit with code 0.
func (a *API) Shutdown() {
	if act := a.b.h.getActions(); act != nil {
		act.Shutdown()
	}
}

// ---- the member ----

type builtinHooks struct {
	toolCall         []func(context.Context, ToolCallEvent) ToolCallDecision
	toolResult       []func(context.Context, ToolResultEvent) (tools.Result, bool)
	input            []func(context.Context, string, string) InputResult
	beforeAgentStart []func(context.Context, string) string
	sessionBefore    []func(context.Context, string, any) bool
	event            []func(rpc.Event)
}

type builtinCommand struct {
	Command
	run func(context.Context, string) error
}

type builtinExt struct {
	h    *Host
	name string
	wd   watchdog

	mu       sync.Mutex
	hs       builtinHooks
	toolList []tools.Tool
	cmds     []builtinCommand
	limit    limiter
	disabled atomic.Bool
}

func (b *builtinExt) path() string { return "builtin:" + b.name }

func (b *builtinExt) add(f func(*builtinHooks)) {
	b.mu.Lock()
	defer b.mu.Unlock()
	f(&b.hs)
}

func (b *builtinExt) hooksSnapshot() builtinHooks {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.hs
}

func (b *builtinExt) hooks(hook string) bool {
	if b.disabled.Load() {
		return false
	}
	hs := b.hooksSnapshot()
	switch hook {
	case HookToolCall:
		return len(hs.toolCall) > 0
	case HookToolResult:
		return len(hs.toolResult) > 0
	case HookInput:
		return len(hs.input) > 0
	case HookBeforeAgentStart:
		return len(hs.beforeAgentStart) > 0
	case HookSessionBeforeSwitch, HookSessionBeforeFork, HookSessionBeforeTree, HookSessionBeforeCompact:
		return len(hs.sessionBefore) > 0
	}
	return false
}

// failure reports a failure and disables the extension past the limit.
func (b *builtinExt) failure(event string, err error) {
	b.h.reportError(b.path(), event, err.Error())
	b.mu.Lock()
	over := b.limit.fail(time.Now())
	b.mu.Unlock()
	if over && !b.disabled.Swap(true) {
		b.h.reportError(b.path(), event, fmt.Sprintf("extension disabled: it failed %d times within %s", RestartLimit+1, RestartWindow))
	}
}

// guard runs fn on its own goroutine, turning a panic or (when timed) a
// timeout into a reported failure; false means no answer.
func (b *builtinExt) guard(ctx context.Context, event string, timed bool, fn func(ctx context.Context)) bool {
	if b.disabled.Load() {
		return false
	}
	cctx, cancel := context.WithCancel(ctx)
	defer cancel()
	done := make(chan struct{})
	var perr any
	go func() {
		defer close(done)
		defer func() { perr = recover() }()
		fn(cctx)
	}()
	d := b.h.timeout
	if !timed {
		d = 1<<63 - 1
	}
	switch err := waitWatched(ctx, done, nil, &b.wd, d); {
	case err == nil:
		if perr != nil {
			b.failure(event, fmt.Errorf("panic: %v", perr))
			return false
		}
		return true
	case errors.Is(err, errTimeout):
		b.failure(event, fmt.Errorf("no answer to %s within %s", event, d))
	}
	return false
}

func (b *builtinExt) toolCall(ctx context.Context, id, name string, args json.RawMessage) (ToolCallDecision, bool) {
	var out ToolCallDecision
	answered := false
	for _, fn := range b.hooksSnapshot().toolCall {
		var d ToolCallDecision
		if !b.guard(ctx, HookToolCall, true, func(ctx context.Context) { d = fn(ctx, ToolCallEvent{id, name, args}) }) {
			continue
		}
		answered = true
		if d.Block {
			return ToolCallDecision{Block: true, Reason: d.Reason}, true
		}
		if d.Args != nil {
			if !isObject(d.Args) {
				b.h.reportError(b.path(), HookToolCall, "invalid answer: args must be an object")
				continue
			}
			args, out.Args = d.Args, d.Args
		}
	}
	return out, answered
}

func (b *builtinExt) toolResult(ctx context.Context, id, name string, args json.RawMessage, res tools.Result) (tools.Result, bool) {
	changed := false
	for _, fn := range b.hooksSnapshot().toolResult {
		var r tools.Result
		var ok bool
		if b.guard(ctx, HookToolResult, true, func(ctx context.Context) { r, ok = fn(ctx, ToolResultEvent{id, name, args, res}) }) && ok {
			res, changed = r, true
		}
	}
	return res, changed
}

func (b *builtinExt) input(ctx context.Context, text, source string) (InputResult, bool) {
	answered := false
	for _, fn := range b.hooksSnapshot().input {
		var r InputResult
		if !b.guard(ctx, HookInput, true, func(ctx context.Context) { r = fn(ctx, text, source) }) {
			continue
		}
		if r.Handled {
			return InputResult{Handled: true}, true
		}
		if r.Text != "" {
			text, answered = r.Text, true
		}
	}
	return InputResult{Text: text}, answered
}

func (b *builtinExt) beforeAgentStart(ctx context.Context, systemPrompt string) (string, bool) {
	var parts []string
	for _, fn := range b.hooksSnapshot().beforeAgentStart {
		var s string
		if b.guard(ctx, HookBeforeAgentStart, true, func(ctx context.Context) { s = fn(ctx, systemPrompt) }) && s != "" {
			parts = append(parts, s)
			systemPrompt += "\n\n" + s
		}
	}
	if len(parts) == 0 {
		return "", false
	}
	out := parts[0]
	for _, p := range parts[1:] {
		out += "\n\n" + p
	}
	return out, true
}

func (b *builtinExt) sessionBefore(ctx context.Context, hook string, payload any) bool {
	kind := hook[len("session_before_"):]
	for _, fn := range b.hooksSnapshot().sessionBefore {
		var c bool
		if b.guard(ctx, hook, true, func(ctx context.Context) { c = fn(ctx, kind, payload) }) && c {
			return true
		}
	}
	return false
}

func (b *builtinExt) event(name string, ev rpc.Event) {
	if b.disabled.Load() {
		return
	}
	for _, fn := range b.hooksSnapshot().event {
		func() {
			defer func() {
				if r := recover(); r != nil {
					b.failure(name, fmt.Errorf("panic: %v", r))
				}
			}()
			fn(ev)
		}()
	}
}

func (b *builtinExt) commands() []Command {
	if b.disabled.Load() {
		return nil
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	out := make([]Command, 0, len(b.cmds))
	for _, c := range b.cmds {
		out = append(out, c.Command)
	}
	return out
}

func (b *builtinExt) runCommand(ctx context.Context, name, args string) error {
	b.mu.Lock()
	var run func(context.Context, string) error
	for _, c := range b.cmds {
		if c.Name == name {
			run = c.run
			break
		}
	}
	b.mu.Unlock()
	if run == nil {
		return fmt.Errorf("extension %s: no command /%s", b.path(), name)
	}
	var err error
	if !b.guard(ctx, "command:"+name, false, func(ctx context.Context) { err = run(ctx, args) }) {
		if ctx.Err() != nil {
			return ctx.Err()
		}
		return fmt.Errorf("extension %s: command /%s failed", b.path(), name)
	}
	return err
}

func (b *builtinExt) tools() []tools.Tool {
	if b.disabled.Load() {
		return nil
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	return append([]tools.Tool(nil), b.toolList...)
}

func (b *builtinExt) close() {}

// builtinTool turns a panicking Go tool into an error result.
type builtinTool struct {
	b *builtinExt
	t tools.Tool
}

func (t *builtinTool) Name() string                { return t.t.Name() }
func (t *builtinTool) Description() string         { return t.t.Description() }
func (t *builtinTool) Parameters() json.RawMessage { return t.t.Parameters() }

func (t *builtinTool) Execute(ctx context.Context, call tools.Call) (res tools.Result, err error) {
	defer func() {
		if r := recover(); r != nil {
			t.b.failure("tool:"+t.t.Name(), fmt.Errorf("panic: %v", r))
			res, err = tools.ErrorResult(fmt.Sprintf("Extension %s failed while running %s", t.b.path(), t.t.Name())), nil
		}
	}()
	return t.t.Execute(ctx, call)
}
