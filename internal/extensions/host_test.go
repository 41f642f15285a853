package extensions

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/pisces-agent/pisces/internal/ai"
	"github.com/pisces-agent/pisces/internal/fsx"
	"github.com/pisces-agent/pisces/internal/tools"
	"github.com/pisces-agent/pisces/rpc"
)

// fakeUI answers dialogs with answer (nil: never, so they time out).
type fakeUI struct {
	mu        sync.Mutex
	dialogs   []string // "method title timeout"
	about     []string // the tool call each dialog is about ("id name", "" for none)
	notes     []string // "method params"
	answer    func(method string, params map[string]any) (UIResponse, time.Duration, bool)
	available bool
	ended     int // dialogs returned
}

func (u *fakeUI) Dialog(ctx context.Context, method string, params map[string]any, timeout time.Duration) UIResponse {
	u.mu.Lock()
	u.dialogs = append(u.dialogs, fmt.Sprintf("%s %v %v", method, params["title"], timeout))
	about := ""
	if ref, ok := ToolCallOf(ctx); ok {
		about = ref.ID + " " + ref.Name
	}
	u.about = append(u.about, about)
	answer := u.answer
	u.mu.Unlock()
	defer func() {
		u.mu.Lock()
		u.ended++
		u.mu.Unlock()
	}()
	var r UIResponse
	var delay time.Duration
	ok := false
	if answer != nil {
		r, delay, ok = answer(method, params)
	}
	var tc <-chan time.Time
	if timeout > 0 {
		tc = time.After(timeout)
	}
	var ac <-chan time.Time
	if ok {
		ac = time.After(delay)
	}
	select {
	case <-ac:
		return r
	case <-tc:
	case <-ctx.Done():
	}
	return UIResponse{Cancelled: true}
}

func (u *fakeUI) Notify(method string, params map[string]any) {
	b, _ := json.Marshal(params)
	u.mu.Lock()
	u.notes = append(u.notes, method+" "+string(b))
	u.mu.Unlock()
}

func (u *fakeUI) Available() bool { return u.available }

func (u *fakeUI) got() ([]string, []string) {
	u.mu.Lock()
	defer u.mu.Unlock()
	return append([]string(nil), u.dialogs...), append([]string(nil), u.notes...)
}

func confirmWith(v bool) func(string, map[string]any) (UIResponse, time.Duration, bool) {
	return func(method string, _ map[string]any) (UIResponse, time.Duration, bool) {
		if method == "confirm" {
			return UIResponse{Confirmed: &v}, 0, true
		}
		return UIResponse{}, 0, false
	}
}

type fakeActions struct {
	mu       sync.Mutex
	calls    []string
	shutdown chan struct{}
	once     sync.Once
}

func newActions() *fakeActions { return &fakeActions{shutdown: make(chan struct{})} }

func (a *fakeActions) add(s string) {
	a.mu.Lock()
	a.calls = append(a.calls, s)
	a.mu.Unlock()
}

func (a *fakeActions) SendMessage(text, deliverAs string) error {
	a.add("send " + text + " " + deliverAs)
	return nil
}

func (a *fakeActions) AppendCustomEntry(customType string, data json.RawMessage) error {
	a.add("entry " + customType + " " + string(data))
	return nil
}

func (a *fakeActions) SetSessionName(name string) error {
	if name == "" {
		return fmt.Errorf("Session name cannot be empty")
	}
	a.add("name " + name)
	return nil
}

func (a *fakeActions) Shutdown() {
	a.add("shutdown")
	a.once.Do(func() { close(a.shutdown) })
}

func (a *fakeActions) got() []string {
	a.mu.Lock()
	defer a.mu.Unlock()
	return append([]string(nil), a.calls...)
}

type env struct {
	h    *Host
	ui   *fakeUI
	act  *fakeActions
	rec  *recorder
	log  *syncBuffer
	dir  string
	errs []error
}

type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

// testHandshake bounds the start of a test extension. It is generous and
// independent of the hook timeout: the test binary, built with the race
// detector, may take long to start on a busy machine, while some tests
// need a short hook timeout.
const testHandshake = 60 * time.Second

// load starts a host on the given scenarios (in order) with a fake UI and
// actions; every scenario must register.
func load(t *testing.T, timeout time.Duration, scenarios ...string) *env {
	t.Helper()
	dir := t.TempDir()
	var paths []string
	for i, s := range scenarios {
		paths = append(paths, extScript(t, filepath.Join(dir, "bin"), fmt.Sprintf("%d-%s", i, s), s))
	}
	e := loadPaths(t, dir, timeout, paths...)
	if len(e.errs) != 0 || len(e.h.Paths()) != len(paths) {
		t.Fatalf("loading %v: %v (loaded %v)", scenarios, e.errs, e.h.Paths())
	}
	return e
}

