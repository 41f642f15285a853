package extensions

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"

	"github.com/pisces-agent/pisces/internal/ai"
	"github.com/pisces-agent/pisces/internal/tools"
)

// ProtocolVersion is the version of the extension protocol Pisces speaks
// (docs/extensions.md). It is sent in the init message; an extension that
// registers with a different version is refused.
const ProtocolVersion = 1

// Hook names, as used in an extension's registration and as the method of
// the hook requests Pisces sends.
const (
	HookToolCall              = "tool_call"
	HookToolResult            = "tool_result"
	HookInput                 = "input"
	HookBeforeAgentStart      = "before_agent_start"
	HookSessionBeforeSwitch   = "session_before_switch"
	HookSessionBeforeFork     = "session_before_fork"
	HookSessionBeforeTree     = "session_before_tree"
	HookSessionBeforeCompact  = "session_before_compact"
	methodExecuteTool         = "execute_tool"
	methodRunCommand          = "run_command"
	eventNameAllSubscriptions = "*"
)

// isKnownHook tells the hooks an extension may register.
func isKnownHook(name string) bool {
	switch name {
	case HookToolCall, HookToolResult, HookInput, HookBeforeAgentStart,
		HookSessionBeforeSwitch, HookSessionBeforeFork, HookSessionBeforeTree,
		HookSessionBeforeCompact:
		return true
	}
	return false
}

// Message types on the wire.
const (
	msgInit       = "init"
	msgRegister   = "register"
	msgRequest    = "request"
	msgResponse   = "response"
	msgCancel     = "cancel"
	msgEvent      = "event"
	msgToolUpdate = "tool_update"
)

// wireIn is any message an extension writes. Which fields are set depends on
// Type.
type wireIn struct {
	Type string `json:"type"`

	// request, response, tool_update
	ID            json.RawMessage `json:"id,omitempty"`
	Method        string          `json:"method,omitempty"`
	Params        json.RawMessage `json:"params,omitempty"`
	ParentID      string          `json:"parentId,omitempty"`
	Result        json.RawMessage `json:"result,omitempty"`
	Error         json.RawMessage `json:"error,omitempty"`
	PartialResult json.RawMessage `json:"partialResult,omitempty"`

	// register
	ProtocolVersion int           `json:"protocolVersion,omitempty"`
	Name            string        `json:"name,omitempty"`
	Tools           []toolSpec    `json:"tools,omitempty"`
	Commands        []commandSpec `json:"commands,omitempty"`
	Hooks           []string      `json:"hooks,omitempty"`
	Events          []string      `json:"events,omitempty"`
}

type toolSpec struct {
	Name        string          `json:"name"`
	Description string          `json:"description"`
	Parameters  json.RawMessage `json:"parameters"`
}

type commandSpec struct {
	Name        string `json:"name"`
	Description string `json:"description,omitempty"`
}

// Messages Pisces writes.

type initMsg struct {
	Type            string `json:"type"`
	ProtocolVersion int    `json:"protocolVersion"`
	ExtensionPath   string `json:"extensionPath"`
	Cwd             string `json:"cwd"`
	AgentDir        string `json:"agentDir"`
	HasUI           bool   `json:"hasUI"`
	Restarts        int    `json:"restarts"`
}

type requestMsg struct {
	Type   string `json:"type"`
	ID     string `json:"id"`
	Method string `json:"method"`
	Params any    `json:"params"`
}

type responseMsg struct {
	Type   string          `json:"type"`
	ID     json.RawMessage `json:"id"`
	Result any             `json:"result,omitempty"`
	Error  string          `json:"error,omitempty"`
}

type cancelMsg struct {
	Type string `json:"type"`
	ID   string `json:"id"`
}

type eventMsg struct {
	Type  string `json:"type"`
	Name  string `json:"name"`
	Event any    `json:"event"`
}

// Hook parameters and replies.

type toolCallParams struct {
	ToolCallID string          `json:"toolCallId"`
	ToolName   string          `json:"toolName"`
	Args       json.RawMessage `json:"args"`
}

type toolCallReply struct {
	Block  bool            `json:"block"`
	Reason string          `json:"reason"`
	Args   json.RawMessage `json:"args"`
}

