package session

import (
	"bytes"
	"encoding/json"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"reflect"
	"strconv"
	"strings"
	"testing"

	"github.com/pisces-agent/pisces/bench/sessgen"
	"github.com/pisces-agent/pisces/internal/ai"
	"github.com/pisces-agent/pisces/internal/jsonx"
)

// checkVerbatim checks the promise of scanVerbatim on one JSON value: when
// it accepts raw, raw is valid JSON, the fast decoder decodes it as
// encoding/json does, and ai.AppendMessage writes the decoded message back
// as raw, byte for byte. It reports whether raw was accepted.
func checkVerbatim(t testing.TB, raw []byte) bool {
	t.Helper()
	end, role, stop, ok := scanVerbatim(raw, 0)
	if !ok || end != len(raw) {
		return false
	}
	if !validJSON(raw) {
		t.Fatalf("accepted invalid JSON %q", raw)
	}
	c := &cur{b: raw}
	m := fastDecode(c)
	if m == nil || c.bad || c.i != len(raw) {
		t.Fatalf("accepted what the fast decoder does not decode: %q", raw)
	}
	ref, err := ai.DecodeMessage(raw)
	if err != nil || !reflect.DeepEqual(m, ref) {
		t.Fatalf("fast decoding differs from encoding/json for %q:\n fast %#v\n ref  %#v %v", raw, m, ref, err)
	}
	if roleOf(m) != role {
		t.Fatalf("role code %d for %q, the message says %d", role, raw, roleOf(m))
	}
	if a, ok := m.(*ai.AssistantMessage); ok {
		if got, _ := str(raw[stop:skipString(raw, stop)]); got != a.StopReason {
			t.Fatalf("stopReason at %d of %q", stop, raw)
		}
	}
	out, err := ai.AppendMessage(nil, m)
	if err != nil || !bytes.Equal(out, raw) {
		t.Fatalf("not written back verbatim (%v):\n read  %s\n wrote %s", err, raw, out)
	}
	return true
}

// msgGen makes random messages through the hand-written encoders, biased
// towards what the check must get right.
type msgGen struct{ r *rand.Rand }

