package core

import (
	"encoding/json"
	"testing"
	"time"

	"github.com/pisces-agent/pisces/internal/ai"
	"github.com/pisces-agent/pisces/rpc"
)

// runEvents are the events that frame runs and retries.
var runEvents = []string{
	rpc.EventAgentStart, rpc.EventAgentEnd, rpc.EventAutoRetryStart, rpc.EventAutoRetryEnd,
	rpc.EventEntryAppended, rpc.EventAgentSettled,
}

func retryStarts(evs []rpc.Event) []*rpc.AutoRetryStartEvent {
	var out []*rpc.AutoRetryStartEvent
	for _, ev := range only(evs, rpc.EventAutoRetryStart) {
		out = append(out, ev.(*rpc.AutoRetryStartEvent))
	}
	return out
}

func retryEnds(evs []rpc.Event) []*rpc.AutoRetryEndEvent {
	var out []*rpc.AutoRetryEndEvent
	for _, ev := range only(evs, rpc.EventAutoRetryEnd) {
		out = append(out, ev.(*rpc.AutoRetryEndEvent))
	}
	return out
}

// A transient error is retried: agent_end {willRetry:true},
// auto_retry_start, entry_appended (the context_edit that hides the failed
// message), a new agent_start, agent_end, auto_retry_end {success:true},
// one agent_settled. The prompt is not sent again.
func TestRetryTransientError(t *testing.T) {
	h := newHarness(t, `{"turns":[
		{"error":{"status":529,"message":"overloaded"}},
		{"content":[{"type":"text","text":"recovered"}]}
	]}`, harnessOptions{settings: map[string]any{"retry.baseDelayMs": 1}})
	h.prompt("go")
	h.settle(0)
	evs := h.rec.snapshot()
	expectLabels(t, "run events", typesOf(only(evs, runEvents...)), []string{
		"agent_start", "agent_end", "auto_retry_start", "entry_appended",
		"agent_start", "agent_end", "auto_retry_end", "agent_settled",
	})
	ends := only(evs, rpc.EventAgentEnd)
	if !ends[0].(*rpc.AgentEndEvent).WillRetry || ends[1].(*rpc.AgentEndEvent).WillRetry {
		t.Fatal("want willRetry true on the failed run's agent_end only")
	}
	st := retryStarts(evs)[0]
	if st.Attempt != 1 || st.MaxAttempts != 3 || st.DelayMs != 1 || st.ErrorMessage != "529 overloaded" {
		t.Fatalf("auto_retry_start %+v", st)
	}
	if e := retryEnds(evs)[0]; !e.Success || e.Attempt != 1 || e.FinalError != "" {
		t.Fatalf("auto_retry_end %+v", e)
	}
	var edit struct {
		Type, TargetID string
		Replacement    json.RawMessage
	}
	if err := json.Unmarshal(only(evs, rpc.EventEntryAppended)[0].(*rpc.EntryAppendedEvent).Entry, &edit); err != nil {
		t.Fatal(err)
	}
	if edit.Type != "context_edit" || string(edit.Replacement) != "null" {
		t.Fatalf("entry_appended %+v", edit)
	}
	if e := h.s.Store().Entry(edit.TargetID); e == nil || messageLabel(e.Message()) != "assistant!error" {
		t.Fatal("the context_edit does not target the failed message")
	}
	expectLabels(t, "context", h.conversation(), []string{"user:go", "assistant:recovered"})
	expectLabels(t, "requests", h.requests(), []string{"go", "go"})
}

