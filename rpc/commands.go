package rpc

import (
	"encoding/json"

	"github.com/pisces-agent/pisces/internal/ai"
	"github.com/pisces-agent/pisces/internal/browse"
	"github.com/pisces-agent/pisces/internal/jsonx"
	"github.com/pisces-agent/pisces/internal/resources"
)

// Command names.
const (
	CmdPrompt                     = "prompt"
	CmdSteer                      = "steer"
	CmdFollowUp                   = "follow_up"
	CmdAbort                      = "abort"
	CmdAbortAndPrompt             = "abort_and_prompt"
	CmdClearQueue                 = "clear_queue"
	CmdNewSession                 = "new_session"
	CmdGetState                   = "get_state"
	CmdGetMessages                = "get_messages"
	CmdSetModel                   = "set_model"
	CmdCycleModel                 = "cycle_model"
	CmdGetAvailableModels         = "get_available_models"
	CmdSetThinkingLevel           = "set_thinking_level"
	CmdCycleThinkingLevel         = "cycle_thinking_level"
	CmdGetAvailableThinkingLevels = "get_available_thinking_levels"
	CmdSetSteeringMode            = "set_steering_mode"
	CmdSetFollowUpMode            = "set_follow_up_mode"
	CmdSetInterruptMode           = "set_interrupt_mode"
	CmdSetAutoCompaction          = "set_auto_compaction"
	CmdSetAutoRetry               = "set_auto_retry"
	CmdAbortRetry                 = "abort_retry"
	CmdBash                       = "bash"
	CmdAbortBash                  = "abort_bash"
	CmdGetSessionStats            = "get_session_stats"
	CmdSwitchSession              = "switch_session"
	CmdFork                       = "fork"
	CmdClone                      = "clone"
	CmdGetForkMessages            = "get_fork_messages"
	CmdGetEntries                 = "get_entries"
	CmdGetTree                    = "get_tree"
	CmdGetLastAssistantText       = "get_last_assistant_text"
	CmdSetSessionName             = "set_session_name"
	// Older names: pi's before January 2026 (branch, get_branch_messages)
	// and oh-my-pi's (queue_message, set_queue_mode).
	CmdBranch            = "branch"              // = fork
	CmdGetBranchMessages = "get_branch_messages" // = get_fork_messages
	CmdQueueMessage      = "queue_message"       // = steer
	CmdSetQueueMode      = "set_queue_mode"      // = set_steering_mode
	// compact is pi's; the rest are not in pi 1.5: browsing, tools and
	// resources as pi's forks offer them, and the pisces fork's commands.
	CmdCompact            = "compact"
	CmdNavigateTree       = "navigate_tree"
	CmdSetLabel           = "set_label"
	CmdSetEntryLabel      = "set_entry_label"
	CmdAbortBranchSummary = "abort_branch_summary"
	CmdGetSessionTree     = "get_session_tree"
	CmdListSessions       = "list_sessions"
	CmdGetContextUsage    = "get_context_usage"
	CmdGetTools           = "get_tools"
	CmdSetActiveTools     = "set_active_tools"
	CmdGetCommands        = "get_commands"
	CmdExportHTML         = "export_html"
	CmdReloadResources    = "reload_resources"
	CmdSetTodos           = "set_todos"
	CmdRenameSession      = "rename_session"
	CmdSetHostTools       = "set_host_tools"
	CmdDeleteSession      = "delete_session"
	CmdListDirectory      = "list_directory"
	// The extension UI reply (not a command; routed to the pending request).
	TypeExtensionUIResponse = "extension_ui_response"
)

// ImageInput is an image attached to a prompt: pi's {type:"image", data,
// mimeType}, an image by address {type:"image", url} (the form messages
// carry it in), or the form of pi's older RPC documentation (January 2026)
// and oh-my-pi's, {type:"image", source:{type:"base64", mediaType, data}}
// or {type:"image", source:{type:"url", url}}. URLs are http or https
// (docs/rpc.md, "Images").
type ImageInput struct {
	Type     string       `json:"type"`
	Data     string       `json:"data,omitempty"`
	MimeType string       `json:"mimeType,omitempty"`
	URL      string       `json:"url,omitempty"`
	Source   *ImageSource `json:"source,omitempty"`
}

// ImageSource is the source of an image in the {type:"image", source}
// form: base64 data or a URL.
type ImageSource struct {
	Type      string `json:"type"`
	MediaType string `json:"mediaType,omitempty"`
	Data      string `json:"data,omitempty"`
	URL       string `json:"url,omitempty"`
}

