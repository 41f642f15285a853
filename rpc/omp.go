package rpc

import (
	"encoding/json"

	"github.com/pisces-agent/pisces/internal/ai"
)

// oh-my-pi's wire (docs/rpc.md, "oh-my-pi's wire"): the commands, frames and
// fields its typed RpcClient uses. A connection gets them after
// negotiate_protocol (protocol v2) or with --rpc-compat omp; a client that
// does neither keeps pi 1.5's wire.

// Command names of oh-my-pi's wire.
const (
	CmdNegotiateProtocol    = "negotiate_protocol"
	CmdGetAvailableCommands = "get_available_commands"
	CmdOpenSession          = "open_session"
	CmdSetEventFilter       = "set_event_filter"
	CmdGetMessagesPage      = "get_messages_page"
	CmdSetFastMode          = "set_fast_mode"
	// The task tool's subagents.
	CmdSetSubagentSubscription = "set_subagent_subscription"
	CmdGetSubagents            = "get_subagents"
	CmdGetSubagentMessages     = "get_subagent_messages"
	CmdHandoff                 = "handoff"
)

// Levels of set_subagent_subscription.
const (
	SubagentsOff      = "off"
	SubagentsProgress = "progress"
	SubagentsEvents   = "events"
)

// MessageIDMember is the member oh-my-pi's wire adds to message_start,
// message_update and message_end: "msg-<n>", counted per connection, the
// same from a message's start to its end.
const MessageIDMember = "messageId"

// Frame types of oh-my-pi's wire that are not session events.
const (
	EventPromptResult   = "prompt_result"
	EventSessionSettled = "session_settled"
	EventRPCChunk       = "rpc_chunk"
	EventRPCFrameError  = "rpc_frame_error"
	// EventAvailableCommandsUpdate lists the slash commands (as
	// get_available_commands does) when they may have changed.
	EventAvailableCommandsUpdate = "available_commands_update"
	// EventModelChanged says the session's model changed (set_model,
	// cycle_model).
	EventModelChanged = "model_changed"
	// EventNotice is a message for the user about the session (a failed
	// write of the session file, an MCP server that needs attention).
	EventNotice = "notice"
	// EventSubagentLifecycle says a task subagent started or ended (with
	// set_subagent_subscription progress).
	EventSubagentLifecycle = "subagent_lifecycle"
)

// Levels and sources of notice.
const (
	NoticeInfo    = "info"
	NoticeWarning = "warning"
	NoticeError   = "error"

	NoticeSourcePersistence = "session-persistence"
	NoticeSourceMCP         = "mcp"
)

// Protocol limits advertised on the ready line.
const (
	// ProtocolV2 is the protocol version negotiate_protocol accepts.
	ProtocolV2 = 2
	// MaxFrameBytes is the largest line (including its LF) written once
	// protocol v2 is in effect; larger frames are split into rpc_chunk lines.
	MaxFrameBytes = 1 << 20
	// MaxReassembledFrameBytes is the largest frame split into chunks.
	MaxReassembledFrameBytes = 64 << 20
	// ChunkDataBytes is the most bytes of a frame one rpc_chunk carries.
	ChunkDataBytes = 256 << 10
)

// Statuses of prompt_result.
const (
	PromptCompleted = "completed"
	PromptAborted   = "aborted"
	PromptError     = "error"
)

// Error codes of failure responses (the code member).
const (
	CodeSessionBusy = "session_busy"
	CodeStaleCursor = "stale_cursor"
)

// NegotiateProtocolCommand asks for a protocol version (2 is the only one
// accepted).
type NegotiateProtocolCommand struct {
	ID              string `json:"id,omitempty"`
	Type            string `json:"type"`
	ProtocolVersion int    `json:"protocolVersion"`
}

// ProtocolData is negotiate_protocol's data.
type ProtocolData struct {
	ProtocolVersion int `json:"protocolVersion"`
}

// AvailableCommand is one slash command as get_available_commands lists it.
type AvailableCommand struct {
	Name        string        `json:"name"`
	Source      string        `json:"source"`
	Description string        `json:"description,omitempty"`
	Aliases     []string      `json:"aliases,omitempty"`
	Input       *CommandInput `json:"input,omitempty"`
}

// CommandInput describes what a slash command takes after its name.
type CommandInput struct {
	Hint string `json:"hint,omitempty"`
}

// AvailableCommandsData is get_available_commands' data.
type AvailableCommandsData struct {
	Commands []AvailableCommand `json:"commands"`
}

// OpenSessionCommand continues the newest non-empty session of a session
// directory, or starts one there.
type OpenSessionCommand struct {
	ID         string `json:"id,omitempty"`
	Type       string `json:"type"`
	SessionDir string `json:"sessionDir"`
}

