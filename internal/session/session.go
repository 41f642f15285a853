// Package session stores pi-compatible sessions: tree-structured JSONL files
// (format version 3), append-only and crash-safe. See docs/sessions.md.
package session

import (
	"bufio"
	"bytes"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"time"

	"github.com/pisces-agent/pisces/internal/ai"
	"github.com/pisces-agent/pisces/internal/fsx"
	"github.com/pisces-agent/pisces/internal/jsonx"
	"github.com/pisces-agent/pisces/internal/lazy"
)

// Test hooks.
var (
	nowFunc              = time.Now
	randReader io.Reader = rand.Reader
	randMu     sync.Mutex
	warnOutput io.Writer = os.Stderr
)

// TimeFormat is the layout of every timestamp in a session file (JS
// toISOString).
const TimeFormat = "2006-01-02T15:04:05.000Z"

func isoNow() string { return nowFunc().UTC().Format(TimeFormat) }

func randBytes(n int) []byte {
	b := make([]byte, n)
	randMu.Lock()
	_, err := io.ReadFull(randReader, b)
	randMu.Unlock()
	if err != nil {
		panic("session: random source failed: " + err.Error())
	}
	return b
}

// NewUUIDv7 returns a random RFC 9562 version 7 UUID.
func NewUUIDv7() string {
	b := randBytes(16)
	ms := uint64(nowFunc().UnixMilli())
	for i := 0; i < 6; i++ {
		b[i] = byte(ms >> (40 - 8*i))
	}
	b[6] = 0x70 | b[6]&0x0f
	b[8] = 0x80 | b[8]&0x3f
	return uuidString(b)
}

func newUUIDv4() string {
	b := randBytes(16)
	b[6] = 0x40 | b[6]&0x0f
	b[8] = 0x80 | b[8]&0x3f
	return uuidString(b)
}

func uuidString(b []byte) string {
	h := hex.EncodeToString(b)
	return h[0:8] + "-" + h[8:12] + "-" + h[12:16] + "-" + h[16:20] + "-" + h[20:32]
}

// newEntryID returns 8 hex chars not in used (a full UUID after 100
// collisions), like pi's generateId.
func newEntryID(used func(string) bool) string {
	for i := 0; i < 100; i++ {
		id := hex.EncodeToString(randBytes(4))
		if !used(id) {
			return id
		}
	}
	return newUUIDv4()
}

var validID = lazy.Value[*regexp.Regexp]{New: func() *regexp.Regexp {
	return regexp.MustCompile(`^[A-Za-z0-9](?:[A-Za-z0-9._-]*[A-Za-z0-9])?$`)
}}

// ValidSessionID reports whether id is acceptable as an explicit session id.
func ValidSessionID(id string) bool { return validID.Get().MatchString(id) }

// Options configure New.
type Options struct {
	Dir           string // directory for the new file (created when needed)
	Cwd           string // working directory recorded in the header
	InMemory      bool   // never write a file (--no-session)
	ParentSession string // header parentSession
	ID            string // explicit session id; "" = a new UUIDv7
}

// LoadReport says what Open met in the file.
type LoadReport struct {
	Skipped  int  // blank and malformed lines skipped (torn tail included)
	Migrated bool // the file was migrated to version 3 and rewritten
	TornTail bool // the last line had no newline and was not a valid entry
}

type labelInfo struct {
	label     string
	timestamp string
}

// Session is one session: its header and entries, in memory and (unless in
// memory only) in its file. All methods are safe for concurrent use.
type Session struct {
	mu       sync.Mutex
	header   Header
	path     string // "" when in memory
	inMemory bool
	// detached: a read-only view of a file another process writes
	// (DetachFile); forks and clones of it are files of their own.
	detached bool

	entries []*Entry
	byID    idIndex // id -> position in entries
	dupIDs  bool    // some id was indexed twice (the later entry wins)
	leaf    *Entry

	labels     map[string]labelInfo
	labelOrder []string // targets in JS Map insertion order
	name       string
	hasConv    bool // a user or assistant message exists

	onDisk   bool     // the file exists with the header (and entries so far)
	existing bool     // the file existed empty when opened: no O_EXCL
	f        *os.File // opened lazily for appending
	needNL   bool     // the file does not end with a newline
	closed   bool
}

