package mcp

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"strings"
	"testing"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
)

// The test binary is also an MCP server speaking over stdio: with
// PISCES_TEST_MCP_SERVER set it serves testServer instead of running the
// tests.
func TestMain(m *testing.M) {
	if os.Getenv("PISCES_TEST_MCP_SERVER") != "" {
		if err := testServer().Run(context.Background(), &sdk.StdioTransport{}); err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(1)
		}
		os.Exit(0)
	}
	os.Exit(m.Run())
}

type sumIn struct {
	A int `json:"a" jsonschema:"the first number"`
	B int `json:"b" jsonschema:"the second number"`
}

type sumOut struct {
	Sum int `json:"sum"`
}

// testServer is a real MCP server (the SDK's server side) with tools that
// echo, add, fail, answer at length and exit, and one resource.
func testServer() *sdk.Server {
	s := sdk.NewServer(&sdk.Implementation{Name: "test", Version: "1"}, &sdk.ServerOptions{Instructions: "Test tools for Pisces."})
	s.AddTool(&sdk.Tool{Name: "echo", Description: "Echoes back the message", InputSchema: json.RawMessage(`{"type":"object","properties":{"message":{"type":"string"}},"required":["message"]}`)},
		func(_ context.Context, req *sdk.CallToolRequest) (*sdk.CallToolResult, error) {
			var a struct{ Message string }
			_ = json.Unmarshal(req.Params.Arguments, &a)
			return &sdk.CallToolResult{Content: []sdk.Content{&sdk.TextContent{Text: "Echo: " + a.Message}}}, nil
		})
	sdk.AddTool(s, &sdk.Tool{Name: "get-sum", Description: "Adds two numbers"}, func(_ context.Context, _ *sdk.CallToolRequest, in sumIn) (*sdk.CallToolResult, sumOut, error) {
		return nil, sumOut{Sum: in.A + in.B}, nil
	})
	s.AddTool(&sdk.Tool{Name: "fail", Description: "Always fails", InputSchema: json.RawMessage(`{"type":"object"}`)},
		func(context.Context, *sdk.CallToolRequest) (*sdk.CallToolResult, error) {
			return &sdk.CallToolResult{IsError: true, Content: []sdk.Content{&sdk.TextContent{Text: "it failed"}}}, nil
		})
	s.AddTool(&sdk.Tool{Name: "big", Description: "Answers with 30000 bytes", InputSchema: json.RawMessage(`{"type":"object"}`)},
		func(context.Context, *sdk.CallToolRequest) (*sdk.CallToolResult, error) {
			return &sdk.CallToolResult{Content: []sdk.Content{&sdk.TextContent{Text: "<" + strings.Repeat("x", 29998) + ">"}}}, nil
		})
	s.AddTool(&sdk.Tool{Name: "exit", Description: "Ends the server process", InputSchema: json.RawMessage(`{"type":"object"}`)},
		func(context.Context, *sdk.CallToolRequest) (*sdk.CallToolResult, error) {
			os.Exit(3)
			return nil, nil
		})
	s.AddResource(&sdk.Resource{URI: "test://greeting", Name: "greeting", MIMEType: "text/plain"},
		func(context.Context, *sdk.ReadResourceRequest) (*sdk.ReadResourceResult, error) {
			return &sdk.ReadResourceResult{Contents: []*sdk.ResourceContents{{URI: "test://greeting", MIMEType: "text/plain", Text: "hello"}}}, nil
		})
	return s
}

// httpServer serves testServer over streamable HTTP; headers it received
// go to seen.
func httpServer(t *testing.T, seen func(http.Header)) string {
	h := sdk.NewStreamableHTTPHandler(func(*http.Request) *sdk.Server { return testServer() }, nil)
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
func stdioEntry(t *testing.T, extra string) string {
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