// OpenSessionData is open_session's data.
type OpenSessionData struct {
	Cancelled   bool   `json:"cancelled"`
	Resumed     bool   `json:"resumed"`
	SessionID   string `json:"sessionId"`
	SessionFile string `json:"sessionFile,omitempty"`
}

// SetEventFilterCommand selects the session events this connection gets;
// a null list lets every event through.
type SetEventFilterCommand struct {
	ID     string    `json:"id,omitempty"`
	Type   string    `json:"type"`
	Events *[]string `json:"events"`
}

// EventFilterData is set_event_filter's data: the selection in effect
// (null: every event).
type EventFilterData struct {
	Events *[]string `json:"events"`
}

// GetMessagesPageCommand asks for one page of the context's messages.
type GetMessagesPageCommand struct {
	ID     string `json:"id,omitempty"`
	Type   string `json:"type"`
	Cursor string `json:"cursor,omitempty"`
	// Limit is 1..256 messages (default 100).
	Limit *int `json:"limit,omitempty"`
}

// MessagesPageData is get_messages_page's data.
type MessagesPageData struct {
	Messages      ai.Messages `json:"messages"`
	NextCursor    string      `json:"nextCursor,omitempty"`
	TotalMessages int         `json:"totalMessages"`
}

// OMPState is what get_state adds on oh-my-pi's wire (oh-my-pi's
// RpcSessionState).
type OMPState struct {
	// FastModeEnabled: the client asked for fast mode (set_fast_mode) for
	// the current model's provider; FastModeActive: the next model call
	// is made with it.
	FastModeEnabled bool `json:"fastModeEnabled"`
	FastModeActive  bool `json:"fastModeActive"`
	// TokensPerSecond is the output rate of the last model response
	// (output tokens over its duration); null when there is none or it
	// reported no output tokens.
	TokensPerSecond *float64 `json:"tokensPerSecond"`
	// HasPendingAsyncWork: work outside a run's own turns is under way or
	// waiting (the task tool's subagents, a compaction, queued messages).
	HasPendingAsyncWork bool `json:"hasPendingAsyncWork"`
	// SystemPrompt is the system prompt of the next model call, one
	// string per section.
	SystemPrompt []string `json:"systemPrompt"`
	// DumpTools are the tools the next model call declares.
	DumpTools []DumpTool `json:"dumpTools"`
	// ContextUsage is how full the context window is; absent until a
	// response reported usage (and right after a compaction).
	ContextUsage *OMPContextUsage `json:"contextUsage,omitempty"`
}

// DumpTool is one tool as get_state's dumpTools lists it.
type DumpTool struct {
	Name        string          `json:"name"`
	Description string          `json:"description"`
	Parameters  json.RawMessage `json:"parameters"`
}

// OMPContextUsage is get_state's contextUsage on oh-my-pi's wire.
type OMPContextUsage struct {
	Tokens        int64   `json:"tokens"`
	ContextWindow int     `json:"contextWindow"`
	Percent       float64 `json:"percent"`
}

// SetFastModeCommand turns fast mode (the provider's priority processing)
// on or off.
type SetFastModeCommand struct {
	ID      string `json:"id,omitempty"`
	Type    string `json:"type"`
	Enabled bool   `json:"enabled"`
}

// FastModeData is set_fast_mode's data: whether fast mode is on, and
// whether the current model's calls use it.
type FastModeData struct {
	Enabled bool `json:"enabled"`
	Active  bool `json:"active"`
}

// HandoffCommand replaces the older history with a handoff document.
type HandoffCommand struct {
	ID                 string `json:"id,omitempty"`
	Type               string `json:"type"`
	CustomInstructions string `json:"customInstructions,omitempty"`
}

// HandoffData is handoff's data (savedPath is never set: the document is
// the compaction summary in the session).
type HandoffData struct {
	SavedPath string `json:"savedPath,omitempty"`
}

// SetSubagentSubscriptionCommand selects the subagent frames this
// connection gets: off (none, the default) or progress (subagent_lifecycle).
type SetSubagentSubscriptionCommand struct {
	ID    string `json:"id,omitempty"`
	Type  string `json:"type"`
	Level string `json:"level"`
}

// SubagentSubscriptionData is set_subagent_subscription's data.
type SubagentSubscriptionData struct {
	Level string `json:"level"`
}

