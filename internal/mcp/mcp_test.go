package mcp

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/pisces-agent/pisces/internal/ai"
	"github.com/pisces-agent/pisces/internal/codemode"
	"github.com/pisces-agent/pisces/internal/mcp/mcptest"
	"github.com/pisces-agent/pisces/internal/procgroup"
	"github.com/pisces-agent/pisces/internal/tools"
)

const waitLong = 2 * time.Minute

func writeConfig(t testing.TB, dir, servers string) {
	t.Helper()
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, FileName), []byte(`{"mcpServers":{`+servers+`}}`), 0o644); err != nil {
		t.Fatal(err)
	}
}

func newManager(t testing.TB, servers string) (*Manager, *Session) {
	t.Helper()
	agent := t.TempDir()
	writeConfig(t, agent, servers)
	m := NewManager(Options{AgentDir: agent, Cwd: t.TempDir(), Version: "test"})
	t.Cleanup(m.Close)
	cwd := t.TempDir()
	return m, m.NewSession(SessionOptions{Where: func() (string, bool) { return cwd, false }})
}

func settleB(t testing.TB, s *Session) { settle(t, s) }

func settle(t testing.TB, s *Session) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), waitLong)
	defer cancel()
	WaitSettled(ctx, s.Servers())
	if ctx.Err() != nil {
		t.Fatal("servers did not settle")
	}
}

func entry(es []Entry, name string) (Entry, bool) {
	for _, e := range es {
		if e.Tool.Name() == name {
			return e, true
		}
	}
	return Entry{}, false
}

func call(t *testing.T, tool tools.Tool, args string) tools.Result {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), waitLong)
	defer cancel()
	r, err := tool.Execute(ctx, tools.Call{ID: "c1", Args: json.RawMessage(args)})
	if err != nil {
		t.Fatal(err)
	}
	return r
}

func TestParse(t *testing.T) {
	t.Setenv("PISCES_MCP_TEST_TOKEN", "s3cret")
	cfg := Parse([]byte(`{
	  // a comment
	  "autoEnableCodemode": true,
	  "mcpServers": {
	    "a": {"command": "srv", "args": ["x"], "env": {"K": "${PISCES_MCP_TEST_TOKEN}", "L": "PISCES_MCP_TEST_TOKEN", "M": "!printf from-command"}},
	    "b": {"url": "https://example.com/mcp", "headers": {"Authorization": "Bearer ${PISCES_MCP_TEST_TOKEN}"}, "exposure": "codemode-deferred", "timeout": 5},
	    "c": {"type": "sse", "url": "https://example.com/sse"},
	    "bad name": {"command": "x"},
	    "d": {"command": "x", "exposure": "sometimes"},
	    "e": {"command": ["npx", "srv"]},
	    "f": {"command": "y", "exposure": "hidden", "toolExposure": {"get-sum": "direct", "get-*": "deferred", "*": "codemode"}},
	    "g": {"type": "streamable-http", "url": "http://localhost:1/mcp", "oauth": {"clientId": "x"}, "enabled": false},
	    "h": {}
	  }
	}`), "/x/mcp.json", ScopeGlobal)
	if !cfg.AutoEnableCodemode {
		t.Error("autoEnableCodemode not read")
	}
	var names []string
	for _, s := range cfg.Servers {
		names = append(names, s.Name)
	}
	if got := strings.Join(names, ","); got != "a,b,f,g" {
		t.Fatalf("servers %s, want a,b,f,g; problems %q", got, cfg.Problems)
	}
	wantProblems := []string{`"c": type "sse"`, `"bad name": invalid name`, `"d": unknown exposure "sometimes"`, `"e": command must be one executable`, `"h": needs command`}
	if len(cfg.Problems) != len(wantProblems) {
		t.Fatalf("problems %q", cfg.Problems)
	}
	for i, w := range wantProblems {
		if !strings.Contains(cfg.Problems[i], w) || !strings.HasPrefix(cfg.Problems[i], "/x/mcp.json: server ") {
			t.Errorf("problem %d = %q, want it to name the file and contain %q", i, cfg.Problems[i], w)
		}
	}
	a := cfg.Find("a")
	if a.Transport != "stdio" || a.Exposure != ExposureCodemode || a.Timeout != DefaultTimeout {
		t.Errorf("a = %+v", a)
	}
	if got := a.Env; len(got) != 3 || got[0][1] != "s3cret" || got[1][1] != "PISCES_MCP_TEST_TOKEN" || got[2][1] != "from-command" {
		t.Errorf("env %q: ${VAR} and !command expand, a bare value is literal", got)
	}
	b := cfg.Find("b")
	if b.Transport != "http" || b.Exposure != ExposureCodemode || b.Timeout != 5*time.Second || b.Headers[0][1] != "Bearer s3cret" {
		t.Errorf("b = %+v", b)
	}
	f := cfg.Find("f")
	for tool, want := range map[string]string{"get-sum": ExposureDirect, "get-env": ExposureDeferred, "echo": ExposureCodemode} {
		if got := f.ExposureOf(tool); got != want {
			t.Errorf("exposure of %s = %s, want %s", tool, got, want)
		}
	}
	g := cfg.Find("g")
	if g.Enabled || !g.OAuth || g.Transport != "http" {
		t.Errorf("g = %+v", g)
	}
}

