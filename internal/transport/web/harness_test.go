package web

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/coder/websocket"

	"github.com/pisces-agent/pisces/internal/ai"
	"github.com/pisces-agent/pisces/internal/ai/scripted"
	"github.com/pisces-agent/pisces/internal/core"
	"github.com/pisces-agent/pisces/internal/models"
	"github.com/pisces-agent/pisces/internal/resources"
	"github.com/pisces-agent/pisces/internal/session"
	"github.com/pisces-agent/pisces/internal/sessions"
	"github.com/pisces-agent/pisces/internal/settings"
	"github.com/pisces-agent/pisces/internal/tools"
	rpcmode "github.com/pisces-agent/pisces/internal/transport/rpc"
)

// waitLimit bounds every wait: generous, so that a loaded two-core machine
// running -race still passes.
const waitLimit = 30 * time.Second

const testToken = "test-token-0123456789abcdef"

// testServer is a web mode server over the scripted provider, listening
// on a free loopback port.
type testServer struct {
	t     *testing.T
	srv   *Server
	dir   string
	base  string // http://127.0.0.1:port
	ws    string // ws://127.0.0.1:port/ws
	trust *resources.TrustDecider
}

// newTestServer starts a server whose sessions answer with script (a
// scripted provider's JSON); mod may change the options first.
func newTestServer(t *testing.T, script string, mod func(*Options)) *testServer {
	t.Helper()
	return newTestServerTools(t, script, nil, mod)
}

// newTestServerTools is newTestServer with tls as the sessions' tools (all
// of them active; nil: the defaults, of which none is provided).
func newTestServerTools(t *testing.T, script string, tls []tools.Tool, mod func(*Options)) *testServer {
	t.Helper()
	dir := t.TempDir()
	p, err := scripted.Parse([]byte(script), "test")
	if err != nil {
		t.Fatal(err)
	}
	reg := models.NewRegistry()
	reg.Add(&models.ProviderEntry{Name: scripted.ProviderName, Provider: p, Models: []*ai.Model{p.Model()}, NoKey: true})
	agentDir := filepath.Join(dir, "agent")
	sessDir := filepath.Join(dir, "sessions")
	trust := resources.NewTrustDecider(agentDir, nil, "")
	build := func(req sessions.BuildRequest) (*sessions.Built, error) {
		st, err := settings.Load(agentDir, "")
		if err != nil {
			return nil, err
		}
		d, _ := trust.Known(req.Store.Cwd())
		var active []string
		for _, tl := range tls {
			active = append(active, tl.Name())
		}
		s, err := core.New(core.Options{
			Tools: tls, ActiveTools: active,
			AgentDir: agentDir, Cwd: req.Store.Cwd(), Settings: st, Models: reg, Store: req.Store,
			SessionDir: sessDir, Model: p.Model(), PreferStored: !req.Initial, Trusted: d.Trusted, Trust: trust,
			SystemPrompt: "You are a test agent.", NoContextFiles: true, Log: io.Discard,
		})
		if err != nil {
			return nil, err
		}
		return &sessions.Built{Core: s}, nil
	}
	opts := Options{
		Host:     "127.0.0.1",
		Port:     0,
		Token:    testToken,
		Sessions: sessions.Options{Build: build, Grace: -1},
		RPC:      rpcmode.Options{Stderr: io.Discard},
		Log:      io.Discard,
	}
	if mod != nil {
		mod(&opts)
	}
	srv, err := New(opts, func(m *sessions.Manager) (*sessions.Live, error) {
		st, err := session.New(session.Options{Dir: sessDir, Cwd: dir})
		if err != nil {
			return nil, err
		}
		return m.Adopt(st)
	})
	if err != nil {
		t.Fatal(err)
	}
	go srv.Serve()
	t.Cleanup(srv.Shutdown)
	addr := srv.Addr().String()
	return &testServer{t: t, srv: srv, dir: dir, base: "http://" + addr, ws: "ws://" + addr + "/ws", trust: trust}
}

// gateTool is a tool whose calls run until release is closed (or the call
// is aborted): a run that is still going for as long as a test needs.
type gateTool struct{ release chan struct{} }

func (g gateTool) Name() string                { return "gate" }
func (g gateTool) Description() string         { return "Waits until the test opens the gate" }
func (g gateTool) Parameters() json.RawMessage { return json.RawMessage(`{"type":"object"}`) }
func (g gateTool) Execute(ctx context.Context, c tools.Call) (tools.Result, error) {
	select {
	case <-g.release:
		return tools.TextResult("opened"), nil
	case <-ctx.Done():
		return tools.ErrorResult("aborted"), nil
	}
}

// client is a WebSocket client that records every frame it reads.
type client struct {
	t    *testing.T
	c    *websocket.Conn
	mu   sync.Mutex
	cond *sync.Cond
	got  []map[string]any
	raw  []string
	err  error // why reading stopped
	n    int
}

// dial connects with the token in the query (extra is appended to it).
func (ts *testServer) dial(extra string) *client {
	ts.t.Helper()
	c, err := ts.tryDial(ts.ws+"?token="+testToken+extra, nil)
	if err != nil {
		ts.t.Fatal(err)
	}
	return c
}