func loadPaths(t *testing.T, dir string, timeout time.Duration, paths ...string) *env {
	t.Helper()
	e := &env{ui: &fakeUI{available: true}, act: newActions(), rec: &recorder{}, log: &syncBuffer{}, dir: dir}
	e.h, e.errs = Load(Options{
		AgentDir: filepath.Join(dir, "agent"), Cwd: dir, Paths: paths,
		Actions: e.act, UI: e.ui, Emit: func(ev rpc.Event) { e.rec.emit(ev) },
		Timeout: timeout, HandshakeTimeout: testHandshake, Log: e.log,
	})
	t.Cleanup(func() { e.h.Close() })
	return e
}

func bashArgs(cmd string) json.RawMessage {
	b, _ := json.Marshal(map[string]string{"command": cmd})
	return b
}

func TestRegistration(t *testing.T) {
	e := load(t, 5*time.Second, "basic")
	if len(e.errs) != 0 {
		t.Fatal(e.errs)
	}
	cmds := e.h.Commands()
	var names []string
	for _, c := range cmds {
		names = append(names, c.Name)
		if c.ExtensionPath != e.h.Paths()[0] {
			t.Errorf("command %s path %q", c.Name, c.ExtensionPath)
		}
	}
	if !slices.Equal(names, []string{"ask", "actions", "bye", "fail"}) || cmds[0].Description != "Asks things" {
		t.Errorf("commands %v", cmds)
	}
	ts := e.h.Tools()
	if len(ts) != 1 || ts[0].Name() != "greet" || ts[0].Description() != "Greets someone" || !strings.Contains(string(ts[0].Parameters()), `"name"`) {
		t.Fatalf("tools %v", ts)
	}
	if !strings.Contains(e.log.String(), `unknown hook "no_such_hook" ignored`) {
		t.Errorf("log: %s", e.log.String())
	}
	// The extension's stderr reaches the log, prefixed.
	waitFor(t, "stderr", func() bool { return strings.Contains(e.log.String(), "[0-basic] started basic pid") })
}

func TestToolCallBlockAndRewriteChain(t *testing.T) {
	e := load(t, 5*time.Second, "basic", "second")
	ctx := context.Background()
	d := e.h.OnToolCall(ctx, "c1", "bash", bashArgs("forbidden"))
	if !d.Block || d.Reason != "forbidden by basic" {
		t.Errorf("forbidden: %+v", d)
	}
	// basic rewrites ls to ls -la; second sees the new arguments and blocks.
	d = e.h.OnToolCall(ctx, "c2", "bash", bashArgs("ls"))
	if !d.Block || d.Reason != "second saw ls -la" {
		t.Errorf("chain: %+v", d)
	}
	d = e.h.OnToolCall(ctx, "c3", "bash", bashArgs("echo hi"))
	if d.Block || d.Args != nil {
		t.Errorf("unchanged: %+v", d)
	}
	// An error reply and invalid args are reported; the call goes on.
	d = e.h.OnToolCall(ctx, "c4", "bash", bashArgs("error"))
	d2 := e.h.OnToolCall(ctx, "c5", "bash", bashArgs("badargs"))
	if d.Block || d.Args != nil || d2.Block || d2.Args != nil {
		t.Errorf("defaults: %+v %+v", d, d2)
	}
	errs := e.rec.all()
	if len(errs) != 2 || !strings.HasSuffix(errs[0], "|tool_call|hook exploded") || !strings.Contains(errs[1], "args must be an object") {
		t.Errorf("errors %v", errs)
	}
}

func TestToolCallRewriteOnly(t *testing.T) {
	e := load(t, 5*time.Second, "basic")
	d := e.h.OnToolCall(context.Background(), "c1", "bash", bashArgs("ls"))
	if d.Block || string(d.Args) != `{"command":"ls -la"}` {
		t.Errorf("%+v %s", d, d.Args)
	}
}

func TestToolResult(t *testing.T) {
	e := load(t, 5*time.Second, "basic")
	in := tools.TextResult("secret")
	r, ok := e.h.OnToolResult(context.Background(), "c1", "read", json.RawMessage(`{"path":"x"}`), in)
	if !ok || len(r.Content) != 1 || r.Content[0].Text != "redacted: secret" || string(r.Details) != `{"redacted":true}` || r.IsError {
		t.Errorf("%v %+v", ok, r)
	}
	r, ok = e.h.OnToolResult(context.Background(), "c2", "ls", nil, in)
	if ok || r.Content[0].Text != "secret" {
		t.Errorf("unchanged: %v %+v", ok, r)
	}
}