func TestToolName(t *testing.T) {
	if got := ToolName("every-thing", "get-sum.v2"); got != "mcp__every_thing__get_sum_v2" {
		t.Fatal(got)
	}
}

func TestDirectStdio(t *testing.T) {
	_, s := newManager(t, `"test":`+stdioEntry(t, `"exposure":"direct","toolExposure":{"exit":"hidden"}`))
	settle(t, s)
	es := s.Entries()
	e, ok := entry(es, "mcp__test__echo")
	if !ok || !e.Active || e.Server != "test" || e.Exposure != ExposureDirect {
		t.Fatalf("echo entry %+v (%v)", e, ok)
	}
	if _, ok := entry(es, "mcp__test__exit"); ok {
		t.Error("a hidden tool is offered")
	}
	if _, ok := entry(es, ToolSearchName); ok {
		t.Error("tool_search offered with only direct tools")
	}
	if _, ok := entry(es, ReadResourceName); !ok {
		t.Error("no resource tools for a server offering resources")
	}
	if string(e.Tool.Parameters()) != `{"type":"object","properties":{"message":{"type":"string"}},"required":["message"]}` || e.Tool.Description() != "Echoes back the message" {
		t.Errorf("declared as %s %s", e.Tool.Description(), e.Tool.Parameters())
	}
	// The schema is the server's, byte for byte: keys in its order,
	// "$schema" kept (over stdio).
	if m, _ := entry(es, "mcp__test__meet"); string(m.Tool.Parameters()) != mcptest.MeetSchema {
		t.Errorf("meet declared with %s, want the server's %s", m.Tool.Parameters(), mcptest.MeetSchema)
	}
	r := call(t, e.Tool, `{"message":"hi"}`)
	if r.IsError || len(r.Content) != 1 || r.Content[0].Text != "Echo: hi" || string(r.Details) != `{"server":"test","tool":"echo"}` {
		t.Fatalf("echo result %+v", r)
	}
	sum, _ := entry(es, "mcp__test__get_sum")
	r = call(t, sum.Tool, `{"a":2,"b":3}`)
	if string(r.StructuredContent) != `{"sum":5}` || r.IsError {
		t.Errorf("get-sum result %+v, structured %s", r, r.StructuredContent)
	}
	fail, _ := entry(es, "mcp__test__fail")
	if r := call(t, fail.Tool, `{}`); !r.IsError || r.Content[0].Text != "it failed" {
		t.Errorf("fail result %+v", r)
	}
	big, _ := entry(es, "mcp__test__big")
	r = call(t, big.Tool, `{}`)
	text := r.Content[0].Text
	if len(text) > resultLimit+200 || !strings.HasPrefix(text, "<xxx") || !strings.HasSuffix(text, "xxx>") || !strings.Contains(text, "bytes truncated") {
		t.Errorf("big result: %d bytes, %q...%q", len(text), text[:20], text[len(text)-20:])
	}
	read, _ := entry(es, ReadResourceName)
	if r := call(t, read.Tool, `{"server":"test","uri":"test://greeting"}`); r.IsError || r.Content[0].Text != "hello" {
		t.Errorf("read_mcp_resource %+v", r)
	}
	list, _ := entry(es, ListResourcesName)
	if r := call(t, list.Tool, `{}`); r.IsError || !strings.Contains(r.Content[0].Text, `"uri":"test://greeting"`) {
		t.Errorf("list_mcp_resources %+v", r)
	}
}

