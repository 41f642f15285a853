package client_test

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"testing"
	"time"

	"github.com/pisces-agent/pisces/rpc"
	"github.com/pisces-agent/pisces/rpc/client"
)

// fakeServer is the other end of a NewClient connection.
type fakeServer struct {
	t    *testing.T
	out  *io.PipeWriter // what the client reads
	in   *bufio.Reader  // what the client writes
	inR  *io.PipeReader
	cOut *io.PipeReader
	cIn  *io.PipeWriter
}

func newFake(t *testing.T, opts ...client.Option) (*client.Client, *fakeServer) {
	cOut, out := io.Pipe()
	inR, cIn := io.Pipe()
	f := &fakeServer{t: t, out: out, in: bufio.NewReader(inR), inR: inR, cOut: cOut, cIn: cIn}
	c := client.NewClient(cOut, cIn, opts...)
	t.Cleanup(func() {
		out.Close()
		inR.Close()
		c.Close()
	})
	return c, f
}

func (f *fakeServer) send(line string) {
	if _, err := io.WriteString(f.out, line+"\n"); err != nil {
		f.t.Error(err)
	}
}

// recv reads one command line.
func (f *fakeServer) recv() map[string]any {
	line, err := f.in.ReadBytes('\n')
	if err != nil {
		f.t.Errorf("reading a command: %v", err)
		return nil
	}
	var m map[string]any
	if err := json.Unmarshal(line, &m); err != nil {
		f.t.Errorf("command %q: %v", line, err)
	}
	return m
}

func TestNewClientWaitsForReady(t *testing.T) {
	c, f := newFake(t, client.WithWaitForReady())
	got := make(chan error, 1)
	go func() {
		_, err := c.GetState(context.Background())
		got <- err
	}()
	select {
	case err := <-got:
		t.Fatalf("request finished before ready: %v", err)
	case <-time.After(100 * time.Millisecond):
	}
	go f.send(`{"type":"ready"}`)
	cmd := f.recv()
	if cmd["type"] != "get_state" {
		t.Fatalf("command %v", cmd)
	}
	f.send(fmt.Sprintf(`{"id":%q,"type":"response","command":"get_state","success":true,"data":{"model":null,"thinkingLevel":"off","isStreaming":false,"isCompacting":false,"steeringMode":"all","followUpMode":"all","sessionId":"s","autoCompactionEnabled":true,"messageCount":0,"pendingMessageCount":0,"interruptMode":"wait","queuedMessageCount":0,"queueMode":"all"}}`, cmd["id"]))
	if err := <-got; err != nil {
		t.Fatal(err)
	}
}

func TestResponsesOutOfOrder(t *testing.T) {
	c, f := newFake(t)
	type result struct {
		level string
		err   error
	}
	r1, r2 := make(chan result, 1), make(chan result, 1)
	go func() {
		d, err := c.CycleThinkingLevel(context.Background())
		if d != nil {
			r1 <- result{d.Level, err}
		} else {
			r1 <- result{"", err}
		}
	}()
	first := f.recv()
	go func() {
		_, err := c.CycleModel(context.Background())
		r2 <- result{"", err}
	}()
	second := f.recv()
	f.send(fmt.Sprintf(`{"id":%q,"type":"response","command":"cycle_model","success":true,"data":null}`, second["id"]))
	f.send(fmt.Sprintf(`{"id":%q,"type":"response","command":"cycle_thinking_level","success":true,"data":{"level":"high"}}`, first["id"]))
	if r := <-r2; r.err != nil {
		t.Fatal(r.err)
	}
	if r := <-r1; r.err != nil || r.level != "high" {
		t.Fatalf("%+v", r)
	}
	if first["id"] == second["id"] {
		t.Fatal("ids are not unique")
	}
}

func TestDefaultTimeoutAndLateResponse(t *testing.T) {
	c, f := newFake(t, client.WithTimeout(100*time.Millisecond))
	errc := make(chan error, 1)
	go func() { errc <- c.Abort(context.Background()) }()
	cmd := f.recv()
	err := <-errc
	if !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("Abort = %v", err)
	}
	// The late answer is not lost: it arrives as an event.
	f.send(fmt.Sprintf(`{"id":%q,"type":"response","command":"abort","success":true}`, cmd["id"]))
	ev := <-c.Events()
	if ev.Type != "response" {
		t.Fatalf("event %s", ev.Type)
	}
}

