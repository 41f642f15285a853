package session

import (
	"bytes"
	"encoding/json"
	"math"
	"strconv"
	"strings"
	"sync/atomic"

	"github.com/pisces-agent/pisces/internal/ai"
	"github.com/pisces-agent/pisces/internal/jsonx"
)

// CurrentVersion is the session format version Pisces writes (pi's
// CURRENT_SESSION_VERSION).
const CurrentVersion = 3

// Entry types.
const (
	TypeSession             = "session"
	TypeMessage             = "message"
	TypeModelChange         = "model_change"
	TypeThinkingLevelChange = "thinking_level_change"
	TypeCompaction          = "compaction"
	TypeBranchSummary       = "branch_summary"
	TypeCustom              = "custom"
	TypeCustomMessage       = "custom_message"
	TypeLabel               = "label"
	TypeSessionInfo         = "session_info"
	TypeUsage               = "usage"
	TypeContextEdit         = "context_edit"
)

// Entry is one line of a session file after the header. Entries are
// immutable once created: the store never changes an entry in place, and
// callers must not either. Raw is what is (or was) written to disk.
//
// The members of the entry types other than message live in Fields, which
// every entry has (message entries and entries of unknown types share one
// empty Fields): a 20000-entry session is almost only messages, and
// keeping the typed members out of line makes an entry about a quarter of
// its size.
type Entry struct {
	Type      string
	ID        string
	ParentID  *string // nil = JSON null
	Timestamp string  // ISO "2006-01-02T15:04:05.000Z"

	*Fields

	// Extra holds the members this build does not know for the entry's
	// type (all members but the envelope for an unknown type), in order.
	Extra jsonx.Extra

	// Raw is the exact line as read or written, without the newline.
	Raw []byte

	// The message of a message entry (see Message): decoded, or (msg nil,
	// msgEnd > 0) Raw[msgAt:msgEnd] holds it verbatim, to be decoded on
	// first use.
	msg    atomic.Pointer[msgBox]
	msgAt  int32
	msgEnd int32
	role   uint8 // role code (verbatim.go), known without decoding
	flags  uint8
	// stopBack: an assistant's verbatim stopReason value starts at
	// msgEnd-stopBack (0: not noted), for PeekText.
	stopBack uint16
}

// Entry flags.
const (
	// flagCompact: Raw is written out as it is where an entry is answered
	// as raw JSON (it is compact and has no \u2028 or \u2029 escape).
	flagCompact uint8 = 1 << iota
)

// msgBox holds a decoded message (an interface value cannot be stored
// atomically on its own).
type msgBox struct{ m ai.Message }

// Message returns the message of a message entry (nil for other entries,
// and for a message that could not be decoded). A message read from a file
// is decoded on its first use, from the entry's line; concurrent first
// uses may both decode it, and all get the same value.
func (e *Entry) Message() ai.Message {
	if b := e.msg.Load(); b != nil {
		return b.m
	}
	if e.msgEnd == 0 {
		return nil
	}
	return e.decodeMessage(nil)
}

// decodeMessage decodes a verbatim message (allocating from ar when not
// nil) and stores it, unless another goroutine was first.
func (e *Entry) decodeMessage(ar *arena) ai.Message {
	raw := e.Raw[e.msgAt:e.msgEnd:e.msgEnd]
	c := &cur{b: raw, ar: ar}
	m := fastDecode(c)
	if m == nil || c.bad || c.i != len(raw) {
		// Not reached: scanVerbatim accepts only what fastDecode decodes.
		m, _ = ai.DecodeMessage(raw)
	}
	b := ar.box()
	b.m = m
	if e.msg.CompareAndSwap(nil, b) {
		return m
	}
	return e.msg.Load().m
}

// setMessage sets the message of a new entry.
func (e *Entry) setMessage(m ai.Message, b *msgBox) {
	e.msgAt, e.msgEnd = 0, 0
	e.role = roleOf(m)
	if m == nil {
		return
	}
	if b == nil {
		b = new(msgBox)
	}
	b.m = m
	e.msg.Store(b)
}

// verbatim returns the bytes of the message when they are exactly what
// ai.AppendMessage writes for it (nil otherwise).
func (e *Entry) verbatim() []byte {
	if e.msgEnd == 0 {
		return nil
	}
	return e.Raw[e.msgAt:e.msgEnd:e.msgEnd]
}

