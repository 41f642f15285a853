package cli_test

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/pisces-agent/pisces/internal/cli"
)

// world is a throwaway agent dir and working directory for running Main.
type world struct {
	t        *testing.T
	root     string
	agentDir string
	cwd      string
	script   string // the scripted provider's script: one "ok" turn per request
	requests string // its request log
}

func newWorld(t *testing.T) *world {
	t.Helper()
	root := t.TempDir()
	if r, err := filepath.EvalSymlinks(root); err == nil {
		root = r // the cwd Pisces records is the physical one
	}
	w := &world{t: t, root: root, agentDir: filepath.Join(root, "agent"), cwd: filepath.Join(root, "proj"),
		script: filepath.Join(root, "script.json"), requests: filepath.Join(root, "requests.jsonl")}
	os.MkdirAll(w.agentDir, 0o755)
	os.MkdirAll(w.cwd, 0o755)
	w.writeScript(`{"content":[{"type":"text","text":"ok"}]}`, `{"content":[{"type":"text","text":"ok again"}]}`)
	t.Setenv("HOME", root)
	t.Setenv("PISCES_CODING_AGENT_DIR", "")
	t.Setenv("PISCES_CODING_AGENT_SESSION_DIR", "")
	t.Chdir(w.cwd)
	return w
}

func (w *world) writeScript(turns ...string) {
	s := fmt.Sprintf(`{"requestLog": %q, "turns": [%s]}`, w.requests, strings.Join(turns, ","))
	if err := os.WriteFile(w.script, []byte(s), 0o644); err != nil {
		w.t.Fatal(err)
	}
}

// file writes a file under the root ("x" in its path's last element's
// directory named extensions makes it executable).
func (w *world) file(rel, content string) string {
	w.t.Helper()
	p := filepath.Join(w.root, rel)
	os.MkdirAll(filepath.Dir(p), 0o755)
	mode := os.FileMode(0o644)
	if strings.HasPrefix(content, "#!") {
		mode = 0o755
	}
	if err := os.WriteFile(p, []byte(content), mode); err != nil {
		w.t.Fatal(err)
	}
	return p
}

type result struct {
	code           int
	stdout, stderr string
}

// run runs Main with the agent dir and scripted provider, stdin a terminal
// giving input.
func (w *world) run(input string, args ...string) result {
	w.t.Helper()
	return w.runIO(input, true, append([]string{"--agent-dir", w.agentDir, "--provider", "scripted", "--script", w.script, "--no-context-files"}, args...)...)
}

// runIO runs Main with exactly args.
func (w *world) runIO(input string, tty bool, args ...string) result {
	w.t.Helper()
	var out, errb bytes.Buffer
	code := cli.Main(args, cli.IO{Stdin: strings.NewReader(input), Stdout: &out, Stderr: &errb, StdinIsTTY: tty})
	return result{code, out.String(), errb.String()}
}

type request struct {
	Tools    []string `json:"tools"`
	Messages int      `json:"messages"`
	LastUser string   `json:"lastUser"`
}

// takeRequests returns the requests logged since the last call.
func (w *world) takeRequests() []request {
	w.t.Helper()
	data, err := os.ReadFile(w.requests)
	if os.IsNotExist(err) {
		return nil
	}
	if err != nil {
		w.t.Fatal(err)
	}
	os.Remove(w.requests)
	var out []request
	for _, l := range strings.Split(strings.TrimSpace(string(data)), "\n") {
		var r request
		if err := json.Unmarshal([]byte(l), &r); err != nil {
			w.t.Fatalf("request log line %q: %v", l, err)
		}
		out = append(out, r)
	}
	return out
}

func (w *world) sessionFiles(cwd string) []string {
	dir := filepath.Join(w.agentDir, "sessions", "--"+strings.ReplaceAll(strings.TrimPrefix(cwd, "/"), "/", "-")+"--")
	files, _ := filepath.Glob(filepath.Join(dir, "*.jsonl"))
	return files
}

func must(t *testing.T, r result, code int) {
	t.Helper()
	if r.code != code {
		t.Fatalf("exit %d, want %d\nstdout:\n%s\nstderr:\n%s", r.code, code, r.stdout, r.stderr)
	}
}

