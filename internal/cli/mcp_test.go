package cli_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// pisces mcp add, list and remove edit the agent dir's (or the project's)
// mcp.json in place and list the servers as pi mcp list does.
func TestMCPCommand(t *testing.T) {
	w := newWorld(t)
	t.Chdir(w.cwd)
	file := filepath.Join(w.agentDir, "mcp.json")
	os.WriteFile(file, []byte("{\n  // mine\n  \"mcpServers\": {\n    \"gone\": {\"command\": \"/nonexistent/server\", \"exposure\": \"hidden\"}\n  }\n}\n"), 0o644)
	server := filepath.Join(exampleBins, "mcpserver")

	r := w.runIO("", true, "mcp", "add", "test", "--agent-dir", w.agentDir, "--exposure", "direct", "--description", "the test server", "--", server, "stdio")
	must(t, r, 0)
	data, _ := os.ReadFile(file)
	want := "{\n  // mine\n  \"mcpServers\": {\n    \"gone\": {\"command\": \"/nonexistent/server\", \"exposure\": \"hidden\"},\n    \"test\": {\n      \"command\": " + quote(server) + ",\n      \"args\": [\n        \"stdio\"\n      ],\n      \"exposure\": \"direct\",\n      \"description\": \"the test server\"\n    }\n  }\n}\n"
	if string(data) != want {
		t.Fatalf("mcp.json after add:\n%s\nwant:\n%s", data, want)
	}

	r = w.runIO("", true, "mcp", "list", "--agent-dir", w.agentDir)
	must(t, r, 0)
	wantList := "gone: failed: spawn /nonexistent/server ENOENT (hidden, global)\n" +
		"  /nonexistent/server\n" +
		"test: connected, 6 tools (direct, global)\n" +
		"  the test server\n" +
		"  " + server + " stdio\n" +
		"  tools: big, echo, exit, fail, get-sum, meet\n" +
		"  offers resources\n"
	if r.stdout != wantList {
		t.Errorf("mcp list:\n%s\nwant:\n%s", r.stdout, wantList)
	}

	// Bad entries are refused, naming what is wrong; nothing is written.
	for _, c := range [][]string{
		{"mcp", "add", "bad name", "--", "x"},
		{"mcp", "add", "x", "--exposure", "sometimes", "--", "x"},
		{"mcp", "add", "x", "--url", "ftp://example.com"},
		{"mcp", "add", "x"},
	} {
		r := w.runIO("", true, append(c, "--agent-dir", w.agentDir)...)
		must(t, r, 2)
		if !strings.HasPrefix(r.stderr, "pisces mcp add: ") {
			t.Errorf("%v: %q", c, r.stderr)
		}
	}
	if after, _ := os.ReadFile(file); string(after) != want {
		t.Errorf("a refused add changed the file:\n%s", after)
	}

	must(t, w.runIO("", true, "mcp", "remove", "gone", "--agent-dir", w.agentDir), 0)
	r = w.runIO("", true, "mcp", "remove", "gone", "--agent-dir", w.agentDir)
	must(t, r, 1)
	if !strings.Contains(r.stderr, "no server gone") {
		t.Errorf("removing twice: %q", r.stderr)
	}
	data, _ = os.ReadFile(file)
	if strings.Contains(string(data), "gone") || !strings.Contains(string(data), "// mine") || !strings.Contains(string(data), `"test"`) {
		t.Errorf("mcp.json after remove:\n%s", data)
	}

	// --project writes the project's .pisces/mcp.json.
	must(t, w.runIO("", true, "mcp", "add", "proj", "--project", "--agent-dir", w.agentDir, "--url", "http://localhost:1/mcp"), 0)
	if data, err := os.ReadFile(filepath.Join(w.cwd, ".pisces", "mcp.json")); err != nil || !strings.Contains(string(data), `"url": "http://localhost:1/mcp"`) {
		t.Errorf("project file: %s %v", data, err)
	}
}

func quote(s string) string {
	return `"` + strings.ReplaceAll(s, `"`, `\"`) + `"`
}
