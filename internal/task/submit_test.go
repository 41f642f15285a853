package task

import (
	"context"
	"encoding/json"
	"strings"
	"testing"

	"github.com/pisces-agent/pisces/internal/tools"
)

func callSubmit(t *testing.T, s *SubmitResultTool, args string) tools.Result {
	t.Helper()
	res, err := s.Execute(context.Background(), tools.Call{ID: "c", Args: json.RawMessage(args)})
	if err != nil {
		t.Fatal(err)
	}
	return res
}

func TestSubmitResult(t *testing.T) {
	s := NewSubmitResultTool(json.RawMessage(`{"properties":{"n":{"type":"int32"}}}`))
	if s.Name() != "submit_result" || !strings.Contains(s.Description(), `"int32"`) || !json.Valid(s.Parameters()) {
		t.Fatal("declaration")
	}
	for _, bad := range []string{`{}`, `{"result":{}}`, `{"result":{"data":1,"error":"x"}}`, `[]`} {
		if r := callSubmit(t, s, bad); !r.IsError {
			t.Errorf("accepted %s", bad)
		}
	}
	if s.Submitted() {
		t.Fatal("submitted after bad calls")
	}
	if r := callSubmit(t, s, `{"result":{"data":{"n": 3}}}`); r.IsError {
		t.Fatal(resultText(r))
	}
	out := s.Outcome()
	if out.ExitCode != 0 || string(out.Result) != `{"n": 3}` || out.Error != "" {
		t.Errorf("%+v", out)
	}
	if _, ok := s.NextReminder(); ok {
		t.Error("reminder after submission")
	}
	s = NewSubmitResultTool(nil)
	callSubmit(t, s, `{"result":{"error":"no access"}}`)
	if out := s.Outcome(); out.ExitCode != 1 || out.Error != "no access" || out.Result != nil {
		t.Errorf("%+v", out)
	}
}

func TestSubmitReminders(t *testing.T) {
	s := NewSubmitResultTool(nil)
	for i := 1; i <= 3; i++ {
		text, ok := s.NextReminder()
		if !ok || !strings.Contains(text, "submit_result") || !strings.Contains(text, "Reminder "+string(rune('0'+i))+" of 3") {
			t.Fatalf("reminder %d: %v %q", i, ok, text)
		}
	}
	if _, ok := s.NextReminder(); ok {
		t.Fatal("a fourth reminder")
	}
	out := s.Outcome()
	if out.ExitCode != 1 || !strings.Contains(out.Error, "without calling submit_result") || s.Reminders() != 3 {
		t.Errorf("%+v", out)
	}
	// Submitting after a reminder ends it normally.
	s = NewSubmitResultTool(nil)
	s.NextReminder()
	callSubmit(t, s, `{"result":{"data":"late but done"}}`)
	if out := s.Outcome(); out.ExitCode != 0 || string(out.Result) != `"late but done"` {
		t.Errorf("%+v", out)
	}
}
