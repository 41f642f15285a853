package acp_test

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	sdk "github.com/coder/acp-go-sdk"
	mcpsdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/pisces-agent/pisces/internal/cli"
	"github.com/pisces-agent/pisces/internal/mcp/mcptest"
	"github.com/pisces-agent/pisces/internal/testenv"
)

// quiet is the test clients' logger: their "connection closed" is noise.
var quiet = slog.New(slog.NewTextHandler(io.Discard, nil))

// waitLimit bounds every wait: generous, so that a loaded two-core machine
// running -race still passes.
const waitLimit = 60 * time.Second

// The test binary is also an MCP server over stdio (the editor's server
// in the MCP tests): with PISCES_TEST_MCP_SERVER set it serves
// mcptest.Server instead of running the tests.
func TestMain(m *testing.M) {
	if os.Getenv("PISCES_TEST_MCP_SERVER") != "" {
		if err := mcptest.Server().Run(context.Background(), &mcpsdk.StdioTransport{}); err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(1)
		}
		os.Exit(0)
	}
	if os.Getenv("PISCES_TEST_EXTENSION") != "" {
		askExtension()
		os.Exit(0)
	}
	code := m.Run()
	testenv.Cleanup()
	os.Exit(code)
}

// permissionRequests returns the permission requests the editor received
// so far.
func (ed *editor) permissionRequests() []sdk.RequestPermissionRequest {
	ed.mu.Lock()
	defer ed.mu.Unlock()
	return append([]sdk.RequestPermissionRequest(nil), ed.asked...)
}

// checkPermissionOptions fails unless a permission request offers four
// kinds of answer: allow and reject, once and always.
func checkPermissionOptions(t *testing.T, req sdk.RequestPermissionRequest) {
	t.Helper()
	kinds := map[sdk.PermissionOptionKind]bool{}
	for _, o := range req.Options {
		kinds[o.Kind] = true
	}
	if len(kinds) != 4 {
		t.Errorf("options %+v: want allow and reject, once and always", req.Options)
	}
}

// editor is the client side: it records every session/update in order and
// answers permission requests with answer.
type editor struct {
	mu      sync.Mutex
	updates []sdk.SessionNotification
	asked   []sdk.RequestPermissionRequest
	changed chan struct{}
	answer  func(sdk.RequestPermissionRequest) sdk.RequestPermissionResponse
	// buffers, when set, are the editor's files (fs/read_text_file and
	// fs/write_text_file serve them; a file it lacks is read from disk).
	buffers map[string]string
	// elicit answers elicitation/create (nil: the method is unknown).
	elicit   func(sdk.UnstableCreateElicitationRequest) sdk.UnstableCreateElicitationResponse
	elicited []sdk.UnstableCreateElicitationRequest
	// terms, when set, are the editor's terminals (terminal/*: real
	// processes); termLog records the calls ("create term-1", ...).
	terms   map[string]*term
	termLog []string
}

func (e *editor) UnstableCreateElicitation(_ context.Context, p sdk.UnstableCreateElicitationRequest) (sdk.UnstableCreateElicitationResponse, error) {
	e.mu.Lock()
	e.elicited = append(e.elicited, p)
	answer := e.elicit
	e.mu.Unlock()
	if answer == nil {
		return sdk.UnstableCreateElicitationResponse{}, sdk.NewMethodNotFound("elicitation/create")
	}
	return answer(p), nil
}

func newEditor() *editor { return &editor{changed: make(chan struct{})} }

func (e *editor) notify() {
	close(e.changed)
	e.changed = make(chan struct{})
}

func (e *editor) SessionUpdate(_ context.Context, n sdk.SessionNotification) error {
	e.mu.Lock()
	e.updates = append(e.updates, n)
	e.notify()
	e.mu.Unlock()
	return nil
}

func (e *editor) RequestPermission(_ context.Context, p sdk.RequestPermissionRequest) (sdk.RequestPermissionResponse, error) {
	e.mu.Lock()
	e.asked = append(e.asked, p)
	answer := e.answer
	e.notify()
	e.mu.Unlock()
	if answer == nil {
		return sdk.RequestPermissionResponse{Outcome: sdk.NewRequestPermissionOutcomeCancelled()}, nil
	}
	return answer(p), nil
}

func (e *editor) ReadTextFile(_ context.Context, p sdk.ReadTextFileRequest) (sdk.ReadTextFileResponse, error) {
	e.mu.Lock()
	defer e.mu.Unlock()
	if e.buffers == nil {
		return sdk.ReadTextFileResponse{}, sdk.NewMethodNotFound("fs/read_text_file")
	}
	if s, ok := e.buffers[p.Path]; ok {
		return sdk.ReadTextFileResponse{Content: s}, nil
	}
	b, err := os.ReadFile(p.Path)
	if err != nil {
		return sdk.ReadTextFileResponse{}, sdk.NewInternalError(map[string]any{"error": err.Error()})
	}
	return sdk.ReadTextFileResponse{Content: string(b)}, nil
}

