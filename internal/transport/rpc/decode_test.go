package rpcmode

import (
	"encoding/json"
	"reflect"
	"strings"
	"testing"

	"github.com/pisces-agent/pisces/rpc"
)

var quotedSeeds = []string{
	`""`, `"plain"`, `"\"\\\/\b\f\n\r\t"`, `"\u0041\u00e9\u4e16"`, `"\ud83d\ude00"`, `"\ud83d"`, `"\ude00x"`,
	`"\ud83d\u0041"`, `"\ud83dA"`, "\"\xff\xfe bad \xed\xa0\x80\"", `"é 😀"`, `"\u2028\u2029"`, `"\uD83D\uDE00"`,
}

// unquote decodes string literals as encoding/json does.
func FuzzUnquote(f *testing.F) {
	for _, s := range quotedSeeds {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, raw []byte) {
		var want string
		if !json.Valid(raw) || len(raw) < 2 || raw[0] != '"' || raw[len(raw)-1] != '"' || json.Unmarshal(raw, &want) != nil {
			return
		}
		if got := unquote(raw); got != want {
			t.Fatalf("unquote(%q) = %q, want %q", raw, got, want)
		}
	})
}

// A command with long strings decodes as encoding/json decodes it, with
// the long strings in string fields, in raw JSON, in members the command
// does not have, and holding what looks like a placeholder.
func TestDecodeLongStrings(t *testing.T) {
	long := strings.Repeat(`x "y" \ é 😀 `, longStringMin/10) + "\xff"
	q := func(s string) string { b, _ := json.Marshal(s); return string(b) }
	lines := []string{
		`{"type":"prompt","message":` + q(long) + `}`,
		`{"type":"prompt","message":` + q(long) + `,"images":[{"type":"image","data":` + q(long+"2") + `,"mimeType":"image/png"},{"type":"image","source":{"type":"base64","mediaType":"image/png","data":` + q(long+"3") + `}}]}`,
		`{"type":"prompt","message":"short","unknown":` + q(long) + `}`,
		`{"type":"prompt","message":` + q(long+"pisces-long-") + `}`,
		`{"type":"prompt","message":` + q(long) + `,"message":` + q(long+"second") + `}`,
	}
	for i, line := range lines {
		var want, got rpc.PromptCommand
		if err := json.Unmarshal([]byte(line), &want); err != nil {
			t.Fatal(err)
		}
		if err := decode([]byte(line), &got); err != nil {
			t.Fatal(err)
		}
		if !reflect.DeepEqual(got, want) {
			t.Fatalf("line %d decodes differently", i)
		}
	}
	// Raw JSON members keep the text (set_host_tools parameters).
	line := `{"type":"set_host_tools","tools":[{"name":"t","description":` + q(long) + `,"parameters":{"d":` + q(long) + `}}]}`
	var want, got rpc.SetHostToolsCommand
	if err := json.Unmarshal([]byte(line), &want); err != nil {
		t.Fatal(err)
	}
	if err := decode([]byte(line), &got); err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(got, want) {
		t.Fatal("set_host_tools decodes differently")
	}
}