// DirFor returns <agentDir>/sessions/--<cwd with / as ->-- (pi's per-cwd
// session directory).
func DirFor(agentDir, cwd string) string {
	if abs, err := filepath.Abs(cwd); err == nil {
		cwd = abs
	}
	s := cwd
	if len(s) > 0 && (s[0] == '/' || s[0] == '\\') {
		s = s[1:]
	}
	s = strings.NewReplacer("/", "-", "\\", "-", ":", "-").Replace(s)
	return filepath.Join(agentDir, "sessions", "--"+s+"--")
}

// FileName returns pi's file name for a session started at ts.
func FileName(ts, id string) string {
	return strings.NewReplacer(":", "-", ".", "-").Replace(ts) + "_" + id + ".jsonl"
}

// New starts a session. Its file is created at the first user or assistant
// message; until then entries live in memory.
func New(opts Options) (*Session, error) {
	id := opts.ID
	if id == "" {
		id = NewUUIDv7()
	} else if !ValidSessionID(id) {
		return nil, fmt.Errorf("Invalid session id: %s", id)
	}
	ts := isoNow()
	cwd := opts.Cwd
	if cwd == "" {
		cwd, _ = os.Getwd()
	}
	s := newEmpty()
	s.inMemory = opts.InMemory
	s.header = newHeader(id, ts, cwd, opts.ParentSession)
	if !opts.InMemory {
		dir := opts.Dir
		if dir == "" {
			return nil, errors.New("session: Options.Dir is required unless InMemory")
		}
		s.path = filepath.Join(dir, FileName(ts, id))
	}
	return s, nil
}

func newEmpty() *Session {
	return &Session{labels: map[string]labelInfo{}}
}

// ID returns the session id.
func (s *Session) ID() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.header.ID
}

// File returns the session file path ("" when in memory). The file may not
// exist yet (see New).
func (s *Session) File() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.path
}

// Persisted reports whether the file exists on disk.
func (s *Session) Persisted() bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.onDisk
}

// InMemory reports whether the session never writes a file.
func (s *Session) InMemory() bool { return s.inMemory }

// Header returns the header.
func (s *Session) Header() Header {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.header
}

// Cwd returns the header's working directory.
func (s *Session) Cwd() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.header.Cwd
}

// Name returns the latest session_info name ("" if none).
func (s *Session) Name() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.name
}

// LeafID returns the current leaf id ("" when there is none).
func (s *Session) LeafID() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.leaf == nil {
		return ""
	}
	return s.leaf.ID
}

// Leaf returns the current leaf entry (nil when there is none).
func (s *Session) Leaf() *Entry {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.leaf
}

// Entries returns all entries in append order, header excluded.
func (s *Session) Entries() []*Entry {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]*Entry(nil), s.entries...)
}

// Len returns the number of entries.
func (s *Session) Len() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return len(s.entries)
}

// Entry returns the entry with id, or nil.
func (s *Session) Entry(id string) *Entry {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.lookup(id)
}

// Branch returns the path root..fromID (nil when fromID is unknown).
func (s *Session) Branch(fromID string) []*Entry {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.branchLocked(s.lookup(fromID))
}

// lookup returns the entry with id (the last one indexed), or nil.
func (s *Session) lookup(id string) *Entry {
	if p := s.byID.find(s.entries, id); p >= 0 {
		return s.entries[p]
	}
	return nil
}

func (s *Session) has(id string) bool { return s.byID.find(s.entries, id) >= 0 }

func (s *Session) branchLocked(e *Entry) []*Entry {
	if e == nil {
		return nil
	}
	// k is e's position in s.entries (-1 when unknown). While ids are
	// unique, a parent that is the previous entry (the usual case) is
	// found without a lookup.
	k := -1
	if n := len(s.entries); n > 0 && s.entries[n-1] == e {
		k = n - 1
	}
	path := make([]*Entry, 0, min(len(s.entries), 1<<16)+1)
	seen := 0
	for e != nil && seen <= len(s.entries) {
		path = append(path, e)
		seen++
		if e.ParentID == nil || *e.ParentID == e.ID {
			break
		}
		p := *e.ParentID
		if k > 0 && !s.dupIDs && p != "" && s.entries[k-1].ID == p {
			k--
			e = s.entries[k]
			continue
		}
		k = s.byID.find(s.entries, p)
		e = nil
		if k >= 0 {
			e = s.entries[k]
		}
	}
	for i, j := 0, len(path)-1; i < j; i, j = i+1, j-1 {
		path[i], path[j] = path[j], path[i]
	}
	return path
}

