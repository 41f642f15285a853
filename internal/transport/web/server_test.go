package web

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/coder/websocket"
)

const helloScript = `{"turns":[{"content":[{"type":"text","text":"hello there"}]},{"content":[{"type":"text","text":"second answer"}]}]}`

func TestHealth(t *testing.T) {
	ts := newTestServer(t, helloScript, nil)
	resp, body := get(t, ts.base+"/health", nil)
	if resp.StatusCode != 200 || body != `{"status":"ok","clients":0}` || resp.Header.Get("Content-Type") != "application/json" {
		t.Fatalf("/health: %d %s %q", resp.StatusCode, resp.Header.Get("Content-Type"), body)
	}
	cl := ts.dial("")
	cl.event("ready", 1)
	if _, body := get(t, ts.base+"/health", nil); body != `{"status":"ok","clients":1}` {
		t.Fatalf("/health with one client: %s", body)
	}
}

func TestTokenIsNeeded(t *testing.T) {
	ts := newTestServer(t, helloScript, nil)
	cases := []struct {
		name string
		url  string
		h    http.Header
		want string
	}{
		{"none", ts.ws, nil, "401"},
		{"wrong query", ts.ws + "?token=wrong-token-0123456789abcdef", nil, "401"},
		{"wrong bearer", ts.ws, http.Header{"Authorization": {"Bearer nope"}}, "401"},
		{"wrong cookie", ts.ws, http.Header{"Cookie": {"pisces_token_1=" + testToken}}, "401"},
		{"query", ts.ws + "?token=" + testToken, nil, "accepted"},
		{"bearer", ts.ws, http.Header{"Authorization": {"Bearer " + testToken}}, "accepted"},
	}
	for _, c := range cases {
		cl, err := ts.tryDial(c.url, c.h)
		if got := statusOf(err); got != c.want {
			t.Errorf("%s: got %s, want %s", c.name, got, c.want)
		}
		if cl != nil {
			cl.event("ready", 1)
		}
	}
}

// Opening the page with the token sets an HttpOnly, SameSite=Strict cookie
// named for the port and redirects to the same address without the token,
// keeping the other parameters; the cookie then opens the WebSocket.
func TestPageTokenBecomesCookie(t *testing.T) {
	ts := newTestServer(t, helloScript, nil)
	resp, _ := get(t, ts.base+"/?session=abc&token="+testToken+"&ws=x", nil)
	if resp.StatusCode != http.StatusSeeOther || resp.Header.Get("Location") != "/?session=abc&ws=x" {
		t.Fatalf("page with token: %d, Location %q", resp.StatusCode, resp.Header.Get("Location"))
	}
	var cookie *http.Cookie
	for _, c := range resp.Cookies() {
		if c.Name == ts.srv.cookieName() {
			cookie = c
		}
	}
	if cookie == nil || cookie.Value != testToken || !cookie.HttpOnly || cookie.SameSite != http.SameSiteStrictMode || cookie.Path != "/" {
		t.Fatalf("cookie: %+v (all: %v)", cookie, resp.Cookies())
	}
	if !strings.Contains(cookie.Name, strings.TrimPrefix(ts.base[strings.LastIndex(ts.base, ":"):], ":")) {
		t.Fatalf("cookie %s is not named for the port of %s", cookie.Name, ts.base)
	}
	cl, err := ts.tryDial(ts.ws, http.Header{"Cookie": {cookie.Name + "=" + cookie.Value}})
	if err != nil {
		t.Fatalf("cookie refused: %v", err)
	}
	cl.event("ready", 1)

	// A wrong token sets nothing (and is dropped from the address too).
	resp, _ = get(t, ts.base+"/?token=wrong", nil)
	if len(resp.Cookies()) != 0 || resp.Header.Get("Location") != "/" {
		t.Fatalf("wrong token: cookies %v, Location %q", resp.Cookies(), resp.Header.Get("Location"))
	}
	// The page says how to get in when the browser has no token.
	_, body := get(t, ts.base+"/", nil)
	if !strings.Contains(body, "does not hold the access token") || !strings.Contains(body, "?token=") {
		t.Fatalf("page without cookie does not say how to get in:\n%s", body)
	}
	_, body = get(t, ts.base+"/", http.Header{"Cookie": {cookie.Name + "=" + cookie.Value}})
	if !strings.Contains(body, "holds the access token") {
		t.Fatalf("page with cookie:\n%s", body)
	}
	// A page asks GET /ws (no upgrade) why its handshake was refused:
	// 401 without a valid token, 426 with one.
	if resp, _ := get(t, ts.ws2http(), nil); resp.StatusCode != http.StatusUnauthorized {
		t.Errorf("GET /ws without a token: %d, want 401", resp.StatusCode)
	}
	if resp, _ := get(t, ts.ws2http(), http.Header{"Cookie": {cookie.Name + "=" + cookie.Value}}); resp.StatusCode != http.StatusUpgradeRequired {
		t.Errorf("GET /ws with the cookie: %d, want 426", resp.StatusCode)
	}
}

