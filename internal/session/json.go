package session

import (
	"bufio"
	"bytes"
	"io"

	"github.com/pisces-agent/pisces/internal/ai"
	"github.com/pisces-agent/pisces/internal/jsonx"
)

// JSONArray is a JSON array of messages or entry lines (the bodies of
// get_messages and get_entries), made to be written out in pieces rather
// than built in one buffer: an element that is exactly what the encoder
// would write for it (a verbatim message, a compact line) is copied from
// its entry's line when the array is written, the others are encoded when
// the array is made. Entries never change, so an array is a snapshot.
type JSONArray struct {
	items []*Entry // the elements; nil: the next encoded one
	lines bool     // items stand for their lines (else for their messages)
	enc   []byte   // the encoded elements, in order
	ends  []int    // where each of them ends in enc
	size  int      // the length of the array's JSON
}

// MessagesJSON returns the context of the current leaf (the messages
// BuildContext gives) as a JSON array, with the bytes of
// ai.AppendMessages, without decoding the messages it copies.
func (s *Session) MessagesJSON() (*JSONArray, error) {
	s.mu.Lock()
	a := &JSONArray{}
	var made []ai.Message // the messages to encode, for the nil items
	if s.leaf != nil {
		path := s.branchLocked(s.leaf)
		a.items = make([]*Entry, 0, len(path)+2)
		var ctx Context
		s.walkContext(path, &ctx, false, func(e *Entry, m ai.Message) {
			if m == nil {
				if v := e.verbatim(); v != nil {
					a.items = append(a.items, e)
					a.size += len(v)
					return
				}
				m = e.Message()
			}
			a.items = append(a.items, nil)
			made = append(made, m)
		})
	}
	s.mu.Unlock()
	a.ends = make([]int, 0, len(made))
	for _, m := range made {
		var err error
		if a.enc, err = ai.AppendMessage(a.enc, m); err != nil {
			// The reflective encoder of the whole list says what is wrong,
			// in the words it always used.
			if _, lerr := ai.Messages(s.BuildContext().Messages).MarshalJSON(); lerr != nil {
				return nil, lerr
			}
			return nil, err
		}
		a.ends = append(a.ends, len(a.enc))
	}
	a.finish()
	return a, nil
}

// EntriesJSON returns the lines of entries as a JSON array, as
// encoding/json writes a list of json.RawMessage (compacted, \u2028 and
// \u2029 unescaped).
func EntriesJSON(entries []*Entry) (*JSONArray, error) {
	a := &JSONArray{items: make([]*Entry, len(entries)), lines: true}
	for i, e := range entries {
		if e.flags&flagCompact != 0 {
			a.items[i] = e
			a.size += len(e.Raw)
			continue
		}
		var err error
		if a.enc, err = jsonx.AppendRaw(a.enc, e.Raw); err != nil {
			return nil, err
		}
		a.ends = append(a.ends, len(a.enc))
	}
	a.finish()
	return a, nil
}

func (a *JSONArray) finish() {
	a.size += len(a.enc) + 2 // brackets
	if n := len(a.items); n > 1 {
		a.size += n - 1 // commas
	}
}

// Len returns the length of the array's JSON.
func (a *JSONArray) Len() int { return a.size }

// elem returns the bytes of item e (not nil).
func (a *JSONArray) elem(e *Entry) []byte {
	if a.lines {
		return e.Raw
	}
	return e.verbatim()
}

// AppendTo appends the array's JSON to dst.
func (a *JSONArray) AppendTo(dst []byte) []byte {
	dst = append(dst, '[')
	prev, k := 0, 0
	for i, e := range a.items {
		if i > 0 {
			dst = append(dst, ',')
		}
		if e != nil {
			dst = append(dst, a.elem(e)...)
			continue
		}
		dst = append(dst, a.enc[prev:a.ends[k]]...)
		prev = a.ends[k]
		k++
	}
	return append(dst, ']')
}

// WriteTo writes the array's JSON to w, element by element (through a
// buffer when w is neither a *bufio.Writer nor a *bytes.Buffer).
func (a *JSONArray) WriteTo(w io.Writer) (int64, error) {
	var bw *bufio.Writer
	switch w.(type) {
	case *bufio.Writer, *bytes.Buffer:
	default:
		bw = bufio.NewWriterSize(w, 64<<10)
		w = bw
	}
	var n int64
	var err error
	write := func(p []byte) {
		if err == nil {
			var k int
			k, err = w.Write(p)
			n += int64(k)
		}
	}
	open, comma, closing := []byte{'['}, []byte{','}, []byte{']'}
	write(open)
	prev, k := 0, 0
	for i, e := range a.items {
		if i > 0 {
			write(comma)
		}
		if e != nil {
			write(a.elem(e))
			continue
		}
		write(a.enc[prev:a.ends[k]])
		prev = a.ends[k]
		k++
	}
	write(closing)
	if bw != nil && err == nil {
		err = bw.Flush()
	}
	return n, err
}

// Elements returns the JSON of each element, in order (slices of the
// array's own bytes: not to be modified).
func (a *JSONArray) Elements() [][]byte {
	out := make([][]byte, 0, len(a.items))
	prev, k := 0, 0
	for _, e := range a.items {
		if e != nil {
			out = append(out, a.elem(e))
			continue
		}
		out = append(out, a.enc[prev:a.ends[k]])
		prev = a.ends[k]
		k++
	}
	return out
}