func TestDeferredHTTPAndToolSearch(t *testing.T) {
	var mu sync.Mutex
	var auth string
	url := httpServer(t, func(h http.Header) {
		mu.Lock()
		auth = h.Get("Authorization")
		mu.Unlock()
	})
	t.Setenv("PISCES_MCP_TEST_TOKEN", "tok")
	_, s := newManager(t, `"web":{"url":"`+url+`","exposure":"deferred","headers":{"Authorization":"Bearer ${PISCES_MCP_TEST_TOKEN}"},"oauth":{"clientId":"x"}}`)
	settle(t, s)
	// An oauth block is not honoured, and that is said (once, in the
	// warning), not skipped silently.
	if msg := s.Attention(context.Background()); msg != "MCP servers need attention:\n  web: "+OAuthNote+"\nRun pisces mcp list (or /mcp in the terminal UI) to see them." {
		t.Errorf("attention %q", msg)
	}
	if st := s.Servers()[0].Status(); st.State != StateConnected || len(st.Tools) != 6 {
		t.Fatalf("status %+v", st)
	}
	mu.Lock()
	if auth != "Bearer tok" {
		t.Errorf("Authorization header %q", auth)
	}
	mu.Unlock()
	es := s.Entries()
	// The schema is the server's, byte for byte (over streamable HTTP).
	if m, _ := entry(es, "mcp__web__meet"); string(m.Tool.Parameters()) != mcptest.MeetSchema {
		t.Errorf("meet declared with %s, want the server's %s", m.Tool.Parameters(), mcptest.MeetSchema)
	}
	e, ok := entry(es, "mcp__web__echo")
	if !ok || e.Active {
		t.Fatalf("a deferred tool is offered active (or not at all): %+v %v", e, ok)
	}
	search, ok := entry(es, ToolSearchName)
	if !ok || !search.Active {
		t.Fatal("tool_search not active with a deferred server")
	}
	r := call(t, search.Tool, `{"query":"echo"}`)
	if r.IsError || !strings.HasPrefix(r.Content[0].Text, "Loaded 1 tool.") || string(r.Details) != `{"loaded":["mcp__web__echo"]}` {
		t.Fatalf("tool_search %q %s", r.Content[0].Text, r.Details)
	}
	if e, _ := entry(s.Entries(), "mcp__web__echo"); !e.Active {
		t.Error("the loaded tool is not active")
	}
	if sec := s.PromptSection(); !strings.Contains(sec, "- mcp__web (tool_search): Test tools for Pisces.") {
		t.Errorf("prompt section %q", sec)
	}
	// The client's choice wins over the exposure.
	s.SetActive([]string{"mcp__web__echo", "mcp__web__fail"}, map[string]bool{"mcp__web__fail": true})
	es = s.Entries()
	if e, _ := entry(es, "mcp__web__echo"); e.Active {
		t.Error("set inactive, still active")
	}
	if e, _ := entry(es, "mcp__web__fail"); !e.Active {
		t.Error("set active, still inactive")
	}
}

func TestFailingServersReportedOnce(t *testing.T) {
	_, s := newManager(t, `"gone":{"command":"/nonexistent/mcp-server"},"quits":{"command":"/bin/sh","args":["-c","exit 0"]},"off":{"command":"x","enabled":false}`)
	msg := s.Attention(context.Background())
	want := "MCP servers need attention:\n  gone: failed: spawn /nonexistent/mcp-server ENOENT\n  quits: failed: MCP connection closed\n"
	if !strings.HasPrefix(msg, want) || !strings.Contains(msg, "pisces mcp list") {
		t.Fatalf("attention %q", msg)
	}
	if len(s.Entries()) != 0 {
		t.Errorf("entries of failed servers: %v", s.Entries())
	}
}

func TestRestartOnce(t *testing.T) {
	_, s := newManager(t, `"test":`+stdioEntry(t, `"exposure":"direct"`))
	settle(t, s)
	changes := make(chan Status, 16)
	stop := s.Watch(func(st Status) { changes <- st })
	defer stop()
	es := s.Entries()
	exit, _ := entry(es, "mcp__test__exit")
	echo, _ := entry(es, "mcp__test__echo")
	if r := call(t, exit.Tool, `{}`); !r.IsError {
		t.Fatalf("a call whose server died: %+v", r)
	}
	deadline := time.After(waitLong)
	for st := range changes {
		if st.State == StateFailed {
			break
		}
		select {
		case <-deadline:
			t.Fatal("no failed state")
		default:
		}
	}
	if r := call(t, echo.Tool, `{"message":"again"}`); r.IsError || r.Content[0].Text != "Echo: again" {
		t.Fatalf("after a restart: %+v", r)
	}
	call(t, exit.Tool, `{}`)
	for st := range changes {
		if st.State == StateFailed {
			break
		}
	}
	if r := call(t, echo.Tool, `{"message":"x"}`); !r.IsError || !strings.Contains(r.Content[0].Text, "mcp__test__echo") {
		t.Fatalf("the second death is restarted too: %+v", r)
	}
}

