// Package lazy holds a value built on first use, for package-level state
// (compiled regular expressions, tables) that should cost nothing at start.
//
// A package-level variable initialised by a call — regexp.MustCompile, a
// map literal, even sync.OnceValue — makes the package run code at
// program start, in every mode, whether or not the value is ever used;
// that code and the data it reads are pages of the binary the process
// then keeps resident (docs/performance.md, "Resident memory: where it
// goes"). A Value whose New is a function literal is laid out by the
// linker instead, so declaring one runs nothing:
//
//	var validName = lazy.Value[*regexp.Regexp]{New: func() *regexp.Regexp {
//		return regexp.MustCompile(`^[a-z]+$`)
//	}}
//
//	validName.Get().MatchString(s)
package lazy

import "sync"

// Value is a value built by New on the first Get. It is safe for
// concurrent use; New runs once. A Value must not be copied after first
// use.
type Value[T any] struct {
	New func() T

	once sync.Once
	v    T
}

// Get returns the value, building it on the first call.
func (l *Value[T]) Get() T {
	l.once.Do(func() { l.v = l.New() })
	return l.v
}
