package rpcmode

import (
	"bufio"
	"bytes"
	"encoding/json"
	"io"
	"strings"
	"testing"
	"time"

	"github.com/pisces-agent/pisces/internal/ai"
	"github.com/pisces-agent/pisces/rpc"
)

// slowWriter makes every write take a little time, like a slow client.
type slowWriter struct {
	buf   bytes.Buffer
	delay time.Duration
}

func (s *slowWriter) Write(p []byte) (int, error) {
	time.Sleep(s.delay)
	return s.buf.Write(p)
}

func feed(w *writer, n int) string {
	w.event(&rpc.MessageStartEvent{Message: &ai.AssistantMessage{Role: ai.RoleAssistant}})
	w.event(&rpc.MessageUpdateEvent{AssistantMessageEvent: ai.AssistantEvent{Type: ai.EvTextStart}})
	var all strings.Builder
	for i := 0; i < n; i++ {
		d := string(rune('a' + i%26))
		all.WriteString(d)
		w.event(&rpc.MessageUpdateEvent{AssistantMessageEvent: ai.AssistantEvent{Type: ai.EvTextDelta, Delta: d}})
	}
	w.event(&rpc.MessageUpdateEvent{AssistantMessageEvent: ai.AssistantEvent{Type: ai.EvTextEnd, Content: all.String()}})
	w.response(&rpc.Response{ID: "x", Command: "get_state", Success: true})
	w.close()
	return all.String()
}

type line struct {
	Type string `json:"type"`
	ID   string `json:"id"`
	AME  struct {
		Type    string `json:"type"`
		Delta   string `json:"delta"`
		Content string `json:"content"`
	} `json:"assistantMessageEvent"`
}

func parse(t *testing.T, r io.Reader) []line {
	var out []line
	sc := bufio.NewScanner(r)
	sc.Buffer(nil, 1<<24)
	for sc.Scan() {
		var l line
		if err := json.Unmarshal(sc.Bytes(), &l); err != nil {
			t.Fatalf("bad line %q: %v", sc.Text(), err)
		}
		out = append(out, l)
	}
	return out
}

func TestDeltasMergeWithoutLoss(t *testing.T) {
	out := &slowWriter{delay: 50 * time.Microsecond}
	w := newWriter(out, 16*time.Millisecond, io.Discard)
	want := feed(w, 5000)
	lines := parse(t, &out.buf)
	var got strings.Builder
	deltas := 0
	for i, l := range lines {
		if l.AME.Type == ai.EvTextDelta {
			deltas++
			got.WriteString(l.AME.Delta)
			if deltas == 1 && l.AME.Delta != "a" {
				t.Errorf("the first delta of a block must go out alone, got %q", l.AME.Delta)
			}
		}
		if l.AME.Type == ai.EvTextEnd && l.AME.Content != want {
			t.Errorf("text_end must carry the whole text")
		}
		if i == len(lines)-1 && l.Type != "response" {
			t.Errorf("order changed: last line is %s", l.Type)
		}
	}
	if got.String() != want {
		t.Fatalf("merged deltas lost or reordered text")
	}
	if deltas >= 5000 || deltas < 2 {
		t.Fatalf("expected merged frames, got %d delta frames", deltas)
	}
}

func TestIntervalZeroKeepsEveryChunk(t *testing.T) {
	var out bytes.Buffer
	w := newWriter(&out, 0, io.Discard)
	want := feed(w, 300)
	lines := parse(t, &out)
	var got strings.Builder
	deltas := 0
	for _, l := range lines {
		if l.AME.Type == ai.EvTextDelta {
			deltas++
			got.WriteString(l.AME.Delta)
		}
	}
	if deltas != 300 || got.String() != want {
		t.Fatalf("got %d delta frames", deltas)
	}
}

// A delta waiting for more deltas to merge goes out as soon as anything
// else is queued behind it: text_end, message_end and the next turn are
// not held back for the rest of the interval.
func TestWaitingDeltaGoesOutWhenAFrameQueuesBehindIt(t *testing.T) {
	pr, pw := io.Pipe()
	waiting := make(chan struct{}, 1)
	w := newWriterOnWait(pw, time.Hour, io.Discard, func() {
		select {
		case waiting <- struct{}{}:
		default:
		}
	})
	lines := make(chan line, 16)
	go func() {
		sc := bufio.NewScanner(pr)
		for sc.Scan() {
			var l line
			if err := json.Unmarshal(sc.Bytes(), &l); err == nil {
				lines <- l
			}
		}
		close(lines)
	}()
	next := func(want string) line {
		t.Helper()
		select {
		case l := <-lines:
			if got := l.Type + "/" + l.AME.Type; got != want {
				t.Fatalf("got %s, want %s", got, want)
			}
			return l
		case <-time.After(time.Minute):
			t.Fatalf("%s not written within a minute (the delta interval is an hour)", want)
		}
		return line{}
	}
	w.event(&rpc.MessageStartEvent{Message: &ai.AssistantMessage{Role: ai.RoleAssistant}})
	w.event(&rpc.MessageUpdateEvent{AssistantMessageEvent: ai.AssistantEvent{Type: ai.EvTextStart}})
	w.event(&rpc.MessageUpdateEvent{AssistantMessageEvent: ai.AssistantEvent{Type: ai.EvTextDelta, Delta: "a"}})
	next("message_start/")
	next("message_update/text_start")
	next("message_update/text_delta") // the block's first delta: at once
	w.event(&rpc.MessageUpdateEvent{AssistantMessageEvent: ai.AssistantEvent{Type: ai.EvTextDelta, Delta: "b"}})
	select { // the writer now waits to merge more
	case <-waiting:
	case <-time.After(time.Minute):
		t.Fatal("the writer did not wait to merge the second delta")
	}
	w.event(&rpc.MessageUpdateEvent{AssistantMessageEvent: ai.AssistantEvent{Type: ai.EvTextDelta, Delta: "c"}})
	w.event(&rpc.MessageUpdateEvent{AssistantMessageEvent: ai.AssistantEvent{Type: ai.EvTextEnd, Content: "abc"}})
	if l := next("message_update/text_delta"); l.AME.Delta != "bc" {
		t.Fatalf("merged delta %q, want %q", l.AME.Delta, "bc")
	}
	next("message_update/text_end")
	w.close()
	pw.Close()
}