// A server behind a shell wrapper that outlives the server (sh -c
// 'server; exec sleep 61') leaves no process behind once the manager
// closes.
func TestShellWrapperStopped(t *testing.T) {
	exe, _ := os.Executable()
	b, _ := json.Marshal(`"` + exe + `"; exec sleep 61`)
	m, s := newManager(t, `"wrapped":{"command":"/bin/sh","args":["-c",`+string(b)+`],"env":{"PISCES_TEST_MCP_SERVER":"1"},"exposure":"direct"}`)
	settle(t, s)
	srv := s.Servers()[0]
	if st := srv.Status(); st.State != StateConnected {
		t.Fatalf("state %+v", st)
	}
	srv.mu.Lock()
	pid := srv.conn.cmd.Process.Pid
	srv.mu.Unlock()
	start := time.Now()
	m.Close()
	if procgroup.Alive(pid) {
		out, _ := exec.Command("sh", "-c", fmt.Sprintf("ps -eo pid,pgid,stat,args | awk '$2==%d'", pid)).CombinedOutput()
		t.Fatalf("the server's process group is still alive:\n%s", out)
	}
	if d := time.Since(start); d > 2500*time.Millisecond {
		t.Errorf("stopping took %v", d)
	}
}

func TestProjectServersNeedTrust(t *testing.T) {
	agent := t.TempDir()
	writeConfig(t, agent, `"g":{"command":"/nonexistent/g"}`)
	proj := t.TempDir()
	writeConfig(t, filepath.Join(proj, ".pi"), `"p":{"command":"/nonexistent/pi"},"both":{"command":"/nonexistent/pi-both"}`)
	writeConfig(t, filepath.Join(proj, ".pisces"), `"both":{"command":"/nonexistent/pisces-both"}`)
	if !HasProjectConfig(proj) {
		t.Fatal("project config not found")
	}
	m := NewManager(Options{AgentDir: agent, Version: "test"})
	defer m.Close()
	names := func(ss []*Server) string {
		var out []string
		for _, s := range ss {
			out = append(out, s.cfg.Name+"="+s.cfg.Command)
		}
		return strings.Join(out, ",")
	}
	if got := names(m.Servers(proj, false)); got != "g=/nonexistent/g" {
		t.Errorf("untrusted: %s", got)
	}
	if got := names(m.Servers(proj, true)); got != "g=/nonexistent/g,p=/nonexistent/pi,both=/nonexistent/pisces-both" {
		t.Errorf("trusted: %s", got)
	}
	// Sessions in several projects share the global servers; each
	// project's belong to it, and run in its directory by default.
	other := t.TempDir()
	writeConfig(t, filepath.Join(other, ".pisces"), `"p":{"command":"/nonexistent/other"}`)
	a, b := m.Servers(proj, true), m.Servers(other, true)
	if a[0] != b[0] || a[0] != m.Servers(proj, false)[0] {
		t.Error("the global server is not shared")
	}
	if a[1] == b[1] || a[1].cwd != proj || b[1].cwd != other {
		t.Errorf("project servers: %s in %s, %s in %s", a[1].cfg.Command, a[1].cwd, b[1].cfg.Command, b[1].cwd)
	}
	if again := m.Servers(proj, true); again[1] != a[1] {
		t.Error("a project's servers are started again")
	}
}