// roleOf returns the role code of a message.
func roleOf(m ai.Message) uint8 {
	switch m.(type) {
	case nil:
		return roleNone
	case *ai.UserMessage:
		return roleUser
	case *ai.AssistantMessage:
		return roleAssistant
	case *ai.ToolResultMessage:
		return roleToolResult
	case *ai.SystemMessage:
		return roleSystem
	}
	return roleOther
}

// Fields are the typed members of the entries other than message.
type Fields struct {
	// model_change (Provider, ModelID); usage (Provider, Model)
	Provider string
	ModelID  string
	Model    string

	// thinking_level_change
	ThinkingLevel string

	// compaction (Summary, FirstKeptEntryID, TokensBefore, Details, Usage,
	// FromHook, SystemMessage); branch_summary (FromID, Summary, Details,
	// Usage, FromHook)
	Summary          string
	FirstKeptEntryID string
	TokensBefore     int64
	Details          json.RawMessage // also custom_message
	FromHook         *bool
	SystemMessage    *ai.SystemMessage
	FromID           string

	// custom (CustomType, Data); custom_message (CustomType, Content,
	// Display, Details)
	CustomType string
	Data       json.RawMessage
	Content    ai.UserContent
	Display    bool

	// label (TargetID, Label); context_edit (TargetID, Replacement)
	TargetID    string
	Label       *string         // nil or "" clears
	Replacement json.RawMessage // nil = null: hide the target

	// session_info
	Name string

	// usage (Kind, Provider, Model, Usage, Note); Usage also for compaction
	// and branch_summary
	Kind  string
	Usage *ai.Usage
	Note  string

	fromIDNull bool
}

// noFields is the Fields of every message entry and every entry of an
// unknown type. Nothing may write to it (TestMain checks it stays empty).
var noFields Fields

// fieldsFor returns the Fields a new entry of type typ starts with.
func fieldsFor(typ string) *Fields {
	switch typ {
	case TypeModelChange, TypeThinkingLevelChange, TypeCompaction, TypeBranchSummary,
		TypeCustom, TypeCustomMessage, TypeLabel, TypeSessionInfo, TypeUsage, TypeContextEdit:
		return new(Fields)
	}
	return &noFields
}

// IsRoot reports whether the entry has no parent.
func (e *Entry) IsRoot() bool { return e.ParentID == nil }

// Parent returns the parent id, "" for a root.
func (e *Entry) Parent() string {
	if e.ParentID == nil {
		return ""
	}
	return *e.ParentID
}

// Role returns the message role of a message entry ("" otherwise). It
// does not decode the message of the common roles.
func (e *Entry) Role() string {
	if e.Type != TypeMessage {
		return ""
	}
	switch e.role {
	case roleNone:
		return ""
	case roleUser:
		return ai.RoleUser
	case roleAssistant:
		return ai.RoleAssistant
	case roleToolResult:
		return ai.RoleToolResult
	case roleSystem:
		return ai.RoleSystem
	}
	return e.Message().MessageRole()
}

// hasMessage reports whether a message entry has a message (one that
// could not be decoded has none).
func (e *Entry) hasMessage() bool { return e.role != roleNone }

// Header is the first line of a session file.
type Header struct {
	Type          string
	Version       int
	ID            string
	Timestamp     string
	Cwd           string
	ParentSession string
	Extra         jsonx.Extra
	Raw           []byte
}

// parseHeader reads a header line; ok is false when the line is not an
// object with type "session" and a string id.
func parseHeader(line []byte) (Header, bool) {
	if !validJSON(line) {
		return Header{}, false
	}
	ms, ok := members(nil, line)
	if !ok {
		return Header{}, false
	}
	h := Header{Version: 1, Raw: line}
	hasID := false
	for _, m := range ms {
		switch m.key {
		case "type":
			h.Type, _ = str(m.val)
		case "id":
			h.ID, hasID = str(m.val)
		case "version":
			if f, err := strconv.ParseFloat(string(m.val), 64); err == nil {
				h.Version = int(f)
			}
		case "timestamp":
			h.Timestamp, _ = str(m.val)
		case "cwd":
			h.Cwd, _ = str(m.val)
		case "parentSession":
			h.ParentSession, _ = str(m.val)
		default:
			h.Extra = append(h.Extra, jsonx.Field{Key: m.key, Value: json.RawMessage(m.val)})
		}
	}
	if h.Type != TypeSession || !hasID {
		return Header{}, false
	}
	return h, true
}

