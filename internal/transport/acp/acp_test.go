package acp_test

import (
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	sdk "github.com/coder/acp-go-sdk"
)

// toolUpdates are the tool_call and tool_call_update updates of one call.
func toolUpdates(ups []sdk.SessionNotification, id string) (start *sdk.SessionUpdateToolCall, updates []*sdk.SessionToolCallUpdate) {
	for _, u := range ups {
		if tc := u.Update.ToolCall; tc != nil && string(tc.ToolCallId) == id {
			start = tc
		}
		if tu := u.Update.ToolCallUpdate; tu != nil && string(tu.ToolCallId) == id {
			updates = append(updates, tu)
		}
	}
	return start, updates
}

// checkStatuses checks that a call's statuses only move forward and end
// as want.
func checkStatuses(t *testing.T, start *sdk.SessionUpdateToolCall, updates []*sdk.SessionToolCallUpdate, want sdk.ToolCallStatus) {
	t.Helper()
	rank := map[sdk.ToolCallStatus]int{sdk.ToolCallStatusPending: 0, sdk.ToolCallStatusInProgress: 1, sdk.ToolCallStatusCompleted: 2, sdk.ToolCallStatusFailed: 2}
	if start == nil {
		t.Fatal("no tool_call announced the call")
	}
	last := start.Status
	for _, u := range updates {
		if u.Status == nil {
			continue
		}
		if rank[*u.Status] < rank[last] {
			t.Errorf("status went back from %s to %s", last, *u.Status)
		}
		last = *u.Status
	}
	if last != want {
		t.Errorf("final status %s, want %s", last, want)
	}
}

func contentText(cs []sdk.ToolCallContent) string {
	var b strings.Builder
	for _, c := range cs {
		if c.Content != nil && c.Content.Content.Text != nil {
			b.WriteString(c.Content.Content.Text.Text)
		}
	}
	return b.String()
}

const streamScript = `{"turns":[
 {"content":[{"type":"thinking","thinking":"let me see"},{"type":"text","text":"running it"},{"type":"toolCall","id":"call_1","name":"bash","arguments":{"command":"echo hi"}}]},
 {"content":[{"type":"text","text":"done it"}]}
]}`

func TestPromptStreamsUpdates(t *testing.T) {
	r := startInProcess(t, "", streamScript)
	resp, err := r.conn.Initialize(r.ctx(), sdk.InitializeRequest{ProtocolVersion: 7})
	if err != nil {
		t.Fatal(err)
	}
	if resp.ProtocolVersion != 1 {
		t.Errorf("protocolVersion %d, want 1", resp.ProtocolVersion)
	}
	caps := resp.AgentCapabilities
	if !caps.LoadSession || !caps.PromptCapabilities.Image || !caps.PromptCapabilities.EmbeddedContext || caps.SessionCapabilities.List == nil {
		t.Errorf("capabilities %+v", caps)
	}
	if resp.AgentInfo == nil || resp.AgentInfo.Name != "pisces" {
		t.Errorf("agentInfo %+v", resp.AgentInfo)
	}
	if len(resp.AuthMethods) == 0 || resp.AuthMethods[0].Agent == nil || resp.AuthMethods[0].Agent.Id == "" {
		t.Errorf("authMethods %+v", resp.AuthMethods)
	}

	nr, err := r.conn.NewSession(r.ctx(), sdk.NewSessionRequest{Cwd: r.proj, McpServers: []sdk.McpServer{}})
	if err != nil {
		t.Fatal(err)
	}
	if nr.Modes == nil || nr.Modes.CurrentModeId != "ask" || len(nr.Modes.AvailableModes) != 2 {
		t.Errorf("modes %+v", nr.Modes)
	}
	ids := map[string]string{}
	for _, o := range nr.ConfigOptions {
		if o.Select != nil {
			ids[string(o.Select.Id)] = string(o.Select.CurrentValue)
		}
	}
	if ids["model"] != "scripted/scripted" || ids["thought_level"] == "" {
		t.Errorf("configOptions %v", ids)
	}
	r.ed.waitFor(t, "available_commands_update", func(ups []sdk.SessionNotification) bool {
		for _, u := range ups {
			if u.Update.AvailableCommandsUpdate != nil && u.SessionId == nr.SessionId {
				for _, c := range u.Update.AvailableCommandsUpdate.AvailableCommands {
					if strings.HasPrefix(c.Name, "/") {
						t.Errorf("command name %q starts with /", c.Name)
					}
				}
				return true
			}
		}
		return false
	})
	if _, err := r.conn.SetSessionMode(r.ctx(), sdk.SetSessionModeRequest{SessionId: nr.SessionId, ModeId: "auto"}); err != nil {
		t.Fatal(err)
	}
	r.ed.reset()
	if stop := r.prompt(nr.SessionId, "run echo hi"); stop != sdk.StopReasonEndTurn {
		t.Errorf("stopReason %s, want end_turn", stop)
	}
	ups := r.ed.snapshot()
	if got := text(ups, "agent_thought_chunk"); got != "let me see" {
		t.Errorf("thought %q", got)
	}
	if got := text(ups, "agent_message_chunk"); got != "running itdone it" {
		t.Errorf("message %q", got)
	}
	start, updates := toolUpdates(ups, "call_1")
	checkStatuses(t, start, updates, sdk.ToolCallStatusCompleted)
	if start != nil && (start.Kind != sdk.ToolKindExecute || start.Title != "echo hi") {
		t.Errorf("tool_call kind %q title %q", start.Kind, start.Title)
	}
	if len(updates) == 0 || !strings.Contains(contentText(updates[len(updates)-1].Content), "hi") {
		t.Errorf("the final update carries no output: %s", dump(ups))
	}
	k := kinds(ups)
	if k[len(k)-1] != "usage_update" {
		t.Errorf("updates end with %s, want usage_update: %v", k[len(k)-1], k)
	}
}

