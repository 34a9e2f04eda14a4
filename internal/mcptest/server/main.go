// Command server is mcptest's server over stdio, for tests that need a
// real MCP server process.
package main

import (
	"context"
	"log"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/agentree/agentree/internal/mcptest"
)

func main() {
	if err := mcptest.NewServer(mcptest.Options{Crash: true}).Run(context.Background(), &sdk.StdioTransport{}); err != nil {
		log.Fatal(err)
	}
}
