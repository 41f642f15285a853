package client_test

import (
	"bufio"
	"bytes"
	"errors"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/pisces-agent/pisces/rpc"
	"github.com/pisces-agent/pisces/rpc/client"
)

const threeTurns = `{"turns":[
	{"content":[{"type":"text","text":"one"}]},
	{"content":[{"type":"text","text":"two"}]},
	{"content":[{"type":"text","text":"three"}]}
]}`

// TestOMPWire: after NegotiateProtocol, PromptAndWait ends with the
// prompt's own prompt_result and session_settled follows it; a page cursor
// walks the context one message at a time and goes stale when the session
// moves on; GetMessagesPaged gives what get_messages gives.
func TestOMPWire(t *testing.T) {
	c := start(t, threeTurns, true, "--no-tools")
	ctx := ctxFor(t)
	if _, err := c.NegotiateProtocol(ctx); err != nil {
		t.Fatal(err)
	}
	for i, text := range []string{"one", "two"} {
		evs, err := c.PromptAndWait(ctx, "prompt "+text)
		if err != nil {
			t.Fatal(err)
		}
		last, err := client.DecodeAs[*rpc.PromptResultEvent](evs[len(evs)-1])
		if err != nil {
			t.Fatalf("prompt %d: last event %s: %v", i, evs[len(evs)-1].Type, err)
		}
		if last.Status != rpc.PromptCompleted || !last.AgentInvoked || !last.SessionSettled || last.ID == "" {
			t.Fatalf("prompt %d: %+v", i, last)
		}
		if got := client.AssistantText(evs); got != text {
			t.Fatalf("prompt %d: assistant text %q", i, got)
		}
	}
	st, err := c.GetState(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if st.IsSettled == nil || !*st.IsSettled {
		t.Fatalf("get_state isSettled: %v", st.IsSettled)
	}
	if st.OMPState == nil || st.TokensPerSecond != nil || st.FastModeEnabled || len(st.SystemPrompt) == 0 || st.DumpTools == nil {
		t.Fatalf("get_state's oh-my-pi members: %+v", st.OMPState)
	}
	if _, err := c.SetFastMode(ctx, true); err == nil || !strings.Contains(err.Error(), "Fast mode is unavailable") {
		t.Fatalf("set_fast_mode for the scripted model: %v", err)
	}
	if d, err := c.SetFastMode(ctx, false); err != nil || d.Enabled || d.Active {
		t.Fatalf("set_fast_mode off: %+v, %v", d, err)
	}
	if d, err := c.SetSubagentSubscription(ctx, rpc.SubagentsProgress); err != nil || d.Level != rpc.SubagentsProgress {
		t.Fatalf("set_subagent_subscription: %+v, %v", d, err)
	}
	if d, err := c.GetSubagents(ctx); err != nil || d.Subagents == nil || len(d.Subagents) != 0 {
		t.Fatalf("get_subagents with none under way: %+v, %v", d, err)
	}

	all, err := c.GetMessages(ctx)
	if err != nil {
		t.Fatal(err)
	}
	var paged rpc.Messages
	cursor := ""
	for {
		p, err := c.GetMessagesPage(ctx, cursor, 1)
		if err != nil {
			t.Fatal(err)
		}
		if p.TotalMessages != len(all.Messages) || len(p.Messages) != 1 {
			t.Fatalf("page: %d messages of %d, want 1 of %d", len(p.Messages), p.TotalMessages, len(all.Messages))
		}
		paged = append(paged, p.Messages...)
		if p.NextCursor == "" {
			break
		}
		cursor = p.NextCursor
	}
	if !reflect.DeepEqual(paged, all.Messages) {
		t.Fatal("the pages differ from get_messages")
	}
	first, err := c.GetMessagesPage(ctx, "", 1)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := c.PromptAndWait(ctx, "prompt three"); err != nil {
		t.Fatal(err)
	}
	_, err = c.GetMessagesPage(ctx, first.NextCursor, 1)
	var ce *client.CommandError
	if !errors.As(err, &ce) || ce.Code != rpc.CodeStaleCursor {
		t.Fatalf("a cursor of an earlier state: %v", err)
	}
	all, err = c.GetMessages(ctx)
	if err != nil {
		t.Fatal(err)
	}
	got, err := c.GetMessagesPaged(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(got, all.Messages) {
		t.Fatal("GetMessagesPaged differs from get_messages")
	}
}

// TestOMPChunks: under protocol v2 frames over 1 MiB (a 1.6 MB prompt's
// message events, get_messages' answer) leave pisces as rpc_chunk lines of
// at most 1 MiB, and the client puts them together; the run's agent_end
// leaves out the messages already sent and carries messageCount.
func TestOMPChunks(t *testing.T) {
	dir := t.TempDir()
	script := filepath.Join(dir, "script.json")
	if err := os.WriteFile(script, []byte(threeTurns), 0o644); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(piscesBin, "--mode", "rpc", "--provider", "scripted", "--script", script,
		"--agent-dir", filepath.Join(dir, "agent"), "--no-session", "--no-tools")
	cmd.Dir = dir
	stdin, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cmd.Process.Kill(); cmd.Wait() })
	// The client reads what pisces writes through a line checker.
	pr, pw := io.Pipe()
	var chunks, longest atomic.Int64
	go func() {
		br := bufio.NewReaderSize(stdout, 1<<16)
		for {
			line, err := br.ReadBytes('\n')
			if n := int64(len(line)); n > longest.Load() {
				longest.Store(n)
			}
			if bytes.HasPrefix(line, []byte(`{"type":"rpc_chunk"`)) {
				chunks.Add(1)
			}
			if _, werr := pw.Write(line); werr != nil || err != nil {
				pw.CloseWithError(err)
				return
			}
		}
	}()
	c := client.NewClient(pr, stdin, client.WithTimeout(time.Minute), client.WithGracePeriod(2*time.Second))
	t.Cleanup(func() { c.Close() })
	ctx := ctxFor(t)
	if err := c.WaitReady(ctx); err != nil {
		t.Fatal(err)
	}
	if _, err := c.NegotiateProtocol(ctx); err != nil {
		t.Fatal(err)
	}
	long := strings.Repeat("0123456789abcdef", 100_000)
	evs, err := c.PromptAndWait(ctx, long)
	if err != nil {
		t.Fatal(err)
	}
	found := false
	for _, ev := range evs {
		if ev.Type == rpc.EventRPCChunk {
			t.Fatal("an rpc_chunk reached the events")
		}
		if ev.Type == rpc.EventMessageEnd && strings.Contains(string(ev.Raw), long) {
			m, err := ev.Message()
			if err != nil {
				t.Fatal(err)
			}
			_, found = m.(*rpc.UserMessage)
		}
	}
	if !found {
		t.Fatal("the user message_end (over 1 MiB) did not arrive whole")
	}
	// agent_end would pass 1 MiB: it leaves out the messages message_end
	// already sent (all of them here) and says how many the run had.
	var end *rpc.AgentEndEvent
	for _, ev := range evs {
		if ev.Type == rpc.EventAgentEnd {
			if end, err = client.DecodeAs[*rpc.AgentEndEvent](ev); err != nil {
				t.Fatal(err)
			}
		}
	}
	if end == nil || end.MessageCount == nil || *end.MessageCount != 3 || len(end.Messages) != 0 {
		t.Fatalf("agent_end: %+v", end)
	}
	before := chunks.Load()
	all, err := c.GetMessages(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if n := len(all.Messages); n < 3 {
		t.Fatalf("get_messages: %d messages", n)
	}
	if before < 2 || chunks.Load() < before+2 {
		t.Fatalf("rpc_chunk lines: %d for the run, %d in all", before, chunks.Load())
	}
	if n := longest.Load(); n > rpc.MaxFrameBytes {
		t.Fatalf("a line of %d bytes under protocol v2", n)
	}
}

// TestOMPOpenSession: open_session of the session folder in use continues
// its newest session (nothing changes); of an empty folder it starts a
// session whose file is written there; of the first folder again it goes
// back to the newest session with messages.
func TestOMPOpenSession(t *testing.T) {
	c := start(t, threeTurns, true, "--no-tools")
	ctx := ctxFor(t)
	if _, err := c.PromptAndWait(ctx, "first"); err != nil {
		t.Fatal(err)
	}
	st, err := c.GetState(ctx)
	if err != nil {
		t.Fatal(err)
	}
	first := st.SessionFile
	d, err := c.OpenSession(ctx, "sessions") // relative to the session's directory
	if err != nil {
		t.Fatal(err)
	}
	if d.Cancelled || !d.Resumed || d.SessionFile != first || d.SessionID != st.SessionID {
		t.Fatalf("open_session of the folder in use: %+v (current %s)", d, first)
	}
	other := t.TempDir()
	d, err = c.OpenSession(ctx, other)
	if err != nil {
		t.Fatal(err)
	}
	if d.Cancelled || d.Resumed || filepath.Dir(d.SessionFile) != other {
		t.Fatalf("open_session of an empty folder: %+v", d)
	}
	if _, err := c.PromptAndWait(ctx, "second"); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(d.SessionFile); err != nil {
		t.Fatalf("the new session's file: %v", err)
	}
	// The process holds the new file's lock (another process gets a
	// read-only view of it).
	lock := filepath.Join(filepath.Dir(d.SessionFile), "."+filepath.Base(d.SessionFile)+".lock")
	if _, err := os.Stat(lock); err != nil {
		t.Fatalf("the new session's lock: %v", err)
	}
	d, err = c.OpenSession(ctx, filepath.Dir(first))
	if err != nil {
		t.Fatal(err)
	}
	if !d.Resumed || d.SessionFile != first {
		t.Fatalf("open_session back: %+v, want %s", d, first)
	}
	msgs, err := c.GetMessages(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if got := len(msgs.Messages); got != 3 { // system, user, assistant
		t.Fatalf("%d messages after going back", got)
	}
}

// TestOMPPromptRefused: on oh-my-pi's wire a prompt is answered before it
// is tried; one that cannot start (a run is going on and it has no
// streamingBehavior) then gets a failed response and prompt_result
// {agentInvoked:false, status:"error"}, and PromptAndWait returns that
// error.
func TestOMPPromptRefused(t *testing.T) {
	c := start(t, `{"turns":[{"content":[{"type":"text","text":"busy"}],"hang":true}]}`, true, "--no-tools")
	ctx := ctxFor(t)
	if _, err := c.NegotiateProtocol(ctx); err != nil {
		t.Fatal(err)
	}
	sub := c.Events()
	if _, err := c.Prompt(ctx, "start"); err != nil {
		t.Fatal(err)
	}
	for ev := range sub {
		if ev.Type == rpc.EventMessageUpdate {
			break
		}
	}
	evs, err := c.PromptAndWait(ctx, "refused")
	if err == nil || !strings.Contains(err.Error(), "already processing") {
		t.Fatalf("PromptAndWait during a run: %v", err)
	}
	last, derr := client.DecodeAs[*rpc.PromptResultEvent](evs[len(evs)-1])
	if derr != nil || last.AgentInvoked || last.Status != rpc.PromptError || last.Error == nil || last.Error.Retryable {
		t.Fatalf("last event %s: %+v (%v)", evs[len(evs)-1].Type, last, derr)
	}
	if err := c.Abort(ctx); err != nil {
		t.Fatal(err)
	}
}
