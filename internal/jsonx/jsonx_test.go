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
