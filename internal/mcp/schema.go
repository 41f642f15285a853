package mcp

import (
	"bytes"
	"encoding/json"
	"io"
	"reflect"
	"sync"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
)

// The SDK decodes a tool's inputSchema into a map, which loses the order
// of its keys; the model should see the schema as the server wrote it. A
// schemaTap reads the server's messages on their way to the SDK (stdio
// lines, HTTP bodies and their event-stream data lines) and keeps each
// tools/list result's schemas as raw JSON, by tool name.
type schemaTap struct {
	mu      sync.Mutex
	schemas map[string]json.RawMessage
}

// maxTapLine bounds the message the tap looks into; a longer one passes
// unseen (its tools fall back to the SDK's decoded schema).
const maxTapLine = 8 << 20

func newSchemaTap() *schemaTap { return &schemaTap{schemas: map[string]json.RawMessage{}} }

// reader returns r with the tap on it.
func (t *schemaTap) reader(r io.Reader) *tapReader { return &tapReader{r: r, tap: t} }

// schema returns the input schema of tool t: the server's raw JSON when
// the tap saw it and it says the same as what the SDK decoded, else the
// SDK's value encoded again.
func (t *schemaTap) schema(tool *sdk.Tool) json.RawMessage {
	if t != nil {
		t.mu.Lock()
		raw := t.schemas[tool.Name]
		t.mu.Unlock()
		if raw != nil {
			var v any
			if json.Unmarshal(raw, &v) == nil && reflect.DeepEqual(v, tool.InputSchema) {
				return raw
			}
		}
	}
	schema, err := json.Marshal(tool.InputSchema)
	if err != nil || string(schema) == "null" {
		return json.RawMessage(`{"type":"object","properties":{}}`)
	}
	return schema
}

// line looks at one message (an event-stream line's "data:" prefix is
// dropped) and records the schemas of a tools/list result.
func (t *schemaTap) line(b []byte) {
	b = bytes.TrimSpace(b)
	if rest, ok := bytes.CutPrefix(b, []byte("data:")); ok {
		b = bytes.TrimSpace(rest)
	}
	if len(b) == 0 || b[0] != '{' || !bytes.Contains(b, []byte(`"inputSchema"`)) {
		return
	}
	var m struct {
		Result *struct {
			Tools []struct {
				Name        string          `json:"name"`
				InputSchema json.RawMessage `json:"inputSchema"`
			} `json:"tools"`
		} `json:"result"`
	}
	if json.Unmarshal(b, &m) != nil || m.Result == nil {
		return
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	for _, tool := range m.Result.Tools {
		var c bytes.Buffer
		if tool.Name == "" || json.Compact(&c, tool.InputSchema) != nil {
			continue
		}
		t.schemas[tool.Name] = c.Bytes()
	}
}

// tapReader passes a stream through, showing the tap each line (and the
// last, unterminated one at EOF) before the reader above gets its end.
type tapReader struct {
	r    io.Reader
	tap  *schemaTap
	buf  []byte
	skip bool // the current line is longer than maxTapLine
}

func (r *tapReader) Read(p []byte) (int, error) {
	n, err := r.r.Read(p)
	chunk := p[:n]
	for len(chunk) > 0 {
		i := bytes.IndexByte(chunk, '\n')
		part := chunk
		if i >= 0 {
			part = chunk[:i]
		}
		if !r.skip {
			if len(r.buf)+len(part) > maxTapLine {
				r.skip, r.buf = true, nil
			} else {
				r.buf = append(r.buf, part...)
			}
		}
		if i < 0 {
			break
		}
		if !r.skip {
			r.tap.line(r.buf)
		}
		r.reset()
		chunk = chunk[i+1:]
	}
	if err != nil && len(r.buf) > 0 && !r.skip {
		r.tap.line(r.buf)
		r.reset()
	}
	return n, err
}

// reset starts the next line; a buffer grown by a long message is let go.
func (r *tapReader) reset() {
	if cap(r.buf) > 1<<20 {
		r.buf = nil
	}
	r.buf, r.skip = r.buf[:0], false
}

// tapBody is an HTTP response body with the tap on it.
type tapBody struct {
	*tapReader
	c io.Closer
}

func (b tapBody) Close() error { return b.c.Close() }
