package resources

import (
	"encoding/json"
	"sort"
	"strconv"
	"strings"
	"sync"
	"unicode/utf16"
)

// Stream kinds a Matcher is fed.
const (
	StreamText     = "text"
	StreamThinking = "thinking"
	StreamToolCall = "toolcall"
)

// Settings values of ttsr.contextMode and ttsr.repeatMode.
const (
	ContextDiscard = "discard" // drop the partial assistant message before retrying
	ContextKeep    = "keep"    // keep it

	RepeatOnce     = "once"      // a rule is injected at most once per session
	RepeatAfterGap = "after-gap" // again after RepeatGap turns
)

// Custom entry and message types for persisting injections.
const (
	// InjectedCustomType is the customType of the session custom entry whose
	// data is an InjectedState snapshot.
	InjectedCustomType = "pisces.ttsr-injected"
	// InjectionCustomType is the customType of the hidden custom message that
	// carries the rule text to the model (the pisces fork's name); its
	// details are InjectionDetails.
	InjectionCustomType = "ttsr-injection"
)

// TTSRSettings are the ttsr.* settings.
type TTSRSettings struct {
	Enabled       bool   // ttsr.enabled (true)
	ContextMode   string // ttsr.contextMode: discard (default) | keep
	InterruptMode string // ttsr.interruptMode: default for rules without one (always)
	RepeatMode    string // ttsr.repeatMode: once (default) | after-gap
	RepeatGap     int    // ttsr.repeatGap: turns between repeats in after-gap mode (10)
}

// DefaultTTSRSettings are the defaults of the pisces implementation.
func DefaultTTSRSettings() TTSRSettings {
	return TTSRSettings{Enabled: true, ContextMode: ContextDiscard, InterruptMode: InterruptAlways, RepeatMode: RepeatOnce, RepeatGap: 10}
}

// SettingsReader is the part of settings.Settings TTSRSettingsFrom needs.
type SettingsReader interface {
	String(path, def string) string
	Bool(path string, def bool) bool
	Int(path string, def int) int
}

// TTSRSettingsFrom reads ttsr.* settings; invalid values fall back to the
// defaults.
func TTSRSettingsFrom(s SettingsReader) TTSRSettings {
	d := DefaultTTSRSettings()
	if s == nil {
		return d
	}
	out := TTSRSettings{
		Enabled:       s.Bool("ttsr.enabled", d.Enabled),
		ContextMode:   s.String("ttsr.contextMode", d.ContextMode),
		InterruptMode: s.String("ttsr.interruptMode", d.InterruptMode),
		RepeatMode:    s.String("ttsr.repeatMode", d.RepeatMode),
		RepeatGap:     s.Int("ttsr.repeatGap", d.RepeatGap),
	}
	return out.normalized()
}

func (t TTSRSettings) normalized() TTSRSettings {
	d := DefaultTTSRSettings()
	if t.ContextMode != ContextDiscard && t.ContextMode != ContextKeep {
		t.ContextMode = d.ContextMode
	}
	if !validInterruptMode(t.InterruptMode) {
		t.InterruptMode = d.InterruptMode
	}
	if t.RepeatMode != RepeatOnce && t.RepeatMode != RepeatAfterGap {
		t.RepeatMode = d.RepeatMode
	}
	if t.RepeatGap < 1 {
		t.RepeatGap = 1
	}
	return t
}

// InjectedState records which stream rules were injected and when, so a
// reopened session does not inject them again. It is JSON-serialisable;
// persist it as the data of a custom entry of type InjectedCustomType.
type InjectedState struct {
	Turn  int            `json:"turn"`  // turns counted so far (Matcher.NextTurn)
	Rules map[string]int `json:"rules"` // rule name → turn it was last injected
}

// Clone returns a deep copy.
func (s InjectedState) Clone() InjectedState {
	c := InjectedState{Turn: s.Turn, Rules: make(map[string]int, len(s.Rules))}
	for k, v := range s.Rules {
		c.Rules[k] = v
	}
	return c
}

// Names returns the injected rule names, sorted.
func (s InjectedState) Names() []string {
	names := make([]string, 0, len(s.Rules))
	for k := range s.Rules {
		names = append(names, k)
	}
	sort.Strings(names)
	return names
}

// InjectionDetails are the details of an InjectionCustomType message.
type InjectionDetails struct {
	Rules []string `json:"rules"`
}

