package client_test

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/pisces-agent/pisces/rpc"
	"github.com/pisces-agent/pisces/rpc/client"
)

const helloScript = `{"turns":[{"content":[{"type":"thinking","thinking":"hmm"},{"type":"text","text":"hello world"}]}],"chunkSize":3}`

const toolScript = `{"turns":[
	{"content":[{"type":"toolCall","name":"bash","arguments":{"command":"echo hi"}}]},
	{"content":[{"type":"text","text":"The command printed: hi"}]}
]}`

func TestGetState(t *testing.T) {
	c := start(t, helloScript, false)
	st, err := c.GetState(ctxFor(t))
	if err != nil {
		t.Fatal(err)
	}
	if st.Model == nil || st.Model.Provider != "scripted" || st.IsStreaming || st.SessionID == "" {
		t.Fatalf("unexpected state %+v", st)
	}
	if c.PID() == 0 {
		t.Error("PID is 0")
	}
}

func TestPromptAndWait(t *testing.T) {
	c := start(t, helloScript, false)
	evs, err := c.PromptAndWait(ctxFor(t), "hi")
	if err != nil {
		t.Fatal(err)
	}
	if got := client.AssistantText(evs); got != "hello world" {
		t.Fatalf("assistant text %q", got)
	}
	if last := evs[len(evs)-1]; last.Type != rpc.EventAgentSettled {
		t.Fatalf("last event %s", last.Type)
	}
	var types []string
	var text strings.Builder
	for _, ev := range evs {
		types = append(types, ev.Type)
		v, err := ev.Decode()
		if err != nil {
			t.Fatalf("decoding %s: %v", ev.Raw, err)
		}
		if v.EventType() != ev.Type {
			t.Errorf("%s decoded as %T", ev.Type, v)
		}
		if u, ok := v.(*rpc.MessageUpdateEvent); ok {
			if u.Legacy {
				t.Error("message_update decoded as legacy")
			}
			if u.AssistantMessageEvent.Type == "text_delta" {
				text.WriteString(u.AssistantMessageEvent.Delta)
			}
		}
	}
	if text.String() != "hello world" {
		t.Errorf("text deltas add up to %q", text.String())
	}
	for _, want := range []string{"agent_start", "turn_start", "message_start", "message_update", "message_end", "turn_end", "agent_end"} {
		if !slices.Contains(types, want) {
			t.Errorf("no %s in %v", want, types)
		}
	}
	i := slices.IndexFunc(evs, func(e client.Event) bool { return e.Type == rpc.EventAgentEnd })
	end, err := client.DecodeAs[*rpc.AgentEndEvent](evs[i])
	if err != nil {
		t.Fatal(err)
	}
	am, ok := end.Messages[len(end.Messages)-1].(*rpc.AssistantMessage)
	if !ok || am.StopReason != "stop" {
		t.Fatalf("last message of agent_end: %#v", end.Messages[len(end.Messages)-1])
	}
	if _, err := client.DecodeAs[*rpc.TurnEndEvent](evs[i]); err == nil {
		t.Error("DecodeAs accepted the wrong type")
	}

	txt, err := c.GetLastAssistantText(ctxFor(t))
	if err != nil || txt.Text == nil || *txt.Text != "hello world" {
		t.Fatalf("GetLastAssistantText = %+v, %v", txt, err)
	}
	msgs, err := c.GetMessages(ctxFor(t))
	if err != nil {
		t.Fatal(err)
	}
	var roles []string
	for _, m := range msgs.Messages {
		roles = append(roles, m.MessageRole())
	}
	if !slices.Contains(roles, "user") || !slices.Contains(roles, "assistant") {
		t.Fatalf("roles %v", roles)
	}
}