func (e *editor) WriteTextFile(_ context.Context, p sdk.WriteTextFileRequest) (sdk.WriteTextFileResponse, error) {
	e.mu.Lock()
	defer e.mu.Unlock()
	if e.buffers == nil {
		return sdk.WriteTextFileResponse{}, sdk.NewMethodNotFound("fs/write_text_file")
	}
	e.buffers[p.Path] = p.Content
	return sdk.WriteTextFileResponse{}, nil
}

// term is one of the editor's terminals: a real process whose output it
// keeps.
type term struct {
	req    sdk.CreateTerminalRequest
	cmd    *exec.Cmd
	out    *testenv.LockedBuffer
	done   chan struct{} // closed when the process has been waited for
	killed bool
}

func (e *editor) term(id string) (*term, error) {
	e.mu.Lock()
	defer e.mu.Unlock()
	if e.terms == nil {
		return nil, sdk.NewMethodNotFound("terminal")
	}
	t := e.terms[id]
	if t == nil {
		return nil, sdk.NewInvalidParams(map[string]any{"terminalId": id})
	}
	return t, nil
}

func (e *editor) CreateTerminal(_ context.Context, p sdk.CreateTerminalRequest) (sdk.CreateTerminalResponse, error) {
	e.mu.Lock()
	defer e.mu.Unlock()
	if e.terms == nil {
		return sdk.CreateTerminalResponse{}, sdk.NewMethodNotFound("terminal/create")
	}
	t := &term{req: p, cmd: exec.Command(p.Command, p.Args...), out: &testenv.LockedBuffer{}, done: make(chan struct{})}
	if p.Cwd != nil {
		t.cmd.Dir = *p.Cwd
	}
	t.cmd.Env = os.Environ()
	for _, v := range p.Env {
		t.cmd.Env = append(t.cmd.Env, v.Name+"="+v.Value)
	}
	t.cmd.Stdout, t.cmd.Stderr = t.out, t.out
	if err := t.cmd.Start(); err != nil {
		return sdk.CreateTerminalResponse{}, sdk.NewInternalError(map[string]any{"error": err.Error()})
	}
	go func() {
		_ = t.cmd.Wait()
		close(t.done)
	}()
	id := fmt.Sprintf("term-%d", len(e.terms)+1)
	e.terms[id] = t
	e.termLog = append(e.termLog, "create "+id)
	e.notify()
	return sdk.CreateTerminalResponse{TerminalId: id}, nil
}

func (e *editor) logTerm(what string) {
	e.mu.Lock()
	e.termLog = append(e.termLog, what)
	e.notify()
	e.mu.Unlock()
}

func (e *editor) KillTerminal(_ context.Context, p sdk.KillTerminalRequest) (sdk.KillTerminalResponse, error) {
	t, err := e.term(p.TerminalId)
	if err != nil {
		return sdk.KillTerminalResponse{}, err
	}
	e.mu.Lock()
	t.killed = true
	e.mu.Unlock()
	_ = t.cmd.Process.Kill()
	e.logTerm("kill " + p.TerminalId)
	return sdk.KillTerminalResponse{}, nil
}

func (e *editor) TerminalOutput(_ context.Context, p sdk.TerminalOutputRequest) (sdk.TerminalOutputResponse, error) {
	t, err := e.term(p.TerminalId)
	if err != nil {
		return sdk.TerminalOutputResponse{}, err
	}
	resp := sdk.TerminalOutputResponse{Output: t.out.String()}
	select {
	case <-t.done:
		resp.ExitStatus = &sdk.TerminalExitStatus{ExitCode: sdk.Ptr(t.cmd.ProcessState.ExitCode())}
	default:
	}
	e.logTerm("output " + p.TerminalId)
	return resp, nil
}

func (e *editor) ReleaseTerminal(_ context.Context, p sdk.ReleaseTerminalRequest) (sdk.ReleaseTerminalResponse, error) {
	t, err := e.term(p.TerminalId)
	if err != nil {
		return sdk.ReleaseTerminalResponse{}, err
	}
	_ = t.cmd.Process.Kill()
	e.logTerm("release " + p.TerminalId)
	return sdk.ReleaseTerminalResponse{}, nil
}