// ApplyEntry updates the state from one session entry, given its customType
// and data (for a custom entry) or details (for a custom message). Call it
// for the entries of the current branch in order:
//
//   - InjectedCustomType: the data is a snapshot and replaces the state;
//   - InjectionCustomType: {rules:[names]} (or {details:{rules}}) marks the
//     names injected at the current turn.
//
// It reports whether the entry was one of these.
func (s *InjectedState) ApplyEntry(customType string, data json.RawMessage) bool {
	switch customType {
	case InjectedCustomType:
		var snap InjectedState
		if err := json.Unmarshal(data, &snap); err != nil {
			return false
		}
		*s = snap.Clone()
		return true
	case InjectionCustomType:
		var d struct {
			Rules   []string          `json:"rules"`
			Details *InjectionDetails `json:"details"`
		}
		if err := json.Unmarshal(data, &d); err != nil {
			return false
		}
		names := d.Rules
		if d.Details != nil {
			names = append(names, d.Details.Rules...)
		}
		if s.Rules == nil {
			s.Rules = map[string]int{}
		}
		for _, n := range names {
			s.Rules[n] = s.Turn
		}
		return true
	}
	return false
}

// Delta is one piece of the model's stream.
type Delta struct {
	Kind string // StreamText, StreamThinking or StreamToolCall
	// Index tells apart the content blocks of one message (the content
	// index); text in different blocks is matched separately.
	Index int
	// For tool calls: the call's id (used instead of Index when set), the
	// tool name, and the target path when the caller knows it. Without
	// Path, it is read from the streamed arguments (keys path, file_path,
	// filePath, file, filename, target_file, once their value is complete).
	ToolCallID string
	ToolName   string
	Path       string
	// Text is the new text: for text and thinking the delta; for tool
	// calls the next fragment of the JSON arguments.
	Text string
}

// Trigger is a rule that fired.
type Trigger struct {
	Rule *Rule
	// Interrupt: abort the stream now and retry with the rule injected.
	// Otherwise the rule is injected once the current message ends, without
	// an abort (interruptMode never, or prose-only / tool-only and the match
	// was in the other kind of stream).
	Interrupt bool
	Kind      string // the stream kind that matched
	ToolName  string // for tool calls
	Path      string // for tool calls, when known
}

// maxScan bounds how much of a block's text is searched at each delta (the
// tail of the block).
const maxScan = 64 << 10

type streamBuf struct {
	text strings.Builder
	args *argScanner // tool calls
}

func (b *streamBuf) content() string {
	if b.args != nil {
		return b.args.text.String()
	}
	return b.text.String()
}

// Matcher watches one session's stream for rules whose condition matches.
// It is safe for concurrent use.
type Matcher struct {
	mu       sync.Mutex
	rules    Rules
	settings TTSRSettings
	state    InjectedState
	bufs     map[string]*streamBuf
	fired    map[string]bool // rules fired in the current stream
}

// NewMatcher watches for the stream rules among rules (others are ignored)
// with settings, starting from state (a restored InjectedState, or the
// zero value).
func NewMatcher(rules Rules, settings TTSRSettings, state InjectedState) *Matcher {
	m := &Matcher{settings: settings.normalized(), state: state.Clone(), bufs: map[string]*streamBuf{}, fired: map[string]bool{}}
	m.rules = rules.Stream()
	return m
}

// SetRules replaces the rules (after a reload); the injected record stays.
func (m *Matcher) SetRules(rules Rules) {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.rules = rules.Stream()
}

// SetSettings replaces the settings.
func (m *Matcher) SetSettings(s TTSRSettings) {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.settings = s.normalized()
}

// Settings returns the settings in use.
func (m *Matcher) Settings() TTSRSettings {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.settings
}

// Active reports whether anything can fire: enabled, with stream rules.
func (m *Matcher) Active() bool {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.settings.Enabled && len(m.rules) > 0
}

// BeginStream forgets the text seen so far; call it when a new assistant
// message starts streaming (including the retry after an interruption).
func (m *Matcher) BeginStream() {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.bufs = map[string]*streamBuf{}
	m.fired = map[string]bool{}
}

// NextTurn counts a turn (one model call); after-gap repeats are measured
// in these.
func (m *Matcher) NextTurn() {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.state.Turn++
}

// State returns a copy of the injected record, to persist.
func (m *Matcher) State() InjectedState {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.state.Clone()
}

// Restore replaces the injected record (after switching sessions).
func (m *Matcher) Restore(s InjectedState) {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.state = s.Clone()
	m.bufs = map[string]*streamBuf{}
	m.fired = map[string]bool{}
}

