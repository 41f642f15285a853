// Package mcptest is an MCP server for tests, written with the official
// SDK's server side: tools that echo, add (with structured output), fail,
// answer at length and end the process, and one resource. Tests run it
// in process (streamable HTTP) or as a process speaking stdio.
package mcptest

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"strings"
	"sync"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
)

type sumIn struct {
	A int `json:"a" jsonschema:"the first number"`
	B int `json:"b" jsonschema:"the second number"`
}

type sumOut struct {
	Sum int `json:"sum"`
}

// MeetSchema is the input schema of the meet tool, written with its keys
// out of alphabetical order and with "$schema", as a client should pass
// them on.
const MeetSchema = `{"$schema":"https://json-schema.org/draft/2020-12/schema","type":"object","properties":{"party":{"type":"string","description":"who is waiting"},"count":{"type":"integer","description":"how many calls must be running at once (default 2)"}},"required":["party"]}`

// MeetWait bounds how long a meet call waits for the others.
const MeetWait = 30 * time.Second

// Server is a real MCP server (the SDK's server side) with tools that
// echo, add, fail, answer at length, exit and meet (wait until several
// calls of it are running at once), and one resource.
func Server() *sdk.Server {
	s := sdk.NewServer(&sdk.Implementation{Name: "test", Version: "1"}, &sdk.ServerOptions{Instructions: "Test tools for Pisces."})
	var mu sync.Mutex
	running := 0
	met := make(chan struct{}) // closed when the calls waiting on it have met
	s.AddTool(&sdk.Tool{Name: "meet", Description: "Waits until count calls of meet are running at once", InputSchema: json.RawMessage(MeetSchema)},
		func(ctx context.Context, req *sdk.CallToolRequest) (*sdk.CallToolResult, error) {
			var a struct {
				Party string
				Count int
			}
			_ = json.Unmarshal(req.Params.Arguments, &a)
			if a.Count <= 0 {
				a.Count = 2
			}
			mu.Lock()
			running++
			wait := met
			if running >= a.Count {
				close(met)
				met = make(chan struct{})
			}
			mu.Unlock()
			defer func() {
				mu.Lock()
				running--
				mu.Unlock()
			}()
			select {
			case <-wait:
			case <-time.After(MeetWait):
				return &sdk.CallToolResult{IsError: true, Content: []sdk.Content{&sdk.TextContent{Text: fmt.Sprintf("%s met nobody: fewer than %d calls ran at once", a.Party, a.Count)}}}, nil
			case <-ctx.Done():
				return nil, ctx.Err()
			}
			return &sdk.CallToolResult{Content: []sdk.Content{&sdk.TextContent{Text: a.Party + " met the others"}}}, nil
		})
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
