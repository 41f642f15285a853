package task

import (
	"bytes"
	"context"
	_ "embed"
	"encoding/json"
	"fmt"
	"sync"

	"github.com/pisces-agent/pisces/internal/ai"
	"github.com/pisces-agent/pisces/internal/jsonx"
	"github.com/pisces-agent/pisces/internal/tools"
)

// SubmitResultName is the name of the tool a subagent finishes with.
const SubmitResultName = "submit_result"

// MaxSubmitReminders is how many times a subagent that stops without
// calling submit_result is reminded before it ends with exit code 1.
const MaxSubmitReminders = 3

//go:embed submit_result.md
var submitResultDescription string

// SubmitResultTool is the submit_result tool of one subagent run. The core
// creates one per RunSubagent call (NewSubmitResultTool), adds it to the
// subagent's tools, and after each time the subagent's run ends asks
// NextReminder whether to continue it with a reminder; at the end Outcome
// gives the Result, Error and ExitCode of the SubagentOutcome.
type SubmitResultTool struct {
	schema json.RawMessage

	mu        sync.Mutex
	submitted bool
	data      json.RawMessage
	errMsg    string
	reminders int
}

// NewSubmitResultTool returns a fresh submit_result tool. schema, when not
// empty, is the task's output schema (the spec's Schema); it is shown in
// the tool's description.
func NewSubmitResultTool(schema json.RawMessage) *SubmitResultTool {
	if s := bytes.TrimSpace(schema); len(s) == 0 || string(s) == "null" {
		schema = nil
	}
	return &SubmitResultTool{schema: schema}
}

func (t *SubmitResultTool) Name() string { return SubmitResultName }

func (t *SubmitResultTool) Description() string {
	if t.schema == nil {
		return submitResultDescription
	}
	return submitResultDescription + "\n\nresult.data must match this JSON Type Definition schema:\n" + string(t.schema)
}

func (t *SubmitResultTool) Parameters() json.RawMessage {
	return json.RawMessage(`{"type":"object","properties":{"result":{"type":"object","description":"Exactly one of data (success) or error (failure).","properties":{"data":{"description":"Your final result: the report, answer or structured data the task asked for."},"error":{"type":"string","description":"Why the task could not be completed."}}}},"required":["result"]}`)
}

func (t *SubmitResultTool) Execute(ctx context.Context, call tools.Call) (tools.Result, error) {
	var args struct {
		Result map[string]json.RawMessage `json:"result"`
	}
	if err := json.Unmarshal(call.Args, &args); err != nil || args.Result == nil {
		return tools.ErrorResult(`Invalid arguments for submit_result: expected {"result": {"data": ...}} or {"result": {"error": "..."}}`), nil
	}
	data, hasData := args.Result["data"]
	rawErr, hasErr := args.Result["error"]
	if hasErr && string(bytes.TrimSpace(rawErr)) == "null" {
		hasErr = false
	}
	switch {
	case hasData && hasErr:
		return tools.ErrorResult("Invalid arguments for submit_result: give either result.data or result.error, not both"), nil
	case !hasData && !hasErr:
		return tools.ErrorResult(`Invalid arguments for submit_result: result needs "data" (success) or "error" (failure)`), nil
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	t.submitted = true
	if hasErr {
		var msg string
		if err := json.Unmarshal(rawErr, &msg); err != nil {
			msg = string(rawErr)
		}
		if msg == "" {
			msg = "the subagent reported an error without a message"
		}
		t.data, t.errMsg = nil, msg
		return tools.Result{Content: []ai.Content{ai.Text("Failure recorded. Stop here.")},
			Details: jsonx.MustMarshal(map[string]any{"status": "error", "error": msg})}, nil
	}
	t.data, t.errMsg = append(json.RawMessage(nil), bytes.TrimSpace(data)...), ""
	return tools.Result{Content: []ai.Content{ai.Text("Result submitted. Your work is done; stop here.")},
		Details: jsonx.MustMarshal(map[string]any{"status": "success"})}, nil
}

// Submitted reports whether submit_result was called successfully.
func (t *SubmitResultTool) Submitted() bool {
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.submitted
}

// NextReminder is called when the subagent's run ended. When it has not
// submitted and fewer than MaxSubmitReminders reminders were given, it
// returns the text of the next reminder (send it as a user message and
// continue the run) and true; otherwise "", false (the subagent is done:
// call Outcome).
func (t *SubmitResultTool) NextReminder() (string, bool) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.submitted || t.reminders >= MaxSubmitReminders {
		return "", false
	}
	t.reminders++
	return fmt.Sprintf("<system-reminder>\nYou stopped without calling submit_result, so your work has not been delivered. "+
		"Call submit_result now: {\"result\": {\"data\": ...}} with your final result, or {\"result\": {\"error\": \"...\"}} "+
		"if you could not complete the task. (Reminder %d of %d)\n</system-reminder>", t.reminders, MaxSubmitReminders), true
}

// Reminders returns how many reminders were given.
func (t *SubmitResultTool) Reminders() int {
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.reminders
}

// Outcome returns the outcome fields submit_result decides: Result and
// ExitCode 0 after a data submission; Error and ExitCode 1 after an error
// submission or when the subagent never submitted. The core fills in
// Output, Usage, ToolCalls and Aborted.
func (t *SubmitResultTool) Outcome() SubagentOutcome {
	t.mu.Lock()
	defer t.mu.Unlock()
	switch {
	case t.submitted && t.errMsg != "":
		return SubagentOutcome{Error: t.errMsg, ExitCode: 1}
	case t.submitted:
		return SubagentOutcome{Result: t.data}
	}
	return SubagentOutcome{ExitCode: 1, Error: fmt.Sprintf("The subagent stopped without calling submit_result (reminded %d times).", t.reminders)}
}