// PromptCommand starts a run or queues a message.
type PromptCommand struct {
	ID                string       `json:"id,omitempty"`
	Type              string       `json:"type"`
	Message           string       `json:"message"`
	Images            []ImageInput `json:"images,omitempty"`
	StreamingBehavior string       `json:"streamingBehavior,omitempty"`
}

// MessageCommand is steer, follow_up, abort_and_prompt and queue_message.
type MessageCommand struct {
	ID      string       `json:"id,omitempty"`
	Type    string       `json:"type"`
	Message string       `json:"message"`
	Images  []ImageInput `json:"images,omitempty"`
}

// NewSessionCommand starts a new session, in the directory Cwd when it is
// set (a project picker: the session gets that project's resources under
// its trust decision).
type NewSessionCommand struct {
	ID            string `json:"id,omitempty"`
	Type          string `json:"type"`
	ParentSession string `json:"parentSession,omitempty"`
	// Cwd is the new session's working directory: absolute, ~, or relative
	// to the current session's; "" keeps the current one.
	Cwd string `json:"cwd,omitempty"`
}

// SetModelCommand selects a model.
type SetModelCommand struct {
	ID       string `json:"id,omitempty"`
	Type     string `json:"type"`
	Provider string `json:"provider"`
	ModelID  string `json:"modelId"`
}

// SetThinkingLevelCommand sets the thinking level.
type SetThinkingLevelCommand struct {
	ID    string `json:"id,omitempty"`
	Type  string `json:"type"`
	Level string `json:"level"`
}

// SetModeCommand is set_steering_mode, set_follow_up_mode,
// set_interrupt_mode and set_queue_mode.
type SetModeCommand struct {
	ID   string `json:"id,omitempty"`
	Type string `json:"type"`
	Mode string `json:"mode"`
}

// SetEnabledCommand is set_auto_compaction and set_auto_retry.
type SetEnabledCommand struct {
	ID      string `json:"id,omitempty"`
	Type    string `json:"type"`
	Enabled bool   `json:"enabled"`
}

// BashCommand runs a user shell command.
type BashCommand struct {
	ID                 string `json:"id,omitempty"`
	Type               string `json:"type"`
	Command            string `json:"command"`
	ExcludeFromContext bool   `json:"excludeFromContext,omitempty"`
}

// SwitchSessionCommand opens another session file.
type SwitchSessionCommand struct {
	ID          string `json:"id,omitempty"`
	Type        string `json:"type"`
	SessionPath string `json:"sessionPath"`
}

// ForkCommand forks from a user message (also "branch").
type ForkCommand struct {
	ID      string `json:"id,omitempty"`
	Type    string `json:"type"`
	EntryID string `json:"entryId"`
}

// GetEntriesCommand lists raw entries after since.
type GetEntriesCommand struct {
	ID    string `json:"id,omitempty"`
	Type  string `json:"type"`
	Since string `json:"since,omitempty"`
}

// SetSessionNameCommand names the session.
type SetSessionNameCommand struct {
	ID   string `json:"id,omitempty"`
	Type string `json:"type"`
	Name string `json:"name"`
}

// SimpleCommand is any command without fields.
type SimpleCommand struct {
	ID   string `json:"id,omitempty"`
	Type string `json:"type"`
}

// Response answers a command.
type Response struct {
	ID      string          `json:"id,omitempty"`
	Type    string          `json:"type"`
	Command string          `json:"command"`
	Success bool            `json:"success"`
	Data    json.RawMessage `json:"data,omitempty"`
	Error   string          `json:"error,omitempty"`
	// Code classifies some failures on oh-my-pi's wire (CodeSessionBusy,
	// CodeStaleCursor).
	Code string `json:"code,omitempty"`
}

// MarshalJSON writes {id?, type, command, success, data?} or
// {id?, type, command, success:false, error}. Data is written as it is,
// without being parsed again: a large or deeply nested answer (a 100000
// entry tree) costs no second pass and meets no decoder depth limit.
func (r Response) MarshalJSON() ([]byte, error) {
	head, tail := r.Frame()
	b := make([]byte, 0, len(head)+len(r.Data)+len(tail))
	b = append(b, head...)
	b = append(b, r.Data...)
	return append(b, tail...), nil
}

