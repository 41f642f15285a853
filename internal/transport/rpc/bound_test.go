package rpcmode

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/pisces-agent/pisces/internal/ai"
	"github.com/pisces-agent/pisces/internal/ai/scripted"
	"github.com/pisces-agent/pisces/internal/core"
	"github.com/pisces-agent/pisces/internal/extensions"
	"github.com/pisces-agent/pisces/internal/models"
	"github.com/pisces-agent/pisces/internal/session"
	"github.com/pisces-agent/pisces/internal/settings"
)

// newScriptedSession is a core session (in memory, no tools) whose model
// is the scripted provider playing script, closed when the test ends.
func newScriptedSession(t testing.TB, script string) *core.Session {
	t.Helper()
	s, err := scriptedSession(t.TempDir(), script)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	return s
}

// scriptedSession is newScriptedSession in dir, closed by the caller.
func scriptedSession(dir, script string) (*core.Session, error) {
	p, err := scripted.Parse([]byte(script), "test")
	if err != nil {
		return nil, err
	}
	reg := models.NewRegistry()
	reg.Add(&models.ProviderEntry{Name: scripted.ProviderName, Provider: p, Models: []*ai.Model{p.Model()}, NoKey: true})
	agentDir := filepath.Join(dir, "agent")
	st, err := settings.Load(agentDir, dir)
	if err != nil {
		return nil, err
	}
	store, err := session.New(session.Options{Cwd: dir, InMemory: true})
	if err != nil {
		return nil, err
	}
	return core.New(core.Options{
		AgentDir: agentDir, Cwd: dir, Settings: st, Models: reg, Store: store, InMemory: true,
		Model: p.Model(), NoContextFiles: true, Log: io.Discard, ActiveTools: []string{},
	})
}

func within(t *testing.T, what string, done <-chan struct{}) {
	t.Helper()
	select {
	case <-done:
	case <-time.After(waitLimit):
		t.Fatalf("%s: not within %s", what, waitLimit)
	}
}

// A client that stops reading stdout holds the run back once the output
// queue is past its limit, instead of letting the process grow; stdin is
// still read meanwhile (an extension UI answer is routed, a quick command
// is carried out), an abort stops the run, and once the client reads again
// every event is there, in order, nothing dropped.
func TestStalledClientHoldsTheRunBack(t *testing.T) {
	for _, interval := range []time.Duration{16 * time.Millisecond, 0} {
		t.Run(fmt.Sprintf("interval=%s", interval), func(t *testing.T) {
			testStalledClient(t, interval)
		})
	}
}

// stalled is a server whose client does not read stdout until drain.
type stalled struct {
	t       *testing.T
	srv     *Server
	outR    *os.File
	outW    *os.File
	inW     *io.PipeWriter
	stop    chan struct{} // closing it stops Serve, as a signal does
	served  chan struct{}
	waiting chan struct{} // closed when a producer first waits for room
}

func startStalled(t *testing.T, sess *core.Session, opts Options) *stalled {
	outR, outW, err := os.Pipe() // not read until drain
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { outR.Close() })
	inR, inW := io.Pipe()
	st := &stalled{t: t, srv: New(sess, outW, opts), outR: outR, outW: outW, inW: inW,
		stop: make(chan struct{}), served: make(chan struct{}), waiting: make(chan struct{})}
	st.srv.w.mu.Lock()
	st.srv.w.onRoomWait = func() {
		select {
		case <-st.waiting:
		default:
			close(st.waiting)
		}
	}
	st.srv.w.mu.Unlock()
	go func() {
		defer close(st.served)
		st.srv.Serve(inR, st.stop)
	}()
	return st
}

func (st *stalled) send(line string) {
	st.t.Helper()
	if _, err := io.WriteString(st.inW, line+"\n"); err != nil {
		st.t.Fatal(err)
	}
}

func (st *stalled) peak() int64 {
	st.srv.w.mu.Lock()
	defer st.srv.w.mu.Unlock()
	return st.srv.w.peak
}