func TestCodemodeNestedCalls(t *testing.T) {
	_, s := newManager(t, `"test":`+stdioEntry(t, `"toolExposure":{"exit":"hidden"}`))
	settle(t, s)
	es := s.Entries()
	cm, ok := entry(es, codemode.Name)
	if !ok || !cm.Active {
		t.Fatal("codemode not offered with a codemode server")
	}
	if e, _ := entry(es, "mcp__test__echo"); e.Active || e.Exposure != ExposureCodemode {
		t.Errorf("a codemode tool is declared: %+v", e)
	}
	if _, ok := entry(es, ToolSearchName); !ok {
		t.Error("no tool_search with a codemode server")
	}
	if d := cm.Tool.Description(); !strings.Contains(d, "tools.mcp__test__get_sum({a, b}): Adds two numbers") || strings.Contains(d, "mcp__test__exit") {
		t.Errorf("description %q", d)
	}
	var mu sync.Mutex
	var nested []string
	runNested := func(ctx context.Context, id, name string, args json.RawMessage, run func(context.Context) tools.Result) tools.Result {
		res := run(ctx)
		mu.Lock()
		nested = append(nested, id+" "+name+" "+string(args)+fmt.Sprintf(" error=%v", res.IsError))
		mu.Unlock()
		return res
	}
	code := `const r = await tools.mcp__test__get_sum({a: 2, b: 3});
const e = await mcp.test.echo({message: "x"});
let failed = "";
try { await mcp.test.fail({}); } catch (err) { failed = err.message; }
console.log("sum is", r.sum);
return {r, e, failed};`
	args, _ := json.Marshal(map[string]string{"code": code})
	ctx, cancel := context.WithTimeout(context.Background(), waitLong)
	defer cancel()
	res, err := cm.Tool.Execute(ctx, tools.Call{ID: "call_9", Args: args, RunNested: runNested})
	if err != nil {
		t.Fatal(err)
	}
	if res.IsError || res.Content[0].Text != `{"e":"Echo: x","failed":"it failed","r":{"sum":5}}`+"\n\nLogs:\nsum is 5" {
		t.Fatalf("result %+v", res.Content)
	}
	want := []string{
		`call_9:1 mcp__test__get_sum {"a":2,"b":3} error=false`,
		`call_9:2 mcp__test__echo {"message":"x"} error=false`,
		`call_9:3 mcp__test__fail {} error=true`,
	}
	if strings.Join(nested, "\n") != strings.Join(want, "\n") {
		t.Errorf("nested calls:\n%s\nwant:\n%s", strings.Join(nested, "\n"), strings.Join(want, "\n"))
	}
	if string(res.NestedCalls) != `{"calls":[{"id":"call_9:1","name":"mcp__test__get_sum","status":"ok"},{"id":"call_9:2","name":"mcp__test__echo","status":"ok"},{"id":"call_9:3","name":"mcp__test__fail","status":"error"}],"complete":true}` {
		t.Errorf("nestedCalls %s", res.NestedCalls)
	}
	// A hidden tool is not among the functions.
	args, _ = json.Marshal(map[string]string{"code": `return await tools.mcp__test__exit({})`})
	res, _ = cm.Tool.Execute(ctx, tools.Call{ID: "call_10", Args: args})
	if !res.IsError || !strings.Contains(res.Content[0].Text, "TypeError") {
		t.Errorf("calling a hidden tool: %+v", res.Content)
	}
}

// Calls a program makes without awaiting each (Promise.all) run at the
// same time: meet answers only once two of its calls are running at once
// on the server (a call alone fails after mcptest.MeetWait). Each nested
// call starts before it ends, and nestedCalls lists them in the order the
// program made them.
func TestCodemodeConcurrentCalls(t *testing.T) {
	_, s := newManager(t, `"test":`+stdioEntry(t, `"toolExposure":{"exit":"hidden"}`))
	settle(t, s)
	cm, ok := entry(s.Entries(), codemode.Name)
	if !ok {
		t.Fatal("codemode not offered with a codemode server")
	}
	var mu sync.Mutex
	var events []string
	runNested := func(ctx context.Context, id, name string, args json.RawMessage, run func(context.Context) tools.Result) tools.Result {
		mu.Lock()
		events = append(events, "start "+id)
		mu.Unlock()
		res := run(ctx)
		mu.Lock()
		events = append(events, fmt.Sprintf("end %s error=%v", id, res.IsError))
		mu.Unlock()
		return res
	}
	code := `const before = await mcp.test.echo({message: "first"});
const met = await Promise.all([mcp.test.meet({party: "a"}), mcp.test.meet({party: "b"})]);
return {before, met};`
	args, _ := json.Marshal(map[string]string{"code": code})
	ctx, cancel := context.WithTimeout(context.Background(), waitLong)
	defer cancel()
	res, err := cm.Tool.Execute(ctx, tools.Call{ID: "call_1", Args: args, RunNested: runNested})
	if err != nil {
		t.Fatal(err)
	}
	if res.IsError || res.Content[0].Text != `{"before":"Echo: first","met":["a met the others","b met the others"]}` {
		t.Fatalf("result %+v", res.Content)
	}
	mu.Lock()
	defer mu.Unlock()
	pos := map[string]int{}
	for i, e := range events {
		pos[e] = i
	}
	if len(events) != 6 || pos["start call_1:1"] != 0 || pos["end call_1:1 error=false"] != 1 {
		t.Fatalf("nested events %q", events)
	}
	for _, id := range []string{"call_1:2", "call_1:3"} {
		s, okS := pos["start "+id]
		e, okE := pos["end "+id+" error=false"]
		if !okS || !okE || s > e {
			t.Errorf("%s: start at %d, end at %d: %q", id, s, e, events)
		}
	}
	if string(res.NestedCalls) != `{"calls":[{"id":"call_1:1","name":"mcp__test__echo","status":"ok"},{"id":"call_1:2","name":"mcp__test__meet","status":"ok"},{"id":"call_1:3","name":"mcp__test__meet","status":"ok"}],"complete":true}` {
		t.Errorf("nestedCalls %s", res.NestedCalls)
	}
}

