package task

import "github.com/pisces-agent/pisces/rpc"

// Event type names of this package.
const (
	EventSubagentStart                    = "subagent_start"
	EventSubagentEnd                      = "subagent_end"
	EventSubagentVerificationStart        = "subagent_verification_start"
	EventSubagentVerificationCommandStart = "subagent_verification_command_start"
	EventSubagentVerificationCommandEnd   = "subagent_verification_command_end"
	EventSubagentVerificationEnd          = "subagent_verification_end"
	EventBudgetWarning                    = "budget_warning"
	EventBudgetExceeded                   = "budget_exceeded"
	EventTodoReminder                     = "todo_reminder"
)

// SubagentStartEvent is emitted just before a subagent runs (after its
// worktree, if any, was created).
type SubagentStartEvent struct {
	Type             string `json:"type"`
	ID               string `json:"id"`
	Agent            string `json:"agent"`
	Isolated         bool   `json:"isolated"`
	ParentToolCallID string `json:"parentToolCallId,omitempty"`
	// Not on the wire (oh-my-pi's get_subagents reads them): the item's
	// position in its call, where its agent is defined, its label and its
	// first message.
	Index       int    `json:"-"`
	AgentSource string `json:"-"`
	Description string `json:"-"`
	Assignment  string `json:"-"`
}

// SubagentEndEvent is emitted once an item is resolved: the subagent ran,
// verification (if any) finished, the patch was captured and the worktree
// removed.
type SubagentEndEvent struct {
	Type             string              `json:"type"`
	ID               string              `json:"id"`
	Agent            string              `json:"agent"`
	ExitCode         int                 `json:"exitCode"`
	Verification     *VerificationResult `json:"verification,omitempty"`
	ParentToolCallID string              `json:"parentToolCallId,omitempty"`
	// Not on the wire (oh-my-pi's subagent_lifecycle reads them).
	Index       int    `json:"-"`
	AgentSource string `json:"-"`
	Aborted     bool   `json:"-"`
}

// SubagentVerificationStartEvent opens one verification attempt.
type SubagentVerificationStartEvent struct {
	Type             string `json:"type"`
	ID               string `json:"id"`
	Attempt          int    `json:"attempt"`
	Profile          string `json:"profile,omitempty"`
	ParentToolCallID string `json:"parentToolCallId,omitempty"`
}

// SubagentVerificationCommandStartEvent precedes one verification command.
type SubagentVerificationCommandStartEvent struct {
	Type             string `json:"type"`
	ID               string `json:"id"`
	Attempt          int    `json:"attempt"`
	CommandName      string `json:"commandName"`
	ParentToolCallID string `json:"parentToolCallId,omitempty"`
}

// SubagentVerificationCommandEndEvent follows one verification command.
// ArtifactID is the path of the command's output log (the same value as
// VerificationCommandResult.ArtifactPath), absent when it printed nothing.
type SubagentVerificationCommandEndEvent struct {
	Type             string `json:"type"`
	ID               string `json:"id"`
	Attempt          int    `json:"attempt"`
	CommandName      string `json:"commandName"`
	ExitCode         int    `json:"exitCode"`
	DurationMs       int64  `json:"durationMs"`
	ArtifactID       string `json:"artifactId,omitempty"`
	ParentToolCallID string `json:"parentToolCallId,omitempty"`
}

// SubagentVerificationEndEvent closes one verification attempt. Status is
// "passed", "failed", "skipped" or "budget_exceeded" (a budget stopped the
// attempt before all its commands ran).
type SubagentVerificationEndEvent struct {
	Type             string `json:"type"`
	ID               string `json:"id"`
	Attempt          int    `json:"attempt"`
	Status           string `json:"status"`
	ParentToolCallID string `json:"parentToolCallId,omitempty"`
}

// BudgetWarningEvent says a budget dimension reached its warning ratio.
// ID names the task item for scope "subagent"; ParentToolCallID is the task
// tool call for scopes "task" and "subagent".
type BudgetWarningEvent struct {
	Type             string         `json:"type"`
	Scope            string         `json:"scope"`
	Snapshot         BudgetSnapshot `json:"snapshot"`
	ID               string         `json:"id,omitempty"`
	ParentToolCallID string         `json:"parentToolCallId,omitempty"`
}