func TestToolCall(t *testing.T) {
	c := start(t, toolScript, false)
	evs, err := c.PromptAndWait(ctxFor(t), "run echo")
	if err != nil {
		t.Fatal(err)
	}
	var end *rpc.ToolExecutionEndEvent
	var turnEnds []*rpc.TurnEndEvent
	for _, ev := range evs {
		switch ev.Type {
		case rpc.EventToolExecutionEnd:
			if end, err = client.DecodeAs[*rpc.ToolExecutionEndEvent](ev); err != nil {
				t.Fatal(err)
			}
		case rpc.EventTurnEnd:
			te, err := client.DecodeAs[*rpc.TurnEndEvent](ev)
			if err != nil {
				t.Fatal(err)
			}
			turnEnds = append(turnEnds, te)
		case rpc.EventMessageEnd:
			if _, err := ev.Message(); err != nil {
				t.Fatal(err)
			}
		}
	}
	if end == nil || end.ToolName != "bash" || end.IsError || len(end.Result.Content) == 0 || !strings.Contains(end.Result.Content[0].Text, "hi") {
		t.Fatalf("tool_execution_end %+v", end)
	}
	if len(turnEnds) != 2 || len(turnEnds[0].ToolResults) != 1 || turnEnds[0].Message.MessageRole() != "assistant" {
		t.Fatalf("turn_end events %+v", turnEnds)
	}
	if got := client.AssistantText(evs); got != "The command printed: hi" {
		t.Fatalf("assistant text %q", got)
	}
}

func TestCommandError(t *testing.T) {
	c := start(t, helloScript, false)
	err := c.SetThinkingLevel(ctxFor(t), "enormous")
	var ce *client.CommandError
	if !errors.As(err, &ce) || ce.Command != rpc.CmdSetThinkingLevel || !strings.Contains(ce.Message, "level") {
		t.Fatalf("err = %v", err)
	}
	resp, err := c.Call(ctxFor(t), rpc.SimpleCommand{Type: "no_such_command"})
	if !errors.As(err, &ce) || ce.Message != "Unknown command: no_such_command" || resp == nil || resp.Success {
		t.Fatalf("err = %v, resp = %+v", err, resp)
	}
	_, err = c.Call(ctxFor(t), rpc.SimpleCommand{Type: rpc.CmdCompact})
	if !errors.As(err, &ce) || ce.Message != "Nothing to compact (session too small)" {
		t.Fatalf("compact: %v", err)
	}
	// Call with a map and with an explicit id.
	resp, err = c.Call(ctxFor(t), map[string]any{"type": "get_state", "id": "mine"})
	if err != nil || resp.ID != "mine" || !resp.Success {
		t.Fatalf("Call: %+v, %v", resp, err)
	}
	if _, err := c.Call(ctxFor(t), map[string]any{"id": "x"}); err == nil {
		t.Fatal("Call accepted a command without type")
	}
}

