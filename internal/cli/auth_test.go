package cli_test

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/pisces-agent/pisces/internal/auth"
	"github.com/pisces-agent/pisces/internal/auth/authtest"
	"github.com/pisces-agent/pisces/internal/cli"
	"github.com/pisces-agent/pisces/internal/testenv"
)

// session runs cli.Main with piped stdin and stdout, so that a test can
// answer what the command asks.
type session struct {
	t     *testing.T
	in    *io.PipeWriter
	lines chan string
	done  chan int
	mu    sync.Mutex
	out   []string
	errb  bytes.Buffer
}

func startSession(t *testing.T, args ...string) *session {
	inR, inW := io.Pipe()
	outR, outW := io.Pipe()
	s := &session{t: t, in: inW, lines: make(chan string, 100), done: make(chan int, 1)}
	go func() {
		sc := bufio.NewScanner(outR)
		for sc.Scan() {
			s.mu.Lock()
			s.out = append(s.out, sc.Text())
			s.mu.Unlock()
			s.lines <- sc.Text()
		}
		close(s.lines)
	}()
	go func() {
		code := cli.Main(args, cli.IO{Stdin: inR, Stdout: outW, Stderr: &lockedBuffer{b: &s.errb, mu: &s.mu}})
		outW.Close()
		s.done <- code
	}()
	return s
}

type lockedBuffer struct {
	b  *bytes.Buffer
	mu *sync.Mutex
}

func (l *lockedBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

// waitLine waits for an output line containing text and returns it.
func (s *session) waitLine(text string) string {
	s.t.Helper()
	timeout := time.After(time.Minute)
	for {
		select {
		case l, ok := <-s.lines:
			if !ok {
				s.t.Fatalf("output ended before %q; stderr: %s", text, s.stderr())
			}
			if strings.Contains(l, text) {
				return l
			}
		case <-timeout:
			s.t.Fatalf("no line with %q", text)
		}
	}
}

func (s *session) stderr() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.errb.String()
}

func (s *session) send(line string) {
	if _, err := io.WriteString(s.in, line+"\n"); err != nil {
		s.t.Fatal(err)
	}
}

func (s *session) wait() int {
	s.t.Helper()
	for range s.lines {
	}
	select {
	case code := <-s.done:
		return code
	case <-time.After(time.Minute):
		s.t.Fatal("the command did not end")
		return -1
	}
}

func authWorld(t *testing.T) (*world, *authtest.Server) {
	w := newWorld(t)
	srv := authtest.New(t)
	t.Setenv(auth.ServerEnv, srv.URL)
	t.Setenv("BROWSER", "")
	t.Setenv("DISPLAY", "")
	t.Setenv("WAYLAND_DISPLAY", "")
	for _, v := range []string{"ANTHROPIC_API_KEY", "ANTHROPIC_OAUTH_TOKEN", "ANTHROPIC_AUTH_TOKEN", "OPENAI_API_KEY"} {
		t.Setenv(v, "")
	}
	return w, srv
}

func readAuth(t *testing.T, w *world) map[string]map[string]any {
	t.Helper()
	data, err := os.ReadFile(filepath.Join(w.agentDir, "auth.json"))
	if err != nil {
		t.Fatal(err)
	}
	var m map[string]map[string]any
	if err := json.Unmarshal(data, &m); err != nil {
		t.Fatalf("%v: %s", err, data)
	}
	return m
}