// SetLeaf moves the leaf to id.
func (s *Session) SetLeaf(id string) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	e := s.lookup(id)
	if e == nil {
		return fmt.Errorf("Entry %s not found", id)
	}
	s.leaf = e
	return nil
}

// ResetLeaf clears the leaf: the next entry appended becomes a root.
func (s *Session) ResetLeaf() {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.leaf = nil
}

// Labels returns the current label of every labelled entry.
func (s *Session) Labels() map[string]string {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := make(map[string]string, len(s.labels))
	for k, v := range s.labels {
		out[k] = v.label
	}
	return out
}

// Label returns the label of an entry ("" if none).
func (s *Session) Label(id string) string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.labels[id].label
}

// index adds a loaded or appended entry to the in-memory indexes.
func (s *Session) index(e *Entry) {
	s.entries = append(s.entries, e)
	if e.ID != "" && s.byID.set(s.entries, e.ID, len(s.entries)-1) {
		s.dupIDs = true
	}
	s.leaf = e
	switch e.Type {
	case TypeMessage:
		if !s.hasConv && (e.role == roleUser || e.role == roleAssistant) {
			s.hasConv = true
		}
	case TypeLabel:
		if e.Label != nil && *e.Label != "" {
			if _, ok := s.labels[e.TargetID]; !ok {
				s.labelOrder = append(s.labelOrder, e.TargetID)
			}
			s.labels[e.TargetID] = labelInfo{*e.Label, e.Timestamp}
		} else if _, ok := s.labels[e.TargetID]; ok {
			delete(s.labels, e.TargetID)
			for i, t := range s.labelOrder {
				if t == e.TargetID {
					s.labelOrder = append(s.labelOrder[:i:i], s.labelOrder[i+1:]...)
					break
				}
			}
		}
	case TypeSessionInfo:
		s.name = strings.TrimSpace(e.Name)
	}
}

// ---- appending ----

func (s *Session) newEntryLocked(typ string) *Entry {
	e := &Entry{Type: typ, Timestamp: isoNow(), Fields: fieldsFor(typ)}
	e.ID = newEntryID(s.has)
	if s.leaf != nil {
		p := s.leaf.ID
		e.ParentID = &p
	}
	return e
}

// appendLocked encodes e, persists it and indexes it.
func (s *Session) appendLocked(e *Entry) (*Entry, error) {
	if err := encode(e); err != nil {
		return nil, err
	}
	if err := s.persistLocked(e); err != nil {
		return nil, err
	}
	s.index(e)
	return e, nil
}

func isConversation(e *Entry) bool {
	return e.Type == TypeMessage && (e.role == roleUser || e.role == roleAssistant)
}

// persistLocked writes e: as one appended line once the file exists, or
// together with the header and every earlier entry when e is the first user
// or assistant message.
func (s *Session) persistLocked(e *Entry) error {
	if s.inMemory {
		return nil
	}
	if s.closed {
		return errors.New("session: closed")
	}
	if !s.onDisk {
		if !s.hasConv && !isConversation(e) {
			return nil
		}
		return s.createFileLocked(e)
	}
	if s.f == nil {
		f, err := os.OpenFile(s.path, os.O_WRONLY|os.O_APPEND, 0)
		if err != nil {
			return err
		}
		s.f = f
	}
	w := bufio.NewWriterSize(s.f, lineBuffer(len(e.Raw)))
	if s.needNL {
		w.WriteByte('\n')
	}
	w.Write(e.Raw)
	w.WriteByte('\n')
	if err := w.Flush(); err != nil {
		return fmt.Errorf("session: writing %s: %w", s.path, err)
	}
	s.needNL = false
	return nil
}

