package rpcmode

import (
	"fmt"
	"io"
	"sync"
	"testing"
	"time"
)

// The lane answers quick commands in the order they arrived: at once on
// the caller's goroutine when nothing is ahead, and behind a command that
// may wait without holding the caller (which must go on reading, e.g. the
// answer to the dialog the waiting command opened).
func TestLaneKeepsOrderWithoutHoldingTheReader(t *testing.T) {
	s := NewConn(nil, io.Discard, Options{})
	defer s.Close()
	var mu sync.Mutex
	var order []string
	did := func(name string) func() {
		return func() {
			mu.Lock()
			order = append(order, name)
			mu.Unlock()
		}
	}
	// Alone and quick: run before inOrder returns.
	s.inOrder(false, did("a"))
	mu.Lock()
	if len(order) != 1 {
		t.Fatalf("a quick command with nothing ahead did not run at once: %v", order)
	}
	mu.Unlock()

	// A command that waits (for a dialog answer here) does not hold the
	// caller; the quick ones after it wait for it.
	answer := make(chan struct{})
	returned := make(chan struct{})
	go func() {
		s.inOrder(true, func() { <-answer; did("b")() })
		s.inOrder(false, did("c"))
		s.inOrder(false, did("d"))
		close(returned)
	}()
	select {
	case <-returned:
	case <-time.After(time.Minute):
		t.Fatal("handing in commands behind a waiting one held the caller")
	}
	mu.Lock()
	if len(order) != 1 {
		t.Fatalf("commands ran ahead of the waiting one: %v", order)
	}
	mu.Unlock()
	close(answer)
	s.wg.Wait() // the lane's goroutine is counted with the commands in flight
	s.inOrder(false, did("e"))
	mu.Lock()
	defer mu.Unlock()
	if got := fmt.Sprint(order); got != "[a b c d e]" {
		t.Fatalf("order %s", got)
	}
}
