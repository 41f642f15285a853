package tui

import (
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/pisces-agent/pisces/internal/auth"
	"github.com/pisces-agent/pisces/internal/auth/authtest"
	"github.com/pisces-agent/pisces/internal/testenv"
)

// term is the pisces binary running in a tmux server of its own (the
// end-to-end tests: real terminal, real keys).
type term struct {
	t    *testing.T
	tmux string
	sock string
	dir  string
}

// startTerm runs pisces with args in a width x height tmux pane, in dir
// with the agent dir dir/agent. The pane's shell records the terminal
// state before and after (stty -g) and the exit code.
func startTerm(t *testing.T, width, height int, env []string, args ...string) *term {
	t.Helper()
	tmux := testenv.LookPath(t, "tmux")
	bin, err := testenv.PiscesBinary()
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	// A socket's path has a length limit (108 bytes): a short directory of
	// its own rather than the test's.
	sockDir, err := os.MkdirTemp("", "tmx")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(sockDir) })
	tm := &term{t: t, tmux: tmux, sock: filepath.Join(sockDir, "s"), dir: dir}
	if err := os.Mkdir(filepath.Join(dir, "project"), 0o755); err != nil {
		t.Fatal(err)
	}
	var q []string
	for _, a := range args {
		q = append(q, shellQuote(a))
	}
	script := fmt.Sprintf(`cd %s
stty -g > %s/stty.before
until [ -e %s/start ]; do sleep 0.002; done
env %s PISCES_CODING_AGENT_DIR=%s/agent %s %s
echo $? > %s/exit
stty -g > %s/stty.after
echo PANE-DONE
exec sleep 3600
`, shellQuote(filepath.Join(dir, "project")), dir, dir, strings.Join(env, " "), dir, shellQuote(bin), strings.Join(q, " "), dir, dir)
	if err := os.WriteFile(filepath.Join(dir, "run.sh"), []byte(script), 0o755); err != nil {
		t.Fatal(err)
	}
	// escape-time 0: an Escape is passed on at once, not held to see
	// whether a sequence follows.
	tm.run("-f", "/dev/null", "new-session", "-d", "-x", itoa(width), "-y", itoa(height), "-s", "t", "sh "+shellQuote(filepath.Join(dir, "run.sh")),
		";", "set-option", "-s", "escape-time", "0",
		";", "set-option", "-g", "default-terminal", "tmux-256color")
	t.Cleanup(func() { exec.Command(tmux, "-S", tm.sock, "kill-server").Run() })
	tm.run("set-option", "-g", "remain-on-exit", "on")
	return tm
}

// begin lets the pane's shell start pisces.
func (tm *term) begin() time.Time {
	tm.t.Helper()
	now := time.Now()
	if err := os.WriteFile(filepath.Join(tm.dir, "start"), nil, 0o644); err != nil {
		tm.t.Fatal(err)
	}
	return now
}

