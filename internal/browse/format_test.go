package browse

import (
	"encoding/json"
	"math"
	"strings"
	"testing"

	"github.com/pisces-agent/pisces/internal/jsonx"
)

func TestFormatToolCall(t *testing.T) {
	home := "/home/u"
	long := strings.Repeat("a", 60)
	cases := []struct {
		name, args, want string
	}{
		{"read", `{"path":"/home/u/p/a.go","offset":10,"limit":20}`, "[read: ~/p/a.go:10-29]"},
		{"read", `{"path":"/home/u/p/a.go"}`, "[read: ~/p/a.go]"},
		{"read", `{"file_path":"x","limit":5}`, "[read: x:1-5]"},
		{"read", `{"path":"x","offset":7}`, "[read: x:7]"},
		{"read", `{"path":"x","offset":null,"limit":1}`, "[read: x:1-1]"},
		{"read", `{"path":"x","offset":1,"limit":0}`, "[read: x:1]"},        // end 0 is falsy
		{"read", `{"path":"x","offset":"5","limit":10}`, "[read: x:5-509]"}, // "5"+10 = "510", minus 1
		{"read", `{"path":"x","offset":2.5,"limit":1e2}`, "[read: x:2.5-101.5]"},
		{"read", `{"path":"x","offset":"a","limit":1}`, "[read: x:a]"}, // NaN is falsy
		{"read", `{"path":"","file_path":"/home/u/b"}`, "[read: ~/b]"},
		{"read", `{}`, "[read: ]"},
		{"read", `{"path":42}`, "[read: 42]"},
		{"write", `{"file_path":"/home/u/w.txt","content":"x"}`, "[write: ~/w.txt]"},
		{"edit", `{"path":"/etc/hosts","file_path":"/home/u/ignored"}`, "[edit: /etc/hosts]"},
		{"bash", `{"command":"echo hi\nls\t-la"}`, "[bash: echo hi ls -la]"},
		{"bash", `{"command":"  \n` + strings.Repeat("b", 50) + `\n "}`, "[bash: " + strings.Repeat("b", 50) + "]"},
		{"bash", `{"command":"` + long + `"}`, "[bash: " + long[:50] + "...]"},
		{"bash", `{}`, "[bash: ]"},
		{"grep", `{"pattern":"TODO","path":"/home/u/src"}`, "[grep: /TODO/ in ~/src]"},
		{"grep", `{"pattern":"x","file_path":"/home/u/f"}`, "[grep: /x/ in .]"},
		{"find", `{"pattern":"*.go"}`, "[find: *.go in .]"},
		{"find", `{"pattern":"*.go","path":"/home/u"}`, "[find: *.go in ~]"},
		{"ls", `{}`, "[ls: .]"},
		{"ls", `{"path":"/home/user2"}`, "[ls: ~ser2]"}, // a plain prefix test, as in pi
		{"ls", `{"path":["a",null,1]}`, "[ls: a,,1]"},
		{"ls", `{"path":{"a":1}}`, "[ls: [object Object]]"},
		{"mytool", `{"a":1}`, `[mytool: {"a":1}]`},
		{"mytool", `{ "b" : 1.50, "c": "\u00e9" }`, `[mytool: {"b":1.5,"c":"é"}]`},
		{"mytool", `{"text":"` + long + `"}`, `[mytool: {"text":"` + long[:31] + `...]`},
		{"mytool", `null`, `[mytool: {}]`},
		{"mytool", ``, `[mytool: {}]`},
		{"mytool", `"str"`, `[mytool: {}]`},
		{"mytool", `[1, 2]`, `[mytool: [1,2]]`},
		{"mytool", `{"a":1,"a":2}`, `[mytool: {"a":2}]`},
	}
	for _, c := range cases {
		if got := FormatToolCall(c.name, json.RawMessage(c.args), home); got != c.want {
			t.Errorf("%s %s:\n got %q\nwant %q", c.name, c.args, got, c.want)
		}
	}
	// No home: nothing is shortened.
	if got := FormatToolCall("ls", json.RawMessage(`{"path":"/home/u"}`), ""); got != "[ls: /home/u]" {
		t.Errorf("no home: %q", got)
	}
}