// Frame returns the bytes that go before and after Data, so that a large
// answer can be written without being copied into one buffer.
func (r Response) Frame() (head, tail []byte) {
	var b []byte
	b = append(b, '{')
	if r.ID != "" {
		b = append(b, `"id":`...)
		b = append(b, jsonx.MustMarshal(r.ID)...)
		b = append(b, ',')
	}
	b = append(b, `"type":"response","command":`...)
	b = append(b, jsonx.MustMarshal(r.Command)...)
	if r.Success {
		b = append(b, `,"success":true`...)
	} else {
		b = append(b, `,"success":false`...)
	}
	if len(r.Data) > 0 {
		b = append(b, `,"data":`...)
	}
	var t []byte
	if r.Error != "" || !r.Success {
		t = append(t, `,"error":`...)
		t = append(t, jsonx.MustMarshal(r.Error)...)
		if r.Code != "" {
			t = append(t, `,"code":`...)
			t = append(t, jsonx.MustMarshal(r.Code)...)
		}
	}
	return b, append(t, '}')
}

// PromptData is the data of a prompt, steer or follow_up response.
// On oh-my-pi's wire a prompt's response has no data, or only
// agentInvoked:false when no run was started (an extension command).
type PromptData struct {
	Disposition  string `json:"disposition,omitempty"`
	AgentInvoked *bool  `json:"agentInvoked,omitempty"`
}

// SessionState is get_state's data (pi's RpcSessionState plus the pisces
// fork's interruptMode, queuedMessageCount and todoPhases, and oh-my-pi's
// queueMode).
type SessionState struct {
	Model                 *ai.Model `json:"model"`
	ThinkingLevel         string    `json:"thinkingLevel"`
	IsStreaming           bool      `json:"isStreaming"`
	IsCompacting          bool      `json:"isCompacting"`
	SteeringMode          string    `json:"steeringMode"`
	FollowUpMode          string    `json:"followUpMode"`
	SessionFile           string    `json:"sessionFile,omitempty"`
	SessionID             string    `json:"sessionId"`
	SessionName           string    `json:"sessionName,omitempty"`
	AutoCompactionEnabled bool      `json:"autoCompactionEnabled"`
	MessageCount          int       `json:"messageCount"`
	PendingMessageCount   int       `json:"pendingMessageCount"`
	InterruptMode         string    `json:"interruptMode"`
	QueuedMessageCount    int       `json:"queuedMessageCount"`
	QueueMode             string    `json:"queueMode"`
	// TodoPhases is the todo plan (the pisces fork's field).
	TodoPhases json.RawMessage `json:"todoPhases"`
	// IsSettled (oh-my-pi's wire only): no run, nothing queued.
	IsSettled *bool `json:"isSettled,omitempty"`
	// OMPState holds the members only oh-my-pi's wire sends.
	*OMPState
}

// MessagesData is get_messages' data.
type MessagesData struct {
	Messages ai.Messages `json:"messages"`
}

// ModelsData is get_available_models' data.
type ModelsData struct {
	Models []*ai.Model `json:"models"`
}

// CycleModelData is cycle_model's data (null when there is nothing to cycle).
type CycleModelData struct {
	Model         *ai.Model `json:"model"`
	ThinkingLevel string    `json:"thinkingLevel"`
	IsScoped      bool      `json:"isScoped"`
}

// LevelData is cycle_thinking_level's data.
type LevelData struct {
	Level string `json:"level"`
}

// LevelsData is get_available_thinking_levels' data.
type LevelsData struct {
	Levels []string `json:"levels"`
}

// ClearQueueData is clear_queue's data.
type ClearQueueData struct {
	Steering []string `json:"steering"`
	FollowUp []string `json:"followUp"`
}

// CancelledData is the data of new_session, switch_session and clone.
type CancelledData struct {
	Cancelled bool `json:"cancelled"`
}

// ForkData is fork's data.
type ForkData struct {
	Text      string `json:"text"`
	Cancelled bool   `json:"cancelled"`
}

// ForkMessage is one entry of get_fork_messages.
type ForkMessage struct {
	EntryID string `json:"entryId"`
	Text    string `json:"text"`
}

// ForkMessagesData is get_fork_messages' data.
type ForkMessagesData struct {
	Messages []ForkMessage `json:"messages"`
}

// BashData is the bash command's data.
type BashData struct {
	Output         string `json:"output"`
	ExitCode       *int   `json:"exitCode,omitempty"`
	Cancelled      bool   `json:"cancelled"`
	Truncated      bool   `json:"truncated"`
	FullOutputPath string `json:"fullOutputPath,omitempty"`
}

