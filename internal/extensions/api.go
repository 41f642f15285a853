// Package extensions hosts extensions: executables in any language that
// speak a JSONL protocol with Pisces (docs/extensions.md), plus a Go
// interface for built-in extensions and programs embedding Pisces.
//
// This file is the contract between the host and the core. The core calls
// Hooks; the host calls back through Actions and UI.
package extensions

import (
	"context"
	"encoding/json"
	"time"

	"github.com/pisces-agent/pisces/internal/tools"
	"github.com/pisces-agent/pisces/rpc"
)

// ToolCallDecision is the answer of the tool_call hook.
type ToolCallDecision struct {
	Block  bool            // refuse the call; Reason becomes the tool's error result
	Reason string          // why (shown to the model)
	Args   json.RawMessage // replacement arguments (nil: unchanged)
}

// InputResult is the answer of the input hook.
type InputResult struct {
	Handled bool   // an extension consumed the prompt: no run follows (disposition "handled")
	Text    string // the (possibly transformed) prompt text
}

// Command is a slash command an extension registered.
type Command struct {
	Name          string
	Description   string
	ExtensionPath string
}

// Hooks is what the core asks of extensions. Every method must be safe to
// call when no extension is loaded (then they do nothing), and must never
// panic or block past its timeout: a failing extension produces an
// extension_error event and the default answer.
type Hooks interface {
	// OnToolCall may block a tool call or change its arguments.
	OnToolCall(ctx context.Context, toolCallID, toolName string, args json.RawMessage) ToolCallDecision
	// OnToolResult may replace a tool's result (ok=false: unchanged).
	OnToolResult(ctx context.Context, toolCallID, toolName string, args json.RawMessage, result tools.Result) (tools.Result, bool)
	// OnInput may transform or handle a prompt (source: "rpc", "cli").
	OnInput(ctx context.Context, text, source string) InputResult
	// BeforeAgentStart returns text to append to the system prompt.
	BeforeAgentStart(ctx context.Context, systemPrompt string) string
	// SessionBefore asks whether a session action may go on: kind is
	// "switch" (also new), "fork", "tree" or "compact"; payload is
	// JSON-encodable details. cancel=true stops the action.
	SessionBefore(ctx context.Context, kind string, payload any) (cancel bool)
	// Event forwards an agent or session event (informational).
	Event(ev rpc.Event)
	// Commands lists the registered slash commands.
	Commands() []Command
	// RunCommand runs /name args; handled=false when no extension has it.
	RunCommand(ctx context.Context, name, args string) (handled bool, err error)
	// Tools lists the tools extensions registered (they run in the
	// extension process).
	Tools() []tools.Tool
}

// Actions are what extensions may ask of the session.
type Actions interface {
	// SendMessage sends a user message (as a prompt when idle, else queued
	// per deliverAs: "steer" or "followUp").
	SendMessage(text, deliverAs string) error
	// AppendCustomEntry writes a custom entry to the session.
	AppendCustomEntry(customType string, data json.RawMessage) error
	// SetSessionName names the session.
	SetSessionName(name string) error
	// Shutdown flushes the sessions and exits the process with code 0
	// (after the current command, or at once when idle).
	Shutdown()
}

// UIResponse is a client's answer to a dialog.
type UIResponse struct {
	Value     *string
	Confirmed *bool
	Cancelled bool
}

// UI is the client side of the extension UI sub-protocol (pi-facts §2.3).
// Dialog methods (select, confirm, input, editor) wait for the answer, the
// timeout or ctx; the others (notify, setStatus, setWidget, setTitle,
// set_editor_text) return at once.
type UI interface {
	// Dialog sends an extension_ui_request and waits. A zero timeout means
	// none. On timeout or cancellation it returns a UIResponse with
	// Cancelled set.
	Dialog(ctx context.Context, method string, params map[string]any, timeout time.Duration) UIResponse
	// Notify sends a fire-and-forget extension_ui_request.
	Notify(method string, params map[string]any)
	// Available reports whether a client that can answer is attached
	// (false in print and json modes: dialogs then resolve to defaults).
	Available() bool
}
