package mcp

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"testing"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/pisces-agent/pisces/internal/codemode"
	"github.com/pisces-agent/pisces/internal/mcp/mcptest"
)

// The test binary is also an MCP server speaking over stdio: with
// PISCES_TEST_MCP_SERVER set it serves testServer instead of running the
// tests.
func TestMain(m *testing.M) {
	if codemode.IsChild() {
		os.Exit(codemode.ChildMain(os.Stdin, os.Stdout))
	}
	if os.Getenv("PISCES_TEST_MCP_SERVER") != "" {
		if err := mcptest.Server().Run(context.Background(), &sdk.StdioTransport{}); err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(1)
		}
		os.Exit(0)
	}
	os.Exit(m.Run())
}

// httpServer serves testServer over streamable HTTP; headers it received
// go to seen.
func httpServer(t *testing.T, seen func(http.Header)) string {
	h := sdk.NewStreamableHTTPHandler(func(*http.Request) *sdk.Server { return mcptest.Server() }, nil)
	ts := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if seen != nil {
			seen(r.Header)
		}
		h.ServeHTTP(w, r)
	}))
	t.Cleanup(ts.Close)
	return ts.URL
}

// stdioEntry is an mcp.json entry running the test binary as a server.
func stdioEntryB(t testing.TB) string { return stdioEntry(t, "") }

func stdioEntry(t testing.TB, extra string) string {
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	b, _ := json.Marshal(exe)
	s := `{"command":` + string(b) + `,"env":{"PISCES_TEST_MCP_SERVER":"1"}`
	if extra != "" {
		s += "," + extra
	}
	return s + "}"
}