func TestJSSliceAndLen(t *testing.T) {
	s := "ab😀c"
	if jsLen(s) != 5 {
		t.Errorf("jsLen = %d", jsLen(s))
	}
	if got := jsSlice(s, 4); got != "ab😀" {
		t.Errorf("slice 4 = %q", got)
	}
	cut := jsSlice(s, 3)
	if jsLen(cut) != 3 {
		t.Errorf("lone surrogate counts %d units", jsLen(cut))
	}
	if got := string(appendString(nil, cut)); got != `"ab\ud83d"` {
		t.Errorf("lone surrogate written %s", got)
	}
	if got := jsSlice("héllo", 2); got != "hé" {
		t.Errorf("slice = %q", got)
	}
	if got := jsSlice("abc", 0); got != "" {
		t.Errorf("slice 0 = %q", got)
	}
}

func TestJSTrim(t *testing.T) {
	if got := jsTrim("\ufeff\u00a0 x y\u2028\u3000"); got != "x y" {
		t.Errorf("%q", got)
	}
	if got := jsTrim("\u0085x"); got != "\u0085x" { // not white space in JS
		t.Errorf("%q", got)
	}
	if got := normalizePreview("\n a\tb \n"); got != "a b" {
		t.Errorf("%q", got)
	}
}

func TestJSNumber(t *testing.T) {
	a, b := 0.1, 0.2
	cases := map[float64]string{
		a + b: "0.30000000000000004",
		0:     "0", math.Copysign(0, -1): "0", 1: "1", -2.5: "-2.5", 1e21: "1e+21", 1e20: "100000000000000000000",
		1.5e-7: "1.5e-7", 0.000001: "0.000001", 123456789012345680000: "123456789012345680000",
		math.NaN(): "NaN", math.Inf(1): "Infinity",
	}
	for f, want := range cases {
		if got := jsNumber(f); got != want {
			t.Errorf("jsNumber(%v) = %s, want %s", f, got, want)
		}
	}
	for s, want := range map[string]float64{"": 0, " 12 ": 12, "0x1f": 31, "1e3": 1000, ".5": 0.5, "-Infinity": math.Inf(-1)} {
		if got := stringToNumber(s); got != want {
			t.Errorf("ToNumber(%q) = %v", s, got)
		}
	}
	for _, s := range []string{"abc", "1_000", "inf", "0x", "1e", "--1"} {
		if got := stringToNumber(s); !math.IsNaN(got) {
			t.Errorf("ToNumber(%q) = %v, want NaN", s, got)
		}
	}
}

// appendString writes what jsonx.Marshal (JSON.stringify) writes for any
// valid string.
func TestAppendStringMatchesJsonx(t *testing.T) {
	var all strings.Builder
	for r := rune(0); r < 0x3000; r++ {
		all.WriteRune(r)
	}
	inputs := []string{"", "plain ascii text that is long enough", "q\"b\\s/", "\x00\x01\x1f\x7f\b\f\n\r\t", "<script>&amp;</script>", "\u2028\u2029", "😀 emoji", all.String()}
	for _, s := range inputs {
		want := jsonx.MustMarshal(s)
		if got := appendString(nil, s); string(got) != string(want) {
			t.Errorf("%q:\n got %s\nwant %s", s, got, want)
		}
	}
	if got := string(appendString(nil, "a\xffb")); got != `"a\ufffdb"` {
		t.Errorf("invalid byte: %s", got)
	}
}

func TestJSStringify(t *testing.T) {
	cases := map[string]string{
		`{"a":1}`:                                       `{"a":1}`,
		`{ "a" : [ 1 , 2.0 , -0 ] }`:                    `{"a":[1,2,0]}`,
		`{"s":"\u0041\/\u001b\u00e9"}`:                  `{"s":"A/\u001bé"}`,
		`{"n":1E400}`:                                   `{"n":null}`,
		`{"big":12345678901234567890}`:                  `{"big":12345678901234567000}`,
		`{"a":1, "b":{"c":[true,false,{"d":1,"d":2}]}}`: `{"a":1,"b":{"c":[true,false,{"d":2}]}}`,
		`[]`:    `[]`,
		`{"a":`: `{"a":`, // invalid: unchanged
	}
	for in, want := range cases {
		if got := string(jsStringify([]byte(in))); got != want {
			t.Errorf("%s:\n got %s\nwant %s", in, got, want)
		}
	}
}
