package resources

import (
	"encoding/json"
	"reflect"
	"strings"
	"sync"
	"testing"
)

func mustRule(t *testing.T, name, text string) *Rule {
	t.Helper()
	r, problems := ParseRule(name, "/rules/"+name+".md", text, ProviderPisces, ScopeUser)
	if len(problems) > 0 {
		t.Fatalf("%s: %v", name, problems)
	}
	return r
}

func firedNames(ts []Trigger) []string {
	var out []string
	for _, tr := range ts {
		out = append(out, tr.Rule.Name)
	}
	return out
}

func TestMatcherTextAcrossDeltas(t *testing.T) {
	r := mustRule(t, "no-todo", "---\ncondition: TODO\\(later\\)\n---\nNo TODOs.")
	m := NewMatcher(Rules{r}, DefaultTTSRSettings(), InjectedState{})
	m.BeginStream()
	for _, d := range []string{"Here is some code. TO", "DO(la"} {
		if fired := m.Feed(Delta{Kind: StreamText, Text: d}); fired != nil {
			t.Fatalf("fired early on %q", d)
		}
	}
	fired := m.Feed(Delta{Kind: StreamText, Text: "ter) fix"})
	if len(fired) != 1 || fired[0].Rule != r || !fired[0].Interrupt || fired[0].Kind != StreamText {
		t.Fatalf("fired = %+v", fired)
	}
	// Only once per stream, and (once mode) never again.
	if m.Feed(Delta{Kind: StreamText, Text: " TODO(later)"}) != nil {
		t.Error("fired twice in a stream")
	}
	m.NextTurn()
	m.BeginStream()
	if m.Feed(Delta{Kind: StreamText, Text: "TODO(later)"}) != nil {
		t.Error("fired again in once mode")
	}
	if st := m.State(); !reflect.DeepEqual(st, InjectedState{Turn: 1, Rules: map[string]int{"no-todo": 0}}) {
		t.Errorf("state %+v", st)
	}
}

func TestMatcherSeparateBlocks(t *testing.T) {
	r := mustRule(t, "r", "---\ncondition: ab\n---\n")
	m := NewMatcher(Rules{r}, DefaultTTSRSettings(), InjectedState{})
	m.Feed(Delta{Kind: StreamText, Index: 0, Text: "a"})
	if m.Feed(Delta{Kind: StreamText, Index: 1, Text: "b"}) != nil {
		t.Error("matched across content blocks")
	}
	if m.Feed(Delta{Kind: StreamText, Index: 0, Text: "b"}) == nil {
		t.Error("no match within a block")
	}
}

func TestMatcherScopes(t *testing.T) {
	noScope := mustRule(t, "plain", "---\ncondition: secret\n---\n")
	thinking := mustRule(t, "thinking", "---\ncondition: secret\nscope: thinking\n---\n")
	tsEdit := mustRule(t, "ts-edit", "---\ncondition: \":\\\\s*any\\\\b\"\nscope: [\"tool:edit(*.ts)\"]\n---\n")
	anyBash := mustRule(t, "bash", "---\ncondition: rm -rf\nscope: tool:bash\n---\n")
	rsGlob := mustRule(t, "rust", "---\ncondition: \"*.rs\"\n---\nRust rule")

	rules := Rules{noScope, thinking, tsEdit, anyBash, rsGlob}
	feed := func(d Delta) []string {
		m := NewMatcher(rules, DefaultTTSRSettings(), InjectedState{})
		m.BeginStream()
		return firedNames(m.Feed(d))
	}
	if got := feed(Delta{Kind: StreamText, Text: "the secret"}); !reflect.DeepEqual(got, []string{"plain"}) {
		t.Errorf("text: %v", got)
	}
	if got := feed(Delta{Kind: StreamThinking, Text: "the secret"}); !reflect.DeepEqual(got, []string{"thinking"}) {
		t.Errorf("thinking: %v", got)
	}
	editTS := `{"path":"src/a.ts","oldText":"x","newText":"let v: any = 1"}`
	if got := feed(Delta{Kind: StreamToolCall, ToolCallID: "c1", ToolName: "edit", Text: editTS}); !reflect.DeepEqual(got, []string{"ts-edit"}) {
		t.Errorf("edit ts: %v", got)
	}
	if got := feed(Delta{Kind: StreamToolCall, ToolCallID: "c1", ToolName: "edit", Text: strings.Replace(editTS, "a.ts", "a.go", 1)}); got != nil {
		t.Errorf("edit go: %v", got)
	}
	if got := feed(Delta{Kind: StreamToolCall, ToolCallID: "c1", ToolName: "write", Text: editTS}); got != nil {
		t.Errorf("write ts: %v", got)
	}
	if got := feed(Delta{Kind: StreamToolCall, ToolName: "bash", Text: `{"command":"rm -rf /tmp/x"}`}); !reflect.DeepEqual(got, []string{"bash"}) {
		t.Errorf("bash: %v", got)
	}
	if got := feed(Delta{Kind: StreamToolCall, ToolName: "write", Text: `{"path":"src/main.rs","content":"fn main() {}"}`}); !reflect.DeepEqual(got, []string{"rust"}) {
		t.Errorf("rust glob condition: %v", got)
	}
	// A path given by the caller wins over the arguments.
	if got := feed(Delta{Kind: StreamToolCall, ToolName: "edit", Path: "x.ts", Text: `{"newText":"a: any"}`}); !reflect.DeepEqual(got, []string{"ts-edit"}) {
		t.Errorf("explicit path: %v", got)
	}
}