// Feed adds a delta and returns the rules that fire because of it, each
// at most once per stream. A rule fires when one of its conditions matches
// the text of the block so far (for tool calls: the decoded string values
// of the arguments so far, one per line), the delta is within the rule's
// scope, and repeatMode allows it: once — never injected before; after-gap
// — not injected within the last RepeatGap turns. A rule without a scope
// watches text and every tool call, not thinking. Fired rules are recorded
// in the injected state at the current turn.
func (m *Matcher) Feed(d Delta) []Trigger {
	m.mu.Lock()
	defer m.mu.Unlock()
	if !m.settings.Enabled || len(m.rules) == 0 || d.Text == "" {
		return nil
	}
	key := d.Kind + "#" + strconv.Itoa(d.Index)
	if d.Kind == StreamToolCall && d.ToolCallID != "" {
		key = d.Kind + "#" + d.ToolCallID
	}
	buf := m.bufs[key]
	if buf == nil {
		buf = &streamBuf{}
		if d.Kind == StreamToolCall {
			buf.args = newArgScanner()
		}
		m.bufs[key] = buf
	}
	path := d.Path
	if buf.args != nil {
		buf.args.write(d.Text)
		if path == "" {
			path = buf.args.path
		}
	} else {
		buf.text.WriteString(d.Text)
	}
	var text string
	var out []Trigger
	for _, r := range m.rules {
		if m.fired[r.Name] || !m.eligible(r.Name) || !inScope(r, d.Kind, d.ToolName, path) {
			continue
		}
		if text == "" {
			text = buf.content()
			if len(text) > maxScan {
				text = text[len(text)-maxScan:]
			}
		}
		if !matchesAny(r, text) {
			continue
		}
		m.fired[r.Name] = true
		if m.state.Rules == nil {
			m.state.Rules = map[string]int{}
		}
		m.state.Rules[r.Name] = m.state.Turn
		out = append(out, Trigger{Rule: r, Interrupt: m.interrupts(r, d.Kind), Kind: d.Kind, ToolName: d.ToolName, Path: path})
	}
	return out
}

func (m *Matcher) eligible(name string) bool {
	last, ok := m.state.Rules[name]
	if !ok {
		return true
	}
	if m.settings.RepeatMode != RepeatAfterGap {
		return false
	}
	return m.state.Turn-last >= m.settings.RepeatGap
}

func (m *Matcher) interrupts(r *Rule, kind string) bool {
	mode := r.InterruptMode
	if mode == "" {
		mode = m.settings.InterruptMode
	}
	switch mode {
	case InterruptNever:
		return false
	case InterruptProseOnly:
		return kind == StreamText || kind == StreamThinking
	case InterruptToolOnly:
		return kind == StreamToolCall
	}
	return true
}

func inScope(r *Rule, kind, tool, path string) bool {
	if len(r.scopes) == 0 {
		return kind == StreamText || kind == StreamToolCall
	}
	for _, s := range r.scopes {
		if s.kind != kind {
			continue
		}
		if kind != StreamToolCall {
			return true
		}
		if !matchName(s.tool, tool) {
			continue
		}
		if s.glob == "" || (path != "" && MatchGlob(s.glob, path)) {
			return true
		}
	}
	return false
}

func matchesAny(r *Rule, text string) bool {
	for _, re := range r.conds {
		if re.MatchString(text) {
			return true
		}
	}
	return false
}

// InterruptionText is the content of the hidden user message that carries
// fired rules to the model: one <system-interrupt> block per rule.
func InterruptionText(rules ...*Rule) string {
	parts := make([]string, 0, len(rules))
	for _, r := range rules {
		parts = append(parts, `<system-interrupt reason="rule_violation" rule="`+xmlAttr(r.Name)+`" path="`+xmlAttr(r.Path)+`">`+"\n"+
			"Your output was stopped because it went against the rule below. "+
			"Do not pick up where you left off; redo that part so it follows the rule, then carry on.\n\n"+
			r.Content+"\n</system-interrupt>")
	}
	return strings.Join(parts, "\n\n")
}

// TriggerRules returns the rules of triggers, for the ttsr_triggered event.
func TriggerRules(ts []Trigger) []*Rule {
	out := make([]*Rule, 0, len(ts))
	for _, t := range ts {
		out = append(out, t.Rule)
	}
	return out
}

// Details returns the InjectionDetails naming rules.
func Details(rules ...*Rule) InjectionDetails {
	d := InjectionDetails{Rules: make([]string, 0, len(rules))}
	for _, r := range rules {
		d.Rules = append(d.Rules, r.Name)
	}
	return d
}