func TestInput(t *testing.T) {
	e := load(t, 5*time.Second, "basic", "second")
	ctx := context.Background()
	if r := e.h.OnInput(ctx, "hello", "rpc"); r.Handled || r.Text != "hello world (rpc)!" {
		t.Errorf("transform chain: %+v", r)
	}
	if r := e.h.OnInput(ctx, "handle this", "cli"); !r.Handled {
		t.Errorf("handled: %+v", r)
	}
	if r := e.h.OnInput(ctx, "other", "rpc"); r.Handled || r.Text != "other!" {
		t.Errorf("continue: %+v", r)
	}
}

func TestBeforeAgentStart(t *testing.T) {
	e := load(t, 5*time.Second, "basic", "second")
	got := e.h.BeforeAgentStart(context.Background(), "You are Pisces.")
	want := "Basic rules (prompt had 15 chars).\n\nSecond saw basic: true"
	if got != want {
		t.Errorf("got %q", got)
	}
}

func TestSessionBefore(t *testing.T) {
	e := load(t, 5*time.Second, "basic")
	ctx := context.Background()
	if !e.h.SessionBefore(ctx, "fork", map[string]any{"entryId": "e1"}) {
		t.Error("fork not cancelled")
	}
	if !e.h.SessionBefore(ctx, "compact", nil) {
		t.Error("compact not cancelled")
	}
	if e.h.SessionBefore(ctx, "tree", map[string]any{"targetId": "x"}) {
		t.Error("tree cancelled")
	}
	if !e.h.SessionBefore(ctx, "switch", map[string]any{"reason": "new"}) || e.h.SessionBefore(ctx, "switch", map[string]any{"reason": "resume"}) {
		t.Error("switch payload not passed")
	}
}

func TestExtensionToolWithProgress(t *testing.T) {
	e := load(t, 5*time.Second, "basic")
	tool := e.h.Tools()[0]
	var mu sync.Mutex
	var updates []string
	res, err := tool.Execute(context.Background(), tools.Call{ID: "call-7", Args: json.RawMessage(`{"name":"Bob"}`),
		OnUpdate: func(p tools.Result) {
			mu.Lock()
			updates = append(updates, p.Content[0].Text)
			mu.Unlock()
		}})
	if err != nil || res.IsError || res.Content[0].Text != "hello Bob" || string(res.Details) != `{"call":"call-7"}` {
		t.Fatalf("%v %+v", err, res)
	}
	mu.Lock()
	defer mu.Unlock()
	if !slices.Equal(updates, []string{"working 1", "working 2"}) {
		t.Errorf("updates %v", updates)
	}
	res, err = tool.Execute(context.Background(), tools.Call{ID: "call-8", Args: json.RawMessage(`{}`)})
	if err != nil || !res.IsError || res.Content[0].Text != "name is required" {
		t.Errorf("error result: %v %+v", err, res)
	}
	if errs := e.rec.all(); len(errs) != 0 {
		t.Errorf("tool error reported: %v", errs)
	}
}

func TestCommandsAndActions(t *testing.T) {
	e := load(t, 5*time.Second, "basic")
	ctx := context.Background()
	handled, err := e.h.RunCommand(ctx, "actions", "stuff")
	if !handled || err == nil || err.Error() != `empty name: Session name cannot be empty; unknown: unknown method "no_such_method"` {
		t.Fatalf("%v %v", handled, err)
	}
	want := []string{"send from ext: stuff followUp", `entry note {"n":1}`}
	if got := e.act.got(); !slices.Equal(got, want) {
		t.Errorf("actions %v", got)
	}
	_, notes := e.ui.got()
	if !slices.Equal(notes, []string{`notify {"message":"doing stuff"}`, `setStatus {"statusKey":"basic","statusText":"busy"}`}) {
		t.Errorf("notes %v", notes)
	}
	handled, err = e.h.RunCommand(ctx, "/fail", "")
	if !handled || err == nil || err.Error() != "command failed on purpose" {
		t.Errorf("fail: %v %v", handled, err)
	}
	if handled, err = e.h.RunCommand(ctx, "nope", ""); handled || err != nil {
		t.Errorf("unknown: %v %v", handled, err)
	}
	if errs := e.rec.all(); len(errs) != 0 {
		t.Errorf("command errors reported: %v", errs)
	}
}

func TestUIDialogRoundTrip(t *testing.T) {
	e := load(t, 5*time.Second, "basic")
	e.ui.answer = confirmWith(true) // select is never answered
	start := time.Now()
	if handled, err := e.h.RunCommand(context.Background(), "ask", "deploy"); !handled || err != nil {
		t.Fatal(handled, err)
	}
	if el := time.Since(start); el < 100*time.Millisecond {
		t.Errorf("select did not wait for its timeout (%s)", el)
	}
	if got := e.act.got(); !slices.Equal(got, []string{"name confirmed=true select=cancelled"}) {
		t.Errorf("actions %v", got)
	}
	dialogs, _ := e.ui.got()
	if !slices.Equal(dialogs, []string{"confirm Sure? 0s", "select Pick 100ms"}) {
		t.Errorf("dialogs %v", dialogs)
	}
}