// The subcommand words run their command and never reach a model; after
// -- or another flag the same word is a prompt.
func TestSubcommandsAreNotPrompts(t *testing.T) {
	w := newWorld(t)
	for _, c := range []struct {
		word string
		code int
		want string // in stdout (code 0) or stderr
	}{
		{"list", 0, "No packages installed"},
		{"config", 0, "Prompt templates"},
		{"sessions", 0, "No sessions in " + w.cwd},
		{"install", 1, "packages are not supported yet"},
		{"remove", 1, "packages are not supported yet"},
		{"uninstall", 1, "packages are not supported yet"},
		{"update", 1, "not supported yet"},
		{"auth", 2, `unknown command "some-source"`},
		{"mcp", 0, "No MCP servers"},
	} {
		args := []string{c.word}
		if c.code != 0 {
			args = append(args, "some-source") // a package source, say
		}
		r := w.runIO("", true, args...)
		must(t, r, c.code)
		got := r.stdout
		if c.code != 0 {
			got = r.stderr
		}
		if !strings.Contains(got, c.want) {
			t.Errorf("pisces %s: want %q in\n%s", c.word, c.want, got)
		}
		if reqs := w.takeRequests(); len(reqs) != 0 {
			t.Errorf("pisces %s sent %d model requests", c.word, len(reqs))
		}
		// Each has its own help.
		h := w.runIO("", true, c.word, "--help")
		must(t, h, 0)
		if !strings.Contains(h.stdout, "pisces "+c.word) {
			t.Errorf("pisces %s --help:\n%s", c.word, h.stdout)
		}
	}
	for _, args := range [][]string{{"--", "config"}, {"-p", "config"}} {
		r := w.run("", args...)
		must(t, r, 0)
		reqs := w.takeRequests()
		if len(reqs) != 1 || reqs[0].LastUser != "config" {
			t.Errorf("%v: requests %+v", args, reqs)
		}
	}
	// Options a subcommand does not take are refused, naming them.
	r := w.runIO("", true, "sessions", "--model", "x")
	must(t, r, 2)
	if !strings.Contains(r.stderr, "unknown option --model") {
		t.Errorf("stderr %q", r.stderr)
	}
	r = w.runIO("", true, "list", "extra")
	must(t, r, 2)
	if !strings.Contains(r.stderr, `unexpected argument "extra"`) {
		t.Errorf("stderr %q", r.stderr)
	}
	// install names the agent dir it would use.
	r = w.runIO("", true, "install", "npm:x", "--agent-dir", w.agentDir)
	if !strings.Contains(r.stderr, filepath.Join(w.agentDir, "extensions")) {
		t.Errorf("install advice: %s", r.stderr)
	}
}

const greeter = `#!/bin/sh
read -r init
echo '{"type":"register","name":"greeter","tools":[{"name":"greet","description":"Greets","parameters":{"type":"object","properties":{}}}]}'
while read -r line; do :; done
`

