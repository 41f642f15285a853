package task

import (
	"context"
	_ "embed"
	"encoding/json"
	"fmt"
	"strconv"
	"strings"
	"sync"

	"github.com/pisces-agent/pisces/internal/ai"
	"github.com/pisces-agent/pisces/internal/jsonx"
	"github.com/pisces-agent/pisces/internal/tools"
)

// Todo statuses.
const (
	TodoPending    = "pending"
	TodoInProgress = "in_progress"
	TodoCompleted  = "completed"
	TodoAbandoned  = "abandoned"
)

// TodoWriteName is the name of the todo tool.
const TodoWriteName = "todo_write"

// MaxTodoReminders is how many todo_reminder nudges one prompt gets.
const MaxTodoReminders = 3

//go:embed todo_write.md
var todoWriteDescription string

// TodoItem is one task of a phase.
type TodoItem struct {
	ID      string `json:"id"`
	Content string `json:"content"`
	Status  string `json:"status"`
	Notes   string `json:"notes,omitempty"`
	Details string `json:"details,omitempty"`
}

// TodoPhase is a named group of tasks.
type TodoPhase struct {
	ID    string     `json:"id"`
	Name  string     `json:"name"`
	Tasks []TodoItem `json:"tasks"`
}

// MarshalJSON writes tasks as [] when empty.
func (p TodoPhase) MarshalJSON() ([]byte, error) {
	type alias TodoPhase
	if p.Tasks == nil {
		p.Tasks = []TodoItem{}
	}
	return jsonx.Marshal(alias(p))
}

// TodoList is a session's phased plan. It backs the todo_write tool, the
// set_todos command and get_state's todoPhases. Safe for concurrent use.
type TodoList struct {
	onChange func([]TodoPhase)

	mu        sync.Mutex
	phases    []TodoPhase
	nextPhase int
	nextTask  int
	reminders int
}

// NewTodoList returns an empty list; onChange (optional) receives a copy
// of the phases after every change.
func NewTodoList(onChange func([]TodoPhase)) *TodoList {
	return &TodoList{onChange: onChange, nextPhase: 1, nextTask: 1}
}

// Phases returns a copy of the phases ([] when empty).
func (l *TodoList) Phases() []TodoPhase {
	l.mu.Lock()
	defer l.mu.Unlock()
	return clonePhases(l.phases)
}

func clonePhases(in []TodoPhase) []TodoPhase {
	out := make([]TodoPhase, len(in))
	for i, p := range in {
		p.Tasks = append([]TodoItem{}, p.Tasks...)
		out[i] = p
	}
	return out
}

// Set replaces the phases (the set_todos command) and returns them as
// stored: missing ids are assigned (phase-N, task-N), a missing status is
// pending. An unknown status or a task without content is an error.
func (l *TodoList) Set(phases []TodoPhase) ([]TodoPhase, error) {
	l.mu.Lock()
	next := TodoList{nextPhase: 1, nextTask: 1}
	for _, p := range phases {
		next.bumpCounters(p)
	}
	var out []TodoPhase
	for i, p := range phases {
		if strings.TrimSpace(p.Name) == "" {
			p.Name = "Phase " + strconv.Itoa(i+1)
		}
		if p.ID == "" {
			p.ID = "phase-" + strconv.Itoa(next.nextPhase)
			next.nextPhase++
		}
		tasks := make([]TodoItem, 0, len(p.Tasks))
		for _, t := range p.Tasks {
			if strings.TrimSpace(t.Content) == "" {
				l.mu.Unlock()
				return nil, fmt.Errorf("todo in phase %q has no content", p.Name)
			}
			if t.Status == "" {
				t.Status = TodoPending
			}
			if !validTodoStatus(t.Status) {
				l.mu.Unlock()
				return nil, fmt.Errorf("invalid todo status %q (use pending, in_progress, completed or abandoned)", t.Status)
			}
			if t.ID == "" {
				t.ID = "task-" + strconv.Itoa(next.nextTask)
				next.nextTask++
			}
			tasks = append(tasks, t)
		}
		p.Tasks = tasks
		out = append(out, p)
	}
	l.phases, l.nextPhase, l.nextTask = out, next.nextPhase, next.nextTask
	res := clonePhases(l.phases)
	l.mu.Unlock()
	l.changed(res)
	return res, nil
}

func (l *TodoList) bumpCounters(p TodoPhase) {
	if n, ok := idNumber(p.ID, "phase-"); ok && n >= l.nextPhase {
		l.nextPhase = n + 1
	}
	for _, t := range p.Tasks {
		if n, ok := idNumber(t.ID, "task-"); ok && n >= l.nextTask {
			l.nextTask = n + 1
		}
	}
}

func idNumber(id, prefix string) (int, bool) {
	if !strings.HasPrefix(id, prefix) {
		return 0, false
	}
	n, err := strconv.Atoi(id[len(prefix):])
	return n, err == nil
}