// ws2http is the WebSocket's address as a plain HTTP one.
func (ts *testServer) ws2http() string { return ts.base + "/ws" }

func TestOrigin(t *testing.T) {
	ts := newTestServer(t, helloScript, func(o *Options) {
		o.AllowedOrigins = []string{"https://agent.example.com"}
	})
	own := ts.base
	cases := []struct {
		origin, want string
	}{
		{own, "accepted"},
		{"https://agent.example.com", "accepted"},
		{"https://evil.example.com", "403"},
		{"http://localhost" + own[strings.LastIndex(own, ":"):], "403"}, // another name for the same server is another origin
		{"null", "403"},
		{"https://agent.example.com.evil.com", "403"},
	}
	for _, c := range cases {
		cl, err := ts.tryDial(ts.ws+"?token="+testToken, http.Header{"Origin": {c.origin}})
		if got := statusOf(err); got != c.want {
			t.Errorf("origin %s: got %s, want %s", c.origin, got, c.want)
		}
		if cl != nil {
			cl.event("ready", 1)
		}
	}
	// A foreign origin is refused even with the right token; no Origin at
	// all (not a browser) still needs the token.
	if _, err := ts.tryDial(ts.ws, nil); statusOf(err) != "401" {
		t.Errorf("no origin, no token: %v", err)
	}
}

func TestNoTokenNeedsLoopbackHost(t *testing.T) {
	ts := newTestServer(t, helloScript, func(o *Options) { o.Token, o.NoToken = "", true })
	cl, err := ts.tryDial(ts.ws, nil)
	if err != nil {
		t.Fatalf("loopback without token: %v", err)
	}
	cl.event("ready", 1)
	port := ts.base[strings.LastIndex(ts.base, ":"):]
	for _, host := range []string{"rebound.example.com" + port, "127.0.0.1:1"} {
		ctx, cancel := context.WithTimeout(context.Background(), waitLimit)
		_, resp, err := websocket.Dial(ctx, ts.ws, &websocket.DialOptions{Host: host})
		cancel()
		if err == nil || resp == nil || resp.StatusCode != http.StatusForbidden {
			t.Errorf("Host %s: %v", host, err)
		}
	}
	if _, err := New(Options{Host: "0.0.0.0", NoToken: true}, nil); err == nil || !strings.Contains(err.Error(), "non-loopback") {
		t.Fatalf("no token on 0.0.0.0: %v", err)
	}
}

func TestUpgradeElsewhereIs404(t *testing.T) {
	ts := newTestServer(t, helloScript, nil)
	for _, p := range []string{"/", "/wss", "/ws/", "/health"} {
		_, err := ts.tryDial("ws://"+ts.srv.Addr().String()+p+"?token="+testToken, nil)
		if statusOf(err) != "404" {
			t.Errorf("upgrade on %s: %v", p, err)
		}
	}
}

func TestPlaceholderWithoutUI(t *testing.T) {
	ts := newTestServer(t, helloScript, nil)
	resp, body := get(t, ts.base+"/", nil)
	if resp.StatusCode != 200 || !strings.Contains(body, "not part of this build") || !strings.Contains(body, "--serve-ui") || !strings.Contains(body, "/ws") {
		t.Fatalf("/: %d\n%s", resp.StatusCode, body)
	}
	if resp, _ := get(t, ts.base+"/app.js", nil); resp.StatusCode != 404 {
		t.Fatalf("/app.js without a UI: %d", resp.StatusCode)
	}
}