// A dialog a tool_call hook opens (parentId naming the hook request) is
// about that tool call; a command's dialog is about none.
func TestDialogAboutToolCall(t *testing.T) {
	e := load(t, 5*time.Second, "basic")
	e.ui.answer = confirmWith(true)
	if d := e.h.OnToolCall(context.Background(), "c7", "bash", bashArgs("ask")); d.Block {
		t.Fatalf("%+v", d)
	}
	e.ui.answer = func(method string, _ map[string]any) (UIResponse, time.Duration, bool) {
		yes := true
		return UIResponse{Confirmed: &yes}, 0, method == "confirm"
	}
	if handled, err := e.h.RunCommand(context.Background(), "ask", "deploy"); !handled || err != nil {
		t.Fatal(handled, err)
	}
	e.ui.mu.Lock()
	about := append([]string(nil), e.ui.about...)
	e.ui.mu.Unlock()
	if len(about) < 2 || about[0] != "c7 bash" || about[1] != "" {
		t.Errorf("dialogs about %q, want the hook's call then none", about)
	}
}

func TestDialogWithoutUIDefaults(t *testing.T) {
	e := load(t, 5*time.Second, "basic")
	e.ui.available = false
	d := e.h.OnToolCall(context.Background(), "c1", "bash", bashArgs("ask"))
	if !d.Block || d.Reason != "not confirmed" {
		t.Errorf("%+v", d)
	}
	if dialogs, _ := e.ui.got(); len(dialogs) != 0 {
		t.Errorf("dialogs %v", dialogs)
	}
}

// A hook waiting for the user is not timed out: the clock stops while the
// dialog is open (1.5 s, longer than the 1 s hook timeout).
func TestHookTimeoutPausesDuringDialog(t *testing.T) {
	e := load(t, time.Second, "basic")
	yes := true
	e.ui.answer = func(method string, _ map[string]any) (UIResponse, time.Duration, bool) {
		return UIResponse{Confirmed: &yes}, 1500 * time.Millisecond, true
	}
	d := e.h.OnToolCall(context.Background(), "c1", "bash", bashArgs("ask"))
	if d.Block {
		t.Errorf("%+v", d)
	}
	if errs := e.rec.all(); len(errs) != 0 {
		t.Errorf("errors %v", errs)
	}
}

// Aborting the hook closes the dialog the extension opened for it.
func TestAbortClosesDialog(t *testing.T) {
	e := load(t, 5*time.Second, "basic")
	closed := make(chan struct{})
	e.ui.answer = func(string, map[string]any) (UIResponse, time.Duration, bool) { return UIResponse{}, 0, false }
	ctx, cancel := context.WithCancel(context.Background())
	go func() {
		waitFor(t, "dialog", func() bool { d, _ := e.ui.got(); return len(d) == 1 })
		cancel()
		close(closed)
	}()
	d := e.h.OnToolCall(ctx, "c1", "bash", bashArgs("ask"))
	<-closed
	if d.Block || d.Args != nil {
		t.Errorf("%+v", d)
	}
	waitFor(t, "dialog closed", func() bool { e.ui.mu.Lock(); defer e.ui.mu.Unlock(); return e.ui.ended == 1 })
	// The extension got {"confirmed":false,"cancelled":true} and answered,
	// late: ignored. It still works.
	if d := e.h.OnToolCall(context.Background(), "c2", "bash", bashArgs("forbidden")); !d.Block {
		t.Errorf("after abort: %+v", d)
	}
}

func pidOf(t *testing.T, h *Host) string {
	t.Helper()
	d := h.OnToolCall(context.Background(), "p", "bash", bashArgs("pid"))
	if !d.Block {
		t.Fatalf("pid: %+v", d)
	}
	return d.Reason
}

func TestCrashRestarts(t *testing.T) {
	e := load(t, 5*time.Second, "basic")
	path := e.h.Paths()[0]
	pid1 := pidOf(t, e.h)
	d := e.h.OnToolCall(context.Background(), "c1", "bash", bashArgs("crash"))
	if d.Block || d.Args != nil {
		t.Errorf("default expected: %+v", d)
	}
	errs := e.rec.all()
	if len(errs) != 1 || errs[0] != path+"|tool_call|exited: exit status 3" {
		t.Fatalf("errors %q", errs)
	}
	pid2 := pidOf(t, e.h)
	if pid1 == pid2 {
		t.Error("not restarted")
	}
	if len(e.h.Tools()) != 1 || len(e.h.Commands()) != 4 {
		t.Error("registration lost")
	}
}

