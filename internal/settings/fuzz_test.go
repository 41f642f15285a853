package settings

import (
	"bytes"
	"encoding/json"
	"reflect"
	"strings"
	"testing"
)

// Any settings file: reading it does not panic (an error has a line and a
// column inside the file), and setting a key either edits the text in
// place into a file that reads as exactly the expected settings, or says
// it cannot (Set then rewrites the file).
func FuzzSettingsFile(f *testing.F) {
	f.Add([]byte(`{"a": 1, "b": {"c": [1, "x"]}}`), "b.c", `"v"`)
	f.Add([]byte("// comment\n{\n  \"task.budget.maxCostUsd\": 2, /* x */\n  \"task\": {\"budget\": {}},\n}\n"), "task.budget.maxCostUsd", "3")
	f.Add([]byte("{\r\n\t\"steeringMode\": \"all\",\r\n}"), "steeringMode", "null")
	f.Add([]byte(""), "a.b", `{"x": [true]}`)
	f.Add([]byte("/* only */"), "x", `"<&>"`)
	f.Add([]byte(`{"a.b": 1, "a": {"b": 2}}`), "a.b", "")
	f.Fuzz(func(t *testing.T, data []byte, key, value string) {
		obj, err := parseObject(data)
		if err != nil {
			var se *syntaxError
			if asSyntax(err, &se) && (se.offset < 0 || se.offset > len(data)) {
				t.Fatalf("error offset %d outside the file (%d bytes)", se.offset, len(data))
			}
			return
		}
		cur := expandDotted(obj)
		parts := strings.Split(key, ".")
		if !validPath(parts) {
			return
		}
		remove := value == ""
		var v any
		if !remove {
			dec := json.NewDecoder(strings.NewReader(value))
			dec.UseNumber()
			if dec.Decode(&v) != nil || dec.More() || v == nil {
				return
			}
		}
		want := deepCopy(cur).(map[string]any)
		setPath(want, parts, v, remove)
		out, got, ok := editText(data, parts, v, remove, want)
		if !ok {
			return
		}
		reread, err := parseObject(out)
		if err != nil {
			t.Fatalf("the edited file does not read: %v\n%s", err, out)
		}
		if !sameSettings(expandDotted(reread), want, parts, remove) || !sameSettings(got, want, parts, remove) {
			t.Fatalf("the edited file reads as other settings\nfile: %s\nwant %v", out, want)
		}
		if !remove && bytes.Equal(out, data) && !reflect.DeepEqual(cur, want) {
			t.Fatal("the settings changed but the file did not")
		}
	})
}

func asSyntax(err error, target **syntaxError) bool {
	se, ok := err.(*syntaxError)
	if ok {
		*target = se
	}
	return ok
}