func TestStaticFilesAndTraversal(t *testing.T) {
	dir := t.TempDir()
	ui := filepath.Join(dir, "ui")
	writeFile(t, filepath.Join(ui, "index.html"), "<html>the app</html>")
	writeFile(t, filepath.Join(ui, "assets", "app.js"), "console.log(1)")
	writeFile(t, filepath.Join(dir, "secret.txt"), "TOP SECRET")
	if err := os.Symlink(dir, filepath.Join(ui, "escape")); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(filepath.Join(dir, "secret.txt"), filepath.Join(ui, "secret-link.txt")); err != nil {
		t.Fatal(err)
	}
	ts := newTestServer(t, helloScript, func(o *Options) { o.UIDir = ui })

	resp, body := get(t, ts.base+"/assets/app.js", nil)
	if resp.StatusCode != 200 || body != "console.log(1)" || !strings.HasPrefix(resp.Header.Get("Content-Type"), "text/javascript") {
		t.Fatalf("app.js: %d %q %q", resp.StatusCode, resp.Header.Get("Content-Type"), body)
	}
	for _, p := range []string{"/", "/index.html", "/sessions/abc", "/assets", "/assets/"} {
		resp, body := get(t, ts.base+p, nil)
		if resp.StatusCode != 200 || body != "<html>the app</html>" {
			t.Errorf("%s: %d %q (want index.html)", p, resp.StatusCode, body)
		}
	}
	for _, p := range []string{"/../secret.txt", "/%2e%2e/secret.txt", "/assets/%2E%2E/%2e%2e/secret.txt", "/..%2fsecret.txt", "/escape/secret.txt", "/secret-link.txt", "/assets/..%5c..%5csecret.txt"} {
		resp, body := get(t, ts.base+p, nil)
		if strings.Contains(body, "TOP SECRET") {
			t.Errorf("%s escaped the UI root: %d %q", p, resp.StatusCode, body)
		}
	}
}

// Two connections on one session: both see its events, each sees only its
// own responses.
func TestTwoConnectionsShareASession(t *testing.T) {
	ts := newTestServer(t, helloScript, nil)
	a, b := ts.dial(""), ts.dial("")
	a.event("session_changed", 1)
	b.event("session_changed", 1)
	sa := data(a.call("s1", `{"id":"s1","type":"get_state"}`))
	sb := data(b.call("s2", `{"id":"s2","type":"get_state"}`))
	if sa["sessionId"] != sb["sessionId"] {
		t.Fatalf("not the same session: %v, %v", sa["sessionId"], sb["sessionId"])
	}
	if r := a.call("p1", `{"id":"p1","type":"prompt","message":"hi"}`); r["success"] != true {
		t.Fatalf("prompt: %v", r)
	}
	for _, cl := range []*client{a, b} {
		end := cl.waitFor("the assistant's message_end", func(m map[string]any) bool {
			msg, _ := m["message"].(map[string]any)
			return m["type"] == "message_end" && msg["role"] == "assistant"
		})
		if !strings.Contains(mustJSON(end), "hello there") {
			t.Fatalf("message_end: %v", end)
		}
		cl.event("agent_settled", 1)
	}
	if n := b.count(func(m map[string]any) bool { return m["id"] == "p1" }); n != 0 {
		t.Fatalf("the other connection got the response to p1")
	}
	if n := a.count(func(m map[string]any) bool { return m["id"] == "s2" }); n != 0 {
		t.Fatalf("the first connection got the response to s2")
	}
}

// A connection that opens another session moves alone: the other
// connection stays on its session and sees none of the other's events.
func TestSessionsAreIsolated(t *testing.T) {
	ts := newTestServer(t, helloScript, nil)
	a, b := ts.dial(""), ts.dial("")
	a.event("ready", 1)
	b.event("session_changed", 1)
	if r := b.call("n1", `{"id":"n1","type":"new_session"}`); r["success"] != true {
		t.Fatalf("new_session: %v", r)
	}
	changed := b.event("session_changed", 2)
	if changed["reason"] != "new" {
		t.Fatalf("session_changed: %v", changed)
	}
	sa := data(a.call("s1", `{"id":"s1","type":"get_state"}`))
	sb := data(b.call("s2", `{"id":"s2","type":"get_state"}`))
	if sa["sessionId"] == sb["sessionId"] || sb["sessionId"] != changed["sessionId"] {
		t.Fatalf("sessions: a %v, b %v, changed to %v", sa["sessionId"], sb["sessionId"], changed["sessionId"])
	}
	b.call("p1", `{"id":"p1","type":"prompt","message":"hi"}`)
	b.event("agent_settled", 1)
	a.call("s3", `{"id":"s3","type":"get_state"}`) // a's frames so far are in order
	for _, typ := range []string{"agent_start", "message_update", "message_end", "agent_settled"} {
		if n := a.count(ofType(typ)); n != 0 {
			t.Fatalf("the other session's %s reached a", typ)
		}
	}
	if n := a.count(ofType("session_changed")); n != 1 {
		t.Fatalf("a saw %d session_changed, want only its own attach", n)
	}
	// a's session runs on its own.
	a.call("p2", `{"id":"p2","type":"prompt","message":"and you"}`)
	a.event("agent_settled", 1)
	if n := b.count(ofType("agent_start")); n != 1 {
		t.Fatalf("b saw %d agent_start, want 1", n)
	}
}

