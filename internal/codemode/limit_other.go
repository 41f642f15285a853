//go:build !unix

package codemode

// limitMemory has no address-space limit to set here; the heap limit
// (debug.SetMemoryLimit) still applies.
func limitMemory(uint64) {}
