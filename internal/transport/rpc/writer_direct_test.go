//go:build linux

package rpcmode

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/pisces-agent/pisces/internal/ai"
	"github.com/pisces-agent/pisces/rpc"
)

// readPipe reads the lines of r until EOF and sends them on the channel.
func readPipe(t *testing.T, r io.Reader) <-chan []string {
	got := make(chan []string, 1)
	go func() {
		var lines []string
		sc := bufio.NewScanner(r)
		sc.Buffer(nil, 1<<24)
		for sc.Scan() {
			lines = append(lines, sc.Text())
		}
		got <- lines
	}()
	return got
}

// Responses written directly on a pipe and events queued by other
// goroutines keep the order in which each goroutine handed them in, and
// the direct path is taken when nothing is queued.
func TestDirectResponsesKeepOrder(t *testing.T) {
	pr, pw, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	defer pr.Close()
	got := readPipe(t, pr)
	w := newWriter(pw, time.Millisecond, io.Discard)
	if w.tryWrite == nil {
		t.Fatal("an os.Pipe is not recognised as a pipe")
	}
	// Alone, a response is written by the goroutine that hands it in.
	w.response(&rpc.Response{ID: "first", Command: "get_state", Success: true})
	w.mu.Lock()
	directs := w.directs
	w.mu.Unlock()
	if directs != 1 {
		t.Errorf("a response handed in alone: %d written directly, want 1", directs)
	}
	const n = 300
	var wg sync.WaitGroup
	for g := 0; g < 3; g++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := 0; i < n; i++ {
				id := fmt.Sprintf("%d-%d", g, i)
				if i%3 == 0 {
					w.event(&rpc.ExtensionErrorEvent{ExtensionPath: id})
				} else {
					w.response(&rpc.Response{ID: id, Command: "get_state", Success: true, Data: json.RawMessage(`{"n":1}`)})
				}
			}
		}()
	}
	// Deltas from one more goroutine, merged while others are queued.
	wg.Add(1)
	go func() {
		defer wg.Done()
		w.event(&rpc.MessageStartEvent{Message: &ai.AssistantMessage{Role: ai.RoleAssistant}})
		for i := 0; i < n; i++ {
			w.event(&rpc.MessageUpdateEvent{AssistantMessageEvent: ai.AssistantEvent{Type: ai.EvTextDelta, Delta: "x"}})
		}
	}()
	wg.Wait()
	w.close()
	pw.Close()
	lines := <-got
	next := [3]int{}
	text := 0
	for _, l := range lines {
		var f struct {
			ID            string `json:"id"`
			ExtensionPath string `json:"extensionPath"`
			AME           struct {
				Delta string `json:"delta"`
			} `json:"assistantMessageEvent"`
		}
		if err := json.Unmarshal([]byte(l), &f); err != nil {
			t.Fatalf("bad line %q: %v", l, err)
		}
		text += len(f.AME.Delta)
		id := f.ID + f.ExtensionPath
		if id == "" || id == "first" {
			continue
		}
		var g, i int
		if _, err := fmt.Sscanf(id, "%d-%d", &g, &i); err != nil {
			t.Fatalf("line %q: %v", l, err)
		}
		if i != next[g] {
			t.Fatalf("goroutine %d: frame %d came where %d was due", g, i, next[g])
		}
		next[g]++
	}
	if next != [3]int{n, n, n} || text != n {
		t.Fatalf("frames per goroutine %v, delta text %d bytes", next, text)
	}
}

// A client that does not read its output never stops a response from
// being handed in: once the pipe is too full, responses are queued for
// the writer's goroutine (and counted against the queue's byte limit, as
// the responses written directly are not), and nothing is lost or
// reordered when the client reads again.
func TestDirectNeverWaitsForTheReader(t *testing.T) {
	pr, pw, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	defer pr.Close()
	w := newWriter(pw, 0, io.Discard)
	data := json.RawMessage(`"` + strings.Repeat("a", 1000) + `"`)
	const n = 500 // about 500 kB: several times what the pipe holds
	handed := make(chan struct{})
	go func() {
		for i := 0; i < n; i++ {
			w.response(&rpc.Response{ID: fmt.Sprint(i), Command: "get_state", Success: true, Data: data})
		}
		close(handed)
	}()
	select {
	case <-handed:
	case <-time.After(time.Minute):
		t.Fatal("handing in responses waited for the client to read")
	}
	w.mu.Lock()
	directs, peak := w.directs, w.peak
	w.mu.Unlock()
	if directs == 0 || directs == n {
		t.Errorf("%d of %d responses written directly: want the first ones (the pipe is empty), not all", directs, n)
	}
	// Only the responses that went through the queue count against its
	// byte limit: those written directly never were queued.
	if per := int64(frameOverhead + len(data)); peak > (n-directs)*per {
		t.Errorf("peak of %d bytes queued, more than the %d responses not written directly make (%d)", peak, n-directs, (n-directs)*per)
	}
	got := readPipe(t, pr)
	w.close()
	pw.Close()
	lines := <-got
	w.mu.Lock()
	queued := w.queued
	w.mu.Unlock()
	if queued != 0 {
		t.Errorf("%d bytes still counted as queued once everything was written", queued)
	}
	if len(lines) != n {
		t.Fatalf("%d lines, want %d", len(lines), n)
	}
	for i, l := range lines {
		if want := fmt.Sprintf(`{"id":"%d",`, i); !strings.HasPrefix(l, want) {
			t.Fatalf("line %d starts %.20q", i, l)
		}
	}
}