const permissionScript = `{"turns":[
 {"content":[{"type":"toolCall","id":"w1","name":"write","arguments":{"path":"a.txt","content":"one\n"}}]},
 {"content":[{"type":"text","text":"refused"}]},
 {"content":[{"type":"toolCall","id":"w2","name":"write","arguments":{"path":"b.txt","content":"two\n"}}]},
 {"content":[{"type":"toolCall","id":"w3","name":"edit","arguments":{"path":"b.txt","edits":[{"oldText":"two","newText":"three"}]}}]},
 {"content":[{"type":"text","text":"done"}]}
]}`

func TestPermissionAskMode(t *testing.T) {
	r := startInProcess(t, "", permissionScript)
	r.initialize()
	id := r.newSession("")
	answer := sdk.PermissionOptionId("reject-once")
	var mu sync.Mutex
	r.ed.mu.Lock()
	r.ed.answer = func(p sdk.RequestPermissionRequest) sdk.RequestPermissionResponse {
		mu.Lock()
		defer mu.Unlock()
		return sdk.RequestPermissionResponse{Outcome: sdk.NewRequestPermissionOutcomeSelected(answer)}
	}
	r.ed.mu.Unlock()

	if stop := r.prompt(id, "write a"); stop != sdk.StopReasonEndTurn {
		t.Errorf("stopReason %s", stop)
	}
	if _, err := os.Stat(filepath.Join(r.proj, "a.txt")); !os.IsNotExist(err) {
		t.Errorf("a rejected write touched the file system: %v", err)
	}
	ups := r.ed.snapshot()
	start, updates := toolUpdates(ups, "w1")
	checkStatuses(t, start, updates, sdk.ToolCallStatusFailed)
	asked := r.ed.permissionRequests()
	if len(asked) != 1 || asked[0].ToolCall.ToolCallId != "w1" || asked[0].SessionId != id {
		t.Fatalf("permission requests %+v", asked)
	}
	checkPermissionOptions(t, asked[0])

	mu.Lock()
	answer = "allow-always"
	mu.Unlock()
	if stop := r.prompt(id, "write b, then edit it"); stop != sdk.StopReasonEndTurn {
		t.Errorf("stopReason %s", stop)
	}
	b, err := os.ReadFile(filepath.Join(r.proj, "b.txt"))
	if err != nil || string(b) != "three\n" {
		t.Errorf("b.txt = %q, %v", b, err)
	}
	asked = r.ed.permissionRequests()
	if len(asked) != 3 {
		t.Errorf("%d permission requests, want 3 (write once more, edit once; always holds per tool)", len(asked))
	}
	ups = r.ed.snapshot()
	start, updates = toolUpdates(ups, "w3")
	checkStatuses(t, start, updates, sdk.ToolCallStatusCompleted)
	if start != nil && start.Kind != sdk.ToolKindEdit {
		t.Errorf("edit kind %q", start.Kind)
	}
	var diff *sdk.ToolCallContentDiff
	for _, u := range updates {
		for _, c := range u.Content {
			if c.Diff != nil {
				diff = c.Diff
			}
		}
	}
	if diff == nil || diff.OldText == nil || *diff.OldText != "two\n" || diff.NewText != "three\n" || diff.Path != filepath.Join(r.proj, "b.txt") {
		t.Errorf("edit diff %+v", diff)
	}
}

const cancelScript = `{"turns":[
 {"content":[{"type":"text","text":"thinking hard"}],"hang":true},
 {"content":[{"type":"text","text":"after"}]}
]}`