var vStrings = []string{"", "a", "hello world", `"`, `\`, "\n", "\t", "\r", "\b", "\f", "\x00", "\x1f", "\x7f",
	"é", "日本", "😀", "\u2028", "\u2029", "<b>&amp;</b>", "/", "\ufffd", "x\ny\"z"}

func (g msgGen) str() string {
	var b strings.Builder
	for n := g.r.IntN(4); n > 0; n-- {
		b.WriteString(vStrings[g.r.IntN(len(vStrings))])
	}
	return b.String()
}

func (g msgGen) opt() string {
	if g.r.IntN(2) == 0 {
		return ""
	}
	return g.str()
}

var vFloats = []float64{0, 1, 0.5, 0.0032, 0.0015, 1e-6, 1.5e-6, 1e-7, 123456.789, 0.1 + 0.2, 1e20, 1e21, 3.0000000000000004, 12.25, math.Copysign(0, -1), -0.75}

func (g msgGen) float() float64 {
	if g.r.IntN(3) == 0 {
		return g.r.Float64() * math.Pow(10, float64(g.r.IntN(12)-8))
	}
	return vFloats[g.r.IntN(len(vFloats))]
}

var vRaws = []string{`{}`, `{"command":"ls -la"}`, `{"a":[1,2,{"b":null}],"c":"d\"e"}`, `[1,2.5e-7,-0]`, `"x"`, `null`, `true`, `{"s":"\u00e9\n"}`, `{"u":"\u2028"}`}

func (g msgGen) raw() json.RawMessage { return json.RawMessage(vRaws[g.r.IntN(len(vRaws))]) }

func (g msgGen) extra() jsonx.Extra {
	if g.r.IntN(4) != 0 {
		return nil
	}
	keys := []string{"x", "meta", "zz", "é", "x"}
	var ex jsonx.Extra
	for n := 1 + g.r.IntN(2); n > 0; n-- {
		ex = append(ex, jsonx.Field{Key: keys[g.r.IntN(len(keys))], Value: g.raw()})
	}
	return ex
}

func (g msgGen) usage() ai.Usage {
	i := func() int64 { return int64(g.r.IntN(100000)) }
	return ai.Usage{Input: i(), Output: i(), CacheRead: i(), CacheWrite: i(), TotalTokens: i(), Extra: g.extra(),
		Cost: ai.Cost{Input: g.float(), Output: g.float(), CacheRead: g.float(), CacheWrite: g.float(), Total: g.float(), Extra: g.extra()}}
}

func (g msgGen) blocks() []ai.Content {
	var out []ai.Content
	for n := g.r.IntN(4); n > 0; n-- {
		var c ai.Content
		switch g.r.IntN(4) {
		case 0:
			c = ai.Content{Type: ai.ContentText, Text: g.str(), TextSignature: g.opt()}
		case 1:
			c = ai.Content{Type: ai.ContentThinking, Thinking: g.str(), ThinkingSignature: g.opt(), Redacted: g.r.IntN(3) == 0}
		case 2:
			c = ai.Content{Type: ai.ContentImage, Data: g.str(), MimeType: "image/png"}
		default:
			c = ai.Content{Type: ai.ContentToolCall, ID: g.str(), Name: g.str(), Arguments: g.raw(), ThoughtSignature: g.opt(), ArgumentsError: g.opt(), Namespace: g.opt()}
		}
		c.Extra = g.extra()
		out = append(out, c)
	}
	if out == nil && g.r.IntN(2) == 0 {
		out = []ai.Content{}
	}
	return out
}

func (g msgGen) message() ai.Message {
	ts := g.r.Int64N(1<<45) - 1<<40
	switch g.r.IntN(3) {
	case 0:
		m := &ai.UserMessage{Role: ai.RoleUser, Timestamp: ts, Extra: g.extra()}
		if g.r.IntN(2) == 0 {
			m.Content = ai.StringContent(g.str())
		} else {
			m.Content = ai.UserContent{Blocks: g.blocks()}
		}
		return m
	case 1:
		m := &ai.AssistantMessage{Role: ai.RoleAssistant, Content: g.blocks(), API: g.str(), Provider: g.str(), Model: g.str(),
			Usage: g.usage(), StopReason: g.str(), ErrorMessage: g.opt(), Timestamp: ts, ResponseID: g.opt(),
			RawStopReason: g.opt(), ThinkingLevel: g.opt(), ProviderThinkingLevel: g.opt(), Extra: g.extra()}
		if g.r.IntN(2) == 0 {
			d := int64(g.r.IntN(100000))
			m.DurationMs = &d
		}
		if g.r.IntN(2) == 0 {
			b := g.r.IntN(2) == 0
			m.EndTurn = &b
		}
		return m
	}
	m := &ai.ToolResultMessage{Role: ai.RoleToolResult, ToolCallID: g.str(), ToolName: g.str(), Content: g.blocks(),
		IsError: g.r.IntN(2) == 0, Timestamp: ts, Extra: g.extra()}
	if g.r.IntN(2) == 0 {
		m.Details = g.raw()
	}
	if g.r.IntN(3) == 0 {
		m.NestedCalls = g.raw()
	}
	if g.r.IntN(3) == 0 {
		u := g.usage()
		m.Usage = &u
	}
	if g.r.IntN(3) == 0 {
		d := int64(g.r.IntN(1000))
		m.DurationMs = &d
	}
	return m
}

// mutations turn a message's JSON into variants that decode to the same
// or a similar message but are written differently: each one must either
// be refused or still be written back byte for byte.
var mutations = []struct {
	name string
	f    func(r *rand.Rand, b []byte) []byte
}{
	{"space after a comma", func(r *rand.Rand, b []byte) []byte { return replaceOne(r, b, ",", ", ") }},
	{"space after a colon", func(r *rand.Rand, b []byte) []byte { return replaceOne(r, b, `":`, `": `) }},
	{"newline at the end", func(r *rand.Rand, b []byte) []byte { return append(b[:len(b)-1:len(b)-1], "\n}"...) }},
	{"escaped slash", func(r *rand.Rand, b []byte) []byte { return replaceOne(r, b, "/", `\/`) }},
	{"long newline escape", func(r *rand.Rand, b []byte) []byte { return replaceOne(r, b, `\n`, `\u000a`) }},
	{"upper-case hex", func(r *rand.Rand, b []byte) []byte { return replaceOne(r, b, `\u001f`, `\u001F`) }},
	{"escaped letter", func(r *rand.Rand, b []byte) []byte { return replaceOne(r, b, `a`, `\u0061`) }},
	{"escaped line separator", func(r *rand.Rand, b []byte) []byte { return replaceOne(r, b, "\u2028", `\u2028`) }},
	{"escaped non-ASCII", func(r *rand.Rand, b []byte) []byte { return replaceOne(r, b, "é", `\u00e9`) }},
	{"surrogate pair escape", func(r *rand.Rand, b []byte) []byte { return replaceOne(r, b, "😀", `\ud83d\ude00`) }},
	{"lone surrogate", func(r *rand.Rand, b []byte) []byte { return replaceOne(r, b, `"text":"`, `"text":"\ud800`) }},
	{"invalid UTF-8", func(r *rand.Rand, b []byte) []byte { return replaceOne(r, b, `"text":"`, "\"text\":\"\xff") }},
	{"replacement escape", func(r *rand.Rand, b []byte) []byte { return replaceOne(r, b, "\ufffd", `\ufffd`) }},
	{"trailing zero", func(r *rand.Rand, b []byte) []byte { return replaceOne(r, b, "0.5", "0.50") }},
	{"float exponent", func(r *rand.Rand, b []byte) []byte { return replaceOne(r, b, "0.0032", "3.2e-3") }},
	{"upper exponent", func(r *rand.Rand, b []byte) []byte { return replaceOne(r, b, "e-7", "E-7") }},
	{"integer as float", func(r *rand.Rand, b []byte) []byte { return replaceOne(r, b, `"timestamp":`, `"timestamp":1.0e1,"x":`) }},
	{"negative zero", func(r *rand.Rand, b []byte) []byte { return replaceOne(r, b, `"input":0`, `"input":-0`) }},
	{"leading zeros", func(r *rand.Rand, b []byte) []byte { return replaceOne(r, b, `"total":0.`, `"total":00.`) }},
	{"empty optional", func(r *rand.Rand, b []byte) []byte {
		return replaceOne(r, b, `,"timestamp":`, `,"errorMessage":"","timestamp":`)
	}},
	{"redacted false", func(r *rand.Rand, b []byte) []byte {
		return replaceOne(r, b, `"thinking":""`, `"thinking":"","redacted":false`)
	}},
	{"null optional", func(r *rand.Rand, b []byte) []byte {
		return replaceOne(r, b, `,"isError":`, `,"usage":null,"isError":`)
	}},
	{"unknown key in the middle", func(r *rand.Rand, b []byte) []byte { return replaceOne(r, b, `,"content":`, `,"zzz":1,"content":`) }},
	{"unknown key at the end", func(r *rand.Rand, b []byte) []byte { return append(b[:len(b)-1:len(b)-1], `,"zzz":{"a":1}}`...) }},
	{"unknown key, other case", func(r *rand.Rand, b []byte) []byte { return append(b[:len(b)-1:len(b)-1], `,"Timestamp":1}`...) }},
	{"repeated key", func(r *rand.Rand, b []byte) []byte { return append(b[:len(b)-1:len(b)-1], `,"timestamp":1}`...) }},
	{"keys swapped", func(r *rand.Rand, b []byte) []byte { return swapFirstKeys(b) }},
	{"missing member", func(r *rand.Rand, b []byte) []byte { return dropMember(r, b) }},
	{"raw with spaces", func(r *rand.Rand, b []byte) []byte {
		return replaceOne(r, b, `{"command":"ls -la"}`, `{ "command": "ls -la" }`)
	}},
	{"raw with separator escape", func(r *rand.Rand, b []byte) []byte { return replaceOne(r, b, `{"s":"\u00e9\n"}`, `{"s":"\u2029"}`) }},
	{"escaped key", func(r *rand.Rand, b []byte) []byte { return replaceOne(r, b, `"timestamp"`, `"t\u0069mestamp"`) }},
	{"role as other type", func(r *rand.Rand, b []byte) []byte { return replaceOne(r, b, `"role":"`, `"role":"x`) }},
	{"block type unknown", func(r *rand.Rand, b []byte) []byte { return replaceOne(r, b, `{"type":"text"`, `{"type":"texts"`) }},
	{"empty content", func(r *rand.Rand, b []byte) []byte { return replaceOne(r, b, `"content":[`, `"content":[],"x":[`) }},
}