func shellQuote(s string) string { return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'" }

func (tm *term) run(args ...string) string {
	tm.t.Helper()
	out, err := exec.Command(tm.tmux, append([]string{"-S", tm.sock}, args...)...).CombinedOutput()
	if err != nil {
		tm.t.Fatalf("tmux %v: %v\n%s", args, err, out)
	}
	return string(out)
}

func (tm *term) keys(keys ...string) {
	tm.t.Helper()
	tm.run(append([]string{"send-keys", "-t", "t"}, keys...)...)
}

// text types literal text.
func (tm *term) text(s string) {
	tm.t.Helper()
	tm.run("send-keys", "-t", "t", "-l", s)
}

func (tm *term) capture() string {
	tm.t.Helper()
	return tm.run("capture-pane", "-p", "-t", "t")
}

// waitFor polls the pane until it holds every string (the deadline only
// decides how long a broken test takes).
func (tm *term) waitFor(what string, wants ...string) string {
	tm.t.Helper()
	deadline := time.Now().Add(90 * time.Second)
	for {
		s := tm.capture()
		ok := true
		for _, w := range wants {
			if !strings.Contains(s, w) {
				ok = false
			}
		}
		if ok {
			return s
		}
		if time.Now().After(deadline) {
			tm.t.Fatalf("waiting for %s (%q): timed out; pane:\n%s", what, wants, s)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

func (tm *term) waitGone(what, s string) {
	tm.t.Helper()
	deadline := time.Now().Add(90 * time.Second)
	for strings.Contains(tm.capture(), s) {
		if time.Now().After(deadline) {
			tm.t.Fatalf("waiting for %s: %q still shown:\n%s", what, s, tm.capture())
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// modes are the pane's terminal modes as tmux sees them.
func (tm *term) modes() string {
	tm.t.Helper()
	return strings.TrimSpace(tm.run("display-message", "-p", "-t", "t",
		"alternate_on=#{alternate_on} mouse=#{mouse_any_flag}#{mouse_button_flag}#{mouse_sgr_flag} wrap=#{wrap_flag} keypad=#{keypad_flag} cursor=#{cursor_flag}"))
}

func (tm *term) resize(w, h int) {
	tm.t.Helper()
	tm.run("resize-window", "-t", "t", "-x", itoa(w), "-y", itoa(h))
}

// e2eScript: each turn is reserved for the prompt that names it; the
// answer after the first tool call is the one turn without a match.
func e2eScript(t *testing.T, dir string) string {
	script := `{"chunkSize": 9, "turns": [
 {"match": "greet-me", "content": [{"type":"text","text":"## Greeting\n\nHello **there**, a reply in *markdown*:\n\n- item one\n- item two\n\n` + "```go\\nfunc main() {}\\n```" + `"}]},
 {"match": "run-tool", "content": [{"type":"toolCall","name":"bash","arguments":{"command":"echo tool-output-ok"}}]},
 {"content": [{"type":"text","text":"the tool ran"}]},
 {"match": "slow-one", "content": [{"type":"text","text":"streaming partial reply"}], "hang": true},
 {"match": "wait-file", "content": [{"type":"toolCall","name":"bash","arguments":{"command":"until [ -e GOFILE ]; do sleep 0.02; done; echo released"}}]},
 {"match": "steer-msg", "content": [{"type":"text","text":"steered reply"}]}
]}`
	script = strings.ReplaceAll(script, "GOFILE", filepath.Join(dir, "go"))
	p := filepath.Join(dir, "script.json")
	if err := os.WriteFile(p, []byte(script), 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

// The whole flow a person goes through, in a real terminal.
func TestTerminalEndToEnd(t *testing.T) {
	scriptDir := t.TempDir()
	script := e2eScript(t, scriptDir)
	tm := startTerm(t, 120, 40, nil, "--script", script)
	tm.begin()
	tm.waitFor("the editor", "escape interrupt", "(scripted) scripted")
	if m := tm.modes(); !strings.Contains(m, "alternate_on=1") || !strings.Contains(m, "mouse=111") {
		t.Errorf("running modes %q: want the alternate screen and mouse tracking", m)
	}

	// Prompt and streamed markdown reply.
	tm.text("greet-me")
	tm.keys("Enter")
	tm.waitFor("the reply", "## Greeting", "- item one", "func main() {}")
	tm.waitGone("the end of the run", "Working")

	// A bash tool call: command, output, duration.
	tm.text("run-tool please")
	tm.keys("Enter")
	tm.waitFor("the tool call", "$ echo tool-output-ok", "Took ", "the tool ran")
	tm.waitGone("the end of the run", "Working")

	// Steering while a tool runs: shown queued, delivered after the tool.
	tm.text("wait-file now")
	tm.keys("Enter")
	tm.waitFor("the waiting tool", "until [ -e")
	tm.text("steer-msg")
	tm.keys("Enter")
	tm.waitFor("the queued steering", "Steering: steer-msg")
	if err := os.WriteFile(filepath.Join(scriptDir, "go"), nil, 0o644); err != nil {
		t.Fatal(err)
	}
	tm.waitFor("the steered reply", "released", "steered reply")
	tm.waitGone("the end of the run", "Working")

	// Escape aborts mid-stream and keeps the partial reply.
	tm.text("slow-one")
	tm.keys("Enter")
	tm.waitFor("the stream", "streaming partial reply", "Working")
	tm.keys("Escape")
	tm.waitFor("the abort", "Operation aborted")
	tm.waitGone("the end of the run", "Working")

	// Ctrl+J inserts a newline (Shift+Enter cannot be told apart inside
	// tmux); ctrl+c clears the editor.
	tm.text("line one")
	tm.keys("C-j")
	tm.text("line two")
	s := tm.waitFor("two editor lines", "line two")
	if !regexp.MustCompile(`(?m)^line one\s*\n\s*line two`).MatchString(s) {
		t.Errorf("ctrl+j did not break the line:\n%s", s)
	}
	tm.keys("C-c")
	tm.waitGone("the cleared editor", "line two")

	// The slash menu.
	tm.text("/")
	tm.waitFor("the command list", "Select the model", "(1/")
	tm.text("tre")
	tm.waitFor("the filtered list", "→ tree")
	tm.keys("Enter")
	tm.waitFor("the tree", "Session Tree", "• user: greet-me")
	tm.keys("Up")
	tm.keys("Escape")
	tm.waitGone("the tree closing", "Session Tree")
	tm.waitFor("the transcript back", "Operation aborted")

	// Resize: re-wrapped at each width, nothing wider than the pane.
	for _, size := range [][2]int{{80, 30}, {120, 40}} {
		tm.resize(size[0], size[1])
		want := strings.Repeat("─", size[0])
		s := tm.waitFor(fmt.Sprintf("the %d-column rule", size[0]), want)
		if strings.Contains(s, want+"─") {
			t.Errorf("at %d columns a rule is wider:\n%s", size[0], s)
		}
		if n := strings.Count(s, "Operation aborted"); n != 1 {
			t.Errorf("at %dx%d %q is shown %d times:\n%s", size[0], size[1], "Operation aborted", n, s)
		}
	}

	// Two ctrl+c exit with status 0, the terminal restored, the transcript
	// reprinted with the resume hint.
	tm.keys("C-c", "C-c")
	s = tm.waitFor("the exit", "PANE-DONE")
	if !strings.Contains(s, "To resume this session: pisces --session ") || !strings.Contains(s, "Operation aborted") {
		t.Errorf("main screen after exit:\n%s", s)
	}
	if code, _ := os.ReadFile(filepath.Join(tm.dir, "exit")); strings.TrimSpace(string(code)) != "0" {
		t.Errorf("exit status %q, want 0", code)
	}
	before, _ := os.ReadFile(filepath.Join(tm.dir, "stty.before"))
	after, _ := os.ReadFile(filepath.Join(tm.dir, "stty.after"))
	if string(before) != string(after) || len(before) == 0 {
		t.Errorf("stty before %q, after %q", before, after)
	}
	if m := tm.modes(); m != "alternate_on=0 mouse=000 wrap=1 keypad=0 cursor=1" {
		t.Errorf("modes after exit %q", m)
	}

	// The session file holds the conversation, aborted reply included.
	files, _ := filepath.Glob(filepath.Join(tm.dir, "agent", "sessions", "*", "*.jsonl"))
	if len(files) != 1 {
		t.Fatalf("session files %v, want one", files)
	}
	b, _ := os.ReadFile(files[0])
	for _, want := range []string{`"text":"greet-me"`, `"stopReason":"aborted","errorMessage":"Operation aborted"`, `"text":"steer-msg"`, `"text":"steered reply"`, "tool-output-ok"} {
		if !strings.Contains(string(b), want) {
			t.Errorf("session file lacks %s", want)
		}
	}
	id := regexp.MustCompile(`--session (\S+)`).FindStringSubmatch(s)
	if id == nil || !strings.Contains(files[0], id[1]) {
		t.Errorf("resume hint %v does not name the file %s", id, files[0])
	}
}

// Inline mode draws in the main screen; --session reopens the session.
func TestTerminalInlineAndResume(t *testing.T) {
	scriptDir := t.TempDir()
	script := e2eScript(t, scriptDir)
	tm := startTerm(t, 100, 30, nil, "--script", script, "--tui-mode", "inline", "greet-me")
	tm.begin()
	tm.waitFor("the reply to the command line's message", "## Greeting", "(scripted) scripted")
	if m := tm.modes(); !strings.Contains(m, "alternate_on=0") {
		t.Errorf("inline modes %q", m)
	}
	tm.waitGone("the end of the run", "Working")
	tm.keys("C-d")
	s := tm.waitFor("the exit", "PANE-DONE")
	id := regexp.MustCompile(`--session (\S+)`).FindStringSubmatch(s)
	if id == nil {
		t.Fatalf("no resume hint:\n%s", s)
	}
	if n := strings.Count(s, "## Greeting"); n != 1 {
		t.Errorf("the reply is printed %d times:\n%s", n, s)
	}
	if n := strings.Count(s, "escape interrupt"); n != 1 {
		t.Errorf("the start header is printed %d times:\n%s", n, s)
	}
	if n := strings.Count(s, "func main() {}"); n != 1 {
		t.Errorf("the reply's code is printed %d times:\n%s", n, s)
	}
	// Reopened in another terminal (another agent dir: by path), the
	// session shows its transcript.
	files, _ := filepath.Glob(filepath.Join(tm.dir, "agent", "sessions", "*", "*.jsonl"))
	if len(files) != 1 {
		t.Fatalf("session files %v", files)
	}
	tm3 := startTerm(t, 100, 30, nil, "--script", script, "--session", files[0])
	tm3.begin()
	tm3.waitFor("the stored transcript", "## Greeting", "greet-me")
	tm3.keys("C-c", "C-c")
	tm3.waitFor("the exit", "PANE-DONE")
}

// Figures (logged): time from exec to an editor that shows a typed key,
// RSS while idle, CPU while 5,000 deltas stream.
func TestTerminalFigures(t *testing.T) {
	dir := t.TempDir()
	text := strings.Repeat("x", 5000)
	script := filepath.Join(dir, "script.json")
	os.WriteFile(script, []byte(`{"chunkSize": 1, "turns": [{"content": [{"type":"text","text":"`+text+`END"}]}]}`), 0o644)
	tm := startTerm(t, 120, 40, nil, "--script", script)
	tm.waitFor("the shell", "") // the pane is up
	start := tm.begin()
	tm.waitFor("the editor", "escape interrupt")
	t.Logf("exec to the first screen: %v", time.Since(start).Round(time.Millisecond))
	pid := piscesPID(t, tm)
	t.Logf("CPU used by then: %v", procCPU(t, pid))
	tm.text("k")
	deadline := time.Now().Add(90 * time.Second)
	for !regexp.MustCompile(`(?m)^k\s*$`).MatchString(tm.capture()) {
		if time.Now().After(deadline) {
			t.Fatalf("the typed key never showed:\n%s", tm.capture())
		}
		time.Sleep(2 * time.Millisecond)
	}
	t.Logf("exec to a typed key on screen: %v (capture-pane polling included)", time.Since(start).Round(time.Millisecond))
	tm.keys("BSpace")
	t.Logf("idle RSS: %d kB", procStatus(t, pid, "VmRSS"))
	cpu0 := procCPU(t, pid)
	t0 := time.Now()
	tm.text("go")
	tm.keys("Enter")
	tm.waitFor("the stream's end", "xEND")
	tm.waitGone("the end of the run", "Working")
	t.Logf("5000 deltas: %v wall, %v CPU", time.Since(t0).Round(time.Millisecond), procCPU(t, pid)-cpu0)
	tm.keys("C-c", "C-c")
	tm.waitFor("the exit", "PANE-DONE")
}

func piscesPID(t *testing.T, tm *term) int {
	t.Helper()
	shell, err := strconv.Atoi(strings.TrimSpace(tm.run("display-message", "-p", "-t", "t", "#{pane_pid}")))
	if err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/task/%d/children", shell, shell))
	if err != nil {
		t.Skipf("no /proc children list: %v", err)
	}
	for _, f := range strings.Fields(string(b)) {
		pid, _ := strconv.Atoi(f)
		return pid // env execs pisces: the shell's one child
	}
	t.Fatalf("no child of the pane's shell")
	return 0
}

func procStatus(t *testing.T, pid int, key string) int {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		t.Fatal(err)
	}
	for _, l := range strings.Split(string(b), "\n") {
		if v, ok := strings.CutPrefix(l, key+":"); ok {
			n, _ := strconv.Atoi(strings.Fields(v)[0])
			return n
		}
	}
	return 0
}

func procCPU(t *testing.T, pid int) time.Duration {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		t.Fatal(err)
	}
	s := string(b)
	f := strings.Fields(s[strings.LastIndexByte(s, ')')+2:])
	ut, _ := strconv.Atoi(f[11])
	st, _ := strconv.Atoi(f[12])
	return time.Duration(ut+st) * 10 * time.Millisecond // USER_HZ 100
}

// A session another pisces is writing opens read-only, with a notice, and
// takes no prompt.
func TestTerminalReadOnlyView(t *testing.T) {
	script := e2eScript(t, t.TempDir())
	writer := startTerm(t, 100, 30, nil, "--script", script, "greet-me")
	writer.begin()
	writer.waitFor("the reply", "## Greeting")
	files, _ := filepath.Glob(filepath.Join(writer.dir, "agent", "sessions", "*", "*.jsonl"))
	if len(files) != 1 {
		t.Fatalf("session files %v", files)
	}
	before, _ := os.ReadFile(files[0])
	reader := startTerm(t, 100, 30, nil, "--script", script, "--session", files[0])
	reader.begin()
	reader.waitFor("the read-only notice", "this view is read-only", "## Greeting")
	reader.text("run-tool")
	reader.keys("Enter")
	reader.waitFor("the refusal", "This session is read-only here")
	reader.keys("C-c", "C-c")
	reader.waitFor("the reader's exit", "PANE-DONE")
	if after, _ := os.ReadFile(files[0]); string(after) != string(before) {
		t.Errorf("the read-only view wrote to the file:\n%s", after[len(before):])
	}
	writer.keys("C-c", "C-c")
	writer.waitFor("the writer's exit", "PANE-DONE")
}

// /login in a real terminal: GitHub Copilot's device code against the fake
// vendor (the enterprise question answered blank, the code shown, the
// login confirmed by the vendor's polling), then the footer shows the
// provider's model; /logout removes the login.
func TestTerminalLogin(t *testing.T) {
	srv := authtest.New(t)
	// The account may use two of the catalogue's Copilot models.
	srv.Set(func(s *authtest.Server) {
		s.Interval, s.Pending = 1, 1
		s.Models = []string{"claude-sonnet-4.6", "gpt-5.3-codex"}
	})
	env := []string{auth.ServerEnv + "=" + srv.URL, "BROWSER=", "DISPLAY=", "WAYLAND_DISPLAY=",
		"ANTHROPIC_API_KEY=", "ANTHROPIC_OAUTH_TOKEN=", "OPENAI_API_KEY=", "GEMINI_API_KEY=", "COPILOT_GITHUB_TOKEN="}
	tm := startTerm(t, 120, 40, env)
	tm.begin()
	tm.waitFor("the editor", "escape interrupt", "no model")
	// The model list, built before the login, has none of Copilot's.
	tm.keys("C-l")
	tm.waitFor("the model list", "Select model")
	tm.keys("Escape")
	tm.waitGone("the model list", "Select model")
	tm.text("/login")
	tm.waitFor("the menu", "Log in to a subscription")
	tm.keys("Enter")
	tm.waitFor("the provider list", "Select provider to log in", "GitHub Copilot")
	tm.keys("Down", "Down", "Enter")
	tm.waitFor("the domain question", "Log in to GitHub Copilot", "Enterprise", "enter submits")
	tm.keys("Enter")
	tm.waitFor("the device code", "enter the code")
	tm.waitFor("the login", "Logged in to GitHub Copilot", "(github-copilot) claude-sonnet-4.6")
	if a := readJSON(t, filepath.Join(tm.dir, "agent", "auth.json"))["github-copilot"]; a == nil {
		t.Fatal("no login stored")
	}
	tm.text("/logout")
	tm.keys("Enter")
	tm.waitFor("the logins", "Select provider to log out")
	tm.keys("Enter")
	tm.waitFor("the logout", "Logged out of github-copilot")
	tm.keys("C-c", "C-c")
	tm.waitFor("the exit", "PANE-DONE")
}

func readJSON(t *testing.T, path string) map[string]any {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var m map[string]any
	if err := json.Unmarshal(b, &m); err != nil {
		t.Fatalf("%s: %v", path, err)
	}
	return m
}

// ctrl+g: the editor's text goes through $VISUAL or $EDITOR (here a script
// that adds a line) and comes back into the editor; the UI returns.
func TestTerminalExternalEditor(t *testing.T) {
	scriptDir := t.TempDir()
	ed := filepath.Join(scriptDir, "editor.sh")
	if err := os.WriteFile(ed, []byte("#!/bin/sh\nprintf ' and more from the editor\\n' >> \"$1\"\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	tm := startTerm(t, 100, 30, []string{"VISUAL=", "EDITOR=" + ed}, "--script", e2eScript(t, scriptDir))
	tm.begin()
	tm.waitFor("the editor", "escape interrupt")
	tm.text("draft text")
	tm.keys("C-g")
	tm.waitFor("the edited text", "draft text and more from the editor", "escape interrupt")
	tm.keys("C-c", "C-c")
	tm.waitFor("the exit", "PANE-DONE")
}

// The project trust question is a screen of the UI: yes is remembered and
// the project's resources load (its prompt template is in the / list).
func TestTerminalTrustDialog(t *testing.T) {
	scriptDir := t.TempDir()
	tm := startTerm(t, 100, 30, nil, "--script", e2eScript(t, scriptDir))
	prompts := filepath.Join(tm.dir, "project", ".pisces", "prompts")
	if err := os.MkdirAll(prompts, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(prompts, "projtpl.md"), []byte("---\ndescription: the project's own template\n---\nHello from the project"), 0o644); err != nil {
		t.Fatal(err)
	}
	tm.begin()
	tm.waitFor("the question", "Trust this project?", "→ Yes", "No", "enter answers")
	if m := tm.modes(); !strings.Contains(m, "alternate_on=1") {
		t.Errorf("the question is not on the UI's screen: %q", m)
	}
	tm.keys("Enter")
	tm.waitFor("the UI", "escape interrupt", "(scripted) scripted")
	tm.text("/projtpl")
	tm.waitFor("the project's template", "the project's own template")
	tm.keys("C-c", "C-c")
	tm.waitFor("the exit", "PANE-DONE")
	b, err := os.ReadFile(filepath.Join(tm.dir, "agent", "trust.json"))
	if err != nil || !strings.Contains(string(b), filepath.Join(tm.dir, "project")) {
		t.Fatalf("trust.json %s (%v): the answer is not remembered", b, err)
	}
}

// A theme file given with --theme colours the screen; an unknown theme
// name stops start-up with the list of themes (those of
// <agentDir>/themes included).
func TestTerminalThemeFile(t *testing.T) {
	scriptDir := t.TempDir()
	theme := filepath.Join(scriptDir, "red.json")
	if err := os.WriteFile(theme, []byte(themeJSON("red", map[string]any{"accent": 196})), 0o644); err != nil {
		t.Fatal(err)
	}
	tm := startTerm(t, 100, 30, []string{"COLORTERM="}, "--script", e2eScript(t, scriptDir), "--theme", theme)
	tm.begin()
	tm.waitFor("the editor", "escape interrupt")
	// The accent (the name in the start header) is 256-colour 196.
	if s := tm.run("capture-pane", "-e", "-p", "-t", "t"); !strings.Contains(s, "38;5;196m") {
		t.Errorf("the theme's accent is not used:\n%q", s)
	}
	tm.keys("C-c", "C-c")
	tm.waitFor("the exit", "PANE-DONE")

	tm2 := startTerm(t, 100, 30, nil, "--script", e2eScript(t, scriptDir), "--use-theme", "solarized")
	if err := os.MkdirAll(filepath.Join(tm2.dir, "agent", "themes"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(tm2.dir, "agent", "themes", "nord.json"), []byte(themeJSON("nord", nil)), 0o644); err != nil {
		t.Fatal(err)
	}
	tm2.begin()
	tm2.waitFor("the error", `unknown theme "solarized" (themes: dark, light, nord)`, "PANE-DONE")
}
