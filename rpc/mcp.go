package rpc

// CmdMCPStatus asks for the MCP servers' states.
const CmdMCPStatus = "mcp_status"

// EventMCPServerChanged reports a change of an MCP server's state or
// tools.
const EventMCPServerChanged = "mcp_server_changed"

// MCPServerInfo is one MCP server as mcp_status, get_tools and
// mcp_server_changed describe it.
type MCPServerInfo struct {
	Name string `json:"name"`
	// Scope is where its entry comes from: "global" (the agent dir's
	// mcp.json), "project" (.pi/ or .pisces/ mcp.json) or "flag"
	// (--mcp-config).
	Scope string `json:"scope"`
	// State: "connecting", "connected", "failed", "disabled" or "closed".
	State string `json:"state"`
	// Exposure is the server's: "codemode", "deferred", "direct" or
	// "hidden" (toolExposure may change it per tool).
	Exposure    string `json:"exposure"`
	Description string `json:"description,omitempty"`
	// Command is the command line (stdio) or the URL (HTTP).
	Command string `json:"command"`
	// ToolCount is the number of tools the server offers (hidden ones
	// included); Tools are their own names.
	ToolCount int      `json:"toolCount"`
	Tools     []string `json:"tools"`
	Resources bool     `json:"resources,omitempty"`
	// Error is the last failure ("spawn X ENOENT", "MCP connection
	// closed", "timed out after 1m0s"), when failed.
	Error string `json:"error,omitempty"`
	// Note says what of the entry is not honoured ("MCP OAuth is not
	// supported yet; connected without it").
	Note string `json:"note,omitempty"`
}

// MCPStatusData is mcp_status' data.
type MCPStatusData struct {
	Servers []MCPServerInfo `json:"servers"`
	// Problems are the configuration entries that were skipped.
	Problems []string `json:"problems"`
}

// MCPServerChangedEvent reports a server's new state.
type MCPServerChangedEvent struct {
	Type   string        `json:"type"`
	Server MCPServerInfo `json:"server"`
}

// EventType returns "mcp_server_changed".
func (*MCPServerChangedEvent) EventType() string { return EventMCPServerChanged }

// NotifyEvent is an extension_ui_request of method "notify" that Pisces
// itself sends (MCP servers that need attention): a message to show, no
// answer expected.
type NotifyEvent struct {
	Type       string `json:"type"`
	ID         string `json:"id"`
	Method     string `json:"method"`
	Message    string `json:"message"`
	NotifyType string `json:"notifyType"`
}

// EventType returns "extension_ui_request".
func (*NotifyEvent) EventType() string { return "extension_ui_request" }