// TestAllCommands sends every command of the typed API.
func TestAllCommands(t *testing.T) {
	c := start(t, `{"turns":[{"content":[{"type":"text","text":"one"}]},{"content":[{"type":"text","text":"two"}]}]}`, true)
	ctx := ctxFor(t)
	must := func(err error) {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
	}
	if _, err := c.PromptAndWait(ctx, "first"); err != nil {
		t.Fatal(err)
	}
	st, err := c.GetState(ctx)
	must(err)
	firstFile := st.SessionFile
	if firstFile == "" {
		t.Fatal("no session file")
	}

	models, err := c.GetAvailableModels(ctx)
	must(err)
	if len(models.Models) == 0 {
		t.Fatal("no models")
	}
	m, err := c.SetModel(ctx, models.Models[0].Provider, models.Models[0].ID)
	must(err)
	if m.ID != models.Models[0].ID {
		t.Fatalf("SetModel returned %+v", m)
	}
	if _, err := c.CycleModel(ctx); err != nil { // nil data is fine
		t.Fatal(err)
	}
	levels, err := c.GetAvailableThinkingLevels(ctx)
	must(err)
	if len(levels.Levels) == 0 {
		t.Fatal("no levels")
	}
	must(c.SetThinkingLevel(ctx, "low"))
	if _, err := c.CycleThinkingLevel(ctx); err != nil {
		t.Fatal(err)
	}
	must(c.SetSteeringMode(ctx, "all"))
	must(c.SetFollowUpMode(ctx, "all"))
	must(c.SetInterruptMode(ctx, "wait"))
	must(c.SetAutoCompaction(ctx, false))
	must(c.SetAutoRetry(ctx, false))
	must(c.AbortRetry(ctx))
	st, err = c.GetState(ctx)
	must(err)
	if st.SteeringMode != "all" || st.FollowUpMode != "all" || st.InterruptMode != "wait" || st.AutoCompactionEnabled {
		t.Fatalf("state after setters: %+v", st)
	}

	b, err := c.Bash(ctx, "echo out; exit 3", true)
	must(err)
	if b.Output != "out\n" || b.ExitCode == nil || *b.ExitCode != 3 {
		t.Fatalf("bash %+v", b)
	}
	must(c.AbortBash(ctx))
	must(c.SetSessionName(ctx, "typed client"))
	stats, err := c.GetSessionStats(ctx)
	must(err)
	if stats.UserMessages != 1 || stats.AssistantMessages != 1 {
		t.Fatalf("stats %+v", stats)
	}
	q, err := c.ClearQueue(ctx)
	must(err)
	if len(q.Steering)+len(q.FollowUp) != 0 {
		t.Fatalf("queue %+v", q)
	}
	entries, err := c.GetEntries(ctx, "")
	must(err)
	if len(entries.Entries) == 0 || entries.LeafID == nil {
		t.Fatalf("entries %+v", entries)
	}
	since, err := c.GetEntries(ctx, *entries.LeafID)
	must(err)
	if len(since.Entries) != 0 {
		t.Fatalf("entries since the leaf: %d", len(since.Entries))
	}
	tree, err := c.GetTree(ctx)
	must(err)
	if len(tree.Tree) == 0 {
		t.Fatal("empty tree")
	}
	cd, err := c.Clone(ctx) // clone needs a saved session; a fresh fork is not saved yet
	must(err)
	if cd.Cancelled {
		t.Fatal("clone cancelled")
	}
	fm, err := c.GetForkMessages(ctx)
	must(err)
	if len(fm.Messages) != 1 || fm.Messages[0].Text != "first" {
		t.Fatalf("fork messages %+v", fm)
	}
	fd, err := c.Fork(ctx, fm.Messages[0].EntryID)
	must(err)
	if fd.Text != "first" || fd.Cancelled {
		t.Fatalf("fork %+v", fd)
	}
	cd, err = c.NewSession(ctx, "")
	must(err)
	if cd.Cancelled {
		t.Fatal("new_session cancelled")
	}
	cd, err = c.SwitchSession(ctx, firstFile)
	must(err)
	st, err = c.GetState(ctx)
	must(err)
	if cd.Cancelled || st.SessionFile != firstFile {
		t.Fatalf("switch: %+v, state file %s", cd, st.SessionFile)
	}
	// Idle steer and follow_up, then abort with nothing running.
	if _, err := c.Steer(ctx, "steer"); err != nil {
		var ce *client.CommandError
		if !errors.As(err, &ce) {
			t.Fatal(err)
		}
	}
	must(c.Abort(ctx))
	if _, err := c.FollowUp(ctx, "later"); err != nil {
		var ce *client.CommandError
		if !errors.As(err, &ce) {
			t.Fatal(err)
		}
	}
	must(c.Abort(ctx))
	d, err := c.AbortAndPrompt(ctx, "again")
	must(err)
	if d.Disposition == "" {
		t.Fatal("no disposition")
	}
	must(c.Abort(ctx))
	if _, err := os.Stat(firstFile); err != nil {
		t.Fatal(err)
	}
}

