package ai_test

import (
	"encoding/json"
	"math/rand"
	"testing"

	"github.com/pisces-agent/pisces/internal/ai"
	"github.com/pisces-agent/pisces/internal/jsonx"
	"github.com/pisces-agent/pisces/rpc"
)

// rpc.MessageUpdateEvent's fast MarshalJSON writes what its reflective
// path (the code before the fast encoders) writes, on both wires, through
// rpc.EncodeEvent, and through rpc.AppendEvent into a reused buffer as the
// RPC writer calls it.
func TestMessageUpdateFastMatchesReflective(t *testing.T) {
	r := rand.New(rand.NewSource(8))
	reference := func(e *rpc.MessageUpdateEvent) ([]byte, error) {
		ai.SetReflectOnly(true)
		defer ai.SetReflectOnly(false)
		if e.Legacy {
			ame, err := e.AssistantMessageEvent.WireJSON(e.Partial)
			if err != nil {
				return nil, err
			}
			return jsonx.MarshalReflect(struct {
				Type                  string               `json:"type"`
				Message               *ai.AssistantMessage `json:"message"`
				AssistantMessageEvent json.RawMessage      `json:"assistantMessageEvent"`
			}{rpc.EventMessageUpdate, e.Partial, ame})
		}
		ame, err := e.AssistantMessageEvent.WireJSON(nil)
		if err != nil {
			return nil, err
		}
		var usage ai.Usage // nil is written as zero usage
		if e.Usage != nil {
			usage = *e.Usage
		}
		return jsonx.MarshalReflect(struct {
			Type                  string          `json:"type"`
			Usage                 ai.Usage        `json:"usage"`
			AssistantMessageEvent json.RawMessage `json:"assistantMessageEvent"`
		}{rpc.EventMessageUpdate, usage, ame})
	}
	buf := []byte("prefix")
	for i := 0; i < 2000; i++ {
		ev, usage, partial := ai.RandomUpdate(r, i%2 == 1)
		e := &rpc.MessageUpdateEvent{Usage: usage, AssistantMessageEvent: ev, Partial: partial, Legacy: r.Intn(2) == 0}
		want, werr := reference(e)
		got, gerr := rpc.EncodeEvent(e)
		appended, aerr := rpc.AppendEvent(buf[:6], e)
		if werr != nil {
			if gerr == nil {
				t.Fatalf("%#v: fast path wrote %s, reflective failed: %v", e, got, werr)
			}
			if aerr == nil || string(appended) != "prefix" {
				t.Fatalf("%#v: AppendEvent wrote %q, reflective failed: %v", e, appended, werr)
			}
			continue
		}
		if gerr != nil || string(got) != string(want) {
			t.Fatalf("%#v: %v\nreflective %s\nfast       %s", e, gerr, want, got)
		}
		if aerr != nil || string(appended) != "prefix"+string(want) {
			t.Fatalf("%#v: %v\nreflective %s\nappended   %s", e, aerr, want, appended)
		}
		buf = appended
	}
}

// A text delta appended into a buffer with room allocates nothing (the RPC
// writer encodes every message_update this way).
func TestAppendEventDeltaAllocs(t *testing.T) {
	e := &rpc.MessageUpdateEvent{AssistantMessageEvent: ai.AssistantEvent{Type: ai.EvTextDelta, ContentIndex: 0, Delta: "w1 "}}
	buf := make([]byte, 0, 1024)
	allocs := testing.AllocsPerRun(100, func() {
		b, err := rpc.AppendEvent(buf[:0], e)
		if err != nil || len(b) == 0 {
			t.Fatal(err)
		}
	})
	if allocs != 0 {
		t.Errorf("AppendEvent of a text delta: %v allocations, want 0", allocs)
	}
}