type headerJSON struct {
	Type          string `json:"type"`
	Version       int    `json:"version"`
	ID            string `json:"id"`
	Timestamp     string `json:"timestamp"`
	Cwd           string `json:"cwd"`
	ParentSession string `json:"parentSession,omitempty"`
}

func newHeader(id, ts, cwd, parent string) Header {
	h := Header{Type: TypeSession, Version: CurrentVersion, ID: id, Timestamp: ts, Cwd: cwd, ParentSession: parent}
	h.Raw = jsonx.MustMarshal(headerJSON{h.Type, h.Version, h.ID, h.Timestamp, h.Cwd, h.ParentSession})
	return h
}

// parseEntry fills an entry from a valid JSON object line. The message of a
// message entry is not decoded here (see decodeEntryMessage).
func parseEntry(e *Entry, line []byte, ms []member) {
	parseEntryInto(e, line, ms, nil)
}

// parseEntryInto is parseEntry storing a parentId in *parent (when not
// nil) instead of a new string, so that a load allocates them in bulk.
func parseEntryInto(e *Entry, line []byte, ms []member, parent *string) {
	e.Raw = line
	for i := range ms {
		if ms[i].key == "type" {
			e.Type, _ = ms[i].string()
			break
		}
	}
	e.Fields = fieldsFor(e.Type)
	for i := range ms {
		m := &ms[i]
		v := m.val
		known := true
		switch m.key {
		case "type":
		case "id":
			e.ID, _ = m.string()
		case "parentId":
			if s, ok := m.string(); ok {
				if parent == nil {
					parent = new(string)
				}
				*parent = s
				e.ParentID = parent
			}
		case "timestamp":
			e.Timestamp, _ = m.string()
		default:
			known = parseTypedField(e, m)
		}
		if !known {
			e.Extra = append(e.Extra, jsonx.Field{Key: m.key, Value: json.RawMessage(v)})
		}
	}
}

func parseTypedField(e *Entry, m *member) bool {
	key, v := m.key, m.val
	switch e.Type {
	case TypeMessage:
		return key == "message" // decoded later
	case TypeModelChange:
		switch key {
		case "provider":
			e.Provider, _ = m.string()
		case "modelId":
			e.ModelID, _ = m.string()
		default:
			return false
		}
	case TypeThinkingLevelChange:
		if key != "thinkingLevel" {
			return false
		}
		e.ThinkingLevel, _ = m.string()
	case TypeCompaction, TypeBranchSummary:
		switch key {
		case "summary":
			e.Summary, _ = m.string()
		case "details":
			e.Details = json.RawMessage(v)
		case "usage":
			var u ai.Usage
			if json.Unmarshal(v, &u) == nil {
				e.Usage = &u
			}
		case "fromHook":
			if b, ok := boolVal(v); ok {
				e.FromHook = &b
			}
		default:
			if e.Type == TypeCompaction {
				switch key {
				case "firstKeptEntryId":
					e.FirstKeptEntryID, _ = m.string()
				case "tokensBefore":
					e.TokensBefore, _ = numInt(v)
				case "systemMessage":
					var sm ai.SystemMessage
					if json.Unmarshal(v, &sm) == nil {
						e.SystemMessage = &sm
					}
				default:
					return false
				}
			} else {
				if key != "fromId" {
					return false
				}
				e.FromID, _ = m.string()
				e.fromIDNull = isNull(v)
			}
		}
	case TypeCustom:
		switch key {
		case "customType":
			e.CustomType, _ = m.string()
		case "data":
			e.Data = json.RawMessage(v)
		default:
			return false
		}
	case TypeCustomMessage:
		switch key {
		case "customType":
			e.CustomType, _ = m.string()
		case "content":
			_ = json.Unmarshal(v, &e.Content)
		case "display":
			e.Display, _ = boolVal(v)
		case "details":
			e.Details = json.RawMessage(v)
		default:
			return false
		}
	case TypeLabel:
		switch key {
		case "targetId":
			e.TargetID, _ = m.string()
		case "label":
			if s, ok := m.string(); ok {
				e.Label = &s
			}
		default:
			return false
		}
	case TypeSessionInfo:
		if key != "name" {
			return false
		}
		e.Name, _ = m.string()
	case TypeUsage:
		switch key {
		case "kind":
			e.Kind, _ = m.string()
		case "provider":
			e.Provider, _ = m.string()
		case "model":
			e.Model, _ = m.string()
		case "usage":
			var u ai.Usage
			if json.Unmarshal(v, &u) == nil {
				e.Usage = &u
			}
		case "note":
			e.Note, _ = m.string()
		default:
			return false
		}
	case TypeContextEdit:
		switch key {
		case "targetId":
			e.TargetID, _ = m.string()
		case "replacement":
			if !isNull(v) {
				e.Replacement = json.RawMessage(v)
			}
		default:
			return false
		}
	default:
		return false
	}
	return true
}

