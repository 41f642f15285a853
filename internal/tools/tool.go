// Package tools holds the built-in tools (read, write, edit, bash, grep,
// find, ls) and the interface every tool implements.
package tools

import (
	"context"
	"encoding/json"

	"github.com/pisces-agent/pisces/internal/ai"
)

// Result is what a tool returns: content for the model, optional details for
// clients, and whether it is an error the model should see.
type Result struct {
	Content []ai.Content
	Details json.RawMessage // any JSON value; nil when absent
	IsError bool
	// StructuredContent is an MCP tool's structured result (nil when
	// absent); clients see it beside the content.
	StructuredContent json.RawMessage
	// NestedCalls records the calls the tool made through RunNested
	// ({calls:[{id, name, status}], complete}); nil when none.
	NestedCalls json.RawMessage
}

// ErrorResult is a failure the model should see.
func ErrorResult(msg string) Result {
	return Result{Content: []ai.Content{ai.Text(msg)}, IsError: true}
}

// TextResult is a plain successful text result.
func TextResult(s string) Result { return Result{Content: []ai.Content{ai.Text(s)}} }

// Call is one invocation of a tool.
type Call struct {
	ID   string
	Args json.RawMessage // the model's arguments object
	// OnUpdate, when set, receives the accumulated partial result while the
	// tool runs (bash streams its output this way).
	OnUpdate func(partial Result)
	// RunNested, when set, runs a call the tool makes on the model's
	// behalf (codemode's calls) as a nested tool call: run is called
	// between tool_execution_start and tool_execution_end events that
	// carry this call's id as parentToolCallId.
	RunNested func(ctx context.Context, id, name string, args json.RawMessage, run func(context.Context) Result) Result
}

// Tool is a callable tool. Execute returns a Go error only for broken
// infrastructure; anything the model should read (bad arguments, a missing
// file, a failing command) is a Result with IsError set.
type Tool interface {
	Name() string
	Description() string
	Parameters() json.RawMessage // JSON Schema of the arguments object
	Execute(ctx context.Context, call Call) (Result, error)
}

// Env is what the built-in tools need to know about their surroundings.
type Env struct {
	Cwd                string   // working directory; relative paths resolve here
	ShellPath          string   // settings shellPath; empty = /bin/bash, bash on PATH, sh
	ShellCommandPrefix string   // settings shellCommandPrefix, prepended with "\n"
	AgentDir           string   // <agentDir>/bin is prepended to PATH for bash
	ExtraEnv           []string // extra KEY=VALUE pairs for bash
	// Spills records bash's spill files so that their owner can delete
	// them when it ends (nil: not recorded).
	Spills *SpillFiles
	// Files, when set, serves the text of the files read, edit and write
	// work on instead of the disk (an editor whose unsaved buffers are
	// the truth); nil: the disk.
	Files *TextFiles
	// Commands, when set, runs bash's commands in Pisces' place (an
	// editor's terminals); nil: bash runs them as its own children.
	Commands CommandRunner
}

// CommandRunner runs bash's commands somewhere other than in a child
// process of Pisces: an ACP editor's terminals.
type CommandRunner interface {
	// RunCommand runs the command for the tool call callID and returns
	// once it has ended, with its output (stdout and stderr; the runner
	// may cut it at the start) and exit code (-1 when a signal ended
	// it). When ctx ends first, the command is killed and RunCommand
	// returns what it printed. An error means it could not be run.
	RunCommand(ctx context.Context, callID string, c RemoteCommand) (output string, exitCode int, err error)
}

// RemoteCommand is a command a CommandRunner runs: Shell with Args, in
// Cwd, with Env (KEY=VALUE) set on top of the runner's environment.
type RemoteCommand struct {
	Shell string
	Args  []string
	Cwd   string
	Env   []string
}

// TextFiles is where the text tools read and write text files when the
// disk is not the truth. A nil function leaves that side to the disk.
// read falls back to the disk when Read fails (and for images); edit
// uses the files only when both are set.
type TextFiles struct {
	// Read returns the whole text of the file at the absolute path abs.
	Read func(ctx context.Context, abs string) (string, error)
	// Write replaces (or creates) the file at abs with text.
	Write func(ctx context.Context, abs, text string) error
}

// Spec returns the tool as declared to a model.
func Spec(t Tool) ai.ToolSpec {
	return ai.ToolSpec{Name: t.Name(), Description: t.Description(), Parameters: t.Parameters()}
}