// ?session= attaches to a session by id: a live one is shared.
func TestSessionParameter(t *testing.T) {
	ts := newTestServer(t, helloScript, nil)
	a := ts.dial("")
	a.call("n1", `{"id":"n1","type":"new_session"}`)
	id := a.event("session_changed", 2)["sessionId"].(string)
	b := ts.dial("&session=" + id)
	if got := b.event("session_changed", 1)["sessionId"]; got != id {
		t.Fatalf("?session=%s attached to %v", id, got)
	}
	a.call("p1", `{"id":"p1","type":"prompt","message":"hi"}`)
	b.event("agent_settled", 1)
	if _, err := ts.tryDial(ts.ws+"?token="+testToken+"&session=no-such-session", nil); statusOf(err) != "404" {
		t.Fatalf("unknown session: %v", err)
	}
}

func TestBadFramesKeepTheConnection(t *testing.T) {
	ts := newTestServer(t, helloScript, nil)
	cl := ts.dial("")
	cl.event("ready", 1)
	cl.send(`not json`)
	r := cl.waitFor("parse error", func(m map[string]any) bool { return m["command"] == "parse" })
	if !strings.HasPrefix(r["error"].(string), "Failed to parse command: ") {
		t.Fatalf("parse error: %v", r)
	}
	cl.send(`{"id":5,"type":"get_state"}`)
	cl.waitFor("id error", func(m map[string]any) bool {
		e, _ := m["error"].(string)
		return e == `Invalid field "id": expected a string, got number`
	})
	ctx, cancel := context.WithTimeout(context.Background(), waitLimit)
	defer cancel()
	if err := cl.c.Write(ctx, websocket.MessageBinary, []byte(`{"type":"get_state"}`)); err != nil {
		t.Fatal(err)
	}
	cl.waitFor("binary frame error", func(m map[string]any) bool {
		e, _ := m["error"].(string)
		return strings.Contains(e, "binary frames are not accepted")
	})
	if r := cl.call("u1", `{"id":"u1","type":"no_such_command"}`); r["error"] != "Unknown command: no_such_command" {
		t.Fatalf("unknown command: %v", r)
	}
	if r := cl.call("s1", `{"id":"s1","type":"get_state"}`); r["success"] != true {
		t.Fatalf("the connection did not survive: %v", r)
	}
}

// waitClients waits until the server counts n clients (/health says so).
func waitClients(t *testing.T, ts *testServer, n int) {
	t.Helper()
	deadline := time.After(waitLimit)
	for {
		got, changed := ts.srv.clients()
		if got == n {
			break
		}
		select {
		case <-changed:
		case <-deadline:
			t.Fatalf("%d clients, want %d", got, n)
		}
	}
	want := `{"status":"ok","clients":` + strconv.Itoa(n) + `}`
	if _, body := get(t, ts.base+"/health", nil); body != want {
		t.Fatalf("/health: %s, want %s", body, want)
	}
}

func mustJSON(v any) string {
	b, _ := json.Marshal(v)
	return string(b)
}

// Shutdown aborts the run, closes the connections with a reason and
// returns within 3 s.
func TestShutdown(t *testing.T) {
	ts := newTestServer(t, `{"turns":[{"content":[{"type":"text","text":"streaming"}],"hang":true}]}`, nil)
	cl := ts.dial("")
	cl.call("p1", `{"id":"p1","type":"prompt","message":"hi"}`)
	cl.event("message_update", 1)
	start := time.Now()
	ts.srv.Shutdown()
	if d := time.Since(start); d > 3*time.Second {
		t.Fatalf("shutdown took %v", d)
	}
	err := cl.waitClosed()
	if websocket.CloseStatus(err) != websocket.StatusGoingAway {
		t.Fatalf("closed with %v, want going away", err)
	}
	var ce websocket.CloseError
	if !errors.As(err, &ce) || ce.Reason != reasonShutdown {
		t.Fatalf("close reason: %v", err)
	}
	if n := cl.count(ofType("agent_end")); n != 1 {
		t.Fatalf("the aborted run's agent_end did not arrive before the close (%d)", n)
	}
	if _, err := ts.tryDial(ts.ws+"?token="+testToken, nil); err == nil {
		t.Fatal("a connection was accepted after shutdown")
	}
}