// lineBuffer sizes the buffer that writes lines to the file: a line that
// fits is written with one write; a longer one (a huge prompt) goes from
// its own memory to the file, not through a copy.
func lineBuffer(n int) int { return min(n+2, 64<<10) }

func (s *Session) createFileLocked(extra *Entry) error {
	if err := os.MkdirAll(filepath.Dir(s.path), 0o755); err != nil {
		return err
	}
	flags := os.O_WRONLY | os.O_APPEND | os.O_CREATE | os.O_EXCL
	if s.existing {
		flags = os.O_WRONLY | os.O_APPEND
	}
	f, err := os.OpenFile(s.path, flags, 0o644)
	if err != nil {
		return fmt.Errorf("session: creating %s: %w", s.path, err)
	}
	buf := bufio.NewWriterSize(f, 64<<10)
	buf.Write(s.header.Raw)
	buf.WriteByte('\n')
	for _, e := range s.entries {
		buf.Write(e.Raw)
		buf.WriteByte('\n')
	}
	if extra != nil {
		buf.Write(extra.Raw)
		buf.WriteByte('\n')
	}
	if err := buf.Flush(); err != nil {
		f.Close()
		return fmt.Errorf("session: writing %s: %w", s.path, err)
	}
	s.f = f
	s.onDisk = true
	s.existing = false
	return nil
}

// Flush writes the file now if it does not exist yet, even without a
// conversation (pi defers this; Pisces uses it for explicit saves).
func (s *Session) Flush() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.inMemory || s.onDisk {
		return nil
	}
	return s.createFileLocked(nil)
}