// messageRaw returns the raw "message" member of a message entry.
func messageRaw(line []byte) []byte {
	if !validJSON(line) {
		return nil
	}
	var buf [8]member
	ms, ok := members(buf[:0], line)
	if !ok {
		return nil
	}
	var raw []byte
	for _, m := range ms {
		if m.key == "message" {
			raw = m.val
		}
	}
	return raw
}

func boolVal(v []byte) (bool, bool) {
	switch string(v) {
	case "true":
		return true, true
	case "false":
		return false, true
	}
	return false, false
}

func numInt(v []byte) (int64, bool) {
	if n, ok := fastInt(v); ok {
		return n, true
	}
	f, err := strconv.ParseFloat(string(v), 64)
	if err != nil {
		return 0, false
	}
	return int64(f), true
}

// rewriteMembers re-encodes the object raw with fn applied to its ordered
// members. Values are kept byte for byte.
func rewriteMembers(raw []byte, fn func([]member) []member) []byte {
	ms, ok := members(nil, raw)
	if !ok {
		return raw
	}
	ms = fn(ms)
	var b bytes.Buffer
	b.Grow(len(raw) + 32)
	b.WriteByte('{')
	for i, m := range ms {
		if i > 0 {
			b.WriteByte(',')
		}
		b.Write(jsonx.MustMarshal(m.key))
		b.WriteByte(':')
		b.Write(m.val)
	}
	b.WriteByte('}')
	return b.Bytes()
}

// setMember sets key to val in place, or appends it at the end (like
// assigning a property of a JS object).
func setMember(raw []byte, key string, val []byte) []byte {
	return rewriteMembers(raw, func(ms []member) []member {
		for i := range ms {
			if ms[i].key == key {
				ms[i].val = val
				return ms
			}
		}
		return append(ms, member{key: key, val: val})
	})
}

func deleteMember(raw []byte, key string) []byte {
	return rewriteMembers(raw, func(ms []member) []member {
		out := ms[:0]
		for _, m := range ms {
			if m.key != key {
				out = append(out, m)
			}
		}
		return out
	})
}

// reparse rebuilds an entry from a rewritten line, keeping its message
// (still undecoded when the rewrite left its bytes alone).
func reparse(old *Entry, line []byte) *Entry {
	ms, _ := members(nil, line)
	e := &Entry{}
	parseEntry(e, line, ms)
	if isRawCompact(line) {
		e.flags |= flagCompact
	}
	if old.Type != TypeMessage {
		return e
	}
	if v := old.verbatim(); v != nil && old.msg.Load() == nil {
		for _, m := range ms {
			if m.key == "message" && string(m.val) == string(v) && len(line) <= maxVerbatimLine {
				at := cap(line) - cap(m.val) // m.val is line[at:...]
				e.msgAt, e.msgEnd, e.role, e.stopBack = int32(at), int32(at+len(v)), old.role, old.stopBack
			}
		}
		if e.msgEnd > 0 {
			return e
		}
	}
	e.setMessage(old.Message(), nil)
	return e
}

// maxVerbatimLine bounds the lines whose message offsets fit an Entry.
const maxVerbatimLine = math.MaxInt32

// isRawCompact reports whether the valid JSON line is written out as it
// is where it is answered as raw JSON (see flagCompact).
func isRawCompact(line []byte) bool {
	return isCompact(line) && !bytes.Contains(line, []byte(`\u202`))
}