// tryDial connects to url with headers and starts reading.
func (ts *testServer) tryDial(url string, h http.Header) (*client, error) {
	ctx, cancel := context.WithTimeout(context.Background(), waitLimit)
	defer cancel()
	c, resp, err := websocket.Dial(ctx, url, &websocket.DialOptions{HTTPHeader: h})
	if err != nil {
		if resp != nil {
			return nil, fmt.Errorf("status %d: %w", resp.StatusCode, err)
		}
		return nil, err
	}
	c.SetReadLimit(64 << 20)
	cl := &client{t: ts.t, c: c}
	cl.cond = sync.NewCond(&cl.mu)
	ts.t.Cleanup(func() { c.CloseNow() })
	go cl.read()
	return cl, nil
}

func (cl *client) read() {
	for {
		_, b, err := cl.c.Read(context.Background())
		cl.mu.Lock()
		if err != nil {
			cl.err = err
			cl.cond.Broadcast()
			cl.mu.Unlock()
			return
		}
		var m map[string]any
		if jerr := json.Unmarshal(b, &m); jerr != nil {
			cl.err = fmt.Errorf("frame is not a JSON object: %q", b)
			cl.cond.Broadcast()
			cl.mu.Unlock()
			return
		}
		cl.got = append(cl.got, m)
		cl.raw = append(cl.raw, string(b))
		cl.cond.Broadcast()
		cl.mu.Unlock()
	}
}

// send writes one text frame.
func (cl *client) send(frame string) {
	cl.t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), waitLimit)
	defer cancel()
	if err := cl.c.Write(ctx, websocket.MessageText, []byte(frame)); err != nil {
		cl.t.Fatal(err)
	}
}

// waitFor blocks until pred holds for one frame read so far, and returns
// it.
func (cl *client) waitFor(what string, pred func(map[string]any) bool) map[string]any {
	cl.t.Helper()
	return cl.waitNth(what, pred, 1)
}

// waitNth blocks until pred holds for n (1-based) of the frames read so
// far, and returns the nth. Every pass counts from the first frame.
func (cl *client) waitNth(what string, pred func(map[string]any) bool, n int) map[string]any {
	cl.t.Helper()
	deadline := time.Now().Add(waitLimit)
	timer := time.AfterFunc(waitLimit, func() {
		cl.mu.Lock()
		cl.cond.Broadcast()
		cl.mu.Unlock()
	})
	defer timer.Stop()
	cl.mu.Lock()
	defer cl.mu.Unlock()
	for {
		seen := 0
		for _, m := range cl.got {
			if pred(m) {
				if seen++; seen == n {
					return m
				}
			}
		}
		if cl.err != nil || time.Now().After(deadline) {
			cl.t.Fatalf("no %s (read error: %v); frames:\n%s", what, cl.err, strings.Join(shorten(cl.raw), "\n"))
		}
		cl.cond.Wait()
	}
}

// waitClosed blocks until reading stopped and returns why.
func (cl *client) waitClosed() error {
	cl.t.Helper()
	deadline := time.Now().Add(waitLimit)
	timer := time.AfterFunc(waitLimit, func() {
		cl.mu.Lock()
		cl.cond.Broadcast()
		cl.mu.Unlock()
	})
	defer timer.Stop()
	cl.mu.Lock()
	defer cl.mu.Unlock()
	for cl.err == nil {
		if time.Now().After(deadline) {
			cl.t.Fatal("the connection was not closed")
		}
		cl.cond.Wait()
	}
	return cl.err
}

// response waits for the response to id.
func (cl *client) response(id string) map[string]any {
	cl.t.Helper()
	return cl.waitFor("response "+id, func(m map[string]any) bool { return m["type"] == "response" && m["id"] == id })
}

// event waits for the nth (1-based) frame of type typ.
func (cl *client) event(typ string, n int) map[string]any {
	cl.t.Helper()
	return cl.waitNth(fmt.Sprintf("%s #%d", typ, n), ofType(typ), n)
}

// count returns how many frames read so far satisfy pred.
func (cl *client) count(pred func(map[string]any) bool) int {
	cl.mu.Lock()
	defer cl.mu.Unlock()
	n := 0
	for _, m := range cl.got {
		if pred(m) {
			n++
		}
	}
	return n
}

func ofType(typ string) func(map[string]any) bool {
	return func(m map[string]any) bool { return m["type"] == typ }
}

// call sends a command with an id and waits for its response.
func (cl *client) call(id, frame string) map[string]any {
	cl.t.Helper()
	cl.send(frame)
	return cl.response(id)
}

func data(m map[string]any) map[string]any {
	d, _ := m["data"].(map[string]any)
	return d
}

// get fetches a URL with the default client (no redirects followed).
func get(t *testing.T, url string, h http.Header) (*http.Response, string) {
	t.Helper()
	req, err := http.NewRequest(http.MethodGet, url, nil)
	if err != nil {
		t.Fatal(err)
	}
	for k, v := range h {
		req.Header[k] = v
	}
	c := &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }, Timeout: waitLimit}
	resp, err := c.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp, string(b)
}

// statusOf returns the HTTP status of a refused handshake's error.
func statusOf(err error) string {
	if err == nil {
		return "accepted"
	}
	var s string
	if _, e := fmt.Sscanf(err.Error(), "status %s", &s); e == nil {
		return strings.TrimSuffix(s, ":")
	}
	return err.Error()
}

func writeFile(t *testing.T, path, content string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
}

// shorten cuts long frames for failure messages.
func shorten(frames []string) []string {
	out := make([]string, len(frames))
	for i, f := range frames {
		if len(f) > 300 {
			f = f[:300] + fmt.Sprintf("… (%d bytes)", len(f))
		}
		out[i] = f
	}
	return out
}
