package rpcmode

import (
	"bufio"
	"context"
	"encoding/json"
	"io"
	"path/filepath"
	"strconv"
	"testing"
	"time"

	"github.com/pisces-agent/pisces/internal/core"
	"github.com/pisces-agent/pisces/internal/extensions"
	"github.com/pisces-agent/pisces/internal/session"
	"github.com/pisces-agent/pisces/rpc"
)

const waitLimit = 30 * time.Second

func newCore(t *testing.T) *core.Session {
	t.Helper()
	dir := t.TempDir()
	st, err := session.New(session.Options{Cwd: dir, InMemory: true})
	if err != nil {
		t.Fatal(err)
	}
	s, err := core.New(core.Options{AgentDir: filepath.Join(dir, "agent"), Cwd: dir, Store: st, NoContextFiles: true, Log: io.Discard})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	return s
}

// frames reads the JSON lines a connection writes.
func frames(t *testing.T, r io.Reader) <-chan map[string]any {
	ch := make(chan map[string]any, 64)
	go func() {
		defer close(ch)
		sc := bufio.NewScanner(r)
		for sc.Scan() {
			var m map[string]any
			if err := json.Unmarshal(sc.Bytes(), &m); err != nil {
				t.Errorf("bad frame %q", sc.Text())
				return
			}
			ch <- m
		}
	}()
	return ch
}

func next(t *testing.T, ch <-chan map[string]any, typ string) map[string]any {
	t.Helper()
	deadline := time.After(waitLimit)
	for {
		select {
		case m, ok := <-ch:
			if !ok {
				t.Fatalf("output ended before %s", typ)
			}
			if m["type"] == typ {
				return m
			}
		case <-deadline:
			t.Fatalf("no %s", typ)
		}
	}
}

// In a shared session, a dialog without a timeout of its own waits while a
// client is attached, and ends as cancelled once nobody has been attached
// for the unattended period: no run waits forever.
func TestUnattendedDialogEnds(t *testing.T) {
	h := NewHub(newCore(t), HubOptions{Shared: true, Unattended: 100 * time.Millisecond})
	defer h.Close()

	got := make(chan extensions.UIResponse, 1)
	go func() { got <- h.UI().Dialog(context.Background(), "editor", map[string]any{"title": "Edit"}, 0) }()
	select {
	case r := <-got:
		if !r.Cancelled {
			t.Fatalf("unattended editor: %+v", r)
		}
	case <-time.After(waitLimit):
		t.Fatal("an editor with nobody attached waited on")
	}

	// With a client attached, the dialog reaches it (also when it is
	// already open) and its answer counts. On a hub with the default
	// unattended period: however long the client takes to attach, the
	// dialog has not given up on it.
	h2 := NewHub(newCore(t), HubOptions{Shared: true})
	defer h2.Close()
	pr, pw := io.Pipe()
	c := NewConn(h2, pw, Options{})
	out := frames(t, pr)
	go func() { got <- h2.UI().Dialog(context.Background(), "editor", map[string]any{"title": "Edit"}, 0) }()
	c.Start("")
	req := next(t, out, "extension_ui_request")
	if req["method"] != "editor" {
		t.Fatalf("request: %v", req)
	}
	c.Handle([]byte(`{"type":"extension_ui_response","id":"` + req["id"].(string) + `","value":"written"}`))
	select {
	case r := <-got:
		if r.Cancelled || r.Value == nil || *r.Value != "written" {
			t.Fatalf("answer: %+v", r)
		}
	case <-time.After(waitLimit):
		t.Fatal("the answer did not reach the dialog")
	}
	c.Finish()
	pw.Close()
}

// A trust question in a shared session with nobody attached is not asked:
// that is no answer.
func TestTrustNotAskedWithNobodyAttached(t *testing.T) {
	h := NewHub(newCore(t), HubOptions{Shared: true})
	defer h.Close()
	if answer, answered := h.AskTrust(context.Background(), "/some/project"); answer || answered {
		t.Fatalf("asked nobody and got %v %v", answer, answered)
	}
}

// blockingWriter is a client that stopped reading: every write waits
// until release is closed.
type blockingWriter struct{ release chan struct{} }

func (b *blockingWriter) Write(p []byte) (int, error) {
	<-b.release
	return len(p), nil
}

// A client that stops reading fills only its own queue: publishing never
// waits for it, another client of the session gets every event, and past
// MaxQueue the slow one is cut off (OnOverflow, once) and gets nothing
// more.
func TestSlowClientIsCutOffAlone(t *testing.T) {
	sess := newCore(t)
	h := NewHub(sess, HubOptions{Shared: true})
	defer h.Close()
	blocked := &blockingWriter{release: make(chan struct{})}
	overflows := make(chan struct{}, 4)
	slow := NewConn(h, blocked, Options{MaxQueue: 8, OnOverflow: func() { overflows <- struct{}{} }})
	slow.Start("")
	pr, pw := io.Pipe()
	fast := NewConn(h, pw, Options{})
	out := frames(t, pr)
	fast.Start("")
	next(t, out, "ready")

	const n = 200
	published := make(chan struct{})
	go func() {
		for i := 0; i < n; i++ {
			sess.EmitExternal(&rpc.ExtensionErrorEvent{ExtensionPath: "x", Event: "e", Error: strconv.Itoa(i)})
		}
		close(published)
	}()
	select {
	case <-published:
	case <-time.After(waitLimit):
		t.Fatal("publishing waited for the client that does not read")
	}
	for i := 0; i < n; i++ {
		if e := next(t, out, "extension_error"); e["error"] != strconv.Itoa(i) {
			t.Fatalf("event %d: %v", i, e)
		}
	}
	select {
	case <-overflows:
	case <-time.After(waitLimit):
		t.Fatal("the slow client was not cut off")
	}
	if q := slow.w.pending(); q > 8 {
		t.Fatalf("the cut-off client's queue holds %d frames", q)
	}
	if len(overflows) != 0 {
		t.Fatal("OnOverflow ran more than once")
	}
	close(blocked.release)
	slow.Finish()
	fast.Finish()
	pw.Close()
}
