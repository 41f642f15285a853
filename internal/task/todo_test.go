package task

import (
	"context"
	"encoding/json"
	"strings"
	"testing"

	"github.com/pisces-agent/pisces/internal/tools"
	"github.com/pisces-agent/pisces/rpc"
)

func todoCall(t *testing.T, tool tools.Tool, args string) tools.Result {
	t.Helper()
	res, err := tool.Execute(context.Background(), tools.Call{ID: "c", Args: json.RawMessage(args)})
	if err != nil {
		t.Fatal(err)
	}
	return res
}

func TestTodoWrite(t *testing.T) {
	var changes int
	l := NewTodoList(func([]TodoPhase) { changes++ })
	tool := l.Tool()
	if tool.Name() != "todo_write" || !json.Valid(tool.Parameters()) {
		t.Fatal("declaration")
	}
	r := todoCall(t, tool, `{"ops":[{"op":"replace","phases":[{"name":"Investigate","tasks":[{"content":"read code"},{"content":"write notes","status":"in_progress"}]},{"name":"Build"}]}]}`)
	if r.IsError {
		t.Fatal(resultText(r))
	}
	r = todoCall(t, tool, `{"ops":[{"op":"add_task","phase":"phase-2","content":"implement","notes":"n"},{"op":"update","id":"task-1","status":"completed"},{"op":"add_phase","name":"Ship","tasks":[{"content":"release"}]},{"op":"remove_task","id":"task-2"}]}`)
	if r.IsError {
		t.Fatal(resultText(r))
	}
	want := `[{"id":"phase-1","name":"Investigate","tasks":[{"id":"task-1","content":"read code","status":"completed"}]},` +
		`{"id":"phase-2","name":"Build","tasks":[{"id":"task-3","content":"implement","status":"pending","notes":"n"}]},` +
		`{"id":"phase-3","name":"Ship","tasks":[{"id":"task-4","content":"release","status":"pending"}]}]`
	if got, _ := rpc.Marshal(l.Phases()); string(got) != want {
		t.Errorf("phases:\n%s\nwant\n%s", got, want)
	}
	if !strings.Contains(resultText(r), "[x] task-1 read code") || !strings.Contains(string(r.Details), `"phases":[`) {
		t.Errorf("result: %s %s", resultText(r), r.Details)
	}
	// A failing op changes nothing.
	r = todoCall(t, tool, `{"ops":[{"op":"update","id":"task-3","status":"completed"},{"op":"update","id":"task-99","status":"completed"}]}`)
	if !r.IsError || !strings.Contains(resultText(r), `no task "task-99"`) {
		t.Errorf("%s", resultText(r))
	}
	if l.Phases()[1].Tasks[0].Status != "pending" {
		t.Error("partial application")
	}
	for _, bad := range []string{`{}`, `{"ops":[{"op":"nope"}]}`, `{"ops":[{"op":"update","id":"task-1","status":"done"}]}`, `{"ops":[{"op":"add_task","phase":"phase-9","content":"x"}]}`} {
		if r := todoCall(t, tool, bad); !r.IsError {
			t.Errorf("accepted %s", bad)
		}
	}
	if changes != 2 {
		t.Errorf("changes: %d", changes)
	}
}

func TestSetTodosAndReminder(t *testing.T) {
	l := NewTodoList(nil)
	if b, _ := rpc.Marshal(l.Phases()); string(b) != "[]" {
		t.Errorf("empty: %s", b)
	}
	phases, err := l.Set([]TodoPhase{{Name: "A", Tasks: []TodoItem{{Content: "one"}, {ID: "task-7", Content: "two", Status: "completed"}}}, {ID: "phase-5", Name: "B"}})
	if err != nil {
		t.Fatal(err)
	}
	if phases[0].ID != "phase-6" || phases[0].Tasks[0].ID != "task-8" || phases[0].Tasks[0].Status != "pending" || phases[1].Tasks == nil {
		t.Errorf("%+v", phases)
	}
	if _, err := l.Set([]TodoPhase{{Name: "A", Tasks: []TodoItem{{Content: "x", Status: "weird"}}}}); err == nil {
		t.Error("bad status accepted")
	}
	for i := 1; i <= 3; i++ {
		ev, text, ok := l.NextReminder()
		if !ok || ev.Attempt != i || ev.MaxAttempts != 3 || len(ev.Todos) != 1 || ev.Todos[0].ID != "task-8" || !strings.Contains(text, "(Reminder "+string(rune('0'+i))+" of 3)") {
			t.Fatalf("reminder %d: %+v %q", i, ev, text)
		}
	}
	if _, _, ok := l.NextReminder(); ok {
		t.Error("fourth reminder")
	}
	l.ResetReminders()
	ev, _, _ := l.NextReminder()
	b, _ := rpc.EncodeEvent(ev)
	if string(b) != `{"type":"todo_reminder","todos":[{"id":"task-8","content":"one","status":"pending"}],"attempt":1,"maxAttempts":3}` {
		t.Errorf("wire: %s", b)
	}
	l.Set(nil)
	if _, _, ok := l.NextReminder(); ok {
		t.Error("reminder with nothing open")
	}
}