// replaceOne replaces a random occurrence of old (b unchanged when there
// is none).
func replaceOne(r *rand.Rand, b []byte, old, new string) []byte {
	n := bytes.Count(b, []byte(old))
	if n == 0 {
		return b
	}
	k := r.IntN(n)
	i := 0
	for ; k >= 0; k-- {
		j := bytes.Index(b[i:], []byte(old))
		i += j
		if k > 0 {
			i += len(old)
		}
	}
	out := append([]byte{}, b[:i]...)
	out = append(out, new...)
	return append(out, b[i+len(old):]...)
}

// swapFirstKeys swaps the second and third top-level members.
func swapFirstKeys(b []byte) []byte {
	ms, ok := membersChecked(nil, b)
	if !ok || len(ms) < 3 {
		return b
	}
	ms[1], ms[2] = ms[2], ms[1]
	return rewriteMembers(b, func([]member) []member { return ms })
}

// dropMember removes a random top-level member other than the role.
func dropMember(r *rand.Rand, b []byte) []byte {
	ms, ok := membersChecked(nil, b)
	if !ok || len(ms) < 2 {
		return b
	}
	k := 1 + r.IntN(len(ms)-1)
	return rewriteMembers(b, func([]member) []member { return append(ms[:k:k], ms[k+1:]...) })
}