// AppendMessage appends a message entry (a *ai.CustomMessage becomes a
// custom_message entry, as in pi).
func (s *Session) AppendMessage(m ai.Message) (*Entry, error) {
	if m == nil {
		return nil, errors.New("session: nil message")
	}
	if cm, ok := m.(*ai.CustomMessage); ok {
		return s.AppendCustomMessage(cm.CustomType, cm.Content, cm.Display, cm.Details)
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	e := s.newEntryLocked(TypeMessage)
	e.setMessage(m, nil)
	return s.appendLocked(e)
}

// AppendModelChange appends a model_change entry.
func (s *Session) AppendModelChange(provider, modelID string) (*Entry, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	e := s.newEntryLocked(TypeModelChange)
	e.Provider, e.ModelID = provider, modelID
	return s.appendLocked(e)
}

// AppendThinkingLevelChange appends a thinking_level_change entry.
func (s *Session) AppendThinkingLevelChange(level string) (*Entry, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	e := s.newEntryLocked(TypeThinkingLevelChange)
	e.ThinkingLevel = level
	return s.appendLocked(e)
}

// AppendSessionInfo appends a session_info entry. The name is trimmed and
// line breaks become spaces; an empty name clears the name.
func (s *Session) AppendSessionInfo(name string) (*Entry, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	e := s.newEntryLocked(TypeSessionInfo)
	e.Name = normalizeName(name)
	return s.appendLocked(e)
}

// AppendLabel appends a label entry (a child of the current leaf) for
// targetID. An empty label clears it.
func (s *Session) AppendLabel(targetID, label string) (*Entry, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.lookup(targetID) == nil {
		return nil, fmt.Errorf("Entry %s not found", targetID)
	}
	e := s.newEntryLocked(TypeLabel)
	e.TargetID = targetID
	if label != "" {
		e.Label = &label
	}
	return s.appendLocked(e)
}

// AppendCustom appends an extension's custom entry (data nil = absent).
func (s *Session) AppendCustom(customType string, data json.RawMessage) (*Entry, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	e := s.newEntryLocked(TypeCustom)
	e.CustomType, e.Data = customType, data
	return s.appendLocked(e)
}

// AppendCustomMessage appends a custom_message entry (details nil = absent).
func (s *Session) AppendCustomMessage(customType string, content ai.UserContent, display bool, details json.RawMessage) (*Entry, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	e := s.newEntryLocked(TypeCustomMessage)
	e.CustomType, e.Content, e.Display, e.Details = customType, content, display, details
	return s.appendLocked(e)
}

// Compaction is the full form of a compaction entry for
// AppendCompactionEntry.
type Compaction struct {
	Summary          string
	FirstKeptEntryID string
	TokensBefore     int64
	Details          json.RawMessage   // nil = absent
	Usage            *ai.Usage         // nil = absent
	FromHook         bool              // produced by an extension
	SystemMessage    *ai.SystemMessage // pi 1.5 prompt checkpoint; nil = absent
}

// AppendCompaction appends a compaction entry.
func (s *Session) AppendCompaction(summary, firstKeptEntryID string, tokensBefore int64, details json.RawMessage, fromHook bool) (*Entry, error) {
	return s.AppendCompactionEntry(Compaction{Summary: summary, FirstKeptEntryID: firstKeptEntryID, TokensBefore: tokensBefore, Details: details, FromHook: fromHook})
}

// AppendCompactionEntry appends a compaction entry with every optional
// field. An empty FirstKeptEntryID means "retain nothing": the entry's own
// id is stored, as pi 1.5 does.
func (s *Session) AppendCompactionEntry(c Compaction) (*Entry, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	e := s.newEntryLocked(TypeCompaction)
	e.Summary, e.FirstKeptEntryID, e.TokensBefore = c.Summary, c.FirstKeptEntryID, c.TokensBefore
	if e.FirstKeptEntryID == "" {
		e.FirstKeptEntryID = e.ID
	}
	e.Details, e.Usage, e.SystemMessage = c.Details, c.Usage, c.SystemMessage
	fh := c.FromHook
	e.FromHook = &fh
	return s.appendLocked(e)
}

// AppendBranchSummary appends a branch_summary entry as a child of the
// current leaf (move the leaf first). fromID is the branch-from id or
// "root".
func (s *Session) AppendBranchSummary(fromID, summary string, details json.RawMessage, fromHook bool) (*Entry, error) {
	return s.AppendBranchSummaryUsage(fromID, summary, details, nil, fromHook)
}

// AppendBranchSummaryUsage is AppendBranchSummary with the summarization
// usage (nil = absent).
func (s *Session) AppendBranchSummaryUsage(fromID, summary string, details json.RawMessage, usage *ai.Usage, fromHook bool) (*Entry, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	e := s.newEntryLocked(TypeBranchSummary)
	e.FromID, e.Summary, e.Details, e.Usage = fromID, summary, details, usage
	fh := fromHook
	e.FromHook = &fh
	return s.appendLocked(e)
}

// AppendContextEdit appends a context_edit entry: replacement is
// {"content":...} or nil (null: leave the target out of the context).
func (s *Session) AppendContextEdit(targetID string, replacement json.RawMessage) (*Entry, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.lookup(targetID) == nil {
		return nil, fmt.Errorf("Entry %s not found", targetID)
	}
	if replacement != nil && isNull(bytes.TrimSpace(replacement)) {
		replacement = nil
	}
	e := s.newEntryLocked(TypeContextEdit)
	e.TargetID, e.Replacement = targetID, replacement
	return s.appendLocked(e)
}

// AppendUsage appends a usage entry (usage outside the context, e.g.
// kind "cache_warm"). note "" = absent.
func (s *Session) AppendUsage(kind, provider, model string, usage ai.Usage, note string) (*Entry, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	e := s.newEntryLocked(TypeUsage)
	e.Kind, e.Provider, e.Model, e.Note = kind, provider, model, note
	u := usage
	e.Usage = &u
	return s.appendLocked(e)
}

// AppendRaw appends an entry given as a JSON object (for example one an
// extension built). Its id, parentId and timestamp are kept if present,
// otherwise they are set (appended at the end, as JS would).
func (s *Session) AppendRaw(obj json.RawMessage) (*Entry, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	obj = append(json.RawMessage(nil), obj...)
	if !validJSON(obj) {
		return nil, errors.New("session: entry is not valid JSON")
	}
	ms, ok := members(nil, obj)
	if !ok {
		return nil, errors.New("session: entry is not a JSON object")
	}
	line := rewriteMembers(obj, func(m []member) []member { return m })
	tmpl := s.newEntryLocked("")
	has := map[string]bool{}
	for _, m := range ms {
		has[m.key] = true
	}
	if !has["id"] {
		line = setMember(line, "id", []byte(`"`+tmpl.ID+`"`))
	}
	if !has["parentId"] {
		pv := []byte("null")
		if tmpl.ParentID != nil {
			pv = []byte(`"` + *tmpl.ParentID + `"`)
		}
		line = setMember(line, "parentId", pv)
	}
	if !has["timestamp"] {
		line = setMember(line, "timestamp", []byte(`"`+tmpl.Timestamp+`"`))
	}
	ms, _ = members(nil, line)
	e := &Entry{}
	parseEntry(e, line, ms)
	if e.Type == TypeMessage {
		if raw := messageRaw(line); raw != nil {
			m, _ := decodeMessage(raw)
			e.setMessage(m, nil)
		}
	}
	if isRawCompact(line) {
		e.flags |= flagCompact
	}
	if e.Type == "" || e.Type == TypeSession {
		return nil, errors.New("session: entry has no valid type")
	}
	if e.ID != "" && s.lookup(e.ID) != nil {
		return nil, fmt.Errorf("session: duplicate entry id %s", e.ID)
	}
	if err := s.persistLocked(e); err != nil {
		return nil, err
	}
	s.index(e)
	return e, nil
}

// Close closes the file handle. The session stays readable; appends fail.
func (s *Session) Close() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.closed = true
	if s.f != nil {
		err := s.f.Close()
		s.f = nil
		return err
	}
	return nil
}