// Backoff: the delay of attempt n is retry.baseDelayMs·2^(n-1), capped at
// retry.maxDelayMs, and the next attempt starts no earlier.
func TestRetryBackoff(t *testing.T) {
	h := newHarness(t, `{"turns":[
		{"error":{"status":503,"message":"service unavailable"}},
		{"error":{"status":503,"message":"service unavailable"}},
		{"error":{"status":503,"message":"service unavailable"}},
		{"content":[{"type":"text","text":"finally"}]}
	]}`, harnessOptions{settings: map[string]any{"retry.baseDelayMs": 40, "retry.maxDelayMs": 100}})
	h.prompt("go")
	h.settle(0)
	evs := h.rec.snapshot()
	var attempts []int
	var delays []int64
	for _, st := range retryStarts(evs) {
		attempts = append(attempts, st.Attempt)
		delays = append(delays, st.DelayMs)
	}
	if len(delays) != 3 || delays[0] != 40 || delays[1] != 80 || delays[2] != 100 {
		t.Fatalf("delays %v, want [40 80 100]", delays)
	}
	if attempts[0] != 1 || attempts[1] != 2 || attempts[2] != 3 {
		t.Fatalf("attempts %v", attempts)
	}
	// Each retry's agent_start comes at least its delay after its
	// auto_retry_start.
	for i, ev := range evs {
		st, ok := ev.(*rpc.AutoRetryStartEvent)
		if !ok {
			continue
		}
		next := h.rec.waitType(t, rpc.EventAgentStart, i)
		if waited := h.rec.time(next).Sub(h.rec.time(i)); waited < time.Duration(st.DelayMs)*time.Millisecond {
			t.Fatalf("attempt %d started %v after auto_retry_start, before its delay of %d ms", st.Attempt, waited, st.DelayMs)
		}
	}
	if e := retryEnds(evs); len(e) != 1 || !e[0].Success || e[0].Attempt != 3 {
		t.Fatalf("auto_retry_end %+v", e)
	}
	expectLabels(t, "context", h.conversation(), []string{"user:go", "assistant:finally"})
}

// A Retry-After longer than the backoff is the delay; one longer than
// retry.maxDelayMs is not retried at all.
func TestRetryAfter(t *testing.T) {
	t.Run("longer than the backoff", func(t *testing.T) {
		h := newHarness(t, `{"turns":[
			{"error":{"status":429,"message":"rate limited","retryAfterMs":30}},
			{"content":[{"type":"text","text":"ok"}]}
		]}`, harnessOptions{settings: map[string]any{"retry.baseDelayMs": 1}})
		h.prompt("go")
		h.settle(0)
		if st := retryStarts(h.rec.snapshot()); len(st) != 1 || st[0].DelayMs != 30 {
			t.Fatalf("auto_retry_start %+v, want one with delayMs 30", st)
		}
	})
	t.Run("beyond the maximum", func(t *testing.T) {
		h := newHarness(t, `{"turns":[
			{"error":{"status":429,"message":"rate limited","retryAfterMs":600000}},
			{"content":[{"type":"text","text":"never"}]}
		]}`, harnessOptions{settings: map[string]any{"retry.baseDelayMs": 1, "retry.maxDelayMs": 1000}})
		h.prompt("go")
		h.settle(0)
		evs := h.rec.snapshot()
		expectLabels(t, "run events", typesOf(only(evs, runEvents...)), []string{"agent_start", "agent_end", "agent_settled"})
		if h.prov.Remaining() != 1 {
			t.Fatal("the request was sent again")
		}
	})
}

// When every attempt fails: retry.maxRetries retries, then
// auto_retry_end {success:false, attempt, finalError}; only the last
// failure stays in the context.
func TestRetryExhausted(t *testing.T) {
	h := newHarness(t, `{"turns":[
		{"error":{"status":500,"message":"server error one"}},
		{"error":{"status":500,"message":"server error two"}},
		{"error":{"status":500,"message":"server error three"}},
		{"content":[{"type":"text","text":"never"}]}
	]}`, harnessOptions{settings: map[string]any{"retry.baseDelayMs": 1, "retry.maxRetries": 2}})
	h.prompt("go")
	h.settle(0)
	evs := h.rec.snapshot()
	expectLabels(t, "run events", typesOf(only(evs, runEvents...)), []string{
		"agent_start", "agent_end", "auto_retry_start", "entry_appended",
		"agent_start", "agent_end", "auto_retry_start", "entry_appended",
		"agent_start", "agent_end", "auto_retry_end", "agent_settled",
	})
	for _, st := range retryStarts(evs) {
		if st.MaxAttempts != 2 {
			t.Fatalf("maxAttempts %d, want 2", st.MaxAttempts)
		}
	}
	e := retryEnds(evs)[0]
	if e.Success || e.Attempt != 2 || e.FinalError != "500 server error three" {
		t.Fatalf("auto_retry_end %+v", e)
	}
	if h.prov.Remaining() != 1 {
		t.Fatalf("%d scripted turns left, want 1", h.prov.Remaining())
	}
	expectLabels(t, "context", h.conversation(), []string{"user:go", "assistant!error"})
	last := h.s.Messages()[len(h.s.Messages())-1].(*ai.AssistantMessage)
	if last.ErrorMessage != "500 server error three" {
		t.Fatalf("the failure left in the context is %q", last.ErrorMessage)
	}
}

