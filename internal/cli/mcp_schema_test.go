package cli_test

import (
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/pisces-agent/pisces/internal/mcp/mcptest"
)

// An MCP tool's input schema reaches the model's server as the MCP server
// wrote it: keys in its order and "$schema" kept, byte for byte in the
// body an OpenAI-compatible server receives.
func TestMCPSchemaReachesTheProvider(t *testing.T) {
	w := newWorld(t)
	var mu sync.Mutex
	var bodies []string
	api := httptest.NewServer(http.HandlerFunc(func(rw http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		mu.Lock()
		bodies = append(bodies, string(b))
		mu.Unlock()
		rw.Header().Set("Content-Type", "text/event-stream")
		fmt.Fprint(rw, `data: {"id":"c1","object":"chat.completion.chunk","created":1,"model":"m","choices":[{"index":0,"delta":{"role":"assistant","content":"ok"},"finish_reason":null}]}`+"\n\n")
		fmt.Fprint(rw, `data: {"id":"c1","object":"chat.completion.chunk","created":1,"model":"m","choices":[{"index":0,"delta":{},"finish_reason":"stop"}]}`+"\n\n")
		fmt.Fprint(rw, "data: [DONE]\n\n")
	}))
	defer api.Close()
	w.file("agent/models.json", `{"providers": {"local": {"baseUrl": "`+api.URL+`/v1", "api": "openai-completions", "apiKey": "sk-test", "models": [{"id": "m"}]}}}`)
	w.file("agent/mcp.json", `{"mcpServers": {"test": {"command": "`+filepath.Join(exampleBins, "mcpserver")+`", "exposure": "direct"}}}`)
	if _, err := os.Stat(filepath.Join(exampleBins, "mcpserver")); err != nil {
		t.Fatal(err)
	}
	r := w.runIO("", true, "-p", "--agent-dir", w.agentDir, "--no-session", "--provider", "local", "--model", "m", "hi")
	must(t, r, 0)
	mu.Lock()
	defer mu.Unlock()
	if len(bodies) != 1 {
		t.Fatalf("%d requests", len(bodies))
	}
	for _, want := range []string{
		`{"function":{"name":"mcp__test__meet","strict":false,"description":"Waits until count calls of meet are running at once","parameters":` + mcptest.MeetSchema + `},"type":"function"}`,
		`"parameters":{"type":"object","properties":{"message":{"type":"string"}},"required":["message"]}`,
	} {
		if !strings.Contains(bodies[0], want) {
			t.Errorf("the request body lacks %s:\n%s", want, bodies[0])
		}
	}
}