// TokenStats is the tokens member of get_session_stats.
type TokenStats struct {
	Input      int64 `json:"input"`
	Output     int64 `json:"output"`
	CacheRead  int64 `json:"cacheRead"`
	CacheWrite int64 `json:"cacheWrite"`
	Total      int64 `json:"total"`
}

// SessionStats is get_session_stats' data.
type SessionStats struct {
	SessionFile       string             `json:"sessionFile,omitempty"`
	SessionID         string             `json:"sessionId"`
	UserMessages      int                `json:"userMessages"`
	AssistantMessages int                `json:"assistantMessages"`
	ToolCalls         int                `json:"toolCalls"`
	ToolResults       int                `json:"toolResults"`
	TotalMessages     int                `json:"totalMessages"`
	Tokens            TokenStats         `json:"tokens"`
	Cost              float64            `json:"cost"`
	ContextUsage      *StatsContextUsage `json:"contextUsage,omitempty"`
	Subagents         *SubagentStats     `json:"subagents,omitempty"`
}

// EntriesData is get_entries' data.
type EntriesData struct {
	Entries []json.RawMessage `json:"entries"`
	LeafID  *string           `json:"leafId"`
}

// TreeNode is one node of get_tree (pi's raw form).
type TreeNode struct {
	Entry          json.RawMessage `json:"entry"`
	Children       []*TreeNode     `json:"children"`
	Label          string          `json:"label,omitempty"`
	LabelTimestamp string          `json:"labelTimestamp,omitempty"`
}

// TreeData is get_tree's data.
type TreeData struct {
	Tree   []*TreeNode `json:"tree"`
	LeafID *string     `json:"leafId"`
}

// TextData is get_last_assistant_text's data; Text is null when there is
// no assistant text.
type TextData struct {
	Text *string `json:"text"`
}

// CompactCommand compacts the session.
type CompactCommand struct {
	ID                 string `json:"id,omitempty"`
	Type               string `json:"type"`
	CustomInstructions string `json:"customInstructions,omitempty"`
}

// CompactionResult is compact's data and compaction_end's result.
type CompactionResult struct {
	Summary              string          `json:"summary"`
	FirstKeptEntryID     string          `json:"firstKeptEntryId"`
	TokensBefore         int64           `json:"tokensBefore"`
	EstimatedTokensAfter int64           `json:"estimatedTokensAfter"`
	Details              json.RawMessage `json:"details,omitempty"`
	Usage                *ai.Usage       `json:"usage,omitempty"`
}

// ContextUsage is how full the context window is (get_context_usage).
type ContextUsage struct {
	Tokens         int64   `json:"tokens"`
	ContextWindow  int     `json:"contextWindow"`
	Percent        float64 `json:"percent"`
	UsageTokens    int64   `json:"usageTokens"`
	TrailingTokens int64   `json:"trailingTokens"`
	LastUsageIndex *int    `json:"lastUsageIndex"`
}

// ContextUsageData is get_context_usage's data ({} when not known yet).
type ContextUsageData struct {
	Usage *ContextUsage `json:"usage,omitempty"`
}

// StatsContextUsage is get_session_stats' contextUsage (tokens and percent
// are null right after a compaction, until the next response).
type StatsContextUsage struct {
	Tokens        *int64   `json:"tokens"`
	ContextWindow int      `json:"contextWindow"`
	Percent       *float64 `json:"percent"`
}

// NavigateTreeCommand moves the session's leaf.
type NavigateTreeCommand struct {
	ID                  string `json:"id,omitempty"`
	Type                string `json:"type"`
	TargetID            string `json:"targetId"`
	Summarize           bool   `json:"summarize,omitempty"`
	CustomInstructions  string `json:"customInstructions,omitempty"`
	ReplaceInstructions bool   `json:"replaceInstructions,omitempty"`
	Label               string `json:"label,omitempty"`
}

// NavigateSummaryEntry is the branch summary a navigation wrote.
type NavigateSummaryEntry struct {
	ID            string `json:"id"`
	Summary       string `json:"summary"`
	FromExtension bool   `json:"fromExtension"`
}

// NavigateTreeData is navigate_tree's data.
type NavigateTreeData struct {
	Cancelled    bool                  `json:"cancelled"`
	Aborted      bool                  `json:"aborted,omitempty"`
	EditorText   *string               `json:"editorText,omitempty"`
	SummaryEntry *NavigateSummaryEntry `json:"summaryEntry,omitempty"`
}

