package ai_test

import (
	"encoding/json"
	"math/rand"
	"strings"
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

// The events that carry whole messages (message_start, message_end,
// turn_end, agent_end) are written by hand-written encoders in
// rpc.AppendEvent and rpc.EncodeEvent; they give the bytes and the failures
// of the reflective encoders (jsonx.MarshalReflect of the event with every
// MarshalJSON on its reflective path, i.e. the code before them).
func TestMessageEventsFastMatchReflective(t *testing.T) {
	r := rand.New(rand.NewSource(9))
	reference := func(e rpc.Event) ([]byte, error) {
		ai.SetReflectOnly(true)
		defer ai.SetReflectOnly(false)
		rpc.SetType(e)
		return jsonx.MarshalReflect(e)
	}
	buf := []byte("prefix")
	for i := 0; i < 4000; i++ {
		bad := i%2 == 1
		var e rpc.Event
		switch i % 4 {
		case 0:
			e = &rpc.MessageStartEvent{Message: ai.RandomMessage(r, bad)}
		case 1:
			e = &rpc.MessageEndEvent{Message: ai.RandomMessage(r, bad)}
		case 2:
			te := &rpc.TurnEndEvent{Message: ai.RandomMessage(r, bad)}
			if r.Intn(3) != 0 {
				te.ToolResults = []*ai.ToolResultMessage{}
				for n := r.Intn(3); n > 0; n-- {
					te.ToolResults = append(te.ToolResults, ai.RandomToolResult(r, bad))
				}
			}
			e = te
		default:
			ae := &rpc.AgentEndEvent{WillRetry: r.Intn(2) == 0}
			if r.Intn(4) != 0 {
				ae.Messages = ai.Messages{}
				for n := r.Intn(4); n > 0; n-- {
					ae.Messages = append(ae.Messages, ai.RandomMessage(r, bad))
				}
			}
			e = ae
		}
		if r.Intn(10) == 0 {
			// An emitter may set another type name (legacy renames).
			reflectType(e, "x\u2028<"+e.EventType())
		}
		want, werr := reference(e)
		got, gerr := rpc.EncodeEvent(e)
		appended, aerr := rpc.AppendEvent(buf[:6], e)
		if werr != nil {
			if gerr == nil || gerr.Error() != werr.Error() {
				t.Fatalf("%#v: reflective failed with %v, fast: %s, %v", e, werr, got, gerr)
			}
			if aerr == nil || aerr.Error() != werr.Error() || string(appended) != "prefix" {
				t.Fatalf("%#v: reflective failed with %v, AppendEvent: %q, %v", e, werr, appended, aerr)
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

func reflectType(e rpc.Event, typ string) {
	switch e := e.(type) {
	case *rpc.MessageStartEvent:
		e.Type = typ
	case *rpc.MessageEndEvent:
		e.Type = typ
	case *rpc.TurnEndEvent:
		e.Type = typ
	case *rpc.AgentEndEvent:
		e.Type = typ
	}
}

// A message_end of a long assistant message appended into a buffer with
// room allocates nothing.
func TestAppendEventMessageEndAllocs(t *testing.T) {
	m := &ai.AssistantMessage{Role: ai.RoleAssistant, Content: []ai.Content{ai.Text(strings.Repeat("w1 ", 8000))},
		API: "openai-completions", Provider: "mock", Model: "mock-model", StopReason: ai.StopStop, Timestamp: 1}
	for _, e := range []rpc.Event{&rpc.MessageEndEvent{Message: m}, &rpc.TurnEndEvent{Message: m},
		&rpc.AgentEndEvent{Messages: ai.Messages{m}}} {
		buf := make([]byte, 0, 64<<10)
		allocs := testing.AllocsPerRun(20, func() {
			b, err := rpc.AppendEvent(buf[:0], e)
			if err != nil || len(b) < 24000 {
				t.Fatal(err)
			}
		})
		if allocs != 0 {
			t.Errorf("AppendEvent of %s: %v allocations, want 0", e.EventType(), allocs)
		}
	}
}
