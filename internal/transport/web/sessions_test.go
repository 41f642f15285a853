package web

import (
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"testing/fstest"
	"time"

	"github.com/pisces-agent/pisces/internal/tools"
)

// A dialog reaches every client on the session, one that attaches while
// it is open included; the first answer wins and the others are told it
// is settled.
func TestDialogFirstAnswerWins(t *testing.T) {
	ts := newTestServer(t, helloScript, nil)
	proj := filepath.Join(ts.dir, "proj")
	writeFile(t, filepath.Join(proj, ".pisces", "prompts", "hello.md"), "say hello")
	a := ts.dial("")
	a.call("n1", `{"id":"n1","type":"new_session","cwd":"`+proj+`"}`)
	id := a.event("session_changed", 2)["sessionId"].(string)
	isConfirm := func(m map[string]any) bool {
		return m["type"] == "extension_ui_request" && m["method"] == "confirm"
	}
	q := a.waitFor("the trust question", isConfirm)
	if !strings.Contains(mustJSON(q), proj) {
		t.Fatalf("question: %v", q)
	}
	b := ts.dial("&session=" + id)
	if bq := b.waitFor("the open question", isConfirm); bq["id"] != q["id"] {
		t.Fatalf("b got %v, a got %v", bq["id"], q["id"])
	}
	b.send(`{"type":"extension_ui_response","id":"` + q["id"].(string) + `","confirmed":true}`)
	a.waitFor("settled notice", func(m map[string]any) bool {
		return m["type"] == "extension_ui_request" && m["method"] == "cancel" && m["targetId"] == q["id"]
	})
	// The yes applies to the session both are on.
	for _, cl := range []*client{a, b} {
		cl.waitFor("reload", func(m map[string]any) bool { return m["type"] == "session_changed" && m["reason"] == "reload" })
	}
	if n := b.count(func(m map[string]any) bool { return m["method"] == "cancel" }); n != 0 {
		t.Fatalf("the answering client was told the dialog is settled")
	}
	// A late answer is ignored; the connection goes on.
	a.send(`{"type":"extension_ui_response","id":"` + q["id"].(string) + `","confirmed":false}`)
	if d, ok := ts.trust.Known(proj); !ok || !d.Trusted {
		t.Fatalf("trust of %s: %+v %v", proj, d, ok)
	}
	a.call("s1", `{"id":"s1","type":"get_state"}`)
}

// A host tool call goes to every client on the session; the first result
// wins and the others get host_tool_cancel.
func TestHostToolFirstResultWins(t *testing.T) {
	script := `{"turns":[{"content":[{"type":"toolCall","name":"ask_user","arguments":{"q":"x"}}]},{"content":[{"type":"text","text":"done"}]}]}`
	ts := newTestServer(t, script, nil)
	a, b := ts.dial(""), ts.dial("")
	a.event("session_changed", 1)
	b.event("session_changed", 1)
	if r := a.call("h1", `{"id":"h1","type":"set_host_tools","tools":[{"name":"ask_user","description":"ask","parameters":{"type":"object","properties":{"q":{"type":"string"}}}}]}`); r["success"] != true {
		t.Fatalf("set_host_tools: %v", r)
	}
	a.call("p1", `{"id":"p1","type":"prompt","message":"hi"}`)
	isCall := func(m map[string]any) bool { return m["type"] == "host_tool_call" }
	ca, cb := a.waitFor("host_tool_call", isCall), b.waitFor("host_tool_call", isCall)
	if ca["id"] != cb["id"] || ca["toolName"] != "ask_user" {
		t.Fatalf("calls: %v / %v", ca, cb)
	}
	b.send(`{"type":"host_tool_result","id":"` + cb["id"].(string) + `","result":"answered by b"}`)
	a.waitFor("host_tool_cancel", func(m map[string]any) bool {
		return m["type"] == "host_tool_cancel" && m["targetId"] == ca["id"]
	})
	end := a.waitFor("tool_execution_end", func(m map[string]any) bool { return m["type"] == "tool_execution_end" })
	if !strings.Contains(mustJSON(end), "answered by b") {
		t.Fatalf("tool result: %v", end)
	}
	a.event("agent_settled", 1)
	if n := b.count(func(m map[string]any) bool { return m["type"] == "host_tool_cancel" }); n != 0 {
		t.Fatal("the client whose result won was told to cancel")
	}
}

