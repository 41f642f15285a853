package core

import (
	"strings"
	"testing"

	"github.com/pisces-agent/pisces/internal/settings"
	"github.com/pisces-agent/pisces/rpc"
)

// An abort during the delay before a summary call is made again stops the
// compaction at once: the retry is closed with summarization_retry_finished
// and no attempt starts.
func TestAbortDuringSummaryRetryDelay(t *testing.T) {
	s, _ := newTestSession(t, `{"turns":[
		{"content":[{"type":"text","text":"first answer"}]},
		{"content":[{"type":"text","text":"second answer"}]},
		{"error":{"status":529,"message":"overloaded"}},
		{"content":[{"type":"text","text":"## Goal\nnever used"}]}
	]}`)
	// A delay no test waits out: only the abort can end it.
	if err := s.Settings().Set(settings.Global, "retry.baseDelayMs", 3600000); err != nil {
		t.Fatal(err)
	}
	if err := s.Settings().Set(settings.Global, "retry.maxDelayMs", 3600000); err != nil {
		t.Fatal(err)
	}
	for _, p := range []string{"one", "two"} {
		if _, err := s.Prompt(p, nil, ""); err != nil {
			t.Fatal(err)
		}
		s.WaitIdle()
	}
	var types []string
	scheduled := make(chan *rpc.SummarizationRetryScheduledEvent, 1)
	unsub := s.Subscribe(func(ev rpc.Event) {
		types = append(types, ev.EventType())
		if e, ok := ev.(*rpc.SummarizationRetryScheduledEvent); ok {
			scheduled <- e
		}
	})
	defer unsub()
	done := make(chan error, 1)
	go func() {
		_, err := s.Compact("")
		done <- err
	}()
	ev := <-scheduled
	if ev.Attempt != 1 || ev.DelayMs != 3600000 || ev.ErrorMessage != "529 overloaded" {
		t.Errorf("scheduled %+v", ev)
	}
	s.Abort()
	if err := <-done; err == nil || !strings.Contains(err.Error(), "aborted") {
		t.Errorf("compact error %v, want an abort", err)
	}
	want := []string{"compaction_start", "summarization_retry_scheduled", "summarization_retry_finished", "compaction_end"}
	if strings.Join(types, " ") != strings.Join(want, " ") {
		t.Errorf("events %v, want %v", types, want)
	}
}