type outLine struct {
	Type    string          `json:"type"`
	ID      string          `json:"id"`
	Command string          `json:"command"`
	Success bool            `json:"success"`
	Aborted *bool           `json:"aborted"`
	Delta   string          `json:"delta"`
	Data    json.RawMessage `json:"data"`
	Message json.RawMessage `json:"message"`
	AME     struct {
		Type  string `json:"type"`
		Delta string `json:"delta"`
	} `json:"assistantMessageEvent"`
}

// drain reads the client's side again: it closes stdin, waits for Serve to
// return and returns every line written.
func (st *stalled) drain() []outLine {
	t := st.t
	t.Helper()
	lines := make(chan []outLine, 1)
	go func() {
		var out []outLine
		br := bufio.NewReader(st.outR)
		for {
			b, err := br.ReadBytes('\n')
			if len(b) > 0 {
				var l outLine
				if json.Unmarshal(b, &l) != nil {
					l.Type = "unparsable: " + string(b[:min(len(b), 80)])
				}
				out = append(out, l)
			}
			if err != nil {
				break
			}
		}
		lines <- out
	}()
	st.inW.Close()
	within(t, "Serve returning after stdin ended", st.served)
	st.outW.Close()
	select {
	case got := <-lines:
		for _, l := range got {
			if strings.HasPrefix(l.Type, "unparsable") {
				t.Fatal(l.Type)
			}
		}
		return got
	case <-time.After(waitLimit):
		t.Fatal("output not drained")
	}
	return nil
}

func testStalledClient(t *testing.T, interval time.Duration) {
	const chunk = 1000
	const limit = 256 << 10
	full := strings.Repeat("0123456789", 400_000) // 4 MB: far more than the limit
	script, _ := json.Marshal(map[string]any{
		"chunkSize": chunk,
		"turns":     []any{map[string]any{"content": []any{map[string]any{"type": "text", "text": full}}, "hang": true}},
	})
	sess := newScriptedSession(t, string(script))
	st := startStalled(t, sess, Options{DeltaInterval: interval, QueueLimit: limit})

	st.send(`{"id":"p1","type":"prompt","message":"go"}`)
	within(t, "the run waiting for the client", st.waiting)
	// One frame past the limit at most: the run waits after each event.
	if peak, max := st.peak(), int64(limit+chunk+4<<10); peak > max {
		t.Fatalf("queue reached %d bytes, limit %d (+ one frame: %d)", peak, limit, max)
	}
	if !sess.IsStreaming() {
		t.Fatal("the run should be waiting, not finished")
	}

	// The reading side still works: an extension UI answer is routed ...
	dialog := make(chan extensions.UIResponse, 1)
	ui := st.srv.Hub().ui
	ui.mu.Lock()
	ui.pending["dlg1"] = &pendingDialog{ch: dialog}
	ui.mu.Unlock()
	st.send(`{"type":"extension_ui_response","id":"dlg1","confirmed":true}`)
	select {
	case r := <-dialog:
		if r.Confirmed == nil || !*r.Confirmed {
			t.Fatalf("dialog answer %+v", r)
		}
	case <-time.After(waitLimit):
		t.Fatal("extension_ui_response not routed while the output queue is full")
	}
	// ... a quick command that emits an event is carried out ...
	st.send(`{"id":"n1","type":"set_session_name","name":"while full"}`)
	// ... and abort stops the run although its answer cannot be written yet.
	st.send(`{"id":"a1","type":"abort"}`)
	idle := make(chan struct{})
	go func() {
		sess.WaitIdle()
		close(idle)
	}()
	within(t, "abort stopping the run", idle)
	if sess.IsStreaming() {
		t.Fatal("still streaming after abort")
	}
	if got := sess.State().SessionName; got != "while full" {
		t.Fatalf("session name %q: set_session_name was not carried out", got)
	}

	// The client reads again: everything arrives.
	var streamed strings.Builder
	var final string
	seen := map[string]bool{}
	for _, l := range st.drain() {
		switch {
		case l.Type == "response":
			if !l.Success {
				t.Errorf("%s (%s) failed", l.ID, l.Command)
			}
			seen[l.ID] = true
		case l.Type == "message_update" && l.AME.Type == ai.EvTextDelta:
			streamed.WriteString(l.AME.Delta)
		case l.Type == "message_end":
			var m struct {
				Role    string       `json:"role"`
				Content []ai.Content `json:"content"`
			}
			json.Unmarshal(l.Message, &m)
			if m.Role == ai.RoleAssistant && len(m.Content) > 0 {
				final = m.Content[0].Text
			}
		case l.Type == "agent_settled":
			seen["settled"] = true
			if l.Aborted == nil || !*l.Aborted {
				t.Error("agent_settled should say aborted")
			}
		case l.Type == "session_info_changed":
			seen["renamed"] = true
		}
	}
	for _, k := range []string{"p1", "n1", "a1", "settled", "renamed"} {
		if !seen[k] {
			t.Errorf("no %s in the output", k)
		}
	}
	if streamed.String() != final {
		t.Fatalf("deltas (%d bytes) differ from the final text (%d bytes): something was dropped", streamed.Len(), len(final))
	}
	if !strings.HasPrefix(full, final) || len(final) >= len(full) {
		t.Fatalf("streamed %d of %d bytes: the run was not held back", len(final), len(full))
	}
}