// SubagentSnapshot is a task subagent under way (get_subagents).
type SubagentSnapshot struct {
	ID string `json:"id"`
	// Index is the item's position in its task call.
	Index int    `json:"index"`
	Agent string `json:"agent"`
	// AgentSource is where the agent is defined (bundled, user, project).
	AgentSource string `json:"agentSource"`
	Description string `json:"description,omitempty"`
	// Status is running while it is listed.
	Status string `json:"status"`
	// Assignment is the subagent's first message.
	Assignment string `json:"assignment,omitempty"`
	// LastUpdate is when it last changed (Unix milliseconds).
	LastUpdate       int64  `json:"lastUpdate"`
	ParentToolCallID string `json:"parentToolCallId,omitempty"`
}

// SubagentsData is get_subagents' data: the subagents under way, by index.
type SubagentsData struct {
	Subagents []SubagentSnapshot `json:"subagents"`
}

// GetSubagentMessagesCommand asks for a subagent's transcript.
type GetSubagentMessagesCommand struct {
	ID          string `json:"id,omitempty"`
	Type        string `json:"type"`
	SubagentID  string `json:"subagentId,omitempty"`
	SessionFile string `json:"sessionFile,omitempty"`
	FromByte    *int   `json:"fromByte,omitempty"`
}

// SubagentLifecycleEvent says a task subagent started or ended.
type SubagentLifecycleEvent struct {
	Type    string                   `json:"type"`
	Payload SubagentLifecyclePayload `json:"payload"`
}

// SubagentLifecyclePayload is subagent_lifecycle's payload; status is
// started, completed, failed or aborted.
type SubagentLifecyclePayload struct {
	ID               string `json:"id"`
	Agent            string `json:"agent"`
	AgentSource      string `json:"agentSource"`
	Index            int    `json:"index"`
	Status           string `json:"status"`
	Description      string `json:"description,omitempty"`
	ParentToolCallID string `json:"parentToolCallId,omitempty"`
}

func (*SubagentLifecycleEvent) EventType() string { return EventSubagentLifecycle }

// PromptResultEvent reports how the work of one accepted prompt or
// abort_and_prompt ended (oh-my-pi's wire).
type PromptResultEvent struct {
	Type string `json:"type"`
	// ID is the prompt command's id.
	ID             string             `json:"id,omitempty"`
	AgentInvoked   bool               `json:"agentInvoked"`
	Status         string             `json:"status"`
	Error          *PromptResultError `json:"error,omitempty"`
	SessionSettled bool               `json:"sessionSettled"`
}

// PromptResultError describes a run that ended in an error.
type PromptResultError struct {
	Message    string `json:"message"`
	Provider   string `json:"provider,omitempty"`
	Model      string `json:"model,omitempty"`
	HTTPStatus int    `json:"httpStatus,omitempty"`
	Retryable  bool   `json:"retryable"`
}

// SessionSettledEvent says the session is idle with nothing queued or
// pending (oh-my-pi's wire).
type SessionSettledEvent struct {
	Type string `json:"type"`
}

// RPCChunkEvent is one piece of a frame larger than MaxFrameBytes
// (protocol v2): data is the base64 of at most ChunkDataBytes of the
// frame's UTF-8 JSON; byteLength is the whole frame's length.
type RPCChunkEvent struct {
	Type       string `json:"type"`
	ChunkID    string `json:"chunkId"`
	Index      int    `json:"index"`
	Count      int    `json:"count"`
	ByteLength int    `json:"byteLength"`
	Data       string `json:"data"`
}

// RPCFrameErrorEvent replaces a frame too large to be sent even in chunks.
type RPCFrameErrorEvent struct {
	Type         string `json:"type"`
	OriginalType string `json:"originalType,omitempty"`
	Error        string `json:"error"`
}

// AvailableCommandsUpdateEvent lists the slash commands after the switch to
// oh-my-pi's wire, after a session change and after reload_resources.
type AvailableCommandsUpdateEvent struct {
	Type     string             `json:"type"`
	Commands []AvailableCommand `json:"commands"`
}

// ModelChangedEvent says the model changed; get_state has the new one.
type ModelChangedEvent struct {
	Type string `json:"type"`
}

// NoticeEvent is a message for the user about the session (oh-my-pi's
// wire): level is info, warning or error; source names what it is about.
type NoticeEvent struct {
	Type    string `json:"type"`
	Level   string `json:"level"`
	Message string `json:"message"`
	Source  string `json:"source,omitempty"`
}

func (*NoticeEvent) EventType() string                  { return EventNotice }
func (*AvailableCommandsUpdateEvent) EventType() string { return EventAvailableCommandsUpdate }
func (*ModelChangedEvent) EventType() string            { return EventModelChanged }
func (*PromptResultEvent) EventType() string            { return EventPromptResult }
func (*SessionSettledEvent) EventType() string          { return EventSessionSettled }
func (*RPCChunkEvent) EventType() string                { return EventRPCChunk }
func (*RPCFrameErrorEvent) EventType() string           { return EventRPCFrameError }