type wireResult struct {
	Content []ai.Content    `json:"content"`
	Details json.RawMessage `json:"details,omitempty"`
	IsError bool            `json:"isError"`
}

func toWire(r tools.Result) wireResult {
	c := r.Content
	if c == nil {
		c = []ai.Content{}
	}
	return wireResult{Content: c, Details: r.Details, IsError: r.IsError}
}

type toolResultParams struct {
	ToolCallID string          `json:"toolCallId"`
	ToolName   string          `json:"toolName"`
	Args       json.RawMessage `json:"args"`
	Result     wireResult      `json:"result"`
}

// resultReply is a (partial) tool result from an extension: the fields
// present replace those of the result.
type resultReply struct {
	Content json.RawMessage `json:"content"`
	Details json.RawMessage `json:"details"`
	IsError *bool           `json:"isError"`
}

func (r resultReply) empty() bool {
	return isAbsent(r.Content) && isAbsent(r.Details) && r.IsError == nil
}

// apply overlays r on base.
func (r resultReply) apply(base tools.Result) (tools.Result, error) {
	if !isAbsent(r.Content) {
		c, err := decodeContent(r.Content)
		if err != nil {
			return base, err
		}
		base.Content = c
	}
	if !isAbsent(r.Details) {
		base.Details = r.Details
	}
	if r.IsError != nil {
		base.IsError = *r.IsError
	}
	return base, nil
}

type inputParams struct {
	Text   string `json:"text"`
	Source string `json:"source"`
}

type inputReply struct {
	Action string  `json:"action"` // continue, transform, handled
	Text   *string `json:"text"`
}

type beforeAgentStartParams struct {
	SystemPrompt string `json:"systemPrompt"`
}

type beforeAgentStartReply struct {
	AppendSystemPrompt string `json:"appendSystemPrompt"`
}

type cancelReply struct {
	Cancel bool `json:"cancel"`
}

type runCommandParams struct {
	Name string `json:"name"`
	Args string `json:"args"`
}

// isAbsent reports whether a raw JSON value is missing or null.
func isAbsent(raw json.RawMessage) bool {
	t := bytes.TrimSpace(raw)
	return len(t) == 0 || bytes.Equal(t, []byte("null"))
}

// decodeContent reads tool result content: an array of content blocks, or a
// plain string standing for one text block.
func decodeContent(raw json.RawMessage) ([]ai.Content, error) {
	t := bytes.TrimSpace(raw)
	if len(t) > 0 && t[0] == '"' {
		var s string
		if err := json.Unmarshal(t, &s); err != nil {
			return nil, err
		}
		return []ai.Content{ai.Text(s)}, nil
	}
	var c []ai.Content
	if err := json.Unmarshal(t, &c); err != nil {
		return nil, fmt.Errorf("content: %w", err)
	}
	if c == nil {
		c = []ai.Content{}
	}
	return c, nil
}

// decodeError reads the error member of a response: a string, or an object
// with a message.
func decodeError(raw json.RawMessage) string {
	var s string
	if json.Unmarshal(raw, &s) == nil {
		return s
	}
	var o struct {
		Message string `json:"message"`
	}
	if json.Unmarshal(raw, &o) == nil && o.Message != "" {
		return o.Message
	}
	return string(raw)
}

// decodeID reads a request id, which may be a string or a number.
func decodeID(raw json.RawMessage) string {
	var s string
	if json.Unmarshal(raw, &s) == nil {
		return s
	}
	return string(bytes.TrimSpace(raw))
}

// normalizeArgs turns missing arguments into an empty object.
func normalizeArgs(args json.RawMessage) json.RawMessage {
	if isAbsent(args) {
		return json.RawMessage("{}")
	}
	return args
}

// isObject reports whether raw is a JSON object.
func isObject(raw json.RawMessage) bool {
	t := bytes.TrimSpace(raw)
	return len(t) > 0 && t[0] == '{' && json.Valid(t)
}

// remoteError is an error an extension answered a request with.
type remoteError struct{ msg string }

func (e *remoteError) Error() string { return e.msg }

var (
	errDisabled = errors.New("extension disabled")
	errClosed   = errors.New("extensions closed")
	// errFailed means the process failed while Pisces waited; the failure
	// has already been reported.
	errFailed = errors.New("extension failed")
)
