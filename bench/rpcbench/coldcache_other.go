//go:build !(linux && (amd64 || arm64))

package main

// coldCache does nothing where the page cache cannot be dropped per file.
func coldCache(string) error { return nil }