func TestCancel(t *testing.T) {
	r := startInProcess(t, "", cancelScript)
	r.initialize()
	id := r.newSession("auto")
	// Cancelling an idle or unknown session is harmless.
	if err := r.conn.Cancel(r.ctx(), sdk.CancelNotification{SessionId: "no-such-session"}); err != nil {
		t.Fatal(err)
	}
	if err := r.conn.Cancel(r.ctx(), sdk.CancelNotification{SessionId: id}); err != nil {
		t.Fatal(err)
	}
	r.ed.reset()
	stopped := make(chan sdk.StopReason, 1)
	go func() {
		resp, err := r.conn.Prompt(r.ctx(), sdk.PromptRequest{SessionId: id, Prompt: []sdk.ContentBlock{sdk.TextBlock("think")}})
		if err != nil {
			t.Errorf("prompt: %v", err)
		}
		stopped <- resp.StopReason
	}()
	r.ed.waitFor(t, "the streamed text", func(ups []sdk.SessionNotification) bool {
		return strings.Contains(text(ups, "agent_message_chunk"), "thinking hard")
	})
	sent := time.Now()
	if err := r.conn.Cancel(r.ctx(), sdk.CancelNotification{SessionId: id}); err != nil {
		t.Fatal(err)
	}
	select {
	case stop := <-stopped:
		t.Logf("cancelled prompt answered after %v", time.Since(sent))
		if stop != sdk.StopReasonCancelled {
			t.Errorf("stopReason %s, want cancelled", stop)
		}
	case <-time.After(waitLimit):
		t.Fatal("the cancelled prompt did not answer")
	}
	n := len(r.ed.snapshot())
	if stop := r.prompt(id, "again"); stop != sdk.StopReasonEndTurn {
		t.Errorf("next prompt: stopReason %s", stop)
	}
	after := r.ed.snapshot()[n:]
	if got := text(after, "agent_message_chunk"); got != "after" {
		t.Errorf("after the cancel: message %q, want only the next turn's: %s", got, dump(after))
	}
}

