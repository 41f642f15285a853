package tui

import (
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	tea "charm.land/bubbletea/v2"
	"github.com/charmbracelet/x/ansi"

	"github.com/pisces-agent/pisces/bench/sessgen"
	"github.com/pisces-agent/pisces/internal/ai"
	"github.com/pisces-agent/pisces/internal/extensions"
	"github.com/pisces-agent/pisces/internal/testenv"
	"github.com/pisces-agent/pisces/rpc"
)

const replyScript = `{"chunkSize": 7, "turns": [
 {"content": [{"type":"text","text":"# Title\n\nSome **bold** text and ` + "`code`" + `.\n\n- one\n- two\n\n| a | b |\n|---|---|\n| 1 | 2 |"}]},
 {"content": [{"type":"toolCall","name":"bash","arguments":{"command":"echo hi"}}]},
 {"content": [{"type":"text","text":"ran it"}]}
]}`

func idle(d *driver) func() bool { return func() bool { return !d.m.streaming } }

func TestPromptAndStreamedReply(t *testing.T) {
	d := newDriver(t, replyScript, nil)
	d.golden("start")
	d.typeText("hello")
	d.key("enter")
	d.waitFor("the reply", d.contains("│ 1 │ 2 │"))
	d.waitFor("the run's end", idle(d))
	d.golden("reply")

	// The bash tool call: its command, output and duration.
	d.typeText("run echo")
	d.key("enter")
	d.waitFor("the second reply", d.contains("ran it"))
	d.waitFor("the run's end", idle(d))
	s := d.screen()
	for _, want := range []string{"$ echo hi", "\nhi\n", "Took "} {
		if !strings.Contains(s, want) {
			t.Errorf("screen lacks %q:\n%s", want, s)
		}
	}
	// The session file holds the conversation.
	b, err := os.ReadFile(d.m.sess.Store().File())
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(b), `"text":"hello"`) || !strings.Contains(string(b), `"text":"ran it"`) {
		t.Errorf("session file lacks the conversation:\n%s", b)
	}
}

func TestEscapeAbortsAndRestoresQueue(t *testing.T) {
	d := newDriver(t, `{"turns": [{"content": [{"type":"text","text":"partial words"}], "hang": true}]}`, nil)
	d.typeText("go")
	d.key("enter")
	d.waitFor("the streamed words", d.contains("partial words"))
	d.typeText("steer this")
	d.key("enter")
	d.waitFor("the queued steering message", d.contains("Steering: steer this"))
	d.typeText("later")
	d.key("alt+enter")
	d.waitFor("the queued follow-up", d.contains("Follow-up: later"))
	d.golden("queued")
	d.key("esc")
	d.waitFor("the abort", d.contains("Operation aborted"))
	d.waitFor("the run's end", idle(d))
	if got := d.m.editor.Value(); got != "steer this\n\nlater" {
		t.Errorf("editor after abort = %q, want the queued messages", got)
	}
	// The partial reply is stored as aborted.
	msgs := d.m.sess.Messages()
	last, ok := msgs[len(msgs)-1].(*ai.AssistantMessage)
	if !ok || last.StopReason != "aborted" || last.ErrorMessage != "Operation aborted" || len(last.Content) == 0 || last.Content[0].Text != "partial words" {
		t.Errorf("last message = %#v, want the partial reply stopped as aborted", msgs[len(msgs)-1])
	}
}

func TestDequeueMovesQueuedMessagesBack(t *testing.T) {
	d := newDriver(t, `{"turns": [{"content": [{"type":"text","text":"working"}], "hang": true}]}`, nil)
	d.typeText("go")
	d.key("enter")
	d.waitFor("the streamed words", d.contains("working"))
	d.typeText("one")
	d.key("enter")
	d.waitFor("the queued message", d.contains("Steering: one"))
	d.key("alt+up")
	d.waitFor("the queue to empty", func() bool { return !strings.Contains(d.screen(), "Steering:") })
	if got := d.m.editor.Value(); got != "one" {
		t.Errorf("editor = %q, want the queued message", got)
	}
	if !d.m.streaming {
		t.Error("alt+up stopped the run")
	}
	d.key("esc")
	d.waitFor("the run's end", idle(d))
}