func TestMatcherToolPathArrivesLate(t *testing.T) {
	r := mustRule(t, "ts", "---\ncondition: any\nscope: tool:edit(*.ts)\n---\n")
	m := NewMatcher(Rules{r}, DefaultTTSRSettings(), InjectedState{})
	m.BeginStream()
	chunks := []string{`{"newText":"x: an`, `y", "pa`, `th":"src/a.t`, `s"`, `}`}
	var fired []Trigger
	for i, c := range chunks {
		fired = m.Feed(Delta{Kind: StreamToolCall, ToolCallID: "t", ToolName: "edit", Text: c})
		if i < 3 && fired != nil {
			t.Fatalf("fired at chunk %d before the path was complete", i)
		}
		if fired != nil {
			if i != 3 || fired[0].Path != "src/a.ts" || fired[0].ToolName != "edit" {
				t.Fatalf("fired at %d: %+v", i, fired[0])
			}
			return
		}
	}
	t.Fatal("never fired")
}

func TestMatcherInterruptModes(t *testing.T) {
	mk := func(mode string) *Rule {
		h := "---\ncondition: bad\nscope: text, tool\n"
		if mode != "" {
			h += "interruptMode: " + mode + "\n"
		}
		return mustRule(t, "r"+mode, h+"---\n")
	}
	cases := []struct {
		ruleMode, settingMode string
		text, tool            bool
	}{
		{"", InterruptAlways, true, true},
		{"", InterruptNever, false, false},
		{"prose-only", InterruptAlways, true, false},
		{"tool-only", InterruptAlways, false, true},
		{"always", InterruptNever, true, true},
		{"never", InterruptAlways, false, false},
	}
	for _, c := range cases {
		s := DefaultTTSRSettings()
		s.InterruptMode = c.settingMode
		for kind, want := range map[string]bool{StreamText: c.text, StreamToolCall: c.tool} {
			m := NewMatcher(Rules{mk(c.ruleMode)}, s, InjectedState{})
			fired := m.Feed(Delta{Kind: kind, ToolName: "bash", Text: `{"command":"bad"}`})
			if len(fired) != 1 || fired[0].Interrupt != want {
				t.Errorf("rule %q setting %q kind %s: %+v, want interrupt %v", c.ruleMode, c.settingMode, kind, fired, want)
			}
		}
	}
}

func TestMatcherAfterGap(t *testing.T) {
	r := mustRule(t, "r", "---\ncondition: x\n---\n")
	s := DefaultTTSRSettings()
	s.RepeatMode = RepeatAfterGap
	s.RepeatGap = 3
	m := NewMatcher(Rules{r}, s, InjectedState{})
	var firedAt []int
	for turn := 0; turn < 10; turn++ {
		m.BeginStream()
		if m.Feed(Delta{Kind: StreamText, Text: "x"}) != nil {
			firedAt = append(firedAt, turn)
		}
		m.NextTurn()
	}
	if !reflect.DeepEqual(firedAt, []int{0, 3, 6, 9}) {
		t.Errorf("fired at %v", firedAt)
	}
}