// A session file another live process holds the lock of opens as a
// read-only view with a notice; commands that would change it are refused
// and the file is not touched.
func TestLockedSessionIsReadOnly(t *testing.T) {
	ts := newTestServer(t, helloScript, nil)
	file := filepath.Join(ts.dir, "other", "locked.jsonl")
	content := `{"type":"session","version":3,"id":"0199cccc-0000-7000-8000-000000000003","timestamp":"2026-01-01T00:00:00.000Z","cwd":"` + ts.dir + `"}
{"type":"message","id":"cccc0001","parentId":null,"timestamp":"2026-01-01T00:00:01.000Z","message":{"role":"user","content":[{"type":"text","text":"first question"}],"timestamp":1767225601000}}
`
	writeFile(t, file, content)
	host, _ := os.Hostname()
	// The parent of the test process is alive and is not this process.
	writeFile(t, filepath.Join(filepath.Dir(file), ".locked.jsonl.lock"), strconv.Itoa(os.Getppid())+"\n"+host+"\n")

	cl := ts.dial("&session=" + file)
	note := cl.waitFor("read-only notice", func(m map[string]any) bool {
		return m["type"] == "extension_ui_request" && m["method"] == "notify"
	})
	if !strings.Contains(note["message"].(string), "read-only") || note["notifyType"] != "warning" {
		t.Fatalf("notice: %v", note)
	}
	r := cl.call("p1", `{"id":"p1","type":"prompt","message":"hi"}`)
	if r["success"] != false || !strings.HasPrefix(r["error"].(string), "Read-only session: ") {
		t.Fatalf("prompt on a read-only view: %v", r)
	}
	if r := cl.call("m1", `{"id":"m1","type":"get_messages"}`); !strings.Contains(mustJSON(r), "first question") {
		t.Fatalf("get_messages: %v", r)
	}
	if b, _ := os.ReadFile(file); string(b) != content {
		t.Fatalf("the locked file changed:\n%s", b)
	}
	// A clone of the view is a file of its own, written to.
	if r := cl.call("c1", `{"id":"c1","type":"clone"}`); r["success"] != true {
		t.Fatalf("clone of a read-only view: %v", r)
	}
	if r := cl.call("p2", `{"id":"p2","type":"prompt","message":"hi"}`); r["success"] != true {
		t.Fatalf("prompt in the clone: %v", r)
	}
	cl.event("agent_settled", 1)
	st := cl.call("s2", `{"id":"s2","type":"get_state"}`)["data"].(map[string]any)
	clone, _ := st["sessionFile"].(string)
	if clone == "" || clone == file {
		t.Fatalf("the clone's file: %q", clone)
	}
	if b, err := os.ReadFile(clone); err != nil || !strings.Contains(string(b), "first question") || !strings.Contains(string(b), `"parentSession":"`+file+`"`) {
		t.Fatalf("the clone's file %s: %v\n%s", clone, err, b)
	}
	if b, _ := os.ReadFile(file); string(b) != content {
		t.Fatalf("the locked file changed:\n%s", b)
	}
}

// A run goes on when its last client leaves; a client that attaches later
// sees it running and gets its remaining events. Once it is over and
// nobody watches, the session is unloaded and its lock removed.
func TestUnwatchedRunGoesOn(t *testing.T) {
	// The run's tool call lasts until the test opens the gate, once the
	// second client is attached: the run is still going then, however slow
	// the machine.
	gate := gateTool{release: make(chan struct{})}
	script := `{"turns":[{"content":[{"type":"toolCall","id":"c1","name":"gate","arguments":{}}]},` +
		`{"content":[{"type":"text","text":"` + strings.Repeat("word ", 60) + `"}],"chunkSize":5}]}`
	ts := newTestServerTools(t, script, []tools.Tool{gate}, nil)
	a := ts.dial("")
	a.call("n1", `{"id":"n1","type":"new_session"}`)
	id := a.event("session_changed", 2)["sessionId"].(string)
	a.call("p1", `{"id":"p1","type":"prompt","message":"hi"}`)
	a.event("tool_execution_start", 1)
	a.c.CloseNow()
	waitClients(t, ts, 0)
	b := ts.dial("&session=" + id)
	b.event("session_changed", 1)
	st := data(b.call("s1", `{"id":"s1","type":"get_state"}`))
	file, _ := st["sessionFile"].(string)
	if st["isStreaming"] != true {
		t.Fatalf("the run is not going when the second client attaches: %v", st)
	}
	close(gate.release)
	b.event("agent_settled", 1)
	if n := b.count(ofType("message_update")); n == 0 {
		t.Fatal("the second client got none of the answer streamed after it attached")
	}
	lock := filepath.Join(filepath.Dir(file), "."+filepath.Base(file)+".lock")
	if _, err := os.Stat(lock); err != nil {
		t.Fatalf("no lock beside %s while it is open: %v", file, err)
	}
	b.c.CloseNow()
	waitUnloaded(t, ts, id, lock)
}