// A call the program does not await is cancelled when the program ends,
// and has ended (aborted) before the codemode call returns.
func TestCodemodeCallLeftRunning(t *testing.T) {
	_, s := newManager(t, `"test":`+stdioEntry(t, `"toolExposure":{"exit":"hidden"}`))
	settle(t, s)
	cm, _ := entry(s.Entries(), codemode.Name)
	var mu sync.Mutex
	var ended []string
	runNested := func(ctx context.Context, id, name string, args json.RawMessage, run func(context.Context) tools.Result) tools.Result {
		res := run(ctx)
		mu.Lock()
		ended = append(ended, id+" "+ai.JoinText(res.Content, ""))
		mu.Unlock()
		return res
	}
	args, _ := json.Marshal(map[string]string{"code": `mcp.test.meet({party: "alone"}); return 1`})
	ctx, cancel := context.WithTimeout(context.Background(), waitLong)
	defer cancel()
	res, err := cm.Tool.Execute(ctx, tools.Call{ID: "call_1", Args: args, RunNested: runNested})
	if err != nil {
		t.Fatal(err)
	}
	if res.IsError || res.Content[0].Text != "1" {
		t.Fatalf("result %+v", res.Content)
	}
	mu.Lock()
	defer mu.Unlock()
	if len(ended) != 1 || ended[0] != "call_1:1 Tool execution aborted" {
		t.Errorf("nested calls ended: %q", ended)
	}
	if string(res.NestedCalls) != `{"calls":[{"id":"call_1:1","name":"mcp__test__meet","status":"error"}],"complete":true}` {
		t.Errorf("nestedCalls %s", res.NestedCalls)
	}
}

// A server still starting when the manager closes is stopped too: close
// gives up the connection under way and stops its process group.
func TestCloseWhileConnecting(t *testing.T) {
	dir := t.TempDir()
	pidFile := filepath.Join(dir, "pid")
	b, _ := json.Marshal(`echo $$ > "` + pidFile + `"; exec sleep 61`)
	m, s := newManager(t, `"slow":{"command":"/bin/sh","args":["-c",`+string(b)+`]}`)
	srv := s.Servers()[0] // starts it
	var pid int
	deadline := time.Now().Add(waitLong)
	for pid == 0 && time.Now().Before(deadline) {
		if data, err := os.ReadFile(pidFile); err == nil && strings.HasSuffix(string(data), "\n") {
			fmt.Sscan(string(data), &pid)
		} else {
			time.Sleep(10 * time.Millisecond) // polling a file the shell writes: no event to wait on
		}
	}
	if pid == 0 {
		t.Fatal("the server did not start")
	}
	if st := srv.Status(); st.State != StateConnecting {
		t.Fatalf("state %s", st.State)
	}
	m.Close()
	if procgroup.Alive(pid) {
		procgroup.KillGroup(pid)
		t.Fatal("the starting server's process group outlived Close")
	}
	ctx, cancel := context.WithTimeout(context.Background(), waitLong)
	defer cancel()
	srv.Wait(ctx)
	if ctx.Err() != nil {
		t.Error("waiting for a closed server's attempt does not end")
	}
}