// Bytes returns the session as it is (or would be) on disk: the header
// line and every entry's Raw line, each with a newline.
func (s *Session) Bytes() []byte {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.bytesLocked()
}

func (s *Session) bytesLocked() []byte {
	n := len(s.header.Raw) + 1
	for _, e := range s.entries {
		n += len(e.Raw) + 1
	}
	b := make([]byte, 0, n)
	b = append(b, s.header.Raw...)
	b = append(b, '\n')
	for _, e := range s.entries {
		b = append(b, e.Raw...)
		b = append(b, '\n')
	}
	return b
}

// ---- loading ----

// Open loads a session file. A file of an older version is migrated and
// rewritten atomically. Blank and malformed lines are skipped (and reported
// on stderr); a torn last line is skipped and the next append starts on a
// new line. A non-empty file whose first valid line is not a session header
// is an error naming the file; an empty file becomes a new session bound to
// that path.
func Open(path string) (*Session, LoadReport, error) {
	var rep LoadReport
	if fi, err := os.Stat(path); err == nil && fi.Size() >= minHoldGC {
		defer holdGC()()
	}
	data, err := readFile(path)
	if err != nil {
		return nil, rep, err
	}
	s := newEmpty()
	s.path = path
	if len(data) == 0 {
		s.header = newHeader(NewUUIDv7(), isoNow(), "", "")
		if wd, err := os.Getwd(); err == nil {
			s.header = newHeader(s.header.ID, s.header.Timestamp, wd, "")
		}
		s.existing = true
		return s, rep, nil
	}
	s.needNL = data[len(data)-1] != '\n'

	// Find the header: the first line that parses.
	pos := 0
	found := false
	for pos < len(data) {
		line, next := nextLine(data, pos)
		pos = next
		if len(bytes.TrimSpace(line)) == 0 {
			rep.Skipped++
			continue
		}
		if !validJSON(line) {
			rep.Skipped++
			if next == len(data) && s.needNL {
				rep.TornTail = true
			}
			continue
		}
		h, ok := parseHeader(line)
		if !ok {
			return nil, rep, fmt.Errorf("session file %s is not a valid pi session: the first entry is not a session header", path)
		}
		s.header = h
		found = true
		break
	}
	if !found {
		return nil, rep, fmt.Errorf("session file %s is not a valid pi session: no session header", path)
	}

	skipped, torn := loadEntries(data[pos:], s.needNL, func(slabs [][]Entry, estimate int) {
		if s.entries == nil {
			s.entries = make([]*Entry, 0, estimate)
			s.byID = newIDIndex(estimate)
		}
		for _, slab := range slabs {
			for i := range slab {
				s.index(&slab[i])
			}
		}
	})
	rep.Skipped += skipped
	rep.TornTail = rep.TornTail || torn
	s.onDisk = true

	if rep.Skipped > 0 {
		fmt.Fprintf(warnOutput, "pisces: warning: session file %s: skipped %d blank or malformed line(s)\n", path, rep.Skipped)
	}

	if s.header.Version < CurrentVersion {
		if err := s.migrateLocked(); err != nil {
			return nil, rep, err
		}
		rep.Migrated = true
	}
	return s, rep, nil
}