// waitUnloaded waits until the session id is unloaded and its lock file
// removed.
func waitUnloaded(t *testing.T, ts *testServer, id, lock string) {
	t.Helper()
	deadline := time.After(waitLimit)
	for {
		changed := ts.srv.Manager().Changed()
		found := false
		for _, l := range ts.srv.Manager().Live() {
			if l.Core.Store().ID() == id {
				found = true
			}
		}
		_, err := os.Stat(lock)
		if !found && os.IsNotExist(err) {
			return
		}
		select {
		case <-changed:
		case <-deadline:
			t.Fatalf("session %s still loaded (%v) or its lock left (%v)", id, found, err)
		}
	}
}

// What pi's web client does on connect: list every session, switch to the
// newest (here one another connection has open: the two share it), and
// switching to the session it is on tells it again. Once both leave, the
// session unloads: no viewer is left behind.
func TestWebClientConnectFlow(t *testing.T) {
	ts := newTestServer(t, helloScript, nil)
	a := ts.dial("")
	a.call("n1", `{"id":"n1","type":"new_session"}`)
	id := a.event("session_changed", 2)["sessionId"].(string)
	a.call("p1", `{"id":"p1","type":"prompt","message":"hi"}`)
	a.event("agent_settled", 1)

	b := ts.dial("")
	b.event("session_changed", 1)
	list := data(b.call("l1", `{"id":"l1","type":"list_sessions","scope":"all"}`))
	newest := list["sessions"].([]any)[0].(map[string]any)
	for _, k := range []string{"path", "id", "cwd", "created", "modified", "messageCount", "firstMessage"} {
		if _, ok := newest[k]; !ok {
			t.Fatalf("list_sessions item lacks %s: %v", k, newest)
		}
	}
	if newest["id"] != id {
		t.Fatalf("newest session %v, want %s", newest["id"], id)
	}
	path := newest["path"].(string)
	for i, w := range []string{"w1", "w2"} {
		b.call(w, `{"id":"`+w+`","type":"switch_session","sessionPath":"`+path+`"}`)
		ch := b.event("session_changed", 2+i)
		if ch["reason"] != "switch" || ch["sessionId"] != id || ch["messageCount"] != float64(3) {
			t.Fatalf("session_changed after %s: %v", w, ch)
		}
	}
	st := data(b.call("s1", `{"id":"s1","type":"get_state"}`))
	if st["sessionId"] != id || st["thinkingLevel"] == nil {
		t.Fatalf("get_state: %v", st)
	}
	if msgs := data(b.call("m1", `{"id":"m1","type":"get_messages"}`)); !strings.Contains(mustJSON(msgs), "hello there") {
		t.Fatalf("get_messages: %v", msgs)
	}
	a.c.CloseNow()
	b.c.CloseNow()
	waitUnloaded(t, ts, id, filepath.Join(filepath.Dir(path), "."+filepath.Base(path)+".lock"))
}

// A fork or clone moves only the connection that asked, and the run of the
// session it leaves goes on for the others: nothing is aborted.
func TestForkAndCloneLeaveTheRunGoing(t *testing.T) {
	gate := gateTool{release: make(chan struct{})}
	script := `{"turns":[` +
		`{"content":[{"type":"text","text":"first answer"}]},` +
		`{"content":[{"type":"toolCall","id":"c1","name":"gate","arguments":{}}]},` +
		`{"content":[{"type":"text","text":"after the gate"}]}]}`
	ts := newTestServerTools(t, script, []tools.Tool{gate}, nil)
	a := ts.dial("")
	a.call("n1", `{"id":"n1","type":"new_session"}`)
	id := a.event("session_changed", 2)["sessionId"].(string)
	a.call("p1", `{"id":"p1","type":"prompt","message":"first"}`)
	a.event("agent_settled", 1)
	entry := data(a.call("f0", `{"id":"f0","type":"get_fork_messages"}`))["messages"].([]any)[0].(map[string]any)["entryId"].(string)
	a.call("p2", `{"id":"p2","type":"prompt","message":"second"}`)
	a.event("tool_execution_start", 1)

	b := ts.dial("&session=" + id)
	b.event("session_changed", 1)
	if r := b.call("c1", `{"id":"c1","type":"clone"}`); r["success"] != true {
		t.Fatalf("clone: %v", r)
	}
	cloneID := b.event("session_changed", 2)["sessionId"].(string)
	if r := b.call("f1", `{"id":"f1","type":"fork","entryId":"`+entry+`"}`); r["success"] != true {
		t.Fatalf("fork: %v", r)
	}
	forkID := b.event("session_changed", 3)["sessionId"].(string)
	if cloneID == id || forkID == id || forkID == cloneID {
		t.Fatalf("sessions: original %s, clone %s, fork %s", id, cloneID, forkID)
	}
	st := data(a.call("s1", `{"id":"s1","type":"get_state"}`))
	if st["isStreaming"] != true || st["sessionId"] != id {
		t.Fatalf("the original session after the fork and the clone: %v", st)
	}
	close(gate.release)
	settled := a.event("agent_settled", 2)
	if settled["aborted"] != false {
		t.Fatalf("the run was aborted: %v", settled)
	}
	end := a.waitFor("the gate's result", func(m map[string]any) bool { return m["type"] == "tool_execution_end" })
	if end["isError"] != false || !strings.Contains(mustJSON(end), "opened") {
		t.Fatalf("the gate tool ended with %v", end)
	}
	if !strings.Contains(mustJSON(data(a.call("m1", `{"id":"m1","type":"get_messages"}`))), "after the gate") {
		t.Fatal("the run did not finish in the original session")
	}
	// Fence: b's own response comes after anything sent to it before.
	if st := data(b.call("s2", `{"id":"s2","type":"get_state"}`)); st["sessionId"] != forkID || st["isStreaming"] != false {
		t.Fatalf("the fork's state: %v", st)
	}
	if n := b.count(func(m map[string]any) bool { return m["type"] == "tool_execution_end" }); n != 0 {
		t.Fatal("the connection that moved away got the original session's events")
	}
}

