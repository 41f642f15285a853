package ai

import "testing"

// Events share one Usage while it stays the same; a change gives later
// events a new one and leaves the earlier events' usage as it was.
func TestBuilderEventUsage(t *testing.T) {
	var evs []AssistantEvent
	b := NewBuilder(&Model{ID: "m", API: "a", Provider: "p"}, "", func(ev AssistantEvent) { evs = append(evs, ev) })
	b.Start()
	i := b.BeginText()
	b.Delta(i, "a")
	b.Delta(i, "b")
	b.SetUsage(Usage{Input: 3, Output: 2})
	b.Delta(i, "c")
	b.Message().Usage.Extra = nil // unchanged: same usage
	b.Delta(i, "d")
	b.Message().Usage.Output = 7 // changed directly on the message
	b.Delta(i, "e")
	if len(evs) != 7 {
		t.Fatalf("%d events", len(evs))
	}
	for k, ev := range evs {
		if ev.Usage == nil {
			t.Fatalf("event %d (%s) has no usage", k, ev.Type)
		}
	}
	if evs[0].Usage != evs[3].Usage || evs[3].Usage.Input != 0 {
		t.Errorf("events before SetUsage: %p %p %+v", evs[0].Usage, evs[3].Usage, *evs[3].Usage)
	}
	if evs[4].Usage == evs[3].Usage || evs[4].Usage != evs[5].Usage || evs[4].Usage.TotalTokens != 5 {
		t.Errorf("events after SetUsage: %+v %+v", *evs[4].Usage, *evs[5].Usage)
	}
	if evs[6].Usage.Output != 7 || evs[5].Usage.Output != 2 {
		t.Errorf("after a direct change: %+v, before it %+v", *evs[6].Usage, *evs[5].Usage)
	}
}
