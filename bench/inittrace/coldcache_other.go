//go:build !(linux && (amd64 || arm64))

package main

import "errors"

func dropCache(string) error { return errors.New("not supported on this system") }