func TestSlashMenu(t *testing.T) {
	d := newDriver(t, replyScript, nil)
	d.typeText("/")
	if d.m.menu == nil {
		t.Fatalf("no menu after /:\n%s", d.screen())
	}
	n := len(d.m.menu.visible())
	if !strings.Contains(d.screen(), "(1/"+itoa(n)+")") {
		t.Errorf("no (1/%d) counter:\n%s", n, d.screen())
	}
	d.golden("slash-menu")
	// The terminal's cursor sits after the typed slash.
	v := d.m.View()
	rows := strings.Split(d.screen(), "\n")
	if v.Cursor == nil || v.Cursor.Y >= len(rows) || rows[v.Cursor.Y] != "/" || v.Cursor.X != 1 {
		t.Errorf("cursor %+v, want after the / on its row", v.Cursor)
	}
	d.typeText("th")
	if it, ok := d.m.menu.current(); !ok || it.label != "thinking" {
		t.Errorf("after /th the selection is %q, want thinking", it.label)
	}
	d.key("esc")
	if d.m.menu != nil {
		t.Error("escape left the menu open")
	}
}

func TestTreeNavigateAndBack(t *testing.T) {
	d := newDriver(t, replyScript, nil)
	d.typeText("hello")
	d.key("enter")
	d.waitFor("the run's end", func() bool { return strings.Contains(d.screen(), "│ 1 │ 2 │") && !d.m.streaming })
	d.typeText("/tree")
	d.key("enter")
	if d.m.overlay == nil || !strings.Contains(d.screen(), "Session Tree") {
		t.Fatalf("/tree did not open the tree:\n%s", d.screen())
	}
	d.golden("tree")
	// Escape returns to the editor, nothing changed.
	leaf := d.m.sess.Store().LeafID()
	d.key("esc")
	if d.m.overlay != nil || d.m.sess.Store().LeafID() != leaf {
		t.Fatal("escape did not close the tree unchanged")
	}
	// Navigate to the user message: its text comes back to the editor,
	// the reply leaves the transcript.
	d.typeText("/tree")
	d.key("enter")
	d.key("up")
	it, _ := d.m.overlay.current()
	if !strings.Contains(it.label, "user: hello") {
		t.Fatalf("one up from the reply is %q, want the user message", it.label)
	}
	d.key("enter")
	d.waitFor("the editor text", func() bool { return d.m.editor.Value() == "hello" })
	if strings.Contains(d.screen(), "Title") {
		t.Errorf("the abandoned reply is still shown:\n%s", d.screen())
	}
}

func TestDoubleEscapeOpensTree(t *testing.T) {
	d := newDriver(t, replyScript, nil)
	now := time.Unix(1000, 0)
	d.m.now = func() time.Time { return now }
	d.key("esc")
	now = now.Add(100 * time.Millisecond)
	d.key("esc")
	if d.m.overlay == nil || d.m.overlay.title != "Session Tree" {
		t.Fatalf("two escapes did not open the tree:\n%s", d.screen())
	}
	d.key("esc")
	// Two escapes further apart do nothing.
	now = now.Add(time.Second)
	d.key("esc")
	now = now.Add(time.Second)
	d.key("esc")
	if d.m.overlay != nil {
		t.Error("escapes a second apart opened the tree")
	}
}

func TestCtrlCClearsThenExits(t *testing.T) {
	d := newDriver(t, replyScript, nil)
	now := time.Unix(1000, 0)
	d.m.now = func() time.Time { return now }
	d.typeText("draft")
	d.key("ctrl+c")
	if d.m.editor.Value() != "" || d.quit {
		t.Fatalf("first ctrl+c: editor %q, quit %v; want cleared, running", d.m.editor.Value(), d.quit)
	}
	now = now.Add(2 * time.Second)
	d.key("ctrl+c")
	d.waitFor("nothing", func() bool { return true })
	if d.quit || d.m.quitting {
		t.Fatal("two ctrl+c two seconds apart exited")
	}
	now = now.Add(200 * time.Millisecond)
	d.key("ctrl+c")
	d.waitFor("the exit", func() bool { return d.quit })
}

func TestCtrlDExitsOnEmptyEditor(t *testing.T) {
	d := newDriver(t, replyScript, nil)
	d.typeText("x")
	d.key("ctrl+d")
	if d.m.quitting {
		t.Fatal("ctrl+d with text in the editor exited")
	}
	d.key("backspace")
	d.key("ctrl+d")
	d.waitFor("the exit", func() bool { return d.quit })
}

