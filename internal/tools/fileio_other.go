//go:build !unix

package tools

// openNonblock is 0 where opening a file cannot block on a missing peer.
const openNonblock = 0