// --tools, --exclude-tools, --no-tools and --no-builtin-tools over built-in
// and extension tools, with pi 1.5's patterns; the tools the model is sent
// are read from the scripted provider's request log.
func TestToolFlags(t *testing.T) {
	w := newWorld(t)
	w.file("agent/extensions/greeter", greeter)
	for _, c := range []struct {
		args []string
		want []string
	}{
		{nil, []string{"read", "bash", "edit", "write", "task", "todo_write", "greet"}},
		{[]string{"--no-tools"}, nil},
		{[]string{"-nt"}, nil},
		{[]string{"--no-builtin-tools"}, []string{"greet"}},
		{[]string{"-nbt", "--tools", "+grep"}, []string{"grep", "greet"}},
		{[]string{"--no-tools", "--tools", "read"}, []string{"read"}},
		{[]string{"--tools", "+ls,-bash,-task"}, []string{"read", "edit", "write", "ls", "todo_write", "greet"}},
		{[]string{"--tools", "read,g*"}, []string{"read", "grep", "greet"}},
		{[]string{"-t", "*"}, []string{"read", "bash", "edit", "write", "grep", "find", "ls", "task", "todo_write", "greet"}},
		{[]string{"--tools", "read"}, []string{"read"}},
		{[]string{"--exclude-tools", "gr*,e*,t*"}, []string{"read", "bash", "write"}},
		{[]string{"-xt", "greet", "--tools", "*"}, []string{"read", "bash", "edit", "write", "grep", "find", "ls", "task", "todo_write"}},
		{[]string{"--no-extensions"}, []string{"read", "bash", "edit", "write", "task", "todo_write"}},
		{[]string{"--no-extensions", "-e", filepath.Join(w.agentDir, "extensions", "greeter")}, []string{"read", "bash", "edit", "write", "task", "todo_write", "greet"}},
	} {
		r := w.run("", append(c.args, "-p", "hi")...)
		must(t, r, 0)
		reqs := w.takeRequests()
		if len(reqs) != 1 || !slices.Equal(reqs[0].Tools, c.want) {
			t.Errorf("%v: tools %+v, want %v", c.args, reqs, c.want)
		}
	}
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"--tools", "read,+grep"}, "--tools: tool names cannot be mixed with +name or -name entries"},
		{[]string{"--tools", "+gr*"}, "--tools: +name and -name entries take exact tool names, not patterns: +gr*"},
		{[]string{"--tools", "read,nope"}, `Unknown tool "nope" in --tools (available: read, bash, edit, write, grep, find, ls, task, todo_write, greet)`},
		{[]string{"--tools", "-nope"}, `Unknown tool "nope" in --tools`},
		{[]string{"--tools", "zz*"}, `No tool matches "zz*" in --tools`},
		{[]string{"--exclude-tools", "bassh"}, `Unknown tool "bassh" in --exclude-tools`},
	} {
		r := w.run("", append(c.args, "-p", "hi")...)
		must(t, r, 2)
		if !strings.Contains(r.stderr, c.want) {
			t.Errorf("%v: stderr %q, want %q", c.args, r.stderr, c.want)
		}
		if reqs := w.takeRequests(); len(reqs) != 0 {
			t.Errorf("%v: a request was sent", c.args)
		}
	}
	// The defaultTools setting is checked the same way.
	w.file("agent/settings.json", `{"defaultTools": ["read", "+grep"]}`)
	r := w.run("", "-p", "hi")
	must(t, r, 2)
	if !strings.Contains(r.stderr, "settings defaultTools: tool names cannot be mixed") {
		t.Errorf("stderr %q", r.stderr)
	}
	w.file("agent/settings.json", `{"defaultTools": ["-bash", "+find"]}`)
	r = w.run("", "-p", "hi")
	must(t, r, 0)
	if reqs := w.takeRequests(); len(reqs) != 1 || !slices.Equal(reqs[0].Tools, []string{"read", "edit", "write", "find", "task", "todo_write", "greet"}) {
		t.Errorf("defaultTools modifiers: %+v", reqs)
	}
}

// --skill and --prompt-template add resources for a run; --no-skills and
// --no-prompt-templates leave out the discovered ones but keep those.
func TestSkillAndTemplateFlags(t *testing.T) {
	w := newWorld(t)
	w.file("agent/skills/found/SKILL.md", "---\ndescription: A discovered skill\n---\nFOUND SKILL BODY")
	w.file("agent/prompts/found.md", "FOUND TEMPLATE $1")
	w.file("extra/given/SKILL.md", "---\ndescription: A given skill\n---\nGIVEN SKILL BODY")
	w.file("extra/given.md", "GIVEN TEMPLATE $1")
	send := func(msg string, args ...string) string {
		t.Helper()
		r := w.run("", append(args, "-p", msg)...)
		must(t, r, 0)
		reqs := w.takeRequests()
		if len(reqs) != 1 {
			t.Fatalf("%v %q: %d requests", args, msg, len(reqs))
		}
		return reqs[0].LastUser
	}
	given := []string{"--skill", "../extra/given", "--prompt-template", filepath.Join(w.root, "extra", "given.md")}
	for _, c := range []struct {
		args             []string
		msg, want, wantN string
	}{
		{given, "/skill:found", "FOUND SKILL BODY", ""},
		{given, "/skill:given", "GIVEN SKILL BODY", ""},
		{given, "/found x", "FOUND TEMPLATE x", ""},
		{given, "/given y", "GIVEN TEMPLATE y", ""},
		{append([]string{"--no-skills"}, given...), "/skill:found", "", "/skill:found"},
		{append([]string{"-ns"}, given...), "/skill:given", "GIVEN SKILL BODY", ""},
		{append([]string{"--no-prompt-templates"}, given...), "/found x", "", "/found x"},
		{append([]string{"-np"}, given...), "/given y", "GIVEN TEMPLATE y", ""},
		{[]string{"-np"}, "/skill:found", "FOUND SKILL BODY", ""},
	} {
		got := send(c.msg, c.args...)
		if c.wantN != "" {
			if got != c.wantN {
				t.Errorf("%v %q: sent %q, want it unexpanded", c.args, c.msg, got)
			}
		} else if !strings.Contains(got, c.want) {
			t.Errorf("%v %q: sent %q, want %q in it", c.args, c.msg, got, c.want)
		}
	}
	// --no-mcp is accepted (there is no MCP client to turn off).
	must(t, w.run("", "--no-mcp", "-p", "hi"), 0)
}

