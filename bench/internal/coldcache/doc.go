// Package coldcache drops a file from the page cache, so that the next
// start of a program reads it from disk, as a freshly installed binary
// is. The benchmarks use it for cold starts (bench/rpcbench drops the
// binary it built once; bench/inittrace -cold drops it before every run).
// Left in the cache as the linker wrote it, the same binary measured about
// 1 MB more resident file pages (larger folios mapped whole), and that
// changed from one build to the next.
//
// Drop returns an error wrapping errors.ErrUnsupported where a single
// file cannot be dropped (systems other than Linux).
package coldcache
