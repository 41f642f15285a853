package browse

import (
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/pisces-agent/pisces/internal/session"
)

// ListQuery is what list_sessions filters and pages with. Scope and
// SessionDir choose which infos the caller collects; they are kept here so
// the command decodes into one value.
type ListQuery struct {
	Scope       string `json:"scope,omitempty"` // "cwd" (default), "current" (same as cwd), "all"
	SessionDir  string `json:"sessionDir,omitempty"`
	Query       string `json:"query,omitempty"`       // case-insensitive substring of name, firstMessage, allMessagesText
	Limit       int    `json:"limit,omitempty"`       // <= 0: no limit
	Offset      int    `json:"offset,omitempty"`      // < 0 counts as 0
	IncludeText *bool  `json:"includeText,omitempty"` // nil = true
}

// SessionItem is one session of list_sessions.
type SessionItem struct {
	Path              string  `json:"path"`
	ID                string  `json:"id"`
	Cwd               string  `json:"cwd"`
	Name              string  `json:"name,omitempty"`
	ParentSessionPath string  `json:"parentSessionPath,omitempty"`
	Created           string  `json:"created"`
	Modified          string  `json:"modified"`
	MessageCount      int     `json:"messageCount"`
	FirstMessage      string  `json:"firstMessage"`
	AllMessagesText   *string `json:"allMessagesText,omitempty"`
}

// ListResult is list_sessions' answer. Total counts the sessions that
// matched the query, before Offset and Limit.
type ListResult struct {
	Sessions []SessionItem `json:"sessions"`
	Total    int           `json:"total"`
}

// ISOTime writes t like JavaScript's Date.prototype.toISOString, with the
// PR #1762 rule that an invalid date (here the zero time) is the epoch.
func ISOTime(t time.Time) string {
	if t.IsZero() {
		return "1970-01-01T00:00:00.000Z"
	}
	t = t.UTC()
	// JS dates span ±8.64e15 ms around the epoch.
	if ms := t.UnixMilli(); ms > 8.64e15 || ms < -8.64e15 {
		return "1970-01-01T00:00:00.000Z"
	}
	y := t.Year()
	if y >= 0 && y <= 9999 {
		return t.Format("2006-01-02T15:04:05.000Z")
	}
	sign := "+"
	if y < 0 {
		sign, y = "-", -y
	}
	return fmt.Sprintf("%s%06d", sign, y) + t.Format("-01-02T15:04:05.000Z")
}

// ListSessions filters, sorts (newest modified first) and pages infos.
func ListSessions(infos []session.Info, q ListQuery) ListResult {
	page, total := listPage(infos, q)
	withText := q.IncludeText == nil || *q.IncludeText
	res := ListResult{Total: total, Sessions: make([]SessionItem, len(page))}
	for i, in := range page {
		it := SessionItem{
			Path:              in.Path,
			ID:                in.ID,
			Cwd:               in.Cwd,
			Name:              in.Name,
			ParentSessionPath: in.ParentSessionPath,
			Created:           ISOTime(in.Created),
			Modified:          ISOTime(in.Modified),
			MessageCount:      in.MessageCount,
			FirstMessage:      in.FirstMessage,
		}
		if withText {
			t := in.AllMessagesText
			it.AllMessagesText = &t
		}
		res.Sessions[i] = it
	}
	return res
}

// containsFold reports whether lowerNeedle (already lower-cased) occurs in
// s, ignoring case.
func containsFold(s, lowerNeedle string) bool {
	if len(s) < len(lowerNeedle) && !hasNonASCII(s) {
		return false
	}
	return strings.Contains(strings.ToLower(s), lowerNeedle)
}

func hasNonASCII(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] >= 0x80 {
			return true
		}
	}
	return false
}

// MarshalJSON writes the list with the package's string writer: a listing
// of 2000 sessions carries megabytes of message text, which reflection
// would write several times slower.
func (r ListResult) MarshalJSON() ([]byte, error) {
	size := 64
	for i := range r.Sessions {
		it := &r.Sessions[i]
		size += 256 + len(it.Path) + len(it.Cwd) + len(it.Name) + len(it.FirstMessage)
		if it.AllMessagesText != nil {
			size += len(*it.AllMessagesText) + 24
		}
	}
	b := make([]byte, 0, size)
	b = append(b, `{"sessions":[`...)
	for i := range r.Sessions {
		it := &r.Sessions[i]
		if i > 0 {
			b = append(b, ',')
		}
		b = appendItemHead(b, it.Path, it.ID, it.Cwd, it.Name, it.ParentSessionPath, it.Created, it.Modified, it.MessageCount, it.FirstMessage)
		if it.AllMessagesText != nil {
			b = append(b, `,"allMessagesText":`...)
			b = appendString(b, *it.AllMessagesText)
		}
		b = append(b, '}')
	}
	b = append(b, `],"total":`...)
	b = strconv.AppendInt(b, int64(r.Total), 10)
	return append(b, '}'), nil
}

// appendItemHead appends a list item up to its allMessagesText (the
// object is left open).
func appendItemHead(b []byte, path, id, cwd, name, parent, created, modified string, messageCount int, firstMessage string) []byte {
	b = append(b, `{"path":`...)
	b = appendString(b, path)
	b = append(b, `,"id":`...)
	b = appendString(b, id)
	b = append(b, `,"cwd":`...)
	b = appendString(b, cwd)
	if name != "" {
		b = append(b, `,"name":`...)
		b = appendString(b, name)
	}
	if parent != "" {
		b = append(b, `,"parentSessionPath":`...)
		b = appendString(b, parent)
	}
	b = append(b, `,"created":`...)
	b = appendString(b, created)
	b = append(b, `,"modified":`...)
	b = appendString(b, modified)
	b = append(b, `,"messageCount":`...)
	b = strconv.AppendInt(b, int64(messageCount), 10)
	b = append(b, `,"firstMessage":`...)
	return appendString(b, firstMessage)
}