// With retry disabled (set_auto_retry false) or an error that is not
// transient, the run ends at the first failure: no auto_retry events.
func TestNoRetry(t *testing.T) {
	for _, tc := range []struct {
		name, errJSON string
		disable       bool
	}{
		{"disabled", `{"status":529,"message":"overloaded"}`, true},
		{"not transient", `{"status":400,"message":"invalid request"}`, false},
		{"not transient without status", `{"message":"content policy violation"}`, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			h := newHarness(t, `{"turns":[{"error":`+tc.errJSON+`},{"content":[{"type":"text","text":"never"}]}]}`,
				harnessOptions{settings: map[string]any{"retry.baseDelayMs": 1}})
			if tc.disable {
				if err := h.s.SetAutoRetry(false); err != nil {
					t.Fatal(err)
				}
				if h.s.State().AutoRetry || h.s.Settings().RetryEnabled() {
					t.Fatal("retry still enabled")
				}
			}
			h.prompt("go")
			h.settle(0)
			evs := h.rec.snapshot()
			expectLabels(t, "run events", typesOf(only(evs, runEvents...)), []string{"agent_start", "agent_end", "agent_settled"})
			if only(evs, rpc.EventAgentEnd)[0].(*rpc.AgentEndEvent).WillRetry {
				t.Fatal("agent_end says willRetry")
			}
			if h.prov.Remaining() != 1 {
				t.Fatal("the request was sent again")
			}
		})
	}
}

// Abort during the retry delay ends the run at once: auto_retry_end
// {success:false, finalError:"Retry cancelled"}, agent_settled
// {aborted:true}, no further attempt. abort_retry does the same for the
// delay alone.
func TestCancelRetryDelay(t *testing.T) {
	for _, tc := range []struct {
		name  string
		abort func(*Session)
	}{
		{"abort", (*Session).Abort},
		{"abort_retry", (*Session).AbortRetry},
	} {
		t.Run(tc.name, func(t *testing.T) {
			h := newHarness(t, `{"turns":[
				{"error":{"status":529,"message":"overloaded"}},
				{"content":[{"type":"text","text":"never"}]}
			]}`, harnessOptions{settings: map[string]any{"retry.baseDelayMs": 600000, "retry.maxDelayMs": 600000}})
			h.prompt("go")
			h.rec.waitType(t, rpc.EventAutoRetryStart, 0)
			tc.abort(h.s)
			h.settle(0)
			evs := h.rec.snapshot()
			expectLabels(t, "run events", typesOf(only(evs, runEvents...)), []string{
				"agent_start", "agent_end", "auto_retry_start", "entry_appended", "auto_retry_end", "agent_settled",
			})
			if e := retryEnds(evs)[0]; e.Success || e.Attempt != 1 || e.FinalError != "Retry cancelled" {
				t.Fatalf("auto_retry_end %+v", e)
			}
			if tc.name == "abort" && !only(evs, rpc.EventAgentSettled)[0].(*rpc.AgentSettledEvent).Aborted {
				t.Fatal("agent_settled after abort says aborted:false")
			}
			h.s.WaitIdle()
			if h.s.IsStreaming() || h.prov.Remaining() != 1 {
				t.Fatalf("streaming %v, %d turns left", h.s.IsStreaming(), h.prov.Remaining())
			}
		})
	}
}

// abort_retry sent the moment auto_retry_start is published (before the
// failed message is hidden and the delay begins) still cancels the retry.
func TestAbortRetryRightAfterAutoRetryStart(t *testing.T) {
	h := newHarness(t, `{"turns":[
		{"error":{"status":529,"message":"overloaded"}},
		{"content":[{"type":"text","text":"never"}]}
	]}`, harnessOptions{settings: map[string]any{"retry.baseDelayMs": 600000, "retry.maxDelayMs": 600000}})
	// This subscriber plays a client that answers auto_retry_start at
	// once; AbortRetry publishes nothing, so calling it here cannot
	// deadlock.
	h.s.Subscribe(func(ev rpc.Event) {
		if ev.EventType() == rpc.EventAutoRetryStart {
			h.s.AbortRetry()
		}
	})
	h.prompt("go")
	h.settle(0)
	if e := retryEnds(h.rec.snapshot()); len(e) != 1 || e[0].Success || e[0].FinalError != "Retry cancelled" {
		t.Fatalf("auto_retry_end %+v", e)
	}
	if h.prov.Remaining() != 1 {
		t.Fatal("the retry was made")
	}
}
