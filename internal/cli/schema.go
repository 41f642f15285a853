package cli

import (
	"fmt"

	"github.com/pisces-agent/pisces/rpc/schema"
)

// printSchema writes the JSON Schema of the RPC protocol (generated from
// package rpc; the same document as docs/rpc.schema.json) to stdout.
func printSchema(stdio IO) int {
	b, err := schema.Generate()
	if err != nil {
		fmt.Fprintf(stdio.Stderr, "pisces: %v\n", err)
		return 1
	}
	if _, err := stdio.Stdout.Write(b); err != nil {
		fmt.Fprintf(stdio.Stderr, "pisces: %v\n", err)
		return 1
	}
	return 0
}