// TestAbortHangingRun: the end of ctx ends PromptAndWait with the events
// so far, and Abort stops the run.
func TestAbortHangingRun(t *testing.T) {
	c := start(t, `{"turns":[{"content":[{"type":"text","text":"streaming forever"}],"hang":true}],"chunkSize":5}`, false)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	// ctx ends once the run streams (Events() sees what PromptAndWait
	// collects, and after it).
	go func() {
		for ev := range c.Events() {
			if ev.Type == rpc.EventMessageUpdate {
				cancel()
				return
			}
		}
	}()
	evs, err := c.PromptAndWait(ctx, "go")
	if !errors.Is(err, context.Canceled) {
		t.Fatalf("PromptAndWait: %v", err)
	}
	for _, want := range []string{rpc.EventAgentStart, rpc.EventMessageUpdate} {
		if !slices.ContainsFunc(evs, func(e client.Event) bool { return e.Type == want }) {
			t.Fatalf("no %s among %d events", want, len(evs))
		}
	}
	st, err := c.GetState(ctxFor(t))
	if err != nil || !st.IsStreaming {
		t.Fatalf("state %+v, %v", st, err)
	}
	if err := c.Abort(ctxFor(t)); err != nil {
		t.Fatal(err)
	}
	st, err = c.GetState(ctxFor(t))
	if err != nil || st.IsStreaming {
		t.Fatalf("state after abort %+v, %v", st, err)
	}
	// The settled event of the aborted run reaches Events().
	timeout := time.After(time.Minute)
	for {
		select {
		case ev := <-c.Events():
			if ev.Type != rpc.EventAgentSettled {
				continue
			}
			s, err := client.DecodeAs[*rpc.AgentSettledEvent](ev)
			if err != nil || !s.Aborted {
				t.Fatalf("agent_settled %+v, %v", s, err)
			}
			return
		case <-timeout:
			t.Fatal("no agent_settled on Events()")
		}
	}
}

func TestLegacyWire(t *testing.T) {
	c := start(t, helloScript, false, "--rpc-compat", "legacy")
	evs, err := c.PromptAndWait(ctxFor(t), "hi")
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	for _, ev := range evs {
		if ev.Type != rpc.EventMessageUpdate {
			continue
		}
		u, err := client.DecodeAs[*rpc.MessageUpdateEvent](ev)
		if err != nil {
			t.Fatal(err)
		}
		if !u.Legacy || u.Partial == nil {
			t.Fatalf("legacy message_update decoded as %+v", u)
		}
		n++
	}
	if n == 0 || client.AssistantText(evs) != "hello world" {
		t.Fatalf("%d updates, text %q", n, client.AssistantText(evs))
	}
}

func TestConcurrentRequests(t *testing.T) {
	c := start(t, helloScript, false)
	errs := make(chan error, 40)
	for i := 0; i < 40; i++ {
		go func() {
			_, err := c.GetState(ctxFor(t))
			errs <- err
		}()
	}
	for i := 0; i < 40; i++ {
		if err := <-errs; err != nil {
			t.Fatal(err)
		}
	}
}

func TestCloseEndsProcess(t *testing.T) {
	c := start(t, helloScript, false)
	if err := c.Close(); err != nil {
		t.Fatalf("Close: %v", err)
	}
	select {
	case <-c.Done():
	default:
		t.Fatal("output not finished after Close")
	}
	if _, err := c.GetState(context.Background()); !errors.Is(err, client.ErrClosed) {
		t.Fatalf("request after Close: %v", err)
	}
	for range c.Events() { // closed
	}
	if err := c.Close(); err != nil {
		t.Fatalf("second Close: %v", err)
	}
}

// TestCloseEscalates: a server that ignores stdin EOF gets SIGTERM, and one
// that ignores SIGTERM gets SIGKILL.
func TestCloseEscalates(t *testing.T) {
	for _, tc := range []struct{ name, body, want string }{
		{"sigterm", `echo '{"type":"ready"}'; exec sleep 30`, "terminated"},
		{"sigkill", `trap '' TERM; echo '{"type":"ready"}'; while :; do sleep 0.05; done`, "killed"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			script := filepath.Join(t.TempDir(), "server.sh")
			os.WriteFile(script, []byte("#!/bin/sh\n"+tc.body+"\n"), 0o755)
			c, err := client.StartWith(ctxFor(t), []client.Option{client.WithGracePeriod(200 * time.Millisecond)}, script)
			if err != nil {
				t.Fatal(err)
			}
			start := time.Now()
			err = c.Close()
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("Close = %v, want %q", err, tc.want)
			}
			if d := time.Since(start); d > 20*time.Second { // the server would run 30 s or forever
				t.Fatalf("Close took %v", d)
			}
		})
	}
}

