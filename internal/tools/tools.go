package tools

import (
	"encoding/json"

	"github.com/pisces-agent/pisces/internal/jsonx"
)

// DefaultActive names the built-in tools active unless configured otherwise
// (pi's default set). A session also activates task and todo_write
// (core.DefaultActiveTools); a subagent whose agent lists no tools gets
// these four.
var DefaultActive = []string{"read", "bash", "edit", "write"}

// All returns every built-in tool, in pi's order.
func All(env Env) []Tool {
	return []Tool{
		&readTool{env: env},
		&bashTool{env: env},
		&editTool{env: env},
		&writeTool{env: env},
		&grepTool{env: env},
		&findTool{env: env},
		&lsTool{env: env},
	}
}

// ByName returns the built-in tool called name.
func ByName(env Env, name string) (Tool, bool) {
	for _, t := range All(env) {
		if t.Name() == name {
			return t, true
		}
	}
	return nil, false
}

// details encodes v as a tool result's details.
func details(v any) json.RawMessage {
	return json.RawMessage(jsonx.MustMarshal(v))
}

// schema builds a JSON Schema object from ordered properties.
type prop struct {
	name     string
	schema   string // JSON
	required bool
}

func objectSchema(props ...prop) json.RawMessage {
	b := []byte(`{"type":"object","properties":{`)
	var req []string
	for i, p := range props {
		if i > 0 {
			b = append(b, ',')
		}
		b = append(b, jsonx.MustMarshal(p.name)...)
		b = append(b, ':')
		b = append(b, p.schema...)
		if p.required {
			req = append(req, p.name)
		}
	}
	b = append(b, `},"required":`...)
	if req == nil {
		req = []string{}
	}
	b = append(b, jsonx.MustMarshal(req)...)
	b = append(b, '}')
	return json.RawMessage(b)
}

func typed(typ, description string) string {
	return `{"type":"` + typ + `","description":` + string(jsonx.MustMarshal(description)) + `}`
}