// SetLabelCommand labels an entry (PR #1762's spelling).
type SetLabelCommand struct {
	ID      string `json:"id,omitempty"`
	Type    string `json:"type"`
	EntryID string `json:"entryId"`
	Label   string `json:"label,omitempty"`
}

// SetEntryLabelCommand labels an entry: set_entry_label, an alias of
// set_label whose entry field is targetId.
type SetEntryLabelCommand struct {
	ID       string `json:"id,omitempty"`
	Type     string `json:"type"`
	TargetID string `json:"targetId"`
	Label    string `json:"label,omitempty"`
}

// ToolInfo describes one tool.
type ToolInfo struct {
	Name        string          `json:"name"`
	Description string          `json:"description"`
	Parameters  json.RawMessage `json:"parameters"`
	// Server and Exposure are set on an MCP server's tools.
	Server   string `json:"server,omitempty"`
	Exposure string `json:"exposure,omitempty"`
}

// ToolsData is get_tools' data.
type ToolsData struct {
	ActiveToolNames []string   `json:"activeToolNames"`
	AllTools        []ToolInfo `json:"allTools"`
	// MCPServers are the configured MCP servers (failed ones with their
	// error); absent when none is configured.
	MCPServers []MCPServerInfo `json:"mcpServers,omitempty"`
}

// SetActiveToolsCommand activates exactly the named tools.
type SetActiveToolsCommand struct {
	ID        string   `json:"id,omitempty"`
	Type      string   `json:"type"`
	ToolNames []string `json:"toolNames"`
}

// ActiveToolsData is set_active_tools' data.
type ActiveToolsData struct {
	ActiveToolNames []string `json:"activeToolNames"`
}

// SlashCommand is one entry of get_commands: pi 1.5's sourceInfo and the
// older location/path (pi 0.50–0.61) side by side.
type SlashCommand = resources.CommandInfo

// CommandsData is get_commands' and reload_resources' data.
type CommandsData struct {
	Commands []SlashCommand `json:"commands"`
}

// SetTodosCommand replaces the todo phases (the pisces fork's set_todos).
type SetTodosCommand struct {
	ID     string          `json:"id,omitempty"`
	Type   string          `json:"type"`
	Phases json.RawMessage `json:"phases"`
}

// TodosData is set_todos' data.
type TodosData struct {
	TodoPhases json.RawMessage `json:"todoPhases"`
}

// SubagentStats is get_session_stats' subagents member: the task tool's
// subagents (their usage is not in tokens and cost, which keep pi's meaning).
type SubagentStats struct {
	Count  int     `json:"count"`
	Tokens int64   `json:"tokens"`
	Cost   float64 `json:"cost"`
}

// GetSessionTreeCommand asks for the browsing projection of the tree.
type GetSessionTreeCommand struct {
	ID   string `json:"id,omitempty"`
	Type string `json:"type"`
	// View "" is the plain view (every entry); "browse" is the projection
	// proposed in pi PR #1762 (bookkeeping entries hidden).
	View string `json:"view,omitempty"`
	// Flat returns the nodes as one depth-first list with parentId and no
	// children (also on get_tree).
	Flat bool `json:"flat,omitempty"`
}

// GetTreeCommand asks for pi's raw tree.
type GetTreeCommand struct {
	ID   string `json:"id,omitempty"`
	Type string `json:"type"`
	Flat bool   `json:"flat,omitempty"`
}

// ListSessionsCommand lists sessions.
type ListSessionsCommand struct {
	ID          string `json:"id,omitempty"`
	Type        string `json:"type"`
	Scope       string `json:"scope,omitempty"` // "cwd" (default), "current", "all"
	SessionDir  string `json:"sessionDir,omitempty"`
	Query       string `json:"query,omitempty"`
	Limit       int    `json:"limit,omitempty"`
	Offset      int    `json:"offset,omitempty"`
	IncludeText *bool  `json:"includeText,omitempty"`
}

// SessionListItem is one session of list_sessions.
type SessionListItem = browse.SessionItem

// ListSessionsData is list_sessions' data.
type ListSessionsData = browse.ListResult

// RenameSessionCommand names any session.
type RenameSessionCommand struct {
	ID          string `json:"id,omitempty"`
	Type        string `json:"type"`
	SessionPath string `json:"sessionPath"`
	Name        string `json:"name"`
}

