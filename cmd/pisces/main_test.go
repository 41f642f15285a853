package main_test

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/pisces-agent/pisces/internal/testenv"
)

var bin string

func TestMain(m *testing.M) {
	var err error
	if bin, err = testenv.PiscesBinary(); err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	code := m.Run()
	testenv.Cleanup()
	os.Exit(code)
}

func writeScript(t *testing.T, s string) string {
	p := filepath.Join(t.TempDir(), "script.json")
	if err := os.WriteFile(p, []byte(s), 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

func run(t *testing.T, stdin string, args ...string) (string, string, int) {
	t.Helper()
	cmd := exec.Command(bin, append([]string{"--agent-dir", t.TempDir()}, args...)...)
	cmd.Stdin = strings.NewReader(stdin)
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	err := cmd.Run()
	code := 0
	if ee, ok := err.(*exec.ExitError); ok {
		code = ee.ExitCode()
	} else if err != nil {
		t.Fatal(err)
	}
	return out.String(), errb.String(), code
}

// README.md's json-mode command prints the session header, then the whole
// event stream of a tool turn.
func TestReadmeJSONModeCommand(t *testing.T) {
	out, stderr, code := run(t, "", "--no-session", "--mode", "json", "--provider", "scripted", "--script", "../../examples/echo-hi.json", "run echo hi")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	var types []string
	for _, l := range strings.Split(strings.TrimSpace(out), "\n") {
		var ev struct {
			Type string `json:"type"`
		}
		if err := json.Unmarshal([]byte(l), &ev); err != nil {
			t.Fatalf("not JSON: %q", l)
		}
		types = append(types, ev.Type)
	}
	got := strings.Join(types, " ")
	if !strings.HasPrefix(got, "session agent_start ") {
		t.Errorf("the stream does not start with the session header and agent_start:\n%s", got)
	}
	for _, want := range []string{"agent_start turn_start message_start message_end", "tool_execution_start", "tool_execution_end", "turn_end turn_start", "agent_end agent_settled"} {
		if !strings.Contains(got, want) {
			t.Errorf("event stream lacks %q:\n%s", want, got)
		}
	}
	if !strings.Contains(out, `"text":"hi\n"`) {
		t.Errorf("the bash result is missing")
	}
}

func TestPrintModePrintsOnlyTheAnswer(t *testing.T) {
	out, stderr, code := run(t, "", "--no-session", "-p", "--script", "../../examples/echo-hi.json", "run echo hi")
	if code != 0 || out != "The command printed: hi\n" {
		t.Fatalf("exit %d, stdout %q, stderr %q", code, out, stderr)
	}
}

func TestBadFlagsExit2(t *testing.T) {
	for _, args := range [][]string{
		{"--bogus"},
		{"--mode", "tui"},
		{"--thinking", "extreme"},
		{"--model"},
		{"--provider", "scripted"},
		{"--mode", "rpc", "--script", "../../examples/echo-hi.json", "hello"},
	} {
		out, stderr, code := run(t, "", args...)
		if code != 2 {
			t.Errorf("%v: exit %d, want 2 (stderr %q)", args, code, stderr)
		}
		if out != "" || strings.Count(strings.TrimSpace(stderr), "\n") != 0 || stderr == "" {
			t.Errorf("%v: want one line on stderr, got stdout %q stderr %q", args, out, stderr)
		}
	}
}

func TestVersionAndHelp(t *testing.T) {
	out, _, code := run(t, "", "--version")
	if code != 0 || !strings.HasPrefix(out, "pisces ") {
		t.Fatalf("version: %d %q", code, out)
	}
	out, _, code = run(t, "", "--help")
	if code != 0 || !strings.Contains(out, "--mode") {
		t.Fatalf("help: %d", code)
	}
	// Flags of pi's terminal UI are accepted and ignored.
	_, stderr, code := run(t, "", "--theme", "dark", "--no-themes", "--tui-mode", "fullscreen", "--version")
	if code != 0 {
		t.Fatalf("tui flags: %d %s", code, stderr)
	}
}

func TestRPCExitsZeroOnEOFAfterTheWork(t *testing.T) {
	script := writeScript(t, `{"turns":[{"content":[{"type":"text","text":"done"}],"delayMs":100}]}`)
	out, stderr, code := run(t, `{"id":"p","type":"prompt","message":"hi"}`, "--mode", "rpc", "--no-session", "--script", script)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	first, _, _ := strings.Cut(out, "\n")
	if !strings.HasPrefix(first, `{"type":"ready"`) || !strings.Contains(out, `"type":"agent_settled"`) || !strings.Contains(out, `"text":"done"`) {
		t.Fatalf("output:\n%s", out)
	}
}

// A custom provider in models.json pointing at an OpenAI-compatible server
// works in RPC mode: the request reaches the server with the model id and
// the key from models.json, and the streamed answer comes back.
func TestModelsJSONCustomProviderInRPCMode(t *testing.T) {
	var gotAuth, gotModel, gotPath string
	srv := newSSEServer(t, func(path, auth string, body map[string]any) []string {
		gotPath, gotAuth = path, auth
		gotModel, _ = body["model"].(string)
		chunk := func(delta string, finish any) string {
			b, _ := json.Marshal(map[string]any{"id": "c1", "object": "chat.completion.chunk", "model": gotModel,
				"choices": []any{map[string]any{"index": 0, "delta": map[string]any{"content": delta}, "finish_reason": finish}}})
			return string(b)
		}
		return []string{chunk("Hi ", nil), chunk("there", nil), chunk("", "stop"),
			`{"id":"c1","object":"chat.completion.chunk","choices":[],"usage":{"prompt_tokens":7,"completion_tokens":2,"total_tokens":9}}`, "[DONE]"}
	})
	dir := t.TempDir()
	models := `{"providers":{"mylocal":{"baseUrl":"` + srv + `/v1","api":"openai-completions","apiKey":"secret-key","models":[{"id":"my-model","contextWindow":32000}]}}}`
	if err := os.WriteFile(filepath.Join(dir, "models.json"), []byte(models), 0o644); err != nil {
		t.Fatal(err)
	}
	out, stderr, code := runIn(t, dir, `{"id":"p","type":"prompt","message":"hello"}`+"\n", "--mode", "rpc", "--no-session", "--model", "mylocal/my-model")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	if gotPath != "/v1/chat/completions" || gotAuth != "Bearer secret-key" || gotModel != "my-model" {
		t.Fatalf("request: path %q auth %q model %q", gotPath, gotAuth, gotModel)
	}
	if !strings.Contains(out, `"content":[{"type":"text","text":"Hi there"}]`) || !strings.Contains(out, `"type":"agent_settled"`) {
		t.Fatalf("output:\n%s", out)
	}
}

func runIn(t *testing.T, agentDir, stdin string, args ...string) (string, string, int) {
	t.Helper()
	cmd := exec.Command(bin, append([]string{"--agent-dir", agentDir}, args...)...)
	cmd.Stdin = strings.NewReader(stdin)
	cmd.Env = append(os.Environ(), "OPENAI_API_KEY=", "ANTHROPIC_API_KEY=", "GEMINI_API_KEY=")
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	err := cmd.Run()
	code := 0
	if ee, ok := err.(*exec.ExitError); ok {
		code = ee.ExitCode()
	} else if err != nil {
		t.Fatal(err)
	}
	return out.String(), errb.String(), code
}

// newSSEServer starts a local server that answers every POST with the
// given SSE data lines.
func newSSEServer(t *testing.T, answer func(path, auth string, body map[string]any) []string) string {
	t.Helper()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var body map[string]any
		json.NewDecoder(r.Body).Decode(&body)
		lines := answer(r.URL.Path, r.Header.Get("Authorization"), body)
		w.Header().Set("Content-Type", "text/event-stream")
		for _, l := range lines {
			io.WriteString(w, "data: "+l+"\n\n")
		}
	}))
	t.Cleanup(srv.Close)
	return srv.URL
}
