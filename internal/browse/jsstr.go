package browse

import (
	"unicode/utf8"
)

// JavaScript string semantics on Go strings.
//
// Both views were defined by JavaScript code, which measures and cuts
// strings in UTF-16 code units (String.prototype.length and slice). A cut that falls between the two
// halves of a surrogate pair leaves a lone high surrogate in JS; here it is
// kept as its WTF-8 bytes (0xED 0xA0..0xAF xx), which this package's JSON
// writer escapes as \udXXX exactly like JSON.stringify does. Consumers that
// need valid UTF-8 (HTML) can pass the string through strings.ToValidUTF8.

// jsLen returns the length of s in UTF-16 code units.
func jsLen(s string) int {
	n := 0
	for i := 0; i < len(s); {
		c := s[i]
		if c < utf8.RuneSelf {
			n++
			i++
			continue
		}
		r, size := utf8.DecodeRuneInString(s[i:])
		switch {
		case r >= 0x10000:
			n += 2
		case size == 1 && isWTF8Surrogate(s[i:]):
			n++
			size = 3
		default:
			n++
		}
		i += size
	}
	return n
}

// jsSlice returns s.slice(0, n) measured in UTF-16 code units. It returns s
// itself (no copy) when s is not longer than n, and a substring when the cut
// falls on a character boundary.
func jsSlice(s string, n int) string {
	if n <= 0 {
		return ""
	}
	if len(s) <= n {
		return s // at most n bytes is at most n code units
	}
	units := 0
	for i := 0; i < len(s); {
		c := s[i]
		if c < utf8.RuneSelf {
			if units == n {
				return s[:i]
			}
			units++
			i++
			continue
		}
		r, size := utf8.DecodeRuneInString(s[i:])
		w := 1
		if r >= 0x10000 {
			w = 2
		}
		if units+w > n {
			if units < n {
				// Cut between the halves of a surrogate pair: JS keeps
				// the high surrogate alone.
				hi := 0xD800 + ((r - 0x10000) >> 10)
				return s[:i] + string([]byte{0xED, byte(0xA0 | (hi>>6)&0x0F), byte(0x80 | hi&0x3F)})
			}
			return s[:i]
		}
		units += w
		i += size
	}
	return s
}

// isJSSpace reports whether r is white space or a line terminator for
// String.prototype.trim.
func isJSSpace(r rune) bool {
	switch r {
	case '\t', '\n', '\v', '\f', '\r', ' ', 0xA0, 0x1680, 0x2028, 0x2029, 0x202F, 0x205F, 0x3000, 0xFEFF:
		return true
	}
	return r >= 0x2000 && r <= 0x200A
}

// jsTrim is String.prototype.trim.
func jsTrim(s string) string {
	start := 0
	for start < len(s) {
		c := s[start]
		if c < utf8.RuneSelf {
			if c == ' ' || c >= '\t' && c <= '\r' {
				start++
				continue
			}
			break
		}
		r, size := utf8.DecodeRuneInString(s[start:])
		if !isJSSpace(r) {
			break
		}
		start += size
	}
	end := len(s)
	for end > start {
		c := s[end-1]
		if c < utf8.RuneSelf {
			if c == ' ' || c >= '\t' && c <= '\r' {
				end--
				continue
			}
			break
		}
		r, size := utf8.DecodeLastRuneInString(s[start:end])
		if !isJSSpace(r) {
			break
		}
		end -= size
	}
	return s[start:end]
}

// normalizePreview is the previews' single-line normalisation, as the
// JavaScript implementations of both views write it:
// s.replace(/[\n\t]/g, " ").trim().
func normalizePreview(s string) string {
	s = jsTrim(s)
	for i := 0; i < len(s); i++ {
		if s[i] == '\n' || s[i] == '\t' {
			b := []byte(s)
			for j := i; j < len(b); j++ {
				if b[j] == '\n' || b[j] == '\t' {
					b[j] = ' '
				}
			}
			return string(b)
		}
	}
	return s
}

// isWTF8Surrogate reports whether s starts with a surrogate code point in
// WTF-8 (0xED 0xA0..0xBF 0x80..0xBF).
func isWTF8Surrogate(s string) bool {
	return len(s) >= 3 && s[0] == 0xED && s[1] >= 0xA0 && s[1] <= 0xBF && s[2] >= 0x80 && s[2] <= 0xBF
}