func TestGarbageOutput(t *testing.T) {
	e := load(t, 5*time.Second, "basic")
	pid1 := pidOf(t, e.h)
	if d := e.h.OnToolCall(context.Background(), "c1", "bash", bashArgs("garbage")); d.Block {
		t.Errorf("%+v", d)
	}
	errs := e.rec.all()
	if len(errs) != 1 || !strings.Contains(errs[0], `|tool_call|invalid output (not a JSON message): "this is not json"`) {
		t.Fatalf("errors %q", errs)
	}
	if pidOf(t, e.h) == pid1 {
		t.Error("not restarted")
	}
}

// The hook timeout (1 s: long enough for the answers pidOf needs) ends a
// hook that never answers.
func TestHangTimesOut(t *testing.T) {
	e := load(t, time.Second, "basic")
	pid1 := pidOf(t, e.h)
	start := time.Now()
	if d := e.h.OnToolCall(context.Background(), "c1", "bash", bashArgs("hang")); d.Block {
		t.Errorf("%+v", d)
	}
	if el := time.Since(start); el < time.Second || el > 30*time.Second {
		t.Errorf("returned after %s", el)
	}
	errs := e.rec.all()
	if len(errs) != 1 || !strings.HasSuffix(errs[0], "|tool_call|no reply to tool_call within 1s") {
		t.Fatalf("errors %q", errs)
	}
	if pidOf(t, e.h) == pid1 {
		t.Error("not restarted")
	}
}

func TestRestartLimitThenDisabled(t *testing.T) {
	e := load(t, 5*time.Second, "basic")
	for i := 0; i < RestartLimit+1; i++ {
		e.h.OnToolCall(context.Background(), "c", "bash", bashArgs("crash"))
	}
	errs := e.rec.all()
	if len(errs) != RestartLimit+2 {
		t.Fatalf("errors %q", errs)
	}
	if !strings.Contains(errs[len(errs)-1], "|tool_call|extension disabled: it failed again after 3 restarts") {
		t.Errorf("last error %q", errs[len(errs)-1])
	}
	// Disabled: hooks give defaults at once, registrations are gone.
	if d := e.h.OnToolCall(context.Background(), "c", "bash", bashArgs("forbidden")); d.Block {
		t.Errorf("%+v", d)
	}
	if len(e.h.Tools()) != 0 || len(e.h.Commands()) != 0 {
		t.Error("disabled extension still registered")
	}
	if len(e.rec.all()) != len(errs) {
		t.Error("more errors after disabling")
	}
}

func TestToolCrashAndAbort(t *testing.T) {
	e := load(t, 200*time.Millisecond, "basic")
	greet := e.h.Tools()[0]
	// Tools are not bound by the hook timeout, only by ctx.
	ctx, cancel := context.WithTimeout(context.Background(), 500*time.Millisecond)
	defer cancel()
	res, err := greet.Execute(ctx, tools.Call{ID: "x", Args: json.RawMessage(`{"name":"hang"}`)})
	if err != nil || !res.IsError || res.Content[0].Text != "Tool aborted" {
		t.Fatalf("abort: %v %+v", err, res)
	}
	if errs := e.rec.all(); len(errs) != 0 {
		t.Fatalf("abort reported: %v", errs)
	}
	// A crash while running a tool is an error result for the model.
	res, err = greet.Execute(context.Background(), tools.Call{ID: "y", Args: json.RawMessage(`{"name":"crash"}`)})
	if err != nil || !res.IsError || !strings.Contains(res.Content[0].Text, "failed while running greet") {
		t.Fatalf("crash: %v %+v", err, res)
	}
	if errs := e.rec.all(); len(errs) != 1 || !strings.HasSuffix(errs[0], "|tool:greet|exited: exit status 4") {
		t.Fatalf("errors %q", errs)
	}
	// Restarted: the tool works again.
	res, err = greet.Execute(context.Background(), tools.Call{ID: "z", Args: json.RawMessage(`{"name":"Al"}`)})
	if err != nil || res.IsError || res.Content[0].Text != "hello Al" {
		t.Fatalf("after restart: %v %+v", err, res)
	}
}

func TestShutdownAction(t *testing.T) {
	e := load(t, 5*time.Second, "basic")
	if handled, err := e.h.RunCommand(context.Background(), "bye", ""); !handled || err != nil {
		t.Fatal(handled, err)
	}
	select {
	case <-e.act.shutdown:
	default:
		t.Error("shutdown not called")
	}
}

func TestEventSubscription(t *testing.T) {
	e := load(t, 5*time.Second, "basic")
	// The extension records the events it gets in order: had it got a
	// turn_start, its entry would come before the second agent_start's.
	for range 2 {
		e.h.Event(&rpc.TurnStartEvent{Type: rpc.EventTurnStart}) // not subscribed
		e.h.Event(&rpc.AgentStartEvent{Type: rpc.EventAgentStart})
	}
	waitFor(t, "events", func() bool { return len(e.act.got()) >= 2 })
	want := `entry saw-event {"name":"agent_start"}`
	if got := e.act.got(); !slices.Equal(got, []string{want, want}) {
		t.Errorf("%v", got)
	}
}