// The user bash command is held back the same way, and abort_bash stops
// it while its output waits.
func TestStalledClientHoldsBashBack(t *testing.T) {
	const limit = 256 << 10
	const total = 4_000_000
	sess := newScriptedSession(t, `{"turns":[{"content":[{"type":"text","text":"hi"}]}]}`)
	st := startStalled(t, sess, Options{DeltaInterval: 16 * time.Millisecond, QueueLimit: limit})
	st.send(fmt.Sprintf(`{"id":"b1","type":"bash","command":"yes 0123456789 | head -c %d"}`, total))
	within(t, "bash waiting for the client", st.waiting)
	if peak, max := st.peak(), int64(limit+64<<10+4<<10); peak > max {
		t.Fatalf("queue reached %d bytes, limit %d", peak, limit)
	}
	st.send(`{"id":"x1","type":"abort_bash"}`)
	var out strings.Builder
	var data struct {
		Cancelled bool `json:"cancelled"`
	}
	seen := map[string]bool{}
	for _, l := range st.drain() {
		switch l.Type {
		case "bash_execution_update":
			out.WriteString(l.Delta)
		case "response":
			seen[l.ID] = l.Success
			if l.ID == "b1" {
				json.Unmarshal(l.Data, &data)
			}
		}
	}
	if !seen["b1"] || !seen["x1"] {
		t.Fatalf("responses %v", seen)
	}
	if !data.Cancelled {
		t.Error("the bash command should have been cancelled")
	}
	if out.Len() >= total {
		t.Fatalf("%d bytes of output streamed: bash was not held back", out.Len())
	}
}

// A client with MaxQueue (web) never holds a run back, whatever its byte
// limit: when it stops reading, the run still ends for the other client of
// the session, and the stalled one is cut off instead.
func TestCutOffClientNeverPacesTheRun(t *testing.T) {
	// 50 KB in 500 deltas: far past both limits of the stalled client
	// (the frames reader takes lines up to 64 KB)
	full := strings.Repeat("0123456789", 5_000)
	script, _ := json.Marshal(map[string]any{
		"chunkSize": 100,
		"turns":     []any{map[string]any{"content": []any{map[string]any{"type": "text", "text": full}}}},
	})
	sess := newScriptedSession(t, string(script))
	h := NewHub(sess, HubOptions{Shared: true})
	defer h.Close()
	blocked := &blockingWriter{release: make(chan struct{})}
	overflows := make(chan struct{}, 1)
	slow := NewConn(h, blocked, Options{MaxQueue: 64, QueueLimit: 4 << 10, OnOverflow: func() {
		select {
		case overflows <- struct{}{}:
		default:
		}
	}})
	slow.w.mu.Lock()
	slow.w.onRoomWait = func() { t.Error("the run waited for a client with MaxQueue") }
	slow.w.mu.Unlock()
	slow.Start("")
	pr, pw := io.Pipe()
	fast := NewConn(h, pw, Options{})
	out := frames(t, pr)
	fast.Start("")
	next(t, out, "ready")
	fast.Handle([]byte(`{"id":"p1","type":"prompt","message":"go"}`))
	if s := next(t, out, "agent_settled"); s["aborted"] != false {
		t.Fatalf("run ended: %v", s)
	}
	select {
	case <-overflows:
	case <-time.After(waitLimit):
		t.Fatal("the stalled client was not cut off")
	}
	close(blocked.release)
	slow.Finish()
	fast.Finish()
	pw.Close()
}