func validTodoStatus(s string) bool {
	switch s {
	case TodoPending, TodoInProgress, TodoCompleted, TodoAbandoned:
		return true
	}
	return false
}

func (l *TodoList) changed(phases []TodoPhase) {
	if l.onChange != nil {
		l.onChange(phases)
	}
}

// Incomplete lists the pending and in-progress tasks across phases.
func (l *TodoList) Incomplete() []TodoReminderItem {
	l.mu.Lock()
	defer l.mu.Unlock()
	var out []TodoReminderItem
	for _, p := range l.phases {
		for _, t := range p.Tasks {
			if t.Status == TodoPending || t.Status == TodoInProgress {
				out = append(out, TodoReminderItem{ID: t.ID, Content: t.Content, Status: t.Status})
			}
		}
	}
	return out
}

// NextReminder is called when a run ends. With open todos and fewer than
// MaxTodoReminders reminders since ResetReminders, it returns the
// todo_reminder event to emit and the text to send to the model (as a
// hidden user/developer message before continuing the run), and true.
func (l *TodoList) NextReminder() (*TodoReminderEvent, string, bool) {
	open := l.Incomplete()
	l.mu.Lock()
	defer l.mu.Unlock()
	if len(open) == 0 || l.reminders >= MaxTodoReminders {
		return nil, "", false
	}
	l.reminders++
	var b strings.Builder
	fmt.Fprintf(&b, "<system-reminder>\nYour plan still has %d open item(s):\n", len(open))
	for _, t := range open {
		fmt.Fprintf(&b, "- %s [%s] %s\n", t.ID, t.Status, t.Content)
	}
	fmt.Fprintf(&b, "Continue with them, or update the plan with todo_write (mark items completed or abandoned) if they are done or no longer needed. (Reminder %d of %d)\n</system-reminder>", l.reminders, MaxTodoReminders)
	ev := &TodoReminderEvent{Type: EventTodoReminder, Todos: open, Attempt: l.reminders, MaxAttempts: MaxTodoReminders}
	return ev, b.String(), true
}

// ResetReminders starts a fresh reminder count (call it for each new user
// prompt).
func (l *TodoList) ResetReminders() {
	l.mu.Lock()
	l.reminders = 0
	l.mu.Unlock()
}

// Tool returns the todo_write tool operating on this list.
func (l *TodoList) Tool() tools.Tool { return &todoTool{list: l} }

type todoTool struct{ list *TodoList }

func (t *todoTool) Name() string        { return TodoWriteName }
func (t *todoTool) Description() string { return todoWriteDescription }

func (t *todoTool) Parameters() json.RawMessage {
	return json.RawMessage(`{"type":"object","properties":{"ops":{"type":"array","description":"Operations, applied in order.","items":{"type":"object","properties":{` +
		`"op":{"type":"string","enum":["replace","add_phase","add_task","update","remove_task"]},` +
		`"phases":{"type":"array","description":"replace: the new plan.","items":{"type":"object","properties":{"name":{"type":"string"},"tasks":{"type":"array","items":{"$ref":"#/$defs/task"}}},"required":["name"]}},` +
		`"name":{"type":"string","description":"add_phase: the phase name."},` +
		`"tasks":{"type":"array","description":"add_phase: its tasks.","items":{"$ref":"#/$defs/task"}},` +
		`"phase":{"type":"string","description":"add_task: the phase id (phase-N)."},` +
		`"id":{"type":"string","description":"update, remove_task: the task id (task-N)."},` +
		`"content":{"type":"string"},` +
		`"status":{"type":"string","enum":["pending","in_progress","completed","abandoned"]},` +
		`"notes":{"type":"string"},"details":{"type":"string"}},"required":["op"]}}},"required":["ops"],` +
		`"$defs":{"task":{"type":"object","properties":{"content":{"type":"string"},"status":{"type":"string","enum":["pending","in_progress","completed","abandoned"]},"notes":{"type":"string"},"details":{"type":"string"}},"required":["content"]}}}`)
}

type todoOp struct {
	Op      string      `json:"op"`
	Phases  []TodoPhase `json:"phases"`
	Name    string      `json:"name"`
	Tasks   []TodoItem  `json:"tasks"`
	Phase   string      `json:"phase"`
	ID      string      `json:"id"`
	Content *string     `json:"content"`
	Status  *string     `json:"status"`
	Notes   *string     `json:"notes"`
	Details *string     `json:"details"`
}

