package jsonx

import (
	"encoding/json"
	"testing"
)

func TestMarshalLikeJSONStringify(t *testing.T) {
	got, err := Marshal(map[string]string{"a": "<b>&\u2028\u2029</b>", "b": `\u2028 literal`})
	if err != nil {
		t.Fatal(err)
	}
	want := `{"a":"<b>&` + "\u2028\u2029" + `</b>","b":"\\u2028 literal"}`
	if string(got) != want {
		t.Fatalf("got  %s\nwant %s", got, want)
	}
}

type obj struct {
	A string `json:"a"`
	B int    `json:"b,omitempty"`
	X Extra  `json:"-"`
}

func TestExtraFieldsRoundTrip(t *testing.T) {
	in := `{"z":[1,{"q":true}],"a":"x","m":null}`
	var o obj
	ex, err := UnmarshalObject([]byte(in), &o)
	if err != nil {
		t.Fatal(err)
	}
	if len(ex) != 2 || ex[0].Key != "z" || ex[1].Key != "m" {
		t.Fatalf("extra = %+v", ex)
	}
	out, err := MarshalObject(o, ex)
	if err != nil {
		t.Fatal(err)
	}
	if string(out) != `{"a":"x","z":[1,{"q":true}],"m":null}` {
		t.Fatalf("got %s", out)
	}
	if !json.Valid(out) {
		t.Fatal("invalid")
	}
}

func TestRestringify(t *testing.T) {
	for _, c := range []struct{ in, want string }{
		{`{"$schema":"x","type":"object","properties":{"zeta":{"type":"string"},"alpha":{"default":2.50,"maximum":1e21,"minimum":-0.0000001}},"required":["zeta"]}`,
			`{"$schema":"x","type":"object","properties":{"zeta":{"type":"string"},"alpha":{"default":2.5,"maximum":1e+21,"minimum":-1e-7}},"required":["zeta"]}`},
		{" {\n  \"b\" : [ 1, {}, [], null, true, false, \"\\u00e9<\\/\" ],\n  \"a\": {} }\n", `{"b":[1,{},[],null,true,false,"é</"],"a":{}}`},
		{`[]`, `[]`},
		{`"s"`, `"s"`},
	} {
		got, err := Restringify([]byte(c.in))
		if err != nil || string(got) != c.want {
			t.Errorf("Restringify(%s) = %s, %v; want %s", c.in, got, err, c.want)
		}
	}
	for _, bad := range []string{``, `{`, `{"a":}`, `[1,]`, `{} {}`, `1 2`} {
		if got, err := Restringify([]byte(bad)); err == nil {
			t.Errorf("Restringify(%q) = %s, want an error", bad, got)
		}
	}
}
