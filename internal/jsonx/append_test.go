package jsonx

import (
	"bytes"
	"encoding/json"
	"math"
	"testing"
)

var stringSeeds = []string{"", "a", `"\`, "\u2028\u2029", `\u2028`, "<>&", "\x00\x1f\b\f\n\r\t\x7f", "é日😀", "\xff\xc3(", "\xed\xa0\x80", "\ufffd"}

func FuzzAppendString(f *testing.F) {
	for _, s := range stringSeeds {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		want, err := MarshalReflect(s)
		if err != nil {
			t.Fatal(err)
		}
		if got := AppendString([]byte("x"), s); string(got) != "x"+string(want) {
			t.Fatalf("%q:\nwant %s\ngot  %s", s, want, got[1:])
		}
	})
}

var rawSeeds = []string{`{}`, ` { "a" : [1, 2.5e-7, -0, true, false, null] } `, `"\u2028"`, `"\\u2028"`, "\"\u2028\"", `[`, ``, `01`,
	`{"a":1,}`, "\"\x01\"", `"\ud800"`, `1e400`, `[[[[[]]]]]`, `{"a":{"b":"c"}} x`, `"\/\b"`, `-`, `1.`, `1e+`, `tru`, "\"\xff\""}

func FuzzAppendRaw(f *testing.F) {
	for _, s := range rawSeeds {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, raw []byte) {
		want, werr := MarshalReflect(json.RawMessage(raw))
		got, gerr := AppendRaw([]byte("x"), raw)
		if (werr != nil) != (gerr != nil) {
			t.Fatalf("%q: reflective error %v, AppendRaw error %v", raw, werr, gerr)
		}
		if werr == nil && string(got) != "x"+string(want) {
			t.Fatalf("%q:\nwant %s\ngot  %s", raw, want, got[1:])
		}
		// isCompactJSON never accepts what Compact rejects or changes.
		if isCompactJSON(raw) {
			var buf bytes.Buffer
			if err := json.Compact(&buf, raw); err != nil || !bytes.Equal(buf.Bytes(), raw) {
				t.Fatalf("isCompactJSON(%q) but Compact gives %q, %v", raw, buf.Bytes(), err)
			}
		}
		// Marshal of a Marshaler gives what encoding/json gives.
		m := rawMarshaler(raw)
		want, werr = MarshalReflect(m)
		got, gerr = Marshal(m)
		if (werr != nil) != (gerr != nil) || werr != nil && werr.Error() != gerr.Error() || string(got) != string(want) {
			t.Fatalf("Marshal(%q) = %q, %v; reflective %q, %v", raw, got, gerr, want, werr)
		}
	})
}

type rawMarshaler []byte

func (m rawMarshaler) MarshalJSON() ([]byte, error) { return m, nil }

func TestAppendFloat(t *testing.T) {
	for _, f := range []float64{0, math.Copysign(0, -1), 1, -1.5, 1e-6, 1e-7, 9.999999e-7, 1e20, 1e21, -1e21, 1.5e300, 5e-324,
		math.MaxFloat64, 0.1 + 0.2, 123456789.125, 1e-100} {
		want, _ := MarshalReflect(f)
		got, err := AppendFloat(nil, f)
		if err != nil || string(got) != string(want) {
			t.Errorf("%v: got %s, want %s", f, got, want)
		}
	}
	for _, f := range []float64{math.NaN(), math.Inf(1), math.Inf(-1)} {
		if _, err := AppendFloat(nil, f); err == nil {
			t.Errorf("%v: no error", f)
		}
	}
}

// Marshal's direct path copies what a Marshaler returns and leaves nil
// pointers to encoding/json.
func TestMarshalDirect(t *testing.T) {
	raw := json.RawMessage(`{"a":"\u2028"}`)
	b, err := Marshal(raw)
	if err != nil || string(b) != "{\"a\":\"\u2028\"}" {
		t.Fatalf("%s %v", b, err)
	}
	raw2 := json.RawMessage(`[1]`)
	b, _ = Marshal(raw2)
	b[0] = 'x'
	if string(raw2) != `[1]` {
		t.Fatal("Marshal returned the Marshaler's own slice")
	}
	var p *json.RawMessage
	if b, err := Marshal(p); err != nil || string(b) != "null" {
		t.Fatalf("%s %v", b, err)
	}
}
