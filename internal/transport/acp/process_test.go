package acp_test

import (
	"bufio"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	sdk "github.com/coder/acp-go-sdk"

	"github.com/pisces-agent/pisces/internal/testenv"
)

// cleanEnv is the environment without provider keys or Pisces settings.
func cleanEnv() []string {
	var out []string
	for _, kv := range os.Environ() {
		k, _, _ := strings.Cut(kv, "=")
		if strings.Contains(k, "API_KEY") || strings.Contains(k, "TOKEN") || strings.HasPrefix(k, "PISCES_") {
			continue
		}
		out = append(out, kv)
	}
	return out
}

// startBinary runs the pisces binary in ACP mode with args, an SDK client
// on its stdio.
func startBinary(t *testing.T, dir, agentDir, proj string, args ...string) *agentRun {
	t.Helper()
	bin, err := testenv.PiscesBinary()
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(bin, append([]string{"--mode", "acp", "--agent-dir", agentDir}, args...)...)
	cmd.Env = cleanEnv()
	cmd.Dir = dir
	r := &agentRun{t: t, dir: dir, agent: agentDir, proj: proj, ed: newEditor(), done: make(chan int, 1), stderr: &testenv.LockedBuffer{}}
	cmd.Stderr = r.stderr
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
	r.stdin = stdin
	go func() {
		_ = cmd.Wait()
		r.done <- cmd.ProcessState.ExitCode()
	}()
	r.conn = sdk.NewClientSideConnection(r.ed, stdin, stdout)
	r.conn.SetLogger(quiet)
	t.Cleanup(func() {
		r.stdin.Close()
		select {
		case <-r.done:
		case <-time.After(waitLimit):
			_ = cmd.Process.Kill()
			t.Error("the agent did not end after stdin closed")
		}
	})
	return r
}

func TestLoadInNewProcess(t *testing.T) {
	dir := t.TempDir()
	agentDir, proj, script1 := setupDirs(t, dir, `{"turns":[
 {"content":[{"type":"thinking","thinking":"pondering"},{"type":"text","text":"I will run it"},{"type":"toolCall","id":"b1","name":"bash","arguments":{"command":"echo hi"}}]},
 {"content":[{"type":"text","text":"it said hi"}]}
]}`)
	log := filepath.Join(dir, "requests.jsonl")
	script2 := filepath.Join(dir, "script2.json")
	if err := os.WriteFile(script2, []byte(`{"requestLog":`+jsonString(log)+`,"turns":[{"content":[{"type":"text","text":"continued"}]}]}`), 0o644); err != nil {
		t.Fatal(err)
	}

	r1 := startBinary(t, dir, agentDir, proj, "--provider", "scripted", "--script", script1)
	r1.initialize()
	id := r1.newSession("auto")
	if stop := r1.prompt(id, "run echo hi"); stop != sdk.StopReasonEndTurn {
		t.Fatalf("stopReason %s", stop)
	}
	r1.stdin.Close()
	select {
	case code := <-r1.done:
		if code != 0 {
			t.Errorf("exit code %d after stdin closed; stderr:\n%s", code, r1.stderr)
		}
		r1.done <- code
	case <-time.After(waitLimit):
		t.Fatal("the first process did not end")
	}
	files, _ := filepath.Glob(filepath.Join(agentDir, "sessions", "*", "*.jsonl"))
	if len(files) != 1 {
		t.Fatalf("session files %v, want one (the ACP session is a Pisces session)", files)
	}

	r2 := startBinary(t, dir, agentDir, proj, "--provider", "scripted", "--script", script2)
	r2.initialize()
	list, err := r2.conn.ListSessions(r2.ctx(), sdk.ListSessionsRequest{Cwd: &proj})
	if err != nil {
		t.Fatal(err)
	}
	if len(list.Sessions) != 1 || list.Sessions[0].SessionId != id || list.Sessions[0].Cwd != proj {
		t.Fatalf("session/list %+v", list.Sessions)
	}
	if s := list.Sessions[0]; s.Title == nil || *s.Title != "run echo hi" || s.UpdatedAt == nil {
		t.Errorf("title %v, updatedAt %v", s.Title, s.UpdatedAt)
	} else if _, err := time.Parse(time.RFC3339, *s.UpdatedAt); err != nil {
		t.Errorf("updatedAt: %v", err)
	}
	other := dir
	if list, err := r2.conn.ListSessions(r2.ctx(), sdk.ListSessionsRequest{Cwd: &other}); err != nil || len(list.Sessions) != 0 {
		t.Errorf("session/list of another cwd: %+v, %v", list.Sessions, err)
	}

	if _, err := r2.conn.LoadSession(r2.ctx(), sdk.LoadSessionRequest{SessionId: id, Cwd: proj, McpServers: []sdk.McpServer{}}); err != nil {
		t.Fatalf("session/load: %v\nstderr:\n%s", err, r2.stderr)
	}
	ups := r2.ed.snapshot() // every update sent before the response
	want := []string{"user_message_chunk", "agent_thought_chunk", "agent_message_chunk", "tool_call", "agent_message_chunk", "available_commands_update"}
	if got := kinds(ups); strings.Join(got, " ") != strings.Join(want, " ") {
		t.Errorf("replay %v, want %v\n%s", got, want, dump(ups))
	}
	if got := text(ups, "user_message_chunk"); got != "run echo hi" {
		t.Errorf("user text %q", got)
	}
	if got := text(ups, "agent_message_chunk"); got != "I will run itit said hi" {
		t.Errorf("agent text %q", got)
	}
	start, _ := toolUpdates(ups, "b1")
	if start == nil || start.Status != sdk.ToolCallStatusCompleted || start.Kind != sdk.ToolKindExecute || !strings.Contains(contentText(start.Content), "hi") {
		t.Errorf("replayed tool call %+v", start)
	}

	if stop := r2.prompt(id, "and now?"); stop != sdk.StopReasonEndTurn {
		t.Fatalf("prompt after load: %s", stop)
	}
	b, err := os.ReadFile(log)
	if err != nil {
		t.Fatal(err)
	}
	var req struct {
		Messages int    `json:"messages"`
		LastUser string `json:"lastUser"`
	}
	if err := json.Unmarshal(b, &req); err != nil {
		t.Fatal(err)
	}
	// user, assistant, tool result, assistant, then the new prompt.
	if req.Messages != 5 || req.LastUser != "and now?" {
		t.Errorf("the prompt after load did not continue the history: %s", b)
	}
}