func nextLine(data []byte, pos int) (line []byte, next int) {
	i := bytes.IndexByte(data[pos:], '\n')
	if i < 0 {
		return data[pos:len(data):len(data)], len(data)
	}
	return data[pos : pos+i : pos+i], pos + i + 1
}

// envelopeKeys are the first keys of a message entry, in pi's order.
var envelopeKeys = newKeySet([]string{"type", "id", "parentId", "timestamp", "message"})

// lineMsg is what scanEntryLine found out about a line besides its members.
type lineMsg struct {
	msg     ai.Message // the message, decoded at once, or
	at, end int        // (end > 0) where the line holds it verbatim
	stop    int        // where an assistant's stopReason value starts
	role    uint8      // its role code
	compact bool       // see flagCompact
}

// scanEntryLine validates a line and splits it into members in one pass.
// When the entry is a message entry (type first, as pi writes it), its
// message is checked during the same pass: a verbatim one (verbatim.go) is
// left to be decoded on first use, any other is decoded now.
func scanEntryLine(dst []member, line []byte, ar *arena) ([]member, lineMsg, bool) {
	var lm lineMsg
	c := &cur{b: line}
	if !c.open('{') {
		return dst, lm, false
	}
	isMessage, handled := false, false
	nMsg := 0
	first := true
	at := 0
	for !c.bad && c.next('}', &first) {
		k := c.knownKey(envelopeKeys, &at)
		if c.bad {
			break
		}
		vs := c.i
		if k == "message" {
			nMsg++
		}
		if k == "message" && isMessage {
			if end, role, stop, ok := scanVerbatim(line, vs); ok && len(line) <= maxVerbatimLine {
				c.i = end
				lm, handled = lineMsg{at: vs, end: end, role: role, stop: stop}, true
				dst = append(dst, member{key: k, val: line[vs:end:end]})
				continue
			}
			mc := &cur{b: line, i: vs, ar: ar}
			if m := fastDecode(mc); m != nil && !mc.bad {
				c.i = mc.i
				lm, handled = lineMsg{msg: m, role: roleOf(m)}, true
				dst = append(dst, member{key: k, val: line[vs:c.i:c.i]})
				continue
			}
		}
		if vs < len(line) && line[vs] == '"' {
			// Strings (type, id, parentId, timestamp...) are decoded while
			// they are validated.
			s := c.str()
			if c.bad {
				break
			}
			if k == "type" && len(dst) == 0 {
				isMessage = s == TypeMessage
			}
			dst = append(dst, member{key: k, val: line[vs:c.i:c.i], str: s, isStr: true})
			continue
		}
		v := c.raw()
		if c.bad {
			break
		}
		dst = append(dst, member{key: k, val: v})
	}
	if c.bad || skipWS(line, c.i) != len(line) {
		return dst, lineMsg{}, false
	}
	if nMsg > 0 && (!handled || nMsg > 1) {
		// The message member is unusual (type not first, repeated
		// message keys: the last one counts, as in JSON.parse).
		lm = lineMsg{}
		for _, m := range dst {
			if m.key == "message" {
				lm.msg, _ = ai.DecodeMessage(m.val)
			}
		}
		lm.role = roleOf(lm.msg)
	}
	// Compact, and no \u2028 or \u2029 escape (the verbatim message has
	// neither; only the rest is looked at).
	lm.compact = !c.sawWS
	for i := 0; lm.compact && i < len(dst); i++ {
		v := dst[i].val
		if lm.end > 0 && dst[i].key == "message" {
			continue
		}
		if len(v) > 0 && (v[0] == '{' || v[0] == '[') && !isCompact(v) {
			lm.compact = false
		}
	}
	if lm.compact {
		if lm.end > 0 {
			lm.compact = !bytes.Contains(line[:lm.at], []byte(`\u202`)) && !bytes.Contains(line[lm.end:], []byte(`\u202`))
		} else {
			lm.compact = !bytes.Contains(line, []byte(`\u202`))
		}
	}
	return dst, lm, true
}

