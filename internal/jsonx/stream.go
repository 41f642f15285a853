package jsonx

import (
	"io"
	"unicode/utf8"
)

// StringLen returns len(AppendString(nil, s)) without writing anything.
func StringLen(s string) int {
	n := 2
	for i := 0; i < len(s); {
		p := plainLen(s[i:])
		n += p
		i += p
		if i >= len(s) {
			break
		}
		c := s[i]
		if c < utf8.RuneSelf {
			switch {
			case safeASCII[c]:
				n++
			case c == '\\' || c == '"' || c == '\b' || c == '\f' || c == '\n' || c == '\r' || c == '\t':
				n += 2
			default:
				n += 6
			}
			i++
			continue
		}
		r, size := utf8.DecodeRuneInString(s[i:])
		if r == utf8.RuneError && size == 1 {
			n += 6 // \ufffd
			i++
			continue
		}
		n += size
		i += size
	}
	return n
}

// StringReader reads the JSON string AppendString would write for the
// concatenation of parts, without building it: a string of many megabytes
// (a huge prompt in a request body) is escaped a piece at a time. Each part
// after the first must start at a character boundary of the whole (its
// first byte is not a UTF-8 continuation byte), so that escaping the parts
// one after another is escaping their concatenation.
type StringReader struct {
	parts   []string // not modified
	part    int      // the part being read
	off     int      // how much of it has been read
	buf     []byte   // escaped text not yet read (in scratch)
	scratch []byte   // reused for each piece
	state   int      // 0: opening quote due, 1: parts, 2: closing quote written
}

// NewStringReader returns a StringReader over parts.
func NewStringReader(parts ...string) *StringReader {
	return &StringReader{parts: parts}
}

// StringReaderLen is the number of bytes a StringReader over parts yields.
func StringReaderLen(parts ...string) int {
	n := 2
	for _, p := range parts {
		n += StringLen(p) - 2
	}
	return n
}

// stringChunk is how much of a part is escaped at a time.
const stringChunk = 32 << 10

func (r *StringReader) Read(p []byte) (int, error) {
	n := 0
	for n < len(p) {
		if len(r.buf) > 0 {
			c := copy(p[n:], r.buf)
			r.buf = r.buf[c:]
			n += c
			continue
		}
		switch r.state {
		case 0:
			r.buf = append(r.scratch[:0], '"')
			r.state = 1
		case 1:
			for r.part < len(r.parts) && r.off == len(r.parts[r.part]) {
				r.part++
				r.off = 0
			}
			if r.part == len(r.parts) {
				r.buf = append(r.scratch[:0], '"')
				r.state = 2
				continue
			}
			s := r.parts[r.part][r.off:]
			cut := min(len(s), stringChunk)
			// Cut before a character's first byte, never inside one:
			// escaping then reads every character whole.
			for cut < len(s) && cut > 0 && !utf8.RuneStart(s[cut]) {
				cut--
			}
			if cut == 0 {
				cut = min(len(s), stringChunk)
			}
			r.off += cut
			if r.scratch == nil {
				r.scratch = make([]byte, 0, 2*stringChunk)
			}
			b := AppendString(r.scratch[:0], s[:cut])
			r.scratch = b
			r.buf = b[1 : len(b)-1]
		default:
			if n == 0 {
				return 0, io.EOF
			}
			return n, nil
		}
	}
	return n, nil
}