func TestQueuedPrompts(t *testing.T) {
	dir := t.TempDir()
	gate := filepath.Join(dir, "go")
	script := `{"turns":[
 {"content":[{"type":"toolCall","id":"wait","name":"bash","arguments":{"command":"until [ -e ` + gate + ` ]; do sleep 0.01; done; echo ok"}}]},
 {"content":[{"type":"text","text":"first done"}]},
 {"content":[{"type":"text","text":"second done"}]}
]}`
	r := startInProcess(t, dir, script)
	r.initialize()
	id := r.newSession("auto")
	r.ed.reset()
	type result struct {
		stop sdk.StopReason
		msg  string
	}
	results := make(chan result, 2)
	run := func(text string) {
		resp, err := r.conn.Prompt(r.ctx(), sdk.PromptRequest{SessionId: id, Prompt: []sdk.ContentBlock{sdk.TextBlock(text)}})
		if err != nil {
			t.Errorf("prompt %s: %v", text, err)
		}
		results <- result{resp.StopReason, text}
	}
	go run("first")
	r.ed.waitFor(t, "the bash call in progress", func(ups []sdk.SessionNotification) bool {
		_, updates := toolUpdates(ups, "wait")
		return len(updates) > 0
	})
	second := make(chan struct{})
	go func() { close(second); run("second") }()
	<-second
	if err := os.WriteFile(gate, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	for range 2 {
		select {
		case res := <-results:
			if res.stop != sdk.StopReasonEndTurn {
				t.Errorf("prompt %s: stopReason %s", res.msg, res.stop)
			}
		case <-time.After(waitLimit):
			t.Fatal("a prompt did not answer")
		}
	}
	if got := text(r.ed.snapshot(), "agent_message_chunk"); got != "first donesecond done" {
		t.Errorf("messages %q", got)
	}
}

func TestConfigOptionsAndModes(t *testing.T) {
	r := startInProcess(t, "", `{"turns":[]}`)
	r.initialize()
	id := r.newSession("")
	set := func(config, value string) (sdk.SetSessionConfigOptionResponse, error) {
		return r.conn.SetSessionConfigOption(r.ctx(), sdk.SetSessionConfigOptionRequest{ValueId: &sdk.SetSessionConfigOptionValueId{
			SessionId: id, ConfigId: sdk.SessionConfigId(config), Value: sdk.SessionConfigValueId(value)}})
	}
	current := func(resp sdk.SetSessionConfigOptionResponse, config string) string {
		for _, o := range resp.ConfigOptions {
			if o.Select != nil && string(o.Select.Id) == config {
				return string(o.Select.CurrentValue)
			}
		}
		return ""
	}
	resp, err := set("thought_level", "high")
	if err != nil {
		t.Fatal(err)
	}
	if got := current(resp, "thought_level"); got != "high" {
		t.Errorf("thought_level %q after setting high", got)
	}
	for _, bad := range [][2]string{{"thought_level", "enormous"}, {"model", "nobody/nothing"}, {"colour", "blue"}} {
		_, err := set(bad[0], bad[1])
		var re *sdk.RequestError
		if err == nil || !asRequestError(err, &re) || re.Code != -32602 {
			t.Errorf("set %s=%s: %v, want -32602", bad[0], bad[1], err)
		}
	}
	resp, err = set("model", "scripted/scripted")
	if err != nil {
		t.Fatal(err)
	}
	if got := current(resp, "thought_level"); got != "high" {
		t.Errorf("a refused change changed thought_level to %q", got)
	}
	if _, err := r.conn.SetSessionMode(r.ctx(), sdk.SetSessionModeRequest{SessionId: id, ModeId: "yolo"}); err == nil {
		t.Error("an unknown mode was accepted")
	}
}

func asRequestError(err error, re **sdk.RequestError) bool {
	e, ok := err.(*sdk.RequestError)
	if ok {
		*re = e
	}
	return ok
}

// TestProtocolErrors sends lines that are not valid requests: each gets
// the error JSON-RPC prescribes, notifications get nothing, and the
// server keeps going.
func TestProtocolErrors(t *testing.T) {
	r, proj := startRaw(t, `{"turns":[]}`)
	expectError := func(line string, id any, code float64) {
		t.Helper()
		r.send(line)
		m := r.next()
		e, _ := m["error"].(map[string]any)
		if e == nil || e["code"] != code || m["id"] != id {
			t.Errorf("%s\n -> %v, want error %v with id %v", line, m, code, id)
		}
	}
	expectError(`not json`, nil, -32700)
	expectError(`[1,2]`, nil, -32600)
	expectError(`{"jsonrpc":"2.0","result":1}`, nil, -32600)
	expectError(`{"jsonrpc":"2.0","id":1,"method":"no/such/method","params":{}}`, float64(1), -32601)
	r.send(`{"jsonrpc":"2.0","method":"no/such/notification","params":{}}`)
	r.send(`{"jsonrpc":"2.0","method":"session/cancel","params":{"sessionId":"nope"}}`)
	r.send(`{"jsonrpc":"2.0","id":2,"method":"initialize","params":{"protocolVersion":1}}`)
	m := r.next()
	if m["id"] != float64(2) || m["result"] == nil {
		t.Fatalf("initialize after the notifications: %v (a notification was answered?)", m)
	}
	expectError(`{"jsonrpc":"2.0","id":3,"method":"session/new","params":{"cwd":"relative/dir","mcpServers":[]}}`, float64(3), -32602)
	expectError(`{"jsonrpc":"2.0","id":4,"method":"session/new","params":{"cwd":5,"mcpServers":[]}}`, float64(4), -32602)
	expectError(`{"jsonrpc":"2.0","id":5,"method":"session/prompt","params":{"sessionId":"x","prompt":"hi"}}`, float64(5), -32602)
	expectError(`{"jsonrpc":"2.0","id":"six","method":"session/prompt","params":{"sessionId":"nope","prompt":[]}}`, "six", -32602)
	expectError(`{"jsonrpc":"2.0","id":7,"method":"session/load","params":{"sessionId":"nope","cwd":"`+proj+`","mcpServers":[]}}`, float64(7), -32602)
	r.send(`{"jsonrpc":"2.0","id":8,"method":"session/new","params":{"cwd":"` + proj + `","mcpServers":[]}}`)
	m = r.next()
	res, _ := m["result"].(map[string]any)
	if m["id"] != float64(8) || res == nil || res["sessionId"] == "" {
		t.Fatalf("session/new after the errors: %v", m)
	}
	// The session's first update follows its response.
	m = r.next()
	if m["method"] != "session/update" {
		t.Errorf("after session/new: %v", m)
	}
	raw, _ := json.Marshal(m)
	if !strings.Contains(string(raw), "available_commands_update") {
		t.Errorf("after session/new: %s", raw)
	}
}

// TestEditorFiles: a client that advertises fs.readTextFile and
// fs.writeTextFile holds the files: read sees its unsaved buffer, edit and
// write land in it, the disk is left alone.
func TestEditorFiles(t *testing.T) {
	r := startInProcess(t, "", `{"turns":[
 {"content":[{"type":"toolCall","id":"r1","name":"read","arguments":{"path":"a.txt"}}]},
 {"content":[{"type":"toolCall","id":"e1","name":"edit","arguments":{"path":"a.txt","edits":[{"oldText":"unsaved","newText":"edited"}]}}]},
 {"content":[{"type":"toolCall","id":"w1","name":"write","arguments":{"path":"b.txt","content":"new\n"}}]},
 {"content":[{"type":"text","text":"done"}]}
]}`)
	a := filepath.Join(r.proj, "a.txt")
	b := filepath.Join(r.proj, "b.txt")
	if err := os.WriteFile(a, []byte("saved\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	r.ed.mu.Lock()
	r.ed.buffers = map[string]string{a: "unsaved\n"}
	r.ed.mu.Unlock()
	if _, err := r.conn.Initialize(r.ctx(), sdk.InitializeRequest{ProtocolVersion: 1, ClientCapabilities: sdk.ClientCapabilities{
		Fs: sdk.FileSystemCapabilities{ReadTextFile: true, WriteTextFile: true}}}); err != nil {
		t.Fatal(err)
	}
	id := r.newSession("auto")
	if stop := r.prompt(id, "change a, write b"); stop != sdk.StopReasonEndTurn {
		t.Fatalf("stopReason %s", stop)
	}
	ups := r.ed.snapshot()
	_, updates := toolUpdates(ups, "r1")
	if len(updates) == 0 || !strings.Contains(contentText(updates[len(updates)-1].Content), "unsaved") {
		t.Errorf("read did not see the editor's buffer: %s", dump(ups))
	}
	r.ed.mu.Lock()
	bufA, bufB := r.ed.buffers[a], r.ed.buffers[b]
	r.ed.mu.Unlock()
	if bufA != "edited\n" || bufB != "new\n" {
		t.Errorf("buffers a=%q b=%q", bufA, bufB)
	}
	if d, _ := os.ReadFile(a); string(d) != "saved\n" {
		t.Errorf("the disk's a.txt changed: %q", d)
	}
	if _, err := os.Stat(b); !os.IsNotExist(err) {
		t.Errorf("write reached the disk: %v", err)
	}
	_, updates = toolUpdates(ups, "e1")
	var diff *sdk.ToolCallContentDiff
	for _, u := range updates {
		for _, c := range u.Content {
			if c.Diff != nil {
				diff = c.Diff
			}
		}
	}
	if diff == nil || diff.OldText == nil || *diff.OldText != "unsaved\n" || diff.NewText != "edited\n" {
		t.Errorf("edit diff %+v", diff)
	}
}

// TestExtensionQuestionNote: an extension's question (the example
// permission gate's confirm before rm -rf) cannot be answered in an
// editor: it resolves as cancelled, the command is blocked, and the
// conversation says so in a note.
// TestExtensionQuestionNote: without form elicitation, an extension's
// question that no tool call is tied to (a command's confirm) resolves as
// cancelled, and the conversation says so.
func TestExtensionQuestionNote(t *testing.T) {
	t.Setenv("PISCES_TEST_EXTENSION", "1")
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	r := startInProcess(t, "", `{"turns":[]}`, "-e", exe)
	r.initialize()
	id := r.newSession("auto")
	if stop := r.prompt(id, "/ask"); stop != sdk.StopReasonEndTurn {
		t.Fatalf("stopReason %s", stop)
	}
	ups := r.ed.waitFor(t, "the extension's answer", func(ups []sdk.SessionNotification) bool {
		return strings.Contains(text(ups, "agent_message_chunk"), "answer: confirmed=")
	})
	msg := text(ups, "agent_message_chunk")
	if !strings.Contains(msg, "cannot answer extension questions") || !strings.Contains(msg, "answer: confirmed=false") {
		t.Errorf("no note about the extension's question, or not cancelled: %q", msg)
	}
	r.ed.mu.Lock()
	defer r.ed.mu.Unlock()
	if len(r.ed.asked) != 0 {
		t.Errorf("a question not tied to a tool call became a permission request: %+v", r.ed.asked)
	}
}

// TestExtensionToolConfirm: an extension's confirm about a tool call (the
// example permission gate's tool_call hook) becomes
// session/request_permission naming the announced call, with the question
// as its content. Reject leaves the files alone and fails the call; allow
// runs it and the ask mode does not ask again; "always" holds for the same
// question about the same tool.
func TestExtensionToolConfirm(t *testing.T) {
	dir := t.TempDir()
	gate := filepath.Join(dir, "permission-gate")
	build := exec.Command("go", "build", "-o", gate, "../../../examples/extensions/permission-gate")
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("building the example extension: %v\n%s", err, out)
	}
	r := startInProcess(t, dir, `{"turns":[
 {"content":[{"type":"toolCall","id":"b1","name":"bash","arguments":{"command":"rm -rf junk"}}]},
 {"content":[{"type":"text","text":"refused"}]},
 {"content":[{"type":"toolCall","id":"b2","name":"bash","arguments":{"command":"rm -rf junk"}}]},
 {"content":[{"type":"text","text":"removed"}]},
 {"content":[{"type":"toolCall","id":"b3","name":"bash","arguments":{"command":"rm -rf junk2"}}]},
 {"content":[{"type":"text","text":"removed too"}]}
]}`, "-e", gate)
	junk, junk2 := filepath.Join(r.proj, "junk"), filepath.Join(r.proj, "junk2")
	for _, d := range []string{junk, junk2} {
		if err := os.Mkdir(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	answer := sdk.PermissionOptionId("reject-once")
	var mu sync.Mutex
	r.ed.mu.Lock()
	r.ed.answer = func(sdk.RequestPermissionRequest) sdk.RequestPermissionResponse {
		mu.Lock()
		defer mu.Unlock()
		return sdk.RequestPermissionResponse{Outcome: sdk.NewRequestPermissionOutcomeSelected(answer)}
	}
	r.ed.mu.Unlock()
	asked := r.ed.permissionRequests
	r.initialize()
	id := r.newSession("") // the ask mode

	if stop := r.prompt(id, "clean up"); stop != sdk.StopReasonEndTurn {
		t.Fatalf("stopReason %s", stop)
	}
	if _, err := os.Stat(junk); err != nil {
		t.Errorf("the rejected command ran: %v", err)
	}
	start, updates := toolUpdates(r.ed.snapshot(), "b1")
	checkStatuses(t, start, updates, sdk.ToolCallStatusFailed)
	a := asked()
	if len(a) != 1 || a[0].ToolCall.ToolCallId != "b1" || a[0].SessionId != id || !strings.Contains(contentText(a[0].ToolCall.Content), "rm -rf junk") ||
		!strings.Contains(contentText(a[0].ToolCall.Content), "recursive forced delete") {
		t.Fatalf("permission requests %+v", a)
	}
	checkPermissionOptions(t, a[0])

	mu.Lock()
	answer = "allow-always"
	mu.Unlock()
	if stop := r.prompt(id, "again"); stop != sdk.StopReasonEndTurn {
		t.Fatalf("stopReason %s", stop)
	}
	if _, err := os.Stat(junk); !os.IsNotExist(err) {
		t.Errorf("the allowed command did not run: %v", err)
	}
	start, updates = toolUpdates(r.ed.snapshot(), "b2")
	checkStatuses(t, start, updates, sdk.ToolCallStatusCompleted)
	if a := asked(); len(a) != 2 || a[1].ToolCall.ToolCallId != "b2" {
		t.Fatalf("want one more request, for b2 (the ask mode does not ask again): %+v", a)
	}

	if stop := r.prompt(id, "and the other"); stop != sdk.StopReasonEndTurn {
		t.Fatalf("stopReason %s", stop)
	}
	if _, err := os.Stat(junk2); !os.IsNotExist(err) {
		t.Errorf("the command allowed always did not run: %v", err)
	}
	if a := asked(); len(a) != 2 {
		t.Errorf("asked again after allow-always: %+v", a[2:])
	}
}

// TestUntrustedProjectNote: a project with its own resources that nobody
// decided to trust is not loaded, and the new session says so.
func TestUntrustedProjectNote(t *testing.T) {
	dir := t.TempDir()
	r := startInProcess(t, dir, `{"turns":[]}`)
	prompts := filepath.Join(r.proj, ".pisces", "prompts")
	if err := os.MkdirAll(prompts, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(prompts, "projectcmd.md"), []byte("Do the project thing"), 0o644); err != nil {
		t.Fatal(err)
	}
	r.initialize()
	id := r.newSession("")
	ups := r.ed.waitFor(t, "the trust note", func(ups []sdk.SessionNotification) bool {
		return strings.Contains(text(ups, "agent_message_chunk"), "not trusted")
	})
	for _, u := range ups {
		if u.SessionId != id {
			t.Errorf("update for session %s", u.SessionId)
		}
		if c := u.Update.AvailableCommandsUpdate; c != nil {
			for _, cmd := range c.AvailableCommands {
				if cmd.Name == "projectcmd" {
					t.Error("the untrusted project's prompt template was loaded")
				}
			}
		}
	}
}

// TestExtensionQuestionElicited: with a client that advertises form
// elicitation, an extension's confirm not tied to a tool call becomes
// elicitation/create, and the client's yes is the extension's answer.
func TestExtensionQuestionElicited(t *testing.T) {
	t.Setenv("PISCES_TEST_EXTENSION", "1")
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	r := startInProcess(t, "", `{"turns":[]}`, "-e", exe)
	r.ed.mu.Lock()
	r.ed.elicit = func(p sdk.UnstableCreateElicitationRequest) sdk.UnstableCreateElicitationResponse {
		return sdk.UnstableCreateElicitationResponse{Accept: &sdk.UnstableCreateElicitationAccept{Action: "accept", Content: map[string]any{"confirmed": true}}}
	}
	r.ed.mu.Unlock()
	if _, err := r.conn.Initialize(r.ctx(), sdk.InitializeRequest{ProtocolVersion: 1, ClientCapabilities: sdk.ClientCapabilities{
		Elicitation: &sdk.ElicitationCapabilities{Form: &sdk.ElicitationFormCapabilities{}}}}); err != nil {
		t.Fatal(err)
	}
	id := r.newSession("auto")
	if stop := r.prompt(id, "/ask"); stop != sdk.StopReasonEndTurn {
		t.Fatalf("stopReason %s", stop)
	}
	r.ed.waitFor(t, "the extension's answer", func(ups []sdk.SessionNotification) bool {
		return strings.Contains(text(ups, "agent_message_chunk"), "answer: confirmed=true")
	})
	r.ed.mu.Lock()
	asked := append([]sdk.UnstableCreateElicitationRequest(nil), r.ed.elicited...)
	r.ed.mu.Unlock()
	if len(asked) != 1 || asked[0].Form == nil || !strings.Contains(asked[0].Form.Message, "Proceed?") {
		t.Fatalf("elicitations %+v", asked)
	}
	if _, ok := asked[0].Form.RequestedSchema.Properties["confirmed"]; !ok {
		t.Errorf("schema %+v", asked[0].Form.RequestedSchema)
	}
}

// TestPlanPromptContentAndClose: todo_write's plan becomes a plan update;
// a prompt's resource link, embedded resource and image reach the model;
// session/close lets the session go, and session/resume brings it back.
func TestPlanPromptContentAndClose(t *testing.T) {
	dir := t.TempDir()
	log := filepath.Join(dir, "requests.jsonl")
	r := startInProcess(t, dir, `{"requestLog":`+jsonString(log)+`,"turns":[
 {"content":[{"type":"toolCall","id":"t1","name":"todo_write","arguments":{"ops":[{"op":"replace","phases":[{"name":"Work","tasks":[{"content":"look","status":"completed"},{"content":"fix","status":"in_progress"},{"content":"skip","status":"abandoned"}]}]}]}}]},
 {"content":[{"type":"toolCall","id":"t2","name":"todo_write","arguments":{"ops":[{"op":"update","id":"task-2","status":"completed"}]}}]},
 {"content":[{"type":"text","text":"planned"}]},
 {"content":[{"type":"text","text":"seen"}]},
 {"content":[{"type":"text","text":"back"}]}
]}`)
	r.initialize()
	id := r.newSession("auto")
	if stop := r.prompt(id, "plan it"); stop != sdk.StopReasonEndTurn {
		t.Fatalf("stopReason %s", stop)
	}
	var plans []*sdk.SessionUpdatePlan
	for _, u := range r.ed.snapshot() {
		if u.Update.Plan != nil {
			plans = append(plans, u.Update.Plan)
		}
	}
	if len(plans) != 2 {
		t.Fatalf("%d plan updates, want 2", len(plans))
	}
	if p := plans[0]; len(p.Entries) != 2 || p.Entries[0].Content != "look" || p.Entries[0].Status != sdk.PlanEntryStatusCompleted ||
		p.Entries[1].Content != "fix" || p.Entries[1].Status != sdk.PlanEntryStatusInProgress {
		t.Errorf("first plan %+v (the abandoned task left out)", p)
	}
	if p := plans[1]; len(p.Entries) != 2 || p.Entries[1].Status != sdk.PlanEntryStatusCompleted {
		t.Errorf("second plan %+v", p)
	}

	png := "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNk+M9QDwADhgGAWjR9awAAAABJRU5ErkJggg=="
	resp, err := r.conn.Prompt(r.ctx(), sdk.PromptRequest{SessionId: id, Prompt: []sdk.ContentBlock{
		sdk.TextBlock("look at these"),
		sdk.ResourceLinkBlock("main.go", "file:///src/main.go"),
		sdk.ResourceBlock(sdk.EmbeddedResourceResource{TextResourceContents: &sdk.TextResourceContents{Uri: "file:///src/util.go", Text: "package util"}}),
		sdk.ImageBlock(png, "image/png"),
	}})
	if err != nil || resp.StopReason != sdk.StopReasonEndTurn {
		t.Fatalf("prompt with resources: %v %v", resp, err)
	}
	b, err := os.ReadFile(log)
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSpace(string(b)), "\n")
	var last struct {
		LastUser string            `json:"lastUser"`
		Images   []json.RawMessage `json:"images"`
	}
	if err := json.Unmarshal([]byte(lines[len(lines)-1]), &last); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"look at these", "@/src/main.go", "/src/util.go", "package util"} {
		if !strings.Contains(last.LastUser, want) {
			t.Errorf("the model's prompt %q lacks %q", last.LastUser, want)
		}
	}
	if len(last.Images) != 1 {
		t.Errorf("images %s", last.Images)
	}

	if _, err := r.conn.CloseSession(r.ctx(), sdk.CloseSessionRequest{SessionId: id}); err != nil {
		t.Fatal(err)
	}
	if _, err := r.conn.Prompt(r.ctx(), sdk.PromptRequest{SessionId: id, Prompt: []sdk.ContentBlock{sdk.TextBlock("hello?")}}); err == nil {
		t.Error("a closed session took a prompt")
	}
	if _, err := r.conn.ResumeSession(r.ctx(), sdk.ResumeSessionRequest{SessionId: id, Cwd: r.proj}); err != nil {
		t.Fatalf("session/resume: %v", err)
	}
	n := len(r.ed.snapshot())
	if stop := r.prompt(id, "back?"); stop != sdk.StopReasonEndTurn {
		t.Errorf("prompt after resume: %s", stop)
	}
	if got := text(r.ed.snapshot()[n:], "user_message_chunk"); got != "" {
		t.Errorf("resume replayed the history: %q", got)
	}
}

// TestSessionsRunAtOnce: two sessions of one process: the second answers
// while the first one's tool still runs.
func TestSessionsRunAtOnce(t *testing.T) {
	dir := t.TempDir()
	gate := filepath.Join(dir, "go")
	r := startInProcess(t, dir, `{"turns":[
 {"match":"alpha","content":[{"type":"toolCall","id":"wait","name":"bash","arguments":{"command":"until [ -e `+gate+` ]; do sleep 0.01; done"}}]},
 {"match":"alpha","content":[{"type":"text","text":"alpha done"}]},
 {"match":"beta","content":[{"type":"text","text":"beta done"}]}
]}`)
	r.initialize()
	a := r.newSession("auto")
	b := r.newSession("auto")
	if a == b {
		t.Fatal("two session/new gave one session")
	}
	first := make(chan sdk.StopReason, 1)
	go func() {
		resp, err := r.conn.Prompt(r.ctx(), sdk.PromptRequest{SessionId: a, Prompt: []sdk.ContentBlock{sdk.TextBlock("alpha")}})
		if err != nil {
			t.Errorf("prompt alpha: %v", err)
		}
		first <- resp.StopReason
	}()
	r.ed.waitFor(t, "alpha's tool running", func(ups []sdk.SessionNotification) bool {
		for _, u := range ups {
			if u.SessionId == a && u.Update.ToolCallUpdate != nil && u.Update.ToolCallUpdate.Status != nil && *u.Update.ToolCallUpdate.Status == sdk.ToolCallStatusInProgress {
				return true
			}
		}
		return false
	})
	if stop := r.prompt(b, "beta"); stop != sdk.StopReasonEndTurn {
		t.Errorf("beta: %s", stop)
	}
	select {
	case <-first:
		t.Fatal("alpha ended before its tool was let go")
	default:
	}
	if err := os.WriteFile(gate, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	select {
	case stop := <-first:
		if stop != sdk.StopReasonEndTurn {
			t.Errorf("alpha: %s", stop)
		}
	case <-time.After(waitLimit):
		t.Fatal("alpha did not end")
	}
	for _, u := range r.ed.snapshot() {
		if c := u.Update.AgentMessageChunk; c != nil && c.Content.Text != nil {
			if want := map[string]sdk.SessionId{"alpha done": a, "beta done": b}[c.Content.Text.Text]; want != "" && want != u.SessionId {
				t.Errorf("%q went to session %s", c.Content.Text.Text, u.SessionId)
			}
		}
	}
}

// TestMaxTokens: a reply cut at the model's output limit ends the prompt
// with max_tokens.
func TestMaxTokens(t *testing.T) {
	r := startInProcess(t, "", `{"turns":[{"content":[{"type":"text","text":"and then the"}],"stopReason":"length"}]}`)
	r.initialize()
	id := r.newSession("")
	if stop := r.prompt(id, "tell me everything"); stop != sdk.StopReasonMaxTokens {
		t.Errorf("stopReason %s, want max_tokens", stop)
	}
}

// TestCancelOrder: session/cancel applies to the prompts read before it,
// and only to those, however the handlers of the two happen to be
// scheduled: a prompt and a cancel in one write end cancelled; a cancel
// and then a prompt in one write leave the prompt alone.
func TestCancelOrder(t *testing.T) {
	r, proj := startRaw(t, `{"turns":[
 {"match":"zulu-one","content":[{"type":"text","text":"thinking hard"}],"hang":true},
 {"match":"zulu-two","content":[{"type":"text","text":"after"}]}
]}`)
	r.send(`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":1}}`)
	r.next()
	r.send(`{"jsonrpc":"2.0","id":2,"method":"session/new","params":{"cwd":` + jsonString(proj) + `,"mcpServers":[]}}`)
	m := r.next()
	id := m["result"].(map[string]any)["sessionId"].(string)
	answer := func(want float64) map[string]any {
		t.Helper()
		for {
			m := r.next()
			if m["id"] == want {
				return m
			}
		}
	}
	prompt := func(n int, text string) string {
		return `{"jsonrpc":"2.0","id":` + strconv.Itoa(n) + `,"method":"session/prompt","params":{"sessionId":"` + id + `","prompt":[{"type":"text","text":"` + text + `"}]}}`
	}
	cancel := `{"jsonrpc":"2.0","method":"session/cancel","params":{"sessionId":"` + id + `"}}`
	r.send(prompt(3, "zulu-one") + "\n" + cancel)
	if res, _ := answer(3)["result"].(map[string]any); res == nil || res["stopReason"] != "cancelled" {
		t.Errorf("prompt then cancel: %v", res)
	}
	r.send(cancel + "\n" + prompt(4, "zulu-two"))
	if res, _ := answer(4)["result"].(map[string]any); res == nil || res["stopReason"] != "end_turn" {
		t.Errorf("cancel then prompt: %v", res)
	}
}