// withParent returns a copy of e whose parentId is parent.
func withParent(e *Entry, parent *string) *Entry {
	val := []byte("null")
	if parent != nil {
		val = jsonx.MustMarshal(*parent)
	}
	return reparse(e, setMember(e.Raw, "parentId", val))
}

// normalizeName trims a session name and turns line breaks into spaces.
func normalizeName(name string) string {
	var b strings.Builder
	lines := strings.FieldsFunc(name, func(r rune) bool { return r == '\n' || r == '\r' })
	for i, l := range lines {
		l = strings.TrimSpace(l)
		if l == "" {
			continue
		}
		if i > 0 && b.Len() > 0 {
			b.WriteByte(' ')
		}
		b.WriteString(l)
	}
	return strings.TrimSpace(b.String())
}

// ---- JSON shapes of the entries Pisces writes, in pi's key order ----

type messageEntryJSON struct {
	Type      string     `json:"type"`
	ID        string     `json:"id"`
	ParentID  *string    `json:"parentId"`
	Timestamp string     `json:"timestamp"`
	Message   ai.Message `json:"message"`
}

type modelChangeJSON struct {
	Type      string  `json:"type"`
	ID        string  `json:"id"`
	ParentID  *string `json:"parentId"`
	Timestamp string  `json:"timestamp"`
	Provider  string  `json:"provider"`
	ModelID   string  `json:"modelId"`
}

type thinkingLevelJSON struct {
	Type          string  `json:"type"`
	ID            string  `json:"id"`
	ParentID      *string `json:"parentId"`
	Timestamp     string  `json:"timestamp"`
	ThinkingLevel string  `json:"thinkingLevel"`
}

type compactionJSON struct {
	Type             string            `json:"type"`
	ID               string            `json:"id"`
	ParentID         *string           `json:"parentId"`
	Timestamp        string            `json:"timestamp"`
	Summary          string            `json:"summary"`
	FirstKeptEntryID string            `json:"firstKeptEntryId"`
	TokensBefore     int64             `json:"tokensBefore"`
	Details          json.RawMessage   `json:"details,omitempty"`
	Usage            *ai.Usage         `json:"usage,omitempty"`
	FromHook         *bool             `json:"fromHook,omitempty"`
	SystemMessage    *ai.SystemMessage `json:"systemMessage,omitempty"`
}

type branchSummaryJSON struct {
	Type      string          `json:"type"`
	ID        string          `json:"id"`
	ParentID  *string         `json:"parentId"`
	Timestamp string          `json:"timestamp"`
	FromID    string          `json:"fromId"`
	Summary   string          `json:"summary"`
	Details   json.RawMessage `json:"details,omitempty"`
	Usage     *ai.Usage       `json:"usage,omitempty"`
	FromHook  *bool           `json:"fromHook,omitempty"`
}

type customJSON struct {
	Type       string          `json:"type"`
	CustomType string          `json:"customType"`
	Data       json.RawMessage `json:"data,omitempty"`
	ID         string          `json:"id"`
	ParentID   *string         `json:"parentId"`
	Timestamp  string          `json:"timestamp"`
}

type customMessageJSON struct {
	Type       string          `json:"type"`
	CustomType string          `json:"customType"`
	Content    ai.UserContent  `json:"content"`
	Display    bool            `json:"display"`
	Details    json.RawMessage `json:"details,omitempty"`
	ID         string          `json:"id"`
	ParentID   *string         `json:"parentId"`
	Timestamp  string          `json:"timestamp"`
}

type labelJSON struct {
	Type      string  `json:"type"`
	ID        string  `json:"id"`
	ParentID  *string `json:"parentId"`
	Timestamp string  `json:"timestamp"`
	TargetID  string  `json:"targetId"`
	Label     *string `json:"label,omitempty"`
}

type sessionInfoJSON struct {
	Type      string  `json:"type"`
	ID        string  `json:"id"`
	ParentID  *string `json:"parentId"`
	Timestamp string  `json:"timestamp"`
	Name      string  `json:"name"`
}

type usageJSON struct {
	Type      string   `json:"type"`
	ID        string   `json:"id"`
	ParentID  *string  `json:"parentId"`
	Timestamp string   `json:"timestamp"`
	Kind      string   `json:"kind"`
	Provider  string   `json:"provider"`
	Model     string   `json:"model"`
	Usage     ai.Usage `json:"usage"`
	Note      string   `json:"note,omitempty"`
}

