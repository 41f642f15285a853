package mcp

import (
	"bufio"
	"encoding/json"
	"fmt"
	"net"
	"os"
	"os/exec"
	"strings"
	"testing"
	"time"

	"github.com/pisces-agent/pisces/internal/procgroup"
	"github.com/pisces-agent/pisces/internal/testenv"
)

// everything returns node and the entry point of the official
// @modelcontextprotocol/server-everything (PISCES_MCP_EVERYTHING names its
// dist/index.js; .ci/run installs it).
func everything(t *testing.T) (node, index string) {
	t.Helper()
	node = testenv.LookPath(t, "node")
	index = os.Getenv("PISCES_MCP_EVERYTHING")
	if index == "" {
		testenv.Unavailable(t, "needs the npm package @modelcontextprotocol/server-everything (PISCES_MCP_EVERYTHING=.../dist/index.js; .ci/run installs it)")
	}
	if _, err := os.Stat(index); err != nil {
		testenv.Unavailable(t, "PISCES_MCP_EVERYTHING: %v", err)
	}
	return node, index
}

// everythingEchoSchema is the input schema of server-everything's echo
// tool as the server (the version .ci/run installs) writes it.
const everythingEchoSchema = `{"$schema":"http://json-schema.org/draft-07/schema#","type":"object","properties":{"message":{"type":"string","description":"Message to echo"}},"required":["message"]}`

func TestEverythingStdio(t *testing.T) {
	node, index := everything(t)
	n, _ := json.Marshal(node)
	i, _ := json.Marshal(index)
	_, s := newManager(t, `"everything":{"command":`+string(n)+`,"args":[`+string(i)+`,"stdio"],"exposure":"direct"}`)
	settle(t, s)
	st := s.Servers()[0].Status()
	if st.State != StateConnected || len(st.Tools) < 5 {
		t.Fatalf("status %+v", st)
	}
	es := s.Entries()
	echo, ok := entry(es, "mcp__everything__echo")
	if !ok || !echo.Active {
		t.Fatalf("no direct echo tool among %d entries", len(es))
	}
	// The schema is the server's, key order and "$schema" kept (sorted,
	// "type" would come last).
	if got := string(echo.Tool.Parameters()); got != everythingEchoSchema {
		t.Errorf("echo's schema %s, want the server's %s", got, everythingEchoSchema)
	}
	r := call(t, echo.Tool, `{"message":"hi"}`)
	if r.IsError || r.Content[0].Text != "Echo: hi" || string(r.Details) != `{"server":"everything","tool":"echo"}` {
		t.Fatalf("echo: %+v", r)
	}
	sum, ok := entry(es, "mcp__everything__get_sum")
	if !ok {
		t.Fatal("no mcp__everything__get_sum (get-sum)")
	}
	if !strings.Contains(string(sum.Tool.Parameters()), `"a"`) {
		t.Errorf("get-sum schema %s", sum.Tool.Parameters())
	}
	r = call(t, sum.Tool, `{"a":2,"b":3}`)
	if r.IsError || !strings.Contains(r.Content[0].Text, "5") {
		t.Errorf("get-sum: %+v", r)
	}
	if _, ok := entry(es, ReadResourceName); !ok {
		t.Error("no resource tools for server-everything")
	}
}

func TestEverythingStreamableHTTP(t *testing.T) {
	node, index := everything(t)
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	port := l.Addr().(*net.TCPAddr).Port
	l.Close()
	cmd := exec.Command(node, index, "streamableHttp")
	cmd.Env = append(os.Environ(), fmt.Sprintf("PORT=%d", port))
	procgroup.Set(cmd)
	stderr, _ := cmd.StderrPipe()
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		procgroup.Kill(cmd)
		_ = cmd.Wait()
	})
	listening := make(chan struct{})
	go func() {
		sc := bufio.NewScanner(stderr)
		once := false
		for sc.Scan() {
			if !once && strings.Contains(sc.Text(), "listening on port") {
				once = true
				close(listening)
			}
		}
	}()
	select {
	case <-listening:
	case <-time.After(waitLong):
		t.Fatal("server-everything did not start listening")
	}
	_, s := newManager(t, fmt.Sprintf(`"web":{"url":"http://127.0.0.1:%d/mcp","exposure":"deferred"}`, port))
	settle(t, s)
	if st := s.Servers()[0].Status(); st.State != StateConnected {
		t.Fatalf("status %+v", st)
	}
	search, ok := entry(s.Entries(), ToolSearchName)
	if !ok {
		t.Fatal("no tool_search")
	}
	r := call(t, search.Tool, `{"query":"echo"}`)
	if r.IsError || !strings.Contains(string(r.Details), "mcp__web__echo") {
		t.Fatalf("tool_search: %+v %s", r.Content, r.Details)
	}
	echo, ok := entry(s.Entries(), "mcp__web__echo")
	if !ok || !echo.Active {
		t.Fatal("echo not loaded")
	}
	if got := string(echo.Tool.Parameters()); got != everythingEchoSchema {
		t.Errorf("echo's schema over HTTP %s, want the server's %s", got, everythingEchoSchema)
	}
	if r := call(t, echo.Tool, `{"message":"over http"}`); r.IsError || r.Content[0].Text != "Echo: over http" {
		t.Errorf("echo over HTTP: %+v", r)
	}
}