// pisces list and pisces config show every extension, skill and prompt
// template found, where it comes from, and (config) whether a run loads it.
func TestListAndConfig(t *testing.T) {
	w := newWorld(t)
	w.file("agent/extensions/greeter", greeter)
	w.file("agent/skills/found/SKILL.md", "---\ndescription: A discovered skill\n---\nbody")
	w.file("agent/prompts/review.md", "Review $1")
	w.file("proj/.pisces/extensions/projext", greeter)
	w.file("proj/.pisces/skills/projskill/SKILL.md", "---\ndescription: A project skill\n---\nbody")
	w.file("proj/.pisces/prompts/review.md", "Project review $1")
	w.file("extra/given/SKILL.md", "---\ndescription: A given skill\n---\nbody")
	w.file("agent/settings.json", fmt.Sprintf(`{"extensions": [%q]}`, w.file("bin/fromsettings", greeter)))
	ag, pr := filepath.Join(w.agentDir), filepath.Join(w.cwd, ".pisces")

	r := w.runIO("", true, "list", "--agent-dir", w.agentDir, "--skill", "../extra/given")
	must(t, r, 0)
	for _, want := range []string{
		"No packages installed (Pisces cannot install packages yet).",
		"Extensions (3):",
		"greeter         agent dir  " + filepath.Join(ag, "extensions", "greeter"),
		"projext         project    " + filepath.Join(pr, "extensions", "projext"),
		"fromsettings    settings   " + filepath.Join(w.root, "bin", "fromsettings"),
		"Skills (3):",
		"projskill  project    " + filepath.Join(pr, "skills", "projskill", "SKILL.md"),
		"found      agent dir  " + filepath.Join(ag, "skills", "found", "SKILL.md"),
		"given      --skill    " + filepath.Join(w.root, "extra", "given", "SKILL.md"),
		"review                 project   " + filepath.Join(pr, "prompts", "review.md"),
		"review                 agent dir  " + filepath.Join(ag, "prompts", "review.md"),
		"implement              built in   builtin:implement",
	} {
		if !containsLine(r.stdout, want) {
			t.Errorf("pisces list: no line %q in\n%s", want, r.stdout)
		}
	}

	// Untrusted project: its resources are found but not loaded.
	r = w.runIO("", true, "config", "--agent-dir", w.agentDir, "--no-skills", "--skill", "../extra/given")
	must(t, r, 0)
	for _, want := range []string{
		"[x] greeter",
		"[ ] projext         project    " + filepath.Join(pr, "extensions", "projext") + "  (project not trusted (--approve loads it))",
		"[x] fromsettings",
		"[ ] projskill  project    " + filepath.Join(pr, "skills", "projskill", "SKILL.md") + "  (project not trusted (--approve loads it))",
		"[ ] found      agent dir  " + filepath.Join(ag, "skills", "found", "SKILL.md") + "  (--no-skills)",
		"[x] given",
		"[ ] review                 project    " + filepath.Join(pr, "prompts", "review.md") + "  (project not trusted (--approve loads it))",
		"[x] review                 agent dir  " + filepath.Join(ag, "prompts", "review.md"),
		"[x] implement",
	} {
		if !containsLine(r.stdout, want) {
			t.Errorf("pisces config: no line %q in\n%s", want, r.stdout)
		}
	}
	// Trusted, extensions off: the project's template now shadows the
	// agent dir's; -ne turns off discovered and settings extensions.
	r = w.runIO("", true, "config", "--agent-dir", w.agentDir, "--approve", "-ne")
	must(t, r, 0)
	for _, want := range []string{
		"[ ] greeter         agent dir  " + filepath.Join(ag, "extensions", "greeter") + "  (--no-extensions)",
		"[ ] projext         project    " + filepath.Join(pr, "extensions", "projext") + "  (--no-extensions)",
		"[ ] fromsettings    settings   " + filepath.Join(w.root, "bin", "fromsettings") + "  (--no-extensions)",
		"[x] projskill",
		"[x] found",
		"[x] review                 project    " + filepath.Join(pr, "prompts", "review.md"),
		"[ ] review                 agent dir  " + filepath.Join(ag, "prompts", "review.md") + "  (shadowed by " + filepath.Join(pr, "prompts", "review.md") + ")",
	} {
		if !containsLine(r.stdout, want) {
			t.Errorf("pisces config --approve -ne: no line %q in\n%s", want, r.stdout)
		}
	}
	if w.takeRequests() != nil {
		t.Error("a model was asked")
	}
}