func TestVerbatimRoundTrip(t *testing.T) {
	r := rand.New(rand.NewPCG(7, 7))
	n := 20000
	if testing.Short() {
		n = 3000
	}
	g := msgGen{r}
	accepted, mutatedAccepted, mutated := 0, 0, 0
	for i := 0; i < n; i++ {
		m := g.message()
		raw, err := ai.AppendMessage(nil, m)
		if err != nil {
			t.Fatal(err)
		}
		if checkVerbatim(t, raw) {
			accepted++
		} else if !bytes.Contains(raw, []byte(`\u202`)) {
			// The encoders' own output is refused only when it holds raw
			// JSON with an escaped line separator (AppendRaw keeps a
			// \\u2028 that is escaped itself; the check does not look).
			t.Fatalf("refused the encoder's own output %s", raw)
		}
		mu := mutations[r.IntN(len(mutations))]
		v := mu.f(r, raw)
		if bytes.Equal(v, raw) || !validJSON(v) {
			continue
		}
		mutated++
		if checkVerbatim(t, v) {
			mutatedAccepted++
		}
	}
	t.Logf("%d of %d encoded messages accepted; %d of %d mutated ones (each written back verbatim)", accepted, n, mutatedAccepted, mutated)
	if mutated < n/2 {
		t.Errorf("only %d mutations applied", mutated)
	}
}