func (t *todoTool) Execute(ctx context.Context, call tools.Call) (tools.Result, error) {
	var args struct {
		Ops []todoOp `json:"ops"`
	}
	if err := json.Unmarshal(call.Args, &args); err != nil {
		return tools.ErrorResult("Invalid arguments for todo_write: " + err.Error()), nil
	}
	if len(args.Ops) == 0 {
		return tools.ErrorResult("Invalid arguments for todo_write: ops must be a non-empty array"), nil
	}
	l := t.list
	l.mu.Lock()
	// Work on a copy so that a failing op leaves the list unchanged.
	work := &TodoList{phases: clonePhases(l.phases), nextPhase: l.nextPhase, nextTask: l.nextTask}
	for i, op := range args.Ops {
		if err := work.apply(op); err != nil {
			l.mu.Unlock()
			return tools.ErrorResult(fmt.Sprintf("todo_write op %d (%s): %v. No changes were made.", i+1, op.Op, err)), nil
		}
	}
	l.phases, l.nextPhase, l.nextTask = work.phases, work.nextPhase, work.nextTask
	phases := clonePhases(l.phases)
	l.mu.Unlock()
	l.changed(phases)
	return tools.Result{
		Content: []ai.Content{ai.Text(renderTodos(phases))},
		Details: jsonx.MustMarshal(map[string]any{"phases": phases}),
	}, nil
}

// apply runs one op on an unshared list (no locking).
func (l *TodoList) apply(op todoOp) error {
	newTask := func(t TodoItem) (TodoItem, error) {
		if strings.TrimSpace(t.Content) == "" {
			return t, fmt.Errorf("a task needs content")
		}
		if t.Status == "" {
			t.Status = TodoPending
		}
		if !validTodoStatus(t.Status) {
			return t, fmt.Errorf("invalid status %q", t.Status)
		}
		t.ID = "task-" + strconv.Itoa(l.nextTask)
		l.nextTask++
		return t, nil
	}
	newPhase := func(name string, tasks []TodoItem) error {
		if strings.TrimSpace(name) == "" {
			return fmt.Errorf("a phase needs a name")
		}
		p := TodoPhase{ID: "phase-" + strconv.Itoa(l.nextPhase), Name: name, Tasks: []TodoItem{}}
		l.nextPhase++
		for _, t := range tasks {
			nt, err := newTask(t)
			if err != nil {
				return err
			}
			p.Tasks = append(p.Tasks, nt)
		}
		l.phases = append(l.phases, p)
		return nil
	}
	findTask := func(id string) (int, int, bool) {
		for i, p := range l.phases {
			for j, t := range p.Tasks {
				if t.ID == id {
					return i, j, true
				}
			}
		}
		return 0, 0, false
	}
	switch op.Op {
	case "replace":
		l.phases, l.nextPhase, l.nextTask = nil, 1, 1
		for _, p := range op.Phases {
			if err := newPhase(p.Name, p.Tasks); err != nil {
				return err
			}
		}
	case "add_phase":
		return newPhase(op.Name, op.Tasks)
	case "add_task":
		for i, p := range l.phases {
			if p.ID == op.Phase || (op.Phase != "" && p.Name == op.Phase) {
				t := TodoItem{}
				if op.Content != nil {
					t.Content = *op.Content
				}
				if op.Status != nil {
					t.Status = *op.Status
				}
				if op.Notes != nil {
					t.Notes = *op.Notes
				}
				if op.Details != nil {
					t.Details = *op.Details
				}
				nt, err := newTask(t)
				if err != nil {
					return err
				}
				l.phases[i].Tasks = append(l.phases[i].Tasks, nt)
				return nil
			}
		}
		return fmt.Errorf("no phase %q", op.Phase)
	case "update":
		i, j, ok := findTask(op.ID)
		if !ok {
			return fmt.Errorf("no task %q", op.ID)
		}
		t := &l.phases[i].Tasks[j]
		if op.Status != nil {
			if !validTodoStatus(*op.Status) {
				return fmt.Errorf("invalid status %q", *op.Status)
			}
			t.Status = *op.Status
		}
		if op.Content != nil {
			if strings.TrimSpace(*op.Content) == "" {
				return fmt.Errorf("content cannot be empty")
			}
			t.Content = *op.Content
		}
		if op.Notes != nil {
			t.Notes = *op.Notes
		}
		if op.Details != nil {
			t.Details = *op.Details
		}
	case "remove_task":
		i, j, ok := findTask(op.ID)
		if !ok {
			return fmt.Errorf("no task %q", op.ID)
		}
		l.phases[i].Tasks = append(l.phases[i].Tasks[:j], l.phases[i].Tasks[j+1:]...)
	default:
		return fmt.Errorf("unknown op (use replace, add_phase, add_task, update or remove_task)")
	}
	return nil
}

func renderTodos(phases []TodoPhase) string {
	if len(phases) == 0 {
		return "The plan is empty."
	}
	var b strings.Builder
	done, total := 0, 0
	for _, p := range phases {
		fmt.Fprintf(&b, "%s (%s)\n", p.Name, p.ID)
		for _, t := range p.Tasks {
			mark := " "
			switch t.Status {
			case TodoCompleted:
				mark = "x"
				done++
			case TodoInProgress:
				mark = ">"
			case TodoAbandoned:
				mark = "-"
				done++
			}
			total++
			fmt.Fprintf(&b, "  [%s] %s %s\n", mark, t.ID, t.Content)
		}
	}
	fmt.Fprintf(&b, "%d of %d tasks closed.", done, total)
	return b.String()
}