// TestAuthLoginCopyCode: the picker, then Anthropic's copy-code method:
// the user opens the printed address elsewhere and pastes code#state.
func TestAuthLoginCopyCode(t *testing.T) {
	w, srv := authWorld(t)
	os.RemoveAll(w.agentDir) // created on login, 0700
	s := startSession(t, "auth", "login", "--no-browser", "--agent-dir", w.agentDir)
	s.waitLine("Anthropic (Claude Pro/Max) (anthropic)")
	s.waitLine("Number or name")
	s.send("1")
	s.waitLine("Open this address")
	authURL := s.waitLine("/oauth/authorize?")
	// Anthropic's page shows code#state; the fake server redirects there.
	noFollow := &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	resp, err := noFollow.Get(authURL)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	loc, _ := url.Parse(resp.Header.Get("Location"))
	if loc.Host != "platform.claude.com" {
		t.Fatalf("redirect %s", loc)
	}
	s.send(loc.Query().Get("code") + "#" + loc.Query().Get("state"))
	s.waitLine("Logged in to Anthropic")
	if code := s.wait(); code != 0 {
		t.Fatalf("exit %d: %s", code, s.stderr())
	}
	a := readAuth(t, w)["anthropic"]
	if a["type"] != "oauth" || !srv.Live(a["refresh"].(string)) || !strings.HasPrefix(a["access"].(string), "sk-ant-oat01-") {
		t.Fatalf("stored %v", a)
	}
	if runtime.GOOS != "windows" {
		fi, _ := os.Stat(filepath.Join(w.agentDir, "auth.json"))
		di, _ := os.Stat(w.agentDir)
		if fi.Mode().Perm() != 0o600 || di.Mode().Perm() != 0o700 {
			t.Errorf("modes %v %v", fi.Mode().Perm(), di.Mode().Perm())
		}
	}
}

// TestAuthLoginDevice: Codex's device code on the command line, with real
// polling (the fake server asks for 1 s).
func TestAuthLoginDevice(t *testing.T) {
	w, srv := authWorld(t)
	srv.Set(func(s *authtest.Server) { s.Interval = 1 })
	s := startSession(t, "auth", "login", "openai-codex", "--no-browser", "--agent-dir", w.agentDir)
	s.waitLine("enter the code ABCD-1234")
	if code := s.wait(); code != 0 {
		t.Fatalf("exit %d: %s", code, s.stderr())
	}
	if a := readAuth(t, w)["openai-codex"]; a["accountId"] != "acct-123" {
		t.Fatalf("stored %v", a)
	}
}

// TestAuthLoginBrowser: the loopback callback, with $BROWSER standing for
// the browser (a command that fetches the address and follows the
// redirect to the callback).
func TestAuthLoginBrowser(t *testing.T) {
	w, _ := authWorld(t)
	if runtime.GOOS == "windows" {
		t.Skip("the stand-in browser is a shell script")
	}
	// Anthropic's preferred port may be taken on a busy machine; Pisces
	// then falls back to a free one, which the redirect names.
	opened := make(chan string, 1)
	browser := httptest.NewServer(http.HandlerFunc(func(rw http.ResponseWriter, r *http.Request) {
		opened <- r.URL.Query().Get("u")
	}))
	defer browser.Close()
	script := filepath.Join(w.root, "browser.sh")
	os.WriteFile(script, []byte("#!/bin/sh\nexec curl -s -G --data-urlencode \"u=$1\" "+browser.URL+" >/dev/null\n"), 0o755)
	testenv.LookPath(t, "curl")
	t.Setenv("BROWSER", script)
	s := startSession(t, "auth", "login", "anthropic", "--agent-dir", w.agentDir)
	var u string
	select {
	case u = <-opened:
	case <-time.After(time.Minute):
		t.Fatalf("no browser opened; stderr %s", s.stderr())
	}
	resp, err := http.Get(u) // the browser follows the redirect to the callback
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != 200 || !strings.Contains(string(body), "Logged in") {
		t.Fatalf("callback answered %d %s", resp.StatusCode, body)
	}
	s.in.Close()
	if code := s.wait(); code != 0 {
		t.Fatalf("exit %d: %s", code, s.stderr())
	}
	if a := readAuth(t, w)["anthropic"]; a["type"] != "oauth" {
		t.Fatalf("stored %v", a)
	}
}

