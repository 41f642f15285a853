// Package mcptest is an MCP server for tests, written with the official
// SDK's server side: tools that echo, add (with structured output), fail,
// answer at length and end the process, and one resource. Tests run it
// in process (streamable HTTP) or as a process speaking stdio.
package mcptest

import (
	"context"
	"encoding/json"
	"os"
	"strings"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
)

type sumIn struct {
	A int `json:"a" jsonschema:"the first number"`
	B int `json:"b" jsonschema:"the second number"`
}

type sumOut struct {
	Sum int `json:"sum"`
}

// Server is a real MCP server (the SDK's server side) with tools that
// echo, add, fail, answer at length and exit, and one resource.
func Server() *sdk.Server {
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