// DeleteSessionCommand moves a session file to the trash.
type DeleteSessionCommand struct {
	ID          string `json:"id,omitempty"`
	Type        string `json:"type"`
	SessionPath string `json:"sessionPath"`
}

// DeleteSessionData is delete_session's data: where the file went.
type DeleteSessionData struct {
	TrashPath string `json:"trashPath"`
}

// ExportHTMLCommand exports the current branch as HTML: written to a file
// (OutputPath, or beside the session file), or with Inline returned in the
// response and written nowhere (a browser saves it as a download).
type ExportHTMLCommand struct {
	ID         string `json:"id,omitempty"`
	Type       string `json:"type"`
	OutputPath string `json:"outputPath,omitempty"`
	Inline     bool   `json:"inline,omitempty"`
}

// ExportHTMLData is export_html's data: Path of the file written, or with
// inline the page itself (HTML) and the file name it would have been
// written under (FileName).
type ExportHTMLData struct {
	Path     string `json:"path,omitempty"`
	HTML     string `json:"html,omitempty"`
	FileName string `json:"fileName,omitempty"`
}

// SessionTreeEntry is an entry of get_session_tree (the plain view's
// fields, then pi PR #1762's fields where the entry type has them, in view
// "browse").
type SessionTreeEntry struct {
	ID                string          `json:"id"`
	ParentID          *string         `json:"parentId"`
	Type              string          `json:"type"`
	Timestamp         string          `json:"timestamp"`
	Label             string          `json:"label,omitempty"`
	Preview           *string         `json:"preview,omitempty"`
	Role              string          `json:"role,omitempty"`
	RawRole           string          `json:"rawRole,omitempty"`
	StopReason        string          `json:"stopReason,omitempty"`
	ErrorMessage      string          `json:"errorMessage,omitempty"`
	ToolName          string          `json:"toolName,omitempty"`
	ToolArgs          json.RawMessage `json:"toolArgs,omitempty"`
	FormattedToolCall *string         `json:"formattedToolCall,omitempty"`
	TokensBefore      *int64          `json:"tokensBefore,omitempty"`
	Provider          *string         `json:"provider,omitempty"`
	ModelID           *string         `json:"modelId,omitempty"`
	ThinkingLevel     *string         `json:"thinkingLevel,omitempty"`
	Summary           *string         `json:"summary,omitempty"`
	CustomType        *string         `json:"customType,omitempty"`
}

// SessionTreeNode is a node of get_session_tree; with flat:true the nodes
// have no children member.
type SessionTreeNode struct {
	Entry    SessionTreeEntry   `json:"entry"`
	Children []*SessionTreeNode `json:"children,omitempty"`
}

// SessionTreeData is get_session_tree's data.
type SessionTreeData struct {
	LeafID *string            `json:"leafId"`
	Nodes  []*SessionTreeNode `json:"nodes"`
}

// HostToolDef declares a tool the client executes.
type HostToolDef struct {
	Name        string          `json:"name"`
	Label       string          `json:"label,omitempty"`
	Description string          `json:"description"`
	Parameters  json.RawMessage `json:"parameters"`
	Hidden      bool            `json:"hidden,omitempty"`
	// LoadMode is "essential" (the default: active, offered to the model)
	// or "discoverable" (registered but not active until set_active_tools).
	LoadMode string `json:"loadMode,omitempty"`
}

// SetHostToolsCommand replaces the host tools.
type SetHostToolsCommand struct {
	ID    string        `json:"id,omitempty"`
	Type  string        `json:"type"`
	Tools []HostToolDef `json:"tools"`
}

// HostToolsData is set_host_tools' data.
type HostToolsData struct {
	ToolNames []string `json:"toolNames"`
}

// ListDirectoryCommand lists the directories in a directory (a web UI's
// project picker).
type ListDirectoryCommand struct {
	ID   string `json:"id,omitempty"`
	Type string `json:"type"`
	// Path is absolute, starts with ~, or is relative to the session's
	// directory; "" is the home directory.
	Path string `json:"path,omitempty"`
}

// ListDirectoryData is list_directory's data.
type ListDirectoryData struct {
	AbsolutePath string           `json:"absolutePath"`
	Entries      []DirectoryEntry `json:"entries"`
}

// DirectoryEntry is one directory in list_directory's answer (dotfiles
// are left out; isDirectory is always true).
type DirectoryEntry struct {
	Name        string `json:"name"`
	IsDirectory bool   `json:"isDirectory"`
}