func xmlAttr(s string) string {
	return strings.NewReplacer("&", "&amp;", `"`, "&quot;", "<", "&lt;", ">", "&gt;").Replace(s)
}

// ToolArgsText decodes possibly incomplete JSON tool arguments: the string
// values (not keys) joined by newlines, the last one as far as it goes, and
// the target path (see Delta.Path) once its value is complete.
func ToolArgsText(args string) (text, path string) {
	s := newArgScanner()
	s.write(args)
	return s.text.String(), s.path
}

// argScanner decodes streamed JSON arguments incrementally.
type argScanner struct {
	stack     []byte
	expectKey bool
	inStr     bool
	isKey     bool
	esc       bool
	hexLeft   int
	hexVal    rune
	high      rune // pending UTF-16 high surrogate
	key       strings.Builder
	curKey    string // the last key at the top level
	val       strings.Builder
	text      strings.Builder
	path      string
}

func newArgScanner() *argScanner { return &argScanner{} }

// isPathKey tells whether a tool argument of this name holds a file path.
func isPathKey(k string) bool {
	switch k {
	case "path", "file_path", "filePath", "file", "filename", "target_file":
		return true
	}
	return false
}

func (s *argScanner) emitRune(r rune) {
	if s.high != 0 {
		h := s.high
		s.high = 0
		if utf16.IsSurrogate(r) {
			s.emitStr(string(utf16.DecodeRune(h, r)))
			return
		}
		s.emitStr(string(utf16.DecodeRune(h, 0xFFFD)))
	}
	if r >= 0xD800 && r < 0xDC00 {
		s.high = r
		return
	}
	s.emitStr(string(r))
}

func (s *argScanner) emitStr(str string) {
	if s.isKey {
		s.key.WriteString(str)
		return
	}
	s.text.WriteString(str)
	if len(s.stack) == 1 {
		s.val.WriteString(str)
	}
}

func (s *argScanner) write(chunk string) {
	for i := 0; i < len(chunk); i++ {
		c := chunk[i]
		if s.inStr {
			switch {
			case s.hexLeft > 0:
				var v byte
				switch {
				case c >= '0' && c <= '9':
					v = c - '0'
				case c >= 'a' && c <= 'f':
					v = c - 'a' + 10
				case c >= 'A' && c <= 'F':
					v = c - 'A' + 10
				}
				s.hexVal = s.hexVal<<4 | rune(v)
				s.hexLeft--
				if s.hexLeft == 0 {
					s.emitRune(s.hexVal)
				}
			case s.esc:
				s.esc = false
				switch c {
				case 'n':
					s.emitStr("\n")
				case 't':
					s.emitStr("\t")
				case 'r':
					s.emitStr("\r")
				case 'b':
					s.emitStr("\b")
				case 'f':
					s.emitStr("\f")
				case 'u':
					s.hexLeft, s.hexVal = 4, 0
				default:
					s.emitStr(string(c))
				}
			case c == '\\':
				s.esc = true
			case c == '"':
				s.inStr = false
				if s.high != 0 {
					s.high = 0
					s.emitStr("\uFFFD")
				}
				if s.isKey {
					if len(s.stack) == 1 {
						s.curKey = s.key.String()
					}
					s.isKey = false
				} else if len(s.stack) == 1 && s.path == "" && isPathKey(s.curKey) {
					s.path = s.val.String()
				}
			default:
				if s.isKey {
					s.key.WriteByte(c)
				} else {
					s.text.WriteByte(c)
					if len(s.stack) == 1 {
						s.val.WriteByte(c)
					}
				}
			}
			continue
		}
		switch c {
		case '{':
			s.stack = append(s.stack, c)
			s.expectKey = true
		case '[':
			s.stack = append(s.stack, c)
			s.expectKey = false
		case '}', ']':
			if len(s.stack) > 0 {
				s.stack = s.stack[:len(s.stack)-1]
			}
			s.expectKey = false
		case ',':
			s.expectKey = len(s.stack) > 0 && s.stack[len(s.stack)-1] == '{'
		case ':':
			s.expectKey = false
		case '"':
			s.inStr = true
			s.isKey = s.expectKey && len(s.stack) > 0 && s.stack[len(s.stack)-1] == '{'
			if s.isKey {
				s.key.Reset()
			} else {
				if s.text.Len() > 0 {
					s.text.WriteByte('\n')
				}
				s.val.Reset()
			}
		}
	}
}