func TestNewSessionAndResume(t *testing.T) {
	d := newDriver(t, replyScript, nil)
	d.typeText("hello")
	d.key("enter")
	d.waitFor("the run's end", func() bool { return strings.Contains(d.screen(), "│ 1 │ 2 │") && !d.m.streaming })
	first := d.m.sess.Store().ID()
	firstFile := d.m.sess.Store().File()
	d.typeText("/new")
	d.key("enter")
	d.waitFor("the new session", func() bool { return d.m.sess.Store().ID() != first })
	if strings.Contains(d.screen(), "Title") {
		t.Errorf("the new session shows the old transcript:\n%s", d.screen())
	}
	// /resume lists the first session; enter switches back to it.
	d.typeText("/resume")
	d.key("enter")
	if d.m.overlay == nil {
		t.Fatalf("/resume opened nothing:\n%s", d.screen())
	}
	d.golden("resume")
	found := false
	for i, it := range d.m.overlay.visible() {
		if strings.HasPrefix(it.label, "hello") {
			d.m.overlay.selected = i
			found = true
		}
	}
	if !found {
		t.Fatalf("the first session is not listed:\n%s", d.screen())
	}
	d.key("enter")
	d.waitFor("the first session again", func() bool { return d.m.sess.Store().File() == firstFile })
	d.waitFor("its transcript", d.contains("│ 1 │ 2 │"))
}

func TestUserBash(t *testing.T) {
	d := newDriver(t, replyScript, nil)
	d.typeText("!echo from-the-shell")
	d.key("enter")
	d.waitFor("the output", func() bool {
		for _, b := range d.m.blocks {
			if b.kind == kindBash && b.done {
				return true
			}
		}
		return false
	})
	s := d.screen()
	if !strings.Contains(s, "$ echo from-the-shell") || !strings.Contains(s, "\nfrom-the-shell") {
		t.Errorf("screen lacks the command and its output:\n%s", s)
	}
}

// Every line fits the width after a resize, and the content is the same
// re-wrapped (no line lost or repeated).
func TestResizeRewraps(t *testing.T) {
	d := newDriver(t, `{"turns": [{"content": [{"type":"text","text":"`+strings.Repeat("word ", 60)+`"}]}]}`, nil)
	d.send(teaSize(120, 40))
	d.typeText("hello")
	d.key("enter")
	d.waitFor("the run's end", func() bool { return strings.Contains(d.screen(), "word word") && !d.m.streaming })
	count := func() int { return strings.Count(d.screen(), "word") }
	wide := count()
	for _, size := range [][2]int{{80, 30}, {120, 40}, {50, 40}} {
		d.send(teaSize(size[0], size[1]))
		for i, l := range strings.Split(d.screen(), "\n") {
			if w := ansi.StringWidth(l); w > size[0] {
				t.Errorf("at %dx%d line %d is %d wide: %q", size[0], size[1], i, w, l)
			}
		}
		if lines := strings.Count(d.screen(), "\n") + 1; lines > size[1] {
			t.Errorf("at %dx%d the screen has %d lines", size[0], size[1], lines)
		}
		if got := count(); got != wide {
			t.Errorf("at %dx%d %d words shown, %d at 120 columns", size[0], size[1], got, wide)
		}
	}
}

func TestToolRendering(t *testing.T) {
	th, _ := ThemeByName("dark")
	dur := int64(1234)
	edit := &block{kind: kindTool, toolName: "edit", args: json.RawMessage(`{"path":"a.go"}`), done: true, durationMs: &dur,
		details: json.RawMessage(`{"diff":" 1 package a\n-2 var x = 1\n+2 var x = 2"}`)}
	long := &block{kind: kindTool, toolName: "bash", args: json.RawMessage(`{"command":"seq 30"}`), done: true}
	for i := 1; i <= 30; i++ {
		long.output += itoa(i) + "\n"
	}
	todo := &block{kind: kindTool, toolName: "todo_write", done: true,
		args: json.RawMessage(`{"phases":[{"name":"Build","tasks":[{"content":"parse","status":"completed"},{"content":"render","status":"in_progress"},{"content":"test","status":"pending"}]}]}`)}
	var out []string
	for _, b := range []*block{edit, long, todo} {
		for _, l := range b.render(40, th, false, true) {
			out = append(out, ansi.Strip(l))
		}
		out = append(out, "")
	}
	out = append(out, ansi.Strip(strings.Join(long.render(40, th, true, true), "\n")))
	goldenText(t, "tools", strings.Join(out, "\n")+"\n")
}

