package tools

import (
	"encoding/json"
	"slices"
	"strings"
	"testing"
)

func TestAllOrderAndByName(t *testing.T) {
	var names []string
	for _, tool := range All(Env{}) {
		names = append(names, tool.Name())
	}
	want := []string{"read", "bash", "edit", "write", "grep", "find", "ls"}
	if !slices.Equal(names, want) {
		t.Fatalf("All() = %v, want %v", names, want)
	}
	if !slices.Equal(DefaultActive, []string{"read", "bash", "edit", "write"}) {
		t.Fatalf("DefaultActive = %v", DefaultActive)
	}
	if _, ok := ByName(Env{}, "nope"); ok {
		t.Fatal("ByName found a tool that does not exist")
	}
	if tool, ok := ByName(Env{}, "grep"); !ok || tool.Name() != "grep" {
		t.Fatal("ByName(grep) failed")
	}
}

func TestSchemasAndDescriptions(t *testing.T) {
	params := map[string][]string{
		"read":  {"path", "offset", "limit"},
		"write": {"path", "content"},
		"edit":  {"path", "edits"},
		"bash":  {"command", "timeout"},
		"grep":  {"pattern", "path", "glob", "ignoreCase", "literal", "context", "limit"},
		"find":  {"pattern", "path", "limit"},
		"ls":    {"path", "limit"},
	}
	required := map[string][]string{
		"read": {"path"}, "write": {"path", "content"}, "edit": {"path", "edits"},
		"bash": {"command"}, "grep": {"pattern"}, "find": {"pattern"}, "ls": {},
	}
	for _, tool := range All(Env{}) {
		if len(strings.TrimSpace(tool.Description())) < 40 {
			t.Errorf("%s: description too short: %q", tool.Name(), tool.Description())
		}
		var s struct {
			Type       string                     `json:"type"`
			Properties map[string]json.RawMessage `json:"properties"`
			Required   []string                   `json:"required"`
		}
		if err := json.Unmarshal(tool.Parameters(), &s); err != nil {
			t.Fatalf("%s: bad schema: %v", tool.Name(), err)
		}
		if s.Type != "object" {
			t.Errorf("%s: type %q", tool.Name(), s.Type)
		}
		for _, p := range params[tool.Name()] {
			var ps struct{ Type, Description string }
			if err := json.Unmarshal(s.Properties[p], &ps); err != nil || ps.Type == "" || ps.Description == "" {
				t.Errorf("%s: property %q missing type or description", tool.Name(), p)
			}
		}
		if len(s.Properties) != len(params[tool.Name()]) {
			t.Errorf("%s: %d properties, want %d", tool.Name(), len(s.Properties), len(params[tool.Name()]))
		}
		if !slices.Equal(s.Required, required[tool.Name()]) {
			t.Errorf("%s: required %v, want %v", tool.Name(), s.Required, required[tool.Name()])
		}
		if sp := Spec(tool); sp.Name != tool.Name() {
			t.Errorf("Spec name %q", sp.Name)
		}
	}
}

func TestArgumentErrors(t *testing.T) {
	env := Env{Cwd: t.TempDir()}
	cases := []struct {
		tool string
		args string
		want string
	}{
		{"read", `{}`, `Invalid arguments for read: "path" must be a string`},
		{"read", `{"path":5}`, `Invalid arguments for read: "path" must be a string`},
		{"read", `{"path":"a","offset":"x"}`, `Invalid arguments for read: "offset" must be a number`},
		{"read", `[1]`, `Invalid arguments for read: expected a JSON object`},
		{"write", `{"path":"a"}`, `Invalid arguments for write: "content" must be a string`},
		{"bash", `{"command":true}`, `Invalid arguments for bash: "command" must be a string`},
		{"bash", `{"command":"true","timeout":0}`, `Invalid arguments for bash: "timeout" must be a positive number of seconds no greater than 2147483.647`},
		{"grep", `{"pattern":"x","ignoreCase":3}`, `Invalid arguments for grep: "ignoreCase" must be a boolean`},
		{"find", `{"pattern":"*","limit":{}}`, `Invalid arguments for find: "limit" must be a number`},
		{"ls", `{"path":[]}`, `Invalid arguments for ls: "path" must be a string`},
		{"edit", `{"path":"a"}`, `Edit tool input is invalid. edits must contain at least one replacement.`},
		{"edit", `{"path":"a","edits":[{"oldText":1,"newText":"b"}]}`, `Invalid arguments for edit: "edits[0].oldText" must be a string`},
		{"edit", `{"path":"a","edits":5}`, `Invalid arguments for edit: "edits" must be an array of {oldText, newText} objects`},
	}
	for _, c := range cases {
		wantError(t, run(t, env, c.tool, c.args), c.want)
	}
	// numbers given as strings are accepted
	writeFile(t, env.Cwd, "f.txt", "a\nb\nc")
	if got := mustText(t, run(t, env, "read", `{"path":"f.txt","offset":"2","limit":"1"}`)); got != "b\n\n[1 more lines in file. Use offset=3 to continue.]" {
		t.Fatalf("got %q", got)
	}
}
