package rpcmode

import (
	"context"
	"io"
	"path/filepath"
	"testing"
	"time"

	"github.com/pisces-agent/pisces/internal/core"
	"github.com/pisces-agent/pisces/internal/extensions"
	"github.com/pisces-agent/pisces/internal/session"
)

// A prompt whose input hook asks the client something is answered once
// the client has answered the dialog: stdin is still read meanwhile (the
// dialog's answer arrives on it), and a quick command sent after the
// prompt is answered after it.
// askingSession is a session whose extension's input hook asks the client
// to confirm every prompt (its answer decides whether the prompt is sent).
func askingSession(t *testing.T) (*core.Session, *extensions.Host) {
	t.Helper()
	dir := t.TempDir()
	host, errs := extensions.Load(extensions.Options{AgentDir: filepath.Join(dir, "agent"), Cwd: dir, NoDiscovery: true, Log: io.Discard})
	if len(errs) > 0 {
		t.Fatal(errs)
	}
	t.Cleanup(func() { host.Close() })
	err := host.AddBuiltin(extensions.NewExtension("asker", func(api *extensions.API) error {
		api.OnInput(func(ctx context.Context, text, _ string) extensions.InputResult {
			if !api.Confirm(ctx, "Send it?", text, 0) {
				return extensions.InputResult{Handled: true}
			}
			return extensions.InputResult{Text: text}
		})
		return nil
	}))
	if err != nil {
		t.Fatal(err)
	}
	st, err := session.New(session.Options{Cwd: dir, InMemory: true})
	if err != nil {
		t.Fatal(err)
	}
	sess, err := core.New(core.Options{AgentDir: filepath.Join(dir, "agent"), Cwd: dir, Store: st, NoContextFiles: true, Log: io.Discard, Extensions: host})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { sess.Close() })

	return sess, host
}

func TestInputHookDialogDoesNotStopReading(t *testing.T) {
	sess, host := askingSession(t)
	inR, inW := io.Pipe()
	outR, outW := io.Pipe()
	srv := New(sess, outW, Options{Stderr: io.Discard})
	host.SetUI(srv.UI())
	served := make(chan error, 1)
	go func() { served <- srv.Serve(inR, nil); outW.Close() }()
	out := frames(t, outR)
	next(t, out, "ready")
	// Lines are written from their own goroutine: a server that stopped
	// reading fails the test at the waits below instead of hanging it.
	lines := make(chan string, 4)
	go func() {
		for l := range lines {
			if _, err := io.WriteString(inW, l+"\n"); err != nil {
				t.Error(err)
				return
			}
		}
		inW.Close()
	}()
	lines <- `{"id":"p1","type":"prompt","message":"hello"}`
	req := next(t, out, "extension_ui_request")
	// While the dialog is open: a quick command, then the dialog's answer.
	lines <- `{"id":"s1","type":"get_state"}`
	lines <- `{"type":"extension_ui_response","id":"` + req["id"].(string) + `","confirmed":false}`
	first := next(t, out, "response")
	second := next(t, out, "response")
	if first["id"] != "p1" || second["id"] != "s1" {
		t.Fatalf("responses %v then %v: want p1, then s1", first, second)
	}
	if d, _ := first["data"].(map[string]any); first["success"] != true || d["disposition"] != "handled" {
		t.Fatalf("prompt response %v: want the prompt handled by the extension", first)
	}
	close(lines)
	if err := <-served; err != nil {
		t.Fatal(err)
	}
}

// A shutdown while a prompt's input hook waits for a dialog nobody
// answers: the lane's goroutine is counted with the commands in flight,
// and Serve gives them ShutdownFlush, then returns (it does not wait for
// the dialog).
func TestShutdownWithALaneCommandWaitingForADialog(t *testing.T) {
	sess, host := askingSession(t)
	inR, inW := io.Pipe()
	defer inW.Close()
	outR, outW := io.Pipe()
	srv := New(sess, outW, Options{Stderr: io.Discard})
	host.SetUI(srv.UI())
	stop := make(chan struct{})
	served := make(chan struct{})
	go func() {
		if err := srv.Serve(inR, stop); err != nil {
			t.Error(err)
		}
		close(served)
	}()
	out := frames(t, outR)
	next(t, out, "ready")
	go io.WriteString(inW, `{"id":"p1","type":"prompt","message":"hello"}`+"\n")
	next(t, out, "extension_ui_request")
	srv.lane.mu.Lock()
	onLane := srv.lane.running
	srv.lane.mu.Unlock()
	if !onLane {
		t.Fatal("the prompt with an input hook is not running on the lane")
	}
	// What the program does on SIGTERM: abort, then stop Serve.
	sess.Abort()
	start := time.Now()
	close(stop)
	within(t, "Serve returning after the stop", served)
	d := time.Since(start)
	t.Logf("Serve returned %v after the stop", d)
	if d < ShutdownFlush {
		t.Errorf("Serve returned %v after the stop: it should have given the prompt in flight %v", d, ShutdownFlush)
	}
	outW.Close()
}