func writeLogin(t *testing.T, w *world, srv *authtest.Server, provider string, expires time.Time) string {
	t.Helper()
	refresh := srv.IssueRefresh(provider)
	data := fmt.Sprintf(`{
  "google-gemini-cli": {"type": "oauth", "refresh": "g", "access": "ga", "expires": 1, "projectId": "p"},
  %q: {"type": "oauth", "refresh": %q, "access": "sk-ant-oat01-old", "expires": %d}
}`, provider, refresh, expires.UnixMilli())
	if err := os.WriteFile(filepath.Join(w.agentDir, "auth.json"), []byte(data), 0o600); err != nil {
		t.Fatal(err)
	}
	return refresh
}

func TestAuthCheckAndPrint(t *testing.T) {
	w, srv := authWorld(t)
	dir := []string{"--agent-dir", w.agentDir}
	run := func(args ...string) result { return w.runIO("", false, append(args, dir...)...) }

	r := run("auth", "check", "--provider", "anthropic")
	must(t, r, 1)
	if !strings.Contains(r.stdout, "not_ready anthropic") || !strings.Contains(r.stdout, "pisces auth login anthropic") {
		t.Errorf("check: %s", r.stdout)
	}

	writeLogin(t, w, srv, "anthropic", time.Now().Add(-time.Minute))
	r = run("auth", "check", "--provider", "anthropic", "--no-refresh", "--json")
	must(t, r, 1)
	if !strings.Contains(r.stdout, `"status":"not_ready"`) || strings.Contains(r.stdout, "sk-ant") {
		t.Errorf("check --no-refresh: %s", r.stdout)
	}
	r = run("auth", "check", "--model", "anthropic/claude-sonnet-4-6", "--json")
	must(t, r, 0)
	var cr map[string]any
	json.Unmarshal([]byte(r.stdout), &cr)
	if cr["status"] != "ready" || cr["credential"] != "oauth" || cr["model"] != "claude-sonnet-4-6" || strings.Contains(r.stdout, "sk-ant") {
		t.Errorf("check: %s", r.stdout)
	}
	if srv.Refreshes("anthropic") != 1 {
		t.Errorf("%d refreshes", srv.Refreshes("anthropic"))
	}
	stored := readAuth(t, w)
	if stored["google-gemini-cli"]["projectId"] != "p" {
		t.Errorf("the old Google entry changed: %v", stored["google-gemini-cli"])
	}

	// print-bearer-token: valid for 55 min, so --min-expiry 30m prints it
	// as is and 2h refreshes (and still fails: the new one lasts 55 min).
	r = run("auth", "print-bearer-token", "--provider", "anthropic")
	must(t, r, 0)
	if strings.TrimSpace(r.stdout) != stored["anthropic"]["access"] {
		t.Errorf("print-bearer-token: %q", r.stdout)
	}
	r = run("auth", "print-bearer-token", "--provider", "anthropic", "--min-expiry", "2h")
	must(t, r, 1)
	if !strings.Contains(r.stderr, "valid for less than 2h0m0s") || srv.Refreshes("anthropic") != 2 {
		t.Errorf("--min-expiry 2h: %s (%d refreshes)", r.stderr, srv.Refreshes("anthropic"))
	}
	r = run("auth", "print-api-key", "--provider", "anthropic")
	must(t, r, 0)
	if !strings.HasPrefix(r.stdout, "sk-ant-oat01-") {
		t.Errorf("print-api-key: %q", r.stdout)
	}

	// A refresh the vendor refuses: invalid, exit 2, the login kept.
	writeLogin(t, w, srv, "anthropic", time.Now().Add(-time.Minute))
	srv.Set(func(s *authtest.Server) { s.FailRefresh = true })
	r = run("auth", "check", "--provider", "anthropic")
	must(t, r, 2)
	if !strings.Contains(r.stdout, "invalid anthropic: OAuth refresh failed for anthropic") {
		t.Errorf("check: %s", r.stdout)
	}
	if readAuth(t, w)["anthropic"]["access"] != "sk-ant-oat01-old" {
		t.Error("the failed refresh changed the login")
	}

	r = run("auth", "status")
	must(t, r, 0)
	if !strings.Contains(r.stdout, "anthropic: logged in") || strings.Contains(r.stdout, "sk-ant") {
		t.Errorf("status: %s", r.stdout)
	}
	r = run("auth", "logout", "anthropic")
	must(t, r, 0)
	if _, ok := readAuth(t, w)["anthropic"]; ok {
		t.Error("logout left the entry")
	}
	r = run("auth", "logout", "anthropic")
	must(t, r, 0)
	if !strings.Contains(r.stdout, "Nothing stored") {
		t.Errorf("second logout: %s", r.stdout)
	}
	r = run("auth", "login", "nosuch")
	must(t, r, 2)

	t.Setenv("OPENAI_API_KEY", "sk-env-secret")
	r = run("auth", "check", "--provider", "openai", "--json")
	must(t, r, 0)
	if !strings.Contains(r.stdout, `"credential":"environment"`) || strings.Contains(r.stdout, "sk-env-secret") {
		t.Errorf("check openai: %s", r.stdout)
	}
}