func TestMarkdown(t *testing.T) {
	th, _ := ThemeByName("dark")
	src := "## Heading\n\nA paragraph that is long enough to be wrapped at forty columns, with a [link](https://example.com).\n\n1. first\n2. second\n   - nested\n\n> quoted text\n\n```go\nfunc f() int { return 1 } // a comment\n```\n\n| name | value |\n|------|-------|\n| alpha | a long cell that must wrap inside the table |\n\n---\n\nunfinished ```"
	got := strings.Join(renderMarkdown(src, 40, th), "\n")
	for i, l := range strings.Split(got, "\n") {
		if w := ansi.StringWidth(l); w > 40 {
			t.Errorf("line %d is %d wide: %q", i, w, l)
		}
	}
	goldenText(t, "markdown", ansi.Strip(got)+"\n")
	// A fence still streaming renders as code to the end.
	partial := renderMarkdown("text\n\n```go\nfunc f() {", 40, th)
	if last := ansi.Strip(partial[len(partial)-2]); !strings.Contains(last, "func f() {") {
		t.Errorf("unclosed fence: %q", partial)
	}
}

func TestKeymapFile(t *testing.T) {
	dir := t.TempDir()
	write := func(s string) {
		if err := os.WriteFile(filepath.Join(dir, "keybindings.json"), []byte(s), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write(`{"app.interrupt": "ctrl+x", "submit": ["ctrl+s", "Return"], "app.exit": []}`)
	km, err := LoadKeymap(dir)
	if err != nil {
		t.Fatal(err)
	}
	if !km.is("ctrl+x", actInterrupt) || km.is("esc", actInterrupt) {
		t.Errorf("interrupt keys = %v", km.bindings[actInterrupt])
	}
	if !km.is("ctrl+s", actSubmit) || !km.is("enter", actSubmit) {
		t.Errorf("submit keys (legacy name) = %v", km.bindings[actSubmit])
	}
	if km.keyOf(actExit) != "" {
		t.Errorf("exit keys = %v, want none", km.bindings[actExit])
	}
	write(`{"app.nothing": "x"}`)
	if _, err := LoadKeymap(dir); err == nil || !strings.Contains(err.Error(), `"app.nothing"`) {
		t.Errorf("unknown action: err = %v", err)
	}
	write(`{"app.exit": 3}`)
	if _, err := LoadKeymap(dir); err == nil || !strings.Contains(err.Error(), "expected a key") {
		t.Errorf("bad value: err = %v", err)
	}
	// A rebinding reaches the UI.
	write(`{"app.interrupt": "ctrl+x"}`)
	km, _ = LoadKeymap(dir)
	d := newDriver(t, `{"turns": [{"content": [{"type":"text","text":"words"}], "hang": true}]}`, func(o *Options) { o.Keys = km })
	d.typeText("go")
	d.key("enter")
	d.waitFor("the words", d.contains("words"))
	d.key("ctrl+x")
	d.waitFor("the abort", d.contains("Operation aborted"))
}

func TestFeedCoalescesDeltas(t *testing.T) {
	f := &feed{signal: make(chan struct{}, 1), closed: make(chan struct{}), unsub: func() {}}
	for range 5000 {
		f.push(&rpc.MessageUpdateEvent{AssistantMessageEvent: ai.AssistantEvent{Type: "text_delta", Delta: "x"}})
	}
	// Everything pushed so far comes in one batch.
	msg := f.next().(eventsMsg)
	if len(msg.evs) != 5000 {
		t.Errorf("batch of %d events, want the 5000 pushed", len(msg.evs))
	}
}

func goldenText(t *testing.T, name, got string) {
	t.Helper()
	path := filepath.Join("testdata", "screens", name+".txt")
	if testenv.Update(t, *update) {
		if err := os.WriteFile(path, []byte(got), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (run with -update to write it)", err)
	}
	if got != string(want) {
		t.Errorf("%s differs (-update rewrites it)\n--- got ---\n%s--- want ---\n%s", name, got, want)
	}
}

func teaSize(w, h int) tea.WindowSizeMsg { return tea.WindowSizeMsg{Width: w, Height: h} }

func TestSplitTables(t *testing.T) {
	src := "intro\n\n| a | b \\| c |\n|:--|--:|\n| 1 | 2 |\n| 3 |\nafter\n\n```\n| x | y |\n|---|---|\n```\nnot | a table\n|---|"
	parts := splitTables(src)
	if len(parts) != 3 || parts[1].table == nil {
		t.Fatalf("parts = %#v", parts)
	}
	tbl := parts[1].table
	if len(tbl) != 3 || tbl[0][1] != "b | c" || tbl[2][0] != "3" || len(tbl[2]) != 1 {
		t.Errorf("table = %q", tbl)
	}
	if !strings.Contains(parts[2].text, "| x | y |") || !strings.HasPrefix(parts[2].text, "after") {
		t.Errorf("the fenced table or the line after was taken: %q", parts[2].text)
	}
	th, _ := ThemeByName("dark")
	if got := ansi.Strip(strings.Join(renderMarkdown("a ~~gone~~ b", 40, th), "\n")); got != "a gone b" {
		t.Errorf("strikethrough rendered %q", got)
	}
}

func TestResumeRename(t *testing.T) {
	d := newDriver(t, replyScript, nil)
	d.typeText("hello")
	d.key("enter")
	d.waitFor("the run's end", func() bool { return strings.Contains(d.screen(), "│ 1 │ 2 │") && !d.m.streaming })
	d.typeText("/resume")
	d.key("enter")
	d.key("ctrl+r")
	if d.m.dialog == nil || !strings.Contains(d.screen(), "Rename session") {
		t.Fatalf("ctrl+r opened no dialog:\n%s", d.screen())
	}
	d.typeText("my name")
	d.key("enter")
	d.waitFor("the renamed row", d.contains("→ my name"))
	infos, err := d.m.sess.ListSessions("cwd", "")
	if err != nil || len(infos) != 1 || infos[0].Name != "my name" {
		t.Errorf("sessions after rename: %+v, %v", infos, err)
	}
}

// Extension dialogs open in place of the editor and answer through the
// bridge; notices and status entries show above the editor.
func TestExtensionDialogs(t *testing.T) {
	d := newDriver(t, replyScript, nil)
	b := NewBridge()
	b.Connect(func(msg tea.Msg) { d.msgs <- msg })
	answers := make(chan extensions.UIResponse, 1)
	ask := func(method string, params map[string]any) {
		go func() { answers <- b.Dialog(context.Background(), method, params, 0) }()
		d.waitFor("the "+method+" dialog", func() bool { return d.m.dialog != nil })
	}
	answer := func() extensions.UIResponse {
		select {
		case r := <-answers:
			return r
		case <-time.After(waitLimit):
			t.Fatal("no answer")
		}
		return extensions.UIResponse{}
	}

	ask("select", map[string]any{"title": "Pick one", "options": []any{"alpha", "beta"}})
	if !strings.Contains(d.screen(), "Pick one") || !strings.Contains(d.screen(), "→ alpha") {
		t.Errorf("select dialog:\n%s", d.screen())
	}
	d.key("down")
	d.key("enter")
	if r := answer(); r.Value == nil || *r.Value != "beta" {
		t.Errorf("select answered %+v", r)
	}

	ask("confirm", map[string]any{"title": "Sure?", "message": "It cannot be undone."})
	d.key("enter")
	if r := answer(); r.Confirmed == nil || !*r.Confirmed {
		t.Errorf("confirm answered %+v", r)
	}

	ask("input", map[string]any{"title": "Name"})
	d.typeText("typed")
	d.key("enter")
	if r := answer(); r.Value == nil || *r.Value != "typed" {
		t.Errorf("input answered %+v", r)
	}

	ask("editor", map[string]any{"title": "Text", "prefill": "a"})
	d.key("ctrl+j")
	d.typeText("b")
	d.key("enter")
	if r := answer(); r.Value == nil || *r.Value != "a\nb" {
		t.Errorf("editor answered %+v", r)
	}

	ask("input", map[string]any{"title": "Cancel me"})
	d.key("esc")
	if r := answer(); !r.Cancelled {
		t.Errorf("escape answered %+v", r)
	}

	b.Notify("notify", map[string]any{"message": "hello from an extension"})
	b.Notify("setStatus", map[string]any{"statusKey": "k", "statusText": "status text"})
	b.Notify("setWidget", map[string]any{"widgetKey": "w", "widgetLines": []any{"widget line"}})
	d.waitFor("the notice, status and widget", func() bool {
		s := d.screen()
		return strings.Contains(s, "hello from an extension") && strings.Contains(s, "status text") && strings.Contains(s, "widget line")
	})
	if d.m.dialog != nil {
		t.Error("a notice opened a dialog")
	}
}

func TestOpenResumeAtStart(t *testing.T) {
	d := newDriver(t, replyScript, func(o *Options) { o.OpenResume = true })
	d.waitFor("the session list", d.contains("Resume Session (Current Folder)"))
}

func TestScrollTranscript(t *testing.T) {
	var lines []string
	for i := 1; i <= 60; i++ {
		lines = append(lines, "line-"+itoa(i))
	}
	d := newDriver(t, `{"turns": [{"content": [{"type":"text","text":"`+strings.Join(lines, "\\n\\n")+`"}]}]}`, nil)
	d.typeText("hello")
	d.key("enter")
	d.waitFor("the reply's end", func() bool { return strings.Contains(d.screen(), "line-60") && !d.m.streaming })
	if strings.Contains(d.screen(), "line-1\n") {
		t.Fatal("the whole reply fits: the test needs a longer one")
	}
	for range 20 {
		d.key("pgup")
	}
	s := d.screen()
	if !strings.Contains(s, "pisces vtest") || !strings.Contains(s, "line-1\n") || strings.Contains(s, "line-60") {
		t.Errorf("scrolled to the top:\n%s", s)
	}
	for range 20 {
		d.key("pgdown")
	}
	if !strings.Contains(d.screen(), "line-60") {
		t.Errorf("scrolled back down:\n%s", d.screen())
	}
	// The mouse wheel scrolls too.
	for range 40 {
		d.send(tea.MouseWheelMsg{Button: tea.MouseWheelUp})
	}
	if s := d.screen(); !strings.Contains(s, "line-1\n") || strings.Contains(s, "line-60") {
		t.Errorf("wheel up to the top:\n%s", s)
	}
	for range 40 {
		d.send(tea.MouseWheelMsg{Button: tea.MouseWheelDown})
	}
	if !strings.Contains(d.screen(), "line-60") {
		t.Errorf("wheel back down:\n%s", d.screen())
	}
}

func TestThinkingToggleAndErrors(t *testing.T) {
	d := newDriver(t, `{"turns": [
		{"content": [{"type":"thinking","thinking":"pondering the question"},{"type":"text","text":"the answer"}]},
		{"error": {"status": 400, "message": "bad request"}}
	]}`, nil)
	d.typeText("think")
	d.key("enter")
	d.waitFor("the answer", func() bool { return strings.Contains(d.screen(), "the answer") && !d.m.streaming })
	if !strings.Contains(d.screen(), "pondering the question") {
		t.Errorf("thinking not shown:\n%s", d.screen())
	}
	d.key("ctrl+t")
	if s := d.screen(); strings.Contains(s, "pondering") || !strings.Contains(s, "Thinking...") {
		t.Errorf("ctrl+t did not collapse the thinking:\n%s", s)
	}
	d.typeText("fail")
	d.key("enter")
	d.waitFor("the error", d.contains("Error: 400 bad request"))
}

// An @ word lists the project's files (git's view when it is a
// repository: ignored files left out); enter inserts the path.
func TestAtFileCompletion(t *testing.T) {
	d := newDriver(t, replyScript, nil)
	cwd := d.m.sess.Cwd()
	for _, f := range []string{"src/main.go", "src/util.go", "ignored.log", "README.md"} {
		os.MkdirAll(filepath.Join(cwd, filepath.Dir(f)), 0o755)
		os.WriteFile(filepath.Join(cwd, f), []byte("x"), 0o644)
	}
	if git, err := exec.LookPath("git"); err == nil {
		os.WriteFile(filepath.Join(cwd, ".gitignore"), []byte("*.log\n"), 0o644)
		if out, err := exec.Command(git, "-C", cwd, "init", "-q").CombinedOutput(); err != nil {
			t.Fatalf("git init: %v\n%s", err, out)
		}
	}
	d.typeText("look at @mai")
	if d.m.menu == nil || !d.m.menu.files {
		t.Fatalf("no file list after @mai:\n%s", d.screen())
	}
	if it, _ := d.m.menu.current(); it.label != "src/main.go" {
		t.Errorf("first match %q, want src/main.go", it.label)
	}
	d.key("enter")
	if got := d.m.editor.Value(); got != "look at @src/main.go " {
		t.Errorf("editor %q", got)
	}
	if d.m.streaming || d.m.menu != nil {
		t.Error("enter on the file list sent the prompt or left the list open")
	}
	d.typeText("@")
	for _, it := range d.m.menu.visible() {
		if strings.HasSuffix(it.label, ".log") && d.m.filesDir != "" {
			if _, err := exec.LookPath("git"); err == nil {
				t.Errorf("an ignored file is listed: %s", it.label)
			}
		}
	}
}

// A session of 10,000 entries opens, draws its end, and lists its tree
// (times logged: a frame must not cost the session's length).
func TestLargeSession(t *testing.T) {
	d := newDriver(t, replyScript, nil)
	p, err := sessgen.WriteFile(filepath.Join(d.dir, "big"), sessgen.Options{Entries: 10000, Seed: 7, Cwd: d.m.sess.Cwd(), BranchEvery: 50})
	if err != nil {
		t.Fatal(err)
	}
	t0 := time.Now()
	l, err := d.mgr.Switch(d.m.live, p)
	if err != nil {
		t.Fatal(err)
	}
	d.m.attach(l)
	first := d.screen()
	t1 := time.Now()
	d.screen()
	t2 := time.Now()
	t.Logf("open and first frame %v, next frame %v (%d blocks)", t1.Sub(t0), t2.Sub(t1), len(d.m.blocks))
	last := d.m.blocks[len(d.m.blocks)-1].render(d.m.width, d.m.th, false, true)
	if tail := ansi.Strip(last[len(last)-1]); !strings.Contains(first, strings.TrimRight(tail, " ")) {
		t.Errorf("the screen does not end with the last block (%q):\n%s", tail, first)
	}
	t3 := time.Now()
	d.m.cmdTree("")
	t.Logf("tree of %d rows: %v", len(d.m.overlay.items), time.Since(t3))
	if n := len(d.m.overlay.items); n < 10000 {
		t.Errorf("tree rows %d, want every entry", n)
	}
}

// A pasted image path (as a terminal pastes a dropped file) attaches the
// image to the next message.
func TestPastedImageAttaches(t *testing.T) {
	d := newDriver(t, replyScript, nil)
	png := []byte("\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR\x00\x00\x00\x01\x00\x00\x00\x01\x08\x06\x00\x00\x00\x1f\x15\xc4\x89\x00\x00\x00\rIDATx\x9cc\xf8\x0f\x00\x00\x01\x01\x00\x05\x18\xd8N\x00\x00\x00\x00IEND\xaeB`\x82")
	dir := filepath.Join(d.m.sess.Cwd(), "my shots")
	os.MkdirAll(dir, 0o755)
	if err := os.WriteFile(filepath.Join(dir, "shot.png"), png, 0o644); err != nil {
		t.Fatal(err)
	}
	d.send(tea.PasteMsg{Content: "'" + filepath.Join(dir, "shot.png") + "'"})
	if !strings.Contains(d.screen(), "Attached: shot.png") || d.m.editor.Value() != "" {
		t.Fatalf("no attachment shown, editor %q:\n%s", d.m.editor.Value(), d.screen())
	}
	d.send(tea.PasteMsg{Content: "plain text"})
	if d.m.editor.Value() != "plain text" {
		t.Errorf("a text paste went elsewhere: editor %q", d.m.editor.Value())
	}
	d.key("enter")
	d.waitFor("the run's end", func() bool { return strings.Contains(d.screen(), "│ 1 │ 2 │") && !d.m.streaming })
	if strings.Contains(d.screen(), "Attached:") {
		t.Error("the attachment is still pending after sending")
	}
	user := d.m.sess.Messages()[1].(*ai.UserMessage)
	blocks := user.Content.AsBlocks()
	if len(blocks) != 2 || blocks[1].Type != ai.ContentImage || blocks[1].MimeType != "image/png" {
		t.Errorf("user message %+v, want the text and the image", blocks)
	}
}
