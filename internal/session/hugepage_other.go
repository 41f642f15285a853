//go:build !linux

package session

func adviseHuge[T any]([]T) {}

func hugeSlice[T any](n int, aligned bool) []T { return make([]T, n) }