// A client with MaxQueue (web) is also cut off once the bytes queued for
// it pass its byte limit, however few frames they are (merged deltas, a
// long message_end): a stalled web client cannot make the process grow
// until its write timeout.
func TestCutOffClientPastItsByteLimit(t *testing.T) {
	full := strings.Repeat("0123456789", 5_000) // 50 KB in 500 deltas
	script, _ := json.Marshal(map[string]any{
		"chunkSize": 100,
		"turns":     []any{map[string]any{"content": []any{map[string]any{"type": "text", "text": full}}}},
	})
	sess := newScriptedSession(t, string(script))
	h := NewHub(sess, HubOptions{Shared: true})
	defer h.Close()
	blocked := &blockingWriter{release: make(chan struct{})}
	overflows := make(chan struct{}, 1)
	const limit = 8 << 10
	slow := NewConn(h, blocked, Options{MaxQueue: 1 << 20, QueueLimit: limit, DeltaInterval: 16 * time.Millisecond, OnOverflow: func() {
		select {
		case overflows <- struct{}{}:
		default:
		}
	}})
	slow.Start("")
	pr, pw := io.Pipe()
	fast := NewConn(h, pw, Options{})
	out := frames(t, pr)
	fast.Start("")
	next(t, out, "ready")
	fast.Handle([]byte(`{"id":"p1","type":"prompt","message":"go"}`))
	next(t, out, "agent_settled")
	select {
	case <-overflows:
	case <-time.After(waitLimit):
		t.Fatal("the stalled client was not cut off past its byte limit")
	}
	// Nothing is queued past the limit but the frame that crossed it.
	slow.w.mu.Lock()
	peak := slow.w.peak
	slow.w.mu.Unlock()
	t.Logf("peak %d bytes", peak)
	if max := int64(limit + 4<<10); peak > max {
		t.Fatalf("the cut-off client's queue reached %d bytes (limit %d)", peak, limit)
	}
	close(blocked.release)
	slow.Finish()
	fast.Finish()
	pw.Close()
}

// A shutdown (a signal) does not wait for a client that stops reading:
// Serve gives the queued output a moment to go out and returns, so the
// process exits within its few seconds with the client's stdout full.
func TestShutdownDoesNotWaitForAStalledClient(t *testing.T) {
	full := strings.Repeat("0123456789", 400_000) // 4 MB: far more than the pipe and the limit
	script, _ := json.Marshal(map[string]any{
		"chunkSize": 1000,
		"turns":     []any{map[string]any{"content": []any{map[string]any{"type": "text", "text": full}}, "hang": true}},
	})
	sess := newScriptedSession(t, string(script))
	st := startStalled(t, sess, Options{QueueLimit: 256 << 10})
	st.send(`{"id":"p1","type":"prompt","message":"go"}`)
	within(t, "the run waiting for the client", st.waiting)
	// What the program does on SIGTERM: abort, then stop Serve.
	sess.Abort()
	start := time.Now()
	close(st.stop)
	within(t, "Serve returning after the stop", st.served)
	t.Logf("Serve returned %v after the stop", time.Since(start))
}