func jsonString(s string) string {
	b, _ := json.Marshal(s)
	return string(b)
}

func TestAuthRequired(t *testing.T) {
	dir := t.TempDir()
	agentDir, proj, _ := setupDirs(t, dir, `{"turns":[]}`)
	r := startBinary(t, dir, agentDir, proj)
	resp := r.initialize()
	if len(resp.AuthMethods) == 0 {
		t.Fatal("no authMethods")
	}
	_, err := r.conn.NewSession(r.ctx(), sdk.NewSessionRequest{Cwd: proj, McpServers: []sdk.McpServer{}})
	var re *sdk.RequestError
	if !asRequestError(err, &re) || re.Code != -32000 {
		t.Errorf("session/new without a key: %v, want -32000", err)
	}
	_, err = r.conn.Authenticate(r.ctx(), sdk.AuthenticateRequest{MethodId: "api-key"})
	if !asRequestError(err, &re) || re.Code != -32000 {
		t.Errorf("authenticate without a key: %v, want -32000", err)
	}

	// The user stores a key: authenticate reads it, and a session opens
	// without a restart.
	if err := os.WriteFile(filepath.Join(agentDir, "auth.json"), []byte(`{"anthropic": {"type": "api_key", "key": "sk-ant-test"}}`), 0o600); err != nil {
		t.Fatal(err)
	}
	if _, err := r.conn.Authenticate(r.ctx(), sdk.AuthenticateRequest{MethodId: "api-key"}); err != nil {
		t.Fatalf("authenticate with a key in auth.json: %v\nstderr:\n%s", err, r.stderr)
	}
	nr, err := r.conn.NewSession(r.ctx(), sdk.NewSessionRequest{Cwd: proj, McpServers: []sdk.McpServer{}})
	if err != nil {
		t.Fatalf("session/new after authenticate: %v\nstderr:\n%s", err, r.stderr)
	}
	model := ""
	for _, o := range nr.ConfigOptions {
		if o.Select != nil && o.Select.Id == "model" {
			model = string(o.Select.CurrentValue)
		}
	}
	if !strings.HasPrefix(model, "anthropic/") {
		t.Errorf("the session's model is %q, want one of anthropic's (the provider whose key was stored)", model)
	}
}

