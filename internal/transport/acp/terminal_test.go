package acp_test

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	sdk "github.com/coder/acp-go-sdk"
)

// startWithTerminals is an in-process agent whose editor advertises
// terminals and runs their commands.
func startWithTerminals(t *testing.T, script string) *agentRun {
	t.Helper()
	r := startInProcess(t, "", script)
	r.ed.mu.Lock()
	r.ed.terms = map[string]*term{}
	r.ed.mu.Unlock()
	if _, err := r.conn.Initialize(r.ctx(), sdk.InitializeRequest{ProtocolVersion: 1, ClientCapabilities: sdk.ClientCapabilities{Terminal: true}}); err != nil {
		t.Fatal(err)
	}
	return r
}

// sessionText is the text of every session file under the agent dir.
func sessionText(t *testing.T, agentDir string) string {
	t.Helper()
	var b strings.Builder
	_ = filepath.Walk(filepath.Join(agentDir, "sessions"), func(p string, fi os.FileInfo, err error) error {
		if err == nil && strings.HasSuffix(p, ".jsonl") {
			data, _ := os.ReadFile(p)
			b.Write(data)
		}
		return nil
	})
	return b.String()
}

func termLog(r *agentRun) []string {
	r.ed.mu.Lock()
	defer r.ed.mu.Unlock()
	return append([]string(nil), r.ed.termLog...)
}

// With a client that advertises terminals, bash runs its command in the
// editor's terminal: the tool call carries the terminal as its content,
// the output and exit code reach the model, and the terminal is released.
func TestClientTerminal(t *testing.T) {
	r := startWithTerminals(t, `{"turns":[
 {"content":[{"type":"toolCall","id":"t1","name":"bash","arguments":{"command":"echo hello from $PWD; echo oops >&2; exit 3"}}]},
 {"content":[{"type":"text","text":"seen"}]}
]}`)
	id := r.newSession("auto")
	if stop := r.prompt(id, "run it"); stop != sdk.StopReasonEndTurn {
		t.Fatalf("stopReason %s", stop)
	}
	ups := r.ed.snapshot()
	start, updates := toolUpdates(ups, "t1")
	checkStatuses(t, start, updates, sdk.ToolCallStatusFailed)
	final := updates[len(updates)-1]
	if len(final.Content) != 1 || final.Content[0].Terminal == nil || final.Content[0].Terminal.TerminalId != "term-1" {
		t.Errorf("final content %s, want the terminal", dump(ups))
	}
	shown := false
	for _, u := range updates {
		if u.Status == nil && len(u.Content) == 1 && u.Content[0].Terminal != nil {
			shown = true
		}
		if contentText(u.Content) != "" {
			t.Errorf("the output was sent as text besides the terminal: %q", contentText(u.Content))
		}
	}
	if !shown {
		t.Error("the terminal was not shown while the command ran")
	}
	if got := termLog(r); !slices.Equal(got, []string{"create term-1", "output term-1", "release term-1"}) {
		t.Errorf("terminal calls %v", got)
	}
	r.ed.mu.Lock()
	req := r.ed.terms["term-1"].req
	r.ed.mu.Unlock()
	if req.Cwd == nil || *req.Cwd != r.proj || len(req.Args) != 2 || req.Args[0] != "-c" || req.OutputByteLimit == nil {
		t.Errorf("terminal/create %+v", req)
	}
	// What the model got: the output and the exit code, as bash words them.
	text := sessionText(t, r.agent)
	for _, want := range []string{"hello from " + r.proj, "oops", "Command exited with code 3"} {
		if !strings.Contains(text, want) {
			t.Errorf("the tool result lacks %q:\n%s", want, text)
		}
	}
}

// session/cancel kills the command in the editor's terminal; bash's
// timeout does too, and the model is told which.
func TestClientTerminalCancelAndTimeout(t *testing.T) {
	r := startWithTerminals(t, `{"turns":[
 {"content":[{"type":"toolCall","id":"long","name":"bash","arguments":{"command":"echo started; exec sleep 120"}}]},
 {"content":[{"type":"toolCall","id":"slow","name":"bash","arguments":{"command":"echo waiting; exec sleep 120","timeout":1}}]},
 {"content":[{"type":"text","text":"timed out"}]}
]}`)
	id := r.newSession("auto")
	stopped := make(chan sdk.StopReason, 1)
	go func() {
		resp, err := r.conn.Prompt(r.ctx(), sdk.PromptRequest{SessionId: id, Prompt: []sdk.ContentBlock{sdk.TextBlock("sleep")}})
		if err != nil {
			t.Errorf("prompt: %v", err)
		}
		stopped <- resp.StopReason
	}()
	r.ed.waitFor(t, "the terminal", func([]sdk.SessionNotification) bool { return slices.Contains(termLog(r), "create term-1") })
	if err := r.conn.Cancel(r.ctx(), sdk.CancelNotification{SessionId: id}); err != nil {
		t.Fatal(err)
	}
	select {
	case stop := <-stopped:
		if stop != sdk.StopReasonCancelled {
			t.Errorf("stopReason %s, want cancelled", stop)
		}
	case <-time.After(waitLimit):
		t.Fatal("the cancelled prompt did not answer")
	}
	r.ed.mu.Lock()
	tm := r.ed.terms["term-1"]
	r.ed.mu.Unlock()
	select {
	case <-tm.done:
	case <-time.After(waitLimit):
		t.Fatal("the cancelled command is still running")
	}
	if got := termLog(r); !slices.Contains(got, "kill term-1") {
		t.Errorf("terminal calls %v, want a kill", got)
	}

	start := time.Now()
	if stop := r.prompt(id, "sleep with a timeout"); stop != sdk.StopReasonEndTurn {
		t.Fatalf("stopReason %s", stop)
	}
	t.Logf("the timed-out prompt took %v", time.Since(start))
	if got := termLog(r); !slices.Contains(got, "kill term-2") || !slices.Contains(got, "release term-2") {
		t.Errorf("terminal calls %v, want term-2 killed and released", got)
	}
	startU, updates := toolUpdates(r.ed.snapshot(), "slow")
	checkStatuses(t, startU, updates, sdk.ToolCallStatusFailed)
	text := sessionText(t, r.agent)
	for _, want := range []string{"waiting", "Command timed out after 1 seconds"} {
		if !strings.Contains(text, want) {
			t.Errorf("the tool result lacks %q", want)
		}
	}
}
