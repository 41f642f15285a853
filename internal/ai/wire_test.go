package ai

import (
	"encoding/json"
	"math"
	"math/rand"
	"testing"

	"github.com/pisces-agent/pisces/internal/jsonx"
)

// randGen makes random values of the encoded types, biased towards the
// cases the encoders must get exactly right: escapes, U+2028/U+2029,
// invalid UTF-8, the float format cut-offs, raw JSON with whitespace or
// escapes, omitted members, unknown members, and invalid values (NaN,
// invalid raw JSON) that must fail the same way.
type randGen struct{ r *rand.Rand }

var stringPieces = []string{
	"", "a", "w1 ", "hello world", `"`, `\`, `\u2028`, "\u2028", "\u2029", "<b>&amp;</b>",
	"\x00", "\x01", "\x1f", "\b", "\f", "\n", "\r", "\t", "\x7f", "é", "日本", "😀",
	"\xff", "\xc3", "\xe2\x80", "\xed\xa0\x80", "\ufffd", "/", "'", "</script>",
}

func (g randGen) str() string {
	n := g.r.Intn(5)
	s := ""
	for i := 0; i < n; i++ {
		s += stringPieces[g.r.Intn(len(stringPieces))]
	}
	return s
}

// optStr is empty half of the time (omitempty members).
func (g randGen) optStr() string {
	if g.r.Intn(2) == 0 {
		return ""
	}
	return g.str()
}

var floatPieces = []float64{
	0, math.Copysign(0, -1), 1, -1, 0.5, 1e-6, 1e-7, 9.99e-7, 1e20, 1e21, 1.5e21, -1e21,
	123456789.125, 0.1 + 0.2, 3e-5, 1.0000000000000002, math.MaxFloat64, math.SmallestNonzeroFloat64,
}

func (g randGen) float(allowBad bool) float64 {
	switch g.r.Intn(6) {
	case 0:
		return floatPieces[g.r.Intn(len(floatPieces))]
	case 1:
		if allowBad && g.r.Intn(8) == 0 {
			return []float64{math.NaN(), math.Inf(1), math.Inf(-1)}[g.r.Intn(3)]
		}
		return g.r.NormFloat64() * math.Pow(10, float64(g.r.Intn(60)-30))
	case 2:
		return float64(g.r.Intn(1000000)) / 1e6
	default:
		return g.r.Float64() * 0.01
	}
}

var rawPieces = []string{
	`{}`, `{"a":1}`, ` { "a" : [ 1 , 2 ] } `, `"x\u2028y"`, `"\\u2028"`, `"\u2029"`, `null`, `true`,
	`[1,2.5e-7,-0]`, `{"command":"echo hello","n":{"q":"<&>"}}`, "\"\u2028\"", `"\ud83d\ude00"`,
	"[\n1\n]", `1e21`, `-0.0`,
}

var badRaw = []string{``, `{`, `{"a":}`, `nul`, `01`, `[1,]`, "\"\x01\"", `{} {}`}

func (g randGen) raw(allowBad bool) json.RawMessage {
	if allowBad && g.r.Intn(20) == 0 {
		return json.RawMessage(badRaw[g.r.Intn(len(badRaw))])
	}
	return json.RawMessage(rawPieces[g.r.Intn(len(rawPieces))])
}

func (g randGen) extra(allowBad bool) jsonx.Extra {
	if g.r.Intn(3) != 0 {
		return nil
	}
	n := 1 + g.r.Intn(3)
	var ex jsonx.Extra
	for i := 0; i < n; i++ {
		ex = append(ex, jsonx.Field{Key: g.str(), Value: g.raw(allowBad)})
	}
	return ex
}

func (g randGen) cost(bad bool) Cost {
	return Cost{Input: g.float(bad), Output: g.float(bad), CacheRead: g.float(bad), CacheWrite: g.float(bad), Total: g.float(bad), Extra: g.extra(bad)}
}

func (g randGen) usage(bad bool) Usage {
	i := func() int64 {
		if g.r.Intn(4) == 0 {
			return g.r.Int63() - g.r.Int63()
		}
		return int64(g.r.Intn(100000))
	}
	return Usage{Input: i(), Output: i(), CacheRead: i(), CacheWrite: i(), TotalTokens: i(), Cost: g.cost(bad), Extra: g.extra(bad)}
}

func (g randGen) content(bad bool) Content {
	types := []string{ContentText, ContentThinking, ContentImage, ContentToolCall, "other", ""}
	c := Content{Type: types[g.r.Intn(len(types))]}
	// Set every field: only the ones of the type must be written.
	c.Text, c.TextSignature = g.str(), g.optStr()
	c.Thinking, c.ThinkingSignature, c.Redacted = g.str(), g.optStr(), g.r.Intn(2) == 0
	c.Data, c.MimeType = g.str(), g.str()
	c.ID, c.Name = g.str(), g.str()
	if g.r.Intn(4) != 0 {
		c.Arguments = g.raw(bad)
	}
	c.ThoughtSignature, c.ArgumentsError, c.Namespace = g.optStr(), g.optStr(), g.optStr()
	c.Extra = g.extra(bad)
	return c
}

func (g randGen) assistant(bad bool) *AssistantMessage {
	m := &AssistantMessage{
		Role: g.optStr(), API: g.str(), Provider: g.str(), Model: g.str(),
		Usage: g.usage(bad), StopReason: g.str(), ErrorMessage: g.optStr(),
		Timestamp: g.r.Int63(), ResponseID: g.optStr(), RawStopReason: g.optStr(),
		ThinkingLevel: g.optStr(), ProviderThinkingLevel: g.optStr(), Extra: g.extra(bad),
		ErrorStatus: g.r.Intn(600),
	}
	switch g.r.Intn(3) {
	case 0:
		m.Content = nil
	case 1:
		m.Content = []Content{}
	default:
		for n := 1 + g.r.Intn(3); n > 0; n-- {
			m.Content = append(m.Content, g.content(bad))
		}
	}
	if g.r.Intn(2) == 0 {
		d := g.r.Int63n(100000)
		m.DurationMs = &d
	}
	if g.r.Intn(2) == 0 {
		b := g.r.Intn(2) == 0
		m.EndTurn = &b
	}
	return m
}

func (g randGen) user(bad bool) *UserMessage {
	u := &UserMessage{Timestamp: g.r.Int63n(1 << 40), Extra: g.extra(bad)}
	switch g.r.Intn(3) {
	case 0:
		u.Content = StringContent(g.str())
	case 1:
		u.Content = BlockContent(g.content(bad), g.content(bad))
	}
	return u
}

func (g randGen) toolResult(bad bool) *ToolResultMessage {
	m := &ToolResultMessage{ToolCallID: g.str(), ToolName: g.optStr(), IsError: g.r.Intn(2) == 0,
		Timestamp: g.r.Int63n(1 << 40), Extra: g.extra(bad)}
	if g.r.Intn(3) > 0 {
		m.Content = []Content{g.content(bad)}
	}
	if g.r.Intn(2) == 0 {
		m.Details = g.raw(bad)
	}
	if g.r.Intn(3) == 0 {
		u := g.usage(bad)
		m.Usage = &u
	}
	if g.r.Intn(2) == 0 {
		m.DurationMs = ptrTo(g.r.Int63n(100000))
	}
	if g.r.Intn(4) == 0 {
		m.NestedCalls = g.raw(bad)
	}
	return m
}

func (g randGen) event(bad bool) AssistantEvent {
	types := []string{EvStart, EvTextStart, EvTextDelta, EvTextEnd, EvThinkingStart, EvThinkingDelta,
		EvThinkingEnd, EvToolCallStart, EvToolCallDelta, EvToolCallEnd, EvDone, EvError, "other"}
	e := AssistantEvent{
		Type: types[g.r.Intn(len(types))], ContentIndex: g.r.Intn(5) - 1, Delta: g.str(),
		Content: g.str(), ID: g.str(), ToolName: g.str(), Reason: g.str(), Usage: ptrTo(g.usage(bad)),
	}
	if g.r.Intn(3) != 0 {
		c := g.content(bad)
		e.ToolCall = &c
	}
	if g.r.Intn(3) != 0 {
		e.Message = g.assistant(bad)
	}
	return e
}

// reference encodes v with the reflective encoders only.
func reference(f func() ([]byte, error)) ([]byte, error) {
	reflectOnly.Store(true)
	defer reflectOnly.Store(false)
	return f()
}

func compareEncoders(t *testing.T, what string, v any, ref func() ([]byte, error), fast func() ([]byte, error)) {
	t.Helper()
	want, werr := reference(ref)
	got, gerr := fast()
	if (werr != nil) != (gerr != nil) || werr != nil && werr.Error() != gerr.Error() {
		t.Fatalf("%s %#v:\nreflective error %v\nfast error       %v", what, v, werr, gerr)
	}
	if werr == nil && string(got) != string(want) {
		t.Fatalf("%s %#v:\nreflective %s\nfast       %s", what, v, want, got)
	}
}

// The fast encoders write the same bytes as the reflective ones (through
// jsonx.Marshal, as the wire does) and fail on the same values with the
// same errors.
func TestFastEncodersMatchReflective(t *testing.T) {
	g := randGen{rand.New(rand.NewSource(8))}
	n := 3000
	if testing.Short() {
		n = 500
	}
	for i := 0; i < n; i++ {
		bad := i%2 == 1
		c := g.cost(bad)
		compareEncoders(t, "cost", c, func() ([]byte, error) { return jsonx.MarshalReflect(c) }, func() ([]byte, error) { return jsonx.Marshal(c) })
		u := g.usage(bad)
		compareEncoders(t, "usage", u, func() ([]byte, error) { return jsonx.MarshalReflect(u) }, func() ([]byte, error) { return jsonx.Marshal(u) })
		blk := g.content(bad)
		compareEncoders(t, "content", blk, func() ([]byte, error) { return jsonx.MarshalReflect(blk) }, func() ([]byte, error) { return jsonx.Marshal(blk) })
		m := g.assistant(bad)
		compareEncoders(t, "assistant", m, func() ([]byte, error) { return jsonx.MarshalReflect(m) }, func() ([]byte, error) { return jsonx.Marshal(m) })
		um := g.user(bad)
		compareEncoders(t, "user", um, func() ([]byte, error) { return jsonx.MarshalReflect(um) }, func() ([]byte, error) { return jsonx.Marshal(um) })
		tr := g.toolResult(bad)
		compareEncoders(t, "toolResult", tr, func() ([]byte, error) { return jsonx.MarshalReflect(tr) }, func() ([]byte, error) { return jsonx.Marshal(tr) })
		compareEncoders(t, "user in a message member", um, func() ([]byte, error) { return jsonx.MarshalReflect(um) }, func() ([]byte, error) { return AppendMessage(nil, um) })
		compareEncoders(t, "toolResult in a message member", tr, func() ([]byte, error) { return jsonx.MarshalReflect(tr) }, func() ([]byte, error) { return AppendMessage(nil, tr) })
		var msgs Messages = []Message{m, g.assistant(bad), um, tr,
			&UserMessage{Content: StringContent(g.str()), Timestamp: 1},
			&ToolResultMessage{ToolCallID: g.str(), Content: []Content{g.content(bad)}, Details: g.raw(bad), Extra: g.extra(bad)},
			&UnknownMessage{Role: "x", Raw: json.RawMessage(`{"role":"x","t":"\u2028"}`)},
			(*AssistantMessage)(nil), nil}
		g.r.Shuffle(len(msgs), func(i, j int) { msgs[i], msgs[j] = msgs[j], msgs[i] })
		compareEncoders(t, "messages", msgs, func() ([]byte, error) { return jsonx.MarshalReflect(msgs) }, func() ([]byte, error) { return jsonx.Marshal(msgs) })
		e := g.event(bad)
		var partial *AssistantMessage
		if g.r.Intn(2) == 0 {
			partial = g.assistant(bad)
		}
		// WireJSON's own output is nested in a frame on the wire: compare it
		// as the frame's member.
		wire := func() ([]byte, error) {
			b, err := e.WireJSON(partial)
			if err != nil {
				return nil, err
			}
			return jsonx.MarshalReflect(json.RawMessage(b))
		}
		compareEncoders(t, "event", e, wire, wire)
		if !bad {
			// Without invalid values the fast encoders succeed on their own.
			want, _ := reference(wire)
			got, err := e.AppendWireJSON(nil, partial)
			if err != nil || string(got) != string(want) {
				t.Fatalf("AppendWireJSON %#v: %v\nwant %s\ngot  %s", e, err, want, got)
			}
		}
	}
}

func BenchmarkWireJSONTextDelta(b *testing.B) {
	e := AssistantEvent{Type: EvTextDelta, ContentIndex: 0, Delta: "w123 "}
	b.ReportAllocs()
	for b.Loop() {
		if _, err := e.WireJSON(nil); err != nil {
			b.Fatal(err)
		}
	}
}

func ptrTo[T any](v T) *T { return &v }

func (g randGen) userContent(bad bool) UserContent {
	switch g.r.Intn(4) {
	case 0:
		return StringContent(g.str())
	case 1:
		return UserContent{}
	case 2:
		return UserContent{Blocks: []Content{}}
	}
	var u UserContent
	for n := 1 + g.r.Intn(3); n > 0; n-- {
		u.Blocks = append(u.Blocks, g.content(bad))
	}
	return u
}

// anyMessage returns a random message of any type (a nil pointer now and
// then), with every member set at random.
func (g randGen) anyMessage(bad bool) Message {
	optRaw := func() json.RawMessage {
		switch g.r.Intn(4) {
		case 0:
			return nil
		case 1:
			return json.RawMessage{}
		}
		return g.raw(bad)
	}
	optInt := func() *int64 {
		if g.r.Intn(2) == 0 {
			return nil
		}
		n := g.r.Int63() - g.r.Int63()
		return &n
	}
	switch g.r.Intn(11) {
	case 0:
		return g.assistant(bad)
	case 1:
		return &UserMessage{Role: g.optStr(), Content: g.userContent(bad), Timestamp: g.r.Int63() - g.r.Int63(), Extra: g.extra(bad)}
	case 2:
		m := RandomToolResult(g.r, bad)
		if m != nil {
			m.NestedCalls = optRaw()
			m.DurationMs = optInt()
			if g.r.Intn(2) == 0 {
				u := g.usage(bad)
				m.Usage = &u
			}
			if g.r.Intn(4) == 0 {
				m.Content = nil
			}
		}
		return m
	case 3:
		m := &SystemMessage{Role: g.optStr(), Content: g.userContent(bad), Sections: optRaw(), Timestamp: g.r.Int63(), Extra: g.extra(bad)}
		for n := g.r.Intn(3); n > 0; n-- {
			ts := ToolSpec{Name: g.str(), Description: g.str(), Parameters: g.raw(bad)}
			if g.r.Intn(4) == 0 {
				ts.Parameters = nil // null
			}
			if g.r.Intn(2) == 0 {
				b := g.r.Intn(2) == 0
				ts.ConstrainedSampling = &b
			}
			m.ToolsAdded = append(m.ToolsAdded, ts)
		}
		for n := g.r.Intn(3); n > 0; n-- {
			m.ToolsRemoved = append(m.ToolsRemoved, ToolName{Name: g.str()})
		}
		if g.r.Intn(4) == 0 {
			m.ToolsAdded = []ToolSpec{}
		}
		return m
	case 4:
		m := &BashExecutionMessage{Role: g.optStr(), Command: g.str(), Output: g.str(), Cancelled: g.r.Intn(2) == 0,
			Truncated: g.r.Intn(2) == 0, FullOutputPath: g.optStr(), Timestamp: g.r.Int63(), ExcludeFromContext: g.r.Intn(2) == 0, Extra: g.extra(bad)}
		if g.r.Intn(2) == 0 {
			c := g.r.Intn(512) - 256
			m.ExitCode = &c
		}
		return m
	case 5:
		return &CustomMessage{Role: g.optStr(), CustomType: g.str(), Content: g.userContent(bad), Display: g.r.Intn(2) == 0,
			Details: optRaw(), Timestamp: g.r.Int63(), Extra: g.extra(bad)}
	case 6:
		m := &BranchSummaryMessage{Role: g.optStr(), Summary: g.str(), Timestamp: g.r.Int63(), Extra: g.extra(bad)}
		if g.r.Intn(2) == 0 {
			f := g.str()
			m.FromID = &f
		}
		return m
	case 7:
		return &CompactionSummaryMessage{Role: g.optStr(), Summary: g.str(), TokensBefore: g.r.Int63() - g.r.Int63(), Timestamp: g.r.Int63(), Extra: g.extra(bad)}
	case 8:
		return &UnknownMessage{Role: g.str(), Raw: g.raw(bad)}
	case 9:
		return []Message{nil, (*UserMessage)(nil), (*ToolResultMessage)(nil), (*SystemMessage)(nil), (*BashExecutionMessage)(nil),
			(*CustomMessage)(nil), (*BranchSummaryMessage)(nil), (*CompactionSummaryMessage)(nil), (*UnknownMessage)(nil)}[g.r.Intn(9)]
	}
	return &UserMessage{Content: StringContent(g.str()), Timestamp: 1}
}

// Every message type's hand-written encoder writes what encoding/json
// writes (through jsonx.Marshal), alone and in a list, and AppendMessage
// fails exactly when the reflective encoder does.
func TestMessageEncodersMatchReflective(t *testing.T) {
	g := randGen{rand.New(rand.NewSource(11))}
	n := 5000
	if testing.Short() {
		n = 800
	}
	for i := 0; i < n; i++ {
		bad := i%3 == 2
		m := g.anyMessage(bad)
		compareEncoders(t, "message", m, func() ([]byte, error) { return jsonx.MarshalReflect(m) }, func() ([]byte, error) { return AppendMessage(nil, m) })
		compareEncoders(t, "message marshal", m, func() ([]byte, error) { return jsonx.MarshalReflect(m) }, func() ([]byte, error) { return jsonx.Marshal(m) })
		if !bad {
			// Without invalid values the hand-written encoder succeeds on
			// its own.
			want, _ := reference(func() ([]byte, error) { return jsonx.MarshalReflect(m) })
			got, err := appendMessageFast([]byte("x"), m)
			if err != nil || string(got[1:]) != string(want) {
				t.Fatalf("%#v: %v\nwant %s\ngot  %s", m, err, want, got[1:])
			}
		}
		msgs := Messages{m, g.anyMessage(bad), g.anyMessage(bad)}
		compareEncoders(t, "messages", msgs, func() ([]byte, error) { return jsonx.MarshalReflect(msgs) }, func() ([]byte, error) { return jsonx.Marshal(msgs) })
		if want, err := reference(func() ([]byte, error) { return jsonx.MarshalReflect(msgs) }); err == nil {
			if got, err := AppendMessages(nil, msgs); err != nil || string(got) != string(want) {
				t.Fatalf("AppendMessages %#v: %v\nwant %s\ngot  %s", msgs, err, want, got)
			}
		}
	}
}