// TestKeyFromModelsJSON: a key given in models.json after start is read
// again by session/new itself (no authenticate in between).
func TestKeyFromModelsJSON(t *testing.T) {
	dir := t.TempDir()
	agentDir, proj, _ := setupDirs(t, dir, `{"turns":[]}`)
	r := startBinary(t, dir, agentDir, proj)
	r.initialize()
	_, err := r.conn.NewSession(r.ctx(), sdk.NewSessionRequest{Cwd: proj, McpServers: []sdk.McpServer{}})
	var re *sdk.RequestError
	if !asRequestError(err, &re) || re.Code != -32000 {
		t.Fatalf("session/new without a key: %v, want -32000", err)
	}
	if err := os.WriteFile(filepath.Join(agentDir, "models.json"), []byte(`{"providers": {"openai": {"apiKey": "sk-from-models-json"}}}`), 0o600); err != nil {
		t.Fatal(err)
	}
	if _, err := r.conn.NewSession(r.ctx(), sdk.NewSessionRequest{Cwd: proj, McpServers: []sdk.McpServer{}}); err != nil {
		t.Fatalf("session/new after the key was stored in models.json: %v\nstderr:\n%s", err, r.stderr)
	}
}

// TestStdoutOnlyJSON checks every line the process writes on stdout is a
// JSON-RPC message, through a whole prompt with a tool call.
func TestStdoutOnlyJSON(t *testing.T) {
	bin, err := testenv.PiscesBinary()
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	agentDir, proj, script := setupDirs(t, dir, streamScript)
	cmd := exec.Command(bin, "--mode", "acp", "--agent-dir", agentDir, "--provider", "scripted", "--script", script)
	cmd.Env = cleanEnv()
	stdin, _ := cmd.StdinPipe()
	stdout, _ := cmd.StdoutPipe()
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() { _ = cmd.Process.Kill() }()
	lines := make(chan string, 1000)
	go func() {
		sc := bufio.NewScanner(stdout)
		sc.Buffer(make([]byte, 1<<20), 16<<20)
		for sc.Scan() {
			lines <- sc.Text()
		}
		close(lines)
	}()
	next := func() map[string]any {
		t.Helper()
		var l string
		var ok bool
		select {
		case l, ok = <-lines:
			if !ok {
				t.Fatal("stdout ended")
			}
		case <-time.After(waitLimit):
			t.Fatal("timed out waiting for a line on stdout")
		}
		var m map[string]any
		if err := json.Unmarshal([]byte(l), &m); err != nil || m["jsonrpc"] != "2.0" {
			t.Fatalf("not a JSON-RPC message on stdout: %q", l)
		}
		return m
	}
	send := func(s string) {
		if _, err := stdin.Write([]byte(s + "\n")); err != nil {
			t.Fatal(err)
		}
	}
	send(`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":1}}`)
	next()
	send(`{"jsonrpc":"2.0","id":2,"method":"session/new","params":{"cwd":` + jsonString(proj) + `,"mcpServers":[]}}`)
	m := next()
	id := m["result"].(map[string]any)["sessionId"].(string)
	send(`{"jsonrpc":"2.0","id":3,"method":"session/set_mode","params":{"sessionId":"` + id + `","modeId":"auto"}}`)
	// Requests are handled concurrently: the prompt waits for the mode.
	for m := next(); m["id"] != float64(3); m = next() {
	}
	send(`{"jsonrpc":"2.0","id":4,"method":"session/prompt","params":{"sessionId":"` + id + `","prompt":[{"type":"text","text":"go"}]}}`)
	for {
		m := next()
		if m["id"] == float64(4) {
			if r, _ := m["result"].(map[string]any); r == nil || r["stopReason"] != "end_turn" {
				t.Errorf("prompt answer %v", m)
			}
			break
		}
	}
	stdin.Close()
	select {
	case l, ok := <-lines:
		if ok {
			t.Errorf("output after the last answer: %q", l)
		}
	case <-time.After(waitLimit):
		t.Error("stdout did not end after stdin closed")
	}
	if err := cmd.Wait(); err != nil {
		t.Errorf("exit: %v", err)
	}
}