// containsLine reports a line of out that starts with want, with runs of
// spaces (column padding) counted as one.
func containsLine(out, want string) bool {
	want = strings.Join(strings.Fields(want), " ")
	for _, l := range strings.Split(out, "\n") {
		if strings.HasPrefix(strings.Join(strings.Fields(l), " "), want) {
			return true
		}
	}
	return false
}

// header reads a session file's header line.
func header(t *testing.T, path string) map[string]any {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var h map[string]any
	line, _, _ := strings.Cut(string(data), "\n")
	if err := json.Unmarshal([]byte(line), &h); err != nil {
		t.Fatal(err)
	}
	return h
}

// newSession runs one prompt in dir (chdir'ing there and back) and returns
// the session file it wrote.
func (w *world) newSession(dir, msg string, args ...string) string {
	w.t.Helper()
	files := func() []string { return w.sessionFiles(dir) }
	if i := slices.Index(args, "--session-dir"); i >= 0 {
		files = func() []string {
			fs, _ := filepath.Glob(filepath.Join(args[i+1], "*.jsonl"))
			return fs
		}
	}
	before := files()
	os.MkdirAll(dir, 0o755)
	w.t.Chdir(dir)
	defer w.t.Chdir(w.cwd)
	must(w.t, w.run("", append(args, "-p", msg)...), 0)
	w.takeRequests()
	for _, f := range files() {
		if !slices.Contains(before, f) {
			return f
		}
	}
	w.t.Fatalf("no session file written for %q in %s", msg, dir)
	return ""
}

// pisces sessions lists this folder's sessions with what list_sessions
// says about them; --all every folder's.
func TestSessionsCommand(t *testing.T) {
	w := newWorld(t)
	first := w.newSession(w.cwd, "first question")
	second := w.newSession(w.cwd, "second question\nover two lines", "--name", "Second")
	other := w.newSession(filepath.Join(w.root, "elsewhere"), "question elsewhere")
	id := func(p string) string { return header(t, p)["id"].(string) }

	r := w.runIO("", true, "sessions", "--agent-dir", w.agentDir)
	must(t, r, 0)
	blocks := strings.Split(strings.TrimSpace(r.stdout), "\n\n")
	if len(blocks) != 2 {
		t.Fatalf("want 2 sessions, got:\n%s", r.stdout)
	}
	// Newest first: id, message count (the system message counts, as in
	// list_sessions), name, first message, file.
	for i, c := range []struct {
		path, first, name string
	}{{second, "second question over two lines", `"Second"`}, {first, "first question", ""}} {
		lines := strings.Split(blocks[i], "\n")
		if len(lines) != 3 || !strings.Contains(lines[0], id(c.path)) || !strings.Contains(lines[0], "3 messages") ||
			!strings.HasSuffix(lines[0], c.name) || strings.TrimSpace(lines[1]) != c.first || strings.TrimSpace(lines[2]) != c.path {
			t.Errorf("session %d:\n%s", i, blocks[i])
		}
	}
	if strings.Contains(r.stdout, other) {
		t.Errorf("another folder's session listed:\n%s", r.stdout)
	}
	r = w.runIO("", true, "sessions", "--all", "--agent-dir", w.agentDir)
	must(t, r, 0)
	if strings.Count(r.stdout, ".jsonl") != 3 || !strings.Contains(r.stdout, "in "+filepath.Join(w.root, "elsewhere")+"\n  "+other) {
		t.Errorf("--all:\n%s", r.stdout)
	}
	// A custom session directory holds many folders' sessions: only this
	// folder's are listed.
	shared := filepath.Join(w.root, "shared")
	a := w.newSession(w.cwd, "here", "--session-dir", shared)
	b := w.newSession(filepath.Join(w.root, "elsewhere"), "there", "--session-dir", shared)
	r = w.runIO("", true, "sessions", "--agent-dir", w.agentDir, "--session-dir", shared)
	must(t, r, 0)
	if !strings.Contains(r.stdout, a) || strings.Contains(r.stdout, b) {
		t.Errorf("custom dir:\n%s", r.stdout)
	}
}