func TestLoadFailures(t *testing.T) {
	dir := t.TempDir()
	bin := filepath.Join(dir, "bin")
	exits := shScript(t, bin, "exits", "exit 1\n")
	garbage := shScript(t, bin, "garbage", "read line\necho hello there\nsleep 5\n")
	silent := shScript(t, bin, "silent", "sleep 5\n")
	badver := extScript(t, bin, "badversion", "badversion")
	plain := filepath.Join(bin, "plain")
	os.WriteFile(plain, []byte("x"), 0o644)
	good := extScript(t, bin, "good", "second")
	e := loadPaths(t, dir, 500*time.Millisecond, exits, garbage, badver, plain, filepath.Join(dir, "missing"), good)
	var msgs []string
	for _, err := range e.errs {
		msgs = append(msgs, err.Error())
	}
	all := strings.Join(msgs, "\n")
	for _, want := range []string{
		"missing: no such file", "plain: not executable", "exits: exited: exit status 1",
		`garbage: invalid output (not a JSON message): "hello there"`,
		"badversion: unsupported protocol version 99",
	} {
		if !strings.Contains(all, want) {
			t.Errorf("missing %q in\n%s", want, all)
		}
	}
	if len(msgs) != 5 || !slices.Equal(e.h.Paths(), []string{good}) {
		t.Errorf("%d errors, paths %v", len(msgs), e.h.Paths())
	}
	if len(e.rec.all()) != 0 {
		t.Errorf("load failures emitted: %v", e.rec.all())
	}

	// A process that never registers fails its handshake; without a
	// HandshakeTimeout the hook timeout bounds it.
	h, errs := Load(Options{Cwd: dir, AgentDir: filepath.Join(dir, "agent"), Paths: []string{silent}, Timeout: 300 * time.Millisecond, Log: &syncBuffer{}})
	defer h.Close()
	if len(errs) != 1 || !strings.HasSuffix(errs[0].Error(), "silent: no register message within 300ms") || len(h.Paths()) != 0 {
		t.Errorf("silent: %v, paths %v", errs, h.Paths())
	}
}

func TestDiscoveryAndTrust(t *testing.T) {
	dir := t.TempDir()
	agent := filepath.Join(dir, "agent")
	global := extScript(t, filepath.Join(agent, "extensions"), "global", "second")
	os.WriteFile(filepath.Join(agent, "extensions", "README.md"), []byte("not an extension"), 0o644)
	shScript(t, filepath.Join(agent, "extensions"), ".hidden", "exit 1\n")
	// A directory extension: <dir>/<dir name>.
	dirExt := extScript(t, filepath.Join(agent, "extensions", "boxed"), "boxed", "second")
	project := extScript(t, filepath.Join(dir, ".pisces", "extensions"), "project", "second")
	for _, trusted := range []bool{false, true} {
		h, errs := Load(Options{AgentDir: agent, Cwd: dir, ProjectTrusted: trusted, Paths: []string{global}, Log: &syncBuffer{}})
		want := []string{dirExt, global}
		if trusted {
			want = append(want, project)
		}
		if len(errs) != 0 || !slices.Equal(h.Paths(), want) {
			t.Errorf("trusted=%v: %v %v", trusted, errs, h.Paths())
		}
		h.Close()
	}
}

// Discover names where each extension comes from without starting it;
// NoDiscovery (--no-extensions) keeps only the explicit paths.
func TestDiscoverScopes(t *testing.T) {
	dir := t.TempDir()
	agent := filepath.Join(dir, "agent")
	global := shScript(t, filepath.Join(agent, "extensions"), "global", "exit 1\n")
	project := shScript(t, filepath.Join(dir, ".pisces", "extensions"), "project", "exit 1\n")
	extra := shScript(t, filepath.Join(dir, "more"), "extra", "exit 1\n")
	opts := Options{AgentDir: agent, Cwd: dir, ProjectTrusted: true, Paths: []string{"more", global, "missing"}}
	found, errs := Discover(opts)
	want := []Found{{global, ScopeUser, ""}, {project, ScopeProject, ""}, {extra, ScopePath, "more"}}
	if !slices.Equal(found, want) {
		t.Errorf("found %+v, want %+v", found, want)
	}
	if len(errs) != 1 || !strings.Contains(errs[0].Error(), filepath.Join(dir, "missing")) {
		t.Errorf("errors %v", errs)
	}
	opts.NoDiscovery = true
	found, _ = Discover(opts)
	want = []Found{{extra, ScopePath, "more"}, {global, ScopePath, global}}
	if !slices.Equal(found, want) {
		t.Errorf("no discovery: found %+v, want %+v", found, want)
	}
}