// migrateLocked brings a v1 or v2 session to v3 (pi's migrateV1ToV2 and
// migrateV2ToV3) and rewrites the file atomically.
func (s *Session) migrateLocked() error {
	if s.header.Version < 2 {
		used := map[string]bool{}
		var prev *string
		newEntries := make([]*Entry, len(s.entries))
		for i, e := range s.entries {
			id := newEntryID(func(id string) bool { return used[id] })
			used[id] = true
			line := setMember(e.Raw, "id", jsonx.MustMarshal(id))
			pv := []byte("null")
			if prev != nil {
				pv = jsonx.MustMarshal(*prev)
			}
			line = setMember(line, "parentId", pv)
			if e.Type == TypeCompaction {
				for _, m := range mustMembers(line) {
					if m.key != "firstKeptEntryIndex" {
						continue
					}
					if len(m.val) > 0 && (m.val[0] == '-' || isDigit(m.val[0])) {
						idx, ok := fastInt(m.val)
						if !ok {
							idx = -1 // not an integer: entries[idx] is undefined in JS
						}
						// The index counts the header as entry 0; entries
						// after this one have no id yet (JS: undefined).
						switch {
						case idx >= 1 && int(idx)-1 < i:
							line = setMember(line, "firstKeptEntryId", jsonx.MustMarshal(newEntries[idx-1].ID))
						case int(idx)-1 == i:
							line = setMember(line, "firstKeptEntryId", jsonx.MustMarshal(id))
						}
						line = deleteMember(line, "firstKeptEntryIndex")
					}
				}
			}
			ne := reparse(e, line)
			newEntries[i] = ne
			idc := id
			prev = &idc
		}
		s.header.Raw = setMember(s.header.Raw, "version", []byte("2"))
		s.reindex(newEntries)
	}
	if s.header.Version < 3 {
		newEntries := make([]*Entry, len(s.entries))
		for i, e := range s.entries {
			newEntries[i] = e
			if e.Type != TypeMessage {
				continue
			}
			raw := messageRaw(e.Raw)
			if raw == nil {
				continue
			}
			role := ""
			for _, m := range mustMembers(raw) {
				if m.key == "role" {
					role, _ = str(m.val)
				}
			}
			if role != "hookMessage" {
				continue
			}
			nm := setMember(raw, "role", []byte(`"custom"`))
			line := setMember(e.Raw, "message", nm)
			ne := reparse(e, line)
			m, _ := decodeMessage(nm)
			ne.setMessage(m, nil)
			newEntries[i] = ne
		}
		s.header.Raw = setMember(s.header.Raw, "version", []byte("3"))
		s.reindex(newEntries)
	}
	h, _ := parseHeader(s.header.Raw)
	s.header = h
	return s.rewriteLocked()
}

func mustMembers(raw []byte) []member {
	ms, _ := members(nil, raw)
	return ms
}

func (s *Session) reindex(entries []*Entry) {
	s.entries = nil
	s.byID = newIDIndex(len(entries))
	s.dupIDs = false
	s.labels = map[string]labelInfo{}
	s.labelOrder = nil
	s.leaf = nil
	s.hasConv = false
	for _, e := range entries {
		s.index(e)
	}
}

// rewriteLocked replaces the file with the session's content (temp file,
// fsync, rename).
func (s *Session) rewriteLocked() error {
	if s.inMemory || s.path == "" {
		return nil
	}
	if s.f != nil {
		s.f.Close()
		s.f = nil
	}
	// fsx.WriteFile: a fresh temporary file, synced, renamed; a session
	// file that is a symbolic link has its target replaced.
	if err := fsx.WriteFile(s.path, s.bytesLocked(), 0o644); err != nil {
		return err
	}
	s.needNL = false
	s.onDisk = true
	return nil
}