func TestConnectionEnds(t *testing.T) {
	c, f := newFake(t)
	errc := make(chan error, 1)
	go func() { _, err := c.GetState(context.Background()); errc <- err }()
	f.recv()
	f.out.Close()
	if err := <-errc; !errors.Is(err, client.ErrClosed) {
		t.Fatalf("GetState = %v", err)
	}
	<-c.Done()
	if _, ok := <-c.Events(); ok {
		t.Fatal("Events not closed")
	}
}

func TestEventQueueDropsOldest(t *testing.T) {
	c, f := newFake(t, client.WithEventQueueLimit(3))
	for i := 1; i <= 10; i++ {
		f.send(fmt.Sprintf(`{"type":"queue_changed","pendingMessageCount":%d}`, i))
	}
	// A response after the events: once it is answered, every event has
	// been read.
	go func() {
		cmd := f.recv()
		f.send(fmt.Sprintf(`{"id":%q,"type":"response","command":"abort_bash","success":true}`, cmd["id"]))
	}()
	if err := c.AbortBash(context.Background()); err != nil {
		t.Fatal(err)
	}
	var got []int
	for len(got)+int(c.DroppedEvents()) < 10 {
		ev := <-c.Events()
		q, err := client.DecodeAs[*rpc.QueueChangedEvent](ev)
		if err != nil {
			t.Fatal(err)
		}
		got = append(got, q.PendingMessageCount)
	}
	if len(got) > 4 || got[len(got)-1] != 10 {
		t.Fatalf("received %v, dropped %d", got, c.DroppedEvents())
	}
	for i := 1; i < len(got); i++ {
		if got[i] <= got[i-1] {
			t.Fatalf("out of order: %v", got)
		}
	}
}

func TestDecodeEventForms(t *testing.T) {
	for _, tc := range []struct {
		line string
		want string
	}{
		{`{"type":"auto_compaction_start","reason":"threshold"}`, "*rpc.CompactionStartEvent"},
		{`{"type":"hook_error","hookPath":"x.ts","event":"tool_call","error":"boom"}`, "*rpc.HookErrorEvent"},
		{`{"type":"something_new","x":1}`, "*client.UnknownEvent"},
		{`{"type":"message_end","message":{"role":"custom","customType":"note","content":"hi","display":true,"timestamp":1}}`, "*rpc.MessageEndEvent"},
		{`{"type":"message_update","usage":{"input":1,"output":2,"cacheRead":0,"cacheWrite":0,"totalTokens":3,"cost":{"input":0,"output":0,"cacheRead":0,"cacheWrite":0,"total":0}},"assistantMessageEvent":{"type":"toolcall_end","contentIndex":0,"toolCall":{"type":"toolCall","id":"t1","name":"bash","arguments":{"command":"ls"}}}}`, "*rpc.MessageUpdateEvent"},
	} {
		v, err := client.DecodeEvent([]byte(tc.line))
		if err != nil {
			t.Fatalf("%s: %v", tc.line, err)
		}
		if got := fmt.Sprintf("%T", v); got != tc.want {
			t.Errorf("%s: decoded as %s, want %s", tc.line, got, tc.want)
		}
		switch e := v.(type) {
		case *rpc.CompactionStartEvent:
			if e.Type != "auto_compaction_start" || e.Reason != "threshold" {
				t.Errorf("%+v", e)
			}
		case *rpc.MessageEndEvent:
			if cm, ok := e.Message.(*rpc.CustomMessage); !ok || cm.CustomType != "note" {
				t.Errorf("%#v", e.Message)
			}
		case *rpc.MessageUpdateEvent:
			tc := e.AssistantMessageEvent.ToolCall
			if e.Usage.TotalTokens != 3 || tc == nil || tc.Name != "bash" || string(tc.Arguments) != `{"command":"ls"}` {
				t.Errorf("%+v", e)
			}
		}
	}
}
