// Package codemode is the codemode tool: the model writes a JavaScript
// program in which tools are async functions, and the program runs in an
// embedded interpreter (goja, pure Go) in a child process of the same
// binary. The child has no file system, network or process access (the
// interpreter offers none), runs under an address-space limit, a wall-time
// limit and an output limit, and reaches tools only by asking the parent,
// which runs each call as a nested tool call (tool_execution_* events
// with parentToolCallId; nestedCalls in the result). docs/mcp.md
// describes the API and the limits.
package codemode

import (
	"encoding/json"
	"os"
	"time"
)

// Name is the tool's name.
const Name = "codemode"

// Limits of one run.
const (
	// MemoryLimit is the child's data-segment limit (RLIMIT_DATA: the
	// memory it can write, its heap included), as pi runs its QuickJS
	// workers at 256 MB; the Go runtime beside the interpreter needs a
	// little more, so the collector works to keep the heap under
	// HeapLimit and the process fails past MemoryLimit.
	MemoryLimit = 320 << 20
	HeapLimit   = 256 << 20
	// Timeout bounds a run's wall time (tool calls included).
	Timeout = 5 * time.Minute
	// OutputLimit bounds the logs and the result the model gets back.
	OutputLimit = 50 * 1024
)

// ChildEnv is the environment variable that makes the binary run as a
// codemode child (its value is ignored beyond being set to "1").
const ChildEnv = "PISCES_CODEMODE_CHILD"

// IsChild reports whether this process was started as a codemode child.
func IsChild() bool { return os.Getenv(ChildEnv) == "1" }

// Messages between the parent and the child, one JSON object per line.

// request starts a run (parent → child, first line).
type request struct {
	Code      string     `json:"code"`
	Functions []function `json:"functions"`
	TimeoutMs int64      `json:"timeoutMs"`
}

// function is a tool offered to the program.
type function struct {
	Name   string `json:"name"`   // the tool's name (mcp__server__tool)
	Server string `json:"server"` // the server's name ("" for other tools)
	Tool   string `json:"tool"`   // the server's own tool name
}

// message is a line from the child: a call, or the end of the run.
type message struct {
	Type string `json:"type"` // "call" or "done"
	// call
	ID   int             `json:"id,omitempty"`
	Name string          `json:"name,omitempty"`
	Args json.RawMessage `json:"args,omitempty"`
	// done
	Result    json.RawMessage `json:"result,omitempty"` // the program's value as JSON (absent: undefined)
	Logs      []string        `json:"logs,omitempty"`
	Error     string          `json:"error,omitempty"`
	Truncated bool            `json:"truncated,omitempty"`
}

// reply answers a call (parent → child).
type reply struct {
	ID         int             `json:"id"`
	Text       string          `json:"text"`
	Structured json.RawMessage `json:"structured,omitempty"`
	IsError    bool            `json:"isError"`
}