// --resume lists this folder's sessions on a terminal and continues the
// chosen one; without a terminal it says what to do instead.
func TestResume(t *testing.T) {
	w := newWorld(t)
	first := w.newSession(w.cwd, "first question")
	second := w.newSession(w.cwd, "second question")
	lines := func(p string) int {
		data, _ := os.ReadFile(p)
		return strings.Count(string(data), "\n")
	}
	n1, n2 := lines(first), lines(second)

	r := w.runIO("", false, "--agent-dir", w.agentDir, "--provider", "scripted", "--script", w.script, "-r", "-p", "more")
	must(t, r, 2)
	if !strings.Contains(r.stderr, "needs a terminal") || !strings.Contains(r.stderr, "--session") || !strings.Contains(r.stderr, "pisces sessions") {
		t.Errorf("no terminal: %q", r.stderr)
	}
	r = w.run("", "--mode", "rpc", "--resume")
	must(t, r, 2)
	if !strings.Contains(r.stderr, "list_sessions") {
		t.Errorf("rpc: %q", r.stderr)
	}

	// The newest is 1; a bad answer is asked again.
	r = w.run("9\nx\n2\n", "--resume", "-p", "and more")
	must(t, r, 0)
	if !strings.Contains(r.stderr, "Sessions in "+w.cwd) || !strings.Contains(r.stderr, "  1) ") || !strings.Contains(r.stderr, "second question") ||
		strings.Count(r.stderr, "Resume which session? [1-2, Enter to cancel]") != 3 || !strings.Contains(r.stderr, `"9" is not a number from 1 to 2`) {
		t.Errorf("picker:\n%s", r.stderr)
	}
	if r.stdout != "ok\n" {
		t.Errorf("stdout %q", r.stdout)
	}
	reqs := w.takeRequests()
	if len(reqs) != 1 || reqs[0].LastUser != "and more" || reqs[0].Messages != 3 {
		t.Errorf("requests %+v (want the first session's 2 messages + 1)", reqs)
	}
	if lines(first) <= n1 || lines(second) != n2 {
		t.Errorf("the chosen session did not grow: first %d -> %d, second %d -> %d", n1, lines(first), n2, lines(second))
	}

	// Without a message on the command line, it is asked for.
	r = w.run("1\nfollow up\n", "-r")
	must(t, r, 0)
	if reqs := w.takeRequests(); len(reqs) != 1 || reqs[0].LastUser != "follow up" || !strings.Contains(r.stderr, "Message: ") {
		t.Errorf("asked message: %+v\n%s", reqs, r.stderr)
	}
	// Enter (or end of input) cancels.
	r = w.run("\n", "-r", "-p", "x")
	must(t, r, 0)
	if !strings.Contains(r.stderr, "No session selected.") || w.takeRequests() != nil {
		t.Errorf("cancel: %s", r.stderr)
	}
	// --resume with --session contradicts itself.
	r = w.run("", "-r", "--session", first, "-p", "x")
	must(t, r, 2)
	if !strings.Contains(r.stderr, "--resume cannot be combined with --session") {
		t.Errorf("conflict: %q", r.stderr)
	}
}