func TestMatcherDisabledAndReload(t *testing.T) {
	r := mustRule(t, "r", "---\ncondition: x\n---\n")
	plain := mustRule(t, "plain", "---\ndescription: not a stream rule\n---\n")
	s := DefaultTTSRSettings()
	s.Enabled = false
	m := NewMatcher(Rules{r, plain}, s, InjectedState{})
	if m.Active() || m.Feed(Delta{Kind: StreamText, Text: "x"}) != nil {
		t.Error("disabled matcher fired")
	}
	s.Enabled = true
	m.SetSettings(s)
	if !m.Active() {
		t.Error("not active")
	}
	m.SetRules(Rules{plain})
	if m.Active() || m.Feed(Delta{Kind: StreamText, Text: "x"}) != nil {
		t.Error("no stream rules, yet fired")
	}
}

func TestInjectedStatePersistence(t *testing.T) {
	r := mustRule(t, "r", "---\ncondition: x\n---\n")
	m := NewMatcher(Rules{r}, DefaultTTSRSettings(), InjectedState{})
	m.NextTurn()
	m.NextTurn()
	if m.Feed(Delta{Kind: StreamText, Text: "x"}) == nil {
		t.Fatal("no fire")
	}
	data, err := json.Marshal(m.State())
	if err != nil {
		t.Fatal(err)
	}
	if string(data) != `{"turn":2,"rules":{"r":2}}` {
		t.Errorf("json %s", data)
	}

	// A reopened session: replay its entries, then the rule does not fire.
	var st InjectedState
	if !st.ApplyEntry(InjectedCustomType, data) {
		t.Fatal("entry not applied")
	}
	if st.ApplyEntry("something-else", data) {
		t.Error("unrelated entry applied")
	}
	m2 := NewMatcher(Rules{r}, DefaultTTSRSettings(), st)
	if m2.Feed(Delta{Kind: StreamText, Text: "x"}) != nil {
		t.Error("restored rule fired again")
	}
	m3 := NewMatcher(Rules{r}, DefaultTTSRSettings(), InjectedState{})
	m3.Restore(st)
	if m3.Feed(Delta{Kind: StreamText, Text: "x"}) != nil {
		t.Error("Restore: rule fired again")
	}

	// The fork's injection messages count too.
	var st2 InjectedState
	st2.Turn = 5
	if !st2.ApplyEntry(InjectionCustomType, json.RawMessage(`{"rules":["a","b"]}`)) ||
		!st2.ApplyEntry(InjectionCustomType, json.RawMessage(`{"details":{"rules":["c"]}}`)) {
		t.Fatal("injection not applied")
	}
	if !reflect.DeepEqual(st2.Names(), []string{"a", "b", "c"}) || st2.Rules["a"] != 5 {
		t.Errorf("state %+v", st2)
	}
	if st2.ApplyEntry(InjectedCustomType, json.RawMessage(`not json`)) {
		t.Error("garbage applied")
	}
}

func TestInterruptionText(t *testing.T) {
	r := mustRule(t, "no-any", "---\ncondition: any\n---\nUse unknown.")
	got := InterruptionText(r)
	if !strings.HasPrefix(got, `<system-interrupt reason="rule_violation" rule="no-any" path="/rules/no-any.md">`+"\n") ||
		!strings.HasSuffix(got, "\n\nUse unknown.\n</system-interrupt>") {
		t.Errorf("text %q", got)
	}
	if d := Details(r); !reflect.DeepEqual(d.Rules, []string{"no-any"}) {
		t.Errorf("details %+v", d)
	}
	if rules := TriggerRules([]Trigger{{Rule: r}}); len(rules) != 1 || rules[0] != r {
		t.Error("TriggerRules")
	}
}

