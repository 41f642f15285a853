// Command mcpserver serves the mcptest MCP server over stdio (transcripts
// run it as $MCPSERVER).
package main

import (
	"context"
	"fmt"
	"os"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/pisces-agent/pisces/internal/mcp/mcptest"
)

func main() {
	if err := mcptest.Server().Run(context.Background(), &sdk.StdioTransport{}); err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
}
