package browse

import (
	"bufio"
	"io"
	"slices"
	"strconv"
	"strings"

	"github.com/pisces-agent/pisces/internal/jsonx"
	"github.com/pisces-agent/pisces/internal/session"
)

// ListJSON is list_sessions' answer kept as the encoded items of its
// sessions: the bytes of ListSessions(infos, q).MarshalJSON(), never joined
// into one buffer. Each session's item is encoded once per listing cache
// entry (kept in its Info's Memo), so a repeated listing of unchanged
// sessions only picks fragments and writes them out. An item not encoded
// yet is encoded when it is first written: on a first listing, encoding
// goes on while the client reads what is already written.
type ListJSON struct {
	page     []*session.Info
	items    []*encodedItem // nil: not encoded yet
	withText bool
	total    int
	hint     int // about the length of the answer
}

// encodedItem is one session's list item with its allMessagesText:
// b[:cut] is the item up to (not including) `,"allMessagesText":`, and
// b[cut:] the rest, closing brace included.
type encodedItem struct {
	b   []byte
	cut int
}

// ListSessionsJSON is ListSessions encoded: the same filtering, order,
// paging and bytes. The infos must not change until the answer is
// written.
func ListSessionsJSON(infos []session.Info, q ListQuery) *ListJSON {
	page, total := listPage(infos, q)
	withText := q.IncludeText == nil || *q.IncludeText
	items := make([]*encodedItem, len(page))
	hint := 32
	for i, in := range page {
		items[i], _ = in.Memo.Load().(*encodedItem)
		hint += 200 + len(in.Path) + len(in.Cwd) + len(in.Name) + len(in.FirstMessage)
		if withText {
			hint += len(in.AllMessagesText)
		}
	}
	return &ListJSON{page: page, items: items, withText: withText, total: total, hint: hint}
}

// SizeHint is about the length of the answer, known without encoding it.
func (l *ListJSON) SizeHint() int { return l.hint }

// item returns the encoded item i, encoding (and memoising) it if needed.
// Not safe for concurrent use on one ListJSON.
func (l *ListJSON) item(i int) *encodedItem {
	if e := l.items[i]; e != nil {
		return e
	}
	e := encodeItem(l.page[i])
	l.page[i].Memo.Store(e)
	l.items[i] = e
	return e
}

// encodeItem writes what ListResult.MarshalJSON writes for the item of in
// with its text.
func encodeItem(in *session.Info) *encodedItem {
	created, modified := ISOTime(in.Created), ISOTime(in.Modified)
	b := make([]byte, 0, 160+len(in.Path)+len(in.ID)+len(in.Cwd)+len(in.Name)+len(in.ParentSessionPath)+len(created)+len(modified)+len(in.FirstMessage)+len(in.AllMessagesText))
	b = appendItemHead(b, in.Path, in.ID, in.Cwd, in.Name, in.ParentSessionPath, created, modified, in.MessageCount, in.FirstMessage)
	cut := len(b)
	b = append(b, `,"allMessagesText":`...)
	b = appendText(b, in.AllMessagesText)
	return &encodedItem{b: append(b, '}'), cut: cut}
}

// appendText is appendString for a long text: when all of it is printable
// ASCII without '"' or '\\' (most texts), which appendString would write as
// it is, it is copied at once after a check of 32 bytes a step.
func appendText(dst []byte, s string) []byte {
	if !jsonx.PlainASCII(s) {
		return appendString(dst, s)
	}
	dst = append(dst, '"')
	dst = append(dst, s...)
	return append(dst, '"')
}

// listPage filters, sorts (newest modified first) and pages infos; total
// counts the matches before paging.
func listPage(infos []session.Info, q ListQuery) (page []*session.Info, total int) {
	matched := make([]*session.Info, 0, len(infos))
	if q.Query == "" {
		for i := range infos {
			matched = append(matched, &infos[i])
		}
	} else {
		needle := strings.ToLower(q.Query)
		for i := range infos {
			in := &infos[i]
			if !containsFold(in.Name, needle) && !containsFold(in.FirstMessage, needle) && !containsFold(in.AllMessagesText, needle) {
				continue
			}
			matched = append(matched, in)
		}
	}
	// The infos usually come sorted already (session.List sorts them):
	// a stable sort of a sorted slice leaves it as it is.
	after := func(a, b *session.Info) int {
		if a.Modified.After(b.Modified) {
			return -1
		}
		if b.Modified.After(a.Modified) {
			return 1
		}
		return 0
	}
	if !slices.IsSortedFunc(matched, after) {
		slices.SortStableFunc(matched, after)
	}
	off := max(q.Offset, 0)
	if off > len(matched) {
		off = len(matched)
	}
	page = matched[off:]
	if q.Limit > 0 && q.Limit < len(page) {
		page = page[:q.Limit]
	}
	return page, len(matched)
}

// Len is the length of the answer in bytes.
func (l *ListJSON) Len() int {
	n := len(`{"sessions":[],"total":`) + len(strconv.Itoa(l.total)) + 1
	for i := range l.items {
		e := l.item(i)
		if i > 0 {
			n++
		}
		if l.withText {
			n += len(e.b)
		} else {
			n += e.cut + 1
		}
	}
	return n
}

// AppendTo appends the answer to b.
func (l *ListJSON) AppendTo(b []byte) []byte {
	b = append(b, `{"sessions":[`...)
	for i := range l.items {
		e := l.item(i)
		if i > 0 {
			b = append(b, ',')
		}
		if l.withText {
			b = append(b, e.b...)
		} else {
			b = append(append(b, e.b[:e.cut]...), '}')
		}
	}
	b = append(b, `],"total":`...)
	b = strconv.AppendInt(b, int64(l.total), 10)
	return append(b, '}')
}

// MarshalJSON returns the answer in one buffer.
func (l *ListJSON) MarshalJSON() ([]byte, error) {
	return l.AppendTo(make([]byte, 0, l.Len())), nil
}

// WriteTo writes the answer to w piece by piece (through a buffer when w
// is not a *bufio.Writer).
func (l *ListJSON) WriteTo(w io.Writer) (int64, error) {
	bw, ok := w.(*bufio.Writer)
	if !ok {
		bw = bufio.NewWriterSize(w, 64<<10)
	}
	var n int64
	var err error
	write := func(p []byte) {
		if err == nil {
			var k int
			k, err = bw.Write(p)
			n += int64(k)
		}
	}
	var scratch [24]byte
	comma, brace := []byte{','}, []byte{'}'}
	write(append(scratch[:0], `{"sessions":[`...))
	for i := range l.items {
		e := l.item(i)
		if i > 0 {
			write(comma)
		}
		if l.withText {
			write(e.b)
		} else {
			write(e.b[:e.cut])
			write(brace)
		}
	}
	write(append(scratch[:0], `],"total":`...))
	write(strconv.AppendInt(scratch[:0], int64(l.total), 10))
	write(brace)
	if !ok && err == nil {
		err = bw.Flush()
	}
	return n, err
}