func TestStartFailsWithoutReady(t *testing.T) {
	script := filepath.Join(t.TempDir(), "server.sh")
	os.WriteFile(script, []byte("#!/bin/sh\necho 'cannot start' >&2\nexit 3\n"), 0o755)
	_, err := client.Start(ctxFor(t), script)
	if err == nil || !strings.Contains(err.Error(), "ready") || !strings.Contains(err.Error(), "cannot start") {
		t.Fatalf("Start = %v", err)
	}
}

// The project picker's commands: list a directory, then start a session
// in one of its directories.
func TestProjectPicker(t *testing.T) {
	c := start(t, `{"turns":[]}`, true)
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	root := t.TempDir()
	for _, d := range []string{"b-project", "a-project", ".hidden"} {
		if err := os.Mkdir(filepath.Join(root, d), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	ld, err := c.ListDirectory(ctx, root)
	if err != nil {
		t.Fatal(err)
	}
	if ld.AbsolutePath != root || len(ld.Entries) != 2 || ld.Entries[0].Name != "a-project" || !ld.Entries[0].IsDirectory {
		t.Fatalf("list_directory: %+v", ld)
	}
	if _, err := c.ListDirectory(ctx, filepath.Join(root, "missing")); err == nil || !strings.Contains(err.Error(), "Path does not exist: ") {
		t.Fatalf("missing directory: %v", err)
	}
	cd, err := c.NewSessionIn(ctx, filepath.Join(root, "a-project"), "")
	if err != nil || cd.Cancelled {
		t.Fatalf("new_session in a project: %+v %v", cd, err)
	}
	b, err := c.Bash(ctx, "pwd", true)
	if err != nil {
		t.Fatal(err)
	}
	if strings.TrimSpace(b.Output) != filepath.Join(root, "a-project") {
		t.Fatalf("the new session works in %q", b.Output)
	}
}

// export_html over stdio: written to a file, and inline (the page in the
// response, no file written anywhere).
func TestExportHTML(t *testing.T) {
	c := start(t, `{"turns":[{"content":[{"type":"text","text":"an answer worth keeping"}]}]}`, true)
	ctx := ctxFor(t)
	if _, err := c.PromptAndWait(ctx, "a question to export"); err != nil {
		t.Fatal(err)
	}
	st, err := c.GetState(ctx)
	if err != nil {
		t.Fatal(err)
	}
	html, name, err := c.ExportHTMLInline(ctx)
	if err != nil {
		t.Fatal(err)
	}
	want := strings.TrimSuffix(filepath.Base(st.SessionFile), ".jsonl") + ".html"
	if name != want {
		t.Errorf("file name %q, want %q", name, want)
	}
	for _, s := range []string{"<!DOCTYPE html>", "a question to export", "an answer worth keeping"} {
		if !strings.Contains(html, s) {
			t.Errorf("inline export lacks %q", s)
		}
	}
	beside := strings.TrimSuffix(st.SessionFile, ".jsonl") + ".html"
	if _, err := os.Stat(beside); !os.IsNotExist(err) {
		t.Fatalf("inline export wrote %s (stat: %v)", beside, err)
	}
	path, err := c.ExportHTML(ctx, "")
	if err != nil {
		t.Fatal(err)
	}
	if path != beside {
		t.Fatalf("export_html wrote %s, want %s", path, beside)
	}
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if string(b) != html {
		t.Errorf("the file (%d bytes) differs from the inline page (%d bytes)", len(b), len(html))
	}
}