func TestNilHost(t *testing.T) {
	var h *Host
	ctx := context.Background()
	if d := h.OnToolCall(ctx, "1", "bash", nil); d.Block || d.Args != nil {
		t.Error(d)
	}
	if _, ok := h.OnToolResult(ctx, "1", "bash", nil, tools.TextResult("x")); ok {
		t.Error("result")
	}
	if r := h.OnInput(ctx, "hi", "rpc"); r.Handled || r.Text != "hi" {
		t.Error(r)
	}
	if h.BeforeAgentStart(ctx, "p") != "" || h.SessionBefore(ctx, "fork", nil) {
		t.Error("before")
	}
	h.Event(&rpc.AgentStartEvent{})
	if h.Commands() != nil || h.Tools() != nil || h.Paths() != nil {
		t.Error("lists")
	}
	if handled, err := h.RunCommand(ctx, "x", ""); handled || err != nil {
		t.Error(handled, err)
	}
	h.SetUI(nil)
	h.SetActions(nil)
	h.SetEmit(nil)
	if h.Close() != nil || h.AddBuiltin(NewExtension("x", func(*API) error { return nil })) == nil {
		t.Error("close/add")
	}
}

func TestCloseStopsProcesses(t *testing.T) {
	e := load(t, 5*time.Second, "basic")
	pid := pidOf(t, e.h)
	e.h.Close()
	if d := e.h.OnToolCall(context.Background(), "c", "bash", bashArgs("forbidden")); d.Block {
		t.Error("hook after close")
	}
	if len(e.rec.all()) != 0 {
		t.Errorf("close reported errors: %v", e.rec.all())
	}
	if out, err := exec.Command("kill", "-0", pid).CombinedOutput(); err == nil {
		t.Errorf("process %s still alive %s", pid, out)
	}
}

// ---- built-in extensions ----

type echoTool struct{}

func (echoTool) Name() string                { return "echo" }
func (echoTool) Description() string         { return "Echoes" }
func (echoTool) Parameters() json.RawMessage { return json.RawMessage(`{"type":"object"}`) }
func (echoTool) Execute(ctx context.Context, c tools.Call) (tools.Result, error) {
	if string(c.Args) == `{"panic":true}` {
		panic("boom")
	}
	if c.OnUpdate != nil {
		c.OnUpdate(tools.TextResult("half"))
	}
	return tools.Result{Content: []ai.Content{ai.Text(string(c.Args))}}, nil
}