func TestToolArgsText(t *testing.T) {
	cases := []struct{ in, text, path string }{
		{`{"path":"a.go","content":"line1\nline2 \"q\" \u00e9 \ud83d\ude00"}`, "a.go\nline1\nline2 \"q\" é 😀", "a.go"},
		{`{"file_path":"x/y.ts","edits":[{"old":"a","new":"b"}]}`, "x/y.ts\na\nb", "x/y.ts"},
		{`{"path":"incompl`, "incompl", ""},
		{`{"nested":{"path":"no.go"},"n":1,"ok":true}`, "no.go", ""},
		{`{"command":"echo \u00`, "echo ", ""},
		{``, "", ""},
	}
	for _, c := range cases {
		text, path := ToolArgsText(c.in)
		if text != c.text || path != c.path {
			t.Errorf("ToolArgsText(%q) = %q, %q; want %q, %q", c.in, text, path, c.text, c.path)
		}
	}
	// Fed one byte at a time, the result is the same.
	in := `{"path":"é.go","content":"a\tb\u0041"}`
	s := newArgScanner()
	for i := 0; i < len(in); i++ {
		s.write(in[i : i+1])
	}
	if s.text.String() != "é.go\na\tbA" || s.path != "é.go" {
		t.Errorf("bytewise: %q %q", s.text.String(), s.path)
	}
}

type fakeSettings map[string]any

func (f fakeSettings) String(p, def string) string {
	if v, ok := f[p].(string); ok {
		return v
	}
	return def
}
func (f fakeSettings) Bool(p string, def bool) bool {
	if v, ok := f[p].(bool); ok {
		return v
	}
	return def
}
func (f fakeSettings) Int(p string, def int) int {
	if v, ok := f[p].(int); ok {
		return v
	}
	return def
}

func TestTTSRSettingsFrom(t *testing.T) {
	if got := TTSRSettingsFrom(nil); got != DefaultTTSRSettings() {
		t.Errorf("nil: %+v", got)
	}
	got := TTSRSettingsFrom(fakeSettings{"ttsr.enabled": false, "ttsr.contextMode": "keep", "ttsr.interruptMode": "tool-only", "ttsr.repeatMode": "after-gap", "ttsr.repeatGap": 4})
	want := TTSRSettings{Enabled: false, ContextMode: "keep", InterruptMode: "tool-only", RepeatMode: "after-gap", RepeatGap: 4}
	if got != want {
		t.Errorf("got %+v", got)
	}
	got = TTSRSettingsFrom(fakeSettings{"ttsr.contextMode": "weird", "ttsr.interruptMode": "x", "ttsr.repeatMode": "y", "ttsr.repeatGap": -1})
	want = DefaultTTSRSettings()
	want.RepeatGap = 1
	if got != want {
		t.Errorf("invalid values: %+v", got)
	}
}

func TestMatcherConcurrent(t *testing.T) {
	r := mustRule(t, "r", "---\ncondition: zzz\n---\n")
	m := NewMatcher(Rules{r}, DefaultTTSRSettings(), InjectedState{})
	var wg sync.WaitGroup
	var mu sync.Mutex
	fires := 0
	for g := 0; g < 8; g++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := 0; i < 200; i++ {
				if n := len(m.Feed(Delta{Kind: StreamText, Text: "z"})); n > 0 {
					mu.Lock()
					fires += n
					mu.Unlock()
				}
				_ = m.State()
			}
		}()
	}
	wg.Wait()
	if fires != 1 {
		t.Errorf("fired %d times", fires)
	}
}

func TestMatcherLargeStream(t *testing.T) {
	r := mustRule(t, "r", "---\ncondition: NEEDLE\n---\n")
	m := NewMatcher(Rules{r}, DefaultTTSRSettings(), InjectedState{})
	chunk := strings.Repeat("hay ", 64)
	for i := 0; i < 2000; i++ {
		if m.Feed(Delta{Kind: StreamText, Text: chunk}) != nil {
			t.Fatal("false positive")
		}
	}
	if m.Feed(Delta{Kind: StreamText, Text: "NEE"}) != nil || m.Feed(Delta{Kind: StreamText, Text: "DLE"}) == nil {
		t.Error("needle at the end of a long stream")
	}
}