// Every mutation that changes how the message is written is refused on a
// message that shows it.
func TestVerbatimRefuses(t *testing.T) {
	for _, raw := range []string{
		`{"role":"user", "content":"x","timestamp":1}`,
		`{"role":"user","content":"a\/b","timestamp":1}`,
		`{"role":"user","content":"\u000a","timestamp":1}`,
		`{"role":"user","content":"\u001F","timestamp":1}`,
		`{"role":"user","content":"\u0008","timestamp":1}`,
		`{"role":"user","content":"\u2028","timestamp":1}`,
		`{"role":"user","content":"\u00e9","timestamp":1}`,
		`{"role":"user","content":"\ud800","timestamp":1}`,
		`{"role":"user","content":"\ud83d\ude00","timestamp":1}`,
		"{\"role\":\"user\",\"content\":\"\xff\",\"timestamp\":1}",
		`{"role":"user","content":"x","timestamp":-0}`,
		`{"role":"user","content":"x","timestamp":1.0}`,
		`{"role":"user","content":"x","timestamp":1e3}`,
		`{"role":"user","content":"x","timestamp":1234567890123456789}`,
		`{"role":"user","content":"x"}`,
		`{"role":"user","timestamp":1,"content":"x"}`,
		`{"role":"user","content":"x","x":1,"timestamp":1}`,
		`{"role":"user","content":"x","timestamp":1,"Content":1}`,
		`{"role":"user","content":"x","timestamp":1,"timestamp":2}`,
		`{"role":"user","content":"x","timestamp":1,"x":{ }}`,
		`{"role":"user","content":"x","timestamp":1,"x":"\u2029"}`,
		`{"role":"user","content":null,"timestamp":1}`,
		`{"role":"system","content":"x","timestamp":1}`,
		`{"content":"x","role":"user","timestamp":1}`,
		`{"role":"user","content":[{"type":"text","text":"a","textSignature":""}],"timestamp":1}`,
		`{"role":"user","content":[{"type":"thinking","thinking":"a","redacted":false}],"timestamp":1}`,
		`{"role":"user","content":[{"type":"text"}],"timestamp":1}`,
		`{"role":"user","content":[{"text":"a","type":"text"}],"timestamp":1}`,
		`{"role":"user","content":[{"type":"video"}],"timestamp":1}`,
		`{"role":"toolResult","toolCallId":"c","toolName":"t","content":[],"usage":null,"isError":false,"timestamp":1}`,
		`{"role":"toolResult","toolCallId":"c","toolName":"t","content":[],"timestamp":1}`,
		`{"role":"assistant","content":[],"api":"a","provider":"p","model":"m","usage":{"input":1,"output":2,"cacheRead":3,"cacheWrite":4,"totalTokens":10,"cost":{"input":0.50,"output":0,"cacheRead":0,"cacheWrite":0,"total":0.5}},"stopReason":"stop","timestamp":1}`,
		`{"role":"assistant","content":[],"api":"a","provider":"p","model":"m","usage":{"input":1,"output":2,"cacheRead":3,"cacheWrite":4,"totalTokens":10,"cost":{"input":0.0000001,"output":0,"cacheRead":0,"cacheWrite":0,"total":0}},"stopReason":"stop","timestamp":1}`,
		`{"role":"assistant","content":[],"api":"a","provider":"p","model":"m","usage":{"input":1,"output":2,"cacheRead":3,"cacheWrite":4,"totalTokens":10,"cost":{"input":1.,"output":0,"cacheRead":0,"cacheWrite":0,"total":0}},"stopReason":"stop","timestamp":1}`,
		`{"role":"assistant","content":[],"api":"a","provider":"p","model":"m","usage":{"input":1,"output":2,"cacheRead":3,"cacheWrite":4,"totalTokens":10},"stopReason":"stop","timestamp":1}`,
		`{"role":"assistant","content":[],"api":"a","provider":"p","model":"m","usage":{"input":1,"output":2,"cacheRead":3,"cacheWrite":4,"totalTokens":10,"cost":{"input":0,"output":0,"cacheRead":0,"cacheWrite":0,"total":0}},"stopReason":"stop","errorMessage":"","timestamp":1}`,
		`{"role":"assistant","content":[],"api":"a","provider":"p","model":"m","usage":{"input":1,"output":2,"cacheRead":3,"cacheWrite":4,"totalTokens":10,"cost":{"input":0,"output":0,"cacheRead":0,"cacheWrite":0,"total":0}},"stopReason":"stop","timestamp":1,"errorMessage":"late"}`,
	} {
		if checkVerbatim(t, []byte(raw)) {
			t.Errorf("accepted %s", raw)
		}
	}
	for _, raw := range []string{
		`{"role":"user","content":"a\"b\\c\n\t\r\b\f\u0000\u001f<&>é😀` + "\u2028" + `","timestamp":-5}`,
		`{"role":"user","content":[],"timestamp":0}`,
		`{"role":"user","content":"a/b","timestamp":1}`,
		`{"role":"assistant","content":[],"api":"a","provider":"p","model":"m","usage":{"input":1,"output":2,"cacheRead":3,"cacheWrite":4,"totalTokens":10,"cost":{"input":1e-7,"output":0,"cacheRead":0,"cacheWrite":0,"total":0}},"stopReason":"stop","timestamp":1}`,
		`{"role":"user","content":[{"type":"image","data":"AAA","mimeType":"image/png"}],"timestamp":1,"x":{"a":[1,2]}}`,
		`{"role":"assistant","content":[{"type":"thinking","thinking":"t","thinkingSignature":"s","redacted":true},{"type":"toolCall","id":"1","name":"bash","arguments":{"command":"ls"},"thoughtSignature":"ts"}],"api":"a","provider":"p","model":"m","usage":{"input":1,"output":2,"cacheRead":3,"cacheWrite":4,"totalTokens":10,"cost":{"input":0.0032,"output":0.30000000000000004,"cacheRead":1e-7,"cacheWrite":-0.5,"total":12345678901234.5}},"stopReason":"toolUse","timestamp":1,"responseId":"r","durationMs":0,"endTurn":false}`,
		`{"role":"toolResult","toolCallId":"c","toolName":"t","content":[{"type":"text","text":"out\n"}],"details":{"diff":"-a\n+b"},"usage":{"input":0,"output":0,"cacheRead":0,"cacheWrite":0,"totalTokens":0,"cost":{"input":0,"output":0,"cacheRead":0,"cacheWrite":0,"total":0}},"isError":true,"durationMs":12,"nestedCalls":[],"timestamp":1}`,
	} {
		if !checkVerbatim(t, []byte(raw)) {
			t.Errorf("refused %s", raw)
		}
	}
}