func (e *editor) WaitForTerminalExit(ctx context.Context, p sdk.WaitForTerminalExitRequest) (sdk.WaitForTerminalExitResponse, error) {
	t, err := e.term(p.TerminalId)
	if err != nil {
		return sdk.WaitForTerminalExitResponse{}, err
	}
	select {
	case <-t.done:
	case <-ctx.Done():
		return sdk.WaitForTerminalExitResponse{}, ctx.Err()
	}
	if code := t.cmd.ProcessState.ExitCode(); code >= 0 {
		return sdk.WaitForTerminalExitResponse{ExitCode: sdk.Ptr(code)}, nil
	}
	return sdk.WaitForTerminalExitResponse{Signal: sdk.Ptr("SIGKILL")}, nil
}

// waitFor waits until cond holds for the updates so far and returns them.
func (e *editor) waitFor(t *testing.T, what string, cond func([]sdk.SessionNotification) bool) []sdk.SessionNotification {
	t.Helper()
	deadline := time.After(waitLimit)
	for {
		e.mu.Lock()
		ups := append([]sdk.SessionNotification(nil), e.updates...)
		ch := e.changed
		e.mu.Unlock()
		if cond(ups) {
			return ups
		}
		select {
		case <-ch:
		case <-deadline:
			t.Fatalf("timed out waiting for %s; updates:\n%s", what, dump(ups))
		}
	}
}

func (e *editor) snapshot() []sdk.SessionNotification {
	e.mu.Lock()
	defer e.mu.Unlock()
	return append([]sdk.SessionNotification(nil), e.updates...)
}

func (e *editor) reset() {
	e.mu.Lock()
	e.updates = nil
	e.asked = nil
	e.mu.Unlock()
}

func dump(ups []sdk.SessionNotification) string {
	var b strings.Builder
	for _, u := range ups {
		j, _ := json.Marshal(u.Update)
		b.Write(j)
		b.WriteByte('\n')
	}
	return b.String()
}

// kinds are the sessionUpdate kinds of ups, in order, consecutive chunks
// of one kind counted once.
func kinds(ups []sdk.SessionNotification) []string {
	var out []string
	for _, u := range ups {
		k := kindOf(u.Update)
		if len(out) > 0 && out[len(out)-1] == k && strings.HasSuffix(k, "_chunk") {
			continue
		}
		out = append(out, k)
	}
	return out
}

func kindOf(u sdk.SessionUpdate) string {
	var v struct {
		SessionUpdate string `json:"sessionUpdate"`
	}
	b, _ := json.Marshal(u)
	_ = json.Unmarshal(b, &v)
	return v.SessionUpdate
}

// text joins the text chunks of one kind.
func text(ups []sdk.SessionNotification, kind string) string {
	var b strings.Builder
	for _, u := range ups {
		switch kind {
		case "agent_message_chunk":
			if c := u.Update.AgentMessageChunk; c != nil && c.Content.Text != nil {
				b.WriteString(c.Content.Text.Text)
			}
		case "agent_thought_chunk":
			if c := u.Update.AgentThoughtChunk; c != nil && c.Content.Text != nil {
				b.WriteString(c.Content.Text.Text)
			}
		case "user_message_chunk":
			if c := u.Update.UserMessageChunk; c != nil && c.Content.Text != nil {
				b.WriteString(c.Content.Text.Text)
			}
		}
	}
	return b.String()
}

// agentRun is one pisces --mode acp, in process or as a process.
type agentRun struct {
	t      *testing.T
	dir    string // the test's directory
	agent  string // the agent dir
	proj   string // a project directory (the sessions' cwd)
	conn   *sdk.ClientSideConnection
	ed     *editor
	stdin  io.WriteCloser
	done   chan int
	stderr *testenv.LockedBuffer
}

// setupDirs makes the test's agent dir, project and script file.
func setupDirs(t *testing.T, dir, script string) (agentDir, proj, scriptPath string) {
	t.Helper()
	agentDir = filepath.Join(dir, "agent")
	proj = filepath.Join(dir, "proj")
	for _, d := range []string{agentDir, proj} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	scriptPath = filepath.Join(dir, "script.json")
	if err := os.WriteFile(scriptPath, []byte(script), 0o644); err != nil {
		t.Fatal(err)
	}
	return agentDir, proj, scriptPath
}

func acpArgs(agentDir, scriptPath string, extra ...string) []string {
	return append([]string{"--mode", "acp", "--agent-dir", agentDir, "--provider", "scripted", "--script", scriptPath}, extra...)
}