// --fork copies a session (of any folder, by path or id) into a new
// session of this folder; the source is left as it was.
func TestFork(t *testing.T) {
	w := newWorld(t)
	src := w.newSession(filepath.Join(w.root, "elsewhere"), "original question")
	before, _ := os.ReadFile(src)
	srcID := header(t, src)["id"].(string)

	r := w.run("", "--fork", srcID[:8], "-p", "forked follow-up")
	must(t, r, 0)
	reqs := w.takeRequests()
	if len(reqs) != 1 || reqs[0].Messages != 3 {
		t.Errorf("requests %+v (want the source's 2 messages + 1)", reqs)
	}
	files := w.sessionFiles(w.cwd)
	if len(files) != 1 {
		t.Fatalf("files here: %v", files)
	}
	h := header(t, files[0])
	if h["parentSession"] != src || h["cwd"] != w.cwd || h["id"] == srcID {
		t.Errorf("fork header %v", h)
	}
	data, _ := os.ReadFile(files[0])
	_, body, _ := strings.Cut(string(before), "\n")
	if !strings.Contains(string(data), body) {
		t.Error("the fork does not hold the source's entries as they were")
	}
	if after, _ := os.ReadFile(src); !bytes.Equal(after, before) {
		t.Error("source changed")
	}
	// By path too, with an explicit id; the id must be new here.
	r = w.run("", "--fork", src, "--session-id", "my-fork", "-p", "again")
	must(t, r, 0)
	w.takeRequests()
	r = w.run("", "--fork", src, "--session-id", "my-fork", "-p", "again")
	must(t, r, 1)
	if !strings.Contains(r.stderr, "Session already exists with id 'my-fork'") {
		t.Errorf("existing id: %q", r.stderr)
	}
	for _, c := range [][]string{{"--session", src}, {"-c"}, {"--no-session"}, {"-r"}} {
		r := w.run("", append([]string{"--fork", src, "-p", "x"}, c...)...)
		must(t, r, 2)
		if !strings.Contains(r.stderr, "--fork cannot be combined with "+map[string]string{"-c": "--continue", "-r": "--resume"}[c[0]]) &&
			!strings.Contains(r.stderr, "--fork cannot be combined with "+c[0]) {
			t.Errorf("%v: %q", c, r.stderr)
		}
	}
	r = w.run("", "--fork", "nosuchid", "-p", "x")
	must(t, r, 1)
	if !strings.Contains(r.stderr, "No session found matching 'nosuchid'") {
		t.Errorf("missing: %q", r.stderr)
	}
}

// --no-session writes nothing; --continue takes this folder's newest
// session, even from a directory shared with other folders; --session-id
// reopens this folder's session with that id.
func TestSessionFlags(t *testing.T) {
	w := newWorld(t)
	must(t, w.run("", "--no-session", "-p", "hi"), 0)
	if files := w.sessionFiles(w.cwd); len(files) != 0 {
		t.Errorf("--no-session wrote %v", files)
	}
	if _, err := os.Stat(filepath.Join(w.agentDir, "sessions")); !os.IsNotExist(err) {
		t.Errorf("--no-session created the sessions directory: %v", err)
	}
	w.takeRequests()

	shared := filepath.Join(w.root, "shared")
	mine := w.newSession(w.cwd, "mine", "--session-dir", shared)
	w.newSession(filepath.Join(w.root, "elsewhere"), "theirs (newer)", "--session-dir", shared)
	r := w.run("", "--session-dir", shared, "-c", "-p", "continue")
	must(t, r, 0)
	if reqs := w.takeRequests(); len(reqs) != 1 || reqs[0].Messages != 3 {
		t.Errorf("-c took the wrong session: %+v", reqs)
	}
	data, _ := os.ReadFile(mine)
	if !strings.Contains(string(data), `"continue"`) {
		t.Error("-c did not append to this folder's session")
	}

	must(t, w.run("", "--session-id", "fixed-id", "-p", "one"), 0)
	must(t, w.run("", "--session-id", "fixed-id", "-p", "two"), 0)
	reqs := w.takeRequests()
	if len(reqs) != 2 || reqs[1].Messages != 3 {
		t.Errorf("--session-id did not reopen the session: %+v", reqs)
	}
	if files := w.sessionFiles(w.cwd); len(files) != 1 {
		t.Errorf("--session-id files %v", files)
	}
	r = w.run("", "--session-id", "bad id", "-p", "x")
	must(t, r, 2)
	if !strings.Contains(r.stderr, "Invalid session id: bad id") {
		t.Errorf("%q", r.stderr)
	}
}
