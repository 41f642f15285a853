// Package rpc holds the protocol Pisces speaks in RPC mode: every command,
// response and event type and the command names. It is the single source of
// truth for the wire; the JSON Schema in docs/rpc.schema.json is generated
// from it. Message shapes are pi's (see the aliases in events.go).
package rpc