// TestRunWithExpiredLogin: a run with an expired Anthropic login refreshes
// it and sends the new token the way Claude subscriptions take it.
func TestRunWithExpiredLogin(t *testing.T) {
	w, srv := authWorld(t)
	writeLogin(t, w, srv, "anthropic", time.Now().Add(-time.Minute))
	var mu sync.Mutex
	var got http.Header
	var body []byte
	api := httptest.NewServer(http.HandlerFunc(func(rw http.ResponseWriter, r *http.Request) {
		mu.Lock()
		got = r.Header.Clone()
		body, _ = io.ReadAll(r.Body)
		mu.Unlock()
		rw.Header().Set("Content-Type", "text/event-stream")
		for _, ev := range []string{
			`{"type":"message_start","message":{"id":"msg_1","type":"message","role":"assistant","model":"claude-sonnet-4-6","content":[],"stop_reason":null,"usage":{"input_tokens":3,"output_tokens":1}}}`,
			`{"type":"content_block_start","index":0,"content_block":{"type":"text","text":""}}`,
			`{"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":"hello from claude"}}`,
			`{"type":"content_block_stop","index":0}`,
			`{"type":"message_delta","delta":{"stop_reason":"end_turn"},"usage":{"output_tokens":4}}`,
			`{"type":"message_stop"}`,
		} {
			var typ struct{ Type string }
			json.Unmarshal([]byte(ev), &typ)
			fmt.Fprintf(rw, "event: %s\ndata: %s\n\n", typ.Type, ev)
		}
	}))
	defer api.Close()
	os.WriteFile(filepath.Join(w.agentDir, "models.json"), []byte(`{"providers": {"anthropic": {"baseUrl": "`+api.URL+`"}}}`), 0o600)
	r := w.runIO("", true, "-p", "--agent-dir", w.agentDir, "--no-session", "--model", "anthropic/claude-sonnet-4-6", "--no-tools", "hi")
	must(t, r, 0)
	if !strings.Contains(r.stdout, "hello from claude") {
		t.Fatalf("stdout %q stderr %q", r.stdout, r.stderr)
	}
	access := readAuth(t, w)["anthropic"]["access"].(string)
	mu.Lock()
	defer mu.Unlock()
	if access == "sk-ant-oat01-old" || got.Get("Authorization") != "Bearer "+access || got.Get("x-api-key") != "" {
		t.Fatalf("sent Authorization %q x-api-key %q; stored %q", got.Get("Authorization"), got.Get("x-api-key"), access)
	}
	if !strings.Contains(got.Get("anthropic-beta"), "oauth-2025-04-20") || !strings.Contains(string(body), "You are Claude Code, Anthropic's official CLI for Claude.") {
		t.Fatalf("beta %q body %s", got.Get("anthropic-beta"), body)
	}
}