type contextEditJSON struct {
	Type        string          `json:"type"`
	ID          string          `json:"id"`
	ParentID    *string         `json:"parentId"`
	Timestamp   string          `json:"timestamp"`
	TargetID    string          `json:"targetId"`
	Replacement json.RawMessage `json:"replacement"`
}

// encode fills e.Raw from its typed fields, in pi's key order.
func encode(e *Entry) error {
	var v any
	switch e.Type {
	case TypeMessage:
		v = messageEntryJSON{e.Type, e.ID, e.ParentID, e.Timestamp, e.Message()}
	case TypeModelChange:
		v = modelChangeJSON{e.Type, e.ID, e.ParentID, e.Timestamp, e.Provider, e.ModelID}
	case TypeThinkingLevelChange:
		v = thinkingLevelJSON{e.Type, e.ID, e.ParentID, e.Timestamp, e.ThinkingLevel}
	case TypeCompaction:
		v = compactionJSON{e.Type, e.ID, e.ParentID, e.Timestamp, e.Summary, e.FirstKeptEntryID, e.TokensBefore, e.Details, e.Usage, e.FromHook, e.SystemMessage}
	case TypeBranchSummary:
		v = branchSummaryJSON{e.Type, e.ID, e.ParentID, e.Timestamp, e.FromID, e.Summary, e.Details, e.Usage, e.FromHook}
	case TypeCustom:
		v = customJSON{e.Type, e.CustomType, e.Data, e.ID, e.ParentID, e.Timestamp}
	case TypeCustomMessage:
		v = customMessageJSON{e.Type, e.CustomType, e.Content, e.Display, e.Details, e.ID, e.ParentID, e.Timestamp}
	case TypeLabel:
		v = labelJSON{e.Type, e.ID, e.ParentID, e.Timestamp, e.TargetID, e.Label}
	case TypeSessionInfo:
		v = sessionInfoJSON{e.Type, e.ID, e.ParentID, e.Timestamp, e.Name}
	case TypeUsage:
		var u ai.Usage
		if e.Usage != nil {
			u = *e.Usage
		}
		v = usageJSON{e.Type, e.ID, e.ParentID, e.Timestamp, e.Kind, e.Provider, e.Model, u, e.Note}
	case TypeContextEdit:
		v = contextEditJSON{e.Type, e.ID, e.ParentID, e.Timestamp, e.TargetID, e.Replacement}
	default:
		return errUnknownType(e.Type)
	}
	if m, ok := v.(messageEntryJSON); ok {
		// Message entries (one per message of every turn) are appended
		// by hand, with the reflective encoder as the fallback.
		b, err := jsonx.AppendWith(make([]byte, 0, messageSizeHint(m.Message)), v, m.appendJSON)
		if err != nil {
			return err
		}
		e.Raw = b
		e.flags |= flagCompact // jsonx output: compact, U+2028/9 raw
		return nil
	}
	b, err := jsonx.Marshal(v)
	if err != nil {
		return err
	}
	e.Raw = b
	e.flags |= flagCompact
	return nil
}

// appendJSON appends the entry as jsonx.Marshal writes it.
func (m messageEntryJSON) appendJSON(b []byte) ([]byte, error) {
	b = append(b, `{"type":`...)
	b = jsonx.AppendString(b, m.Type)
	b = append(b, `,"id":`...)
	b = jsonx.AppendString(b, m.ID)
	b = append(b, `,"parentId":`...)
	if m.ParentID == nil {
		b = append(b, "null"...)
	} else {
		b = jsonx.AppendString(b, *m.ParentID)
	}
	b = append(b, `,"timestamp":`...)
	b = jsonx.AppendString(b, m.Timestamp)
	b = append(b, `,"message":`...)
	b, err := ai.AppendMessage(b, m.Message)
	if err != nil {
		return nil, err
	}
	return append(b, '}'), nil
}

// messageSizeHint estimates the encoded size of a message entry, so that
// a long message is written without growing the buffer.
func messageSizeHint(m ai.Message) int { return 256 + ai.SizeHint(m) }

type errUnknownType string

func (e errUnknownType) Error() string {
	return "session: cannot write entry of type " + strconv.Quote(string(e))
}