// startInProcess runs cli.Main in ACP mode over pipes, with an SDK client
// on the other end. dir "" makes a fresh directory.
func startInProcess(t *testing.T, dir, script string, extra ...string) *agentRun {
	t.Helper()
	if dir == "" {
		dir = t.TempDir()
	}
	agentDir, proj, scriptPath := setupDirs(t, dir, script)
	inR, inW := io.Pipe()
	outR, outW := io.Pipe()
	r := &agentRun{t: t, dir: dir, agent: agentDir, proj: proj, ed: newEditor(), stdin: inW, done: make(chan int, 1), stderr: &testenv.LockedBuffer{}}
	go func() {
		code := cli.Main(acpArgs(agentDir, scriptPath, extra...), cli.IO{Stdin: inR, Stdout: outW, Stderr: r.stderr})
		outW.Close()
		r.done <- code
	}()
	r.conn = sdk.NewClientSideConnection(r.ed, inW, outR)
	r.conn.SetLogger(quiet)
	t.Cleanup(func() { r.stop() })
	return r
}

// stop closes stdin and waits for the agent to end; it returns the exit
// code.
func (r *agentRun) stop() int {
	r.stdin.Close()
	select {
	case code := <-r.done:
		r.done <- code
		return code
	case <-time.After(waitLimit):
		r.t.Fatalf("the agent did not end after stdin closed; stderr:\n%s", r.stderr)
		return -1
	}
}

func (r *agentRun) ctx() context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), waitLimit)
	r.t.Cleanup(cancel)
	return ctx
}

func (r *agentRun) initialize() sdk.InitializeResponse {
	r.t.Helper()
	resp, err := r.conn.Initialize(r.ctx(), sdk.InitializeRequest{ProtocolVersion: sdk.ProtocolVersionNumber})
	if err != nil {
		r.t.Fatalf("initialize: %v", err)
	}
	return resp
}

func (r *agentRun) newSession(mode string) sdk.SessionId {
	r.t.Helper()
	resp, err := r.conn.NewSession(r.ctx(), sdk.NewSessionRequest{Cwd: r.proj, McpServers: []sdk.McpServer{}})
	if err != nil {
		r.t.Fatalf("session/new: %v\nstderr:\n%s", err, r.stderr)
	}
	if mode != "" {
		if _, err := r.conn.SetSessionMode(r.ctx(), sdk.SetSessionModeRequest{SessionId: resp.SessionId, ModeId: sdk.SessionModeId(mode)}); err != nil {
			r.t.Fatalf("session/set_mode: %v", err)
		}
	}
	return resp.SessionId
}

func (r *agentRun) prompt(id sdk.SessionId, text string) sdk.StopReason {
	r.t.Helper()
	resp, err := r.conn.Prompt(r.ctx(), sdk.PromptRequest{SessionId: id, Prompt: []sdk.ContentBlock{sdk.TextBlock(text)}})
	if err != nil {
		r.t.Fatalf("session/prompt: %v\nstderr:\n%s", err, r.stderr)
	}
	return resp.StopReason
}

// rawRun is pisces --mode acp in process with raw lines in and out.
type rawRun struct {
	t     *testing.T
	in    io.WriteCloser
	lines chan string
	done  chan int
}

func startRaw(t *testing.T, script string) (*rawRun, string) {
	t.Helper()
	dir := t.TempDir()
	agentDir, proj, scriptPath := setupDirs(t, dir, script)
	inR, inW := io.Pipe()
	outR, outW := io.Pipe()
	r := &rawRun{t: t, in: inW, lines: make(chan string, 1000), done: make(chan int, 1)}
	go func() {
		code := cli.Main(acpArgs(agentDir, scriptPath), cli.IO{Stdin: inR, Stdout: outW, Stderr: io.Discard})
		outW.Close()
		r.done <- code
	}()
	go func() {
		sc := bufio.NewScanner(outR)
		sc.Buffer(make([]byte, 1<<20), 16<<20)
		for sc.Scan() {
			r.lines <- sc.Text()
		}
		close(r.lines)
	}()
	t.Cleanup(func() {
		inW.Close()
		select {
		case <-r.done:
		case <-time.After(waitLimit):
			t.Error("the agent did not end after stdin closed")
		}
	})
	return r, proj
}

func (r *rawRun) send(line string) {
	r.t.Helper()
	if _, err := io.WriteString(r.in, line+"\n"); err != nil {
		r.t.Fatal(err)
	}
}

// next returns the next output line as a map.
func (r *rawRun) next() map[string]any {
	r.t.Helper()
	select {
	case l, ok := <-r.lines:
		if !ok {
			r.t.Fatal("stdout ended")
		}
		var m map[string]any
		if err := json.Unmarshal([]byte(l), &m); err != nil {
			r.t.Fatalf("stdout line is not JSON: %q", l)
		}
		return m
	case <-time.After(waitLimit):
		r.t.Fatal("timed out waiting for a line")
	}
	return nil
}