func TestBuiltinExtension(t *testing.T) {
	e := load(t, time.Second, "basic")
	var mu sync.Mutex
	var gotArgs string
	args := func() string { mu.Lock(); defer mu.Unlock(); return gotArgs }
	var api *API
	err := e.h.AddBuiltin(NewExtension("gate", func(a *API) error {
		api = a
		a.RegisterTool(echoTool{})
		a.RegisterCommand("/hello", "Says hello", func(ctx context.Context, args string) error {
			a.Notify("hello "+args, "info")
			return a.SetSessionName("hello " + args)
		})
		a.OnToolCall(func(ctx context.Context, ev ToolCallEvent) ToolCallDecision {
			mu.Lock()
			gotArgs = string(ev.Args)
			mu.Unlock()
			switch string(ev.Args) {
			case `{"command":"panic"}`:
				panic("oops")
			case `{"command":"slow"}`:
				<-ctx.Done() // never answers: the host times it out and cancels ctx
			case `{"command":"rm -rf /"}`:
				if !a.Confirm(ctx, "Really?", "rm -rf /", 0) {
					return ToolCallDecision{Block: true, Reason: "user said no"}
				}
			}
			return ToolCallDecision{}
		})
		a.OnInput(func(ctx context.Context, text, source string) InputResult {
			if text == "hello world (rpc)" {
				return InputResult{Text: "builtin got it"}
			}
			return InputResult{}
		})
		a.OnBeforeAgentStart(func(ctx context.Context, sp string) string { return "Builtin." })
		a.OnSessionBefore(func(ctx context.Context, kind string, payload any) bool { return kind == "tree" })
		a.OnToolResult(func(ctx context.Context, ev ToolResultEvent) (tools.Result, bool) {
			return tools.TextResult(ev.Result.Content[0].Text + "+builtin"), true
		})
		return nil
	}))
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	// Chained after the process extension: sees its rewritten arguments.
	if d := e.h.OnToolCall(ctx, "1", "bash", bashArgs("ls")); d.Block || string(d.Args) != `{"command":"ls -la"}` || args() != `{"command":"ls -la"}` {
		t.Errorf("%+v %s", d, args())
	}
	e.ui.answer = confirmWith(false)
	if d := e.h.OnToolCall(ctx, "2", "bash", bashArgs("rm -rf /")); !d.Block || d.Reason != "user said no" {
		t.Errorf("confirm: %+v", d)
	}
	if r := e.h.OnInput(ctx, "hello", "rpc"); r.Text != "builtin got it" {
		t.Errorf("input %+v", r)
	}
	if s := e.h.BeforeAgentStart(ctx, "x"); !strings.HasSuffix(s, "\n\nBuiltin.") {
		t.Errorf("before %q", s)
	}
	if !e.h.SessionBefore(ctx, "tree", nil) || e.h.SessionBefore(ctx, "switch", map[string]any{}) {
		t.Error("session before")
	}
	if r, ok := e.h.OnToolResult(ctx, "3", "read", nil, tools.TextResult("a")); !ok || r.Content[0].Text != "redacted: a+builtin" {
		t.Errorf("result %+v", r)
	}
	if handled, err := e.h.RunCommand(ctx, "hello", "you"); !handled || err != nil {
		t.Error(handled, err)
	}
	if got := e.act.got(); !slices.Equal(got, []string{"name hello you"}) {
		t.Errorf("actions %v", got)
	}
	var names []string
	for _, tl := range e.h.Tools() {
		names = append(names, tl.Name())
	}
	if !slices.Equal(names, []string{"greet", "echo"}) {
		t.Errorf("tools %v", names)
	}
	echo := e.h.Tools()[1]
	if r, err := echo.Execute(ctx, tools.Call{Args: json.RawMessage(`{"panic":true}`)}); err != nil || !r.IsError {
		t.Errorf("panicking tool: %v %+v", err, r)
	}
	// A panic and a timeout are failures: reported, default answer.
	if d := e.h.OnToolCall(ctx, "4", "bash", bashArgs("panic")); d.Block {
		t.Error(d)
	}
	if d := e.h.OnToolCall(ctx, "5", "bash", bashArgs("slow")); d.Block {
		t.Error(d)
	}
	errs := e.rec.all()
	want := []string{
		"builtin:gate|tool:echo|panic: boom",
		"builtin:gate|tool_call|panic: oops",
		"builtin:gate|tool_call|no answer to tool_call within 1s",
	}
	if !slices.Equal(errs, want) {
		t.Errorf("errors %q", errs)
	}
	// The fourth failure within a minute disables it.
	e.h.OnToolCall(ctx, "6", "bash", bashArgs("panic"))
	errs = e.rec.all()
	if len(errs) != 5 || !strings.Contains(errs[4], "builtin:gate|tool_call|extension disabled") {
		t.Errorf("errors %q", errs)
	}
	if len(e.h.Tools()) != 1 || len(e.h.Commands()) != 4 {
		t.Error("disabled builtin still registered")
	}
	_ = api
}

func TestBuiltinSetupError(t *testing.T) {
	h, _ := Load(Options{})
	defer h.Close()
	if err := h.AddBuiltin(NewExtension("bad", func(*API) error { return fmt.Errorf("nope") })); err == nil || err.Error() != "extension builtin:bad: nope" {
		t.Error(err)
	}
	if err := h.AddBuiltin(NewExtension("panics", func(*API) error { panic("x") })); err == nil {
		t.Error("panic in setup accepted")
	}
	if len(h.Paths()) != 0 {
		t.Error(h.Paths())
	}
}

// A ~/ path needs the home directory; without one it is reported, never
// tried relative to the working directory (which may be a repository).
func TestHomePathWithoutHome(t *testing.T) {
	cwd := t.TempDir()
	ext := filepath.Join(cwd, "~", "ext")
	if err := os.MkdirAll(filepath.Dir(ext), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(ext, []byte("#!/bin/sh\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	defer fsx.OverrideAccountHome(func() (string, error) { return "", errors.New("unknown user") })()
	t.Setenv("HOME", "")
	paths, errs := Discover(Options{Cwd: cwd, Paths: []string{"~/ext"}})
	if len(paths) != 0 || len(errs) != 1 || !strings.Contains(errs[0].Error(), `extension cannot expand "~/ext": cannot find your home directory`) {
		t.Fatalf("paths %v, errors %v", paths, errs)
	}
}

// Close returns only once every goroutine that served the extension
// processes has ended: the current process's, and those of one that
// crashed and was restarted.
func TestCloseWaitsForProcessGoroutines(t *testing.T) {
	e := load(t, 5*time.Second, "basic")
	pid1 := pidOf(t, e.h)
	e.h.OnToolCall(context.Background(), "c1", "bash", bashArgs("crash"))
	if pidOf(t, e.h) == pid1 {
		t.Fatal("not restarted")
	}
	e.h.Close()
	e.h.bg.mu.Lock()
	n := e.h.bg.n
	e.h.bg.mu.Unlock()
	if n != 0 {
		t.Fatalf("%d goroutines still running after Close", n)
	}
}