// BudgetExceededEvent says a budget limit was reached (once per controller).
type BudgetExceededEvent struct {
	Type             string         `json:"type"`
	Scope            string         `json:"scope"`
	Snapshot         BudgetSnapshot `json:"snapshot"`
	ID               string         `json:"id,omitempty"`
	ParentToolCallID string         `json:"parentToolCallId,omitempty"`
}

// TodoReminderEvent is emitted when a run ends with open todo items and the
// model is reminded of them.
type TodoReminderEvent struct {
	Type        string             `json:"type"`
	Todos       []TodoReminderItem `json:"todos"`
	Attempt     int                `json:"attempt"`
	MaxAttempts int                `json:"maxAttempts"`
}

// TodoReminderItem is one open todo in a TodoReminderEvent.
type TodoReminderItem struct {
	ID      string `json:"id"`
	Content string `json:"content"`
	Status  string `json:"status"`
}

func (*SubagentStartEvent) EventType() string             { return EventSubagentStart }
func (*SubagentEndEvent) EventType() string               { return EventSubagentEnd }
func (*SubagentVerificationStartEvent) EventType() string { return EventSubagentVerificationStart }
func (*SubagentVerificationCommandStartEvent) EventType() string {
	return EventSubagentVerificationCommandStart
}
func (*SubagentVerificationCommandEndEvent) EventType() string {
	return EventSubagentVerificationCommandEnd
}
func (*SubagentVerificationEndEvent) EventType() string { return EventSubagentVerificationEnd }
func (*BudgetWarningEvent) EventType() string           { return EventBudgetWarning }
func (*BudgetExceededEvent) EventType() string          { return EventBudgetExceeded }
func (*TodoReminderEvent) EventType() string            { return EventTodoReminder }

// EventTypes lists every event type this package emits, for catalogues.
var EventTypes = []string{
	EventSubagentStart, EventSubagentEnd,
	EventSubagentVerificationStart, EventSubagentVerificationCommandStart,
	EventSubagentVerificationCommandEnd, EventSubagentVerificationEnd,
	EventBudgetWarning, EventBudgetExceeded, EventTodoReminder,
}

// emit sets the event's type and passes it on; a nil emitter drops it.
func emitTo(emit func(rpc.Event), ev rpc.Event) {
	if emit == nil {
		return
	}
	rpc.SetType(ev)
	emit(ev)
}

// EventInfos describes this package's events for the protocol catalogue
// (the JSON Schema lists them with the rpc package's own events).
func EventInfos() []rpc.EventInfo {
	return []rpc.EventInfo{
		{Name: EventSubagentStart, Doc: "A task item's subagent starts.", Event: &SubagentStartEvent{}},
		{Name: EventSubagentEnd, Doc: "A task item is resolved (after verification).", Event: &SubagentEndEvent{}},
		{Name: EventSubagentVerificationStart, Doc: "A verification attempt starts.", Event: &SubagentVerificationStartEvent{}},
		{Name: EventSubagentVerificationCommandStart, Doc: "A verification command starts.", Event: &SubagentVerificationCommandStartEvent{}},
		{Name: EventSubagentVerificationCommandEnd, Doc: "A verification command ended.", Event: &SubagentVerificationCommandEndEvent{}},
		{Name: EventSubagentVerificationEnd, Doc: "A verification attempt ended.", Event: &SubagentVerificationEndEvent{}},
		{Name: EventBudgetWarning, Doc: "A budget dimension reached its warning ratio.", Event: &BudgetWarningEvent{}},
		{Name: EventBudgetExceeded, Doc: "A budget limit was reached.", Event: &BudgetExceededEvent{}},
		{Name: EventTodoReminder, Doc: "The model stopped with open todo items and is reminded.", Event: &TodoReminderEvent{}},
	}
}