// Every message of the generated benchmark sessions and of the fixtures
// that scanVerbatim accepts is written back verbatim; the generated ones
// are all accepted.
func TestVerbatimSessions(t *testing.T) {
	var buf bytes.Buffer
	if _, err := sessgen.Write(&buf, sessgen.Options{Entries: 4000, Seed: 3, BranchEvery: 50, LabelEvery: 100}); err != nil {
		t.Fatal(err)
	}
	total, accepted := 0, 0
	for _, l := range bytes.Split(buf.Bytes(), []byte("\n")) {
		if raw := messageRaw(l); raw != nil {
			total++
			if checkVerbatim(t, raw) {
				accepted++
			}
		}
	}
	if total < 3000 || accepted != total {
		t.Errorf("%d of %d generated messages accepted", accepted, total)
	}
	files, _ := filepath.Glob("testdata/*.jsonl")
	for _, f := range files {
		data, _ := os.ReadFile(f)
		for _, l := range bytes.Split(data, []byte("\n")) {
			if raw := messageRaw(l); raw != nil {
				checkVerbatim(t, raw)
			}
		}
	}
	for _, raw := range genMessages(200) {
		if !checkVerbatim(t, raw) {
			t.Errorf("refused a benchmark message %s", raw)
		}
	}
}

func TestVerbatimFloat(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	for i := 0; i < 200000; i++ {
		var s string
		switch i % 4 {
		case 0:
			s = strconv.FormatFloat(r.Float64()*math.Pow(10, float64(r.IntN(40)-20)), 'f', r.IntN(18)-1, 64)
		case 1:
			s = strconv.FormatFloat(r.NormFloat64(), 'g', -1, 64)
		case 2:
			s = strconv.Itoa(r.IntN(1000)) + "." + strings.Repeat("0", r.IntN(8)) + strconv.Itoa(r.IntN(1000))
		default:
			b, _ := jsonx.AppendFloat(nil, r.Float64()*math.Pow(10, float64(r.IntN(50)-25)))
			s = string(b)
		}
		b := []byte(s + ",")
		v := vscan{b: b}
		ok := v.float() && v.i == len(s)
		f, err := strconv.ParseFloat(s, 64)
		want := false
		if err == nil && skipNumber(b, 0) == len(s) {
			out, _ := jsonx.AppendFloat(nil, f)
			want = string(out) == s
		}
		if ok != want {
			t.Fatalf("%s: verbatim %v, AppendFloat says %v", s, ok, want)
		}
	}
}

func FuzzVerbatim(f *testing.F) {
	for _, raw := range genMessages(20) {
		f.Add(raw)
	}
	f.Add([]byte(`{"role":"user","content":"\u0000","timestamp":1}`))
	f.Add([]byte(`{"role":"toolResult","toolCallId":"c","toolName":"t","content":[],"isError":false,"timestamp":1}`))
	f.Fuzz(func(t *testing.T, raw []byte) {
		checkVerbatim(t, raw)
	})
}