// pi's web client keeps its session in the page's address (?session=) but
// connects to /ws without it, and reads the session its connection is on
// before it looks at the address: loading the page keeps the address's
// session in a cookie, and a connection that names no session attaches to
// it. ?session= on /ws still wins, a session that no longer opens falls
// back to the default one, a missing asset answered with the page does not
// touch the cookie, and the page loaded without ?session= removes it.
func TestPageAddressNamesTheSession(t *testing.T) {
	ts := newTestServer(t, helloScript, func(o *Options) {
		o.UI = fstest.MapFS{"index.html": {Data: []byte("<!DOCTYPE html><title>ui</title>")}}
	})
	a := ts.dial("")
	def := a.event("session_changed", 1)["sessionId"].(string)
	a.call("n1", `{"id":"n1","type":"new_session"}`)
	id := a.event("session_changed", 2)["sessionId"].(string)
	a.call("p1", `{"id":"p1","type":"prompt","message":"hi"}`)
	a.event("agent_settled", 1)

	doc := http.Header{"Sec-Fetch-Dest": {"document"}}
	name := "pisces_session_" + strconv.Itoa(ts.srv.port)
	resp, _ := get(t, ts.base+"/?session="+id, doc)
	var cookie *http.Cookie
	for _, c := range resp.Cookies() {
		if c.Name == name {
			cookie = c
		}
	}
	if cookie == nil || !cookie.HttpOnly || cookie.SameSite != http.SameSiteStrictMode {
		t.Fatalf("loading the page with ?session= set %v (want an HttpOnly, SameSite=Strict %s)", resp.Header.Values("Set-Cookie"), name)
	}
	withCookie := func(value string) http.Header {
		return http.Header{"Cookie": {name + "=" + value}}
	}
	attached := func(extra string, h http.Header) string {
		t.Helper()
		cl, err := ts.tryDial(ts.ws+"?token="+testToken+extra, h)
		if err != nil {
			t.Fatal(err)
		}
		return cl.event("session_changed", 1)["sessionId"].(string)
	}
	if got := attached("", withCookie(cookie.Value)); got != id {
		t.Fatalf("a connection from the page attached to %s, want the address's session %s", got, id)
	}
	if got := attached("&session="+def, withCookie(cookie.Value)); got != def {
		t.Fatalf("?session= on /ws attached to %s, want %s", got, def)
	}
	if got := attached("", withCookie("0000dead")); got != def {
		t.Fatalf("a cookie naming no session attached to %s, want the default %s", got, def)
	}
	if got := attached("", nil); got != def {
		t.Fatalf("a connection without cookie attached to %s, want the default %s", got, def)
	}

	resp, _ = get(t, ts.base+"/favicon.ico", http.Header{"Sec-Fetch-Dest": {"image"}, "Cookie": {name + "=" + cookie.Value}})
	if resp.StatusCode != http.StatusOK || len(resp.Cookies()) != 0 {
		t.Fatalf("a missing asset: %d, cookies %v", resp.StatusCode, resp.Header.Values("Set-Cookie"))
	}
	resp, _ = get(t, ts.base+"/", http.Header{"Sec-Fetch-Dest": {"document"}, "Cookie": {name + "=" + cookie.Value}})
	cs := resp.Cookies()
	if len(cs) != 1 || cs[0].Name != name || cs[0].MaxAge >= 0 {
		t.Fatalf("loading the page without ?session= set %v, want %s removed", resp.Header.Values("Set-Cookie"), name)
	}
}
